"""Saved context: ``note:`` and ``memory:`` records with typed provenance.

A note or memory entry is a record whose ``data`` is the closed object
``{version: 1, text, author}`` and whose ``sources`` pin every record version
it was derived from (id, exact revision, data digest). Its id is content
derived (``note:n-1a2b3c4d``, ``memory:m-1a2b3c4d``), so writing the same
entry twice replays the first receipt.

Typed provenance is a marker ``put`` cannot forge: only :func:`add` writes
these records, with origin ``derived`` (assay's own code path); every
client ``put`` is a ``claim``. Reads serve nothing else as saved context: a
``note:`` or ``memory:`` record written with ``put`` (however exact its
data) is listed as unavailable (``provenance_legacy``), and so is an entry
whose stored data fails its integrity check (``record_unreadable``).
Entries an earlier release wrote before this marker are re-stamped only by
a person, through :mod:`assay.provenance.adoption`.

Writing (:func:`add`): sources are pinned on one snapshot (each must be
readable by the writer), the audience is checked against the one the sources
imply (a private source keeps the entry private to that principal), and the
sources' envelope passes the publication gate before the write, which then
commits under the gate's write basis.

Reading (:func:`list_entries`, :func:`search`): candidates are filtered by
scope and audience first, then by keywords, then admitted through their
whole closure; only admitted entries are rendered. Entries that fail are
``unavailable`` lines; a record private to someone else is never counted,
named or digested. Every read returns the union envelope of what it
admitted (known-empty when nothing was).

Imports the base modules, the ledger contract and access, and the sibling
provenance modules.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from assay.errors import AssayError, pointer
from assay.ids import content_id
from assay.ledger.access import Access
from assay.ledger.store import Reader, Record, SourceRef, Store, Write
from assay.provenance.admission import admit, closure
from assay.provenance.envelope import NOBODY, Envelope, Origin, known_empty, merge
from assay.provenance.publish import Hook, require

__all__ = [
    "KINDS",
    "MAX_TEXT_BYTES",
    "SAVED_ORIGIN",
    "add",
    "bind_sources",
    "has_saved_shape",
    "is_typed",
    "list_entries",
    "read_scopes",
    "search",
    "source_envelope",
    "tokens",
]

KINDS = {"note": "n", "memory": "m"}
MAX_TEXT_BYTES = 64 * 1024
_SCAN_LIMIT = 10_000
_WORD = re.compile(r"\w+", re.UNICODE)


SAVED_ORIGIN = "derived"


def has_saved_shape(record: Record) -> bool:
    """Whether an intact record's data is a saved-context entry ``{version: 1, text, author}``."""
    data = record.data
    return (isinstance(data, dict) and set(data) == {"version", "text", "author"}
            and data["version"] == 1 and isinstance(data["text"], str)
            and isinstance(data["author"], str))


def is_typed(record: Record) -> bool:
    """Whether a record is saved context written by :func:`add` (origin and shape), intact."""
    return record.origin == SAVED_ORIGIN and record.damage is None and has_saved_shape(record)


def bind_sources(reader: Reader, access: Access, sources: Sequence[SourceRef]) -> tuple[SourceRef, ...]:
    """Pin each ``id@revision`` to the digest of that exact version.

    A version that does not exist, or is not readable by the writer now, is
    ``source_not_found`` (pointer ``/source/<i>``); the two are not told apart.
    """
    bound: list[SourceRef] = []
    for index, src in enumerate(sources):
        version = reader.get(src.id, src.revision)
        current = reader.get(src.id)
        if version is None or not access.can_read(version) or not access.can_read(current):
            raise AssayError(f"source {src.id}@{src.revision} does not exist or is not readable",
                             code="source_not_found", pointer=pointer("source", index),
                             action="Name a record version you can read: assay get -- ID.")
        if src.data_sha256 is not None and src.data_sha256 != version.data_sha256:
            raise AssayError(f"source {src.id}@{src.revision} has another digest",
                             code="source_modified", pointer=pointer("source", index))
        pin = SourceRef(src.id, src.revision, version.data_sha256)
        if pin not in bound:
            bound.append(pin)
    return tuple(bound)


