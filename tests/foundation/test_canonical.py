"""Canonical JSON (RFC 8785) and digests: vectors, rejections, properties, differential."""

from __future__ import annotations

import hashlib
import json
import struct
from typing import Any

import pytest
import rfc8785
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay.canonical import (
    MAX_DEPTH,
    MAX_NODES,
    canonical_bytes,
    canonical_text,
    digest,
    fingerprint,
    parse,
)
from assay.errors import AssayError
from assay_testing import examples


def _double(bits: str) -> float:
    return struct.unpack(">d", bytes.fromhex(bits))[0]


# RFC 8785 appendix B: IEEE-754 bit patterns and their canonical text.
RFC_NUMBERS = [
    ("0000000000000000", "0"),
    ("8000000000000000", "0"),
    ("0000000000000001", "5e-324"),
    ("8000000000000001", "-5e-324"),
    ("7fefffffffffffff", "1.7976931348623157e+308"),
    ("ffefffffffffffff", "-1.7976931348623157e+308"),
    ("4340000000000000", "9007199254740992"),
    ("c340000000000000", "-9007199254740992"),
    ("4430000000000000", "295147905179352830000"),
    ("44b52d02c7e14af5", "9.999999999999997e+22"),
    ("44b52d02c7e14af6", "1e+23"),
    ("44b52d02c7e14af7", "1.0000000000000001e+23"),
    ("444b1ae4d6e2ef4e", "999999999999999700000"),
    ("444b1ae4d6e2ef4f", "999999999999999900000"),
    ("444b1ae4d6e2ef50", "1e+21"),
    ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"),
    ("3eb0c6f7a0b5ed8d", "0.000001"),
    ("41b3de4355555553", "333333333.3333332"),
    ("41b3de4355555554", "333333333.33333325"),
    ("41b3de4355555555", "333333333.3333333"),
    ("41b3de4355555556", "333333333.3333334"),
    ("41b3de4355555557", "333333333.33333343"),
    ("becbf647612f3696", "-0.0000033333333333333333"),
    ("43143ff3c1cb0959", "1424953923781206.2"),
]


@pytest.mark.parametrize(("bits", "expected"), RFC_NUMBERS)
def test_canonical_rfc8785_number_vectors(bits: str, expected: str) -> None:
    """Every double of RFC 8785 appendix B is written as ECMAScript writes it."""
    assert canonical_text(_double(bits)) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1e21, "1e+21"),
        (1e-7, "1e-7"),
        (1.5e-7, "1.5e-7"),
        (-0.0, "0"),
        (1.0, "1"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (0.000001, "0.000001"),
        (123456789012345680000.0, "123456789012345680000"),
        (1e16, "10000000000000000"),
        (1e20, "100000000000000000000"),
        (0.1, "0.1"),
        (-1.5, "-1.5"),
        (2.0**60, "1152921504606847000"),
    ],
)
def test_canonical_formats_numbers_like_ecmascript(value: float, expected: str) -> None:
    """Numbers use ECMAScript's shortest round-trip form, not Python's repr."""
    assert canonical_text(value) == expected


def test_canonical_rfc8785_main_example() -> None:
    """The worked example of RFC 8785 section 3.2.2 canonicalises byte for byte."""
    text = r'''{
      "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
      "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
      "literals": [null, true, false]
    }'''
    expected = (
        r'''{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'''
        r'''"string":"€$\u000f\nA'B\"\\\\\"/"}'''
    )
    assert canonical_text(parse(text)) == expected


def test_canonical_sorts_keys_by_utf16_code_units() -> None:
    """Keys sort by UTF-16 code units, so an astral-plane key sorts before U+FB33 (RFC 8785 3.2.3)."""
    value = {
        "\u20ac": "Euro Sign",
        "\r": "Carriage Return",
        "\ufb33": "Hebrew Letter Dalet With Dagesh",
        "1": "One",
        "\U0001f600": "Emoji: Grinning Face",
        "\u0080": "Control",
        "\u00f6": "Latin Small Letter O With Diaeresis",
    }
    keys = list(json.loads(canonical_text(value)))
    assert keys == ["\r", "1", "\u0080", "\u00f6", "\u20ac", "\U0001f600", "\ufb33"]


def test_canonical_astral_key_order_differs_from_code_point_order() -> None:
    """An astral-plane key sorts before a high BMP key, unlike Python's sorted()."""
    value = {"\uffff": 1, "\U00010000": 2}
    assert sorted(value) == ["\uffff", "\U00010000"]
    assert canonical_text(value) == '{"\U00010000":2,"\uffff":1}'


