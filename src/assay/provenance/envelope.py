"""Dependency envelopes: the closure of record versions an admitted byte depends on.

An envelope is the JSON object::

    {version: 1, status: known|unknown|revoked, epoch, revision,
     origins: [{id, revision}], leaves: [{id, revision, data_sha256, audience}],
     audience, reason?}

``leaves`` is the closure: every record version whose bytes went into the
content (the items read themselves and, transitively, the exact versions they
were derived from). ``origins`` are the items read directly. ``revision`` is
the ledger revision the envelope was taken at and ``epoch`` the ledger's
identity. ``audience`` is the effective audience the leaves imply (see
:func:`effective_audience`). ``reason`` (``legacy``, ``overflow``,
``equivocation``, ``invalid``) is allowed only when the status is not known.

Merging is monotonic taint: revoked > unknown > known. A merge that would
pass 32 leaves or 16 KiB keeps the leaves it has and becomes unknown with
reason ``overflow``; the same id and revision with another digest is
``equivocation``. Nothing ever turns a tainted envelope known again.

The 16 KiB bound holds for every envelope this module returns, tainted or
not. A known envelope is only built so large that its widest form still
fits (status ``revoked``, the longest reason, a 16-digit revision: see
:meth:`Envelope.fits`), so tainting it or taking it at a later revision
keeps every leaf. An envelope parsed from elsewhere may be known and full
to the byte; what taint or a later revision would push past the bound is
shed instead (origins first, then leaves, never the last leaf of a private
audience), and the result is unknown with reason ``overflow`` unless it
already had a reason.

The hash is the digest of the canonical normalised form (leaves and origins
sorted, duplicates removed), so two envelopes over the same closure hash the
same whatever order they were built in.

This module is pure: it imports the base modules only. Reading a closure
from the ledger is :mod:`assay.provenance.admission`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from assay.canonical import canonical_bytes, digest
from assay.errors import AssayError, pointer
from assay.value import frozen_value, ordered_frozen_value, replace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "MAX_BYTES",
    "MAX_LEAVES",
    "NOBODY",
    "REASONS",
    "STATUSES",
    "Envelope",
    "Leaf",
    "Origin",
    "audience_allows",
    "contains",
    "effective_audience",
    "known_empty",
    "merge",
    "pack",
    "parse_envelope",
]

MAX_LEAVES = 32
MAX_BYTES = 16 * 1024
STATUSES = ("known", "unknown", "revoked")
REASONS = ("legacy", "overflow", "equivocation", "invalid")
# The effective audience of content whose sources are private to two
# different principals: nobody may read it.
NOBODY = "none"
_RANK = {"known": 0, "unknown": 1, "revoked": 2}
_HEX64 = frozenset("0123456789abcdef")
# The widest status, reason and revision an envelope can come to carry: a
# known envelope is sized for them (Envelope.fits). 2**53 is the ledger's
# largest revision (assay.ledger.store.MAX_REVISION), sixteen digits.
_WIDEST_STATUS = "revoked"
_WIDEST_REASON = max(REASONS, key=len)
_WIDEST_REVISION = 2**53


@ordered_frozen_value
class Leaf:
    """One record version in a closure, with the audience it had at that version."""

    id: str
    revision: int
    data_sha256: str
    audience: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "revision": self.revision, "data_sha256": self.data_sha256,
                "audience": self.audience}


@ordered_frozen_value
class Origin:
    """An item a read admitted directly."""

    id: str
    revision: int

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "revision": self.revision}


@frozen_value
class Envelope:
    """A dependency envelope (see the module docstring). Build it with :func:`merge`."""

    status: str
    epoch: str
    revision: int
    origins: tuple[Origin, ...] = ()
    leaves: tuple[Leaf, ...] = ()
    reason: str | None = None

    @property
    def is_known(self) -> bool:
        return self.status == "known"

    @property
    def audience(self) -> str:
        return effective_audience(leaf.audience for leaf in self.leaves)

    def to_dict(self) -> dict[str, Any]:
        """The canonical normalised form (sorted, de-duplicated)."""
        out: dict[str, Any] = {
            "version": 1,
            "status": self.status,
            "epoch": self.epoch,
            "revision": self.revision,
            "origins": [o.to_dict() for o in sorted(set(self.origins))],
            "leaves": [leaf.to_dict() for leaf in sorted(set(self.leaves))],
            "audience": self.audience,
        }
        if self.reason is not None:
            out["reason"] = self.reason
        return out

    def hash(self) -> str:
        """SHA-256 (lowercase hex) of the canonical normalised form."""
        return digest(self.to_dict())

    def size(self) -> int:
        """Bytes of the canonical normalised form."""
        return len(canonical_bytes(self.to_dict()))

    def size_bound(self) -> int:
        """A cheap upper bound of :meth:`size`, in any status, reason and revision.

        Escaping at most doubles a string; :data:`_OVERHEAD` covers the
        widest status, reason and revision; the audience is one of the
        leaves' (or ``project``, ``none``), counted with each leaf.
        """
        return (_OVERHEAD + 2 * len(self.epoch.encode("utf-8"))
                + sum(_leaf_bound(leaf) for leaf in self.leaves)
                + sum(_origin_bound(o) for o in self.origins))

    def fits(self) -> bool:
        """Whether even the widest form of this envelope is within :data:`MAX_BYTES`.

        The widest form is the one any taint and any later revision could
        give it: status ``revoked``, its reason or the longest one, a
        16-digit revision. An envelope that fits keeps every leaf through
        :meth:`taint` and :meth:`at`. Exact only near the bound.
        """
        if self.size_bound() <= MAX_BYTES:
            return True
        widest = Envelope(_WIDEST_STATUS, self.epoch, max(self.revision, _WIDEST_REVISION),
                          self.origins, self.leaves, self.reason or _WIDEST_REASON)
        return widest.size() <= MAX_BYTES

    def taint(self, status: str, reason: str | None) -> Envelope:
        """This envelope with its status raised to at least ``status`` (never lowered).

        The first reason stays. Within :data:`MAX_BYTES` always (see the
        module docstring): only an envelope that did not :meth:`fit <fits>`
        can lose origins or leaves here.
        """
        if _RANK[status] <= _RANK[self.status] and (
                self.reason is not None or reason is None or self.status == "known"):
            return self  # nothing to raise (a known envelope carries no reason)
        new_status = status if _RANK[status] > _RANK[self.status] else self.status
        return _bounded(replace(self, status=new_status, reason=self.reason or reason))

    def at(self, revision: int) -> Envelope:
        """The same closure, as seen at a later ledger revision (within the bound, as taint)."""
        if revision <= self.revision:
            return self
        return _bounded(replace(self, revision=revision))


# The frame of the widest form: keys, version, epoch quotes, status "revoked",
# reason "equivocation", a 16-digit revision, brackets (about 130 bytes).
_OVERHEAD = 256


def _leaf_bound(leaf: Leaf) -> int:
    # The audience twice: the leaf's own, and the envelope's when it is this one.
    return (2 * len(leaf.id.encode("utf-8")) + 4 * len(leaf.audience.encode("utf-8"))
            + 128 + len(str(leaf.revision)))


def _origin_bound(origin: Origin) -> int:
    return 2 * len(origin.id.encode("utf-8")) + 32 + len(str(origin.revision))


def _bounded(env: Envelope) -> Envelope:
    """``env`` when its canonical form is within :data:`MAX_BYTES`, else what of it fits.

    Sheds origins from the end first, then leaves from the end, keeping the
    one or two leaves its audience rests on (the last leaf private to P for
    ``private:P``, the last of two principals for ``none``), so the stated
    audience is never wider than before and what is kept always fits. What
    sheds anything is unknown, with reason ``overflow`` unless it already
    had one. Cost: nothing unless the cheap bound passes the limit; then
    one encoding per item shed at most.
    """
    if env.size_bound() <= MAX_BYTES:
        return env
    size = env.size()
    if size <= MAX_BYTES:
        return env
    status = "unknown" if env.status == "known" else env.status
    reason = env.reason or "overflow"
    shed = replace(env, status=status, reason=reason)
    size = shed.size()
    origins, leaves = list(shed.origins), list(shed.leaves)
    audience = shed.audience

    def cut(items: list[Any], index: int) -> int:
        # Bytes an item and its separating comma take in a canonical array.
        item = items.pop(index)
        return len(canonical_bytes(item.to_dict())) + (1 if items else 0)

    while size > MAX_BYTES and origins:
        size -= cut(origins, len(origins) - 1)
    kept: dict[str, Leaf] = {}
    for leaf in reversed(leaves):
        if leaf.audience != "project" and len(kept) < 2 and leaf.audience not in kept:
            kept[leaf.audience] = leaf
    if audience != NOBODY:
        kept = {a: leaf for a, leaf in kept.items() if a == audience}
    index = len(leaves) - 1
    while size > MAX_BYTES and index >= 0:
        if leaves[index] not in kept.values():
            size -= cut(leaves, index)
        index -= 1
    out = Envelope(status, env.epoch, env.revision, tuple(origins), tuple(leaves), reason)
    assert out.audience == audience  # the leaves it rests on were kept
    return out


def known_empty(epoch: str, revision: int) -> Envelope:
    """The envelope of a read that consumed no source bytes."""
    return Envelope(status="known", epoch=epoch, revision=revision)


def effective_audience(audiences: Iterable[str]) -> str:
    """The audience implied by content drawn from records with these audiences.

    ``project`` when every source is project-wide; ``private:P`` when every
    private source is private to P; :data:`NOBODY` when private sources name
    two different principals (no one may read every input).
    """
    private = {a for a in audiences if a != "project"}
    if not private:
        return "project"
    if len(private) == 1:
        return next(iter(private))
    return NOBODY


def audience_allows(audience: str, principal: str) -> bool:
    """Whether ``principal`` is inside ``audience``."""
    return audience == "project" or audience == f"private:{principal}"


def merge(*envelopes: Envelope, epoch: str | None = None, revision: int | None = None) -> Envelope:
    """The union of envelopes, with monotonic taint (revoked > unknown > known).

    Envelopes from another ledger epoch make the result unknown (``invalid``).
    Leaves are added in the order given until the 32-leaf bound, or the
    16 KiB bound of the widest form (:meth:`Envelope.fits`), would be
    passed; then the result keeps what it has and becomes unknown with
    reason ``overflow``. The result is always within 16 KiB, and a known
    result fits. Cost: linear in the leaves; the canonical form is encoded
    only when a cheap upper bound of its size passes 16 KiB.
    """
    if not envelopes:
        if epoch is None:
            raise ValueError("merge of nothing needs an epoch")
        return known_empty(epoch, revision or 0)
    first = envelopes[0]
    status = "known"
    reason: str | None = None
    base_epoch = epoch if epoch is not None else first.epoch
    top = revision if revision is not None else 0
    leaves: dict[tuple[str, int], Leaf] = {}
    origins: set[Origin] = set()
    bound = _OVERHEAD + 2 * len(base_epoch.encode("utf-8"))

    def raise_to(new_status: str, new_reason: str | None) -> None:
        nonlocal status, reason
        if _RANK[new_status] > _RANK[status]:
            status = new_status
        if reason is None and new_reason is not None:
            reason = new_reason

    for env in envelopes:
        top = max(top, env.revision)
        if env.status != "known":
            raise_to(env.status, env.reason)
        if env.epoch != base_epoch:
            raise_to("unknown", "invalid")
            continue
        for origin in env.origins:
            if origin not in origins:
                origins.add(origin)
                bound += _origin_bound(origin)
        for leaf in env.leaves:
            key = (leaf.id, leaf.revision)
            held = leaves.get(key)
            if held is not None:
                if held != leaf:
                    raise_to("unknown", "equivocation")
                continue
            if len(leaves) >= MAX_LEAVES:
                raise_to("unknown", "overflow")
                break
            leaves[key] = leaf
            bound += _leaf_bound(leaf)
            if bound > MAX_BYTES:
                # Near the bound, measure exactly rather than by the estimate.
                trial = Envelope("known", base_epoch, top, tuple(origins), tuple(leaves.values()))
                if not trial.fits():
                    del leaves[key]
                    raise_to("unknown", "overflow")
                    break
    if status == "known":
        reason = None
    out = Envelope(status=status, epoch=base_epoch, revision=top, origins=tuple(sorted(origins)),
                   leaves=tuple(sorted(leaves.values())), reason=reason)
    if out.is_known and not out.fits():
        # Origins alone (they have no count limit) took it past the bound.
        out = replace(out, status="unknown", reason="overflow")
    return _bounded(out)


def pack(envelopes: Iterable[Envelope], *, epoch: str, revision: int) -> list[Envelope]:
    """Merge envelopes, in order, into as few known envelopes as the limits allow.

    For content whose inputs pass one envelope's 32 leaves or 16 KiB (a
    report, a long handoff): each packed envelope goes through the gate on
    its own. An envelope that is not known stays alone, so the gate
    withholds it with its own reason.
    """
    out: list[Envelope] = []
    current: Envelope | None = None
    for env in envelopes:
        if not env.is_known:
            out.append(env)
            continue
        if current is None:
            current = env
            continue
        merged = merge(current, env, epoch=epoch, revision=revision)
        if merged.is_known:
            current = merged
        else:
            out.append(current)
            current = env
    if current is not None:
        out.append(current)
    return out


def contains(current: Envelope, snapshot: Envelope) -> bool:
    """Whether ``current`` still covers everything ``snapshot`` admitted.

    Holds only when both are known, from the same ledger, ``current`` was
    taken at a ledger revision at least the snapshot's, and every snapshot
    leaf is present in ``current``.
    """
    if not (current.is_known and snapshot.is_known):
        return False
    if current.epoch != snapshot.epoch or current.revision < snapshot.revision:
        return False
    held = set(current.leaves)
    return all(leaf in held for leaf in snapshot.leaves)


_KEYS = {"version", "status", "epoch", "revision", "origins", "leaves", "audience", "reason"}
_LEAF_KEYS = {"id", "revision", "data_sha256", "audience"}


def _bad(message: str, where: str) -> AssayError:
    return AssayError(message, code="invalid_envelope", pointer=where,
                      action="Pass an envelope exactly as a context read returned it.")


def _revision(value: Any, where: str, minimum: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise _bad(f"a revision is an integer >= {minimum}", where)
    return value


def _record_id(value: Any, where: str) -> str:
    from assay.ids import validate_record_id

    try:
        return validate_record_id(value, field=where)
    except AssayError as exc:
        raise _bad(exc.message, where) from None


def _audience(value: Any, where: str) -> str:
    if isinstance(value, str) and (value == "project" or (
            value.startswith("private:") and len(value) > len("private:"))):
        return value
    raise _bad("an audience is 'project' or 'private:<principal>'", where)


def parse_envelope(value: Any, *, where: str = "") -> Envelope:
    """Validate an envelope document; errors are ``invalid_envelope`` with a pointer.

    Closed objects throughout; leaf digests are lowercase hex SHA-256; a
    ``reason`` only with a status other than known; the stated ``audience``
    must be the one the leaves imply.
    """
    if not isinstance(value, Mapping):
        raise _bad("an envelope is a JSON object", where or "")
    for key in value:
        if key not in _KEYS:
            raise _bad(f"unknown envelope field {key!r}", where + pointer(key))
    for key in ("version", "status", "epoch", "revision", "origins", "leaves"):
        if key not in value:
            raise _bad(f"the envelope has no {key!r}", where + pointer(key))
    if value["version"] != 1 or isinstance(value["version"], bool):
        raise _bad("only envelope version 1 is known", where + "/version")
    status = value["status"]
    if status not in STATUSES:
        raise _bad(f"status is one of {', '.join(STATUSES)}", where + "/status")
    if not isinstance(value["epoch"], str) or not value["epoch"]:
        raise _bad("epoch is the ledger's identity string", where + "/epoch")
    revision = _revision(value["revision"], where + "/revision", 0)
    reason = value.get("reason")
    if reason is not None:
        if status == "known":
            raise _bad("a known envelope carries no reason", where + "/reason")
        if reason not in REASONS:
            raise _bad(f"reason is one of {', '.join(REASONS)}", where + "/reason")
    origins_raw = value["origins"]
    if not isinstance(origins_raw, list):
        raise _bad("origins is an array", where + "/origins")
    origins = []
    for i, item in enumerate(origins_raw):
        at = where + pointer("origins", i)
        if not isinstance(item, Mapping) or set(item) != {"id", "revision"}:
            raise _bad("an origin is {id, revision}", at)
        origins.append(Origin(_record_id(item["id"], at + "/id"),
                              _revision(item["revision"], at + "/revision", 1)))
    leaves_raw = value["leaves"]
    if not isinstance(leaves_raw, list):
        raise _bad("leaves is an array", where + "/leaves")
    if len(leaves_raw) > MAX_LEAVES:
        raise _bad(f"an envelope holds at most {MAX_LEAVES} leaves", where + "/leaves")
    leaves: dict[tuple[str, int], Leaf] = {}
    for i, item in enumerate(leaves_raw):
        at = where + pointer("leaves", i)
        if not isinstance(item, Mapping):
            raise _bad("a leaf is {id, revision, data_sha256, audience}", at)
        for key in item:
            if key not in _LEAF_KEYS:
                raise _bad(f"unknown leaf field {key!r}", at + pointer(key))
        for key in sorted(_LEAF_KEYS):
            if key not in item:
                raise _bad(f"the leaf has no {key!r}", at + pointer(key))
        sha = item["data_sha256"]
        if not isinstance(sha, str) or len(sha) != 64 or not set(sha) <= _HEX64:
            raise _bad("data_sha256 is 64 lowercase hex digits", at + "/data_sha256")
        leaf = Leaf(_record_id(item["id"], at + "/id"), _revision(item["revision"], at + "/revision", 1),
                    sha, _audience(item["audience"], at + "/audience"))
        held = leaves.get((leaf.id, leaf.revision))
        if held is not None and held != leaf:
            raise _bad(f"{leaf.id}@{leaf.revision} appears with two different contents", at)
        leaves[(leaf.id, leaf.revision)] = leaf
    env = Envelope(status=status, epoch=value["epoch"], revision=revision,
                   origins=tuple(sorted(set(origins))), leaves=tuple(sorted(leaves.values())),
                   reason=reason)
    if "audience" in value and value["audience"] != env.audience:
        raise _bad(f"the leaves imply audience {env.audience!r}", where + "/audience")
    if len(canonical_bytes(env.to_dict())) > MAX_BYTES:
        raise _bad(f"an envelope is at most {MAX_BYTES} bytes of canonical JSON", where or "")
    return env
