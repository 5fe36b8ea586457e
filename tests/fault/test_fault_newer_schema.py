"""A ledger written by a newer assay: every command refuses it cleanly and changes nothing.

The store-level refusal is tests/ledger/test_conformance.py::test_newer_schema_is_refused;
this drives the real CLI on both backends.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fault_tools import assert_clean_error, ledger_versions

from assay.ledger import Write, open_store
from assay.ledger.store import SCHEMA_VERSION
from assay_testing import make_project


def _set_schema_version(store: Any, version: int) -> None:
    with store._write_transaction() as cur:  # a future assay's migration, simulated in SQL
        cur.execute(store.sql("UPDATE ledger_meta SET value = ? WHERE key = 'schema_version'"),
                    (str(version),))


def test_fault_newer_schema_every_command_refuses_and_writes_nothing(tmp_path: Path,
                                                                     ledger_url: str) -> None:
    """Reads and writes exit 4 with schema_too_new; the ledger keeps its records and version untouched."""
    project = make_project(tmp_path / "proj", db=ledger_url)
    store = open_store(ledger_url)
    try:
        receipt = store.put(Write(id="knowledge:kept", data={"n": 1}, scope="project:demo"))
        _set_schema_version(store, 99)
    finally:
        store.close()
    for command in (("ledger", "info"), ("get", "--", "knowledge:kept"), ("work", "status")):
        error = assert_clean_error(project.run(*command), "schema_too_new", 4)
        assert error["details"]["schema_version"] == 99
    assert_clean_error(project.run("put", "--data-file", "-", "--", "knowledge:new", input="{}"),
                       "schema_too_new", 4)
    # Put the version back, as the right assay would see it: nothing was migrated or written.
    if ledger_url.startswith("postgres"):
        import psycopg

        from assay.ledger.postgres import _split_url

        conninfo, schema = _split_url(ledger_url)
        with psycopg.connect(conninfo, autocommit=True) as conn:
            assert conn.execute(f"SELECT value FROM {schema}.ledger_meta WHERE key = "
                                "'schema_version'").fetchone()[0] == "99"
            conn.execute(f"UPDATE {schema}.ledger_meta SET value = %s WHERE key = 'schema_version'",
                         (str(SCHEMA_VERSION),))
    else:
        import sqlite3

        with sqlite3.connect(ledger_url) as conn:
            assert conn.execute("SELECT value FROM ledger_meta WHERE key = 'schema_version'"
                                ).fetchone()[0] == "99"
            conn.execute("UPDATE ledger_meta SET value = ? WHERE key = 'schema_version'",
                         (str(SCHEMA_VERSION),))
    head, versions = ledger_versions(ledger_url)
    assert head == receipt.ledger_revision and [v.id for v in versions] == ["knowledge:kept"]
    assert project.ok("put", "--data-file", "-", "--", "knowledge:new",
                      input="{}")["data"]["ledger_revision"] == head + 1
