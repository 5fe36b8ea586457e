"""A PostgreSQL connection killed mid-transaction with ``pg_terminate_backend``.

A second connection holds an uncommitted second version of knowledge:b, so
the write under test is provably inside its transaction (write lock taken,
earlier rows of a batch already inserted) when it waits on the unique
``(id, revision)`` index, and its server process is terminated there.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from fault_tools import assert_clean_error, assert_ledger_whole

from assay.errors import AssayError
from assay.ledger import Write, open_store
from assay_testing import ASSAY, PG_URL, make_project

pytestmark = pytest.mark.postgres
SCOPE = "project:demo"


def _schema(url: str) -> str:
    return parse_qs(urlsplit(url).query)["assay_schema"][0]


def _seed(url: str) -> list[dict[str, Any]]:
    store = open_store(url)
    try:
        return [store.put(Write(id=f"knowledge:{name}", data={"n": 1}, scope=SCOPE,
                                request_id=f"seed-{name}")).to_dict() for name in ("a", "b", "c")]
    finally:
        store.close()


def _waiting_backend(admin: Any, app: str, deadline: float = 20.0) -> int:
    """The server process of the write under test, once it waits on the held lock.

    Found by its application name, so a test running beside other suites on the
    same server never terminates anyone else's connection.
    """
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        row = admin.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = %s "
            "AND wait_event_type = 'Lock' AND state = 'active'", (app,)).fetchone()
        if row:
            return int(row[0])
        time.sleep(0.05)
    raise AssertionError("the write never blocked on the uncommitted version")


def _kill_while_blocked(url: str, app: str, start: Callable[[], Any]) -> Any:
    """Hold an uncommitted knowledge:b revision 2, start the write, terminate its backend, roll back."""
    import psycopg

    assert PG_URL
    with psycopg.connect(PG_URL, autocommit=True) as admin, psycopg.connect(PG_URL) as locker:
        locker.execute(
            f"INSERT INTO {_schema(url)}.record_versions (ledger_revision, id, revision, kind, "
            "scope, data, data_sha256, status, links, audience, sources, origin, created_at) "
            "VALUES (1000000, 'knowledge:b', 2, 'knowledge', %s, '{}', '', 'current', '[]', "
            "'project', '[]', 'claim', '')", (SCOPE,))
        handle = start()
        pid = _waiting_backend(admin, app)
        assert admin.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone()[0] is True
        locker.rollback()
    return handle


def _in_thread(fn: Callable[[], Any]) -> Callable[[], dict[str, Any]]:
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - the test inspects what was raised
            outcome["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()

    def join() -> dict[str, Any]:
        thread.join(30)
        assert not thread.is_alive()
        return outcome

    return join


@pytest.mark.parametrize("path", ["single put (server function)", "batch (multi-statement)"])
def test_fault_postgres_backend_killed_mid_transaction_commits_nothing(
        pg_url: str, path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A terminated connection fails the write with ledger_unavailable; no part of it is visible."""
    receipts = _seed(pg_url)
    app = "assay-fault-" + uuid.uuid4().hex[:12]
    monkeypatch.setenv("PGAPPNAME", app)  # libpq names the store's connection
    store = open_store(pg_url)
    monkeypatch.delenv("PGAPPNAME")
    try:
        if path.startswith("single"):
            work = lambda: store.put(Write(id="knowledge:b", data={"n": 2}, scope=SCOPE))
        else:
            work = lambda: store.put_many([
                Write(id="knowledge:fresh", data={"n": 1}, scope=SCOPE),
                Write(id="knowledge:b", data={"n": 2}, scope=SCOPE)])
        outcome = _kill_while_blocked(pg_url, app, lambda: _in_thread(work))()
    finally:
        store.close()
    error = outcome.get("error")
    assert isinstance(error, AssayError), outcome
    assert error.code == "ledger_unavailable" and error.exit_code == 4
    head = assert_ledger_whole(pg_url, receipts)
    assert head == len(receipts)
    check = open_store(pg_url)
    try:
        with check.reader() as r:
            assert r.get("knowledge:fresh") is None
            b = r.get("knowledge:b")
            assert b is not None and b.revision == 1 and b.data == {"n": 1}
        assert check.put(Write(id="knowledge:b", data={"n": 2}, scope=SCOPE,
                               expect_revision=1)).ledger_revision == head + 1
    finally:
        check.close()


def test_fault_postgres_backend_killed_under_the_cli_is_a_clean_error(pg_url: str,
                                                                      tmp_path: Path) -> None:
    """The CLI whose connection is terminated mid-put exits 4 with ledger_unavailable; the next put works."""
    receipts = _seed(pg_url)
    project = make_project(tmp_path / "proj", db=pg_url)
    app = "assay-fault-" + uuid.uuid4().hex[:12]

    data = tmp_path / "data.json"
    data.write_text('{"n":2}', encoding="utf-8")

    def start() -> subprocess.Popen[bytes]:
        env = {**os.environ, "ASSAY_DB": pg_url, "PGAPPNAME": app}
        return subprocess.Popen([ASSAY, "put", "--data-file", str(data), "--", "knowledge:b"],
                                cwd=project.root, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    proc = _kill_while_blocked(pg_url, app, start)
    out, err = proc.communicate(timeout=60)

    class Result:
        code = proc.returncode
        stdout = out.decode()
        stderr = err.decode()

    assert_clean_error(Result, "ledger_unavailable", 4)
    assert_ledger_whole(pg_url, receipts)
    envelope = project.ok("put", "--data-file", "-", "--", "knowledge:b", input='{"n":2}')
    assert envelope["data"]["revision"] == 2
