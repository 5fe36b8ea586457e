"""Compiled loop facts and their pure transition over one committed round.

The facts are what the next prompt is compiled from; each committed round
stamps the facts it produced (``compiled``), so a later reader (replay,
audit) never re-derives them from agent text. Shape (JSON)::

    objective            the working objective (latest refinement, else the task)
    acceptance           {task, success_criteria, hard_constraints}  (immutable)
    criteria             [{id, text, status, status_at_round?, status_source?}]
    constraints_active   [{id, text, source: hard|plan|discovered, source_round?}]
    constraints_retired  [{id, text, retired_at_round}]
    contract             the active contract or null; its ``claims`` hold each item's
                         latest rci- claim (met | remaining) while it stays active
    subgoals             [{id, description, status, created_at_round, updated_at_round}]
    open_questions       [{id, text, asked_at_round}]
    findings             the last gate's findings
    reports              the last 5 committed reports {round, outcome, summary, files}
    wrong_assumptions    the last 10 {round, text}
    redirects            the last 5 contract redirects {round, from, to, reason}
    violations           the last 20 committed rounds' reported constraint violations
                         {round, texts} (normalised text), for the recurring-violation check
    prompt_requests      what the last committed round asked of the next prompt, or null
    recovery             the pending recovery brief (until the redo round commits) or null
    recoveries           the last 5 recoveries that completed {id, round, origin, ...}
    last_round           {round, declared_evolution, subtask_boundary, machine_activity}
    progress             workspace progress state of every committed round
    machine_backed       machineBackedSuccess of every committed round
    posture_history      the evidence posture status of every committed round
    committed_rounds     how many rounds committed
    last_posture         the last committed evidence posture or null

Hard constraints and criteria come only from operator acceptance; nothing
here can change them. Imports only its siblings and the base modules.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from assay.errors import pointer
from assay.loop import identity
from assay.loop.contract import ContractDecision
from assay.loop.submission import SubmissionContext, resolve_questions

__all__ = [
    "APPLY_DIAGNOSTICS",
    "MAX_ACTIVE_CONSTRAINTS",
    "MAX_OPEN_QUESTIONS",
    "Applied",
    "apply_round",
    "initial_facts",
    "next_criteria",
    "recurring_violations",
    "submission_context",
]

MAX_ACTIVE_CONSTRAINTS = 15
MAX_OPEN_QUESTIONS = 10
_REPORTS = 5
_REDIRECTS = 5
_RECOVERIES = 5
_ASSUMPTIONS = 10
_VIOLATION_ROUNDS = 20
_TERMINAL_SUBGOALS = ("done", "abandoned")

APPLY_DIAGNOSTICS = (
    "constraint_retraction_refused",
    "constraint_not_expanded",
    "constraint_duplicate_dropped",
    "subtask_duplicate_dropped",
    "question_duplicate_dropped",
    "question_limit_dropped",
    "contract_premature",
)


def initial_facts(task: str, criteria: Sequence[str], constraints: Sequence[str],
                  plan_constraints: Sequence[str] = ()) -> dict[str, Any]:
    """The facts of round 1, from operator acceptance (and plan constraints)."""
    active = [{"id": identity.constraint_id(t), "text": t, "source": "hard"} for t in constraints]
    for text in plan_constraints:
        if all(c["text"] != text for c in active):
            active.append({"id": identity.constraint_id(text), "text": text, "source": "plan"})
    return {
        "objective": task,
        "acceptance": {"task": task, "success_criteria": list(criteria),
                       "hard_constraints": list(constraints)},
        "criteria": [{"id": identity.criterion_id(t), "text": t, "status": "unknown"}
                     for t in criteria],
        "constraints_active": active,
        "constraints_retired": [],
        "contract": None,
        "subgoals": [],
        "open_questions": [],
        "findings": [],
        "reports": [],
        "wrong_assumptions": [],
        "redirects": [],
        "violations": [],
        "prompt_requests": None,
        "recovery": None,
        "recoveries": [],
        "last_round": None,
        "progress": [],
        "machine_backed": [],
        "posture_history": [],
        "committed_rounds": 0,
        "last_posture": None,
    }


def submission_context(facts: Mapping[str, Any], round_number: int,
                       commands: Sequence[Any]) -> SubmissionContext:
    return SubmissionContext(
        round=round_number,
        criteria=tuple(c["id"] for c in facts["criteria"]),
        commands=tuple(commands),
        active_contract=facts["contract"],
        subgoals={s["id"]: s["status"] for s in facts["subgoals"]},
        open_descriptions=frozenset(s["description"] for s in facts["subgoals"]
                                    if s["status"] not in _TERMINAL_SUBGOALS),
    )


def recurring_violations(facts: Mapping[str, Any], round_number: int,
                         violations: Sequence[str], rounds: int) -> list[str]:
    """The violations reported now AND in each of the ``rounds - 1`` committed rounds before.

    Compared on normalised text (case and spacing do not matter). ``rounds``
    0 disables the check; the result keeps the order of ``violations``.
    """
    if rounds <= 0:
        return []
    history = {h["round"]: set(h["texts"]) for h in facts.get("violations", [])}
    out = []
    for text in violations:
        key = identity.normal_text(text)
        if all(key in history.get(round_number - back, set()) for back in range(1, rounds)):
            out.append(text)
    return out


@dataclass(frozen=True, slots=True)
class Applied:
    """The facts after a round, and what changed (for the receipt)."""

    facts: dict[str, Any]
    changes: dict[str, Any]
    diagnostics: list[dict[str, str]]


def next_criteria(criteria: Sequence[Mapping[str, Any]], contract: Mapping[str, Any] | None,
                  item_statuses: Mapping[str, str], claims: Sequence[Mapping[str, str]],
                  round_number: int, command_verdict: str | None = None) -> list[dict[str, Any]]:
    """Criterion statuses after a round: this round's machine facts, then claims, then history.

    A criterion referenced by gated contract items takes the machine status
    (any contradicted, else any insufficient, else verified when all are).
    A criterion the agent claims ``met`` while a required command failed
    (``command_verdict`` ``contradicted``) or gave no answer
    (``insufficient``) takes that machine status: the machine's verdict wins.
    Otherwise the agent's claim this round sets ``claimed``/``remaining``,
    but never overwrites an earlier machine status. Otherwise it is kept.
    """
    machine: dict[str, list[str]] = {}
    for item in (contract or {}).get("items", []):
        status = item_statuses.get(item["id"])
        if status in ("verified", "contradicted", "insufficient"):
            for ref in item["criterion_refs"]:
                machine.setdefault(ref, []).append(status)
    claimed = {c["id"]: c["outcome"] for c in claims}
    out = []
    for crit in criteria:
        entry = dict(crit)
        statuses = machine.get(crit["id"])
        new: tuple[str, str] | None = None
        if statuses:
            if "contradicted" in statuses:
                new = ("contradicted", "machine")
            elif "insufficient" in statuses:
                new = ("insufficient", "machine")
            else:
                new = ("verified", "machine")
        elif claimed.get(crit["id"]) == "met" and command_verdict is not None:
            new = (command_verdict, "machine")
        elif crit["id"] in claimed and crit.get("status_source") != "machine":
            new = ("claimed" if claimed[crit["id"]] == "met" else "remaining", "agent")
        if new is not None and (new[0], new[1]) != (crit.get("status"), crit.get("status_source")):
            entry.update({"status": new[0], "status_at_round": round_number,
                          "status_source": new[1]})
        out.append(entry)
    return out


def apply_round(facts: Mapping[str, Any], *, round_number: int, evaluation: Mapping[str, Any],
                decision: ContractDecision, item_statuses: Mapping[str, str],
                gated_contract: Mapping[str, Any] | None, progress: str,
                findings: Sequence[Mapping[str, Any]], posture: Mapping[str, Any],
                max_active: int = MAX_ACTIVE_CONSTRAINTS,
                command_verdict: str | None = None) -> Applied:
    """The facts the next compile uses, after committing round ``round_number``."""
    new = copy.deepcopy(dict(facts))
    diagnostics: list[dict[str, str]] = []
    changes: dict[str, Any] = {}

    new["contract"] = copy.deepcopy(decision.after)
    kept = new["contract"]
    if kept is not None and gated_contract is not None and kept["id"] == gated_contract["id"]:
        latest = dict(gated_contract.get("claims", {}))
        latest.update({c["id"]: c["outcome"] for c in evaluation.get("item_claims", [])})
        if latest:
            kept["claims"] = latest
    if decision.premature:
        diagnostics.append({"code": "contract_premature", "pointer": "/round_contract",
                            "detail": f"the active contract {decision.before_id} is still open; "
                                      "the proposal was not activated (restate the active "
                                      "contract, or add supersedes to replace it)"})

    # Constraints: discovered ones join the next compile's active set; only
    # agent-declared (discovered) constraints can be retracted.
    active = new["constraints_active"]
    declared, not_expanded = [], []
    for index, text in enumerate(evaluation.get("discovered_constraints", [])):
        cid = identity.constraint_id(text)
        at = pointer("discovered_constraints", index)
        if any(c["id"] == cid for c in active):
            diagnostics.append({"code": "constraint_duplicate_dropped", "pointer": at,
                                "detail": f"already active as {cid}"})
            continue
        if len(active) >= max_active:
            not_expanded.append(text)
            diagnostics.append({"code": "constraint_not_expanded", "pointer": at,
                                "detail": f"at most {max_active} constraints are active"})
            continue
        active.append({"id": cid, "text": text, "source": "discovered",
                       "source_round": round_number})
        declared.append(text)
    retracted, not_retracted = [], []
    for index, text in enumerate(evaluation.get("retracted_constraints", [])):
        match = next((c for c in active if c["text"] == text or c["id"] == text), None)
        at = pointer("retracted_constraints", index)
        if match is None:
            not_retracted.append(text)
            continue
        if match["source"] == "hard":
            not_retracted.append(text)
            diagnostics.append({"code": "constraint_retraction_refused", "pointer": at,
                                "detail": "hard constraints belong to operator acceptance and "
                                          "cannot be retracted"})
            continue
        active.remove(match)
        new["constraints_retired"].append({"id": match["id"], "text": match["text"],
                                           "retired_at_round": round_number})
        retracted.append(match["text"])
    changes.update({"constraints_declared": declared, "constraints_retracted": retracted,
                    "constraints_not_retracted": not_retracted,
                    "constraints_not_expanded": not_expanded})

    # Sub-goals: creation only through emerged_subtasks; transitions already checked.
    created = []
    live = {s["description"] for s in new["subgoals"] if s["status"] not in _TERMINAL_SUBGOALS}
    for index, text in enumerate(evaluation.get("emerged_subtasks", [])):
        if text in live:
            diagnostics.append({"code": "subtask_duplicate_dropped",
                                "pointer": pointer("emerged_subtasks", index),
                                "detail": "an open sub-goal already has this description"})
            continue
        sid = identity.subgoal_id(text, round_number)
        new["subgoals"].append({"id": sid, "description": text, "status": "pending",
                                "created_at_round": round_number,
                                "updated_at_round": round_number})
        created.append({"id": sid, "description": text})
        live.add(text)
    updated = []
    for update in evaluation.get("subgoal_updates", []):
        for goal in new["subgoals"]:
            if goal["id"] == update["id"]:
                goal["status"] = update["to"]
                goal["updated_at_round"] = round_number
                updated.append(dict(update))
    changes.update({"subgoals_created": created, "subgoals_updated": updated})

    # Open questions (report-only).
    open_ids = {q["id"] for q in new["open_questions"]}
    resolved = resolve_questions(evaluation.get("resolved_open_question_ids", []), open_ids,
                                 diagnostics)
    new["open_questions"] = [q for q in new["open_questions"] if q["id"] not in resolved]
    opened = []
    for index, text in enumerate(evaluation.get("open_questions", [])):
        qid = identity.question_id(text)
        at = pointer("open_questions", index)
        if any(q["id"] == qid for q in new["open_questions"]):
            diagnostics.append({"code": "question_duplicate_dropped", "pointer": at,
                                "detail": f"already open as {qid}"})
            continue
        if len(new["open_questions"]) >= MAX_OPEN_QUESTIONS:
            diagnostics.append({"code": "question_limit_dropped", "pointer": at,
                                "detail": f"at most {MAX_OPEN_QUESTIONS} questions stay open"})
            continue
        new["open_questions"].append({"id": qid, "text": text, "asked_at_round": round_number})
        opened.append({"id": qid, "text": text})
    changes.update({"questions_opened": opened, "questions_resolved": resolved})

    new["criteria"] = next_criteria(new["criteria"], gated_contract, item_statuses,
                                    evaluation.get("criterion_claims", []), round_number,
                                    command_verdict)
    if "objective_refinement" in evaluation:
        new["objective"] = evaluation["objective_refinement"]
    new["findings"] = [dict(f) for f in findings]
    files = list(evaluation.get("execution_report", {}).get("files_changed", []))[:50]
    new["reports"] = (new["reports"] + [{"round": round_number, "outcome": evaluation["outcome"],
                                         "summary": evaluation["output_summary"],
                                         "files": files}])[-_REPORTS:]
    if decision.superseded:
        new["redirects"] = (list(new.get("redirects", [])) + [
            {"round": round_number, "from": decision.before_id, "to": decision.after_id,
             "reason": decision.redirect_reason}])[-_REDIRECTS:]
    pending = new.get("recovery")
    if pending:
        # The redo committed: the brief leaves the normative set and joins
        # working memory.
        new["recoveries"] = (list(new.get("recoveries", [])) + [
            {"id": pending["id"], "round": round_number, "origin": pending["origin"],
             "checkpointId": pending["checkpointId"], "reason": pending["reason"],
             "abandonedRounds": list(pending.get("abandonedRounds", []))}])[-_RECOVERIES:]
        new["recovery"] = None
    evolved = bool(
        evaluation.get("discovered_constraints") or evaluation.get("retracted_constraints")
        or evaluation.get("emerged_subtasks") or evaluation.get("subgoal_updates")
        or "objective_refinement" in evaluation or evaluation.get("round_contract"))
    new["last_round"] = {"round": round_number, "declared_evolution": evolved,
                         "subtask_boundary": bool(evaluation.get("subtask_boundary")),
                         "machine_activity": bool(posture.get("commands"))}
    new["wrong_assumptions"] = (new["wrong_assumptions"] + [
        {"round": round_number, "text": t} for t in evaluation.get("wrong_assumptions", [])
    ])[-_ASSUMPTIONS:]
    new["violations"] = (list(new.get("violations", [])) + [
        {"round": round_number, "texts": sorted({identity.normal_text(t) for t in
                                                 evaluation["constraint_violations"]})}
    ])[-_VIOLATION_ROUNDS:]
    new["prompt_requests"] = copy.deepcopy(evaluation.get("prompt_requests"))
    new["progress"] = new["progress"] + [progress]
    new["machine_backed"] = new["machine_backed"] + [bool(posture["machineBackedSuccess"])]
    new["posture_history"] = list(new.get("posture_history", [])) + [posture["status"]]
    new["committed_rounds"] = new["committed_rounds"] + 1
    new["last_posture"] = dict(posture)
    return Applied(new, changes, diagnostics)
