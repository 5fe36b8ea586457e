"""``work check`` on large intents, against simply reading the same records.

The intent is a requirement tree of depth 6; every requirement's result cites
five evidence records (1,000 requirements: 5,000 evidence records), and one in
ten results is ``unverified`` so the continuity projection has active work to
select. The baseline, measured in the same run on the same SQLite ledger, is
the plain read of those records: opening a reader, ``get`` of the intent and
``get_many`` of every cited evidence id, each record's data decoded (records
decode on first use, after their integrity check). The ratio is what the
report costs on top of fetching its inputs.

A second baseline leaves assay out entirely: the same rows (the intent and
its evidence, as ``json.dumps`` text) in a plain SQLite table with a unique
index on ``id``, read with ``SELECT ... WHERE id IN (...)`` and
``json.loads`` inside one transaction.

The growth series (100 / 1,000 / 3,000 requirements; quick mode stops at
1,000) compares the time per requirement at each size with the time per
requirement at the previous size: a ratio near 1.0 is linear growth. It
stops at 3,000 because an intent record is one canonical JSON document,
bounded at 100,000 values: at 25 values per requirement (the requirement,
its result and five evidence references) about 3,990 requirements fit, and
10,000 requirements cannot carry even one result each (10 values apiece).
A second series reaches 10,000 with intents that hold requirements only (no
acceptance yet): 1,000 vs 10,000 requirements, same shape, against reading
the record.
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
from itertools import pairwise
from pathlib import Path
from typing import Any

from assay.intent.check import work_check
from assay.intent.contract import intent_sha256
from assay.intent.snapshot import ProjectBinding
from assay.ledger import Write, open_store
from bench import checked
from bench.harness import median_time, row

SCOPE = "project:bench"
EVIDENCE_PER_REQUIREMENT = 5
DEPTH = 6


def _tree(count: int) -> list[dict[str, Any]]:
    """``count`` requirements in a tree of depth ``DEPTH`` (a fan-out chosen to fit)."""
    fanout = 2
    while sum(fanout**d for d in range(DEPTH)) < count:
        fanout += 1
    reqs: list[dict[str, Any]] = []
    frontier: list[str | None] = [None]
    depth = 0
    while len(reqs) < count and depth < DEPTH:
        nxt: list[str | None] = []
        for parent in frontier:
            for _ in range(1 if parent is None else fanout):
                if len(reqs) >= count:
                    break
                rid = f"R{len(reqs)}"
                req: dict[str, Any] = {"id": rid, "text": "t", "acceptance": "a"}
                if parent is not None:
                    req["parent_id"] = parent
                reqs.append(req)
                nxt.append(rid)
        frontier, depth = nxt, depth + 1
    # Roots absorb any remainder so the count is exact and depth stays <= DEPTH.
    while len(reqs) < count:
        reqs.append({"id": f"R{len(reqs)}", "text": "t", "acceptance": "a"})
    return reqs


def _raw_copy(path: Path, rows: dict[str, Any]) -> sqlite3.Connection:
    """The same documents in a plain SQLite table, with assay's cache settings."""
    raw = sqlite3.connect(path, isolation_level=None)
    raw.execute("PRAGMA journal_mode = WAL")
    raw.execute("PRAGMA mmap_size = 268435456")
    raw.execute("PRAGMA cache_size = -32768")
    raw.execute("CREATE TABLE t (id TEXT NOT NULL, data TEXT NOT NULL)")
    raw.execute("CREATE UNIQUE INDEX t_id ON t (id)")
    raw.execute("BEGIN")
    raw.executemany("INSERT INTO t VALUES (?, ?)",
                    [(key, json.dumps(value)) for key, value in rows.items()])
    raw.execute("COMMIT")
    return raw


def _raw_read(raw: sqlite3.Connection, ids: list[str]) -> None:
    """SELECT the rows by id in one transaction and json.loads each."""
    raw.execute("BEGIN")
    for start in range(0, len(ids), 900):
        chunk = ids[start:start + 900]
        query = f"SELECT data FROM t WHERE id IN ({','.join('?' * len(chunk))})"
        for (text,) in raw.execute(query, chunk):
            json.loads(text)
    raw.execute("COMMIT")


def _build(path: Path, count: int) -> tuple[Any, ProjectBinding, list[str], sqlite3.Connection]:
    store = open_store(path)
    evidence_ids = [f"evidence:e{i:06d}" for i in range(count * EVIDENCE_PER_REQUIREMENT)]
    documents: dict[str, Any] = {eid: {"exit_code": 0, "n": i}
                                 for i, eid in enumerate(evidence_ids)}
    batch = 1000
    for start in range(0, len(evidence_ids), batch):
        store.put_many([Write(id=eid, data=documents[eid], scope=SCOPE, origin="machine")
                        for eid in evidence_ids[start:start + batch]])
    reqs = _tree(count)
    intent = {"version": 1, "brief": "bench", "user_reference": "bench", "requirements": reqs,
              "boundaries": [], "non_goals": []}
    results = []
    for index, req in enumerate(reqs):
        cited = evidence_ids[index * EVIDENCE_PER_REQUIREMENT:(index + 1) * EVIDENCE_PER_REQUIREMENT]
        results.append({"requirement_id": req["id"],
                        "status": "unverified" if index % 10 == 9 else "passed",
                        "evidence": [{"id": e, "revision": 1} for e in cited], "notes": "n"})
    documents["knowledge:bench"] = {
        "intent": intent,
        "acceptance": {"intent_sha256": intent_sha256(intent), "results": results,
                       "blockers": []}}
    store.put(Write(id="knowledge:bench", scope=SCOPE, data=documents["knowledge:bench"]))
    binding = ProjectBinding(root=str(path.parent), scope=SCOPE)
    return store, binding, evidence_ids, _raw_copy(path.parent / "raw.db", documents)


