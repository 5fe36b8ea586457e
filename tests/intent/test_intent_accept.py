"""Getting an intent in and its results recorded: work new, work accept, prepare-capture, put's guard."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from readiness_helpers import (
    FAIL,
    PASS,
    accepted,
    check,
    codes,
    damage,
    data,
    evidence_project,
    intent,
    op,
    put,
    ref,
    result,
)

from assay.errors import AssayError
from assay.intent.acceptance import Proposal, merge_acceptance
from assay.intent.check import read_intent
from assay.intent.contract import intent_sha256
from assay.intent.snapshot import ProjectBinding
from assay.ledger import open_store
from assay_testing import Project


@pytest.fixture
def proj(tmp_path: Path) -> Project:
    """A SQLite project with a passing (ok) and a failing (bad) evidence command."""
    return evidence_project(tmp_path / "proj", None, ok=PASS, bad=FAIL)


def refused(project: Project, operation: str, **args: Any) -> AssayError:
    with pytest.raises(AssayError) as info:
        op(project, operation, **args)
    return info.value


def revision(project: Project, record_id: str = "knowledge:export") -> int:
    rev: int = data(project, "get", id=record_id)["record"]["revision"]
    return rev


NEW = {"id": "knowledge:export", "brief": "Ship the export",
       "requirement": ["R1|CSV export|run the export test", "R2|Header row|inspect it|R1"]}


# --- work new -------------------------------------------------------------------------------


def test_work_new_writes_the_intent_in_one_guarded_put(proj: Project) -> None:
    """work new builds the intent from flags, validates it and writes revision 1 (reference = brief)."""
    out = data(proj, "work.new", **NEW, boundary=["keep the schema"], verify_with=["R1=ok"])
    record = data(proj, "get", id="knowledge:export")["record"]
    the_intent = record["data"]["intent"]
    assert out["intent_sha256"] == intent_sha256(the_intent) and record["revision"] == 1
    assert the_intent["user_reference"] == "Ship the export"
    assert the_intent["requirements"][1] == {"id": "R2", "text": "Header row",
                                             "acceptance": "inspect it", "parent_id": "R1"}
    assert the_intent["requirements"][0]["verify_with"] == ["ok"]
    assert the_intent["boundaries"] == ["keep the schema"]


def test_work_new_again_replays_and_an_existing_record_conflicts(proj: Project) -> None:
    """The same work new replays its receipt; another intent for an existing record is revision_conflict."""
    first = data(proj, "work.new", **NEW)["receipt"]
    again = data(proj, "work.new", **NEW)["receipt"]
    assert again["replayed"] is True and again["revision"] == first["revision"]
    error = refused(proj, "work.new", **{**NEW, "brief": "Something else"})
    assert error.code == "revision_conflict"


def test_work_new_with_a_revision_keeps_the_acceptance(proj: Project) -> None:
    """Replacing the intent at its revision keeps acceptance, which then reads as stale_intent."""
    run = data(proj, "evidence.run", name="ok")["receipt"]
    put(proj, "knowledge:export", accepted(intent("R1"), result("R1", ref(run))))
    data(proj, "work.new", id="knowledge:export", brief="Ship it now",
         requirement=["R1|requirement R1|run the R1 check"], expect_revision=1)
    report = check(proj)
    assert codes(report)[0] == "intent_hash_mismatch"
    assert report["delta"]["requirements"][0]["status"] == "stale_intent"


def test_work_new_from_a_markdown_file(proj: Project) -> None:
    """A Markdown intent file (brief heading, reference line, list sections) becomes the intent."""
    (proj.root / "intent.md").write_text(
        "# Ship the export\nReference: ticket 7\n\n## Requirements\n"
        "- R1 | CSV export | run the export test\n- R2 | Header row | inspect it | R1\n\n"
        "## Non-goals\n- no UI\n", encoding="utf-8")
    out = proj.ok("work", "new", "--from-file", "intent.md", "--", "knowledge:export")
    the_intent = data(proj, "get", id="knowledge:export")["record"]["data"]["intent"]
    assert (the_intent["user_reference"], the_intent["non_goals"]) == ("ticket 7", ["no UI"])
    assert out["next"] == ["See what it needs: 'assay work check -- knowledge:export'"]


def test_work_new_from_a_json_file_holding_record_data(proj: Project) -> None:
    """A JSON file holding record data {intent} is read for its intent object."""
    (proj.root / "intent.json").write_text(json.dumps({"intent": intent("R1")}), encoding="utf-8")
    data(proj, "work.new", id="knowledge:export", from_file="intent.json")
    assert data(proj, "get", id="knowledge:export")["record"]["data"] == {"intent": intent("R1")}


def test_work_new_bad_markdown_names_the_file_and_line(proj: Project) -> None:
    """A malformed requirement line is invalid_argument naming the file and its line, nothing written."""
    (proj.root / "bad.md").write_text("# Brief\n## Requirements\n- R1 only\n", encoding="utf-8")
    error = refused(proj, "work.new", id="knowledge:export", from_file="bad.md")
    assert (error.code, error.pointer) == ("invalid_argument", "/from_file")
    assert "bad.md line 3" in error.message
    assert refused(proj, "get", id="knowledge:export").code == "record_not_found"


def test_work_new_refuses_an_invalid_intent_with_its_pointer(proj: Project) -> None:
    """A parent that does not exist is invalid_intent_contract at its pointer, nothing written."""
    error = refused(proj, "work.new", id="knowledge:export", brief="b",
                    requirement=["R1|t|a|R9"])
    assert (error.code, error.pointer) == ("invalid_intent_contract",
                                           "/data/intent/requirements/0/parent_id")


# --- work accept ----------------------------------------------------------------------------


def test_work_accept_pairs_requirements_and_evidence(proj: Project) -> None:
    """Pairs in order, digests from the ledger, the intent hash computed: one put, ready."""
    data(proj, "work.new", **NEW)
    one = data(proj, "evidence.run", name="ok")["receipt"]
    two = put(proj, "knowledge:header", {"seen": "header row present"})
    out = data(proj, "work.accept", id="knowledge:export", requirement=["R1", "R2"],
               evidence=[f"{one['id']}@1", f"{two['id']}@1"], note="checked")
    assert [(r["requirement_id"], r["evidence"][0]["data_sha256"]) for r in out["results"]] == [
        ("R1", one["data_sha256"]), ("R2", two["data_sha256"])]
    assert out["receipt"]["revision"] == 2 and check(proj)["ready_to_review"] is True


def test_work_accept_keeps_other_results(proj: Project) -> None:
    """Accepting one requirement keeps the results already recorded for the others."""
    data(proj, "work.new", **NEW)
    run = data(proj, "evidence.run", name="ok")["receipt"]
    data(proj, "work.accept", id="knowledge:export", requirement=["R1"], evidence=["evidence:ok@1"])
    data(proj, "work.accept", id="knowledge:export", requirement=["R2"],
         evidence=[f"{run['id']}@1"], note="header seen in the run output")
    results = data(proj, "get", id="knowledge:export")["record"]["data"]["acceptance"]["results"]
    assert [r["requirement_id"] for r in results] == ["R1", "R2"]


def test_work_accept_drops_results_recorded_for_an_older_intent(proj: Project) -> None:
    """After the intent changed, results not given again are dropped and named, never re-certified."""
    run = data(proj, "evidence.run", name="ok")["receipt"]
    put(proj, "knowledge:export", accepted(intent("R1", "R2"), result("R1", ref(run)),
                                           result("R2", ref(run))))
    changed = dict(intent("R1", "R2"), brief="Ship a different export")
    put(proj, "knowledge:export", {**data(proj, "get", id="knowledge:export")["record"]["data"],
                                   "intent": changed})
    out = op(proj, "work.accept", id="knowledge:export", requirement=["R1"],
             evidence=["evidence:ok@1"])[0]
    assert out["data"]["dropped"] == ["R2"] and "R2" in out["next"][0]
    report = check(proj)
    assert codes(report) == ["missing_result"] and report["issues"][0]["requirement_id"] == "R2"


def test_work_accept_refuses_passed_on_a_failed_run(proj: Project) -> None:
    """passed on a run that failed is evidence_run_not_passed at its pointer, and nothing is written."""
    data(proj, "work.new", **NEW)
    data(proj, "evidence.run", name="bad")
    error = refused(proj, "work.accept", id="knowledge:export", requirement=["R1"],
                    evidence=["evidence:bad@1"], status="passed")
    assert (error.code, error.pointer) == ("evidence_run_not_passed", "/evidence/0")
    assert error.details["run_status"] == "failed" and revision(proj) == 1


def test_work_accept_defaults_a_failed_run_to_failed(proj: Project) -> None:
    """Without a status, a failed run is recorded as failed, with what assay ran as its note."""
    data(proj, "work.new", **NEW)
    data(proj, "evidence.run", name="bad", target=["knowledge:export#R1"])
    out = data(proj, "work.accept", id="knowledge:export", from_run=["evidence:bad@1"])
    assert (out["results"][0]["status"], out["results"][0]["notes"]) == (
        "failed", "assay ran bad: failed (exit 1)")


@pytest.mark.parametrize(("args", "code", "pointer"), [
    ({"requirement": ["R9"], "evidence": ["evidence:ok@1"]}, "unknown_requirement",
     "/requirement/0"),
    ({"requirement": ["R1"], "evidence": ["evidence:ok@7"]}, "evidence_not_found", "/evidence/0"),
    ({"requirement": ["R1"], "evidence": ["evidence:ok"]}, "invalid_argument", "/evidence/0"),
    ({"requirement": ["R1", "R2"], "evidence": ["evidence:ok@1"] * 3}, "invalid_argument",
     "/evidence"),
    ({"from_run": ["evidence:ok@1"]}, "run_target_mismatch", "/from_run/0"),
    ({"from_run": ["knowledge:claim@1"]}, "not_an_evidence_run", "/from_run/0"),
    ({"results": [{"requirement_id": "R1", "evidence": ["evidence:ok@1"], "status": "done"}]},
     "invalid_argument", "/results/0/status"),
    ({}, "missing_argument", "/requirement"),
], ids=["unknown-requirement", "no-such-version", "no-revision", "unpaired", "run-not-for-it",
        "not-a-run", "bad-status", "nothing"])
def test_work_accept_refusals_name_their_input(proj: Project, args: dict[str, Any], code: str,
                                               pointer: str) -> None:
    """Each refused input has its code and the pointer of the argument at fault; nothing is written."""
    data(proj, "work.new", **NEW)
    data(proj, "evidence.run", name="ok")
    put(proj, "knowledge:claim", {"said": "it passed"})
    error = refused(proj, "work.accept", id="knowledge:export", **args)
    assert (error.code, error.pointer) == (code, pointer)
    assert revision(proj) == 1


def test_work_accept_refuses_a_damaged_version(proj: Project) -> None:
    """A cited version changed in the database is evidence_unreadable, with the raw read to run."""
    data(proj, "work.new", **NEW)
    data(proj, "evidence.run", name="ok")
    damage(proj, "evidence:ok", 1, '{"observation":"changed"}')
    error = refused(proj, "work.accept", id="knowledge:export", requirement=["R1"],
                    evidence=["evidence:ok@1"])
    assert error.code == "evidence_unreadable"
    assert "'assay get --raw --revision 1 -- evidence:ok'" in (error.action or "")


def test_work_accept_results_file(proj: Project) -> None:
    """A results file gives each requirement its status, evidence and notes."""
    data(proj, "work.new", **NEW)
    data(proj, "evidence.run", name="ok")
    (proj.root / "results.json").write_text(json.dumps([
        {"requirement_id": "R1", "evidence": ["evidence:ok@1"], "notes": "ran it"},
        {"requirement_id": "R2", "status": "unverified", "evidence": [], "notes": "later"}]),
        encoding="utf-8")
    proj.ok("work", "accept", "--results", "results.json", "--", "knowledge:export")
    report = check(proj)
    assert [r["status"] for r in report["delta"]["requirements"]] == ["awaiting_descendants",
                                                                     "unverified"]


def test_work_accept_is_guarded_by_the_revision(proj: Project) -> None:
    """A stale expected revision is revision_conflict."""
    data(proj, "work.new", **NEW)
    data(proj, "evidence.run", name="ok")
    error = refused(proj, "work.accept", id="knowledge:export", requirement=["R1"],
                    evidence=["evidence:ok@1"], expect_revision=3)
    assert error.code == "revision_conflict"


class JunitLike:
    """A results source of another kind (per-test outcomes): the merge takes any source."""

    def proposals(self, reader: Any, read: Any, principal: str) -> list[Proposal]:
        return [Proposal("R1", (("evidence:ok", 1, "/junit/0"),), "/junit/0", None,
                         "test_export passed")]


def test_work_accept_merge_takes_a_new_kind_of_source(proj: Project) -> None:
    """A source class with a proposals method plugs into the merge unchanged."""
    data(proj, "work.new", **NEW)
    data(proj, "evidence.run", name="ok")
    binding = ProjectBinding(root=str(proj.root), scope="project:demo", principal="agent")
    store = open_store(str(proj.root / ".assay" / "ledger.db"))
    try:
        with store.reader() as reader:
            merged = merge_acceptance(reader, read_intent(reader, binding, "knowledge:export"),
                                      [JunitLike()], principal="agent")
    finally:
        store.close()
    assert merged["results"] == [{"requirement_id": "R1", "status": "passed",
                                  "notes": "test_export passed", "evidence": [
                                      {"id": "evidence:ok", "revision": 1,
                                       "data_sha256": data(proj, "get", id="evidence:ok")[
                                           "record"]["data_sha256"]}]}]


# --- prepare-capture -------------------------------------------------------------------------


def test_prepare_capture_saves_run_as_written(proj: Project) -> None:
    """Each drafted save's put_args, with its stdin as standard input, writes that save."""
    put(proj, "knowledge:spec", {"text": "the CSV spec"})
    draft = proj.ok("work", "prepare-capture", "--brief", "b", "--user-reference", "u",
                    "--requirement", "R1|t|a", "--associate", "R1=knowledge:spec", "--",
                    "knowledge:export")
    saves = draft["data"]["saves"]
    assert "then step 2" in draft["next"][0]
    for save in saves:
        proj.ok(*save["put_args"], input=save["stdin"])
    record = data(proj, "get", id="knowledge:export")["record"]
    assert record["revision"] == 2
    assert record["data"]["continuation"]["context"]["requirements"][0]["record_ids"] == [
        "knowledge:spec"]


