"""Tamper evidence: every version is sealed and chained, on both backends.

Each test edits stored rows directly in the database (the SQLite file or the
PostgreSQL schema), as an agent with the ledger's credentials could, then
reads through the store, ``assay ledger verify`` or the migration.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.canonical import canonical_text, digest_bytes
from assay.ledger import Link, SourceRef, Write, open_store
from assay.ledger.record import (
    CHAIN_GENESIS,
    SEALED_FIELDS,
    RecordUnreadable,
    chain_digest,
    version_digest,
)
from assay.ledger.store import SCHEMA_VERSION
from assay_testing import PG_URL, Project, examples, ledger_sql, make_project

SCOPE = "project:demo"
V3 = Path(__file__).parent.parent / "fixtures" / "ledger_v3"


def w(record_id: str, data: Any = None, **kw: Any) -> Write:
    return Write(id=record_id, data={"v": 1} if data is None else data, scope=SCOPE, **kw)


def raw(store: Any, statement: str, params: tuple[Any, ...] = ()) -> list[Any]:
    """Run one statement directly on the store's tables (``?`` placeholders on both backends)."""
    with store._write_transaction() as cur:
        cur.execute(store.sql(statement), params)
        return list(cur.fetchall()) if cur.description else []


def three_versions(store: Any) -> None:
    """knowledge:b at ledger revision 1, knowledge:a (every field set) at 2, knowledge:c at 3."""
    store.put(w("knowledge:b"))
    store.put(w("knowledge:a", data={"result": "passed"}, links=(Link("requires", "knowledge:b"),),
                sources=(SourceRef("knowledge:b", 1, "ab" * 32),), request_id="r-1",
                origin="machine"))
    store.put(w("knowledge:c"))


# Each sealed column, a value an edit gives it, and the id (and principal) that reads it then.
EDITS: list[tuple[str, str, Any, str, str | None]] = [
    ("id", "id = ?", "knowledge:z", "knowledge:z", None),
    ("kind", "kind = ?", "other", "knowledge:a", None),
    ("scope", "scope = ?", "project:other", "knowledge:a", None),
    ("revision", "revision = ?", 7, "knowledge:a", None),
    ("data_sha256", "data = ?, data_sha256 = ?", ('{"result":"failed"}',
                                                  digest_bytes(b'{"result":"failed"}')),
     "knowledge:a", None),
    ("status", "status = ?", "retired", "knowledge:a", None),
    ("superseded_by", "superseded_by = ?", "knowledge:c", "knowledge:a", None),
    ("links", "links = ?", "[]", "knowledge:a", None),
    ("audience", "audience = ?", "private:alice", "knowledge:a", "alice"),
    ("sources", "sources = ?", "[]", "knowledge:a", None),
    ("created_at", "created_at = ?", "2020-01-01T00:00:00.000Z", "knowledge:a", None),
    ("ledger_revision", "ledger_revision = ?", 99, "knowledge:a", None),
    ("request_id", "request_id = ?", "forged", "knowledge:a", None),
    ("origin", "origin = ?", "claim", "knowledge:a", None),
]


def test_tamper_edits_cover_every_sealed_field() -> None:
    """The edits below change every field the seal covers, each once."""
    assert sorted(edit[0] for edit in EDITS) == sorted(SEALED_FIELDS)


@pytest.mark.parametrize(("column", "sets", "value", "read_id", "principal"), EDITS,
                         ids=[edit[0] for edit in EDITS])
