"""``work check``: the readiness report of one intent record.

:func:`work_check` reads one intent record and every record it cites from a
single :class:`~assay.ledger.store.Reader` (one ledger revision) and returns
the report as plain JSON data. It is a pure function of that snapshot and the
:class:`~assay.intent.snapshot.ProjectBinding`: the same ledger revision and
inputs give byte-identical canonical output. It never writes.

Issue codes, in emission order (global first, then per requirement in
recorded order, then per cited evidence reference in citation order)::

    intent_unreadable,
    missing_acceptance, intent_hash_mismatch, unresolved_blocker,
    unknown_requirement,
    missing_result, result_not_passed, missing_claim_note, missing_evidence,
    evidence_unavailable, evidence_missing, evidence_unreadable,
    evidence_out_of_scope, evidence_retired, evidence_revision_stale,
    evidence_hash_mismatch, evidence_run_not_passed, evidence_command_mismatch,
    requirement_tests_failed, requirement_tests_skipped, requirement_tests_missing,
    evidence_only_claimed (advisory), gate_gave_up (advisory)

(``gate_gave_up`` is added by the ``work check`` operation from the stop
gate's records, see :mod:`assay.gate.records`; this module never emits it.)

``ready_to_review`` is true exactly when no issue is blocking; the one
advisory code, ``evidence_only_claimed``, says that a requirement rests only
on claimed records (none written by assay's own evidence runner) and does
not by itself make the report unready. Machine evidence decides where it is
cited: a ``passed`` result citing a run that did not pass is blocking, and so
is a run of a command the requirement's ``verify_with`` does not name.
A cited run with per-test outcomes speaks for each requirement its tests
were mapped to (:mod:`assay.intent.test_outcomes`): such a requirement rests
on its own tests (a run that failed elsewhere does not block it), and its
failed, skipped or missing tests are blocking issues that name them.

Every stored version the report uses is checked before use (its text hashes
to its digest and parses strictly, see :class:`~assay.ledger.store.Record`).
A damaged version is never used: it is an ``evidence_unreadable`` issue with
a ``record_errors`` entry naming the exact read of the stored text, and a
damaged intent record gives a report with the single issue
``intent_unreadable``. Neither is ever ready.

Imports the ledger contract, the base modules and its sibling modules.
"""

from __future__ import annotations

from collections.abc import Mapping

from assay.errors import AssayError, UnavailableError
from assay.intent.contract import EvidenceRef, Requirement, RequirementResult, parse_intent_data
from assay.intent.snapshot import IntentRead, ProjectBinding, is_readable, raw_read
from assay.intent.test_outcomes import requirement_rollup, rollup_issues
from assay.ledger.store import Reader, Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "ADVISORY_CODES",
    "DELTA_STATUSES",
    "ISSUE_CODES",
    "NOTICE",
    "REPORT_KEYS",
    "IntentRead",
    "build_report",
    "fetch_visible",
    "raw_read",
    "read_intent",
    "require_readable",
    "run_facts",
    "work_check",
]

ISSUE_CODES = (
    "intent_unreadable",
    "missing_acceptance",
    "intent_hash_mismatch",
    "unresolved_blocker",
    "unknown_requirement",
    "missing_result",
    "result_not_passed",
    "missing_claim_note",
    "missing_evidence",
    "evidence_unavailable",
    "evidence_missing",
    "evidence_unreadable",
    "evidence_out_of_scope",
    "evidence_retired",
    "evidence_revision_stale",
    "evidence_hash_mismatch",
    "evidence_run_not_passed",
    "evidence_command_mismatch",
    "requirement_tests_failed",
    "requirement_tests_skipped",
    "requirement_tests_missing",
    "evidence_only_claimed",
    "gate_gave_up",
)
ADVISORY_CODES = frozenset({"evidence_only_claimed", "gate_gave_up"})
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
# The record data schema of assay's own evidence runs (assay.evidence.record.SCHEMA).
_RUN_SCHEMA = "assay.evidence.v1"