def test_prepare_capture_with_one_save_speaks_of_one_step(proj: Project) -> None:
    """A draft without associations has one save, and its hint speaks of that step only."""
    draft = proj.ok("work", "prepare-capture", "--brief", "b", "--user-reference", "u",
                    "--requirement", "R1|t|a", "--", "knowledge:export")
    assert len(draft["data"]["saves"]) == 1 and "step 2" not in " ".join(draft["next"])
    assert "step 2" not in draft["data"]["notice"]


# --- put's guard of an intent record ---------------------------------------------------------


def test_put_refuses_to_break_an_intent_contract(proj: Project) -> None:
    """A put breaking a held intent's contract gets the pointer work check would give."""
    put(proj, "knowledge:export", {"intent": intent("R1")})
    broken = {"intent": dict(intent("R1"), requirements=[])}
    with pytest.raises(AssayError) as info:
        put(proj, "knowledge:export", broken)
    assert (info.value.code, info.value.pointer) == ("invalid_intent_contract",
                                                     "/data/intent/requirements")
    put(proj, "knowledge:export", broken, replace=True)
    assert revision(proj) == 2


def test_put_of_a_new_record_with_an_invalid_intent_is_stored(proj: Project) -> None:
    """A record that holds no intent yet takes any data: work check names its fault later."""
    put(proj, "knowledge:draft", {"intent": {"version": 1}})
    with pytest.raises(AssayError) as info:
        check(proj, "knowledge:draft")
    assert (info.value.code, info.value.pointer) == ("invalid_intent_contract",
                                                     "/data/intent/brief")


