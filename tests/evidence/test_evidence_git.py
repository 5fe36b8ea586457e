"""Workspace observation with real git repositories: dirty, untracked, ignored, links, submodules."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

from evidence_helpers import git, make_repo

from assay.evidence.git import COVERAGE, GitObservation, compare, observe


def blob_id(data: bytes) -> str:
    """Git's SHA-1 blob id of ``data``."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def test_git_observe_outside_repository_not_applicable(tmp_path: Path) -> None:
    """A directory outside any work tree is not_applicable, with no files."""
    obs = observe(tmp_path)
    assert obs.status == "not_applicable"
    assert obs.files == {} and obs.head is None


def test_git_observe_clean_repository(repo: Path) -> None:
    """A clean repository reports HEAD, branch, no dirty path and index blob ids for every file."""
    obs = observe(repo)
    assert obs.status == "observed"
    assert obs.head == git(repo, "rev-parse", "HEAD").strip()
    assert obs.branch == "main"
    assert obs.dirty == ()
    assert obs.files["src/app.py"] == "100644 blob:" + blob_id(b"print('app')\n")
    assert sorted(obs.files) == [".gitignore", "README.md", "src/app.py"]
    assert obs.summary()["coverage"] == COVERAGE


def test_git_observe_dirty_tree(repo: Path) -> None:
    """A modified and a deleted tracked file are dirty; the modified one is fingerprinted by content."""
    (repo / "README.md").write_text("changed\n")
    (repo / "src" / "app.py").unlink()
    obs = observe(repo)
    states = {d.path: d.state for d in obs.dirty}
    assert states == {"README.md": "modified", "src/app.py": "deleted"}
    assert obs.files["README.md"] == "100644 blob:" + blob_id(b"changed\n")
    assert "src/app.py" not in obs.files


def test_git_observe_untracked_included_ignored_excluded(repo: Path) -> None:
    """Non-ignored untracked files are covered; ignored files and directories are not."""
    (repo / "notes.txt").write_text("new\n")
    (repo / "debug.log").write_text("ignored\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.bin").write_bytes(b"\x00")
    obs = observe(repo)
    assert obs.files["notes.txt"] == "100644 blob:" + blob_id(b"new\n")
    assert "debug.log" not in obs.files and "build/out.bin" not in obs.files
    assert [d.path for d in obs.dirty] == ["notes.txt"]
    assert obs.dirty[0].state == "untracked"


def test_git_observe_state_directory_excluded(repo: Path) -> None:
    """The project's .assay/ directory is never observed, even when not ignored."""
    (repo / ".assay").mkdir()
    (repo / ".assay" / "ledger.db").write_bytes(b"db")
    obs = observe(repo)
    assert not any(path.startswith(".assay") for path in obs.files)


def test_git_observe_symlink_not_followed(repo: Path) -> None:
    """A symlink is fingerprinted by its target text, even when dangling."""
    os.symlink("does-not-exist", repo / "link")
    obs = observe(repo)
    assert obs.files["link"] == "120000 blob:" + blob_id(b"does-not-exist")
    git(repo, "add", "link")
    git(repo, "commit", "-q", "-m", "link")
    assert observe(repo).files["link"] == obs.files["link"]


def test_git_observe_submodule_by_commit(tmp_path: Path) -> None:
    """A submodule is fingerprinted by its checked-out commit, flagged when modified inside."""
    sub = make_repo(tmp_path / "lib", {"lib.txt": "v1\n"})
    top = make_repo(tmp_path / "top", {"main.txt": "m\n"})
    git(top, "submodule", "add", "-q", str(sub), "lib")
    git(top, "commit", "-q", "-m", "add submodule")
    commit = git(top / "lib", "rev-parse", "HEAD").strip()
    clean = observe(top)
    assert clean.files["lib"] == f"160000 commit:{commit}"
    assert clean.submodules == ("lib",)
    assert "lib/lib.txt" not in clean.files
    (top / "lib" / "lib.txt").write_text("v2\n")
    dirty = observe(top)
    assert dirty.files["lib"] == f"160000 commit:{commit}+modified"
    assert compare(clean, dirty).changed_paths == ("lib",)


def test_git_observe_content_sha256_mode(repo: Path) -> None:
    """Asked for SHA-256, every file (clean or dirty) is read and hashed."""
    (repo / "README.md").write_text("changed\n")
    obs = observe(repo, content_sha256=True)
    assert obs.fingerprint_kind == "sha256"
    assert obs.files["src/app.py"] == "100644 sha256:" + hashlib.sha256(b"print('app')\n").hexdigest()
    assert obs.files["README.md"] == "100644 sha256:" + hashlib.sha256(b"changed\n").hexdigest()


def test_git_observe_detached_head_has_no_branch(repo: Path) -> None:
    """On a detached HEAD the branch is None and HEAD is still the commit."""
    head = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "--detach")
    obs = observe(repo)
    assert obs.branch is None and obs.head == head


def test_git_observe_does_not_write_the_index(repo: Path) -> None:
    """Observing never rewrites .git/index (optional locks are off)."""
    (repo / "README.md").write_text("changed\n")
    index = repo / ".git" / "index"
    before = index.read_bytes(), index.stat().st_mtime_ns
    observe(repo)
    assert (index.read_bytes(), index.stat().st_mtime_ns) == before


def test_git_compare_unchanged(repo: Path) -> None:
    """Two observations of an untouched workspace are unchanged with no paths."""
    result = compare(observe(repo), observe(repo))
    assert result.progress == "unchanged" and result.changed_paths == ()


