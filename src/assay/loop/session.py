"""Loop sessions in the ledger: the head record, leases, start, resume, stop, status.

Records (all in the project's scope):

- ``loop:<loopId>``: the head (``origin="derived"``). It holds the
  immutable operator acceptance, the limits, the status and stop reason,
  the held attempt (session, round, attempt, transaction, prompt artifact,
  guidance, a reference to the git boundary the round started from) and the
  compiled facts of the held round.
- ``loop:<loopId>:round:1:before``: round 1's git boundary
  (``origin="machine"``); later rounds start from the ``after`` boundary in
  the previous round's observation record. Every advance is a compare-and-set on its revision.
- ``loop-lease:<loopId>``: who may advance the loop right now
  (``origin="derived"``): ``{holder, session_id, deadline_unix_ms}``. A
  lease lasts ``lease_seconds`` (30 s) and is renewed every
  ``renew_seconds`` (10 s) while its holder works; an expired lease may be
  taken over. Acquiring is a compare-and-set, so of two processes at most
  one holds it; the other gets ``lease_conflict``.
- round transactions and rejections are written by :mod:`assay.loop.engine`.

The submission handle ``{sessionId, roundId, transactionId}`` is derived
from the head on every response; it grants nothing by itself: the lease and
an exact comparison with the held attempt do.

Imports the base modules, config, the ledger contract, evidence and its
siblings.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from assay.config import Project
from assay.errors import AssayError, ConflictError, RevisionConflict, UsageError, pointer
from assay.evidence.git import observe as observe_git
from assay.ids import content_id
from assay.ledger.store import Reader, Record, Store, Write
from assay.loop import identity
from assay.loop.checkpoint import auto_checkpoint
from assay.loop.contract import capable_commands
from assay.loop.gate import git_to_dict
from assay.loop.guidance import contract_requirement, guidance
from assay.loop.policy import Limits
from assay.loop.prompt import PromptRequest, compile_prompt
from assay.loop.state import initial_facts

__all__ = [
    "HEAD_SCHEMA",
    "Lease",
    "handle_of",
    "heads_in",
    "load_head",
    "mismatch_error",
    "missing_loop",
    "pause",
    "prepare_held",
    "prepared_view",
    "refuse_paused",
    "resolve_loop",
    "resume",
    "round_gates",
    "session_not_found",
    "start",
    "status",
    "stop",
    "stopped_error",
    "terminal_event",
    "terminal_write",
]

HEAD_SCHEMA = "assay.loop.v1"
TASK_LIMIT = 2000
CRITERION_LIMIT = 500
PLAN_LIMIT = 20_000
MAX_CRITERIA = 20


def now_text() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _now_ms() -> int:
    return int(time.time() * 1000)


def heads_in(reader: Reader, scope: str | None, *, damaged: bool = False) -> list[Record]:
    """Every loop head (of ``scope``, when given) one open reader sees, ordered by id.

    A head whose stored data fails its integrity check is left out, so one
    damaged loop never hides the others; with ``damaged`` the damaged heads
    are returned instead (their data cannot be read: only id and revision).
    """
    found = reader.find(scopes=[scope] if scope else None, kind="loop", data_field=("schema", HEAD_SCHEMA),
                        limit=10_000)
    heads = [r for r in found if r.id.count(":") == 1]
    if damaged:
        return [r for r in heads if not r.is_intact]
    return [r for r in heads if r.is_intact and isinstance(r.data, dict)
            and r.data.get("schema") == HEAD_SCHEMA]


def _listing(heads: Sequence[Record], damaged: Sequence[Record] = ()) -> list[dict[str, Any]]:
    """Each loop's id, status and stop reason; a damaged head's status is ``unreadable``."""
    return [{"loopId": r.data["loopId"], "status": r.data["status"],
             "stopReason": r.data.get("stopReason")} for r in heads] + [
        {"loopId": r.id.partition(":")[2], "status": "unreadable",
         "stopReason": f"record {r.id} revision {r.revision} fails its integrity check"}
        for r in damaged]


def _named(loops: Sequence[Mapping[str, Any]]) -> str:
    return ", ".join(f"{x['loopId']} ({x['status']}"
                     + (f": {x['stopReason']}" if x.get("stopReason") else "") + ")"
                     for x in loops[:20]) + (f" and {len(loops) - 20} more" if len(loops) > 20
                                             else "")


def missing_loop(store: Store, loop_id: str, *, scope: str | None,
                 code: str = "session_not_found") -> AssayError:
    """The error for a loop that is not there: it names the loop asked for and those that are.

    ``session_not_found`` when a submission handle named it, ``state_unavailable``
    when a read or an operator command named it by id.
    """
    with store.reader() as reader:
        listing = _listing(heads_in(reader, scope), heads_in(reader, scope, damaged=True))
    return session_not_found(loop_id, listing, code=code)


def session_not_found(loop_id: str, loops: Sequence[Mapping[str, Any]] | None = None, *,
                      code: str = "session_not_found") -> AssayError:
    """``code`` for ``loop_id``, naming ``loops`` (the ones that exist) when they are known."""
    there = ("" if loops is None else f"the loops here: {_named(loops)}" if loops
             else "this project has no loop")
    asked = f"no loop {loop_id!r} in this project" if loop_id else ""
    return AssayError("; ".join(p for p in (asked, there) if p), code=code,
                      details={"loopId": loop_id or None,
                               "loops": None if loops is None else list(loops)},
                      action=("Name one of the loops listed with --loop." if loops
                              else "Start one with 'assay loop start --task ...'."))


def load_head(store: Store, loop_id: str, *, scope: str | None = None,
              code: str = "session_not_found") -> Record:
    """The current head record of ``loop_id`` (:func:`missing_loop` when absent)."""
    with store.reader() as reader:
        record = reader.get(identity.head_id(loop_id))
    if record is None or not isinstance(record.data, dict) or record.data.get("schema") != HEAD_SCHEMA:
        raise missing_loop(store, loop_id, scope=scope, code=code)
    return record


def resolve_loop(store: Store, scope: str, loop_id: str | None, *,
                 must_exist: bool = False) -> str:
    """``loop_id`` as given, else the one live loop, else the only loop.

    A live loop is active or paused. With ``must_exist`` a named loop that
    is not there is ``state_unavailable`` naming it and the loops that are;
    with no loop at all the answer is ``state_unavailable``; when several
    loops could be meant it is ``invalid_argument`` naming each of them (with
    its status and stop reason), so a stopped loop can be picked by id.
    """
    if loop_id is not None:
        if not identity.LOOP_ID.fullmatch(loop_id):
            raise UsageError(f"{loop_id!r} is not a loop id", code="invalid_argument",
                             pointer="/loop")
        if must_exist:
            load_head(store, loop_id, scope=scope, code="state_unavailable")
        return loop_id
    with store.reader() as reader:
        heads, damaged = heads_in(reader, scope), heads_in(reader, scope, damaged=True)
    live = [r for r in heads if r.data["status"] in ("active", "paused")]
    if not damaged:  # a damaged head might be live: never choose past it
        if len(live) == 1:
            return str(live[0].data["loopId"])
        if not live and len(heads) == 1:
            return str(heads[0].data["loopId"])
        if not heads:
            raise missing_loop(store, "", scope=scope, code="state_unavailable")
    loops = _listing(live or heads, damaged)
    what = (f"{len(live)} loops are live here" if live
            else f"no loop is active here and {len(heads)} have stopped")
    if damaged:
        what += f", and {len(damaged)} cannot be read"
    raise UsageError(f"{what}; name one with --loop: {_named(loops)}", code="invalid_argument",
                     pointer="/loop", details={"loops": _listing(heads, damaged)},
                     action="Pass --loop with one of the ids listed.")


def mismatch_error(head: Mapping[str, Any], handle: Mapping[str, str] | None = None
                   ) -> AssayError:
    """``submission_handle_mismatch`` with the current handle in its details."""
    current = handle_of(head)
    details: dict[str, Any] = {"loopId": head["loopId"], "submissionHandle": current,
                               "sessionId": head.get("sessionId")}
    if head["status"] != "active":
        details["stopReason"] = head.get("stopReason")
    return ConflictError(
        "the handle no longer names the held attempt"
        + (f" (the loop stopped: {head.get('stopReason')})" if head["status"] == "stopped"
           else ""),
        code="submission_handle_mismatch", details=details,
        action="Read the current handle with 'assay loop status' (or 'assay loop resume').")


def refuse_paused(head: Mapping[str, Any]) -> None:
    """``loop_paused`` while the operator holds the loop paused."""
    if head["status"] == "paused":
        raise ConflictError(f"loop {head['loopId']!r} is paused; nothing is accepted until it "
                            "is resumed", code="loop_paused",
                            details={"loopId": head["loopId"],
                                     "pausedBy": (head.get("pause") or {}).get("principal"),
                                     "reason": (head.get("pause") or {}).get("reason")},
                            action=f"Resume it: 'assay loop resume --loop {head['loopId']}'.")


def handle_of(head: Mapping[str, Any]) -> dict[str, str] | None:
    """The submission handle of the held attempt (None when the loop stopped)."""
    if head["status"] != "active" or head.get("held") is None:
        return None
    return {"sessionId": head["sessionId"],
            "roundId": identity.round_id(head["loopId"], head["round"]),
            "transactionId": head["held"]["transactionId"]}


def prepare_held(*, loop_id: str, session_id: str, branch_id: str, round_number: int,
                 attempt: int, facts: Mapping[str, Any], limits: Limits, commands: Sequence[Any],
                 context_mode: str, context_reason: str, before: Mapping[str, Any] | None,
                 rejection_notice: str = "", plan: str | None = None,
                 checkpoints: Sequence[Mapping[str, Any]] = (), instruction: str | None = None,
                 checkpoint_warning: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Compile the prompt of one attempt and bundle what a submission is judged against.

    ``before`` references the stored git boundary the round started from:
    ``{id, field}`` names a record and the field holding the observation.
    ``checkpoints`` are the CheckpointRefs the attempt holds (the round's
    automatic ``before`` checkpoint and any ``mid`` ones); they are committed
    with the round.
    """
    requirement = contract_requirement(facts, commands, round_number, limits.max_rounds)
    request = PromptRequest(
        loop_id=loop_id, round_id=identity.round_id(loop_id, round_number), round=round_number,
        attempt=attempt, max_rounds=limits.max_rounds, facts=facts, context_mode=context_mode,
        context_reason=context_reason, contract_commands=tuple(sorted(capable_commands(commands))),
        contract_requirement=requirement, rejection_notice=rejection_notice, plan=plan,
        instruction=(instruction or "").strip() or None)
    artifact = compile_prompt(request)
    return {
        "transactionId": identity.transaction_id(loop_id, round_number, attempt, session_id,
                                                 branch_id),
        "prompt": artifact,
        "promptInputs": request.inputs(),
        "guidance": guidance(facts, commands, round_number, limits.max_rounds, artifact),
        "before": dict(before) if before is not None else None,
        "checkpoints": [dict(c) for c in checkpoints],
        "checkpointWarning": dict(checkpoint_warning) if checkpoint_warning else None,
    }


