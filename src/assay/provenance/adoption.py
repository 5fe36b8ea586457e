"""Adoption: saved context written before typed provenance, shown to a person and re-stamped.

The previous release's ``note add`` and ``memory add`` wrote their entries as
this one does (data ``{version: 1, text, author}``, sources pinned to exact
digests) but with origin ``claim``, the only origin a client ``put`` can
also give. Reads therefore withhold them as ``provenance_legacy``: nothing
in the record tells such an entry from one a ``put`` forged. A person can:
:func:`legacy_entries` lists the entries of one kind the caller may read
that carry no typed provenance, each with its whole text and whether it
could be adopted; :func:`adopt` re-stamps the ones the person names.

Adopting an entry writes a new version of it with the same data, scope,
audience, links and pinned sources and origin ``derived``, so every content
derived from the earlier version stays valid (same digest), and records the
adoption itself: an ``adoption:`` record (origin ``derived``) whose data
says who adopted which versions, written in the same transaction; its
``created_at`` and ledger revision say when. Its audience is the entries'
(a private entry keeps it private to its owner), its scope the project's.

An entry is adoptable when it is current, readable by the caller, intact,
shaped as saved context, every source is pinned to a digest, and its
sources' closure passes the admission checks now; adoption then passes the
publication gate and commits under its write basis. Nothing is written
unless every named entry is adopted.

Imports the base modules, the ledger contract and access, and the sibling
provenance modules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.errors import AssayError, UsageError, pointer
from assay.ids import content_id, validate_record_id
from assay.ledger.access import Access
from assay.ledger.store import Link, Reader, Record, Store, Write
from assay.provenance.admission import REASON_LINES, closure, failures, item_reason
from assay.provenance.envelope import effective_audience
from assay.provenance.publish import Hook, require_all
from assay.provenance.saved import (
    KINDS,
    SAVED_ORIGIN,
    has_saved_shape,
    read_scopes,
    source_envelope,
)

__all__ = ["ADOPTION_KIND", "adopt", "legacy_entries", "legacy_reason"]

ADOPTION_KIND = "adoption"
_SCAN_LIMIT = 10_000
# Why a legacy entry cannot be adopted, beyond the admission reasons of its sources.
_REASONS = {
    "record_unreadable": "its stored data fails its integrity check",
    "not_saved_context": "its data is not a note or memory entry ({version, text, author})",
    "source_unpinned": "a source is not pinned to a digest",
    "not_found": "there is no such entry you can read",
    "other_kind": "it is not an entry of this kind",
    "already_typed": "it already has typed provenance",
}


def legacy_reason(reader: Reader, access: Access, record: Record) -> str | None:
    """Why ``record`` (a legacy entry the caller may read) cannot be adopted now, or None.

    Checks the record itself, then its sources' closure against the
    ledger as it is now, as a read would once the entry were typed.
    """
    if record.damage is not None:
        return "record_unreadable"
    if not has_saved_shape(record):
        return "not_saved_context"
    if any(src.data_sha256 is None for src in record.sources):
        return "source_unpinned"
    env = closure(reader, record)
    reason = item_reason(env)
    if reason is not None:
        return reason
    failed = failures(reader, access, env)
    return failed[0][1] if failed else None


def _line(reason: str) -> str:
    return _REASONS.get(reason) or REASON_LINES.get(reason, reason)


def _entry(reader: Reader, access: Access, record: Record) -> dict[str, Any]:
    reason = legacy_reason(reader, access, record)
    shaped = record.damage is None and has_saved_shape(record)
    return {
        "id": record.id,
        "revision": record.revision,
        "text": record.data["text"] if shaped else None,
        "author": record.data["author"] if shaped else None,
        "audience": record.audience,
        "scope": record.scope,
        "sources": [s.to_dict() for s in record.sources],
        "data_sha256": record.data_sha256,
        "origin": record.origin,
        "request_id": record.request_id,
        "created_at": record.created_at,
        "adoptable": reason is None,
        "reason": reason,
        "line": None if reason is None else f"{record.id}@{record.revision} cannot be adopted: "
                                            f"{_line(reason)}",
    }


def _candidates(reader: Reader, access: Access, kind: str, scopes: Sequence[str],
                after: str | None) -> list[Record]:
    found = reader.find(scopes=list(scopes), kind=kind, status="current", query=None,
                        limit=_SCAN_LIMIT, audiences=access.audiences, after=after)
    return [r for r in found if access.can_read(r) and r.origin != SAVED_ORIGIN]


def legacy_entries(reader: Reader, access: Access, *, kind: str, scope: str | None = None,
                   limit: int = 50, after: str | None = None) -> dict[str, Any]:
    """The current ``kind`` entries the caller may read that carry no typed provenance, by id.

    Each comes whole, with ``adoptable`` and, when it is not, the ``reason``
    and a readable ``line``. ``page`` says how many legacy entries follow
    (among the first 10,000 entries of the kind after ``after``) and the
    cursor of the next page. Writes nothing.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown saved-context kind {kind!r}")
    records = _candidates(reader, access, kind, read_scopes(access, scope), after)
    page = records[:limit]
    omitted = len(records) - len(page)
    return {
        "ledger_revision": reader.ledger_revision,
        "kind": kind,
        "entries": [_entry(reader, access, r) for r in page],
        "count": len(page),
        "more": omitted > 0,
        "page": {"omitted": omitted, "after": page[-1].id if omitted else None},
    }


