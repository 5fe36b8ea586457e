"""Scenarios transcribed from LoopForge's own tests, replayed against assay's loop governor.

Each test restates one upstream scenario in assay's words (its docstring names
the upstream file and test). The upstream tests are 3.x-era and assay speaks
loop protocol 4.0, so the payloads are 4.0 documents; where the protocols
differ, the test pins assay's answer to the version difference (a 3.x field is
``protocol_version_mismatch``). Every scenario runs over the Python API
(``assay.ops.call``) and the in-process MCP client; those marked
``@surfaces(..., "cli")`` also run through the real ``assay`` command line.

Upstream sources (kyrielrving11/LoopForge, ``loopforge/src``):
``tests/mcp.test.ts``, ``tests/verification-facts.test.ts`` at 900177cb,
``tests/provenance-claims.test.ts`` at bda11853, ``tests/self-eval.test.ts`` at
02800d0f, ``tests/cognitive-governance.test.ts`` and
``mcp/submission-boundary.ts`` at 14e13de4.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from loop_surfaces import FIXED, build_project, surface

from assay.loop import identity
from assay_testing import Project

CRITERION = "add returns the sum"
AGENT = "agent"
REVIEWER = "reviewer"


def surfaces(*kinds: str) -> Callable[[Any], Any]:
    """Run a scenario on these surfaces (default: api and mcp)."""
    return pytest.mark.surfaces(*kinds)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "kind" in metafunc.fixturenames:
        marker = metafunc.definition.get_closest_marker("surfaces")
        kinds = marker.args if marker else ("api", "mcp")
        metafunc.parametrize("kind", kinds)


def ev(outcome: str = "partial", cont: bool = True, **extra: Any) -> dict[str, Any]:
    """A 4.0 self-evaluation; ``extra`` adds or replaces fields."""
    out: dict[str, Any] = {"outcome": outcome, "output_summary": f"worked the round ({outcome})",
                           "constraint_violations": [], "should_continue": cont}
    out.update(extra)
    return out


def slice_(work_item: str = "calc.add adds", *, refs: list[str] | None = None,
           verify: str = "unit", description: str = "the unit check passes") -> dict[str, Any]:
    """A round contract proposal with one item."""
    return {"work_item": work_item, "items": [{"description": description,
                                               "criterion_refs": refs or [],
                                               "verify_with": [verify]}]}


class Loop:
    """One scenario's project and surface, with the few steps every scenario takes."""

    def __init__(self, kind: str, tmp_path: Path, stack: ExitStack) -> None:
        self.kind = kind
        self.tmp_path = tmp_path
        self.stack = stack
        self.project: Project | None = None
        self.surface: Any = None

    def setup(self, **options: Any) -> Loop:
        self.project = build_project(self.tmp_path / "p", **options)
        self.surface = self.stack.enter_context(surface(self.kind, self.project))
        return self

    @property
    def root(self) -> Path:
        if self.project is None:
            self.setup()
        assert self.project is not None
        return self.project.root

    def call(self, op: str, args: dict[str, Any] | None = None,
             principal: str | None = None) -> dict[str, Any]:
        if self.surface is None:
            self.setup()
        envelope: dict[str, Any] = self.surface.call(op, args or {}, principal)
        return envelope

    def ok(self, op: str, args: dict[str, Any] | None = None,
           principal: str | None = None) -> dict[str, Any]:
        envelope = self.call(op, args, principal)
        assert envelope["ok"] is True, envelope
        data: dict[str, Any] = envelope["data"]
        return data

    def error(self, op: str, args: dict[str, Any] | None = None,
              principal: str | None = None) -> dict[str, Any]:
        envelope = self.call(op, args, principal)
        assert envelope["ok"] is False, envelope
        err: dict[str, Any] = envelope["error"]
        return err

    def start(self, **args: Any) -> dict[str, Any]:
        full = {"task": "Fix calc.add", "criterion": [CRITERION], "loop": "lf", **args}
        return self.ok("loop.start", {k: v for k, v in full.items() if v is not None})

    def next(self, view: dict[str, Any], evaluation: dict[str, Any]) -> dict[str, Any]:
        return self.ok("loop.next", {"handle": view["submissionHandle"],
                                     "evaluation": evaluation})

    def fix(self) -> None:
        (self.root / "calc.py").write_text(FIXED, encoding="utf-8")

    def touch(self, name: str) -> None:
        (self.root / name).write_text(f"{name}\n", encoding="utf-8")

    def records(self) -> dict[str, Any]:
        from assay.ledger import open_store

        store = open_store(self.root / ".assay" / "ledger.db")
        try:
            with store.reader() as reader:
                return {r.id: r for r in reader.find(kind="loop", limit=10_000)}
        finally:
            store.close()


@pytest.fixture
def lf(kind: str, tmp_path: Path) -> Iterator[Loop]:
    """A scenario driver on the surface ``kind`` (its project is built on first use)."""
    with ExitStack() as stack:
        yield Loop(kind, tmp_path, stack)


def _cr(view: dict[str, Any]) -> str:
    return str(view["guidance"]["criteria"][0]["id"])


def _item(view: dict[str, Any]) -> str:
    return str(view["guidance"]["active_contract"]["items"][0]["id"])


# ====================================================================== mcp.test.ts: lifecycle


@surfaces("api", "mcp", "cli")
def test_conformance_start_returns_handle_and_clean_first_prompt(lf: Loop) -> None:
    """Start returns round 1's prompt at full density with its handle (mcp.test.ts "returns
    sessionId + Round 1 prompt (L2 compile)")."""
    view = lf.start()
    assert view["round"] == 1 and view["roundId"] == "loop:lf:round:1"
    assert set(view["submissionHandle"]) == {"sessionId", "roundId", "transactionId"}
    assert view["prompt"] and view["promptArtifact"]["level"] == "l2"
    assert view["promptArtifact"]["contextReason"] == "first_round"


