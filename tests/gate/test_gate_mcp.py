"""The hook operations over MCP (a person's, in the admin profile): the payload is an argument."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gate_helpers import gate_project, op, payload, record_intent
from mcp import Client

from assay.mcp.server import build_server

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_mcp_hook_stop_takes_the_payload_as_an_argument(tmp_path: Path) -> None:
    """hook_stop over MCP answers the payload object it is given, as the CLI would print it."""
    project = gate_project(tmp_path / "proj")
    record_intent(project)
    async with Client(build_server(profile="admin")) as client:
        result = await client.call_tool(
            "hook_stop", {"payload": payload("codex", "subagent-stop", project)})
    assert result.is_error is False
    envelope = json.loads(result.content[0].text)
    answer = envelope["data"]["answer"]
    assert answer["decision"] == "block" and "not ready for review" in answer["reason"]
    assert envelope["data"]["decision"]["event"] == "gate_blocked"


async def test_mcp_gate_bind_and_doctor(tmp_path: Path) -> None:
    """gate_bind records a binding and hook_doctor previews the bound session's answer."""
    project = gate_project(tmp_path / "proj", gate="")
    record_intent(project)
    async with Client(build_server(profile="admin")) as client:
        bound = await client.call_tool("gate_bind", {"cwd": str(project.root), "session": "s-1",
                                                     "intent": ["knowledge:export"],
                                                     "principal": "alice"})
        doctor = await client.call_tool("hook_doctor", {"cwd": str(project.root),
                                                        "session": "s-1"})
    assert bound.is_error is False
    would = json.loads(doctor.content[0].text)["data"]["would_answer"]
    assert would["decision"]["answer"] == "block"


async def test_mcp_put_of_gate_state_and_agent_binding_are_refused(tmp_path: Path) -> None:
    """Over MCP too: a put of a gate-session record is reserved_kind, gate_bind is not offered
    to the agent, and even in the admin profile the gated principal's binding is refused;
    nothing is written."""
    project = gate_project(tmp_path / "proj")
    record_intent(project)
    bind_args = {"cwd": str(project.root), "session": "s-1", "intent": ["knowledge:export"]}
    async with Client(build_server()) as client:
        put = await client.call_tool("put", {"cwd": str(project.root), "id": "gate-session:s-1",
                                             "data": {"gave_up": None},
                                             "audience": "private:agent"})
        offered = await client.call_tool("gate_bind", bind_args)
    async with Client(build_server(profile="admin")) as client:
        bind = await client.call_tool("gate_bind", bind_args)
    errors = [json.loads(r.content[0].text)["error"] for r in (put, offered, bind)]
    assert [(e["code"], e.get("pointer")) for e in errors] == [
        ("reserved_kind", "/id"), ("tool_not_offered", None),
        ("binding_by_gated_principal", "/principal")]
    assert op(project, "find", kind="gate-session")["count"] == 0
    assert op(project, "find", kind="gate-binding")["count"] == 0
