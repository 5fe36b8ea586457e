"""Pending decisions: questions and proposals that keep the envelope they were asked with.

A pending decision is a ``pending:`` record whose ``data`` is the closed
object ``{version: 1, kind: question|proposal, text, author, state:
open|answered, envelope}``; ``envelope`` is the dependency envelope
of the context the question was derived from (its pinned sources' closure).

Answering (:func:`answer`) reads that record, then revalidates its stored
envelope through the publication gate *before* the answer's text is joined
or a bare assent is bound to it. A revoked, changed or unreadable source
makes the answer an unbound outcome (nothing is written); a record without
an envelope, or not written by :func:`ask` (origin ``derived``, which a
client ``put`` cannot forge), is ``provenance_legacy``; one whose stored data
fails its integrity check is ``record_unreadable``. A bound answer is an
``answer:`` record linked ``answers`` to the pending record, written in one
transaction with the pending record's ``answered`` version under the gate's
write basis.

Imports the base modules, the ledger contract and access, and the sibling
provenance modules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.errors import AssayError
from assay.ids import content_id
from assay.ledger.access import Access
from assay.ledger.store import Link, Reader, Record, SourceRef, Store, Write, WriteBasis
from assay.provenance.admission import admit
from assay.provenance.envelope import parse_envelope
from assay.provenance.publish import GATE_REASONS, Hook, check, require
from assay.provenance.saved import MAX_TEXT_BYTES, SAVED_ORIGIN, bind_sources, source_envelope
from assay.value import replace

__all__ = ["PENDING_KINDS", "answer", "ask", "is_typed", "list_pending"]

PENDING_KINDS = ("question", "proposal")
_KEYS = {"version", "kind", "text", "author", "state", "envelope"}
# Every candidate after the cursor is read, so a page's omitted count is
# exact (the state filter runs here, not in the query); decisions are small.
_SCAN_LIMIT = 1_000_000


def _text(text: Any, where: str) -> str:
    if not isinstance(text, str) or not text.strip():
        raise AssayError("the text is empty", code="invalid_text", pointer=where)
    if len(text.encode("utf-8", "surrogatepass")) > MAX_TEXT_BYTES:
        raise AssayError(f"the text is longer than {MAX_TEXT_BYTES} bytes", code="invalid_text",
                         pointer=where)
    return text


def ask(store: Store, access: Access, *, text: str, scope: str, kind: str = "question",
        sources: Sequence[SourceRef] = (), during: Hook | None = None) -> dict[str, Any]:
    """Write a pending question or proposal with its input envelope; return its receipt.

    The question itself is derived content: its sources pass the gate first.
    Its audience is the one its sources imply.
    """
    if kind not in PENDING_KINDS:
        raise AssayError(f"kind is one of {', '.join(PENDING_KINDS)}", code="invalid_argument",
                         pointer="/kind")
    _text(text, "/text")
    with store.reader() as reader:
        bound = bind_sources(reader, access, sources)
        env = source_envelope(reader, bound)
    audience = env.audience
    if not audience.startswith(("project", "private:")):
        raise AssayError("the sources are private to different principals",
                         code="audience_conflict", pointer="/source")
    verdict = require(store, access, env, what=f"the {kind}", during=during)
    data = {"version": 1, "kind": kind, "text": text, "author": access.principal,
            "state": "open", "envelope": env.to_dict()}
    record_id = "pending:" + content_id("q", {"data": data, "scope": scope})
    receipt = store.put(Write(id=record_id, data=data, scope=scope, audience=audience,
                              sources=bound, expect_revision=0, origin=SAVED_ORIGIN),
                        basis=verdict.basis)
    return {"receipt": receipt.to_dict(), "audience": audience, "envelope": env.to_dict()}


def answer(store: Store, access: Access, *, pending_id: str, text: str | None = None,
           assent: bool = False, during: Hook | None = None) -> dict[str, Any]:
    """Bind an answer (text, or a bare assent) to an open pending decision, if still valid.

    Returns ``{bound, reason, line, ...}``. ``bound`` False means the stored
    envelope did not pass the gate (or has none) and nothing was written.
    """
    if (text is None) == (not assent):
        raise AssayError("answer with text or with --assent, not both or neither",
                         code="invalid_answer", pointer="/text")
    if text is not None:
        _text(text, "/text")
    with store.reader() as reader:
        record = reader.get(pending_id)
        if record is None or not access.can_read(record) or record.id.partition(":")[0] != "pending":
            raise AssayError(f"no pending decision {pending_id}", code="record_not_found",
                             pointer="/id")
    if record.damage is not None:
        return {"bound": False, "id": pending_id, "revision": record.revision,
                "reason": "record_unreadable",
                "line": f"{pending_id} cannot be answered: {GATE_REASONS['record_unreadable']}"}
    data = record.data
    if record.status != "current" or (isinstance(data, dict) and data.get("state") == "answered"):
        raise AssayError(f"{pending_id} is no longer open", code="pending_closed", pointer="/id",
                         details={"status": record.status})
    unbound = {"bound": False, "id": pending_id, "revision": record.revision}
    if not is_typed(record):
        return {**unbound, "reason": "provenance_legacy",
                "line": f"{pending_id} cannot be answered: {GATE_REASONS['provenance_legacy']}"}
    try:
        envelope = parse_envelope(data["envelope"], where="/envelope")
    except AssayError:
        return {**unbound, "reason": "provenance_invalid",
                "line": f"{pending_id} cannot be answered: {GATE_REASONS['provenance_invalid']}"}
    verdict = check(store, access, envelope, during=during)
    if not verdict.published:
        return {**unbound, "reason": verdict.reason, "gate": verdict.to_dict(),
                "line": f"{pending_id} cannot be answered: "
                        f"{GATE_REASONS.get(verdict.reason or '', verdict.reason)}"}
    answer_data = {"version": 1, "pending": pending_id, "pending_revision": record.revision,
                   "text": text, "assent": assent, "author": access.principal}
    answer_id = "answer:" + content_id("a", answer_data)
    pin = SourceRef(record.id, record.revision, record.data_sha256)
    basis = verdict.basis or WriteBasis(envelope.epoch, verdict.checked_revision or 0, {})
    basis = replace(basis, records={**basis.records, record.id: record.revision})
    receipts = store.put_many([
        Write(id=answer_id, data=answer_data, scope=record.scope, audience=record.audience,
              sources=(pin,), links=(Link("answers", record.id),), expect_revision=0),
        Write(id=record.id, data={**data, "state": "answered"}, scope=record.scope,
              audience=record.audience, sources=record.sources, links=record.links,
              expect_revision=record.revision, origin=SAVED_ORIGIN),
    ], basis=basis)
    return {"bound": True, "id": pending_id, "revision": receipts[1].revision, "reason": None,
            "line": f"{pending_id} answered", "answer": receipts[0].to_dict(),
            "gate": verdict.to_dict()}


def is_typed(record: Record) -> bool:
    """Whether a ``pending:`` record was written by :func:`ask` with its input envelope, intact."""
    if record.origin != SAVED_ORIGIN or record.damage is not None:
        return False
    data = record.data
    return (isinstance(data, dict) and set(data) == _KEYS and data.get("version") == 1
            and data.get("kind") in PENDING_KINDS and isinstance(data.get("envelope"), dict)
            and data.get("state") in ("open", "answered"))


def list_pending(reader: Reader, access: Access, *, state: str = "open",
                 limit: int = 100, after: str | None = None) -> dict[str, Any]:
    """Pending decisions readable by ``access`` in ``state`` (or ``any``), each revalidated.

    Scope and audience filter first; a decision whose closure no longer
    holds is an unavailable line; an untyped ``pending:`` record is
    ``provenance_legacy`` whatever ``state`` asks for. Decisions come by id
    after ``after``; ``page.omitted`` counts the candidates after the last
    one examined (each an item or an unavailable line when read) and
    ``page.after`` is the next page's cursor.
    """
    found = reader.find(scopes=list(access.scopes), kind="pending", status="current",
                        limit=_SCAN_LIMIT, audiences=access.audiences, after=after)
    records = [r for r in found if access.can_read(r)
               and (state == "any" or not is_typed(r) or r.data["state"] == state)]
    admission = admit(reader, access, records, is_typed=is_typed, limit=limit)
    items = [{"id": r.id, "revision": r.revision, "kind": r.data["kind"], "text": r.data["text"],
              "author": r.data["author"], "state": r.data["state"], "audience": r.audience,
              "sources": [s.to_dict() for s in r.sources], "envelope_sha256": env.hash()}
             for r, env in admission.items]
    omitted = len(records) - admission.examined
    return {"ledger_revision": reader.ledger_revision, "items": items, "count": len(items),
            "more": omitted > 0,
            "page": {"omitted": omitted,
                     "after": records[admission.examined - 1].id if omitted else None},
            "unavailable": [u.to_dict() for u in admission.unavailable],
            "envelope": admission.envelope.to_dict(),
            "envelope_sha256": admission.envelope.hash()}
