"""Loop operations on a real project: error codes, rejections, stop reasons, leases, gates."""

from __future__ import annotations

import itertools
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from loop_helpers import FIXED, contract, evaluation, loop_project, op, records, start, submit

from assay.errors import AssayError
from assay_testing import Project


def _err(project: Project, name: str, args: dict[str, Any]) -> AssayError:
    with pytest.raises(AssayError) as caught:
        op(project, name, args)
    return caught.value


def _declared(project: Project) -> tuple[dict[str, Any], str]:
    """Start and commit round 1 with the unit contract; return (round 2 view, item id)."""
    first = start(project)
    r1 = submit(project, first["submissionHandle"], evaluation(round_contract=contract()))
    return r1, r1["guidance"]["active_contract"]["items"][0]["id"]


# ---------------------------------------------------------------- start


def test_loop_start_conflicting_acceptance(gitproj: Project) -> None:
    """Restarting a loop id with other acceptance is operator_acceptance_conflict."""
    start(gitproj, loop="one")
    err = _err(gitproj, "loop.start", {"task": "Fix calc.add", "criterion": ["other"],
                                       "loop": "one"})
    assert (err.code, err.pointer) == ("operator_acceptance_conflict", None)


def test_loop_start_same_acceptance_running(gitproj: Project) -> None:
    """Restarting an active loop with the same acceptance is loop_already_running."""
    start(gitproj, loop="one")
    err = _err(gitproj, "loop.start", {"task": "Fix calc.add", "criterion": ["add returns the sum"],
                                       "constraint": ["no new dependencies"], "loop": "one"})
    assert err.code == "loop_already_running"


def test_loop_start_same_acceptance_stopped(gitproj: Project) -> None:
    """Restarting a stopped loop with the same acceptance is loop_exists."""
    start(gitproj, loop="one")
    op(gitproj, "loop.stop", {"loop": "one"})
    err = _err(gitproj, "loop.start", {"task": "Fix calc.add", "criterion": ["add returns the sum"],
                                       "constraint": ["no new dependencies"], "loop": "one"})
    assert err.code == "loop_exists"


@pytest.mark.parametrize(("args", "pointer"), [
    ({"task": "  "}, "/task"),
    ({"task": "t", "criterion": ["a", "a"]}, "/criterion/1"),
    ({"task": "t", "constraint": [""]}, "/constraint/0"),
    ({"task": "t", "criterion": ["c"], "loop": "Bad Id"}, "/loop"),
])
def test_loop_start_invalid_arguments(gitproj: Project, args: dict[str, Any], pointer: str) -> None:
    """Malformed start arguments are invalid_argument with the argument's pointer."""
    err = _err(gitproj, "loop.start", args)
    assert (err.code, err.pointer) == ("invalid_argument", pointer)


def test_loop_start_plan_file_rendered(gitproj: Project) -> None:
    """--plan reads a text file into every prompt; an unreadable one is file_unreadable."""
    (gitproj.root / "plan.md").write_text("1. read calc.py\n2. fix it\n", encoding="utf-8")
    view = start(gitproj, plan="plan.md")
    assert "2. fix it" in view["prompt"]
    err = _err(gitproj, "loop.start", {"task": "other", "plan": "missing.md"})
    assert (err.code, err.pointer) == ("file_unreadable", "/plan")


# ---------------------------------------------------------------- handles


@pytest.mark.parametrize(("handle", "pointer"), [
    (None, "/handle"),
    ("{not json", "/handle"),
    ('{"sessionId": "s", "roundId": "loop:x:round:1"}', "/handle/transactionId"),
    ('{"sessionId": "s", "roundId": "r1", "transactionId": "tx-00000000"}', "/handle/roundId"),
    ('{"sessionId": "s", "roundId": "loop:x:round:1", "transactionId": "t"}',
     "/handle/transactionId"),
])
def test_loop_next_handle_required(gitproj: Project, handle: str | None, pointer: str) -> None:
    """A malformed handle is submission_handle_required with a pointer; a missing one
    is missing_argument like any required argument."""
    start(gitproj)
    args: dict[str, Any] = {"evaluation": evaluation()}
    if handle is not None:
        args["handle"] = handle
    err = _err(gitproj, "loop.next", args)
    assert (err.code, err.pointer) == (
        "missing_argument" if handle is None else "submission_handle_required", pointer)


