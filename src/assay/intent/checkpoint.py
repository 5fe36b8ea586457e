"""Checkpoint and resume: handoff records with a semantic signature.

``work checkpoint`` saves the plan/actual/delta/continuation view of an intent
as a ``handoff:<name>`` record (origin ``derived``). Its *semantic signature*
is the digest of what the work means at this point: the intent version and
hash, the acceptance mapping, the continuation, the version and digest of
every cited evidence record and selected continuity record, the decision
heads, and the derived statuses. Ledger revisions are left out, so unrelated
writes elsewhere never look like progress.

- An unchanged signature writes nothing and returns the prior receipt.
- A changed one writes with a fresh write basis (the intent and the handoff
  at the revisions just read) and a new request id.
- A local attempt journal (``.assay/checkpoints/``) keeps the latest attempt
  apart from ``last_good``. A pending attempt (outcome unknown) is replayed
  exactly, with its saved request id and body, at most once automatically;
  after that, or after a permanent rejection or an epoch/request/revision
  conflict, blind replay stops and the caller must inspect.

The journal is recovery bookkeeping, never authority: the ledger's handoff
record is what was saved. ``work resume`` renders the self-contained resume
view (recovery, mission, guardrails, current work, required reads) capped at
7,000 UTF-16 code units.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from assay.canonical import digest
from assay.errors import AssayError, ConflictError, UnavailableError
from assay.ids import content_id
from assay.intent.check import require_readable, work_check
from assay.intent.snapshot import ProjectBinding, is_readable
from assay.ledger.access import Access
from assay.ledger.store import Link, Receipt, Record, SourceRef, Store, Write, WriteBasis
from assay.provenance.admission import envelope_of_versions, envelopes_of_versions
from assay.provenance.envelope import Envelope, effective_audience
from assay.provenance.publish import require_all

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "RESUME_LIMIT",
    "checkpoint",
    "handoff_id",
    "inputs_envelope",
    "journal_path",
    "resume",
    "semantic_signature",
    "utf16_length",
]

RESUME_LIMIT = 7000
_LINE_LIMIT = 240


def handoff_id(intent_id: str) -> str:
    """The handoff record of an intent: ``handoff:`` plus the intent's name."""
    return "handoff:" + intent_id.partition(":")[2]


def journal_path(root: Path, intent_id: str) -> Path:
    """Where the local attempt journal of an intent's checkpoints lives."""
    return root / ".assay" / "checkpoints" / (content_id("j", intent_id) + ".json")


def semantic_signature(report: dict[str, Any]) -> str:
    """Digest of the meaningful projection (no ledger revisions, no wording of issues)."""
    continuity = report.get("continuity") or {}
    return digest({
        "intent": [report["intent_record_id"], report["intent_revision"], report["intent_sha256"]],
        "acceptance": report["actual"]["results"] and [
            {"requirement_id": r["requirement_id"], "status": r["status"], "notes": r["notes"],
             "evidence": [[e["id"], e["revision"], e.get("data_sha256")] for e in r["evidence"]]}
            for r in report["actual"]["results"]
        ],
        "blockers": report["actual"]["blockers"],
        "continuation": report["continuation"],
        "evidence": [[e["id"], e["revision"], e["data_sha256"], e["status"]]
                     for e in report["actual"]["evidence"]],
        "records": [[r["id"], r["revision"], r["data_sha256"], r["status"]]
                    for r in continuity.get("records", [])],
        "decisions": [[d["key"], d["status"], d["head_event_ids"]]
                      for d in continuity.get("decisions", [])],
        "statuses": [[r["id"], r["status"]] for r in report["delta"]["requirements"]],
        "issues": [i["code"] for i in report["issues"]],
    })


def saved_handoff_signature(handoff: Record | None) -> str | None:
    """The semantic signature a saved handoff version holds (None if absent or unreadable)."""
    if handoff is None or handoff.damage is not None or not isinstance(handoff.data, dict):
        return None
    signature = handoff.data.get("signature")
    return signature if isinstance(signature, str) else None


