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
    gate_pin_unreadable, gate_config_changed, check_definition_changed,
    missing_result, result_not_passed, missing_claim_note, missing_evidence,
    evidence_unavailable, evidence_missing, evidence_unreadable,
    evidence_out_of_scope, evidence_retired, evidence_revision_stale,
    evidence_hash_mismatch, evidence_run_not_passed, evidence_command_mismatch,
    evidence_for_other_intent, evidence_results_unverified, evidence_workspace_changed,
    requirement_tests_failed, requirement_tests_skipped, requirement_tests_missing,
    requirement_tests_changed,
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
failed, skipped or missing tests are blocking issues that name them. A run
that is another intent's evidence (``evidence_for_other_intent``) or whose
results file could not be used (``evidence_results_unverified``) never
supports a requirement.

The checks and tests are part of the contract (:mod:`assay.intent.pin`):
the pin issues compare the intent's pin with ``assay.toml`` now and with the
cited runs, and the gate's pin with the gate's configuration now.

Freshness is part of readiness: with the project's state
(:class:`~assay.intent.snapshot.ProjectState`, observed once by the
operation), a cited run whose workspace differs from the workspace now is
``evidence_workspace_changed``, naming the paths
(:mod:`assay.evidence.freshness`). A cited revision that is not the current
one is stale only when some later run of the command ended on another
workspace, ran another declaration or had another outcome for the
requirement; the action for every requirement citing a stale run of one
command is one literal command. The report's ``workspace`` says what it
compared with (null: no state given, nothing compared; ``not_applicable``:
outside a git work tree, where nothing can be compared).

Every stored version the report uses is checked before use (its text hashes
to its digest and parses strictly, see :class:`~assay.ledger.store.Record`).
A damaged version is never used: it is an ``evidence_unreadable`` issue with
a ``record_errors`` entry naming the exact read of the stored text, and a
damaged intent record gives a report with the single issue
``intent_unreadable``. Neither is ever ready.

