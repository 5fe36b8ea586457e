"""Bounded ledger reads: get --history pages its answer, on both backends.

On data larger than the default bound, the answer stays within it, ``omitted``
counts exactly what it left out, and following ``read_more`` returns every
version exactly once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay.errors import AssayError
from assay.ledger import open_store
from assay.ledger.store import Write
from assay_testing import Project, make_project
from paging_testing import exactly_once, follow, runner, size


@pytest.fixture
def proj(tmp_path: Path, ledger_url: str) -> Project:
    """A project on each backend."""
    return make_project(tmp_path / "proj", db=ledger_url)


@pytest.fixture
def run(proj: Project) -> Any:
    """Run an operation in the project in process; return its data."""
    return runner(proj.root, proj.db)


def _versions(project: Project, record_id: str, datas: list[Any]) -> None:
    store = open_store(project.db)
    try:
        for revision, data in enumerate(datas):
            store.put(Write(id=record_id, data=data, scope="project:demo",
                            expect_revision=revision))
    finally:
        store.close()


def test_get_history_pages_newest_first_and_recovers_every_version(proj, run) -> None:
    """50 versions: the default page holds the newest 20 (oldest first within it); the reads
    before_revision walk back to revision 1, every version once."""
    _versions(proj, "note:n", [{"v": i} for i in range(1, 51)])
    first = run("get", {"id": "note:n", "history": True})
    assert [v["revision"] for v in first["versions"]] == list(range(31, 51))
    assert first["omitted"] == {"versions": 30} and first["version_count"] == 50
    assert first["read_more"][0]["read_args"] == ["get", "--history", "--before-revision", "31",
                                                  "--", "note:n"]
    pages = follow(run, first)
    found = [v["revision"] for page in pages for v in page["versions"]]
    exactly_once(found, list(range(1, 51)))
    assert [v["data"] for page in reversed(pages) for v in page["versions"]] == \
        [{"v": i} for i in range(1, 51)]


def test_get_history_byte_budget_keeps_whole_versions(proj, run) -> None:
    """Versions of 20 KB: a page stops at 64 KiB with whole versions; a version larger than
    the budget is named by its exact read (get --revision)."""
    datas: list[Any] = [{"text": f"{i} " + "y" * 20_000} for i in range(6)]
    datas.insert(3, {"text": "z" * 70_000})
    _versions(proj, "note:big", datas)
    first = run("get", {"id": "note:big", "history": True})
    assert size(first) <= 64 * 1024
    pages = follow(run, first)
    exact = [p for p in pages if "record" in p]
    assert [p["record"]["revision"] for p in exact] == [4]
    assert exact[0]["record"]["data"] == {"text": "z" * 70_000}
    listed = [v["revision"] for page in pages for v in page.get("versions", [])]
    exactly_once(listed + [4], list(range(1, 8)))
    assert all(size(page) <= 64 * 1024 for page in pages if "versions" in page)
    assert first["omitted"]["versions"] == 7 - len(first["versions"])


def test_get_page_options_without_history_are_invalid_argument(proj, run) -> None:
    """--limit, --before-revision and --max-bytes page a history only."""
    _versions(proj, "note:n", [{"v": 1}])
    with pytest.raises(AssayError) as info:
        run("get", {"id": "note:n", "limit": 2})
    assert info.value.code == "invalid_argument" and info.value.pointer == "/limit"


def test_get_one_version_is_whole_and_complete(proj, run) -> None:
    """Reading one record returns it whole; a history that fits is complete."""
    _versions(proj, "note:n", [{"v": 1}, {"v": 2}])
    assert run("get", {"id": "note:n"})["record"]["data"] == {"v": 2}
    history = run("get", {"id": "note:n", "history": True})
    assert history["complete"] is True and history["omitted"] == {"versions": 0}
