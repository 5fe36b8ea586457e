"""Integrity on read: stored data that fails its digest or strict parse is unreadable, never used.

Each test damages a row directly in the database (SQLite file or PostgreSQL
schema), as a disk fault or a hand edit would, then reads through the CLI.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay_testing import Project, corrupt_version, examples


def _put(project: Project, record_id: str, data: Any) -> dict[str, Any]:
    return project.ok("put", "--data-file", "-", "--", record_id, input=json.dumps(data))["data"]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# (stored text, whether the digest is recomputed to match it, the damage reason)
DAMAGE = [
    pytest.param('{"result":"passed"', False, "digest_mismatch", id="truncated"),
    pytest.param('{"result":9007199254740993}', False, "digest_mismatch", id="changed-old-digest"),
    pytest.param('{"result":9007199254740993}', True, "unsafe_integer", id="unsafe-integer"),
    pytest.param("not json at all", True, "not_json", id="not-json"),
    pytest.param('{"result":"a","result":"b"}', True, "not_json", id="duplicate-key"),
    pytest.param('{"result":NaN}', True, "not_json", id="nan"),
    pytest.param('{"result":"\\ud800"}', True, "lone_surrogate", id="lone-surrogate"),
    pytest.param("[" * 101 + "]" * 101, True, "too_deep", id="too-deep"),
]


@pytest.mark.parametrize(("text", "rehash", "reason"), DAMAGE)
def test_integrity_get_of_damaged_version_is_record_unreadable(any_project: Project, text: str,
                                                               rehash: bool, reason: str) -> None:
    """get answers record_unreadable (exit 1) naming the id, revision and reason, never the damaged data."""
    _put(any_project, "evidence:unit", {"result": "passed"})
    corrupt_version(any_project, "evidence:unit", 1, text, _sha(text) if rehash else None)
    result = any_project.run("get", "--", "evidence:unit")
    assert (result.code, result.error["code"]) == (1, "record_unreadable")
    assert result.error["details"] == {"id": "evidence:unit", "revision": 1, "reason": reason}
    assert "get --raw --revision 1 -- evidence:unit" in result.error["action"]
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(("text", "rehash", "reason"), DAMAGE)
def test_integrity_raw_read_shows_the_stored_text(any_project: Project, text: str, rehash: bool,
                                                  reason: str) -> None:
    """get --raw prints the stored text exactly as held, damaged or not."""
    _put(any_project, "evidence:unit", {"result": "passed"})
    corrupt_version(any_project, "evidence:unit", 1, text, _sha(text) if rehash else None)
    result = any_project.run("get", "--raw", "--", "evidence:unit")
    assert result.code == 0 and result.stdout == text + "\n"


def test_integrity_listings_survive_a_damaged_row(any_project: Project) -> None:
    """find and history list a damaged version with data null and its reason; the others read normally."""
    _put(any_project, "evidence:a", {"v": 1})
    _put(any_project, "evidence:b", {"v": 1})
    _put(any_project, "evidence:b", {"v": 2})
    corrupt_version(any_project, "evidence:a", 1, '{"v":2}', None)
    found = any_project.ok("find", "--kind", "evidence")["data"]["records"]
    assert [(r["id"], r["data"], r.get("unreadable", {}).get("reason")) for r in found] == [
        ("evidence:a", None, "digest_mismatch"), ("evidence:b", {"v": 2}, None)]
    corrupt_version(any_project, "evidence:b", 1, "{", None)
    versions = any_project.ok("get", "--history", "--", "evidence:b")["data"]["versions"]
    assert [(v["revision"], v["data"]) for v in versions] == [(1, None), (2, {"v": 2})]
    assert versions[0]["unreadable"]["read"] == ["assay", "get", "--raw", "--revision", "1", "--",
                                                 "evidence:b"]
    assert any_project.ok("get", "--", "evidence:b")["data"]["record"]["data"] == {"v": 2}


def test_integrity_damaged_links_make_the_version_unreadable(any_project: Project) -> None:
    """A version whose stored links are not JSON is unreadable (metadata_damaged), not a crash."""
    _put(any_project, "evidence:a", {"v": 1})
    corrupt_version(any_project, "evidence:a", 1, None, None, links="[{")
    result = any_project.run("get", "--", "evidence:a")
    assert (result.code, result.error["details"]["reason"]) == (1, "metadata_damaged")
    assert any_project.ok("find", "--kind", "evidence")["data"]["count"] == 1


def test_integrity_ledger_info_and_a_new_version_still_work(any_project: Project) -> None:
    """A damaged record can be replaced: the next put writes revision 2 and reads back."""
    _put(any_project, "evidence:a", {"v": 1})
    corrupt_version(any_project, "evidence:a", 1, "garbage", None)
    assert any_project.ok("ledger", "info")["data"]["records"] == 1
    assert _put(any_project, "evidence:a", {"v": 3})["revision"] == 2
    assert any_project.ok("get", "--", "evidence:a")["data"]["record"]["data"] == {"v": 3}


@pytest.mark.parametrize(("text", "damaged"), [
    ('{"n":900719925474099}', False),  # 15 digits: read as a plain integer
    ('{"n":9007199254740991}', False),  # 16 digits, the largest safe integer
    ('{"n":9007199254740993}', True),  # 16 digits past 2**53
    ('{"id":"12345678901234567890","n":9007199254740993}', True),
    ('{"id":"12345678901234567890","n":7}', False),  # a long run inside a string
    ('{"n":-9007199254740993}', True),
])
def test_integrity_integers_checked_whatever_the_digit_runs(text: str, damaged: bool) -> None:
    """Stored integers past 2**53 are damage, however the text's digit runs fall."""
    from assay.canonical import digest_bytes
    from assay.ledger.record import Damage, decode_stored

    sha = digest_bytes(text.encode())
    if damaged:
        with pytest.raises(Exception) as caught:
            decode_stored(text, sha)
        assert isinstance(caught.value.damage, Damage)  # type: ignore[attr-defined]
    else:
        assert decode_stored(text, sha) == json.loads(text)


