"""What sealing and chaining every version costs: put, get and ``ledger verify``.

Every appended version is sealed (``version_sha256`` over its fields) and
chained (``chain_sha256``); every read of a version's data checks its seal;
``ledger verify`` walks the whole chain. The baselines, measured in the same
run:

- put and get: the same calls with the seal left out. On SQLite the writer's
  two digest functions are swapped for ones that return an empty string, on
  PostgreSQL the sealing trigger is disabled on a second ledger; reads build
  records without their seal (no check). Everything else (validation, the
  statements, the fsync) is identical, so the ratio is the seal's own cost.
  The rows with ``synchronous=OFF`` / ``synchronous_commit = off`` take the
  disk out, which is where the cost shows most.
- ``ledger verify``: the walk over 10,000 versions of 2 KB records, against
  fetching the same rows in the same order (the read alone); the ratio is
  the walk's own hashing.

With and without alternate sample by sample so both meet the same load; the
fastest sample of each is kept (a shared machine's noise is far larger than
the difference measured).
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from assay.ledger import Write, open_store
from assay.ledger import sql as sql_module
from assay.ledger import write as write_module
from assay.ledger.chain import CHAIN_COLUMNS
from bench.harness import row

SCOPE = "project:bench"
PAYLOAD = {"text": "x" * 1800, "tags": ["a", "b", "c"], "n": 42}  # about 2 KB canonical


@contextmanager
def _unsealed_writes() -> Iterator[None]:
    """SQLite puts as before the seal: no version or chain digest computed."""
    version_digest, chain_digest = write_module.version_digest, write_module.chain_digest
    write_module.version_digest = lambda values: ""  # type: ignore[assignment]
    write_module.chain_digest = lambda previous, sealed: ""  # type: ignore[assignment]
    try:
        yield
    finally:
        write_module.version_digest, write_module.chain_digest = version_digest, chain_digest


@contextmanager
def _unchecked_reads() -> Iterator[None]:
    """Reads as before the seal: records are built without it, so it is never checked."""
    stored_record = sql_module.stored_record
    sql_module.stored_record = lambda row, damage, seal=None: stored_record(row, damage)  # type: ignore[assignment]
    try:
        yield
    finally:
        sql_module.stored_record = stored_record


def _alternate(with_seal: Callable[[], Any], without: Callable[[], Any],
               runs: int) -> tuple[float, float, float]:
    """Best seconds of each, alternating pair by pair; (with, without, spread of with)."""
    after: list[float] = []
    before: list[float] = []
    with_seal()
    without()
    for index in range(runs):
        for sealed in ((True, False) if index % 2 == 0 else (False, True)):
            start = time.perf_counter()
            (with_seal if sealed else without)()
            (after if sealed else before).append(time.perf_counter() - start)
    return min(after), min(before), statistics.median(after) - min(after)


class _Counter:
    def __init__(self) -> None:
        self.n = 0

    def next(self, count: int) -> range:
        start = self.n
        self.n += count
        return range(start, self.n)


def _puts(store: Any, prefix: str, counter: _Counter, count: int,
          unsealed: Callable[[], Any] | None = None) -> Callable[[], None]:
    def puts() -> None:
        context = unsealed() if unsealed is not None else _nothing()
        with context:
            for i in counter.next(count):
                store.put(Write(id=f"knowledge:{prefix}{i}", data=PAYLOAD, scope=SCOPE))
    return puts


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def _gets(store: Any, prefix: str, written: int, count: int,
          unchecked: bool) -> Callable[[], None]:
    def gets() -> None:
        with _unchecked_reads() if unchecked else _nothing(), store.reader() as r:
            for i in range(count):
                record = r.get(f"knowledge:{prefix}{i % written}")
                record.data  # noqa: B018  # the read a caller makes
    return gets


def _fill(store: Any, prefix: str, n: int) -> None:
    for start in range(0, n, 500):
        store.put_many([Write(id=f"knowledge:{prefix}{i}", data=PAYLOAD, scope=SCOPE)
                        for i in range(start, min(n, start + 500))])


def _walk_rows(store: Any, runs: int, label: str) -> dict[str, Any]:
    """ledger verify's walk against fetching the same rows in order."""
    columns = ", ".join(CHAIN_COLUMNS)
    versions = store.info().ledger_revision

    def walk() -> None:
        assert store.walk_chain().versions == versions

    def fetch() -> None:
        with store.reader() as r:
            r._cur.execute(f"SELECT {columns} FROM record_versions ORDER BY ledger_revision")
            assert len(r._cur.fetchall()) == versions

    ours, base, spread = _alternate(walk, fetch, runs)
    return row(f"ledger verify: walk {versions:,} versions of 2 KB records, {label}",
               assay=ours, baseline=base, unit="s", spread=spread, runs=runs,
               baseline_name="fetching the same rows in ledger revision order",
               note=f"{ours / versions * 1e6:.1f} us per version")