def test_conformance_three_rounds_then_completed(lf: Loop) -> None:
    """Two continuing rounds and a machine-backed success stop the loop completed in round 3
    (mcp.test.ts "start → next × 3 → completed")."""
    view = lf.start()
    r1 = lf.next(view, ev(round_contract=slice_(refs=[_cr(view)])))
    lf.touch("notes.txt")
    r2 = lf.next(r1, ev())
    assert r2["round"] == 3 and r2["stopReason"] is None
    lf.fix()
    r3 = lf.next(r2, ev("success", False))
    assert (r3["stopReason"], r3["round"], r3["prompt"]) == ("completed", 3, None)
    assert r3["terminal"]["machineBackedSuccess"] is True


def test_conformance_success_without_continue_completes(lf: Loop) -> None:
    """A success that stops ends the loop completed, with no machine backing claimed for it
    (mcp.test.ts "next with evaluation → completed when shouldContinue=false")."""
    view = lf.start()
    out = lf.next(view, ev("success", False))
    assert out["stopReason"] == "completed" and out["prompt"] is None
    assert out["terminal"]["machineBackedSuccess"] is False


@surfaces("api", "mcp", "cli")
def test_conformance_missing_evaluation_is_evaluation_invalid(lf: Loop) -> None:
    """A next without an evaluation is evaluation_invalid naming the missing evaluation
    (mcp.test.ts "next without structured evaluation → input error")."""
    view = lf.start()
    err = lf.error("loop.next", {"handle": view["submissionHandle"]})
    assert (err["code"], err["pointer"]) == ("evaluation_invalid", "/evaluation")
    assert err["details"]["missing"] == ["evaluation"]


def test_conformance_every_malformed_core_field_listed_round_kept(lf: Loop) -> None:
    """All malformed required fields are listed at once and the round is not consumed
    (mcp.test.ts "rejects malformed core fields without consuming the round")."""
    view = lf.start()
    err = lf.error("loop.next", {"handle": view["submissionHandle"], "evaluation": {
        "outcome": "false", "output_summary": "invalid core types",
        "constraint_violations": ["valid", 42], "should_continue": True}})
    assert err["code"] == "evaluation_invalid" and err["pointer"] == "/outcome"
    assert [i["pointer"] for i in err["details"]["invalid"]] == ["/outcome",
                                                                "/constraint_violations/1"]
    status = lf.ok("loop.status")
    assert (status["round"], status["attempt"], status["status"]) == (1, 1, "active")


def test_conformance_malformed_optional_fields_normalised(lf: Loop) -> None:
    """Malformed optional fields are dropped with diagnostics and the round advances
    (mcp.test.ts "normalizes malformed optional fields instead of rejecting the round")."""
    view = lf.start()
    out = lf.next(view, ev(blocker=["invalid optional value"], worker_results=42,
                           round_contract=slice_()))
    assert out["round"] == 2 and out["accepted"] is True
    codes = {(d["code"], d["pointer"]) for d in out["receipt"]["diagnostics"]}
    assert {("blocker_dropped", "/blocker"), ("wrong_type_dropped", "/worker_results")} <= codes


def test_conformance_honest_non_success_rounds_continue(lf: Loop) -> None:
    """Three honest partial rounds that make progress keep the loop running (mcp.test.ts "3
    consecutive success=false rounds continue normally (no false-positive circuit breaker)")."""
    view = lf.start()
    out = lf.next(view, ev(round_contract=slice_()))
    for n in (2, 3):
        lf.touch(f"r{n}.txt")
        out = lf.next(out, ev())
    assert out["status"] == "active" and out["round"] == 4 and out["prompt"]


def test_conformance_max_rounds_stops(lf: Loop) -> None:
    """The round that reaches the budget stops the loop even when it asks to continue
    (mcp.test.ts "next at maxRounds stops")."""
    view = lf.start(max_rounds=2)
    r1 = lf.next(view, ev(round_contract=slice_()))
    r2 = lf.next(r1, ev())
    assert (r2["stopReason"], r2["round"], r2["prompt"]) == ("max_rounds", 2, None)


def test_conformance_corrected_payload_same_handle(lf: Loop) -> None:
    """A payload rejected for its format can be corrected under the same handle
    (mcp.test.ts "a rejected format submission can be corrected with the same roundId")."""
    view = lf.start()
    lf.error("loop.next", {"handle": view["submissionHandle"], "evaluation": {"outcome": "?"}})
    out = lf.next(view, ev(round_contract=slice_()))
    assert out["round"] == 2 and out["receipt"]["attempt"] == 1


def test_conformance_discovered_constraint_joins_next_prompt(lf: Loop) -> None:
    """A constraint discovered in round 1 is active in round 2's prompt (mcp.test.ts "next with
    evaluation parameter (multi-round with discoveries)")."""
    view = lf.start()
    out = lf.next(view, ev(discovered_constraints=["All external calls must use SafeERC20"],
                           round_contract=slice_()))
    assert out["receipt"]["changes"]["constraints_declared"] == [
        "All external calls must use SafeERC20"]
    assert "(discovered) All external calls must use SafeERC20" in out["prompt"]


@surfaces("api", "mcp", "cli")
def test_conformance_recurring_violation_ladder_terminates(lf: Loop) -> None:
    """The same violation in a third round is rejected, rejected again, then terminates the
    loop (mcp.test.ts "a persistent recurring-violation offender terminates (v3.3.1 R6
    ladder)")."""
    view = lf.start()
    out = lf.next(view, ev(constraint_violations=["Violate X"], round_contract=slice_()))
    lf.touch("r2.txt")
    out = lf.next(out, ev(constraint_violations=["violate  x"]))
    assert out["accepted"] is True and out["round"] == 3
    steps = []
    for n in (1, 2, 3):
        lf.touch(f"again{n}.txt")
        out = lf.next(out, ev(constraint_violations=["Violate X"]))
        check = out["receipt"]["rejection"]["checks"][0]
        steps.append((check["check"], check["ladder"]["count"], check["ladder"]["consequence"],
                      check["ladder"]["next"]))
    assert steps == [("recurring_violation", 1, "reject", "reject"),
                     ("recurring_violation", 2, "reject", "terminate"),
                     ("recurring_violation", 3, "terminate", None)]
    assert out["stopReason"] == "enforcement_terminated"
    assert "recurring_violation" in out["terminal"]["stopDetail"]


