"""The submission boundary: golden cases for every error code and diagnostic it emits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.config import EvidenceCommand
from assay.errors import AssayError
from assay.loop import identity
from assay.loop.contract import normalise_contract
from assay.loop.schema import self_evaluation_schema
from assay.loop.submission import (
    BLOCKER_LIMIT,
    DIAGNOSTIC_CODES,
    FIELDS,
    LABEL_LIMIT,
    LIMITS,
    REFINEMENT_LIMIT,
    SUMMARY_LIMIT,
    WORKER_LIMIT,
    WORKER_TEXT_LIMIT,
    SubmissionContext,
    normalise,
)

GOLDEN = Path(__file__).parent / "golden"
ERRORS = json.loads((GOLDEN / "submission_errors.json").read_text(encoding="utf-8"))
DIAGNOSTICS = json.loads((GOLDEN / "submission_diagnostics.json").read_text(encoding="utf-8"))
COMMANDS = (
    EvidenceCommand("lint", ("true",), phases=("before",)),
    EvidenceCommand("off", ("true",), enabled=False),
    EvidenceCommand("unit", ("true",)),
)
CR = identity.criterion_id("add returns the sum")
WORK = "calc.add is correct"


def _active() -> dict[str, Any]:
    proposal = normalise_contract(
        {"work_item": WORK, "items": [{"description": "the unit check passes",
                                       "criterion_refs": [CR], "verify_with": ["unit"]}]},
        base=("round_contract",), commands=COMMANDS, criteria=(CR,), active=None, round_number=1)
    return {"id": proposal["id"], "work_item": WORK, "scope": [], "items": proposal["items"],
            "declared_at_round": 1}


ACTIVE = _active()
TOKENS = {"$CR": CR, "$RC": ACTIVE["id"], "$ITEM": ACTIVE["items"][0]["id"], "$WORK": WORK}


def _expand(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"$repeat"}:
            text, count = value["$repeat"]
            return text * count
        return {k: _expand(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand(v) for v in value]
    if isinstance(value, str):
        return TOKENS.get(value, value)
    return value


def _context(kind: str | None = None) -> SubmissionContext:
    return SubmissionContext(
        round=2, criteria=(CR,), commands=() if kind == "no_commands" else COMMANDS,
        active_contract=None if kind == "no_contract" else ACTIVE,
        subgoals={"sg-11111111": "pending", "sg-22222222": "done"})


@pytest.mark.parametrize("case", ERRORS, ids=[c["name"] for c in ERRORS])
def test_submission_rejects_with_code_and_pointer(case: dict[str, Any]) -> None:
    """Each rejected fixture fails with its exact code and pointer."""
    with pytest.raises(AssayError) as caught:
        normalise(_expand(case["evaluation"]), _context(case.get("context")))
    assert (caught.value.code, caught.value.pointer) == (case["code"], case["pointer"])


@pytest.mark.parametrize("case", DIAGNOSTICS, ids=[c["name"] for c in DIAGNOSTICS])
def test_submission_normalises_with_diagnostics(case: dict[str, Any]) -> None:
    """Each lenient correction is reported with its exact code and pointer, never silently."""
    _, diagnostics, _ = normalise(_expand(case["evaluation"]), _context())
    assert [{"code": d["code"], "pointer": d["pointer"]} for d in diagnostics] == case["diagnostics"]


def test_submission_golden_cases_cover_every_diagnostic_code() -> None:
    """Every normalisation diagnostic code has at least one golden case."""
    seen = {d["code"] for case in DIAGNOSTICS for d in case["diagnostics"]}
    assert seen == set(DIAGNOSTIC_CODES) - {"question_unknown_dropped"}


def test_submission_valid_document_passes_unchanged() -> None:
    """A clean evaluation normalises to itself with no diagnostics."""
    ev = {"outcome": "partial", "output_summary": "did work", "constraint_violations": [],
          "should_continue": True,
          "execution_report": {"files_changed": ["calc.py"],
                               "claims": [{"id": CR, "outcome": "met"},
                                          {"id": TOKENS["$ITEM"], "outcome": "remaining"}]}}
    out, diagnostics, submitted = normalise(ev, _context())
    assert diagnostics == []
    assert submitted == ["constraint_violations", "execution_report", "outcome", "output_summary",
                         "should_continue"]
    assert out["criterion_claims"] == [{"id": CR, "outcome": "met"}]
    assert out["item_claims"] == [{"id": TOKENS["$ITEM"], "outcome": "remaining"}]


def test_submission_contract_ids_are_content_only() -> None:
    """Restating a contract (other item order, scope, a reason) gives the same rc-/rci- ids."""
    items = [{"description": "a", "verify_with": ["unit"]},
             {"description": "b", "verify_with": ["unit"], "criterion_refs": [CR]}]
    one = normalise_contract({"work_item": "w", "items": items}, base=("round_contract",),
                             commands=COMMANDS, criteria=(CR,), active=None, round_number=1)
    two = normalise_contract({"work_item": "w", "scope": ["src/"], "items": items[::-1]},
                             base=("round_contract",), commands=COMMANDS, criteria=(CR,),
                             active=None, round_number=5)
    assert one["id"] == two["id"] and one["id"].startswith("rc-")
    assert [i["id"] for i in one["items"]] == [i["id"] for i in two["items"]]


def test_submission_placeholder_template_never_passes() -> None:
    """The prompt's evaluation template, submitted as it is, is evaluation_invalid."""
    from assay.loop.prompt import PromptRequest, evaluation_template
    from assay.loop.state import initial_facts

    facts = initial_facts("t", ["add returns the sum"], [])
    facts["contract"] = ACTIVE
    template = evaluation_template(PromptRequest(
        loop_id="x", round_id="loop:x:round:1", round=1, attempt=1, max_rounds=3, facts=facts,
        context_mode="fresh_invocation", context_reason="first_round",
        contract_commands=("unit",), contract_requirement={"reason": "no_active_contract"}))
    with pytest.raises(AssayError) as caught:
        normalise(template, _context())
    assert caught.value.code == "evaluation_invalid"
    assert caught.value.details["reason"] == "template_placeholder"


