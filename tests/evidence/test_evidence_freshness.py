"""Freshness: a run's workspace against the workspace now, on real git repositories."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from evidence_helpers import git, make_repo, op

from assay.config import CONFIG_NAME
from assay.evidence.freshness import (
    CONTRACT_FILES,
    changed_paths,
    contract_paths,
    observe_now,
    run_freshness,
    runs_differ,
)
from assay.gate.install import settings_file

UNIT = (f'\n[evidence.commands.unit]\nargv = {json.dumps([sys.executable, "-c", "pass"])}\n'
        "timeout = 60\n")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A committed git project with one source file and a check that passes."""
    root = make_repo(tmp_path / "proj", {"app.py": "A = 1\n", "lib.py": "B = 1\n",
                                         ".gitignore": ".assay/\n",
                                         "assay.toml": '[project]\nname = "demo"\n' + UNIT})
    (root / ".assay").mkdir()
    return root


def ran(root: Path) -> dict[str, Any]:
    """The data of a new run of the unit check."""
    op(root, "evidence.run", {"name": "unit"})
    record: dict[str, Any] = op(root, "evidence.show", {"id": "unit"})[0]["data"]["record"]
    return record["data"]


def test_freshness_untouched_workspace_is_the_same(repo: Path) -> None:
    """Nothing changed since the run: the same workspace."""
    assert run_freshness(ran(repo), observe_now(repo))["same"] is True  # type: ignore[index]


def test_freshness_contract_files_do_not_count(repo: Path) -> None:
    """Editing assay.toml and writing a harness settings file leave the run current."""
    data = ran(repo)
    with open(repo / "assay.toml", "a", encoding="utf-8") as handle:
        handle.write('\n[gate]\nintents = ["knowledge:x"]\n')
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text("{}\n", encoding="utf-8")
    assert run_freshness(data, observe_now(repo))["same"] is True  # type: ignore[index]


def test_freshness_names_the_changed_files(repo: Path) -> None:
    """A changed and a new file are named and counted."""
    data = ran(repo)
    (repo / "app.py").write_text("A = 2\n", encoding="utf-8")
    (repo / "new.py").write_text("C = 3\n", encoding="utf-8")
    found = run_freshness(data, observe_now(repo))
    assert found == {"same": False, "paths": ["app.py", "new.py"], "count": 2, "complete": True,
                     "reason": None}


def test_freshness_committing_what_the_run_saw_is_no_change(repo: Path) -> None:
    """A dirty file the run saw, then committed as it was: HEAD moved, nothing changed."""
    (repo / "app.py").write_text("A = 2\n", encoding="utf-8")
    data = ran(repo)
    git(repo, "commit", "-q", "-am", "the change the run saw")
    assert run_freshness(data, observe_now(repo))["same"] is True  # type: ignore[index]


def test_freshness_a_commit_names_only_the_files_it_changed(repo: Path) -> None:
    """A new commit changing lib.py: lib.py is named, never the HEAD move itself."""
    data = ran(repo)
    (repo / "lib.py").write_text("B = 2\n", encoding="utf-8")
    git(repo, "commit", "-q", "-am", "lib")
    found = run_freshness(data, observe_now(repo))
    assert (found["paths"], found["complete"]) == (["lib.py"], True)  # type: ignore[index]


def test_freshness_ignored_paths_are_not_named(repo: Path) -> None:
    """A path under [evidence] ignore is left out of the observation and of the names."""
    data = ran(repo)
    (repo / "cache").mkdir()
    (repo / "cache" / "x.bin").write_text("x", encoding="utf-8")
    (repo / "app.py").write_text("A = 3\n", encoding="utf-8")
    found = run_freshness(data, observe_now(repo, ["cache"]))
    assert found["paths"] == ["app.py"]  # type: ignore[index]


def test_freshness_workspace_that_cannot_be_observed_is_not_the_same(repo: Path) -> None:
    """.git removed after a run in a work tree: not the same workspace, with the reason."""
    data = ran(repo)
    shutil.rmtree(repo / ".git")
    found = run_freshness(data, observe_now(repo))
    assert found["same"] is False  # type: ignore[index]
    assert found["reason"].startswith("the workspace cannot be observed now (not_applicable")  # type: ignore[index]


def test_freshness_run_outside_git_is_not_compared(tmp_path: Path) -> None:
    """A run that observed no work tree has nothing to compare: None."""
    root = tmp_path / "plain"
    root.mkdir()
    (root / "assay.toml").write_text('[project]\nname = "demo"\n' + UNIT, encoding="utf-8")
    assert run_freshness(ran(root), observe_now(root)) is None


def test_freshness_two_runs_on_other_files_differ(repo: Path) -> None:
    """runs_differ names what changed between two runs' workspaces; None when they match."""
    first = ran(repo)
    second = ran(repo)
    assert runs_differ(first, second, None) is None
    (repo / "app.py").write_text("A = 4\n", encoding="utf-8")
    third = ran(repo)
    assert runs_differ(first, third, None) == {"paths": ["app.py"], "count": 1,
                                               "complete": True}


def test_freshness_changed_paths_without_a_commit_diff_are_incomplete() -> None:
    """Two summaries at other commits and no way to diff them: named what can be, incomplete."""
    a = {"head": "a" * 40, "dirty": [{"path": "x.py"}], "dirty_files": {"x.py": "1"},
         "omitted": {"dirty": 0}}
    b = {"head": "b" * 40, "dirty": [], "dirty_files": {}, "omitted": {"dirty": 0}}
    assert changed_paths(a, b, None) == (["x.py"], False)


def test_freshness_contract_files_are_where_assay_writes_them(tmp_path: Path) -> None:
    """CONTRACT_FILES are assay.toml and every harness's project settings file."""
    places = {settings_file(h, "project", tmp_path).path.relative_to(tmp_path).as_posix()
              for h in ("claude-code", "codex", "cursor")}
    assert set(CONTRACT_FILES) == {CONFIG_NAME, *places}


def test_freshness_contract_paths_follow_the_project_inside_the_repository(tmp_path: Path) -> None:
    """A project in a subdirectory: its contract files are relative to the repository's top."""
    (tmp_path / "sub").mkdir()
    assert contract_paths(tmp_path / "sub", str(tmp_path))[0] == "sub/assay.toml"
