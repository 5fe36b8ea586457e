"""`assay mcp` as a real stdio subprocess, driven with the official MCP client only.

A person initialises the project; then the agent's whole path runs through
the tools of the default (agent) profile: record an intent, check it
(not ready), run machine evidence, a two-round loop whose contract runs a real
test command, check again (ready), and write the report. Bad input comes back
as the ``{ok: false, error}`` envelope with a stable code and pointer.
"""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

ASSAY = str(Path(sys.executable).parent / "assay")
BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
TEST = ("import unittest\n\nimport calc\n\n\nclass AddTest(unittest.TestCase):\n"
        "    def test_sum(self):\n        self.assertEqual(calc.add(2, 3), 5)\n")


def _git_project(root: Path) -> None:
    root.mkdir()
    for argv in (["git", "init", "-q", "-b", "main"],
                 ["git", "config", "user.email", "test@example.com"],
                 ["git", "config", "user.name", "Test"]):
        subprocess.run(argv, cwd=root, check=True)
    (root / "calc.py").write_text(BUGGY, encoding="utf-8")
    (root / "test_calc.py").write_text(TEST, encoding="utf-8")
    (root / ".gitignore").write_text("__pycache__/\n", encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "init"], cwd=root, check=True)


def _declare_unit(project: Path) -> None:
    """Declare the project's real test command in assay.toml (the one file edit a person makes)."""
    argv = [sys.executable, "-B", "-m", "unittest", "-q", "test_calc"]
    config = project / "assay.toml"
    config.write_text(config.read_text(encoding="utf-8") + "\n[evidence.commands.unit]\n"
                      f"argv = {json.dumps(argv)}\ntimeout = 60\n", encoding="utf-8")