_SHORT_ESCAPES = {0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r"}


@pytest.mark.parametrize("code", range(0x20))
def test_canonical_escapes_control_characters(code: int) -> None:
    """Control characters use the short escape when JSON has one, else lowercase \\u00xx."""
    expected = _SHORT_ESCAPES.get(code, f"\\u{code:04x}")
    assert canonical_text(chr(code)) == f'"{expected}"'


def test_canonical_leaves_other_characters_unescaped() -> None:
    """Quote and backslash are escaped; DEL, U+2028, non-ASCII and '/' are written as they are."""
    assert canonical_text('"\\/\x7f\u2028€\U0001f600') == '"\\"\\\\/\x7f\u2028€\U0001f600"'


def test_canonical_reference_check_vector() -> None:
    """The REFERENCE.md check vector: __proto__ and constructor are ordinary keys."""
    text = '{"constructor":{"safe":true},"state":"known","__proto__":{"safe":true}}'
    expected = '{"__proto__":{"safe":true},"constructor":{"safe":true},"state":"known"}'
    assert canonical_text(parse(text)) == expected


def test_canonical_issue_example() -> None:
    """The issue's example document canonicalises to the documented text."""
    assert canonical_text(parse('{"b":1,"a":[1.0,1e21,-0,"\\u20ac"]}')) == '{"a":[1,1e+21,0,"€"],"b":1}'


def test_digest_is_hex_sha256_of_canonical_bytes() -> None:
    """digest is the lowercase hex SHA-256 of the UTF-8 canonical text; fingerprint prefixes sha256:."""
    value = {"b": [1.0, "€"], "a": None}
    raw = '{"a":null,"b":[1,"€"]}'.encode()
    assert canonical_bytes(value) == raw
    assert digest(value) == hashlib.sha256(raw).hexdigest()
    assert fingerprint(value) == "sha256:" + hashlib.sha256(raw).hexdigest()


def test_canonical_accepts_tuples_as_arrays() -> None:
    """A tuple is written as an array."""
    assert canonical_text({"a": (1, "x")}) == '{"a":[1,"x"]}'


# ---------------------------------------------------------------- rejections


def _rejected(fn: Any, *args: Any) -> AssayError:
    with pytest.raises(AssayError) as info:
        fn(*args)
    return info.value


@pytest.mark.parametrize(
    "text",
    ['{"a":', "[1,]", "{'a':1}", "", "[1] [2]", "NaN", "Infinity", "-Infinity", "[NaN]", "1e400",
     "-1e400", '{"a":[1e999]}'],
)
def test_parse_rejects_invalid_json(text: str) -> None:
    """Syntax errors, NaN, Infinity and numbers beyond a double are invalid_json."""
    err = _rejected(parse, text)
    assert err.code == "invalid_json"
    assert err.pointer is None


def test_parse_rejects_duplicate_key_with_pointer() -> None:
    """A duplicate object key is duplicate_key, pointing at the repeated member."""
    err = _rejected(parse, '{"x":[{"k":1,"k":2}]}')
    assert err.code == "duplicate_key"
    assert err.pointer == "/x/0/k"
    assert err.details == {"key": "k"}


def test_parse_duplicate_key_pointer_names_the_first_one_found() -> None:
    """With duplicates at two levels, the pointer names the inner one, which the parser meets first."""
    err = _rejected(parse, '{"a":{"x~/":1,"x~/":2},"a":3}')
    assert err.code == "duplicate_key"
    assert err.pointer == "/a/x~0~1"


@pytest.mark.parametrize(
    ("text", "where"),
    [("9007199254740993", ""), ('{"n":[1,-9007199254740993]}', "/n/1"),
     ("123456789012345678901", "")],
)
def test_canonical_rejects_unsafe_integer(text: str, where: str) -> None:
    """An integer a double cannot hold exactly is unsafe_integer at its pointer, never rounded."""
    err = _rejected(canonical_text, parse(text))
    assert err.code == "unsafe_integer"
    assert err.pointer == where


def test_canonical_rejects_unsafe_python_integer() -> None:
    """A Python int beyond 2**53 that a double cannot hold is unsafe_integer."""
    err = _rejected(canonical_text, {"a": [2**53 + 1]})
    assert (err.code, err.pointer) == ("unsafe_integer", "/a/0")


@pytest.mark.parametrize(
    ("value", "expected"),
    [(2**53, "9007199254740992"), (2**60, "1152921504606847000"),
     (-(2**68), "-295147905179352830000"), (10**21, "1e+21")],
)
def test_canonical_accepts_large_integers_a_double_holds(value: int, expected: str) -> None:
    """Integers beyond 2**53 that a double holds exactly are written as that double (rfc8785 refuses them)."""
    assert canonical_text(value) == expected
    with pytest.raises(rfc8785.IntegerDomainError):
        rfc8785.dumps(value)


@pytest.mark.parametrize("text", ["123456789012345680000", "1152921504606847000",
                                  "-295147905179352830000"])
def test_parse_reads_canonical_large_integers_back(text: str) -> None:
    """The canonical text of a large double parses back and canonicalises to itself."""
    assert canonical_text(parse(text)) == text


@pytest.mark.parametrize(
    ("text", "where"),
    [('"\\ud800"', ""), ('{"a":["ok","\\udfff"]}', "/a/1"), ('{"o":{"k\\udc00":1}}', "/o")],
)
def test_canonical_rejects_lone_surrogate(text: str, where: str) -> None:
    """A lone surrogate is lone_surrogate at the string's pointer (a key's: the object's)."""
    value = parse(text)
    for fn in (canonical_text, canonical_bytes, digest):
        err = _rejected(fn, value)
        assert (err.code, err.pointer) == ("lone_surrogate", where)


def test_canonical_accepts_escaped_surrogate_pair() -> None:
    """An escaped surrogate pair is one astral character, written unescaped."""
    assert canonical_text(parse('"\\ud83d\\ude00"')) == '"\U0001f600"'


@pytest.mark.parametrize("raw", [b'"\xff"', b'{"a":"\xc3"}', b'"\xed\xa0\x80"'])
def test_parse_rejects_invalid_utf8(raw: bytes) -> None:
    """Bytes that are not UTF-8 (including encoded surrogates) are invalid_utf8 with the offset."""
    err = _rejected(parse, raw)
    assert err.code == "invalid_utf8"
    assert err.details["offset"] == raw.index(next(b for b in raw if b >= 0x80))


def test_parse_accepts_depth_128() -> None:
    """A document nested exactly 128 levels deep is accepted."""
    value = parse("[" * MAX_DEPTH + "]" * MAX_DEPTH)
    assert canonical_text(value) == "[" * MAX_DEPTH + "]" * MAX_DEPTH


def test_parse_rejects_depth_129() -> None:
    """A document nested 129 levels deep is resource_limit."""
    err = _rejected(parse, "[" * 129 + "]" * 129)
    assert err.code == "resource_limit"
    assert err.details["limit"] == "depth"


def test_parse_rejects_hostile_depth_without_recursion() -> None:
    """A million open brackets are refused as resource_limit, not a crash."""
    assert _rejected(parse, "[" * 1_000_000).code == "resource_limit"


def test_parse_counts_depth_outside_strings_only() -> None:
    """Brackets inside strings do not count towards the depth bound."""
    text = '{"a":"' + "[" * 500 + '"}'
    assert parse(text) == {"a": "[" * 500}


def test_canonical_rejects_depth_129_python_value() -> None:
    """A Python value nested 129 levels deep is resource_limit."""
    value: Any = []
    for _ in range(128):
        value = [value]
    assert _rejected(canonical_text, value).code == "resource_limit"


def test_canonical_accepts_100000_nodes() -> None:
    """A document of exactly 100,000 values is accepted."""
    value = parse("[" + ",".join(["0"] * (MAX_NODES - 1)) + "]")
    assert len(canonical_text(value)) == 2 * (MAX_NODES - 1) + 1


def test_canonical_rejects_more_than_100000_nodes() -> None:
    """A document of 100,001 values is resource_limit."""
    value = parse("[" + ",".join(["0"] * MAX_NODES) + "]")
    err = _rejected(canonical_text, value)
    assert err.code == "resource_limit"
    assert err.details["limit"] == "nodes"


@pytest.mark.parametrize(
    ("value", "where"),
    [({"a": float("nan")}, "/a"), ([float("inf")], "/0"), ({"s": {1, 2}}, "/s"),
     ({"b": b"x"}, "/b"), ({1: "x"}, "")],
)
def test_canonical_rejects_non_json_values(value: Any, where: str) -> None:
    """NaN, infinities, sets, bytes and non-string keys are invalid_json at their pointer."""
    err = _rejected(canonical_text, value)
    assert (err.code, err.pointer) == ("invalid_json", where)


# ---------------------------------------------------------------- properties

_FINITE = st.floats(allow_nan=False, allow_infinity=False)
_SAFE_INT = st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)
_TEXT = st.text(st.characters(codec="utf-8"), max_size=12)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | _SAFE_INT | _FINITE | _TEXT,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(_TEXT, children, max_size=5),
    max_leaves=30,
)
_PROPERTY = settings(max_examples=examples(300), deadline=None,
                     suppress_health_check=[HealthCheck.too_slow])


