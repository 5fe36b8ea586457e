"""Ledger operations: put, get, find, retire, supersede, ledger info."""

from __future__ import annotations

import functools

from assay.errors import AssayError, ConflictError, UsageError, pointer
from assay.ops import Argument, Bound, Invocation, Result, operation
from assay.ops.bounds import (
    PAGE_FACTS_SCHEMA,
    check_at_revision,
    max_bytes_argument,
    recovering_read,
)
from assay.paging import DEFAULT_PAGE_BYTES, MAX_PAGE_BYTES, encoded_size, fit, page_facts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_RECORD_ID = {"type": "string", "minLength": 1}
_REVISION = {"type": "integer", "minimum": 0}
_AT_REVISION = Argument(
    "at_revision", {"type": "integer", "minimum": 0},
    "Answer only if the ledger is still at this revision (else read_revision_conflict).")
_RECEIPT = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "revision": {"type": "integer"},
        "ledger_revision": {"type": "integer"},
        "data_sha256": {"type": "string"},
        "request_id": {"type": ["string", "null"]},
        "replayed": {"type": "boolean"},
    },
    "required": ["id", "revision", "ledger_revision", "data_sha256", "request_id", "replayed"],
}
_RECORD = {
    "type": "object",
    "properties": {
        "id": {"type": "string"}, "kind": {"type": "string"}, "scope": {"type": "string"},
        "revision": {"type": "integer"}, "data": {}, "data_sha256": {"type": "string"},
        "status": {"enum": ["current", "retired", "superseded"]},
        "superseded_by": {"type": ["string", "null"]}, "links": {"type": "array"},
        "audience": {"type": "string"}, "sources": {"type": "array"},
        "created_at": {"type": "string"}, "ledger_revision": {"type": "integer"},
        "request_id": {"type": ["string", "null"]},
        "origin": {"enum": ["claim", "machine", "derived"]},
    },
}
_WRITE_BASIS = {
    "type": "object",
    "properties": {"epoch": {"type": "string"}, "ledger_revision": {"type": "integer"},
                   "records": {"type": "object", "additionalProperties": {"type": "integer"}}},
}


def write_basis(reader: Any, records: dict[str, int]) -> dict[str, Any]:
    return {"epoch": reader.epoch, "ledger_revision": reader.ledger_revision,
            "records": dict(sorted(records.items()))}


def parse_links(values: list[str]) -> tuple[Any, ...]:
    from assay.ledger.store import Link

    links = []
    for index, value in enumerate(values):
        rel, sep, target = value.partition(":")
        # REL:KIND:NAME — the relation is the part before the first colon.
        if not sep or not target or ":" not in target:
            raise UsageError(f"--link takes REL:ID (e.g. requires:knowledge:x), not {value!r}",
                             code="invalid_link", pointer=pointer("link", index))
        links.append(Link(rel, target))
    return tuple(links)


def parse_sources(values: list[str]) -> tuple[Any, ...]:
    from assay.ledger.store import SourceRef

    sources = []
    for index, value in enumerate(values):
        record_id, sep, rev = value.rpartition("@")
        if not sep or not record_id or not rev.isdigit() or not 1 <= int(rev) <= 2**53:
            raise UsageError(f"--source takes ID@REVISION (e.g. note:x@2), not {value!r}",
                             code="invalid_source", pointer=pointer("source", index))
        sources.append(SourceRef(record_id, int(rev)))
    return tuple(sources)


# What a person does instead of writing each reserved kind by hand.
_RESERVED_ACTION = {
    "gate-session": "The stop gate writes these itself; read them with 'assay get --history "
                    "-- ID'.",
    "gate-binding": "A person binds intents to a session: 'assay gate bind --as NAME --session "
                    "ID -- INTENT'.",
}