def _read_rows(store: Any, versions: int, count: int, runs: int, quick: bool,
               label: str) -> list[dict[str, Any]]:
    """A ledger of ``versions`` versions: gets with and without the seal check, then the walk."""
    _fill(store, "w", versions)
    ours, base, spread = _alternate(_gets(store, "w", versions, count, False),
                                    _gets(store, "w", versions, count, True), runs)
    return [row(f"{label.lower()} get with the seal check: {count} reads of 2 KB records",
                assay=ours, baseline=base, unit="s", spread=spread, runs=runs,
                baseline_name="the same reads without the seal check"),
            _walk_rows(store, 3 if quick else 7, label)]


def _sqlite_rows(tmp: Path, quick: bool) -> list[dict[str, Any]]:
    runs = 5 if quick else 15
    count = 50 if quick else 200
    rows = []
    for durable in (True, False):
        sealed = open_store(tmp / f"sealed-{durable}.db")
        plain = open_store(tmp / f"plain-{durable}.db")
        if not durable:
            for store in (sealed, plain):
                store._conn.execute("PRAGMA synchronous = OFF")
        try:
            ours, base, spread = _alternate(
                _puts(sealed, "s", _Counter(), count),
                _puts(plain, "p", _Counter(), count, _unsealed_writes), runs)
            what = "durable" if durable else "synchronous=OFF"
            rows.append(row(f"sqlite put with seal and chain ({what}): {count} puts of 2 KB",
                            assay=ours, baseline=base, unit="s", spread=spread, runs=runs,
                            baseline_name="the same puts without the seal"))
        finally:
            sealed.close()
            plain.close()
    versions = 1_000 if quick else 10_000
    store = open_store(tmp / "walk.db")
    try:
        rows += _read_rows(store, versions, count, runs, quick, "SQLite")
    finally:
        store.close()
    return rows


def _postgres_rows(url: str, quick: bool) -> list[dict[str, Any]]:
    import psycopg

    runs = 5 if quick else 15
    count = 50 if quick else 200
    schemas = {name: "bench_" + uuid.uuid4().hex[:10] for name in ("sealed", "plain")}
    stores = {name: open_store(f"{url}{'&' if '?' in url else '?'}assay_schema={schema}")
              for name, schema in schemas.items()}
    admin = psycopg.connect(url, autocommit=True)
    try:
        admin.execute(f"ALTER TABLE {schemas['plain']}.record_versions "
                      "DISABLE TRIGGER assay_seal_version")
        for store in stores.values():
            store._conn.execute("SET synchronous_commit = off")
        ours, base, spread = _alternate(_puts(stores["sealed"], "s", _Counter(), count),
                                        _puts(stores["plain"], "p", _Counter(), count), runs)
        rows = [row(f"postgresql put with the sealing trigger (synchronous_commit = off): "
                    f"{count} puts of 2 KB", assay=ours, baseline=base, unit="s",
                    spread=spread, runs=runs,
                    baseline_name="the same puts with the trigger disabled")]
        versions = 1_000 if quick else 10_000
        sealed = stores["sealed"]
        rows += _read_rows(sealed, versions, count, runs, quick, "PostgreSQL")
    finally:
        for store in stores.values():
            store.close()
        for schema in schemas.values():
            admin.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        admin.close()
    return rows


def run(quick: bool = False) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="assay-bench-") as tmp:
        rows = _sqlite_rows(Path(tmp), quick)
    url = os.environ.get("ASSAY_TEST_POSTGRES_URL") or os.environ.get("ASSAY_BENCH_POSTGRES_URL")
    if url:
        rows += _postgres_rows(url, quick)
    return rows