def _issue(code: str, message: str, action: str, **where: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"code": code, "message": message, "action": action}
    for key, value in where.items():
        if value is not None:
            out[key] = value
    if code in ADVISORY_CODES:
        out["advisory"] = True
    return out


def _quoted(args: list[str]) -> str:
    return "'assay " + " ".join(args) + "'"


def fetch_visible(reader: Reader, ids: list[str], principal: str
                  ) -> tuple[dict[str, Record | None], dict[str, tuple[str, str]]]:
    """Current versions of ``ids`` visible to ``principal``, and the ids that failed to read.

    A failure is ``(code, message)``: ``evidence_unavailable`` when the store
    could not be reached. A version whose stored data is damaged is returned
    as it is (its ``damage`` says why); callers never use its data. One failed
    record never hides the others.
    """
    found: dict[str, Record | None] = {}
    failures: dict[str, tuple[str, str]] = {}
    try:
        batch: dict[str, Record] | None = reader.get_many(ids)
    except AssayError:
        batch = None
    if batch is not None and all(r.audience == "project" for r in batch.values()):
        # Project records are readable by every principal (is_readable).
        return {rid: batch.get(rid) for rid in ids}, failures
    for rid in ids:
        if batch is not None:
            record = batch.get(rid)
        else:
            try:
                record = reader.get(rid)
            except AssayError as exc:
                failures[rid] = ("evidence_unavailable", exc.message)
                record = None
        found[rid] = record if record is not None and is_readable(record, principal) else None
    return found, failures


def _intent_error(code: str, message: str, action: str, record_id: str) -> AssayError:
    return AssayError(message, code=code, action=action, details={"id": record_id})


def intent_unreadable(record: Record) -> AssayError:
    """The coded error of an intent record whose stored data fails its checks."""
    assert record.damage is not None
    read = raw_read(record.id, record.revision)
    return AssayError(
        f"{record.id} revision {record.revision} is unreadable: {record.damage.message}",
        code="intent_unreadable",
        details={"id": record.id, "revision": record.revision, "reason": record.damage.reason,
                 "read": read},
        action=f"Inspect the stored text with {_quoted(read)}, then put a corrected version "
               "of the intent.")


def read_intent(reader: Reader, binding: ProjectBinding, record_id: str) -> IntentRead:
    """Read the intent record and every cited evidence version from ``reader``.

    Raises ``intent_not_found``, ``not_an_intent_record``, ``intent_out_of_scope``,
    ``intent_not_current``, ``intent_unreadable`` or ``invalid_intent_contract``.
    A record private to another principal reads as absent, here and for every
    cited record.
    """
    record = reader.get(record_id)
    if record is not None and not is_readable(record, binding.principal):
        record = None  # a private record of someone else is indistinguishable from absent
    if record is None:
        raise _intent_error("intent_not_found", f"no record {record_id} in the ledger",
                            "Check the id with 'assay find', or record the intent first.",
                            record_id)
    if record.kind != "knowledge":
        article = "an" if record.kind[:1] in "aeiou" else "a"
        raise _intent_error("not_an_intent_record",
                            f"{record_id} is {article} {record.kind} record, not a knowledge record",
                            "Pass the id of the knowledge record that holds the intent.", record_id)
    if record.scope not in binding.evidence_scopes:
        raise _intent_error("intent_out_of_scope",
                            f"{record_id} belongs to {record.scope}, not to {binding.scope}",
                            "Check the intent from its own project, or admit that scope.",
                            record_id)
    if record.status != "current":
        raise _intent_error("intent_not_current", f"{record_id} is {record.status}",
                            "Check the current intent record instead.", record_id)
    if record.damage is not None:
        raise intent_unreadable(record)
    document = parse_intent_data(record.data, record_id=record.id)
    cited_ids: dict[str, None] = {}
    for result in document.acceptance.results if document.acceptance else ():
        for ref in result.evidence:
            cited_ids.setdefault(ref.id, None)
    evidence, failures = fetch_visible(reader, list(cited_ids), binding.principal)
    cited: dict[tuple[str, int], Record | None] = {}
    for result in document.acceptance.results if document.acceptance else ():
        for ref in result.evidence:
            current = evidence.get(ref.id)
            key = (ref.id, ref.revision)
            if current is None or current.revision == ref.revision or key in cited:
                continue
            # The cited version itself: its origin and run outcome are what the
            # result rests on, even when a newer run exists.
            try:
                cited[key] = reader.get(ref.id, ref.revision)
            except UnavailableError:
                cited[key] = None
    return IntentRead(record, document, evidence, failures, cited,
                      reader.epoch, reader.ledger_revision)


