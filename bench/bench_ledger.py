"""Ledger throughput and latency against raw driver loops doing the same durable writes.

Baselines, measured in the same run with the same durability and cache settings:
- SQLite: a raw ``sqlite3`` loop on an ordinary rowid table with a unique index
  on ``id`` (WAL, synchronous=FULL, assay's mmap and page-cache sizes), one
  ``BEGIN IMMEDIATE`` transaction and one ``json.dumps`` per insert; for
  batches, ``executemany`` of the same batch size per transaction.
- PostgreSQL: a raw ``psycopg`` loop, one committed INSERT (and one
  ``json.dumps``) per write; for batches, ``executemany`` (which psycopg
  pipelines) of the same batch size in one transaction. The CPU-only rows
  set ``synchronous_commit = off`` on both connections.
Point reads are compared with a raw ``SELECT ... WHERE id = ?`` and
``json.loads`` of the row, inside one read transaction per chunk, as assay
reads inside one snapshot.
Two 2 KB payloads (see :mod:`bench.payloads`): one long string, and 129 short
values in nested objects, which is what canonical encoding pays for.
The scaling series checks that point read and put latency stay flat as the
ledger grows (10k / 100k / 1M records; quick mode stops at 100k), probing the
ledgers of every size in turn, round after round.
"""

from __future__ import annotations

import json
import os
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from assay.ledger import Write, open_store
from assay.ledger.store import validate_write
from bench import checked
from bench.harness import row
from bench.payloads import LONG_STRING, value_rich

SCOPE = "project:bench"
GROUPS = 15  # groups of chunks per paired measurement (for the spread)
PAYLOADS = {"2 KB, one long string": LONG_STRING, "2 KB, 129 values": value_rich()}
PAYLOAD = LONG_STRING  # the payload of the rows that do not name one
BATCH = 100  # writes per batch in the batched rows


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


