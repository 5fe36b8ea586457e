"""hook stop on real ledgers: readiness blocks or allows, the claim check, the retry cap, errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from gate_helpers import (
    CLAUDE_SESSION,
    gate_project,
    op,
    payload,
    prove,
    ready_project,
    record_intent,
    session,
    stop,
)

from assay.canonical import digest_bytes, output_text
from assay_testing import Project, make_project


@pytest.fixture
def gated(tmp_path: Path, ledger_url: str) -> Project:
    """A gated git project on each backend, its intent recorded and not ready."""
    project = gate_project(tmp_path / "proj", ledger_url)
    record_intent(project)
    return project


@pytest.mark.parametrize("harness, name", [("claude-code", "stop"), ("codex", "stop"),
                                           ("claude-code", "subagent-stop"),
                                           ("codex", "subagent-stop")])
def test_hook_stop_not_ready_intent_blocks(gated: Project, harness: str, name: str) -> None:
    """Each harness's Stop and SubagentStop payload is blocked while the bound intent is not ready."""
    out = stop(gated, payload(harness, name, gated))
    assert out["answer"]["decision"] == "block"
    reason = out["answer"]["reason"]
    assert "knowledge:export is not ready for review (1 blocking issue)" in reason
    assert "assay work accept" in reason and "'assay work check -- knowledge:export'" in reason
    assert out["decision"]["event"] == "gate_blocked" and out["recorded"] is True


def test_hook_stop_ready_intent_allows(tmp_path: Path, ledger_url: str) -> None:
    """A ready intent and no success claim: the agent may stop, and the answer is empty."""
    project = ready_project(tmp_path / "proj", ledger_url)
    out = stop(project, payload("claude-code", "stop", project, last_assistant_message="Bye."))
    assert out["answer"] is None
    assert out["decision"] == {"event": "gate_allowed", "answer": "allow",
                               "reason": "Every intent and loop that gates this session is shown "
                                         "ready."}


def test_hook_stop_claim_backed_by_current_run_allows(tmp_path: Path) -> None:
    """'all tests pass' with a passing machine run of the current files lets the agent stop."""
    project = ready_project(tmp_path / "proj")
    out = stop(project, payload("claude-code", "stop", project))
    assert out["answer"] is None
    facts = session(project)["data"]["decision"]
    assert [c["claim"] for c in facts["claim"]["claims"]] == ["tests pass"]
    assert facts["intents"][0]["claim_check"] == {"machine_runs": 1, "stale_runs": []}


def test_hook_stop_claim_after_workspace_change_blocks(tmp_path: Path, ledger_url: str) -> None:
    """A success claim after the files changed since the cited run blocks with the rerun command."""
    project = ready_project(tmp_path / "proj", ledger_url)
    (project.root / "export.py").write_text("SEP = ';'\n", encoding="utf-8")
    out = stop(project, payload("claude-code", "stop", project))
    reason = out["answer"]["reason"]
    assert 'Your last message says "all tests pass", but the files changed after evidence:unit@1' \
        in reason
    assert "'assay evidence run --for knowledge:export#R1 -- unit'" in reason
    assert "'assay work accept --from-run evidence:unit@2 -- knowledge:export'" in reason
    stale = session(project)["data"]["decision"]["intents"][0]["claim_check"]["stale_runs"]
    assert stale == [{"id": "evidence:unit", "revision": 1, "requirements": ["R1"]}]


def test_hook_stop_claim_after_rerun_allows(tmp_path: Path) -> None:
    """Doing what the reason says (rerun, record) makes the same claim pass."""
    project = ready_project(tmp_path / "proj")
    (project.root / "export.py").write_text("SEP = ';'\n", encoding="utf-8")
    assert stop(project, payload("claude-code", "stop", project))["answer"] is not None
    prove(project)
    assert stop(project, payload("claude-code", "stop", project))["answer"] is None


