"""JSON text edited in place: values read with their spans, inserts that removing undoes exactly."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.errors import AssayError
from assay.gate import jsontext
from assay_testing import examples

LAYOUTS = [
    '{"a": 1, "b": [1, 2]}',
    '{\n  "a": 1,\n  "b": [\n    1,\n    2\n  ]\n}\n',
    '{\n    "a": 1,\n    "b": [1, 2]\n}',
    '{\r\n\t"a": 1,\r\n\t"b": [\r\n\t\t1,\r\n\t\t2\r\n\t]\r\n}\r\n',
    '{ "a" : 1 , "b" : [ 1 , 2 ] }',
]


@pytest.mark.parametrize("text", LAYOUTS)
def test_jsontext_parse_reads_the_value(text: str) -> None:
    """The parsed tree's value is what json.loads reads, and each span covers its value."""
    node = jsontext.parse(text)
    assert node.data() == json.loads(text)
    b = node.get("b")
    assert b is not None and json.loads(text[b.start:b.end]) == [1, 2]


@pytest.mark.parametrize("text", LAYOUTS)
def test_jsontext_member_insert_then_remove_is_byte_identical(text: str) -> None:
    """Adding a member and removing it again gives back the original text."""
    added = jsontext.insert_member(text, jsontext.parse(text), "hooks", {"Stop": [{"x": 1}]})
    assert json.loads(added)["hooks"] == {"Stop": [{"x": 1}]}
    assert jsontext.remove_member(added, jsontext.parse(added), "hooks") == text


@pytest.mark.parametrize("text", LAYOUTS)
def test_jsontext_item_append_then_remove_is_byte_identical(text: str) -> None:
    """Appending an item and removing it again gives back the original text."""
    node = jsontext.parse(text).get("b")
    assert node is not None
    added = jsontext.append_item(text, node, {"c": [3]})
    assert json.loads(added)["b"] == [1, 2, {"c": [3]}]
    again = jsontext.parse(added).get("b")
    assert again is not None
    assert jsontext.remove_item(added, again, 2) == text


def test_jsontext_insert_follows_the_container_layout() -> None:
    """A member added to a four-space file is indented by four spaces, on its own line."""
    text = '{\n    "a": {\n        "x": 1\n    }\n}'
    node = jsontext.parse(text).get("a")
    assert node is not None
    assert jsontext.insert_member(text, node, "y", [2]) == (
        '{\n    "a": {\n        "x": 1,\n        "y": [\n            2\n        ]\n    }\n}')


@pytest.mark.parametrize("text, pointer", [
    ('{"a": 1, "a": 2}', "/a"),
    ('{"a": [1,]}', "/a/1"),
    ('{"a": 1} x', None),
    ("// comment\n{}", None),
    ('{"a": tru}', "/a"),
])
def test_jsontext_refuses_what_is_not_strict_json(text: str, pointer: str | None) -> None:
    """Duplicate keys, trailing commas, comments and stray text are hook_settings_invalid."""
    with pytest.raises(AssayError) as info:
        jsontext.parse(text)
    assert (info.value.code, info.value.pointer) == ("hook_settings_invalid", pointer)


_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=3),
    max_leaves=8)


@settings(max_examples=examples(60), deadline=None)
@given(st.dictionaries(st.text(max_size=6), _values, max_size=4),
       st.sampled_from([None, 2, 4, "\t"]), _values)
def test_jsontext_round_trip_property(doc: dict, indent: int | str | None, value: object) -> None:
    """For any object in any indentation, insert then remove of a new member restores the bytes."""
    text = json.dumps(doc, indent=indent)
    key = "assay-added"
    added = jsontext.insert_member(text, jsontext.parse(text), key, value)
    assert json.loads(added) == {**doc, key: value}
    assert jsontext.remove_member(added, jsontext.parse(added), key) == text