def test_put_repairs_a_damaged_intent_record(proj: Project) -> None:
    """An intent record damaged in storage holds nothing known: any put repairs it."""
    put(proj, "knowledge:export", {"intent": intent("R1")})
    damage(proj, "knowledge:export", 1, "{")
    put(proj, "knowledge:export", {"note": "starting again"})
    assert revision(proj) == 2


# --- verify_with ---------------------------------------------------------------------------


def test_check_flags_a_run_of_another_command_than_verify_with(tmp_path: Path) -> None:
    """A passed result resting on a run of a command verify_with does not name is blocking."""
    project = evidence_project(tmp_path / "proj", None, ok=PASS, lint=PASS)
    data(project, "work.new", id="knowledge:export", brief="b",
         requirement=["R1|t|a"], verify_with=["R1=lint"])
    data(project, "evidence.run", name="ok")
    data(project, "work.accept", id="knowledge:export", requirement=["R1"],
         evidence=["evidence:ok@1"])
    report = check(project)
    assert (report["ready_to_review"], codes(report)) == (False, ["evidence_command_mismatch"])
    assert report["next"] == [("Cite a run of lint for R1 ('assay evidence run --for "
                               "knowledge:export#R1 -- lint').")]
    data(project, "evidence.run", name="lint", target=["knowledge:export#R1"])
    data(project, "work.accept", id="knowledge:export", from_run=["evidence:lint@1"])
    assert check(project)["ready_to_review"] is True
