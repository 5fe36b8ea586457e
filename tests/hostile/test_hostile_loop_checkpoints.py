"""Hostile checkpoint manifests: a forged `loop-checkpoint:` version must never steer a restore out of the work tree.

A restore through a symlinked directory is covered in
tests/loop/test_loop_checkpoint.py::test_recover_never_writes_through_a_symlinked_directory.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from assay_testing import Project, make_project


def _loop_with_mid_checkpoint(tmp_path: Path) -> tuple[Project, str, str]:
    project = make_project(tmp_path / "proj", git=True,
                           extra_toml="[loop]\nstall_rounds = 0\n")
    root = project.root
    (root / ".gitignore").write_text(".assay/\n", encoding="utf-8")
    (root / "a.txt").write_text("a\n", encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=root, check=True)
    project.ok("loop", "start", "--task", "t", "--criterion", "c", "--loop", "ck")
    (root / "a.txt").write_text("changed\n", encoding="utf-8")
    handle = json.dumps(project.ok("loop", "status", "--loop", "ck")["data"]["submissionHandle"])
    checkpoint = project.ok("loop", "checkpoint", "--handle", handle)["data"]["checkpoint"]
    return project, handle, checkpoint["checkpointId"]


def _forge(project: Project, checkpoint_id: str, evil: str) -> None:
    """Overwrite the manifest with a version whose captured file is renamed to ``evil``."""
    record_id = f"loop-checkpoint:ck:{checkpoint_id}"
    data: dict[str, Any] = project.ok("get", "--", record_id)["data"]["record"]["data"]
    data["blobs"][evil] = data["blobs"].pop("a.txt")
    data["fingerprints"][evil] = data["fingerprints"].pop("a.txt")
    data["contents"] = [evil]
    project.ok("put", "--data-file", "-", "--", record_id, input=json.dumps(data))


@pytest.mark.parametrize("evil", ["../outside.txt", "../../outside.txt", "/tmp/assay-evil.txt",
                                  ".git/hooks/pre-commit"])
def test_hostile_loop_checkpoint_forged_path_writes_nothing_outside(tmp_path: Path,
                                                                    evil: str) -> None:
    """A forged manifest naming a path out of the work tree (or into .git) never writes there."""
    project, handle, checkpoint_id = _loop_with_mid_checkpoint(tmp_path)
    _forge(project, checkpoint_id, evil)
    (project.root / "a.txt").write_text("diverged\n", encoding="utf-8")
    result = project.run("loop", "recover", "--handle", handle, "--checkpoint", checkpoint_id,
                         "--reason", "forged")
    assert "Traceback" not in result.stderr
    assert (result.code, result.error["code"], result.error["pointer"]) == (
        1, "checkpoint_invalid", "/checkpoint")
    target = (project.root / evil).resolve() if not evil.startswith("/") else Path(evil)
    assert not target.exists()
    assert (project.root / "a.txt").read_text(encoding="utf-8") == "diverged\n"


def test_hostile_loop_checkpoint_tampered_manifest_is_refused_before_any_write(
        tmp_path: Path) -> None:
    """A manifest rewritten by a client (origin claim, content no longer matching its id) is refused before any directive."""
    project, handle, checkpoint_id = _loop_with_mid_checkpoint(tmp_path)
    _forge(project, checkpoint_id, "b.txt")
    result = project.run("loop", "recover", "--handle", handle, "--checkpoint", checkpoint_id,
                         "--reason", "forged")
    assert (result.code, result.error["code"], result.error["pointer"]) == (
        1, "checkpoint_invalid", "/checkpoint")
    assert project.ok("find", "--kind", "loop-recovery")["data"]["records"] == []
