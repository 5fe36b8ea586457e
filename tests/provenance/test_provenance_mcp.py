"""The provenance tools over MCP, in process with the SDK's own client."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp import Client

from assay.mcp.server import build_server

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    """The server runs on asyncio."""
    return "asyncio"


async def _call(client: Any, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    return dict(result.structured_content)


async def test_mcp_publish_check_takes_the_envelope_object(project: Any) -> None:
    """note_add, note_list and publish_check over MCP: the envelope passes as an object."""
    cwd = str(project.root)
    project.ok("put", "--data-file", "-", "--", "knowledge:k", input='{"v":1}')
    async with Client(build_server()) as client:
        added = await _call(client, "note_add", {"cwd": cwd, "text": "derived",
                                                 "source": ["knowledge:k@1"]})
        assert added["ok"] is True
        async with Client(build_server(principal="bob")) as bob:
            listed = await _call(bob, "note_list", {"cwd": cwd})
        envelope = listed["data"]["envelope"]
        verdict = await _call(client, "publish_check", {"cwd": cwd, "envelope": envelope})
        assert verdict["data"]["published"] is True
        project.ok("retire", "--expect-revision", "1", "--", "knowledge:k")
        again = await _call(client, "publish_check", {"cwd": cwd, "envelope": envelope})
        assert again["data"]["reason"] == "source_retired"
        bad = await _call(client, "publish_check", {"cwd": cwd,
                                                    "envelope": {**envelope, "extra": 1}})
    assert bad["ok"] is False
    assert (bad["error"]["code"], bad["error"]["pointer"]) == ("invalid_envelope", "/extra")
    assert json.dumps(listed).count("derived") == 1