def test_loop_next_unknown_loop(gitproj: Project) -> None:
    """A handle naming a loop that does not exist is session_not_found."""
    handle = {"sessionId": "s-1", "roundId": "loop:ghost:round:1", "transactionId": "tx-00000000"}
    err = _err(gitproj, "loop.next", {"handle": json.dumps(handle), "evaluation": evaluation()})
    assert err.code == "session_not_found"


def test_loop_next_stale_handle_on_stopped_loop(gitproj: Project) -> None:
    """With no held prompt, a stale handle is submission_handle_mismatch."""
    view = start(gitproj)
    op(gitproj, "loop.stop", {})
    err = _err(gitproj, "loop.next", {"handle": json.dumps(view["submissionHandle"]),
                                      "evaluation": evaluation()})
    assert err.code == "submission_handle_mismatch"
    assert err.details["stopReason"] == "cancelled" and err.details["submissionHandle"] is None


def test_loop_next_handle_object_over_api(gitproj: Project) -> None:
    """Over the API (and MCP) the handle may be the object itself."""
    view = start(gitproj)
    out = op(gitproj, "loop.next", {"handle": view["submissionHandle"],
                                    "evaluation": evaluation("failed", False)})
    assert out["accepted"] and out["stopReason"] == "failed"


# ---------------------------------------------------------------- rejections and stops


def test_loop_success_claim_with_failing_check_rejected(gitproj: Project) -> None:
    """Success while the contract's check fails: rejected, posture contradicted, attempt 2."""
    r1, _ = _declared(gitproj)
    out = submit(gitproj, r1["submissionHandle"], evaluation("success", False))
    receipt = out["receipt"]
    assert out["accepted"] is False and receipt["record"] == "none"
    assert receipt["verification"]["evidence_posture"]["status"] == "contradicted"
    assert [c["check"] for c in receipt["rejection"]["checks"]] == [
        "completion_contract_open", "completion_contradicted"]
    assert receipt["rejection"]["checks"][1]["ref"] == "unit"
    assert (out["round"], out["attempt"], out["status"]) == (2, 2, "active")
    assert out["promptArtifact"]["contextReason"] == "enforcement_retry"
    assert "completion_contract_open" in out["prompt"]
    stored = records(gitproj)
    assert "loop:lp-" not in "".join(k for k in stored if k.endswith(":round:2"))
    assert any(k.endswith(":round:2:rejection:1") for k in stored)


def test_loop_rejections_escalate_then_terminate(gitproj: Project) -> None:
    """The same check rejected again escalates to a clean context; the third ends the loop."""
    view = start(gitproj)
    handle = view["submissionHandle"]
    first = submit(gitproj, handle, evaluation())
    assert first["receipt"]["rejection"]["checks"][0]["check"] == "contract_required"
    second = submit(gitproj, first["submissionHandle"], evaluation())
    assert second["promptArtifact"]["contextMode"] == "fresh_invocation"
    assert second["promptArtifact"]["contextReason"] == "rejection_escalation"
    third = submit(gitproj, second["submissionHandle"], evaluation())
    assert third["status"] == "stopped" and third["stopReason"] == "enforcement_terminated"
    assert third["receipt"]["rejection"]["consecutive"] == 3
    assert third["terminal"]["committedRounds"] == 0
    assert third["terminal"]["machineBackedSuccess"] is None


def test_loop_completed_with_machine_backed_success(gitproj: Project) -> None:
    """A fixed round declaring success completes the loop, machine-backed."""
    r1, _ = _declared(gitproj)
    (gitproj.root / "calc.py").write_text(FIXED, encoding="utf-8")
    out = submit(gitproj, r1["submissionHandle"], evaluation("success", False))
    assert out["stopReason"] == "completed"
    assert out["terminal"] == out["terminal"] | {"completed": True, "machineBackedSuccess": True,
                                                 "evidencePosture": "verified"}


