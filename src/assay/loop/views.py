"""Read views of a loop: explain, replay and audit. None of them writes.

- :func:`explain`: why the held (or a committed) prompt looks as it does:
  its density level and the freshness behind it, the context boundary, the
  budget and what was dropped, the coverage proof, working memory counts,
  the contract requirement, a pending recovery, the restorable checkpoints
  and the stop state.
- :func:`replay`: re-derives a prompt from the committed facts and inputs
  stored with it (:meth:`assay.loop.prompt.PromptRequest.from_inputs`) and
  checks that its ``promptHash`` and ``stateHash`` equal the stored ones.
- :func:`audit`: the whole history: the branch lineage, every version of
  every round record (current branch and abandoned) with the contract it
  proposed, rejections with their checks and ladder steps, recovery
  directives with their restore outcomes, gate decisions with their risk and
  approval, pauses, postures and the terminal event. A loop with no
  committed round, rejection, recovery or gate decision has no audit data:
  ``state_unavailable``.

Replay of every prompt and the audit are paged by round: a page covers the
rounds ``from_round`` to ``from_round + limit - 1`` (every item of a round
on the same page), says how many items of later rounds it left out and
which round the next page starts at. Loop-level facts (acceptance, lineage,
pauses, terminal event) come with every page.

Each is deterministic for a ledger revision. Imports the base modules, the
ledger contract and its siblings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assay.errors import AssayError
from assay.ledger.store import Record, Store
from assay.loop import identity
from assay.loop.prompt import PROMPT_SCHEMA_VERSION, PromptRequest, compile_prompt
from assay.loop.recovery import lineage, visible_checkpoints
from assay.loop.session import load_head

__all__ = ["audit", "explain", "replay"]

_CONTEXT_MEANING = {
    "fresh_invocation": "start a new model conversation with only this prompt; the workspace "
                        "and the loop continue",
    "same_round_retry": "repair in the same conversation; the rejection notice says what failed",
}
_MAX_ATTEMPTS = 100


def _round_record(store: Store, loop_id: str, n: int) -> Record | None:
    with store.reader() as reader:
        return reader.get(identity.round_id(loop_id, n))


def _owner(head: Mapping[str, Any], n: int) -> str:
    """The branch of the current lineage that owns round ``n``."""
    owners = [b for b in lineage(head) if b["fromRound"] <= n]
    return str(owners[-1]["branchId"]) if owners else str(head.get("branchId"))


def _source(store: Store, head: Mapping[str, Any], n: int | None, attempt: int | None
            ) -> tuple[str, Mapping[str, Any], Mapping[str, Any], Mapping[str, Any],
                       Mapping[str, Any] | None]:
    """(kind, artifact, inputs, facts, proposal) of one prompt: held, committed or rejected.

    ``proposal`` is the round contract the answer to that prompt proposed
    (None for the held prompt, which has no answer yet).
    """
    loop_id = head["loopId"]
    held = head.get("held")
    last = int(head.get("lastCommittedRound") or 0)
    n = n if n is not None else int(head["round"])
    if held and n == head["round"] and attempt in (None, head["attempt"]):
        return "held", held["prompt"], held["promptInputs"], head["facts"], None
    if attempt is not None:
        with store.reader() as reader:
            rej = reader.get(identity.rejection_id(loop_id, n, attempt))
        if (rej is not None and isinstance(rej.data, dict) and "promptInputs" in rej.data
                and rej.data.get("branchId") == _owner(head, n)):
            return ("rejected", rej.data["prompt"], rej.data["promptInputs"],
                    rej.data["factsBefore"], rej.data["evaluation"].get("round_contract"))
    record = _round_record(store, loop_id, n) if n <= last else None
    if record is not None and (attempt is None or record.data.get("attempt") == attempt):
        return ("committed", record.data["prompt"], record.data["promptInputs"],
                record.data["factsBefore"], record.data.get("proposal"))
    raise AssayError(f"round {n}{f' attempt {attempt}' if attempt else ''} of loop {loop_id} has "
                     "no stored prompt on the current branch", code="invalid_argument",
                     pointer="/attempt" if attempt else "/round",
                     action="See 'assay loop audit' for the rounds and attempts that exist.")


def explain(store: Store, loop_id: str, *, round_number: int | None = None) -> dict[str, Any]:
    """Why the prompt of a round looks as it does (default: the held round)."""
    record = load_head(store, loop_id, code="state_unavailable")
    head = record.data
    if round_number is None:
        round_number = (int(head["round"]) if head.get("held")
                        else int(head.get("lastCommittedRound") or 0) or None)
    if round_number is None:
        raise AssayError("the loop holds no prompt and has no committed round",
                         code="invalid_argument", pointer="/round")
    kind, artifact, inputs, facts, _ = _source(store, head, round_number, None)
    coverage = artifact["coverage"]
    by_kind: dict[str, int] = {}
    for entry in coverage["active"]:
        by_kind[entry["kind"]] = by_kind.get(entry["kind"], 0) + 1
    pending = head.get("recovery") if (head.get("recovery") or {}).get("status") == "pending" \
        else None
    return {
        "loopId": loop_id, "status": head["status"], "stopReason": head.get("stopReason"),
        "branchId": head.get("branchId"), "source": kind, "round": artifact["round"],
        "attempt": artifact["attempt"], "roundId": artifact["roundId"],
        "level": artifact["level"], "levelReason": artifact.get("levelReason"),
        "freshness": artifact.get("freshness"),
        "context": {"mode": artifact["contextMode"], "reason": artifact["contextReason"],
                    "meaning": _CONTEXT_MEANING[artifact["contextMode"]]},
        "budget": artifact["budget"], "renderedChars": artifact["renderedChars"],
        "promptChars": len(artifact["renderedPrompt"]),
        "droppedSections": artifact.get("droppedSections", []),
        "protectedOverflow": artifact.get("protectedOverflow", False),
        "coverage": {"complete": coverage["complete"], "active": len(coverage["active"]),
                     "rendered": len(coverage["rendered"]), "byKind": by_kind},
        "workingMemory": artifact.get("workingMemory"),
        "currentUserInstruction": artifact.get("currentUserInstruction"),
        "contractRequirement": inputs.get("contract_requirement"),
        "recovery": facts.get("recovery"),
        "pendingRecovery": pending,
        "checkpoints": visible_checkpoints(store, head) if head["status"] == "active" else [],
        "warnings": artifact.get("warnings", []),
        "promptHash": artifact["promptHash"], "stateHash": artifact["stateHash"],
        "terminal": head.get("terminal"),
        "ledgerRevision": record.ledger_revision,
    }


def _first_difference(a: str, b: str) -> dict[str, Any] | None:
    left, right = a.splitlines(), b.splitlines()
    for index in range(max(len(left), len(right))):
        x = left[index] if index < len(left) else None
        y = right[index] if index < len(right) else None
        if x != y:
            return {"line": index + 1, "stored": x, "replayed": y}
    return None


def _replay_one(store: Store, head: Mapping[str, Any], n: int, attempt: int | None
                ) -> dict[str, Any]:
    kind, artifact, inputs, facts, proposal = _source(store, head, n, attempt)
    out: dict[str, Any] = {"round": artifact["round"], "attempt": artifact["attempt"],
                           "source": kind, "stored": {"promptHash": artifact["promptHash"],
                                                      "stateHash": artifact["stateHash"]},
                           "proposal": _proposal(proposal)}
    if artifact.get("schemaVersion") != PROMPT_SCHEMA_VERSION:
        return out | {"replayed": None, "match": False, "stateMatch": False,
                      "reason": f"stored with prompt schema {artifact.get('schemaVersion')}; "
                                f"this assay compiles schema {PROMPT_SCHEMA_VERSION}",
                      "firstDifference": None}
    again = compile_prompt(PromptRequest.from_inputs(inputs, facts))
    match = again["promptHash"] == artifact["promptHash"]
    return out | {"replayed": {"promptHash": again["promptHash"],
                               "stateHash": again["stateHash"]},
                  "match": match, "stateMatch": again["stateHash"] == artifact["stateHash"],
                  "reason": None,
                  "firstDifference": None if match else _first_difference(
                      artifact["renderedPrompt"], again["renderedPrompt"])}


def _page(from_round: int, limit: int | None, top: int) -> dict[str, int]:
    """The window of rounds one page covers, and where the next one starts (0: none)."""
    last = top if limit is None else min(top, from_round + limit - 1)
    return {"fromRound": from_round, "toRound": max(last, from_round - 1), "lastRound": top,
            "nextRound": last + 1 if last < top else 0}


def replay(store: Store, loop_id: str, *, round_number: int | None = None,
           attempt: int | None = None, every: bool = False, from_round: int = 1,
           limit: int | None = None) -> dict[str, Any]:
    """Recompile stored prompts from their committed facts and compare the hashes.

    ``every``: every committed round of the current branch, every rejected
    attempt of it and the held prompt, a page of ``limit`` rounds (None:
    all) from ``from_round`` at a time (``window``; ``omitted`` counts the
    rounds and prompts after it, which are found without compiling them).
    """
    record = load_head(store, loop_id, code="state_unavailable")
    head = record.data
    if not every:
        if round_number is None:
            raise AssayError("name a --round (or --all)", code="invalid_argument",
                             pointer="/round", action="assay loop replay --round N")
        one = _replay_one(store, head, round_number, attempt)
        return {"loopId": loop_id, "replays": [one], "match": one["match"],
                "ledgerRevision": record.ledger_revision}
    last = int(head.get("lastCommittedRound") or 0)
    top = max(int(head["round"]), last)
    prompts: list[tuple[int, int | None]] = []
    with store.reader() as reader:
        for n in range(1, top + 1):
            for a in range(1, _MAX_ATTEMPTS):
                rej = reader.get(identity.rejection_id(loop_id, n, a))
                if rej is None:
                    break
                if "promptInputs" in rej.data and rej.data.get("branchId") == _owner(head, n):
                    prompts.append((n, a))
            if n <= last or (head.get("held") and n == head["round"]):
                prompts.append((n, None))
    window = _page(from_round, limit, top)
    shown = [p for p in prompts if window["fromRound"] <= p[0] <= window["toRound"]]
    replays = [_replay_one(store, head, n, a) for n, a in shown]
    later = [p for p in prompts if p[0] > window["toRound"]]
    return {"loopId": loop_id, "replays": replays, "window": window,
            "omitted": {"rounds": top - window["toRound"] if window["nextRound"] else 0,
                        "replays": len(later)},
            "match": all(r["match"] for r in replays), "ledgerRevision": record.ledger_revision}


def _proposal(proposal: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The contract a round proposed, as the views show it (work item first)."""
    if not proposal:
        return None
    return {"id": proposal["id"], "work_item": proposal["work_item"],
            "scope": list(proposal.get("scope", [])),
            "items": [{"id": i["id"], "description": i["description"],
                       "verify_with": list(i["verify_with"])} for i in proposal["items"]],
            "supersedes": (proposal.get("supersedes") or {}).get("contract_id")}


