"""Fixed todo records for golden and pure-function tests (no clock, no ledger)."""

from __future__ import annotations

from typing import Any

from assay.canonical import digest
from assay.ledger.store import Link, Record

GOAL_SOURCE = {"kind": "goal", "goal_id": "parser", "path": "goals/parser.md",
               "revision": "5" * 64}


def todo_data(text: str, *, owner_role: str = "agent", status: str = "open",
              claim: dict[str, Any] | None = None, created_at: str,
              relations: list[dict[str, str]] | None = None,
              blocked_reason: str | None = None) -> dict[str, Any]:
    return {
        "schema": "assay.todo/v1",
        "goal_id": "parser",
        "text": text,
        "owner_role": owner_role,
        "status": status,
        "claim": claim,
        "blocked_reason": blocked_reason,
        "completion": None,
        "relations": relations or [],
        "source": GOAL_SOURCE,
        "created_at": created_at,
        "created_by": "agent-1",
        "updated_at": created_at,
    }


def record(record_id: str, data: dict[str, Any], *, revision: int = 1,
           ledger_revision: int = 1) -> Record:
    return Record(
        id=record_id, kind="todo", scope="project:demo", revision=revision, data=data,
        data_sha256=digest(data), status="current", superseded_by=None,
        links=tuple(Link(r["rel"], r["target"]) for r in data["relations"]),
        audience="project", sources=(), created_at=data["created_at"],
        ledger_revision=ledger_revision,
    )


CLAIM = {"principal": "agent-1", "claimed_at": "2026-11-01T10:05:00.000000Z",
         "lease_ms": 1800000, "lease_expires_at": "2026-11-01T10:35:00.000000Z"}

PARSE = record("todo:parse", todo_data(
    "Parse the manifest\n\nKeep every error pointer exact; the fixtures in tests/fixtures "
    "are the contract.", status="claimed", claim=CLAIM,
    created_at="2026-11-01T10:00:00.000000Z",
    relations=[{"rel": "depends-on", "target": "todo:schema"}]), revision=2, ledger_revision=4)
SCHEMA = record("todo:schema", todo_data(
    "Write the schema", created_at="2026-11-01T10:01:00.000000Z"), ledger_revision=2)
DOCS = record("todo:docs", todo_data(
    "Document the grammar", status="blocked", blocked_reason="waiting for the schema",
    created_at="2026-11-01T10:02:00.000000Z"), revision=2, ledger_revision=5)
APPROVE = record("todo:approve", todo_data(
    "Approve the schema", owner_role="user", created_at="2026-11-01T10:03:00.000000Z"),
    ledger_revision=3)

ALL = [PARSE, SCHEMA, DOCS, APPROVE]
