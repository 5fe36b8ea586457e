"""Machine evidence is labelled by its true origin everywhere; views speak words, not reprs."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from assay_testing import CliResult, Project, make_project

# Passes while the file ``broken`` is absent, fails (exit 1) once it exists.
FLIPPING = "import os, sys; sys.exit(1 if os.path.exists('broken') else 0)"


@pytest.fixture
def rerun(tmp_path: Path) -> Project:
    """R1 accepted on a passing run of unit@1, then unit rerun and failed (unit@2)."""
    project = make_project(tmp_path / "proj", extra_toml=(
        f"\n[evidence.commands.unit]\nargv = {json.dumps([sys.executable, '-c', FLIPPING])}\n"))
    project.ok("work", "new", "--brief", "b", "--requirement", "R1|t|a", "--",
               "knowledge:calc")
    project.ok("evidence", "run", "--for", "knowledge:calc#R1", "--", "unit")
    project.ok("work", "accept", "--from-run", "evidence:unit@1", "--", "knowledge:calc")
    (project.root / "broken").write_text("", encoding="utf-8")
    assert project.run("evidence", "run", "--", "unit").code == 1
    return project


def _table(project: Project, *args: str) -> CliResult:
    """The readable view: --format table goes with the command's options, before any --."""
    words = list(args)
    at = words.index("--") if "--" in words else len(words)
    words[at:at] = ["--format", "table"]
    return project.run(*words, env={"NO_COLOR": "1", "COLUMNS": "200"})


def test_origin_tree_labels_a_cited_run_by_its_writer_after_a_rerun(rerun: Project) -> None:
    """After a rerun the tree shows the cited unit@1 as the passing machine run it was, not a claim."""
    text = _table(rerun, "work", "check", "--", "knowledge:calc").stdout
    assert ("evidence evidence:unit@1 (revision 1, not the current revision 2; machine: unit "
            "passed)") in text
    assert "(claim)" not in text


def test_origin_stale_message_says_the_newer_run_failed(rerun: Project) -> None:
    """The stale citation's message says what the newer run did: it failed, with its exit code."""
    issue = rerun.run("work", "check", "--", "knowledge:calc").json["data"]["issues"][0]
    assert issue["code"] == "evidence_revision_stale"
    assert issue["message"] == ("evidence evidence:unit is cited at revision 1; its current "
                                "revision 2 is a run that failed (exit 1)")


def test_origin_report_page_marks_the_cited_run_machine(rerun: Project) -> None:
    """The HTML page marks the cited version machine-observed with its own (passed) outcome."""
    rerun.ok("report", "--intent", "knowledge:calc", "--out", "r.html")
    page = (rerun.root / "r.html").read_text(encoding="utf-8")
    cited = re.search(r'<div class="evref"[^>]*data-evidence="evidence:unit"[^>]*>', page)
    assert cited is not None
    assert 'data-origin="machine"' in cited.group(0)
    assert 'data-cited-run-status="passed"' in cited.group(0)


def test_origin_report_banner_shows_its_tick_once(tmp_path: Path) -> None:
    """A ready page's banner shows the tick once, beside the words, not inside them."""
    project = make_project(tmp_path / "proj", extra_toml=(
        f"\n[evidence.commands.unit]\nargv = {json.dumps([sys.executable, '-c', 'pass'])}\n"))
    project.ok("work", "new", "--brief", "b", "--requirement", "R1|t|a", "--", "knowledge:calc")
    project.ok("evidence", "run", "--for", "knowledge:calc#R1", "--", "unit")
    project.ok("work", "accept", "--from-run", "evidence:unit@1", "--", "knowledge:calc")
    project.ok("report", "--intent", "knowledge:calc", "--out", "r.html")
    page = (project.root / "r.html").read_text(encoding="utf-8")
    banner = page[page.index('<section id="verdict"'):page.index("</section>",
                                                                 page.index('id="verdict"'))]
    assert banner.count("\u2714") == 1 and '<div class="word">ready to review</div>' in banner


def test_origin_wrong_kind_message_reads_as_a_sentence(rerun: Project) -> None:
    """Checking a non-intent record says 'evidence:unit is an evidence record', no quoted reprs."""
    error = rerun.run("work", "check", "--", "evidence:unit").error
    assert error["message"] == "evidence:unit is an evidence record, not a knowledge record"


REPR = re.compile(r"\b(True|False|None)\b|\{'|\['")


VIEWS = [
    ("work", "check", "--", "knowledge:calc"),
    ("work", "status"),
    ("evidence", "list"),
    ("evidence", "show", "--", "unit"),
    ("evidence", "run", "--", "unit"),
    ("report", "--intent", "knowledge:calc", "--out", "r.html"),
    ("note", "list"),
    ("decision", "show", "--", "store"),
]


def test_origin_terminal_views_print_no_python_reprs(rerun: Project) -> None:
    """No readable view prints True/False/None or a Python list or dict repr."""
    rerun.ok("decision", "record", "--key", "store", "--choice", "sqlite", "--reason", "small")
    for args in VIEWS:
        text = _table(rerun, *args).stdout
        assert text.strip() and not REPR.search(text), (args, text)