def test_integrity_read_records_are_sealed_and_checked_like_built_ones() -> None:
    """A record built from a stored row equals one built by its constructor, refuses assignment and checks its text."""
    from assay.canonical import digest_bytes
    from assay.ledger.record import VERSION_FIELDS, Record, RecordUnreadable, stored_record

    text = '{"a":1}'
    fields: dict[str, Any] = {
        "id": "knowledge:a", "revision": 2, "kind": "knowledge", "scope": "project:x",
        "data_text": text, "data_sha256": digest_bytes(text.encode()), "status": "current",
        "superseded_by": None, "links": (), "audience": "project", "sources": (),
        "origin": "claim", "created_at": "2026-01-01T00:00:00.000Z", "ledger_revision": 7,
        "request_id": None}
    read = stored_record([fields[name] for name in VERSION_FIELDS], None)
    assert type(read) is Record
    assert read == Record(**fields)
    assert read.data == {"a": 1}
    with pytest.raises(AttributeError):
        read.status = "retired"  # type: ignore[misc]
    bad = stored_record([{**fields, "data_text": '{"a":2}'}[name] for name in VERSION_FIELDS],
                        None)
    with pytest.raises(RecordUnreadable):
        bad.data  # noqa: B018


def test_integrity_version_fields_are_listed_once() -> None:
    """The record's slots, its JSON keys and the columns the backends select (then the seal) all follow VERSION_FIELDS."""
    from assay.ledger.record import VERSION_COLUMNS, VERSION_FIELDS, Record, _Fields
    from assay.ledger.sql import _VERSION_COLUMNS

    assert _Fields.__slots__ == (*VERSION_FIELDS, "_data", "_damage", "_seal")
    assert tuple(name for name in _Fields.__annotations__ if not name.startswith("_")) \
        == VERSION_FIELDS or set(_Fields.__annotations__) == {*VERSION_FIELDS, "_data", "_damage",
                                                              "_seal"}
    assert _VERSION_COLUMNS == ", ".join("v." + column
                                         for column in (*VERSION_COLUMNS, "version_sha256"))
    record = Record(id="knowledge:a", kind="knowledge", scope="global", revision=1,
                    data_sha256="0" * 64, status="current", superseded_by=None, links=(),
                    audience="project", sources=(), created_at="2026-01-01T00:00:00.000Z",
                    ledger_revision=1, data={"a": 1})
    assert tuple(record.to_dict()) == VERSION_COLUMNS


