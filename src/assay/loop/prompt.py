"""The round prompt: one pure function from committed facts to a prompt artifact.

:func:`compile_prompt` turns a :class:`PromptRequest` (the compiled facts of
the held round plus the compile inputs: round, attempt, context, contract
requirement, rejection notice, plan, the host's current instruction) into the
artifact the agent receives. The engine stores the artifact with the held
attempt and, when the round commits, inside the round transaction together
with the request's inputs and facts, so :func:`compile_prompt` can be run
again later and must give the same ``promptHash`` (replay).

**Density.** :func:`freshness` reads what the last committed round changed
(machine progress, after-phase command activity, declared evolution) and
:func:`choose_level` picks the density:

- ``l0`` (3,000 characters): an in-context retry (``same_round_retry``):
  the invocation is still alive, only the normative state and the rejection
  notice are restated;
- ``l2`` (18,000): a clean start for the model (``first_round``,
  ``recovery_redo``, ``rejection_escalation``, ``invocation_recovery``), a
  declared subtask boundary, declared evolution, unknown progress, or proven
  absence of new information (a stall gets the full picture);
- ``l1`` (7,000): otherwise (work moved on under the same plan).

**Budget.** The budget counts the budgeted region: the header and every
rendered section; the footer (how to submit, the evaluation template) is
never dropped and not counted. Optional sections are dropped whole, lowest
priority first (working memory is first trimmed item by item), until the
region fits. Protected sections are never dropped: when they alone exceed
the budget the artifact says ``protectedOverflow`` and warns.

**Coverage proof.** Every active normative id (criteria, constraints, the
contract and its items, open sub-goals, findings, a pending recovery) must be
declared by a rendered section. A missing id is a renderer defect: the
compile raises ``projection_incomplete`` and no prompt is delivered.

**Working memory** is a bounded projection of recent committed reports,
wrong assumptions, open questions, recoveries and contract redirects; the
artifact states the source counts (before caps), the rendered counts and the
omitted counts, so an omission is always visible. Agent reports are never
evidence.

The evaluation template is not valid input as it stands: every value the
agent must decide is a ``<<FILL: ...>>`` marker, which the submission
boundary rejects.

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
    "BUDGETS",
    "CONTEXT_MODES",
    "CONTEXT_REASONS",
    "INSTRUCTION_LIMIT",
    "PROMPT_SCHEMA_VERSION",
    "SECTIONS",
    "Block",
    "PromptRequest",
    "Section",
    "choose_level",
    "compile_prompt",
    "evaluation_template",
    "freshness",
]

PROMPT_SCHEMA_VERSION = 3
CONTEXT_MODES = ("fresh_invocation", "same_round_retry")
CONTEXT_REASONS = ("first_round", "next_round", "recovery_redo", "enforcement_retry",
                   "rejection_escalation", "invocation_recovery")
# Legal (mode, reason) pairs: enforcement_retry is the only in-context reason.
_LEGAL = {("same_round_retry", "enforcement_retry")} | {
    ("fresh_invocation", r) for r in CONTEXT_REASONS if r != "enforcement_retry"}
BUDGETS = {"l0": 3_000, "l1": 7_000, "l2": 18_000}
INSTRUCTION_LIMIT = 2_000
WORKING_MEMORY_WINDOW = 5
_KIND_RANK = {"criterion": 0, "constraint": 1, "contract": 2, "contract_item": 3, "subgoal": 4,
              "finding": 5, "recovery": 6}
_CLEAN_START = ("first_round", "recovery_redo", "rejection_escalation", "invocation_recovery")
# Per level: reports, summary chars, assumptions, recoveries, redirects rendered at most.
_MEMORY_CAPS = {"l0": (0, 0, 0, 0, 0), "l1": (1, 300, 3, 1, 1), "l2": (3, 600, 5, 2, 3)}


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
    instruction: str | None = None

    def state(self) -> dict[str, Any]:
        return {"loop_id": self.loop_id, "round_id": self.round_id, "round": self.round,
                "attempt": self.attempt, "max_rounds": self.max_rounds, "facts": self.facts,
                "context_mode": self.context_mode, "context_reason": self.context_reason,
                "contract_commands": list(self.contract_commands),
                "contract_requirement": dict(self.contract_requirement),
                "rejection_notice": self.rejection_notice, "plan": self.plan,
                "instruction": self.instruction}

    def inputs(self) -> dict[str, Any]:
        """Everything but the facts: stored with the attempt so the prompt can be replayed."""
        return {k: v for k, v in self.state().items() if k != "facts"}

    @classmethod
    def from_inputs(cls, inputs: Mapping[str, Any], facts: Mapping[str, Any]) -> PromptRequest:
        """The request again, from stored :meth:`inputs` and the facts it was compiled from."""
        values = dict(inputs)
        values["contract_commands"] = tuple(values.get("contract_commands", ()))
        return cls(facts=facts, **values)


# ------------------------------------------------------------------ freshness and level

def freshness(facts: Mapping[str, Any]) -> dict[str, Any]:
    """PromptFreshness over the last committed round (a density input, never governance)."""
    last = facts.get("last_round")
    if not facts.get("committed_rounds") or not last:
        return {"machineProgress": "not_applicable", "providers": [], "machineActivity": False,
                "declaredEvolution": False, "observableNewInformation": True,
                "reasons": ["no_previous_committed_round"]}
    progress = facts["progress"][-1] if facts.get("progress") else "unknown"
    posture = facts.get("last_posture") or {}
    providers = sorted(p["providerId"] for p in posture.get("providers", []))
    activity = bool(last.get("machine_activity"))
    declared = bool(last.get("declared_evolution"))
    reasons = [{"changed": "progress_changed", "unchanged": "progress_unchanged",
                "unknown": "progress_unknown"}.get(progress, "no_progress_provider")]
    if activity:
        reasons.append("after_command_activity")
    if declared:
        reasons.append("declared_evolution")
    observable = not (progress == "unchanged" and not activity and not declared)
    if not observable:
        reasons.append("no_observable_activity")
    return {"machineProgress": progress if progress in ("changed", "unchanged", "unknown")
            else "not_applicable", "providers": providers, "machineActivity": activity,
            "declaredEvolution": declared, "observableNewInformation": observable,
            "reasons": reasons}


def choose_level(context_mode: str, context_reason: str, facts: Mapping[str, Any],
                 fresh: Mapping[str, Any]) -> tuple[str, str]:
    """The density level and the rule that chose it (see the module docstring)."""
    if context_mode == "same_round_retry":
        return "l0", "in-context retry"
    if context_reason in _CLEAN_START:
        return "l2", f"clean start ({context_reason})"
    if (facts.get("last_round") or {}).get("subtask_boundary"):
        return "l2", "subtask boundary declared"
    if fresh["declaredEvolution"]:
        return "l2", "declared evolution"
    if fresh["machineProgress"] == "unknown":
        return "l2", "progress unknown"
    if not fresh["observableNewInformation"]:
        return "l2", "no observable new information"
    return "l1", "work moved on under the same plan"


# ------------------------------------------------------------------ sections

@dataclass(frozen=True, slots=True)
class Block:
    """One rendered section: its lines and the normative ids it declares."""

    name: str
    lines: tuple[str, ...]
    ids: frozenset[str] = frozenset()
    protected: bool = True
    memory: Mapping[str, Any] | None = None

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


@dataclass(frozen=True, slots=True)
class _Ctx:
    req: PromptRequest
    level: str


Renderer = Callable[[_Ctx], "Block | None"]


@dataclass(frozen=True, slots=True)
class Section:
    """A named section renderer; ``priority`` orders budget drops (lowest goes first)."""

    name: str
    render: Renderer
    protected: bool = True
    priority: int = 100


def _rejection(ctx: _Ctx) -> Block | None:
    if not ctx.req.rejection_notice:
        return None
    return Block("rejection", ("## Your last submission was rejected", ctx.req.rejection_notice))


def _instruction(ctx: _Ctx) -> Block | None:
    text = (ctx.req.instruction or "").strip()
    if not text:
        return None
    if len(text) > INSTRUCTION_LIMIT:
        text = text[:INSTRUCTION_LIMIT] + " [truncated]"
    return Block("instruction", (("## Current instruction from the user (not a criterion or "
                                 "constraint)"), text))


def _recovery(ctx: _Ctx) -> Block | None:
    rec = ctx.req.facts.get("recovery")
    if not rec:
        return None
    lines = ["## Recovery brief",
             (f"[{rec['id']}] The workspace was restored to checkpoint {rec['checkpointId']} "
             f"(verified) and this is the redo of round {rec['redoRound']} "
             f"({rec['origin']} recovery). Reason: {rec['reason']}")]
    if rec.get("abandonedRounds"):
        lines.append("Abandoned rounds: " + ", ".join(str(r) for r in rec["abandonedRounds"]))
    if rec.get("observedSkippedFiles"):
        lines.append("Files the restore put back (machine-observed): "
                     + ", ".join(rec["observedSkippedFiles"][:30])
                     + (f" (+{len(rec['observedSkippedFiles']) - 30} more)"
                        if len(rec["observedSkippedFiles"]) > 30 else ""))
    if rec.get("reportedSkippedFiles"):
        lines.append("Files the abandoned rounds reported changing: "
                     + ", ".join(rec["reportedSkippedFiles"][:30]))
    for title, key in (("Approaches tried", "approaches"), ("Wrong assumptions", "wrongAssumptions"),
                       ("Discoveries to reconsider", "preservedDiscoveries")):
        for entry in rec.get(key, [])[:5]:
            lines.append(f"- {title.lower()}: {entry[:300]}")
    for flag in rec.get("triggerFindings", [])[:5]:
        lines.append(f"- trigger {flag['check']} [{flag.get('ref', '')}]: {flag['detail'][:200]}")
    return Block("recovery", tuple(lines), frozenset({rec["id"]}))


def _objective(ctx: _Ctx) -> Block:
    facts = ctx.req.facts
    lines = ["## Objective", facts["objective"]]
    if facts["objective"] != facts["acceptance"]["task"]:
        lines.append(f"(Operator task, unchanged: {facts['acceptance']['task']})")
    return Block("objective", tuple(lines))


def _criteria(ctx: _Ctx) -> Block:
    facts = ctx.req.facts
    lines = ["## Success criteria (operator acceptance; status from the ledger)"]
    lines += [f"- [{c['id']}] {c['text']} (status: {c['status']})" for c in facts["criteria"]]
    if not facts["criteria"]:
        lines.append("- none stated")
    return Block("criteria", tuple(lines), frozenset(c["id"] for c in facts["criteria"]))


def _constraints(ctx: _Ctx) -> Block:
    active = ctx.req.facts["constraints_active"]
    lines = ["## Constraints"]
    lines += [f"- [{c['id']}] ({c['source']}) {c['text']}" for c in active] or ["- none"]
    return Block("constraints", tuple(lines), frozenset(c["id"] for c in active))


def _contract(ctx: _Ctx) -> Block:
    req = ctx.req
    contract = req.facts.get("contract")
    lines = ["## Round contract"]
    ids: set[str] = set()
    if contract:
        ids.add(contract["id"])
        lines.append(f"Active contract {contract['id']} (declared in round "
                     f"{contract['declared_at_round']}): {contract['work_item']}")
        for item in contract["items"]:
            ids.add(item["id"])
            if ctx.level == "l0":
                lines.append(f"- [{item['id']}] {item['description']}")
            else:
                refs = ", ".join(item["criterion_refs"]) or "no criterion"
                lines.append(f"- [{item['id']}] {item['description']} (checked by "
                             f"{', '.join(item['verify_with'])}; for {refs})")
        lines.append("assay runs these checks itself after you submit; a claim never verifies.")
    else:
        lines.append("No contract is active.")
    requirement = req.contract_requirement
    commands = ", ".join(req.contract_commands)
    if requirement.get("reason") == "no_active_contract":
        lines.append("If you continue, propose round_contract for the next slice (its "
                     f"verify_with names commands from: {commands}).")
    elif requirement.get("reason") == "active_contract_continues":
        lines.append("It stays active until every item is claimed met and verified; a new "
                     "proposal while it is open is premature and ignored. To replace it while "
                     f"open, add supersedes: {{contract_id: "
                     f"\"{requirement.get('active_contract_id')}\"}} (commands: {commands}).")
    return Block("contract", tuple(lines), frozenset(ids))


def _subgoals(ctx: _Ctx) -> Block | None:
    goals = ctx.req.facts["subgoals"]
    open_goals = [s for s in goals if s["status"] not in ("done", "abandoned")]
    shown = goals if ctx.level == "l2" else open_goals
    if not shown:
        return None
    lines = ["## Sub-goals"]
    lines += [f"- [{s['id']}] {s['description']} ({s['status']})" for s in shown]
    closed = len(goals) - len(shown)
    if closed:
        lines.append(f"({closed} closed sub-goal(s) not shown)")
    return Block("subgoals", tuple(lines), frozenset(s["id"] for s in open_goals))


def _findings(ctx: _Ctx) -> Block | None:
    findings = ctx.req.facts.get("findings", [])
    if not findings:
        return None
    lines = ["## Findings of the last verification gate"]
    for f in findings:
        ref = f" [{f['ref']}]" if f.get("ref") else ""
        lines.append(f"- [{f['id']}] {f['severity']} {f['check']}{ref}: {f['detail']}")
    return Block("findings", tuple(lines), frozenset(f["id"] for f in findings))


def _plan(ctx: _Ctx) -> Block | None:
    if not ctx.req.plan or ctx.level == "l0":
        return None
    return Block("plan", ("## Plan", ctx.req.plan.strip()), protected=False)


def _questions(ctx: _Ctx) -> Block | None:
    questions = ctx.req.facts.get("open_questions", [])
    if not questions or ctx.level == "l0":
        return None
    lines = ["## Open questions"] + [f"- [{q['id']}] {q['text']}" for q in questions]
    return Block("open_questions", tuple(lines), protected=False)


def _requests(ctx: _Ctx) -> Block | None:
    """What the last committed round asked of this prompt (advisory; ignored at l0)."""
    asked = ctx.req.facts.get("prompt_requests")
    if not asked or ctx.level == "l0":
        return None
    lines = ["## You asked, last round (your requests; not criteria or constraints)"]
    lines += [f"- unclear to you: {text}" for text in asked.get("confusion_points", [])]
    lines += [f"- keep in view: {text}" for text in asked.get("emphasize", [])]
    return Block("prompt_requests", tuple(lines), protected=False)


def memory_sources(facts: Mapping[str, Any]) -> dict[str, list[Any]]:
    """The committed items working memory projects from (the fixed recent window)."""
    committed = int(facts.get("committed_rounds", 0))
    low = committed - WORKING_MEMORY_WINDOW
    return {
        "reports": [r for r in facts.get("reports", []) if r["round"] > low],
        "assumptions": [a for a in facts.get("wrong_assumptions", []) if a["round"] > low],
        "recoveries": [r for r in facts.get("recoveries", []) if r["round"] > low],
        "redirects": [r for r in facts.get("redirects", []) if r["round"] > low],
    }


def _memory(ctx: _Ctx, *, keep: int | None = None) -> Block | None:
    """Working memory, newest first; ``keep`` caps the rendered items (budget trimming)."""
    facts = ctx.req.facts
    src = memory_sources(facts)
    questions = facts.get("open_questions", [])
    committed = int(facts.get("committed_rounds", 0))
    source_counts = {"windowRounds": min(committed, WORKING_MEMORY_WINDOW),
                     "reports": len(src["reports"]), "assumptions": len(src["assumptions"]),
                     "openQuestions": len(questions), "recoveries": len(src["recoveries"]),
                     "redirects": len(src["redirects"])}
    n_rep, chars, n_ass, n_rec, n_red = _MEMORY_CAPS[ctx.level]
    reports = list(reversed(src["reports"]))[:n_rep]
    assumptions = list(reversed(src["assumptions"]))[:n_ass]
    recoveries = list(reversed(src["recoveries"]))[:n_rec]
    redirects = list(reversed(src["redirects"]))[:n_red]
    items: list[tuple[str, str]] = []
    previous = None
    for index, r in enumerate(reports):
        summary = r["summary"]
        cut = summary[:chars] + (" [truncated]" if len(summary) > chars else "")
        if index == 0:
            previous = {"round": r["round"], "sourceChars": len(summary),
                        "renderedChars": len(cut), "truncated": len(summary) > chars}
        items.append(("reports", f"- report, round {r['round']} ({r['outcome']}): {cut}"))
    items += [("assumptions", f"- wrong assumption (round {a['round']}): {a['text']}")
              for a in assumptions]
    items += [("recoveries", (f"- recovery in round {r['round']} ({r['origin']}) to "
                             f"{r['checkpointId']}: {r['reason'][:200]}; abandoned rounds "
                             f"{', '.join(str(x) for x in r.get('abandonedRounds', [])) or 'none'}"))
              for r in recoveries]
    items += [("redirects", f"- contract redirect in round {r['round']}: {r['from']} -> "
                            f"{r['to']}" + (f" ({r['reason']})" if r.get("reason") else ""))
              for r in redirects]
    truncated_text = bool(previous and previous["truncated"])
    if keep is not None:
        items = items[:keep]
        if previous is not None and not any(k == "reports" for k, _ in items):
            previous = None
    counts = {k: sum(1 for kind, _ in items if kind == k)
              for k in ("reports", "assumptions", "recoveries", "redirects")}
    # Open questions have their own section; here they are counted only.
    counts["openQuestions"] = 0
    omitted = {k: source_counts[k] - counts[k] for k in counts}
    projection = {
        "rendered": bool(items), "reportRounds": [r["round"] for r in reports][:counts["reports"]],
        "counts": counts, "sourceCounts": source_counts,
        "omittedCounts": omitted, "questionIds": [],
        "previousReport": previous, "renderedChars": 0,
        "truncated": truncated_text or any(omitted[k] for k in omitted if k != "openQuestions"),
    }
    if not items:
        return Block("working_memory", (), protected=False, memory=projection)
    lines = ("## Working memory (recent committed agent reports; not evidence)",
             *(text for _, text in items))
    projection["renderedChars"] = len("\n".join(lines))
    return Block("working_memory", lines, protected=False, memory=projection)


SECTIONS: tuple[Section, ...] = (
    Section("rejection", _rejection),
    Section("instruction", _instruction),
    Section("recovery", _recovery),
    Section("objective", _objective),
    Section("criteria", _criteria),
    Section("constraints", _constraints),
    Section("contract", _contract),
    Section("subgoals", _subgoals),
    Section("findings", _findings),
    Section("plan", _plan, protected=False, priority=30),
    Section("prompt_requests", _requests, protected=False, priority=25),
    Section("open_questions", _questions, protected=False, priority=20),
    Section("working_memory", _memory, protected=False, priority=10),
)


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


def _header(req: PromptRequest, level: str) -> str:
    title = (f"# Loop {req.loop_id}: round {req.round} of {req.max_rounds}"
             + (f" (attempt {req.attempt})" if req.attempt > 1 else ""))
    return f"{title}\nContext: {req.context_mode} ({req.context_reason}); density {level}."


def _footer(req: PromptRequest) -> str:
    return "\n".join((
        "## Submit",
        ("Replace every <<FILL ...>> marker, then submit with the submission handle you were "
        "given: assay loop next --handle '<handle JSON>' --evaluation FILE"),
        ("To abandon this branch, restore a checkpoint: assay loop recover --handle '<handle "
        "JSON>' --checkpoint ID --reason TEXT"),
        "```json",
        json.dumps(evaluation_template(req), indent=2, ensure_ascii=False),
        "```",
    ))


def active_ids(facts: Mapping[str, Any]) -> list[dict[str, str]]:
    """The active normative ids the prompt must render, ordered by (kind rank, id)."""
    active = [{"id": c["id"], "kind": "criterion"} for c in facts["criteria"]]
    active += [{"id": c["id"], "kind": "constraint"} for c in facts["constraints_active"]]
    contract = facts.get("contract")
    if contract:
        active.append({"id": contract["id"], "kind": "contract"})
        active += [{"id": i["id"], "kind": "contract_item"} for i in contract["items"]]
    active += [{"id": s["id"], "kind": "subgoal"} for s in facts["subgoals"]
               if s["status"] not in ("done", "abandoned")]
    active += [{"id": f["id"], "kind": "finding"} for f in facts.get("findings", [])]
    if facts.get("recovery"):
        active.append({"id": facts["recovery"]["id"], "kind": "recovery"})
    return sorted(active, key=lambda a: (_KIND_RANK[a["kind"]], a["id"]))


class _Doc:
    """The legacy whole-body renderer seam (``render=``): lines plus declared ids."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.ids: set[str] = set()

    def section(self, title: str) -> None:
        self.lines.append("")
        self.lines.append(f"## {title}")

    def add(self, text: str, *ids: str) -> None:
        self.lines.append(text)
        self.ids.update(ids)


