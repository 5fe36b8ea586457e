"""The embedded SQLite backend (stdlib ``sqlite3``, WAL, durable commits).

Writers first queue on the ledger's writers' queue (an ``flock`` of a side
file, :mod:`assay.ledger.write_queue`), which hands the turn from writer to
writer in close to arrival order, then run ``BEGIN IMMEDIATE`` transactions: the write lock is taken
before anything is read, so two writers never both pass a compare-and-set
check (a plain ``BEGIN`` would upgrade late and fail at once with "database is
locked" under contention). ``synchronous=FULL`` makes an acknowledged write
survive power loss, not only a crash. Reads run in a deferred transaction,
which in WAL mode is a consistent snapshot and never blocks writers.
"""

from __future__ import annotations

import os
import sqlite3
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from assay.errors import AssayError, UnavailableError
from assay.ledger.sql import SqlLedger, index_keys, migration_steps, now_rfc3339
from assay.ledger.store import SCHEMA_VERSION, ledger_not_found
from assay.ledger.write_queue import WriteQueue

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["SqliteStore"]

_BUSY_TIMEOUT_MS = 30_000


class SqliteStore(SqlLedger):
    """A ledger in one SQLite file. See :class:`~assay.ledger.store.Store`."""

    dialect = "sqlite"
    backend = "sqlite"
    # How long a write waits for its turn, in the writers' queue and then for
    # SQLite's lock together, before it gives up with ledger_busy.
    busy_timeout_ms = _BUSY_TIMEOUT_MS

    def __init__(self, path: str | os.PathLike[str], *, principal: str | None = None,
                 create: bool = True) -> None:
        self.principal = principal
        self.path = Path(path)
        self.location = str(self.path)
        self._create = create
        self._queue = WriteQueue(self.path)
        try:
            if create:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                target: str | Path = self.path
            elif not self.path.is_file():
                raise ledger_not_found(self.location)
            else:
                # mode=rw: the file must exist; SQLite never creates one here.
                target = "file:" + urllib.parse.quote(str(self.path.absolute())) + "?mode=rw"
            self._conn = sqlite3.connect(target, isolation_level=None,
                                         timeout=_BUSY_TIMEOUT_MS / 1000,
                                         check_same_thread=False, uri=not create)
        except (OSError, sqlite3.Error) as exc:
            raise UnavailableError(f"cannot open the ledger at {self.path}: {exc}",
                                   code="ledger_unavailable") from None
        try:
            if not create and self._conn.execute(
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'ledger_meta'"
            ).fetchone() is None:
                # An empty or foreign SQLite file: not a ledger, and a read makes none of it.
                raise ledger_not_found(self.location)
            self._conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute("PRAGMA synchronous = FULL")
            # Reads go through the OS page cache without a copy per page, and a
            # larger page cache keeps point reads flat as the ledger grows.
            self._conn.execute("PRAGMA mmap_size = 268435456")
            self._conn.execute("PRAGMA cache_size = -32768")
            # Every page's cell pointers and sizes are checked as it is read:
            # without it, a damaged index page can steer a point read to "no
            # such record" instead of ledger_corrupt.
            self._conn.execute("PRAGMA cell_size_check = ON")
            self._migrate()
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            raise _storage_error(exc, self.location) from None
        except UnicodeDecodeError:
            # A damaged schema page: SQLite's message quotes the damaged
            # bytes, which Python then cannot decode.
            self._conn.close()
            raise _storage_error(sqlite3.DatabaseError("database disk image is malformed"),
                                 self.location) from None
        except AssayError:
            self._conn.close()
            raise

    def _migrate(self) -> None:
        cur = self._conn.cursor()
        has_meta = cur.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'ledger_meta'").fetchone()
        version = 0
        if has_meta:
            row = cur.execute("SELECT value FROM ledger_meta WHERE key = 'schema_version'").fetchone()
            version = int(row[0]) if row else 0
            if version > SCHEMA_VERSION:
                raise schema_too_new(version, self.location)
            if version == SCHEMA_VERSION:
                return
        from importlib import resources  # only a new or older ledger needs its DDL

        _register_digests(self._conn)
        cur.execute("BEGIN IMMEDIATE")
        try:
            # Statements run one by one: executescript() would commit midway.
            for statement in _statements(resources.files("assay.ledger").joinpath(
                    "schema_sqlite.sql").read_text(encoding="utf-8")):
                cur.execute(statement)
            for statement in migration_steps(self.dialect, version):
                cur.execute(statement)
            if 0 < version < 6:
                index_keys(cur, "?")
            _seed_meta(cur, "?")
            cur.execute("COMMIT")
        except BaseException:
            cur.execute("ROLLBACK")
            raise

    @contextmanager
    def _write_transaction(self) -> Iterator[Any]:
        """A turn in the writers' queue, then SQLite's write lock, within one bound together.

        One generator for both: one context manager on every put instead of
        two (bench_ledger, "sqlite single put").
        """
        bound = self.busy_timeout_ms / 1000
        started = time.monotonic()
        try:
            release = self._queue.acquire(bound)
        except TimeoutError as exc:
            raise UnavailableError(f"the ledger is busy: {exc}", code="ledger_busy") from None
        try:
            cur = self._begin_immediate(bound - (time.monotonic() - started))
            try:
                yield cur
            except sqlite3.Error as exc:
                self._rollback()
                raise _storage_error(exc, self.location) from None
            except BaseException:
                self._rollback()
                raise
            try:
                cur.execute("COMMIT")
            except sqlite3.Error as exc:
                self._rollback()
                raise _storage_error(exc, self.location) from None
        finally:
            if release is not None:
                release()

    def _begin_immediate(self, remaining: float) -> Any:
        """SQLite's write lock, waited for at most ``remaining`` seconds; the cursor that holds it."""
        cur = self._conn.cursor()
        # The connection's own busy timeout is the default bound; a shorter
        # one (what the queue left of it, or a handle given a smaller bound)
        # is set for this one statement.
        waited = remaining < _BUSY_TIMEOUT_MS / 1000 - 0.001
        try:
            if waited:
                cur.execute(f"PRAGMA busy_timeout = {max(1, int(remaining * 1000))}")
            cur.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise _storage_error(exc, self.location) from None
        finally:
            if waited:
                self._conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
        return cur

    @contextmanager
    def _read_transaction(self) -> Iterator[Any]:
        cur = self._conn.cursor()
        try:
            cur.execute("BEGIN")
        except sqlite3.Error as exc:
            raise _storage_error(exc, self.location) from None
        try:
            yield cur
        except sqlite3.Error as exc:
            raise _storage_error(exc, self.location) from None
        finally:
            self._rollback()

    def _rollback(self) -> None:
        # SQLite may already have rolled the transaction back itself (a full
        # disk, an I/O error); a second ROLLBACK would then raise and hide the
        # error that matters.
        if self._conn.in_transaction:
            try:
                self._conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass

    def as_principal(self, principal: str | None) -> SqliteStore:
        """Another handle on this ledger, reading and writing as ``principal``."""
        return SqliteStore(self.path, principal=principal, create=self._create)

    def close(self) -> None:
        self._conn.close()
        self._queue.close()


