"""The envelope and the gate in other capabilities' reads and writers (work context, handoffs)."""

from __future__ import annotations

import json
from typing import Any

from assay_testing import make_project

INTENT = {"intent": {
    "version": 1, "brief": "Make the parser strict", "user_reference": "ticket 7",
    "requirements": [{"id": "R1", "text": "Reject bad input", "acceptance": "Run the test"}],
    "boundaries": ["Keep the API"], "non_goals": ["No new parser"]}}


def _project(tmp_path: Any) -> Any:
    proj = make_project(tmp_path / "p", extra_toml='\n[goals.parser]\npath = "goal.md"\n'
                                                   'acceptance = "knowledge:parser"\n')
    (proj.root / "goal.md").write_text("# Parser\n\nBe strict.\n", encoding="utf-8")
    return proj


def test_work_context_returns_the_envelope_of_delivered_records(tmp_path: Any) -> None:
    """work context carries the envelope of its todo and acceptance; the gate withholds it later."""
    proj = _project(tmp_path)
    proj.ok("put", "--data-file", "-", "--", "knowledge:parser", input=json.dumps(INTENT))
    todo = proj.ok("todo", "add", "--goal-id", "parser", "--text", "write it")["data"]
    todo_id = todo["todo"]["id"] if "todo" in todo else todo["id"]
    context = proj.run("work", "context", "--goal-id", "parser")
    envelope = context.json["data"]["envelope"]
    assert envelope["status"] == "known"
    assert {leaf["id"] for leaf in envelope["leaves"]} == {"knowledge:parser", todo_id}
    assert proj.ok("publish", "check", "--", "-", input=context.stdout)["data"]["published"]
    proj.ok("retire", "--expect-revision", "1", "--", "knowledge:parser")
    again = proj.run("publish", "check", "--", "-", input=context.stdout)
    assert again.code == 1 and again.json["data"]["reason"] == "source_retired"


def test_work_checkpoint_handoff_of_private_intent_stays_private(tmp_path: Any) -> None:
    """A handoff derived from an intent private to alice is private to alice, with a pinned digest."""
    proj = _project(tmp_path)
    put = proj.ok("put", "--as", "alice", "--audience", "private:alice", "--data-file", "-", "--",
                  "knowledge:parser", input=json.dumps(INTENT))["data"]
    saved = proj.ok("work", "checkpoint", "--as", "alice", "--", "knowledge:parser")["data"]
    handoff = proj.ok("get", "--as", "alice", "--", saved["handoff_id"])["data"]["record"]
    assert handoff["audience"] == "private:alice"
    assert handoff["sources"] == [{"id": "knowledge:parser", "revision": 1,
                                   "data_sha256": put["data_sha256"]}]
    hidden = proj.run("get", "--as", "bob", "--", saved["handoff_id"])
    assert hidden.error["code"] == "record_not_found"


def test_work_checkpoint_handoff_of_project_intent_is_project_wide(tmp_path: Any) -> None:
    """A handoff derived only from project records keeps the project audience."""
    proj = _project(tmp_path)
    proj.ok("put", "--data-file", "-", "--", "knowledge:parser", input=json.dumps(INTENT))
    saved = proj.ok("work", "checkpoint", "--", "knowledge:parser")["data"]
    assert saved["written"] is True
    handoff = proj.ok("get", "--as", "bob", "--", saved["handoff_id"])["data"]["record"]
    assert handoff["audience"] == "project"


def test_work_check_returns_the_envelope_of_current_inputs(tmp_path: Any) -> None:
    """work check carries the envelope of the intent and the current evidence it cites."""
    proj = _project(tmp_path)
    proj.ok("put", "--data-file", "-", "--", "knowledge:run", input='{"exit": 0}')
    proj.ok("put", "--data-file", "-", "--", "knowledge:parser", input=json.dumps(INTENT))
    report = proj.run("work", "check", "--", "knowledge:parser").json["data"]
    sha = report["intent_sha256"]
    mapped = {**INTENT, "acceptance": {"intent_sha256": sha, "blockers": [], "results": [
        {"requirement_id": "R1", "status": "passed", "notes": "ran it",
         "evidence": [{"id": "knowledge:run", "revision": 1}]}]}}
    proj.ok("put", "--data-file", "-", "--expect-revision", "1", "--", "knowledge:parser",
            input=json.dumps(mapped))
    envelope = proj.run("work", "check", "--", "knowledge:parser").json["data"]["envelope"]
    assert envelope["status"] == "known"
    assert {(leaf["id"], leaf["revision"]) for leaf in envelope["leaves"]} == {
        ("knowledge:parser", 2), ("knowledge:run", 1)}


GOAL_WITH_REGION = """# Parser

## Agent Todo
<!-- assay:todo-region role=agent id=agent-todo begin -->
<!-- assay:todo-region id=agent-todo end -->
"""


def test_goal_write_refuses_to_export_a_private_todo(tmp_path: Any) -> None:
    """The goal file is project-wide: alice's private todo is refused, bob's write leaves it out."""
    proj = _project(tmp_path)
    (proj.root / "goal.md").write_text(GOAL_WITH_REGION, encoding="utf-8")
    added = proj.ok("todo", "add", "--goal-id", "parser", "--text", "public task")["data"]
    todo_id = added["todo"]["id"] if "todo" in added else added["id"]
    data = proj.ok("get", "--", todo_id)["data"]["record"]["data"]
    data["text"] = "secret refactor"
    proj.ok("put", "--as", "alice", "--audience", "private:alice", "--expect-revision", "0",
            "--data-file", "-", "--", "todo:secret", input=json.dumps(data))
    revision = proj.ok("goal", "read", "--goal-id", "parser")["data"]["revision"]
    refused = proj.run("goal", "write", "--as", "alice", "--goal-id", "parser",
                       "--expect-revision", revision)
    assert (refused.code, refused.error["code"], refused.error["pointer"]) == \
        (1, "audience_too_wide", "/goal_id")
    assert "secret refactor" not in (proj.root / "goal.md").read_text(encoding="utf-8")
    proj.ok("goal", "write", "--as", "bob", "--goal-id", "parser", "--expect-revision", revision)
    assert "secret refactor" not in (proj.root / "goal.md").read_text(encoding="utf-8")