def work_check(reader: Reader, binding: ProjectBinding, record_id: str, *,
               continuity: bool = True) -> dict[str, Any]:
    """The full ``work check`` report of ``record_id`` as seen by ``reader``.

    The write basis covers the intent, every cited record and (with
    ``continuity``) every record and decision event the projection selected,
    so a guarded write based on this report fails once any of them changed.
    """
    try:
        read = read_intent(reader, binding, record_id)
    except AssayError as exc:
        if exc.code != "intent_unreadable":
            raise
        return _unreadable_report(reader, binding, exc)
    report = build_report(read, binding)
    if continuity:
        from assay.intent.continuity import project_continuity

        projection, selected = project_continuity(read, binding, report, reader)
        report["continuity"] = projection
        records = dict(report["write_basis"]["records"])
        for rid, revision in selected.items():
            records.setdefault(rid, revision)
        report["write_basis"]["records"] = dict(sorted(records.items()))
    return report


def require_readable(report: dict[str, Any]) -> dict[str, Any]:
    """``report`` itself, or the ``intent_unreadable`` error when its intent could not be read.

    For callers that derive something from the intent (a handoff, a resume
    view) and cannot do so from a damaged record.
    """
    if report["intent_sha256"] is None:
        error = report["record_errors"][0]
        raise AssayError(error["message"], code="intent_unreadable",
                         action=report["issues"][0]["action"],
                         details={k: error[k] for k in ("id", "revision", "reason", "read")})
    return report


def run_facts(record: Record | None) -> dict[str, Any] | None:
    """The outcome of an evidence run written by assay's runner, or None for anything else.

    ``{status, exit_code, command}`` from an intact machine-origin record in
    the runner's schema. Never raises.
    """
    if record is None or record.origin != "machine" or record.damage is not None:
        return None
    data = record.data
    if not isinstance(data, dict) or data.get("schema") != _RUN_SCHEMA:
        return None
    observation = data["observation"] if isinstance(data.get("observation"), dict) else {}
    command = data["command"] if isinstance(data.get("command"), dict) else {}
    exit_code = observation.get("exit_code")
    return {
        "status": observation.get("status") if isinstance(observation.get("status"), str)
        else "unknown",
        "exit_code": exit_code if isinstance(exit_code, int) and not isinstance(exit_code, bool)
        else None,
        "command": command.get("name") if isinstance(command.get("name"), str) else None,
    }


def _outcome(run: Mapping[str, Any]) -> str:
    """``failed (exit 1)``, ``passed``, ``timeout``."""
    exit_text = f" (exit {run['exit_code']})" if run["exit_code"] not in (None, 0) else ""
    return f"{run['status']}{exit_text}"


def _cited_version(read: IntentRead, ref: EvidenceRef) -> Record | None:
    current = read.evidence.get(ref.id)
    if current is not None and current.revision == ref.revision:
        return current
    return read.cited_versions.get((ref.id, ref.revision))


_UNSEEN: Any = object()