def _region(header: str, blocks: Sequence[Block]) -> str:
    return "\n\n".join([header, *(b.text for b in blocks if b.lines)])


def compile_prompt(req: PromptRequest, render: Callable[[PromptRequest, Any], None] | None = None,
                   *, sections: Sequence[Section] | None = None) -> dict[str, Any]:
    """The prompt artifact for one held attempt (same request, same artifact, same hash).

    ``sections`` replaces the section renderers (tests remove one to see the
    coverage proof fail); ``render`` replaces the whole body with a
    ``render(request, doc)`` function that calls ``doc.add(line, *ids)``.
    Raises ``projection_incomplete`` when an active normative id was not
    rendered: then no prompt is delivered. Cost: linear in the facts.
    """
    if (req.context_mode, req.context_reason) not in _LEGAL:
        raise ValueError(f"illegal context {req.context_mode}/{req.context_reason}")
    fresh = freshness(req.facts)
    level, level_reason = choose_level(req.context_mode, req.context_reason, req.facts, fresh)
    budget = BUDGETS[level]
    header = _header(req, level)
    ctx = _Ctx(req, level)
    warnings: list[str] = []
    dropped: list[str] = []
    memory: Mapping[str, Any] | None = None
    if render is not None:
        doc = _Doc()
        render(req, doc)
        blocks = [Block("body", tuple(doc.lines), frozenset(doc.ids))]
    else:
        chosen = list(sections if sections is not None else SECTIONS)
        rendered = [(s, s.render(ctx)) for s in chosen]
        blocks = [b for _, b in rendered if b is not None]
        memory = next((b.memory for b in blocks if b.memory is not None), None)
        # Drop optional sections, lowest priority first, until the region fits;
        # working memory is trimmed item by item before it goes whole.
        removed_blocks: dict[str, Block] = {}
        optional = sorted((s for s, b in rendered
                           if b is not None and b.lines and not s.protected),
                          key=lambda s: s.priority)
        for section in optional:
            if len(_region(header, blocks)) <= budget:
                break
            index = next(i for i, b in enumerate(blocks) if b.name == section.name)
            if section.name == "working_memory" and section.render is _memory:
                total = len(blocks[index].lines) - 1
                for keep in range(total - 1, 0, -1):
                    trimmed = _memory(ctx, keep=keep)
                    assert trimmed is not None
                    blocks[index] = trimmed
                    memory = trimmed.memory
                    if len(_region(header, blocks)) <= budget:
                        break
                if len(_region(header, blocks)) <= budget:
                    break
            removed_blocks[section.name] = blocks.pop(index)
            dropped.append(section.name)
        # A section dropped early may fit again once a bigger one went: put
        # back what fits, highest priority first.
        order = {s.name: i for i, s in enumerate(chosen)}
        for name in reversed(dropped[:-1]):
            trial = sorted([*blocks, removed_blocks[name]], key=lambda b: order[b.name])
            if len(_region(header, trial)) <= budget:
                blocks = trial
                dropped.remove(name)
        gone = removed_blocks.get("working_memory")
        if gone is not None and "working_memory" in dropped and gone.memory is not None:
            memory = {**gone.memory, "rendered": False, "renderedChars": 0,
                      "reportRounds": [], "previousReport": None, "truncated": True,
                      "counts": {k: 0 for k in gone.memory["counts"]},
                      "omittedCounts": {k: gone.memory["sourceCounts"][k]
                                        for k in gone.memory["counts"]}}
    region = _region(header, blocks)
    overflow = len(region) > budget
    if overflow:
        warnings.append(f"protected sections need {len(region)} characters, over the {level} "
                        f"budget of {budget}; nothing normative was dropped")
    ids = set().union(*(b.ids for b in blocks)) if blocks else set()
    active = active_ids(req.facts)
    omitted = [{"id": a["id"], "reason": "defect"} for a in active if a["id"] not in ids]
    if omitted:
        raise AssayError(
            f"the prompt lost {len(omitted)} active id(s): "
            f"{', '.join(o['id'] for o in omitted[:5])}", code="projection_incomplete",
            retryable=False, details={"omitted": omitted, "roundId": req.round_id},
            action="This is a defect in assay's prompt projection; report it.")
    text = region + "\n\n" + _footer(req) + "\n"
    instruction = (req.instruction or "").strip() or None
    artifact: dict[str, Any] = {
        "schemaVersion": PROMPT_SCHEMA_VERSION,
        "roundId": req.round_id,
        "round": req.round,
        "attempt": req.attempt,
        "level": level,
        "levelReason": level_reason,
        "contextMode": req.context_mode,
        "contextReason": req.context_reason,
        "renderedPrompt": text,
        "promptHash": digest(text),
        "stateHash": digest(req.state()),
        "budget": budget,
        "renderedChars": len(region),
        "coverage": {"active": active, "rendered": sorted(ids), "omitted": [],
                     "complete": True},
        "warnings": warnings,
        "droppedSections": dropped,
        "protectedOverflow": overflow,
        "freshness": fresh,
        "currentUserInstruction": instruction,
    }
    if memory is not None:
        artifact["workingMemory"] = dict(memory)
    return artifact