def refuse_reserved(record_id: str, where: str = "/id") -> None:
    """Refuse a plain write, retirement or supersession of a kind only assay's own operations write.

    The stop gate trusts its own state (``gate-session``, ``gate-binding``,
    ``gate-pin``, ``gate-approval``; :data:`assay.ids.RESERVED_KINDS`) only
    because nothing but its operations write it, in any audience.
    """
    from assay.ids import RESERVED_KINDS

    kind = record_id.partition(":")[0]
    if kind in RESERVED_KINDS:
        raise AssayError(
            f"{kind} records are written only by assay's own operations, not by put, retire or "
            "supersede", code="reserved_kind", pointer=where, details={"kind": kind},
            action=_RESERVED_ACTION.get(kind, "Use the assay operation that records it."))


def _bind_sources(reader: Any, sources: tuple[Any, ...], access: Any) -> tuple[Any, ...]:
    """Pin each source to the digest of the exact version named; refuse unknown ones."""
    from assay.ledger.store import SourceRef

    bound = []
    for index, src in enumerate(sources):
        record = reader.get(src.id, src.revision)
        if record is None or not access.can_read(record):
            raise AssayError(f"source {src.id}@{src.revision} does not exist or is not readable",
                             code="source_not_found", pointer=pointer("source", index))
        bound.append(SourceRef(src.id, src.revision, record.data_sha256))
    return tuple(bound)