def test_loop_completed_never_implies_machine_backed(tmp_path: Path) -> None:
    """Without any verification command, a success stop completes but is not machine-backed."""
    project = loop_project(tmp_path / "bare", commands=False)
    view = start(project)
    out = submit(project, view["submissionHandle"], evaluation("success", False))
    assert out["stopReason"] == "completed"
    assert out["terminal"]["completed"] is True
    assert out["terminal"]["machineBackedSuccess"] is False
    assert out["receipt"]["verification"]["evidence_posture"]["status"] == "insufficient"


def test_loop_blocked_stop(gitproj: Project) -> None:
    """A blocked outcome stops the loop with stop reason blocked and keeps the blocker."""
    view = start(gitproj)
    out = submit(gitproj, view["submissionHandle"],
                 evaluation("blocked", False, blocker="the CI runner is down"))
    assert out["stopReason"] == "blocked"
    stored = records(gitproj)
    ev = next(r for k, r in stored.items() if k.endswith(":round:1:evaluation"))
    assert ev.data["evaluation"]["blocker"] == "the CI runner is down"


def test_loop_stalled(tmp_path: Path) -> None:
    """Rounds that leave the workspace unchanged stop the loop as stalled."""
    project = loop_project(tmp_path / "stall", commands=False, loop_toml="stall_rounds = 2")
    view = start(project)
    handle = view["submissionHandle"]
    for _ in range(2):
        out = submit(project, handle, evaluation())
        handle = out["submissionHandle"]
    assert out["stopReason"] == "stalled"
    assert out["receipt"]["verification"]["evidence_posture"]["workspace"]["changedPathCount"] == 0


def test_loop_supersede_replaces_active_contract(gitproj: Project) -> None:
    """supersedes naming the active contract replaces it, with the reason in the receipt."""
    r1, _ = _declared(gitproj)
    active = r1["guidance"]["active_contract"]["id"]
    out = submit(gitproj, r1["submissionHandle"], evaluation(round_contract={
        "work_item": "smaller slice", "supersedes": {"contract_id": active, "reason": "too big"},
        "items": [{"description": "check runs", "verify_with": ["unit"]}]}))
    change = out["receipt"]["changes"]["contract"]
    assert change["superseded"] is True and change["redirect_reason"] == "too big"
    assert change["closure"] == "superseded"
    assert out["guidance"]["active_contract"]["work_item"] == "smaller slice"


def test_loop_receipt_reports_and_diagnostics(gitproj: Project) -> None:
    """The receipt lists every submitted field's handling and every diagnostic."""
    view = start(gitproj)
    out = submit(gitproj, view["submissionHandle"], evaluation(
        "failed", False, bogus=True, wrong_assumptions=["calc was fine", 7]))
    receipt = out["receipt"]
    handling = {r["path"]: r["handling"] for r in receipt["reports"]}
    assert handling["/bogus"] == "dropped" and handling["/wrong_assumptions"] == "normalized"
    assert handling["/outcome"] == "accepted"
    assert {(d["code"], d["pointer"]) for d in receipt["diagnostics"]} == {
        ("unknown_field_dropped", "/bogus"), ("entry_dropped", "/wrong_assumptions/1")}


# ---------------------------------------------------------------- leases, resume, stop


def _hold_lease(project: Project, loop_id: str) -> Any:
    from assay.ledger import open_store
    from assay.loop.policy import Limits
    from assay.loop.session import Lease

    store = open_store(project.root / ".assay" / "ledger.db")
    lease = Lease(store, loop_id=loop_id, scope="project:loopdemo", session_id="s-other",
                  limits=Limits())
    lease.acquire()
    return store


def test_loop_next_lease_conflict(gitproj: Project) -> None:
    """While another process holds the lease, next is lease_conflict and writes nothing."""
    view = start(gitproj)
    store = _hold_lease(gitproj, view["loopId"])
    try:
        err = _err(gitproj, "loop.next", {"handle": json.dumps(view["submissionHandle"]),
                                          "evaluation": evaluation("failed", False)})
        assert err.code == "lease_conflict" and err.retryable is True
        err = _err(gitproj, "loop.resume", {})
        assert err.code == "lease_conflict"
    finally:
        store.close()
    assert not any(k.endswith(":round:1") for k in records(gitproj))


