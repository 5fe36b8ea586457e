"""Test helpers for bounded reads: follow every recovering read, check every page's bound.

A bounded read's data carries ``complete``, ``truncated``, ``omitted`` and
``read_more`` (docs/agents.md). :func:`follow` runs the reads in
``read_more`` breadth first, in order, through the operations registry (the
MCP tool name and its arguments object, exactly as a client would), and
checks that each entry's CLI argument array names the same read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assay.canonical import canonical_bytes
from assay.ops import lookup
from assay.ops.bounds import recovering_read

Run = Callable[[str, dict[str, Any]], dict[str, Any]]


def size(data: Any) -> int:
    """Bytes of ``data`` as canonical JSON (what every surface prints)."""
    return len(canonical_bytes(data))


def check_page_facts(data: dict[str, Any]) -> None:
    """The four page facts are present and agree with each other."""
    assert isinstance(data["omitted"], dict) and data["omitted"]
    assert all(isinstance(n, int) and n >= 0 for n in data["omitted"].values())
    assert data["complete"] is (not any(data["omitted"].values()))
    assert data["truncated"] is (not data["complete"])
    assert bool(data["read_more"]) is data["truncated"]


def check_read(read: dict[str, Any]) -> None:
    """A read_more entry's argument array is the registry's spelling of its tool and arguments."""
    op = lookup(read["tool"])
    assert op.tool_name == read["tool"] and not op.writes
    again = recovering_read(op.name, read["arguments"], read["reason"])
    assert again["read_args"] == read["read_args"]


def follow(run: Run, first: dict[str, Any], *, limit: int = 10_000) -> list[dict[str, Any]]:
    """Every page reachable from ``first`` through ``read_more``, ``first`` included, in order."""
    pages = [first]
    check_page_facts(first)
    queue = list(first["read_more"])
    while queue:
        assert len(pages) < limit, "the recovering reads do not end"
        read = queue.pop(0)
        check_read(read)
        data = run(read["tool"], read["arguments"])
        check_page_facts(data)
        pages.append(data)
        queue.extend(data["read_more"])
    return pages


def exactly_once(found: list[Any], expected: list[Any]) -> None:
    """``found`` holds every expected item once and nothing else (order aside)."""
    assert len(found) == len(set(found)), "an item came twice"
    assert sorted(found) == sorted(expected)


def runner(root: Any, db: str | None) -> Run:
    """Run one operation in process in the project at ``root`` (ledger ``db``); return its data."""
    from assay.ops import Invocation, call

    def run(operation: str, arguments: dict[str, Any]) -> dict[str, Any]:
        inv = Invocation(cwd=str(root), db=db)
        try:
            return call(operation, arguments, inv)[0]["data"]
        finally:
            inv.close()

    return run
