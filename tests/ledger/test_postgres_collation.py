"""Ids compare bytewise on PostgreSQL even when the database's collation does not.

The kind filter reads the ids of one kind as the range ["<kind>:", "<kind>;"),
and find orders by id; both need bytewise comparison. A database whose
default collation is ICU's en-US orders "task:a" before "task:B" and sorts
punctuation apart from letters, so this test runs the ledger in one.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

import pytest

from assay.ledger import Write, open_store

pytestmark = pytest.mark.postgres


@pytest.fixture
def icu_ledger_url(pg_url: str) -> Iterator[str]:
    """A ledger URL in a fresh database whose default collation is ICU en-US."""
    import psycopg

    from assay_testing import pg_server_alone

    name = "assay_icu_" + uuid.uuid4().hex[:12]
    with pg_server_alone(), psycopg.connect(pg_url.split("?")[0], autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name} TEMPLATE template0 LOCALE_PROVIDER icu "
                      "ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'")
        try:
            with psycopg.connect(urlunsplit(urlsplit(pg_url.split("?")[0])._replace(
                    path="/" + name)), autocommit=True) as conn:
                # The premise: this database's own order is not bytewise.
                assert conn.execute("SELECT 'task:B' < 'task:a', 'task:x' < 'task;'"
                                    ).fetchone() == (False, False)
            yield urlunsplit(urlsplit(pg_url)._replace(path="/" + name))
        finally:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_postgres_kind_range_and_order_are_bytewise_under_icu(icu_ledger_url: str) -> None:
    """find by kind finds exactly that kind, and every find orders ids bytewise."""
    ids = ["task:B", "task:a", "task:_", "task-list:c", "tasks:d", "note:x"]
    store = open_store(icu_ledger_url)
    try:
        for record_id in ids:
            store.put(Write(id=record_id, data={}, scope="project:demo"))
        with store.reader() as r:
            assert [x.id for x in r.find(kind="task")] == ["task:B", "task:_", "task:a"]
            assert [x.id for x in r.find()] == sorted(ids)
            assert r.get("task:B") is not None and len(r.get_many(ids)) == len(ids)
    finally:
        store.close()
