"""Record ids (kind:name) and content-derived ids (prefix-8hex)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay.canonical import digest
from assay.errors import AssayError
from assay.ids import (
    MAX_ID_BYTES,
    content_id,
    is_word,
    record_kind,
    split_record_id,
    validate_record_id,
)

# Text near the grammars' edges: their characters, their neighbours, and some beyond ASCII.
_EDGY = st.text(st.sampled_from("az09-_.:+/ AZ`{@[\x00\x1f\x7f\x80\u212a\u0131é字"), max_size=8)


@pytest.mark.parametrize(
    ("record_id", "kind", "name"),
    [
        ("knowledge:login-flow", "knowledge", "login-flow"),
        ("decision-event:chosen-route", "decision-event", "chosen-route"),
        ("loop:abc:round:3", "loop", "abc:round:3"),
        ("k9:--help", "k9", "--help"),
        ("evidence:ünït 7", "evidence", "ünït 7"),
        ("k:" + "n" * (MAX_ID_BYTES - 2), "k", "n" * (MAX_ID_BYTES - 2)),
    ],
)
def test_record_id_valid(record_id: str, kind: str, name: str) -> None:
    """Well-formed ids split into kind and name at the first colon."""
    assert split_record_id(record_id) == (kind, name)
    assert validate_record_id(record_id) == record_id
    assert record_kind(record_id) == kind


@pytest.mark.parametrize(
    "record_id",
    [
        "no-colon",
        ":name",
        "Knowledge:x",
        "9kind:x",
        "kind_x:y",
        "kind:",
        "kind:a\x00b",
        "kind:line\nbreak",
        "kind:tab\there",
        "kind:del\x7f",
        "kind:c1\x85",
        "kind:sep\u2028",
        "k:" + "n" * (MAX_ID_BYTES - 1),
        "k:" + "€" * 171,
        "kind:\ud800",
        42,
        None,
        ["k:x"],
    ],
)
def test_record_id_invalid(record_id: Any) -> None:
    """A malformed id is invalid_id, pointing at the field when one is named."""
    with pytest.raises(AssayError) as info:
        split_record_id(record_id, field="/id")
    assert info.value.code == "invalid_id"
    assert info.value.pointer == "/id"


def test_record_id_invalid_without_field_has_no_pointer() -> None:
    """Without a field name, an invalid id carries no pointer."""
    with pytest.raises(AssayError) as info:
        validate_record_id("nope")
    assert (info.value.code, info.value.pointer) == ("invalid_id", None)


def test_record_id_limit_counts_utf8_bytes() -> None:
    """The 512 limit is in UTF-8 bytes, not characters."""
    assert validate_record_id("k:" + "€" * 170)  # 2 + 510 bytes


def test_content_id_shape() -> None:
    """A content id is prefix, a dash and the first 8 hex digits of the canonical digest."""
    content = {"text": "the build passes"}
    cid = content_id("cr", content)
    assert re.fullmatch(r"cr-[0-9a-f]{8}", cid)
    assert cid == "cr-" + digest(content)[:8]


def test_content_id_stable_under_key_order() -> None:
    """The same content with keys in another order gives the same id."""
    a = {"b": 1, "a": [1.0, {"y": 2, "x": 3}]}
    b = {"a": [1, {"x": 3, "y": 2}], "b": 1}
    assert content_id("rc", a) == content_id("rc", b)


def test_content_id_differs_for_other_content() -> None:
    """Different content gives a different id."""
    assert content_id("f", {"a": 1}) != content_id("f", {"a": 2})


@pytest.mark.parametrize("prefix", ["cr", "rc", "rci", "sg", "oq", "f"])
def test_content_id_known_prefixes(prefix: str) -> None:
    """Every prefix assay uses is accepted."""
    assert content_id(prefix, "x").startswith(prefix + "-")


@pytest.mark.parametrize("prefix", ["", "Cr", "c-r", "1a", "cr-"])
def test_content_id_rejects_malformed_prefix(prefix: str) -> None:
    """A malformed prefix is a programming error."""
    with pytest.raises(ValueError):
        content_id(prefix, {})


def test_content_id_rejects_unrepresentable_content() -> None:
    """Content JCS cannot represent is refused with the canonical error code."""
    with pytest.raises(AssayError) as info:
        content_id("cr", {"x": float("nan")})
    assert (info.value.code, info.value.pointer) == ("invalid_json", "/x")


@given(_EDGY)
def test_is_word_is_the_kind_grammar(text: str) -> None:
    """is_word(text) is exactly a full match of [a-z][a-z0-9-]*."""
    assert is_word(text) == bool(re.fullmatch(r"[a-z][a-z0-9-]*", text))


@given(st.text(st.characters(max_codepoint=0x2030), max_size=4))
def test_plain_name_check_is_printable_ascii(name: str) -> None:
    """A name that is ASCII and printable is exactly one of [\\x20-\\x7e]+ (the plain ids' names)."""
    assert bool(name and name.isascii() and name.isprintable()) == bool(
        re.fullmatch(r"[\x20-\x7e]+", name))
