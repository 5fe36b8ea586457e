"""Golden JSON for exact reads, not-found reads and $ref inventories, byte for byte."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from context_records import ALL, PARSE

from assay.canonical import canonical_bytes
from assay.context.refs import expand
from assay.context.todo import exact_read, inventory

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "context"

CASES: dict[str, Callable[[], Any]] = {
    "exact_read": lambda: exact_read("parser", "todo:parse", PARSE),
    "not_found_read": lambda: exact_read("parser", "todo:missing", None),
    "filtered_read": lambda: exact_read("other-goal", "todo:parse", PARSE),
    "inventory_refs": lambda: inventory("parser", ALL, limit=2),
    "inventory_thin": lambda: inventory("parser", ALL, thin=True, limit=2),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_context_golden_output_is_byte_identical(name: str) -> None:
    """Each case's canonical JSON equals its golden file (ASSAY_UPDATE_GOLDEN=1 rewrites them)."""
    produced = canonical_bytes(CASES[name]()) + b"\n"
    path = GOLDEN / f"{name}.json"
    if os.environ.get("ASSAY_UPDATE_GOLDEN") == "1":
        path.write_bytes(produced)
    assert path.read_bytes() == produced


def test_context_golden_inventory_expands_to_full_inventory() -> None:
    """The golden inventory, expanded, equals the inventory built without pointers."""
    import json

    golden = json.loads((GOLDEN / "inventory_refs.json").read_bytes())
    full = inventory("parser", ALL, limit=2, references=False)
    del golden["todo_list_record_references"]
    assert expand(golden) == full


def test_context_golden_inventory_keeps_lane_record_outside_limit() -> None:
    """A lane record outside --limit keeps its first complete copy; later copies point to it."""
    out = inventory("parser", ALL, limit=2)
    assert [t["id"] for t in out["todos"]] == ["todo:parse", "todo:schema"]
    lanes = out["agent_todos"]
    assert lanes["blocked"][0]["id"] == "todo:docs"
    assert lanes["selected"][2] == {"$ref": "#/agent_todos/blocked/0"}
    assert lanes["selected"][0] == {"$ref": "#/todos/0"}
    assert out["coverage"] == {"active": 4, "included": 2, "omitted": 2}


def test_context_golden_exact_read_has_no_list_views() -> None:
    """An exact read returns one complete record and none of the list views."""
    out = exact_read("parser", "todo:parse", PARSE)
    assert not {"todos", "agent_todos", "user_todos"} & set(out)
    assert out["todo"]["text"] == PARSE.data["text"]
    assert out["todo"]["authority"]["revision"] == 2