def source_envelope(reader: Reader, sources: Sequence[SourceRef]) -> Envelope:
    """The union of the closures of pinned source versions (known-empty for none)."""
    envelopes = []
    for src in sources:
        version = reader.get(src.id, src.revision)
        if version is None:
            return known_empty(reader.epoch, reader.ledger_revision).taint("unknown", "invalid")
        envelopes.append(closure(reader, version))
    if not envelopes:
        return known_empty(reader.epoch, reader.ledger_revision)
    env = merge(*envelopes, epoch=reader.epoch, revision=reader.ledger_revision)
    return Envelope(env.status, env.epoch, env.revision,
                    tuple(Origin(s.id, s.revision) for s in sources), env.leaves, env.reason)


def _audience(requested: str | None, implied: str, principal: str, default_private: bool) -> str:
    own = f"private:{principal}"
    if requested is None:
        if implied != "project":
            return implied
        return own if default_private else "project"
    if requested not in ("project", own):
        raise AssayError(f"audience {requested!r} is neither 'project' nor your own {own!r}",
                         code="invalid_audience", pointer="/audience",
                         action=f"Use --audience project or --audience {own}.")
    if implied == NOBODY:
        raise AssayError("the sources are private to different principals; no one may read "
                         "all of them", code="audience_conflict", pointer="/source")
    if implied != "project" and requested != implied:
        raise AssayError(f"a source is {implied}, so the entry cannot be {requested}",
                         code="audience_too_wide", pointer="/audience",
                         action=f"Leave --audience out, or use {implied}.")
    return requested


def add(store: Store, access: Access, *, kind: str, text: str, scope: str,
        sources: Sequence[SourceRef] = (), audience: str | None = None,
        during: Hook | None = None) -> dict[str, Any]:
    """Write one note or memory entry; return its receipt, audience and envelope.

    Refuses (writing nothing): empty or oversized text (``invalid_text``),
    unreadable sources (``source_not_found``), a widened audience
    (``audience_too_wide``), sources whose provenance does not pass the gate
    (``publication_withheld``), and a source that moved between the gate and
    the write (``revision_conflict``).
    """
    if kind not in KINDS:
        raise ValueError(f"unknown saved-context kind {kind!r}")
    if not isinstance(text, str) or not text.strip():
        raise AssayError("the text is empty", code="invalid_text", pointer="/text")
    if len(text.encode("utf-8", "surrogatepass")) > MAX_TEXT_BYTES:
        raise AssayError(f"the text is longer than {MAX_TEXT_BYTES} bytes", code="invalid_text",
                         pointer="/text", action="Store long content as a record and cite it.")
    with store.reader() as reader:
        bound = bind_sources(reader, access, sources)
        env = source_envelope(reader, bound)
    chosen = _audience(audience, env.audience, access.principal, default_private=kind == "memory")
    verdict = require(store, access, env, what=f"the {kind}", during=during)
    data = {"version": 1, "text": text, "author": access.principal}
    record_id = f"{kind}:" + content_id(KINDS[kind], {
        "data": data, "scope": scope, "audience": chosen,
        "sources": [s.to_dict() for s in bound]})
    receipt = store.put(Write(id=record_id, data=data, scope=scope, audience=chosen,
                              sources=bound, request_id=f"saved:{record_id}",
                              origin=SAVED_ORIGIN),
                        basis=verdict.basis)
    return {"receipt": receipt.to_dict(), "audience": chosen, "sources": [s.to_dict() for s in bound],
            "envelope": env.to_dict(), "gate": verdict.to_dict()}


def tokens(query: str) -> list[str]:
    """The lowercased words of a query, in order, without repeats."""
    seen: list[str] = []
    for word in _WORD.findall(query.lower()):
        if word not in seen:
            seen.append(word)
    return seen


def _render(record: Record, env: Envelope) -> dict[str, Any]:
    return {
        "id": record.id,
        "revision": record.revision,
        "text": record.data["text"],
        "author": record.data["author"],
        "audience": record.audience,
        "scope": record.scope,
        "sources": [s.to_dict() for s in record.sources],
        "envelope_sha256": env.hash(),
    }


def _visible(reader: Reader, access: Access, kind: str, scopes: Sequence[str],
             query: str | None, after: str | None = None) -> list[Record]:
    # Scope and audience first: nothing private to someone else goes further.
    found = reader.find(scopes=list(scopes), kind=kind, status="current", query=query,
                        limit=_SCAN_LIMIT, audiences=access.audiences, after=after)
    return [r for r in found if access.can_read(r)]


