"""The submission boundary: one self-evaluation in, one normalised evaluation out.

:func:`precheck` judges what needs no loop (it runs before the loop is
read, so a payload's own defect is reported before a missing loop): a JSON
object of at most 256 KiB, no loop protocol 3.x field
(``protocol_version_mismatch``, see :mod:`assay.loop.version`), no template
marker ``<<FILL`` (``details.reason = "template_placeholder"``), and the
strict fields, every defect listed at once (``evaluation_invalid``,
``details.missing`` and ``details.invalid``, the first one's pointer):
``outcome`` (success, partial, failed, blocked), ``output_summary`` (1 to
4,000 characters), ``constraint_violations`` (a list of strings) and
``should_continue`` (a boolean); ``success`` and ``blocked`` require
``should_continue=false``; ``blocked`` requires a ``blocker`` (at most 500
characters); ``objective_refinement`` is a non-blank string of at most 1,000
characters; ``emerged_subtasks`` never holds an ``sg-`` id (creation takes
text); ``subgoal_updates`` entries are ``{id, status}``.

:func:`normalise` then judges against the loop: ``subgoal_updates`` name
sub-goals the loop has or this submission creates, with legal transitions
(``evaluation_invalid``); ``round_contract`` and the ``rci-`` entries of
``execution_report.claims`` (``contract_invalid``).

Every other optional field is normalised leniently and never dropped
silently: each correction is one diagnostic ``{code, pointer, detail}`` with
a stable code (see :data:`DIAGNOSTIC_CODES`). Nothing here does I/O.

Imports the base modules, config and its siblings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.canonical import canonical_bytes
from assay.config import EvidenceCommand
from assay.errors import AssayError, pointer
from assay.loop import identity
from assay.loop.contract import item_claims, normalise_contract
from assay.loop.models import OUTCOMES, SubGoalUpdate
from assay.loop.version import refuse_legacy

__all__ = [
    "DIAGNOSTIC_CODES",
    "FIELDS",
    "LIMITS",
    "PLACEHOLDER",
    "SUBGOAL_TRANSITIONS",
    "SubmissionContext",
    "normalise",
    "precheck",
]

PLACEHOLDER = "<<FILL"

# Lenient limits: (max entries, max characters per entry).
LIMITS: dict[str, tuple[int, int]] = {
    "constraint_violations": (20, 500),
    "discovered_constraints": (10, 500),
    "retracted_constraints": (10, 500),
    "emerged_subtasks": (10, 300),
    "wrong_assumptions": (10, 500),
    "open_questions": (3, 300),
    "resolved_open_question_ids": (20, 16),
    "gate_ids": (20, 16),
    "files_changed": (500, 1000),
    "scope": (100, 1000),
    "emphasize": (5, 500),
    "confusion_points": (3, 200),
}
SUMMARY_LIMIT = 4000
MAX_DOCUMENT_BYTES = 256 * 1024
BLOCKER_LIMIT = 500
REFINEMENT_LIMIT = 1000
LABEL_LIMIT = 200
WORKER_LIMIT = 20
WORKER_TEXT_LIMIT = 1000
WORKER_OUTCOMES = ("success", "partial", "failed")

DIAGNOSTIC_CODES = (
    "unknown_field_dropped",
    "wrong_type_dropped",
    "entry_dropped",
    "duplicate_dropped",
    "text_trimmed",
    "text_truncated",
    "list_capped",
    "blocker_dropped",
    "empty_dropped",
    "claim_dropped",
    "question_unknown_dropped",
    "worker_result_dropped",
)

# The closed transition matrix: target status -> statuses it may come from.
SUBGOAL_TRANSITIONS: dict[str, frozenset[str]] = {
    "in_progress": frozenset({"pending", "blocked"}),
    "done": frozenset({"pending", "in_progress", "blocked"}),
    "blocked": frozenset({"pending", "in_progress"}),
    "abandoned": frozenset({"pending", "in_progress", "blocked"}),
    "pending": frozenset({"blocked"}),
}

# Every field a self-evaluation may carry; the published schema lists each, in this order.
FIELDS = ("outcome", "output_summary", "constraint_violations", "should_continue",
          "discovered_constraints", "retracted_constraints", "emerged_subtasks",
          "subgoal_updates", "wrong_assumptions", "open_questions",
          "resolved_open_question_ids", "subtask_boundary", "subtask_boundary_label",
          "worker_results", "objective_refinement", "blocker", "execution_report", "gate_ids",
          "round_contract", "prompt_requests")
_ACTION = "Fix the field the pointer names, then submit again with the same handle."


@dataclass(frozen=True, slots=True)
class SubmissionContext:
    """The facts a submission is judged against (what the agent was shown)."""

    round: int
    criteria: tuple[str, ...]
    commands: tuple[EvidenceCommand, ...]
    active_contract: Mapping[str, Any] | None
    subgoals: Mapping[str, str] = field(default_factory=dict)
    open_descriptions: frozenset[str] = frozenset()


def _invalid(message: str, where: str, reason: str) -> AssayError:
    return AssayError(message, code="evaluation_invalid", pointer=where, action=_ACTION,
                      details={"reason": reason})


class _Diagnostics:
    def __init__(self) -> None:
        self.items: list[dict[str, str]] = []

    def add(self, code: str, where: str, detail: str) -> None:
        self.items.append({"code": code, "pointer": where, "detail": detail})


def _find_placeholder(value: Any, path: tuple[str | int, ...] = ()) -> str | None:
    if isinstance(value, str):
        return pointer(*path) if PLACEHOLDER in value else None
    if isinstance(value, dict):
        for key in value:
            hit = _find_placeholder(value[key], (*path, key))
            if hit is not None:
                return hit
    if isinstance(value, list):
        for index, item in enumerate(value):
            hit = _find_placeholder(item, (*path, index))
            if hit is not None:
                return hit
    return None


def _text(value: str, where: str, limit: int, diag: _Diagnostics) -> str:
    text = value.strip()
    if text != value:
        diag.add("text_trimmed", where, "leading/trailing whitespace removed")
    if len(text) > limit:
        diag.add("text_truncated", where, f"cut to {limit} characters (was {len(text)})")
        text = text[:limit]
    return text


def _strings(value: Any, name: tuple[str | int, ...], diag: _Diagnostics,
             limits: tuple[int, int]) -> list[str]:
    """A lenient list of non-blank, unique strings, capped."""
    where = pointer(*name)
    most, chars = limits
    if not isinstance(value, list):
        diag.add("wrong_type_dropped", where, "expected a list of strings; the field was dropped")
        return []
    out: list[str] = []
    for index, entry in enumerate(value):
        at = pointer(*name, index)
        if not isinstance(entry, str) or not entry.strip():
            diag.add("entry_dropped", at, "entries are non-blank strings")
            continue
        text = _text(entry, at, chars, diag)
        if text in out:
            diag.add("duplicate_dropped", at, "repeats an earlier entry")
            continue
        out.append(text)
    if len(out) > most:
        diag.add("list_capped", where, f"kept the first {most} of {len(out)} entries")
        out = out[:most]
    return out


class _Defects:
    """Strict-field defects of one evaluation, in field order, reported all at once."""

    def __init__(self) -> None:
        self.missing: list[str] = []
        self.invalid: list[dict[str, str]] = []
        self.errors: list[dict[str, str]] = []

    def lack(self, name: str) -> None:
        self.missing.append(name)
        self.errors.append({"pointer": pointer(name), "reason": "missing",
                            "detail": f"{name} is required"})

    def bad(self, where: str, reason: str, expected: str) -> None:
        self.invalid.append({"field": where.lstrip("/").split("/")[0], "pointer": where,
                             "reason": reason, "expected": expected})
        self.errors.append({"pointer": where, "reason": reason, "detail": f"expected {expected}"})

    def raise_any(self) -> None:
        if not self.errors:
            return
        first = self.errors[0]
        listed = ", ".join(e["pointer"] for e in self.errors[:8])
        raise AssayError(
            f"the self-evaluation is invalid at {len(self.errors)} place(s): {listed}"
            + (f" ({first['detail']})" if len(self.errors) == 1 else ""),
            code="evaluation_invalid", pointer=first["pointer"], action=_ACTION,
            details={"reason": first["reason"], "missing": list(self.missing),
                     "invalid": list(self.invalid), "errors": self.errors[:50]})


def precheck(raw: Any) -> None:
    """The checks that need no loop, in this order; raise or return. See the module docstring.

    Every strict-field defect is listed in one ``evaluation_invalid``
    (``details.missing``: absent required fields; ``details.invalid``: ``{field,
    pointer, reason, expected}``).
    """
    if not isinstance(raw, dict):
        raise AssayError("a self-evaluation is required: a JSON object", code="evaluation_invalid",
                         pointer="/evaluation" if raw is None else "", action=_ACTION,
                         details={"reason": "missing" if raw is None else "not_an_object",
                                  "missing": ["evaluation"] if raw is None else [],
                                  "invalid": [] if raw is None else [
                                      {"field": "evaluation", "pointer": "", "reason":
                                       "not_an_object", "expected": "an object"}]})
    # Checked before the gate runs: the document is stored with the round.
    size = len(canonical_bytes(raw))
    if size > MAX_DOCUMENT_BYTES:
        raise _invalid(f"the self-evaluation is {size} bytes; the limit is {MAX_DOCUMENT_BYTES}",
                       "", "too_large")
    refuse_legacy(raw)
    hit = _find_placeholder(raw)
    if hit is not None:
        raise _invalid(f"the value at {hit} still holds a template placeholder ({PLACEHOLDER} ...)",
                       hit, "template_placeholder")
    bad = _Defects()
    _check_required(raw, bad)
    emerged = raw.get("emerged_subtasks")
    for index, entry in enumerate(emerged if isinstance(emerged, list) else []):
        if isinstance(entry, str) and identity.SUBGOAL_ID.fullmatch(entry.strip()):
            bad.bad(pointer("emerged_subtasks", index), "subgoal_id_as_text",
                    "a description: creation never takes an sg- id (use subgoal_updates to change "
                    "an existing sub-goal)")
    if "subgoal_updates" in raw:
        _check_update_shapes(raw["subgoal_updates"], bad)
    bad.raise_any()


def _check_required(raw: dict[str, Any], bad: _Defects) -> None:
    outcome = raw.get("outcome")
    if "outcome" not in raw:
        bad.lack("outcome")
    elif outcome not in OUTCOMES:
        bad.bad("/outcome", "enum", "one of " + ", ".join(OUTCOMES))
    summary = raw.get("output_summary")
    if "output_summary" not in raw:
        bad.lack("output_summary")
    elif not isinstance(summary, str) or not summary.strip():
        bad.bad("/output_summary", "string_type", "a non-blank string")
    elif len(summary.strip()) > SUMMARY_LIMIT:
        bad.bad("/output_summary", "too_long", f"at most {SUMMARY_LIMIT} characters")
    violations = raw.get("constraint_violations")
    if "constraint_violations" not in raw:
        bad.lack("constraint_violations")
    elif not isinstance(violations, list):
        bad.bad("/constraint_violations", "list_type", "a list of strings (may be empty)")
    else:
        for index, entry in enumerate(violations):
            if not isinstance(entry, str):
                bad.bad(pointer("constraint_violations", index), "string_type", "a string")
    cont = raw.get("should_continue")
    if "should_continue" not in raw:
        bad.lack("should_continue")
    elif not isinstance(cont, bool):
        bad.bad("/should_continue", "bool_type", "true or false")
    elif outcome in ("success", "blocked") and cont:
        bad.bad("/should_continue", "outcome_requires_stop",
                f"false: outcome {outcome!r} stops the loop")
    if outcome == "blocked":
        blocker = raw.get("blocker")
        if not isinstance(blocker, str) or not blocker.strip():
            bad.bad("/blocker", "missing" if blocker is None else "string_type",
                    "a non-blank blocker: outcome 'blocked' says what blocks")
        elif len(blocker.strip()) > BLOCKER_LIMIT:
            bad.bad("/blocker", "too_long", f"at most {BLOCKER_LIMIT} characters")
    if "objective_refinement" in raw:
        ref = raw["objective_refinement"]
        if not isinstance(ref, str) or not ref.strip():
            bad.bad("/objective_refinement", "string_type", "a non-blank string")
        elif len(ref.strip()) > REFINEMENT_LIMIT:
            bad.bad("/objective_refinement", "too_long", f"at most {REFINEMENT_LIMIT} characters")


def _check_update_shapes(value: Any, bad: _Defects) -> None:
    if not isinstance(value, list):
        bad.bad("/subgoal_updates", "list_type", "a list of {id, status}")
        return
    from pydantic import ValidationError

    for index, entry in enumerate(value):
        try:
            SubGoalUpdate.model_validate(entry)
        except ValidationError as exc:
            for err in exc.errors(include_url=False):
                bad.bad(pointer("subgoal_updates", index, *err["loc"]), err["type"],
                        "{id: an sg- id, status: pending | in_progress | done | blocked | "
                        "abandoned}")


def normalise(raw: Any, ctx: SubmissionContext) -> tuple[dict[str, Any], list[dict[str, str]],
                                                          list[str]]:
    """Return ``(evaluation, diagnostics, submitted_fields)`` or raise.

    Runs :func:`precheck` first, then raises ``evaluation_invalid`` /
    ``contract_invalid`` for what the loop's facts refute (pointer into the
    document). The evaluation holds every known field, normalised; the
    claims are split into ``criterion_claims`` (advisory) and ``item_claims``
    (strict); a contract proposal carries its derived ids.
    """
    precheck(raw)
    diag = _Diagnostics()
    submitted = sorted(raw)
    for key in submitted:
        if key not in FIELDS:
            diag.add("unknown_field_dropped", pointer(key), f"{key!r} is not a SelfEvaluation field")
    outcome = raw["outcome"]
    ev: dict[str, Any] = {
        "outcome": outcome,
        "output_summary": _text(raw["output_summary"], "/output_summary", SUMMARY_LIMIT, diag),
        "constraint_violations": _strings(raw["constraint_violations"], ("constraint_violations",),
                                          diag, LIMITS["constraint_violations"]),
        "should_continue": raw["should_continue"],
    }
    if outcome == "blocked":
        ev["blocker"] = _text(raw["blocker"], "/blocker", BLOCKER_LIMIT, diag)
    elif "blocker" in raw:
        diag.add("blocker_dropped", "/blocker", f"a blocker only applies to outcome 'blocked', "
                 f"not {outcome!r}")
    if "objective_refinement" in raw:
        ev["objective_refinement"] = _text(raw["objective_refinement"], "/objective_refinement",
                                           REFINEMENT_LIMIT, diag)

    for name in ("discovered_constraints", "retracted_constraints", "wrong_assumptions",
                 "open_questions", "resolved_open_question_ids", "gate_ids", "emerged_subtasks"):
        if name in raw:
            ev[name] = _strings(raw[name], (name,), diag, LIMITS[name])

    if "subtask_boundary" in raw:
        if isinstance(raw["subtask_boundary"], bool):
            ev["subtask_boundary"] = raw["subtask_boundary"]
        else:
            diag.add("wrong_type_dropped", "/subtask_boundary", "expected true or false")
    if "subtask_boundary_label" in raw:
        label = raw["subtask_boundary_label"]
        if isinstance(label, str) and label.strip():
            ev["subtask_boundary_label"] = _text(label, "/subtask_boundary_label", LABEL_LIMIT, diag)
        else:
            diag.add("wrong_type_dropped", "/subtask_boundary_label", "expected a non-blank string")

    if "worker_results" in raw:
        ev["worker_results"] = _workers(raw["worker_results"], diag)
    if "prompt_requests" in raw:
        requests = _prompt_requests(raw["prompt_requests"], diag)
        if requests is not None:
            ev["prompt_requests"] = requests

    if "subgoal_updates" in raw:
        ev["subgoal_updates"] = _subgoal_updates(raw["subgoal_updates"], ctx,
                                                 ev.get("emerged_subtasks", []))

    report, criterion_claims, item_claim_list = _execution_report(raw.get("execution_report"),
                                                                  "execution_report" in raw,
                                                                  ctx, diag)
    if report is not None:
        ev["execution_report"] = report
    ev["criterion_claims"] = criterion_claims
    ev["item_claims"] = item_claim_list

    if "round_contract" in raw:
        proposal = raw["round_contract"]
        if isinstance(proposal, dict) and "scope" in proposal:
            proposal = dict(proposal)
            proposal["scope"] = _strings(proposal["scope"], ("round_contract", "scope"), diag,
                                         LIMITS["scope"])
        ev["round_contract"] = normalise_contract(
            proposal, base=("round_contract",), commands=ctx.commands, criteria=ctx.criteria,
            active=ctx.active_contract, round_number=ctx.round)
    return ev, diag.items, submitted


def _prompt_requests(value: Any, diag: _Diagnostics) -> dict[str, list[str]] | None:
    """``{emphasize, confusion_points}``, leniently; an empty request is no request."""
    if not isinstance(value, dict):
        diag.add("wrong_type_dropped", "/prompt_requests",
                 "expected {emphasize: [...], confusion_points: [...]}")
        return None
    out: dict[str, list[str]] = {}
    for key in sorted(value):
        if key not in ("emphasize", "confusion_points"):
            diag.add("unknown_field_dropped", pointer("prompt_requests", key),
                     f"{key!r} is not a prompt_requests field")
    for key in ("emphasize", "confusion_points"):
        if key in value:
            items = _strings(value[key], ("prompt_requests", key), diag, LIMITS[key])
            if items:
                out[key] = items
    if not out:
        diag.add("empty_dropped", "/prompt_requests", "nothing was requested; the field was "
                 "dropped")
        return None
    return out


def _workers(value: Any, diag: _Diagnostics) -> list[dict[str, str]]:
    if not isinstance(value, list):
        diag.add("wrong_type_dropped", "/worker_results", "expected a list of worker results")
        return []
    out = []
    keys = {"agentId", "subTask", "resultSummary", "outcome"}
    for index, entry in enumerate(value):
        at = pointer("worker_results", index)
        if (not isinstance(entry, dict) or set(entry) != keys
                or entry.get("outcome") not in WORKER_OUTCOMES
                or not all(isinstance(entry[k], str) and entry[k].strip()
                           for k in ("agentId", "subTask", "resultSummary"))):
            diag.add("worker_result_dropped", at, "a worker result is {agentId, subTask, "
                     "resultSummary, outcome: success|partial|failed}")
            continue
        out.append({k: _text(entry[k], pointer("worker_results", index, k), WORKER_TEXT_LIMIT,
                             diag) for k in sorted(keys)})
    if len(out) > WORKER_LIMIT:
        diag.add("list_capped", "/worker_results", f"kept the first {WORKER_LIMIT}")
        out = out[:WORKER_LIMIT]
    return out


def _subgoal_updates(value: list[Any], ctx: SubmissionContext,
                     emerged: Sequence[str]) -> list[dict[str, str]]:
    """Transitions of sub-goals the loop has or this submission creates (shapes are prechecked)."""
    known = dict(ctx.subgoals)
    for text in emerged:
        if text not in ctx.open_descriptions:
            known.setdefault(identity.subgoal_id(text, ctx.round), "pending")
    out: list[dict[str, str]] = []
    seen: set[str] = set()
    for index, entry in enumerate(value):
        update = SubGoalUpdate.model_validate(entry)
        at = pointer("subgoal_updates", index, "id")
        current = known.get(update.id)
        if current is None:
            raise _invalid(f"{update.id} is not a sub-goal of this loop (nor one this submission "
                           "creates)", at, "unknown_subgoal")
        if update.id in seen:
            raise _invalid(f"{update.id} is updated twice", at, "duplicate_update")
        seen.add(update.id)
        if current not in SUBGOAL_TRANSITIONS.get(update.status, frozenset()):
            raise _invalid(f"{update.id} cannot go from {current} to {update.status}",
                           pointer("subgoal_updates", index, "status"), "illegal_transition")
        out.append({"id": update.id, "from": current, "to": update.status})
    return out


def _execution_report(value: Any, present: bool, ctx: SubmissionContext,
                      diag: _Diagnostics) -> tuple[dict[str, Any] | None, list[dict[str, str]],
                                                   list[dict[str, str]]]:
    if not present:
        return None, [], []
    if not isinstance(value, dict):
        diag.add("wrong_type_dropped", "/execution_report", "expected an object")
        return None, [], []
    report: dict[str, Any] = {}
    for key in sorted(value):
        if key not in ("files_changed", "claims"):
            diag.add("unknown_field_dropped", pointer("execution_report", key),
                     f"{key!r} is not an execution_report field")
    if "files_changed" in value:
        report["files_changed"] = _strings(value["files_changed"],
                                           ("execution_report", "files_changed"), diag,
                                           LIMITS["files_changed"])
    criterion_claims: list[dict[str, str]] = []
    strict: list[tuple[int, Any]] = []
    claims = value.get("claims")
    if "claims" in value and not isinstance(claims, list):
        diag.add("wrong_type_dropped", "/execution_report/claims", "expected a list of claims")
        claims = []
    criteria = set(ctx.criteria)
    for index, entry in enumerate(claims or []):
        at = pointer("execution_report", "claims", index)
        cid = entry.get("id") if isinstance(entry, dict) else None
        if isinstance(cid, str) and cid.startswith("rci-"):
            strict.append((index, entry))
            continue
        if (not isinstance(entry, dict) or set(entry) != {"id", "outcome"}
                or not isinstance(cid, str) or cid not in criteria
                or entry["outcome"] not in ("met", "remaining")):
            diag.add("claim_dropped", at, "a criterion claim is {id: an active cr- id, outcome: "
                     "met|remaining}")
            continue
        if any(c["id"] == cid for c in criterion_claims):
            diag.add("duplicate_dropped", at, f"{cid} is claimed twice; the first claim is kept")
            continue
        criterion_claims.append({"id": cid, "outcome": entry["outcome"]})
    items = item_claims(strict, base=("execution_report", "claims"), active=ctx.active_contract)
    report["claims"] = criterion_claims + items
    return report, criterion_claims, items


def resolve_questions(ids: Sequence[str], open_ids: set[str],
                      diagnostics: list[dict[str, str]]) -> list[str]:
    """The resolved ids that name open questions; the rest become diagnostics."""
    kept = []
    for index, qid in enumerate(ids):
        if qid in open_ids:
            kept.append(qid)
        else:
            diagnostics.append({"code": "question_unknown_dropped",
                                "pointer": pointer("resolved_open_question_ids", index),
                                "detail": f"{qid} is not an open question of this loop"})
    return kept