def test_conformance_absent_evaluation_writes_nothing(lf: Loop) -> None:
    """A submission without an evaluation leaves the ledger and the loop untouched
    (mcp.test.ts "advance() leaves the session running when evaluation is absent")."""
    view = lf.start()
    before = lf.ok("ledger.info")["ledger_revision"]
    lf.error("loop.next", {"handle": view["submissionHandle"]})
    assert lf.ok("ledger.info")["ledger_revision"] == before
    assert lf.ok("loop.status")["status"] == "active"


def test_conformance_resume_after_start_returns_round_one(lf: Loop) -> None:
    """Resuming a just-started loop returns round 1's prompt under a new session
    (mcp.test.ts "resume() returns prompt for next round after create")."""
    view = lf.start()
    resumed = lf.ok("loop.resume", {"loop": "lf"})
    assert resumed["round"] == 1
    assert resumed["promptArtifact"]["promptHash"] == view["promptArtifact"]["promptHash"]
    assert resumed["submissionHandle"]["sessionId"] != view["submissionHandle"]["sessionId"]


def test_conformance_resume_mid_loop(lf: Loop) -> None:
    """Resuming after a committed round picks the loop up at round 2 (mcp.test.ts "resume()
    recovers mid-loop state after advance")."""
    view = lf.start()
    lf.next(view, ev(round_contract=slice_()))
    resumed = lf.ok("loop.resume", {"loop": "lf"})
    assert resumed["round"] == 2 and resumed["prompt"]


def test_conformance_resume_stopped_loop_names_stop_reason(lf: Loop) -> None:
    """A completed loop is not resumed; the answer carries its stop reason (mcp.test.ts
    "resume() returns stopped result for completed loop")."""
    view = lf.start()
    lf.next(view, ev("success", False))
    err = lf.error("loop.resume", {"loop": "lf"})
    assert err["code"] == "loop_stopped" and err["details"]["stopReason"] == "completed"


def test_conformance_resume_unknown_loop_names_the_loops(lf: Loop) -> None:
    """Resuming a loop that does not exist is state_unavailable naming it and the loops that do
    (mcp.test.ts "resume() returns null for unknown loop")."""
    lf.start()
    err = lf.error("loop.resume", {"loop": "nonexistent"})
    assert err["code"] == "state_unavailable"
    assert err["details"]["loopId"] == "nonexistent"
    assert [x["loopId"] for x in err["details"]["loops"]] == ["lf"]
    assert "nonexistent" in err["message"] and "lf" in err["message"]


def test_conformance_second_live_owner_fenced(lf: Loop) -> None:
    """Starting a running loop again is refused and leaves one head (mcp.test.ts "save()
    upserts — only one session_state entry per loop")."""
    lf.start()
    err = lf.error("loop.start", {"task": "Fix calc.add", "criterion": [CRITERION], "loop": "lf"})
    assert err["code"] == "loop_already_running"
    assert [k for k in lf.records() if k.count(":") == 1] == ["loop:lf"]


def test_conformance_status_reports_round_and_posture(lf: Loop) -> None:
    """Status after one round shows round 2, active, one commit and its posture (mcp.test.ts
    "status returns correct round, roundSuccess, status")."""
    view = lf.start()
    lf.next(view, ev(round_contract=slice_()))
    status = lf.ok("loop.status", {"loop": "lf"})
    assert (status["round"], status["status"], status["committedRounds"]) == (2, "active", 1)
    assert status["lastPosture"]["machineBackedSuccess"] is False


def test_conformance_two_loops_are_named(lf: Loop) -> None:
    """With two loops running, a status that names none lists both (mcp.test.ts "list returns
    multiple sessions")."""
    lf.start(loop="a", task="Task A")
    lf.start(loop="b", task="Task B")
    err = lf.error("loop.status")
    assert (err["code"], err["pointer"]) == ("invalid_argument", "/loop")
    assert sorted(x["loopId"] for x in err["details"]["loops"]) == ["a", "b"]


def test_conformance_stop_returns_final_trajectory(lf: Loop) -> None:
    """A manual stop ends the loop cancelled with its trajectory; the old handle then fails
    (mcp.test.ts "stop manually returns final trajectory")."""
    view = lf.start()
    r1 = lf.next(view, ev(round_contract=slice_()))
    stopped = lf.ok("loop.stop", {"loop": "lf"})
    terminal = stopped["terminal"]
    assert (terminal["stopReason"], terminal["committedRounds"]) == ("cancelled", 1)
    assert terminal["machineBackedSuccessTrajectory"] == [False]
    err = lf.error("loop.next", {"handle": r1["submissionHandle"], "evaluation": ev()})
    assert err["code"] == "submission_handle_mismatch"


def test_conformance_replay_returns_timeline(lf: Loop) -> None:
    """Replay lists the committed round and the held prompt, both matching (mcp.test.ts
    "replay returns timeline")."""
    view = lf.start()
    lf.next(view, ev(round_contract=slice_()))
    replayed = lf.ok("loop.replay", {"loop": "lf", "all": True})
    assert [(r["round"], r["source"]) for r in replayed["replays"]] == [(1, "committed"),
                                                                         (2, "held")]
    assert replayed["match"] is True


def test_conformance_unknown_loop_view_unavailable(lf: Loop) -> None:
    """A view of a loop that does not exist is state_unavailable (mcp.test.ts
    "loopforge_health returns error for unknown loop")."""
    lf.start()
    err = lf.error("loop.explain", {"loop": "nonexistent"})
    assert err["code"] == "state_unavailable" and err["details"]["loopId"] == "nonexistent"


def test_conformance_paused_loop_resumes_and_advances(lf: Loop) -> None:
    """A paused loop accepts nothing until resumed, then advances (mcp.test.ts "resumes a
    paused session as running and can advance")."""
    view = lf.start()
    paused = lf.ok("loop.pause", {"loop": "lf", "reason": "lunch"}, principal=REVIEWER)
    assert paused["status"] == "paused" and paused["submissionHandle"] is None
    err = lf.error("loop.next", {"handle": view["submissionHandle"], "evaluation": ev()})
    assert err["code"] == "loop_paused"
    resumed = lf.ok("loop.resume", {"loop": "lf"})
    assert resumed["status"] == "active"
    assert lf.next(resumed, ev("failed", False))["stopReason"] == "failed"


