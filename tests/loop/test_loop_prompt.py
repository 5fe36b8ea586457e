"""The prompt compiler: determinism, density levels, budget, working memory, coverage proof."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from assay.errors import AssayError
from assay.loop.prompt import BUDGETS, SECTIONS, PromptRequest, compile_prompt
from assay.loop.state import initial_facts

CONTRACT = {"id": "rc-11111111", "work_item": "make add correct", "scope": [],
            "declared_at_round": 1,
            "items": [{"id": "rci-22222222", "description": "the unit check passes",
                       "criterion_refs": [], "verify_with": ["unit"]}]}


def _facts(**extra: Any) -> dict[str, Any]:
    facts = initial_facts("Fix calc.add", ["add returns the sum"], ["no new dependencies"])
    facts["contract"] = copy.deepcopy(CONTRACT)
    facts["subgoals"] = [{"id": "sg-33333333", "description": "read the tests",
                          "status": "in_progress", "created_at_round": 1, "updated_at_round": 1},
                         {"id": "sg-44444444", "description": "done already", "status": "done",
                          "created_at_round": 1, "updated_at_round": 1}]
    facts["findings"] = [{"id": "f-55555555", "check": "claim_contradicted", "severity": "error",
                          "detail": "the check failed", "ref": "rci-22222222"}]
    facts.update(extra)
    return facts


def _after_round(declared: bool = False, progress: str = "changed", activity: bool = True,
                 **extra: Any) -> dict[str, Any]:
    facts = _facts(**extra)
    facts.update({"committed_rounds": 1, "progress": [progress],
                  "last_round": {"round": 1, "declared_evolution": declared,
                                 "subtask_boundary": False, "machine_activity": activity},
                  "last_posture": {"providers": [{"providerId": "git"}],
                                   "commands": [{"commandId": "unit"}] if activity else []},
                  "reports": [{"round": 1, "outcome": "partial", "summary": "did things",
                               "files": []}]})
    return facts


def _req(facts: dict[str, Any], *, mode: str = "fresh_invocation", reason: str = "next_round",
         **extra: Any) -> PromptRequest:
    return PromptRequest(loop_id="x", round_id="loop:x:round:2", round=2, attempt=1, max_rounds=9,
                         facts=facts, context_mode=mode, context_reason=reason,
                         contract_commands=("unit",),
                         contract_requirement={"reason": "active_contract_continues",
                                               "successor_required_if_closed": True,
                                               "active_contract_id": "rc-11111111"}, **extra)


def test_prompt_same_committed_facts_same_hash() -> None:
    """Compiling the same committed facts twice gives the same artifact and promptHash."""
    one = compile_prompt(_req(_after_round(), plan="step one", instruction="be brief"))
    two = compile_prompt(_req(_after_round(), plan="step one", instruction="be brief"))
    assert one == two
    assert one["promptHash"] == two["promptHash"] and len(one["promptHash"]) == 64
    other = compile_prompt(_req(_after_round(), plan="step two", instruction="be brief"))
    assert other["promptHash"] != one["promptHash"] and other["stateHash"] != one["stateHash"]


def test_prompt_artifact_fields() -> None:
    """The artifact carries the reference's fields and a complete coverage proof."""
    art = compile_prompt(_req(_after_round()))
    for key in ("schemaVersion", "roundId", "attempt", "level", "contextMode", "contextReason",
                "renderedPrompt", "promptHash", "stateHash", "budget", "renderedChars",
                "coverage", "warnings", "workingMemory", "currentUserInstruction"):
        assert key in art
    kinds = {a["kind"] for a in art["coverage"]["active"]}
    assert kinds == {"criterion", "constraint", "contract", "contract_item", "subgoal", "finding"}
    assert art["coverage"]["complete"] is True and art["coverage"]["omitted"] == []
    assert "sg-44444444" not in {a["id"] for a in art["coverage"]["active"]}
    from assay.loop.models import PromptArtifact

    PromptArtifact.model_validate(art)
    PromptArtifact.model_validate(compile_prompt(_req(_facts(), reason="first_round")))


@pytest.mark.parametrize("removed", ["criteria", "constraints", "contract", "subgoals",
                                     "findings", "recovery"])
def test_prompt_removed_section_renderer_is_projection_incomplete(removed: str) -> None:
    """Without one section renderer the coverage proof fails: no prompt is delivered."""
    facts = _after_round(recovery={"id": "rv-66666666", "origin": "agent", "reason": "x",
                                   "checkpointId": "ck-77777777", "redoRound": 2,
                                   "abandonedRounds": [2]})
    sections = [s for s in SECTIONS if s.name != removed]
    with pytest.raises(AssayError) as caught:
        compile_prompt(_req(facts), sections=sections)
    assert caught.value.code == "projection_incomplete"
    assert caught.value.details["omitted"]
    assert all(o["reason"] == "defect" for o in caught.value.details["omitted"])