def test_tamper_direct_edit_of_a_sealed_column_is_unreadable(
        ledger_url: str, column: str, sets: str, value: Any, read_id: str,
        principal: str | None) -> None:
    """A direct SQL UPDATE of any sealed column makes that version unreadable (version_digest_mismatch) and breaks the chain there."""
    store = open_store(ledger_url)
    try:
        three_versions(store)
        params = value if isinstance(value, tuple) else (value,)
        raw(store, f"UPDATE record_versions SET {sets} WHERE ledger_revision = 2", params)
        reader_store = store.as_principal(principal) if principal else store
        with reader_store.reader() as r:
            record = r.get(read_id)
        if principal:
            reader_store.close()
        assert record is not None and record.damage is not None
        assert record.damage.reason == "version_digest_mismatch"
        with pytest.raises(RecordUnreadable) as caught:
            record.data  # noqa: B018
        assert caught.value.code == "record_unreadable"
        broken = store.walk_chain().broken
        assert broken is not None
        expected = ("version_missing" if column == "ledger_revision"
                    else "version_digest_mismatch")
        assert (broken.ledger_revision, broken.reason) == (2, expected)
    finally:
        store.close()


def test_tamper_intact_ledger_walks_to_its_head(store: Any) -> None:
    """An untouched ledger walks whole; the chain head is the recomputed chain of every seal."""
    three_versions(store)
    store.put_many([w("knowledge:d"), w("knowledge:e", audience="private:bob")])
    walk = store.walk_chain()
    assert (walk.broken, walk.ledger_revision, walk.versions) == (None, 5, 5)
    rows = raw(store, "SELECT version_sha256, chain_sha256 FROM record_versions "
                      "ORDER BY ledger_revision")
    chain = CHAIN_GENESIS
    for sealed, stored_chain in rows:
        chain = chain_digest(chain, sealed)
        assert stored_chain == chain
    assert walk.chain_sha256 == chain
    assert store.walk_chain(upto=2).ledger_revision == 2


def test_tamper_resealed_edit_breaks_the_chain(store: Any) -> None:
    """An edit resealed with a recomputed version_sha256 reads as intact but breaks the chain at that revision."""
    three_versions(store)
    row = raw(store, "SELECT id, kind, scope, revision, data_sha256, status, superseded_by, links, "
                     "audience, sources, created_at, ledger_revision, request_id, origin "
                     "FROM record_versions WHERE ledger_revision = 2")[0]
    fields = dict(zip(("id", "kind", "scope", "revision", "data_sha256", "status",
                       "superseded_by", "links", "audience", "sources", "created_at",
                       "ledger_revision", "request_id", "origin"), row))
    fields["status"] = "retired"
    raw(store, "UPDATE record_versions SET status = 'retired', version_sha256 = ? "
               "WHERE ledger_revision = 2", (version_digest(fields),))
    with store.reader() as r:
        record = r.get("knowledge:a")
    assert record is not None and record.status == "retired" and record.damage is None
    broken = store.walk_chain().broken
    assert broken is not None and (broken.ledger_revision, broken.reason) == (2, "chain_mismatch")


def test_tamper_deleted_version_is_a_gap(store: Any) -> None:
    """A version deleted from the middle is found as the missing ledger revision."""
    three_versions(store)
    raw(store, "DELETE FROM record_versions WHERE ledger_revision = 2")
    broken = store.walk_chain().broken
    assert broken is not None and (broken.ledger_revision, broken.reason, broken.id) == (
        2, "version_missing", None)


def test_tamper_edited_data_is_found_by_the_walk(store: Any) -> None:
    """Data edited in place (its digest left alone) is a data_digest_mismatch at that revision."""
    three_versions(store)
    raw(store, "UPDATE record_versions SET data = ? WHERE ledger_revision = 3", ('{"v":2}',))
    broken = store.walk_chain().broken
    assert broken is not None and (broken.ledger_revision, broken.reason) == (
        3, "data_digest_mismatch")


# Strings that exercise JSON escaping: quotes, backslashes, every short escape,
# other control characters, DEL, non-ASCII and astral characters.
_TRICKY = st.text(alphabet=st.sampled_from(
    ['"', "\\", "\b", "\f", "\n", "\r", "\t", "\x01", "\x1f", "\x7f", "/", "a", "é",
     "\u2028", "\U0001f600", " "]), max_size=12)


