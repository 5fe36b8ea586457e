"""Freshness in readiness: later runs of one command, the workspace now, and what the report says."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assay.errors import AssayError
from assay.intent.check import work_check
from assay.intent.snapshot import ProjectBinding
from assay.ledger import open_store
from assay.ops import Invocation, call
from assay_testing import Project, make_project
from junit_testing import results_command

INTENT = "knowledge:export"
# Passes unless the file `verdict` says fail: the outcome changes without changing the check.
CODE = "import sys; sys.exit(open('verdict').read().strip() == 'fail')"
UNIT = (f"\n[evidence.commands.unit]\nargv = {json.dumps([sys.executable, '-c', CODE])}\n"
        "timeout = 60\n")


def op(project: Project, operation: str, /, **args: Any) -> dict[str, Any]:
    inv = Invocation(cwd=str(project.root), db=project.db, surface="test")
    try:
        return call(operation, args, inv)[0]["data"]  # type: ignore[no-any-return]
    finally:
        inv.close()


def setup(root: Path, db: str | None = None, *, git: bool = True, toml: str = UNIT) -> Project:
    """A project (a committed git work tree unless ``git`` is False), intent R1..R3 on unit."""
    project = make_project(root, db=db, git=git, extra_toml=toml)
    (root / "verdict").write_text("pass\n", encoding="utf-8")
    # `verdict` is outside the work (ignored): flipping it changes the outcome, not the files.
    (root / ".gitignore").write_text(".assay/\nreports/\nverdict\n", encoding="utf-8")
    if git:
        subprocess.run(["git", "add", "-A"], cwd=root, check=True)
        subprocess.run(["git", "commit", "-q", "-m", "start"], cwd=root, check=True)
    op(project, "work.new", id=INTENT, brief="b",
       requirement=[f"R{n}|r{n}|the unit check" for n in (1, 2, 3)],
       verify_with=[f"R{n}=unit" for n in (1, 2, 3)])
    return project


def accept(project: Project, *rids: str) -> str:
    ran = op(project, "evidence.run", name="unit", target=[f"{INTENT}#{r}" for r in rids])
    cited = f"evidence:unit@{ran['receipt']['revision']}"
    op(project, "work.accept", id=INTENT, from_run=[cited])
    return cited


def check(project: Project) -> dict[str, Any]:
    return op(project, "work.check", id=INTENT)


def codes(report: dict[str, Any]) -> list[str]:
    return [i["code"] for i in report["issues"]]


def test_freshness_runs_one_per_requirement_all_stay_current(tmp_path: Path,
                                                             ledger_url: str) -> None:
    """R1, R2, R3 run in turn and accepted: no older citation is stale (same files, outcome)."""
    project = setup(tmp_path / "proj", ledger_url)
    for rid in ("R1", "R2", "R3"):
        accept(project, rid)
    report = check(project)
    assert (report["ready_to_review"], codes(report)) == (True, [])
    assert [r["evidence"][0]["revision"] for r in report["actual"]["results"]] == [1, 2, 3]


def test_freshness_later_run_with_another_outcome_makes_it_stale(tmp_path: Path) -> None:
    """A later failing run of the command: the older citations are stale, one action for both."""
    project = setup(tmp_path / "proj")
    accept(project, "R1")
    accept(project, "R2")
    (project.root / "verdict").write_text("fail\n", encoding="utf-8")
    op(project, "evidence.run", name="unit")
    report = check(project)
    stale = [i for i in report["issues"] if i["code"] == "evidence_revision_stale"]
    assert [i["requirement_id"] for i in stale] == ["R1", "R2"]
    assert stale[0]["message"] == ("evidence evidence:unit is cited at revision 1; its current "
                                   "revision 3 is a run that failed (exit 1)")
    action = ("Rerun unit on the current files for R1, R2, then record the run it prints: "
              "'assay evidence run --for knowledge:export#R1 --for knowledge:export#R2 -- "
              "unit', then 'assay work accept --from-run evidence:unit@4 -- knowledge:export'")
    assert [i["action"] for i in stale] == [action, action]
    assert report["next"].count(action) == 1


def test_freshness_later_run_on_other_files_names_them(tmp_path: Path) -> None:
    """A later run after a file changed: stale, the files named, and the file itself flagged."""
    project = setup(tmp_path / "proj")
    accept(project, "R1")
    (project.root / "export.py").write_text("SEP = ';'\n", encoding="utf-8")
    op(project, "evidence.run", name="unit", target=[f"{INTENT}#R1"])
    report = check(project)
    stale = next(i for i in report["issues"] if i["code"] == "evidence_revision_stale")
    assert stale["message"].endswith("(revision 2 ran on files that differ: export.py)")
    assert stale["action"] == ("Record its current run for R1: 'assay work accept --from-run "
                               "evidence:unit@2 -- knowledge:export'")
    changed = next(i for i in report["issues"] if i["code"] == "evidence_workspace_changed")
    assert (changed["paths"], changed["action"]) == (["export.py"], stale["action"])


def test_freshness_report_names_the_workspace_it_compared(tmp_path: Path) -> None:
    """With cited runs in a git work tree the report says which workspace it compared with."""
    project = setup(tmp_path / "proj")
    assert check(project)["workspace"]["status"] == "not_compared"
    accept(project, "R1")
    seen = check(project)["workspace"]
    assert (seen["status"], seen["compared"]) == ("observed", True)
    assert seen["work_sha256"] == op(project, "evidence.show", id="unit")[
        "record"]["data"]["workspace"]["work"]["sha256"]


def test_freshness_outside_git_the_report_says_it_could_not_compare(tmp_path: Path) -> None:
    """Outside a git work tree: workspace not_applicable, compared false, with the reason."""
    project = setup(tmp_path / "proj", git=False)
    accept(project, "R1")
    seen = check(project)["workspace"]
    assert (seen["status"], seen["compared"]) == ("not_applicable", False)
    assert seen["reason"].endswith("cannot be compared with the current ones")


def test_freshness_report_is_the_same_for_the_same_ledger_and_workspace(tmp_path: Path) -> None:
    """Checked twice with nothing changed: byte-identical (the workspace is an input)."""
    project = setup(tmp_path / "proj")
    accept(project, "R1")
    first, second = check(project), check(project)
    assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)


def test_freshness_without_state_nothing_is_compared(tmp_path: Path) -> None:
    """The pure report without the project's state: workspace null, no freshness issue."""
    project = setup(tmp_path / "proj")
    accept(project, "R1", "R2", "R3")
    (project.root / "export.py").write_text("changed\n", encoding="utf-8")
    store = open_store(str(project.root / ".assay" / "ledger.db"))
    try:
        with store.reader() as reader:
            report = work_check(reader, ProjectBinding(str(project.root), "project:demo"), INTENT)
    finally:
        store.close()
    assert (report["workspace"], report["issues"]) == (None, [])


def test_freshness_passed_claim_on_unusable_results_is_refused(tmp_path: Path) -> None:
    """--status passed citing a run whose results file was refused: evidence_run_not_passed."""
    project = setup(tmp_path / "proj", toml=results_command("unit", "<html/>"))
    op(project, "evidence.run", name="unit", target=[f"{INTENT}#R1"])
    with pytest.raises(AssayError) as info:
        op(project, "work.accept", id=INTENT, requirement=["R1"], evidence=["evidence:unit@1"],
           status="passed")
    assert (info.value.code, info.value.pointer) == ("evidence_run_not_passed", "/evidence/0")
    assert "its results file was not used (results_not_junit" in info.value.message
