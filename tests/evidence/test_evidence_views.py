"""The readable evidence views: per-test summary, requirement roll-up, observed commit."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from assay_testing import CliResult, Project, make_project, run_on_tty
from junit_testing import junit_xml, results_command

TESTS = junit_xml(("tests.test_a", "test_one", "passed", ("R1",)),
                  ("tests.test_a", "test_two", "passed", ("R1",)),
                  ("tests.test_b", "test_three", "failed", ("R2",)),
                  ("tests.test_b", "test_four", "skipped", ("R2",)),
                  ("tests.test_c", "test_other", "passed"))
_SGR = re.compile(r"\x1b\[[0-9;]*m")


def _project(root: Path, document: str = TESTS, db: str | None = None) -> Project:
    """A committed git project whose `unit` command writes ``document`` and exits 1."""
    project = make_project(root, db=db, git=True, extra_toml=results_command("unit", document, 1))
    (root / ".gitignore").write_text(".assay/\nreports/\n", encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "init"], cwd=root, check=True)
    return project


def _table(project: Project, *args: str) -> CliResult:
    words = list(args)
    words[words.index("--"):words.index("--")] = ["--format", "table"]
    return project.run(*words, env={"NO_COLOR": "1", "COLUMNS": "200"})


def _row(text: str, first: str) -> list[str]:
    """The cells of the table row whose first cell is ``first``, wrapped lines joined."""
    rows: list[list[list[str]]] = []
    for line in text.splitlines():
        if not line.startswith("\u2502"):
            continue
        cells = [c.strip() for c in line.strip().strip("\u2502").split("\u2502")]
        if cells[0] or not rows:
            rows.append([[c] if c else [] for c in cells])
        else:
            for parts, cell in zip(rows[-1], cells, strict=True):
                parts.extend([cell] if cell else [])
    for row in rows:
        if row[0] == [first]:
            return [" ".join(parts) for parts in row]
    raise AssertionError(f"no row {first!r} in:\n{text}")


def test_evidence_views_run_table_shows_tests_and_the_rollup(tmp_path: Path,
                                                             ledger_url: str) -> None:
    """`evidence run --format table` shows the test counts, the ids that did not pass and each rollup."""
    ran = _table(_project(tmp_path / "p", db=ledger_url), "evidence", "run", "--", "unit")
    assert ran.code == 1, ran.stderr
    lines = ran.stdout.splitlines()
    assert "tests: 5 in reports/unit.xml: 3 passed, 1 failed, 1 skipped" in lines
    assert "failed: tests.test_b::test_three" in lines
    assert "skipped: tests.test_b::test_four" in lines
    assert _row(ran.stdout, "R2") == ["R2", "failed", "1 failed, 1 skipped",
                                      "\u2718 tests.test_b::test_three \u25cb tests.test_b::test_four"]


def test_evidence_views_requirement_passed_in_a_failed_run_says_both(tmp_path: Path) -> None:
    """R1's row reads passed on its own tests and names the run's failure as elsewhere."""
    ran = _table(_project(tmp_path / "p"), "evidence", "run", "--", "unit")
    assert _row(ran.stdout, "R1") == ["R1", "passed on its own tests; the run failed elsewhere",
                                      "2 passed",
                                      "\u2714 tests.test_a::test_one \u2714 tests.test_a::test_two"]


def test_evidence_views_show_on_a_tty_has_the_rollup(tmp_path: Path) -> None:
    """`evidence show` on a real terminal prints the same summary and one row per requirement."""
    project = _project(tmp_path / "p")
    project.run("evidence", "run", "--", "unit")
    code, raw = run_on_tty("evidence", "show", "--", "unit", cwd=project.root, columns=200)
    text = _SGR.sub("", raw.decode("utf-8")).replace("\r\n", "\n")
    assert code == 0, text
    assert "tests: 5 in reports/unit.xml: 3 passed, 1 failed, 1 skipped" in text.splitlines()
    assert _row(text, "R1")[:3] == ["R1", "passed on its own tests; the run failed elsewhere",
                                    "2 passed"]
    assert _row(text, "R2")[:3] == ["R2", "failed", "1 failed, 1 skipped"]


def test_evidence_views_show_names_the_observed_commit_and_workspace(tmp_path: Path) -> None:
    """`evidence show` names the commit and the workspace digest the run observed."""
    project = _project(tmp_path / "p")
    project.run("evidence", "run", "--", "unit")
    record = project.ok("get", "--", "evidence:unit")["data"]["record"]["data"]
    before = record["workspace"]["before"]
    shown = _table(project, "evidence", "show", "--", "unit").stdout
    assert (f"observed commit {before['head']} on main, workspace sha256 "
            f"{before['workspace_sha256']}") in shown.splitlines()


def test_evidence_views_bound_the_test_names_they_print(tmp_path: Path) -> None:
    """Thirteen failed tests: ten ids are named and the other three counted, in line and row."""
    many = junit_xml(*(("tests.test_m", f"test_{n:02}", "failed", ("R1",)) for n in range(13)))
    ran = _table(_project(tmp_path / "p", many), "evidence", "run", "--", "unit")
    failed = next(line for line in ran.stdout.splitlines() if line.startswith("failed: "))
    assert failed.endswith("tests.test_m::test_09, and 3 more")
    assert "and 3 more" in ran.stdout.split("┃ its tests")[1]


def test_evidence_views_refused_results_file_says_why(tmp_path: Path) -> None:
    """A results file that was not used is named with its code and the reason."""
    project = make_project(tmp_path / "p", extra_toml=(
        '\n[evidence.commands.unit]\nargv = ["true"]\n'
        'results = { format = "junit", path = "reports/unit.xml" }\n'))
    ran = _table(project, "evidence", "run", "--", "unit")
    assert ran.code == 1
    assert "results file reports/unit.xml not used (results_missing): " in ran.stdout


def test_evidence_run_output_carries_rollups_and_the_observed_workspace(tmp_path: Path) -> None:
    """The run's JSON gives each requirement's tests, the ids that did not pass and the workspace."""
    project = _project(tmp_path / "p")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=project.root, capture_output=True,
                          text=True, check=True).stdout.strip()
    out = project.run("evidence", "run", "--", "unit").json["data"]
    rollups = {r["requirement_id"]: r for r in out["results"]["rollups"]}
    assert rollups["R2"]["listed"] == [{"id": "tests.test_b::test_three", "outcome": "failed"},
                                       {"id": "tests.test_b::test_four", "outcome": "skipped"}]
    assert out["results"]["failed"] == {"ids": ["tests.test_b::test_three"], "omitted": 0}
    assert out["workspace"]["before"]["head"] == head
    assert out["workspace"]["progress"] == "unchanged"


def test_evidence_views_run_prints_no_python_reprs(tmp_path: Path) -> None:
    """The run's readable view prints words: no True, False, None or Python container reprs."""
    text = _table(_project(tmp_path / "p"), "evidence", "run", "--", "unit").stdout
    assert not re.search(r"\b(True|False|None)\b|\{'|\['", text), text