def _written(n: int, chunk: int = 10) -> int:
    """How many items :func:`_paired` goes through for ``n`` (ids 0 to this minus 1)."""
    return GROUPS * (max(GROUPS, n // chunk) // GROUPS) * chunk


def _raw_sqlite(path: Path) -> sqlite3.Connection:
    """The baseline's connection: assay's durability and cache settings, an ordinary table."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("PRAGMA mmap_size = 268435456")
    conn.execute("PRAGMA cache_size = -32768")
    conn.execute("CREATE TABLE t (id TEXT NOT NULL, data TEXT NOT NULL)")
    conn.execute("CREATE UNIQUE INDEX t_id ON t (id)")
    return conn


def _sqlite_rows(n: int, batch: int) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="assay-bench-") as tmp:
        return _sqlite_rows_in(Path(tmp), n, batch)


def _raw_puts(raw: sqlite3.Connection, payload: Any, prefix: str) -> Any:
    """The baseline's single writes: one json.dumps and one durable insert transaction per item."""
    def puts(items: range) -> None:
        for i in items:
            raw.execute("BEGIN IMMEDIATE")
            raw.execute("INSERT INTO t VALUES (?, ?)", (f"{prefix}{i}", json.dumps(payload)))
            raw.execute("COMMIT")
    return puts


def _assay_puts(store: Any, payload: Any, prefix: str) -> Any:
    """Assay's single writes, one put per item."""
    def puts(items: range) -> None:
        for i in items:
            store.put(Write(id=f"knowledge:{prefix}{i}", data=payload, scope=SCOPE))
    return puts


def _raw_gets(raw: sqlite3.Connection, prefix: str, written: int) -> Any:
    """The baseline's reads: SELECT by id and json.loads, in one read transaction per chunk."""
    def gets(items: range) -> None:
        raw.execute("BEGIN")
        for i in items:
            json.loads(raw.execute("SELECT data FROM t WHERE id = ?",
                                   (f"{prefix}{i % written}",)).fetchone()[0])
        raw.execute("COMMIT")
    return gets


def _assay_gets(store: Any, prefix: str, written: int, *, data: bool = True) -> Any:
    """Assay's reads of the same ids, in one reader (snapshot) per chunk.

    With ``data``, each record's data is read too (decoded and checked against
    its digest), as the baseline's ``json.loads`` does; without, the record is
    only fetched (its data decodes when first used).
    """
    def gets(items: range) -> None:
        with store.reader() as r:
            for i in items:
                record = r.get(f"knowledge:{prefix}{i % written}")
                if data:
                    record.data  # noqa: B018  # the read a caller makes
    return gets


def _checked_gets(conn: sqlite3.Connection, prefix: str, written: int) -> Any:
    """The same reads of assay's ledger file by hand, with the checks every read makes
    (:mod:`bench.checked`), in one read transaction per chunk."""
    def gets(items: range) -> None:
        conn.execute("BEGIN")
        for i in items:
            checked.get(conn, f"knowledge:{prefix}{i % written}")
        conn.execute("COMMIT")
    return gets


def _sqlite_rows_in(tmp: Path, n: int, batch: int) -> list[dict[str, Any]]:
    raw = _raw_sqlite(tmp / "raw.db")
    store = open_store(tmp / "ledger.db")
    rows = []
    written = _written(n)
    for index, (label, payload) in enumerate(PAYLOADS.items()):
        prefix = f"s{index}-"
        ours, raw_rate, spread = _paired(n, _raw_puts(raw, payload, prefix),
                                         _assay_puts(store, payload, prefix))
        rows.append(row(f"sqlite single put ({label})", assay=ours, baseline=raw_rate,
                        unit="writes/s", baseline_name="raw sqlite3 json.dumps+insert+commit",
                        higher_is_better=True, goal=">= 0.70x", spread=spread, runs=GROUPS))
    # Where a put's time goes: the same puts with every write validated (ids,
    # fields, canonical data, digests) before the clock starts.
    prepared = [validate_write(Write(id=f"knowledge:p{i}", data=PAYLOAD, scope=SCOPE))
                for i in range(n)]

    def assay_storage(items: range) -> None:
        for i in items:
            store._put_prepared(prepared[i - n], None)

    ours, raw_rate, spread = _paired(n, _raw_puts(raw, PAYLOAD, "p"), assay_storage, first=n)
    rows.append(row("sqlite single put, validated beforehand", assay=ours, baseline=raw_rate,
                    unit="writes/s", baseline_name="raw sqlite3 json.dumps+insert+commit",
                    higher_is_better=True, spread=spread, runs=GROUPS,
                    note="the storage half of a put"))
    # The CPU side alone: both sides with synchronous=OFF (no fsync), so the
    # ratio is what assay's own work costs next to a bare insert.
    raw_cpu = _raw_sqlite(tmp / "raw-cpu.db")
    raw_cpu.execute("PRAGMA synchronous = OFF")
    store_cpu = open_store(tmp / "ledger-cpu.db")
    store_cpu._conn.execute("PRAGMA synchronous = OFF")
    for index, (label, payload) in enumerate(PAYLOADS.items()):
        prefix = f"c{index}-"
        ours, raw_rate, spread = _paired(n * 3, _raw_puts(raw_cpu, payload, prefix),
                                         _assay_puts(store_cpu, payload, prefix))
        rows.append(row(f"sqlite single put, synchronous=OFF on both sides ({label})",
                        assay=ours, baseline=raw_rate, unit="writes/s",
                        baseline_name="raw sqlite3 json.dumps+insert+commit, synchronous=OFF",
                        higher_is_better=True, spread=spread, runs=GROUPS,
                        note="CPU only: no fsync on either side"))
    store_cpu.close()
    raw_cpu.close()
    for index, (label, payload) in enumerate(PAYLOADS.items()):
        prefix = f"b{index}-"

        def raw_batched(items: range, payload: Any = payload, prefix: str = prefix) -> None:
            for start in range(items.start, items.stop, batch):
                raw.execute("BEGIN IMMEDIATE")
                raw.executemany("INSERT INTO t VALUES (?, ?)", [
                    (f"{prefix}{i}", json.dumps(payload))
                    for i in range(start, min(start + batch, items.stop))])
                raw.execute("COMMIT")

        def assay_batched(items: range, payload: Any = payload, prefix: str = prefix) -> None:
            for start in range(items.start, items.stop, batch):
                store.put_many([Write(id=f"knowledge:{prefix}{i}", data=payload, scope=SCOPE)
                                for i in range(start, min(start + batch, items.stop))])

        ours, raw_rate, spread = _paired(n * 5, raw_batched, assay_batched, chunk=batch)
        rows.append(row(f"sqlite batched put ({batch}/tx, {label})", assay=ours,
                        baseline=raw_rate, unit="writes/s",
                        baseline_name="raw json.dumps+executemany", higher_is_better=True,
                        spread=spread, runs=GROUPS))
    for index, label in enumerate(PAYLOADS):
        prefix = f"s{index}-"
        ours, raw_rate, spread = _paired(n, _raw_gets(raw, prefix, written),
                                         _assay_gets(store, prefix, written), chunk=100)
        rows.append(row(f"sqlite get by id ({label})", assay=ours, baseline=raw_rate,
                        unit="reads/s", goal=">= 0.6x",
                        baseline_name="raw SELECT by id + json.loads, in a transaction",
                        higher_is_better=True, spread=spread, runs=GROUPS,
                        note=f"reads the {written:,} records the single puts wrote, "
                             "and each one's data (decoded, digest checked)"))
        ours, raw_rate, spread = _paired(n, _raw_gets(raw, prefix, written),
                                         _assay_gets(store, prefix, written, data=False),
                                         chunk=100)
        rows.append(row(f"sqlite get by id, data not read ({label})", assay=ours,
                        baseline=raw_rate, unit="reads/s",
                        baseline_name="raw SELECT by id + json.loads, in a transaction",
                        higher_is_better=True, spread=spread, runs=GROUPS,
                        note="the record only: its data decodes when first used"))
        # What the checks cost on their own, written by hand, and assay against them.
        by_hand = checked.connect(tmp / "ledger.db")
        ours, raw_rate, spread = _paired(n, _raw_gets(raw, prefix, written),
                                         _checked_gets(by_hand, prefix, written), chunk=100)
        rows.append(row(f"sqlite get by id, the checks by hand ({label})", assay=ours,
                        baseline=raw_rate, unit="reads/s",
                        baseline_name="raw SELECT by id + json.loads, in a transaction",
                        higher_is_better=True, spread=spread, runs=GROUPS,
                        note="bench.checked: the two digests and a strict parse, no assay "
                             "code; the most a checking read can reach against the goal's "
                             "baseline"))
        ours, raw_rate, spread = _paired(n, _checked_gets(by_hand, prefix, written),
                                         _assay_gets(store, prefix, written), chunk=100)
        rows.append(row(f"sqlite get by id, against the checks by hand ({label})",
                        assay=ours, baseline=raw_rate, unit="reads/s",
                        baseline_name="bench.checked: the same reads with the same checks, "
                                      "by hand",
                        higher_is_better=True, spread=spread, runs=GROUPS,
                        note="what assay adds to the checks themselves"))
        by_hand.close()
    store.close()
    raw.close()
    return rows


def _postgres_rows(url: str, n: int) -> list[dict[str, Any]]:
    import uuid

    import psycopg

    schema = "bench_" + uuid.uuid4().hex[:10]
    raw = psycopg.connect(url, autocommit=True)
    raw.execute(f"CREATE SCHEMA {schema}")
    raw.execute(f"CREATE TABLE {schema}.t (id TEXT PRIMARY KEY, data TEXT NOT NULL)")
    store = open_store(f"{url}{'&' if '?' in url else '?'}assay_schema={schema}_l")
    written = _written(n)
    try:
        def raw_single(items: range) -> None:
            for i in items:
                raw.execute(f"INSERT INTO {schema}.t VALUES (%s, %s)",
                            (f"s{i}", json.dumps(PAYLOAD)))

        def raw_get(items: range) -> None:
            with raw.transaction():
                for i in items:
                    found = raw.execute(f"SELECT data FROM {schema}.t WHERE id = %s",
                                        (f"s{i % written}",)).fetchone()
                    assert found is not None
                    json.loads(found[0])

        prepared = [validate_write(Write(id=f"knowledge:p{i}", data=PAYLOAD, scope=SCOPE))
                    for i in range(n)]

        def assay_storage(items: range) -> None:
            for i in items:
                store._put_prepared(prepared[i - n], None)

        def raw_batched(items: range) -> None:
            for start in range(items.start, items.stop, BATCH):
                with raw.transaction():
                    raw.cursor().executemany(f"INSERT INTO {schema}.t VALUES (%s, %s)", [
                        (f"b{i}", json.dumps(PAYLOAD))
                        for i in range(start, min(start + BATCH, items.stop))])

        def assay_batched(items: range) -> None:
            for start in range(items.start, items.stop, BATCH):
                store.put_many([Write(id=f"knowledge:b{i}", data=PAYLOAD, scope=SCOPE)
                                for i in range(start, min(start + BATCH, items.stop))])

        put_ours, put_raw, put_spread = _paired(n, raw_single, _assay_puts(store, PAYLOAD, "s"))
        batch_ours, batch_raw, batch_spread = _paired(n * 5, raw_batched, assay_batched,
                                                      chunk=BATCH)
        storage_ours, storage_raw, storage_spread = _paired(n, raw_single, assay_storage, first=n)
        get_ours, get_raw, get_spread = _paired(n, raw_get, _assay_gets(store, "s", written),
                                                chunk=100)
        # The CPU side alone: no wait for the commit record's flush on either side.
        raw.execute("SET synchronous_commit = off")
        store._conn.execute("SET synchronous_commit = off")

        def raw_single_cpu(items: range) -> None:
            raw_single(range(items.start + 10 * n, items.stop + 10 * n))

        def raw_batched_cpu(items: range) -> None:
            raw_batched(range(items.start + 10 * n, items.stop + 10 * n))

        def assay_batched_cpu(items: range) -> None:
            assay_batched(range(items.start + 10 * n, items.stop + 10 * n))

        cpu_ours, cpu_raw, cpu_spread = _paired(n * 3, raw_single_cpu,
                                                _assay_puts(store, PAYLOAD, "c"))
        cpu_batch_ours, cpu_batch_raw, cpu_batch_spread = _paired(
            n * 5, raw_batched_cpu, assay_batched_cpu, chunk=BATCH)
        rows = [
            row("postgresql single put", assay=put_ours, baseline=put_raw, unit="writes/s",
                baseline_name="raw psycopg json.dumps+insert (autocommit)",
                higher_is_better=True, goal=">= 0.70x", spread=put_spread, runs=GROUPS),
            row("postgresql single put, validated beforehand", assay=storage_ours,
                baseline=storage_raw, unit="writes/s",
                baseline_name="raw psycopg json.dumps+insert (autocommit)",
                higher_is_better=True, spread=storage_spread, runs=GROUPS,
                note="the storage half of a put"),
            row(f"postgresql batched put ({BATCH}/batch)", assay=batch_ours,
                baseline=batch_raw, unit="writes/s",
                baseline_name="raw psycopg json.dumps+executemany, one transaction per batch",
                higher_is_better=True, goal=">= 0.6x", spread=batch_spread, runs=GROUPS,
                note="put_many: one assay_put_many call per batch"),
            row("postgresql single put, synchronous_commit=off on both sides", assay=cpu_ours,
                baseline=cpu_raw, unit="writes/s",
                baseline_name="raw psycopg json.dumps+insert (autocommit), synchronous_commit=off",
                higher_is_better=True, spread=cpu_spread, runs=GROUPS,
                note="CPU only: no commit flush on either side"),
            row(f"postgresql batched put ({BATCH}/batch), synchronous_commit=off on both sides",
                assay=cpu_batch_ours, baseline=cpu_batch_raw, unit="writes/s",
                baseline_name="raw psycopg json.dumps+executemany, one transaction per batch, "
                              "synchronous_commit=off",
                higher_is_better=True, spread=cpu_batch_spread, runs=GROUPS,
                note="CPU only: no commit flush on either side"),
            row("postgresql get by id", assay=get_ours, baseline=get_raw, unit="reads/s",
                baseline_name="raw SELECT by id + json.loads, in a transaction",
                higher_is_better=True, spread=get_spread, runs=GROUPS,
                note=f"reads the {written:,} records the single puts wrote"),
        ]
    finally:
        store.close()
        raw.execute(f"DROP SCHEMA {schema} CASCADE")
        raw.execute(f"DROP SCHEMA IF EXISTS {schema}_l CASCADE")
        raw.close()
    return rows


def _fill(path: Path, size: int) -> Any:
    """A SQLite ledger of ``size`` small records, its write-ahead log folded in."""
    store = open_store(path)
    for start in range(0, size, 1000):
        store.put_many([Write(id=f"knowledge:r{i}", data={"i": 0}, scope=SCOPE)
                        for i in range(start, min(start + 1000, size))])
    # The bulk fill leaves a large write-ahead log; fold it into the database
    # first so the probes measure steady-state puts, not the fill's checkpoint debt.
    with sqlite3.connect(path) as side:
        side.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return store


def _scaling_rows(sizes: list[int]) -> list[dict[str, Any]]:
    """Point read and put latency at growing ledger sizes, against the smallest size.

    One ledger per size, filled in batches of 1,000. Then, round after round,
    every ledger is probed in turn (the order rotating each round), so that
    machine noise meets every size alike: 200 point reads of ids spread over
    the whole ledger (a fixed pseudo-random sequence, so a run is repeatable)
    and 40 puts of new versions of existing records, the common case once a
    ledger is large. Each figure is the median of the rounds after a discarded
    warm-up round, with their spread. Flat ratios mean the lookups go through
    indexes, not scans.
    """
    import random

    rng = random.Random(20261130)
    rounds = 6
    reads: dict[int, list[float]] = {size: [] for size in sizes}
    puts: dict[int, list[float]] = {size: [] for size in sizes}
    with tempfile.TemporaryDirectory(prefix="assay-bench-scale-") as tmp:
        stores = {size: _fill(Path(tmp) / f"ledger-{size}.db", size) for size in sizes}
        try:
            for round_ in range(rounds):
                order = sizes[round_ % len(sizes):] + sizes[:round_ % len(sizes)]
                for size in order:
                    store = stores[size]
                    ids = [f"knowledge:r{rng.randrange(size)}" for _ in range(200)]
                    start = time.perf_counter()
                    with store.reader() as r:
                        for record_id in ids:
                            r.get(record_id)
                    read_us = (time.perf_counter() - start) / len(ids) * 1e6
                    start = time.perf_counter()
                    for j, record_id in enumerate(ids[:40]):
                        store.put(Write(id=record_id, data={"i": j}, scope=SCOPE))
                    put_us = (time.perf_counter() - start) / 40 * 1e6
                    if round_:  # the first round warms the caches and is discarded
                        reads[size].append(read_us)
                        puts[size].append(put_us)
        finally:
            for store in stores.values():
                store.close()
    rows: list[dict[str, Any]] = []
    base_read, base_put = statistics.median(reads[sizes[0]]), statistics.median(puts[sizes[0]])
    for size in sizes:
        for what, samples, base in (("point read", reads[size], base_read),
                                    ("put", puts[size], base_put)):
            rows.append(row(f"{what} at {size:,} records", assay=statistics.median(samples),
                            baseline=base, unit="us", spread=max(samples) - min(samples),
                            runs=len(samples), baseline_name=f"{what} at {sizes[0]:,}",
                            goal="flat (~1x)"))
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