def _result(reader: Reader, access: Access, records: Sequence[Record], limit: int, *,
            rest: int, cursor: Callable[[Record], str]) -> dict[str, Any]:
    """The admitted page of ``records``; ``page`` says what follows it.

    ``rest`` counts the candidates after ``records`` (not walked at all);
    ``page.omitted`` counts every candidate after the last one examined and
    ``page.after`` is the cursor (``cursor`` of that record) the next page
    starts after, None when nothing is left.
    """
    admission = admit(reader, access, records, is_typed=is_typed, limit=limit)
    items = [_render(record, env) for record, env in admission.items]
    omitted = len(records) - admission.examined + rest
    last = records[admission.examined - 1] if admission.examined else None
    return {
        "items": items,
        "count": len(items),
        "more": omitted > 0,
        "page": {"omitted": omitted,
                 "after": cursor(last) if omitted and last is not None else None},
        "unavailable": [u.to_dict() for u in admission.unavailable],
        "envelope": admission.envelope.to_dict(),
        "envelope_sha256": admission.envelope.hash(),
    }


def read_scopes(access: Access, scope: str | None) -> tuple[str, ...]:
    """The scopes a read covers: all the caller's, or the one named (``out_of_scope`` otherwise)."""
    if scope is None:
        return access.scopes
    if scope not in access.scopes:
        raise AssayError(f"{scope!r} is not one of this project's scopes", code="out_of_scope",
                         pointer="/scope")
    return (scope,)


def list_entries(reader: Reader, access: Access, *, kind: str, scope: str | None = None,
                 limit: int = 100, after: str | None = None) -> dict[str, Any]:
    """Admitted entries of ``kind`` readable by ``access``, by id after ``after``, with envelopes.

    The count of what follows the page is one counting query with the same
    filters, so it is exact however many entries there are.
    """
    scopes = read_scopes(access, scope)
    records = _visible(reader, access, kind, scopes, None, after)
    rest = 0
    if len(records) >= _SCAN_LIMIT:
        rest = reader.find_count(scopes=list(scopes), kind=kind, status="current",
                                 audiences=access.audiences, after=records[-1].id)
    return {"ledger_revision": reader.ledger_revision,
            **_result(reader, access, records, limit, rest=rest, cursor=lambda r: r.id)}


def search(reader: Reader, access: Access, *, query: str, kind: str = "memory",
           scope: str | None = None, limit: int = 20, after: str | None = None) -> dict[str, Any]:
    """Entries whose text holds every query word, best first, filtered before rendering.

    Ranking: more occurrences of the query words first, then id. A query
    with no words is ``invalid_query``. ``after`` is the cursor
    ``HITS:ID`` of the last entry of the previous page: only entries ranked
    after it are walked. The search scans at most 10,000 candidate entries.
    """
    words = tokens(query)
    if not words:
        raise AssayError("the query has no words", code="invalid_query", pointer="/query")
    start = _rank_cursor(after) if after is not None else None
    # The ledger's case folding is ASCII-only, so only an ASCII word may
    # narrow the scan; the words are matched again below with Python's.
    ascii_words = [w for w in words if w.isascii()]
    prefilter = max(ascii_words, key=len) if ascii_words else None
    candidates = _visible(reader, access, kind, read_scopes(access, scope), prefilter)
    scored = []
    for record in candidates:
        if not is_typed(record):
            # Untyped or unreadable entries cannot be matched on text without
            # rendering it: admission still reports each as unavailable.
            scored.append((0, record))
            continue
        text = record.data["text"].lower()
        hits = [text.count(w) for w in words]
        if all(hits):
            scored.append((sum(hits), record))
    scored.sort(key=lambda pair: (-pair[0], pair[1].id))
    if start is not None:
        scored = [p for p in scored if (-p[0], p[1].id) > (-start[0], start[1])]
    rank = {record.id: n for n, record in scored}
    result = _result(reader, access, [r for _, r in scored], limit, rest=0,
                     cursor=lambda r: f"{rank[r.id]}:{r.id}")
    return {"ledger_revision": reader.ledger_revision, "query": words, **result}


def _rank_cursor(after: str) -> tuple[int, str]:
    """``HITS:ID`` (a search page's cursor) as its rank key."""
    head, _, record_id = after.partition(":")
    if not head.isdigit() or not record_id:
        raise AssayError(f"{after!r} is not a search cursor (HITS:ID, as read_more gives it)",
                         code="invalid_argument", pointer="/after")
    return int(head), record_id
