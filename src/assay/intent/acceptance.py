"""One-step acceptance: results proposed by sources, merged into an intent's ``acceptance``.

Recording acceptance by hand means reading the intent, computing its
``intent_sha256``, copying each cited version's ``data_sha256`` and merging
the results without dropping the others. :func:`merge_acceptance` does all
of it from one snapshot and returns the new record data; the caller writes
it in one guarded put.

Results come from *sources* (:class:`ResultSource`), each turning its own
input into :class:`Proposal` values: :class:`GivenResults` (requirement and
evidence pairs, or a results file) and :class:`RunResults` (what each
evidence run says of the requirements it was recorded for or its tests are
attributed to, see :mod:`assay.intent.test_outcomes`). A new source is one
more class with a ``proposals`` method; the merge does not change.

The merge, in order:

1. every proposed requirement must be a requirement of the intent
   (``unknown_requirement``);
2. every cited ``ID@REV`` must be a version the caller can read
   (``evidence_not_found``) whose stored data is intact
   (``evidence_unreadable``); its ``data_sha256`` is taken from the ledger;
3. proposals for the same requirement join (evidence in order; the worst
   status wins: failed, then unverified, then passed);
4. a cited run that is another intent's evidence, or nobody's, is refused
   (``run_for_other_intent``, ``run_evidence_unattributed``); a ``passed``
   result citing a run of assay's evidence runner that did not pass is
   refused (``evidence_run_not_passed``): a claim never outranks the
   machine. A run with per-test outcomes speaks for the requirement by its
   tests mapped to it (it may have failed elsewhere); one whose results file
   could not be used, or that ran no test mapped to the requirement, is
   ``unverified`` for it;
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
from assay.intent.test_outcomes import (
    intent_requirements,
    rollup_note,
    run_targets,
    run_verdict,
)
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
    """Results from evidence runs: what each run says of the requirements it speaks for.

    A run speaks for the requirements of this intent it was recorded
    ``--for`` and those its per-test outcomes are attributed to (see
    :func:`assay.intent.test_outcomes.run_verdict`). Each such requirement
    is proposed from the run's verdict on it: a rollup's outcome (``passed``
    only when every mapped test passed, ``failed`` when any failed or
    errored, else ``unverified``), the run's own status when it has no
    per-test mapping (``passed``, else ``failed``), and ``unverified`` when
    its results file could not be used or none of its tests maps to the
    requirement; each cites the run, with what assay ran as the note.

    Refused (nothing is written): a record that is not a run of assay's
    runner (``not_an_evidence_run``); a run that speaks for nothing here
    because it was recorded for another intent or without ``--for``
    (``run_target_mismatch``), because its marks name other intents only
    (``run_for_other_intent``) or no intent at all
    (``run_evidence_unattributed``), because its results file was not read
    (``run_results_unreadable``), or because its tests map to none of this
    intent's requirements (``run_maps_no_requirement``).
    """

    runs: Sequence[str]
    notes: str | None = None

    def proposals(self, reader: Reader, read: IntentRead, principal: str) -> list[Proposal]:
        known = set(read.document.requirement_ids)
        intent_id = read.record.id
        out: list[Proposal] = []
        for index, value in enumerate(self.runs):
            where = pointer("from_run", index)
            record_id, revision = parse_version_ref(value, where)
            version = _version(reader, principal, record_id, revision, where)
            run = run_facts(version)
            if run is None:
                raise AssayError(f"{record_id}@{revision} is not a run of assay's evidence runner",
                                 code="not_an_evidence_run", pointer=where,
                                 action="Name a record written by assay evidence run.")
            spoken = intent_requirements(version, intent_id)
            mapped = [rid for rid in spoken if rid in known]
            if not mapped:
                _refuse_run(version, read, record_id, revision, where, spoken)
            for rid in mapped:
                verdict = run_verdict(version, intent_id, rid, legacy=False)
                assert verdict is not None
                if verdict["kind"] in ("other", "unattributed"):
                    # Recorded --for this intent, but its tests are marked for another.
                    raise _not_this_intents(verdict, intent_id, rid, f"{record_id}@{revision}",
                                            where)
                status, notes = _proposed(str(run["command"]), run, verdict)
                out.append(Proposal(rid, ((record_id, revision, where),), where, status,
                                    self.notes or notes))
        return out


# The old name of the per-test half of RunResults; one source reads every run now.
TestResults = RunResults


def _proposed(command: str, run: dict[str, Any], verdict: dict[str, Any]) -> tuple[str, str]:
    """The status and note a run's verdict proposes for one requirement."""
    kind = verdict["kind"]
    if kind == "rollup":
        return verdict["rollup"]["outcome"], rollup_note(command, verdict["rollup"])
    if kind in ("refused", "untested"):
        return "unverified", f"assay ran {command}: {run['status']}, but {verdict['reason']}"
    exit_text = f" (exit {run['exit_code']})" if run["exit_code"] not in (None, 0) else ""
    return ("passed" if run["status"] == "passed" else "failed",
            f"assay ran {command}: {run['status']}{exit_text}")


