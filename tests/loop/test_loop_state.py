"""Pure parts of the loop: fact transitions, successor rules, the gate's judgement, stop policy."""

from __future__ import annotations

from typing import Any

import pytest

from assay.evidence.git import Comparison
from assay.loop import identity
from assay.loop.contract import successor
from assay.loop.gate import judge
from assay.loop.policy import DefaultStopPolicy, Limits, agent_stop_reason
from assay.loop.prompt import PromptRequest, compile_prompt
from assay.loop.state import apply_round, initial_facts

CONTRACT = {"id": "rc-aaaaaaaa", "work_item": "w", "scope": [], "declared_at_round": 1,
            "items": [{"id": "rci-aaaaaaaa", "description": "d",
                       "criterion_refs": [identity.criterion_id("c1")], "verify_with": ["unit"]}]}
POSTURE = {"machineBackedSuccess": False, "status": "insufficient"}


def _ev(**kw: Any) -> dict[str, Any]:
    return {"outcome": "partial", "output_summary": "s", "constraint_violations": [],
            "should_continue": True, "criterion_claims": [], "item_claims": [], **kw}


def _apply(facts: dict[str, Any], ev: dict[str, Any], round_number: int = 1, **kw: Any) -> Any:
    decision = successor(facts["contract"], None, None, round_number)
    return apply_round(facts, round_number=round_number, evaluation=ev, decision=decision,
                       item_statuses=kw.get("statuses", {}), gated_contract=facts["contract"],
                       progress=kw.get("progress", "changed"), findings=[], posture=POSTURE,
                       max_active=kw.get("max_active", 15))


def _codes(applied: Any) -> list[tuple[str, str]]:
    return [(d["code"], d["pointer"]) for d in applied.diagnostics]


def test_state_hard_constraint_retraction_refused() -> None:
    """Retracting a hard constraint changes nothing and says so."""
    facts = initial_facts("t", ["c1"], ["keep the API"])
    applied = _apply(facts, _ev(retracted_constraints=["keep the API"]))
    assert _codes(applied) == [("constraint_retraction_refused", "/retracted_constraints/0")]
    assert [c["text"] for c in applied.facts["constraints_active"]] == ["keep the API"]
    assert applied.changes["constraints_not_retracted"] == ["keep the API"]


def test_state_discovered_constraint_joins_and_retracts() -> None:
    """A discovered constraint is active for the next compile and can later be retracted."""
    facts = initial_facts("t", ["c1"], [])
    first = _apply(facts, _ev(discovered_constraints=["no network in tests"]))
    assert first.facts["constraints_active"][0]["source"] == "discovered"
    second = _apply(first.facts, _ev(retracted_constraints=["no network in tests"]), 2)
    assert second.facts["constraints_active"] == []
    assert second.facts["constraints_retired"][0]["retired_at_round"] == 2


def test_state_constraint_cap_not_expanded() -> None:
    """Beyond the active cap a discovered constraint is not added, with a diagnostic."""
    facts = initial_facts("t", [], ["a"])
    applied = _apply(facts, _ev(discovered_constraints=["b", "a"]), max_active=1)
    assert _codes(applied) == [("constraint_not_expanded", "/discovered_constraints/0"),
                               ("constraint_duplicate_dropped", "/discovered_constraints/1")]
    assert applied.changes["constraints_not_expanded"] == ["b"]


def test_state_subgoal_ids_include_round_and_duplicates_drop() -> None:
    """sg- ids derive from text and round; an open duplicate is dropped with a diagnostic."""
    facts = initial_facts("t", [], [])
    first = _apply(facts, _ev(emerged_subtasks=["write docs"]))
    sid = first.facts["subgoals"][0]["id"]
    assert sid == identity.subgoal_id("write docs", 1)
    second = _apply(first.facts, _ev(emerged_subtasks=["write docs"]), 2)
    assert _codes(second) == [("subtask_duplicate_dropped", "/emerged_subtasks/0")]
    third = _apply(second.facts, _ev(subgoal_updates=[{"id": sid, "from": "pending",
                                                       "to": "done"}]), 3)
    assert third.facts["subgoals"][0]["status"] == "done"
    assert third.changes["subgoals_updated"] == [{"id": sid, "from": "pending", "to": "done"}]


def test_state_questions_open_resolve_and_diagnose() -> None:
    """Open questions get oq- ids from normalised text; unknown resolutions are diagnosed."""
    facts = initial_facts("t", [], [])
    first = _apply(facts, _ev(open_questions=["Is  X intended?"]))
    qid = identity.question_id("is x intended?")
    assert [q["id"] for q in first.facts["open_questions"]] == [qid]
    second = _apply(first.facts, _ev(open_questions=["is x INTENDED?"],
                                     resolved_open_question_ids=["oq-00000000"]), 2)
    assert _codes(second) == [("question_unknown_dropped", "/resolved_open_question_ids/0"),
                              ("question_duplicate_dropped", "/open_questions/0")]
    third = _apply(second.facts, _ev(resolved_open_question_ids=[qid]), 3)
    assert third.facts["open_questions"] == [] and third.changes["questions_resolved"] == [qid]