def test_loop_resume_new_session_and_invocation_lost(gitproj: Project) -> None:
    """Resume mints a new handle (the old one goes stale); --invocation-lost recompiles clean."""
    view = start(gitproj)
    resumed = op(gitproj, "loop.resume", {})
    assert resumed["submissionHandle"] != view["submissionHandle"]
    assert resumed["promptArtifact"]["promptHash"] == view["promptArtifact"]["promptHash"]
    stale = submit(gitproj, view["submissionHandle"], evaluation())
    assert stale["stale"] is True and stale["submissionHandle"] == resumed["submissionHandle"]
    lost = op(gitproj, "loop.resume", {"invocation_lost": True})
    assert lost["promptArtifact"]["contextReason"] == "invocation_recovery"
    assert (lost["round"], lost["attempt"]) == (1, 1)


def test_loop_resume_stopped_loop(gitproj: Project) -> None:
    """Resuming a stopped loop is loop_stopped."""
    start(gitproj)
    op(gitproj, "loop.stop", {"reason": "enough"})
    err = _err(gitproj, "loop.resume", {})
    assert err.code == "loop_stopped" and err.details["stopReason"] == "cancelled"


def test_loop_stop_twice(gitproj: Project) -> None:
    """Stopping cancels once; stopping again changes nothing."""
    start(gitproj)
    first = op(gitproj, "loop.stop", {})
    assert first["stopReason"] == "cancelled" and first["alreadyStopped"] is False
    assert first["terminal"]["completed"] is False
    second = op(gitproj, "loop.stop", {})
    assert second["alreadyStopped"] is True


def test_loop_status_resolution(gitproj: Project) -> None:
    """status finds the one active loop; none is state_unavailable; two need --loop."""
    err = _err(gitproj, "loop.status", {})
    assert err.code == "state_unavailable"
    view = start(gitproj, loop="a")
    assert op(gitproj, "loop.status", {})["submissionHandle"] == view["submissionHandle"]
    start(gitproj, loop="b", task="another")
    err = _err(gitproj, "loop.status", {})
    assert (err.code, err.pointer) == ("invalid_argument", "/loop")
    err = _err(gitproj, "loop.status", {"loop": "Not A Loop"})
    assert (err.code, err.pointer) == ("invalid_argument", "/loop")


def test_loop_questions_listed(gitproj: Project) -> None:
    """Open questions get oq- ids and are listed until resolved."""
    view = start(gitproj)
    out = submit(gitproj, view["submissionHandle"], evaluation(
        open_questions=["Should add accept floats?"], round_contract=contract()))
    questions = op(gitproj, "loop.questions", {})["open_questions"]
    assert [q["text"] for q in questions] == ["Should add accept floats?"]
    submit(gitproj, out["submissionHandle"], evaluation(
        resolved_open_question_ids=[questions[0]["id"]]))
    assert op(gitproj, "loop.questions", {})["open_questions"] == []


# ---------------------------------------------------------------- gate check


def test_loop_gate_check_classifies_and_records(gitproj: Project) -> None:
    """A risky action asks the user, a safe one proceeds; the same action is recorded once."""
    view = start(gitproj)
    handle = json.dumps(view["submissionHandle"])
    risky = op(gitproj, "loop.gate-check", {"handle": handle, "action": "git push --force origin"})
    assert risky["recorded"] and risky["gateDecision"]["decision"] == "ask_user"
    assert "history_rewrite" in risky["gateDecision"]["matchedRules"]
    again = op(gitproj, "loop.gate-check", {"handle": handle, "action": "git push --force origin"})
    assert again["recorded"] is False and again["gateDecision"] == risky["gateDecision"]
    safe = op(gitproj, "loop.gate-check", {"handle": handle, "action": "run the unit tests"})
    assert safe["gateDecision"]["decision"] == "proceed"
    gid = safe["gateDecision"]["gateId"]
    out = submit(gitproj, view["submissionHandle"], evaluation("failed", False, gate_ids=[gid]))
    assert out["accepted"] is True


