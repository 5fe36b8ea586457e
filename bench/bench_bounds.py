"""Bounded reads against the whole answer they replace: output bytes and time.

Three reads an agent makes on a large project, each run through the
operations registry in process on an embedded SQLite ledger:

- ``todo list`` with no options on a goal with 1,000 open todos (300 of them
  user todos), against ``todo list --all`` (the whole inventory);
- ``work context`` on the same goal, against the same context with its
  byte bound at the maximum (16 MiB), which then holds every user obligation;
- ``get --history`` of a record with 1,000 versions, against the whole
  history (``--limit 1000 --max-bytes`` at the maximum).

Each read gives two rows: its time (median, ms) and its output (bytes of
canonical JSON of ``data``, what the CLI prints), each against the whole read.
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path
from typing import Any

from assay.canonical import canonical_bytes
from assay.ledger import open_store
from assay.ledger.store import Write
from assay.ops import Invocation, call
from bench.harness import median_time, row

TODOS = 1000
USERS = 300
VERSIONS = 1000
_MAX = 16 * 1024 * 1024


def _project(root: Path) -> str:
    (root / "goals").mkdir(parents=True)
    (root / ".assay").mkdir()
    (root / "assay.toml").write_text('[project]\nname = "bench"\n\n[goals.g]\npath = "goals/g.md"\n',
                                     encoding="utf-8")
    (root / "goals" / "g.md").write_text("# Goal\n\nShip the parser; keep every pointer exact.\n",
                                         encoding="utf-8")
    db = str(root / ".assay" / "ledger.db")
    source = {"kind": "goal", "goal_id": "g", "path": "goals/g.md", "revision": "0" * 64}
    writes = []
    for i in range(TODOS):
        stamp = f"2026-11-01T10:00:00.{i:06d}Z"
        writes.append(Write(id=f"todo:t{i:05d}", scope="project:bench", data={
            "schema": "assay.todo/v1", "goal_id": "g",
            "text": f"Todo {i}: implement parser piece {i} and keep every error pointer exact",
            "owner_role": "user" if i % 10 < USERS * 10 // TODOS else "agent",
            "status": "open", "claim": None, "blocked_reason": None, "completion": None,
            "relations": [], "source": source, "created_at": stamp, "created_by": "agent-1",
            "updated_at": stamp}))
    store = open_store(db)
    try:
        store.put_many(writes)
        for revision in range(VERSIONS):
            store.put(Write(id="note:journal", scope="project:bench", expect_revision=revision,
                            data={"entry": revision, "text": f"Entry {revision} of the journal."}))
    finally:
        store.close()
    return db


def _reader(root: Path, db: str) -> Any:
    def read(name: str, args: dict[str, Any]) -> dict[str, Any]:
        inv = Invocation(cwd=str(root), db=db)
        try:
            return call(name, args, inv)[0]["data"]
        finally:
            inv.close()

    return read


def run(quick: bool) -> list[dict[str, Any]]:
    runs = 3 if quick else 7
    rows = []
    with tempfile.TemporaryDirectory(prefix="assay-bench-bounds-") as tmp:
        root = Path(tmp) / "p"
        read = _reader(root, _project(root))
        cases = [
            (f"todo list default page, {TODOS:,} open todos", "todo.list", {"goal_id": "g"},
             {"goal_id": "g", "all": True}, "todo list --all"),
            (f"work context, {TODOS:,} open todos ({USERS} user)", "work.context",
             {"goal_id": "g"}, {"goal_id": "g", "max_bytes": _MAX}, "unbounded context"),
            (f"get --history, {VERSIONS:,} versions", "get", {"id": "note:journal", "history": True},
             {"id": "note:journal", "history": True, "limit": 1000, "max_bytes": _MAX},
             "whole history"),
        ]
        for name, op, bounded, whole, whole_name in cases:
            took, spread = median_time(functools.partial(read, op, bounded), runs=runs)
            base, _ = median_time(functools.partial(read, op, whole), runs=runs)
            page, everything = read(op, bounded), read(op, whole)
            assert page["truncated"] and everything["complete"]
            rows.append(row(f"{name}: time", assay=took * 1000, baseline=base * 1000, unit="ms",
                            baseline_name=whole_name, spread=spread * 1000, runs=runs,
                            note=f"omitted {page['omitted']}"))
            rows.append(row(f"{name}: output", assay=len(canonical_bytes(page)),
                            baseline=len(canonical_bytes(everything)), unit="bytes",
                            baseline_name=whole_name, runs=1,
                            note="canonical JSON of data, as the CLI prints it"))
    return rows
