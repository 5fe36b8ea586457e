"""The publication gate: revalidate an envelope before derived content leaves assay.

Anything derived from other records (a note, a memory entry, a handoff, a
work context, a rendered report) passes :func:`check` before it is persisted,
printed as a final answer or exported. The gate fails closed:

1. An envelope that is not known is withheld at once
   (``provenance_<reason>`` or ``provenance_revoked``).
2. Attempt: on one :class:`~assay.ledger.store.Reader` snapshot, the ledger
   must be the envelope's (``epoch_mismatch`` otherwise) and at or past its
   revision (``envelope_ahead``), and every leaf must pass
   :func:`~assay.provenance.admission.leaf_failure`; the first failing leaf
   withholds with its reason. The snapshot's head revision of every leaf is
   noted.
3. Confirmation: a second snapshot re-reads those heads. Unchanged, the
   content is published, with a write basis pinning those heads so the
   caller's write fails (``revision_conflict``) if a source moves before it
   commits. Changed, the whole attempt runs once more; a second change
   withholds with ``publication_unstable``.
4. A store that cannot be read withholds with ``validation_unavailable``.

The ``during`` hook runs between an attempt's validation and its
confirmation (argument: the attempt number). It is the seam where tests make
"a source changed during the check" deterministic; production passes none.

Imports the base modules, the ledger contract and the sibling modules.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from assay.errors import AssayError, UnavailableError
from assay.ledger.access import Access
from assay.ledger.store import Store, WriteBasis
from assay.provenance.admission import REASON_LINES, failures, item_reason
from assay.provenance.envelope import Envelope
from assay.value import frozen_value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "ATTEMPTS",
    "GATE_REASONS",
    "PublicationWithheld",
    "Verdict",
    "check",
    "require",
    "require_all",
]

ATTEMPTS = 2
GATE_REASONS = {
    **REASON_LINES,
    "epoch_mismatch": "the envelope was taken from another ledger",
    "envelope_ahead": "the envelope names a ledger revision this ledger has not reached",
    "publication_unstable": "its sources kept changing while they were checked",
    "validation_unavailable": "the ledger could not be read to check its sources",
}

Hook = Callable[[int], None]


@frozen_value
class Verdict:
    """The gate's answer. ``published`` False means: do not hand the content out."""

    published: bool
    envelope_sha256: str
    attempts: int
    reason: str | None = None
    checked_revision: int | None = None
    failures: tuple[tuple[str, int, str], ...] = ()
    basis: WriteBasis | None = None

    @property
    def line(self) -> str:
        if self.published:
            return "published: every source is current and readable"
        return "withheld: " + GATE_REASONS.get(self.reason or "", self.reason or "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "published": self.published,
            "reason": self.reason,
            "line": self.line,
            "attempts": self.attempts,
            "checked_revision": self.checked_revision,
            "envelope_sha256": self.envelope_sha256,
            "failures": [{"id": i, "revision": r, "reason": why} for i, r, why in self.failures],
            "write_basis": self.basis.to_dict() if self.basis is not None else None,
        }


class PublicationWithheld(AssayError):
    """Derived content was not published because its sources did not pass the gate."""

    default_code = "publication_withheld"

    def __init__(self, verdict: Verdict, *, what: str = "the content") -> None:
        super().__init__(
            f"{what} was withheld: {GATE_REASONS.get(verdict.reason or '', verdict.reason)}",
            details={"reason": verdict.reason, "attempts": verdict.attempts,
                     "failures": verdict.to_dict()["failures"]},
            action="Re-read the sources (they changed, were retired or are not readable) "
                   "and derive the content again.",
        )
        self.verdict = verdict


def check(store: Store, access: Access, envelope: Envelope, *, during: Hook | None = None) -> Verdict:
    """Revalidate ``envelope`` for ``access`` against the current ledger (see module docstring).

    Never writes. Cost per attempt: one read of each leaf's current version
    (plus its pinned version when it moved on), then one batched read of the
    heads to confirm.
    """
    sha = envelope.hash()
    reason = item_reason(envelope)
    if reason is not None:
        return Verdict(False, sha, 0, reason)
    ids = sorted({leaf.id for leaf in envelope.leaves})
    for attempt in range(1, ATTEMPTS + 1):
        try:
            with store.reader() as reader:
                revision = reader.ledger_revision
                if reader.epoch != envelope.epoch:
                    return Verdict(False, sha, attempt, "epoch_mismatch", revision)
                if revision < envelope.revision:
                    return Verdict(False, sha, attempt, "envelope_ahead", revision)
                failed = failures(reader, access, envelope)
                if failed:
                    return Verdict(False, sha, attempt, failed[0][1], revision,
                                   tuple((leaf.id, leaf.revision, why) for leaf, why in failed))
                heads = _heads(reader, ids)
            if during is not None:
                during(attempt)
            with store.reader() as reader:
                confirmed = _heads(reader, ids)
        except UnavailableError:
            return Verdict(False, sha, attempt, "validation_unavailable")
        if confirmed == heads:
            return Verdict(True, sha, attempt, None, revision,
                           basis=WriteBasis(envelope.epoch, revision, heads))
    return Verdict(False, sha, ATTEMPTS, "publication_unstable")


def _heads(reader: Any, ids: list[str]) -> dict[str, int]:
    found = reader.get_many(ids) if ids else {}
    return {record_id: found[record_id].revision if record_id in found else 0 for record_id in ids}


def require(store: Store, access: Access, envelope: Envelope, *, what: str = "the content",
            during: Hook | None = None) -> Verdict:
    """:func:`check`, raising :class:`PublicationWithheld` unless published.

    The writers' seam: call it on the envelope of what was read, then write
    with ``basis=verdict.basis`` so a source that moves before the write
    commits fails the write instead of publishing stale content.
    """
    verdict = check(store, access, envelope, during=during)
    if not verdict.published:
        raise PublicationWithheld(verdict, what=what)
    return verdict


def require_all(store: Store, access: Access, envelopes: Sequence[Envelope], *,
                what: str = "the content", during: Hook | None = None) -> WriteBasis | None:
    """:func:`require` each envelope (see :func:`~assay.provenance.envelope.pack`).

    Returns one write basis holding every checked head (None for no
    envelopes): a source that moves after its own check fails the caller's
    write with ``revision_conflict``.
    """
    records: dict[str, int] = {}
    basis: WriteBasis | None = None
    for envelope in envelopes:
        verdict = require(store, access, envelope, what=what, during=during)
        if verdict.basis is not None:
            records.update(verdict.basis.records)
            basis = WriteBasis(verdict.basis.epoch, verdict.basis.ledger_revision, records)
    return basis
