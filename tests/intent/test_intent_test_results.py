"""Requirement results from per-test outcomes: work accept --from-run and work check, both backends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from readiness_helpers import accepted, check, codes, data, op, put, ref, result

from assay.errors import AssayError
from assay_testing import Project, make_project
from junit_testing import junit_xml, results_command

INTENT = {"id": "knowledge:export", "brief": "Ship the export",
          "requirement": ["R1|CSV export|its tests pass", "R2|Header row|its tests pass",
                          "R3|Docs|read them"]}

# R1: both tests pass. R2: one of its tests fails. R3 is not mapped. R9 belongs to no intent here.
MIXED = junit_xml(("tests.test_csv", "test_rows", "passed", ("R1",)),
                  ("tests.test_csv", "test_quotes", "passed", ("R1", "R9")),
                  ("tests.test_header", "test_order", "failed", ("R2",)),
                  ("tests.test_header", "test_names", "passed", ("R2",)))
SKIPPY = junit_xml(("tests.test_csv", "test_rows", "passed", ("R1",)),
                   ("tests.test_header", "test_order", "skipped", ("R2",)))
GREEN = junit_xml(("tests.test_csv", "test_rows", "passed", ("R1",)),
                  ("tests.test_header", "test_order", "passed", ("R2",)))


@pytest.fixture
def proj(tmp_path: Path, ledger_url: str) -> Project:
    """A project on each backend whose commands write JUnit results files."""
    toml = (results_command("mixed", MIXED, 1) + results_command("skippy", SKIPPY)
            + results_command("green", GREEN)
            + results_command("globbed", GREEN, extra=(
                '\n[evidence.commands.globbed.requirements]\n"tests.test_csv::*" = "R1"\n'
                '"tests.test_gone::*" = "R2"\n'))
            + results_command("other", junit_xml(("t", "x", "passed", ("R9",))))
            + results_command("broken", "<html/>")
            # The marks above name no intent: they are knowledge:export's.
            + '\n[gate]\ndefault_intent = "knowledge:export"\n')
    project = make_project(tmp_path / "proj", db=ledger_url, extra_toml=toml)
    data(project, "work.new", **INTENT)
    return project


def run(project: Project, name: str, **args: Any) -> str:
    """Run a command; return its ID@REVISION citation."""
    receipt = op(project, "evidence.run", name=name, **args)[0]["data"]["receipt"]
    return f"{receipt['id']}@{receipt['revision']}"


def accept(project: Project, *runs: str, **args: Any) -> dict[str, dict[str, Any]]:
    out = data(project, "work.accept", id="knowledge:export", from_run=list(runs), **args)
    return {r["requirement_id"]: r for r in out["results"]}


def refused(project: Project, *runs: str) -> AssayError:
    with pytest.raises(AssayError) as info:
        accept(project, *runs)
    return info.value


def issues(report: dict[str, Any], rid: str) -> dict[str, dict[str, Any]]:
    return {i["code"]: i for i in report["issues"] if i.get("requirement_id") == rid}


def test_accept_from_run_records_each_mapped_requirement(proj: Project) -> None:
    """R1 (all its tests passed) is passed, R2 (one failed) failed; both cite the run; R3 untouched."""
    cited = run(proj, "mixed")
    results = accept(proj, cited)
    assert {rid: r["status"] for rid, r in results.items()} == {"R1": "passed", "R2": "failed"}
    assert results["R1"]["evidence"][0]["id"] == "evidence:mixed"
    assert "failed: tests.test_header::test_order" in results["R2"]["notes"]
    assert results["R1"]["notes"].startswith("assay ran mixed: 2 test(s) mapped to R1, passed")


def test_check_names_the_failed_requirement_and_test(proj: Project) -> None:
    """work check is not ready: R2's failed test is named; R1 stands although the run failed."""
    accept(proj, run(proj, "mixed"))
    report = check(proj)
    assert report["ready_to_review"] is False
    failed = issues(report, "R2")["requirement_tests_failed"]
    assert failed["tests"] == ["tests.test_header::test_order"]
    assert "tests.test_header::test_order" in failed["message"] and "R2" in failed["message"]
    assert "evidence_run_not_passed" not in issues(report, "R1")
    assert [r["status"] for r in report["delta"]["requirements"]][:2] == [
        "reported_complete_with_current_evidence", "failed"]


