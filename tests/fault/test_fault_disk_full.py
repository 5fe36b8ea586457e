"""A full disk, made real with small tmpfs mounts (needs root; skips otherwise).

SQLite: the ledger file lives on a 1 MiB tmpfs. PostgreSQL: a database whose
tablespace is a 24 MiB tmpfs on the (local) test server.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fault_tools import assert_clean_error, assert_ledger_whole

from assay.errors import AssayError
from assay.ledger import Write, open_store
from assay_testing import make_project

PAD = "x" * 20_000


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs mounted for this test, with a 256 KiB filler file to free up later."""
    mount = tmp_path / "disk"
    mount.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "assay-test", str(mount)],
                          capture_output=True, check=False)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.decode(errors='replace').strip()}")
    try:
        (mount / "filler").write_bytes(b"\0" * 256 * 1024)
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(url: str) -> tuple[list[dict[str, Any]], AssayError]:
    store = open_store(url)
    receipts: list[dict[str, Any]] = []
    try:
        for i in range(1000):
            try:
                receipts.append(store.put(Write(id=f"knowledge:k{i}", data={"i": i, "pad": PAD},
                                                scope="project:demo", request_id=f"r{i}")).to_dict())
            except AssayError as exc:
                return receipts, exc
    finally:
        store.close()
    raise AssertionError("the disk never filled up")


def test_fault_disk_full_refuses_the_write_and_keeps_acknowledged_ones(tiny_disk: Path) -> None:
    """On a full disk a put fails with ledger_disk_full; every receipt before it stays readable."""
    url = str(tiny_disk / "ledger.db")
    receipts, error = _fill(url)
    assert error.code == "ledger_disk_full"
    assert error.exit_code == 4 and error.action
    assert len(receipts) > 5
    head = assert_ledger_whole(url, receipts)
    assert head == len(receipts)


def test_fault_disk_full_next_write_works_once_space_is_freed(tiny_disk: Path) -> None:
    """After space is freed, the refused write goes through and revisions continue without a gap."""
    url = str(tiny_disk / "ledger.db")
    receipts, error = _fill(url)
    assert error.code == "ledger_disk_full"
    (tiny_disk / "filler").unlink()
    store = open_store(url)
    try:
        receipt = store.put(Write(id="knowledge:after", data={"ok": True}, scope="project:demo"))
    finally:
        store.close()
    assert receipt.ledger_revision == len(receipts) + 1
    assert_ledger_whole(url, [*receipts, receipt.to_dict()])


def test_fault_disk_full_through_the_cli_is_a_clean_error(tiny_disk: Path, tmp_path: Path) -> None:
    """The CLI reports a full disk as exit 4 with ledger_disk_full and no traceback, then recovers."""
    project = make_project(tmp_path / "proj", db=str(tiny_disk / "ledger.db"))
    receipts, _ = _fill(project.db or "")
    big = '{"pad":"' + PAD * 4 + '"}'
    assert_clean_error(project.run("put", "--data-file", "-", "--", "knowledge:cli", input=big),
                       "ledger_disk_full", 4)
    (tiny_disk / "filler").unlink()
    envelope = project.ok("put", "--data-file", "-", "--", "knowledge:cli", input="{}")
    assert envelope["data"]["ledger_revision"] == len(receipts) + 1


@pytest.fixture
def pg_tiny_database(tmp_path: Path) -> Iterator[str]:
    """A PostgreSQL database whose tablespace is a 24 MiB tmpfs (local server, root; skips otherwise).

    The server's checkpoints fail while the tablespace is full, so no other test may create
    or drop a database meanwhile (pg_server_alone)."""
    from assay_testing import pg_server_alone

    with pg_server_alone():
        yield from _tiny_database(tmp_path)


def _tiny_database(tmp_path: Path) -> Iterator[str]:
    import uuid

    from assay_testing import PG_URL

    if not PG_URL:
        pytest.skip("set ASSAY_TEST_POSTGRES_URL")
    import psycopg

    # The server process must reach the mount: pytest's own temp tree is private to root.
    mount = Path(tempfile.mkdtemp(prefix="assay-pgdisk-"))
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m,mode=0700", "assay-pg",
                           str(mount)], capture_output=True, check=False)
    if proc.returncode != 0:
        mount.rmdir()
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.decode(errors='replace').strip()}")
    name = "assay_full_" + uuid.uuid4().hex[:10]
    admin = psycopg.connect(PG_URL, autocommit=True)
    try:
        subprocess.run(["chown", "postgres:postgres", str(mount)], check=True)
        admin.execute(f"CREATE TABLESPACE {name} LOCATION '{mount}'")
        admin.execute(f"CREATE DATABASE {name} TABLESPACE {name}")
    except (psycopg.Error, subprocess.CalledProcessError, OSError) as exc:
        admin.close()
        subprocess.run(["umount", "-l", str(mount)], check=False)
        mount.rmdir()
        pytest.skip(f"the PostgreSQL server cannot use a local tablespace here: {exc}")
    url = PG_URL.rsplit("/", 1)[0] + "/" + name
    try:
        yield url
    finally:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.execute(f"DROP TABLESPACE IF EXISTS {name}")
        admin.close()
        subprocess.run(["umount", "-l", str(mount)], check=False)
        mount.rmdir()


@pytest.mark.postgres
def test_fault_disk_full_postgresql_refuses_and_recovers(pg_tiny_database: str) -> None:
    """A full PostgreSQL tablespace is ledger_disk_full; receipts stay; after space is freed writes resume."""
    import os

    import psycopg

    url = pg_tiny_database
    with psycopg.connect(url, autocommit=True) as conn:  # space to give back later
        conn.execute("CREATE TABLE filler AS SELECT repeat(md5(g::text), 200) AS pad "
                     "FROM generate_series(1, 800) g")
    store = open_store(url)
    receipts: list[dict[str, Any]] = []
    try:
        for i in range(5000):
            try:
                receipts.append(store.put(Write(
                    id=f"knowledge:k{i}", data={"pad": os.urandom(15000).hex()},
                    scope="project:demo", request_id=f"r{i}")).to_dict())
            except AssayError as exc:
                error = exc
                break
        else:
            raise AssertionError("the tablespace never filled up")
    finally:
        store.close()
    assert error.code == "ledger_disk_full" and error.exit_code == 4 and error.retryable
    assert len(receipts) > 5
    assert assert_ledger_whole(url, receipts) == len(receipts)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TABLE filler")
    store = open_store(url)
    try:
        receipt = store.put(Write(id="knowledge:after", data={"ok": True}, scope="project:demo"))
    finally:
        store.close()
    assert receipt.ledger_revision == len(receipts) + 1