def test_conformance_completed_loop_keeps_replay(lf: Loop) -> None:
    """An unverified success completes the loop and its replay stays available (mcp.test.ts
    "commits the terminal trajectory and keeps completed replay available")."""
    lf.setup(unit=None)
    view = lf.start()
    done = lf.next(view, ev("success", False))
    assert done["stopReason"] == "completed"
    assert done["terminal"]["machineBackedSuccessTrajectory"] == [False]
    assert lf.ok("loop.replay", {"loop": "lf", "all": True})["match"] is True


def test_conformance_committed_handle_answers_with_receipt(lf: Loop) -> None:
    """Resubmitting a committed round's handle commits nothing and returns that commit's
    receipt (mcp.test.ts "recovers a committed round after a crash without duplicate
    feedback")."""
    view = lf.start()
    lf.next(view, ev(round_contract=slice_()))
    again = lf.ok("loop.next", {"handle": view["submissionHandle"], "evaluation": ev()})
    assert again["stale"] is True and again["committedReceipt"]["roundId"] == "loop:lf:round:1"
    assert lf.records()["loop:lf:round:1"].revision == 1


def test_conformance_rejected_attempt_restored_same_round(lf: Loop) -> None:
    """A rejected attempt keeps the round id with attempt 2, survives a resume unchanged and
    commits nothing (mcp.test.ts "restores the compiled retry attempt with the same round ID and
    zero commit")."""
    view = lf.start()
    rejected = lf.next(view, ev())
    assert rejected["receipt"]["rejection"]["checks"][0]["check"] == "contract_required"
    assert (rejected["roundId"], rejected["attempt"]) == ("loop:lf:round:1", 2)
    assert rejected["promptArtifact"]["level"] == "l0"
    resumed = lf.ok("loop.resume", {"loop": "lf"})
    assert resumed["promptArtifact"]["promptHash"] == rejected["promptArtifact"]["promptHash"]
    assert "loop:lf:round:1" not in lf.records()
    assert lf.next(resumed, ev(round_contract=slice_()))["round"] == 2


@surfaces("api", "mcp", "cli")
def test_conformance_max_rounds_must_be_positive_whole(lf: Loop) -> None:
    """max_rounds 0, -1 and 1.5 are refused naming max_rounds (mcp.test.ts "rejects maxRounds
    that is not a positive integer")."""
    for bad in (0, -1, 1.5):
        err = lf.error("loop.start", {"task": "Validate", "criterion": ["c"], "max_rounds": bad})
        assert (err["code"], err["pointer"]) == ("invalid_argument", "/max_rounds"), bad
        assert "max_rounds" in err["message"]


def test_conformance_invalid_loop_id_refused(lf: Loop) -> None:
    """A loop id that is not a plain name is refused at start and at resume (mcp.test.ts
    "rejects an invalid loopId at the entry point")."""
    err = lf.error("loop.start", {"task": "t", "criterion": ["c"], "loop": "../escape"})
    assert (err["code"], err["pointer"]) == ("invalid_argument", "/loop")
    err = lf.error("loop.resume", {"loop": "../escape"})
    assert (err["code"], err["pointer"]) == ("invalid_argument", "/loop")


def test_conformance_duplicate_loop_id_not_overwritten(lf: Loop) -> None:
    """Another task under a taken loop id is refused and the first loop still advances
    (mcp.test.ts "rejects a same-process duplicate loopId instead of overwriting")."""
    view = lf.start(loop="dup")
    err = lf.error("loop.start", {"task": "Duplicate guard again", "criterion": ["c"],
                                  "loop": "dup"})
    assert err["code"] == "operator_acceptance_conflict"
    assert lf.next(view, ev(round_contract=slice_()))["accepted"] is True


def test_conformance_next_without_handle_refused(lf: Loop) -> None:
    """A next without a handle is refused naming the handle (mcp.test.ts "rejects
    loopforge_next without a roundId")."""
    lf.start()
    err = lf.error("loop.next", {"evaluation": ev()})
    assert (err["code"], err["pointer"]) == ("missing_argument", "/handle")


def test_conformance_stale_handle_returns_held_prompt(lf: Loop) -> None:
    """A stale handle returns the held prompt with a warning and commits nothing (mcp.test.ts
    "returns the held prompt with a warning when a stale roundId is submitted")."""
    view = lf.start()
    r1 = lf.next(view, ev(round_contract=slice_()))
    dup = lf.ok("loop.next", {"handle": view["submissionHandle"], "evaluation": ev()})
    assert dup["stale"] is True and dup["round"] == 2 and dup["prompt"] == r1["prompt"]
    assert dup["warnings"][0]["code"] == "submission_handle_mismatch"
    assert "loop:lf:round:2" not in lf.records()
    assert lf.next(r1, ev("failed", False))["stopReason"] == "failed"


def test_conformance_unverified_round_never_machine_backed(lf: Loop) -> None:
    """A round no machine observation backs enters the trajectory as not machine-backed
    (mcp.test.ts "an unverified success commits but never enters the success trajectory")."""
    lf.setup(unit=None)
    view = lf.start()
    r1 = lf.next(view, ev())
    assert r1["receipt"]["verification"]["evidence_posture"]["machineBackedSuccess"] is False
    stopped = lf.ok("loop.stop", {"loop": "lf"})
    assert stopped["terminal"]["machineBackedSuccessTrajectory"] == [False]


@surfaces("api", "mcp", "cli")
def test_conformance_legacy_subtask_fields_are_a_version_difference(lf: Loop) -> None:
    """3.x completed/blocked/canceled sub-task lists are protocol_version_mismatch naming the
    4.0 replacement (mcp.test.ts "persists completed/blocked/canceled subtasks on the feedback
    entry")."""
    view = lf.start()
    err = lf.error("loop.next", {"handle": view["submissionHandle"], "evaluation": ev(
        completed_subtasks=["sg-a: first step"], blocked_subtasks=["sg-c"],
        canceled_subtasks=["sg-d"])})
    assert (err["code"], err["pointer"]) == ("protocol_version_mismatch", "/completed_subtasks")
    assert err["details"]["detected"] == "3.x" and err["details"]["protocol"] == "4.0"
    assert [f["field"] for f in err["details"]["fields"]] == [
        "completed_subtasks", "blocked_subtasks", "canceled_subtasks"]
    assert "subgoal_updates" in err["details"]["fields"][0]["use"]


