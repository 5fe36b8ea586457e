"""Schema 7: find's text index answers exactly as the scan it stands in for, on both backends.

The scan is the fallback path (a short query, a ledger without the index),
so each test compares the two on the same ledger: a reader with
``text_index`` switched off reads every current record, as find did before
the index. The migration from schema 6 is held to what the previous release
answered; a PostgreSQL server where ``pg_trgm`` cannot be created is made
for real (a database of its own, a role without the privilege).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay.errors import AssayError
from assay.ids import validate_record_id
from assay.ledger import Write, open_store
from assay.ledger.store import SCHEMA_VERSION
from assay_testing import PG_URL, data, examples, make_project, package_at, pg_server_alone
from pg_roles_testing import login_roles, owner_sql, role_url

SCOPE = "project:demo"
# The last commit whose ledgers are at schema 6 (before the text index).
RELEASE = "3ca8267d4b5e2aa485c2d07ed43126a4d890e036"

# Upper and lower case, non-ASCII case (Kelvin sign, long s, dotted and
# dotless i, sharp s), LIKE's wildcards and escape, FTS5's quote.
_CHARS = st.sampled_from(list('aAbBkKzZ%_\\" :-éÉßİıſ0') + ["\u212a", "\u1e9e"])
_TEXT = st.text(_CHARS, max_size=10)
_NAME = st.text(st.sampled_from(list("aAbBéÉ%_\\-0")), min_size=1, max_size=4)


def _both(reader: Any, call: str, **filters: Any) -> Any:
    """``reader.<call>(**filters)`` through the text index, then through the scan (ids for find)."""
    answers = []
    for indexed in (True, False):
        reader.text_index = indexed
        found = getattr(reader, call)(**filters)
        answers.append([r.id for r in found] if call == "find" else found)
    reader.text_index = True
    return answers


def _assert_same(handle: Any, queries: list[str]) -> None:
    """Every find and count of every query answers the same through the index and the scan."""
    for query in queries:
        with handle.reader() as r:
            for filters in ({}, {"status": "current"}, {"kind": "knowledge"}):
                everything, scanned = _both(r, "find", query=query, limit=1000, **filters)
                assert everything == scanned, (query, filters)
                page = _both(r, "find", query=query, limit=2, **filters)
                assert page[0] == page[1] == everything[:2], (query, filters)
                if everything:
                    after = _both(r, "find", query=query, after=everything[0], **filters)
                    assert after[0] == after[1] == everything[1:], (query, filters)
                count = _both(r, "find_count", query=query, **filters)
                assert count == [len(everything)] * 2, (query, filters)
                bounded = _both(r, "find_count", query=query, at_most=1, **filters)
                assert bounded == [min(1, len(everything))] * 2, (query, filters)


def _valid(record_id: str) -> bool:
    try:
        validate_record_id(record_id)
    except AssayError:
        return False
    return True


_WRITE = st.tuples(_NAME.map(lambda n: f"knowledge:{n}").filter(_valid), _TEXT,
                   st.sampled_from(["current", "current", "retired"]),
                   st.sampled_from(["project", "project", "private:alice"]))


def _queries(texts: list[str], extra: list[str]) -> list[str]:
    """The generated queries, and pieces of the written texts in other cases (so some match)."""
    pieces = [t[1:5] for t in texts if len(t) > 2] + [t[:2].upper() for t in texts if t]
    return [q for q in dict.fromkeys([*extra, *pieces]) if q]


@settings(max_examples=examples(100), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(writes=st.lists(_WRITE, min_size=1, max_size=8),
       extra=st.lists(_TEXT.filter(bool), max_size=4))
def test_text_index_find_equals_the_scan_property(store: Any, writes: list[tuple[str, str, str, str]],
                                                  extra: list[str]) -> None:
    """For generated texts (mixed and non-ASCII case, %, _, backslash, quotes), versions,
    statuses and private records, find and find_count through the index equal the scan's."""
    for record_id, text, status, audience in writes:
        store.put(Write(id=record_id, scope=SCOPE, data={"t": text}, status=status,
                        audience=audience))
    queries = _queries([w[1] for w in writes] + [w[0] for w in writes], extra)
    _assert_same(store, queries)
    alice = store.as_principal("alice")
    try:
        _assert_same(alice, queries)
    finally:
        alice.close()


_DAMAGE = st.one_of(_TEXT, _TEXT.map(lambda t: t.encode("utf-8")), st.binary(max_size=8),
                    _TEXT.map(lambda t: "\x00" + t), _TEXT.map(lambda t: t.encode("latin-1", "replace")))