def limits_of(head: Mapping[str, Any]) -> Limits:
    lim = head["limits"]
    return Limits(max_rounds=lim["maxRounds"], stall_rounds=lim["stallRounds"],
                  max_rejections=lim["maxRejections"],
                  max_active_constraints=lim["maxActiveConstraints"],
                  lease_seconds=lim["leaseMs"] / 1000, renew_seconds=lim["renewMs"] / 1000,
                  backtrack_after=int(lim.get("backtrackAfter", 0)),
                  ladder_terminate=int(lim.get("ladderTerminate", 3)),
                  violation_rounds=int(lim.get("violationRounds", 3)))


def terminal_event(head: Mapping[str, Any], stop_reason: str,
                   stop_detail: str | None = None) -> dict[str, Any]:
    """The LoopTerminalEvent of a loop that stops now (``stopDetail`` says why, when known)."""
    facts = head["facts"]
    posture = facts.get("last_posture")
    return {
        "loopId": head["loopId"],
        "task": head["operatorAcceptance"]["task"],
        "completed": stop_reason == "completed",
        "machineBackedSuccess": posture["machineBackedSuccess"] if posture else None,
        "evidencePosture": posture["status"] if posture else None,
        "stopReason": stop_reason,
        "stopDetail": stop_detail,
        "roundsCompleted": head["round"],
        "roundCursor": head["round"],
        "committedRounds": facts["committed_rounds"],
        "machineBackedSuccessTrajectory": list(facts.get("machine_backed", [])),
    }


