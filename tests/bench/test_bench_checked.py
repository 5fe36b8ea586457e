"""The hand-written checking reader (bench/checked.py) is a real floor: it accepts what assay
wrote and refuses what a direct edit of the ledger file changed, as assay's reads do."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest

from assay.ledger import Write, open_store
from assay.ledger.record import Link

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import checked

SCOPE = "project:bench"
DATA = {"t": "caf\u00e9 \"quoted\"\n", "n": [1, 2.5, None, True], "nested": {"b": 1, "a": {}}}


def _ledger(path: Path) -> None:
    store = open_store(path)
    try:
        store.put(Write(id="knowledge:a", data={"v": 1}, scope=SCOPE))
        store.put(Write(id="knowledge:a", data=DATA, scope=SCOPE,
                        links=(Link("cites", "knowledge:b"),)))
        store.put_many([Write(id=f"evidence:e{i}", data={"exit_code": 0, "n": i}, scope=SCOPE,
                              origin="machine", request_id=f"r{i}") for i in range(20)])
    finally:
        store.close()


def test_checked_reads_what_assay_wrote(tmp_path: Path) -> None:
    """Every current version reads back with both digests matching (links, request ids,
    an earlier revision and non-ASCII text included)."""
    path = tmp_path / "ledger.db"
    _ledger(path)
    conn = checked.connect(path)
    assert checked.get(conn, "knowledge:a") == DATA
    ids = [f"evidence:e{i}" for i in range(20)]
    assert sorted(d["n"] for d in checked.get_many(conn, ids)) == list(range(20))


@pytest.mark.parametrize(("statement", "reason"), [
    ("UPDATE record_versions SET status = 'retired' WHERE id = 'knowledge:a' AND revision = 2",
     "seal"),
    ("UPDATE record_versions SET data = '{\"v\":2}' WHERE id = 'knowledge:a' AND revision = 2",
     "data digest"),
])
def test_checked_refuses_a_direct_edit(tmp_path: Path, statement: str, reason: str) -> None:
    """A metadata edit fails the seal and a data edit the data digest, so the floor's rows
    pay for the same checks assay's reads make."""
    path = tmp_path / "ledger.db"
    _ledger(path)
    with sqlite3.connect(path) as conn:
        conn.execute(statement)
    with pytest.raises(ValueError, match=reason):
        checked.get(checked.connect(path), "knowledge:a")