@pytest.mark.parametrize(("facts", "mode", "reason", "level"), [
    (_facts(), "fresh_invocation", "first_round", "l2"),
    (_after_round(), "same_round_retry", "enforcement_retry", "l0"),
    (_after_round(), "fresh_invocation", "next_round", "l1"),
    (_after_round(declared=True), "fresh_invocation", "next_round", "l2"),
    (_after_round(progress="unchanged", activity=False), "fresh_invocation", "next_round", "l2"),
    (_after_round(progress="unknown"), "fresh_invocation", "next_round", "l2"),
    (_after_round(), "fresh_invocation", "recovery_redo", "l2"),
    (_after_round(), "fresh_invocation", "rejection_escalation", "l2"),
])
def test_prompt_level_from_freshness(facts: dict[str, Any], mode: str, reason: str,
                                     level: str) -> None:
    """The density level follows the context and the freshness of the last round."""
    art = compile_prompt(_req(facts, mode=mode, reason=reason))
    assert art["level"] == level and art["budget"] == BUDGETS[level]


def test_prompt_stall_freshness_reasons() -> None:
    """Proven absence of activity is the only way observableNewInformation is false."""
    art = compile_prompt(_req(_after_round(progress="unchanged", activity=False)))
    assert art["freshness"]["observableNewInformation"] is False
    assert art["freshness"]["reasons"] == ["progress_unchanged", "no_observable_activity"]


def test_prompt_budget_drops_optional_sections() -> None:
    """A plan that does not fit the l1 budget is dropped whole; protected ids stay."""
    art = compile_prompt(_req(_after_round(), plan="plan line\n" * 1000))
    assert art["level"] == "l1"
    assert art["droppedSections"] == ["plan"]
    assert art["renderedChars"] <= BUDGETS["l1"]
    assert art["coverage"]["complete"] is True and "plan line" not in art["renderedPrompt"]


def test_prompt_protected_overflow_keeps_every_id() -> None:
    """Normative sections beyond the budget are kept and flagged, never dropped."""
    facts = _after_round()
    facts["criteria"] = [{"id": f"cr-{i:08x}", "text": "x" * 400, "status": "unknown"}
                         for i in range(12)]
    art = compile_prompt(_req(facts, mode="same_round_retry", reason="enforcement_retry"))
    assert art["level"] == "l0" and art["protectedOverflow"] is True
    assert art["renderedChars"] > BUDGETS["l0"] and art["warnings"]
    assert all(f"cr-{i:08x}" in art["renderedPrompt"] for i in range(12))


def test_prompt_working_memory_counts() -> None:
    """Working memory states source, rendered and omitted counts; omission is visible."""
    facts = _after_round()
    facts["committed_rounds"] = 5
    facts["reports"] = [{"round": r, "outcome": "partial", "summary": f"report {r} " + "y" * 500,
                         "files": []} for r in range(1, 6)]
    facts["wrong_assumptions"] = [{"round": 4, "text": "the test was wrong"}]
    art = compile_prompt(_req(facts))
    memory = art["workingMemory"]
    assert art["level"] == "l1" and memory["rendered"] is True
    assert memory["sourceCounts"]["reports"] == 5 and memory["counts"]["reports"] == 1
    assert memory["omittedCounts"]["reports"] == 4 and memory["reportRounds"] == [5]
    assert memory["previousReport"] == {"round": 5, "sourceChars": 509, "renderedChars": 312,
                                        "truncated": True}
    assert memory["truncated"] is True
    assert "report 5" in art["renderedPrompt"] and "report 4" not in art["renderedPrompt"]


def test_prompt_current_user_instruction() -> None:
    """The host's instruction is rendered and recorded, never as a criterion or constraint."""
    art = compile_prompt(_req(_after_round(), instruction="  prefer small diffs  "))
    assert art["currentUserInstruction"] == "prefer small diffs"
    assert "prefer small diffs" in art["renderedPrompt"]
    assert all(a["kind"] != "instruction" for a in art["coverage"]["active"])


def test_prompt_illegal_context_pair() -> None:
    """enforcement_retry is the only in-context reason; other pairs are refused."""
    with pytest.raises(ValueError):
        compile_prompt(_req(_after_round(), mode="same_round_retry", reason="next_round"))
