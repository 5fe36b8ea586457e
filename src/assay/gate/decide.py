"""The stop decision: may the agent stop now, and what does it need to hear if not?

:func:`evaluate` reads one ledger snapshot and returns a :class:`Verdict`:

- every intent that gates the session (``[gate] intents`` in assay.toml and
  the session's ``gate bind`` record) must be ready for review, by the same
  report ``work check`` gives; an intent that is not ready blocks with the
  report's next actions for it, numbered, literal commands included;
- an active loop of the project blocks until its rounds are done (a paused
  loop waits for a person and does not);
- the claim check: when the agent's last message claims success (see
  :mod:`assay.gate.claim`) for a ready intent, every machine run its results
  cite must have run on the current workspace (the git fingerprint assay
  observes now equals the one observed when the run ended), and at least one
  result must rest on a machine run at all. Otherwise it blocks, naming the
  runs to redo. Outside a git work tree the workspace cannot be compared;
  the verdict says so (``workspace.status``) and only the rest is checked.

The reason is bounded to :data:`MAX_REASON_CHARS` characters; what does
not fit is counted, with the command that lists it all.

:func:`settle` turns a verdict into a decision under the session's retry
cap: the gate blocks at most ``retry_cap`` times in one run of stops (the
stops that follow one another while the harness reports the agent is
continuing because of a stop hook); the next block of that run is a
``gate_gave_up`` instead, and the agent may stop until its next turn. A
stop that is not a continuation starts a new run. :func:`record_stop`
writes the decision as the next version of the session's record.

Imports the base modules, config, the ledger contract, evidence, intent,
loop and its siblings. No model is ever called.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.canonical import digest_bytes, output_text
from assay.config import Project
from assay.errors import AssayError, RevisionConflict
from assay.gate.claim import success_claims
from assay.gate.harness import StopEvent
from assay.gate.records import (
    SESSION_SCHEMA,
    bound_intents,
    session_record_id,
    session_state,
    session_write,
)
from assay.intent.snapshot import ProjectBinding
from assay.ledger.store import Reader, Store

__all__ = [
    "MAX_REASON_CHARS",
    "Gating",
    "Verdict",
    "compose_reason",
    "error_verdict",
    "evaluate",
    "record_stop",
    "settle",
]

MAX_REASON_CHARS = 2000
# Attempts at writing a decision when another hook of the same session wrote first.
_WRITE_ATTEMPTS = 3


@dataclass(frozen=True, slots=True)
class Gating:
    """One thing that gates the stop: an intent, a loop, or a binding that cannot be read."""

    kind: str
    id: str
    ready: bool
    lines: tuple[str, ...] = ()
    facts: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the ledger says about stopping now, before the retry cap is applied.

    ``proof`` is true when something gates the session and all of it is
    shown ready (and any success claim is backed); ``error`` is set when
    assay could not decide at all.
    """

    block: bool
    reason: str | None
    gatings: tuple[Gating, ...] = ()
    claim: Mapping[str, Any] = field(default_factory=dict)
    workspace: Mapping[str, Any] | None = None
    proof: bool = False
    error: Mapping[str, Any] | None = None
    ledger_revision: int | None = None
    # Private versions of what gates the stop, written by the gated principal:
    # never read for the decision, named in it.
    ignored: tuple[Mapping[str, Any], ...] = ()

    def facts(self) -> dict[str, Any]:
        """What a decision records of the verdict (everything but the answer)."""
        def of(kind: str) -> list[dict[str, Any]]:
            return [dict(g.facts, id=g.id) for g in self.gatings if g.kind == kind]

        out = {"read_at_ledger_revision": self.ledger_revision, "intents": of("intent"),
               "loops": of("loop"), "bindings": of("binding"), "claim": dict(self.claim),
               "workspace": self.workspace}
        if any(g.kind == "place" for g in self.gatings):
            out["place"] = of("place")[0]
        if self.ignored:
            out["ignored_private"] = [dict(i) for i in self.ignored]
        return out


def _quote(words: Sequence[str]) -> str:
    return "'assay " + " ".join(words) + "'"


def _report_digest(report: Mapping[str, Any]) -> str:
    # A report of a large intent may hold more values than one input document.
    return digest_bytes(output_text(report).encode("utf-8"))


def _blocking_actions(report: Mapping[str, Any]) -> list[str]:
    actions: list[str] = []
    for issue in report["issues"]:
        if not issue.get("advisory") and issue["action"] not in actions:
            actions.append(issue["action"])
    return actions