# Where each limited list sits in a self-evaluation (scope is the contract model's own).
_LIST_PATHS = {name: (name,) for name in LIMITS} | {
    "files_changed": ("execution_report", "files_changed"),
    "emphasize": ("prompt_requests", "emphasize"),
    "confusion_points": ("prompt_requests", "confusion_points"),
}
del _LIST_PATHS["scope"]
# Text fields with their limit and the rest of the document they need.
_TEXTS = {
    "output_summary": (SUMMARY_LIMIT, {}),
    "blocker": (BLOCKER_LIMIT, {"outcome": "blocked", "should_continue": False}),
    "objective_refinement": (REFINEMENT_LIMIT, {}),
    "subtask_boundary_label": (LABEL_LIMIT, {"subtask_boundary": True}),
}


def _evaluation(**fields: Any) -> dict[str, Any]:
    return {"outcome": "partial", "output_summary": "did work", "constraint_violations": [],
            "should_continue": True, **fields}


def _with_list(name: str, entries: int, chars: int) -> dict[str, Any]:
    doc = _evaluation()
    *parents, leaf = _LIST_PATHS[name]
    target = doc
    for part in parents:
        target = target.setdefault(part, {})
    target[leaf] = [str(index).rjust(chars, "x") for index in range(entries)]
    return doc


def _verdict(doc: dict[str, Any]) -> tuple[bool, bool]:
    """(normalises with no diagnostic, valid against the published schema)."""
    from jsonschema import Draft202012Validator

    try:
        _, diagnostics, _ = normalise(doc, _context())
        clean = not diagnostics
    except AssayError:
        clean = False
    return clean, Draft202012Validator(self_evaluation_schema()).is_valid(doc)


def test_submission_schema_lists_every_field() -> None:
    """The published schema has exactly the fields a submission may carry, and is a valid schema."""
    from jsonschema import Draft202012Validator

    schema = self_evaluation_schema()
    Draft202012Validator.check_schema(schema)
    assert tuple(schema["properties"]) == FIELDS
    assert _verdict(_evaluation(notes="x")) == (False, False)


@pytest.mark.parametrize("name", sorted(_LIST_PATHS))
def test_submission_schema_list_limits_are_the_enforced_ones(name: str) -> None:
    """A list at its limits normalises cleanly and validates; one entry or character more fails both.

    (Entries and characters are tried apart: 500 paths of 1,000 characters
    would pass the 256 KiB bound of the whole document.)
    """
    most, chars = LIMITS[name]
    assert _verdict(_with_list(name, most, 3)) == (True, True)
    assert _verdict(_with_list(name, 1, chars)) == (True, True)
    assert _verdict(_with_list(name, most + 1, 3)) == (False, False)
    assert _verdict(_with_list(name, 1, chars + 1)) == (False, False)


@pytest.mark.parametrize("name", sorted(_TEXTS))
def test_submission_schema_text_limits_are_the_enforced_ones(name: str) -> None:
    """A text at its limit normalises cleanly and validates; one character more fails both."""
    limit, rest = _TEXTS[name]
    assert _verdict(_evaluation(**rest, **{name: "t" * limit})) == (True, True)
    assert _verdict(_evaluation(**rest, **{name: "t" * (limit + 1)})) == (False, False)


def test_submission_schema_worker_limits_are_the_enforced_ones() -> None:
    """Worker results at their limits pass both; one result or one character more fails both."""
    def workers(count: int, chars: int) -> dict[str, Any]:
        return _evaluation(worker_results=[
            {"agentId": f"a{index}", "subTask": "s" * chars, "resultSummary": "r",
             "outcome": "success"} for index in range(count)])

    assert _verdict(workers(WORKER_LIMIT, WORKER_TEXT_LIMIT)) == (True, True)
    assert _verdict(workers(WORKER_LIMIT + 1, WORKER_TEXT_LIMIT)) == (False, False)
    assert _verdict(workers(WORKER_LIMIT, WORKER_TEXT_LIMIT + 1)) == (False, False)