def test_git_compare_changed_paths(repo: Path) -> None:
    """Editing, adding and deleting files shows each path exactly once."""
    (repo / "README.md").write_text("x\n")
    before = observe(repo)
    (repo / "README.md").write_text("y\n")
    (repo / "new.txt").write_text("n\n")
    (repo / "src" / "app.py").unlink()
    result = compare(before, observe(repo))
    assert result.progress == "changed"
    assert result.changed_paths == ("README.md", "new.txt", "src/app.py")


def test_git_compare_same_content_is_unchanged(repo: Path) -> None:
    """Rewriting a file with its own content is not a change."""
    before = observe(repo)
    (repo / "README.md").write_text("hello\n")
    assert compare(before, observe(repo)).progress == "unchanged"


def test_git_compare_commit_is_changed(repo: Path) -> None:
    """A new commit with no content difference still moves HEAD: changed, no paths."""
    before = observe(repo)
    git(repo, "commit", "-q", "--allow-empty", "-m", "empty")
    result = compare(before, observe(repo))
    assert result.progress == "changed" and result.head_changed
    assert result.changed_paths == ()


def test_git_compare_dirty_then_committed_is_unchanged_content(repo: Path) -> None:
    """Committing a dirty file keeps its fingerprint: the path is not reported as changed."""
    (repo / "README.md").write_text("edited\n")
    before = observe(repo)
    git(repo, "commit", "-q", "-am", "edit")
    result = compare(before, observe(repo))
    assert result.changed_paths == ()


def test_git_compare_not_applicable_outside_git(tmp_path: Path) -> None:
    """Outside git the pair is not_applicable."""
    assert compare(observe(tmp_path), observe(tmp_path)).progress == "not_applicable"


def test_git_compare_unknown_when_a_side_failed(repo: Path) -> None:
    """A failed or missing side makes the progress unknown, never unchanged."""
    good = observe(repo)
    failed = GitObservation(status="error", reason="boom")
    assert compare(good, failed).progress == "unknown"
    assert compare(good, None).progress == "unknown"


def test_git_compare_unknown_across_fingerprint_kinds(repo: Path) -> None:
    """Observations with different fingerprint kinds are not comparable."""
    assert compare(observe(repo), observe(repo, content_sha256=True)).progress == "unknown"


def test_git_observe_unborn_branch(tmp_path: Path) -> None:
    """A repository with no commit yet is observed with head None and its files untracked."""
    root = tmp_path / "fresh"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    (root / "a.txt").write_text("a\n")
    obs = observe(root)
    assert obs.status == "observed" and obs.head is None and obs.branch == "main"
    assert list(obs.files) == ["a.txt"]


def test_git_observe_project_in_subdirectory(repo: Path) -> None:
    """Observing from a subdirectory covers the whole repository with repository paths."""
    obs = observe(repo / "src")
    assert "README.md" in obs.files and "src/app.py" in obs.files


def test_git_observe_staged_rename(repo: Path) -> None:
    """A staged rename lists the new path as renamed and the old one as gone."""
    before = observe(repo)
    git(repo, "mv", "README.md", "GUIDE.md")
    obs = observe(repo)
    states = {d.path: d.state for d in obs.dirty}
    assert states == {"GUIDE.md": "renamed", "README.md": "deleted"}
    assert obs.files["GUIDE.md"] == before.files["README.md"]
    assert compare(before, obs).changed_paths == ("GUIDE.md", "README.md")


def test_git_observe_tracked_state_directory_excluded(repo: Path) -> None:
    """Even committed files under .assay/ are left out of the observation."""
    (repo / ".assay").mkdir()
    (repo / ".assay" / "notes.txt").write_text("n\n")
    git(repo, "add", "-f", ".assay/notes.txt")
    git(repo, "commit", "-q", "-m", "state")
    (repo / ".assay" / "notes.txt").write_text("changed\n")
    obs = observe(repo)
    assert not any(path.startswith(".assay/") for path in obs.files)
    assert obs.dirty == ()


def test_compare_ignores_paths_under_the_projects_ignore_patterns(repo: Path) -> None:
    """A tool cache appearing between two observations is no change once ignored; other paths still are."""
    before = observe(repo)
    (repo / ".pytest_cache" / "v").mkdir(parents=True)
    (repo / ".pytest_cache" / "v" / "lastfailed").write_text("{}\n", encoding="utf-8")
    after = observe(repo)
    assert compare(before, after).progress == "changed"
    assert compare(before, after, ignore=(".pytest_cache",)).progress == "unchanged"
    (repo / "src" / "app.py").write_text("print('changed')\n", encoding="utf-8")
    again = compare(before, observe(repo), ignore=(".pytest_cache",))
    assert (again.progress, again.changed_paths) == ("changed", ("src/app.py",))


def test_loop_gate_observation_honours_the_ignore_patterns(repo: Path) -> None:
    """The loop gate's comparison leaves out a cache a required command wrote (the observation keeps it)."""
    from assay.loop.gate import observe as gate_observe

    before = observe(repo)
    (repo / "__pycache__").mkdir()
    (repo / "__pycache__" / "app.cpython-311.pyc").write_bytes(b"\0")
    gated = gate_observe(repo, before, (), ignore=("__pycache__",))
    assert gated.comparison.progress == "unchanged"
    assert "__pycache__/app.cpython-311.pyc" in gated.after.files
