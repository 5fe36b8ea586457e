"""[evidence] ignore: tool caches are not workspace changes; init writes the common ones."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from evidence_helpers import make_repo

from assay.config import DEFAULT_EVIDENCE_IGNORE, load_project
from assay.errors import AssayError
from assay.evidence.git import compare, ignore_matcher, observe
from assay_testing import Project

# A check that, like pytest, leaves caches behind in the work tree.
CACHE_WRITER = ("import os; os.makedirs('.pytest_cache/v', exist_ok=True); "
                "open('.pytest_cache/v/last', 'w').write('1'); "
                "os.makedirs('pkg/__pycache__', exist_ok=True); "
                "open('pkg/__pycache__/m.pyc', 'w').write('x')")


def test_evidence_ignore_init_writes_the_tool_cache_defaults(tmp_path: Path) -> None:
    """assay init writes [evidence] ignore with the common tool caches, and the project reads them."""
    root = tmp_path / "fresh"
    root.mkdir()
    Project(root=root).ok("init")
    assert "[evidence]" in (root / "assay.toml").read_text(encoding="utf-8")
    assert load_project(root).evidence_ignore == DEFAULT_EVIDENCE_IGNORE == (
        ".pytest_cache", "__pycache__", ".mypy_cache", ".ruff_cache", "node_modules/.cache")


@pytest.mark.parametrize(("value", "pointer"), [
    ('"__pycache__"', "/evidence/ignore"),
    ('["../outside"]', "/evidence/ignore/0"),
    ('["ok", ""]', "/evidence/ignore/1"),
], ids=["not-a-list", "parent", "empty"])
def test_evidence_ignore_bad_entries_are_invalid_config(tmp_path: Path, value: str,
                                                        pointer: str) -> None:
    """An ignore value that is not a list of relative patterns is invalid_config at its pointer."""
    (tmp_path / "assay.toml").write_text(f'[project]\nname = "p"\n[evidence]\nignore = {value}\n',
                                         encoding="utf-8")
    with pytest.raises(AssayError) as info:
        load_project(tmp_path)
    assert (info.value.code, info.value.pointer) == ("invalid_config", pointer)


@pytest.mark.parametrize(("path", "ignored"), [
    ("__pycache__/m.pyc", True), ("a/b/__pycache__/m.pyc", True), ("node_modules/.cache/x", True),
    ("web/node_modules/.cache/y", True), ("node_modules/pkg/index.js", False),
    ("src/pycache.py", False), (".pytest_cache", True), ("x.egg-info/PKG", True),
])
def test_evidence_ignore_matcher(path: str, ignored: bool) -> None:
    """A pattern matches a name, or a run of names, at any depth, and everything beneath it."""
    matches = ignore_matcher([*DEFAULT_EVIDENCE_IGNORE, "*.egg-info"])
    assert matches is not None and matches(path) is ignored


def test_evidence_ignore_observation_leaves_caches_out(repo: Path) -> None:
    """Caches written between two observations are no change when ignored, and one when not."""
    ignore = ("__pycache__", ".pytest_cache")
    before = observe(repo, ignore=ignore)
    plain_before = observe(repo)
    (repo / "src" / "__pycache__").mkdir()
    (repo / "src" / "__pycache__" / "app.pyc").write_bytes(b"\x00")
    (repo / ".pytest_cache").mkdir()
    (repo / ".pytest_cache" / "README.md").write_text("cache", encoding="utf-8")
    after = observe(repo, ignore=ignore)
    assert compare(before, after).progress == "unchanged"
    assert after.summary()["ignore"] == list(ignore)
    assert compare(plain_before, observe(repo)).changed_paths == (
        ".pytest_cache/README.md", "src/__pycache__/app.pyc")


def test_evidence_ignore_first_run_counts_no_cache_as_a_change(tmp_path: Path) -> None:
    """An evidence run whose command writes pytest and Python caches records no workspace change."""
    root = make_repo(tmp_path / "repo", {"pkg/m.py": "x = 1\n", ".gitignore": ".assay/\n"})
    project = Project(root=root)
    project.ok("init")
    with open(root / "assay.toml", "a", encoding="utf-8") as handle:
        handle.write(f"\n[evidence.commands.unit]\nargv = "
                     f"{json.dumps([sys.executable, '-c', CACHE_WRITER])}\n")
    run = project.ok("evidence", "run", "--", "unit")["data"]
    assert (run["status"], run["progress"], run["changed_path_count"]) == ("passed", "unchanged",
                                                                          0)
