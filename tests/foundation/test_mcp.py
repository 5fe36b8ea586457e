"""The MCP server: in process and over real stdio, with the SDK's own client."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from assay.canonical import digest
from assay.mcp.server import build_server
from assay.ops import operations

ASSAY = str(Path(sys.executable).parent / "assay")
pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    """The server runs on asyncio."""
    return "asyncio"


def _stdio(*args: str) -> StdioServerParameters:
    return StdioServerParameters(command=ASSAY, args=["mcp", *args])


def _envelope(result: Any) -> dict[str, Any]:
    """The structured envelope, checked against the JSON text content it mirrors."""
    assert result.structured_content is not None
    assert json.loads(result.content[0].text) == result.structured_content
    return dict(result.structured_content)


AGENT_OPS = [op for op in operations() if not op.admin]


async def test_mcp_lists_the_agents_operations_in_process() -> None:
    """By default the server lists one tool per operation not declared admin, in registry order."""
    async with Client(build_server()) as client:
        tools = (await client.list_tools()).tools
    assert [t.name for t in tools] == [op.tool_name for op in AGENT_OPS]
    assert {"hook_uninstall", "hook_install", "init", "key_generate", "retire",
            "gate_bind"}.isdisjoint(t.name for t in tools)


async def test_mcp_agent_tools_leave_ledger_and_principal_to_the_server() -> None:
    """An agent tool's input schema is the registry's without `db` and `principal`."""
    async with Client(build_server()) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    for op in AGENT_OPS:
        schema = op.input_schema()
        if op.project:
            del schema["properties"]["db"], schema["properties"]["principal"]
        assert tools[op.tool_name].input_schema == schema, op.name


async def test_mcp_admin_profile_lists_every_operation() -> None:
    """The admin profile lists every registered operation with its whole input schema."""
    async with Client(build_server(profile="admin")) as client:
        tools = (await client.list_tools()).tools
    assert [t.name for t in tools] == [op.tool_name for op in operations()]
    by_name = {t.name: t for t in tools}
    for op in operations():
        assert by_name[op.tool_name].input_schema == op.input_schema()


@pytest.mark.parametrize("tool", ["hook_uninstall", "init", "key_generate", "gate_bind"])
async def test_mcp_agent_profile_refuses_a_persons_tool_called_by_name(tool: str,
                                                                      tmp_path: Path) -> None:
    """A person's tool sent by name to the agent profile is tool_not_offered, and nothing is written."""
    async with Client(build_server(cwd=str(tmp_path))) as client:
        result = await client.call_tool(tool, {"harness": "claude-code"}
                                        if tool == "hook_uninstall" else {})
    assert result.is_error is True
    error = _envelope(result)["error"]
    assert error["code"] == "tool_not_offered" and "pointer" not in error
    assert "assay mcp --profile admin" in error["action"]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["db", "principal"])
async def test_mcp_agent_profile_refuses_ledger_and_principal_arguments(name: str,
                                                                       tmp_path: Path) -> None:
    """An agent call that names its own ledger or principal is unknown_argument at that argument."""
    async with Client(build_server(cwd=str(tmp_path))) as client:
        result = await client.call_tool("work_status", {name: "other"})
    error = _envelope(result)["error"]
    assert (error["code"], error["pointer"]) == ("unknown_argument", f"/{name}")


async def test_mcp_unknown_profile_is_refused() -> None:
    """A server cannot be built for a profile that does not exist."""
    from assay.errors import UsageError

    with pytest.raises(UsageError) as raised:
        build_server(profile="root")
    assert (raised.value.code, raised.value.pointer) == ("invalid_argument", "/profile")


async def test_mcp_tools_carry_the_registry_hints() -> None:
    """Each tool's annotations are its operation's declared hints, in the MCP spellings."""
    async with Client(build_server(profile="admin")) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    for op in operations():
        hints = tools[op.tool_name].annotations
        assert hints is not None
        assert (hints.read_only_hint, hints.open_world_hint) == (not op.writes, op.open_world)
        assert hints.destructive_hint == (op.destructive if op.writes else None)
        assert hints.idempotent_hint == (op.idempotent if op.writes else None)
    assert tools["hook_uninstall"].annotations.destructive_hint is True  # type: ignore[union-attr]
    assert tools["put"].annotations.destructive_hint is False  # type: ignore[union-attr]
    assert tools["evidence_run"].annotations.open_world_hint is True  # type: ignore[union-attr]


async def test_mcp_call_canonical_in_process() -> None:
    """Calling canonical returns the CLI's envelope with canonical text, digest and fingerprint."""
    async with Client(build_server()) as client:
        result = await client.call_tool("canonical", {"text": '{"b":1,"a":[1.0,1e21,-0]}'})
    assert result.is_error is False
    envelope = _envelope(result)
    assert envelope["ok"] is True and envelope["operation"] == "canonical"
    assert envelope["data"]["canonical"] == '{"a":[1,1e+21,0],"b":1}'
    assert envelope["data"]["digest"] == digest({"a": [1, 1e21, 0], "b": 1})
    assert envelope["data"]["fingerprint"] == "sha256:" + envelope["data"]["digest"]


@pytest.mark.parametrize(
    ("arguments", "code", "where"),
    [
        ({"text": '{"a":'}, "invalid_json", None),
        ({"text": '{"a":1,"a":2}'}, "duplicate_key", "/a"),
        ({"text": "[9007199254740993]"}, "unsafe_integer", "/0"),
        ({"text": '["\\ud800"]'}, "lone_surrogate", "/0"),
        ({"txt": "{}"}, "unknown_argument", "/txt"),
        ({}, "missing_argument", "/text"),
        ({"text": 7}, "invalid_argument", "/text"),
    ],
)
async def test_mcp_bad_input_is_error_envelope(arguments: dict[str, Any], code: str,
                                               where: str | None) -> None:
    """Bad input is a tool result with is_error and {ok: false, error: {code, ...}}."""
    async with Client(build_server()) as client:
        result = await client.call_tool("canonical", arguments)
    assert result.is_error is True
    envelope = _envelope(result)
    assert envelope["ok"] is False
    assert envelope["error"]["code"] == code
    assert envelope["error"].get("pointer") == where
    assert envelope["error"]["retryable"] is False