def _projection(report: dict[str, Any]) -> dict[str, Any]:
    continuity = report.get("continuity") or {}
    return {
        "plan": report["plan"],
        "actual": report["actual"],
        "delta": report["delta"],
        "continuation": report["continuation"],
        "ready_to_review": report["ready_to_review"],
        "issues": report["issues"],
        "continuity": {
            "records": [{"id": r["id"], "revision": r["revision"], "data_sha256": r["data_sha256"]}
                        for r in continuity.get("records", [])],
            "decisions": [{"key": d["key"], "status": d["status"], "choice": d["choice"],
                           "head_event_ids": d["head_event_ids"]}
                          for d in continuity.get("decisions", [])],
            "read_required": continuity.get("read_required", []),
            "complete": continuity.get("complete", False),
            "truncated": continuity.get("truncated", False),
        },
    }


def _journal_dir_safe(path: Path) -> None:
    """Refuse a journal directory reached through a symlink (it could lead out of the project)."""
    state_dir = path.parent.parent
    for directory in (state_dir, path.parent):
        if directory.is_symlink():
            raise AssayError(
                f"{directory} is a symbolic link; the checkpoint journal is never written through one",
                code="checkpoint_journal_unsafe",
                action=f"Replace {directory} with a real directory inside the project.")


def _load(path: Path) -> dict[str, Any]:
    _journal_dir_safe(path)
    if not path.exists():
        return {"version": 1, "last_good": None, "latest_attempt": None}
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise AssayError(f"the checkpoint journal {path} cannot be read: {exc}",
                         code="checkpoint_journal_unreadable",
                         action="Inspect or remove the journal file; the ledger keeps the handoffs.")
    if not isinstance(value, dict) or value.get("version") != 1:
        raise AssayError(f"the checkpoint journal {path} is not a version 1 journal",
                         code="checkpoint_journal_unreadable",
                         action="Inspect or remove the journal file; the ledger keeps the handoffs.")
    return value


def _save(path: Path, journal: dict[str, Any]) -> None:
    _journal_dir_safe(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(journal, sort_keys=True, indent=1), encoding="utf-8")
    os.replace(tmp, path)


def _write_from(saved: dict[str, Any]) -> Write:
    return Write(
        id=saved["id"], data=saved["data"], scope=saved["scope"],
        links=tuple(Link(**link) for link in saved["links"]),
        sources=tuple(SourceRef(**src) for src in saved["sources"]),
        audience=saved.get("audience", "project"),
        expect_revision=saved["expect_revision"], request_id=saved["request_id"],
        origin="derived",
    )


def inputs_envelope(reader: Any, report: dict[str, Any], hid: str | None = None) -> Envelope:
    """The dependency envelope of the record versions a report derives from (one envelope)."""
    return envelope_of_versions(reader, _inputs(reader, report, hid))


def _inputs(reader: Any, report: dict[str, Any], hid: str | None) -> dict[str, int]:
    """The record versions a report (or its handoff) derives from.

    The report's write basis (intent, cited evidence) plus the selected
    continuity records. The handoff's own earlier versions are not inputs,
    and neither is a version that is itself retired or superseded: the
    handoff reports that status as a finding, it does not build on the
    record's content.
    """
    versions = dict(report["write_basis"]["records"])
    for row in (report.get("continuity") or {}).get("records", []):
        if isinstance(row.get("id"), str) and isinstance(row.get("revision"), int):
            versions[row["id"]] = row["revision"]
    inputs = {}
    for record_id, revision in versions.items():
        version = reader.get(record_id, revision) if revision > 0 else None
        if record_id != hid and version is not None and version.status == "current":
            inputs[record_id] = revision
    return inputs