@operation(
    "put",
    view="ledger:receipt",
    summary="Write a new version of a record (a claim), optionally guarded by revision.",
    description=(
        "Writes one record version with origin 'claim'. `expect_revision` 0 requires the record "
        "to be absent, N requires it to be at N; a `write_basis` requires every record it "
        "names to be unchanged. The same `request_id` with the same body replays the first "
        "receipt; with another body it is request_conflict. A knowledge record that holds an "
        "intent keeps a valid one: data that would drop the intent or break its contract is "
        "refused with the code and pointer the readiness check would give, unless `replace` is "
        "set; an intent larger than a readiness report can hold is always refused. A rejected "
        "write changes nothing."
    ),
    writes=True,
    arguments=(
        Argument("id", _RECORD_ID, "Record id kind:name.", binding="literal", required=True),
        Argument("data", {}, "The record's JSON data.",
                 binding="json_file", cli="--data-file", required=True),
        Argument("expect_revision", _REVISION, "Required current revision (0 = must not exist)."),
        Argument("request_id", {"type": "string", "minLength": 1},
                 "Idempotency key: a retry with the same body replays the receipt."),
        Argument("status", {"enum": ["current", "retired", "superseded"]},
                 "Status of the new version (default current)."),
        Argument("superseded_by", {"type": "string"}, "Successor id when status is superseded."),
        Argument("link", {"type": "array", "items": {"type": "string"}},
                 "Typed edge REL:ID (repeatable), e.g. requires:knowledge:x."),
        Argument("audience", {"type": "string"}, "project (default) or private:<principal>."),
        Argument("source", {"type": "array", "items": {"type": "string"}},
                 "A record version this one derives from, ID@REVISION (repeatable)."),
        Argument("scope", {"type": "string"}, "project (default: this project's scope) or global."),
        Argument("write_basis", _WRITE_BASIS,
                 "A write basis from an earlier read.",
                 binding="json_file", cli="--write-basis"),
        Argument("replace", {"type": "boolean"},
                 "Allow data that drops or breaks the intent a knowledge record holds.",
                 binding="flag"),
    ),
    output_schema=_RECEIPT,
)
def put(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.ledger.store import Write, WriteBasis

    project = inv.project()
    scope = args.get("scope") or project.scope
    if scope not in (project.scope, "global"):
        raise AssayError(f"this project writes only to {project.scope} or global, not {scope!r}",
                         code="out_of_scope", pointer="/scope")
    basis = WriteBasis.from_dict(args["write_basis"]) if "write_basis" in args else None
    if basis is not None and basis.project is not None:
        bound = (basis.project.get("scope"), sorted(basis.project.get("admitted_scopes", [])))
        if bound != (project.scope, sorted(project.admitted_scopes)):
            raise ConflictError(
                f"the write basis was read for {bound[0]}, not for this project ({project.scope})",
                code="project_binding_conflict", pointer="/write_basis/project",
                action="Read again from this project before writing.")
    refuse_reserved(args["id"])
    store = inv.store()
    if args["id"].startswith("knowledge:"):
        _guard_intent(store, args["id"], args["data"], replace=bool(args.get("replace")),
                      expect_revision=args.get("expect_revision"))
    sources = parse_sources(args.get("source", []))
    if sources:
        with store.reader() as reader:
            sources = _bind_sources(reader, sources, inv.access())
    receipt = store.put(
        Write(
            id=args["id"], data=args["data"], scope=scope,
            status=args.get("status", "current"), superseded_by=args.get("superseded_by"),
            links=parse_links(args.get("link", [])), audience=args.get("audience", "project"),
            sources=sources, expect_revision=args.get("expect_revision"),
            request_id=args.get("request_id"),
        ),
        basis=basis,
    )
    return Result(receipt.to_dict(), ledger_revision=receipt.ledger_revision)


def _guard_intent(store: Any, record_id: str, data: Any, *, replace: bool,
                  expect_revision: int | None) -> None:
    """Refuse a put that would leave an intent record unreadable by the readiness check.

    An intent whose readiness report could not be printed is refused always. Data that drops the
    intent a record holds, or breaks its contract, is refused unless
    ``replace``: with the readiness check's own code and pointer. A record
    whose stored version is damaged holds nothing known, so a repair is never
    refused here; nor is a write whose expected revision is already stale (it
    fails as the conflict it is).
    """
    intent = data.get("intent") if isinstance(data, dict) else None
    if intent is not None:  # the intent contract loads only for data that may hold one
        from assay.intent.contract import check_report_bound, parse_intent_data

        check_report_bound(data, record_id=record_id)
    if replace:
        return
    if intent is not None:
        try:
            parse_intent_data(data)
            return
        except AssayError:
            pass  # refused below only if the record holds an intent now
    with store.reader() as reader:
        current = reader.get(record_id)
        holds = (current is not None and current.damage is None
                 and isinstance(current.data, dict) and "intent" in current.data)
    stale = expect_revision is not None and expect_revision != (
        current.revision if current is not None else 0)
    if holds and not stale:
        from assay.intent.contract import parse_intent_data

        try:
            parse_intent_data(data, record_id=record_id)
        except AssayError as exc:
            exc.action = (f"{exc.action} The record holds an intent now; to drop or replace it "
                          "anyway, put again with --replace.")
            raise


def _stored_text(value: Any) -> str:
    """The stored data exactly as held, even when it is not text (a damaged row)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    return value if isinstance(value, str) else str(value)


def _not_found(record_id: str, revision: int | None = None) -> AssayError:
    what = f"{record_id} revision {revision}" if revision else record_id
    return AssayError(f"no record {what}", code="record_not_found", pointer="/id",
                      action="Check the id with 'assay find', or write it with 'assay put'.")


def _readable(reader: Any, inv: Invocation, record_id: str, revision: int | None = None) -> Any:
    from assay.ids import validate_record_id

    validate_record_id(record_id, field="/id")
    access = inv.access()
    record = access.visible(reader.get(record_id, revision))
    if record is None:
        raise _not_found(record_id, revision)
    if not access.in_scope(record):
        raise AssayError(f"{record_id} belongs to {record.scope}, outside this project's scopes",
                         code="out_of_scope", pointer="/id")
    return record


HISTORY_LIMIT = 20
MAX_HISTORY_LIMIT = 1000
_HISTORY_ONLY = ("limit", "before_revision", "max_bytes")


def _raw_data(envelope: dict[str, Any], args: dict[str, Any]) -> str | None:
    # `get --raw` prints the stored text itself; otherwise the normal rendering.
    if args.get("raw"):
        return str(envelope["data"]["raw"]) + "\n"
    return None


@operation(
    "get",
    raw=_raw_data,
    summary="Read a record: its current version, one revision, or its history page by page.",
    description=(
        "Returns the record with the ledger revision it saw and a write basis for a "
        "later guarded write. `raw` gives the stored canonical data text exactly. `history` "
        "returns a page of versions: the newest ones below `before_revision` (default: all), "
        "oldest first within the page, at most `limit` versions and `max_bytes` bytes. A "
        "version too large for the page is left out and named with its exact read; read_more "
        "holds the reads that recover everything the page leaves out."
    ),
    cli_note="With `raw` only that text is printed.",
    writes=False,
    bounds=Bound("version", items=HISTORY_LIMIT, max_items=MAX_HISTORY_LIMIT,
                 bytes=DEFAULT_PAGE_BYTES, max_bytes=MAX_PAGE_BYTES,
                 arguments=_HISTORY_ONLY, recover=(
                     "One version is returned whole (at most 4 MiB of data). A history page "
                     "names the next older page (before_revision) and the exact read of each "
                     "version too large for it (revision).")),
    arguments=(
        Argument("id", _RECORD_ID, "Record id kind:name.", binding="literal", required=True),
        Argument("revision", {"type": "integer", "minimum": 1}, "Read this revision."),
        Argument("history", {"type": "boolean"},
                 "Return a page of versions (newest ones, oldest first within the page).",
                 binding="flag"),
        Argument("limit", {"type": "integer", "minimum": 1, "maximum": MAX_HISTORY_LIMIT},
                 f"History: at most this many versions (default {HISTORY_LIMIT})."),
        Argument("before_revision", {"type": "integer", "minimum": 2},
                 "History: only versions older than this revision (the next page's cursor)."),
        max_bytes_argument(DEFAULT_PAGE_BYTES),
        Argument("raw", {"type": "boolean"}, "Return the stored canonical data text.",
                 binding="flag"),
        _AT_REVISION,
    ),
    output_schema={"type": "object", "properties": {
        "record": _RECORD, "versions": {"type": "array", "items": _RECORD},
        "version_count": {"type": "integer"}, "raw": {"type": "string"},
        "write_basis": _WRITE_BASIS, **PAGE_FACTS_SCHEMA}},
)
def get(inv: Invocation, args: dict[str, Any]) -> Result:
    if args.get("history") and args.get("revision"):
        raise UsageError("--history and --revision exclude each other", pointer="/history")
    if not args.get("history"):
        for name in _HISTORY_ONLY:
            if name in args:
                raise UsageError(f"--{name.replace('_', '-')} pages a history; add --history",
                                 code="invalid_argument", pointer=pointer(name))
    with inv.store().reader() as reader:
        check_at_revision(reader, args.get("at_revision"))
        record_id = args["id"]
        current = _readable(reader, inv, record_id)
        if args.get("history"):
            data: dict[str, Any] = history_page(reader.history(record_id), args)
        else:
            record = _readable(reader, inv, record_id, args.get("revision")) \
                if args.get("revision") else current
            if args.get("raw"):
                data = {"raw": _stored_text(record.data_text)}
            else:
                if record.damage is not None:
                    from assay.ledger.store import RecordUnreadable

                    raise RecordUnreadable(record.id, record.revision, record.damage)
                data = {"record": record.to_dict()}
            data.update(page_facts({"versions": 0}, []))
        data["write_basis"] = write_basis(reader, {record_id: current.revision})
        return Result(data, ledger_revision=reader.ledger_revision)


def history_page(versions: list[Any], args: dict[str, Any]) -> dict[str, Any]:
    """One page of a record's history (see the ``get`` description); pure over ``versions``.

    Versions are walked newest first below ``before_revision`` and returned
    oldest first. An unreadable version is listed with data null and its
    reason, never dropped and never read as data.
    """
    record_id = args["id"]
    before = args.get("before_revision")
    candidates = [v for v in reversed(versions) if before is None or v.revision < before]
    paging: dict[str, Any] = {k: args[k] for k in ("limit", "max_bytes") if k in args}
    view = functools.cache(lambda v: v.to_dict())

    def build(shown: Any, oversized: Any, rest: int) -> dict[str, Any]:
        reads = [recovering_read("get", {"id": record_id, "revision": v.revision},
                                 "item_too_large", revision=v.revision) for v in oversized]
        walked = [v.revision for v in (*shown, *oversized)]
        if rest:
            cursor = min(walked) if walked else before
            reads.append(recovering_read("get", {"id": record_id, "history": True,
                                                 "before_revision": cursor, **paging},
                                         "next_page"))
        return {"id": record_id, "version_count": len(versions),
                "versions": [view(v) for v in sorted(shown, key=lambda v: v.revision)],
                **page_facts({"versions": len(candidates) - len(shown)}, reads)}

    return fit(candidates, build, limit=args.get("limit", HISTORY_LIMIT),
               max_bytes=args.get("max_bytes", DEFAULT_PAGE_BYTES),
               size=lambda v: encoded_size(view(v)) + 1).document


FIND_LIMIT = 100
MAX_FIND_LIMIT = 1000
# find counts the matches after its page exactly up to this many.
MAX_OMITTED_COUNT = 10_000
_FIND_FILTERS = ("query", "scope", "kind", "status", "link", "limit")


@operation(
    "find",
    summary="Find current records by scope, kind, status, link or a text query.",
    description=("Matches the query case-insensitively in ids and canonical data, from the "
                 "ledger's text index for a query of 3 characters or more. "
                 "Records come in id order after the id named by after, at most limit of them; "
                 "omitted counts the other matches after the page (exactly up to 10,000; "
                 "past that omitted_at_least is true), and read_more holds the next page's "
                 "read."),
    writes=False,
    bounds=Bound("record", items=FIND_LIMIT, max_items=MAX_FIND_LIMIT,
                 arguments=("limit", "after"), recover=(
                     "Records in id order; the next page starts after the last record shown "
                     "(after). Each record is returned whole (at most 4 MiB of data).")),
    arguments=(
        Argument("query", {"type": "string"}, "Text to look for in ids and data.",
                 binding="literal"),
        Argument("scope", {"type": "string"}, "Only this scope (one of the project's scopes)."),
        Argument("kind", {"type": "string"}, "Only this record kind."),
        Argument("status", {"enum": ["current", "retired", "superseded"]}, "Only this status."),
        Argument("link", {"type": "string"}, "Only records linking to ID, or REL:ID."),
        Argument("limit", {"type": "integer", "minimum": 1, "maximum": MAX_FIND_LIMIT},
                 f"At most this many records (default {FIND_LIMIT})."),
        Argument("after", {"type": "string", "minLength": 1},
                 "Only records whose id sorts after this id (the next page's cursor)."),
        _AT_REVISION,
    ),
    output_schema={"type": "object", "properties": {
        "records": {"type": "array", "items": _RECORD}, "count": {"type": "integer"},
        "more": {"type": "boolean"}, **PAGE_FACTS_SCHEMA,
        "omitted_at_least": {"type": "boolean", "description": (
            f"True when more than {MAX_OMITTED_COUNT:,} records match after the page: "
            f"omitted.records is then {MAX_OMITTED_COUNT:,}, a lower bound.")},
        "advisories": {"type": "array", "description": (
            "Present only with a query on a ledger without a text index: one advisory "
            "text_index_unavailable (the answer is the same, read by a scan)."),
            "items": {"type": "object", "properties": {
                "code": {"const": "text_index_unavailable"}, "message": {"type": "string"},
                "action": {"type": "string"}, "advisory": {"const": True}}}}}},
)
def find(inv: Invocation, args: dict[str, Any]) -> Result:
    access = inv.access()
    scopes: tuple[str, ...] = access.scopes
    if args.get("scope"):
        if args["scope"] not in access.scopes:
            raise AssayError(f"{args['scope']!r} is not one of this project's scopes "
                             f"({', '.join(access.scopes)})", code="out_of_scope", pointer="/scope")
        scopes = (args["scope"],)
    link = None
    if args.get("link"):
        value = args["link"]
        head, _, rest = value.partition(":")
        link = (head, rest) if rest.count(":") >= 1 else (None, value)
    limit = args.get("limit", FIND_LIMIT)
    # The audience filter runs inside the query, before the limit and the
    # count: a record private to someone else never shortens a page, sets
    # `more` or shows in a count.
    filters: dict[str, Any] = {"scopes": scopes, "kind": args.get("kind"), "status": args.get("status"),
               "link": link, "query": args.get("query"), "audiences": access.audiences,
               "after": args.get("after")}
    with inv.store().reader() as reader:
        check_at_revision(reader, args.get("at_revision"))
        records = reader.find(limit=limit, **filters)
        omitted = 0
        if len(records) == limit:
            # Counting every match would read every match: past the bound the
            # count says "at least" (the next page's read is the same).
            omitted = reader.find_count(**{**filters, "after": records[-1].id},
                                        at_most=MAX_OMITTED_COUNT + 1)
        at_least = omitted > MAX_OMITTED_COUNT
        omitted = min(omitted, MAX_OMITTED_COUNT)
        reads = []
        if omitted:
            reads.append(recovering_read("find", {
                **{k: args[k] for k in _FIND_FILTERS if k in args}, "after": records[-1].id},
                "next_page"))
        facts = page_facts({"records": omitted}, reads)
        data = {"records": [r.to_dict() for r in records], "count": len(records),
                "more": facts["truncated"], **facts, "omitted_at_least": at_least}
        if args.get("query") and not reader.text_index:
            data["advisories"] = [text_index_unavailable()]
        return Result(data, ledger_revision=reader.ledger_revision)


def text_index_unavailable() -> dict[str, Any]:
    """The advisory of a text query answered by a scan: the ledger has no text index."""
    return {
        "code": "text_index_unavailable",
        "message": ("this ledger has no text index (its PostgreSQL server lacks the pg_trgm "
                    "extension, or the ledger's owner may not create it): the query read "
                    "every current record; the answer is the same"),
        "action": ("Have a superuser run 'CREATE EXTENSION pg_trgm' in the ledger's database; "
                   "the ledger's owner then builds the index the next time it opens the ledger."),
        "advisory": True,
    }


def _status_change(inv: Invocation, args: dict[str, Any], status: str,
                   superseded_by: str | None) -> Result:
    from assay.ledger.store import Write

    refuse_reserved(args["id"])
    store = inv.store()
    with store.reader() as reader:
        record = _readable(reader, inv, args["id"])
        if superseded_by is not None:
            successor = inv.access().visible(reader.get(superseded_by))
            if successor is None:
                raise AssayError(f"the successor {superseded_by} does not exist",
                                 code="record_not_found", pointer="/by")
    if record.status != "current":
        raise AssayError(f"{record.id} is already {record.status}", code="invalid_status_transition",
                         pointer="/id", details={"status": record.status})
    receipt = store.put(Write(
        id=record.id, data=record.data, scope=record.scope, status=status,
        superseded_by=superseded_by, links=record.links, audience=record.audience,
        sources=record.sources, expect_revision=args["expect_revision"],
        request_id=args.get("request_id"),
    ))
    return Result(receipt.to_dict(), ledger_revision=receipt.ledger_revision)


@operation(
    "retire",
    admin=True,
    view="ledger:receipt",
    summary="Retire a record: a new version with status retired and the same data.",
    description="Writes one version. Retired records no longer count as evidence.",
    writes=True,
    arguments=(
        Argument("id", _RECORD_ID, "Record id kind:name.", binding="literal", required=True),
        Argument("expect_revision", {"type": "integer", "minimum": 1},
                 "The record's current revision.", required=True),
        Argument("request_id", {"type": "string", "minLength": 1}, "Idempotency key."),
    ),
    output_schema=_RECEIPT,
)
def retire(inv: Invocation, args: dict[str, Any]) -> Result:
    return _status_change(inv, args, "retired", None)


@operation(
    "supersede",
    admin=True,
    view="ledger:receipt",
    summary="Mark a record superseded by another: a new version naming its successor.",
    description="Writes one version. Superseded records no longer count as evidence.",
    writes=True,
    arguments=(
        Argument("id", _RECORD_ID, "Record id kind:name.", binding="literal", required=True),
        Argument("by", _RECORD_ID, "The successor's id.", required=True),
        Argument("expect_revision", {"type": "integer", "minimum": 1},
                 "The record's current revision.", required=True),
        Argument("request_id", {"type": "string", "minLength": 1}, "Idempotency key."),
    ),
    output_schema=_RECEIPT,
)
def supersede(inv: Invocation, args: dict[str, Any]) -> Result:
    if args["by"] == args["id"]:
        raise AssayError("a record cannot supersede itself", code="invalid_status", pointer="/by")
    return _status_change(inv, args, "superseded", args["by"])


@operation(
    "ledger.info",
    view="ledger:ledger_info",
    summary="Show the ledger: backend, epoch, revision, schema version and counts.",
    description="The backend, epoch, ledger revision, schema version and record counts.",
    writes=False,
    bounds=Bound("summary", items=1, max_items=1, whole=True,
                 recover="A fixed set of facts and counts; nothing is ever left out."),
    output_schema={"type": "object", "properties": {
        "backend": {"type": "string"}, "location": {"type": "string"}, "epoch": {"type": "string"},
        "ledger_revision": {"type": "integer"}, "schema_version": {"type": "integer"},
        "records": {"type": "integer"}, "versions": {"type": "integer"},
        "by_status": {"type": "object"}}},
)
def ledger_info(inv: Invocation, args: dict[str, Any]) -> Result:
    info = inv.store().info()
    return Result(info.to_dict(), ledger_revision=info.ledger_revision)


@operation(
    "ledger.verify",
    view="ledger:ledger_info",
    summary="Walk the ledger's hash chain: every version against its seal and its place.",
    description=(
        "Checks every stored version in ledger revision order, in every partition: the "
        "revisions run from 1 without a gap, each version's data hashes to its data digest, its "
        "fields to its seal (version_sha256) and its chain value (chain_sha256) follows from "
        "the one before. Answers the ledger revision walked and the chain head, or "
        "ledger_chain_broken naming the first broken ledger revision and what is wrong there "
        "(version_missing, data_digest_mismatch, version_digest_mismatch, chain_mismatch). "
        "Another principal's private version is named by its ledger revision only."
    ),
    cli_note="Exit 1 when the chain is broken.",
    writes=False,
    bounds=Bound("summary", items=1, max_items=1, whole=True,
                 recover="A fixed set of facts; nothing is ever left out."),
    output_schema={"type": "object", "properties": {
        "ok": {"type": "boolean"}, "ledger_revision": {"type": "integer"},
        "versions": {"type": "integer"}, "chain_sha256": {"type": "string"}}},
)
def ledger_verify(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.ledger.record import view_audiences

    store = inv.store()
    walk = store.walk_chain()
    broken = walk.broken
    if broken is not None:
        details: dict[str, Any] = broken.to_dict()
        if broken.audience in view_audiences(store.principal):
            details["id"] = broken.id
        raise AssayError(
            f"the ledger's history was changed at ledger revision {broken.ledger_revision}: "
            f"{broken.message}", code="ledger_chain_broken", details=details,
            action="Compare the ledger with a backup or an attestation's chain head "
                   "('assay verify-attestation'); versions before this revision are intact.")
    return Result({"ok": True, "ledger_revision": walk.ledger_revision,
                   "versions": walk.versions, "chain_sha256": walk.chain_sha256},
                  ledger_revision=walk.ledger_revision)
def _postgres_store(inv: Invocation) -> Any:
    """The call's ledger when it is a PostgreSQL one (else ``roles_need_postgres``)."""
    store = inv.store()
    if store.backend != "postgresql":
        raise UsageError(
            f"database roles exist only on a PostgreSQL ledger, and this one is {store.backend}",
            code="roles_need_postgres", pointer="/db",
            action="Use a postgresql:// ledger (--db, ASSAY_DB or [ledger] url); on SQLite a "
                   "principal is a label, and signed approvals are the boundary.")
    return store


@operation(
    "ledger.roles",
    summary="Show the database roles of a PostgreSQL ledger and what each may read and write.",
    description=(
        "On a PostgreSQL ledger the principal is the role the connection authenticated as. This "
        "answers, as data, the two group roles (assay_agent, assay_reviewer) with their "
        "privileges and member roles, the row-level security policy of each private table, the "
        "kinds only a reviewer writes, and the session's own role (owner, reviewer or not). "
        "roles_need_postgres on SQLite."),
    writes=False,
    bounds=Bound("summary", items=1, max_items=1, whole=True,
                 recover="A fixed description and the members of two group roles."),
    output_schema={"type": "object", "properties": {
        "schema": {"type": "string"}, "groups": {"type": "object"},
        "row_level_security": {"type": "object"}, "reviewer_kinds": {"type": "array"},
        "gate_kinds": {"type": "array"}, "session": {"type": "object"}}},
)
def ledger_roles(inv: Invocation, args: dict[str, Any]) -> Result:
    return Result(_postgres_store(inv).roles())


@operation(
    "ledger.grant",
    summary="Make a database role an agent or a reviewer of a PostgreSQL ledger.",
    description=(
        "The ledger owner's operation. Creates the assay_agent and assay_reviewer group roles "
        "when missing (NOLOGIN), gives them the minimum privileges on this ledger's schema "
        "(SELECT through row-level security, EXECUTE on the write functions, no INSERT, UPDATE "
        "or DELETE), and makes ROLE a member of the one named. Idempotent. Refused to any other "
        "role (ledger_admin_required), for a role the server does not have (role_not_found), "
        "and on SQLite (roles_need_postgres)."),
    writes=True,
    admin=True,
    idempotent=True,
    arguments=(
        Argument("role", {"type": "string", "minLength": 1, "maxLength": 63},
                 "The existing database role (a login role) to grant.", binding="literal",
                 required=True),
        Argument("agent", {"type": "boolean"}, "Make it a member of assay_agent.",
                 binding="flag"),
        Argument("reviewer", {"type": "boolean"}, "Make it a member of assay_reviewer.",
                 binding="flag"),
    ),
    output_schema={"type": "object", "properties": {
        "role": {"type": "string"}, "group": {"type": "string"}, "schema": {"type": "string"},
        "statements": {"type": "array", "items": {"type": "string"}}}},
)
def ledger_grant(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.ledger.roles import GROUPS

    chosen = [name for name in ("agent", "reviewer") if args.get(name)]
    if len(chosen) != 1:
        raise UsageError("name exactly one of --agent and --reviewer", code="grant_group_required",
                         pointer="/agent" if not chosen else "/reviewer",
                         action="Run 'assay ledger grant --agent -- ROLE' or "
                                "'assay ledger grant --reviewer -- ROLE'.")
    store = _postgres_store(inv)
    statements = store.grant(args["role"], chosen[0])
    return Result({"role": args["role"], "group": GROUPS[chosen[0]], "schema": store.schema,
                   "statements": statements})