Imports the ledger contract, the base modules and its sibling modules
(and, when a report compares runs with the workspace, evidence's freshness).
"""

from __future__ import annotations

from collections.abc import Mapping

from assay.errors import AssayError, UnavailableError
from assay.intent.contract import EvidenceRef, Requirement, RequirementResult, parse_intent_data
from assay.intent.snapshot import IntentRead, ProjectBinding, is_readable, raw_read
from assay.intent.test_outcomes import intent_requirements, rollup_issues, run_verdict
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
    "gate_pin_unreadable",
    "gate_config_changed",
    "check_definition_changed",
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
    "evidence_for_other_intent",
    "evidence_results_unverified",
    "evidence_workspace_changed",
    "requirement_tests_failed",
    "requirement_tests_skipped",
    "requirement_tests_missing",
    "requirement_tests_changed",
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
    "pins", "workspace", "continuation", "continuity", "next", "notice", "write_basis",
)
NOTICE = (
    "This report describes recorded mappings between requirements and record versions. "
    "It runs no tests and certifies no claim; evidence marked machine_observed was written "
    "by assay's own evidence runner, everything else is a claim. Reading it wrote nothing."
)
COMPLETE = "reported_complete_with_current_evidence"
# The record data schema of assay's own evidence runs (assay.evidence.record.SCHEMA).
_RUN_SCHEMA = "assay.evidence.v1"
# Later runs of a command read to decide whether an older cited run is still current;
# past this many the older run is stale without reading them.
MAX_LATER_RUNS = 32


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
    oldest: dict[str, int] = {}
    for result in document.acceptance.results if document.acceptance else ():
        for ref in result.evidence:
            current = evidence.get(ref.id)
            key = (ref.id, ref.revision)
            if current is None or current.revision == ref.revision or key in cited:
                continue
            oldest[ref.id] = min(oldest.get(ref.id, ref.revision), ref.revision)
            # The cited version itself: its origin and run outcome are what the
            # result rests on, even when a newer run exists.
            try:
                cited[key] = reader.get(ref.id, ref.revision)
            except UnavailableError:
                cited[key] = None
    later: dict[str, tuple[Record, ...] | None] = {}
    for rid, first in oldest.items():
        current = evidence.get(rid)
        if current is None or run_facts(current) is None or first >= current.revision:
            continue
        if current.revision - first - 1 > MAX_LATER_RUNS:
            later[rid] = None
            continue
        try:
            versions = [reader.get(rid, n) for n in range(first + 1, current.revision)]
        except UnavailableError:
            later[rid] = None
            continue
        later[rid] = tuple(v for v in versions if v is not None)
    from assay.intent.pin import GATE_TARGET, read_pin

    pins = {"checks": read_pin(reader, record_id), "gate": read_pin(reader, GATE_TARGET)}
    return IntentRead(record, document, evidence, failures, cited,
                      reader.epoch, reader.ledger_revision, later, pins)


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


def _same_outcome(a: Record, b: Record, intent_id: str, rid: str) -> str | None:
    """None when run ``b`` shows what run ``a`` showed for ``intent_id#rid``; else how it differs."""
    run_a, run_b = run_facts(a), run_facts(b)
    if run_b is None:
        return "is not a run of assay's runner"
    assert run_a is not None
    from assay.intent.pin import run_contract

    if run_a["command"] != run_b["command"] or run_contract(a) != run_contract(b):
        return f"ran {run_b['command']} with another declaration"
    verdict_a = run_verdict(a, intent_id, rid)
    verdict_b = run_verdict(b, intent_id, rid)
    if verdict_a is not None and verdict_a["kind"] == "rollup":
        was = verdict_a["rollup"]
        now = verdict_b["rollup"] if verdict_b is not None and verdict_b["kind"] == "rollup" \
            else None
        if now is None:
            return f"ran no test mapped to {rid}"
        for key in ("outcome", "tests", "failed_tests", "skipped_tests", "missing_globs"):
            if now[key] != was[key]:
                return (f"had another outcome for {rid}'s tests ({was['outcome']}, "
                        f"{was['tests']} test(s) -> {now['outcome']}, {now['tests']} test(s))")
        return None
    if run_a["status"] != run_b["status"]:
        return f"ended {_outcome(run_b)}"
    return None


def _paths_text(paths: list[str], count: int, complete: bool) -> str:
    shown = ", ".join(paths)
    rest = count - len(paths)
    if not paths:
        return "the changed files could not be named"
    return shown + (f" and {rest} more" if rest > 0 else "") + (
        "" if complete else " (perhaps more: not every path could be named)")


class _Freshness:
    """Whether cited runs still speak for the work: later runs, and the workspace now.

    Computed once per report from the read and the project's state; the
    action for a command's stale citations is one text for every
    requirement citing it, so ``next`` lists it once.
    """

    __slots__ = ("_actions", "_citations", "_diff", "_revision", "_workspace", "git_runs", "read",
                 "runs", "state")

    def __init__(self, read: IntentRead, binding: ProjectBinding, citations: _Citations) -> None:
        self.read = read
        self.state = binding.state
        self._citations = citations
        self._revision: dict[tuple[str, int, str], str | None] = {}
        self._workspace: dict[tuple[str, int], dict[str, Any] | None] = {}
        self._actions: dict[str, str] = {}
        self._diff: Any = None
        # Whether any run of assay's runner is cited, and whether one observed a
        # git workspace: only with runs is the workspace observed at all.
        self.runs = False
        self.git_runs = False
        stale: dict[str, dict[str, None]] = {}
        changed: dict[str, dict[str, None]] = {}  # per command, the paths changed since its runs
        acceptance = read.document.acceptance
        for result in acceptance.results if acceptance else ():
            for ref in result.evidence:
                record = read.evidence.get(ref.id)
                cited, run = citations.version(ref)
                if record is None or record.damage is not None or run is None or cited is None:
                    continue
                self.runs = True
                after = (cited.data.get("workspace") or {}).get("after") \
                    if isinstance(cited.data.get("workspace"), dict) else None
                if isinstance(after, dict) and after.get("status") == "observed":
                    self.git_runs = True
                rid = result.requirement_id
                moved = self.workspace(ref)
                if self.revision(ref, rid) is not None or moved is not None:
                    stale.setdefault(ref.id, {})[rid] = None
                if moved is not None:
                    changed.setdefault(ref.id, {}).update(dict.fromkeys(moved["paths"]))
        for evidence_id, rids in stale.items():
            self._actions[evidence_id] = self._action(evidence_id, list(rids),
                                                      list(changed.get(evidence_id, ())))

    @property
    def diff(self) -> Any:
        if self._diff is None and self.state is not None and self.git_runs:
            now = self.state.workspace
            self._diff = now.diff if now is not None else None
        return self._diff

    def revision(self, ref: EvidenceRef, rid: str) -> str | None:
        """Why the cited revision of a run is not current for ``rid`` (None: it still is)."""
        key = (ref.id, ref.revision, rid)
        if key in self._revision:
            return self._revision[key]
        current = self.read.evidence.get(ref.id)
        cited, run = self._citations.version(ref)
        why: str | None = None
        if current is not None and current.revision != ref.revision:
            later = self.read.later.get(ref.id, ())
            if cited is None or cited.damage is not None or run is None or later is None:
                why = f"{current.revision - ref.revision} later version(s)"
            else:
                from assay.evidence.freshness import runs_differ

                intent_id = self.read.record.id
                for version in (*later, current):
                    if version.revision <= ref.revision:
                        continue
                    differs = _same_outcome(cited, version, intent_id, rid)
                    if differs is None:
                        moved = runs_differ(cited.data, version.data, self.diff)
                        if moved is not None:
                            differs = ("ran on files that differ: "
                                       + _paths_text(moved["paths"], moved["count"],
                                                     moved["complete"]))
                    if differs is not None:
                        why = f"revision {version.revision} {differs}"
                        break
        self._revision[key] = why
        return why

    def workspace(self, ref: EvidenceRef) -> dict[str, Any] | None:
        """How the workspace now differs from the one the cited run ended on (None: the same)."""
        key = (ref.id, ref.revision)
        if key not in self._workspace:
            cited, run = self._citations.version(ref)
            found = None
            if self.state is not None and run is not None and cited is not None \
                    and cited.damage is None:
                after = (cited.data.get("workspace") or {}).get("after") \
                    if isinstance(cited.data.get("workspace"), dict) else None
                if isinstance(after, dict) and after.get("status") == "observed":
                    now = self.state.workspace
                    if now is not None:
                        from assay.evidence.freshness import run_freshness

                        found = run_freshness(cited.data, now)
                        if found is not None and found["same"]:
                            found = None
            self._workspace[key] = found
        return self._workspace[key]

    def _action(self, evidence_id: str, rids: list[str], paths: list[str]) -> str:
        intent_id = self.read.record.id
        current = self.read.evidence.get(evidence_id)
        run = run_facts(current)
        command = (run["command"] if run is not None and run["command"]
                   else evidence_id.partition(":")[2])
        covered = set(intent_requirements(current, intent_id))
        fresh = True
        if current is not None and self.state is not None:
            ref = EvidenceRef(evidence_id, current.revision, None)
            fresh = self.workspace(ref) is None
        assert current is not None
        if run is not None and set(rids) <= covered and fresh:
            return (f"Record its current run for {', '.join(rids)}: 'assay work accept "
                    f"--from-run {evidence_id}@{current.revision} -- {intent_id}'")
        targets = [arg for rid in rids for arg in ("--for", f"{intent_id}#{rid}")]
        files = ""
        if paths:
            files = f" ({', '.join(paths[:3])}{' and more' if len(paths) > 3 else ''} changed)"
        return (f"Rerun {command} on the current files{files} for {', '.join(rids)}, then "
                "record the "
                f"run it prints: {_quoted(['evidence', 'run', *targets, '--', command])}, then "
                f"'assay work accept --from-run {evidence_id}@{current.revision + 1} -- "
                f"{intent_id}'")

    def action(self, evidence_id: str) -> str | None:
        return self._actions.get(evidence_id)


def _check_ref(read: IntentRead, scopes: tuple[str, ...], req: Requirement,
               result: RequirementResult, ref: EvidenceRef, citations: _Citations,
               errors: dict[tuple[str, int], dict[str, Any]], fresh: _Freshness,
               gated: str) -> list[dict[str, Any]]:
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
        why = fresh.revision(ref, rid) if run is not None else "not a run"
        if why is not None:
            what = (f"; its current revision {record.revision} is a run that {_outcome(newer)}"
                    if newer is not None else f"; its current revision is {record.revision}")
            if newer is not None and why != f"revision {record.revision} ended {_outcome(newer)}":
                what += f" ({why})"
            action = fresh.action(ref.id) if run is not None else None
            out.append(_issue(
                "evidence_revision_stale", f"evidence {ref.id} is cited at revision {ref.revision}"
                + what,
                action or f"Re-examine {ref.id} at revision {record.revision} and record a new "
                f"result for {rid} if it still supports it.",
                current_revision=record.revision, **where))
        if cited is not None and cited.damage is not None:
            out.append(_unreadable(cited, where, rid, errors))
            return out
    if ref.data_sha256 is not None and cited is not None and cited.data_sha256 != ref.data_sha256:
        out.append(_issue("evidence_hash_mismatch",
                          f"the data of {ref.id} revision {ref.revision} does not have the "
                          "cited data_sha256",
                          f"Re-read {ref.id} revision {ref.revision} and correct the "
                          f"data_sha256 cited for {rid}.", **where))
    verdict = run_verdict(cited, read.record.id, rid) if run is not None else None
    kind = verdict["kind"] if verdict is not None else None
    rollup = verdict["rollup"] if verdict is not None and kind == "rollup" else None
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
    if verdict is not None and run is not None:
        out.extend(_verdict_issues(read, rid, run, verdict, where))
        moved = fresh.workspace(ref)
        if moved is not None:
            what = moved["reason"] or ("the files changed since it ran: "
                                       + _paths_text(moved["paths"], moved["count"],
                                                     moved["complete"]))
            out.append(_issue(
                "evidence_workspace_changed",
                f"{ref.id} revision {ref.revision} no longer shows that {rid} holds: {what}",
                fresh.action(ref.id) or f"Rerun it: {_rerun(run, read, rid)}.",
                paths=moved["paths"], path_count=moved["count"], **where))
    if rollup is not None and run is not None:
        rerun = _quoted(["evidence", "run", "--", run["command"]]) if run["command"] \
            else "assay evidence run"
        out.extend(rollup_issues(rollup, where, rerun))
    if kind == "untested" and run is not None:
        out.extend(rollup_issues({"requirement_id": rid, "outcome": "unverified", "tests": 0,
                                  "failed_tests": [], "skipped_tests": [], "missing_globs": []},
                                 where, _rerun(run, read, rid)))
    if kind in ("rollup", "untested"):
        from assay.intent.pin import tests_issue

        changed = tests_issue(read.record.id, rid, read.pins.get("checks"), cited, where, gated)
        if changed is not None:
            out.append(changed)
    return out


def _verdict_issues(read: IntentRead, rid: str, run: Mapping[str, Any], verdict: Mapping[str, Any],
                    where: dict[str, Any]) -> list[dict[str, Any]]:
    """``evidence_for_other_intent`` and ``evidence_results_unverified`` of one cited run."""
    intent_id = read.record.id
    evidence = f"{where['evidence_id']} revision {where['recorded_revision']}"
    kind = verdict["kind"]
    if kind == "other":
        names = ", ".join(verdict["intents"][:5])
        return [_issue(
            "evidence_for_other_intent",
            f"{evidence} is evidence for {names} ({verdict['why']} {names}), not for {intent_id}",
            f"Cite a run of {intent_id}'s own check for {rid} ({_rerun(run, read, rid)}).",
            intents=list(verdict["intents"][:50]), **where)]
    if kind == "unattributed":
        return [_issue(
            "evidence_for_other_intent",
            f"{evidence} holds tests marked {', '.join(verdict['labels'][:5])} for no intent, "
            f"so it is not evidence for {intent_id}",
            f"Rerun it for {rid} ({_rerun(run, read, rid)}), or name the intent in the marks "
            "or in [gate] default_intent.", intents=[], **where)]
    if kind == "refused":
        return [_issue(
            "evidence_results_unverified",
            f"{evidence} says nothing about {rid}: {verdict['reason']}",
            f"Make {run['command']} write a readable results file with its tests, rerun it "
            f"({_rerun(run, read, rid)}) and record the new run.",
            results_code=verdict.get("results_code"), **where)]
    return []


def _rerun(run: Mapping[str, Any], read: IntentRead, rid: str) -> str:
    if not run["command"]:
        return "assay evidence run"
    return _quoted(["evidence", "run", "--for", f"{read.record.id}#{rid}", "--", run["command"]])


def _requirement_issues(read: IntentRead, scopes: tuple[str, ...], req: Requirement,
                        result: RequirementResult | None, citations: _Citations,
                        errors: dict[tuple[str, int], dict[str, Any]], fresh: _Freshness,
                        gated: str) -> list[dict[str, Any]]:
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
        out.extend(_check_ref(read, scopes, req, result, ref, citations, errors, fresh, gated))
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
    state = binding.state
    gated = state.gated_principal if state is not None else binding.principal
    issues.extend(_pin_issues(read, state, citations))
    fresh = _Freshness(read, binding, citations)
    for req in doc.requirements:
        found = (_requirement_issues(read, scopes, req, results.get(req.id), citations, errors,
                                     fresh, gated)
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
    for pinned in read.pins.values():
        if pinned is not None:  # an absent pin is no precondition of a write based on this read
            basis_records[pinned.id] = pinned.revision
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
        "pins": _pins(read),
        "workspace": _workspace(state, fresh),
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


def _pins(read: IntentRead) -> dict[str, Any]:
    """The pins the report compared with: who pinned them and whether a reviewer did."""
    if not any(read.pins.values()):
        return {"checks": None, "gate": None}
    from assay.intent.pin import pin_facts

    return {"checks": pin_facts(read.pins.get("checks")), "gate": pin_facts(read.pins.get("gate"))}


def _pin_issues(read: IntentRead, state: Any, citations: _Citations) -> list[dict[str, Any]]:
    """The global pin issues (``gate_pin_unreadable`` .. ``check_definition_changed``)."""
    if not any(read.pins.values()):
        return []
    from assay.intent.pin import global_issues

    acceptance = read.document.acceptance
    runs: dict[tuple[str, int], tuple[Record, dict[str, None]]] = {}
    by_requirement: dict[str, list[Record]] = {}
    for result in acceptance.results if acceptance else ():
        for ref in result.evidence:
            cited, run = citations.version(ref)
            if cited is None or run is None:
                continue
            runs.setdefault((ref.id, ref.revision), (cited, {}))[1][result.requirement_id] = None
            by_requirement.setdefault(result.requirement_id, []).append(cited)
    verify = {r.id: r.verify_with for r in read.document.requirements}
    return global_issues(read.record.id, read.pins, state,
                         [(record, list(rids)) for record, rids in runs.values()],
                         by_requirement, verify)


def _workspace(state: Any, fresh: _Freshness) -> dict[str, Any] | None:
    """Which workspace the report compared the cited runs with (see the module docstring)."""
    if state is None:
        return None
    if not fresh.runs:
        return {"status": "not_compared", "compared": False,
                "reason": "no result cites a run of assay's evidence runner"}
    now = state.workspace
    if now is None:
        return {"status": "not_observed", "compared": False,
                "reason": "the workspace was not observed for this report"}
    summary: dict[str, Any] = now.summary()
    if now.status != "observed":
        summary.update(compared=False, reason=(
            (summary.get("reason") or now.status) + ": the files the cited runs saw cannot be "
            "compared with the current ones"))
    elif not fresh.git_runs:
        summary.update(compared=False, reason=(
            "the cited runs observed no git work tree: the files they saw cannot be compared "
            "with the current ones"))
    else:
        summary["compared"] = True
    return summary


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
        "pins": {"checks": None, "gate": None},
        "workspace": None,
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
            verdict = (run_verdict(cited, read.record.id, result.requirement_id)
                       if run is not None else None)
            rollup = verdict["rollup"] if verdict and verdict["kind"] == "rollup" else None
            if rollup is not None and run is not None:
                # What the run said of this requirement's own tests: a run that
                # failed elsewhere can still have passed them.
                run = {**run, "requirement": {"id": rollup["requirement_id"],
                                              "outcome": rollup["outcome"],
                                              "tests": rollup["tests"]}}
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
