"""The queue of a SQLite ledger's writers: OS locks on a side file, first come first served.

SQLite's own wait for its write lock is a busy handler that sleeps 1 to 100
ms between tries and is not woken when the lock frees, so under contention a
writer that has slept long keeps losing to writers that just arrived: some
wait seconds while others write freely. Writers of one ledger file therefore
first queue in ``<ledger file>-writers``, and by the time a writer runs
``BEGIN IMMEDIATE`` it finds SQLite's lock free.

The queue is a ticket lock made of byte-range locks (Linux open file
description locks, ``F_OFD_SETLKW``): under a brief ``flock`` of the file, a
writer takes the next ticket from the counter in the file's first 8 bytes and
locks the byte of its ticket; then it waits for the byte of the ticket before
its own. Each byte has one waiter, so the kernel hands the turn on exactly in
ticket order. Where open file description locks are missing (not Linux), a
plain ``flock`` of the file serves: the kernel wakes every waiter and one of
them wins, which is close to arrival order but not exactly.

- Crash safety: every lock belongs to the writer's open file description
  of the side file (kept open between its writes); the kernel releases it
  when its holder exits, however it exits (SIGKILL included),
  and the next ticket's writer goes on.
- Bound: a writer waits at most its timeout, then gives up (``ledger_busy``,
  nothing written). A writer that gave up keeps its place until its turn
  comes and passes it on at once, so the writers behind it keep their order.
- Readers never take it.
- Where the side file cannot be opened or created for writing (a read-only
  directory, a side file owned by someone else, no ``fcntl``), writers fall
  back to SQLite's busy handler alone: still correct, only not fair.

The side file holds only the counter. It is created readable and writable by
its owner, and by the group or others only where they may write the ledger
file itself. Imports only the standard library.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

__all__ = ["WriteQueue"]

SUFFIX = "-writers"
_SLOTS = 16  # ticket n's byte is at _SLOTS + n; the counter is bytes 0-7
_FLAGS = os.O_RDWR | getattr(os, "O_CLOEXEC", 0)


class WriteQueue:
    """The writers' queue of the SQLite ledger file at ``ledger_path``.

    :meth:`acquire` takes a place and waits for the turn; the release
    function it returns hands the turn on. The side file is created on the
    first write, never by a reader.
    """

    def __init__(self, ledger_path: Path) -> None:
        self.path = Path(str(ledger_path) + SUFFIX)
        # None until the first write tried the side file; False: fall back.
        self.available: bool | None = None
        # The side file, open from the first write until close(): a turn is
        # handed on by unlocking, not by closing the file.
        self._fd: int | None = None

    def _create(self) -> bool:
        """Whether the side file exists (created now if need be) and this process may write it."""
        try:
            import fcntl  # noqa: F401  # POSIX only; elsewhere writers fall back
        except ImportError:
            return False
        for _ in range(2):  # a second try when another writer created it meanwhile
            try:
                os.close(os.open(self.path, _FLAGS))
                return True
            except FileNotFoundError:
                pass
            except OSError:
                return False
            try:
                fd = os.open(self.path, _FLAGS | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                continue
            except OSError:
                return False
            try:
                os.fchmod(fd, _mode_for(self.path.with_name(self.path.name[:-len(SUFFIX)])))
            except OSError:
                pass
            os.close(fd)
            return True
        return False

    def acquire(self, timeout: float) -> Callable[[], None] | None:
        """Wait for the turn to write, at most ``timeout`` seconds.

        Returns the function that hands the turn on; None when there is no
        queue (the side file cannot be had). Raises :class:`TimeoutError`
        when the turn did not come within ``timeout``.
        """
        if self.available is None:
            self.available = self._create()
        if not self.available:
            return None
        fd = self._fd
        if fd is None:
            try:
                fd = self._fd = os.open(self.path, _FLAGS)
            except OSError:
                return None
        try:
            if _TICKETS:
                ticket, ready = _take_ticket(fd)

                def wait_turn() -> bool:
                    return _range_lock(fd, _SLOTS + ticket - 1, wait=True)
            else:
                ready = _flock_now(fd)

                def wait_turn() -> bool:
                    return _flock_now(fd, wait=True)
            if not ready:
                _wait(fd, timeout, self.path, wait_turn)
        except _Abandoned:
            self._fd = None  # the helper thread closes it when the turn comes
            raise
        except BaseException:
            self._fd = None
            os.close(fd)  # gives the place up, and with it any turn
            raise
        if _TICKETS:
            # The turn passes on when the byte of this ticket frees; the byte
            # of the one before it, held since the turn came, frees with it.
            return lambda: _range_unlock(fd, _SLOTS + ticket - 1, 2)
        return lambda: _flock_release(fd)

    def close(self) -> None:
        """Close the side file (a write in progress has handed its turn on by now)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


