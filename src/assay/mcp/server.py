"""The MCP server: one tool per registered operation, over stdio, in one of two profiles.

Built on the official MCP Python SDK's low-level ``Server`` so that each
tool's input schema is exactly the registry's schema. A tool result carries
the same envelope the CLI prints, as structured content and as JSON text:
``{ok: true, operation, data, ...}`` or ``{ok: false, error: {...}}`` with
``is_error`` set. Errors are translated here, in one place.

Two profiles (:data:`PROFILES`). The ``agent`` profile, the default, offers
the agent's tools: every operation not declared ``admin`` in the registry,
without the ``db`` and ``principal`` arguments (the person who starts the
server fixes which ledger and who the agent is). The ``admin`` profile
offers every operation with every argument, for a person's client. A call
to a tool the profile does not offer is refused (``tool_not_offered``),
whether or not the client listed it.

Over MCP each ``next`` step is an object: its text, and the tool calls the
commands it quotes name (:func:`assay.ops.argv.quoted_calls`), as a bounded
read's ``read_more`` names its reads. While a call runs commands (an
evidence run, a loop round's checks), the runner's progress goes out as
progress notifications to a client that asked for them (a progress token).

The SDK is imported only inside this module, which only ``assay mcp`` loads.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server

from assay import __version__
from assay.errors import AssayError, UsageError
from assay.ops import Invocation, Operation, call, error_envelope, lookup, operations

__all__ = ["PROFILES", "ProgressReporter", "build_server", "invoke", "offered", "serve",
           "startup_hint", "tool_definitions"]

# The profiles a server can offer, the agent's first (the default).
PROFILES = ("agent", "admin")
# Arguments the agent profile leaves to whoever starts the server (--db, --as).
_SERVER_FIXED = ("db", "principal")


def offered(op: Operation, profile: str) -> bool:
    """Whether ``profile`` offers ``op`` as a tool: the agent's, every one but the person's."""
    return profile == "admin" or not op.admin


def _fixed(op: Operation, profile: str) -> tuple[str, ...]:
    """The project arguments a profile does not let a call set for ``op``."""
    return _SERVER_FIXED if profile == "agent" and op.project else ()


def tool_definitions(profile: str = "agent") -> list[types.Tool]:
    """The MCP tools of ``profile``, one per operation it offers, generated from the registry."""
    tools = []
    for op in operations():
        if not offered(op, profile):
            continue
        # A read's bound comes before the effect line, which ends every description.
        bound = f"\n\n{op.text(op.bounds.sentence, 'mcp')}" if op.bounds is not None else ""
        schema = op.input_schema()
        for name in _fixed(op, profile):
            del schema["properties"][name]
        hints = op.hints
        tools.append(
            types.Tool(
                name=op.tool_name,
                title=op.text(op.summary, "mcp"),
                description=f"{op.help('mcp')}{bound}\n\n{op.text(op.effect_line, 'mcp')}",
                input_schema=schema,
                annotations=types.ToolAnnotations(
                    read_only_hint=hints["read_only"],
                    destructive_hint=hints.get("destructive"),
                    idempotent_hint=hints.get("idempotent"),
                    open_world_hint=hints["open_world"],
                ),
            )
        )
    return tools


def startup_hint(cwd: str | None, program: str = "assay", profile: str = "agent") -> str:
    """One line for a person who started the server on a terminal: what to give a client."""
    root = os.path.abspath(cwd or os.getcwd())
    chosen = ["--profile", profile] if profile != "agent" else []
    entry = json.dumps({"command": program, "args": ["mcp", "--cwd", root, *chosen]})
    return f"MCP server on stdio; configure your client with {entry} (Ctrl-D ends it)."


def _result(envelope: dict[str, Any], is_error: bool) -> types.CallToolResult:
    text = json.dumps(envelope, ensure_ascii=False, sort_keys=True)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=envelope,
        is_error=is_error,
    )


def invoke(name: str, arguments: dict[str, Any] | None, *, cwd: str | None = None,
           db: str | None = None, principal: str | None = None, profile: str = "agent",
           reporter: Any = None) -> tuple[dict[str, Any], bool]:
    """Run one tool call of ``profile`` synchronously; return ``(envelope, is_error)``.

    ``reporter`` receives the progress of the commands the call runs.
    """
    try:
        op = lookup(name)
        if op.tool_name != name:
            raise UsageError(f"unknown tool {name!r}", code="unknown_operation")
        if not offered(op, profile):
            raise UsageError(
                f"{name} is a person's operation; this server offers the {profile} profile",
                code="tool_not_offered",
                action=(f"Ask a person to run 'assay {' '.join(op.cli_path)}', or to serve "
                        "the admin profile ('assay mcp --profile admin') to their own client."))
        if not isinstance(arguments, (dict, type(None))):
            raise UsageError("tool arguments must be an object", code="invalid_argument")
        for fixed in _fixed(op, profile):
            if fixed in (arguments or {}):
                raise UsageError(
                    f"{name} takes no argument {fixed!r} in the {profile} profile",
                    code="unknown_argument", pointer=f"/{fixed}",
                    action="The server fixes it when it starts ('assay mcp --db URL --as NAME').")
        _refuse_lone_surrogates(arguments or {})
        _refuse_nul_in_plain_arguments(arguments or {})
        inv = Invocation(cwd=cwd, db=db, principal=principal, surface="mcp", reporter=reporter)
        try:
            envelope, _code = call(op.name, arguments or {}, inv)
        finally:
            inv.close()
        envelope["next"] = [_step(text, profile) for text in envelope["next"]]
        return envelope, False
    except AssayError as err:
        return error_envelope(err), True
    except Exception as exc:  # noqa: BLE001 - the one place a bug becomes internal_error
        traceback.print_exc()
        bug = AssayError(f"internal error: {type(exc).__name__}: {exc}", code="internal_error")
        return error_envelope(bug), True


def _step(text: str, profile: str) -> dict[str, Any]:
    """One ``next`` step over MCP: its text and the calls of this profile's tools it quotes."""
    from assay.ops.argv import quoted_calls

    calls = [c for c in quoted_calls(text) if offered(lookup(c["tool"]), profile)]
    return {"text": text, "calls": calls}


