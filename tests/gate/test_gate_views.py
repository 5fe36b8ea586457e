"""What the gate leaves behind: gate_gave_up in work check, work status and the report; shell claims."""

from __future__ import annotations

from pathlib import Path

from gate_helpers import (
    CLAUDE_SESSION,
    gate_project,
    give_up,
    op,
    payload,
    prove,
    record_intent,
    stop,
)

from assay.ops import Invocation, call
from assay_testing import Project


def tool(project: Project, data: dict) -> dict:
    inv = Invocation(db=project.db, surface="test")
    try:
        return call("hook.tool", {"payload": data}, inv)[0]["data"]  # type: ignore[no-any-return]
    finally:
        inv.close()


def test_work_check_shows_gate_gave_up(gave_up: Project) -> None:
    """work check carries an advisory gate_gave_up issue naming the session and its history."""
    report = op(gave_up, "work.check", id="knowledge:export")
    issue = report["issues"][-1]
    assert issue["code"] == "gate_gave_up" and issue["advisory"] is True
    assert CLAUDE_SESSION in issue["message"] and "after 5 blocks" in issue["message"]
    assert issue["action"] == (f"Read what the gate answered each time with 'assay get --history "
                               f"-- gate-session:{CLAUDE_SESSION}', and check the work before "
                               "trusting it.")
    assert report["write_basis"]["records"][f"gate-session:{CLAUDE_SESSION}"] == 6
    assert "gate_gave_up" in report["delta"]["global_issue_codes"]


def test_work_status_counts_gate_gave_up(gave_up: Project) -> None:
    """work status counts the sessions the gate gave up on among the intent's advisories."""
    row = op(gave_up, "work.status")["intents"][0]
    assert row["gate_gave_up"] == 1 and row["advisory_count"] == 1


def test_gate_gave_up_clears_when_a_stop_is_allowed_on_proof(tmp_path: Path) -> None:
    """Once the same session stops with the intent ready, the gave-up advisory is gone."""
    project = gate_project(tmp_path / "proj")
    record_intent(project)
    give_up(project)
    prove(project)
    assert stop(project, payload("claude-code", "stop", project,
                                 last_assistant_message="Bye."))["answer"] is None
    codes = [i["code"] for i in op(project, "work.check", id="knowledge:export")["issues"]]
    assert "gate_gave_up" not in codes
    assert "gate_gave_up" not in op(project, "work.status")["intents"][0]


def test_report_shows_the_gate_and_reported_commands(tmp_path: Path) -> None:
    """The HTML report has the stop gate section: the gave-up advisory and the commands as claims."""
    project = gate_project(tmp_path / "proj")
    record_intent(project)
    tool(project, payload("claude-code", "post-tool-use-failure-bash", project))
    give_up(project)
    out = op(project, "report", intent="knowledge:export")
    html = Path(out["path"]).read_text(encoding="utf-8")
    assert '<section id="gate">' in html and 'data-code="gate_gave_up"' in html
    assert "<code>python -m pytest -q</code>" in html and 'data-outcome="failed"' in html
    assert "reported by the harness" in html and "failed (exit 1)" in html


def test_hook_tool_records_a_shell_claim_linked_to_the_session(tmp_path: Path,
                                                               ledger_url: str) -> None:
    """A Bash PostToolUse becomes a shell-claim record (origin claim) linked to the session."""
    project = gate_project(tmp_path / "proj", ledger_url)
    out = tool(project, payload("claude-code", "post-tool-use-bash", project))
    assert out["recorded"] is True
    record = op(project, "get", id=out["id"])["record"]
    assert record["origin"] == "claim"
    assert record["links"] == [{"rel": "relates-to",
                                "target": f"gate-session:{CLAUDE_SESSION}"}]
    data = record["data"]
    assert data["observed_by"] == "harness" and data["counts_as_evidence"] is False
    assert data["command"] == "python -m pytest -q tests/test_export.py"
    assert data["reported"] == {"outcome": "succeeded", "exit_code": None, "duration_ms": None}
    again = tool(project, payload("claude-code", "post-tool-use-bash", project))
    assert again == {"recorded": False, "reason": "already recorded", "id": out["id"]}


def test_hook_tool_redacts_secrets_in_the_command(tmp_path: Path) -> None:
    """A token in a reported command is stored redacted, never as given."""
    project = gate_project(tmp_path / "proj")
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    data = payload("claude-code", "post-tool-use-bash", project)
    data["tool_input"]["command"] = f"curl -H 'Authorization: token {secret}' https://x"
    out = tool(project, data)
    stored = op(project, "get", id=out["id"])["record"]["data"]
    assert secret not in stored["command"] and "[REDACTED:" in stored["command"]


def test_hook_tool_ignores_other_tools(tmp_path: Path) -> None:
    """An Edit PostToolUse records nothing."""
    project = gate_project(tmp_path / "proj")
    assert tool(project, payload("claude-code", "post-tool-use-edit", project)) == {
        "recorded": False, "reason": "not a shell command"}
    assert op(project, "find", kind="shell-claim")["count"] == 0


def test_shell_claim_never_counts_as_machine_evidence(tmp_path: Path) -> None:
    """A result citing a harness-reported command rests on a claim: evidence_only_claimed."""
    project = gate_project(tmp_path / "proj")
    record_intent(project)
    out = tool(project, payload("codex", "post-tool-use-bash", project, tool_response="3 passed\n"
                                "Process exited with code 0\n"))
    op(project, "work.accept", id="knowledge:export", requirement=["R1"],
       evidence=[f"{out['id']}@1"], note="the harness ran the tests")
    report = op(project, "work.check", id="knowledge:export")
    assert [i["code"] for i in report["issues"]] == ["evidence_only_claimed"]
    assert report["actual"]["results"][0]["evidence"][0]["machine_observed"] is False