def test_conformance_legacy_round_contract_is_a_version_difference(lf: Loop) -> None:
    """A 3.x round_contract with done_when and verification_plan is protocol_version_mismatch
    (mcp.test.ts "round_contract passes the evaluation schema")."""
    view = lf.start()
    err = lf.error("loop.next", {"handle": view["submissionHandle"], "evaluation": ev(
        round_contract={"work_item": "Implement auth", "done_when": ["cr-auth-login"],
                        "verification_plan": ["run-tests"], "scope": ["src/auth"]})})
    assert (err["code"], err["pointer"]) == ("protocol_version_mismatch",
                                             "/round_contract/done_when")


# ====================================================================== mcp.test.ts: contracts


def test_conformance_declared_contract_renders_in_next_prompt(lf: Loop) -> None:
    """A contract declared in round 1 is round 2's slice in its prompt (mcp.test.ts "a contract
    declared in round 1 renders as round 2's Current Task")."""
    view = lf.start()
    out = lf.next(view, ev(round_contract=slice_("Implement login flow")))
    assert "Implement login flow" in out["prompt"]
    assert "the unit check passes (checked by unit" in out["prompt"]


def test_conformance_contract_less_round_renders_the_task(lf: Loop) -> None:
    """Without verification capability a round has no contract and the task stays the
    objective (mcp.test.ts "a contract-less round stays byte-identical to pre-contract
    rendering")."""
    lf.setup(unit=None)
    view = lf.start(task="Plain task")
    out = lf.next(view, ev())
    assert "No contract is active." in out["prompt"] and "Plain task" in out["prompt"]


def test_conformance_retry_keeps_the_active_contract(lf: Loop) -> None:
    """A rejected attempt mid-contract retries at l0 with the active contract and no new
    contract template (mcp.test.ts "v3.4: rejection mid-contract keeps the ACTIVE contract as the
    retry's Current Task")."""
    view = lf.start(max_rounds=4)
    r1 = lf.next(view, ev(round_contract=slice_("Implement login flow")))
    rejected = lf.next(r1, ev("success", False))
    assert rejected["accepted"] is False and rejected["promptArtifact"]["level"] == "l0"
    assert "Implement login flow" in rejected["prompt"]
    assert '"round_contract"' not in rejected["prompt"]


def test_conformance_satisfied_contract_reverts_to_the_task(lf: Loop) -> None:
    """Closing the contract and continuing advances with no contract, back to the task
    (mcp.test.ts "v3.4: a satisfied contract reverts the next prompt to the original task")."""
    view = lf.start(max_rounds=4)
    r1 = lf.next(view, ev(round_contract=slice_("Implement login flow")))
    lf.fix()
    r2 = lf.next(r1, ev(execution_report={"claims": [{"id": _item(r1), "outcome": "met"}]}))
    assert r2["accepted"] is True and r2["round"] == 3
    assert r2["receipt"]["changes"]["contract"]["closure"] == "verified"
    assert r2["guidance"]["active_contract"] is None
    assert "No contract is active." in r2["prompt"] and "Fix calc.add" in r2["prompt"]


def test_conformance_premature_replacement_ignored(lf: Loop) -> None:
    """A new contract proposed while the active one is open is warned and ignored (mcp.test.ts
    "v3.4: a premature replacement is ignored — the open contract continues")."""
    view = lf.start(max_rounds=4)
    r1 = lf.next(view, ev(round_contract=slice_("Implement login flow")))
    active = r1["guidance"]["active_contract"]["id"]
    lf.fix()
    r2 = lf.next(r1, ev(round_contract=slice_("Implement the admin panel")))
    assert r2["guidance"]["active_contract"]["id"] == active
    assert "contract_premature" in {d["code"] for d in r2["receipt"]["diagnostics"]}
    assert "Implement login flow" in r2["prompt"]
    assert "Implement the admin panel" not in r2["prompt"]


def test_conformance_status_and_replay_show_the_contract(lf: Loop) -> None:
    """Status shows the active contract and the declaring round's replay row its proposal
    (mcp.test.ts "v3.5: status exposes the active contract and replay rows carry the
    proposals")."""
    view = lf.start(max_rounds=4)
    lf.next(view, ev(round_contract=slice_("Implement login flow")))
    status = lf.ok("loop.status", {"loop": "lf"})
    assert status["guidance"]["active_contract"]["work_item"] == "Implement login flow"
    rows = lf.ok("loop.replay", {"loop": "lf", "all": True})["replays"]
    assert rows[0]["proposal"]["work_item"] == "Implement login flow"
    assert rows[1]["proposal"] is None


def test_conformance_audit_lists_committed_rounds(lf: Loop) -> None:
    """The audit shows both committed rounds with the contract the first proposed
    (mcp.test.ts "view=audit judges COMMITTED rounds (v3.3.1)")."""
    view = lf.start()
    out = lf.next(view, ev(round_contract=slice_("Implement login flow")))
    lf.touch("r2.txt")
    lf.next(out, ev())
    audit = lf.ok("loop.audit", {"loop": "lf"})
    assert [r["round"] for r in audit["rounds"]] == [1, 2]
    assert audit["rounds"][0]["proposal"]["work_item"] == "Implement login flow"


@surfaces("api", "mcp", "cli")
def test_conformance_audit_without_data_is_unavailable(lf: Loop) -> None:
    """A loop with nothing committed, and a loop that does not exist, have no audit data
    (mcp.test.ts "view=audit reports no audit data for a loop with zero committed rounds")."""
    lf.start()
    err = lf.error("loop.audit", {"loop": "lf"})
    assert err["code"] == "state_unavailable" and "no audit data" in err["message"]
    assert lf.error("loop.audit", {"loop": "no-such-loop"})["code"] == "state_unavailable"


def test_conformance_replay_from_the_ledger_after_restart(lf: Loop) -> None:
    """A fresh process replays the committed rounds from the ledger alone; an unknown loop is
    unavailable (mcp.test.ts "replays a loop straight from the vault after restart
    (v3.3.1)")."""
    view = lf.start()
    out = lf.next(view, ev(round_contract=slice_()))
    lf.touch("r2.txt")
    lf.next(out, ev())
    replayed = lf.ok("loop.replay", {"loop": "lf", "all": True})
    assert replayed["match"] is True and len(replayed["replays"]) == 3
    assert lf.error("loop.replay", {"loop": "no-such-loop", "all": True})["code"] == \
        "state_unavailable"