def terminal_write(scope: str, head: Mapping[str, Any]) -> Write:
    """The terminal event as its own record, written once, in the batch that stops the loop."""
    return Write(id=identity.terminal_id(head["loopId"]), data={"type": "terminal",
                 **head["terminal"], "branchId": head.get("branchId"), "stoppedAt": now_text()},
                 scope=scope, origin="derived", expect_revision=0)


def prepared_view(head: Mapping[str, Any], *, warnings: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """What start, resume, a stale next and a continuing next return about the held round."""
    held = head.get("held")
    out: dict[str, Any] = {
        "loopId": head["loopId"],
        "status": head["status"],
        "stopReason": head.get("stopReason"),
        "round": head["round"],
        "attempt": head["attempt"],
        "roundId": identity.round_id(head["loopId"], head["round"]),
        "submissionHandle": handle_of(head),
        "prompt": held["prompt"]["renderedPrompt"] if held else None,
        "promptArtifact": ({k: v for k, v in held["prompt"].items() if k != "renderedPrompt"}
                           if held else None),
        "guidance": held["guidance"] if held else None,
        "terminal": head.get("terminal"),
        "checkpoints": list(held.get("checkpoints", [])) if held else [],
        "pendingRecovery": (head.get("recovery")
                            if (head.get("recovery") or {}).get("status") == "pending" else None),
        "warnings": [dict(w) for w in warnings],
    }
    if held and held.get("checkpointWarning"):
        out["warnings"].append({"code": held["checkpointWarning"]["code"],
                                "message": "no checkpoint for this round: "
                                           + held["checkpointWarning"]["message"]})
    return out


# ------------------------------------------------------------------ leases

class Lease:
    """A held lease on one loop, renewed in a background thread until released.

    The renewal thread writes through its own store (``open_store``), so the
    caller's store is never shared between threads. :attr:`revision` is the
    lease record's revision the final commit must expect; :attr:`lost` is set
    when a renewal found the lease taken (the final commit then fails its
    compare-and-set and becomes ``lease_conflict``).
    """

    def __init__(self, store: Store, *, loop_id: str, scope: str, session_id: str,
                 limits: Limits, open_store: Callable[[], Store] | None = None) -> None:
        self.store = store
        self.loop_id = loop_id
        self.scope = scope
        self.session_id = session_id
        self.limits = limits
        self.holder = "h-" + secrets.token_hex(8)
        self.revision = 0
        self.lost = False
        self._open_store = open_store
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def _data(self, holder: str | None) -> dict[str, Any]:
        deadline = _now_ms() + int(self.limits.lease_seconds * 1000) if holder else 0
        return {"loopId": self.loop_id, "holder": holder, "session_id": self.session_id,
                "deadline_unix_ms": deadline}

    def acquire(self) -> Lease:
        """Take the lease or raise ``lease_conflict`` (another live holder)."""
        lid = identity.lease_id(self.loop_id)
        with self.store.reader() as reader:
            current = reader.get(lid)
        if current is not None:
            data = current.data
            if data.get("holder") and data.get("deadline_unix_ms", 0) > _now_ms():
                raise _lease_conflict(self.loop_id, data)
        try:
            receipt = self.store.put(Write(
                id=lid, data=self._data(self.holder), scope=self.scope, origin="derived",
                expect_revision=current.revision if current is not None else 0))
        except RevisionConflict:
            raise _lease_conflict(self.loop_id, None) from None
        self.revision = receipt.revision
        if self._open_store is not None and self.limits.renew_seconds > 0:
            self._thread = threading.Thread(target=self._renew, name=f"assay-lease-{self.loop_id}",
                                            daemon=True)
            self._thread.start()
        return self

    def _renew(self) -> None:
        assert self._open_store is not None
        store = self._open_store()
        try:
            while not self._stop.wait(self.limits.renew_seconds):
                with self._lock:
                    if self._stop.is_set():
                        return
                    try:
                        receipt = store.put(Write(
                            id=identity.lease_id(self.loop_id), data=self._data(self.holder),
                            scope=self.scope, origin="derived", expect_revision=self.revision))
                        self.revision = receipt.revision
                    except AssayError:
                        self.lost = True
                        return
        finally:
            store.close()

    def halt(self) -> None:
        """Stop renewing (the revision is then stable for the final commit)."""
        with self._lock:
            self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def release_write(self) -> Write:
        """The write that releases the lease, for the caller's commit batch."""
        self.halt()
        return Write(id=identity.lease_id(self.loop_id), data=self._data(None), scope=self.scope,
                     origin="derived", expect_revision=self.revision)

    def release(self) -> None:
        """Release on its own (best effort: a lease that moved is left to expire)."""
        try:
            self.store.put(self.release_write())
        except AssayError:
            pass


def _lease_conflict(loop_id: str, data: Mapping[str, Any] | None) -> ConflictError:
    details: dict[str, Any] = {"loopId": loop_id}
    if data is not None:
        details["sessionId"] = data.get("session_id")
        details["deadline_unix_ms"] = data.get("deadline_unix_ms")
    return ConflictError(f"another process is advancing loop {loop_id!r} right now",
                         code="lease_conflict", retryable=True, details=details,
                         action="Wait for it to finish, then read 'assay loop status' for the "
                                "current handle.")


# ------------------------------------------------------------------ start

def _texts(values: Sequence[str], name: str, limit: int, most: int) -> list[str]:
    out: list[str] = []
    if len(values) > most:
        raise UsageError(f"at most {most} --{name} values", code="invalid_argument",
                         pointer=pointer(name))
    for index, value in enumerate(values):
        text = value.strip() if isinstance(value, str) else ""
        if not text or len(text) > limit:
            raise UsageError(f"--{name} values are non-blank and at most {limit} characters",
                             code="invalid_argument", pointer=pointer(name, index))
        if text in out:
            raise UsageError(f"--{name} {text!r} is given twice", code="invalid_argument",
                             pointer=pointer(name, index))
        out.append(text)
    return out


def start(store: Store, project: Project, *, task: str, criteria: Sequence[str],
          constraints: Sequence[str], limits: Limits, loop_id: str | None = None,
          plan: str | None = None, instruction: str | None = None, principal: str = "agent",
          no_criteria: bool = False) -> dict[str, Any]:
    """Create the loop and its round-1 prompt; return the prepared view.

    Operator acceptance (task, criteria, hard constraints) is immutable: a
    start naming an existing loop with other acceptance is
    ``operator_acceptance_conflict``; with the same acceptance it is
    ``loop_exists`` (stopped) or ``loop_already_running`` (active). An
    acceptance with neither a criterion nor a constraint could never be
    judged, so it is ``acceptance_empty`` unless ``no_criteria`` says so on
    purpose. ``principal`` is recorded as the loop's agent principal: it may
    not approve the loop's own gates.
    """
    task = task.strip() if isinstance(task, str) else ""
    if not task or len(task) > TASK_LIMIT:
        raise UsageError(f"--task is required: non-blank, at most {TASK_LIMIT} characters",
                         code="invalid_argument", pointer="/task")
    criteria = _texts(criteria, "criterion", CRITERION_LIMIT, MAX_CRITERIA)
    constraints = _texts(constraints, "constraint", CRITERION_LIMIT, limits.max_active_constraints)
    if no_criteria and criteria:
        raise UsageError("--no-criteria says the loop has no success criterion, but --criterion "
                         "names one", code="invalid_argument", pointer="/no_criteria",
                         action="Drop --no-criteria, or drop the criteria.")
    if not criteria and not constraints and not no_criteria:
        raise UsageError(
            "a loop needs operator acceptance to be judged against: no --criterion and no "
            "--constraint was given, and acceptance cannot be added later",
            code="acceptance_empty", pointer="/criterion",
            action=("Add --criterion TEXT (what done means) and --constraint TEXT, or pass "
                    "--no-criteria to start a loop with no success criterion on purpose."))
    if plan is not None and len(plan) > PLAN_LIMIT:
        raise UsageError(f"the plan is longer than {PLAN_LIMIT} characters",
                         code="invalid_argument", pointer="/plan")
    acceptance = {"task": task, "success_criteria": criteria, "hard_constraints": constraints}
    loop_id = loop_id or content_id("lp", task)
    if not identity.LOOP_ID.fullmatch(loop_id):
        raise UsageError(f"{loop_id!r} is not a loop id ([a-z0-9][a-z0-9._-]{{0,63}})",
                         code="invalid_argument", pointer="/loop")

    def existing(record: Record) -> AssayError:
        data = record.data
        if data.get("operatorAcceptance") != acceptance:
            return ConflictError(
                f"loop {loop_id!r} already exists with other operator acceptance; acceptance is "
                "immutable", code="operator_acceptance_conflict",
                details={"loopId": loop_id, "operatorAcceptance": data.get("operatorAcceptance")},
                action="Start a new loop under another --loop id, or continue this one.")
        if data.get("status") == "active":
            return ConflictError(f"loop {loop_id!r} is already running", code="loop_already_running",
                                 details={"loopId": loop_id, "sessionId": data.get("sessionId")},
                                 action="Continue it: 'assay loop resume --loop " + loop_id + "'.")
        return ConflictError(f"loop {loop_id!r} already exists and has stopped",
                             code="loop_exists", details={"loopId": loop_id,
                                                          "stopReason": data.get("stopReason")},
                             action="Start a new loop under another --loop id.")

    hid = identity.head_id(loop_id)
    with store.reader() as reader:
        current = reader.get(hid)
    if current is not None:
        raise existing(current)
    session_id = "s-" + secrets.token_hex(8)
    facts = initial_facts(task, criteria, constraints)
    boundary_id = identity.round_part_id(loop_id, 1, "before")
    observation = observe_git(project.root)
    boundary = {"type": "boundary", "loopId": loop_id, "round": 1,
                "boundary": git_to_dict(observation)}
    before = {"id": boundary_id, "field": "boundary"}
    refs, checkpoint_writes, warning = auto_checkpoint(
        store, project, loop_id=loop_id, round_number=1, branch_id="main",
        observation=observation, created_at=now_text())
    held = prepare_held(loop_id=loop_id, session_id=session_id, branch_id="main", round_number=1,
                        attempt=1, facts=facts, limits=limits,
                        commands=project.evidence_commands, context_mode="fresh_invocation",
                        context_reason="first_round", before=before, plan=plan,
                        checkpoints=refs, instruction=instruction,
                        checkpoint_warning=warning)
    head: dict[str, Any] = {
        "schema": HEAD_SCHEMA,
        "type": "loop",
        "loopId": loop_id,
        "createdAt": now_text(),
        "agentPrincipal": principal,
        "operatorAcceptance": acceptance,
        "plan": plan,
        "limits": {"maxRounds": limits.max_rounds, "stallRounds": limits.stall_rounds,
                   "maxRejections": limits.max_rejections,
                   "maxActiveConstraints": limits.max_active_constraints,
                   "leaseMs": int(limits.lease_seconds * 1000),
                   "renewMs": int(limits.renew_seconds * 1000),
                   "backtrackAfter": limits.backtrack_after,
                   "ladderTerminate": limits.ladder_terminate,
                   "violationRounds": limits.violation_rounds},
        "status": "active",
        "stopReason": None,
        "branchId": "main",
        "lineage": [{"branchId": "main", "fromRound": 1, "parent": None, "directive": None}],
        "recovery": None,
        "recoveryCount": 0,
        "sessionId": session_id,
        "round": 1,
        "attempt": 1,
        "consecutiveRejections": 0,
        "rejectionChecks": [],
        "ladder": {},
        "lastCommittedRound": None,
        "facts": facts,
        "held": held,
        "terminal": None,
    }
    try:
        store.put_many([
            *checkpoint_writes,
            Write(id=boundary_id, data=boundary, scope=project.scope, origin="machine",
                  expect_revision=0),
            Write(id=hid, data=head, scope=project.scope, origin="derived", expect_revision=0)])
    except RevisionConflict:
        raise existing(load_head(store, loop_id)) from None
    return prepared_view(head)


# ------------------------------------------------------------------ read / stop / pause / resume

def stopped_error(head: Mapping[str, Any]) -> AssayError:
    """``loop_stopped``: an operation that needs a live loop named one that stopped."""
    return AssayError(f"loop {head['loopId']!r} has stopped ({head.get('stopReason')})",
                      code="loop_stopped", details={"loopId": head["loopId"],
                                                    "stopReason": head.get("stopReason")},
                      action="Start a new loop under another --loop id.")


def round_gates(store: Store, head: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The gate decisions recorded in the held round, by gate id."""
    prefix = f"loop:{head['loopId']}:gate:"
    with store.reader() as reader:
        found = reader.find(prefix=prefix, limit=1000)
    return [dict(r.data) for r in found if r.id.startswith(prefix)
            and isinstance(r.data, dict) and r.data.get("round") == head["round"]
            and r.data.get("branchId", head.get("branchId")) == head.get("branchId")]


def status(store: Store, loop_id: str) -> dict[str, Any]:
    """The loop's state and current handle (read-only)."""
    record = load_head(store, loop_id, code="state_unavailable")
    head = record.data
    with store.reader() as reader:
        lease = reader.get(identity.lease_id(loop_id))
    lease_live = bool(lease is not None and lease.data.get("holder")
                      and lease.data.get("deadline_unix_ms", 0) > _now_ms())
    held = head.get("held")
    facts = head["facts"]
    return {
        "loopId": loop_id,
        "status": head["status"],
        "stopReason": head.get("stopReason"),
        "round": head["round"],
        "attempt": head["attempt"],
        "roundId": identity.round_id(loop_id, head["round"]),
        "committedRounds": facts["committed_rounds"],
        "consecutiveRejections": head["consecutiveRejections"],
        "ladder": dict(head.get("ladder", {})),
        "submissionHandle": handle_of(head),
        "promptHash": held["prompt"]["promptHash"] if held else None,
        "objective": facts["objective"],
        "operatorAcceptance": head["operatorAcceptance"],
        "agentPrincipal": head.get("agentPrincipal"),
        "guidance": held["guidance"] if held else None,
        "gates": round_gates(store, head) if held else [],
        "pause": head.get("pause") if head["status"] == "paused" else None,
        "lastPosture": facts.get("last_posture"),
        "branchId": head.get("branchId"),
        "pendingRecovery": (head.get("recovery")
                            if (head.get("recovery") or {}).get("status") == "pending" else None),
        "terminal": head.get("terminal"),
        "lease": {"held": lease_live,
                  "sessionId": lease.data.get("session_id") if lease_live and lease else None},
        "ledgerRevision": record.ledger_revision,
    }


def _commit_head(store: Store, project: Project, record: Record, head: Mapping[str, Any],
                 lease: Lease, *extra: Write) -> None:
    """Write the head (compare-and-set) and release the lease, or ``lease_conflict``."""
    try:
        store.put_many([*extra, Write(id=record.id, data=dict(head), scope=project.scope,
                                      origin="derived", expect_revision=record.revision),
                        lease.release_write()])
    except RevisionConflict:
        lease.release()
        raise _lease_conflict(head["loopId"], None) from None


def stop(store: Store, project: Project, loop_id: str, *, reason: str | None,
         open_store: Callable[[], Store] | None = None) -> dict[str, Any]:
    """Cancel the loop (``stopReason: cancelled``); a stopped loop is returned as it is."""
    record = load_head(store, loop_id, scope=project.scope, code="state_unavailable")
    head: dict[str, Any] = dict(record.data)
    if head["status"] == "stopped":
        return prepared_view(head) | {"alreadyStopped": True}
    lease = Lease(store, loop_id=loop_id, scope=project.scope, session_id=head["sessionId"],
                  limits=limits_of(head)).acquire()
    head.update({"status": "stopped", "stopReason": "cancelled", "held": None,
                 "cancelReason": (reason or "").strip()[:500] or None})
    head["terminal"] = terminal_event(head, "cancelled", head["cancelReason"])
    _commit_head(store, project, record, head, lease, terminal_write(project.scope, head))
    return prepared_view(head) | {"alreadyStopped": False}


def pause(store: Store, project: Project, loop_id: str, *, reason: str | None,
          principal: str) -> dict[str, Any]:
    """Hold the loop: nothing is submitted, checked or recovered until :func:`resume`.

    A pause is a state of the loop, never a stop reason: the held prompt is
    kept and ``resume`` continues it in a new session. Pausing a paused loop
    returns it as it is; a stopped loop is ``loop_stopped``.
    """
    record = load_head(store, loop_id, scope=project.scope, code="state_unavailable")
    head: dict[str, Any] = dict(record.data)
    if head["status"] == "stopped":
        raise stopped_error(head)
    if head["status"] == "paused":
        return prepared_view(head) | {"alreadyPaused": True}
    lease = Lease(store, loop_id=loop_id, scope=project.scope, session_id=head["sessionId"],
                  limits=limits_of(head)).acquire()
    head.update({"status": "paused", "pause": {"principal": principal, "pausedAt": now_text(),
                                                "reason": (reason or "").strip()[:500] or None}})
    _commit_head(store, project, record, head, lease)
    return prepared_view(head) | {"alreadyPaused": False}


def resume(store: Store, project: Project, loop_id: str, *, invocation_lost: bool,
           instruction: str | None = None) -> dict[str, Any]:
    """Re-anchor the loop in a new session and return the held prompt with its new handle.

    A paused loop becomes active again. With ``invocation_lost`` the same
    round and attempt are recompiled as a clean context (``fresh_invocation`` /
    ``invocation_recovery``).
    """
    record = load_head(store, loop_id, scope=project.scope, code="state_unavailable")
    head: dict[str, Any] = dict(record.data)
    if head["status"] == "stopped":
        raise stopped_error(head)
    limits = limits_of(head)
    session_id = "s-" + secrets.token_hex(8)
    lease = Lease(store, loop_id=loop_id, scope=project.scope, session_id=session_id,
                  limits=limits).acquire()
    old = head["held"]
    if invocation_lost:
        held = prepare_held(loop_id=loop_id, session_id=session_id, branch_id=head["branchId"],
                            round_number=head["round"], attempt=head["attempt"],
                            facts=head["facts"], limits=limits,
                            commands=project.evidence_commands, context_mode="fresh_invocation",
                            context_reason="invocation_recovery", before=old["before"],
                            rejection_notice=head.get("rejectionNotice", ""), plan=head.get("plan"),
                            checkpoints=old.get("checkpoints", []),
                            instruction=(instruction if instruction is not None else
                                         old["prompt"].get("currentUserInstruction")),
                            checkpoint_warning=old.get("checkpointWarning"))
    else:
        held = dict(old)
        held["transactionId"] = identity.transaction_id(loop_id, head["round"], head["attempt"],
                                                        session_id, head["branchId"])
    if head["status"] == "paused":
        head["pauses"] = [*head.get("pauses", []), {**head["pause"], "resumedAt": now_text()}]
    head.update({"sessionId": session_id, "held": held, "status": "active", "pause": None})
    _commit_head(store, project, record, head, lease)
    return prepared_view(head)