@_PROPERTY
@given(JSON_VALUES)
def test_canonical_text_parses_back_to_an_equal_value(value: Any) -> None:
    """Canonical text parses back to a value equal to the original."""
    assert parse(canonical_text(value)) == value


@_PROPERTY
@given(JSON_VALUES)
def test_canonical_is_stable_under_recanonicalisation(value: Any) -> None:
    """Canonicalising the canonical text again gives the same text."""
    text = canonical_text(value)
    assert canonical_text(parse(text)) == text


def _respell(value: Any, rnd: Any) -> str:
    """Write ``value`` as JSON with shuffled key order and random whitespace."""
    space = lambda: rnd.choice(["", " ", "\n", "\t ", "  \r\n"])
    if isinstance(value, dict):
        items = list(value.items())
        rnd.shuffle(items)
        body = ",".join(f"{space()}{json.dumps(k)}{space()}:{space()}{_respell(v, rnd)}{space()}"
                        for k, v in items)
        return "{" + body + space() + "}"
    if isinstance(value, list):
        return "[" + ",".join(space() + _respell(v, rnd) + space() for v in value) + space() + "]"
    return json.dumps(value, ensure_ascii=rnd.choice([True, False]))


@_PROPERTY
@given(JSON_VALUES, st.randoms(use_true_random=False))
def test_digest_ignores_key_order_and_whitespace(value: Any, rnd: Any) -> None:
    """Key order, whitespace and escaping of the input text never change the digest."""
    assert digest(parse(_respell(value, rnd))) == digest(value)