@settings(max_examples=examples(60), deadline=None)
@given(values=st.lists(_TRICKY, min_size=4, max_size=4),
       revision=st.integers(1, 2**53 - 1), nullable=st.booleans())
def test_tamper_seal_text_is_rfc8785(values: list[str], revision: int, nullable: bool) -> None:
    """The seal's fast text is RFC 8785's canonical text of the same object, byte for byte."""
    fields: dict[str, Any] = dict.fromkeys(SEALED_FIELDS, "x")
    fields.update(id=values[0], links=values[1], sources=values[2], scope=values[3],
                  revision=revision, ledger_revision=revision + 1,
                  superseded_by=None if nullable else values[0],
                  request_id=None if nullable else values[1])
    assert version_digest(fields) == digest_bytes(canonical_text(fields).encode("utf-8"))


@pytest.mark.postgres
@settings(max_examples=examples(60), deadline=None)
@given(values=st.lists(_TRICKY.filter(lambda s: "\x00" not in s), min_size=4, max_size=4),
       revision=st.integers(1, 2**53 - 1), nullable=st.booleans())
def test_tamper_server_seals_as_the_client_does(values: list[str], revision: int,
                                                nullable: bool) -> None:
    """PostgreSQL's assay_version_digest gives the client's seal for the same fields, escapes included."""
    if not PG_URL:
        pytest.skip("set ASSAY_TEST_POSTGRES_URL")
    fields: dict[str, Any] = dict.fromkeys(SEALED_FIELDS, "x")
    fields.update(id=values[0], links=values[1], sources=values[2], scope=values[3],
                  revision=revision, ledger_revision=revision + 1,
                  superseded_by=None if nullable else values[0],
                  request_id=None if nullable else values[1])
    server = _server_digest(fields)
    assert server == version_digest(fields)


_FUNCTIONS_SCHEMA: list[str] = []


def _server_digest(fields: dict[str, Any]) -> str:
    """Call the server's seal function, installed once per test run in a schema of its own."""
    import psycopg

    from assay.ledger.sqlite import _statements

    assert PG_URL
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        if not _FUNCTIONS_SCHEMA:
            schema = "t_" + uuid.uuid4().hex[:16]
            conn.execute(f"CREATE SCHEMA {schema}")
            conn.execute(f"SET search_path TO {schema}")
            ddl = (Path(__file__).parents[2] / "src/assay/ledger").joinpath
            for statement in _statements(ddl("schema_postgres.sql").read_text()):
                conn.execute(statement)
            conn.execute(ddl("function_postgres.sql").read_text())
            _FUNCTIONS_SCHEMA.append(schema)
        conn.execute(f"SET search_path TO {_FUNCTIONS_SCHEMA[0]}")
        row = conn.execute(
            f"SELECT assay_version_digest({', '.join(['%s'] * len(SEALED_FIELDS))})",
            [fields[name] for name in SEALED_FIELDS]).fetchone()
    assert row is not None
    return str(row[0])


@pytest.fixture(scope="module", autouse=True)
def _drop_functions_schema() -> Any:
    yield
    if _FUNCTIONS_SCHEMA and PG_URL:
        import psycopg

        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {_FUNCTIONS_SCHEMA[0]} CASCADE")


# ---------------------------------------------------------------- a version 3 ledger migrated

# (id, data, audience, status, superseded_by, links, request_id) in write order.
V3_WRITES: list[tuple[str, Any, str, str, str | None, list[dict[str, str]], str | None]] = [
    ("knowledge:a", {"v": 1}, "project", "current", None, [], None),
    ("knowledge:b", {"text": 'é "quoted" \\ back\n'}, "project", "current", None,
     [{"rel": "requires", "target": "knowledge:a"}], "r-1"),
    ("knowledge:a", {"v": 2}, "private:alice", "current", None, [], None),
    ("knowledge:a", {"v": 3}, "project", "superseded", "knowledge:b", [], None),
]


