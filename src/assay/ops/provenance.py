"""Provenance operations: notes, memory, the publication gate and pending decisions."""

from __future__ import annotations

from typing import Any

from assay.errors import AssayError, UsageError
from assay.ops import Argument, Bound, Invocation, Result, operation
from assay.ops.bounds import PAGE_FACTS_SCHEMA, recovering_read
from assay.paging import page_facts

_SOURCE = Argument("source", {"type": "array", "items": {"type": "string"}},
                   "A record version this derives from, ID@REVISION (repeatable).")
_AUDIENCE = Argument("audience", {"type": "string"},
                     "project or private:<you> (default: what the sources imply).")
_SCOPE_W = Argument("scope", {"type": "string"},
                    "project (default: this project's scope) or global.")
_SCOPE_R = Argument("scope", {"type": "string"}, "Only this one of the project's scopes.")
# Words after `--` are joined with single spaces, so quoting is optional on
# the CLI; over MCP a plain string is the usual form.
_WORDS = {"type": ["string", "array"], "items": {"type": "string"}, "minLength": 1}
_TEXT = Argument("text", _WORDS, "The text.", binding="literals",
                 required=True)


def _words(value: Any) -> str:
    return " ".join(value) if isinstance(value, list) else str(value)
_ENVELOPE = {"type": "object", "properties": {
    "version": {"const": 1}, "status": {"enum": ["known", "unknown", "revoked"]},
    "epoch": {"type": "string"}, "revision": {"type": "integer"},
    "origins": {"type": "array"}, "leaves": {"type": "array"}, "audience": {"type": "string"},
    "reason": {"enum": ["legacy", "overflow", "equivocation", "invalid"]}}}
_UNAVAILABLE = {"type": "object", "properties": {
    "id": {"type": "string"}, "revision": {"type": "integer"}, "reason": {"type": "string"},
    "line": {"type": "string"}, "source": {"type": "string"}}}
_READ = {"type": "object", "properties": {
    "enabled": {"type": "boolean"}, "items": {"type": "array"}, "count": {"type": "integer"},
    "more": {"type": "boolean"}, "unavailable": {"type": "array", "items": _UNAVAILABLE},
    "envelope": {"anyOf": [_ENVELOPE, {"type": "null"}]},
    "envelope_sha256": {"type": ["string", "null"]}, "query": {"type": "array"},
    "ledger_revision": {"type": "integer"}, **PAGE_FACTS_SCHEMA}}
_VERDICT = {"type": "object", "properties": {
    "published": {"type": "boolean"}, "reason": {"type": ["string", "null"]},
    "line": {"type": "string"}, "attempts": {"type": "integer"},
    "checked_revision": {"type": ["integer", "null"]}, "envelope_sha256": {"type": "string"},
    "failures": {"type": "array"}, "write_basis": {"type": ["object", "null"]}}}
_ADDED = {"type": "object", "properties": {
    "receipt": {"type": "object"}, "audience": {"type": "string"}, "sources": {"type": "array"},
    "envelope": _ENVELOPE, "gate": _VERDICT}}


def _write_scope(inv: Invocation, args: dict[str, Any]) -> str:
    project = inv.project()
    scope = args.get("scope") or project.scope
    if scope == "project":
        scope = project.scope
    if scope not in (project.scope, "global"):
        raise AssayError(f"this project writes only to {project.scope} or global, not {scope!r}",
                         code="out_of_scope", pointer="/scope")
    return scope


def _add(inv: Invocation, args: dict[str, Any], kind: str) -> Result:
    from assay.ops.ledger import parse_sources
    from assay.provenance.saved import add

    scope = _write_scope(inv, args)
    sources = parse_sources(args.get("source", []))
    out = add(inv.store(), inv.access(), kind=kind, text=_words(args["text"]), scope=scope,
              sources=sources, audience=args.get("audience"))
    receipt = out["receipt"]
    return Result(out, ledger_revision=receipt["ledger_revision"])


def _paged(operation: str, kind: str, args: dict[str, Any], data: dict[str, Any],
           carry: tuple[str, ...]) -> dict[str, Any]:
    """``data`` with the page facts in place of its ``page``; the next read carries ``carry``."""
    page = data.pop("page")
    reads = []
    if page["omitted"]:
        reads.append(recovering_read(operation, {**{k: args[k] for k in carry if k in args},
                                                 "after": page["after"]}, "next_page"))
    return {**data, **page_facts({kind: page["omitted"]}, reads)}