def test_loop_gate_ids_unknown_rejected(gitproj: Project) -> None:
    """Citing a gate id never recorded in the round is an enforcement rejection."""
    view = start(gitproj)
    out = submit(gitproj, view["submissionHandle"],
                 evaluation("failed", False, gate_ids=["g-00000000"]))
    assert out["accepted"] is False
    assert out["receipt"]["rejection"]["checks"][0]["check"] == "gate_unknown"


@pytest.mark.parametrize("action", ["   ", "x" * 1001, "rm\x07 -rf"])
def test_loop_gate_check_invalid(gitproj: Project, action: str) -> None:
    """A blank, over-long or control-character action is gate_invalid at /action."""
    view = start(gitproj)
    err = _err(gitproj, "loop.gate-check", {"handle": json.dumps(view["submissionHandle"]),
                                            "action": action})
    assert (err.code, err.pointer) == ("gate_invalid", "/action")


def test_loop_gate_check_stale_handle(gitproj: Project) -> None:
    """A gate check has no held prompt to return: a stale handle is the error."""
    view = start(gitproj)
    op(gitproj, "loop.resume", {})
    err = _err(gitproj, "loop.gate-check", {"handle": json.dumps(view["submissionHandle"]),
                                            "action": "deploy"})
    assert err.code == "submission_handle_mismatch"


def test_loop_gate_disabled(tmp_path: Path) -> None:
    """With [loop] gate = false the gate check is gate_disabled."""
    project = loop_project(tmp_path / "nogate", loop_toml="gate = false")
    view = start(project)
    err = _err(project, "loop.gate-check", {"handle": json.dumps(view["submissionHandle"]),
                                            "action": "deploy"})
    assert err.code == "gate_disabled"


# ---------------------------------------------------------------- config and surfaces


@pytest.mark.parametrize(("toml", "pointer"), [
    ("max_rounds = 0", "/loop/max_rounds"),
    ("max_rounds = true", "/loop/max_rounds"),
    ("gate = 1", "/loop/gate"),
    ("lease_seconds = 10\nrenew_seconds = 10", "/loop/renew_seconds"),
    ("colour = 1", "/loop/colour"),
])
def test_loop_config_invalid(tmp_path: Path, toml: str, pointer: str) -> None:
    """A malformed [loop] section is invalid_config with the key's pointer."""
    project = loop_project(tmp_path / "cfg", loop_toml=toml)
    err = _err(project, "loop.status", {})
    assert (err.code, err.pointer) == ("invalid_config", pointer)


def test_loop_config_max_rounds_default(tmp_path: Path) -> None:
    """[loop] max_rounds sets the round budget when start does not."""
    project = loop_project(tmp_path / "cfg", loop_toml="max_rounds = 7")
    assert "round 1 of 7" in start(project)["prompt"]


def test_loop_mcp_tools_answer_with_error_objects(gitproj: Project) -> None:
    """The MCP tools exist and return the same error object with its stable code."""
    from assay.mcp.server import invoke

    ok, is_error = invoke("loop_start", {"task": "Fix calc.add", "criterion": ["adds"]},
                          cwd=str(gitproj.root))
    assert is_error is False and ok["data"]["round"] == 1
    bad, is_error = invoke("loop_next", {"handle": ok["data"]["submissionHandle"],
                                         "evaluation": {"outcome": "success"}},
                           cwd=str(gitproj.root))
    assert is_error is True
    assert bad["error"]["code"] == "evaluation_invalid"
    assert bad["error"]["pointer"] == "/output_summary"


def test_loop_schema_published() -> None:
    """loop schema publishes the strict documents' JSON Schemas."""
    from jsonschema import Draft202012Validator

    from assay.ops import call

    envelope, _ = call("loop.schema")
    for schema in envelope["data"].values():
        Draft202012Validator.check_schema(schema)
    assert envelope["data"]["SubmissionHandle"]["additionalProperties"] is False