def _round_entry(record: Record, current: set[tuple[str, int]]) -> dict[str, Any]:
    data = record.data
    posture = data.get("evidencePosture") or {}
    receipt = data.get("receipt") or {}
    return {
        "round": data["round"], "revision": record.revision, "branchId": data.get("branchId"),
        "currentBranch": (data.get("branchId"), data["round"]) in current,
        "attempt": data.get("attempt"), "transactionId": data.get("transactionId"),
        "outcome": receipt.get("agent_outcome"),
        "evidencePosture": posture.get("status"),
        "machineBackedSuccess": data.get("machineBackedSuccess"),
        "itemStatuses": data.get("itemStatuses", {}),
        "findings": [f["check"] for f in data.get("findings", [])],
        "contract": data.get("contractDecision"),
        "proposal": _proposal(data.get("proposal")),
        "stopReason": data.get("stopReason"),
        "prompt": {"level": data["prompt"]["level"], "promptHash": data["prompt"]["promptHash"],
                   "contextReason": data["prompt"]["contextReason"]},
        "checkpoints": [c["checkpointId"] for c in data.get("checkpoints", [])],
        "recoveryCheckpoint": receipt.get("recovery_checkpoint"),
        "committedAt": data.get("committedAt"),
    }


def audit(store: Store, loop_id: str, *, from_round: int = 1,
          limit: int | None = None) -> dict[str, Any]:
    """The loop's history (every branch), in order, one page of ``limit`` rounds (None: all).

    See the module docstring. Items belong to a round: round versions and
    rejected attempts to their own, gate decisions to the round they gated,
    recovery directives to the round they restore to. ``omitted`` counts the
    items of the rounds after the page, by kind.
    """
    record = load_head(store, loop_id, code="state_unavailable")
    head = record.data
    line = lineage(head)
    last = int(head.get("lastCommittedRound") or 0)
    # (branch, round) pairs of the current branch: round n belongs to the last
    # lineage entry that starts at or before it.
    current = {(_owner(head, n), n) for n in range(1, last + 1)}
    rounds: list[dict[str, Any]] = []
    rejections: list[dict[str, Any]] = []
    with store.reader() as reader:
        n = 1
        while True:
            versions = reader.history(identity.round_id(loop_id, n))
            if not versions and n > max(last, int(head["round"])):
                break
            for version in versions:
                if isinstance(version.data, dict) and version.data.get("type") == "round":
                    rounds.append(_round_entry(version, current))
            for a in range(1, _MAX_ATTEMPTS):
                rej_versions = reader.history(identity.rejection_id(loop_id, n, a))
                if not rej_versions:
                    break
                for rej in rej_versions:
                    d = rej.data
                    rejections.append({
                        "round": n, "attempt": a, "revision": rej.revision,
                        "branchId": d.get("branchId"),
                        "checks": [c["check"] for c in d.get("checks", [])],
                        "ladder": {c["check"]: c["ladder"] for c in d.get("checks", [])
                                   if "ladder" in c},
                        "details": [{"check": c["check"], "ref": c.get("ref"),
                                     "detail": c["detail"]} for c in d.get("checks", [])],
                        "outcome": (d.get("evaluation") or {}).get("outcome"),
                        "criteria": [{"id": c["id"], "status": c["status"]}
                                     for c in d.get("criteria", [])],
                        "commands": [{"commandId": c["commandId"], "status": c["status"]}
                                     for c in (d.get("evidencePosture") or {}).get(
                                         "commands", [])],
                        "evidencePosture": (d.get("evidencePosture") or {}).get("status"),
                        "proposal": _proposal((d.get("evaluation") or {}).get("round_contract")),
                        "stopReason": d.get("stopReason"),
                        "rejectedAt": d.get("rejectedAt")})
            n += 1
        directives = [r.data for r in reader.find(prefix=f"loop-recovery:{loop_id}:",
                                                  limit=1000)
                      if r.id.startswith(f"loop-recovery:{loop_id}:")]
        gates = [r.data for r in reader.find(prefix=f"loop:{loop_id}:gate:", limit=1000)
                 if r.id.startswith(f"loop:{loop_id}:gate:")]
    if not (rounds or rejections or directives or gates):
        raise AssayError(f"no audit data: loop {loop_id!r} has no committed round, rejected "
                         "attempt, recovery or gate decision yet", code="state_unavailable",
                         details={"loopId": loop_id, "committedRounds": 0, "rejections": 0},
                         action="Submit a round first ('assay loop next'); 'assay loop status' "
                                "shows the held prompt.")
    directives.sort(key=lambda d: (d.get("createdAt", ""), d["directiveId"]))
    gates.sort(key=lambda g: (g["round"], g.get("decidedAt", ""), g["gateId"]))
    top = max([max(last, int(head["round"]))] + [r["round"] for r in rounds]
              + [r["round"] for r in rejections] + [int(g["round"]) for g in gates]
              + [_directive_round(d) for d in directives])
    window = _page(from_round, limit, top)

    def on_page(n: int) -> bool:
        return window["fromRound"] <= n <= window["toRound"]

    def after_page(items: list[Any], round_of: Any) -> int:
        return sum(1 for i in items if round_of(i) > window["toRound"])

    omitted = {"rounds": top - window["toRound"] if window["nextRound"] else 0,
               "round_versions": after_page(rounds, lambda r: r["round"]),
               "rejections": after_page(rejections, lambda r: r["round"]),
               "directives": after_page(directives, _directive_round),
               "gate_decisions": after_page(gates, lambda g: int(g["round"]))}
    rounds = [r for r in rounds if on_page(r["round"])]
    rejections = [r for r in rejections if on_page(r["round"])]
    directives = [d for d in directives if on_page(_directive_round(d))]
    gates = [g for g in gates if on_page(int(g["round"]))]
    return {
        "loopId": loop_id, "status": head["status"], "stopReason": head.get("stopReason"),
        "operatorAcceptance": head["operatorAcceptance"], "branchId": head.get("branchId"),
        "lineage": line, "round": head["round"], "attempt": head["attempt"],
        "committedRounds": head["facts"]["committed_rounds"],
        "rounds": rounds, "rejections": rejections,
        "directives": [{
            "directiveId": d["directiveId"], "origin": d["origin"], "reason": d["reason"],
            "triggerRule": d.get("trigger_rule"), "status": d["status"],
            "target": d["target"], "abandonedRounds": d["abandoned_rounds"],
            "observedSkippedFiles": d["observed_skipped_files"],
            "reportedSkippedFiles": d["reported_skipped_files"],
            "failedRounds": d["failed_rounds"], "parentBranchId": d.get("parentBranchId"),
            "restore": d.get("restore"), "attempts": d.get("attempts", 1),
            "createdAt": d.get("createdAt")} for d in directives],
        "gateDecisions": [{"gateId": g["gateId"], "round": g["round"], "action": g["action"],
                           "decision": g["decision"], "matchedRules": g["matchedRules"],
                           "risk": g.get("risk"), "reasonCodes": g.get("reasonCodes", []),
                           "requestedBy": g.get("requestedBy"), "approval": g.get("approval")}
                          for g in gates],
        "pauses": list(head.get("pauses", [])) + ([head["pause"]] if head.get("pause") else []),
        "pendingRecovery": head.get("recovery")
        if (head.get("recovery") or {}).get("status") == "pending" else None,
        "terminal": head.get("terminal"),
        "window": window,
        "omitted": omitted,
        "ledgerRevision": record.ledger_revision,
    }


def _directive_round(directive: Mapping[str, Any]) -> int:
    """The round a recovery directive belongs to on audit pages: the round it restores to."""
    return int((directive.get("target") or {}).get("round") or 1)
