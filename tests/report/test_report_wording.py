"""The reviewer's words shared by the page and the terminal: revisions, run outcomes, merging."""

from __future__ import annotations

from assay.report.wording import cited_revision, merge_repeated, run_outcome, subjects

RUN = {"status": "failed", "exit_code": 1, "command": "unit"}


def test_wording_cited_revision_that_is_current() -> None:
    """A citation of the current revision says so."""
    assert cited_revision(2, 2) == (True, "revision 2, the current one")


def test_wording_cited_revision_behind_the_current_one() -> None:
    """A stale citation names the current revision beside the cited one."""
    assert cited_revision(1, 3) == (False, "revision 1, not the current revision 3")


def test_wording_cited_revision_of_a_missing_record() -> None:
    """A citation of a record that has no current version says the record has none."""
    assert cited_revision(1, None) == (False, "revision 1; the record has no current revision")


def test_wording_run_without_tests_for_the_requirement_is_the_run() -> None:
    """A run with no per-test rollup for the requirement speaks by its own status and exit."""
    assert run_outcome(RUN) == ("failed", "unit failed, exit 1")
    assert run_outcome({"status": "passed", "exit_code": 0, "command": "unit"}) == (
        "passed", "unit passed")


def test_wording_requirement_passed_in_a_run_that_failed_elsewhere() -> None:
    """Own tests passed in a failed run: passed, and the run's failure is said to be elsewhere."""
    run = {**RUN, "requirement": {"id": "R1", "outcome": "passed", "tests": 1}}
    assert run_outcome(run) == (
        "passed", "R1 passed on its own 1 test; the run of unit failed elsewhere (exit 1)")


def test_wording_requirement_failed_on_its_own_tests() -> None:
    """Own tests failed: the requirement failed, and the run's status follows without 'elsewhere'."""
    run = {**RUN, "requirement": {"id": "R2", "outcome": "failed", "tests": 3}}
    assert run_outcome(run) == ("failed", ("R2 failed on its own 3 tests; the run of unit failed "
                                          "(exit 1)"))


def test_wording_merge_repeated_keeps_first_order_and_distinct_subjects() -> None:
    """Texts group in order of first appearance; each keeps its distinct subjects in order."""
    merged = merge_repeated([("b", "R1"), ("a", "R2"), ("b", "R3"), ("b", "R1")])
    assert merged == [("b", ["R1", "R3"]), ("a", ["R2"])]


def test_wording_subjects_reads_as_a_list_and_counts_past_the_limit() -> None:
    """Two or more names join with 'and'; past the limit the rest are counted."""
    assert subjects(["R1"]) == "R1"
    assert subjects(["R1", "R2", "R3"]) == "R1, R2 and R3"
    assert subjects([f"R{n}" for n in range(25)], limit=3) == "R0, R1, R2 and 22 more"
