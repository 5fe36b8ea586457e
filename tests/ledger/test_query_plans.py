"""The reads agents make on every call use an index on both backends: none scans the ledger.

Each operation below runs in process against a real project whose ledger
holds thousands of unrelated records; every statement its ledger reads issue
is recorded, then explained on the same ledger (SQLite ``EXPLAIN QUERY
PLAN``; PostgreSQL ``EXPLAIN`` after ``ANALYZE``, with enough rows that a
scan would cost the planner more than the index). A plan that reads a ledger
table whole fails the test.
"""

from __future__ import annotations

import json
import re
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parents[1]
for folder in ("gate", "context"):
    if str(TESTS / folder) not in sys.path:
        sys.path.insert(0, str(TESTS / folder))

from context_docs import EXPLICIT
from gate_helpers import gate_project, op, payload, prove, record_intent, stop

from assay.ledger import Link, Write, open_store
from assay.ledger.record import INDEX_TABLES
from assay.ledger.sql import SqlReader
from assay_testing import fresh_pg_url

SCOPE = "project:demo"
LEDGER_TABLES = ("record_versions", *INDEX_TABLES)
# Unrelated records of every kind the agent-path reads look at, with values of
# the indexed fields that no read asks for.
FILLER_PER_KIND = {"sqlite": 1_000, "postgres": 4_000}
FILLER_KINDS = ("todo", "knowledge", "decision-event", "gate-session", "loop", "note")


def _filler(kind: str, n: int) -> Write:
    data: dict[str, Any] = {"n": n, "text": f"unrelated {kind} {n}"}
    if kind == "todo":
        data["goal_id"] = f"other-goal-{n % 50}"
    elif kind == "knowledge":
        data["context_role"] = "reference" if n % 2 else "background"
    elif kind == "decision-event":
        data["key"] = f"other-key-{n % 100}"
    elif kind == "loop":
        data["schema"] = "something-else/v1"
    # Links to other records, so the link index is as large as a busy ledger's.
    links = (Link("relates-to", f"knowledge:filler-{n % 500:06d}"),)
    return Write(id=f"{kind}:filler-{n:06d}", data=data, scope=SCOPE, links=links)