def _list(inv: Invocation, args: dict[str, Any], kind: str) -> Result:
    from assay.provenance.saved import list_entries

    with inv.store().reader() as reader:
        data = list_entries(reader, inv.access(), kind=kind, scope=args.get("scope"),
                            limit=args.get("limit", 100), after=args.get("after"))
    data = _paged(f"{kind}.list", "notes" if kind == "note" else "entries", args, data,
                  ("scope", "limit"))
    return Result(data, ledger_revision=data["ledger_revision"])


_AFTER = Argument("after", {"type": "string", "minLength": 1},
                  "Only entries whose id sorts after this id (the next page's cursor).")
_LIST_RECOVER = ("{what} by id; each is an item or an unavailable line. A page also ends before "
                 "an item that would overflow its envelope (32 sources). The next page starts "
                 "after the last one examined (after).")


@operation(
    "note.add",
    summary="Write a working note, pinned to the exact record versions it was derived from.",
    description=(
        "Writes one note: record with data {version, text, author}. Each `source` ID@REVISION is "
        "pinned to that version's data digest and must be readable by you; a private source keeps "
        "the note private to you (a wider `audience` is audience_too_wide). The sources' envelope "
        "passes the publication gate first; a withheld one writes nothing."
    ),
    writes=True,
    arguments=(_TEXT, _SOURCE, _AUDIENCE, _SCOPE_W),
    output_schema=_ADDED,
)
def note_add(inv: Invocation, args: dict[str, Any]) -> Result:
    return _add(inv, args, "note")


@operation(
    "note.list",
    view="provenance:saved_entries",
    summary="List the notes you may read whose sources are all still current and readable.",
    description=(
        "Filters by scope and audience first; a note whose closure has a missing, "
        "retired, superseded, modified or unreadable source, or no typed provenance, is omitted "
        "with an unavailable line while the others stay. Returns the union envelope of what it "
        "admitted (known-empty when nothing)."
    ),
    writes=False,
    bounds=Bound("note", items=100, max_items=1000, arguments=("limit", "after"),
                 recover=_LIST_RECOVER.format(what="Notes")),
    arguments=(
        _SCOPE_R,
        Argument("limit", {"type": "integer", "minimum": 1, "maximum": 1000},
                 "At most this many notes (default 100)."),
        _AFTER,
    ),
    output_schema=_READ,
)
def note_list(inv: Invocation, args: dict[str, Any]) -> Result:
    return _list(inv, args, "note")


def _memory_off(inv: Invocation) -> bool:
    return not inv.project().memory_enabled


def _require_memory(inv: Invocation) -> None:
    """``memory_disabled`` for the memory writers when memory is switched off."""
    if _memory_off(inv):
        raise AssayError("memory is switched off in assay.toml", code="memory_disabled",
                         pointer="/memory/enabled", action="Set [memory] enabled = true to use it.")


_DISABLED = {"enabled": False, "items": [], "count": 0, "more": False, "unavailable": [],
             "envelope": None, "envelope_sha256": None, **page_facts({"entries": 0}, [])}


@operation(
    "memory.add",
    summary="Remember something across sessions (private to you unless `audience` is project).",
    description=(
        "Writes one memory: record, like note add, but private:<you> by default. With [memory] "
        "enabled = false in assay.toml it is memory_disabled and nothing is read or written."
    ),
    writes=True,
    arguments=(_TEXT, _SOURCE, _AUDIENCE, _SCOPE_W),
    output_schema=_ADDED,
)
def memory_add(inv: Invocation, args: dict[str, Any]) -> Result:
    _require_memory(inv)
    return _add(inv, args, "memory")