# ------------------------------- the stored text's checks held to their plain form


class _Pairs(list):  # type: ignore[type-arg]
    """A JSON object to write as these (key, value) pairs, in this order, repeats and all."""


_WS = st.sampled_from(["", "", "", " ", "  ", "\n", "\t", "\r\n"])
# Strings biased towards what the escape and duplicate-key checks must see through.
_CHARS = st.sampled_from([":", " ", '"', "\\", "a", "é", "\x01", "\ud800", "\U0001f600", ","])
_STRINGS = st.lists(_CHARS, max_size=6).map("".join) | st.text(max_size=6)
_SCALARS = (st.none() | st.booleans() | st.integers(-(2**60), 2**60)
            | st.sampled_from([9007199254740993, 123456789012345680000, -(2**53)])
            | st.floats() | _STRINGS)
_VALUES = st.recursive(
    _SCALARS,
    lambda children: st.lists(children, max_size=4)
    | st.lists(st.tuples(_STRINGS, children), max_size=4).map(_Pairs),
    max_leaves=25,
)


@st.composite
def _string_literal(draw: st.DrawFn, text: str) -> str:
    """``text`` as a JSON string literal, each character written plainly or as an escape."""
    out = []
    for char in text:
        how = draw(st.sampled_from(["plain", "plain", "plain", "u", "U"]))
        if how == "plain" and (char in '"\\' or ord(char) < 0x20 or 0xD800 <= ord(char) <= 0xDFFF):
            how = "u"
        if how == "plain":
            out.append(char)
        elif ord(char) > 0xFFFF:  # a surrogate pair
            high, low = divmod(ord(char) - 0x10000, 0x400)
            out.append(f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04X}")
        else:
            out.append(f"\\u{ord(char):04x}" if how == "u" else f"\\u{ord(char):04X}")
    return '"' + "".join(out) + '"'


@st.composite
def _stored_texts(draw: st.DrawFn) -> str:
    """JSON text as assay writes it, or written otherwise, or damaged and forged.

    Whitespace between any tokens, keys repeated within an object, any
    character escaped (a colon, a quote, a lone surrogate), NaN, integers past
    2**53, nesting around the depth bound, and a character of damage.
    """
    def render(value: Any) -> str:
        ws = draw(_WS)
        if isinstance(value, _Pairs):
            pairs = list(value)
            if pairs and draw(st.booleans()):  # a key twice
                pairs.append((pairs[draw(st.integers(0, len(pairs) - 1))][0], draw(_SCALARS)))
            body = ",".join(draw(_WS) + draw(_string_literal(k)) + draw(_WS) + ":" + render(v)
                            for k, v in pairs)
            return ws + "{" + body + draw(_WS) + "}" + ws
        if isinstance(value, list):
            return ws + "[" + ",".join(render(v) for v in value) + draw(_WS) + "]" + ws
        if isinstance(value, str):
            return ws + draw(_string_literal(value)) + ws
        if isinstance(value, float) and not math.isfinite(value):
            return ws + draw(st.sampled_from(["NaN", "Infinity", "-Infinity", "1e400"])) + ws
        return ws + json.dumps(value) + ws

    text = render(draw(_VALUES))
    if draw(st.integers(0, 3)) == 0:
        depth = draw(st.integers(95, 105))
        opener = draw(st.sampled_from(["[", '{"k":']))
        text = opener * depth + text + ("]" if opener == "[" else "}") * depth
    if draw(st.integers(0, 4)) == 0:
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(['"', ":", ",", "\\", "}", "]", "{", " "])) \
            + text[at + draw(st.integers(0, 2)):]
    return text


