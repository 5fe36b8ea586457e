"""The recon validator's shortcuts agree with the checks they stand for.

Secrets of all a packet's documents are screened in one scan and each
document scanned alone only when that scan fires; two lists are compared
member by member; a finding's pointer comes from an index of its array
built once. Each must give what the direct check gives.
"""

from __future__ import annotations

import tempfile
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from assay.packet.kernel import Context
from assay.packet.layout import PacketRoot
from assay.packet.recon.run import (
    ReconRun,
    same_json,
    same_json_members,
    secret_rules,
    secret_rules_each,
)
from assay_testing import examples

# Pieces that make assay's rules or the recon tool's own two patterns fire,
# nearly fire, or fire only next to each other (the separator's ";" and
# line breaks among them), and digests, which are never scanned.
PIECES = [
    "token", "token:", "token =", "Token\n=", "password=", "secret: ", "api_key=hunter2",
    "api-key:x", "x", "a1", "_", " ", "\n", ";", "\n;\n", "\r\n", "\t", "\u00a0", ",", "'", "=",
    ":", "@", "sk-", "sk_", "ghp-", "ghp_", "xoxb-", "abcd1234wxyz", "0123456789", "[REDACTED]",
    "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "eyJhbGciOiJIUzI1NiJ9",
    ".", "Bearer ", "://user:", "pw@", "é",
    "sha256:" + "ab" * 32,
]
TEXTS = st.lists(st.sampled_from(PIECES), max_size=6).map("".join)


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(st.lists(TEXTS, max_size=8), max_size=6))
def test_secret_screen_matches_each_document(groups: list[list[str]]) -> None:
    """Every document gets the rules it gets scanned alone, clean or not."""
    assert secret_rules_each(groups) == [secret_rules(group) for group in groups]


def test_secret_screen_finds_the_one_dirty_document() -> None:
    """A secret in one of many clean documents is reported for that document only."""
    groups = [[f"plain text {i}", "shared value"] for i in range(20)]
    groups[7] = ["shared value", "the api_key=hunter2 leaked"]
    found = secret_rules_each(groups)
    assert [i for i, rules in enumerate(found) if rules] == [7]
    assert found[7] == secret_rules(groups[7])


SCALARS = st.one_of(st.booleans(), st.sampled_from([0, 1, 2, 0.0, 1.0, 2.5]), st.none(),
                    st.sampled_from(["a", "b", "1"]))


def _json(children: Any) -> Any:
    return st.one_of(st.lists(children, max_size=3),
                     st.dictionaries(st.sampled_from(["a", "b", "c"]), children, max_size=3))


VALUES = st.recursive(SCALARS, _json, max_leaves=8)


@settings(max_examples=examples(600), deadline=None)
@given(st.lists(VALUES, max_size=4), st.lists(VALUES, max_size=4))
def test_members_compare_as_the_whole_lists(a: list[Any], b: list[Any]) -> None:
    """Member by member is the whole-list comparison (bools, numbers, key order)."""
    assert same_json_members(a, b) == same_json(a, b)
    # A reordered copy of a: equal canonical forms, another repr.
    twin = [dict(reversed(list(v.items()))) if isinstance(v, dict) else v for v in a]
    assert same_json_members(a, twin) == same_json(a, twin)


IDS = st.one_of(st.sampled_from(["a", "b", "1", ""]), st.sampled_from([0, 1, 1.0, 2, True, False]),
                st.none(), st.lists(st.sampled_from(["a", 1]), max_size=2),
                st.dictionaries(st.sampled_from(["a"]), st.sampled_from([1]), max_size=1))
MEMBERS = st.one_of(st.fixed_dictionaries({}, optional={"id": IDS, "other": IDS}),
                    IDS)


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(MEMBERS, max_size=10), st.lists(IDS, min_size=1, max_size=6))
def test_finding_pointers_index_as_the_first_match(members: list[Any], wanted: list[Any]) -> None:
    """A finding points at the first object whose id equals it, as a scan finds it
    (hostile ids: numbers equal to booleans, unhashable ids, no id at all)."""
    base = ReconRun(Context(PacketRoot(tempfile.gettempdir()), "recon"), ())
    for name in wanted:
        first = next((index for index, value in enumerate(members)
                      if type(value) is dict and value.get("id") == name), None)
        assert base._index(members, "id", name) == first