def test_state_question_limit() -> None:
    """At most ten questions stay open; more are dropped with a diagnostic."""
    facts = initial_facts("t", [], [])
    facts["open_questions"] = [{"id": f"oq-0000000{i}", "text": str(i), "asked_at_round": 1}
                               for i in range(10)]
    applied = _apply(facts, _ev(open_questions=["one more?"]))
    assert _codes(applied) == [("question_limit_dropped", "/open_questions/0")]


def test_state_refinement_changes_objective_never_acceptance() -> None:
    """objective_refinement changes the working objective; acceptance stays as it was."""
    facts = initial_facts("fix it", ["c1"], ["h"])
    applied = _apply(facts, _ev(objective_refinement="fix it without new deps"))
    assert applied.facts["objective"] == "fix it without new deps"
    assert applied.facts["acceptance"] == facts["acceptance"]


def test_state_contract_premature_diagnostic() -> None:
    """A new proposal while the active contract stays open is not activated."""
    facts = initial_facts("t", ["c1"], [])
    facts["contract"] = CONTRACT
    proposal = {"id": "rc-bbbbbbbb", "work_item": "next", "scope": [], "items": [],
                "supersedes": None}
    decision = successor(CONTRACT, "open", proposal, 2)
    assert decision.premature and decision.after_id == CONTRACT["id"]
    applied = apply_round(facts, round_number=2, evaluation=_ev(), decision=decision,
                          item_statuses={}, gated_contract=CONTRACT, progress="changed",
                          findings=[], posture=POSTURE)
    assert _codes(applied) == [("contract_premature", "/round_contract")]


def test_state_successor_rules() -> None:
    """Supersede replaces, a closed contract yields to a new one, a restatement keeps it."""
    proposal = {"id": "rc-bbbbbbbb", "work_item": "next", "scope": [], "items": [],
                "supersedes": {"contract_id": "rc-aaaaaaaa", "reason": "wrong slice"}}
    swap = successor(CONTRACT, "superseded", proposal, 2)
    assert swap.activated and swap.superseded and swap.after_id == "rc-bbbbbbbb"
    assert swap.redirect_reason == "wrong slice"
    fresh = successor(CONTRACT, "verified", {**proposal, "supersedes": None}, 2)
    assert fresh.activated and fresh.closed and fresh.after["declared_at_round"] == 2
    same = successor(CONTRACT, "open", {**CONTRACT, "supersedes": None}, 2)
    assert not same.activated and same.after_id == "rc-aaaaaaaa"
    gone = successor(CONTRACT, "verified", None, 2)
    assert gone.after is None and gone.closed


def test_state_criterion_status_machine_over_claims() -> None:
    """A verified item makes its criterion verified; a later claim never overwrites it."""
    facts = initial_facts("t", ["c1"], [])
    facts["contract"] = CONTRACT
    applied = _apply(facts, _ev(), statuses={"rci-aaaaaaaa": "verified"})
    crit = applied.facts["criteria"][0]
    assert (crit["status"], crit["status_source"], crit["status_at_round"]) == (
        "verified", "machine", 1)
    facts2 = dict(applied.facts, contract=None)
    again = _apply(facts2, _ev(criterion_claims=[{"id": crit["id"], "outcome": "remaining"}]), 2)
    assert again.facts["criteria"][0]["status"] == "verified"


def _judge(outcome: str, statuses: dict[str, str], claims: list[dict[str, str]] | None = None,
           progress: str = "changed", required: frozenset[str] = frozenset()) -> Any:
    return judge(round_number=2, evaluation=_ev(outcome=outcome, item_claims=claims or []),
                 contract=CONTRACT, command_statuses=statuses, required=required,
                 git_status="observed", comparison=Comparison(progress, ("a.py",)),
                 verification_configured=True, superseded=False)


@pytest.mark.parametrize(("outcome", "claims", "command", "item", "posture"), [
    ("partial", [], "failed", "pending", "insufficient"),
    ("partial", [{"id": "rci-aaaaaaaa", "outcome": "met"}], "failed", "contradicted",
     "contradicted"),
    ("success", [], "failed", "contradicted", "contradicted"),
    ("success", [], "timeout", "insufficient", "unknown"),
    ("partial", [{"id": "rci-aaaaaaaa", "outcome": "met"}], "passed", "verified", "verified"),
    ("partial", [{"id": "rci-aaaaaaaa", "outcome": "remaining"}], "passed", "pending",
     "insufficient"),
    ("partial", [], "passed", "pending", "insufficient"),
    ("success", [{"id": "rci-aaaaaaaa", "outcome": "remaining"}], "passed", "pending",
     "insufficient"),
])
def test_gate_item_status_and_posture(outcome: str, claims: list[dict[str, str]], command: str,
                                      item: str, posture: str) -> None:
    """An item needs a claim (rci- met or success); the observations then decide its status."""
    result = _judge(outcome, {"unit": command}, claims,
                    required=frozenset({"unit"}) if command == "timeout" else frozenset())
    assert result.item_statuses == {"rci-aaaaaaaa": item}
    assert result.posture["status"] == posture


