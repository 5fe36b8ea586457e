"""Builders of plain ledger Record values for intent tests (no database)."""

from __future__ import annotations

import copy
from typing import Any

from assay.canonical import canonical_text, digest
from assay.intent.contract import intent_sha256
from assay.ledger.store import Link, Record

SCOPE = "project:demo"


class Ledger:
    """Accumulates record versions with gap-free ledger revisions, like a store would."""

    def __init__(self) -> None:
        self.versions: list[Record] = []
        self.revision = 0

    def put(self, record_id: str, data: Any, *, scope: str = SCOPE, status: str = "current",
            superseded_by: str | None = None, links: tuple[tuple[str, str], ...] = (),
            audience: str = "project", origin: str = "claim") -> Record:
        self.revision += 1
        previous = [r for r in self.versions if r.id == record_id]
        record = Record(
            id=record_id, kind=record_id.partition(":")[0], scope=scope,
            revision=len(previous) + 1, data=copy.deepcopy(data), data_sha256=digest(data),
            status=status, superseded_by=superseded_by,
            links=tuple(Link(rel, target) for rel, target in links), audience=audience,
            sources=(), created_at="2026-01-01T00:00:00Z", ledger_revision=self.revision,
            origin=origin, data_text=canonical_text(data),
        )
        self.versions.append(record)
        return record

    def put_damaged(self, record_id: str, text: str, *, origin: str = "claim",
                    kind: str | None = None) -> Record:
        """A version whose stored text does not hash to its digest, as a damaged row reads back."""
        self.revision += 1
        previous = [r for r in self.versions if r.id == record_id]
        record = Record(
            id=record_id, kind=kind or record_id.partition(":")[0], scope=SCOPE,
            revision=len(previous) + 1, data_sha256="0" * 64, status="current",
            superseded_by=None, links=(), audience="project", sources=(),
            created_at="2026-01-01T00:00:00Z", ledger_revision=self.revision, origin=origin,
            data_text=text)
        self.versions.append(record)
        return record

    def snapshot(self) -> Any:
        from assay.intent.snapshot import RecordSnapshot

        return RecordSnapshot(list(self.versions), epoch="test-epoch")


def intent(requirements: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "version": 1,
        "brief": "Make the login flow safe",
        "user_reference": "ticket 42",
        "requirements": requirements or [
            {"id": "R1", "text": "Keep sessions", "acceptance": "Run the session test"},
            {"id": "R2", "text": "Reject bad tokens", "acceptance": "Run the token test"},
        ],
        "boundaries": ["Keep the existing database"],
        "non_goals": ["No new login UI"],
    }


def passed(rid: str, *refs: dict[str, Any], notes: str = "The test covers it") -> dict[str, Any]:
    return {"requirement_id": rid, "status": "passed", "evidence": list(refs), "notes": notes}


def ref(record: Record, *, revision: int | None = None, sha: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"id": record.id, "revision": revision or record.revision}
    if sha is not None:
        out["data_sha256"] = sha
    return out


def data(the_intent: dict[str, Any], results: list[dict[str, Any]] | None = None,
         blockers: list[str] | None = None, sha: str | None = None,
         **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"intent": the_intent}
    if results is not None:
        out["acceptance"] = {"intent_sha256": sha or intent_sha256(the_intent),
                             "results": results, "blockers": blockers or []}
    out.update(extra)
    return out


class FailingSnapshot:
    """A snapshot seam whose reads of chosen ids fail the way a backend's can."""

    def __init__(self, ledger: Ledger, failures: dict[str, Exception]) -> None:
        self._inner = ledger.snapshot()
        self._failures = failures
        self.epoch = self._inner.epoch
        self.ledger_revision = self._inner.ledger_revision

    def get(self, record_id: str, revision: int | None = None) -> Any:
        if record_id in self._failures:
            raise self._failures[record_id]
        return self._inner.get(record_id, revision)

    def get_many(self, record_ids: Any) -> Any:
        if any(r in self._failures for r in record_ids):
            raise next(self._failures[r] for r in record_ids if r in self._failures)
        return self._inner.get_many(record_ids)

    def history(self, record_id: str) -> Any:
        return self._inner.history(record_id)

    def find(self, **filters: Any) -> Any:
        return self._inner.find(**filters)
