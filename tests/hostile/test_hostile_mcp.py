"""MCP requests with wrong types, unknown names and oversized data, in process and over raw stdio."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from assay.ledger.store import MAX_DATA_BYTES
from assay.mcp.server import build_server
from assay_testing import ASSAY, Project

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    """The server runs on asyncio."""
    return "asyncio"


CASES = [
    ("get", {"id": 5}, "invalid_argument", "/id"),
    ("get", {"id": ["knowledge:x"]}, "invalid_argument", "/id"),
    ("put", {"id": "knowledge:x", "data": {}, "expect_revision": "1"}, "invalid_argument",
     "/expect_revision"),
    ("put", {"id": "knowledge:x", "data": {}, "expect_revision": True}, "invalid_argument",
     "/expect_revision"),
    ("put", {"id": "knowledge:x", "data": {}, "expect_revision": -1}, "invalid_argument",
     "/expect_revision"),
    ("put", {"id": "knowledge:x"}, "missing_argument", "/data"),
    ("find", {"limit": 1.5}, "invalid_argument", "/limit"),
    ("get", {"id": "knowledge:x", "bogus": 1}, "unknown_argument", "/bogus"),
    ("canonical", {"text": 7}, "invalid_argument", "/text"),
    ("work_check", {"id": None, "at_revision": "x"}, "invalid_argument", "/at_revision"),
    ("get", {"id": "knowledge:x", "cwd": 3}, "invalid_argument", "/cwd"),
    ("packet_validate", {"dir": "p\x00"}, "invalid_argument", "/dir"),
    ("packet_validate", {"dir": "p\ud800"}, "lone_surrogate", "/dir"),
    ("find", {"kind": ["knowledge"], "query": "a\x00"}, "invalid_argument", "/query"),
]


async def _call(root: Path, name: str, args: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
    async with Client(build_server(cwd=str(root))) as client:
        result = await client.call_tool(name, args)
    assert result.structured_content is not None
    return bool(result.is_error), dict(result.structured_content)


@pytest.mark.parametrize(("tool", "args", "code", "where"), CASES)
async def test_hostile_mcp_wrong_types_are_coded_errors(project: Project, tool: str,
                                                        args: dict[str, Any], code: str,
                                                        where: str) -> None:
    """A wrongly typed or unknown argument is an error result with its code and pointer; nothing is written."""
    is_error, envelope = await _call(project.root, tool, args)
    assert is_error is True and envelope["ok"] is False
    assert (envelope["error"]["code"], envelope["error"].get("pointer")) == (code, where)
    _, info = await _call(project.root, "ledger_info", {})
    assert info["data"]["ledger_revision"] == 0


async def test_hostile_mcp_unknown_tool_is_unknown_operation(project: Project) -> None:
    """A tool name the registry does not have is unknown_operation."""
    is_error, envelope = await _call(project.root, "drop_everything", {})
    assert is_error and envelope["error"]["code"] == "unknown_operation"


async def test_hostile_mcp_oversized_data_is_resource_limit(project: Project) -> None:
    """Record data over 4 MiB canonical (no file limit applies over MCP) is resource_limit at /data."""
    is_error, envelope = await _call(project.root, "put",
                                     {"id": "knowledge:x", "data": "x" * MAX_DATA_BYTES})
    assert is_error
    assert (envelope["error"]["code"], envelope["error"]["pointer"]) == ("resource_limit", "/data")


async def test_hostile_mcp_deeply_nested_data_is_resource_limit(project: Project) -> None:
    """Data nested 200 levels deep over MCP is resource_limit, never a recursion crash."""
    data: Any = 0
    for _ in range(200):
        data = [data]
    is_error, envelope = await _call(project.root, "put", {"id": "knowledge:x", "data": data})
    assert is_error and envelope["error"]["code"] == "resource_limit"


async def test_hostile_mcp_lone_surrogate_id_is_a_coded_error(project: Project) -> None:
    """An id with a lone surrogate is refused with a code, and the error object stays printable."""
    is_error, envelope = await _call(project.root, "get", {"id": "knowledge:\ud800"})
    assert is_error and envelope["error"]["code"] in ("invalid_id", "lone_surrogate")
    json.dumps(envelope, ensure_ascii=False).encode("utf-8")


def test_hostile_mcp_malformed_stdio_requests_leave_the_server_serving(project: Project) -> None:
    """Over real stdio, non-JSON lines and wrongly typed params get errors; the next call still works."""
    proc = subprocess.Popen([ASSAY, "mcp"], cwd=project.root, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None

    def send(message: Any) -> None:
        assert proc.stdin is not None
        proc.stdin.write((message if isinstance(message, str) else json.dumps(message)) + "\n")
        proc.stdin.flush()

    def receive() -> dict[str, Any]:
        assert proc.stdout is not None
        return dict(json.loads(proc.stdout.readline()))

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "hostile", "version": "0"}}})
        assert receive()["result"]["serverInfo"]["name"] == "assay"
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
              "params": {"name": "get", "arguments": "knowledge:x"}})
        assert receive()["error"]["code"] == -32602
        send("{this is not json")
        send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": 42}})
        assert receive()["error"]["code"] == -32602
        send({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
              "params": {"name": "canonical", "arguments": {"text": "[1.0]"}}})
        answer = receive()
        assert answer["id"] == 4
        assert answer["result"]["structuredContent"]["data"]["canonical"] == "[1]"
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    assert "Traceback" not in (proc.stderr.read() if proc.stderr else "")
