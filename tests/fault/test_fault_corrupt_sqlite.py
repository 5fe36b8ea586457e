"""A damaged SQLite ledger file: every command fails with ledger_corrupt, never a traceback.

A newer-schema ledger (``schema_too_new``) is covered by the conformance suite:
tests/ledger/test_conformance.py::test_store_refuses_a_newer_schema.
"""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import pytest
from fault_tools import assert_clean_error, assert_ledger_whole

from assay_testing import Project, make_project

COMMANDS = (
    ("get", "--", "knowledge:k120"),
    ("find", "--", "k1"),
    ("ledger", "info"),
    ("work", "status"),
)


def _filled(tmp_path: Path, count: int = 150) -> tuple[Project, list[dict]]:
    project = make_project(tmp_path / "proj")
    receipts = []
    for i in range(count):
        envelope = project.ok("put", "--data-file", "-", "--", f"knowledge:k{i}",
                              input=f'{{"i":{i},"pad":"{"x" * 400}"}}') if i % 50 == 0 else None
        if envelope:
            receipts.append(envelope["data"])
    # The bulk goes in through the store directly: the CLI path is exercised above.
    from assay.ledger import Write, open_store

    store = open_store(project.root / ".assay" / "ledger.db")
    try:
        for i in range(count):
            if i % 50:
                # Every tenth record names an intent, so a read of the intents
                # (work status) meets versions throughout the file.
                data: dict = {"i": i, "pad": "x" * 400}
                if i % 10 == 1:
                    data["intent"] = {"brief": f"intent {i}"}
                receipts.append(store.put(Write(id=f"knowledge:k{i}", data=data,
                                                scope="project:demo")).to_dict())
    finally:
        store.close()
    return project, receipts


def _damage_pages(path: Path, seed: int = 0) -> None:
    # Every page after the first two: whatever pages a command touches, SQLite
    # reads a damaged one (it can only detect damage on the pages it reads).
    # The damage is seeded, so a failure names the bytes that caused it.
    noise = random.Random(seed)
    size = path.stat().st_size
    with path.open("r+b") as f:
        for offset in range(4096 * 2, size, 4096):
            f.seek(offset + 100)
            f.write(noise.randbytes(2000))


@pytest.mark.parametrize("damage", ["pages", "header", "truncated"])
def test_fault_corrupt_sqlite_every_command_reports_ledger_corrupt(tmp_path: Path, damage: str) -> None:
    """Damaged pages, a garbage header or a truncated file: each command exits 4 with ledger_corrupt."""
    project, _ = _filled(tmp_path)
    db = project.root / ".assay" / "ledger.db"
    if damage == "pages":
        _damage_pages(db)
    elif damage == "header":
        with db.open("r+b") as f:
            f.write(os.urandom(100))
    else:
        with db.open("r+b") as f:
            f.truncate(db.stat().st_size // 3)
    for command in COMMANDS:
        assert_clean_error(project.run(*command), "ledger_corrupt", 4)
    assert_clean_error(project.run("put", "--data-file", "-", "--", "knowledge:new", input="{}"),
                       "ledger_corrupt", 4)


def test_fault_corrupt_sqlite_restored_backup_works_again(tmp_path: Path) -> None:
    """After the damaged file is replaced by a backup, every acknowledged write is back and writes resume."""
    project, receipts = _filled(tmp_path)
    db = project.root / ".assay" / "ledger.db"
    backup = tmp_path / "backup.db"
    shutil.copyfile(db, backup)
    _damage_pages(db)
    assert_clean_error(project.run("get", "--", "knowledge:k120"), "ledger_corrupt", 4)
    shutil.copyfile(backup, db)
    head = assert_ledger_whole(str(db), receipts)
    envelope = project.ok("put", "--data-file", "-", "--", "knowledge:after", input="{}")
    assert envelope["data"]["ledger_revision"] == head + 1


def test_fault_corrupt_sqlite_damaged_index_is_never_read_as_a_missing_record(tmp_path: Path) -> None:
    """A point read through damaged index pages reports ledger_corrupt, never "no such record".

    Without checking each page's cells as it is read, SQLite can follow a
    damaged cell pointer, compare against garbage and end a lookup as a miss
    (about 1 damaged copy in 300 did): a corrupt ledger would answer that a
    record it holds does not exist.
    """
    from assay.errors import AssayError
    from assay.ledger import Write, open_store

    db = tmp_path / "ledger.db"
    store = open_store(db)
    try:
        store.put_many([Write(id=f"knowledge:k{i}", data={"i": i, "pad": "x" * 400},
                              scope="project:demo") for i in range(150)])
    finally:
        store.close()
    pristine = db.read_bytes()
    outcomes: dict[str, list[int]] = {}
    for seed in range(1000):
        db.write_bytes(pristine)
        _damage_pages(db, seed)
        try:
            damaged = open_store(db)
            try:
                with damaged.reader() as reader:
                    outcome = "found" if reader.get("knowledge:k120") else "missing"
            finally:
                damaged.close()
        except AssayError as exc:
            outcome = exc.code
        outcomes.setdefault(outcome, []).append(seed)
    assert set(outcomes) <= {"ledger_corrupt", "found"}, {k: v[:5] for k, v in outcomes.items()}