def test_hook_stop_claim_on_claimed_evidence_only_blocks(tmp_path: Path) -> None:
    """A ready intent whose results rest only on claims: a success claim is blocked."""
    project = gate_project(tmp_path / "proj")
    record_intent(project)
    note = op(project, "put", id="note:ran-tests", data={"text": "3 passed"})
    op(project, "work.accept", id="knowledge:export", requirement=["R1"],
       evidence=[f"note:ran-tests@{note['revision']}"], note="I ran them")
    assert op(project, "work.check", id="knowledge:export")["ready_to_review"] is True
    reason = stop(project, payload("codex", "stop", project))["answer"]["reason"]
    assert "no result of knowledge:export rests on a run that assay observed" in reason
    assert "'assay evidence run --for knowledge:export#R1 -- unit'" in reason


def test_hook_stop_without_claim_ignores_workspace_change(tmp_path: Path) -> None:
    """No success claim: a ready intent allows even after the files changed (no claim to check)."""
    project = ready_project(tmp_path / "proj")
    (project.root / "export.py").write_text("SEP = ';'\n", encoding="utf-8")
    out = stop(project, payload("claude-code", "stop", project,
                                last_assistant_message="Which separator do you want?"))
    assert out["answer"] is None


def test_hook_stop_retry_cap_gives_up_and_records_it(gated: Project) -> None:
    """Five blocks in one run of stops, then gate_gave_up (allowed), then allowed until a new turn."""
    first = stop(gated, payload("claude-code", "stop", gated))
    events = [first["decision"]["event"]]
    for _ in range(6):
        out = stop(gated, payload("claude-code", "stop-continuing", gated))
        events.append(out["decision"]["event"])
    assert events == ["gate_blocked"] * 5 + ["gate_gave_up", "gate_allowed"]
    data = session(gated)["data"]
    assert data["run"] == {"blocks": 5, "gave_up": True}
    assert data["gave_up"]["blocks"] == 5 and data["gave_up"]["intents"] == ["knowledge:export"]
    assert "not ready for review" in data["gave_up"]["reason"]
    fresh = stop(gated, payload("claude-code", "stop", gated))
    assert fresh["decision"]["event"] == "gate_blocked" and fresh["run"]["blocks"] == 1


def test_hook_stop_retry_cap_is_configurable(tmp_path: Path) -> None:
    """[gate] retry_cap = 1: one block, then the gate gives up."""
    project = gate_project(tmp_path / "proj", extra="retry_cap = 1\n")
    record_intent(project)
    events = [stop(project, payload("codex", name, project))["decision"]["event"]
              for name in ("stop", "stop-continuing", "stop-continuing")]
    assert events == ["gate_blocked", "gate_gave_up", "gate_allowed"]


def test_hook_stop_continuing_loop_always_ends(gated: Project) -> None:
    """Stops that keep arriving with stop_hook_active true are let through within cap + 1: the
    give-up tells the person (systemMessage), the stops after it get an empty answer."""
    answers = [stop(gated, payload("claude-code", "stop-continuing", gated))["answer"]
               for _ in range(7)]
    assert [a is not None and a.get("decision") == "block" for a in answers] == \
        [True] * 5 + [False, False]
    assert set(answers[5]) == {"systemMessage"} and answers[6] is None


def test_hook_stop_records_reason_and_report_digest(gated: Project) -> None:
    """The decision version holds the reason answered and the digest of the work check report."""
    report = op(gated, "work.check", id="knowledge:export")
    report.pop("envelope")
    out = stop(gated, payload("claude-code", "stop", gated))
    record = session(gated)
    decision = record["data"]["decision"]
    assert decision["reason"] == out["answer"]["reason"] and decision["answer"] == "block"
    assert decision["read_at_ledger_revision"] == report["write_basis"]["ledger_revision"]
    assert decision["intents"][0]["report_sha256"] == digest_bytes(output_text(report).encode())
    assert record["origin"] == "derived" and record["links"] == [
        {"rel": "relates-to", "target": "knowledge:export"}]


def test_hook_stop_subagent_has_its_own_record(gated: Project) -> None:
    """A SubagentStop is counted on the subagent's own record, not the session's."""
    data = payload("claude-code", "subagent-stop", gated)
    stop(gated, data)
    record = session(gated, agent_id=data["agent_id"])
    assert record["data"]["agent_id"] == data["agent_id"] and record["revision"] == 1
    assert op(gated, "find", kind="gate-session")["count"] == 1