def test_check_reference_says_how_the_run_judged_the_requirement(proj: Project) -> None:
    """A cited run that failed carries, per citing requirement, the outcome of its own tests."""
    accept(proj, run(proj, "mixed"))
    refs = {r["requirement_id"]: r["evidence"][0]["run"]
            for r in check(proj)["actual"]["results"]}
    assert refs["R1"] == {"status": "failed", "exit_code": 1, "command": "mixed",
                          "requirement": {"id": "R1", "outcome": "passed", "tests": 2}}
    assert refs["R2"]["requirement"] == {"id": "R2", "outcome": "failed", "tests": 2}


def test_skipped_tests_leave_the_requirement_unverified_and_flagged(proj: Project) -> None:
    """A requirement whose mapped test was skipped is unverified, and work check names the test."""
    results = accept(proj, run(proj, "skippy"))
    assert results["R2"]["status"] == "unverified"
    skipped = issues(check(proj), "R2")["requirement_tests_skipped"]
    assert skipped["tests"] == ["tests.test_header::test_order"]


def test_glob_matching_no_test_flags_missing_tests(proj: Project) -> None:
    """A mapping glob that matched no test leaves its requirement unverified; check flags it missing."""
    results = accept(proj, run(proj, "globbed"))
    assert (results["R1"]["status"], results["R2"]["status"]) == ("passed", "unverified")
    missing = issues(check(proj), "R2")["requirement_tests_missing"]
    assert missing["globs"] == ["tests.test_gone::*"]


def test_green_run_makes_mapped_requirements_ready(proj: Project) -> None:
    """After a run where every mapped test passed, those requirements carry no per-test issue."""
    accept(proj, run(proj, "green"))
    report = check(proj)
    assert not issues(report, "R1") and not issues(report, "R2")
    assert codes(report) == ["missing_result"]  # R3 is not mapped by any test


def test_passed_claim_on_a_requirement_whose_tests_failed_is_refused(proj: Project) -> None:
    """--requirement R2 --evidence RUN (status passed) is refused: R2's tests in that run failed."""
    cited = run(proj, "mixed")
    with pytest.raises(AssayError) as info:
        data(proj, "work.accept", id="knowledge:export", requirement=["R2"], evidence=[cited],
             status="passed", note="trust me")
    assert info.value.code == "evidence_run_not_passed"
    assert "whose tests for R2 are failed" in info.value.message


def test_passed_claim_resting_on_a_run_with_failed_tests_is_flagged(proj: Project) -> None:
    """A passed result written by hand on such a run is flagged by work check, naming the test."""
    run(proj, "mixed")
    the_intent = data(proj, "get", id="knowledge:export")["record"]["data"]["intent"]
    receipt = data(proj, "get", id="evidence:mixed")["record"]
    put(proj, "knowledge:export", accepted(the_intent, result("R2", ref(receipt))),
        expect_revision=1)
    found = issues(check(proj), "R2")
    assert {"evidence_run_not_passed", "requirement_tests_failed"} <= set(found)


def test_run_with_unreadable_results_is_refused(proj: Project) -> None:
    """A run whose results file was refused has no per-test outcomes: run_results_unreadable."""
    error = refused(proj, run(proj, "broken"))
    assert (error.code, error.pointer) == ("run_results_unreadable", "/from_run/0")
    assert error.details["results_code"] == "results_not_junit"


def test_run_mapping_no_requirement_of_the_intent_is_refused(proj: Project) -> None:
    """A run whose tests map only to other intents' requirements is run_maps_no_requirement."""
    error = refused(proj, run(proj, "other"))
    assert (error.code, error.details["mapped"]) == ("run_maps_no_requirement", ["R9"])


def test_run_recorded_for_an_untested_requirement_leaves_it_unverified(proj: Project) -> None:
    """A per-test run recorded --for R3, whose tests verify only R1 and R2, leaves R3 unverified."""
    results = accept(proj, run(proj, "green", target=["knowledge:export#R3"]))
    assert {rid: r["status"] for rid, r in results.items()} == {
        "R1": "passed", "R2": "passed", "R3": "unverified"}
    assert results["R3"]["notes"].endswith("no test mapped to R3 ran in it")
    missing = issues(check(proj), "R3")["requirement_tests_missing"]
    assert missing["message"] == "R3: no test mapped to it ran in evidence:green revision 1"


def test_a_newer_run_replaces_the_per_test_results(proj: Project) -> None:
    """Accepting a later green run turns the failed requirement passed, citing the new run."""
    accept(proj, run(proj, "mixed"))
    results = accept(proj, run(proj, "green"))
    assert results["R2"]["status"] == "passed"
    assert [e["id"] for e in results["R2"]["evidence"]] == ["evidence:green"]
