"""The paging kernel (``assay.paging.fit``): following its pages always ends, and passes
every candidate exactly once, shown whole or named for an exact read.

Every bounded read builds its pages with ``fit``; its per-item size is an
estimate, so these cases let the estimate err both ways.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from assay.paging import fit
from assay_testing import examples


def _builder(sizes: list[int], start: int) -> Any:
    """A page's answer: the items shown, the exact reads, the next page's cursor."""
    def build(shown: Sequence[int], oversized: Sequence[int], rest: int) -> dict[str, Any]:
        walked = [*shown, *oversized]
        cursor = max(walked) + 1 if walked else start
        return {"items": ["x" * sizes[i] for i in shown], "exact": list(oversized),
                "next": {"after": cursor} if rest else None}
    return build


def _pages(sizes: list[int], error: int, limit: int | None,
           max_bytes: int) -> list[tuple[list[int], list[int]]]:
    """Follow the pages of ``len(sizes)`` items to the end: (shown, oversized) per page."""
    pages: list[tuple[list[int], list[int]]] = []
    start = 0
    while True:
        candidates = list(range(start, len(sizes)))
        fitted = fit(candidates, _builder(sizes, start), limit=limit, max_bytes=max_bytes,
                     size=lambda i: max(0, sizes[i] + 3 + error))
        pages.append((list(fitted.shown), list(fitted.oversized)))
        walked = len(fitted.shown) + len(fitted.oversized)
        assert walked == len(candidates) - fitted.rest
        if not fitted.rest:
            return pages
        assert walked > 0, "a page that walks nothing names itself as the next"
        assert len(pages) <= len(sizes), "more pages than items"
        start += walked


@settings(max_examples=examples(300), deadline=None)
@given(sizes=st.lists(st.integers(0, 6000), max_size=25), error=st.integers(-400, 400),
       limit=st.none() | st.integers(1, 6), max_bytes=st.integers(300, 8000))
# One item whose estimate fits the budget but whose page does not (the cursor
# the next page names adds bytes the estimate left out): it used to be given
# back, leaving a page that named itself as the next one.
@example(sizes=[3980, 10], error=-60, limit=2, max_bytes=4096)
def test_fit_pages_end_and_pass_every_item_once(sizes: list[int], error: int,
                                                limit: int | None, max_bytes: int) -> None:
    """Every item is shown or named for an exact read once, in order; each page moves on."""
    pages = _pages(sizes, error, limit, max_bytes)
    passed = [i for shown, oversized in pages for i in sorted([*shown, *oversized])]
    assert passed == list(range(len(sizes)))
    for shown, oversized in pages:
        if limit is not None:
            assert len(shown) + len(oversized) <= limit


def test_fit_shows_what_fits_and_names_what_never_can() -> None:
    """Small items share a page; one larger than any page is named for an exact read."""
    assert _pages([100, 100, 100], 0, None, 4096) == [([0, 1, 2], [])]
    assert _pages([100, 9000, 100], 0, None, 4096) == [([0, 2], [1])]
