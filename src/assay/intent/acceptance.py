"""One-step acceptance: results proposed by sources, merged into an intent's ``acceptance``.

Recording acceptance by hand means reading the intent, computing its
``intent_sha256``, copying each cited version's ``data_sha256`` and merging
the results without dropping the others. :func:`merge_acceptance` does all
of it from one snapshot and returns the new record data; the caller writes
it in one guarded put.

Results come from *sources* (:class:`ResultSource`), each turning its own
input into :class:`Proposal` values: :class:`GivenResults` (requirement and
evidence pairs, or a results file), :class:`RunResults` (the requirement
an evidence run was recorded for, and its outcome) and :class:`TestResults`
(per-test outcomes: each requirement the run's tests were mapped to, see
:mod:`assay.intent.test_outcomes`). A new source is one more class with a
``proposals`` method; the merge does not change.

The merge, in order:

1. every proposed requirement must be a requirement of the intent
   (``unknown_requirement``);
2. every cited ``ID@REV`` must be a version the caller can read
   (``evidence_not_found``) whose stored data is intact
   (``evidence_unreadable``); its ``data_sha256`` is taken from the ledger;
3. proposals for the same requirement join (evidence in order; the worst
   status wins: failed, then unverified, then passed);
4. a ``passed`` result citing a run of assay's evidence runner that did not
   pass is refused (``evidence_run_not_passed``): a claim never outranks the
   machine. The one exception is a run with per-test outcomes in which every
   test mapped to that requirement passed: the run failed elsewhere;
5. results for other requirements are kept when the recorded acceptance was
   mapped to the current intent, and dropped (listed in ``dropped``) when the
   intent has changed since: a new ``intent_sha256`` must not certify results
   nobody checked against it. Blockers are kept.

Nothing is written here. Imports the base modules, the ledger contract and
its siblings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from assay.errors import AssayError, UsageError, pointer
from assay.ids import validate_record_id
from assay.intent.check import run_facts
from assay.intent.contract import RESULT_STATUSES, check_report_bound, parse_intent_data
from assay.intent.snapshot import IntentRead, is_readable, raw_read
from assay.intent.test_outcomes import mapped_ids, requirement_rollup, rollup_note, run_results
from assay.ledger.store import MAX_REVISION, Reader, Record

__all__ = [
    "GivenResults",
    "Proposal",
    "ResultSource",
    "RunResults",
    "TestResults",
    "merge_acceptance",
    "parse_version_ref",
]

_SEVERITY = {"failed": 0, "unverified": 1, "passed": 2}


@dataclass(frozen=True, slots=True)
class Proposal:
    """One proposed result: a requirement, the versions it rests on, a status and notes.

    ``status`` None lets the merge decide from the evidence (passed unless a
    cited run did not pass). ``where`` is the JSON pointer of the input that
    proposed it, for errors.
    """

    requirement_id: str
    evidence: tuple[tuple[str, int, str], ...]  # (id, revision, pointer of the input)
    where: str
    status: str | None = None
    notes: str | None = None


class ResultSource(Protocol):
    """Turns one kind of input into proposals, reading the ledger snapshot if it must."""

    def proposals(self, reader: Reader, read: IntentRead, principal: str) -> list[Proposal]:
        """The proposals of this source for the intent ``read``, as ``principal`` sees it."""


def parse_version_ref(value: Any, where: str) -> tuple[str, int]:
    """``ID@REVISION`` (e.g. ``evidence:unit@3``) as ``(id, revision)``; else ``invalid_argument``."""
    if isinstance(value, dict):
        record_id, revision = value.get("id"), value.get("revision")
    else:
        record_id, sep, rev = str(value).rpartition("@")
        revision = int(rev) if sep and rev.isdigit() else None
    if (not isinstance(record_id, str) or not isinstance(revision, int)
            or isinstance(revision, bool) or not 1 <= revision <= MAX_REVISION):
        raise UsageError(f"evidence is cited as ID@REVISION (e.g. evidence:unit@3), not {value!r}",
                         code="invalid_argument", pointer=where)
    validate_record_id(record_id, field=where)
    return record_id, revision


@dataclass(frozen=True, slots=True)
class GivenResults:
    """Results stated by the caller: requirement/evidence pairs, and/or a results list.

    ``requirements`` and ``evidence`` pair by position; with one requirement,
    every evidence version belongs to it. ``results`` items are
    ``{requirement_id, status?, evidence: [ID@REV | {id, revision}], notes?}``.
    ``status`` and ``notes`` apply to the pairs.
    """

    requirements: Sequence[str] = ()
    evidence: Sequence[str] = ()
    status: str | None = None
    notes: str | None = None
    results: Sequence[Any] = field(default_factory=list)

    def proposals(self, reader: Reader, read: IntentRead, principal: str) -> list[Proposal]:
        out: list[Proposal] = []
        if self.status is not None and self.status not in RESULT_STATUSES:
            raise UsageError(f"status is one of {', '.join(RESULT_STATUSES)}",
                             code="invalid_argument", pointer="/status")
        pairs = _pairs(self.requirements, self.evidence)
        for rid, refs, where in pairs:
            out.append(Proposal(rid, refs, where, self.status, self.notes))
        for index, item in enumerate(self.results):
            out.append(_result_item(item, pointer("results", index)))
        return out


def _pairs(requirements: Sequence[str], evidence: Sequence[str]
           ) -> list[tuple[str, tuple[tuple[str, int, str], ...], str]]:
    refs = [(*parse_version_ref(value, pointer("evidence", i)), pointer("evidence", i))
            for i, value in enumerate(evidence)]
    if not requirements:
        if refs:
            raise UsageError("evidence needs the requirement it supports (--requirement)",
                             code="missing_argument", pointer="/requirement")
        return []
    if len(requirements) == 1:
        return [(requirements[0], tuple(refs), "/requirement/0")]
    if len(refs) not in (0, len(requirements)):
        raise UsageError(
            f"{len(requirements)} requirements and {len(refs)} evidence versions: give one "
            "evidence version per requirement (they pair in order), or one requirement",
            code="invalid_argument", pointer="/evidence")
    return [(rid, (refs[i],) if refs else (), pointer("requirement", i))
            for i, rid in enumerate(requirements)]


def _result_item(item: Any, where: str) -> Proposal:
    if not isinstance(item, dict) or set(item) - {"requirement_id", "status", "evidence", "notes"}:
        raise UsageError("a result is {requirement_id, status?, evidence, notes?}",
                         code="invalid_argument", pointer=where)
    rid, status, notes = item.get("requirement_id"), item.get("status"), item.get("notes")
    if not isinstance(rid, str) or not rid.strip():
        raise UsageError("requirement_id is required", code="invalid_argument",
                         pointer=where + "/requirement_id")
    if status is not None and status not in RESULT_STATUSES:
        raise UsageError(f"status is one of {', '.join(RESULT_STATUSES)}",
                         code="invalid_argument", pointer=where + "/status")
    if notes is not None and not isinstance(notes, str):
        raise UsageError("notes is a string", code="invalid_argument", pointer=where + "/notes")
    evidence = item.get("evidence", [])
    if not isinstance(evidence, list):
        raise UsageError("evidence is a list of ID@REVISION", code="invalid_argument",
                         pointer=where + "/evidence")
    refs = tuple((*parse_version_ref(v, f"{where}/evidence/{i}"), f"{where}/evidence/{i}")
                 for i, v in enumerate(evidence))
    return Proposal(rid, refs, where, status, notes)


@dataclass(frozen=True, slots=True)
class RunResults:
    """Results from evidence runs: each run's outcome for the requirement it was recorded for.

    A run names its requirement when it was recorded with ``--for
    INTENT_ID#REQ_ID``. The run must be machine evidence written by assay's
    runner, recorded for this intent. A run with per-test outcomes that was
    not recorded for this intent is left to :class:`TestResults`.
    """

    runs: Sequence[str]
    notes: str | None = None

    def proposals(self, reader: Reader, read: IntentRead, principal: str) -> list[Proposal]:
        out = []
        for index, value in enumerate(self.runs):
            where = pointer("from_run", index)
            record_id, revision = parse_version_ref(value, where)
            version = _version(reader, principal, record_id, revision, where)
            run = run_facts(version)
            target = version.data.get("target") if run is not None else None
            targeted = isinstance(target, dict) and target.get("intent") == read.record.id
            if run is not None and not targeted and run_results(version) is not None:
                continue
            if run is None:
                raise AssayError(f"{record_id}@{revision} is not a run of assay's evidence runner",
                                 code="not_an_evidence_run", pointer=where,
                                 action="Name a record written by assay evidence run.")
            if not isinstance(target, dict) or target.get("intent") != read.record.id:
                recorded = (f"for {target.get('intent')}" if isinstance(target, dict)
                            else "without --for")
                raise AssayError(
                    f"{record_id}@{revision} was recorded {recorded}, not for {read.record.id}",
                    code="run_target_mismatch", pointer=where,
                    action=f"Rerun it with --for {read.record.id}#REQ_ID, or name the requirement "
                           "with --requirement and --evidence instead.")
            status = "passed" if run["status"] == "passed" else "failed"
            notes = self.notes or (f"assay ran {run['command']}: {run['status']}"
                                   + (f" (exit {run['exit_code']})"
                                      if run["exit_code"] not in (None, 0) else ""))
            out.append(Proposal(str(target.get("requirement")), ((record_id, revision, where),),
                                where, status, notes))
        return out


@dataclass(frozen=True, slots=True)
class TestResults:
    """Results from runs with per-test outcomes: one proposal per mapped requirement.

    A requirement of the intent the run's tests were mapped to is proposed
    ``passed`` only when every mapped test passed, ``failed`` when any failed
    or errored, ``unverified`` when none ran, some were skipped or a mapping
    glob matched no test; each cites the run. Requirements of other intents
    are left alone. Refused: a run whose results file was not read
    (``run_results_unreadable``), and one that maps none of this intent's
    requirements and was not recorded for it (``run_maps_no_requirement``).
    Runs without a results file are left to :class:`RunResults`.
    """

    __test__ = False  # not a pytest test class

    runs: Sequence[str]
    notes: str | None = None

    def proposals(self, reader: Reader, read: IntentRead, principal: str) -> list[Proposal]:
        known = set(read.document.requirement_ids)
        out: list[Proposal] = []
        for index, value in enumerate(self.runs):
            where = pointer("from_run", index)
            record_id, revision = parse_version_ref(value, where)
            version = _version(reader, principal, record_id, revision, where)
            results, run = run_results(version), run_facts(version)
            if results is None or run is None:
                continue
            target = version.data.get("target")
            targeted = isinstance(target, dict) and target.get("intent") == read.record.id
            if results.get("status") != "read" and targeted:
                continue  # the whole run speaks for the requirement it was recorded for
            if results.get("status") != "read":
                raise AssayError(
                    f"{record_id}@{revision} has no per-test outcomes: its results file was "
                    f"not read ({results.get('code')}: {results.get('message')})",
                    code="run_results_unreadable", pointer=where,
                    details={"id": record_id, "revision": revision,
                             "results_code": results.get("code")},
                    action=f"Make {run['command']} write its results file, rerun it and cite "
                           "the new run.")
            mapped = [rid for rid in mapped_ids(results) if rid in known]
            if not mapped and not targeted:
                raise AssayError(
                    f"{record_id}@{revision} maps no test to a requirement of {read.record.id}",
                    code="run_maps_no_requirement", pointer=where,
                    details={"mapped": mapped_ids(results)[:50],
                             "requirements": list(read.document.requirement_ids)[:50]},
                    action="Mark the tests with @pytest.mark.requirement(REQ_ID) or map them "
                           "in [evidence.commands.NAME.requirements], rerun and cite the run.")
            for rid in mapped:
                rollup = requirement_rollup(version, rid)
                assert rollup is not None
                out.append(Proposal(rid, ((record_id, revision, where),), where,
                                    rollup["outcome"],
                                    self.notes or rollup_note(str(run["command"]), rollup)))
        return out


def merge_acceptance(reader: Reader, read: IntentRead, sources: Sequence[ResultSource], *,
                     principal: str) -> dict[str, Any]:
    """The intent record data with the proposed results merged in (see the module docstring).

    Returns ``{data, results, dropped, intent_sha256}``: the new record data
    (validated), the results written by this merge, and the requirement ids
    whose earlier results were dropped because the intent changed.
    """
    doc = read.document
    known = set(doc.requirement_ids)
    proposals = [p for source in sources for p in source.proposals(reader, read, principal)]
    if not proposals:
        raise UsageError("name at least one result: --requirement with --evidence, --results "
                         "or --from-run", code="missing_argument", pointer="/requirement")
    merged: dict[str, dict[str, Any]] = {}
    for proposal in proposals:
        if proposal.requirement_id not in known:
            raise AssayError(f"{read.record.id} has no requirement {proposal.requirement_id!r}",
                             code="unknown_requirement", pointer=proposal.where,
                             details={"requirements": list(doc.requirement_ids)[:50]},
                             action="Use one of the intent's requirement ids.")
        refs = []
        runs = []
        for record_id, revision, where in proposal.evidence:
            version = _version(reader, principal, record_id, revision, where)
            refs.append({"id": record_id, "revision": revision,
                         "data_sha256": version.data_sha256})
            run = run_facts(version)
            rollup = requirement_rollup(version, proposal.requirement_id)
            if run is not None and rollup is not None:
                # Its tests for this requirement decide, not the run as a whole.
                run = {**run, "status": rollup["outcome"],
                       "outcome": f"whose tests for {proposal.requirement_id} are "
                                  f"{rollup['outcome']}"}
            if run is not None:
                runs.append((record_id, revision, run, where))
        outcomes = {r[2]["status"] for r in runs}
        status = proposal.status or ("passed" if outcomes <= {"passed"}
                                     else "unverified" if outcomes <= {"passed", "unverified"}
                                     else "failed")
        if status == "passed":
            for record_id, revision, run, where in runs:
                if run["status"] != "passed":
                    raise AssayError(
                        f"{record_id}@{revision} is a run of {run['command']} "
                        f"{run.get('outcome') or 'that ' + run['status']}; "
                        f"{proposal.requirement_id} cannot rest on it as passed",
                        code="evidence_run_not_passed", pointer=where,
                        details={"id": record_id, "revision": revision,
                                 "run_status": run["status"], "exit_code": run["exit_code"]},
                        action=f"Fix the failure and rerun {run['command']}, then cite the "
                               f"passing run; or record {proposal.requirement_id} with "
                               "--status failed.")
        notes = proposal.notes
        if notes is None and runs:
            notes = "; ".join(f"assay ran {r[2]['command']}: {r[2]['status']}" for r in runs)
        entry = merged.get(proposal.requirement_id)
        if entry is None:
            merged[proposal.requirement_id] = {
                "requirement_id": proposal.requirement_id, "status": status,
                "evidence": refs, "notes": notes or ""}
            continue
        cited = {e["id"] for e in entry["evidence"]}
        entry["evidence"].extend(r for r in refs if r["id"] not in cited)
        entry["status"] = min(entry["status"], status, key=_SEVERITY.__getitem__)
        if notes and notes not in entry["notes"]:
            entry["notes"] = f"{entry['notes']}; {notes}" if entry["notes"] else notes
    acceptance = doc.acceptance
    current = acceptance is not None and acceptance.intent_sha256 == doc.intent_sha256
    kept: list[dict[str, Any]] = []
    dropped: list[str] = []
    data = read.record.data
    for old in (data.get("acceptance") or {}).get("results", []) if acceptance else []:
        rid = old["requirement_id"]
        if rid in merged:
            kept.append(merged.pop(rid))
        elif current:
            kept.append(old)
        else:
            dropped.append(rid)
    written = [*kept, *merged.values()]
    new_data = {**data, "acceptance": {
        "intent_sha256": doc.intent_sha256,
        "results": written,
        "blockers": list(acceptance.blockers) if acceptance else [],
    }}
    parse_intent_data(new_data)
    check_report_bound(new_data)
    touched = {p.requirement_id for p in proposals}
    return {"data": new_data, "intent_sha256": doc.intent_sha256,
            "results": [r for r in written if r["requirement_id"] in touched],
            "dropped": dropped}


def _version(reader: Reader, principal: str, record_id: str, revision: int,
             where: str) -> Record:
    """The exact version ``record_id@revision``, readable and intact, or a coded error."""
    version = reader.get(record_id, revision)
    if version is None or not is_readable(version, principal):
        raise AssayError(f"no readable version {record_id}@{revision}", code="evidence_not_found",
                         pointer=where,
                         action=f"Cite a version that exists (assay get --history -- {record_id}).")
    if version.damage is not None:
        raise AssayError(
            f"{record_id}@{revision} is unreadable: {version.damage.message}",
            code="evidence_unreadable", pointer=where,
            details={"id": record_id, "revision": revision, "reason": version.damage.reason},
            action=f"Inspect the stored text with 'assay {' '.join(raw_read(record_id, revision))}'"
                   "; cite an intact version instead.")
    return version