def _v3_sqlite(path: Path) -> None:
    """A version 3 SQLite ledger, made with version 3's DDL and its writer's statements."""
    from assay.ledger.sqlite import _statements

    conn = sqlite3.connect(path, isolation_level=None)
    try:
        for statement in _statements((V3 / "schema_sqlite.sql").read_text()):
            conn.execute(statement)
        _v3_meta(conn.execute, "?")
        revisions: dict[tuple[str, str], int] = {}
        for record_id, data, audience, status, by, links, request_id in V3_WRITES:
            revision = revisions[(record_id, audience)] = revisions.get((record_id, audience),
                                                                        0) + 1
            text = canonical_text(data)
            conn.execute(
                "INSERT INTO record_versions (ledger_revision, id, revision, kind, scope, data, "
                "data_sha256, status, superseded_by, links, audience, sources, origin, "
                "created_at, request_id) VALUES (NULL, ?, ?, 'knowledge', ?, ?, ?, ?, ?, ?, ?, "
                "'[]', 'claim', '2026-01-02T03:04:05.678Z', ?)",
                (record_id, revision, SCOPE, text, digest_bytes(text.encode()), status, by,
                 canonical_text(links) if links else "[]", audience, request_id))
    finally:
        conn.close()


def _v3_meta(execute: Any, mark: str) -> None:
    for key, value in (("epoch", "e" * 32), ("created_at", "2026-01-02T03:04:05.678Z"),
                       ("schema_version", "3")):
        execute(f"INSERT INTO ledger_meta (key, value) VALUES ({mark}, {mark})", (key, value))


