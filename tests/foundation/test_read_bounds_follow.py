"""Must-show for every paged read: bounded, counted exactly, and recovered exactly, on both backends.

Driven by the registry: every read whose bound is not ``whole`` needs a data
builder here (or a named test elsewhere that shows the same on both
backends), so a new paged read without one fails
:func:`test_every_paged_read_has_a_must_show_case`. A builder writes more
items than the read's default bound and says how to name the items of a
page. The test then checks, for the first page and every page reached
through ``read_more``:

- the page holds at most the declared default items (and bytes, when
  declared) for a default read;
- ``omitted`` counts exactly the items not yet shown;
- following the reads through the registry (the MCP tool and its arguments)
  returns every item exactly once, and each ``read_args`` array run through
  the real CLI returns the same page.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from assay.ledger import open_store
from assay.ledger.store import Write
from assay.ops import lookup, operations
from assay_testing import Project, make_project
from paging_testing import Run, exactly_once, follow, runner, size

TESTS = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Case:
    """The first read of a must-show case, and how to check what its pages return."""

    arguments: dict[str, Any]
    kind: str                                   # the key in `omitted`
    expected: list[Any]                         # every item, once
    keys: Callable[[dict[str, Any]], list[Any]]  # the items of one page


def _put(project: Project, writes: list[Write]) -> None:
    store = open_store(str(project.db))
    try:
        store.put_many(writes)
    finally:
        store.close()


def _intent(i: int) -> dict[str, Any]:
    return {"intent": {"version": 1, "brief": f"Ship part {i}", "user_reference": f"issue {i}",
                       "requirements": [{"id": "R1", "text": f"Part {i} works",
                                         "acceptance": "its test passes"}],
                       "boundaries": [], "non_goals": []}}


def _ids(field: str) -> Callable[[dict[str, Any]], list[Any]]:
    return lambda page: [row["id"] for row in page[field]]


def _saved(page: dict[str, Any]) -> list[Any]:
    """Every candidate a saved-context page examined: its items and its unavailable lines."""
    return [row["id"] for row in page["items"]] + [row["id"] for row in page["unavailable"]]


def _find(project: Project, run: Run) -> Case:
    # 130 matching records, one private to someone else (never listed nor
    # counted) and one of another kind.
    writes = [Write(id=f"item:r{i:04d}", data={"n": i}, scope="project:demo") for i in range(130)]
    writes.append(Write(id="item:r0050x", data={"n": "hidden"}, scope="project:demo",
                        audience="private:mallory"))
    writes.append(Write(id="other:r0001", data={"n": 1}, scope="project:demo"))
    _put(project, writes)
    return Case({"kind": "item"}, "records", [f"item:r{i:04d}" for i in range(130)],
                _ids("records"))


def _intents(project: Project, count: int) -> list[str]:
    ids = [f"knowledge:i{i:03d}" for i in range(count)]
    _put(project, [Write(id=i, data=_intent(n), scope="project:demo") for n, i in enumerate(ids)])
    return ids


def _work_status(project: Project, run: Run) -> Case:
    return Case({}, "intents", _intents(project, 27), _ids("intents"))


def _work_attention(project: Project, run: Run) -> Case:
    return Case({}, "intents", _intents(project, 27), _ids("intents"))


def _work_history(project: Project, run: Run) -> Case:
    store = open_store(str(project.db))
    try:
        for revision in range(27):
            store.put(Write(id="knowledge:i", data=_intent(revision), scope="project:demo",
                            expect_revision=revision))
    finally:
        store.close()
    return Case({"id": "knowledge:i"}, "versions", list(range(1, 28)),
                lambda page: [row["revision"] for row in page["versions"]])


def _add(run: Run, operation: str, count: int, text: str) -> list[str]:
    return [run(operation, {"text": text.format(i=i)})["receipt"]["id"] for i in range(count)]


def _legacy(project: Project, record_id: str) -> str:
    """A record in a saved-context kind written by put: listed as an unavailable line."""
    _put(project, [Write(id=record_id, data={"version": 1, "text": "legacy", "author": "x"},
                         scope="project:demo")])
    return record_id


def _note_list(project: Project, run: Run) -> Case:
    ids = _add(run, "note.add", 104, "note {i}") + [_legacy(project, "note:n-legacy")]
    return Case({}, "notes", ids, _saved)


def _memory_list(project: Project, run: Run) -> Case:
    ids = _add(run, "memory.add", 104, "memory {i}") + [_legacy(project, "memory:m-legacy")]
    return Case({}, "entries", ids, _saved)


def _memory_search(project: Project, run: Run) -> Case:
    # Ranks differ (1 to 3 hits), so the rank cursor crosses rank boundaries.
    ids = _add(run, "memory.add", 27, "export " * 3 + "{i}")
    ids += _add(run, "memory.add", 9, "export export note {i}")
    ids += _add(run, "memory.add", 9, "export once {i}")
    _add(run, "memory.add", 5, "unrelated {i}")
    return Case({"query": ["export"]}, "entries", ids, _saved)


def _pending_list(project: Project, run: Run) -> Case:
    ids = _add(run, "pending.ask", 104, "question {i}?") + [_legacy(project, "pending:q-legacy")]
    return Case({}, "decisions", ids, _saved)


BUILDERS: dict[str, Callable[[Project, Run], Case]] = {
    "find": _find,
    "work.status": _work_status,
    "work.history": _work_history,
    "work.attention": _work_attention,
    "note.list": _note_list,
    "memory.search": _memory_search,
    "memory.list": _memory_list,
    "pending.list": _pending_list,
}

# Paged reads whose must-show test lives beside their capability's other tests
# (each module runs on both backends through the `ledger_url` fixture).
ELSEWHERE = {
    "get": "ledger/test_ledger_read_bounds.py::"
           "test_get_history_pages_newest_first_and_recovers_every_version",
    "evidence.list": "evidence/test_evidence_bounds.py::"
                     "test_evidence_list_pages_by_id_and_recovers_every_record",
    "evidence.show": "evidence/test_evidence_bounds.py::"
                     "test_evidence_show_bounds_each_tail_on_a_character",
    "goal.read": "context/test_context_bounds.py::"
                 "test_goal_read_pages_cover_the_file_exactly",
    "todo.list": "context/test_context_bounds.py::"
                 "test_todo_list_default_page_is_bounded_and_recovers_everything",
    "work.context": "context/test_context_bounds.py::"
                    "test_work_context_bounds_user_obligations_and_names_the_rest",
    "loop.audit": "loop/test_loop_bounds.py::"
                  "test_loop_audit_pages_by_round_and_recovers_every_item",
    "loop.replay": "loop/test_loop_bounds.py::"
                   "test_loop_replay_all_pages_by_round_and_recovers_every_prompt",
}

PAGED = sorted(op.name for op in operations() if not op.writes and op.bounds is not None
               and not op.bounds.whole)


def test_every_paged_read_has_a_must_show_case() -> None:
    """Each paged read has a builder here or a named both-backend test elsewhere, not both."""
    assert sorted([*BUILDERS, *ELSEWHERE]) == PAGED
    for name, where in ELSEWHERE.items():
        path, _, function = where.partition("::")
        module = TESTS / path
        tree = ast.parse(module.read_text("utf-8"))
        assert function in {node.name for node in tree.body
                            if isinstance(node, ast.FunctionDef)}, (name, where)
        # Its project fixture is parametrized over both backends.
        conftest = module.parent / "conftest.py"
        fixtures = module.read_text("utf-8") + (conftest.read_text("utf-8")
                                                if conftest.exists() else "")
        assert "ledger_url: str" in fixtures, (name, where)


@pytest.fixture
def proj(tmp_path: Path, ledger_url: str) -> Project:
    """A project on each backend."""
    return make_project(tmp_path / "proj", db=ledger_url)


def _cli(project: Project, read: dict[str, Any]) -> dict[str, Any]:
    out = project.ok(*read["read_args"])  # JSON on a pipe
    assert out["ok"] is True
    return dict(out["data"])


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_paged_read_is_bounded_counted_and_recovered(name: str, proj: Project) -> None:
    """On more items than the default bound: the first page keeps the bound, every page counts
    exactly what is still unread, and the recovering reads (registry and CLI) return every
    item exactly once."""
    run = runner(proj.root, proj.db)
    case = BUILDERS[name](proj, run)
    bound = lookup(name).bounds
    assert bound is not None and bound.items is not None
    assert len(case.expected) > bound.items
    first = run(name, case.arguments)
    assert len(case.keys(first)) <= bound.items
    if bound.bytes is not None:
        assert size(first) <= bound.bytes
    assert first["truncated"] is True
    pages = follow(run, first)
    seen: list[Any] = []
    for page in pages:
        seen += case.keys(page)
        assert page["omitted"] == {case.kind: len(case.expected) - len(seen)}, len(seen)
        assert page["more"] is page["truncated"]
        if "omitted_count" in page:
            assert page["omitted_count"] == page["omitted"][case.kind]
    exactly_once(seen, case.expected)
    assert pages[-1]["complete"] is True and pages[-1]["read_more"] == []
    for page, later in itertools.pairwise(pages):
        (read,) = page["read_more"]
        through_cli = _cli(proj, read)
        assert case.keys(through_cli) == case.keys(later)
        assert through_cli["omitted"] == later["omitted"]
        assert through_cli["read_more"] == later["read_more"]
