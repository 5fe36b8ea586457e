"""A process that takes one real lock on a ledger and holds it until killed (run as a script).

``flock PATH``: an exclusive ``flock`` of a file (the SQLite writers' queue's side file, whose
counter every writer locks for a moment).

``immediate DB``: ``BEGIN IMMEDIATE`` on a SQLite ledger file (its write lock).

``exclusive DB``: a SQLite connection in exclusive locking mode that has written: no other
connection can read or write the file.

``advisory URL SCHEMA``: the PostgreSQL ledger's write lock (the session advisory lock every
write transaction of that schema waits for).

``table URL SCHEMA``: ``LOCK TABLE record_versions IN EXCLUSIVE MODE`` (rows cannot be added).

``access URL SCHEMA``: ``LOCK TABLE record_versions IN ACCESS EXCLUSIVE MODE`` (not even read).

Prints ``holding`` once the lock is held, then sleeps until killed.
"""

from __future__ import annotations

import sys
import time


def _sqlite(path: str, *statements: str) -> object:
    import sqlite3

    conn = sqlite3.connect(path, isolation_level=None, timeout=30)
    for statement in statements:
        conn.execute(statement)
    return conn


def _postgres(url: str, schema: str, *statements: str) -> object:
    import psycopg

    conn = psycopg.connect(url, autocommit=True)
    conn.execute(f"SET search_path TO {schema}")
    for statement in statements:
        conn.execute(statement)
    return conn


def main(mode: str, *args: str) -> None:
    kept: object
    if mode == "flock":
        import fcntl
        import os

        fd = os.open(args[0], os.O_RDWR)
        fcntl.flock(fd, fcntl.LOCK_EX)
        kept = fd
    elif mode == "immediate":
        kept = _sqlite(args[0], "BEGIN IMMEDIATE")
    elif mode == "exclusive":
        kept = _sqlite(args[0], "PRAGMA locking_mode = EXCLUSIVE", "BEGIN EXCLUSIVE",
                       "CREATE TABLE IF NOT EXISTS held (x)", "COMMIT",
                       "SELECT count(*) FROM record_versions")
    elif mode == "advisory":
        kept = _postgres(args[0], args[1], "SELECT pg_advisory_lock(1634956130, "
                         "'record_versions'::regclass::oid::int)")
    elif mode == "table":
        kept = _postgres(args[0], args[1], "BEGIN",
                         "LOCK TABLE record_versions IN EXCLUSIVE MODE")
    elif mode == "access":
        kept = _postgres(args[0], args[1], "BEGIN",
                         "LOCK TABLE record_versions IN ACCESS EXCLUSIVE MODE")
    else:
        raise SystemExit(f"unknown mode {mode}")
    print("holding", flush=True)
    while kept is not None:
        time.sleep(60)


if __name__ == "__main__":
    main(*sys.argv[1:])
