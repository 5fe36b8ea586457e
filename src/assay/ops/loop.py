"""Loop governor operations: start, next, status, stop, pause, resume, gate-check, approve,
deny, questions, schema, checkpoint, recover, explain, replay, audit.

Handlers import :mod:`assay.loop` lazily so the registry stays cheap to load.
"""

from __future__ import annotations

from typing import Any

from assay.errors import UsageError
from assay.ops import Argument, Bound, Invocation, Result, operation
from assay.ops.bounds import PAGE_FACTS_SCHEMA, recovering_read
from assay.paging import page_facts

_LOOP = Argument("loop", {"type": "string", "minLength": 1},
                 "The loop id (default: the project's one active loop).")
_HANDLE = Argument("handle", {"type": ["string", "object"]},
                   "The submission handle {sessionId, roundId, transactionId}, as JSON text "
                   "exactly as the previous step returned it.", required=True)
_INSTRUCTION = Argument("instruction", {"type": "string", "maxLength": 20000},
                        "The user's current instruction to carry in the next prompt (an audit "
                        "fact of that prompt; never a criterion or constraint).")
_HANDLE_OBJ = {
    "type": ["object", "null"],
    "properties": {"sessionId": {"type": "string"}, "roundId": {"type": "string"},
                   "transactionId": {"type": "string"}},
}
_PREPARED: dict[str, Any] = {
    "type": "object",
    "properties": {
        "loopId": {"type": "string"},
        "status": {"enum": ["active", "paused", "stopped"]},
        "stopReason": {"type": ["string", "null"]},
        "round": {"type": "integer"},
        "attempt": {"type": "integer"},
        "roundId": {"type": "string"},
        "submissionHandle": _HANDLE_OBJ,
        "prompt": {"type": ["string", "null"]},
        "promptArtifact": {"type": ["object", "null"]},
        "guidance": {"type": ["object", "null"]},
        "terminal": {"type": ["object", "null"]},
        "warnings": {"type": "array"},
    },
    "required": ["loopId", "status", "round", "attempt", "submissionHandle", "prompt", "guidance",
                 "warnings"],
}
_SUBMITTED = {
    "type": "object",
    "properties": {**_PREPARED["properties"], "accepted": {"type": "boolean"},
                   "stale": {"type": "boolean"}, "receipt": {"type": ["object", "null"]},
                   "committedReceipt": {"type": ["object", "null"]}},
    "required": [*_PREPARED["required"], "accepted", "stale", "receipt"],
}


def _max_rounds(value: Any) -> int | None:
    """A whole number from 1 to 1000 (the CLI parses it as a number so 1.5 can be named)."""
    import math

    if value is None:
        return None
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or not math.isfinite(value) or value != int(value) or not 1 <= value <= 1000):
        raise UsageError(f"max_rounds must be a whole number from 1 to 1000, not {value!r}",
                         code="invalid_argument", pointer="/max_rounds",
                         action="Pass --max-rounds N with a whole number N.")
    return int(value)


def _limits(inv: Invocation, max_rounds: int | None) -> Any:
    from assay.loop.policy import Limits

    settings = inv.project().loop
    return Limits(max_rounds=max_rounds or settings.max_rounds,
                  stall_rounds=settings.stall_rounds, max_rejections=settings.max_rejections,
                  max_active_constraints=settings.max_active_constraints,
                  lease_seconds=float(settings.lease_seconds),
                  renew_seconds=float(settings.renew_seconds),
                  backtrack_after=settings.backtrack_after,
                  ladder_terminate=settings.ladder_terminate,
                  violation_rounds=settings.violation_rounds)


def _governor(inv: Invocation) -> Any:
    import functools

    from assay.evidence.commands import run_command
    from assay.ledger import open_store
    from assay.loop.engine import Governor

    project = inv.project()
    url = inv.ledger_url()
    # The gate's commands report like the evidence runner's: a live line on a
    # terminal, progress notifications over MCP.
    progress = inv.progress()
    runner = functools.partial(run_command, reporter=progress) if progress else run_command
    return Governor(inv.store(), project, runner=runner,
                    open_store=lambda: open_store(url, base=project.root))