class _Citations:
    """Each cited version of one report and its run outcome, looked up once per version."""

    __slots__ = ("_current", "_earlier", "_older_runs", "_runs")

    def __init__(self, read: IntentRead) -> None:
        self._current = read.evidence
        self._earlier = read.cited_versions
        self._runs: dict[str, dict[str, Any] | None] = {}  # of current versions, by id
        self._older_runs: dict[tuple[str, int], dict[str, Any] | None] = {}

    def version(self, ref: EvidenceRef) -> tuple[Record | None, dict[str, Any] | None]:
        """The version ``ref`` cites (None when unread) and its :func:`run_facts`."""
        current = self._current.get(ref.id)
        if current is not None and current.revision == ref.revision:
            run = self._runs.get(ref.id, _UNSEEN)
            if run is _UNSEEN:
                run = self._runs[ref.id] = run_facts(current)
            return current, run
        key = (ref.id, ref.revision)
        cited = self._earlier.get(key)
        run = self._older_runs.get(key, _UNSEEN)
        if run is _UNSEEN:
            run = self._older_runs[key] = run_facts(cited)
        return cited, run


def _unreadable(version: Record, where: dict[str, Any], rid: str,
                errors: dict[tuple[str, int], dict[str, Any]]) -> dict[str, Any]:
    assert version.damage is not None
    args = raw_read(version.id, version.revision)
    errors.setdefault((version.id, version.revision), {
        "id": version.id, "revision": version.revision, "code": "evidence_unreadable",
        "reason": version.damage.reason, "message": version.damage.message, "read": args})
    return _issue(
        "evidence_unreadable",
        f"evidence {version.id} revision {version.revision} is unreadable: "
        f"{version.damage.message}",
        f"Inspect the stored text with {_quoted(args)}, then record a new version and cite "
        f"it for {rid}.", reason=version.damage.reason, **where)


def _check_ref(read: IntentRead, scopes: tuple[str, ...], req: Requirement,
               result: RequirementResult, ref: EvidenceRef, citations: _Citations,
               errors: dict[tuple[str, int], dict[str, Any]]) -> list[dict[str, Any]]:
    """Issues of one cited evidence reference, in emission order."""
    record = read.evidence.get(ref.id)
    cited, run = citations.version(ref)
    if (record is not None and record is cited and run is None and record.damage is None
            and record.status == "current" and record.scope in scopes
            and record.id != read.record.id
            and (ref.data_sha256 is None or ref.data_sha256 == record.data_sha256)
            and ref.id not in read.failures):
        # The common case: the intact current version of a record in scope, not a run.
        return []
    rid = req.id
    where = {"requirement_id": rid, "evidence_id": ref.id, "recorded_revision": ref.revision}
    failure = read.failures.get(ref.id)
    if failure is not None:
        errors.setdefault((ref.id, 0), {"id": ref.id, "code": failure[0], "message": failure[1]})
        return [_issue(failure[0], f"evidence {ref.id} could not be read: {failure[1]}",
                       f"Retry when the ledger is reachable; {ref.id} could not be read.",
                       **where)]
    if record is None:
        errors.setdefault((ref.id, 0), {"id": ref.id, "code": "evidence_missing",
                                        "message": f"no record {ref.id} in the ledger"})
        return [_issue("evidence_missing", f"evidence {ref.id} does not exist in the ledger",
                       f"Record evidence {ref.id}, or cite an existing record for {rid}.",
                       **where)]
    if record.damage is not None:
        return [_unreadable(record, where, rid, errors)]
    if record.id == read.record.id:
        return [_issue("evidence_out_of_scope",
                       "the intent record cannot be evidence for its own requirements",
                       f"Cite a separate evidence record for {rid}.", **where)]
    if record.scope not in scopes:
        return [_issue("evidence_out_of_scope",
                       f"evidence {ref.id} belongs to {record.scope}, outside this project",
                       f"Cite evidence from this project or an admitted scope for {rid}.",
                       **where)]
    if record.status != "current":
        how = (f"superseded by {record.superseded_by}" if record.status == "superseded"
               else "retired")
        return [_issue("evidence_retired", f"evidence {ref.id} is {how}",
                       f"Cite the current record that replaces {ref.id} for {rid}.", **where)]
    out = []
    if record.revision != ref.revision:
        newer = run_facts(record)
        what = (f"; its current revision {record.revision} is a run that {_outcome(newer)}"
                if newer is not None else f"; its current revision is {record.revision}")
        out.append(_issue(
            "evidence_revision_stale", f"evidence {ref.id} is cited at revision {ref.revision}"
            + what,
            f"Re-examine {ref.id} at revision {record.revision} and record a new result for "
            f"{rid} if it still supports it.", current_revision=record.revision, **where))
        if cited is not None and cited.damage is not None:
            out.append(_unreadable(cited, where, rid, errors))
            return out
    if ref.data_sha256 is not None and cited is not None and cited.data_sha256 != ref.data_sha256:
        out.append(_issue("evidence_hash_mismatch",
                          f"the data of {ref.id} revision {ref.revision} does not have the "
                          "cited data_sha256",
                          f"Re-read {ref.id} revision {ref.revision} and correct the "
                          f"data_sha256 cited for {rid}.", **where))
    rollup = requirement_rollup(cited, rid) if run is not None else None
    if result.status == "passed" and run is not None:
        if run["status"] != "passed" and (rollup is None or rollup["outcome"] != "passed"):
            out.append(_issue(
                "evidence_run_not_passed",
                f"{rid} is recorded as passed, but the run {ref.id} revision {ref.revision} "
                f"{_outcome(run)}",
                f"Fix the failure and rerun it ({_rerun(run, read, rid)}), then cite the "
                f"passing run; or record {rid} as failed.", run_status=run["status"], **where))
        if req.verify_with and run["command"] not in req.verify_with:
            out.append(_issue(
                "evidence_command_mismatch",
                f"{ref.id} is a run of {run['command']}; {rid} is verified with "
                f"{', '.join(req.verify_with)}",
                f"Cite a run of {req.verify_with[0]} for {rid} "
                f"({_quoted(['evidence', 'run', '--for', f'{read.record.id}#{rid}', '--', req.verify_with[0]])}).",
                **where))
    if rollup is not None and run is not None:
        rerun = _quoted(["evidence", "run", "--", run["command"]]) if run["command"] \
            else "assay evidence run"
        out.extend(rollup_issues(rollup, where, rerun))
    return out


