"""Dependency envelopes as values: merge, limits, hash, contains, parsing, audiences."""

from __future__ import annotations

import pytest

from assay.errors import AssayError
from assay.provenance.envelope import (
    MAX_LEAVES,
    NOBODY,
    Envelope,
    Leaf,
    Origin,
    contains,
    effective_audience,
    known_empty,
    merge,
    parse_envelope,
)

EPOCH = "e" * 32
SHA = "a" * 64


def leaf(name: str, revision: int = 1, sha: str = SHA, audience: str = "project") -> Leaf:
    return Leaf(f"knowledge:{name}", revision, sha, audience)


def env(*leaves: Leaf, status: str = "known", revision: int = 5, reason: str | None = None) -> Envelope:
    return Envelope(status, EPOCH, revision, (Origin("note:n", 1),), tuple(leaves), reason)


def test_envelope_merge_is_monotonic_taint() -> None:
    """Merging never lowers taint: revoked beats unknown beats known, in any order."""
    known, unknown, revoked = env(leaf("a")), env(leaf("b"), status="unknown", reason="legacy"), \
        env(leaf("c"), status="revoked")
    assert merge(known, unknown).status == "unknown"
    assert merge(unknown, known).status == "unknown"
    assert merge(known, revoked, unknown).status == "revoked"
    assert merge(revoked, known).status == "revoked"
    assert merge(known, known).status == "known"


def test_envelope_merge_overflow_keeps_leaves_and_turns_unknown() -> None:
    """Passing 32 leaves keeps the leaves already held and becomes unknown with reason overflow."""
    first = env(*(leaf(f"x{i}") for i in range(MAX_LEAVES)))
    merged = merge(first, env(leaf("one-more")))
    assert merged.status == "unknown" and merged.reason == "overflow"
    assert set(merged.leaves) == set(first.leaves)


def test_envelope_merge_byte_limit_overflows_before_leaf_limit() -> None:
    """Leaves with long ids pass 16 KiB before 32 leaves: the merge overflows on bytes."""
    big = [leaf("n" * 480 + str(i)) for i in range(MAX_LEAVES)]
    merged = merge(*(env(b) for b in big))
    assert merged.reason == "overflow" and len(merged.leaves) < MAX_LEAVES
    assert merged.size() <= 16 * 1024


def test_envelope_merge_same_version_other_digest_is_equivocation() -> None:
    """The same id and revision with another digest makes the union unknown (equivocation)."""
    merged = merge(env(leaf("a", sha="a" * 64)), env(leaf("a", sha="b" * 64)))
    assert (merged.status, merged.reason) == ("unknown", "equivocation")


def test_envelope_merge_other_epoch_is_invalid() -> None:
    """An envelope from another ledger cannot join a union as known."""
    other = Envelope("known", "f" * 32, 1, (), (leaf("a"),))
    merged = merge(env(leaf("b")), other)
    assert (merged.status, merged.reason) == ("unknown", "invalid")
    assert leaf("a") not in merged.leaves


def test_envelope_hash_is_over_the_normalised_form() -> None:
    """Two envelopes over the same closure hash the same whatever their build order."""
    a = merge(env(leaf("x")), env(leaf("y")), env(leaf("x")))
    b = merge(env(leaf("y")), env(leaf("x")))
    assert a.hash() == b.hash()
    assert a.hash() != merge(env(leaf("x"))).hash()


def test_envelope_contains_requires_known_later_superset() -> None:
    """Contains holds only for known envelopes, a revision at least the snapshot's, and every leaf."""
    snap = env(leaf("a"), revision=3)
    assert contains(env(leaf("a"), leaf("b"), revision=4), snap)
    assert not contains(env(leaf("a"), revision=2), snap)
    assert not contains(env(leaf("b"), revision=4), snap)
    assert not contains(env(leaf("a"), status="unknown", reason="legacy", revision=4), snap)
    assert not contains(env(leaf("a"), revision=4), env(leaf("a"), status="revoked", revision=3))


def test_envelope_known_empty_round_trips() -> None:
    """A read that consumed nothing has a known-empty envelope, which parses back unchanged."""
    empty = known_empty(EPOCH, 7)
    assert empty.to_dict() == {"version": 1, "status": "known", "epoch": EPOCH, "revision": 7,
                               "origins": [], "leaves": [], "audience": "project"}
    assert parse_envelope(empty.to_dict()) == empty


def test_effective_audience_is_the_intersection_of_sources() -> None:
    """Project sources leave content project-wide; one private principal narrows it; two empty it."""
    assert effective_audience(["project", "project"]) == "project"
    assert effective_audience(["project", "private:alice", "private:alice"]) == "private:alice"
    assert effective_audience(["private:alice", "private:bob"]) == NOBODY


@pytest.mark.parametrize(("mutate", "where"), [
    (lambda d: d.update(reason="legacy"), "/reason"),
    (lambda d: d.update(colour="red"), "/colour"),
    (lambda d: d.update(status="maybe"), "/status"),
    (lambda d: d.update(version=2), "/version"),
    (lambda d: d["leaves"][0].update(data_sha256="ABC"), "/leaves/0/data_sha256"),
    (lambda d: d["leaves"][0].update(revision=0), "/leaves/0/revision"),
    (lambda d: d["leaves"][0].update(audience="friends"), "/leaves/0/audience"),
    (lambda d: d["leaves"][0].pop("audience"), "/leaves/0/audience"),
    (lambda d: d["leaves"][0].update(id="no colon"), "/leaves/0/id"),
    (lambda d: d.update(audience="private:mallory"), "/audience"),
    (lambda d: d["leaves"].append({**d["leaves"][0], "data_sha256": "b" * 64}), "/leaves/1"),
    (lambda d: d.update(leaves=[{**d["leaves"][0], "id": f"k:{i}"} for i in range(33)]), "/leaves"),
    (lambda d: d["origins"].append({"id": "note:x"}), "/origins/1"),
])
def test_envelope_parse_rejects_malformed_fields(mutate, where) -> None:  # type: ignore[no-untyped-def]
    """Every malformed envelope is invalid_envelope with a pointer at the field at fault."""
    doc = env(leaf("a")).to_dict()
    mutate(doc)
    with pytest.raises(AssayError) as caught:
        parse_envelope(doc)
    assert (caught.value.code, caught.value.pointer) == ("invalid_envelope", where)


def test_envelope_parse_accepts_reason_when_not_known() -> None:
    """An unknown envelope may carry its reason, and parsing keeps it."""
    doc = env(leaf("a"), status="unknown", reason="overflow").to_dict()
    assert parse_envelope(doc).reason == "overflow"