def test_hook_stop_nothing_bound_allows(tmp_path: Path) -> None:
    """A project without [gate] intents, binding or loop: allowed, and the decision is recorded."""
    project = gate_project(tmp_path / "proj", gate="")
    out = stop(project, payload("claude-code", "stop", project))
    assert out["answer"] is None
    assert out["decision"]["reason"].startswith("Nothing gates this session")


def test_gate_bind_gates_only_that_session(tmp_path: Path) -> None:
    """gate bind makes one session wait for the intent; another session is not gated."""
    project = gate_project(tmp_path / "proj", gate="")
    record_intent(project)
    bound = op(project, "gate.bind", session=CLAUDE_SESSION, intent=["knowledge:export"],
               principal="alice")
    assert bound["id"] == f"gate-binding:{CLAUDE_SESSION}"
    assert stop(project, payload("claude-code", "stop", project))["answer"] is not None
    other = payload("claude-code", "stop", project, session_id="another-session")
    assert stop(project, other)["answer"] is None


def test_gate_bind_refuses_an_unknown_intent(tmp_path: Path) -> None:
    """gate bind checks each intent: an unknown one is intent_not_found pointing at it."""
    from assay.errors import AssayError

    project = gate_project(tmp_path / "proj", gate="")
    record_intent(project)
    with pytest.raises(AssayError) as info:
        op(project, "gate.bind", session="s", intent=["knowledge:export", "knowledge:nope"],
           principal="alice")
    assert (info.value.code, info.value.pointer) == ("intent_not_found", "/intent/1")


def test_hook_stop_active_loop_blocks(tmp_path: Path) -> None:
    """An active loop in the project blocks the stop with how to finish or stop it."""
    project = gate_project(tmp_path / "proj", gate="")
    op(project, "loop.start", task="fix the export", loop="lp-export", criterion=["tests pass"])
    reason = stop(project, payload("claude-code", "stop", project))["answer"]["reason"]
    assert "The loop lp-export is active at round 1" in reason
    assert "'assay loop stop --loop lp-export --reason WHY'" in reason
    op(project, "loop.stop", loop="lp-export", reason="done here")
    assert stop(project, payload("claude-code", "stop", project))["answer"] is None


def test_hook_stop_unknown_bound_intent_blocks_with_its_error(tmp_path: Path) -> None:
    """[gate] intents naming no record blocks with the error's message and action."""
    project = gate_project(tmp_path / "proj")
    reason = stop(project, payload("claude-code", "stop", project))["answer"]["reason"]
    assert "knowledge:export gates this stop, but no record knowledge:export in the ledger" \
        in reason


def test_hook_stop_unreadable_payload_blocks_and_counts(gated: Project) -> None:
    """A payload that is no harness's blocks (on_error block), counted on its own record."""
    from assay.ops import Invocation, call

    def answer() -> dict:
        inv = Invocation(cwd=str(gated.root), db=gated.db, surface="test")
        try:
            return call("hook.stop", {"payload": "not json"}, inv)[0]["data"]
        finally:
            inv.close()

    answers = [answer() for _ in range(7)]
    assert answers[0]["answer"]["decision"] == "block"
    assert "the hook payload is not one a harness sends" in answers[0]["answer"]["reason"]
    assert [a["decision"]["answer"] for a in answers] == ["block"] * 5 + ["allow", "allow"]
    assert set(answers[5]["answer"]) == {"systemMessage"}
    assert answers[0]["decision"]["event"] == "gate_error"
    assert session(gated, "unreadable-payload")["data"]["decision"]["error"]["code"] == \
        "hook_payload_invalid"


def test_hook_stop_error_allows_when_configured(tmp_path: Path) -> None:
    """[gate] on_error = "allow": an error lets the agent stop (the person is told) and is
    recorded as gate_error."""
    project = gate_project(tmp_path / "proj", extra='on_error = "allow"\n')
    out = stop(project, {"hook_event_name": "Stop", "cwd": str(project.root)})
    assert set(out["answer"]) == {"systemMessage"} and out["decision"]["event"] == "gate_error"
    assert out["recorded"] is True