def _rerun(run: Mapping[str, Any], read: IntentRead, rid: str) -> str:
    if not run["command"]:
        return "assay evidence run"
    return _quoted(["evidence", "run", "--for", f"{read.record.id}#{rid}", "--", run["command"]])


def _requirement_issues(read: IntentRead, scopes: tuple[str, ...], req: Requirement,
                        result: RequirementResult | None, citations: _Citations,
                        errors: dict[tuple[str, int], dict[str, Any]]) -> list[dict[str, Any]]:
    rid = req.id
    if result is None:
        return [_issue("missing_result", f"requirement {rid} has no result",
                       f"Record a result for {rid} (assay work accept --requirement {rid} with "
                       "the evidence it rests on).", requirement_id=rid)]
    out = []
    if result.status != "passed":
        out.append(_issue("result_not_passed", f"requirement {rid} is recorded as {result.status}",
                          f"Finish {rid} and record a passed result with current evidence, or "
                          f"keep it {result.status}.", requirement_id=rid, status=result.status))
    if not result.notes.strip():
        out.append(_issue("missing_claim_note",
                          f"the result of {rid} does not explain how its evidence meets the "
                          "acceptance", f"Explain in {rid}'s result notes why the cited evidence "
                          "meets its acceptance.", requirement_id=rid))
    if not result.evidence:
        out.append(_issue("missing_evidence", f"the result of {rid} cites no evidence",
                          f"Cite at least one evidence record version for {rid}.",
                          requirement_id=rid))
    for ref in result.evidence:
        out.extend(_check_ref(read, scopes, req, result, ref, citations, errors))
    if result.status == "passed" and result.evidence and not out:
        cited = (citations.version(ref)[0] for ref in result.evidence)
        if not any(r is not None and r.origin == "machine" for r in cited):
            how = (f"({_quoted(['evidence', 'run', '--for', f'{read.record.id}#{rid}', '--', req.verify_with[0]])})"
                   if req.verify_with else "with assay evidence run")
            out.append(_issue(
                "evidence_only_claimed",
                f"requirement {rid} rests only on claimed records; none was observed "
                "by assay's evidence runner",
                f"Run {rid}'s acceptance check {how} and cite the machine-observed record.",
                requirement_id=rid))
    return out