def _storage_error(exc: sqlite3.Error, location: str) -> AssayError:
    """Translate a storage failure into an error with a stable code (never a traceback).

    A failed statement inside a write transaction has rolled it back first, so
    whatever the code, nothing of the write was committed.
    """
    text = str(exc)
    code = getattr(exc, "sqlite_errorname", "")
    if code == "SQLITE_FULL" or "disk is full" in text:
        return UnavailableError(f"the ledger's disk is full: {text}", code="ledger_disk_full",
                                action="Free disk space, then retry the write.")
    if code.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or "malformed" in text \
            or "not a database" in text:
        return UnavailableError(
            f"the ledger at {location} is damaged: {text}", code="ledger_corrupt", retryable=False,
            action="Restore the ledger file from a backup or point --db at another ledger.")
    if code.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in text:
        return UnavailableError(f"the ledger is busy: {text}", code="ledger_busy")
    return UnavailableError(f"the ledger at {location} cannot be used: {text}",
                            code="ledger_unavailable")


def schema_too_new(version: int, location: str) -> AssayError:
    """The error for a ledger written by a newer assay."""
    return UnavailableError(
        f"the ledger at {location} has schema version {version}; this assay understands "
        f"up to {SCHEMA_VERSION}",
        code="schema_too_new",
        retryable=False,
        details={"schema_version": version, "supported": SCHEMA_VERSION},
        action="Upgrade assay to a version that knows this ledger's schema.",
    )


def _register_digests(conn: sqlite3.Connection) -> None:
    """The digest functions a migration seals existing versions with (as the PostgreSQL server has them)."""
    from assay.ledger.record import SEALED_FIELDS, chain_digest, version_digest

    conn.create_function("assay_version_digest", len(SEALED_FIELDS),
                         lambda *values: version_digest(dict(zip(SEALED_FIELDS, values))),
                         deterministic=True)
    conn.create_function("assay_chain_digest", 2, chain_digest, deterministic=True)


def _statements(script: str) -> list[str]:
    """The statements of a DDL script: each ends with ``;`` at the end of a line.

    A trigger's body holds statements of its own: the trigger ends at its ``END;``.
    """
    out: list[str] = []
    current: list[str] = []
    for line in script.splitlines():
        if line.lstrip().startswith("--"):
            continue
        current.append(line)
        text = "\n".join(current).strip()
        if text.endswith(";") and (not text.upper().startswith("CREATE TRIGGER")
                                   or text.upper().endswith("END;")):
            out.append(text[:-1].strip())
            current = []
    rest = "\n".join(current).strip()
    return [*out, rest] if rest else out


def _seed_meta(cur: Any, mark: str) -> None:
    """Mint the epoch once; later migrations only bump the version."""
    import secrets

    cur.execute(f"INSERT INTO ledger_meta (key, value) VALUES ('epoch', {mark}) "
                "ON CONFLICT (key) DO NOTHING", (secrets.token_hex(16),))
    cur.execute(f"INSERT INTO ledger_meta (key, value) VALUES ('created_at', {mark}) "
                "ON CONFLICT (key) DO NOTHING", (now_rfc3339(),))
    cur.execute(f"INSERT INTO ledger_meta (key, value) VALUES ('schema_version', {mark}) "
                f"ON CONFLICT (key) DO UPDATE SET value = {mark}",
                (str(SCHEMA_VERSION), str(SCHEMA_VERSION)))