class ProgressReporter:
    """The evidence runner's progress hooks as MCP progress notifications for one call.

    ``send(progress, message)`` delivers one notification; ``progress``
    counts up from 1, so it increases with every notification as the
    protocol requires. A notification goes out when a command starts and
    ends, when its last output line changed (at most every
    ``line_interval_s``), and at least every ``heartbeat_s`` while it runs,
    so a client that resets its timeout on progress keeps waiting. The hooks
    return quickly: output from the command's reader threads is only kept,
    and only the runner's own thread sends.
    """

    def __init__(self, send: Callable[[float, str], None], *, line_interval_s: float = 0.25,
                 heartbeat_s: float = 5.0) -> None:
        self._send = send
        self._line_interval_s = line_interval_s
        self._heartbeat_s = heartbeat_s
        self._count = 0
        self._name = ""
        self._line = ""
        self._shown = ""
        self._sent_at = 0.0
        self._lock = threading.Lock()

    def _emit(self, message: str) -> None:
        self._count += 1
        self._sent_at = time.monotonic()
        self._send(float(self._count), message[:_MESSAGE_LIMIT])

    def started(self, name: str, argv: tuple[str, ...]) -> None:
        with self._lock:
            self._name, self._line, self._shown = name, "", ""
        self._emit(f"{name}: started")

    def output(self, stream: str, line: str) -> None:
        from assay.terminal import visible

        # One line, its controls shown as escapes: a client may print the message as it is.
        with self._lock:
            self._line = visible(" ".join(line.split()))

    def tick(self, elapsed_s: float) -> None:
        with self._lock:
            line = self._line
        waited = time.monotonic() - self._sent_at
        if (line != self._shown and waited >= self._line_interval_s) or waited >= self._heartbeat_s:
            self._shown = line
            self._emit(f"{self._name}: {elapsed_s:.0f}s" + (f": {line}" if line else ""))

    def finished(self, observation: Any) -> None:
        self._emit(f"{observation.command_id}: {observation.status} in "
                   f"{observation.duration_ms} ms")