def build_report(read: IntentRead, binding: ProjectBinding) -> dict[str, Any]:
    """The report from data already read (everything except ``continuity``)."""
    doc = read.document
    acceptance = doc.acceptance
    issues: list[dict[str, Any]] = []
    hash_matches = acceptance is not None and acceptance.intent_sha256 == doc.intent_sha256
    known = set(doc.requirement_ids)
    if acceptance is None:
        issues.append(_issue("missing_acceptance", "the intent has no acceptance mapping yet",
                             "Record a result for each requirement with assay work accept."))
    else:
        if not hash_matches:
            issues.append(_issue(
                "intent_hash_mismatch",
                f"acceptance was mapped to intent {acceptance.intent_sha256}; the intent is now "
                f"{doc.intent_sha256}",
                "The intent changed after its results were recorded: re-check each result "
                "against the current intent and record it again with assay work accept.",
                recorded_intent_sha256=acceptance.intent_sha256))
        for index, blocker in enumerate(acceptance.blockers):
            issues.append(_issue("unresolved_blocker", f"blocker: {blocker}",
                                 f"Resolve the blocker ({blocker}), then remove it from "
                                 "data.acceptance.blockers.", blocker_index=index))
        for index, given in enumerate(acceptance.results):
            if given.requirement_id not in known:
                issues.append(_issue(
                    "unknown_requirement",
                    f"a result names {given.requirement_id}, which the intent does not have",
                    f"Remove or correct the result for {given.requirement_id}: the intent has "
                    "no such requirement.", requirement_id=given.requirement_id,
                    result_index=index))
    results = {r.requirement_id: r for r in acceptance.results} if acceptance else {}
    errors: dict[tuple[str, int], dict[str, Any]] = {}
    own_issues: dict[str, list[dict[str, Any]]] = {}
    citations = _Citations(read)
    scopes = binding.evidence_scopes
    for req in doc.requirements:
        found = (_requirement_issues(read, scopes, req, results.get(req.id), citations, errors)
                 if acceptance else [])
        own_issues[req.id] = found
        issues.extend(found)

    children: dict[str, list[str]] = {r.id: [] for r in doc.requirements}
    for req in doc.requirements:
        if req.parent_id is not None:
            children[req.parent_id].append(req.id)
    own_ready: dict[str, bool] = {}
    for req in doc.requirements:
        recorded = results.get(req.id)
        blocking = [i for i in own_issues[req.id] if not i.get("advisory")]
        own_ready[req.id] = (recorded is not None and recorded.status == "passed"
                             and hash_matches and not blocking)
    subtree = _subtree_ready(doc.requirement_ids, children, own_ready)

    delta_rows = []
    summary = []
    for req in doc.requirements:
        result = results.get(req.id)
        sub = subtree[req.id]
        if result is None:
            status = "not_started"
        elif result.status == "failed":
            status = "failed"
        elif result.status == "unverified":
            status = "unverified"
        elif not hash_matches:
            status = "stale_intent"
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
            "issue_codes": [i["code"] for i in own_issues[req.id]],
        })
        summary.append({"id": req.id, "status": status, "ready_to_review": sub})

    ready = not any(not i.get("advisory") for i in issues)
    next_actions: list[str] = []
    for issue in issues:
        if issue["action"] not in next_actions:
            next_actions.append(issue["action"])

    basis_records = {read.record.id: read.record.revision}
    for rid, record in read.evidence.items():
        basis_records[rid] = record.revision if record is not None else 0
    tasks = [t.to_dict() for t in doc.tasks]
    record_errors = list(errors.values())
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
        "actual": _actual(read, citations),
        "delta": {
            "ready_to_review": ready,
            "global_issue_codes": [i["code"] for i in issues if "requirement_id" not in i],
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


def _subtree_ready(order: tuple[str, ...], children: Mapping[str, list[str]],
                   own_ready: Mapping[str, bool]) -> dict[str, bool]:
    """Each requirement's readiness with all its descendants, children resolved first.

    Iterative (trees may be deep): a post-order walk from every root.
    """
    subtree: dict[str, bool] = {}
    for rid in order:
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
    return subtree


def _unreadable_report(reader: Reader, binding: ProjectBinding, error: AssayError
                       ) -> dict[str, Any]:
    """The report of an intent record whose stored data is damaged: never ready."""
    details = error.details or {}
    record_id, revision = details["id"], details["revision"]
    issue = _issue("intent_unreadable", error.message, error.action or "")
    return {
        "intent_record_id": record_id,
        "intent_revision": revision,
        "intent_sha256": None,
        "ready_to_review": False,
        "complete": False,
        "issues": [issue],
        "record_errors": [{"id": record_id, "revision": revision, "code": "intent_unreadable",
                           "reason": details["reason"], "message": error.message,
                           "read": details["read"]}],
        "requirements": [],
        "task_references": [],
        "plan": {"intent_record_id": record_id, "intent_revision": revision,
                 "intent_sha256": None, "brief": "", "user_reference": "", "boundaries": [],
                 "non_goals": [], "root_ids": [], "requirements": []},
        "actual": {"acceptance_recorded": False, "recorded_intent_sha256": None, "blockers": [],
                   "results": [], "evidence": [], "tasks": []},
        "delta": {"ready_to_review": False, "global_issue_codes": ["intent_unreadable"],
                  "requirements": []},
        "continuation": None,
        "continuity": None,
        "next": [issue["action"]],
        "notice": NOTICE,
        "write_basis": {"epoch": reader.epoch, "ledger_revision": reader.ledger_revision,
                        "records": {record_id: revision}, "project": binding.to_dict()},
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
             "child_ids": list(children[r.id]),
             **({"verify_with": list(r.verify_with)} if r.verify_with else {})}
            for r in doc.requirements
        ],
    }