class _Agent:
    """Calls tools and returns their envelopes, checked against the JSON text they mirror."""

    def __init__(self, client: Any) -> None:
        self.client = client

    async def call(self, tool: str, args: dict[str, Any],
                   progress: list[str] | None = None) -> tuple[dict[str, Any], bool]:
        async def seen(_progress: float, _total: float | None, message: str | None) -> None:
            assert progress is not None
            progress.append(message or "")

        result = await self.client.call_tool(tool, args,
                                             progress_callback=seen if progress is not None else None)
        envelope = dict(result.structured_content)
        assert json.loads(result.content[0].text) == envelope
        return envelope, bool(result.is_error)

    async def ok(self, tool: str, args: dict[str, Any],
                 progress: list[str] | None = None) -> dict[str, Any]:
        envelope, is_error = await self.call(tool, args, progress)
        assert not is_error and envelope["ok"] is True, envelope
        return envelope["data"]

    async def fails(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        envelope, is_error = await self.call(tool, args)
        assert is_error and envelope["ok"] is False, envelope
        assert set(envelope) == {"ok", "error"}
        return dict(envelope["error"])


async def _story(project: Path) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    params = StdioServerParameters(command=ASSAY, args=["mcp", "--cwd", str(project)])
    async with Client(params) as client:
        agent = _Agent(client)
        tools = {t.name: t for t in (await client.list_tools()).tools}
        seen["tools"] = tools
        seen["init_refused"] = await agent.fails("init", {"cwd": str(project)})
        # Setting the project up is a person's step, on the command line.
        await anyio.run_process([ASSAY, "init"], cwd=project, check=True)
        _declare_unit(project)

        intent = {"version": 1, "brief": "calc.add returns the sum", "user_reference": "e2e",
                  "requirements": [{"id": "R1", "text": "add(2, 3) == 5",
                                    "acceptance": "assay runs the unit test"}],
                  "boundaries": ["only calc.py"], "non_goals": []}
        put = await agent.ok("put", {"id": "knowledge:calc", "data": {"intent": intent},
                                     "expect_revision": 0})
        seen["first_check"] = await agent.ok("work_check", {"id": "knowledge:calc"})
        seen["red"] = await agent.ok("evidence_run", {"name": "unit"})

        started = await agent.ok("loop_start", {"task": "Fix calc.add", "loop": "fix",
                                                "criterion": ["add(2, 3) == 5"]})
        criterion = started["guidance"]["criteria"][0]["id"]
        seen["bad_evaluation"] = await agent.fails("loop_next", {
            "handle": json.dumps(started["submissionHandle"]),
            "evaluation": {"outcome": "maybe", "output_summary": "x",
                           "constraint_violations": [], "should_continue": True}})
        round1 = await agent.ok("loop_next", {
            "handle": json.dumps(started["submissionHandle"]),
            "evaluation": {"outcome": "partial", "output_summary": "found the bug",
                           "constraint_violations": [], "should_continue": True,
                           "round_contract": {"work_item": "calc.add is correct", "items": [
                               {"description": "the unit test passes",
                                "criterion_refs": [criterion], "verify_with": ["unit"]}]}}})
        item = round1["guidance"]["active_contract"]["items"][0]["id"]
        (project / "calc.py").write_text(FIXED, encoding="utf-8")
        seen["round2_progress"] = []
        seen["round2"] = await agent.ok("loop_next", {
            "handle": round1["submissionHandle"],
            "evaluation": {"outcome": "success", "output_summary": "fixed calc.add",
                           "constraint_violations": [], "should_continue": False,
                           "execution_report": {"files_changed": ["calc.py"],
                                                "claims": [{"id": item, "outcome": "met"}]}}},
            seen["round2_progress"])

        seen["green"], _ = await agent.call("evidence_run", {"name": "unit",
                                                             "target": "knowledge:calc#R1"})
        green = seen["green"]["data"]
        digest = (await agent.ok("canonical", {"text": json.dumps(intent), "digest": True}))
        await agent.ok("put", {"id": "knowledge:calc", "expect_revision": put["revision"], "data": {
            "intent": intent, "acceptance": {"intent_sha256": digest["digest"], "blockers": [],
                                             "results": [{"requirement_id": "R1",
                                                          "status": "passed",
                                                          "evidence": [green["evidence_ref"]],
                                                          "notes": "assay ran the unit test"}]}}})
        seen["second_check"] = await agent.ok("work_check", {"id": "knowledge:calc"})
        seen["report"] = await agent.ok("report", {"intent": "knowledge:calc", "loop": "fix"})

        seen["unknown_argument"] = await agent.fails("work_check", {"id": "knowledge:calc",
                                                                    "colour": "red"})
        seen["missing_argument"] = await agent.fails("work_check", {})
        seen["wrong_type"] = await agent.fails("work_check", {"id": 7})
        seen["conflict"] = await agent.fails("put", {"id": "knowledge:calc", "data": {},
                                                     "expect_revision": 1})
        seen["unknown_tool"] = await agent.fails("no_such_tool", {})
        seen["alive"] = await agent.ok("ledger_info", {})
    return seen


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The whole agent story over one stdio server process."""
    project = tmp_path_factory.mktemp("mcp") / "project"
    _git_project(project)
    # A thread of its own: the client's event loop never meets one another
    # fixture may have left on the main thread (Playwright's sync API).
    with ThreadPoolExecutor(max_workers=1) as pool:
        seen = pool.submit(anyio.run, _story, project).result(timeout=300)
    seen["project"] = project
    return seen


def test_mcp_e2e_tools_say_what_they_write(story: dict[str, Any]) -> None:
    """Every tool's description ends with what it writes: the ledger, files, or nothing."""
    from assay.ops import operations

    tools = story["tools"]
    assert list(tools) == [op.tool_name for op in operations() if not op.admin]
    assert {"work_check", "evidence_run", "loop_start", "loop_next", "report"} <= set(tools)
    for tool in tools.values():
        last = tool.description.rsplit("\n\n", 1)[-1]
        assert last.startswith(("Writes", "Read-only: writes nothing.")), tool.name
        assert (last == "Read-only: writes nothing.") == tool.annotations.read_only_hint, tool.name
    assert tools["work_check"].description.endswith("Read-only: writes nothing.")
    assert tools["loop_next"].description.endswith("Writes to the ledger.")
    assert tools["packet_validate"].description.endswith(
        "Writes files in the directory it names; nothing to the ledger.")
    assert tools["report"].description.endswith(
        "Writes one HTML file (`out`, default .assay/report.html); nothing to the ledger.")


def test_mcp_e2e_set_up_is_a_persons_step(story: dict[str, Any]) -> None:
    """The agent's server refuses init by name; the person initialises the project instead."""
    assert story["init_refused"]["code"] == "tool_not_offered"
    assert (story["project"] / "assay.toml").is_file()


def test_mcp_e2e_next_step_carries_the_tool_call(story: dict[str, Any]) -> None:
    """The run's next step names the work_accept call that records it, tool and arguments."""
    step = story["green"]["next"][0]
    cite = f"{story['green']['data']['receipt']['id']}@{story['green']['data']['receipt']['revision']}"
    assert f"'assay work accept --from-run {cite} -- knowledge:calc'" in step["text"]
    assert step["calls"] == [{"tool": "work_accept",
                              "arguments": {"from_run": [cite], "id": "knowledge:calc"}}]


def test_mcp_e2e_intent_goes_from_not_ready_to_ready(story: dict[str, Any]) -> None:
    """The intent check is not ready before evidence is cited and ready after."""
    first, second = story["first_check"], story["second_check"]
    assert first["ready_to_review"] is False
    assert [i["code"] for i in first["issues"]] == ["missing_acceptance"]
    assert second["ready_to_review"] is True
    assert second["delta"]["requirements"][0]["status"] == "reported_complete_with_current_evidence"
    assert second["actual"]["results"][0]["evidence"][0]["machine_observed"] is True


def test_mcp_e2e_machine_evidence_sees_the_bug_then_the_fix(story: dict[str, Any]) -> None:
    """The unit test run by assay fails on the buggy code and passes after the fix."""
    assert story["red"]["status"] == "failed" and story["red"]["origin"] == "machine"


def test_mcp_e2e_two_round_loop_verified_by_its_contract(story: dict[str, Any]) -> None:
    """Round 2's success claim is verified by the contract's real test command; the loop stops."""
    round2 = story["round2"]
    posture = round2["receipt"]["verification"]["evidence_posture"]
    assert round2["accepted"] is True
    assert posture["status"] == "verified" and posture["machineBackedSuccess"] is True
    assert posture["commands"] == [{"commandId": "unit", "required": False, "status": "passed"}]
    assert round2["status"] == "stopped" and round2["stopReason"] == "completed"
    assert round2["terminal"]["committedRounds"] == 2


def test_mcp_e2e_loop_round_reports_its_checks_progress(story: dict[str, Any]) -> None:
    """While loop_next runs the contract's test, the client that asked gets its progress."""
    progress = story["round2_progress"]
    assert progress[0] == "unit: started"
    assert progress[-1].startswith("unit: passed in ")


def test_mcp_e2e_report_written(story: dict[str, Any]) -> None:
    """The report tool writes the page into the project and says it is ready."""
    report = story["report"]
    assert report["path"] == str(story["project"] / ".assay" / "report.html")
    assert report["ready_to_review"] is True and report["sections"] == ["intent", "loop"]
    assert Path(report["path"]).read_bytes().startswith(b"<!DOCTYPE html>")


@pytest.mark.parametrize(("case", "code", "pointer"), [
    ("bad_evaluation", "evaluation_invalid", "/outcome"),
    ("unknown_argument", "unknown_argument", "/colour"),
    ("missing_argument", "missing_argument", "/id"),
    ("wrong_type", "invalid_argument", "/id"),
    ("conflict", "revision_conflict", "/expect_revision"),
    ("unknown_tool", "unknown_operation", None),
])
def test_mcp_e2e_bad_input_is_an_error_envelope(story: dict[str, Any], case: str, code: str,
                                                pointer: str | None) -> None:
    """Bad input is {ok: false, error} with its stable code and pointer, and the server lives on."""
    error = story[case]
    assert error["code"] == code
    assert error.get("pointer") == pointer
    assert isinstance(error["message"], str) and isinstance(error["retryable"], bool)
    assert story["alive"]["ledger_revision"] >= 1