def _refuse_run(version: Record, read: IntentRead, record_id: str, revision: int, where: str,
                spoken: list[str]) -> None:
    """Raise the reason a run speaks for no requirement of the intent (see :class:`RunResults`)."""
    intent_id = read.record.id
    verdict = run_verdict(version, intent_id, "", legacy=False) or {}
    cited = f"{record_id}@{revision}"
    if spoken:
        raise AssayError(
            f"{cited} maps no test to a requirement of {intent_id}",
            code="run_maps_no_requirement", pointer=where,
            details={"mapped": spoken[:50],
                     "requirements": list(read.document.requirement_ids)[:50]},
            action="Mark the tests with @pytest.mark.requirement(REQ_ID) or map them "
                   "in [evidence.commands.NAME.requirements], rerun and cite the run.")
    targets = run_targets(version)
    kind = verdict.get("kind")
    if kind == "unattributed" or (kind == "other" and verdict["why"] != "it was recorded --for"):
        raise _not_this_intents(verdict, intent_id, "REQ_ID", cited, where)
    if kind == "refused":
        raise AssayError(
            f"{cited} has no per-test outcomes: {verdict['reason']}",
            code="run_results_unreadable", pointer=where,
            details={"id": record_id, "revision": revision,
                     "results_code": verdict.get("results_code")},
            action="Make the command write its results file, rerun it and cite the new run.")
    recorded = (f"for {', '.join(dict.fromkeys(i for i, _ in targets))}" if targets
                else "without --for")
    raise AssayError(
        f"{cited} was recorded {recorded}, not for {intent_id}",
        code="run_target_mismatch", pointer=where,
        action=f"Rerun it with --for {intent_id}#REQ_ID, or name the requirement "
               "with --requirement and --evidence instead.")


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
            if run is None:
                continue
            verdict = run_verdict(version, read.record.id, proposal.requirement_id,
                                  legacy=False)
            assert verdict is not None
            run = _judged(run, verdict, read.record.id, proposal.requirement_id,
                          f"{record_id}@{revision}", where)
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


def _not_this_intents(verdict: dict[str, Any], intent_id: str, rid: str, cited: str,
                      where: str) -> AssayError:
    """The refusal of a run that is another intent's evidence, or nobody's."""
    rerun = f"assay evidence run --for {intent_id}#{rid} -- NAME"
    if verdict["kind"] == "other":
        names = ", ".join(verdict["intents"][:5])
        return AssayError(
            f"{cited} is evidence for {names} ({verdict['why']} {names}), not for {intent_id}",
            code="run_for_other_intent", pointer=where,
            details={"intents": verdict["intents"][:50]},
            action=f"Cite a run of {intent_id}'s own tests, recorded for it ({rerun}); mark "
                   f"them @pytest.mark.requirement(\"{intent_id}#{rid}\").")
    return AssayError(
        f"{cited} holds tests marked {', '.join(verdict['labels'][:5])} without an intent, and "
        "nothing says which intent they belong to",
        code="run_evidence_unattributed", pointer=where, details={"labels": verdict["labels"]},
        action=f"Rerun it for this intent ({rerun}), name the intent in the marks "
               f"(\"{intent_id}#{rid}\"), or set [gate] default_intent in assay.toml.")


def _judged(run: dict[str, Any], verdict: dict[str, Any], intent_id: str, rid: str,
            cited: str, where: str) -> dict[str, Any]:
    """The run's facts as the requirement ``rid`` sees them; refuses another intent's run."""
    kind = verdict["kind"]
    if kind in ("other", "unattributed"):
        raise _not_this_intents(verdict, intent_id, rid, cited, where)
    if kind == "rollup":
        # Its tests for this requirement decide, not the run as a whole.
        outcome = verdict["rollup"]["outcome"]
        return {**run, "status": outcome, "outcome": f"whose tests for {rid} are {outcome}"}
    if kind in ("refused", "untested"):
        return {**run, "status": "unverified", "outcome": f"in which {verdict['reason']}"}
    return run


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