# A progress message names the command and its last output line, bounded.
_MESSAGE_LIMIT = 300


def _progress_reporter(ctx: Any) -> ProgressReporter:
    """A reporter sending this request's progress.

    The SDK delivers it only to a client that asked (a progress token over
    JSON-RPC, a callback in process) and drops it otherwise, so the server
    need not know which.
    """
    gone = threading.Event()

    def send(progress: float, message: str) -> None:
        if gone.is_set():
            return
        try:
            anyio.from_thread.run(ctx.session.report_progress, progress, None, message)
        except Exception:  # noqa: BLE001 - progress is advisory: stop sending, the call goes on
            gone.set()

    return ProgressReporter(send)


def _refuse_lone_surrogates(value: Any, path: tuple[str | int, ...] = ()) -> None:
    """Refuse a lone surrogate anywhere in the arguments, with its pointer.

    JSON text can spell one (``"\\ud800"``) but no path, id or UTF-8 text can
    hold it; refusing it here keeps it away from every file-system call.
    """
    from assay.errors import pointer

    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise AssayError("a string holds a lone surrogate, which UTF-8 cannot encode",
                             code="lone_surrogate", pointer=pointer(*path)) from None
    elif isinstance(value, dict):
        for key, item in value.items():
            _refuse_lone_surrogates(key, path)
            _refuse_lone_surrogates(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _refuse_lone_surrogates(item, (*path, index))


def _refuse_nul_in_plain_arguments(arguments: dict[str, Any]) -> None:
    """Refuse NUL in string arguments (and lists of them), as a command line cannot hold one.

    They name ids, paths and texts, which the CLI receives as argv words; JSON
    data arguments (objects) may hold any string and are not checked here.
    """
    from assay.errors import pointer

    for name, value in arguments.items():
        items = value if isinstance(value, list) else [value]
        for index, item in enumerate(items):
            if isinstance(item, str) and "\x00" in item:
                where = pointer(name, index) if isinstance(value, list) else pointer(name)
                raise UsageError(f"argument {name} holds a NUL character", code="invalid_argument",
                                 pointer=where)


def build_server(*, cwd: str | None = None, db: str | None = None,
                 principal: str | None = None, profile: str = "agent") -> Server[Any]:
    """An MCP ``Server`` whose tools are the operations ``profile`` offers."""
    if profile not in PROFILES:
        raise UsageError(f"no MCP profile {profile!r} (profiles: {', '.join(PROFILES)})",
                         code="invalid_argument", pointer="/profile")
    tools = tool_definitions(profile)

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        # Operations are synchronous and may block on the ledger or a command:
        # run them on a worker thread so the server keeps answering.
        reporter = _progress_reporter(ctx)
        envelope, is_error = await anyio.to_thread.run_sync(
            lambda: invoke(params.name, params.arguments, cwd=cwd, db=db, principal=principal,
                           profile=profile, reporter=reporter)
        )
        return _result(envelope, is_error)

    person = ("" if profile == "admin" else
              " Set-up and a person's operations (hooks, keys, bindings, approvals) are not "
              "offered here: ask a person for them.")
    return Server(
        "assay",
        version=__version__,
        instructions=(
            "Assay records what was asked, what you claim and what the machine observed. "
            "Check readiness before saying work is done." + person
        ),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def serve(*, cwd: str | None = None, db: str | None = None, principal: str | None = None,
          profile: str = "agent") -> None:
    """Run the server on stdin/stdout until the client disconnects.

    Started by a person on a terminal rather than by a client, it first says
    on stderr what it is and how a client runs it.
    """
    server = build_server(cwd=cwd, db=db, principal=principal, profile=profile)
    if sys.stdin.isatty():
        # The console script's own path, so that the line can be pasted as it is.
        script = sys.argv[0]
        program = os.path.abspath(script) if os.path.basename(script) == "assay" else "assay"
        sys.stderr.write(startup_hint(cwd, program, profile) + "\n")
        sys.stderr.flush()

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)