def test_gate_earlier_claim_carries_until_taken_back() -> None:
    """An item claimed met in an earlier round of the contract is verified once its check passes."""
    earlier = dict(CONTRACT, claims={"rci-aaaaaaaa": "met"})
    result = judge(round_number=3, evaluation=_ev(outcome="partial"), contract=earlier,
                   command_statuses={"unit": "passed"}, required=frozenset(),
                   git_status="observed", comparison=Comparison("changed", ("a.py",)),
                   verification_configured=True, superseded=False)
    assert result.item_statuses == {"rci-aaaaaaaa": "verified"} and result.closure == "verified"


def test_gate_finding_ids_are_stable() -> None:
    """The same finding in two rounds keeps its f- id."""
    one = _judge("success", {"unit": "failed"})
    two = _judge("success", {"unit": "failed"})
    assert [f["id"] for f in one.findings] == [f["id"] for f in two.findings]
    assert all(f["id"].startswith("f-") for f in one.findings)
    assert {f["check"] for f in one.findings} == {"claim_contradicted", "command_failed",
                                                  "success_unbacked"}


def test_gate_unknown_workspace_blocks_machine_backed_success() -> None:
    """An unknown workspace boundary is never machine-backed success."""
    result = _judge("partial", {"unit": "passed"}, progress="unknown")
    assert result.machine_backed_success is False and result.posture["status"] == "unknown"


def test_policy_stop_reasons() -> None:
    """Agent declarations map to completed/failed/blocked; budgets to the policy's reasons."""
    assert agent_stop_reason("success", False) == "completed"
    assert agent_stop_reason("failed", False) == "failed"
    assert agent_stop_reason("partial", False) == "failed"
    assert agent_stop_reason("blocked", False) == "blocked"
    assert agent_stop_reason("partial", True) is None
    policy = DefaultStopPolicy(Limits(max_rounds=5, stall_rounds=2, max_rejections=2))
    assert policy.after_commit(round_number=5, progress=["changed"]) == "max_rounds"
    assert policy.after_commit(round_number=3, progress=["changed", "unchanged",
                                                         "unchanged"]) == "stalled"
    assert policy.after_commit(round_number=3, progress=["unchanged", "unknown"]) is None
    assert policy.after_rejection(round_number=1, consecutive=2,
                                  counts={"contract_required": 1}) == "enforcement_terminated"
    assert policy.after_rejection(round_number=1, consecutive=1,
                                  counts={"contract_required": 1}) is None


def test_prompt_same_facts_same_hash_and_coverage() -> None:
    """Compiling the same request twice gives the same artifact; every active id is covered."""
    facts = initial_facts("t", ["c1"], ["h"])
    facts["contract"] = CONTRACT
    req = PromptRequest(loop_id="x", round_id="loop:x:round:2", round=2, attempt=1, max_rounds=5,
                        facts=facts, context_mode="fresh_invocation", context_reason="next_round",
                        contract_commands=("unit",))
    one, two = compile_prompt(req), compile_prompt(req)
    assert one == two
    assert one["coverage"]["complete"] is True
    assert {a["id"] for a in one["coverage"]["active"]} <= set(one["coverage"]["rendered"])


def test_prompt_lost_id_is_projection_incomplete() -> None:
    """A renderer that drops a section delivers no prompt (projection_incomplete)."""
    from assay.errors import AssayError
    from assay.loop import prompt

    facts = initial_facts("t", ["c1"], [])
    req = PromptRequest(loop_id="x", round_id="loop:x:round:1", round=1, attempt=1, max_rounds=5,
                        facts=facts, context_mode="fresh_invocation", context_reason="first_round")

    def without_criteria(request: PromptRequest, doc: Any) -> None:
        doc.add("# nothing but a title")

    with pytest.raises(AssayError) as caught:
        prompt.compile_prompt(req, render=without_criteria)
    assert caught.value.code == "projection_incomplete"
    assert caught.value.details["omitted"] == [{"id": facts["criteria"][0]["id"],
                                                "reason": "defect"}]


def test_gate_oversized_boundary_compares_unknown() -> None:
    """A boundary stored without its file map makes the next comparison unknown, not a guess."""
    from assay.evidence.git import GitObservation, compare
    from assay.loop.gate import MAX_BOUNDARY_FILES, git_from_dict, git_to_dict

    files = {f"f{i}.txt": "100644 blob:00" for i in range(MAX_BOUNDARY_FILES + 1)}
    big = GitObservation(status="observed", toplevel="/r", head="a" * 40, files=files)
    stored = git_to_dict(big)
    assert stored["files_omitted"] is True and stored["file_count"] == len(files)
    assert git_from_dict(stored) is None
    assert compare(git_from_dict(stored), big).progress == "unknown"
    small = GitObservation(status="observed", toplevel="/r", head="a" * 40, files={"a": "x"})
    assert git_from_dict(git_to_dict(small)) == small