def _attempt(store: Store, journal: dict[str, Any], path: Path) -> Receipt:
    """Run the journal's latest attempt once; record its outcome; re-raise failures."""
    attempt = journal["latest_attempt"]
    write = _write_from(attempt["write"])
    basis = WriteBasis.from_dict(attempt["basis"])
    try:
        receipt = store.put(write, basis=basis)
    except UnavailableError:
        _save(path, journal)  # outcome unknown: stays pending
        raise
    except AssayError as exc:
        attempt["status"] = "rejected"
        attempt["error"] = exc.to_dict()
        _save(path, journal)
        raise
    attempt["status"] = "committed"
    attempt["receipt"] = receipt.to_dict()
    journal["last_good"] = receipt.to_dict()
    _save(path, journal)
    return receipt


def _recover(store: Store, journal: dict[str, Any], path: Path) -> dict[str, Any] | None:
    attempt = journal.get("latest_attempt")
    if not attempt or attempt.get("status") != "pending":
        return None
    if attempt.get("replays", 0) >= 1:
        raise ConflictError(
            f"checkpoint request {attempt['request_id']} is still pending after one automatic "
            "replay", code="checkpoint_pending",
            action=("Inspect the handoff record ('assay get -- " + attempt["write"]["id"]
                    + "') and the journal, then resolve the pending request explicitly."),
            details={"request_id": attempt["request_id"], "journal": str(path)})
    attempt["replays"] = attempt.get("replays", 0) + 1
    _save(path, journal)
    try:
        receipt = _attempt(store, journal, path)
    except ConflictError:
        return {"replayed_request_id": attempt["request_id"], "outcome": "rejected"}
    return {"replayed_request_id": attempt["request_id"], "outcome": "committed",
            "receipt": receipt.to_dict()}


def _public(attempt: dict[str, Any] | None) -> dict[str, Any] | None:
    """An attempt without its saved body (the journal keeps that for replay)."""
    if not attempt:
        return None
    return {k: v for k, v in attempt.items() if k != "write"}


def _receipt_of(record: Record) -> dict[str, Any]:
    return Receipt(record.id, record.revision, record.ledger_revision, record.data_sha256,
                   record.request_id, replayed=True).to_dict()


def checkpoint(store: Store, binding: ProjectBinding, intent_id: str, *,
               journal: Path) -> dict[str, Any]:
    """Save the intent's view as a handoff unless its meaning is unchanged (see module doc)."""
    state = _load(journal)
    recovery = _recover(store, state, journal)
    with store.reader() as reader:
        report = require_readable(work_check(reader, binding, intent_id))
        hid = handoff_id(intent_id)
        existing = reader.get(hid)
        if existing is not None and not is_readable(existing, binding.principal):
            existing = None
        epoch, ledger_revision = reader.epoch, reader.ledger_revision
        # A long handoff may have more inputs than one envelope holds: each
        # packed envelope passes the gate on its own.
        envelopes = envelopes_of_versions(reader, _inputs(reader, report, hid))
        intent = reader.get(intent_id, report["intent_revision"])
    signature = semantic_signature(report)
    if (existing is not None and existing.status == "current"
            and saved_handoff_signature(existing) == signature):
        prior = state.get("last_good")
        if not prior or prior.get("id") != hid or prior.get("revision") != existing.revision:
            prior = _receipt_of(existing)
        return {"written": False, "handoff_id": hid, "signature": signature, "receipt": prior,
                "last_good": state.get("last_good"),
                "latest_attempt": _public(state.get("latest_attempt")),
                "recovery": recovery, "ledger_revision": ledger_revision}
    expect = existing.revision if existing is not None else 0
    data = {
        "version": 1,
        "intent_record_id": intent_id,
        "intent_revision": report["intent_revision"],
        "intent_sha256": report["intent_sha256"],
        "signature": signature,
        "projection": _projection(report),
    }
    # The handoff is derived content: its inputs pass the publication gate,
    # it stays as private as they are, and the write commits only if no
    # input moved since the gate (the gate's heads join the write basis).
    gate_basis = require_all(store, Access.for_project(binding.scope, binding.admitted_scopes,
                                                       binding.principal),
                             envelopes, what="the handoff")
    audience = effective_audience(leaf.audience for env in envelopes for leaf in env.leaves)
    request_id = content_id("ckpt", {"id": hid, "signature": signature, "after": expect})
    source = {"id": intent_id, "revision": report["intent_revision"]}
    if intent is not None:
        source["data_sha256"] = intent.data_sha256
    saved_write = {
        "id": hid, "data": data, "scope": binding.scope,
        "links": [{"rel": "derived-from", "target": intent_id}],
        "sources": [source], "audience": audience,
        "expect_revision": expect, "request_id": request_id,
    }
    records = {**(gate_basis.records if gate_basis else {}),
               intent_id: report["intent_revision"], hid: expect}
    state["latest_attempt"] = {
        "request_id": request_id, "status": "pending", "replays": 0, "write": saved_write,
        "basis": {"epoch": epoch, "ledger_revision": ledger_revision, "records": records},
    }
    _save(journal, state)
    receipt = _attempt(store, state, journal)
    return {"written": True, "handoff_id": hid, "signature": signature,
            "receipt": receipt.to_dict(), "last_good": state["last_good"],
            "latest_attempt": _public(state["latest_attempt"]), "recovery": recovery,
            "ledger_revision": receipt.ledger_revision}