# ====================================================================== gates


@surfaces("api", "mcp", "cli")
def test_conformance_gate_resolved_by_another_principal(lf: Loop) -> None:
    """A recorded ask_user gate is approved later, by another principal in another process,
    and the approval is stored with the gate (mcp.test.ts "resolves a persisted gate after the
    owning process is recreated")."""
    view = lf.start()
    gate = lf.ok("loop.gate-check", {"handle": view["submissionHandle"],
                                     "action": "publish the release: git push origin main"},
                 principal=AGENT)["gateDecision"]
    assert gate["decision"] == "ask_user" and gate["risk"] == "high"
    decided = lf.ok("loop.approve", {"gate": gate["gateId"], "loop": "lf",
                                     "reason": "release approved"}, principal=REVIEWER)
    approval = decided["gateDecision"]["approval"]
    assert (approval["status"], approval["principal"]) == ("approved", REVIEWER)
    shown = lf.ok("loop.status", {"loop": "lf"})["gates"]
    assert [(g["gateId"], g["round"], g["approval"]["principal"]) for g in shown] == [
        (gate["gateId"], 1, REVIEWER)]


def test_conformance_unapproved_gate_citation_rejected_until_approved(lf: Loop) -> None:
    """Citing an ask_user gate is rejected until another principal approves it (mcp.test.ts
    "resolves a persisted gate after the owning process is recreated")."""
    view = lf.start()
    gid = lf.ok("loop.gate-check", {"handle": view["submissionHandle"],
                                    "action": "git push origin main"})["gateDecision"]["gateId"]
    refused = lf.next(view, ev(gate_ids=[gid], round_contract=slice_()))
    assert refused["receipt"]["rejection"]["checks"][0]["check"] == "gate_unapproved"
    lf.ok("loop.approve", {"gate": gid, "loop": "lf"}, principal=REVIEWER)
    assert lf.next(refused, ev(gate_ids=[gid], round_contract=slice_()))["accepted"] is True


def test_conformance_gate_self_approval_forbidden(lf: Loop) -> None:
    """The loop's agent principal cannot approve its own gate (mcp.test.ts "resolves a persisted
    gate after the owning process is recreated")."""
    view = lf.start()
    gid = lf.ok("loop.gate-check", {"handle": view["submissionHandle"],
                                    "action": "rm -rf build"})["gateDecision"]["gateId"]
    err = lf.error("loop.approve", {"gate": gid, "loop": "lf"}, principal=AGENT)
    assert err["code"] == "approval_forbidden" and err["details"]["agentPrincipal"] == AGENT


def test_conformance_denied_gate_stays_refused(lf: Loop) -> None:
    """A gate denied by another principal stays refused and cannot be approved after (mcp.test.ts
    "resolves a persisted gate after the owning process is recreated", its resolveGate answer)."""
    view = lf.start()
    gid = lf.ok("loop.gate-check", {"handle": view["submissionHandle"],
                                    "action": "drop table users"})["gateDecision"]["gateId"]
    lf.ok("loop.deny", {"gate": gid, "loop": "lf"}, principal=REVIEWER)
    err = lf.error("loop.approve", {"gate": gid, "loop": "lf"}, principal="third")
    assert err["code"] == "gate_decided"
    refused = lf.next(view, ev(gate_ids=[gid], round_contract=slice_()))
    assert refused["receipt"]["rejection"]["checks"][0]["check"] == "gate_denied"


def test_conformance_structured_gate_high_risk_reason_codes(lf: Loop) -> None:
    """A descriptor with production and publish effects is high risk with its reason codes
    (cognitive-governance.test.ts "classifies production / credentials / publish effects as
    user_required with reason codes")."""
    view = lf.start()
    gate = lf.ok("loop.gate-check", {"handle": view["submissionHandle"], "descriptor": {
        "description": "Ship the release", "scope": ["prod"], "effects": ["production", "publish"],
        "reversibility": "recoverable", "authorization": "unknown"}})["gateDecision"]
    assert (gate["decision"], gate["risk"]) == ("ask_user", "high")
    assert gate["reasonCodes"] == ["effects:production", "effects:publish",
                                   "authorization:unknown"]


def test_conformance_structured_gate_safe_action_proceeds(lf: Loop) -> None:
    """A reversible workspace write the agent may do is low risk with no reason codes
    (cognitive-governance.test.ts "classifies a provably safe workspace action as agent_allowed /
    low")."""
    view = lf.start()
    gate = lf.ok("loop.gate-check", {"handle": view["submissionHandle"], "descriptor": {
        "description": "Refactor src/store.ts", "scope": ["src/store.ts"],
        "effects": ["workspace_write"], "reversibility": "reversible",
        "authorization": "agent_allowed"}})["gateDecision"]
    assert (gate["decision"], gate["risk"], gate["reasonCodes"]) == ("proceed", "low", [])


def test_conformance_structured_gate_unproven_is_unknown_risk(lf: Loop) -> None:
    """A descriptor with no effects cannot prove itself safe: ask_user at unknown risk
    (cognitive-governance.test.ts "is conservative: unknown authorization / empty effects are
    user_required with risk unknown")."""
    view = lf.start()
    gate = lf.ok("loop.gate-check", {"handle": view["submissionHandle"], "descriptor": {
        "description": "Tidy the cache", "scope": ["cache"], "effects": [],
        "reversibility": "reversible", "authorization": "agent_allowed"}})["gateDecision"]
    assert (gate["decision"], gate["risk"]) == ("ask_user", "unknown")
    assert "effects_empty" in gate["reasonCodes"]


# ====================================================================== verification-facts


def test_conformance_closure_needs_claim_and_passing_check(lf: Loop) -> None:
    """The contract closes only when its item is claimed met and its check passes
    (verification-facts.test.ts "closes only when every bound command was observed passing")."""
    view = lf.start(max_rounds=5)
    r1 = lf.next(view, ev(round_contract=slice_()))
    met = {"claims": [{"id": _item(r1), "outcome": "met"}]}
    r2 = lf.next(r1, ev(execution_report=met))
    assert r2["receipt"]["changes"]["contract"]["closure"] == "open"
    lf.fix()
    r3 = lf.next(r2, ev(execution_report=met))
    assert r3["receipt"]["changes"]["contract"]["closure"] == "verified"


