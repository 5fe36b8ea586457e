"""Per-call cost of the reads agents make, as the ledger grows: each size against the smallest.

One project per size and backend: a git project gated on an intent of 2
requirements proven by a machine run, a goal with two todos, an orientation
record, a loop and a note, in a ledger grown to N records with unrelated
records of the kinds those reads look at (todos of other goals, knowledge,
decision events, gate sessions, loop records, notes: about 300 bytes each,
one in ten thousand holding a rare word, ten records at every size another
rare word, one record at every size a unique word, and every one a common
one). The first rare word's matches grow with the ledger (1, 10 and 100
records at 10,000, 100,000 and 1,000,000), so its row pays for returning
them; the rows of the words with the same matches at every size are the
cost of growth alone.

Every call runs in process through the operations registry (the store is
opened per call, as a fresh CLI process would). Sizes take turns, round after
round, so machine noise meets each alike; a figure is the median over the
rounds. The baseline of each row is the same call on the smallest ledger,
so the ratio is what growth costs: the goal is <= 1.3x, except the count of
a common word's matches, which reads up to 10,001 of them by design (its
page alone is a row of its own, with the goal).

Sizes: 10,000 and 100,000 records (quick: 2,000 and 20,000). The
1,000,000-record ledger is opt-in, in the same command:
``ASSAY_BENCH_SCALE_MAX=1000000 .venv/bin/python -m bench --only bench_scale``.
PostgreSQL rows run when ``ASSAY_TEST_POSTGRES_URL`` (or
``ASSAY_BENCH_POSTGRES_URL``) is set; each size gets a schema of its own,
dropped afterwards.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.harness import row

SCOPE_NAME = "bench"
RARE, COMMON, UNIQUE, SCARCE = "quokka", "ledger", "wombat", "numbat"
KINDS = ("todo", "knowledge", "decision-event", "gate-session", "loop", "note")
GOAL = """---
title: Ship the parser
---
# Goal: ship the parser

