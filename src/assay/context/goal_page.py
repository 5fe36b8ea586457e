"""Goal reads a page at a time: a byte window of the file that never splits a character or a region.

:func:`goal_page` cuts one page out of a goal read (:class:`~assay.context.goal.GoalRead`
plus the bytes it was computed from). The page is the window of the file
from a byte offset to the furthest point whose answer fits a byte budget:
the non-generated text in the window (explicit ownership), the lineage of
the regions in it and the todo items of its loopx regions, and with
``full`` the window's bytes. A window boundary falls only between lines
outside every region, or inside a very long line on a character boundary:
a region is delivered whole or not at all, and no UTF-8 sequence is split.
Joining the pages' ``text`` (or ``full_text``) in order gives the whole
text exactly; the union of their regions and todos is every region and
todo, once.

Sizes are bytes of canonical JSON, measured as the page is assembled and
checked once more on the finished page. Pure: it reads nothing and writes
nothing. Imports errors, paging and the sibling context modules.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from assay.context.goal import GoalRead, Region
from assay.context.loopx import Lines
from assay.errors import AssayError, UsageError
from assay.paging import MAX_PAGE_BYTES, encoded_size, page_facts

__all__ = ["goal_page"]

# Long lines are cut into pieces of at most this many characters (at most four
# UTF-8 bytes each), so one line never needs more than a small part of a page.
_PIECE_CHARS = 256
# What the page's reads add at most; the final size check corrects the estimate.
_READS_BYTES = 1024

NextRead = Callable[[int, int | None], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class _Piece:
    start: int
    end: int
    region: Region | None
    cost: int


def _text_cost(segment: str) -> int:
    return encoded_size(segment) - 2


def _pieces(read: GoalRead, text: str, starts: list[int], start: int, full: bool,
            region_cost: Callable[[Region], int]) -> Iterator[_Piece]:
    """The pieces of the file from character ``start`` on: text lines (or parts) and regions."""
    at = start
    for region in read.regions:
        if region.end <= start:
            continue
        yield from _text(read, text, starts, at, region.start, full)
        yield _Piece(region.start, region.end, region,
                     region_cost(region) + (_text_cost(text[region.start:region.end]) if full
                                            else 0))
        at = region.end
    yield from _text(read, text, starts, at, len(text), full)


def _text(read: GoalRead, text: str, starts: list[int], start: int, end: int,
          full: bool) -> Iterator[_Piece]:
    shown = int(read.is_explicit) + int(full)
    line = bisect_right(starts, start) - 1
    at = start
    while at < end:
        stop = min(end, starts[line + 1])
        while at < stop:
            cut = min(stop, at + _PIECE_CHARS)
            yield _Piece(at, cut, None, shown * _text_cost(text[at:cut]) if shown else 0)
            at = cut
        line += 1


def goal_page(read: GoalRead, data: bytes, *, offset: int, max_bytes: int, full: bool,
              next_read: NextRead) -> dict[str, Any]:
    """One page of ``read`` starting at byte ``offset``, at most ``max_bytes`` of canonical JSON.

    ``next_read(offset, max_bytes)`` builds the read of the page that starts
    at ``offset`` (``max_bytes`` None: the caller's own budget). The page's
    ``read_more`` holds it when the window stops before the end of the file;
    when the region at ``offset`` alone does not fit the budget, it holds the
    same page with a budget that fits it (``resource_limit`` beyond
    :data:`~assay.paging.MAX_PAGE_BYTES`). ``omitted`` counts the bytes,
    regions and todos after the window. An ``offset`` inside a UTF-8
    sequence, inside a region or past the end is ``invalid_argument``.
    """
    if offset > len(data):
        raise UsageError(f"offset {offset} is past the end of the file ({len(data)} bytes)",
                         code="invalid_argument", pointer="/offset")
    try:
        start = len(data[:offset].decode("utf-8"))
    except UnicodeDecodeError:
        raise UsageError(f"offset {offset} is inside a UTF-8 sequence", code="invalid_argument",
                         pointer="/offset",
                         action="Start at 0 or at an offset a previous page's read_more named.") \
            from None
    text = data.decode("utf-8")
    inside = next((r for r in read.regions if r.start < start < r.end), None)
    if inside is not None:
        raise UsageError(f"offset {offset} is inside region {inside.id!r}; a page starts outside "
                         "regions", code="invalid_argument", pointer="/offset",
                         action="Start at 0 or at an offset a previous page's read_more named.")
    # The whole-file facts of the read, without its text and todos.
    facts = {k: v for k, v in read.to_dict().items()
             if k not in ("text", "excluded_todo_regions", "todos")}
    views = read.todo_views()
    todos_of: dict[str, list[dict[str, Any]]] = {}
    for todo, view in zip(read.todos, views, strict=True):
        todos_of.setdefault(todo.region_id, []).append(view)

    def region_cost(region: Region) -> int:
        lineage = encoded_size(region.to_dict()) + 1 if read.is_explicit else 0
        return lineage + sum(encoded_size(v) + 1 for v in todos_of.get(region.id, []))

    def build(taken: list[_Piece], oversized: _Piece | None) -> dict[str, Any]:
        end = taken[-1].end if taken else start
        end_byte = offset + len(text[start:end].encode("utf-8"))
        regions = [p.region for p in taken if p.region is not None]
        later = [r for r in read.regions if r.start >= end]
        out = {**facts, "window": {"start": offset, "end": end_byte}, "text": None,
               "excluded_todo_regions": None}
        if read.is_explicit:
            out["text"] = "".join(text[p.start:p.end] for p in taken if p.region is None)
            out["excluded_todo_regions"] = [r.to_dict() for r in regions]
        out["todos"] = [v for r in regions for v in todos_of.get(r.id, [])]
        if full:
            out["full_text"] = text[start:end]
        reads = []
        if oversized is not None:
            needed = max_bytes + oversized.cost
            if needed > MAX_PAGE_BYTES:
                assert oversized.region is not None
                raise AssayError(
                    f"region {oversized.region.id!r} of goal {read.goal_id!r} needs more than "
                    f"{MAX_PAGE_BYTES} bytes in one page", code="resource_limit",
                    details={"region_id": oversized.region.id, "limit_bytes": MAX_PAGE_BYTES},
                    action="Split the region's todos across several regions of the goal file.")
            reads.append(next_read(offset, needed))
        elif end_byte < len(data):
            reads.append(next_read(end_byte, None))
        return {**out, **page_facts({"bytes": len(data) - end_byte, "regions": len(later),
                                     "todos": sum(len(todos_of.get(r.id, [])) for r in later)},
                                    reads)}

    starts = Lines(text).starts
    base = encoded_size(build([], None)) + _READS_BYTES
    taken: list[_Piece] = []
    used = base
    oversized = None
    for piece in _pieces(read, text, starts, start, full, region_cost):
        if used + piece.cost > max_bytes:
            if not taken and piece.region is not None:
                oversized = piece
            break
        taken.append(piece)
        used += piece.cost
    page = build(taken, oversized)
    while taken and encoded_size(page) > max_bytes:
        taken.pop()
        page = build(taken, None)
    return page
