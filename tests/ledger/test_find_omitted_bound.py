"""find counts the matches after its page exactly up to a bound, then says "at least"."""

from __future__ import annotations

from typing import Any

import pytest

import assay.ops.ledger as ledger_ops
from assay.ledger import Write, open_store
from assay_testing import Project, data


def _notes(project: Project, n: int) -> None:
    store = open_store(project.db or str(project.root / ".assay" / "ledger.db"))
    try:
        store.put_many([Write(id=f"note:n{i:05d}", data={"text": "common word"},
                              scope="project:demo") for i in range(n)])
    finally:
        store.close()


def test_find_omitted_is_exact_up_to_the_bound(any_project: Project,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """With as many matches after the page as the bound, the count is exact and not 'at least'."""
    monkeypatch.setattr(ledger_ops, "MAX_OMITTED_COUNT", 5)
    _notes(any_project, 7)
    out: Any = data(any_project, "find", query="COMMON", limit=2)
    assert (out["count"], out["omitted"], out["omitted_at_least"]) == (2, {"records": 5}, False)
    assert out["read_more"][0]["arguments"]["after"] == "note:n00001"


def test_find_omitted_past_the_bound_is_at_least(any_project: Project,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the bound, omitted.records is the bound, omitted_at_least is true, and the next
    page's read is unchanged."""
    monkeypatch.setattr(ledger_ops, "MAX_OMITTED_COUNT", 5)
    _notes(any_project, 9)
    out: Any = data(any_project, "find", query="common", limit=2)
    assert (out["count"], out["omitted"], out["omitted_at_least"]) == (2, {"records": 5}, True)
    assert out["more"] is True and out["complete"] is False
    nxt: Any = data(any_project, "find", **out["read_more"][0]["arguments"])
    assert [r["id"] for r in nxt["records"]] == ["note:n00002", "note:n00003"]


def test_find_with_a_short_page_counts_nothing(any_project: Project) -> None:
    """A page shorter than its limit omits nothing and is never 'at least'."""
    _notes(any_project, 3)
    out: Any = data(any_project, "find", query="common", limit=10)
    assert (out["count"], out["omitted"], out["omitted_at_least"]) == (3, {"records": 0}, False)