def _actual(read: IntentRead, citations: _Citations) -> dict[str, Any]:
    acceptance = read.document.acceptance
    results = []
    evidence = read.evidence
    version = citations.version
    for result in acceptance.results if acceptance else ():
        refs = []
        for ref in result.evidence:
            record = evidence.get(ref.id)
            cited, run = version(ref)
            # Who wrote the cited version, whatever has happened since.
            origin = cited.origin if cited is not None and cited.damage is None else None
            # The current version's identity is in actual.evidence, once per record.
            current = record.revision if record is not None else None
            # ref.to_dict() and the fields above, in that order.
            refs.append({"id": ref.id, "revision": ref.revision, "current_revision": current,
                         "origin": origin, "machine_observed": origin == "machine", "run": run}
                        if ref.data_sha256 is None else
                        {"id": ref.id, "revision": ref.revision, "data_sha256": ref.data_sha256,
                         "current_revision": current, "origin": origin,
                         "machine_observed": origin == "machine", "run": run})
        results.append({"requirement_id": result.requirement_id, "status": result.status,
                        "notes": result.notes, "evidence": refs})
    identities = [  # the identity of each intact current version
        {"id": record.id, "revision": record.revision, "data_sha256": record.data_sha256,
         "kind": record.kind, "scope": record.scope, "status": record.status,
         "origin": record.origin, "machine_observed": record.origin == "machine"}
        for record in read.evidence.values() if record is not None and record.damage is None
    ]
    return {
        "acceptance_recorded": acceptance is not None,
        "recorded_intent_sha256": acceptance.intent_sha256 if acceptance else None,
        "blockers": list(acceptance.blockers) if acceptance else [],
        "results": results,
        "evidence": identities,
        "tasks": [dict(t.to_dict(), advisory=True) for t in read.document.tasks],
    }