@pytest.fixture(scope="module",
                params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def ledger_url(request: pytest.FixtureRequest,
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One ledger per backend for the whole module (filling it is most of the module's cost)."""
    if request.param == "sqlite":
        yield str(tmp_path_factory.mktemp("plans") / "ledger.db")
        return
    with fresh_pg_url() as url:
        yield url


@pytest.fixture(scope="module")
def busy(tmp_path_factory: pytest.TempPathFactory, ledger_url: str) -> Any:
    """A gated git project with an intent proven ready, a goal with todos, a loop and a note,
    in a ledger that also holds thousands of unrelated records. The reads below only add
    to it (a stop, a round, a note), never what another read looks for."""
    root = tmp_path_factory.mktemp("plans") / "proj"
    extra = '\n[goals.parser]\npath = "goals/parser.md"\n'
    project = gate_project(root, ledger_url, extra=extra)
    (root / "goals").mkdir()
    (root / "goals" / "parser.md").write_text(EXPLICIT, encoding="utf-8")
    record_intent(project, requirements=2)
    prove(project)
    for name in ("parse", "schema"):
        op(project, "todo.add", goal_id="parser", text=f"todo {name}", todo_id=name)
    op(project, "put", id="knowledge:orientation", data=json.dumps(
        {"context_role": "orientation", "text": "read this first"}))
    started = op(project, "loop.start", task="fix the export", loop="lp-export",
                 criterion=["tests pass"])
    project.handle = json.dumps(started["submissionHandle"])  # type: ignore[attr-defined]
    op(project, "note.add", text="the export keeps commas")
    op(project, "memory.add", text="the export writes bilby rows", audience="project")
    op(project, "decision.record", key="export-format", choice="csv", reason="reviewers read csv")
    backend = "postgres" if ledger_url.startswith("postgres") else "sqlite"
    store = open_store(ledger_url)
    try:
        count = FILLER_PER_KIND[backend]
        for kind in FILLER_KINDS:
            for start in range(0, count, 1000):
                store.put_many([_filler(kind, n) for n in range(start, start + 1000)])
        store.put_many([_filler("todo", n) for n in range(1000)])  # second versions
    finally:
        store.close()
    _analyze(ledger_url)
    return project


def _analyze(url: str) -> None:
    if url.startswith("postgres"):
        with _pg(url) as conn:
            conn.execute("ANALYZE")
    else:
        conn = sqlite3.connect(url)
        try:
            conn.execute("ANALYZE")
        finally:
            conn.close()


@contextmanager
def _pg(url: str) -> Iterator[Any]:
    import psycopg

    schema = url.rpartition("assay_schema=")[2]
    with psycopg.connect(url.partition("?")[0], autocommit=True) as conn:
        conn.execute(f"SET search_path TO {schema}")
        yield conn


@contextmanager
def recorded(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, tuple[Any, ...]]]]:
    """Every statement a ledger reader issues meanwhile, as sent (with its parameters)."""
    statements: list[tuple[str, tuple[Any, ...]]] = []
    original = SqlReader._execute

    def execute(self: SqlReader, sql: str, params: Any) -> None:
        statements.append((self._ledger.sql(sql), tuple(params)))
        original(self, sql, params)

    monkeypatch.setattr(SqlReader, "_execute", execute)
    yield statements
    monkeypatch.setattr(SqlReader, "_execute", original)


_SQLITE_SCAN = re.compile(r"^SCAN (\w+)")


def _sqlite_scans(url: str, statements: list[tuple[str, tuple[Any, ...]]]) -> list[str]:
    conn = sqlite3.connect(url)
    try:
        aliases = {"v", "x", "y", "k", "l", *LEDGER_TABLES}
        bad = []
        for sql, params in statements:
            for row in conn.execute("EXPLAIN QUERY PLAN " + sql, params):
                found = _SQLITE_SCAN.match(row[3])
                if found and found.group(1) in aliases:
                    bad.append(f"{row[3]}  <-  {sql} {params}")
        return bad
    finally:
        conn.close()


def _pg_nodes(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield plan
    for child in plan.get("Plans", ()):
        yield from _pg_nodes(child)


def _pg_scans(url: str, statements: list[tuple[str, tuple[Any, ...]]]) -> list[str]:
    bad = []
    with _pg(url) as conn:
        # The leading column of each index: a condition on a later column alone
        # still walks the whole index.
        leading = dict(conn.execute(
            "SELECT c.relname, a.attname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0] "
            "WHERE i.indrelid::regclass::text = ANY(%s)", (list(LEDGER_TABLES),)).fetchall())
        for sql, params in statements:
            plan = conn.execute("EXPLAIN (FORMAT JSON) " + sql, params).fetchone()[0][0]["Plan"]
            for node in _pg_nodes(plan):
                if node.get("Relation Name") not in LEDGER_TABLES:
                    continue
                if node["Node Type"] == "Seq Scan":
                    bad.append(f"Seq Scan on {node['Relation Name']}  <-  {sql} {params}")
                # An index walked whole (no condition bounds it) is a scan too,
                # except the ledger's head: the highest key, read backward.
                elif "Index" in node["Node Type"] and node.get("Scan Direction") != "Backward":
                    lead = leading[node["Index Name"]]
                    if not re.search(rf"\b{lead} (=|>=|>|<=|<) ", node.get("Index Cond", "")):
                        bad.append(f"{node['Node Type']} of {node['Index Name']} without a "
                                   f"condition on {lead}  <-  {sql} {params}")
    return bad


def _scans(url: str, statements: list[tuple[str, tuple[Any, ...]]]) -> list[str]:
    if url.startswith("postgres"):
        return _pg_scans(url, statements)
    return _sqlite_scans(url, statements)


READS: dict[str, Any] = {
    "work.check": lambda p: op(p, "work.check", id="knowledge:export"),
    "work.status": lambda p: op(p, "work.status"),
    "work.context": lambda p: op(p, "work.context", goal_id="parser"),
    "todo.list": lambda p: op(p, "todo.list", goal_id="parser"),
    "loop.status": lambda p: op(p, "loop.status", loop="lp-export"),
    "note.list": lambda p: op(p, "note.list"),
    "memory.list": lambda p: op(p, "memory.list"),
    "memory.search": lambda p: op(p, "memory.search", query="bilby"),
    "work.resume": lambda p: op(p, "work.resume", id="knowledge:export"),
    "decision.show": lambda p: op(p, "decision.show", key="export-format"),
    "hook.stop": lambda p: stop(p, payload("claude-code", "stop", p)),
    "loop.next": lambda p: op(p, "loop.next", handle=p.handle, evaluation={
        "outcome": "partial", "output_summary": "round work", "constraint_violations": [],
        "should_continue": True}),
}


@pytest.mark.parametrize("read", sorted(READS))
def test_agent_path_read_uses_an_index(busy: Any, ledger_url: str, read: str,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The read's every ledger statement is answered through an index, never a scan."""
    with recorded(monkeypatch) as statements:
        READS[read](busy)
    assert statements, f"{read} issued no ledger read"
    assert _scans(ledger_url, statements) == []


def test_plan_check_catches_a_text_search(busy: Any, ledger_url: str,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The check itself fails a read that scans the data text (so it can fail): a query too
    short for the text index."""
    store = open_store(ledger_url)
    try:
        with recorded(monkeypatch) as statements, store.reader() as r:
            r.find(query='"c', limit=10)
    finally:
        store.close()
    assert _scans(ledger_url, statements) != []


def _plan_text(url: str, statements: list[tuple[str, tuple[Any, ...]]]) -> str:
    """Every statement's plan, as one text (SQLite's plan rows, PostgreSQL's JSON)."""
    if url.startswith("postgres"):
        with _pg(url) as conn:
            return "\n".join(json.dumps(conn.execute("EXPLAIN (FORMAT JSON) " + sql,
                                                      params).fetchone()[0])
                             for sql, params in statements)
    conn = sqlite3.connect(url)
    try:
        return "\n".join(row[3] for sql, params in statements
                         for row in conn.execute("EXPLAIN QUERY PLAN " + sql, params))
    finally:
        conn.close()


def test_find_of_a_rare_term_reads_the_text_index(busy: Any, ledger_url: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A rare term's find and count read the text index (SQLite's FTS5 table, PostgreSQL's
    trigram GIN index), never the ledger whole."""
    store = open_store(ledger_url)
    try:
        store.put(Write(id="note:rare", data={"text": "a Quokka"}, scope=SCOPE))
    finally:
        store.close()
    _analyze(ledger_url)
    store = open_store(ledger_url)
    try:
        with recorded(monkeypatch) as statements, store.reader() as r:
            assert [x.id for x in r.find(query="QUOKKA", limit=10)] == ["note:rare"]
            assert r.find_count(query="quokka", at_most=10_001) == 1
    finally:
        store.close()
    assert _scans(ledger_url, statements) == []
    plans = _plan_text(ledger_url, statements)
    if ledger_url.startswith("postgres"):
        assert "record_versions_data_text" in plans and "record_versions_id_text" in plans
    else:
        assert "SCAN record_text VIRTUAL TABLE" in plans
        assert "SEARCH v USING INTEGER PRIMARY KEY" in plans