@operation(
    "memory.search",
    view="provenance:saved_entries",
    summary="Keyword search of the memory you may read, filtered before anything is rendered.",
    description=(
        "Every query word must occur in the entry's text. Scope and audience filter "
        "first, then the words, then each entry's whole closure is revalidated; only admitted "
        "entries are rendered. With [memory] enabled = false it returns enabled=false and "
        "reads nothing (not even the ledger)."
    ),
    writes=False,
    bounds=Bound("memory entry", items=20, max_items=200, arguments=("limit", "after"),
                 recover=(
                     "Matching entries best first; each is an item or an unavailable line. A "
                     "page also ends before an entry that would overflow its envelope (32 "
                     "sources). The next page starts after the last one examined (after, its "
                     "rank HITS:ID). "
                     "At most 10,000 candidate entries are scanned.")),
    arguments=(
        Argument("query", _WORDS, "Words to look for.",
                 binding="literals", required=True),
        _SCOPE_R,
        Argument("limit", {"type": "integer", "minimum": 1, "maximum": 200},
                 "At most this many entries (default 20)."),
        Argument("after", {"type": "string", "minLength": 1},
                 "Only entries ranked after this cursor (HITS:ID, the next page's cursor)."),
    ),
    output_schema=_READ,
)
def memory_search(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.provenance.saved import search

    if _memory_off(inv):
        return Result(dict(_DISABLED))
    with inv.store().reader() as reader:
        data = search(reader, inv.access(), query=_words(args["query"]), scope=args.get("scope"),
                      limit=args.get("limit", 20), after=args.get("after"))
    data = _paged("memory.search", "entries", args, data, ("query", "scope", "limit"))
    return Result({"enabled": True, **data}, ledger_revision=data["ledger_revision"])


@operation(
    "memory.list",
    view="provenance:saved_entries",
    summary="List the memory entries you may read, each revalidated through its closure.",
    description="Like note list, for memory: records. Disabled memory reads nothing.",
    writes=False,
    bounds=Bound("memory entry", items=100, max_items=1000, arguments=("limit", "after"),
                 recover=_LIST_RECOVER.format(what="Entries")),
    arguments=(
        _SCOPE_R,
        Argument("limit", {"type": "integer", "minimum": 1, "maximum": 1000},
                 "At most this many entries (default 100)."),
        _AFTER,
    ),
    output_schema=_READ,
)
def memory_list(inv: Invocation, args: dict[str, Any]) -> Result:
    if _memory_off(inv):
        return Result(dict(_DISABLED))
    result = _list(inv, args, "memory")
    return Result({"enabled": True, **result.data}, ledger_revision=result.ledger_revision)


@operation(
    "publish.check",
    view="provenance:publish_verdict",
    summary="Run the publication gate on a dependency envelope: publish or withhold, with a reason.",
    description=(
        "Revalidates the envelope (`envelope`, from a context read's output) against "
        "the current ledger on one snapshot, confirms on a second and retries once if a source "
        "moved; continued change, unknown provenance, a missing, retired, modified or unreadable "
        "source, or an unreadable ledger withhold it."
    ),
    cli_note=("Exit status 1 when withheld. The envelope may also be a file named after -- "
              "(- for standard input)."),
    writes=False,
    bounds=Bound("verdict", items=1, max_items=1, whole=True, recover=(
        "One verdict on the envelope given.")),
    arguments=(
        Argument("file", {"type": "string", "minLength": 1},
                 "A file holding the envelope JSON.", binding="literal",
                 cli_help="- reads it from standard input."),
        Argument("envelope", {"type": "object"}, "The envelope itself (instead of a file).",
                 binding="json_file", cli="--envelope"),
    ),
    output_schema=_VERDICT,
)
def publish_check(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.canonical import parse
    from assay.provenance.envelope import parse_envelope
    from assay.provenance.publish import check

    if ("file" in args) == ("envelope" in args):
        raise UsageError("pass the envelope as -- FILE (or -) or as --envelope, exactly once",
                         code="missing_argument", pointer="/file")
    if "envelope" in args:
        value = args["envelope"]
    else:
        from assay.inputs import in_input

        raw = inv.read_input(args["file"], where="/file", label="the envelope file")
        try:
            value = parse(raw)
        except AssayError as err:
            raise in_input(err, label="the envelope file", path=args["file"],
                           where="/file") from None
    # A read's whole output is accepted too: its envelope is taken from it.
    if isinstance(value, dict) and "envelope" in value and "version" not in value:
        value = value["envelope"]
    if isinstance(value, dict) and "data" in value and "ok" in value:
        value = (value.get("data") or {}).get("envelope")
    envelope = parse_envelope(value)
    verdict = check(inv.store(), inv.access(), envelope)
    return Result(verdict.to_dict(), ledger_revision=verdict.checked_revision,
                  exit_code=0 if verdict.published else 1)


@operation(
    "pending.ask",
    summary="Ask a question (or make a proposal) that keeps the envelope of the context it used.",
    description=(
        "Writes one pending: record storing its input envelope (the pinned sources' closure). "
        "The sources pass the publication gate first."
    ),
    writes=True,
    arguments=(
        _TEXT, _SOURCE, _SCOPE_W,
        Argument("proposal", {"type": "boolean"}, "A proposal rather than a question.",
                 binding="flag"),
    ),
    output_schema={"type": "object", "properties": {
        "receipt": {"type": "object"}, "audience": {"type": "string"}, "envelope": _ENVELOPE}},
)
def pending_ask(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.ops.ledger import parse_sources
    from assay.provenance.pending import ask

    out = ask(inv.store(), inv.access(), text=_words(args["text"]), scope=_write_scope(inv, args),
              kind="proposal" if args.get("proposal") else "question",
              sources=parse_sources(args.get("source", [])))
    return Result(out, ledger_revision=out["receipt"]["ledger_revision"])


@operation(
    "pending.answer",
    admin=True,
    view="provenance:pending_answer",
    summary="Answer a pending decision; its stored envelope is revalidated first.",
    description=(
        "Revalidates the pending record's stored envelope through the publication gate before "
        "joining the answer text or binding `assent`. Withheld (a source revoked, changed or "
        "unreadable, or no stored envelope): bound=false, nothing written."
    ),
    cli_note="Exit status 1 when withheld.",
    writes=True,
    arguments=(
        Argument("id", {"type": "string", "minLength": 1}, "The pending: record id.",
                 required=True),
        Argument("text", _WORDS, "The answer text.", binding="literals"),
        Argument("assent", {"type": "boolean"}, "Agree, without text.", binding="flag"),
    ),
    output_schema={"type": "object", "properties": {
        "bound": {"type": "boolean"}, "id": {"type": "string"}, "revision": {"type": "integer"},
        "reason": {"type": ["string", "null"]}, "line": {"type": "string"},
        "answer": {"type": "object"}, "gate": _VERDICT}},
)
def pending_answer(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.provenance.pending import answer

    text = _words(args["text"]) if args.get("text") else None
    out = answer(inv.store(), inv.access(), pending_id=args["id"], text=text,
                 assent=bool(args.get("assent")))
    ledger_revision = out["answer"]["ledger_revision"] if out["bound"] else None
    return Result(out, ledger_revision=ledger_revision, exit_code=0 if out["bound"] else 1)


@operation(
    "pending.list",
    summary="List pending questions and proposals whose context still holds.",
    description=(
        "Open decisions by default (`state` answered or any). Filters by scope and "
        "audience first; a decision whose sources were retired, changed or are no longer "
        "readable is an unavailable line. Returns the union envelope of what it admitted."
    ),
    writes=False,
    bounds=Bound("decision", items=100, max_items=1000, arguments=("limit", "after"),
                 recover=_LIST_RECOVER.format(what="Decisions")),
    arguments=(
        Argument("state", {"enum": ["open", "answered", "any"]}, "Which decisions (default open)."),
        Argument("limit", {"type": "integer", "minimum": 1, "maximum": 1000},
                 "At most this many decisions (default 100)."),
        _AFTER,
    ),
    output_schema=_READ,
)
def pending_list(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.provenance.pending import list_pending

    with inv.store().reader() as reader:
        data = list_pending(reader, inv.access(), state=args.get("state", "open"),
                            limit=args.get("limit", 100), after=args.get("after"))
    data = _paged("pending.list", "decisions", args, data, ("state", "limit"))
    return Result(data, ledger_revision=data["ledger_revision"])


_IDS = Argument("ids", {"type": "array", "items": {"type": "string", "minLength": 1}},
                "The record ids of the entries to adopt; none: list the legacy entries.",
                binding="literals")
_LEGACY_ENTRY = {"type": "object", "properties": {
    "id": {"type": "string"}, "revision": {"type": "integer"},
    "text": {"type": ["string", "null"]}, "author": {"type": ["string", "null"]},
    "audience": {"type": "string"}, "scope": {"type": "string"}, "sources": {"type": "array"},
    "data_sha256": {"type": "string"}, "origin": {"type": "string"},
    "request_id": {"type": ["string", "null"]}, "created_at": {"type": "string"},
    "adoptable": {"type": "boolean"}, "reason": {"type": ["string", "null"]},
    "line": {"type": ["string", "null"]}}}
_ADOPT = {"type": "object", "properties": {
    "kind": {"type": "string"}, "entries": {"type": "array", "items": _LEGACY_ENTRY},
    "count": {"type": "integer"}, "more": {"type": "boolean"},
    "ledger_revision": {"type": "integer"}, **PAGE_FACTS_SCHEMA,
    "adopted": {"type": "array", "items": {"type": "object", "properties": {
        "id": {"type": "string"}, "revision": {"type": "integer"},
        "adopted_revision": {"type": "integer"}, "data_sha256": {"type": "string"}}}},
    "adoption": {"type": "object"}, "by": {"type": "string"},
    "created_at": {"type": ["string", "null"]}}}
_ADOPT_DESCRIPTION = (
    "A person's operation. {What} written by an earlier release of assay, before saved context "
    "carried typed provenance, are withheld by every read as provenance_legacy: nothing in "
    "them tells them from entries a client put forged. Without `ids` it lists the {kind} "
    "entries you may read that carry no typed provenance, each whole, with whether it could "
    "be adopted (and why not); it writes nothing. With `ids` it adopts the entries named: "
    "each gets a new version with the same data and pinned sources and typed provenance, "
    "and one adoption: record says who adopted which versions (its created_at, when), all "
    "in one transaction under the publication gate's write basis, or nothing at all."
)


def _adopt(inv: Invocation, args: dict[str, Any], kind: str) -> Result:
    from assay.provenance.adoption import adopt, legacy_entries

    access = inv.access()
    ids = args.get("ids") or []
    if not ids:
        with inv.store().reader() as reader:
            data = legacy_entries(reader, access, kind=kind, scope=args.get("scope"),
                                  limit=args.get("limit", 50), after=args.get("after"))
        data = _paged(f"{kind}.adopt", "entries", args, data, ("scope", "limit"))
        steps: tuple[str, ...] = ()
        if any(entry["adoptable"] for entry in data["entries"]):
            step = (f"Read each entry; adopt the ones you recognise: 'assay {kind} adopt -- "
                    "ID...'")
            steps = (step,)
        return Result(data, ledger_revision=data["ledger_revision"], next=steps)
    out = adopt(inv.store(), access, kind=kind, ids=ids, scope=inv.project().scope)
    return Result(out, ledger_revision=out["adoption"]["ledger_revision"])


_ADOPT_ARGUMENTS = (
    _IDS, _SCOPE_R,
    Argument("limit", {"type": "integer", "minimum": 1, "maximum": 200},
             "List at most this many legacy entries (default 50)."),
    Argument("after", {"type": "string", "minLength": 1},
             "List only entries whose id sorts after this id (the next page's cursor)."),
)


@operation(
    "note.adopt",
    summary="List notes an earlier release wrote (withheld as legacy), or adopt the ones named.",
    description=_ADOPT_DESCRIPTION.format(What="Notes", kind="note"),
    writes=True,
    admin=True,
    arguments=_ADOPT_ARGUMENTS,
    output_schema=_ADOPT,
)
def note_adopt(inv: Invocation, args: dict[str, Any]) -> Result:
    return _adopt(inv, args, "note")


@operation(
    "memory.adopt",
    summary="List memory an earlier release wrote (withheld as legacy), or adopt the entries named.",
    description=_ADOPT_DESCRIPTION.format(What="Memory entries", kind="memory") + (
        " With [memory] enabled = false it is memory_disabled."),
    writes=True,
    admin=True,
    arguments=_ADOPT_ARGUMENTS,
    output_schema=_ADOPT,
)
def memory_adopt(inv: Invocation, args: dict[str, Any]) -> Result:
    _require_memory(inv)
    return _adopt(inv, args, "memory")
