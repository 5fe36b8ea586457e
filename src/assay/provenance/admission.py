"""Admission: closures read from the ledger, and the current check of each leaf.

:func:`closure` walks a record version's pinned ``sources`` (each an exact
``id@revision`` with the digest of that version's data) into its dependency
envelope. :func:`leaf_failure` checks one leaf against the ledger as it is
now, for one principal. :func:`admit` applies both to records a read
selected, keeping every independently admitted item and turning every other
into an :class:`Unavailable` line.

Reasons a leaf or an item is not admitted (stable codes, also used by the
publication gate):

=========================  ===================================================
``source_missing``         the record is absent, or private to someone else
                           (the two are indistinguishable on purpose)
``access_denied``          outside the caller's scopes, or the envelope's own
                           audience for it excludes the caller
``source_retired``         its current version is retired
``source_superseded``      its current version is superseded
``source_modified``        its current data is not the pinned digest
``source_unreadable``      its current or pinned version's stored data fails
                           its integrity check (changed in place)
``provenance_legacy``      a source without a pinned digest, or an item not
                           written with typed provenance
``record_unreadable``      the item's own stored data fails its integrity
                           check (changed in place): it is never rendered
``provenance_invalid``     a pinned version that does not exist or does not
                           match its digest; an envelope from another ledger
``provenance_overflow``    the closure passes 32 leaves or 16 KiB
``provenance_equivocation`` one version cited with two digests
``provenance_revoked``     an envelope already marked revoked
``envelope_full``          admitting the item would overflow the read's own
                           envelope (the items before it stay admitted)
=========================  ===================================================

Checks run on one :class:`~assay.ledger.store.Reader`, so one read judges
every item at the same ledger revision. Callers filter the records they
select by scope and audience *before* calling :func:`admit`, and render only
what it admits. Imports the base modules, the ledger contract and access.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from assay.ledger.access import Access
from assay.ledger.store import Reader, Record
from assay.provenance.envelope import (
    MAX_LEAVES,
    Envelope,
    Leaf,
    Origin,
    audience_allows,
    known_empty,
    merge,
    pack,
)
from assay.value import frozen_value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "REASON_LINES",
    "Admission",
    "Unavailable",
    "admit",
    "closure",
    "envelope_of_versions",
    "envelopes_of_versions",
    "failures",
    "item_reason",
    "leaf_failure",
    "unavailable_line",
]

REASON_LINES = {
    "source_missing": "a source is missing or not readable by you",
    "access_denied": "a source is outside what you may read",
    "source_retired": "a source was retired",
    "source_superseded": "a source was superseded",
    "source_modified": "a source changed after this was derived from it",
    "source_unreadable": "a source's stored data fails its integrity check",
    "record_unreadable": "its stored data fails its integrity check",
    "provenance_legacy": "its provenance was not recorded",
    "provenance_invalid": "its provenance record is invalid",
    "provenance_overflow": "its provenance is larger than an envelope holds",
    "provenance_equivocation": "one source version is cited with two different contents",
    "provenance_revoked": "its provenance was revoked",
    "envelope_full": "this read's envelope is full; read fewer items",
}
# Reasons that never name the source: naming it could reveal that a record
# private to someone else exists.
_SILENT = {"source_missing"}


@frozen_value
class Unavailable:
    """An item a read omitted, with a readable line saying why."""

    id: str
    revision: int
    reason: str
    source: str | None = None

    @property
    def line(self) -> str:
        return unavailable_line(self.id, self.revision, self.reason, self.source)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "revision": self.revision, "reason": self.reason,
                               "line": self.line}
        if self.source is not None:
            out["source"] = self.source
        return out


def unavailable_line(item: str, revision: int, reason: str, source: str | None = None) -> str:
    """``note:x@2 unavailable: a source was retired (knowledge:y@1)``."""
    text = f"{item}@{revision} unavailable: {REASON_LINES.get(reason, reason)}"
    if source is not None and reason not in _SILENT:
        text += f" ({source})"
    return text


def _leaf(record: Record) -> Leaf:
    return Leaf(record.id, record.revision, record.data_sha256, record.audience)


def closure(reader: Reader, record: Record, *, is_typed: Callable[[Record], bool] | None = None,
            ) -> Envelope:
    """The envelope of one record version: itself and every version it derives from.

    Walks pinned sources breadth first, reading exact versions (never the
    current one). A source without a digest is ``legacy``; a pinned version
    that is absent or has another digest is ``invalid``; more than 32 leaves
    or 16 KiB is ``overflow`` (the leaves found so far are kept). When
    ``is_typed`` is given, a record (the item or any source) for which it
    returns False is ``legacy``. Cost: one ledger read per distinct source
    version, at most 32.
    """
    status, reason = "known", None

    def taint(why: str) -> None:
        nonlocal status, reason
        status = "unknown"
        reason = reason or why

    leaves: dict[tuple[str, int], Leaf] = {}
    queue = [record]
    while queue:
        current = queue.pop(0)
        key = (current.id, current.revision)
        if key in leaves:
            continue
        if len(leaves) >= MAX_LEAVES:
            taint("overflow")
            break
        leaves[key] = _leaf(current)
        if is_typed is not None and current is record and not is_typed(current):
            taint("legacy")
        for src in current.sources:
            if src.data_sha256 is None:
                taint("legacy")
                continue
            held = leaves.get((src.id, src.revision))
            if held is not None:
                if held.data_sha256 != src.data_sha256:
                    taint("equivocation")
                continue
            version = reader.get(src.id, src.revision)
            if version is None or version.data_sha256 != src.data_sha256:
                taint("invalid")
                continue
            queue.append(version)
    env = Envelope(status=status, epoch=reader.epoch, revision=reader.ledger_revision,
                   origins=(Origin(record.id, record.revision),),
                   leaves=tuple(sorted(leaves.values())), reason=reason)
    while env.leaves and not env.fits():
        env = Envelope("unknown", env.epoch, env.revision, env.origins, env.leaves[:-1],
                       env.reason or "overflow")
    return env


def leaf_failure(reader: Reader, access: Access, leaf: Leaf) -> str | None:
    """Why ``leaf`` is not admissible for ``access`` now, or None when it is.

    The current version decides readability, status and content; the pinned
    version must still carry the pinned digest. Visibility is checked first,
    so a record private to someone else only ever reads as ``source_missing``.
    """
    current = reader.get(leaf.id)
    if current is None or not access.audience_allows(current):
        return "source_missing"
    if not access.in_scope(current):
        return "access_denied"
    if not audience_allows(leaf.audience, access.principal):
        return "access_denied"
    if current.status == "retired":
        return "source_retired"
    if current.status == "superseded":
        return "source_superseded"
    if current.data_sha256 != leaf.data_sha256:
        return "source_modified"
    # The digest column can match text changed in place: the stored text
    # itself must still hash to it.
    if current.damage is not None:
        return "source_unreadable"
    if current.revision != leaf.revision:
        pinned = reader.get(leaf.id, leaf.revision)
        if pinned is None or pinned.data_sha256 != leaf.data_sha256:
            return "source_modified"
        if pinned.damage is not None:
            return "source_unreadable"
    return None


def item_reason(envelope: Envelope) -> str | None:
    """The reason an envelope that is not known cannot be admitted."""
    if envelope.status == "known":
        return None
    if envelope.status == "revoked":
        return "provenance_revoked"
    return f"provenance_{envelope.reason or 'invalid'}"


def failures(reader: Reader, access: Access, envelope: Envelope) -> list[tuple[Leaf, str]]:
    """Every leaf of ``envelope`` that is not admissible now, in leaf order."""
    out = []
    for leaf in envelope.leaves:
        why = leaf_failure(reader, access, leaf)
        if why is not None:
            out.append((leaf, why))
    return out


@frozen_value
class Admission:
    """What a read admitted: items with their envelopes, omissions, and the union.

    ``examined`` counts the records walked, in order: each is an item or an
    unavailable line; the records after them were not examined (``more``).
    """

    items: tuple[tuple[Record, Envelope], ...]
    unavailable: tuple[Unavailable, ...]
    envelope: Envelope
    more: bool = False
    examined: int = 0


def admit(reader: Reader, access: Access, records: Iterable[Record], *,
          is_typed: Callable[[Record], bool] | None = None,
          limit: int | None = None) -> Admission:
    """Admit each record whose whole closure passes the current checks.

    ``records`` must already be filtered to what ``access`` may see. One
    failing item never hides another. The returned envelope is the union of
    the admitted items' envelopes, taken at the reader's revision; with
    nothing admitted it is known-empty. With ``limit``, records after the
    ``limit``-th admitted one are not examined and ``more`` is set. The
    union's own size is a bound too: a record that would overflow it ends
    the walk (not examined, ``more`` set), so a next page starting after the
    last examined record reads it; only a record that overflows an empty
    union is an ``envelope_full`` line.
    """
    items: list[tuple[Record, Envelope]] = []
    omitted: list[Unavailable] = []
    union = known_empty(reader.epoch, reader.ledger_revision)
    more = False
    for record in records:
        if limit is not None and len(items) >= limit:
            more = True
            break
        if record.damage is not None:
            omitted.append(Unavailable(record.id, record.revision, "record_unreadable"))
            continue
        env = closure(reader, record, is_typed=is_typed)
        reason = item_reason(env)
        if reason is not None:
            omitted.append(Unavailable(record.id, record.revision, reason))
            continue
        if len(union.leaves) >= MAX_LEAVES and not set(env.leaves) <= set(union.leaves):
            # Full already: the item cannot join, whatever its sources say.
            if items:
                more = True
                break
            omitted.append(Unavailable(record.id, record.revision, "envelope_full"))
            continue
        failed = failures(reader, access, env)
        if failed:
            leaf, why = failed[0]
            source = None if leaf.id == record.id else f"{leaf.id}@{leaf.revision}"
            omitted.append(Unavailable(record.id, record.revision, why, source))
            continue
        trial = merge(union, env)
        if not trial.is_known:
            # The read's own envelope is full: end the page rather than let
            # the union drop a dependency or turn unknown.
            if items:
                more = True
                break
            omitted.append(Unavailable(record.id, record.revision, "envelope_full"))
            continue
        union = trial
        items.append((record, env))
    return Admission(items=tuple(items), unavailable=tuple(omitted), envelope=union, more=more,
                     examined=len(items) + len(omitted))


def envelope_of_versions(reader: Reader, versions: Mapping[str, int] | Iterable[tuple[str, int]],
                         ) -> Envelope:
    """The union of the closures of exact record versions a derived view was built from.

    The seam for writers and reads outside this package (work context,
    handoffs, reports): pass the ``{id: revision}`` a read depended on (a
    write basis's ``records``; revision 0, meaning absent, is skipped) and
    get the envelope to return beside the content or to pass to
    :func:`assay.provenance.publish.require`. A named version that does not
    exist makes the envelope unknown (``invalid``). Origins are the versions
    given. Known-empty for nothing.
    """
    pairs = sorted(versions.items() if isinstance(versions, Mapping) else set(versions))
    envelopes = []
    origins = []
    for record_id, revision in pairs:
        if revision <= 0:
            continue
        record = reader.get(record_id, revision)
        if record is None:
            envelopes.append(known_empty(reader.epoch, reader.ledger_revision)
                             .taint("unknown", "invalid"))
            continue
        origins.append(Origin(record_id, revision))
        envelopes.append(closure(reader, record))
    union = merge(*envelopes, epoch=reader.epoch, revision=reader.ledger_revision)
    return Envelope(union.status, union.epoch, union.revision, tuple(origins), union.leaves,
                    union.reason)


def envelopes_of_versions(reader: Reader, versions: Mapping[str, int]) -> list[Envelope]:
    """Like :func:`envelope_of_versions`, packed into as many known envelopes as the limits need.

    For derived content with more inputs than one envelope holds; pass the
    list to :func:`assay.provenance.publish.require_all`. Empty for nothing.
    """
    singles = [envelope_of_versions(reader, {record_id: revision})
               for record_id, revision in sorted(versions.items()) if revision > 0]
    return pack(singles, epoch=reader.epoch, revision=reader.ledger_revision)
