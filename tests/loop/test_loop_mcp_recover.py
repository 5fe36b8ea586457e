"""Checkpoint, recover, explain and replay as MCP tools (the SDK's in-process client)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from loop_helpers import start
from mcp import Client

from assay.evidence.git import observe
from assay.mcp.server import build_server
from assay_testing import Project

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    """The server runs on asyncio."""
    return "asyncio"


def _data(result: Any) -> dict[str, Any]:
    envelope = dict(result.structured_content)
    assert envelope["ok"] is True, envelope
    return dict(envelope["data"])


async def test_mcp_checkpoint_recover_replay(gitproj: Project) -> None:
    """Over MCP the handle is an object; recover restores and verifies; replay matches."""
    view = start(gitproj, loop="m")
    cwd = str(gitproj.root)
    at = observe(gitproj.root)
    (gitproj.root / "calc.py").write_text("oops\n", encoding="utf-8")
    async with Client(build_server()) as client:
        taken = _data(await client.call_tool("loop_checkpoint", {
            "handle": view["submissionHandle"], "cwd": cwd}))
        assert taken["checkpoint"]["role"] == "mid"
        out = _data(await client.call_tool("loop_recover", {
            "handle": view["submissionHandle"], "cwd": cwd, "reason": "start over",
            "checkpoint": view["checkpoints"][0]["checkpointId"]}))
        assert out["recovery"]["restore_verified"] is True
        explained = _data(await client.call_tool("loop_explain", {"cwd": cwd}))
        assert explained["context"]["reason"] == "recovery_redo"
        replayed = _data(await client.call_tool("loop_replay", {"cwd": cwd, "all": True}))
        assert replayed["match"] is True
        failed = await client.call_tool("loop_recover", {
            "handle": out["submissionHandle"], "cwd": cwd, "reason": " ",
            "checkpoint": view["checkpoints"][0]["checkpointId"]})
    assert dict(observe(gitproj.root).files) == dict(at.files)
    error = dict(failed.structured_content)["error"]
    assert (error["code"], error["pointer"]) == ("recovery_invalid", "/reason")
    assert json.loads(failed.content[0].text)["ok"] is False
