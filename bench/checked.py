"""The least code that reads a version with the checks every assay read makes.

A baseline for the point-read and ``work check`` rows: it reads assay's own
``record_versions`` table with ``sqlite3`` and, for each version, does what
a read must do before its data is used, written plainly:

- the data text hashes (SHA-256) to the stored ``data_sha256``;
- the version's seal text, every stored field but the data as one JSON
  object with sorted keys, hashes to the stored ``version_sha256``;
- the data parses as JSON with no duplicate object key.

What it leaves out (so it is a floor, not a copy): partitions and private
records, the integer and depth bounds, lone-surrogate escapes, and turning a
failed check into a coded error. The difference between a row against this
baseline and the same row against bare ``SELECT`` + ``json.loads`` is what
the checks themselves cost.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Sequence
from typing import Any

# The stored fields the seal covers, and the query reading them with the data.
SEALED = ("audience", "created_at", "data_sha256", "id", "kind", "ledger_revision", "links",
          "origin", "request_id", "revision", "scope", "sources", "status", "superseded_by")
_COLUMNS = ", ".join(("data", "version_sha256", *SEALED))
_ONE = (f"SELECT {_COLUMNS} FROM record_versions WHERE id = ? AND audience = 'project' "
        "ORDER BY revision DESC LIMIT 1")
_SEAL = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise ValueError("duplicate key")
    return out


_STRICT = json.JSONDecoder(object_pairs_hook=_unique)


def checked(row: Sequence[Any]) -> Any:
    """The data of one row (data, version_sha256, *SEALED), after its checks."""
    data, seal = row[0], row[1]
    fields = dict(zip(SEALED, row[2:], strict=True))
    if hashlib.sha256(data.encode()).hexdigest() != fields["data_sha256"]:
        raise ValueError("data digest")
    if hashlib.sha256(_SEAL.encode(fields).encode()).hexdigest() != seal:
        raise ValueError("seal")
    return _STRICT.decode(data)


def get(conn: sqlite3.Connection, record_id: str) -> Any:
    """The checked data of a record's current project version."""
    return checked(conn.execute(_ONE, (record_id,)).fetchone())


def get_many(conn: sqlite3.Connection, ids: Sequence[str]) -> list[Any]:
    """The checked data of the current project versions of ``ids`` (one statement per 500)."""
    out = []
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        marks = ",".join("?" * len(chunk))
        out += [checked(r) for r in conn.execute(
            f"SELECT {_COLUMNS} FROM record_versions v WHERE id IN ({marks}) "
            "AND audience = 'project' AND revision = (SELECT max(x.revision) FROM "
            "record_versions x WHERE x.id = v.id AND x.audience = 'project')", chunk)]
    return out


def connect(path: Any) -> sqlite3.Connection:
    """A plain read connection to an assay SQLite ledger, with assay's cache settings."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA mmap_size = 268435456")
    conn.execute("PRAGMA cache_size = -32768")
    return conn
