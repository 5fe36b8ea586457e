"""The SQLite writers' queue with real processes: order, crash safety, the bound, fallback."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.errors import AssayError
from assay.ledger import Write, open_store, write_queue

WORKER = str(Path(__file__).with_name("ledger_worker.py"))
SCOPE = "project:demo"


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    path = tmp_path / "ledger.db"
    open_store(path).close()
    return path


@pytest.fixture
def holder(ledger: Path) -> Iterator[subprocess.Popen[str]]:
    """A process inside a write transaction on the ledger, holding its turn until killed."""
    proc = subprocess.Popen([sys.executable, WORKER, "hold", str(ledger)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    try:
        assert proc.stdout.readline().strip() == "holding"
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)


def _receipts(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


def test_write_queue_every_writer_process_completes_and_nothing_is_lost(ledger: Path) -> None:
    """Six writer processes all finish, and every acknowledged write is in the ledger, gap-free."""
    procs = [subprocess.Popen([sys.executable, WORKER, "count", str(ledger), "40", f"w{k}"],
                              stdout=subprocess.PIPE, text=True) for k in range(6)]
    receipts = []
    for proc in procs:
        out, _ = proc.communicate(timeout=300)
        assert proc.returncode == 0
        mine = _receipts(out)
        assert len(mine) == 40
        receipts += mine
    store = open_store(ledger)
    try:
        with store.reader() as r:
            assert r.ledger_revision == 240
            for receipt in receipts:
                record = r.get(receipt["id"])
                assert record is not None
                assert record.ledger_revision == receipt["ledger_revision"]
        assert sorted(rc["ledger_revision"] for rc in receipts) == list(range(1, 241))
    finally:
        store.close()


def test_write_queue_sigkill_of_the_holder_lets_the_next_writer_on(
        ledger: Path, holder: subprocess.Popen[str]) -> None:
    """A writer queued behind a holder that is SIGKILLed writes as soon as the kernel frees the turn."""
    waiter = subprocess.Popen([sys.executable, WORKER, "count", str(ledger), "3", "after"],
                              stdout=subprocess.PIPE, text=True)
    os.kill(holder.pid, signal.SIGKILL)
    out, _ = waiter.communicate(timeout=120)
    assert waiter.returncode == 0
    assert [r["ledger_revision"] for r in _receipts(out)] == [1, 2, 3]


def test_write_queue_waiter_past_the_bound_gets_ledger_busy_and_writes_nothing(
        ledger: Path, holder: subprocess.Popen[str]) -> None:
    """A put that gets no turn within the bound is ledger_busy (retryable), and nothing is written."""
    store = open_store(ledger)
    store.busy_timeout_ms = 300  # type: ignore[attr-defined]
    try:
        with pytest.raises(AssayError) as caught:
            store.put(Write(id="knowledge:late", data={}, scope=SCOPE))
        assert caught.value.code == "ledger_busy" and caught.value.retryable
        os.kill(holder.pid, signal.SIGKILL)
        holder.communicate(timeout=30)
        with store.reader() as r:
            assert r.get("knowledge:late") is None and r.ledger_revision == 0
        # The place the timed-out put left in the queue passes the turn on.
        store.busy_timeout_ms = 30_000  # type: ignore[attr-defined]
        assert store.put(Write(id="knowledge:next", data={}, scope=SCOPE)).ledger_revision == 1
    finally:
        store.close()


@pytest.mark.parametrize("own_alarm", [False, True], ids=["interval-timer", "helper-thread"])
def test_write_queue_bound_in_a_writer_process_of_its_own(
        ledger: Path, holder: subprocess.Popen[str], own_alarm: bool) -> None:
    """A writer process past the bound gets ledger_busy, writes nothing, and keeps its signals.

    With ``SIGALRM`` free, the main thread waits itself under an interval
    timer; with a handler of the process's own, a helper thread waits. Either
    way the process's alarm handler and timer are as they were, and the
    place it gave up passes the turn on once the holder is gone.
    """
    argv = [sys.executable, WORKER, "late", str(ledger), "300"]
    late = subprocess.Popen(argv + (["own-alarm"] if own_alarm else []),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert late.stdin is not None and late.stdout is not None
    try:
        first = json.loads(late.stdout.readline())
        assert first == {"outcome": "ledger_busy",
                         "handler": "own" if own_alarm else str(signal.SIG_DFL),
                         "timer": [0.0, 0.0]}
        os.kill(holder.pid, signal.SIGKILL)
        holder.communicate(timeout=30)
        late.stdin.write("go\n")
        late.stdin.flush()
        out, _ = late.communicate(timeout=120)
    finally:
        if late.poll() is None:
            late.kill()
    assert late.returncode == 0
    assert json.loads(out)["ledger_revision"] == 1
    store = open_store(ledger, create=False)
    try:
        with store.reader() as r:
            assert r.get("knowledge:late") is None and r.get("knowledge:next") is not None
    finally:
        store.close()


def test_write_queue_readers_never_wait_on_it(ledger: Path,
                                              holder: subprocess.Popen[str]) -> None:
    """While a writer holds the turn, a reader in another handle reads at once."""
    store = open_store(ledger, create=False)
    try:
        with store.reader() as r:
            assert r.ledger_revision == 0 and r.get("knowledge:any") is None
    finally:
        store.close()


def test_write_queue_reads_never_create_the_side_file(ledger: Path) -> None:
    """Only a write creates `<ledger>-writers`; reading a ledger leaves none behind."""
    side = Path(str(ledger) + "-writers")
    assert not side.exists()
    store = open_store(ledger, create=False)
    with store.reader() as r:
        r.get("knowledge:a")
    store.close()
    assert not side.exists()
    store = open_store(ledger)
    store.put(Write(id="knowledge:a", data={}, scope=SCOPE))
    store.close()
    assert side.is_file()


def test_write_queue_side_file_is_private_unless_the_ledger_is_shared(tmp_path: Path) -> None:
    """The side file is 0600, with group write only where the group may write the ledger."""
    for name, ledger_mode, expected in (("own.db", 0o644, 0o600), ("team.db", 0o664, 0o660)):
        path = tmp_path / name
        store = open_store(path)
        os.chmod(path, ledger_mode)
        store.put(Write(id="knowledge:a", data={}, scope=SCOPE))
        store.close()
        assert stat.S_IMODE(os.stat(str(path) + "-writers").st_mode) == expected


def test_write_queue_unusable_side_file_falls_back_to_the_busy_handler(ledger: Path) -> None:
    """Where the side file cannot be opened (here a directory holds its name), writes still commit."""
    Path(str(ledger) + "-writers").mkdir()
    store = open_store(ledger)
    try:
        receipts = [store.put(Write(id=f"knowledge:r{i}", data={}, scope=SCOPE))
                    for i in range(3)]
        assert [r.ledger_revision for r in receipts] == [1, 2, 3]
        assert store._queue.available is False  # type: ignore[attr-defined]
    finally:
        store.close()


def test_write_queue_whole_file_lock_where_tickets_are_missing(
        ledger: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without open file description locks the queue is an flock of the side file, with the same bound."""
    monkeypatch.setattr(write_queue, "_TICKETS", False)
    store = open_store(ledger)
    store.busy_timeout_ms = 300  # type: ignore[attr-defined]
    try:
        store.put(Write(id="knowledge:first", data={}, scope=SCOPE))
        fd = os.open(str(ledger) + "-writers", os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            with pytest.raises(AssayError) as caught:
                store.put(Write(id="knowledge:late", data={}, scope=SCOPE))
            assert caught.value.code == "ledger_busy"
        finally:
            os.close(fd)
        assert store.put(Write(id="knowledge:next", data={}, scope=SCOPE)).ledger_revision == 2
    finally:
        store.close()
