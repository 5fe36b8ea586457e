"""Fuzzing canonical JSON: strict parsing and the canonical form never fail outside AssayError."""

from __future__ import annotations

from typing import Any

from fuzz_tools import FUZZ, corpus_bytes, inputs, json_values
from hypothesis import given

from assay.canonical import canonical_text, digest, parse
from assay.errors import AssayError

PARSE_CODES = {"invalid_utf8", "invalid_json", "duplicate_key", "resource_limit"}
ENCODE_CODES = {"invalid_json", "unsafe_integer", "lone_surrogate", "resource_limit"}
SEEDS = corpus_bytes("canonical")


@FUZZ
@given(raw=inputs(SEEDS))
def test_fuzz_canonical_parse_accepts_or_refuses_with_a_parse_code(raw: bytes) -> None:
    """Any bytes either parse or are refused with one of the four parse codes."""
    try:
        parse(raw)
    except AssayError as exc:
        assert exc.code in PARSE_CODES, exc


@FUZZ
@given(raw=inputs(SEEDS))
def test_fuzz_canonical_text_is_a_fixed_point(raw: bytes) -> None:
    """Whatever parses and canonicalises parses back to the same canonical text."""
    try:
        value = parse(raw)
        text = canonical_text(value)
    except AssayError as exc:
        assert exc.code in PARSE_CODES | ENCODE_CODES, exc
        return
    assert canonical_text(parse(text)) == text
    assert digest(parse(text)) == digest(value)


@FUZZ
@given(value=json_values())
def test_fuzz_canonical_values_encode_or_refuse_with_a_pointer(value: Any) -> None:
    """Any JSON-shaped value encodes, or is refused with an encode code and a pointer into it."""
    try:
        text = canonical_text(value)
    except AssayError as exc:
        assert exc.code in ENCODE_CODES, exc
        if exc.code in ("unsafe_integer", "lone_surrogate", "invalid_json"):
            assert exc.pointer is not None
        return
    assert canonical_text(parse(text)) == text
