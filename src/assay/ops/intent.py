"""Intent operations: work new/accept/check/status/history/attention/prepare-capture/
checkpoint/resume, decision record/show.

Handlers import :mod:`assay.intent` lazily so the registry stays cheap to load.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from assay.errors import AssayError, UsageError
from assay.ops import Argument, Bound, Invocation, Result, operation
from assay.ops.bounds import PAGE_FACTS_SCHEMA, check_at_revision, recovering_read
from assay.paging import page_facts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_RECORD_ID = {"type": "string", "minLength": 1}
_AT_REVISION = Argument(
    "at_revision", {"type": "integer", "minimum": 0},
    "Answer only if the ledger is still at this revision (else read_revision_conflict).")
_LIMIT = Argument("limit", {"type": "integer", "minimum": 1, "maximum": 1000},
                  "At most this many entries (default 20).")
_ID = Argument("id", _RECORD_ID, "The intent record id (knowledge:NAME).", binding="literal",
               required=True)
_BRIEF = Argument("brief", {"type": "string"}, "The requested outcome, in the requester's terms.")
_REQUIREMENT_SPEC = Argument("requirement", {"type": "array", "items": {"type": "string"}},
                             "ID|TEXT|ACCEPTANCE[|PARENT_ID] (repeatable).")
_BOUNDARY = Argument("boundary", {"type": "array", "items": {"type": "string"}},
                     "A boundary to keep (repeatable).")
_NON_GOAL = Argument("non_goal", {"type": "array", "items": {"type": "string"}},
                     "Something explicitly out of scope (repeatable).")


def _binding(inv: Invocation) -> Any:
    from assay.intent.snapshot import ProjectBinding

    project = inv.project()
    return ProjectBinding(root=str(project.root), scope=project.scope,
                          admitted_scopes=tuple(project.admitted_scopes),
                          principal=inv.principal)


def live_binding(inv: Invocation, *, observation: Any = None) -> Any:
    """The binding with the project's state now: workspace, checks and gate, read on first use.

    ``observation`` is a git observation the caller already made.
    """
    from assay.intent.pin import project_state
    from assay.intent.snapshot import ProjectBinding

    project = inv.project()

    def gate() -> Any:
        # Reading the harness settings files is the gate's business: imported on first use.
        from assay.gate.settings import gate_configuration

        return gate_configuration(project)

    return ProjectBinding(root=str(project.root), scope=project.scope,
                          admitted_scopes=tuple(project.admitted_scopes),
                          principal=inv.principal,
                          state=project_state(project, gate=gate, observation=observation))


@contextmanager
def _pinned(inv: Invocation, args: dict[str, Any], *, live: bool = False
            ) -> Iterator[tuple[Any, Any]]:
    """A reader (refused unless the ledger is at ``--at-revision``, when given) and the binding.

    ``live``: the binding carries the project's state now (see :func:`live_binding`).
    """
    binding = live_binding(inv) if live else _binding(inv)
    with inv.store().reader() as reader:
        check_at_revision(reader, args.get("at_revision"))
        yield reader, binding


def _view(inv: Invocation, args: dict[str, Any], view: Callable[[Any, Any], Any], *,
          live: bool = False) -> Result:
    """A read-only view of one snapshot, reported at the revision it was read at."""
    with _pinned(inv, args, live=live) as (reader, binding):
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
            "run_status": {"type": "string"}, "reason": {"type": "string"},
            "tests": {"type": "array", "items": {"type": "string"},
                      "description": "The failed or skipped test ids a per-test issue names."},
            "globs": {"type": "array", "items": {"type": "string"},
                      "description": "The mapping globs that matched no test."},
            "command": {"type": "string", "description": "The check a pin issue is about."},
            "fields": {"type": "array", "items": {"type": "string"},
                       "description": "The pinned fields that changed."},
            "source": {"enum": ["assay.toml", "run"]},
            "pin_id": {"type": "string"}, "pin_revision": {"type": "integer"},
            "requirement_ids": {"type": "array", "items": {"type": "string"}},
            "files": {"type": "array", "items": {"type": "string"}},
            "changes": {"type": "array", "description": (
                "Per changed test {test, change: missing|renamed|skipped|changed, path, added?, "
                "removed?, renamed_to?}, or per weakened gate field {field, pinned, now}.")},
            "paths": {"type": "array", "items": {"type": "string"},
                      "description": "Changed paths named (at most 10)."},
            "path_count": {"type": "integer", "description": "Every changed path found."},
            "intents": {"type": "array", "items": {"type": "string"}},
            "results_code": {"type": ["string", "null"]},
        },
        "required": ["code", "message", "action"],
    }
    props: dict[str, Any] = {key: {} for key in REPORT_KEYS}
    props.update({
        "intent_record_id": {"type": "string"},
        "intent_revision": {"type": "integer"},
        "intent_sha256": {"type": ["string", "null"], "pattern": "^[0-9a-f]{64}$",
                          "description": "null when the intent record itself is unreadable"},
        "ready_to_review": {"type": "boolean"},
        "complete": {"type": "boolean"},
        "issues": {"type": "array", "items": issue},
        "next": {"type": "array", "items": {"type": "string"}},
        "notice": {"type": "string"},
        "delta": {"type": "object", "properties": {"requirements": {"type": "array", "items": {
            "type": "object", "properties": {"status": {"enum": list(DELTA_STATUSES)}}}}}},
        "continuation": {"type": ["object", "null"]},
        "continuity": {"type": "object"},
        "pins": {"type": "object", "description": (
            "The pins compared with: checks (the intent's gate-pin) and gate (the gate's "
            "configuration), each {id, revision, usable, pinned_by, reviewed, how, approval} "
            "or null.")},
        "workspace": {"type": ["object", "null"], "description": (
            "The workspace the cited runs were compared with: status (observed, "
            "not_applicable, unavailable, error, not_compared), head, workspace_sha256, "
            "work_sha256, compared.")},
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
    view="intent:work_check",
    summary="Is this intent ready for human review? The readiness report of one intent record.",
    description=(
        "Reads one current project knowledge record holding an intent (the schema of its "
        "data: `describe` of this operation, output_schema.$defs.intent_record_data) and "
        "every evidence record its acceptance "
        "cites, from one ledger snapshot, and reports ready_to_review, issues in a fixed order, "
        "next actions, plan/actual/delta, the continuation and a bounded continuity "
        "projection. Evidence must be the current revision of a record in this project or an "
        "admitted scope. Cited runs are compared with the workspace now (observed once; "
        "evidence_workspace_changed), the intent's pinned checks and tests with assay.toml and "
        "the runs (check_definition_changed, requirement_tests_changed) and the gate's pinned "
        "configuration with the current one (gate_config_changed). With `at_revision` N it "
        "answers only while the ledger is at N."
    ),
    cli_note="Exit status 0 when ready_to_review, 1 when not.",
    writes=False,
    bounds=Bound("report", items=1, max_items=1, whole=True, recover=(
        "One intent record (at most 4 MiB of data); its continuity projection is bounded at 256 "
        "nodes, 1,024 edges and 128 KiB, and continuity.read_required holds the exact reads of "
        "what it omits.")),
    arguments=(_ID, _AT_REVISION),
    output_schema=_report_schema,
)
def work_check(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.gate.records import with_gate_issues
    from assay.intent.check import work_check as check
    from assay.intent.checkpoint import inputs_envelope

    with _pinned(inv, args, live=True) as (reader, binding):
        report = with_gate_issues(reader, binding.evidence_scopes,
                                  check(reader, binding, args["id"]))
        # The dependency envelope of the current record versions the report
        # and its continuity projection were built from (see assay.provenance).
        report = {**report, "envelope": inputs_envelope(reader, report).to_dict()}
    return Result(report, ledger_revision=report["write_basis"]["ledger_revision"],
                  next=tuple(report["next"]), exit_code=0 if report["ready_to_review"] else 1)


_PAGED_VIEW = {"count": {"type": "integer"}, "more": {"type": "boolean"},
               "omitted_count": {"type": "integer", "description": "The same as the omitted count."},
               **PAGE_FACTS_SCHEMA}


def _paged(data: dict[str, Any], kind: str, read: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``data`` of a work view with the page facts; ``read`` builds the next page's read."""
    omitted = data["omitted_count"]
    return {**data, **page_facts({kind: omitted}, [read()] if omitted else [])}