def _refuse(index: int, record_id: str, reason: str) -> AssayError:
    action = {
        "not_found": "List the entries you can adopt: leave the ids out.",
        "already_typed": "Nothing to do: it is served already. Leave it out.",
    }.get(reason, "Leave it out; it cannot be served as saved context as it stands.")
    return AssayError(f"{record_id} cannot be adopted: {_line(reason)}", code="not_adoptable",
                      pointer=pointer("ids", index), details={"id": record_id, "reason": reason},
                      action=action)


def _named(reader: Reader, access: Access, kind: str, ids: Sequence[str]) -> list[Record]:
    """The named entries, each checked adoptable on this snapshot, in the order named."""
    records: list[Record] = []
    seen: set[str] = set()
    for index, record_id in enumerate(ids):
        validate_record_id(record_id, field=pointer("ids", index))
        if record_id in seen:
            raise UsageError(f"{record_id} is named twice", code="invalid_argument",
                             pointer=pointer("ids", index), action="Name each entry once.")
        seen.add(record_id)
        record = access.visible(reader.get(record_id))
        if record is None or not access.in_scope(record) or record.status != "current":
            raise _refuse(index, record_id, "not_found")
        if record.kind != kind:
            raise _refuse(index, record_id, "other_kind")
        if record.origin == SAVED_ORIGIN:
            raise _refuse(index, record_id, "already_typed")
        reason = legacy_reason(reader, access, record)
        if reason is not None:
            raise _refuse(index, record_id, reason)
        records.append(record)
    return records


def adopt(store: Store, access: Access, *, kind: str, ids: Sequence[str], scope: str,
          during: Hook | None = None) -> dict[str, Any]:
    """Re-stamp the named legacy entries with typed provenance and record the adoption.

    All or nothing: an entry that cannot be adopted is ``not_adoptable``
    (pointer ``/ids/<i>``, details ``{id, reason}``), a name given twice is
    ``invalid_argument``, sources that no longer pass the gate are
    ``publication_withheld``, and an entry or source that moved after the
    check fails the write (``revision_conflict``); each writes nothing.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown saved-context kind {kind!r}")
    if not ids:
        raise UsageError("name the entries to adopt", code="missing_argument", pointer="/ids")
    with store.reader() as reader:
        records = _named(reader, access, kind, ids)
        envelopes = [source_envelope(reader, r.sources) for r in records]
    basis = require_all(store, access, envelopes, what=f"the {kind} entries", during=during)
    entries = [{"id": r.id, "revision": r.revision, "adopted_revision": r.revision + 1,
                "data_sha256": r.data_sha256} for r in records]
    data = {"version": 1, "kind": kind, "by": access.principal, "entries": entries}
    audience = effective_audience(r.audience for r in records)
    adoption_id = f"{ADOPTION_KIND}:" + content_id("a", {"data": data, "audience": audience})
    writes = [Write(id=r.id, data=r.data, scope=r.scope, audience=r.audience, links=r.links,
                    sources=r.sources, expect_revision=r.revision, origin=SAVED_ORIGIN,
                    request_id=f"adopt:{r.id}@{r.revision}") for r in records]
    writes.append(Write(id=adoption_id, data=data, scope=scope, audience=audience,
                        links=tuple(Link("relates-to", r.id) for r in records),
                        expect_revision=0, origin=SAVED_ORIGIN,
                        request_id=f"adopt:{adoption_id}"))
    receipts = store.put_many(writes, basis=basis)
    with store.reader() as reader:
        recorded = reader.get(adoption_id)
    return {
        "adopted": entries,
        "adoption": receipts[-1].to_dict(),
        "by": access.principal,
        "created_at": recorded.created_at if recorded is not None else None,
    }
