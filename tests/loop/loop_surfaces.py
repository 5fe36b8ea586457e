"""One loop driver over three surfaces: the Python API, the in-process MCP client, the CLI.

Every surface answers with the same envelope (``{ok: true, data, ...}`` or
``{ok: false, error}``), so a scenario is written once and run through any of
them. The CLI surface builds the command line from the operations registry
(options, flags, ``--`` literals, JSON files for ``json_file`` arguments) and
runs the real ``assay`` console script.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from loop_helpers import FIXED, commit_calc

from assay.errors import AssayError
from assay.ops import Invocation, call, error_envelope, lookup
from assay_testing import Project, make_project

__all__ = ["FIXED", "build_project", "surface"]


def build_project(root: Path, *, unit: str | None = "optional", extra_commands: str = "",
                  loop_toml: str = "") -> Project:
    """A git work tree with a buggy calc.py whose ``unit`` check fails until it is fixed.

    ``unit``: ``optional`` (declared, not required), ``required``, or None (no
    evidence command at all: no contract can be verified).
    """
    toml = ""
    if unit is not None:
        argv = json.dumps([sys.executable, "-B", "check.py"])
        toml += f"\n[evidence.commands.unit]\nargv = {argv}\ntimeout = 60\n"
        if unit == "required":
            toml += "required = true\n"
    toml += extra_commands
    if loop_toml:
        toml += "\n[loop]\n" + loop_toml + "\n"
    project = make_project(root, name="conformance", git=True, extra_toml=toml)
    commit_calc(root)
    return project


class Surface:
    """Runs one operation and returns its envelope; errors are envelopes too."""

    name = "api"

    def __init__(self, project: Project) -> None:
        self.project = project

    def call(self, op: str, args: dict[str, Any], principal: str | None = None) -> dict[str, Any]:
        inv = Invocation(cwd=str(self.project.root), principal=principal, surface="test")
        try:
            envelope, _ = call(op, args, inv)
        except AssayError as err:
            return error_envelope(err)
        finally:
            inv.close()
        return envelope


class McpSurface(Surface):
    """The SDK's in-process clients against assay's MCP servers, driven from sync tests.

    Each principal is its own client, as in use: a server started for it
    (``--as``), in the admin profile for a person's operation (an approval),
    else in the agent profile.
    """

    name = "mcp"

    def __init__(self, project: Project, portal: Any, stack: ExitStack) -> None:
        super().__init__(project)
        self.portal = portal
        self.stack = stack
        self.clients: dict[tuple[str, str | None], Any] = {}

    def _client(self, profile: str, principal: str | None) -> Any:
        from mcp import Client

        from assay.mcp.server import build_server

        key = (profile, principal)
        if key not in self.clients:
            server = build_server(principal=principal, profile=profile)
            self.clients[key] = self.stack.enter_context(
                self.portal.wrap_async_context_manager(Client(server)))
        return self.clients[key]

    def call(self, op: str, args: dict[str, Any], principal: str | None = None) -> dict[str, Any]:
        arguments = {**args, "cwd": str(self.project.root)}
        client = self._client("admin" if lookup(op).admin else "agent", principal)
        result = self.portal.call(client.call_tool, lookup(op).tool_name, arguments)
        envelope = dict(result.structured_content)
        assert json.loads(result.content[0].text) == envelope
        assert bool(result.is_error) is (envelope["ok"] is False)
        return envelope


class CliSurface(Surface):
    """The real ``assay`` console script; the command line comes from the registry."""

    name = "cli"

    def call(self, op: str, args: dict[str, Any], principal: str | None = None) -> dict[str, Any]:
        operation = lookup(op)
        argv = list(operation.cli_path)
        literals: list[str] = []
        inputs = self.project.root / ".assay" / "inputs"
        inputs.mkdir(parents=True, exist_ok=True)
        for arg in operation.arguments:
            if arg.name not in args or args[arg.name] is None:
                continue
            value = args[arg.name]
            if arg.binding == "flag":
                argv += [arg.cli_name or ""] if value else []
            elif arg.binding in ("literal", "literals"):
                literals += value if isinstance(value, list) else [str(value)]
            elif arg.binding == "json_file":
                path = inputs / f"{arg.name}-{len(list(inputs.iterdir()))}.json"
                path.write_text(json.dumps(value), encoding="utf-8")
                argv += [arg.cli_name or "", str(path)]
            elif isinstance(value, list):
                for item in value:
                    argv += [arg.cli_name or "", str(item)]
            else:
                text = json.dumps(value) if isinstance(value, dict) else str(value)
                argv += [arg.cli_name or "", text]
        if principal is not None:
            argv += ["--as", principal]
        if literals:
            argv += ["--", *literals]
        ran = self.project.run(*argv)
        text = ran.stdout if ran.stdout.strip() else ran.stderr
        envelope: dict[str, Any] = json.loads(text)
        assert (ran.code == 0) is (envelope["ok"] and not _negative(envelope)), (ran.code, text)
        return envelope


def _negative(envelope: dict[str, Any]) -> bool:
    """A rejected submission or a replay mismatch: ok, but the answer is no (exit 1)."""
    data = envelope.get("data") or {}
    rejected = data.get("receipt") is not None and data.get("accepted") is False
    return bool(rejected or data.get("match") is False)


@contextmanager
def surface(kind: str, project: Project) -> Iterator[Surface]:
    """The surface ``kind`` (api, mcp or cli) over ``project``."""
    if kind == "api":
        yield Surface(project)
    elif kind == "cli":
        assert shutil.which("git")
        yield CliSurface(project)
    else:
        from anyio.from_thread import start_blocking_portal

        with start_blocking_portal(backend="asyncio") as portal, ExitStack() as stack:
            yield McpSurface(project, portal, stack)
