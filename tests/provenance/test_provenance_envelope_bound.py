"""The 16 KiB bound of dependency envelopes holds through every merge, taint and later revision.

A nearly full known envelope gains a status and a ``reason`` when it is
tainted and digits when it is taken at a later revision; whatever it
becomes, assay's own parser must still accept it.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay.provenance.envelope import (
    MAX_BYTES,
    MAX_LEAVES,
    REASONS,
    STATUSES,
    Envelope,
    Leaf,
    Origin,
    merge,
    parse_envelope,
)
from assay_testing import examples

EPOCH = "e" * 32
_RANK = {status: rank for rank, status in enumerate(STATUSES)}
_ORIGIN_FRAME = len('{"id":"","revision":1}')


def _leaf(name: str, audience: str = "project", sha: str = "a" * 64) -> Leaf:
    return Leaf(f"knowledge:{name}", 1, sha, audience)


def _filled(env: Envelope, target: int) -> Envelope:
    """``env`` with origins added until its canonical form is exactly ``target`` bytes."""
    origins = list(env.origins)
    size = env.size()
    while size < target:
        comma = 1 if origins else 0
        need = target - size - _ORIGIN_FRAME - comma  # the id length that would end it
        if need < 10 and origins:
            # Too little room for one more origin: lengthen the last one instead.
            last = origins.pop()
            origins.append(Origin(last.id + "x" * (target - size), last.revision))
            break
        length = need if need <= 470 else 440
        origin = Origin("note:" + f"{len(origins):04d}" + "o" * (length - 9), 1)
        origins.append(origin)
        size += _ORIGIN_FRAME + comma + len(origin.id)
    out = Envelope(env.status, env.epoch, env.revision, tuple(origins), env.leaves, env.reason)
    assert out.size() == target
    return out


def _full_known() -> Envelope:
    """A valid known envelope whose canonical form is exactly 16 KiB."""
    leaves = tuple(_leaf(f"{i:02d}" + "n" * 200) for i in range(MAX_LEAVES))
    env = _filled(Envelope("known", EPOCH, 9, (), leaves), MAX_BYTES)
    assert parse_envelope(env.to_dict()) == env
    return env


def _leaves_filling(target: int) -> list[Leaf]:
    """Leaves whose known envelope (no origins) is exactly ``target`` bytes."""
    leaves = [_leaf(f"{i:02d}" + "n" * 470) for i in range(MAX_LEAVES - 1)]
    while Envelope("known", EPOCH, 9, (), tuple(leaves)).size() > target - 200:
        leaves.pop()
    size = Envelope("known", EPOCH, 9, (), (*leaves, _leaf("zz"))).size()
    last = _leaf("zz" + "z" * (target - size))
    assert Envelope("known", EPOCH, 9, (), (*leaves, last)).size() == target
    return [*leaves, last]


def test_envelope_taint_of_a_full_envelope_stays_within_the_bound() -> None:
    """Tainting a valid known envelope of exactly 16 KiB gives an unknown overflow one the parser accepts."""
    tainted = _full_known().taint("unknown", None)
    assert tainted.size() <= MAX_BYTES
    assert (tainted.status, tainted.reason) == ("unknown", "overflow")
    assert parse_envelope(tainted.to_dict()) == tainted


def test_envelope_taint_with_a_reason_keeps_it_while_shedding() -> None:
    """The reason a taint states is the one kept when the full envelope must shed to fit."""
    tainted = _full_known().taint("revoked", "legacy")
    assert (tainted.status, tainted.reason) == ("revoked", "legacy")
    assert len(tainted.origins) < len(_full_known().origins)
    assert parse_envelope(tainted.to_dict()) == tainted


@pytest.mark.parametrize("gap", [0, 10, 25])
def test_envelope_taint_of_a_merged_union_keeps_every_leaf(gap: int) -> None:
    """Each known union merge builds, up to a few bytes short of 16 KiB, stays valid and whole when tainted."""
    parts = [Envelope("known", EPOCH, 9, (), (leaf,)) for leaf in _leaves_filling(MAX_BYTES - gap)]
    for count in range(1, len(parts) + 1):
        union = merge(*parts[:count])
        if not union.is_known:
            assert (union.reason, len(union.leaves)) == ("overflow", count - 1)
            continue
        for status, reason in (("unknown", "equivocation"), ("revoked", None)):
            tainted = union.taint(status, reason)
            assert tainted.leaves == union.leaves and tainted.reason == reason
            assert parse_envelope(tainted.to_dict()) == tainted


def test_envelope_at_a_longer_revision_stays_within_the_bound() -> None:
    """A full envelope taken at a revision with more digits sheds rather than pass 16 KiB."""
    later = _full_known().at(2**53)
    assert later.revision == 2**53 and later.size() <= MAX_BYTES
    assert parse_envelope(later.to_dict()) == later


def test_envelope_shedding_never_widens_the_audience() -> None:
    """Leaves shed to fit keep the private leaves the stated audience rests on."""
    leaves = tuple(_leaf(f"{i:02d}" + "n" * 200, audience="private:alice" if i == 0 else
                         "private:bob" if i == 1 else "project") for i in range(MAX_LEAVES))
    full = _filled(Envelope("known", EPOCH, 9, (), leaves), MAX_BYTES)
    assert full.audience == "none"
    tainted = full.taint("revoked", None)
    assert tainted.audience == "none" and tainted.size() <= MAX_BYTES


@st.composite
def envelopes(draw: Any) -> Envelope:
    """Valid envelopes of one or two ledgers, many of them within a few bytes of 16 KiB."""
    count = draw(st.integers(min_value=0, max_value=MAX_LEAVES))
    leaves = tuple(
        _leaf(f"{i:02d}" + "n" * draw(st.integers(min_value=0, max_value=480)),
              audience=draw(st.sampled_from(["project", "project", "private:alice",
                                             "private:bob"])),
              sha=draw(st.sampled_from(["a" * 64, "b" * 64])))
        for i in range(count))
    status = draw(st.sampled_from(STATUSES))
    reason = None if status == "known" else draw(st.sampled_from([None, *REASONS]))
    env = Envelope(status, draw(st.sampled_from([EPOCH, "f" * 32])),
                   draw(st.integers(min_value=0, max_value=2**53)),
                   (Origin("note:n", 1),), leaves, reason)
    size = env.size()
    if size > MAX_BYTES:
        # Too big to be valid: keep the leaves that fit, as a valid envelope would.
        while env.size() > MAX_BYTES:
            env = Envelope(status, env.epoch, env.revision, env.origins, env.leaves[:-1], reason)
    elif draw(st.booleans()):
        env = _filled(env, MAX_BYTES - draw(st.integers(min_value=0, max_value=40)))
    return parse_envelope(env.to_dict())


def _assert_valid(result: Envelope) -> None:
    assert result.size() <= MAX_BYTES
    assert parse_envelope(result.to_dict()) == result


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.data_too_large])
@given(inputs=st.lists(envelopes(), min_size=1, max_size=4),
       status=st.sampled_from(STATUSES), reason=st.sampled_from([None, *REASONS]),
       revision=st.integers(min_value=0, max_value=2**53))
def test_envelope_merge_and_taint_of_valid_envelopes_are_valid_and_bounded(
        inputs: list[Envelope], status: str, reason: str | None, revision: int) -> None:
    """Any merge, taint or later revision of valid envelopes is a valid envelope of at most 16 KiB."""
    merged = merge(*inputs)
    _assert_valid(merged)
    assert _RANK[merged.status] >= max(_RANK[e.status] for e in inputs)
    if merged.is_known:
        assert merged.fits()
    for env in (*inputs, merged):
        tainted = env.taint(status, reason)
        _assert_valid(tainted)
        assert _RANK[tainted.status] >= _RANK[env.status]
        if env.fits():
            assert tainted.leaves == env.leaves  # only an envelope past its widest bound sheds
        later = tainted.at(revision)
        _assert_valid(later)
        assert later.revision == max(tainted.revision, revision)


@pytest.mark.parametrize("status", ["unknown", "revoked"])
def test_envelope_full_tainted_envelope_keeps_its_first_reason(status: str) -> None:
    """An already tainted full envelope that must shed keeps the reason it had."""
    full = _filled(Envelope(status, EPOCH, 9, (), (_leaf("a"),), "legacy"), MAX_BYTES)
    later = full.taint("revoked", "invalid").at(10**15)
    assert later.reason == "legacy" and later.size() <= MAX_BYTES
