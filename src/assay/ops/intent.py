"""Intent operations: work check/status/history/attention/prepare-capture/checkpoint/resume,
decision record/show.

Handlers import :mod:`assay.intent` lazily so the registry stays cheap to load.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from assay.errors import AssayError, UsageError
from assay.ops import Argument, Bound, Invocation, Result, operation

_RECORD_ID = {"type": "string", "minLength": 1}
_AT_REVISION = Argument(
    "at_revision", {"type": "integer", "minimum": 0},
    "Answer only if the ledger is still at this revision (else read_revision_conflict).")
_LIMIT = Argument("limit", {"type": "integer", "minimum": 1, "maximum": 1000},
                  "At most this many entries (default 20).")
_ID = Argument("id", _RECORD_ID, "The intent record id (knowledge:NAME).", binding="literal",
               required=True)


def _binding(inv: Invocation) -> Any:
    from assay.intent.snapshot import ProjectBinding

    project = inv.project()
    return ProjectBinding(root=str(project.root), scope=project.scope,
                          admitted_scopes=tuple(project.admitted_scopes),
                          principal=inv.principal)


@contextmanager
def _pinned(inv: Invocation, args: dict[str, Any]) -> Iterator[tuple[Any, Any]]:
    """A reader (refused unless the ledger is at ``--at-revision``, when given) and the binding."""
    from assay.ops.ledger import check_at_revision

    binding = _binding(inv)
    with inv.store().reader() as reader:
        check_at_revision(reader, args.get("at_revision"))
        yield reader, binding


def _view(inv: Invocation, args: dict[str, Any], view: Callable[[Any, Any], Any]) -> Result:
    """A read-only view of one snapshot, reported at the revision it was read at."""
    with _pinned(inv, args) as (reader, binding):
        data = view(reader, binding)
    return Result(data, ledger_revision=data["ledger_revision"])


def _report_schema() -> dict[str, Any]:
    from assay.intent.check import DELTA_STATUSES, ISSUE_CODES, REPORT_KEYS
    from assay.intent.contract import intent_data_schema

    issue = {
        "type": "object",
        "properties": {
            "code": {"enum": list(ISSUE_CODES)}, "message": {"type": "string"},
            "action": {"type": "string"}, "requirement_id": {"type": "string"},
            "evidence_id": {"type": "string"}, "recorded_revision": {"type": "integer"},
            "current_revision": {"type": "integer"}, "advisory": {"const": True},
        },
        "required": ["code", "message", "action"],
    }
    props: dict[str, Any] = {key: {} for key in REPORT_KEYS}
    props.update({
        "intent_record_id": {"type": "string"},
        "intent_revision": {"type": "integer"},
        "intent_sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
        "ready_to_review": {"type": "boolean"},
        "complete": {"type": "boolean"},
        "issues": {"type": "array", "items": issue},
        "next": {"type": "array", "items": {"type": "string"}},
        "notice": {"type": "string"},
        "delta": {"type": "object", "properties": {"requirements": {"type": "array", "items": {
            "type": "object", "properties": {"status": {"enum": list(DELTA_STATUSES)}}}}}},
        "continuation": {"type": ["object", "null"]},
        "continuity": {"type": "object"},
        "envelope": {"type": "object",
                     "description": "Dependency envelope of the current record versions read."},
    })
    return {
        "type": "object",
        "properties": props,
        "required": list(REPORT_KEYS),
        "$defs": {"intent_record_data": intent_data_schema()},
    }


@operation(
    "work.check",
    summary="Is this intent ready for human review? The readiness report of one intent record.",
    description=(
        "Reads one current project knowledge record holding an intent (its data schema is "
        "output_schema.$defs.intent_record_data) and every evidence record its acceptance "
        "cites, from one ledger snapshot, and reports ready_to_review, issues in a fixed order, "
        "next actions, plan/actual/delta, the continuation and a bounded continuity "
        "projection. Evidence must be the current revision of a record in this project or an "
        "admitted scope. Exit 0 when ready, 1 when not. Writes nothing; --at-revision N "
        "answers only while the ledger is at N."
    ),
    writes=False,
    bounds=Bound("report", items=1, max_items=1, whole=True, recover=(
        "One intent record (at most 4 MiB of data); its continuity projection is bounded at 256 "
        "nodes, 1,024 edges and 128 KiB, and continuity.read_required holds the exact reads of "
        "what it omits.")),
    arguments=(_ID, _AT_REVISION),
    output_schema=_report_schema,
)
def work_check(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.intent.check import work_check as check
    from assay.intent.checkpoint import inputs_envelope

    with _pinned(inv, args) as (reader, binding):
        report = check(reader, binding, args["id"])
        # The dependency envelope of the current record versions the report
        # and its continuity projection were built from (see assay.provenance).
        report = {**report, "envelope": inputs_envelope(reader, report).to_dict()}
    return Result(report, ledger_revision=report["write_basis"]["ledger_revision"],
                  next=tuple(report["next"]), exit_code=0 if report["ready_to_review"] else 1)


@operation(
    "work.status",
    summary="List the project's intents with their readiness.",
    description="Read-only. Intents are listed by id; --limit bounds the list (default 20).",
    writes=False,
    bounds=Bound("intent", items=20, max_items=1000, facts=False, arguments=("limit",), recover=(
        "Intents by id; omitted_count counts those left out, and a larger limit reads them.")),
    arguments=(_LIMIT, _AT_REVISION),
    output_schema={"type": "object", "properties": {
        "intents": {"type": "array"}, "count": {"type": "integer"}, "more": {"type": "boolean"},
        "omitted_count": {"type": "integer"}}},
)
def work_status(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.intent.views import work_status as status

    return _view(inv, args, lambda reader, binding: status(reader, binding,
                                                           limit=args.get("limit", 20)))


@operation(
    "work.history",
    summary="An intent record's versions, newest first, with readiness as of each version.",
    description=("Read-only. Each version's readiness is computed against the ledger as it "
                 "stood when that version was written."),
    writes=False,
    bounds=Bound("version", items=20, max_items=1000, facts=False, arguments=("limit",), recover=(
        "Versions newest first; omitted_count counts the older ones left out, and a larger "
        "limit reads them.")),
    arguments=(_ID, _LIMIT, _AT_REVISION),
    output_schema={"type": "object", "properties": {
        "versions": {"type": "array"}, "more": {"type": "boolean"},
        "omitted_count": {"type": "integer"}}},
)
def work_history(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.intent.views import work_history as history

    return _view(inv, args, lambda reader, binding: history(
        reader, binding, args["id"], limit=args.get("limit", 20)))


@operation(
    "work.attention",
    summary="Section-level coverage of up to 20 intents over one snapshot.",
    description=("Read-only. For each intent: acceptance, results, evidence, blockers, "
                 "continuation and continuity coverage, and the first next actions."),
    writes=False,
    bounds=Bound("intent", items=20, max_items=20, facts=False, recover=(
        "The first 20 intents by id; omitted_count counts the rest, which work status lists.")),
    arguments=(_AT_REVISION,),
    output_schema={"type": "object", "properties": {
        "intents": {"type": "array"}, "more": {"type": "boolean"},
        "omitted_count": {"type": "integer"}}},
)
def work_attention(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.intent.views import work_attention as attention

    return _view(inv, args, attention)


@operation(
    "work.prepare-capture",
    summary="Draft (without writing) the two guarded puts that record an intent.",
    description=(
        "Read-only. Give the intent as --intent FILE (the intent object) or with --brief, "
        "--user-reference and --requirement 'ID|TEXT|ACCEPTANCE[|PARENT_ID]' (repeatable). "
        "--associate REQUIREMENT_ID=RECORD_ID and --mission RECORD_ID add a second save that "
        "associates records through continuation.context. Both drafts are validated."
    ),
    writes=False,
    bounds=Bound("draft", items=1, max_items=1, whole=True, recover=(
        "The drafts of the intent given, which is bounded by the input limit (4 MiB).")),
    arguments=(
        Argument("id", _RECORD_ID, "The intent record id (knowledge:NAME).", binding="literal",
                 required=True),
        Argument("intent", {"type": "object"}, "The intent object (CLI: a JSON file or -).",
                 binding="json_file"),
        Argument("brief", {"type": "string"}, "The requested outcome, in the requester's terms."),
        Argument("user_reference", {"type": "string"},
                 "An exact message, ticket or other retrievable reference."),
        Argument("requirement", {"type": "array", "items": {"type": "string"}},
                 "ID|TEXT|ACCEPTANCE[|PARENT_ID] (repeatable)."),
        Argument("boundary", {"type": "array", "items": {"type": "string"}},
                 "A boundary to keep (repeatable)."),
        Argument("non_goal", {"type": "array", "items": {"type": "string"}},
                 "Something explicitly out of scope (repeatable)."),
        Argument("associate", {"type": "array", "items": {"type": "string"}},
                 "REQUIREMENT_ID=RECORD_ID association (repeatable)."),
        Argument("mission", {"type": "array", "items": {"type": "string"}},
                 "A record every continuation should read (repeatable)."),
        Argument("next_action", {"type": "string"}, "The next action for the continuation."),
    ),
    output_schema={"type": "object", "properties": {"saves": {"type": "array"}}},
)
def work_prepare_capture(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.intent.capture import parse_requirement_spec, prepare_capture

    if "intent" in args:
        if any(k in args for k in ("brief", "user_reference", "requirement")):
            raise UsageError("give the intent either as --intent or with --brief/--requirement",
                             code="invalid_argument", pointer="/intent")
        intent = args["intent"]
    else:
        for name in ("brief", "user_reference", "requirement"):
            if name not in args:
                raise UsageError(f"prepare-capture needs --{name.replace('_', '-')} (or --intent)",
                                 code="missing_argument", pointer="/" + name)
        intent = {
            "version": 1,
            "brief": args["brief"],
            "user_reference": args["user_reference"],
            "requirements": [parse_requirement_spec(s, i)
                             for i, s in enumerate(args["requirement"])],
            "boundaries": list(args.get("boundary", [])),
            "non_goals": list(args.get("non_goal", [])),
        }
    binding = _binding(inv)
    with inv.store().reader() as reader:
        data = prepare_capture(reader, binding, args["id"], intent=intent,
                               associate=args.get("associate", []),
                               mission=args.get("mission", []),
                               next_action=args.get("next_action"))
    return Result(data, ledger_revision=data["ledger_revision"],
                  next=("Save step 1 with 'assay put', then step 2 with the revision it returns.",))


@operation(
    "work.checkpoint",
    summary="Save the intent's plan/actual/delta/continuation view as a handoff record.",
    description=(
        "Writes handoff:NAME (origin derived) only when the semantic signature changed; an "
        "unchanged projection writes nothing and returns the prior receipt. A pending earlier "
        "attempt is replayed exactly once with its saved request id; after that, or after a "
        "conflict, blind replay stops (checkpoint_pending)."
    ),
    writes=True,
    arguments=(_ID,),
    output_schema={"type": "object", "properties": {
        "written": {"type": "boolean"}, "handoff_id": {"type": "string"},
        "signature": {"type": "string"}, "receipt": {"type": "object"},
        "last_good": {"type": ["object", "null"]}, "latest_attempt": {"type": ["object", "null"]}}},
)
def work_checkpoint(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.intent.checkpoint import checkpoint, journal_path

    binding = _binding(inv)
    data = checkpoint(inv.store(), binding, args["id"],
                      journal=journal_path(inv.project().root, args["id"]))
    return Result(data, ledger_revision=data["ledger_revision"])


@operation(
    "work.resume",
    summary="The self-contained resume view of an intent, capped at 7,000 UTF-16 code units.",
    description=(
        "Read-only. Recovery state first (latest checkpoint attempt, last good checkpoint, "
        "the current read), then mission, guardrails, current work and required reads as "
        "literal argument arrays. must_read_before_action is set when anything was shortened."
    ),
    writes=False,
    bounds=Bound("resume view", items=1, max_items=1, whole=True, recover=(
        "At most 7,000 UTF-16 code units of text; read_required holds the exact reads of "
        "whatever was left out.")),
    arguments=(_ID, _AT_REVISION),
    output_schema={"type": "object", "properties": {
        "text": {"type": "string"}, "utf16_length": {"type": "integer"},
        "must_read_before_action": {"type": "boolean"}, "read_required": {"type": "array"}}},
)
def work_resume(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.intent.checkpoint import journal_path, resume

    return _view(inv, args, lambda reader, binding: resume(
        reader, binding, args["id"], journal=journal_path(inv.project().root, args["id"])))


@operation(
    "decision.record",
    summary="Record a decision event: the current choice for a decision key.",
    description=(
        "Writes one immutable decision-event record. By default the new event supersedes the "
        "stream's current heads (as read just before); --supersedes ID (repeatable) names them "
        "explicitly and --keep-heads supersedes nothing. Recording the same content twice replays "
        "the first receipt."
    ),
    writes=True,
    arguments=(
        Argument("key", {"type": "string", "minLength": 1}, "The decision key.", required=True),
        Argument("choice", {"type": "string", "minLength": 1}, "What was chosen.", required=True),
        Argument("reason", {"type": "string", "minLength": 1}, "Why.", required=True),
        Argument("supersedes", {"type": "array", "items": {"type": "string"}},
                 "Event ids this one supersedes (default: the current heads)."),
        Argument("keep_heads", {"type": "boolean"},
                 "Supersede nothing: record a concurrent alternative (a conflict if the stream "
                 "already has a head with another choice).", binding="flag"),
        Argument("scope", {"type": "string"}, "project (default: this project's scope) or global."),
    ),
    output_schema={"type": "object", "properties": {
        "receipt": {"type": "object"}, "decision": {"type": "object"}}},
)
def decision_record(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.intent.decisions import (
        DECISION_KIND,
        event_record_id,
        replay,
        validate_event_data,
        validate_key,
    )
    from assay.ledger.store import Write

    key = validate_key(args["key"])
    binding = _binding(inv)
    scope = args.get("scope") or binding.scope
    if scope not in (binding.scope, "global"):
        raise AssayError(f"this project writes only to {binding.scope} or global, not {scope!r}",
                         code="out_of_scope", pointer="/scope")
    store = inv.store()
    with store.reader() as reader:
        events = _stream(reader, binding, key)
        heads = replay(key, events)["head_event_ids"]
    if args.get("keep_heads"):
        supersedes: list[str] = []
    elif "supersedes" in args:
        supersedes = list(args["supersedes"])
    else:
        supersedes = list(heads)
    known = {r.id for r in events}
    for index, target in enumerate(supersedes):
        if target not in known:
            raise AssayError(f"{target} is not an event of decision {key!r}",
                             code="unknown_decision_event", pointer=f"/supersedes/{index}")
    data = validate_event_data({"version": 1, "key": key, "choice": args["choice"],
                                "reason": args["reason"], "supersedes": supersedes})
    event_id = event_record_id(key, args["choice"], args["reason"], supersedes)
    assert event_id.startswith(DECISION_KIND + ":")
    receipt = store.put(Write(id=event_id, data=data, scope=scope, expect_revision=0,
                              request_id=event_id))
    with store.reader() as reader:
        outcome = replay(key, _stream(reader, binding, key))
    return Result({"receipt": receipt.to_dict(), "decision": outcome},
                  ledger_revision=receipt.ledger_revision)


def _stream(reader: Any, binding: Any, key: str) -> list[Any]:
    from assay.intent.decisions import DECISION_KIND
    from assay.intent.snapshot import is_readable

    found = reader.find(kind=DECISION_KIND, scopes=list(binding.context_scopes), query=key,
                        limit=100_000)
    return [r for r in found if isinstance(r.data, dict) and r.data.get("key") == key
            and is_readable(r, binding.principal)]


@operation(
    "decision.show",
    summary="Replay a decision stream to its current choice (or a named conflict).",
    description=("Read-only. status is resolved, conflict or unavailable; a superseded event "
                 "never revives an older choice."),
    writes=False,
    bounds=Bound("decision stream", items=1, max_items=1, whole=True, recover=(
        "The replayed choice of one key, with the ids of its current heads.")),
    arguments=(
        Argument("key", {"type": "string", "minLength": 1}, "The decision key.",
                 binding="literal", required=True),
        _AT_REVISION,
    ),
    output_schema={"type": "object", "properties": {
        "key": {"type": "string"}, "status": {"enum": ["resolved", "conflict", "unavailable"]},
        "choice": {"type": ["string", "null"]}}},
)
def decision_show(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.intent.decisions import replay, validate_key

    key = validate_key(args["key"])
    with _pinned(inv, args) as (reader, binding):
        outcome = replay(key, _stream(reader, binding, key))
        revision = reader.ledger_revision
    nxt: tuple[str, ...] = ()
    if outcome["status"] == "conflict":
        nxt = ("Record one event that supersedes every head: assay decision record --key ... "
               + " ".join(f"--supersedes {h}" for h in outcome["head_event_ids"]),)
    return Result(outcome, ledger_revision=revision, next=nxt,
                  exit_code=0 if outcome["status"] == "resolved" else 1)
