"""PostgreSQL batches: one server function call per batch, also on ledgers made before it existed."""

from __future__ import annotations

import pytest

from assay.ledger import Link, Write, open_store

pytestmark = pytest.mark.postgres
SCOPE = "project:demo"
_PUT_MANY_ARGS = ", ".join(["text[]"] * 13 + ["bigint[]", "text", "text", "text", "bigint", "text",
                                              "text[]"])


def test_postgres_put_many_installs_its_function_on_an_older_ledger(pg_url: str) -> None:
    """A ledger whose schema lacks assay_put_many (made before it) gains it on the first batch."""
    store = open_store(pg_url)
    try:
        store._conn.execute(f"DROP FUNCTION assay_put_many({_PUT_MANY_ARGS})")  # type: ignore[attr-defined]
        receipts = store.put_many([Write(id=f"knowledge:r{i}", data={"i": i}, scope=SCOPE)
                                   for i in range(3)])
        assert [r.ledger_revision for r in receipts] == [1, 2, 3]
        found = store._conn.execute("SELECT to_regproc('assay_put_many')").fetchone()  # type: ignore[attr-defined]
        assert found is not None and found[0] is not None
    finally:
        store.close()


def test_postgres_put_many_replaces_the_functions_of_an_older_release(pg_url: str) -> None:
    """A ledger with the previous release's batch function (the batch as one JSON text) and
    its helper gains the current one on its first batch, and the old ones are gone."""
    store = open_store(pg_url)
    conn = store._conn  # type: ignore[attr-defined]
    try:
        store.put(Write(id="knowledge:r0", data={"i": 0}, scope=SCOPE,
                        links=(Link("supports", "knowledge:x"),)))
        conn.execute(f"DROP FUNCTION assay_put_many({_PUT_MANY_ARGS})")
        # Stand-ins with the old signatures: only their presence matters.
        conn.execute("CREATE FUNCTION assay_put_many(p_writes text, p_data text[], p_now text, "
                     "p_basis_epoch text, p_basis text, p_basis_ledger_revision bigint, "
                     "p_principal text) RETURNS void LANGUAGE sql AS 'SELECT NULL'")
        conn.execute("CREATE FUNCTION assay_append(integer, text, text, text, text, text, text, "
                     "text, text, text, text, text, text, text, bigint, text, text) "
                     "RETURNS void LANGUAGE sql AS 'SELECT NULL'")
        receipts = store.put_many([
            Write(id="knowledge:r0", data={"i": 1}, scope=SCOPE, expect_revision=1,
                  request_id="q0"),
            Write(id="knowledge:r1", data={"i": 2}, scope=SCOPE,
                  links=(Link("supports", "knowledge:r0"),))])
        assert [(r.revision, r.ledger_revision) for r in receipts] == [(2, 2), (1, 3)]
        old = conn.execute(
            "SELECT to_regprocedure('assay_put_many(text, text[], text, text, text, bigint, text)'), "
            "to_regprocedure('assay_append(integer, text, text, text, text, text, text, text, "
            "text, text, text, text, text, text, bigint, text, text)'), "
            f"to_regprocedure('assay_put_many({_PUT_MANY_ARGS})')").fetchone()
        assert old is not None and old[:2] == (None, None) and old[2] is not None
        links = conn.execute("SELECT id, rel, target FROM record_links ORDER BY id").fetchall()
        assert links == [("knowledge:r1", "supports", "knowledge:r0")]
        replay = store.put_many([
            Write(id="knowledge:r0", data={"i": 1}, scope=SCOPE, expect_revision=1,
                  request_id="q0"),
            Write(id="knowledge:r2", data={}, scope=SCOPE)])
        assert [(r.revision, r.ledger_revision, r.replayed) for r in replay] == [
            (2, 2, True), (1, 4, False)]
    finally:
        store.close()


def test_postgres_put_many_is_one_statement_per_batch(pg_url: str) -> None:
    """A batch of 100 writes is one call of the server function, not a statement per write."""
    import psycopg

    store = open_store(pg_url)
    calls: list[str] = []
    try:
        # Every statement goes through a cursor (connection.execute makes one).
        original = psycopg.Cursor.execute

        def counting(self: psycopg.Cursor[object], query: object, *args: object,
                     **kw: object) -> object:
            calls.append(str(query))
            return original(self, query, *args, **kw)  # type: ignore[arg-type]

        psycopg.Cursor.execute = counting  # type: ignore[assignment,method-assign]
        try:
            store.put_many([Write(id=f"knowledge:r{i}", data={"i": i}, scope=SCOPE)
                            for i in range(100)])
        finally:
            psycopg.Cursor.execute = original  # type: ignore[method-assign]
        assert len(calls) == 1 and "assay_put_many" in calls[0]
        with store.reader() as r:
            assert r.ledger_revision == 100
    finally:
        store.close()