# Ticket locks need open file description locks and the 64-bit struct flock.
_TICKETS = False
try:
    import fcntl as _fcntl

    _TICKETS = hasattr(_fcntl, "F_OFD_SETLKW") and sys.maxsize > 2**32
except ImportError:  # pragma: no cover - not POSIX
    pass
# struct flock: l_type, l_whence, l_start, l_len, l_pid (0 for OFD locks). The
# struct module is loaded by the first write (a read-only call never needs it).
_FLOCK = "hhqqi4x"
_pack: Callable[..., bytes] | None = None


def _lock_request(kind: int, offset: int, length: int) -> bytes:
    global _pack
    if _pack is None:
        from struct import pack

        _pack = pack
    return _pack(_FLOCK, kind, os.SEEK_SET, offset, length, 0)


def _range_lock(fd: int, offset: int, *, wait: bool) -> bool:
    """Lock one byte at ``offset`` for this open file description; False when taken (no wait)."""
    request = _lock_request(_fcntl.F_WRLCK, offset, 1)
    try:
        _fcntl.fcntl(fd, _fcntl.F_OFD_SETLKW if wait else _fcntl.F_OFD_SETLK, request)
    except (BlockingIOError, PermissionError):
        return False
    return True


def _range_unlock(fd: int, offset: int, length: int) -> None:
    """Unlock ``length`` bytes from ``offset`` held by this open file description."""
    _fcntl.fcntl(fd, _fcntl.F_OFD_SETLK, _lock_request(_fcntl.F_UNLCK, offset, length))


def _flock_release(fd: int) -> None:
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_UN)


def _take_ticket(fd: int) -> tuple[int, bool]:
    """Take the next ticket under the counter's flock; with whether the turn is ours already."""
    _fcntl.flock(fd, _fcntl.LOCK_EX)  # held for a few system calls only
    try:
        raw = os.pread(fd, 8, 0)
        last = int.from_bytes(raw, "little") if len(raw) == 8 else 0
        mine = last + 1
        _range_lock(fd, _SLOTS + mine, wait=False)  # no one else holds a fresh ticket
        os.pwrite(fd, mine.to_bytes(8, "little"), 0)
    finally:
        _fcntl.flock(fd, _fcntl.LOCK_UN)
    return mine, _range_lock(fd, _SLOTS + last, wait=False)


def _flock_now(fd: int, *, wait: bool = False) -> bool:
    """Take the whole-file lock; False when it is taken (no wait)."""
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except BlockingIOError:
        return False
    return True


def _mode_for(ledger: Path) -> int:
    """Read and write for the owner, and for the group or others where they may write the ledger."""
    try:
        mode = os.stat(ledger).st_mode
    except OSError:
        return 0o600
    return 0o600 | (0o060 if mode & 0o020 else 0) | (0o006 if mode & 0o002 else 0)


def _wait(fd: int, timeout: float, path: Path, wait_turn: Callable[[], bool]) -> None:
    """Wait for the turn on ``fd`` at most ``timeout`` seconds, or raise :class:`TimeoutError`.

    Locks have no timeout, so a helper thread blocks in ``wait_turn`` while
    this one waits on an event. A wait that gives up leaves ``fd`` to the
    helper, which closes it once the turn comes: the turn passes on at once,
    and an abandoned place never holds the queue.
    """
    import threading

    got = threading.Event()
    guard = threading.Lock()
    abandoned = False
    failed = False

    def take() -> None:
        nonlocal failed
        try:
            failed = not wait_turn()
        except OSError:
            failed = True
        with guard:
            if abandoned:
                os.close(fd)
                return
            got.set()

    threading.Thread(target=take, name="assay-write-queue", daemon=True).start()
    if not got.wait(timeout):
        with guard:
            if not got.is_set():
                abandoned = True
                raise _Abandoned(f"no turn in the writers' queue {path} within {timeout:g} s")
    if failed:
        raise TimeoutError(f"cannot lock the writers' queue {path}")


class _Abandoned(TimeoutError):
    """A wait that gave up: its descriptor now belongs to the helper thread."""
