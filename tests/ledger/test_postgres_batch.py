"""PostgreSQL batches: one server function call per batch, also on ledgers made before it existed."""

from __future__ import annotations

import pytest

from assay.ledger import Write, open_store

pytestmark = pytest.mark.postgres
SCOPE = "project:demo"


def test_postgres_put_many_installs_its_function_on_an_older_ledger(pg_url: str) -> None:
    """A ledger whose schema lacks assay_put_many (made before it) gains it on the first batch."""
    store = open_store(pg_url)
    try:
        store._conn.execute("DROP FUNCTION assay_put_many(text, text[], text, text, text, bigint, text)")  # type: ignore[attr-defined]
        receipts = store.put_many([Write(id=f"knowledge:r{i}", data={"i": i}, scope=SCOPE)
                                   for i in range(3)])
        assert [r.ledger_revision for r in receipts] == [1, 2, 3]
        found = store._conn.execute("SELECT to_regproc('assay_put_many')").fetchone()  # type: ignore[attr-defined]
        assert found is not None and found[0] is not None
    finally:
        store.close()


def test_postgres_put_many_is_one_statement_per_batch(pg_url: str) -> None:
    """A batch of 100 writes is one call of the server function, not a statement per write."""
    import psycopg

    store = open_store(pg_url)
    calls: list[str] = []
    try:
        original = psycopg.Connection.execute

        def counting(self: psycopg.Connection, query: object, *args: object, **kw: object) -> object:
            calls.append(str(query))
            return original(self, query, *args, **kw)  # type: ignore[arg-type]

        psycopg.Connection.execute = counting  # type: ignore[assignment,method-assign]
        try:
            store.put_many([Write(id=f"knowledge:r{i}", data={"i": i}, scope=SCOPE)
                            for i in range(100)])
        finally:
            psycopg.Connection.execute = original  # type: ignore[method-assign]
        assert len(calls) == 1 and "assay_put_many" in calls[0]
        with store.reader() as r:
            assert r.ledger_revision == 100
    finally:
        store.close()