async def test_mcp_unknown_tool_is_error_envelope() -> None:
    """Calling a tool that does not exist is unknown_operation as an error envelope."""
    async with Client(build_server()) as client:
        result = await client.call_tool("no_such_tool", {})
    assert result.is_error is True
    assert _envelope(result)["error"]["code"] == "unknown_operation"


async def test_mcp_dotted_name_is_not_a_tool() -> None:
    """Tools are called by their tool name; the dotted operation name is not a tool."""
    dotted = next((op for op in operations() if op.tool_name != op.name), None)
    if dotted is None:
        pytest.skip("no dotted operation registered")
    async with Client(build_server()) as client:
        result = await client.call_tool(dotted.name, {})
    assert _envelope(result)["error"]["code"] == "unknown_operation"


async def test_mcp_describe_matches_registry() -> None:
    """The describe tool returns the registry entries the CLI prints."""
    async with Client(build_server()) as client:
        result = await client.call_tool("describe", {"operation": "canonical"})
    data = _envelope(result)["data"]
    assert data["operations"] == [next(op for op in operations()
                                       if op.name == "canonical").describe()]


async def test_mcp_project_default_from_server(tmp_path: Path) -> None:
    """The server's --cwd is the default project directory of tool calls (init creates it there)."""
    async with Client(build_server(cwd=str(tmp_path), profile="admin")) as client:
        result = await client.call_tool("init", {"scope": "project:served"})
    assert _envelope(result)["data"]["scope"] == "project:served"
    assert (tmp_path / "assay.toml").is_file()


async def test_mcp_stdio_lists_tools_and_calls_canonical(tmp_path: Path) -> None:
    """Over real stdio (`assay mcp`), the tools are listed and canonical answers."""
    async with Client(_stdio("--cwd", str(tmp_path))) as client:
        tools = (await client.list_tools()).tools
        result = await client.call_tool("canonical", {"text": '{"\\u20ac":1,"a":-0.0}'})
    assert [t.name for t in tools] == [op.tool_name for op in AGENT_OPS]
    assert result.is_error is False
    assert _envelope(result)["data"]["canonical"] == '{"a":0,"€":1}'


async def test_mcp_stdio_bad_input_is_error_envelope(tmp_path: Path) -> None:
    """Over real stdio, bad input is an error envelope with is_error, and the server keeps serving."""
    async with Client(_stdio("--cwd", str(tmp_path))) as client:
        bad = await client.call_tool("canonical", {"text": "[NaN]"})
        good = await client.call_tool("canonical", {"text": "[]"})
    assert bad.is_error is True
    assert _envelope(bad)["error"]["code"] == "invalid_json"
    assert _envelope(good)["data"]["canonical"] == "[]"


async def test_mcp_bug_is_internal_error_envelope(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug inside an operation is an internal_error envelope with is_error, not a crashed server."""
    from assay import ops

    def crash(inv: Any, args: dict[str, Any]) -> Any:
        raise ZeroDivisionError("planted bug")

    list(operations())  # load the registry before planting the extra entry
    monkeypatch.setitem(ops._REGISTRY, "crash.now", ops.Operation(
        name="crash.now", summary="Fail with a bug.", writes=False, handler=crash, project=False))
    async with Client(build_server()) as client:
        bad = await client.call_tool("crash_now", {})
        good = await client.call_tool("canonical", {"text": "{}"})
    assert bad.is_error is True
    error = _envelope(bad)["error"]
    assert error["code"] == "internal_error"
    assert "ZeroDivisionError" in error["message"]
    assert _envelope(good)["ok"] is True


def _first_terminal_line(argv: list[str], cwd: Path) -> tuple[str, int]:
    """Run ``argv`` on a fresh terminal; return its first line of output and, after Ctrl-D, its status."""
    import os
    import pty
    import select
    import subprocess
    import time

    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, cwd=cwd)
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + 30
    while b"\n" not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            seen += os.read(master, 4096)
    os.write(master, b"\x04")  # end of input: the server stops
    status = proc.wait(timeout=30)
    os.close(master)
    return seen.decode("utf-8").split("\r\n")[0], status


def test_mcp_on_a_terminal_prints_a_hint(tmp_path: Path) -> None:
    """`assay mcp` started on a terminal says on stderr how to configure a client, and Ctrl-D ends it."""
    from assay.mcp.server import startup_hint

    line, status = _first_terminal_line([ASSAY, "mcp", "--cwd", str(tmp_path)], tmp_path)
    assert line == startup_hint(str(tmp_path), ASSAY)
    assert line.startswith("MCP server on stdio; configure your client with {")
    entry = json.loads(line[line.index("{"):line.rindex("}") + 1])
    assert entry == {"command": ASSAY, "args": ["mcp", "--cwd", str(tmp_path)]}
    assert status == 0


def test_mcp_on_a_pipe_prints_nothing(tmp_path: Path) -> None:
    """Started by a client (standard input a pipe), `assay mcp` writes no hint on stderr."""
    import subprocess

    proc = subprocess.run([ASSAY, "mcp"], stdin=subprocess.DEVNULL, capture_output=True,
                          cwd=tmp_path, timeout=60, check=False)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