@operation(
    "work.status",
    view="intent:work_status",
    summary="List the project's intents with their readiness.",
    description=("Intents are listed by id after the id named by after, at most "
                 "limit of them (default 20); omitted counts the intents after the page and "
                 "read_more holds the next page's read."),
    writes=False,
    bounds=Bound("intent", items=20, max_items=1000, arguments=("limit", "after"), recover=(
        "Intents by id; the next page starts after the last intent shown (after).")),
    arguments=(_LIMIT, Argument("after", _RECORD_ID,
                                "Only intents whose id sorts after this id (the next page's "
                                "cursor)."), _AT_REVISION),
    output_schema={"type": "object", "properties": {"intents": {"type": "array"}, **_PAGED_VIEW}},
)
def work_status(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.gate.records import gave_up_counts
    from assay.intent.views import work_status as status

    def view(reader: Any, binding: Any) -> dict[str, Any]:
        data = status(reader, binding, limit=args.get("limit", 20), after=args.get("after"))
        counts = gave_up_counts(reader, binding.evidence_scopes)
        for row in data["intents"]:
            if counts.get(row["id"]):
                row["gate_gave_up"] = counts[row["id"]]
                row["advisory_count"] = row.get("advisory_count", 0) + counts[row["id"]]
        return _paged(data, "intents", lambda: recovering_read("work.status", {
            **{k: args[k] for k in ("limit",) if k in args},
            "after": data["intents"][-1]["id"]}, "next_page"))

    return _view(inv, args, view, live=True)


@operation(
    "work.history",
    summary="An intent record's versions, newest first, with readiness as of each version.",
    description=("Each version's readiness is computed against the ledger as it "
                 "stood when that version was written. At most limit versions (default 20), "
                 "newest first below before_revision; omitted counts the older versions and "
                 "read_more holds the next page's read."),
    writes=False,
    bounds=Bound("version", items=20, max_items=1000, arguments=("limit", "before_revision"),
                 recover=("Versions newest first; the next page holds the versions older than "
                          "the last one shown (before_revision).")),
    arguments=(_ID, _LIMIT,
               Argument("before_revision", {"type": "integer", "minimum": 2},
                        "Only versions older than this revision (the next page's cursor)."),
               _AT_REVISION),
    output_schema={"type": "object", "properties": {
        "versions": {"type": "array"}, **_PAGED_VIEW}},
)
def work_history(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.intent.views import work_history as history

    def view(reader: Any, binding: Any) -> dict[str, Any]:
        data = history(reader, binding, args["id"], limit=args.get("limit", 20),
                       before_revision=args.get("before_revision"))
        return _paged(data, "versions", lambda: recovering_read("work.history", {
            "id": args["id"], **{k: args[k] for k in ("limit",) if k in args},
            "before_revision": data["versions"][-1]["revision"]}, "next_page"))

    return _view(inv, args, view)


@operation(
    "work.attention",
    busy="checking the project's intents",
    summary="Section-level coverage of up to 20 intents over one snapshot.",
    description=("For each intent: acceptance, results, evidence, blockers, "
                 "continuation and continuity coverage, and the first next actions. The first "
                 "20 intents by id; omitted counts the rest and read_more lists them with "
                 "work status."),
    writes=False,
    bounds=Bound("intent", items=20, max_items=20, recover=(
        "The first 20 intents by id; the recovering read is the work status page after the "
        "last intent shown (after), whose own reads page on.")),
    arguments=(_AT_REVISION,),
    output_schema={"type": "object", "properties": {"intents": {"type": "array"}, **_PAGED_VIEW}},
)
def work_attention(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.intent.views import work_attention as attention

    def view(reader: Any, binding: Any) -> dict[str, Any]:
        data = attention(reader, binding)
        return _paged(data, "intents", lambda: recovering_read("work.status", {
            "after": data["intents"][-1]["id"]}, "next_page"))

    return _view(inv, args, view, live=True)


@operation(
    "work.prepare-capture",
    summary="Draft (without writing) the one or two guarded puts that record an intent.",
    description=(
        "Give the intent as `intent` (the intent object) or with `brief`, "
        "`user_reference` and `requirement` 'ID|TEXT|ACCEPTANCE[|PARENT_ID]' (repeatable). "
        "`associate` REQUIREMENT_ID=RECORD_ID and `mission` RECORD_ID add a second save that "
        "associates records through continuation.context. Both drafts are validated."
    ),
    writes=False,
    bounds=Bound("draft", items=1, max_items=1, whole=True, recover=(
        "The drafts of the intent given, which is bounded by the input limit (4 MiB).")),
    arguments=(
        _ID,
        Argument("intent", {"type": "object"}, "The intent object.",
                 binding="json_file"),
        _BRIEF,
        Argument("user_reference", {"type": "string"},
                 "An exact message, ticket or other retrievable reference."),
        _REQUIREMENT_SPEC,
        _BOUNDARY,
        _NON_GOAL,
        Argument("associate", {"type": "array", "items": {"type": "string"}},
                 "REQUIREMENT_ID=RECORD_ID association (repeatable)."),
        Argument("mission", {"type": "array", "items": {"type": "string"}},
                 "A record every continuation should read (repeatable)."),
        Argument("next_action", {"type": "string"}, "The next action for the continuation."),
    ),
    output_schema={"type": "object", "properties": {"saves": {"type": "array"}}},
)
def work_prepare_capture(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.intent.capture import intent_from_flags, prepare_capture

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
        intent = intent_from_flags(brief=args["brief"], user_reference=args["user_reference"],
                                   requirements=args["requirement"],
                                   boundaries=args.get("boundary", []),
                                   non_goals=args.get("non_goal", []))
    binding = _binding(inv)
    with inv.store().reader() as reader:
        data = prepare_capture(reader, binding, args["id"], intent=intent,
                               associate=args.get("associate", []),
                               mission=args.get("mission", []),
                               next_action=args.get("next_action"))
    steps = ("Save step 1: run its put_args with its stdin as standard input."
             if len(data["saves"]) == 1 else
             "Save step 1 (put_args with stdin as standard input), then step 2 the same way.")
    return Result(data, ledger_revision=data["ledger_revision"], next=(steps,))


@operation(
    "work.new",
    summary="Record a new intent (what was asked, and how each requirement is accepted).",
    description=(
        "Builds the intent from a brief and requirements ID|TEXT|ACCEPTANCE[|PARENT_ID] "
        "(with boundaries, non-goals and the evidence commands that verify a requirement), or "
        "from a JSON or Markdown file, validates it, and writes knowledge:NAME in one guarded "
        "put: the record must not exist yet, unless the revision it is at is given, in which "
        "case the intent is replaced and any recorded acceptance, tasks and continuation are "
        "kept. Running the same command again replays the first receipt."
    ),
    writes=True,
    arguments=(
        _ID,
        _BRIEF,
        Argument("user_reference", {"type": "string"},
                 "An exact message, ticket or other retrievable reference (default: the brief)."),
        _REQUIREMENT_SPEC,
        _BOUNDARY,
        _NON_GOAL,
        Argument("verify_with", {"type": "array", "items": {"type": "string"}},
                 "REQUIREMENT_ID=COMMAND: an evidence command that verifies it (repeatable)."),
        Argument("from_file", {"type": "string", "minLength": 1},
                 "A JSON or Markdown file holding the intent (instead of the other values)."),
        Argument("expect_revision", {"type": "integer", "minimum": 0},
                 "The record's current revision (default 0: it must not exist)."),
    ),
    output_schema={"type": "object", "properties": {
        "receipt": {"type": "object"}, "intent_sha256": {"type": "string"},
        "requirements": {"type": "array", "items": {"type": "string"}}}},
)
def work_new(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.canonical import digest
    from assay.ids import content_id
    from assay.intent.capture import intent_from_file, intent_from_flags, validate_intent_id
    from assay.intent.contract import check_report_bound, parse_intent_data
    from assay.ledger.store import Write

    record_id = validate_intent_id(args["id"])
    if "from_file" in args:
        given = [k for k in ("brief", "user_reference", "requirement", "boundary", "non_goal",
                             "verify_with") if k in args]
        if given:
            raise UsageError(f"give the intent either in --from-file or with flags, not both "
                             f"(--{given[0].replace('_', '-')})", code="invalid_argument",
                             pointer="/" + given[0])
        intent = intent_from_file(_read_input(inv, args["from_file"], "/from_file"),
                                  args["from_file"])
    else:
        for name in ("brief", "requirement"):
            if name not in args:
                raise UsageError(f"work new needs --{name} (or --from-file)",
                                 code="missing_argument", pointer="/" + name)
        intent = intent_from_flags(brief=args["brief"], user_reference=args.get("user_reference"),
                                   requirements=args["requirement"],
                                   boundaries=args.get("boundary", []),
                                   non_goals=args.get("non_goal", []),
                                   verify_with=args.get("verify_with", []))
    expect = args.get("expect_revision", 0)
    store = inv.store()
    data: dict[str, Any] = {"intent": intent}
    if expect:
        with store.reader() as reader:
            current = inv.access().visible(reader.get(record_id))
            if current is not None and current.revision == expect and current.damage is None \
                    and isinstance(current.data, dict):
                data = {**current.data, "intent": intent}
    doc = parse_intent_data(data, record_id=record_id)
    check_report_bound(data, record_id=record_id)
    request_id = content_id("new", {"id": record_id, "expect": expect, "data": digest(data)})
    receipt = store.put(Write(id=record_id, data=data, scope=inv.project().scope,
                              expect_revision=expect, request_id=request_id))
    return Result(
        {"receipt": receipt.to_dict(), "intent_sha256": doc.intent_sha256,
         "requirements": list(doc.requirement_ids)},
        ledger_revision=receipt.ledger_revision,
        next=(f"See what it needs: 'assay work check -- {record_id}'",))


def _read_input(inv: Invocation, path: str, where: str) -> bytes:
    """A file named by an argument (relative to the call's directory), bounded."""
    import os

    from assay.inputs import read_bounded

    full = path if path == "-" or os.path.isabs(path) else os.path.join(inv.cwd or os.getcwd(),
                                                                         path)
    return read_bounded(full, where=where, label=path)


@operation(
    "work.accept",
    summary="Record results for an intent's requirements in one step, digests computed by assay.",
    description=(
        "Reads the intent, takes results from requirement and evidence pairs (evidence cited as "
        "ID@REVISION), a JSON list of results, or evidence runs (each run's outcome for the "
        "requirement it was recorded for; for a run with per-test outcomes, each requirement "
        "its tests were mapped to: passed only if every mapped test passed, failed if any "
        "failed, unverified if none ran or the results file could not be used), computes "
        "intent_sha256 and each cited version's data_sha256 itself, merges the results into "
        "acceptance (other requirements' results are kept, unless the intent changed since they "
        "were recorded) and writes the record in one guarded put with a fresh request id. A "
        "passed result citing a run of assay's evidence runner that did not pass is refused "
        "(evidence_run_not_passed), and so is a run that is another intent's evidence "
        "(run_for_other_intent) or nobody's (run_evidence_unattributed). In the same write it "
        "pins what the intent relies on for the first time (its checks' declarations, each "
        "requirement's tests and their source digests, and the gate's configuration: "
        "gate-pin records, trust on first use; `pinned` lists them)."
    ),
    writes=True,
    arguments=(
        _ID,
        Argument("requirement", {"type": "array", "items": {"type": "string"}},
                 "A requirement id (repeatable; pairs in order with `evidence`)."),
        Argument("evidence", {"type": "array", "items": {"type": "string"}},
                 "An evidence version ID@REVISION (repeatable)."),
        Argument("status", {"enum": ["passed", "failed", "unverified"]},
                 "The status of the given pairs (default: passed, or failed when a cited run "
                 "did not pass)."),
        Argument("note", {"type": "string"},
                 "Why the evidence meets the acceptance (default for runs: what assay ran)."),
        Argument("results", {"type": "array"},
                 "Results [{requirement_id, status?, evidence: [ID@REV], notes?}].",
                 binding="json_file"),
        Argument("from_run", {"type": "array", "items": {"type": "string"}},
                 "An evidence run ID@REVISION recorded for a requirement of this intent, or one "
                 "with per-test outcomes (repeatable)."),
        Argument("expect_revision", {"type": "integer", "minimum": 1},
                 "The intent record's current revision (default: the revision read)."),
    ),
    output_schema={"type": "object", "properties": {
        "receipt": {"type": "object"}, "intent_sha256": {"type": "string"},
        "results": {"type": "array"}, "dropped": {"type": "array"},
        "pinned": {"type": "array", "description": "Receipts of the gate-pin records written."}}},
)
def work_accept(inv: Invocation, args: dict[str, Any]) -> Result:
    import uuid

    from assay.intent.acceptance import GivenResults, RunResults, merge_acceptance
    from assay.intent.check import read_intent
    from assay.ledger.store import Write

    sources: list[Any] = []
    if args.get("requirement") or args.get("evidence") or args.get("results"):
        sources.append(GivenResults(requirements=args.get("requirement", []),
                                    evidence=args.get("evidence", []), status=args.get("status"),
                                    notes=args.get("note"), results=args.get("results", [])))
    if args.get("from_run"):
        sources.append(RunResults(runs=args["from_run"], notes=args.get("note")))
    from assay.intent.pin import first_use_writes

    binding = live_binding(inv)
    assert binding.state is not None
    store = inv.store()
    with store.reader() as reader:
        read = read_intent(reader, binding, args["id"])
        merged = merge_acceptance(reader, read, sources, principal=binding.principal)
        record = read.record
        # Trust on first use: what the intent now relies on and nobody pinned yet.
        pins = first_use_writes(reader, binding.state, record.id, read.document,
                                merged["data"]["acceptance"], binding.principal, record.scope,
                                over_reviewed_gate=not getattr(store, "role_bound", False))
    receipts = store.put_many([Write(
        id=record.id, data=merged["data"], scope=record.scope, links=record.links,
        audience=record.audience, sources=record.sources,
        expect_revision=args.get("expect_revision", record.revision),
        request_id=f"accept:{uuid.uuid4().hex}"), *pins])
    receipt = receipts[0]
    steps = [f"Check readiness: 'assay work check -- {record.id}'"]
    if merged["dropped"]:
        steps.insert(0, "The intent changed since these were recorded, so their results were "
                        f"dropped: {', '.join(merged['dropped'])}; record them again.")
    return Result({"receipt": receipt.to_dict(), "intent_sha256": merged["intent_sha256"],
                   "results": merged["results"], "dropped": merged["dropped"],
                   "pinned": [r.to_dict() for r in receipts[1:]]},
                  ledger_revision=receipts[-1].ledger_revision, next=tuple(steps))


@operation(
    "work.checkpoint",
    idempotent=True,
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
    view="intent:work_resume",
    summary="The self-contained resume view of an intent, capped at 7,000 UTF-16 code units.",
    description=(
        "Recovery state first (latest checkpoint attempt, last good checkpoint, "
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
        "stream's current heads (as read just before); `supersedes` ID (repeatable) names them "
        "explicitly and `keep_heads` supersedes nothing. Recording the same content twice replays "
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
    from assay.intent.decisions import read_stream

    return read_stream(reader, key, binding.context_scopes, binding.principal)


@operation(
    "decision.show",
    summary="Replay a decision stream to its current choice (or a named conflict).",
    description=("The status is resolved, conflict or unavailable; a superseded event "
                 "never revives an older choice."),
    cli_note="Exit status 1 unless the status is resolved.",
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
        stream = _stream(reader, binding, key)
        outcome = replay(key, stream)
        revision = reader.ledger_revision
    nxt: tuple[str, ...] = ()
    if outcome["unreadable_event_ids"]:
        events = {r.id: r for r in stream}
        nxt = tuple(
            f"The stored event is damaged: inspect it with 'assay get --raw --revision "
            f"{events[event_id].revision} -- {event_id}', then put its original content as a "
            "new version." for event_id in outcome["unreadable_event_ids"])
    elif outcome["status"] == "conflict":
        nxt = ("Record one event that supersedes every head: assay decision record --key KEY "
               "--choice CHOICE --reason REASON "
               + " ".join(f"--supersedes {h}" for h in outcome["head_event_ids"]),)
    return Result(outcome, ledger_revision=revision, next=nxt,
                  exit_code=0 if outcome["status"] == "resolved" else 1)
