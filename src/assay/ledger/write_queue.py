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
  directory, no ``fcntl``), writers fall back to SQLite's busy handler
  alone: still correct, only not fair. So do they, with a warning on
  standard error, where the name is not the queue's own file (a symlink, a
  hard link, a FIFO or other non-regular file, a file of another user) or
  its counter is damaged: the queue never writes through to another file,
  and a side file it cannot use never fails a write.
- The counter's ``flock`` is tried without blocking until the writer's
  bound, so nothing holding the side file delays a writer past it.

The side file holds only the counter. It is created readable and writable by
its owner, and by the group or others only where they may write the ledger
file itself. Imports only the standard library.
"""

from __future__ import annotations

import errno
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["WriteQueue"]

SUFFIX = "-writers"
_SLOTS = 16  # ticket n's byte is at _SLOTS + n; the counter is bytes 0-7
# No link is followed and a FIFO never blocks the open (it is refused after fstat).
_OPEN = (os.O_RDWR | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
         | getattr(os, "O_NONBLOCK", 0))
# A counter no ledger reaches (one ticket per write); a larger one is damage.
_MAX_TICKET = 2**48


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

    def _open(self) -> int | None:
        """The side file, open for writing (created now if need be), or None: fall back.

        The name is opened without following a link and only as a regular
        file with one link, owned by this user or by the ledger file's owner:
        a clone or another program can leave a symlink, hard link or FIFO
        there, and every write would otherwise change the file it names. Such
        a file is left alone, with a warning on standard error.
        """
        try:
            import fcntl  # noqa: F401  # POSIX only; elsewhere writers fall back
        except ImportError:
            return None
        ledger = self.path.with_name(self.path.name[:-len(SUFFIX)])
        for _ in range(2):  # a second try when another writer created it meanwhile
            try:
                fd = os.open(self.path, _OPEN)
            except FileNotFoundError:
                try:
                    fd = os.open(self.path, _OPEN | os.O_CREAT | os.O_EXCL, 0o600)
                except FileExistsError:
                    continue
                except OSError:
                    return None
                try:
                    os.fchmod(fd, _mode_for(ledger))
                except OSError:
                    pass
                return fd
            except OSError as exc:
                if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
                    return None  # a ledger this process may not queue on: no warning
                self._warn("is a symbolic link" if exc.errno == errno.ELOOP else
                           f"cannot be opened ({exc.strerror})")
                return None
            problem = _unsafe(fd, ledger)
            if problem is None:
                return fd
            os.close(fd)
            self._warn(problem)
            return None
        return None

    def _warn(self, problem: str) -> None:
        sys.stderr.write(f"assay: warning: the writers' queue {self.path} {problem}; writes wait "
                         "on SQLite's own lock instead (remove that file to restore the queue)\n")

    def acquire(self, timeout: float) -> Callable[[], None] | None:
        """Wait for the turn to write, at most ``timeout`` seconds.

        Returns the function that hands the turn on; None when there is no
        queue (the side file cannot be had). Raises :class:`TimeoutError`
        when the turn did not come within ``timeout``.
        """
        if self.available is False:
            return None
        fd = self._fd
        if fd is None:
            fd = self._fd = self._open()
            self.available = fd is not None
            if fd is None:
                return None
        deadline = time.monotonic() + timeout
        try:
            if _TICKETS:
                ticket, ready = _take_ticket(fd, deadline)

                def wait_turn() -> bool:
                    return _range_lock(fd, _SLOTS + ticket - 1, wait=True)
            else:
                ready = _flock_now(fd)

                def wait_turn() -> bool:
                    return _flock_now(fd, wait=True)
            if not ready:
                _wait(fd, max(0.0, deadline - time.monotonic()), self.path, wait_turn)
        except _Abandoned:
            self._fd = None  # the helper thread closes it when the turn comes
            raise
        except (_Damaged, OSError) as exc:
            self._fd = None
            os.close(fd)  # gives the place up, and with it any turn
            if isinstance(exc, TimeoutError):
                raise
            self.available = False
            self._warn(str(exc) if isinstance(exc, _Damaged) else
                       f"cannot be used ({exc.strerror or exc})")
            return None
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


def _take_ticket(fd: int, deadline: float) -> tuple[int, bool]:
    """Take the next ticket under the counter's flock; with whether the turn is ours already.

    Writers hold the flock for a few system calls only, so it is tried
    without blocking until ``deadline`` (:class:`TimeoutError` then): a
    process that holds it for good delays a writer by the bound, no more.
    """
    pause = 0.001
    while True:
        try:
            _fcntl.flock(fd, _fcntl.LOCK_EX | _fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise TimeoutError("the writers' queue counter stayed locked") from None
            time.sleep(pause)
            pause = min(pause * 2, 0.02)
    try:
        raw = os.pread(fd, 8, 0)
        last = int.from_bytes(raw, "little") if len(raw) == 8 else 0
        if len(raw) not in (0, 8) or last >= _MAX_TICKET:
            raise _Damaged(f"holds a damaged counter ({raw.hex()[:16] or 'empty'})")
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


def _unsafe(fd: int, ledger: Path) -> str | None:
    """Why the open side file must not be used (None when it is the queue's own file)."""
    import stat

    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        return "is not a regular file"
    if info.st_nlink != 1:
        return "has other hard links"
    owners = {os.geteuid()}
    try:
        owners.add(os.stat(ledger).st_uid)
    except OSError:
        pass
    if info.st_uid not in owners:
        return "belongs to another user"
    return None


class _Damaged(Exception):
    """The side file's counter holds no ticket number a writer could have written."""


class _Abandoned(TimeoutError):
    """A wait that gave up: its descriptor now belongs to the helper thread."""
