"""What files copy from the registry is generated from it, and every operation is documented."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from assay.ops import Bound, Operation, Result, operations
from registry_tables import (
    REGIONS,
    ROOT,
    bound_cells,
    declared_source,
    profiles_table,
    region,
    stale,
    with_region,
)


def test_registry_tables_are_current() -> None:
    """DECLARED and the agents guide's tables are exactly what the registry generates."""
    assert stale() == [], "run: .venv/bin/python tests/registry_tables.py"


def test_registry_tables_see_a_new_operation(monkeypatch: pytest.MonkeyPatch) -> None:
    """An operation a module registers shows in DECLARED, after that module's others, and in the profiles."""
    from assay import ops

    def handler(inv: Any, args: dict[str, Any]) -> Result:
        return Result(None)

    handler.__module__ = "assay.ops.core"
    list(operations())
    monkeypatch.setitem(ops._REGISTRY, "demo.extra", Operation(
        name="demo.extra", summary="s", writes=True, handler=handler, admin=True))
    assert '"assay.ops.core": ("canonical", "describe", "init", "demo.extra"),' in declared_source()
    assert "| `assay demo extra` | `demo_extra` | admin | additive |" in profiles_table()


def test_registry_tables_region_is_replaced_whole() -> None:
    """A region's markers keep their place and the body between them is replaced."""
    text = "a\n<!-- BEGIN generated: t -->\nold\nrows\n<!-- END generated: t -->\nb\n"
    new = with_region(text, "t", "markdown", "new")
    assert new == "a\n<!-- BEGIN generated: t -->\nnew\n<!-- END generated: t -->\nb\n"
    assert region(new, "t", "markdown") == "new"
    with pytest.raises(ValueError, match="markers"):
        with_region("no markers", "t", "markdown", "x")


def test_registry_tables_every_region_has_its_markers() -> None:
    """Each generated region is present once in its file."""
    for path, name, style, _make in REGIONS:
        text = path.read_text(encoding="utf-8")
        assert with_region(text, name, style, region(text, name, style)) == text


@pytest.mark.parametrize(("bound", "cells"), [
    (Bound("todo", items=25, max_items=1000, bytes=65536, max_bytes=16 * 1024 * 1024,
           recover="r"), ("25 todos, 64 KiB", "1,000 todos, 16 MiB")),
    (Bound("report", items=1, max_items=1, whole=True, recover="r"),
     ("one report", "same (whole)")),
    (Bound("query", items=10, max_items=10, whole=True, recover="r"),
     ("at most 10 queries", "same (whole)")),
])
def test_registry_tables_bound_cells(bound: Bound, cells: tuple[str, str]) -> None:
    """A bound's default and maximum read as the table writes them."""
    assert bound_cells(bound) == cells


def _documentation_outside_generated_tables() -> str:
    texts = [(ROOT / "README.md").read_text(encoding="utf-8")]
    texts += [p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").glob("*.md"))]
    return re.sub(r"<!-- BEGIN generated: (\w+) -->.*?<!-- END generated: \1 -->", "",
                  "\n".join(texts), flags=re.DOTALL)


@pytest.mark.parametrize("op", list(operations()), ids=lambda op: op.name)
def test_registry_every_operation_is_documented(op: Operation) -> None:
    """Each operation is named in the README or a docs page, outside the generated tables."""
    words = " ".join(op.cli_path)
    text = _documentation_outside_generated_tables()
    assert f"assay {words}" in text or f"`{words}" in text or f"`{op.tool_name}`" in text, \
        f"document `assay {words}` in README.md or docs/"


def test_registry_tables_files_exist() -> None:
    """The files the regions live in are the registry module and the agents guide."""
    assert {path.relative_to(ROOT) for path, *_ in REGIONS} == {
        Path("src/assay/ops/__init__.py"), Path("docs/agents.md")}