Keep every requirement.
"""
PASS = "print('3 passed')"


def _op(root: Path, db: str, operation: str, /, **args: Any) -> Any:
    from assay.ops import Invocation, call

    inv = Invocation(cwd=str(root), db=db, surface="bench")
    try:
        return call(operation, args, inv)[0]["data"]
    finally:
        inv.close()


def _stop(root: Path, db: str) -> Any:
    from assay.ops import Invocation, call

    payload = {"session_id": "9f1c2a4e-5b7d-4e3a-8c21-0d6f3b2a1e90", "cwd": str(root),
               "hook_event_name": "Stop", "stop_hook_active": False,
               "last_assistant_message": "I've added the CSV export and all tests pass."}
    inv = Invocation(db=db, surface="bench")
    try:
        return call("hook.stop", {"payload": payload}, inv)[0]["data"]
    finally:
        inv.close()


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def _project(root: Path, db: str) -> None:
    """The project every size shares the shape of (see the module docstring)."""
    from assay.ledger import open_store

    root.mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.email", "bench@example.com")
    _git(root, "config", "user.name", "Bench")
    toml = (f'[project]\nname = "{SCOPE_NAME}"\n\n[evidence.commands.unit]\n'
            f"argv = {json.dumps([sys.executable, '-c', PASS])}\ntimeout = 60\n\n"
            '[gate]\nintents = ["knowledge:export"]\n\n[goals.parser]\npath = "goals/parser.md"\n')
    (root / "assay.toml").write_text(toml, encoding="utf-8")
    (root / ".assay").mkdir()
    (root / ".gitignore").write_text(".assay/\n", encoding="utf-8")
    (root / "goals").mkdir()
    (root / "goals" / "parser.md").write_text(GOAL, encoding="utf-8")
    (root / "export.py").write_text("SEP = ','\n", encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "start")
    open_store(db, base=root).close()
    specs = ["R1|requirement 1|run the unit check", "R2|requirement 2|run the unit check"]
    _op(root, db, "work.new", id="knowledge:export", brief="Ship the CSV export",
        requirement=specs, verify_with=["R1=unit", "R2=unit"])
    run = _op(root, db, "evidence.run", name="unit",
              target=["knowledge:export#R1", "knowledge:export#R2"])
    _op(root, db, "work.accept", id="knowledge:export",
        from_run=[f"{run['evidence_ref']['id']}@{run['evidence_ref']['revision']}"])
    for name in ("parse", "schema"):
        _op(root, db, "todo.add", goal_id="parser", text=f"todo {name}", todo_id=name)
    _op(root, db, "put", id="knowledge:orientation",
        data=json.dumps({"context_role": "orientation", "text": "read this first"}))
    _op(root, db, "loop.start", task="fix the export", loop="lp-export",
        criterion=["tests pass"])
    _op(root, db, "note.add", text="the export keeps commas")


def _filler(n: int) -> Any:
    from assay.ledger import Link, Write

    kind = KINDS[n % len(KINDS)]
    text = f"unrelated {COMMON} entry {n} " + ("padding " * 24)
    if n % 10_000 == 5_000:
        text += RARE
    if n == 1_234:
        text += UNIQUE
    if n % 110 == 7 and n < 1_100:  # 7, 117, ..., 997: ten records, in every ledger
        text += SCARCE
    data: dict[str, Any] = {"n": n, "text": text}
    if kind == "todo":
        data["goal_id"] = f"other-goal-{n % 50}"
    elif kind == "knowledge":
        data["context_role"] = "reference"
    elif kind == "decision-event":
        data["key"] = f"other-key-{n % 100}"
    elif kind == "loop":
        data["schema"] = "something-else/v1"
    return Write(id=f"{kind}:filler-{n:07d}", data=data, scope=f"project:{SCOPE_NAME}",
                 links=(Link("relates-to", f"knowledge:filler-{n % 500:07d}"),))


def _grow(db: str, root: Path, size: int) -> None:
    from assay.ledger import open_store

    store = open_store(db, base=root)
    try:
        have = store.info().records
        for start in range(0, size - have, 1000):
            store.put_many([_filler(n) for n in range(start, min(start + 1000, size - have))])
    finally:
        store.close()
    if db.startswith("postgres"):
        import psycopg

        schema = db.rpartition("assay_schema=")[2]
        with psycopg.connect(db.partition("?")[0], autocommit=True) as conn:
            conn.execute(f"SET search_path TO {schema}")
            conn.execute("VACUUM ANALYZE")
    else:
        import sqlite3

        conn = sqlite3.connect(db)
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()


def _calls(root: Path, db: str) -> dict[str, Callable[[], Any]]:
    from assay.ledger import open_store

    counter = iter(range(10**9))

    def find_page(query: str) -> Callable[[], Any]:
        def page() -> Any:
            store = open_store(db, base=root)
            try:
                with store.reader() as r:
                    return r.find(scopes=[f"project:{SCOPE_NAME}", "global"], query=query,
                                  limit=100)
            finally:
                store.close()
        return page

    return {
        "work check": lambda: _op(root, db, "work.check", id="knowledge:export"),
        "hook stop": lambda: _stop(root, db),
        "work context": lambda: _op(root, db, "work.context", goal_id="parser"),
        "todo list": lambda: _op(root, db, "todo.list", goal_id="parser"),
        "work status": lambda: _op(root, db, "work.status"),
        "find, rare word": lambda: _op(root, db, "find", query=RARE),
        "find, unique word": lambda: _op(root, db, "find", query=UNIQUE),
        "find, rare word, 10 records at every size": lambda: _op(root, db, "find", query=SCARCE),
        "find, common word: page of 100 (reader.find)": find_page(COMMON),
        "find, common word: page and omitted count, exact to 10,000 (find op)":
            lambda: _op(root, db, "find", query=COMMON),
        "get by id": lambda: _op(root, db, "get", id="knowledge:export"),
        "put": lambda: _op(root, db, "put", id=f"note:bench-{next(counter)}",
                           data='{"text": "one more note"}'),
    }


def _pg_url() -> str | None:
    return os.environ.get("ASSAY_TEST_POSTGRES_URL") or os.environ.get("ASSAY_BENCH_POSTGRES_URL")


def _series(backend: str, sizes: list[int], rounds: int, tmp: Path) -> list[dict[str, Any]]:
    base_url = _pg_url()
    schemas: list[str] = []
    ledgers: dict[int, tuple[Path, str]] = {}
    try:
        for size in sizes:
            root = tmp / f"{backend}-{size}"
            if backend == "sqlite":
                db = str(root / ".assay" / "ledger.db")
            else:
                assert base_url is not None
                schema = "bench_scale_" + uuid.uuid4().hex[:12]
                schemas.append(schema)
                sep = "&" if "?" in base_url else "?"
                db = f"{base_url}{sep}assay_schema={schema}"
            _project(root, db)
            started = time.perf_counter()
            _grow(db, root, size)
            print(f"bench_scale: {backend} ledger of {size:,} records in "
                  f"{time.perf_counter() - started:.0f} s", file=sys.stderr)
            ledgers[size] = (root, db)
        calls = {size: _calls(*ledgers[size]) for size in sizes}
        names = list(calls[sizes[0]])
        samples: dict[tuple[str, int], list[float]] = {(n, s): [] for n in names for s in sizes}
        for round_no in range(rounds + 1):  # the first round warms up and is dropped
            order = sizes[round_no % len(sizes):] + sizes[:round_no % len(sizes)]
            for name in names:
                for size in order:
                    start = time.perf_counter()
                    calls[size][name]()
                    if round_no:
                        samples[(name, size)].append(time.perf_counter() - start)
        rows = []
        small = sizes[0]
        for size in sizes[1:]:
            for name in names:
                big = statistics.median(samples[(name, size)])
                base = statistics.median(samples[(name, small)])
                spread = max(samples[(name, size)]) - min(samples[(name, size)])
                counts_all = "omitted count" in name
                note = ("counts the matches after the page, up to 10,001" if counts_all
                        else f"returns {(size + 5_000) // 10_000:,} records against {(small + 5_000) // 10_000:,}"
                        if name == "find, rare word" else "")
                rows.append(row(
                    f"{backend}, {name}: {size:,} records against {small:,}",
                    assay=big * 1000, baseline=base * 1000,
                    baseline_name=f"the same call at {small:,} records", unit="ms",
                    spread=spread * 1000, runs=rounds,
                    goal="" if counts_all else "<= 1.3x", note=note))
        return rows
    finally:
        if schemas and base_url:
            import psycopg

            with psycopg.connect(base_url, autocommit=True) as conn:
                for schema in schemas:
                    conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def run(quick: bool) -> list[dict[str, Any]]:
    if quick:
        sizes, rounds = [2_000, 20_000], 3
    else:
        sizes, rounds = [10_000, 100_000], 7
        top = int(os.environ.get("ASSAY_BENCH_SCALE_MAX", "0") or 0)
        if top > sizes[-1]:
            sizes.append(top)
    backends = ["sqlite"] + (["postgres"] if _pg_url() else [])
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="assay-bench-scale-") as tmp:
        for backend in backends:
            rows.extend(_series(backend, sizes, rounds, Path(tmp)))
    return rows
