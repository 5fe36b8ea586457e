"""A full disk under the SQLite ledger, made real with a small tmpfs mount (needs root; skips otherwise).

The PostgreSQL server's own disk is not filled here: its out-of-space error
(SQLSTATE 53100) maps to ledger_disk_full through the same translation as any
driver error (src/assay/ledger/postgres.py ``_unavailable``).
"""

from __future__ import annotations

import subprocess
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