def utf16_length(text: str) -> int:
    """Length in UTF-16 code units (what a JavaScript host counts)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _shorten(text: str, limit: int = _LINE_LIMIT) -> tuple[str, bool]:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text, False
    return text[: limit - 1] + "…", True


def resume(reader: Any, binding: ProjectBinding, intent_id: str, *,
           journal: Path | None = None) -> dict[str, Any]:
    """The self-contained resume view of an intent (read-only)."""
    state: dict[str, Any] = {"last_good": None, "latest_attempt": None}
    journal_problem = None
    if journal is not None:
        try:
            state = _load(journal)
        except AssayError as exc:
            # Resume is a read: a damaged local journal is reported, not fatal.
            journal_problem = exc.message
    report = require_readable(work_check(reader, binding, intent_id))
    hid = handoff_id(intent_id)
    handoff = reader.get(hid)
    if handoff is not None and not is_readable(handoff, binding.principal):
        handoff = None
    continuity = report["continuity"]
    shortened = False
    check_args = ["work", "check", "--cwd", binding.root, "--", intent_id]

    recovery = []
    if journal_problem is not None:
        recovery.append(f"- checkpoint journal unreadable: {journal_problem}")
    attempt = state.get("latest_attempt")
    if attempt:
        recovery.append(f"- latest checkpoint attempt: {attempt['status']}, request "
                        f"{attempt['request_id']} (automatic replays used: {attempt.get('replays', 0)})")
    else:
        recovery.append("- latest checkpoint attempt: none recorded here")
    last_good = state.get("last_good")
    if last_good:
        recovery.append(f"- last good checkpoint: {last_good['id']} revision {last_good['revision']}"
                        f" (ledger revision {last_good['ledger_revision']})")
    elif handoff is not None:
        recovery.append(f"- saved handoff: {hid} revision {handoff.revision}")
    else:
        recovery.append("- no checkpoint saved yet")
    saved_signature = saved_handoff_signature(handoff)
    current_signature = semantic_signature(report)
    recovery.append(
        f"- current read: ledger revision {reader.ledger_revision}, ready_to_review "
        f"{str(report['ready_to_review']).lower()}; the saved handoff "
        + ("matches it" if saved_signature == current_signature else "differs from it"
           if saved_signature else "is absent"))
    recovery.append("- a saved passed mapping is not proof: re-check before accepting completion")

    plan = report["plan"]
    mission = []
    for label, value in (("brief", plan["brief"]), ("user reference", plan["user_reference"])):
        text, cut = _shorten(value)
        shortened |= cut
        mission.append(f"- {label}: {text}")
    guardrails = []
    for label, values in (("boundary", plan["boundaries"]), ("non-goal", plan["non_goals"]),
                          ("blocker", report["actual"]["blockers"])):
        for value in values:
            text, cut = _shorten(value)
            shortened |= cut
            guardrails.append(f"- {label}: {text}")
    work = []
    cont = report["continuation"]
    if cont:
        text, cut = _shorten(cont["next_action"])
        shortened |= cut
        work.append(f"- next action: {text}")
    statuses = {r["id"]: r["status"] for r in report["delta"]["requirements"]}
    by_id = {r["id"]: r for r in plan["requirements"]}
    for rid in continuity["active_requirement_ids"]:
        req = by_id[rid]
        text, cut = _shorten(f"{rid} [{statuses[rid]}] {req['text']} (acceptance: "
                             f"{req['acceptance']})")
        shortened |= cut
        work.append(f"- {text}")
    reads = [{"read_args": check_args, "reason": "current readiness and continuity"}]
    if handoff is not None:
        reads.append({"read_args": ["get", "--", hid], "reason": "saved handoff"})
    reads += [{"read_args": r["read_args"], "reason": r["code"]}
              for r in continuity["read_required"]]
    sections = [("RECOVERY", recovery), ("MISSION", mission), ("GUARDRAILS", guardrails),
                ("CURRENT WORK", work)]

    def render(read_rows: list[dict[str, Any]], omitted: int, work_rows: list[str],
               work_omitted: int) -> str:
        lines = [f"Resume {intent_id}"]
        for title, rows in sections:
            rows = work_rows if title == "CURRENT WORK" else rows
            lines.append(title)
            lines.extend(rows or ["- (none)"])
            if title == "CURRENT WORK" and work_omitted:
                lines.append(f"- {work_omitted} more active requirements: read `assay "
                             + " ".join(check_args) + "`")
        lines.append("REQUIRED READS (before acting)")
        lines.extend("- assay " + json.dumps(r["read_args"], ensure_ascii=False)
                     + f"  ({r['reason']})" for r in read_rows)
        if omitted:
            lines.append(f"- {omitted} more reads omitted: recover them with assay "
                         + json.dumps(check_args, ensure_ascii=False))
        return "\n".join(lines) + "\n"

    shown_reads, shown_work = list(reads), list(work)
    text = render(shown_reads, 0, shown_work, 0)
    # Trim required reads first (the work check read recovers them), then work rows.
    while utf16_length(text) > RESUME_LIMIT and len(shown_reads) > 1:
        shown_reads.pop()
        text = render(shown_reads, len(reads) - len(shown_reads), shown_work,
                      len(work) - len(shown_work))
    while utf16_length(text) > RESUME_LIMIT and len(shown_work) > 1:
        shown_work.pop()
        text = render(shown_reads, len(reads) - len(shown_reads), shown_work,
                      len(work) - len(shown_work))
    omitted_reads = len(reads) - len(shown_reads)
    omitted_work = len(work) - len(shown_work)
    if utf16_length(text) > RESUME_LIMIT:
        units = text.encode("utf-16-le", "surrogatepass")[: 2 * (RESUME_LIMIT - 1)]
        text = units.decode("utf-16-le", "ignore") + "…"
        shortened = True
    must_read = bool(shortened or omitted_reads or omitted_work or journal_problem)
    return {
        "intent_record_id": intent_id,
        "ledger_revision": reader.ledger_revision,
        "text": text,
        "utf16_length": utf16_length(text),
        "limit": RESUME_LIMIT,
        "must_read_before_action": must_read,
        "read_required": shown_reads,
        "read_required_omitted": omitted_reads,
        "active_requirements_omitted": omitted_work,
        "ready_to_review": report["ready_to_review"],
        "handoff": ({"id": hid, "revision": handoff.revision,
                     "matches_current": saved_signature == current_signature}
                    if handoff is not None else None),
        "last_good": last_good,
        "latest_attempt": _public(attempt),
    }
