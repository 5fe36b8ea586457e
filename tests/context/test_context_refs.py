"""``$ref`` de-duplication of inventory views and its exact inverse, expand()."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.context.refs import deduplicate, expand, resolve_pointer
from assay.errors import AssayError
from assay_testing import examples

A = {"id": "todo:a", "text": "one", "status": "open"}
A_CHANGED = {"id": "todo:a", "text": "one", "status": "claimed"}
B = {"id": "todo:b", "text": "one", "status": "open"}


def test_refs_view_copy_of_a_selected_record_points_into_todos() -> None:
    """A lane record identical to a selected record becomes {"$ref": "#/todos/i"}."""
    doc = {"todos": [B, A], "agent_todos": {"open": [A, B]}}
    out, replaced = deduplicate(doc)
    assert out["agent_todos"] == {"open": [{"$ref": "#/todos/1"}, {"$ref": "#/todos/0"}]}
    assert out["todos"] == [B, A] and replaced == 2


def test_refs_record_outside_todos_keeps_its_first_lane_copy() -> None:
    """A record missing from todos stays complete in its first lane; later copies point there."""
    doc = {"todos": [], "agent_todos": {"active": [A], "open": [A]}, "user_todos": {"x/y": [A]}}
    out, _ = deduplicate(doc)
    assert out["agent_todos"] == {"active": [A], "open": [{"$ref": "#/agent_todos/active/0"}]}
    assert out["user_todos"] == {"x/y": [{"$ref": "#/agent_todos/active/0"}]}


def test_refs_lane_names_are_escaped_per_rfc6901() -> None:
    """Pointers into lanes escape '/' and '~' in lane names."""
    doc = {"todos": [], "agent_todos": {"a/b~c": [A, A]}}
    out, _ = deduplicate(doc)
    assert out["agent_todos"]["a/b~c"][1] == {"$ref": "#/agent_todos/a~1b~0c/0"}
    assert expand(out) == doc


def test_refs_distinct_facts_are_never_merged() -> None:
    """Records sharing an id or a text but differing in any fact stay complete."""
    doc = {"todos": [A], "agent_todos": {"open": [A_CHANGED, B]}}
    out, replaced = deduplicate(doc)
    assert out["agent_todos"] == {"open": [A_CHANGED, B]} and replaced == 0


def test_refs_selected_todos_array_is_kept_intact() -> None:
    """Repeats inside todos itself are never replaced."""
    doc = {"todos": [A, A], "agent_todos": {"open": [A]}}
    out, _ = deduplicate(doc)
    assert out["todos"] == [A, A]
    assert out["agent_todos"]["open"] == [{"$ref": "#/todos/0"}]


def test_refs_dangling_pointer_is_invalid_ref() -> None:
    """Expanding a pointer that leads nowhere fails with invalid_ref."""
    with pytest.raises(AssayError) as info:
        expand({"todos": [A], "agent_todos": {"open": [{"$ref": "#/todos/7"}]}})
    assert info.value.code == "invalid_ref"
    assert info.value.details == {"ref": "#/todos/7"}


def test_refs_resolve_pointer_reads_nested_values() -> None:
    """resolve_pointer follows RFC 6901 tokens through objects and arrays."""
    assert resolve_pointer({"a": [{"b/c": 3}]}, "#/a/0/b~1c") == 3


_record = st.fixed_dictionaries({
    "id": st.sampled_from(["todo:a", "todo:b", "todo:c"]),
    "text": st.sampled_from(["one", "two", "same text"]),
    "status": st.sampled_from(["open", "claimed", "blocked"]),
    "claim": st.one_of(st.none(), st.fixed_dictionaries({"principal": st.sampled_from(["p", "q"])})),
})
_lane = st.sampled_from(["active", "open", "claimed", "blocked", "a/b", "t~x"])
_view = st.dictionaries(_lane, st.lists(_record, max_size=6), max_size=4)


@settings(max_examples=examples(300), deadline=None)
@given(todos=st.lists(_record, max_size=6), agent=_view, user=_view)
def test_refs_expand_of_deduplicated_inventory_is_the_full_inventory(
        todos: list, agent: dict, user: dict) -> None:
    """For random inventories, expand(deduplicate(x)) equals x and todos is untouched."""
    inventory = {"todos": todos, "agent_todos": agent, "user_todos": user, "count": len(todos)}
    reduced, replaced = deduplicate(inventory)
    assert reduced["todos"] == todos
    assert expand(reduced) == inventory
    flat = [i for lanes in (agent, user) for items in lanes.values() for i in items]
    refs = [i for v in ("agent_todos", "user_todos") for items in reduced[v].values()
            for i in items if "$ref" in i]
    assert replaced == len(refs) <= len(flat)