def test_conformance_failed_bound_command_contradicts(lf: Loop) -> None:
    """A claimed item whose check fails is contradicted, not pending (verification-facts.test.ts
    "keeps a failed bound command contradicted rather than merely pending")."""
    view = lf.start()
    r1 = lf.next(view, ev(round_contract=slice_(refs=[_cr(view)])))
    r2 = lf.next(r1, ev(execution_report={"claims": [{"id": _item(r1), "outcome": "met"}]}))
    verification = r2["receipt"]["verification"]
    assert verification["contract_items"] == [{"item_id": _item(r1), "status": "contradicted"}]
    assert verification["criteria"][0]["status"] == "contradicted"


def test_conformance_unanswered_check_gives_no_machine_fact(lf: Loop) -> None:
    """A claimed item whose check gives no answer is insufficient, never verified
    (verification-facts.test.ts "produces no fact while the item is unverified")."""
    lf.setup(extra_commands='\n[evidence.commands.probe]\nargv = ["/nonexistent/probe"]\n')
    view = lf.start()
    r1 = lf.next(view, ev(round_contract=slice_(refs=[_cr(view)], verify="probe")))
    r2 = lf.next(r1, ev(execution_report={"claims": [{"id": _item(r1), "outcome": "met"}]}))
    assert r2["receipt"]["verification"]["contract_items"][0]["status"] == "insufficient"
    assert r2["guidance"]["criteria"][0]["status"] == "insufficient"


def test_conformance_machine_fact_survives_contract_closure(lf: Loop) -> None:
    """A criterion verified through the contract stays verified after the contract closes
    (verification-facts.test.ts "keeps the fact after its contract closes")."""
    view = lf.start(max_rounds=5)
    r1 = lf.next(view, ev(round_contract=slice_(refs=[_cr(view)])))
    lf.fix()
    r2 = lf.next(r1, ev(execution_report={"claims": [{"id": _item(r1), "outcome": "met"}]}))
    assert r2["guidance"]["active_contract"] is None
    r3 = lf.next(r2, ev(round_contract=slice_("keep it correct")))
    criterion = r3["guidance"]["criteria"][0]
    assert criterion["status"] == "verified"


# ====================================================================== provenance-claims


def test_conformance_criterion_claim_alone_is_claimed(lf: Loop) -> None:
    """A criterion claimed met with no machine evidence is only claimed, by the agent
    (provenance-claims.test.ts "marks all reported criteria as claimed by default (no machine
    evidence)")."""
    view = lf.start()
    out = lf.next(view, ev(execution_report={"claims": [{"id": _cr(view), "outcome": "met"}]},
                           round_contract=slice_()))
    assert out["receipt"]["verification"]["criteria"] == [
        {"id": _cr(view), "status": "claimed", "source": "agent"}]


def test_conformance_criterion_verified_by_passing_check(lf: Loop) -> None:
    """A criterion becomes verified only through a claimed item whose check passed
    (provenance-claims.test.ts "upgrades to verified only with passing test results AND passed
    after-command")."""
    view = lf.start()
    r1 = lf.next(view, ev(round_contract=slice_(refs=[_cr(view)])))
    lf.fix()
    r2 = lf.next(r1, ev(execution_report={"claims": [{"id": _item(r1), "outcome": "met"}]},
                        round_contract=slice_("keep it correct")))
    assert r2["receipt"]["verification"]["criteria"] == [
        {"id": _cr(view), "status": "verified", "source": "machine"}]


def test_conformance_self_reported_tests_are_a_version_difference(lf: Loop) -> None:
    """Self-reported test counts are a 3.x field and never evidence (provenance-claims.test.ts
    "v3.3: self-reported passing tests without a passed command are NOT machine evidence")."""
    view = lf.start()
    err = lf.error("loop.next", {"handle": view["submissionHandle"], "evaluation": ev(
        execution_report={"tests_reported": {"passed": 1, "failed": 0, "skipped": 0}})})
    assert (err["code"], err["pointer"]) == ("protocol_version_mismatch",
                                             "/execution_report/tests_reported")


def test_conformance_required_failure_contradicts_claims(lf: Loop) -> None:
    """A failed required command turns the round's met criterion claims contradicted
    (provenance-claims.test.ts "downgrades all claims to contradicted on error-level
    contradicting flags")."""
    lf.setup(unit="required")
    view = lf.start()
    out = lf.next(view, ev(execution_report={"claims": [{"id": _cr(view), "outcome": "met"}]},
                           round_contract=slice_()))
    assert out["accepted"] is True
    assert out["guidance"]["criteria"][0]["status"] == "contradicted"


def test_conformance_warn_level_failure_keeps_claims(lf: Loop) -> None:
    """A failing check that is neither required nor behind the claimed criterion leaves the
    claim claimed (provenance-claims.test.ts "keeps verified claims when flags are only
    warn-level")."""
    view = lf.start()
    r1 = lf.next(view, ev(round_contract=slice_()))
    r2 = lf.next(r1, ev(execution_report={"claims": [{"id": _cr(view), "outcome": "met"}]}))
    checks = r2["receipt"]["verification"]["checks"]
    assert ("command_failed", "warn") in {(c["check"], c["severity"]) for c in checks}
    assert r2["guidance"]["criteria"][0]["status"] == "claimed"


def test_conformance_round_files_from_the_observation(lf: Loop) -> None:
    """The files a round changed come from git's observation, and match the report
    (provenance-claims.test.ts "returns git files from the committed after evidence")."""
    view = lf.start()
    lf.touch("notes.txt")
    out = lf.next(view, ev(execution_report={"files_changed": ["notes.txt"]},
                           round_contract=slice_()))
    files = out["receipt"]["verification"]["evidence_posture"]["files"]
    assert files == {"reconciliation": "match", "reported": 1, "observed": 1}
    observation = lf.records()["loop:lf:round:1:observation"]
    assert observation.origin == "machine"
    assert observation.data["git"]["comparison"]["changed_paths"] == ["notes.txt"]