@settings(max_examples=examples(100), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(texts=st.lists(_TEXT, min_size=1, max_size=6),
       damage=st.lists(st.tuples(st.integers(0, 5), _DAMAGE, st.booleans()), max_size=4),
       extra=st.lists(_TEXT.filter(bool), max_size=3))
def test_text_index_follows_direct_edits_of_sqlite_rows(tmp_path_factory: pytest.TempPathFactory,
                                                         texts: list[str],
                                                         damage: list[tuple[int, Any, bool]],
                                                         extra: list[str]) -> None:
    """After rows are edited or deleted directly (NUL bytes, BLOBs, bytes not UTF-8), the index
    still matches the stored rows and find through it equals the scan."""
    path = tmp_path_factory.mktemp("t") / "ledger.db"
    store = open_store(path)
    try:
        store.put_many([Write(id=f"knowledge:r{i}", scope=SCOPE, data={"t": t})
                        for i, t in enumerate(texts)])
        conn = sqlite3.connect(path)
        with conn:
            for row, value, delete in damage:
                if delete:
                    conn.execute("DELETE FROM record_versions WHERE id = ?", (f"knowledge:r{row}",))
                else:
                    conn.execute("UPDATE record_versions SET data = ? WHERE id = ?",
                                 (value, f"knowledge:r{row}"))
            conn.execute("INSERT INTO record_text (record_text) VALUES ('integrity-check')")
        conn.close()
        needles = [v.decode("utf-8", "ignore") if isinstance(v, bytes) else v for _, v, _ in damage]
        _assert_same(store, _queries(texts + needles, extra))
    finally:
        store.close()


def test_text_index_follows_new_versions_and_status(store: Any) -> None:
    """A new version without the term leaves find; a retired one is found by its status only."""
    store.put(Write(id="knowledge:a", scope=SCOPE, data={"t": "a Quokka here"}))
    store.put(Write(id="knowledge:b", scope=SCOPE, data={"t": "quokkas"}))
    with store.reader() as r:
        assert [x.id for x in r.find(query="QUOKKA")] == ["knowledge:a", "knowledge:b"]
    store.put(Write(id="knowledge:a", scope=SCOPE, data={"t": "gone"}))
    store.put(Write(id="knowledge:b", scope=SCOPE, data={"t": "quokkas"}, status="retired"))
    with store.reader() as r:
        assert [x.id for x in r.find(query="quokka")] == ["knowledge:b"]
        assert [x.id for x in r.find(query="quokka", status="current")] == []
        assert [x.id for x in r.find(query="quokka", status="retired")] == ["knowledge:b"]
        assert r.find_count(query="uokk") == 1


# What the release writes, then the answers its find (a scan) gives, as JSON on stdout.
_WRITER = r"""
import json, sys
from assay.ledger import Write, open_store

url, queries = sys.argv[1], json.loads(sys.argv[2])
S = "project:demo"
store = open_store(url)
texts = ["Quokka in the LEDGER", "100% of_it", "back\\slash", "ÉTÉ été", "Straße", "KELVIN \u212a",
         '"quoted"', "ok"]
store.put_many([Write(id=f"knowledge:r{i}", data={"t": t}, scope=S) for i, t in enumerate(texts)])
store.put(Write(id="knowledge:r0", data={"t": "no more"}, scope=S))
store.put(Write(id="knowledge:r1", data={"t": "100% of_it"}, scope=S, status="retired"))
store.put(Write(id="note:QUOKKA", data={"t": "private quokka"}, scope=S, audience="private:alice"))
out = {}
alice = store.as_principal("alice")
for name, handle in (("project", store), ("alice", alice)):
    with handle.reader() as r:
        out[name] = {q: [x.id for x in r.find(query=q, limit=1000)] for q in queries}
alice.close()
store.close()
print(json.dumps(out))
"""
_QUERIES = ["quokka", "QUOKKA", "ledger", "0% o", "%", "_", "f_i", "\\", "k\\s", "été", "ÉTÉ", "é",
            "straße", "kelvin", "\u212a", '"quoted"', "ok", "o", "zzz"]


@pytest.fixture(scope="module")
def release_src(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package of the last schema-6 commit, checked out of this repository's history."""
    return package_at(RELEASE, tmp_path_factory)


def test_schema_6_ledger_migrates_and_find_answers_the_same(release_src: Path, ledger_url: str,
                                                            tmp_path: Path) -> None:
    """A schema-6 ledger opens at schema 7 with its text index built, and every find answers
    what the release's scan answered, for the project and for a principal."""
    if not ledger_url.startswith("postgres"):
        ledger_url = str(tmp_path / "release.db")
    env = {**os.environ, "PYTHONPATH": str(release_src)}
    done = subprocess.run([sys.executable, "-c", _WRITER, ledger_url, json.dumps(_QUERIES)],
                          capture_output=True, text=True, env=env, check=True)
    before = json.loads(done.stdout)
    store = open_store(ledger_url)
    alice = store.as_principal("alice")
    try:
        assert store.info().schema_version == SCHEMA_VERSION == 7
        for name, handle in (("project", store), ("alice", alice)):
            with handle.reader() as r:
                assert r.text_index
                assert {q: [x.id for x in r.find(query=q, limit=1000)]
                        for q in _QUERIES} == before[name], name
            _assert_same(handle, _QUERIES)
    finally:
        alice.close()
        store.close()
    assert before["alice"]["quokka"] == ["note:QUOKKA"]
    if not ledger_url.startswith("postgres"):
        conn = sqlite3.connect(ledger_url)
        with conn:
            conn.execute("INSERT INTO record_text (record_text) VALUES ('integrity-check')")
        conn.close()


@pytest.mark.postgres
def test_text_index_unavailable_without_pg_trgm(pg_url: str, tmp_path: Path) -> None:
    """Where pg_trgm cannot be created (no CREATE privilege on the database), the ledger opens
    and works, find scans and says text_index_unavailable once; after an administrator
    installs the extension, the owner's next open builds the index."""
    import psycopg

    assert PG_URL
    database = "t_trgm_" + uuid.uuid4().hex[:12]
    base = PG_URL.split("?")[0].rsplit("/", 1)[0] + "/" + database
    with pg_server_alone(), login_roles("owner") as roles:
        role = roles["owner"]
        owner_sql(f"CREATE DATABASE {database}")
        try:
            with psycopg.connect(base, autocommit=True) as conn:
                # The schema an administrator gives the role: it may create
                # tables in it, and nothing in the database.
                conn.execute(f"CREATE SCHEMA ledger AUTHORIZATION {role}")
            url = role_url(base, role) + "?assay_schema=ledger"
            project = make_project(tmp_path / "p", db=url)
            store = open_store(url)
            try:
                assert store.text_index is False
                assert store.info().schema_version == SCHEMA_VERSION
            finally:
                store.close()
            data(project, "put", id="knowledge:a", data=json.dumps({"t": "a Quokka"}))
            data(project, "put", id="knowledge:b", data=json.dumps({"t": "nothing"}))
            found = data(project, "find", query="QUOKKA")
            assert [r["id"] for r in found["records"]] == ["knowledge:a"]
            assert [a["code"] for a in found["advisories"]] == ["text_index_unavailable"]
            assert found["advisories"][0]["advisory"] is True
            assert "advisories" not in data(project, "find", kind="knowledge")
            with psycopg.connect(base, autocommit=True) as conn:
                conn.execute("CREATE EXTENSION pg_trgm")
            store = open_store(url)
            try:
                assert store.text_index is True
            finally:
                store.close()
            found = data(project, "find", query="QUOKKA")
            assert [r["id"] for r in found["records"]] == ["knowledge:a"]
            assert "advisories" not in found
        finally:
            owner_sql(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")


@pytest.mark.postgres
def test_text_index_serves_a_role_under_row_level_security(pg_url: str) -> None:
    """A role other than the owner finds a rare term through the trigram indexes (by the
    server's assay_text_candidates), sees only its partitions, and a role without access
    learns nothing from the function."""
    from assay.ledger.sql import SqlReader, like_pattern

    owner = open_store(pg_url)
    with login_roles("agent", "other", "stranger") as roles:
        try:
            for name in ("agent", "other"):
                owner.grant(roles[name], "agent")
            owner.put_many([Write(id=f"knowledge:r{i}", scope=SCOPE, data={"t": f"entry {i}"})
                            for i in range(50)])
            owner.put_many([
                Write(id="knowledge:a", scope=SCOPE, data={"t": "a Quokka"}),
                Write(id="knowledge:mine", scope=SCOPE, data={"t": "quokka"},
                      audience=f"private:{roles['agent']}"),
                Write(id="knowledge:theirs", scope=SCOPE, data={"t": "quokka"},
                      audience=f"private:{roles['other']}")])
            agent = open_store(role_url(pg_url, roles["agent"]), principal=roles["agent"])
            calls: list[str] = []
            original = SqlReader._execute

            def execute(self: SqlReader, sql: str, params: Any) -> None:
                calls.append(sql)
                original(self, sql, params)

            try:
                SqlReader._execute = execute  # type: ignore[method-assign]
                with agent.reader() as r:
                    assert [x.id for x in r.find(query="QUOKKA")] == ["knowledge:a",
                                                                      "knowledge:mine"]
            finally:
                SqlReader._execute = original  # type: ignore[method-assign]
                agent.close()
            assert any("assay_text_candidates" in sql for sql in calls)
            agent = open_store(role_url(pg_url, roles["agent"]), principal=roles["agent"])
            try:
                _assert_same(agent, ["quokka", "entry 1", "ry 4"])
            finally:
                agent.close()
            import psycopg

            schema = pg_url.rpartition("assay_schema=")[2]
            stranger = role_url(pg_url.partition("?")[0], roles["stranger"])
            owner_sql(f"GRANT USAGE ON SCHEMA {schema} TO {roles['stranger']}")
            try:
                with psycopg.connect(stranger, autocommit=True) as conn:
                    rows = conn.execute(f"SELECT {schema}.assay_text_candidates(%s, 10)",
                                        (like_pattern("quokka"),)).fetchall()
            finally:
                owner_sql(f"REVOKE USAGE ON SCHEMA {schema} FROM {roles['stranger']}")
            assert rows == []
        finally:
            owner.close()