def _revision(inv: Invocation) -> int:
    # A reader's head, not info(): info counts every record of the ledger.
    with inv.store().reader() as reader:
        return reader.ledger_revision


def _next_steps(data: dict[str, Any]) -> tuple[str, ...]:
    if data.get("status") == "paused":
        return (f"The loop is paused: 'assay loop resume --loop {data['loopId']}'",)
    if data.get("status") != "active":
        return ((f"The loop stopped ({data.get('stopReason')}): 'assay loop status --loop "
                f"{data['loopId']}'"),)
    return (("Do the round's work, then: assay loop next --handle '<submissionHandle JSON>' "
            "--evaluation FILE"),)


@operation(
    "loop.start",
    view="loop:loop_round",
    summary="Start a loop: immutable operator acceptance, then the first round's prompt and handle.",
    description=(
        "Creates the loop head in the ledger with the operator acceptance (task, success "
        "criteria, hard constraints: immutable; a different acceptance under the same loop id is "
        "operator_acceptance_conflict), derives cr- criterion ids, observes the git workspace and "
        "returns round 1's prompt, the submission handle {sessionId, roundId, transactionId} and "
        "the submission guidance. The loop id defaults to lp- plus a digest of the task. With "
        "neither a criterion nor a constraint it is acceptance_empty, unless no_criteria says "
        "so on purpose. The calling principal becomes the loop's agent principal, which may not "
        "approve the loop's gates."
    ),
    writes=True,
    arguments=(
        Argument("task", {"type": "string", "minLength": 1}, "The task (operator acceptance).",
                 required=True),
        Argument("criterion", {"type": "array", "items": {"type": "string"}},
                 "A success criterion (repeatable)."),
        Argument("constraint", {"type": "array", "items": {"type": "string"}},
                 "A hard constraint (repeatable)."),
        Argument("max_rounds", {"type": "number", "minimum": 1, "maximum": 1000},
                 "The round budget, a whole number from 1 to 1000 (default: [loop] max_rounds, "
                 "else 20)."),
        Argument("no_criteria", {"type": "boolean"},
                 "Start with no success criterion and no constraint on purpose.",
                 binding="flag"),
        Argument("plan", {"type": "string"}, "A plan file (text) rendered into every prompt."),
        Argument("loop", {"type": "string", "minLength": 1},
                 "The loop id to create (default: lp- plus a digest of the task)."),
        _INSTRUCTION,
    ),
    output_schema=_PREPARED,
)
def loop_start(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.loop import session

    project = inv.project()
    plan = None
    if args.get("plan"):
        raw = inv.read_input(args["plan"], where="/plan", label="the plan")
        try:
            plan = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UsageError(f"the plan {args['plan']} is not valid UTF-8 (byte {exc.start})",
                             code="file_unreadable", pointer="/plan") from None
    data = session.start(inv.store(), project, task=args["task"],
                         criteria=args.get("criterion", []),
                         constraints=args.get("constraint", []),
                         limits=_limits(inv, _max_rounds(args.get("max_rounds"))),
                         loop_id=args.get("loop"), plan=plan, instruction=args.get("instruction"),
                         principal=inv.principal, no_criteria=bool(args.get("no_criteria")))
    return Result(data, ledger_revision=_revision(inv), next=_next_steps(data))


@operation(
    "loop.next",
    open_world=True,
    view="loop:loop_round",
    summary="Submit the round's self-evaluation; assay runs the gate and commits one round.",
    description=(
        "Accepts a SelfEvaluation (loop protocol 4.0) for the held attempt named by `handle`. "
        "Invalid payloads are evaluation_invalid / contract_invalid with every defect listed, "
        "and a 3.x document is protocol_version_mismatch (nothing written, the handle stays "
        "valid). assay then runs the active contract's verify_with commands, the required "
        "commands and the git observation itself, derives item and criterion statuses and the "
        "evidence posture, and commits one round transaction, or an enforcement rejection (same "
        "round, attempt + 1) whose checks each state their count and next consequence on the "
        "reject, reject, terminate ladder. A stale handle returns the held prompt with a "
        "submission_handle_mismatch warning. Two processes on one handle: one commits, the "
        "other gets lease_conflict or the held result."
    ),
    cli_note="Exit status 1 when the round was rejected.",
    writes=True,
    arguments=(
        _HANDLE,
        Argument("evaluation", {"type": "object"},
                 "The SelfEvaluation (absent: evaluation_invalid).", binding="json_file"),
        _INSTRUCTION,
    ),
    output_schema=_SUBMITTED,
)
def loop_next(inv: Invocation, args: dict[str, Any]) -> Result:
    data = _governor(inv).submit(args.get("handle"), args.get("evaluation"),
                                 instruction=args.get("instruction"))
    rejected = data["receipt"] is not None and not data["accepted"]
    return Result(data, ledger_revision=_revision(inv), next=_next_steps(data),
                  exit_code=1 if rejected else 0)


@operation(
    "loop.status",
    view="loop:loop_status",
    summary="Show a loop's state, current submission handle, guidance and last posture.",
    description=("Re-anchors a live session: the handle returned is the held one. Also "
                 "shows the held round's gate decisions with their approvals, each enforcement "
                 "check's count on the ladder, and who paused a paused loop."),
    writes=False,
    bounds=Bound("loop state", items=1, max_items=1, whole=True, recover=(
        "One loop head: its held round, last posture and the held round's gate decisions.")),
    arguments=(_LOOP,),
    output_schema={"type": "object", "properties": {
        "loopId": {"type": "string"}, "status": {"enum": ["active", "paused", "stopped"]},
        "submissionHandle": _HANDLE_OBJ, "lastPosture": {"type": ["object", "null"]}}},
)
def loop_status(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.loop import session

    store = inv.store()
    loop_id = session.resolve_loop(store, inv.project().scope, args.get("loop"), must_exist=True)
    data = session.status(store, loop_id)
    return Result(data, ledger_revision=data["ledgerRevision"])


@operation(
    "loop.stop",
    view="loop:loop_round",
    summary="Cancel a loop (stop reason: cancelled).",
    description=("Stops the loop under its lease; a loop that already stopped is returned "
                 "unchanged. The terminal event says whether the last committed round was "
                 "machine-backed."),
    writes=True,
    arguments=(_LOOP, Argument("reason", {"type": "string"}, "Why the operator stops it.")),
    output_schema=_PREPARED,
)
def loop_stop(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.loop import session

    store = inv.store()
    project = inv.project()
    loop_id = session.resolve_loop(store, project.scope, args.get("loop"), must_exist=True)
    data = session.stop(store, project, loop_id, reason=args.get("reason"))
    return Result(data, ledger_revision=_revision(inv), next=_next_steps(data))


@operation(
    "loop.resume",
    view="loop:loop_round",
    summary="Re-anchor a loop in a new session and return the held prompt with its new handle.",
    description=("Mints a new session (older handles become stale); a paused loop becomes active "
                 "again. With `invocation_lost` the same round and attempt are recompiled as a "
                 "clean context (fresh_invocation / invocation_recovery)."),
    writes=True,
    arguments=(_LOOP, Argument("invocation_lost", {"type": "boolean"},
                               "The original invocation is gone: recompile as a clean context.",
                               binding="flag"), _INSTRUCTION),
    output_schema=_PREPARED,
)
def loop_resume(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.loop import session

    store = inv.store()
    project = inv.project()
    loop_id = session.resolve_loop(store, project.scope, args.get("loop"), must_exist=True)
    data = session.resume(store, project, loop_id,
                          invocation_lost=bool(args.get("invocation_lost")),
                          instruction=args.get("instruction"))
    return Result(data, ledger_revision=_revision(inv), next=_next_steps(data))


@operation(
    "loop.pause",
    view="loop:loop_round",
    summary="Pause a loop: nothing is submitted, checked or recovered until it is resumed.",
    description=("Holds the loop under its lease and keeps the held prompt; submissions, gate "
                 "checks, checkpoints and recovery are loop_paused until 'loop resume' continues "
                 "it in a new session. A pause is a state, never a stop reason. Pausing a paused "
                 "loop returns it unchanged; a stopped loop is loop_stopped."),
    writes=True,
    arguments=(_LOOP, Argument("reason", {"type": "string"}, "Why the operator pauses it.")),
    output_schema=_PREPARED,
)
def loop_pause(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.loop import session

    store = inv.store()
    project = inv.project()
    loop_id = session.resolve_loop(store, project.scope, args.get("loop"), must_exist=True)
    data = session.pause(store, project, loop_id, reason=args.get("reason"),
                         principal=inv.principal)
    return Result(data, ledger_revision=_revision(inv), next=_next_steps(data))


@operation(
    "loop.gate-check",
    summary="Record a high-risk gate decision for an action before it is taken.",
    description=("Classifies the action (a one-line text, or a structured descriptor with "
                 "description, scope, effects, reversibility and authorization) and records the "
                 "decision in the held round with a g- id, its risk level (high, unknown, low) "
                 "and the reason codes behind it. A low-risk action may proceed; a high or "
                 "unknown one is ask_user: cite its id in the evaluation's gate_ids only after a "
                 "principal other than the loop's agent principal approved it (loop approve), or "
                 "the submission is rejected with gate_unapproved. gate_disabled when the "
                 "project's [loop] gate setting is false."),
    writes=True,
    arguments=(_HANDLE,
               Argument("action", {"type": "string"},
                        "The risky action, in one line (or give a descriptor)."),
               Argument("descriptor", {"type": "object"},
                        "A structured action {description, scope, effects, reversibility, "
                        "authorization}.",
                        binding="json_file")),
    output_schema={"type": "object", "properties": {"gateDecision": {"type": "object"},
                                                    "recorded": {"type": "boolean"}}},
)
def loop_gate_check(inv: Invocation, args: dict[str, Any]) -> Result:
    data = _governor(inv).gate_check(args.get("handle"), args.get("action"),
                                     descriptor=args.get("descriptor"), principal=inv.principal,
                                     enabled=inv.project().loop.gate)
    return Result(data, ledger_revision=_revision(inv))


def _decide(inv: Invocation, args: dict[str, Any], *, approve: bool) -> Result:
    from assay.loop import session
    from assay.loop.approval import decide

    store = inv.store()
    project = inv.project()
    loop_id = session.resolve_loop(store, project.scope, args["loop"], must_exist=True)
    data = decide(store, project, loop_id, args["gate"], approve=approve,
                  principal=inv.principal, reason=args.get("reason"))
    return Result(data, ledger_revision=_revision(inv))


_GATE_ARGUMENTS = (
    Argument("gate", {"type": "string", "pattern": "^g-[0-9a-f]{8}$"},
             "The g- id of the gate decision (as gate-check recorded it).", required=True),
    Argument("reason", {"type": "string"}, "Why (recorded with the decision)."),
    Argument("loop", {"type": "string", "minLength": 1}, "The loop the gate belongs to.",
             binding="literal", required=True),
)
_DECIDED = {"type": "object", "properties": {"gateDecision": {"type": "object"},
                                             "recorded": {"type": "boolean"}}}


@operation(
    "loop.approve",
    admin=True,
    idempotent=True,
    summary="Approve a loop's ask_user gate, as a principal other than the loop's agent.",
    description=("Records the approval on the gate decision (a new version of its record: who, "
                 "when, why). The loop's agent principal and whoever recorded the gate are "
                 "refused (approval_forbidden): a gate needs a second principal. A gate already "
                 "denied is gate_decided; approving twice returns the recorded approval."),
    writes=True,
    arguments=_GATE_ARGUMENTS,
    output_schema=_DECIDED,
)
def loop_approve(inv: Invocation, args: dict[str, Any]) -> Result:
    return _decide(inv, args, approve=True)


@operation(
    "loop.deny",
    admin=True,
    summary="Deny a loop's ask_user gate: citing it stays refused (gate_denied).",
    description=("Records the denial on the gate decision, by a principal other than the loop's "
                 "agent principal and whoever recorded the gate (approval_forbidden otherwise). "
                 "A gate already approved is gate_decided."),
    writes=True,
    arguments=_GATE_ARGUMENTS,
    output_schema=_DECIDED,
)
def loop_deny(inv: Invocation, args: dict[str, Any]) -> Result:
    return _decide(inv, args, approve=False)


@operation(
    "loop.questions",
    summary="List a loop's open questions (oq- ids).",
    description="Questions are resolved by resolved_open_question_ids in a submission.",
    writes=False,
    bounds=Bound("question", items=10, max_items=10, whole=True, recover=(
        "A loop holds at most ten open questions; all are returned.")),
    arguments=(_LOOP,),
    output_schema={"type": "object", "properties": {"loopId": {"type": "string"},
                                                    "open_questions": {"type": "array"}}},
)
def loop_questions(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.loop import session

    store = inv.store()
    loop_id = session.resolve_loop(store, inv.project().scope, args.get("loop"), must_exist=True)
    record = session.load_head(store, loop_id)
    return Result({"loopId": loop_id, "open_questions": record.data["facts"]["open_questions"]},
                  ledger_revision=record.ledger_revision)


@operation(
    "loop.schema",
    summary="The JSON Schemas of the loop's wire documents.",
    description=("SelfEvaluation (the normalised shape), SubmissionHandle, "
                 "RoundContractProposal, SubGoalUpdate and ExecutionClaim."),
    writes=False,
    bounds=Bound("schema set", items=1, max_items=1, whole=True, recover=(
        "Fixed documents; nothing depends on ledger data.")),
    project=False,
    output_schema={"type": "object"},
)
def loop_schema(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.loop.schema import schemas

    return Result(schemas())


@operation(
    "loop.checkpoint",
    view="loop:loop_checkpoint",
    summary="Checkpoint the workspace now (a mid checkpoint of the held round).",
    description=(
        "Captures a content-addressed manifest of the git workspace (HEAD, dirty paths, the "
        "fingerprint of every tracked and non-ignored untracked file) and stores the bytes of "
        "every dirty regular file and symlink as blob: records in the ledger. The held round "
        "holds the reference; `loop.recover` can restore it while the round is on the "
        "current branch. Every round also gets an automatic 'before' checkpoint. "
        "checkpoint_limit beyond the documented limits; checkpoint_unavailable outside git."
    ),
    writes=True,
    arguments=(_HANDLE,),
    output_schema={"type": "object", "properties": {"checkpoint": {"type": "object"},
                                                    "recorded": {"type": "boolean"}}},
)
def loop_checkpoint(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.loop.engine import parse_handle
    from assay.loop.recovery import checkpoint

    data = checkpoint(inv.store(), inv.project(), parse_handle(args.get("handle")))
    return Result(data, ledger_revision=_revision(inv))


@operation(
    "loop.recover",
    destructive=True,
    view="loop:loop_recovered",
    summary="Abandon the current branch: restore a checkpoint, verify it, then get the redo prompt.",
    description=(
        "Records a recovery directive (an event, not a round) naming the abandoned rounds, the "
        "machine-observed and reported skipped files, preserved discoveries and wrong "
        "assumptions; restores the workspace to the checkpoint (HEAD, deletions, file contents) "
        "and verifies it by observing the fingerprints again. Only a verified restore issues "
        "the redo prompt (fresh_invocation / recovery_redo) on a child branch; earlier rounds "
        "are kept. A failed restore puts the workspace back where it was and is "
        "restore_failed; recovery_invalid, checkpoint_unavailable, restore_pending and "
        "recovery_disabled write nothing. A stale handle returns the held prompt with a "
        "warning."
    ),
    writes=True,
    arguments=(
        _HANDLE,
        Argument("checkpoint", {"type": "string"}, "The ck- id of the checkpoint to restore.",
                 required=True),
        Argument("reason", {"type": "string"}, "Why the branch is abandoned (recorded verbatim).",
                 required=True),
        _INSTRUCTION,
    ),
    output_schema=_PREPARED,
    effect="Writes to the ledger and restores files in the project's git work tree.",
)
def loop_recover(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.ledger import open_store
    from assay.loop.engine import Governor, parse_handle
    from assay.loop.recovery import recover

    project = inv.project()
    store = inv.store()
    url = inv.ledger_url()
    handle = parse_handle(args.get("handle"))
    data = recover(store, project, handle, checkpoint_id=args.get("checkpoint"),
                   reason=args.get("reason"), enabled=project.loop.recovery,
                   open_store=lambda: open_store(url, base=project.root),
                   instruction=args.get("instruction"))
    if data.get("stale"):
        from assay.loop.session import load_head

        loop_id = handle["roundId"].split(":")[1]
        data = Governor(store, project).stale_view(load_head(store, loop_id).data, handle)
    return Result(data, ledger_revision=_revision(inv), next=_next_steps(data))


@operation(
    "loop.explain",
    view="loop:loop_explain",
    summary="Explain a round's prompt: density level and why, context, budget, coverage, memory.",
    description=("Defaults to the held prompt; `round` N explains a committed round "
                 "of the current branch. Lists the restorable checkpoints."),
    writes=False,
    bounds=Bound("prompt explanation", items=1, max_items=1, whole=True, recover=(
        "One round's prompt facts; its checkpoints are bounded by the loop's round budget "
        "(at most 1,000 rounds).")),
    arguments=(_LOOP, Argument("round", {"type": "integer", "minimum": 1},
                               "A committed round (default: the held one).")),
    output_schema={"type": "object", "properties": {"level": {"enum": ["l0", "l1", "l2"]},
                                                    "coverage": {"type": "object"}}},
)
def loop_explain(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.loop import session
    from assay.loop.views import explain

    store = inv.store()
    loop_id = session.resolve_loop(store, inv.project().scope, args.get("loop"), must_exist=True)
    data = explain(store, loop_id, round_number=args.get("round"))
    return Result(data, ledger_revision=data["ledgerRevision"])


_ROUND_PAGE, _MAX_ROUND_PAGE = 10, 1000
_FROM_ROUND = Argument("from_round", {"type": "integer", "minimum": 1},
                       "Start the page at this round (default 1).")
_ROUND_LIMIT = Argument("limit", {"type": "integer", "minimum": 1, "maximum": _MAX_ROUND_PAGE},
                        f"At most this many rounds on the page (default {_ROUND_PAGE}).")


def _round_page(data: dict[str, Any], operation: str, args: dict[str, Any],
                **fixed: Any) -> dict[str, Any]:
    """Add the page facts of a round-paged view, with the read of the next page."""
    reads = []
    if data["window"]["nextRound"]:
        reads.append(recovering_read(operation, {
            "loop": data["loopId"], **fixed, "from_round": data["window"]["nextRound"],
            **{k: args[k] for k in ("limit",) if k in args}}, "next_page"))
    return {**data, **page_facts(data.pop("omitted"), reads)}


@operation(
    "loop.replay",
    view="loop:loop_replay",
    summary="Re-derive stored prompts from their committed facts and check the hashes.",
    description=("`round` N (optionally `attempt` A for a rejected attempt) or `all` "
                 "(every committed round, rejected attempt and the held prompt of the current "
                 "branch), a page of rounds at a time: from `from_round`, at most `limit` rounds; "
                 "read_more holds the next page's read. The answer is negative when a replay on "
                 "the page does not match."),
    cli_note="Exit status 1 when a replay does not match.",
    writes=False,
    bounds=Bound("round", items=_ROUND_PAGE, max_items=_MAX_ROUND_PAGE,
                 arguments=("from_round", "limit"), recover=(
                     "Every prompt of a round is on the same page; the next page starts at the "
                     "round after this one (from_round). One round's replay is whole.")),
    arguments=(_LOOP,
               Argument("round", {"type": "integer", "minimum": 1}, "The round to replay."),
               Argument("attempt", {"type": "integer", "minimum": 1},
                        "The attempt (default: the committed or held one)."),
               Argument("all", {"type": "boolean"}, "Replay every prompt of the current branch.",
                        binding="flag"),
               _FROM_ROUND, _ROUND_LIMIT),
    output_schema={"type": "object", "properties": {
        "match": {"type": "boolean"}, "replays": {"type": "array"}, "window": {"type": "object"},
        **PAGE_FACTS_SCHEMA}},
)
def loop_replay(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.loop import session
    from assay.loop.views import replay

    if not args.get("all"):
        for name in ("from_round", "limit"):
            if name in args:
                raise UsageError(f"--{name.replace('_', '-')} pages a replay of every prompt; "
                                 "add --all", code="invalid_argument", pointer=f"/{name}")
    store = inv.store()
    loop_id = session.resolve_loop(store, inv.project().scope, args.get("loop"), must_exist=True)
    data = replay(store, loop_id, round_number=args.get("round"), attempt=args.get("attempt"),
                  every=bool(args.get("all")), from_round=args.get("from_round", 1),
                  limit=args.get("limit", _ROUND_PAGE))
    data = _round_page(data, "loop.replay", args, all=True) if "window" in data \
        else {**data, **page_facts({"replays": 0}, [])}
    return Result(data, ledger_revision=data["ledgerRevision"],
                  exit_code=0 if data["match"] else 1)


@operation(
    "loop.audit",
    view="loop:loop_audit",
    summary="The loop's history a page of rounds at a time: branches, rounds, rejections, gates.",
    description=("Every version of every round (the current branch and abandoned "
                 "ones), rejected attempts, recovery directives with their restore outcome, "
                 "gate decisions and the terminal event, for the rounds from from_round, at "
                 "most limit rounds; omitted counts the items of later rounds and read_more "
                 "holds the next page's read."),
    writes=False,
    bounds=Bound("round", items=_ROUND_PAGE, max_items=_MAX_ROUND_PAGE,
                 arguments=("from_round", "limit"), recover=(
                     "Every item of a round is on the same page; the next page starts at the "
                     "round after this one (from_round).")),
    arguments=(_LOOP, _FROM_ROUND, _ROUND_LIMIT),
    output_schema={"type": "object", "properties": {
        "rounds": {"type": "array"}, "directives": {"type": "array"}, "window": {"type": "object"},
        **PAGE_FACTS_SCHEMA}},
)
def loop_audit(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.loop import session
    from assay.loop.views import audit

    store = inv.store()
    loop_id = session.resolve_loop(store, inv.project().scope, args.get("loop"), must_exist=True)
    data = audit(store, loop_id, from_round=args.get("from_round", 1),
                 limit=args.get("limit", _ROUND_PAGE))
    return Result(_round_page(data, "loop.audit", args),
                  ledger_revision=data["ledgerRevision"])
