"""The read-bound policy in the registry: every read declares its bound, and surfaces show it."""

from __future__ import annotations

from typing import Any

import pytest

from assay.ops import Bound, lookup, operation, operations
from assay.ops.bounds import recovering_read

READS = [op for op in operations() if not op.writes]
PAGE_FACTS = ("complete", "truncated", "omitted", "read_more")


@pytest.mark.parametrize("name", [op.name for op in READS])
def test_bounds_every_read_operation_declares_its_bound(name: str) -> None:
    """Each read declares a default and a maximum (items, bytes or both); describe shows it."""
    op = lookup(name)
    assert isinstance(op.bounds, Bound)
    bound = op.describe()["bounds"]
    assert bound == op.bounds.describe() and bound["recover"].strip()
    assert bound["items"] or bound["bytes"]
    for kind in ("items", "bytes"):
        if bound[kind]:
            assert 0 < bound[kind]["default"] <= bound[kind]["maximum"]


@pytest.mark.parametrize("name", [op.name for op in READS if not op.bounds.whole])
def test_bounds_paging_arguments_agree_with_the_declaration(name: str) -> None:
    """The arguments that page a read exist, their schema maximums are the declared ones, and
    its answer carries the page facts."""
    op = lookup(name)
    assert op.bounds is not None
    schemas = {a.name: a.schema for a in op.arguments}
    assert set(op.bounds.arguments) <= set(schemas)
    if "limit" in op.bounds.arguments:
        assert schemas["limit"]["maximum"] == op.bounds.max_items
    if "max_bytes" in op.bounds.arguments:
        assert schemas["max_bytes"]["maximum"] == op.bounds.max_bytes
    assert set(PAGE_FACTS) <= set(op.describe()["output_schema"]["properties"])


def test_bounds_writes_declare_none() -> None:
    """Writes are not reads: none declares a read bound."""
    assert all(op.bounds is None for op in operations() if op.writes)


def test_bounds_registry_refuses_a_read_without_a_bound() -> None:
    """Registering a read operation with no bounds is refused at once."""
    with pytest.raises(ValueError, match="declares no bounds"):
        operation("test.unbounded", summary="s", writes=False)


def test_bounds_registry_refuses_a_bound_naming_an_unknown_argument() -> None:
    """A bound whose paging argument the operation does not take is refused."""
    with pytest.raises(ValueError, match="unknown argument 'after'"):
        operation("test.pages", summary="s", writes=False,
                  bounds=Bound("item", items=1, max_items=2, arguments=("after",), recover="r"))


@pytest.mark.parametrize("default,maximum", [(0, 1), (3, 2), (None, 4)])
def test_bounds_default_above_maximum_is_refused(default: Any, maximum: Any) -> None:
    """A bound needs 0 < default <= maximum."""
    with pytest.raises(ValueError):
        Bound("item", items=default, max_items=maximum, recover="r")


def test_bounds_mcp_tools_show_each_bound() -> None:
    """Each read tool states its bound in its description, before the effect line (describe has the data)."""
    from assay.mcp.server import tool_definitions

    tools = {t.name: t for t in tool_definitions("admin")}
    for op in operations():
        tool = tools[op.tool_name]
        assert tool.meta is None
        if op.bounds is None:
            continue
        assert tool.description is not None
        assert tool.description.endswith(f"{op.bounds.sentence}\n\n{op.effect_line}")
        assert "--" not in op.bounds.sentence


def test_bounds_recovering_read_spells_the_cli_arguments() -> None:
    """A recovering read names the tool, its arguments and the same read as a CLI argument array."""
    read = recovering_read("todo.list", {"goal_id": "g", "status": ["open", "blocked"],
                                         "thin": True, "after": "todo:x"}, "next_page")
    assert read == {"reason": "next_page", "tool": "todo_list",
                    "arguments": {"goal_id": "g", "status": ["open", "blocked"], "thin": True,
                                  "after": "todo:x"},
                    "read_args": ["todo", "list", "--goal-id", "g", "--thin", "--after", "todo:x",
                                  "--status", "open", "--status", "blocked"]}
    literal = recovering_read("get", {"id": "--odd", "revision": 3}, "item_too_large", revision=3)
    assert literal["read_args"] == ["get", "--revision", "3", "--", "--odd"]
    assert literal["revision"] == 3


def test_bounds_recovering_read_of_an_unknown_argument_is_refused() -> None:
    """A recovering read cannot name an argument its operation does not take."""
    with pytest.raises(ValueError, match="takes no argument"):
        recovering_read("get", {"id": "x", "after": "y"}, "next_page")