def _claimed(claims: Sequence[Mapping[str, str]]) -> str:
    return "Your last message says " + ", ".join(f'"{c["phrase"]}"' for c in claims[:3])


def _machine_runs(report: Mapping[str, Any]) -> dict[tuple[str, int], list[str]]:
    """Each cited run of assay's runner and the requirements whose results cite it."""
    runs: dict[tuple[str, int], list[str]] = {}
    for result in report["actual"]["results"]:
        for ref in result["evidence"]:
            if ref.get("machine_observed") and ref.get("run") is not None:
                runs.setdefault((ref["id"], ref["revision"]), []).append(result["requirement_id"])
    return runs


def _claim_lines(reader: Reader, report: Mapping[str, Any], claims: Sequence[Mapping[str, str]],
                 workspace: Mapping[str, Any]) -> tuple[list[str], dict[str, Any]]:
    """Why a ready intent's evidence does not back a success claim ([] when it does)."""
    intent_id = report["intent_record_id"]
    runs = _machine_runs(report)
    facts: dict[str, Any] = {"machine_runs": len(runs), "stale_runs": []}
    if not runs:
        how = [_quote(["evidence", "run", "--for", f"{intent_id}#{r['id']}", "--",
                       r["verify_with"][0]])
               for r in report["plan"]["requirements"] if r.get("verify_with")][:3]
        return [f"{_claimed(claims)}, but no result of {intent_id} rests on a run that assay "
                "observed: every one is a claim. Run the checks with assay and record the "
                "runs: " + ("; ".join(how) if how else
                            f"'assay evidence run --for {intent_id}#REQUIREMENT -- COMMAND'")
                + f", then 'assay work accept --from-run EVIDENCE@REVISION -- {intent_id}'."
                ], facts
    now = workspace.get("workspace_sha256")
    if workspace.get("status") != "observed" or now is None:
        facts["workspace"] = workspace.get("status")
        return [], facts
    lines: list[str] = []
    for (run_id, revision), requirements in sorted(runs.items()):
        record = reader.get(run_id, revision)
        after: Any = None
        if record is not None and record.damage is None and isinstance(record.data, dict):
            after = (record.data.get("workspace") or {}).get("after")
        then = after.get("workspace_sha256") if isinstance(after, dict) else None
        if then == now:
            continue
        facts["stale_runs"].append({"id": run_id, "revision": revision,
                                    "requirements": requirements})
        moved = ""
        if isinstance(after, dict) and after.get("head") and workspace.get("head") and \
                after["head"] != workspace["head"]:
            moved = f" (HEAD moved from {str(after['head'])[:12]} to {str(workspace['head'])[:12]})"
        current = reader.get(run_id)
        upcoming = (current.revision if current is not None else revision) + 1
        rerun = _quote(["evidence", "run", "--for", f"{intent_id}#{requirements[0]}", "--",
                        run_id.partition(":")[2]])
        lines.append(
            f"{_claimed(claims)}, but the files changed after {run_id}@{revision} ran{moved}, "
            f"so it no longer shows that {', '.join(requirements)} of {intent_id} holds. Run it "
            f"again: {rerun}, then record the run it prints (next: {run_id}@{upcoming}): "
            f"'assay work accept --from-run {run_id}@{upcoming} -- {intent_id}'.")
    return lines, facts


def _assess_intent(reader: Reader, binding: ProjectBinding, intent_id: str, source: str,
                   claims: Sequence[Mapping[str, str]],
                   workspace: Callable[[], Mapping[str, Any]]) -> Gating:
    from assay.intent.check import work_check

    facts: dict[str, Any] = {"source": source}
    try:
        report = work_check(reader, binding, intent_id)
    except AssayError as exc:
        facts.update(error=exc.code)
        return Gating("intent", intent_id, False,
                      (f"{intent_id} gates this stop, but {exc.message}.",
                       exc.action or "Record it, or unbind it: 'assay gate bind --replace'."),
                      facts)
    blocking = [i["code"] for i in report["issues"] if not i.get("advisory")]
    facts.update(revision=report["intent_revision"], ready_to_review=report["ready_to_review"],
                 report_sha256=_report_digest(report), issue_codes=blocking)
    if not report["ready_to_review"]:
        count = f"{len(blocking)} blocking issue" + ("" if len(blocking) == 1 else "s")
        head = f"{intent_id} is not ready for review ({count})."
        if claims:
            head = f"{_claimed(claims)}, but {head}"
        steps = [f"  {n}. {action}" for n, action in enumerate(_blocking_actions(report), 1)]
        return Gating("intent", intent_id, False, (head, *steps), facts)
    if not claims:
        return Gating("intent", intent_id, True, (), facts)
    lines, claim_facts = _claim_lines(reader, report, claims, workspace())
    facts["claim_check"] = claim_facts
    return Gating("intent", intent_id, not lines, tuple(lines), facts)