def _measure(count: int, runs: int) -> tuple[float, float, float, float, float]:
    with tempfile.TemporaryDirectory(prefix="assay-bench-intent-") as tmp:
        store, binding, evidence_ids, raw = _build(Path(tmp) / "ledger.db", count)
        try:
            def check() -> None:
                with store.reader() as reader:
                    work_check(reader, binding, "knowledge:bench")

            def read() -> None:
                with store.reader() as reader:
                    # Data is decoded (and checked) on first use.
                    decoded = [reader.get("knowledge:bench").data]
                    decoded += [r.data for r in reader.get_many(evidence_ids).values()]

            t_check, spread = median_time(check, runs=runs)
            t_read, _ = median_time(read, runs=runs)
            t_raw, _ = median_time(lambda: _raw_read(raw, ["knowledge:bench", *evidence_ids]),
                                   runs=runs)
            by_hand = checked.connect(Path(tmp) / "ledger.db")

            def read_checked() -> None:
                by_hand.execute("BEGIN")
                checked.get(by_hand, "knowledge:bench")
                checked.get_many(by_hand, evidence_ids)
                by_hand.execute("COMMIT")

            t_checked, _ = median_time(read_checked, runs=runs)
            by_hand.close()
        finally:
            store.close()
            raw.close()
    return t_check, t_read, spread, t_raw, t_checked


def _measure_intent_only(count: int, runs: int) -> tuple[float, float, float]:
    with tempfile.TemporaryDirectory(prefix="assay-bench-intent-") as tmp:
        store = open_store(Path(tmp) / "ledger.db")
        try:
            intent = {"version": 1, "brief": "bench", "user_reference": "bench",
                      "requirements": _tree(count), "boundaries": [], "non_goals": []}
            store.put(Write(id="knowledge:bench", scope=SCOPE, data={"intent": intent}))
            binding = ProjectBinding(root=tmp, scope=SCOPE)

            def check() -> None:
                with store.reader() as reader:
                    work_check(reader, binding, "knowledge:bench")

            def read() -> None:
                with store.reader() as reader:
                    assert reader.get("knowledge:bench").data

            t_check, spread = median_time(check, runs=runs)
            t_read, _ = median_time(read, runs=runs)
        finally:
            store.close()
    return t_check, t_read, spread


def run(quick: bool) -> list[dict[str, Any]]:
    runs = 3 if quick else 5
    sizes = [100, 1000] if quick else [100, 1000, 3000]
    timings = {n: _measure(n, runs) for n in sizes}
    rows = []
    t_check, t_read, spread, t_raw, t_checked = timings[1000]
    rows.append(row(
        "work check: 1,000 requirements (depth 6), 5,000 evidence records, SQLite",
        assay=t_check, baseline=t_read, baseline_name="reading the same records",
        unit="s", spread=spread, runs=runs, goal="< 0.5 s",
        note="report + continuity from one reader snapshot"))
    rows.append(row(
        "work check: 1,000 requirements, 5,000 evidence records, against raw SQL",
        assay=t_check, baseline=t_raw,
        baseline_name="SELECT ... IN + json.loads of the same rows, in a transaction",
        unit="s", spread=spread, runs=runs, goal="<= 2.5x"))
    rows.append(row(
        "reading the same rows with the checks by hand, against raw SQL",
        assay=t_checked, baseline=t_raw,
        baseline_name="SELECT ... IN + json.loads of the same rows, in a transaction",
        unit="s", runs=runs,
        note="bench.checked on assay's ledger file: both digests and a strict parse per "
             "record, no assay code"))
    rows.append(row(
        "work check: 1,000 requirements, 5,000 evidence records, against the checks by hand",
        assay=t_check, baseline=t_checked,
        baseline_name="bench.checked: the same rows read with the same checks, by hand",
        unit="s", spread=spread, runs=runs, note="what the check adds to its checked reads"))
    for n in sizes:
        t_check, t_read, spread, _, _ = timings[n]
        rows.append(row(f"work check: {n:,} requirements", assay=t_check, baseline=t_read,
                        baseline_name="reading the same records", unit="s", spread=spread,
                        runs=runs))
    for small, large in pairwise(sizes):
        rows.append(row(
            f"growth: time per requirement at {large:,} vs {small:,}",
            assay=timings[large][0] / large, baseline=timings[small][0] / small,
            baseline_name=f"per requirement at {small:,}", unit="s/requirement",
            goal="near 1.0 (linear)"))
    only = {n: _measure_intent_only(n, runs) for n in (1000, 10_000)}
    for n, (t_check, t_read, spread) in only.items():
        rows.append(row(f"work check: {n:,} requirements, intent only (no acceptance)",
                        assay=t_check, baseline=t_read, baseline_name="reading the record",
                        unit="s", spread=spread, runs=runs))
    rows.append(row(
        "growth (intent only): time per requirement at 10,000 vs 1,000",
        assay=only[10_000][0] / 10_000, baseline=only[1000][0] / 1000,
        baseline_name="per requirement at 1,000", unit="s/requirement",
        goal="near 1.0 (linear)"))
    return rows
