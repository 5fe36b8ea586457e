"""Ledger throughput and latency against raw driver loops doing the same durable writes.

Baselines, measured in the same run with the same durability settings:
- SQLite: a raw ``sqlite3`` loop (WAL, synchronous=FULL, one ``BEGIN IMMEDIATE``
  transaction per insert) writing rows of the same size; for batches,
  ``executemany`` of the same batch size per transaction.
- PostgreSQL: a raw ``psycopg`` loop, one committed INSERT per write.
Point reads are compared with a raw ``SELECT ... WHERE id = ?``.
The scaling series checks that point read and put latency stay flat as the
ledger grows (10k / 100k / 1M records; quick mode stops at 100k).
"""

from __future__ import annotations

import os
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from assay.ledger import Write, open_store
from assay.ledger.store import validate_write
from bench.harness import row

SCOPE = "project:bench"
GROUPS = 15  # groups of chunks per paired measurement (for the spread)
PAYLOAD = {"text": "x" * 1800, "tags": ["a", "b", "c"], "n": 42}  # about 2 KB canonical


def _paired(n: int, raw: Any, ours: Any, *, chunk: int = 10, groups: int = GROUPS,
            first: int = 0) -> tuple[float, float, float]:
    """Time the baseline and assay over ``n`` items, alternating in small chunks.

    Each function takes a ``range`` of item numbers (together ``first`` to
    ``first + n``; both sides get the same ranges, for their own stores). The
    items go by in chunks of ``chunk``, each done by both sides back to back,
    in alternating order, so both meet the same moment-to-moment fsync
    latency and load. Returns (assay
    rate, baseline rate, spread): the rates are items over total time, and the
    spread is max minus min of the ratio within each of ``groups`` equal
    groups of chunks.
    """
    chunks = max(groups, n // chunk)
    per_group = chunks // groups
    totals = {"raw": 0.0, "ours": 0.0}
    ratios = []
    for g in range(groups):
        spent = {"raw": 0.0, "ours": 0.0}
        for c in range(g * per_group, (g + 1) * per_group):
            items = range(first + c * chunk, first + (c + 1) * chunk)
            for name, fn in ((("raw", raw), ("ours", ours)) if c % 2 == 0
                             else (("ours", ours), ("raw", raw))):
                start = time.perf_counter()
                fn(items)
                spent[name] += time.perf_counter() - start
        ratios.append(spent["raw"] / spent["ours"])
        totals["raw"] += spent["raw"]
        totals["ours"] += spent["ours"]
    done = groups * per_group * chunk
    return done / totals["ours"], done / totals["raw"], max(ratios) - min(ratios)


def _raw_sqlite(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("CREATE TABLE t (id TEXT PRIMARY KEY, data TEXT NOT NULL) WITHOUT ROWID")
    return conn


def _sqlite_rows(n: int, batch: int) -> list[dict[str, Any]]:
    import json

    text = json.dumps(PAYLOAD)
    with tempfile.TemporaryDirectory(prefix="assay-bench-") as tmp:
        return _sqlite_rows_in(Path(tmp), text, n, batch)


def _raw_puts(raw: sqlite3.Connection, text: str) -> Any:
    """The baseline's single writes: one durable insert transaction per item."""
    def puts(items: range) -> None:
        for i in items:
            raw.execute("BEGIN IMMEDIATE")
            raw.execute("INSERT INTO t VALUES (?, ?)", (f"s{i}", text))
            raw.execute("COMMIT")
    return puts


def _assay_puts(store: Any) -> Any:
    """Assay's single writes, one put per item."""
    def puts(items: range) -> None:
        for i in items:
            store.put(Write(id=f"knowledge:s{i}", data=PAYLOAD, scope=SCOPE))
    return puts


def _sqlite_rows_in(tmp: Path, text: str, n: int, batch: int) -> list[dict[str, Any]]:
    raw = _raw_sqlite(tmp / "raw.db")
    raw_single = _raw_puts(raw, text)

    def raw_batched(items: range) -> None:
        for start in range(items.start, items.stop, batch):
            raw.execute("BEGIN IMMEDIATE")
            raw.executemany("INSERT INTO t VALUES (?, ?)",
                            [(f"b{i}", text) for i in range(start, min(start + batch, items.stop))])
            raw.execute("COMMIT")

    store = open_store(tmp / "ledger.db")
    assay_single = _assay_puts(store)

    def assay_batched(items: range) -> None:
        for start in range(items.start, items.stop, batch):
            store.put_many([Write(id=f"knowledge:b{i}", data=PAYLOAD, scope=SCOPE)
                            for i in range(start, min(start + batch, items.stop))])

    rows = []
    ours, raw_rate, spread = _paired(n, raw_single, assay_single)
    rows.append(row("sqlite single put", assay=ours, baseline=raw_rate, unit="writes/s",
                    baseline_name="raw sqlite3 insert+commit", higher_is_better=True,
                    goal=">= 0.70x", spread=spread, runs=GROUPS))
    # Where a put's time goes: the same puts with every write validated (ids,
    # fields, canonical data, digests) before the clock starts.
    prepared = [validate_write(Write(id=f"knowledge:p{i}", data=PAYLOAD, scope=SCOPE))
                for i in range(n)]

    def assay_storage(items: range) -> None:
        for i in items:
            store._put_prepared(prepared[i - n], None)

    ours, raw_rate, spread = _paired(n, raw_single, assay_storage, first=n)
    rows.append(row("sqlite single put, validated beforehand", assay=ours, baseline=raw_rate,
                    unit="writes/s", baseline_name="raw sqlite3 insert+commit",
                    higher_is_better=True, spread=spread, runs=GROUPS,
                    note="the storage half of a put"))
    # The CPU side alone: both sides with synchronous=OFF (no fsync), so the
    # ratio is what assay's own work costs next to a bare insert.
    raw_cpu = _raw_sqlite(tmp / "raw-cpu.db")
    raw_cpu.execute("PRAGMA synchronous = OFF")
    store_cpu = open_store(tmp / "ledger-cpu.db")
    store_cpu._conn.execute("PRAGMA synchronous = OFF")
    ours, raw_rate, spread = _paired(n * 3, _raw_puts(raw_cpu, text), _assay_puts(store_cpu))
    rows.append(row("sqlite single put, synchronous=OFF on both sides", assay=ours,
                    baseline=raw_rate, unit="writes/s",
                    baseline_name="raw sqlite3 insert+commit, synchronous=OFF",
                    higher_is_better=True, spread=spread, runs=GROUPS,
                    note="CPU only: no fsync on either side"))
    store_cpu.close()
    raw_cpu.close()
    ours, raw_rate, spread = _paired(n * 5, raw_batched, assay_batched, chunk=batch)
    rows.append(row(f"sqlite batched put ({batch}/tx)", assay=ours, baseline=raw_rate,
                    unit="writes/s", baseline_name="raw executemany", higher_is_better=True,
                    spread=spread, runs=GROUPS))

    def raw_get(items: range) -> None:
        for i in items:
            raw.execute("SELECT data FROM t WHERE id = ?", (f"s{i}",)).fetchone()

    def assay_get(items: range) -> None:
        with store.reader() as r:
            for i in items:
                r.get(f"knowledge:s{i}")

    ours, raw_rate, spread = _paired(n, raw_get, assay_get, chunk=100)
    rows.append(row("sqlite get by id", assay=ours, baseline=raw_rate, unit="reads/s",
                    baseline_name="raw SELECT by primary key", higher_is_better=True,
                    spread=spread, runs=GROUPS))
    store.close()
    raw.close()
    return rows


def _postgres_rows(url: str, n: int) -> list[dict[str, Any]]:
    import json
    import uuid

    import psycopg

    schema = "bench_" + uuid.uuid4().hex[:10]
    text = json.dumps(PAYLOAD)
    raw = psycopg.connect(url, autocommit=True)
    raw.execute(f"CREATE SCHEMA {schema}")
    raw.execute(f"CREATE TABLE {schema}.t (id TEXT PRIMARY KEY, data TEXT NOT NULL)")
    store = open_store(f"{url}{'&' if '?' in url else '?'}assay_schema={schema}_l")
    try:
        def raw_single(items: range) -> None:
            for i in items:
                raw.execute(f"INSERT INTO {schema}.t VALUES (%s, %s)", (f"s{i}", text))

        assay_single = _assay_puts(store)

        def raw_get(items: range) -> None:
            for i in items:
                raw.execute(f"SELECT data FROM {schema}.t WHERE id = %s", (f"s{i}",)).fetchone()

        def assay_get(items: range) -> None:
            with store.reader() as r:
                for i in items:
                    r.get(f"knowledge:s{i}")

        prepared = [validate_write(Write(id=f"knowledge:p{i}", data=PAYLOAD, scope=SCOPE))
                    for i in range(n)]

        def assay_storage(items: range) -> None:
            for i in items:
                store._put_prepared(prepared[i - n], None)

        put_ours, put_raw, put_spread = _paired(n, raw_single, assay_single)
        storage_ours, storage_raw, storage_spread = _paired(n, raw_single, assay_storage, first=n)
        get_ours, get_raw, get_spread = _paired(n, raw_get, assay_get, chunk=100)
        rows = [
            row("postgresql single put", assay=put_ours, baseline=put_raw, unit="writes/s",
                baseline_name="raw psycopg insert (autocommit)", higher_is_better=True,
                goal=">= 0.70x", spread=put_spread, runs=GROUPS),
            row("postgresql single put, validated beforehand", assay=storage_ours,
                baseline=storage_raw, unit="writes/s",
                baseline_name="raw psycopg insert (autocommit)", higher_is_better=True,
                spread=storage_spread, runs=GROUPS, note="the storage half of a put"),
            row("postgresql get by id", assay=get_ours, baseline=get_raw, unit="reads/s",
                baseline_name="raw SELECT by primary key", higher_is_better=True,
                spread=get_spread, runs=GROUPS),
        ]
    finally:
        store.close()
        raw.execute(f"DROP SCHEMA {schema} CASCADE")
        raw.execute(f"DROP SCHEMA IF EXISTS {schema}_l CASCADE")
        raw.close()
    return rows


def _scaling_rows(sizes: list[int]) -> list[dict[str, Any]]:
    """Point read and put latency at growing ledger sizes, against the smallest size.

    The ledger is filled in batches of 1,000 to each size in turn. At every size,
    the probes touch ids spread over the whole ledger (a fixed pseudo-random
    sequence, so a run is repeatable); each figure is the median of several probe
    rounds with their spread. A put probe writes a new version of an existing
    record, the common case once a ledger is large. Flat ratios mean the lookups
    go through indexes, not scans.
    """
    import random

    rng = random.Random(20261130)
    small = {"i": 0}
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="assay-bench-scale-") as tmp:
        store = open_store(Path(tmp) / "ledger.db")
        try:
            filled = 0
            first: tuple[float, float] | None = None
            for size in sizes:
                while filled < size:
                    step = min(1000, size - filled)
                    store.put_many([Write(id=f"knowledge:r{filled + j}", data=small, scope=SCOPE)
                                    for j in range(step)])
                    filled += step
                # The bulk fill leaves a large write-ahead log; fold it into the
                # database first so the probes measure steady-state puts, not the
                # fill's checkpoint debt.
                with sqlite3.connect(Path(tmp) / "ledger.db") as side:
                    side.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                reads: list[float] = []
                puts: list[float] = []
                for round_ in range(6):
                    ids = [f"knowledge:r{rng.randrange(size)}" for _ in range(200)]
                    start = time.perf_counter()
                    with store.reader() as r:
                        for record_id in ids:
                            r.get(record_id)
                    reads.append((time.perf_counter() - start) / len(ids) * 1e6)
                    start = time.perf_counter()
                    for j, record_id in enumerate(ids[:40]):
                        store.put(Write(id=record_id, data={"i": j}, scope=SCOPE))
                    if round_:  # the first round warms the caches and is discarded
                        puts.append((time.perf_counter() - start) / 40 * 1e6)
                    else:
                        reads.pop()
                read_us, put_us = statistics.median(reads), statistics.median(puts)
                if first is None:
                    first = (read_us, put_us)
                rows.append(row(f"point read at {size:,} records", assay=read_us,
                                baseline=first[0], unit="us", spread=max(reads) - min(reads),
                                runs=len(reads), baseline_name=f"point read at {sizes[0]:,}",
                                goal="flat (~1x)"))
                rows.append(row(f"put at {size:,} records", assay=put_us, baseline=first[1],
                                unit="us", spread=max(puts) - min(puts), runs=len(puts),
                                baseline_name=f"put at {sizes[0]:,}", goal="flat (~1x)"))
        finally:
            store.close()
    return rows


def _history_rows(records: int, versions: int) -> list[dict[str, Any]]:
    """Reads over records with long histories, against the same records with one version each.

    A record's current version is its highest revision, so a scan by kind
    checks every version it passes; a read of known ids takes each id's
    highest revision from the index alone.
    """
    from bench.harness import median_time

    def fill(store: Any, depth: int) -> None:
        for v in range(depth):
            store.put_many([Write(id=f"task:t{i}", data={"v": v, "text": f"task {i}"}, scope=SCOPE)
                            for i in range(records)])

    ids = [f"task:t{i}" for i in range(0, records, 2)]
    out: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="assay-bench-history-") as tmp:
        shallow, deep = open_store(Path(tmp) / "shallow.db"), open_store(Path(tmp) / "deep.db")
        try:
            fill(shallow, 1)
            fill(deep, versions)
            for name, read in (
                (f"find by kind, all {records:,} records", lambda r: r.find(kind="task",
                                                                            limit=records)),
                (f"get_many, {len(ids):,} of {records:,} records", lambda r: r.get_many(ids)),
            ):
                timings = []
                for store in (deep, shallow):
                    with store.reader() as r:
                        timings.append(median_time(lambda r=r, read=read: read(r), runs=7))
                (ours, spread), (base, _) = timings
                out.append(row(f"{name}, {versions} versions each", assay=ours * 1e3,
                               baseline=base * 1e3, unit="ms", spread=spread * 1e3, runs=7,
                               baseline_name="the same records with 1 version each"))
        finally:
            shallow.close()
            deep.close()
    return out


def run(quick: bool = False) -> list[dict[str, Any]]:
    n = 300 if quick else 3000
    rows = _sqlite_rows(n, batch=100)
    url = os.environ.get("ASSAY_TEST_POSTGRES_URL") or os.environ.get("ASSAY_BENCH_POSTGRES_URL")
    if url:
        rows += _postgres_rows(url, n)
    rows += _history_rows(records=1000, versions=5 if quick else 20)
    rows += _scaling_rows([10_000, 100_000] if quick else [10_000, 100_000, 1_000_000])
    return rows