# ====================================================================== self-eval


def test_conformance_prompt_requests_reach_the_next_prompt(lf: Loop) -> None:
    """Emphasis and confusion points asked in round 1 are rendered in round 2's prompt
    (self-eval.test.ts "parses prompt_requests with all fields")."""
    view = lf.start()
    out = lf.next(view, ev(round_contract=slice_(), prompt_requests={
        "emphasize": ["SafeERC20", "gas optimization"],
        "confusion_points": ["Why is milestone 3 complete?"]}))
    assert "- keep in view: SafeERC20" in out["prompt"]
    assert "- unclear to you: Why is milestone 3 complete?" in out["prompt"]


def test_conformance_empty_prompt_requests_are_no_request(lf: Loop) -> None:
    """All-empty prompt_requests are dropped with a diagnostic and render nothing
    (self-eval.test.ts "returns undefined for all-empty prompt_requests")."""
    view = lf.start()
    out = lf.next(view, ev(round_contract=slice_(),
                           prompt_requests={"emphasize": [], "confusion_points": []}))
    assert ("empty_dropped", "/prompt_requests") in {
        (d["code"], d["pointer"]) for d in out["receipt"]["diagnostics"]}
    assert "You asked, last round" not in out["prompt"]


def test_conformance_prompt_requests_capped(lf: Loop) -> None:
    """Long request lists are capped with diagnostics (self-eval.test.ts "caps emphasize and
    confusion_points at reasonable limits")."""
    view = lf.start()
    many = [f"item {i}" for i in range(20)]
    out = lf.next(view, ev(round_contract=slice_(),
                           prompt_requests={"emphasize": many, "confusion_points": many}))
    capped = [d["pointer"] for d in out["receipt"]["diagnostics"] if d["code"] == "list_capped"]
    assert capped == ["/prompt_requests/emphasize", "/prompt_requests/confusion_points"]
    assert out["prompt"].count("- keep in view:") == 5
    assert out["prompt"].count("- unclear to you:") == 3


def test_conformance_invalid_outcome_refused(lf: Loop) -> None:
    """An outcome outside the four is refused; 4.0 derives nothing from it (self-eval.test.ts
    "falls back to derivation on an invalid outcome value")."""
    view = lf.start()
    err = lf.error("loop.next", {"handle": view["submissionHandle"],
                                 "evaluation": ev("completed")})
    assert (err["code"], err["pointer"], err["details"]["reason"]) == (
        "evaluation_invalid", "/outcome", "enum")


def test_conformance_blocked_needs_a_blocker(lf: Loop) -> None:
    """A blank blocker on a blocked outcome is refused (self-eval.test.ts "trims empty blocker to
    undefined")."""
    view = lf.start()
    err = lf.error("loop.next", {"handle": view["submissionHandle"],
                                 "evaluation": ev("blocked", False, blocker="   ")})
    assert (err["code"], err["pointer"]) == ("evaluation_invalid", "/blocker")


def test_conformance_core_validation_names_only_required_gaps(lf: Loop) -> None:
    """Only the required fields' defects are listed; a bad optional field is not one
    (self-eval.test.ts "core evaluation validation reports only required field gaps")."""
    view = lf.start()
    err = lf.error("loop.next", {"handle": view["submissionHandle"], "evaluation": {
        "outcome": "partial", "output_summary": "ok", "constraint_violations": "not-array",
        "should_continue": "yes", "worker_results": 42}})
    assert err["details"]["missing"] == []
    assert [i["field"] for i in err["details"]["invalid"]] == ["constraint_violations",
                                                               "should_continue"]


# ====================================================================== submission boundary


@surfaces("api", "mcp", "cli")
def test_conformance_payload_defect_before_missing_loop(lf: Loop) -> None:
    """A malformed evaluation is reported before the loop is looked up; a sound one for a missing
    loop names it and the loops there (submission-boundary.ts validateSubmission, 14e13de4)."""
    lf.start()
    ghost = {"sessionId": "s-1", "roundId": "loop:ghost:round:1", "transactionId": "tx-00000000"}
    err = lf.error("loop.next", {"handle": ghost, "evaluation": {"outcome": "x"}})
    assert err["code"] == "evaluation_invalid"
    err = lf.error("loop.next", {"handle": ghost, "evaluation": ev()})
    assert err["code"] == "session_not_found" and err["details"]["loopId"] == "ghost"
    assert [x["loopId"] for x in err["details"]["loops"]] == ["lf"]


def test_conformance_subgoal_created_and_moved_in_one_round(lf: Loop) -> None:
    """A sub-goal may be created and transitioned in the same submission (submission-boundary.ts
    knownSubGoalsFor, 14e13de4)."""
    view = lf.start()
    sid = identity.subgoal_id("write docs", 1)
    out = lf.next(view, ev(emerged_subtasks=["write docs"], round_contract=slice_(),
                           subgoal_updates=[{"id": sid, "status": "in_progress"}]))
    assert out["guidance"]["subgoals"] == [{"id": sid, "description": "write docs",
                                            "status": "in_progress"}]


def test_conformance_unknown_subgoal_refused(lf: Loop) -> None:
    """A transition of a sub-goal the loop does not have is evaluation_invalid at its id
    (submission-boundary.ts validateSubmission, 14e13de4)."""
    view = lf.start()
    err = lf.error("loop.next", {"handle": view["submissionHandle"], "evaluation": ev(
        subgoal_updates=[{"id": "sg-12345678", "status": "done"}])})
    assert (err["code"], err["pointer"]) == ("evaluation_invalid", "/subgoal_updates/0/id")
    assert err["details"]["reason"] == "unknown_subgoal"


def test_conformance_subgoal_id_is_not_a_new_subgoal(lf: Loop) -> None:
    """An sg- id given as an emerged subtask is refused: creation takes text (submission-
    boundary.ts deriveEmergedItems, 14e13de4)."""
    view = lf.start()
    err = lf.error("loop.next", {"handle": view["submissionHandle"], "evaluation": ev(
        emerged_subtasks=["write docs", "sg-11111111"])})
    assert (err["code"], err["pointer"]) == ("evaluation_invalid", "/emerged_subtasks/1")
    assert err["details"]["reason"] == "subgoal_id_as_text"