def test_loop_cli_next_rejection_exit_status(gitproj: Project) -> None:
    """A rejected submission prints its receipt and exits 1."""
    view = gitproj.ok("loop", "start", "--task", "t", "--criterion", "c")["data"]
    path = gitproj.root / ".assay" / "ev.json"
    path.write_text(json.dumps(evaluation()), encoding="utf-8")
    ran = gitproj.run("loop", "next", "--handle", json.dumps(view["submissionHandle"]),
                      "--evaluation", str(path))
    assert ran.code == 1 and ran.json["data"]["accepted"] is False
    assert subprocess.run(["git", "status", "--porcelain"], cwd=gitproj.root,
                          capture_output=True, check=True).returncode == 0


def test_loop_lease_renewed_while_gate_runs(tmp_path: Path) -> None:
    """A gate longer than the renewal interval renews the lease, then commits and releases it."""
    from assay.ledger import open_store

    project = loop_project(tmp_path / "renew", slow=2.5,
                           loop_toml="lease_seconds = 5\nrenew_seconds = 1")
    r1, _ = _declared(project)
    out = submit(project, r1["submissionHandle"], evaluation())
    assert out["accepted"] is True
    store = open_store(project.root / ".assay" / "ledger.db")
    try:
        with store.reader() as reader:
            versions = reader.history(f"loop-lease:{out['loopId']}")
    finally:
        store.close()
    holders = [v.data["holder"] for v in versions]
    renewals = sum(1 for a, b in itertools.pairwise(holders) if a is not None and a == b)
    assert renewals >= 1 and holders[-1] is None


def test_loop_outputs_match_published_models(gitproj: Project) -> None:
    """Guidance, receipts (committed and rejected), postures and terminal events validate
    against the published strict models."""
    from assay.loop.models import (
        LoopTerminalEvent,
        OperatorAcceptance,
        SubmissionGuidance,
        SubmissionReceipt,
    )

    view = start(gitproj)
    SubmissionGuidance.model_validate(view["guidance"])
    r1 = submit(gitproj, view["submissionHandle"], evaluation(
        round_contract=contract(), emerged_subtasks=["document add"],
        open_questions=["floats?"], subtask_boundary=True, bogus=1))
    sid = r1["guidance"]["subgoals"][0]["id"]
    rejected = submit(gitproj, r1["submissionHandle"], evaluation("success", False))
    (gitproj.root / "calc.py").write_text(FIXED, encoding="utf-8")
    done = submit(gitproj, rejected["submissionHandle"], evaluation(
        "success", False, subgoal_updates=[{"id": sid, "status": "done"}]))
    for out in (r1, rejected, done):
        SubmissionReceipt.model_validate(out["receipt"])
        if out["guidance"] is not None:
            SubmissionGuidance.model_validate(out["guidance"])
    LoopTerminalEvent.model_validate(done["terminal"])
    status = op(gitproj, "loop.status", {})
    OperatorAcceptance.model_validate(status["operatorAcceptance"])
    assert done["receipt"]["changes"]["subgoals_updated"] == [
        {"id": sid, "from": "pending", "to": "done"}]


def test_loop_rounds_store_what_replay_needs(gitproj: Project) -> None:
    """Every committed round re-compiles, from its stored inputs and facts, to the exact prompt."""
    from assay.loop.prompt import PromptRequest, compile_prompt

    r1, item = _declared(gitproj)
    rejected = submit(gitproj, r1["submissionHandle"], evaluation("success", False))
    (gitproj.root / "calc.py").write_text(FIXED, encoding="utf-8")
    submit(gitproj, rejected["submissionHandle"], evaluation(
        "success", False, execution_report={"claims": [{"id": item, "outcome": "met"}]}))
    rounds = [r for k, r in sorted(records(gitproj).items()) if r.data.get("type") == "round"]
    assert [r.data["round"] for r in rounds] == [1, 2]
    assert rounds[1].data["prompt"]["attempt"] == 2
    for record in rounds:
        request = PromptRequest.from_inputs(record.data["promptInputs"], record.data["factsBefore"])
        assert compile_prompt(request) == record.data["prompt"]