def test_hook_stop_unreachable_ledger_blocks_counted_in_the_spool(tmp_path: Path) -> None:
    """A ledger that cannot be reached blocks every stop of a run, counted in the spool, and the
    run still ends at the retry cap with a give-up the person is told about."""
    project = gate_project(tmp_path / "proj", extra="retry_cap = 2\n")
    record_intent(project)
    project.db = "postgresql://assay@127.0.0.1:1/none?connect_timeout=2"
    first = stop(project, payload("claude-code", "stop", project))
    assert first["answer"]["decision"] == "block" and first["recorded"] is False
    assert "assay could not decide whether the work is ready" in first["answer"]["reason"]
    assert first["spooled"] == str(project.root / ".assay" / "gate-spool.jsonl")
    events = [stop(project, payload("claude-code", "stop-continuing", project))
              for _ in range(2)]
    assert [e["decision"]["event"] for e in events] == ["gate_error", "gate_gave_up"]
    assert "gave up after 2 blocks" in events[1]["answer"]["systemMessage"]


def test_hook_stop_broken_config_blocks(tmp_path: Path) -> None:
    """An assay.toml the gate cannot read blocks (on_error cannot be read either)."""
    project = gate_project(tmp_path / "proj", extra='on_error = "maybe"\n')
    out = stop(project, payload("claude-code", "stop", project))
    assert out["answer"]["decision"] == "block"
    assert 'on_error must be "block" or "allow"' in out["answer"]["reason"]


def test_hook_stop_outside_any_project_allows_silently(tmp_path: Path) -> None:
    """No assay.toml at or above the session's directory: allowed, nothing recorded."""
    project = make_project(tmp_path / "proj")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = stop(project, payload("claude-code", "stop", None, cwd=str(elsewhere)))
    assert out["answer"] is None and out["recorded"] is False
    assert out["decision"]["reason"] == "No assay project here: nothing gates this stop."


def test_hook_stop_cursor_answers_with_a_followup(gated: Project) -> None:
    """Cursor's stop payload is answered with followup_message; loop_count > 0 continues a run."""
    out = stop(gated, payload("cursor", "stop", gated))
    assert set(out["answer"]) == {"followup_message"}
    assert "not ready for review" in out["answer"]["followup_message"]
    again = stop(gated, payload("cursor", "stop", gated, loop_count=1))
    assert again["run"]["blocks"] == 2


def test_hook_stop_reason_is_bounded_for_a_large_intent(tmp_path: Path) -> None:
    """1,000 requirements, 999 without a result: the reason stays within 2,000 characters, says
    what it left out and how to read it all."""
    project = gate_project(tmp_path / "proj")
    record_intent(project, requirements=1000)
    prove(project)
    reason = stop(project, payload("claude-code", "stop", project))["answer"]["reason"]
    assert len(reason) <= 2000
    assert reason.endswith("see the whole list with 'assay work check -- knowledge:export'.)")
    assert "more lines left out" in reason


def test_compose_reason_cuts_whole_lines_and_long_ones() -> None:
    """Lines are kept whole until the bound; one longer than half of it is cut with an ellipsis."""
    from assay.gate.decide import MAX_REASON_CHARS, compose_reason

    reason = compose_reason(["x" * 5000, "short line"], ["knowledge:a"])
    assert len(reason) <= MAX_REASON_CHARS
    assert ("x" * 1000 + "...") in reason and "short line" in reason
    assert reason.endswith("Check again with 'assay work check -- knowledge:a'.")


def test_hook_stop_damaged_loop_head_blocks_with_the_raw_read(tmp_path: Path) -> None:
    """A loop head that fails its integrity check might be live: the stop is blocked, naming it
    and the read of its stored bytes, and the check never crashes."""
    from assay_testing import corrupt_version

    project = gate_project(tmp_path / "proj", gate="")
    op(project, "loop.start", task="fix the export", loop="lp-export", criterion=["tests pass"])
    op(project, "loop.stop", loop="lp-export", reason="done here")
    assert stop(project, payload("claude-code", "stop", project))["answer"] is None
    record = op(project, "get", id="loop:lp-export")["record"]
    text = output_text(record["data"]).replace('"status":"stopped"', '"status":"active"')
    corrupt_version(project, "loop:lp-export", record["revision"], text, None)
    reason = stop(project, payload("claude-code", "stop", project))["answer"]["reason"]
    assert "The loop lp-export cannot be read" in reason
    assert "'assay get --raw -- loop:lp-export'" in reason
