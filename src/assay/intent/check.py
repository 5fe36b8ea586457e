"""``work check``: the readiness report of one intent record.

:func:`work_check` reads one intent record and every record it cites from a
single :class:`~assay.ledger.store.Reader` (one ledger revision) and returns
the report as plain JSON data. It is a pure function of that snapshot and the
:class:`~assay.intent.snapshot.ProjectBinding`: the same ledger revision and
inputs give byte-identical canonical output. It never writes.

Issue codes, in emission order (global first, then per requirement in
recorded order, then per cited evidence reference in citation order)::

    missing_acceptance, intent_hash_mismatch, unresolved_blocker,
    unknown_requirement,
    missing_result, result_not_passed, missing_claim_note, missing_evidence,
    evidence_missing, evidence_unreadable, evidence_out_of_scope,
    evidence_retired, evidence_unavailable, evidence_revision_stale,
    evidence_hash_mismatch,
    evidence_only_claimed (advisory)

``ready_to_review`` is true exactly when no issue is blocking; the one
advisory code, ``evidence_only_claimed``, says that a requirement rests only
on claimed records (none written by assay's own evidence runner) and does
not by itself make the report unready.

Imports the ledger contract, the base modules and its sibling modules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from assay.errors import AssayError, UnavailableError
from assay.intent.contract import IntentDocument, RequirementResult, parse_intent_data
from assay.intent.snapshot import ProjectBinding, is_readable
from assay.ledger.store import Reader, Record

__all__ = [
    "ADVISORY_CODES",
    "DELTA_STATUSES",
    "ISSUE_CODES",
    "NOTICE",
    "REPORT_KEYS",
    "IntentRead",
    "build_report",
    "read_intent",
    "work_check",
]

ISSUE_CODES = (
    "missing_acceptance",
    "intent_hash_mismatch",
    "unresolved_blocker",
    "unknown_requirement",
    "missing_result",
    "result_not_passed",
    "missing_claim_note",
    "missing_evidence",
    "evidence_missing",
    "evidence_unreadable",
    "evidence_out_of_scope",
    "evidence_retired",
    "evidence_unavailable",
    "evidence_revision_stale",
    "evidence_hash_mismatch",
    "evidence_only_claimed",
)
ADVISORY_CODES = frozenset({"evidence_only_claimed"})
DELTA_STATUSES = (
    "not_started",
    "failed",
    "unverified",
    "stale_intent",
    "reported_complete_needs_evidence",
    "awaiting_descendants",
    "reported_complete_with_current_evidence",
)
REPORT_KEYS = (
    "intent_record_id", "intent_revision", "intent_sha256", "ready_to_review", "complete",
    "issues", "record_errors", "requirements", "task_references", "plan", "actual", "delta",
    "continuation", "continuity", "next", "notice", "write_basis",
)
NOTICE = (
    "This report describes recorded mappings between requirements and record versions. "
    "It runs no tests and certifies no claim; evidence marked machine_observed was written "
    "by assay's own evidence runner, everything else is a claim. Reading it wrote nothing."
)
COMPLETE = "reported_complete_with_current_evidence"

_ACTIONS = {
    "missing_acceptance": "Add data.acceptance (intent_sha256, results, blockers) with a checked put.",
    "intent_hash_mismatch": ("The intent changed after acceptance was mapped: re-check each result "
                             "against the current intent, then record the current intent_sha256."),
    "unresolved_blocker": "Resolve the blocker, then remove it from data.acceptance.blockers.",
    "unknown_requirement": "Correct the task's requirement_ids to name requirements of this intent.",
    "missing_result": "Record a result for the requirement in data.acceptance.results.",
    "result_not_passed": "Do the remaining work, record evidence, and update the result.",
    "missing_claim_note": "Explain in the result's notes why the cited evidence meets the acceptance.",
    "missing_evidence": "Cite at least one evidence record version for the passed result.",
    "evidence_missing": "Record the evidence, or cite an existing record id.",
    "evidence_unreadable": "Cite evidence readable by this principal, or ask its owner to share it.",
    "evidence_out_of_scope": "Cite evidence from this project or an admitted historical scope.",
    "evidence_retired": "Cite the current record that replaces the retired or superseded evidence.",
    "evidence_unavailable": "Retry when the ledger is reachable; the evidence could not be read.",
    "evidence_revision_stale": "Re-examine the current revision and cite it if it still supports the result.",
    "evidence_hash_mismatch": "Re-read the cited version and correct its data_sha256 or the citation.",
    "evidence_only_claimed": ("Run the acceptance check with 'assay evidence run' and cite the "
                              "machine-observed record."),
}


def _issue(code: str, message: str, **where: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"code": code, "message": message, "action": _ACTIONS[code]}
    for key, value in where.items():
        if value is not None:
            out[key] = value
    if code in ADVISORY_CODES:
        out["advisory"] = True
    return out


@dataclass(frozen=True, slots=True)
class IntentRead:
    """Everything one report needs, read from one snapshot."""

    record: Record
    document: IntentDocument
    evidence: Mapping[str, Record | None]
    failures: Mapping[str, tuple[str, str]]
    cited_versions: Mapping[tuple[str, int], Record | None]
    epoch: str
    ledger_revision: int
    extra: Mapping[str, Any] = field(default_factory=dict)


def fetch_visible(reader: Reader, ids: list[str], principal: str
                  ) -> tuple[dict[str, Record | None], dict[str, tuple[str, str]]]:
    """Current versions of ``ids`` visible to ``principal``, and the ids that failed to read.

    A failure is ``(code, message)``: ``evidence_unavailable`` when the store
    could not be reached, ``evidence_unreadable`` when the stored version could
    not be decoded. One failed record never hides the others.
    """
    found: dict[str, Record | None] = {}
    failures: dict[str, tuple[str, str]] = {}
    try:
        batch = reader.get_many(ids)
    except AssayError:
        batch = None
    for rid in ids:
        if batch is not None:
            record = batch.get(rid)
        else:
            try:
                record = reader.get(rid)
            except UnavailableError as exc:
                failures[rid] = ("evidence_unavailable", exc.message)
                record = None
            except AssayError as exc:
                failures[rid] = ("evidence_unreadable", exc.message)
                record = None
        found[rid] = record if record is not None and is_readable(record, principal) else None
    return found, failures


def _intent_error(code: str, message: str, action: str, record_id: str) -> AssayError:
    return AssayError(message, code=code, action=action, details={"id": record_id})


def read_intent(reader: Reader, binding: ProjectBinding, record_id: str) -> IntentRead:
    """Read the intent record and every cited evidence version from ``reader``.

    Raises ``intent_not_found``, ``not_an_intent_record``, ``intent_out_of_scope``,
    ``intent_not_current`` or ``invalid_intent_contract``. A record private to
    another principal reads as absent, here and for every cited record.
    """
    record = reader.get(record_id)
    if record is not None and not is_readable(record, binding.principal):
        record = None  # a private record of someone else is indistinguishable from absent
    if record is None:
        raise _intent_error("intent_not_found", f"no record {record_id!r} in the ledger",
                            "Check the id with 'assay find', or record the intent first.",
                            record_id)
    if record.kind != "knowledge":
        raise _intent_error("not_an_intent_record",
                            f"{record_id!r} is a {record.kind!r} record, not a knowledge record",
                            "Pass the id of the knowledge record that holds the intent.", record_id)
    if record.scope not in binding.evidence_scopes:
        raise _intent_error("intent_out_of_scope",
                            f"{record_id!r} belongs to {record.scope}, not to {binding.scope}",
                            "Check the intent from its own project, or admit that scope.",
                            record_id)
    if record.status != "current":
        raise _intent_error("intent_not_current", f"{record_id!r} is {record.status}",
                            "Check the current intent record instead.", record_id)
    document = parse_intent_data(record.data)
    cited_ids: dict[str, None] = {}
    for result in document.acceptance.results if document.acceptance else ():
        for ref in result.evidence:
            cited_ids.setdefault(ref.id, None)
    evidence, failures = fetch_visible(reader, list(cited_ids), binding.principal)
    cited: dict[tuple[str, int], Record | None] = {}
    for result in document.acceptance.results if document.acceptance else ():
        for ref in result.evidence:
            current = evidence.get(ref.id)
            if (current is not None and ref.data_sha256 is not None
                    and current.revision != ref.revision and ref.revision < current.revision):
                try:
                    cited[(ref.id, ref.revision)] = reader.get(ref.id, ref.revision)
                except UnavailableError:
                    cited[(ref.id, ref.revision)] = None
    return IntentRead(record, document, evidence, failures, cited,
                      reader.epoch, reader.ledger_revision)


def work_check(reader: Reader, binding: ProjectBinding, record_id: str, *,
               continuity: bool = True) -> dict[str, Any]:
    """The full ``work check`` report of ``record_id`` as seen by ``reader``."""
    read = read_intent(reader, binding, record_id)
    report = build_report(read, binding)
    if continuity:
        from assay.intent.continuity import project_continuity

        report["continuity"] = project_continuity(read, binding, report, reader)
    return report


def _evidence_identity(record: Record) -> dict[str, Any]:
    return {
        "id": record.id,
        "revision": record.revision,
        "data_sha256": record.data_sha256,
        "kind": record.kind,
        "scope": record.scope,
        "status": record.status,
        "origin": record.origin,
        "machine_observed": record.origin == "machine",
    }


def _check_ref(read: IntentRead, binding: ProjectBinding, requirement_id: str,
               ref: Any) -> list[dict[str, Any]]:
    """Issues of one cited evidence reference, in emission order (at most one per state)."""
    where = {"requirement_id": requirement_id, "evidence_id": ref.id,
             "recorded_revision": ref.revision}
    failure = read.failures.get(ref.id)
    record = read.evidence.get(ref.id)
    if record is None and failure is None:
        return [_issue("evidence_missing", f"evidence {ref.id} does not exist in the ledger",
                       **where)]
    if failure is not None:
        return [_issue(failure[0], f"evidence {ref.id} could not be read: {failure[1]}", **where)]
    assert record is not None
    if record.id == read.record.id:
        return [_issue("evidence_out_of_scope",
                       "the intent record cannot be evidence for its own requirements", **where)]
    if record.scope not in binding.evidence_scopes:
        return [_issue("evidence_out_of_scope",
                       f"evidence {ref.id} belongs to {record.scope}, outside this project",
                       **where)]
    if record.status != "current":
        how = (f"superseded by {record.superseded_by}" if record.status == "superseded"
               else "retired")
        return [_issue("evidence_retired", f"evidence {ref.id} is {how}", **where)]
    out = []
    if record.revision != ref.revision:
        out.append(_issue(
            "evidence_revision_stale",
            f"evidence {ref.id} is cited at revision {ref.revision}; its current revision is "
            f"{record.revision}", current_revision=record.revision, **where))
        cited = read.cited_versions.get((ref.id, ref.revision))
        if ref.data_sha256 is not None and cited is not None and cited.data_sha256 != ref.data_sha256:
            out.append(_issue("evidence_hash_mismatch",
                              f"the data of {ref.id} revision {ref.revision} does not have the "
                              "cited data_sha256", **where))
    elif ref.data_sha256 is not None and record.data_sha256 != ref.data_sha256:
        out.append(_issue("evidence_hash_mismatch",
                          f"the data of {ref.id} revision {ref.revision} does not have the cited "
                          "data_sha256", **where))
    return out


def _requirement_issues(read: IntentRead, binding: ProjectBinding, requirement_id: str,
                        result: RequirementResult | None) -> list[dict[str, Any]]:
    if result is None:
        return [_issue("missing_result", f"requirement {requirement_id} has no result",
                       requirement_id=requirement_id)]
    out = []
    if result.status != "passed":
        out.append(_issue("result_not_passed",
                          f"requirement {requirement_id} is recorded as {result.status}",
                          requirement_id=requirement_id))
    elif not result.notes.strip():
        out.append(_issue("missing_claim_note",
                          f"the passed result of {requirement_id} does not explain its evidence",
                          requirement_id=requirement_id))
    if result.status == "passed" and not result.evidence:
        out.append(_issue("missing_evidence",
                          f"the passed result of {requirement_id} cites no evidence",
                          requirement_id=requirement_id))
    for ref in result.evidence:
        out.extend(_check_ref(read, binding, requirement_id, ref))
    if result.status == "passed" and result.evidence and not out:
        cited = [read.evidence.get(ref.id) for ref in result.evidence]
        if not any(r is not None and r.origin == "machine" for r in cited):
            out.append(_issue(
                "evidence_only_claimed",
                f"requirement {requirement_id} rests only on claimed records; none was observed "
                "by assay's evidence runner", requirement_id=requirement_id))
    return out


def build_report(read: IntentRead, binding: ProjectBinding) -> dict[str, Any]:
    """The report from data already read (everything except ``continuity``)."""
    doc = read.document
    acceptance = doc.acceptance
    issues: list[dict[str, Any]] = []
    hash_matches = acceptance is not None and acceptance.intent_sha256 == doc.intent_sha256
    known = set(doc.requirement_ids)
    if acceptance is None:
        issues.append(_issue("missing_acceptance", "the intent has no acceptance mapping yet"))
    else:
        if not hash_matches:
            issues.append(_issue(
                "intent_hash_mismatch",
                f"acceptance was mapped to intent {acceptance.intent_sha256}; the intent is now "
                f"{doc.intent_sha256}", recorded_intent_sha256=acceptance.intent_sha256))
        for index, blocker in enumerate(acceptance.blockers):
            issues.append(_issue("unresolved_blocker", f"blocker: {blocker}", blocker_index=index))
    for index, task in enumerate(doc.tasks):
        for rid in task.requirement_ids:
            if rid not in known:
                issues.append(_issue(
                    "unknown_requirement",
                    f"task {task.runtime_task_id} names unknown requirement {rid}",
                    requirement_id=rid, task_index=index))
    results = {r.requirement_id: r for r in acceptance.results} if acceptance else {}
    own_issues: dict[str, list[dict[str, Any]]] = {}
    for req in doc.requirements:
        found = _requirement_issues(read, binding, req.id, results.get(req.id)) if acceptance else []
        own_issues[req.id] = found
        issues.extend(found)

    children: dict[str, list[str]] = {r.id: [] for r in doc.requirements}
    for req in doc.requirements:
        if req.parent_id is not None:
            children[req.parent_id].append(req.id)
    own_ready: dict[str, bool] = {}
    for req in doc.requirements:
        result = results.get(req.id)
        blocking = [i for i in own_issues[req.id] if not i.get("advisory")]
        own_ready[req.id] = (result is not None and result.status == "passed" and hash_matches
                             and not blocking)
    subtree: dict[str, bool] = {}

    def resolve(rid: str) -> bool:
        # Parents resolve after their children (iteratively: trees may be deep).
        stack = [(rid, False)]
        while stack:
            node, expanded = stack.pop()
            if node in subtree:
                continue
            if not expanded:
                stack.append((node, True))
                stack.extend((c, False) for c in children[node] if c not in subtree)
            else:
                subtree[node] = own_ready[node] and all(subtree[c] for c in children[node])
        return subtree[rid]

    delta_rows = []
    summary = []
    for req in doc.requirements:
        result = results.get(req.id)
        sub = resolve(req.id)
        if result is None:
            status = "not_started"
        elif result.status == "passed" and not hash_matches:
            status = "stale_intent"
        elif result.status == "failed":
            status = "failed"
        elif result.status == "unverified":
            status = "unverified"
        elif not own_ready[req.id]:
            status = "reported_complete_needs_evidence"
        elif not sub:
            status = "awaiting_descendants"
        else:
            status = COMPLETE
        delta_rows.append({
            "id": req.id,
            "parent_id": req.parent_id,
            "result_status": result.status if result else None,
            "status": status,
            "own_ready_to_review": own_ready[req.id],
            "subtree_ready_to_review": sub,
            "issue_codes": (["intent_hash_mismatch"] if status == "stale_intent" else [])
            + [i["code"] for i in own_issues[req.id]],
        })
        summary.append({"id": req.id, "status": status, "ready_to_review": sub})

    ready = not any(not i.get("advisory") for i in issues)
    record_errors = []
    for rid, record in read.evidence.items():
        if rid in read.failures:
            code, message = read.failures[rid]
            record_errors.append({"id": rid, "code": code, "message": message})
    next_actions: list[str] = []
    for issue in issues:
        if issue["action"] not in next_actions:
            next_actions.append(issue["action"])

    basis_records = {read.record.id: read.record.revision}
    for rid, record in read.evidence.items():
        basis_records[rid] = record.revision if record is not None else 0
    tasks = [t.to_dict() for t in doc.tasks]
    return {
        "intent_record_id": read.record.id,
        "intent_revision": read.record.revision,
        "intent_sha256": doc.intent_sha256,
        "ready_to_review": ready,
        "complete": not record_errors,
        "issues": issues,
        "record_errors": record_errors,
        "requirements": summary,
        "task_references": tasks,
        "plan": _plan(read, children),
        "actual": _actual(read, binding),
        "delta": {
            "ready_to_review": ready,
            "global_issue_codes": [i["code"] for i in issues if "requirement_id" not in i
                                   or i["code"] == "unknown_requirement"],
            "requirements": delta_rows,
        },
        "continuation": doc.continuation_raw,
        "continuity": None,
        "next": next_actions,
        "notice": NOTICE,
        "write_basis": {
            "epoch": read.epoch,
            "ledger_revision": read.ledger_revision,
            "records": dict(sorted(basis_records.items())),
            "project": binding.to_dict(),
        },
    }


def _plan(read: IntentRead, children: Mapping[str, list[str]]) -> dict[str, Any]:
    doc = read.document
    return {
        "intent_record_id": read.record.id,
        "intent_revision": read.record.revision,
        "intent_sha256": doc.intent_sha256,
        "brief": doc.brief,
        "user_reference": doc.user_reference,
        "boundaries": list(doc.boundaries),
        "non_goals": list(doc.non_goals),
        "root_ids": [r.id for r in doc.requirements if r.parent_id is None],
        "requirements": [
            {"id": r.id, "text": r.text, "acceptance": r.acceptance, "parent_id": r.parent_id,
             "child_ids": list(children[r.id])}
            for r in doc.requirements
        ],
    }


def _actual(read: IntentRead, binding: ProjectBinding) -> dict[str, Any]:
    acceptance = read.document.acceptance
    results = []
    for result in acceptance.results if acceptance else ():
        refs = []
        for ref in result.evidence:
            record = read.evidence.get(ref.id)
            usable = record is not None
            refs.append({
                **ref.to_dict(),
                "current": _evidence_identity(record) if usable and record is not None else None,
                "machine_observed": bool(usable and record is not None
                                         and record.revision == ref.revision
                                         and record.origin == "machine"),
            })
        results.append({"requirement_id": result.requirement_id, "status": result.status,
                        "notes": result.notes, "evidence": refs})
    identities = [
        _evidence_identity(record) for rid, record in read.evidence.items()
        if record is not None
    ]
    return {
        "acceptance_recorded": acceptance is not None,
        "recorded_intent_sha256": acceptance.intent_sha256 if acceptance else None,
        "blockers": list(acceptance.blockers) if acceptance else [],
        "results": results,
        "evidence": identities,
        "tasks": [dict(t.to_dict(), advisory=True) for t in read.document.tasks],
    }
