"""Work views over one snapshot: ``work status``, ``work history``, ``work attention``.

Each view is a pure function of one :class:`~assay.ledger.store.Reader` and
the project binding, and writes nothing. Lists are ordered by record id (or,
for history, newest version first), start after a cursor (``after``, or
``before_revision`` for history) and are bounded by ``limit``; what is left
out after the page is counted in ``omitted_count`` with ``more`` set (the
operations add the reads that recover it).

Imports the ledger contract, the base modules and its sibling modules.
"""

from __future__ import annotations

from typing import Any

from assay.errors import AssayError
from assay.intent.check import build_report, read_intent
from assay.intent.snapshot import AsOfReader, ProjectBinding, is_readable
from assay.ledger.store import Reader, Record

__all__ = ["ATTENTION_LIMIT", "intent_records", "work_attention", "work_history", "work_status"]

ATTENTION_LIMIT = 20
_SCAN_LIMIT = 1_000_000


def intent_records(reader: Reader, binding: ProjectBinding) -> list[Record]:
    """Current, readable knowledge records in the project's scopes whose data holds ``intent``.

    A record whose stored data is damaged is listed when its stored text
    names an intent: it is reported as unreadable, never silently dropped.
    """
    found = reader.find(scopes=list(binding.evidence_scopes), kind="knowledge",
                        data_field=("intent", None), limit=_SCAN_LIMIT)
    return [r for r in found if r.status == "current" and is_readable(r, binding.principal)
            and (r.damage is not None or (isinstance(r.data, dict) and "intent" in r.data))]


def _summary(reader: Any, binding: ProjectBinding, record_id: str) -> dict[str, Any]:
    try:
        report = build_report(read_intent(reader, binding, record_id), binding)
    except AssayError as exc:
        return {"id": record_id, "ready_to_review": False, "error": exc.to_dict()}
    counts: dict[str, int] = {}
    for row in report["delta"]["requirements"]:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    blocking = [i for i in report["issues"] if not i.get("advisory")]
    return {
        "id": record_id,
        "revision": report["intent_revision"],
        "brief": report["plan"]["brief"],
        "ready_to_review": report["ready_to_review"],
        "requirements": len(report["delta"]["requirements"]),
        "status_counts": dict(sorted(counts.items())),
        "issue_count": len(blocking),
        "advisory_count": len(report["issues"]) - len(blocking),
        "next": report["next"][:1],
    }


def work_status(reader: Reader, binding: ProjectBinding, *, limit: int = 20,
                after: str | None = None) -> dict[str, Any]:
    """The project's intents with their readiness: the first ``limit`` by id after ``after``."""
    records = [r for r in intent_records(reader, binding) if after is None or r.id > after]
    shown = records[:limit]
    return {
        "ledger_revision": reader.ledger_revision,
        "intents": [_summary(reader, binding, r.id) for r in shown],
        "count": len(shown),
        "more": len(records) > limit,
        "omitted_count": max(0, len(records) - limit),
    }


def work_history(reader: Reader, binding: ProjectBinding, record_id: str, *,
                 limit: int = 20, before_revision: int | None = None) -> dict[str, Any]:
    """The intent record's versions, newest first, each with its readiness *as of* its writing.

    Readiness of a version is computed against the ledger exactly as it stood
    at that version's ledger revision (evidence versions written later are
    invisible), so the list shows how readiness moved over time. Only
    versions older than ``before_revision`` are listed, when it is given.
    """
    read_intent(reader, binding, record_id)  # the current record must be a readable intent
    versions = [v for v in reversed(reader.history(record_id))
                if before_revision is None or v.revision < before_revision]
    rows = []
    for record in versions[:limit]:
        past = AsOfReader(reader, record.ledger_revision)
        row: dict[str, Any] = {
            "revision": record.revision,
            "ledger_revision": record.ledger_revision,
            "created_at": record.created_at,
            "status": record.status,
            "data_sha256": record.data_sha256,
        }
        if record.status != "current":
            row.update(ready_to_review=False, issue_codes=[], note=f"this version is {record.status}")
            rows.append(row)
            continue
        try:
            report = build_report(read_intent(past, binding, record_id), binding)
        except AssayError as exc:
            row.update(ready_to_review=False, issue_codes=[], error=exc.to_dict())
        else:
            row.update(
                intent_sha256=report["intent_sha256"],
                ready_to_review=report["ready_to_review"],
                issue_codes=[i["code"] for i in report["issues"]],
                statuses={r["id"]: r["status"] for r in report["delta"]["requirements"]},
            )
        rows.append(row)
    return {
        "id": record_id,
        "ledger_revision": reader.ledger_revision,
        "versions": rows,
        "more": len(versions) > limit,
        "omitted_count": max(0, len(versions) - limit),
    }


def work_attention(reader: Reader, binding: ProjectBinding) -> dict[str, Any]:
    """Section-level coverage of each intent (at most 20), over one snapshot.

    ``handoff`` says whether the saved ``handoff:`` record matches the current
    meaning (``current``), lags behind it (``behind``) or is ``absent``; local
    checkpoint journals are not read here.
    """
    from assay.intent.checkpoint import handoff_id, saved_handoff_signature, semantic_signature
    from assay.intent.continuity import project_continuity

    records = intent_records(reader, binding)
    rows = []
    for record in records[:ATTENTION_LIMIT]:
        try:
            read = read_intent(reader, binding, record.id)
        except AssayError as exc:
            rows.append({"id": record.id, "ready_to_review": False,
                         "sections": {"intent": "invalid"}, "error": exc.to_dict(),
                         "next": [exc.action] if exc.action else []})
            continue
        report = build_report(read, binding)
        continuity, _ = project_continuity(read, binding, report, reader)
        report["continuity"] = continuity
        handoff = reader.get(handoff_id(record.id))
        if handoff is None or not is_readable(handoff, binding.principal):
            handoff_state = "absent"
        elif saved_handoff_signature(handoff) == semantic_signature(report):
            handoff_state = "current"
        else:
            handoff_state = "behind"
        doc = read.document
        codes = [i["code"] for i in report["issues"]]
        mapped = len(doc.acceptance.results) if doc.acceptance else 0
        evidence_codes = [c for c in codes if c.startswith("evidence_") and c != "evidence_only_claimed"]
        rows.append({
            "id": record.id,
            "revision": record.revision,
            "brief": doc.brief,
            "ready_to_review": report["ready_to_review"],
            "sections": {
                "intent": "valid",
                "acceptance": ("missing" if doc.acceptance is None else
                               "stale_intent" if "intent_hash_mismatch" in codes else
                               "complete" if mapped == len(doc.requirements) else "partial"),
                "results": {"mapped": mapped, "requirements": len(doc.requirements)},
                "evidence": {"problems": len(evidence_codes),
                             "machine_observed": sum(1 for e in report["actual"]["evidence"]
                                                     if e["machine_observed"]),
                             "cited": len(report["actual"]["evidence"])},
                "blockers": len(doc.acceptance.blockers) if doc.acceptance else 0,
                "continuation": ("absent" if doc.continuation is None else
                                 "explicit" if doc.continuation.context is not None else "present"),
                "continuity": ("truncated" if continuity["truncated"] else
                               "complete" if continuity["complete"] else "incomplete"),
                "handoff": handoff_state,
            },
            "next": report["next"][:3],
        })
    return {
        "ledger_revision": reader.ledger_revision,
        "intents": rows,
        "count": len(rows),
        "more": len(records) > ATTENTION_LIMIT,
        "omitted_count": max(0, len(records) - ATTENTION_LIMIT),
    }
