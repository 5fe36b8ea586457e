"""The round prompt: one pure function from compiled facts to a prompt artifact.

:func:`compile_prompt` is the one seam the prompt compiler replaces: the
engine calls it with a :class:`PromptRequest` and stores the artifact it
returns with the held attempt (and, when the round commits, inside the
round transaction), so the exact prompt can be replayed. This version
renders every section in full (one density, no budget cuts) and proves
coverage: every active normative id (criteria, constraints, the contract and
its items, open sub-goals, findings) must appear in the rendered text, or
``projection_incomplete`` is raised and no prompt is delivered.

The evaluation template is not valid JSON input as it stands: every value
the agent must decide is a ``<<FILL: ...>>`` marker, and the submission
boundary rejects any string still holding ``<<FILL`` (so a template echoed
back unedited can never pass unnoticed).

Imports the base modules and its siblings.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.canonical import digest
from assay.errors import AssayError
from assay.loop.submission import PLACEHOLDER

__all__ = [
    "CONTEXT_MODES",
    "CONTEXT_REASONS",
    "PROMPT_SCHEMA_VERSION",
    "PromptRequest",
    "compile_prompt",
    "evaluation_template",
]

PROMPT_SCHEMA_VERSION = 1
CONTEXT_MODES = ("fresh_invocation", "same_round_retry")
CONTEXT_REASONS = ("first_round", "next_round", "recovery_redo", "enforcement_retry",
                   "rejection_escalation", "invocation_recovery")
_BUDGET = 18_000
_KIND_RANK = {"criterion": 0, "constraint": 1, "contract": 2, "contract_item": 3, "subgoal": 4,
              "finding": 5, "recovery": 6}


@dataclass(frozen=True, slots=True)
class PromptRequest:
    """Everything one prompt is compiled from (all of it committed or derived)."""

    loop_id: str
    round_id: str
    round: int
    attempt: int
    max_rounds: int
    facts: Mapping[str, Any]
    context_mode: str
    context_reason: str
    contract_commands: Sequence[str] = ()
    contract_requirement: Mapping[str, Any] = field(default_factory=dict)
    rejection_notice: str = ""
    plan: str | None = None

    def state(self) -> dict[str, Any]:
        return {"loop_id": self.loop_id, "round_id": self.round_id, "round": self.round,
                "attempt": self.attempt, "max_rounds": self.max_rounds, "facts": self.facts,
                "context_mode": self.context_mode, "context_reason": self.context_reason,
                "contract_commands": list(self.contract_commands),
                "contract_requirement": dict(self.contract_requirement),
                "rejection_notice": self.rejection_notice, "plan": self.plan}

    def inputs(self) -> dict[str, Any]:
        """Everything but the facts: stored with the attempt so the prompt can be replayed."""
        return {k: v for k, v in self.state().items() if k != "facts"}

    @classmethod
    def from_inputs(cls, inputs: Mapping[str, Any], facts: Mapping[str, Any]) -> PromptRequest:
        """The request again, from stored :meth:`inputs` and the facts it was compiled from."""
        return cls(facts=facts, **dict(inputs))


def evaluation_template(req: PromptRequest) -> dict[str, Any]:
    """The evaluation skeleton shown in the prompt; every decision is a marker."""
    template: dict[str, Any] = {
        "outcome": f"{PLACEHOLDER}: success | partial | failed | blocked>>",
        "output_summary": f"{PLACEHOLDER}: what you did this round, specifically>>",
        "constraint_violations": [],
        "should_continue": f"{PLACEHOLDER}: true or false (success/blocked need false)>>",
    }
    contract = req.facts.get("contract")
    claims = [{"id": i["id"], "outcome": f"{PLACEHOLDER}: met | remaining>>"}
              for i in (contract or {}).get("items", [])]
    if claims:
        template["execution_report"] = {"files_changed": [], "claims": claims}
    if req.contract_requirement.get("reason") == "no_active_contract":
        template["round_contract"] = {
            "work_item": f"{PLACEHOLDER}: the deliverable of the next slice>>",
            "items": [{"description": f"{PLACEHOLDER}: what must be true>>",
                       "criterion_refs": [],
                       "verify_with": [(f"{PLACEHOLDER}: one of "
                                       f"{', '.join(req.contract_commands)}>>")]}],
        }
    return template


class _Doc:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.ids: set[str] = set()

    def section(self, title: str) -> None:
        self.lines.append("")
        self.lines.append(f"## {title}")

    def add(self, text: str, *ids: str) -> None:
        self.lines.append(text)
        self.ids.update(ids)


def _active_ids(facts: Mapping[str, Any]) -> list[dict[str, str]]:
    active = [{"id": c["id"], "kind": "criterion"} for c in facts["criteria"]]
    active += [{"id": c["id"], "kind": "constraint"} for c in facts["constraints_active"]]
    contract = facts.get("contract")
    if contract:
        active.append({"id": contract["id"], "kind": "contract"})
        active += [{"id": i["id"], "kind": "contract_item"} for i in contract["items"]]
    active += [{"id": s["id"], "kind": "subgoal"} for s in facts["subgoals"]
               if s["status"] not in ("done", "abandoned")]
    active += [{"id": f["id"], "kind": "finding"} for f in facts.get("findings", [])]
    return sorted(active, key=lambda a: (_KIND_RANK[a["kind"]], a["id"]))


def _render(req: PromptRequest, doc: _Doc) -> None:
    facts = req.facts
    doc.add(f"# Loop {req.loop_id}: round {req.round} of {req.max_rounds}"
            + (f" (attempt {req.attempt})" if req.attempt > 1 else ""))
    doc.add(f"Context: {req.context_mode} ({req.context_reason}).")
    if req.rejection_notice:
        doc.section("Your last submission was rejected")
        doc.add(req.rejection_notice)
    doc.section("Objective")
    doc.add(facts["objective"])
    if facts["objective"] != facts["acceptance"]["task"]:
        doc.add(f"(Operator task, unchanged: {facts['acceptance']['task']})")
    doc.section("Success criteria (operator acceptance; status from the ledger)")
    for c in facts["criteria"]:
        doc.add(f"- [{c['id']}] {c['text']} (status: {c['status']})", c["id"])
    doc.section("Constraints")
    for c in facts["constraints_active"]:
        doc.add(f"- [{c['id']}] ({c['source']}) {c['text']}", c["id"])
    if not facts["constraints_active"]:
        doc.add("- none")
    if req.plan:
        doc.section("Plan")
        doc.add(req.plan)
    doc.section("Round contract")
    contract = facts.get("contract")
    if contract:
        doc.add(f"Active contract {contract['id']} (declared in round "
                f"{contract['declared_at_round']}): {contract['work_item']}", contract["id"])
        for item in contract["items"]:
            refs = ", ".join(item["criterion_refs"]) or "no criterion"
            doc.add(f"- [{item['id']}] {item['description']} (checked by "
                    f"{', '.join(item['verify_with'])}; for {refs})", item["id"])
        doc.add("assay runs these checks itself after you submit; a claim never verifies.")
    else:
        doc.add("No contract is active.")
    requirement = req.contract_requirement
    commands = ", ".join(req.contract_commands)
    if requirement.get("reason") == "no_active_contract":
        doc.add("If you continue, propose round_contract for the next slice (its verify_with "
                f"names commands from: {commands}).")
    elif requirement.get("successor_required_if_closed"):
        doc.add("It stays active until every item is verified. If this round closes it and you "
                f"continue, propose the next slice's round_contract (commands: {commands}); to "
                "replace it while open, add supersedes: {contract_id: "
                f"\"{requirement.get('active_contract_id')}\"}}.")
    open_goals = [s for s in facts["subgoals"] if s["status"] not in ("done", "abandoned")]
    if facts["subgoals"]:
        doc.section("Sub-goals")
        for s in facts["subgoals"]:
            doc.add(f"- [{s['id']}] {s['description']} ({s['status']})",
                    *([s["id"]] if s in open_goals else []))
    if facts.get("findings"):
        doc.section("Findings of the last verification gate")
        for f in facts["findings"]:
            ref = f" [{f['ref']}]" if f.get("ref") else ""
            doc.add(f"- [{f['id']}] {f['severity']} {f['check']}{ref}: {f['detail']}", f["id"])
    if facts.get("open_questions"):
        doc.section("Open questions")
        for q in facts["open_questions"]:
            doc.add(f"- [{q['id']}] {q['text']}")
    if facts.get("reports"):
        doc.section("Recent committed reports (agent reports, not evidence)")
        for r in facts["reports"]:
            doc.add(f"- round {r['round']} ({r['outcome']}): {r['summary']}")
    doc.section("Submit")
    doc.add("Replace every <<FILL ...>> marker, then submit with the submission handle you were "
            "given: assay loop next --handle '<handle JSON>' --evaluation FILE")
    doc.add("```json")
    doc.add(json.dumps(evaluation_template(req), indent=2, ensure_ascii=False))
    doc.add("```")


def compile_prompt(req: PromptRequest,
                   render: Callable[[PromptRequest, Any], None] | None = None) -> dict[str, Any]:
    """The prompt artifact for one held attempt (same request, same artifact).

    ``render`` replaces the section renderer (a seam for tests and for the
    richer compiler). Raises ``projection_incomplete`` when an active
    normative id was not rendered: then no prompt is delivered.
    """
    if req.context_mode not in CONTEXT_MODES or req.context_reason not in CONTEXT_REASONS:
        raise ValueError(f"illegal context {req.context_mode}/{req.context_reason}")
    doc = _Doc()
    (render or _render)(req, doc)
    text = "\n".join(doc.lines).strip() + "\n"
    active = _active_ids(req.facts)
    rendered = sorted(doc.ids)
    omitted = [{"id": a["id"], "reason": "defect"} for a in active if a["id"] not in doc.ids]
    if omitted:
        raise AssayError(
            f"the prompt lost {len(omitted)} active id(s): "
            f"{', '.join(o['id'] for o in omitted[:5])}", code="projection_incomplete",
            retryable=False, details={"omitted": omitted},
            action="This is a defect in assay's prompt projection; report it.")
    return {
        "schemaVersion": PROMPT_SCHEMA_VERSION,
        "roundId": req.round_id,
        "round": req.round,
        "attempt": req.attempt,
        "level": "l2",
        "contextMode": req.context_mode,
        "contextReason": req.context_reason,
        "renderedPrompt": text,
        "promptHash": digest(text),
        "stateHash": digest(req.state()),
        "budget": _BUDGET,
        "renderedChars": len(text),
        "coverage": {"active": active, "rendered": rendered, "omitted": [], "complete": True},
        "warnings": [],
    }