def _assess_loops(reader: Reader, scope: str) -> list[Gating]:
    from assay.loop.session import heads_in

    out = []
    for record in heads_in(reader, scope):
        head = record.data
        status, loop_id = head.get("status"), str(head.get("loopId"))
        if status not in ("active", "paused"):
            continue
        facts = {"status": status, "round": head.get("round"), "revision": record.revision}
        if status == "paused":
            out.append(Gating("loop", loop_id, True, (), facts))
            continue
        line = (f"The loop {loop_id} is active at round {head.get('round')}: finish the round "
                f"and submit it (its handle and guidance: 'assay loop status --loop {loop_id}'), "
                f"or stop the loop: 'assay loop stop --loop {loop_id} --reason WHY'.")
        out.append(Gating("loop", loop_id, False, (line,), facts))
    for record in heads_in(reader, scope, damaged=True):
        loop_id = record.id.partition(":")[2]
        line = (f"The loop {loop_id} cannot be read: its head {record.id} revision "
                f"{record.revision} fails its integrity check, so whether it is still running "
                f"is unknown. Its stored bytes: 'assay get --raw -- {record.id}'; the ledger "
                "needs a human to repair it.")
        out.append(Gating("loop", loop_id, False, (line,),
                           {"status": "unreadable", "revision": record.revision}))
    return out


