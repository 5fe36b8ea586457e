"""What a reviewer reads on the page, in a real headless Chromium, on both backends.

The page states the commit and workspace digest each cited run observed,
lists each requirement's own tests, shows every cited revision beside the
current one, reads a requirement whose tests passed in a run that failed
elsewhere as passed, and prints a text said of several requirements once.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from report_helpers import SHARED_NOTE, op, reviewer_project

from assay_testing import Project

pytestmark = pytest.mark.browser


@pytest.fixture
def reviewed(tmp_path: Path, ledger_url: str) -> tuple[Project, Path]:
    """The reviewer's project on each backend, and its report."""
    project = reviewer_project(tmp_path / "p", db=ledger_url)
    out = tmp_path / "r.html"
    op(project, "report", {"intent": "knowledge:review", "out": str(out)})
    return project, out


def _record(project: Project, record_id: str) -> dict[str, Any]:
    data: dict[str, Any] = op(project, "get", {"id": record_id})["record"]["data"]
    return data


def _head(project: Project) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=project.root, capture_output=True,
                          text=True, check=True).stdout.strip()


def test_report_reviewer_citation_states_observed_commit_and_workspace(
        page: Any, reviewed: tuple[Project, Path]) -> None:
    """Each citation of a current run names the commit and the workspace digest that run observed."""
    project, out = reviewed
    page.goto(out.as_uri(), wait_until="load")
    before = _record(project, "evidence:unit")["workspace"]["before"]
    observed = page.locator("#req-R1 .evref .observed")
    assert observed.get_attribute("data-commit") == f"{_head(project)} on main"
    assert observed.get_attribute("data-workspace") == before["workspace_sha256"]
    entry = page.locator(".evidence[data-id='evidence:unit']")
    assert entry.locator("dd[data-key=commit]").text_content() == f"{_head(project)} on main"
    assert entry.locator("dd[data-key='workspace sha256']").text_content() == \
        before["workspace_sha256"]


def test_report_reviewer_lists_each_requirements_own_tests(
        page: Any, reviewed: tuple[Project, Path]) -> None:
    """Under each requirement, its own tests in the cited run are listed by name and outcome."""
    _, out = reviewed
    page.goto(out.as_uri(), wait_until="load")

    def listed(rid: str) -> list[list[str]]:
        found: list[list[str]] = page.locator(
            f"#req-{rid} details.tests[data-requirement={rid}] li[data-test]").evaluate_all(
            "els => els.map(e => [e.dataset.test, e.dataset.outcome])")
        return found

    assert listed("R1") == [["tests.test_a::test_one", "passed"],
                            ["tests.test_a::test_two", "passed"]]
    assert listed("R2") == [["tests.test_b::test_three", "failed"],
                            ["tests.test_b::test_four", "skipped"]]
    # The failing requirement's list is open; the passing one's waits behind its summary.
    assert page.locator("#req-R2 details.tests li[data-test]").first.is_visible()
    assert not page.locator("#req-R1 details.tests li[data-test]").first.is_visible()


def test_report_reviewer_requirement_passed_in_a_run_that_failed_elsewhere(
        page: Any, reviewed: tuple[Project, Path]) -> None:
    """R1's citation of the failed run reads passed on its own tests, and says the run failed elsewhere."""
    _, out = reviewed
    page.goto(out.as_uri(), wait_until="load")
    cited = page.locator("#req-R1 .evref")
    assert cited.get_attribute("data-cited-run-status") == "failed"
    assert cited.get_attribute("data-outcome") == "passed"
    assert "ok" in (cited.locator(".badge").nth(1).get_attribute("class") or "").split()
    assert cited.locator(".said").text_content() == (
        "R1 passed on its own 2 tests; the run of unit failed elsewhere (exit 1)")
    assert page.locator("#req-R2 .evref").get_attribute("data-outcome") == "failed"
    entry = page.locator(".evidence[data-id='evidence:unit']")
    assert entry.locator(".elsewhere").text_content() == (
        "The run failed on the tests of R2; R1 passed on its own tests.")
    rows = entry.locator("table.rollup tr[data-requirement]").evaluate_all(
        "els => els.map(e => [e.dataset.requirement, e.dataset.outcome])")
    assert rows == [["R1", "passed"], ["R2", "failed"]]


def test_report_reviewer_cited_revision_beside_the_current_one_everywhere(
        page: Any, reviewed: tuple[Project, Path]) -> None:
    """Every citation, and every cited record's entry, shows the cited revision and the current one."""
    _, out = reviewed
    page.goto(out.as_uri(), wait_until="load")
    refs = page.locator(".evref").evaluate_all(
        "els => els.map(e => [e.dataset.evidence, e.dataset.citedRevision, "
        "e.dataset.currentRevision, e.querySelector('.rev').textContent])")
    assert refs == [
        ["evidence:unit", "1", "1", "(revision 1, the current one)"],
        ["evidence:unit", "1", "1", "(revision 1, the current one)"],
        ["evidence:lint", "1", "2", "(revision 1, not the current revision 2)"],
        ["evidence:lint", "1", "2", "(revision 1, not the current revision 2)"]]
    cited = page.locator(".evidence ul.cited li").evaluate_all(
        "els => els.map(e => [e.closest('.evidence').dataset.id, e.dataset.citedRevision, "
        "e.dataset.current, e.textContent])")
    assert cited == [
        ["evidence:unit", "1", "true", "R1 and R2 cite revision 1, the current one"],
        ["evidence:lint", "1", "false", "R3 and R4 cite revision 1, not the current revision 2"]]
    stale = page.locator("#req-R3 > .body > .evref .not-shown").inner_text()
    assert "assay evidence show --revision 1 -- evidence:lint" in stale


def test_report_reviewer_repeated_note_and_issue_printed_once(
        page: Any, reviewed: tuple[Project, Path]) -> None:
    """A note and an issue text said of R3 and R4 appear once each, naming both requirements."""
    _, out = reviewed
    page.goto(out.as_uri(), wait_until="load")
    shared = page.locator("#shared li.shared").evaluate_all(
        "els => els.map(e => [e.dataset.kind, e.dataset.code || '', e.dataset.applies])")
    assert shared == [["note", "", "R3 R4"], ["issue", "evidence_revision_stale", "R3 R4"]]
    text = page.locator("main").text_content() or ""
    assert text.count(SHARED_NOTE) == 1
    assert text.count("evidence evidence:lint is cited at revision 1") == 1
    for rid in ("R3", "R4"):
        issue = page.locator(f"#req-{rid} > .body > .issue[data-code=evidence_revision_stale]")
        assert issue.get_attribute("data-shared") == "2"
        # Its action, the one literal command for the stale command, stays with it.
        assert ("'assay work accept --from-run evidence:lint@3 -- knowledge:review'"
                in (issue.text_content() or ""))
    page.locator("#req-R4 > .body > .result a.shared-ref").click()
    assert page.evaluate("() => location.hash") == "#shared-1"