def _strict_reading(text: str) -> Any:
    """The checks of a stored text in their plain form: strict parse, surrogate escapes, exact depth."""
    from assay.canonical import canonical_bytes
    from assay.ledger.record import _STRICT, MAX_DATA_DEPTH, Damage, _Damaged
    from assay.ledger.record import nesting_depth as _depth

    value = _STRICT.decode(text)
    if "\\ud" in text or "\\uD" in text:
        canonical_bytes(value)
    if _depth(value) > MAX_DATA_DEPTH:
        raise _Damaged(Damage("too_deep", ""))
    return value


def _outcome(read: Any, text: str) -> tuple[str, str]:
    """What a reading of ``text`` gives: its value spelled exactly (types, key order), or its error."""
    from assay.errors import AssayError
    from assay.ledger.record import _Damaged

    try:
        return "value", repr(read(text))
    except _Damaged as exc:
        return "damaged", exc.damage.reason
    except AssayError as exc:
        return "damaged", exc.code
    except (ValueError, RecursionError):
        return "damaged", "not_json"


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_stored_texts())
def test_integrity_stored_text_checks_match_their_plain_form(text: str) -> None:
    """decode_stored accepts exactly what the plain checks accept, with the same value or reason."""
    from assay.canonical import digest_bytes
    from assay.ledger.record import decode_stored

    try:
        sha = digest_bytes(text.encode())
    except UnicodeEncodeError:
        return  # a raw lone surrogate: not_text before any parse
    assert _outcome(lambda t: decode_stored(t, sha), text) == _outcome(_strict_reading, text)


_NESTED = st.recursive(st.none() | st.integers() | st.text(max_size=3),
                       lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c,
                                                                           max_size=3),
                       max_leaves=12)


@settings(max_examples=examples(300), deadline=None)
@given(_NESTED, st.integers(0, 12), st.integers(0, 8))
def test_integrity_level_count_bounds_the_depth(value: Any, wraps: int, bound: int) -> None:
    """The level count sends every value nested deeper than the bound to the exact walk."""
    from assay.ledger.record import _nests_past
    from assay.ledger.record import nesting_depth as _depth

    for i in range(wraps):
        value = [value] if i % 2 else {"k": value}
    if _depth(value) > bound:
        assert _nests_past(value, bound)


@pytest.mark.parametrize(("text", "reason"), [
    ('{"a" :1,"a":2}', "not_json"),
    ('{"a"\n:1,"a":2}', "not_json"),
    ('{"a"\t:1,"a":2}', "not_json"),
    ('{"a":"\\":","a":2}', "not_json"),  # an escaped quote and a colon inside a string
    ('{"\\u0061":1,"a":2}', "not_json"),  # the same key, once escaped
    ('{"x":[{"b":1},{"b":1,"b":1}]}', "not_json"),
    ('{"a":1,"a":1}', "not_json"),
    ('{"a\\ud800":1}', "lone_surrogate"),
    ('{"n":-9007199254740993}', "unsafe_integer"),
    ("[" * 101 + "]" * 101, "too_deep"),
    ('{"a":' * 101 + "1" + "}" * 101, "too_deep"),
])
def test_integrity_forged_texts_with_their_digest_are_damage(text: str, reason: str) -> None:
    """Forged stored text with a matching digest is damage, whatever its spacing or escapes."""
    from assay.canonical import digest_bytes
    from assay.ledger.record import Damage, decode_stored

    with pytest.raises(Exception) as caught:
        decode_stored(text, digest_bytes(text.encode()))
    damage = caught.value.damage  # type: ignore[attr-defined]
    assert isinstance(damage, Damage) and damage.reason == reason