def _v3_postgres(schema: str) -> None:
    """A version 3 PostgreSQL ledger, made with version 3's DDL and its assay_put."""
    import psycopg

    from assay.ledger.sqlite import _statements

    assert PG_URL
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
        conn.execute(f"SET search_path TO {schema}")
        for statement in _statements((V3 / "schema_postgres.sql").read_text()):
            conn.execute(statement)
        conn.execute((V3 / "function_postgres.sql").read_text())
        _v3_meta(conn.execute, "%s")
        for record_id, data, audience, status, by, links, request_id in V3_WRITES:
            text = canonical_text(data)
            conn.execute(
                "SELECT * FROM assay_put(%s, 'knowledge', %s, %s, %s, %s, %s, %s, %s, '[]', "
                "'claim', %s, %s, NULL::bigint, '2026-01-02T03:04:05.678Z', NULL, NULL, "
                "0::bigint, '')",
                (record_id, SCOPE, text, digest_bytes(text.encode()), status, by,
                 canonical_text(links) if links else "[]", audience, request_id,
                 None if request_id is None else "body"))


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def v3_ledger(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of a version 3 ledger (four versions, one private, one linked), per backend."""
    if request.param == "sqlite":
        path = tmp_path / "v3.db"
        _v3_sqlite(path)
        return str(path)
    url = str(request.getfixturevalue("pg_url"))
    _v3_postgres(url.rpartition("assay_schema=")[2])
    return url


def test_tamper_version_3_ledger_is_sealed_and_chained_by_the_migration(v3_ledger: str) -> None:
    """A version 3 ledger opens migrated: every version sealed and chained as it stood, readable, and the next write continues the chain."""
    store = open_store(v3_ledger)
    alice = open_store(v3_ledger, principal="alice")
    try:
        assert store.info().schema_version == SCHEMA_VERSION
        walk = store.walk_chain()
        assert (walk.broken, walk.versions) == (None, 4)
        with store.reader() as r:
            assert [v.data for v in r.history("knowledge:a")] == [{"v": 1}, {"v": 3}]
            b = r.get("knowledge:b")
            assert b is not None and b.data == {"text": 'é "quoted" \\ back\n'}
        with alice.reader() as r:
            own = r.get("knowledge:a")
            assert own is not None and own.data == {"v": 2}
        assert store.put(w("knowledge:c")).ledger_revision == 5
        walk = store.walk_chain()
        assert (walk.broken, walk.versions) == (None, 5)
        raw(store, "UPDATE record_versions SET status = 'current' WHERE ledger_revision = 4")
        broken = store.walk_chain().broken
        assert broken is not None and (broken.ledger_revision, broken.reason) == (
            4, "version_digest_mismatch")
    finally:
        store.close()
        alice.close()


# ---------------------------------------------------------------- assay ledger verify


def _put(project: Project, record_id: str, *extra: str) -> None:
    project.ok("put", *extra, "--data-file", "-", "--", record_id, input=json.dumps({"v": 1}))


def test_tamper_ledger_verify_answers_ok_with_the_chain_head(any_project: Project) -> None:
    """ledger verify on an intact ledger answers ok, the revision walked and the chain head (exit 0)."""
    _put(any_project, "knowledge:a")
    _put(any_project, "knowledge:b")
    data = any_project.ok("ledger", "verify")["data"]
    assert (data["ok"], data["ledger_revision"], data["versions"]) == (True, 2, 2)
    assert len(data["chain_sha256"]) == 64


def test_tamper_ledger_verify_names_a_rewritten_version_in_the_middle(
        any_project: Project) -> None:
    """A version rewritten in the middle of the history is ledger_chain_broken (exit 1) naming its ledger revision and what is wrong."""
    for name in ("a", "b", "c"):
        _put(any_project, f"knowledge:{name}")
    ledger_sql(any_project, "UPDATE record_versions SET origin = 'machine' "
                            "WHERE ledger_revision = 2")
    result = any_project.run("ledger", "verify")
    assert (result.code, result.error["code"]) == (1, "ledger_chain_broken")
    assert {k: v for k, v in result.error["details"].items() if k != "message"} == {
        "ledger_revision": 2, "reason": "version_digest_mismatch", "id": "knowledge:b"}


def test_tamper_ledger_verify_names_another_principal_s_version_by_revision_only(
        tmp_path: Path, ledger_url: str) -> None:
    """A break in a version private to someone else is named by its ledger revision, never its id."""
    project = make_project(tmp_path / "proj", db=ledger_url)
    _put(project, "knowledge:a")
    _put(project, "note:secret", "--as", "bob", "--audience", "private:bob")
    ledger_sql(project, "UPDATE record_versions SET status = 'retired' WHERE ledger_revision = 2")
    result = project.run("ledger", "verify")
    assert (result.code, result.error["code"]) == (1, "ledger_chain_broken")
    assert result.error["details"]["ledger_revision"] == 2
    assert "id" not in result.error["details"] and "secret" not in result.stderr
    bob = project.run("ledger", "verify", "--as", "bob")
    assert bob.error["details"]["id"] == "note:secret"


@pytest.fixture
def anyio_backend() -> str:
    """The MCP server runs on asyncio."""
    return "asyncio"


@pytest.mark.anyio
async def test_tamper_ledger_verify_over_mcp_in_the_agent_profile(any_project: Project) -> None:
    """The agent's MCP profile offers ledger_verify; it answers ok, then the coded break, as the CLI does."""
    from mcp import Client

    from assay.mcp.server import build_server

    _put(any_project, "knowledge:a")
    _put(any_project, "knowledge:b")

    async def call() -> tuple[bool, dict[str, Any]]:
        async with Client(build_server(cwd=str(any_project.root), db=any_project.db)) as client:
            result = await client.call_tool("ledger_verify", {})
        assert result.structured_content is not None
        return bool(result.is_error), dict(result.structured_content)

    is_error, envelope = await call()
    assert (is_error, envelope["data"]["ok"], envelope["data"]["versions"]) == (False, True, 2)
    ledger_sql(any_project, "UPDATE record_versions SET audience = 'private:mallory' "
                            "WHERE ledger_revision = 1")
    is_error, envelope = await call()
    assert is_error is True
    assert (envelope["error"]["code"], envelope["error"]["details"]["ledger_revision"],
            envelope["error"]["details"]["reason"]) == (
        "ledger_chain_broken", 1, "version_digest_mismatch")