def compose_reason(lines: Sequence[str], check_ids: Sequence[str]) -> str:
    """The reason the agent reads, at most :data:`MAX_REASON_CHARS` characters.

    Whole lines only (a line longer than half the bound is cut with an
    ellipsis); what does not fit is counted, with the read that has it all.
    """
    head = "The stop gate (assay) found the work not shown ready. Keep going:"
    checks = " and ".join(_quote(["work", "check", "--", i]) for i in check_ids[:2])
    tail = f"Check again with {checks}." if check_ids else ""
    out = [head]
    room = MAX_REASON_CHARS - len(head) - len(tail) - 2
    for index, line in enumerate(lines):
        if len(line) > MAX_REASON_CHARS // 2:
            line = line[:MAX_REASON_CHARS // 2] + "..."
        left = len(lines) - index
        more = (f"({left} more lines left out; see the whole list with {checks}.)" if checks
                else f"({left} more lines left out.)")
        if len(line) + 1 + len(more) + 1 > room:
            out.append(more)
            return "\n".join(out)
        out.append(line)
        room -= len(line) + 1
    if tail:
        out.append(tail)
    return "\n".join(out)


def _claim_facts(message: str | None) -> tuple[list[dict[str, str]], dict[str, Any]]:
    if message is None:
        return [], {"message": "absent", "claims": []}
    claims = success_claims(message)
    return claims, {"message": "present", "message_chars": len(message),
                    "message_sha256": digest_bytes(message.encode("utf-8", "replace")),
                    "claims": claims}


def evaluate(reader: Reader, project: Project, principal: str, event: StopEvent) -> Verdict:
    """The verdict on ``event`` from one ledger snapshot (reads the workspace at most once)."""
    from assay.evidence.git import observe

    binding = ProjectBinding(root=str(project.root), scope=project.scope,
                             admitted_scopes=tuple(project.admitted_scopes), principal=principal)
    claims, claim = _claim_facts(event.message)
    seen: dict[str, Any] = {}

    def workspace() -> Mapping[str, Any]:
        if "now" not in seen:
            seen["now"] = observe(project.root, ignore=project.evidence_ignore).summary(limit=0)
        now: Mapping[str, Any] = seen["now"]
        return now

    gatings: list[Gating] = []
    for intent_id, source in bound_intents(reader, project.gate.intents, event.session_id):
        if source == "binding_unreadable":
            line = (f"The binding {intent_id} is damaged, so the intents it binds are unknown: "
                    f"'assay gate bind --replace --session {event.session_id} -- INTENT' binds "
                    "them again.")
            gatings.append(Gating("binding", intent_id, False, (line,), {"source": source}))
            continue
        gatings.append(_assess_intent(reader, binding, intent_id, source, claims, workspace))
    gatings.extend(_assess_loops(reader, project.scope))
    space = None
    if "now" in seen:
        space = {k: seen["now"].get(k) for k in ("status", "head", "workspace_sha256",
                                                 "dirty_count")}
    waiting = [g for g in gatings if not g.ready]
    if not waiting:
        return Verdict(False, None, tuple(gatings), claim, space, proof=bool(gatings),
                       ledger_revision=reader.ledger_revision)
    lines = [line for g in waiting for line in g.lines]
    ids = [g.id for g in waiting if g.kind == "intent"]
    return Verdict(True, compose_reason(lines, ids), tuple(gatings), claim, space,
                   ledger_revision=reader.ledger_revision)


def error_verdict(error: AssayError, on_error: str) -> Verdict:
    """The verdict when assay could not decide: block (the default) or allow, by ``on_error``."""
    what = {"code": error.code, "message": error.message}
    if on_error == "allow":
        return Verdict(False, None, error=what)
    line = f"assay could not decide whether the work is ready: {error.message}"
    if error.action:
        line += f" {error.action}"
    return Verdict(True, compose_reason([line], []), error=what)


def settle(verdict: Verdict, state: Mapping[str, Any] | None, event: StopEvent, cap: int,
           sequence: int) -> dict[str, Any]:
    """Decision number ``sequence`` on ``verdict`` under the retry cap, given the session's last
    state.

    Returns the session record's next data (without ids): ``decision``
    (``event``, ``answer`` block|allow, ``reason``), ``run`` and ``gave_up``.
    """
    state = state or {}
    run = dict(state.get("run") or {"blocks": 0, "gave_up": False}) if event.continuing \
        else {"blocks": 0, "gave_up": False}
    gave_up = state.get("gave_up")
    answer, reason = "allow", verdict.reason
    if run["gave_up"]:
        name = "gate_allowed"
        reason = ("The gate gave up earlier in this run of stops; the agent may stop until its "
                  "next turn.")
    elif verdict.block and run["blocks"] >= cap:
        name = "gate_gave_up"
        run["gave_up"] = True
        gave_up = {"sequence": sequence, "blocks": run["blocks"],
                   "intents": [g.id for g in verdict.gatings if g.kind == "intent"],
                   "reason": verdict.reason}
    elif verdict.block:
        name, answer = ("gate_error" if verdict.error else "gate_blocked"), "block"
        run["blocks"] += 1
    else:
        name = "gate_error" if verdict.error else "gate_allowed"
        reason = verdict.reason or _allowed_because(verdict)
        if verdict.proof:
            gave_up = None
    decision = {"event": name, "answer": answer, "reason": reason, "cap": cap,
                "error": dict(verdict.error) if verdict.error else None,
                "stop": event.to_dict(), **verdict.facts()}
    return {"decision": decision, "run": run, "gave_up": gave_up}


def _allowed_because(verdict: Verdict) -> str:
    if verdict.error:
        return "assay could not decide, and [gate] on_error is allow."
    if not verdict.gatings:
        return "Nothing gates this session: no intent is bound and no loop is active."
    return "Every intent and loop that gates this session is shown ready."


def record_stop(store: Store, project: Project, event: StopEvent,
                verdict: Verdict) -> tuple[dict[str, Any], Any]:
    """Settle ``verdict`` against the session's record and write it; return (data, receipt).

    Compare-and-set on the session record: when another hook of the same
    session wrote first, the state is read again and the decision settled
    again (up to three times, then the conflict is raised).
    """
    record_id = session_record_id(event.session_id, event.agent_id)
    for attempt in range(_WRITE_ATTEMPTS):
        with store.reader() as reader:
            record = reader.get(record_id)
        sequence = (record.revision if record is not None else 0) + 1
        data = {"schema": SESSION_SCHEMA, "harness": event.harness,
                "session_id": event.session_id, "agent_id": event.agent_id, "sequence": sequence,
                **settle(verdict, session_state(record), event, project.gate.retry_cap, sequence)}
        try:
            receipt = store.put(session_write(project.scope, record_id, record, data))
        except RevisionConflict:
            if attempt + 1 == _WRITE_ATTEMPTS:
                raise
            continue
        return data, receipt
    raise AssertionError("unreachable")  # pragma: no cover