@_PROPERTY
@given(JSON_VALUES)
def test_canonical_matches_rfc8785_package(value: Any) -> None:
    """On values both accept, assay's bytes equal the rfc8785 reference package's."""
    assert canonical_bytes(value) == rfc8785.dumps(value)


@settings(max_examples=examples(500), deadline=None)
@given(_FINITE)
def test_canonical_numbers_match_rfc8785_package(number: float) -> None:
    """Every finite double is formatted exactly as the rfc8785 reference package formats it."""
    assert canonical_bytes(number) == rfc8785.dumps(number)


@settings(max_examples=examples(300), deadline=None)
@given(st.integers(min_value=-(2**1100), max_value=2**1100))
def test_canonical_integers_are_exact_or_refused(number: int) -> None:
    """Any integer is either written as a double equal to it or refused as unsafe_integer."""
    try:
        text = canonical_text(number)
    except AssayError as err:
        assert err.code == "unsafe_integer"
        assert abs(number) > 2**53
        return
    assert float(text) == number


def test_canonical_cli_issue_example(tmp_path: Any) -> None:
    """The issue's shell pipeline prints the documented canonical text."""
    import subprocess

    from foundation_cli import ASSAY

    command = f"""printf '{{"b":1,"a":[1.0,1e21,-0,"\\u20ac"]}}' | '{ASSAY}' canonical"""
    proc = subprocess.run(["bash", "-c", command], capture_output=True, cwd=tmp_path, timeout=60,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode("utf-8") == '{"a":[1,1e+21,0,"€"],"b":1}\n'


# ---------------------------------------------------------------- the fast path

# Documents as agents write them: short identifier keys, many short values,
# objects in arrays, some non-ASCII and astral text; the second strategy adds
# integers at the edge of a double and floats JCS writes differently.
_KEY = st.one_of(st.from_regex(r"[a-z][a-z0-9_]{0,11}", fullmatch=True), _TEXT)
_EDGE_INTS = (st.integers(2**53 - 2, 2**53 + 2) | st.integers(-(2**53) - 2, -(2**53) + 2)
              | st.sampled_from([10**15, 10**16, 2**60, 10**400]))
_RICH_LEAVES = st.none() | st.booleans() | _SAFE_INT | _TEXT | st.sampled_from(
    ["passed", "evidence:unit-1", "Zoë", "検証", "\U0001f600", "a\nb", "\x7f", "\u2028"])


def _rich(leaves: st.SearchStrategy[Any], keys: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    return st.recursive(
        leaves,
        lambda children: st.lists(children, max_size=12)
        | st.dictionaries(keys, children, min_size=1, max_size=10),
        max_leaves=160,
    ).filter(lambda v: isinstance(v, (dict, list)))


VALUE_RICH = _rich(_RICH_LEAVES, _KEY)
EDGE_RICH = _rich(_EDGE_INTS | _RICH_LEAVES | st.sampled_from([1.5, -0.25, 1.0, 1e16, 1e-7]),
                  _KEY)


@_PROPERTY
@given(VALUE_RICH)
def test_canonical_matches_rfc8785_package_on_value_rich_documents(value: Any) -> None:
    """On documents of many short values, assay's bytes equal the rfc8785 reference package's."""
    assert canonical_bytes(value) == rfc8785.dumps(value)


@_PROPERTY
@given(EDGE_RICH)
def test_canonical_fast_path_agrees_with_the_general_encoder(value: Any) -> None:
    """Whenever the fast path answers, its text is the general encoder's, byte for byte."""
    from assay.canonical import _fast_text, _general_text

    fast = _fast_text(value)
    if fast is not None:
        assert fast == _general_text(value)


@settings(max_examples=examples(500), deadline=None)
@given(_FINITE)
def test_canonical_numbers_inside_documents_match_rfc8785_package(number: float) -> None:
    """Every finite double inside an array (the fast path's check) is written as rfc8785 writes it."""
    assert canonical_bytes([number, {"n": number}]) == rfc8785.dumps([number, {"n": number}])


def test_canonical_fast_path_takes_a_value_rich_document() -> None:
    """An intent-like document of 129 short values takes the fast path and matches rfc8785."""
    from assay.canonical import _fast_text

    requirements = [{"id": f"R{i}", "text": f"step {i}", "done": i % 2 == 0, "parent_id": None,
                     "evidence": [{"id": f"evidence:e{i}", "revision": i + 1}]} for i in range(12)]
    value = {"version": 1, "brief": "Zoë's passkeys", "requirements": requirements}
    assert _fast_text(value) is not None
    assert canonical_bytes(value) == rfc8785.dumps(value)


@pytest.mark.parametrize("value", [
    [1.0], [1e16], [5e-324], [-0.0], [2**53 + 1], {"n": -(2**53) - 1},
    {"\U0001f600": 1, "\uffff": 2}, {1: "x"},
    [{1, 2}], [b"x"], [True, (1, 2), float("nan")],
])
def test_canonical_fast_path_declines_what_only_the_general_encoder_handles(value: Any) -> None:
    """Floats JCS writes differently, unsafe integers, astral keys and non-JSON values go the general way."""
    from assay.canonical import _fast_text

    assert _fast_text(value) is None


def test_canonical_output_text_matches_canonical_text_within_the_bounds() -> None:
    """output_text encodes exactly as canonical_text; it only lifts the input bounds."""
    from assay.canonical import MAX_NODES, OUTPUT_DEPTH, output_text

    value = {"b": [1.5, "é", None, True, 2**53], "a": {"\U0001f600": 1, "z": -0.0}}
    assert output_text(value) == canonical_text(value)
    many = [[i] for i in range(MAX_NODES)]
    assert output_text(many).count("[") == MAX_NODES + 1
    deep: Any = []
    for _ in range(OUTPUT_DEPTH - 1):
        deep = [deep]
    assert output_text(deep) == "[" * OUTPUT_DEPTH + "]" * OUTPUT_DEPTH
    with pytest.raises(AssayError) as caught:
        output_text([deep])
    assert caught.value.code == "resource_limit"


def test_canonical_digest_bytes_same_before_and_after_the_switch_to_hashlib() -> None:
    """digest_bytes gives hashlib's SHA-256 for small inputs, a large one, and small ones after it."""
    import hashlib

    from assay.canonical import digest_bytes

    for data in (b"", b"abc", bytes(range(256)) * 1200, b"x" * 2048, "é".encode()):
        assert digest_bytes(data) == hashlib.sha256(data).hexdigest()
