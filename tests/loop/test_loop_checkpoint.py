"""Checkpoints and verified rollback on real git repositories."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from loop_helpers import contract, evaluation, loop_project, op, records, start, submit

from assay.errors import AssayError
from assay.evidence.git import observe
from assay_testing import Project

BINARY = bytes(range(256)) * 4 + b"\x00\xff\xfe"


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def _rich(root: Path) -> Project:
    """A project whose first commit has text files, a binary file and a symlink."""
    project = loop_project(root)
    (root / ".gitignore").write_text(".assay/\n__pycache__/\n*.log\n", encoding="utf-8")
    (root / "a.txt").write_text("alpha\n", encoding="utf-8")
    (root / "b.txt").write_text("beta\n", encoding="utf-8")
    (root / "old.txt").write_text("renamed later\n", encoding="utf-8")
    (root / "bin.dat").write_bytes(b"\x00\x01original\xff")
    (root / "tool.sh").write_text("#!/bin/sh\necho hi\n", encoding="utf-8")
    os.chmod(root / "tool.sh", 0o755)
    os.symlink("a.txt", root / "link")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "files")
    return project


def _dirty(root: Path) -> None:
    """Modified, added, deleted and renamed files, a changed binary and symlinks."""
    (root / "a.txt").write_text("alpha, modified\n", encoding="utf-8")
    (root / "added.txt").write_text("a new file\n", encoding="utf-8")
    (root / "b.txt").unlink()
    (root / "sub").mkdir()
    _git(root, "mv", "old.txt", "sub/new-name.txt")
    (root / "bin.dat").write_bytes(BINARY)
    (root / "link").unlink()
    os.symlink("b.txt", root / "link")
    os.symlink("calc.py", root / "newlink")
    (root / "ignored.log").write_text("before\n", encoding="utf-8")


def _diverge(root: Path) -> None:
    """Work after the checkpoint: more edits, a commit (HEAD moves) and an ignored change."""
    (root / "a.txt").write_text("alpha, wrong turn\n", encoding="utf-8")
    (root / "added.txt").unlink()
    (root / "later.txt").write_text("later\n", encoding="utf-8")
    (root / "bin.dat").write_bytes(b"broken")
    (root / "newlink").unlink()
    (root / "sub" / "new-name.txt").write_text("edited after rename\n", encoding="utf-8")
    os.chmod(root / "tool.sh", 0o644)
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "wrong turn")
    (root / "b.txt").write_text("beta is back\n", encoding="utf-8")
    (root / "ignored.log").write_text("after\n", encoding="utf-8")


def _err(project: Project, name: str, args: dict[str, Any]) -> AssayError:
    with pytest.raises(AssayError) as caught:
        op(project, name, args)
    return caught.value


def _recover(project: Project, handle: dict[str, Any], ck: str, reason: str = "wrong turn"
             ) -> dict[str, Any]:
    return op(project, "loop.recover", {"handle": json.dumps(handle), "checkpoint": ck,
                                        "reason": reason})


def test_checkpoint_restore_exact_boundary(tmp_path: Path) -> None:
    """After recover the fingerprints and HEAD equal the checkpoint's; ignored files stay."""
    project = _rich(tmp_path / "p")
    root = project.root
    view = start(project)
    _dirty(root)
    taken = op(project, "loop.checkpoint", {"handle": json.dumps(view["submissionHandle"])})
    ck = taken["checkpoint"]
    at = observe(root)
    _diverge(root)
    assert observe(root).files != at.files and observe(root).head != at.head

    out = _recover(project, view["submissionHandle"], ck["checkpointId"])

    now = observe(root)
    assert now.head == at.head
    assert dict(now.files) == dict(at.files)
    assert (root / "bin.dat").read_bytes() == BINARY
    assert os.readlink(root / "link") == "b.txt" and os.readlink(root / "newlink") == "calc.py"
    assert os.stat(root / "tool.sh").st_mode & 0o111
    assert not (root / "later.txt").exists() and not (root / "b.txt").exists()
    assert (root / "ignored.log").read_text(encoding="utf-8") == "after\n"
    assert out["recovery"]["restore_verified"] is True
    assert out["promptArtifact"]["contextReason"] == "recovery_redo"
    assert out["round"] == 1 and out["recovery"]["redo_round"] == 1
    directive = records(project, "loop-recovery")
    assert [d.data["status"] for d in directive.values()] == ["verified"]
    stored = next(iter(directive.values())).data
    assert stored["restoredBoundary"]["workspace_sha256"] == at.workspace_sha256
    from assay.loop.models import CheckpointRef, PromptArtifact, RecoveryDirective

    RecoveryDirective.model_validate(stored)
    CheckpointRef.model_validate(ck)
    PromptArtifact.model_validate(out["promptArtifact"] | {"renderedPrompt": out["prompt"]})


def test_checkpoint_manifest_is_content_addressed(tmp_path: Path) -> None:
    """Dirty files are blob records addressed by digest; clean files are not copied."""
    project = _rich(tmp_path / "p")
    view = start(project)
    _dirty(project.root)
    taken = op(project, "loop.checkpoint", {"handle": json.dumps(view["submissionHandle"])})
    manifests = records(project, "loop-checkpoint")
    manifest = next(r.data for r in manifests.values()
                    if r.data["checkpointId"] == taken["checkpoint"]["checkpointId"])
    assert manifest["role"] == "mid" and manifest["coverage"] == "tracked_and_non_ignored_untracked"
    assert set(manifest["contents"]) == {"a.txt", "added.txt", "bin.dat", "link", "newlink",
                                         "sub/new-name.txt"}
    assert "calc.py" in manifest["fingerprints"] and "calc.py" not in manifest["contents"]
    blobs = records(project, "blob")
    import hashlib

    for entry in manifest["blobs"].values():
        for chunk in entry["chunks"]:
            assert f"blob:{chunk}" in blobs
    assert manifest["blobs"]["bin.dat"]["sha256"] == hashlib.sha256(BINARY).hexdigest()
    again = op(project, "loop.checkpoint", {"handle": json.dumps(view["submissionHandle"])})
    assert again["recorded"] is False
    assert again["checkpoint"]["checkpointId"] == taken["checkpoint"]["checkpointId"]


def test_checkpoint_every_round_gets_before(gitproj: Project) -> None:
    """Each held round holds an automatic before checkpoint that is committed with it."""
    view = start(gitproj)
    assert [c["role"] for c in view["checkpoints"]] == ["before"]
    r1 = submit(gitproj, view["submissionHandle"], evaluation(round_contract=contract()))
    assert r1["checkpoints"][0]["round"] == 2 and r1["checkpoints"][0]["role"] == "before"
    stored = records(gitproj)[view["roundId"]].data
    assert stored["checkpoints"] == view["checkpoints"]


def test_recover_abandons_rounds_and_child_branch_continues(gitproj: Project) -> None:
    """Recovering to round 2's before checkpoint abandons round 2, keeps round 1, redoes 2."""
    root = gitproj.root
    view = start(gitproj, loop="calc")
    r1 = submit(gitproj, view["submissionHandle"], evaluation(round_contract=contract()))
    item = r1["guidance"]["active_contract"]["items"][0]["id"]
    target = r1["checkpoints"][0]["checkpointId"]
    (root / "calc.py").write_text("def add(a, b):\n    return a * b\n", encoding="utf-8")
    (root / "scratch.txt").write_text("notes\n", encoding="utf-8")
    r2 = submit(gitproj, r1["submissionHandle"], evaluation(
        execution_report={"files_changed": ["calc.py", "scratch.txt"],
                          "claims": [{"id": item, "outcome": "met"}]},
        wrong_assumptions=["multiplying is adding"],
        discovered_constraints=["keep calc pure"]))
    assert r2["receipt"]["verification"]["evidence_posture"]["status"] == "contradicted"

    out = _recover(gitproj, r2["submissionHandle"], target, "the product was a dead end")
    rec = out["recovery"]
    assert rec["abandoned_rounds"] == [2] and rec["redo_round"] == 2
    assert rec["observed_skipped_files"] == ["calc.py", "scratch.txt"]
    assert rec["reported_skipped_files"] == ["calc.py", "scratch.txt"]
    assert rec["wrong_assumptions"] == ["multiplying is adding"]
    assert rec["preserved_discoveries"] == ["keep calc pure"]
    assert not (root / "scratch.txt").exists()
    assert out["round"] == 2 and out["guidance"]["recovery"]["restore_verified"] is True
    assert rec["directiveId"] in out["prompt"] and "multiplying is adding" in out["prompt"]
    assert out["promptArtifact"]["coverage"]["active"][-1] == {"id": rec["directiveId"],
                                                               "kind": "recovery"}
    status = op(gitproj, "loop.status", {"loop": "calc"})
    assert status["committedRounds"] == 1

    (root / "calc.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    redo = submit(gitproj, out["submissionHandle"], evaluation(
        execution_report={"files_changed": ["calc.py"], "claims": [{"id": item, "outcome": "met"}]},
        round_contract=contract(work_item="keep it")))
    receipt = redo["receipt"]
    assert receipt["recovery_checkpoint"]["restore_verified"] is True
    assert receipt["verification"]["evidence_posture"]["status"] == "verified"
    versions = _history(gitproj, "loop:calc:round:2")
    assert [v.data["branchId"] for v in versions] == ["main", rec["directiveId"]]
    assert _history(gitproj, "loop:calc:round:1")[0].revision == 1
    assert redo["guidance"]["recovery"] is None
    from assay.loop.models import SubmissionGuidance, SubmissionReceipt

    SubmissionGuidance.model_validate(out["guidance"])
    SubmissionReceipt.model_validate(receipt)


def _history(project: Project, record_id: str) -> list[Any]:
    from assay.ledger import open_store

    store = open_store(project.root / ".assay" / "ledger.db")
    try:
        with store.reader() as reader:
            return reader.history(record_id)
    finally:
        store.close()


def test_recover_abandoned_checkpoint_is_recovery_invalid(gitproj: Project) -> None:
    """A checkpoint of an abandoned round is not on the current branch: recovery_invalid."""
    view = start(gitproj)
    r1 = submit(gitproj, view["submissionHandle"], evaluation(round_contract=contract()))
    r2 = submit(gitproj, r1["submissionHandle"], evaluation())
    round3 = r2["checkpoints"][0]["checkpointId"]
    out = _recover(gitproj, r2["submissionHandle"], r1["checkpoints"][0]["checkpointId"])
    err = _err(gitproj, "loop.recover", {"handle": json.dumps(out["submissionHandle"]),
                                         "checkpoint": round3, "reason": "back again"})
    assert (err.code, err.pointer) == ("recovery_invalid", "/checkpoint")


@pytest.mark.parametrize(("args", "code", "pointer"), [
    ({"checkpoint": "ck-00000000", "reason": "x"}, "checkpoint_unavailable", "/checkpoint"),
    ({"checkpoint": "nope", "reason": "x"}, "recovery_invalid", "/checkpoint"),
    ({"checkpoint": "ck-00000000", "reason": "  "}, "recovery_invalid", "/reason"),
])
def test_recover_rejected_request_writes_nothing(gitproj: Project, args: dict[str, Any],
                                                 code: str, pointer: str) -> None:
    """A rejected recover request has its code and pointer and leaves the ledger unchanged."""
    view = start(gitproj)
    before = gitproj.ok("ledger", "info")["data"]["ledger_revision"]
    err = _err(gitproj, "loop.recover", {"handle": json.dumps(view["submissionHandle"]), **args})
    assert (err.code, err.pointer) == (code, pointer)
    assert gitproj.ok("ledger", "info")["data"]["ledger_revision"] == before


def test_recover_disabled(tmp_path: Path) -> None:
    """[loop] recovery = false refuses recover with recovery_disabled."""
    project = loop_project(tmp_path / "p", loop_toml="recovery = false")
    view = start(project)
    err = _err(project, "loop.recover", {"handle": json.dumps(view["submissionHandle"]),
                                         "checkpoint": view["checkpoints"][0]["checkpointId"],
                                         "reason": "x"})
    assert err.code == "recovery_disabled"


def test_recover_stale_handle_returns_held_prompt(gitproj: Project) -> None:
    """A stale handle on recover returns the held prompt with a warning, restoring nothing."""
    view = start(gitproj)
    r1 = submit(gitproj, view["submissionHandle"], evaluation(round_contract=contract()))
    out = _recover(gitproj, view["submissionHandle"], view["checkpoints"][0]["checkpointId"])
    assert out["stale"] is True and out["warnings"][0]["code"] == "submission_handle_mismatch"
    assert out["submissionHandle"] == r1["submissionHandle"]
    assert records(gitproj, "loop-recovery") == {}


def _chattr(path: Path, flag: str) -> bool:
    if shutil.which("chattr") is None:
        return False
    return subprocess.run(["chattr", flag, str(path)], capture_output=True,
                          check=False).returncode == 0


def test_recover_immutable_file_is_restore_failed(tmp_path: Path) -> None:
    """An immutable file (chattr +i, which defeats root) fails the restore: restore_failed,
    the workspace is put back as it was, and the ledger shows no redo."""
    project = _rich(tmp_path / "p")
    root = project.root
    view = start(project)
    target = view["checkpoints"][0]["checkpointId"]
    (root / "a.txt").write_text("edited\n", encoding="utf-8")
    (root / "zz.txt").write_text("blocked\n", encoding="utf-8")
    if not _chattr(root / "zz.txt", "+i"):
        pytest.skip("chattr +i is not supported here")
    try:
        before = observe(root)
        err = _err(project, "loop.recover", {"handle": json.dumps(view["submissionHandle"]),
                                             "checkpoint": target, "reason": "undo"})
        after = observe(root)
    finally:
        _chattr(root / "zz.txt", "-i")
    assert err.code == "restore_failed"
    assert err.details["workspaceReturned"] is True and err.details["restorePending"] is False
    assert dict(after.files) == dict(before.files)
    assert (root / "a.txt").read_text(encoding="utf-8") == "edited\n"
    status = op(project, "loop.status", {})
    assert status["submissionHandle"] == view["submissionHandle"]
    assert status["guidance"]["recovery"] is None
    [directive] = records(project, "loop-recovery").values()
    assert directive.data["status"] == "restore_failed"
    assert directive.data["restore"]["rolledBack"] is True
    from assay.loop.models import RecoveryDirective

    RecoveryDirective.model_validate(directive.data)
    explained = op(project, "loop.explain", {})
    assert explained["context"]["reason"] == "first_round" and explained["recovery"] is None


def test_recover_directory_in_the_way_is_restore_failed(tmp_path: Path) -> None:
    """A directory holding an ignored file where the checkpoint has a file is never deleted:
    restore_failed, no redo, the ignored file intact."""
    project = _rich(tmp_path / "p")
    root = project.root
    view = start(project)
    (root / "b.txt").unlink()
    (root / "b.txt").mkdir()
    (root / "b.txt" / "keep.log").write_text("mine\n", encoding="utf-8")
    (root / "a.txt").write_text("edited\n", encoding="utf-8")
    err = _err(project, "loop.recover", {"handle": json.dumps(view["submissionHandle"]),
                                         "checkpoint": view["checkpoints"][0]["checkpointId"],
                                         "reason": "undo"})
    assert err.code == "restore_failed" and err.details["workspaceReturned"] is True
    assert (root / "b.txt" / "keep.log").read_text(encoding="utf-8") == "mine\n"
    assert (root / "a.txt").read_text(encoding="utf-8") == "edited\n"
    assert op(project, "loop.status", {})["round"] == 1
    assert op(project, "loop.explain", {})["context"]["reason"] == "first_round"


def test_checkpoint_limit_too_many_dirty_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                               ) -> None:
    """More dirty files than a checkpoint captures is checkpoint_limit; the round goes on."""
    from assay.loop import checkpoint

    project = loop_project(tmp_path / "p")
    view = start(project)
    for i in range(4):
        (project.root / f"f{i}.txt").write_text(str(i), encoding="utf-8")
    monkeypatch.setattr(checkpoint, "MAX_CONTENT_FILES", 3)
    err = _err(project, "loop.checkpoint", {"handle": json.dumps(view["submissionHandle"])})
    assert err.code == "checkpoint_limit" and err.details["limit"] == 3


def test_checkpoint_outside_git_is_unavailable(tmp_path: Path) -> None:
    """Outside a git work tree there is no checkpoint: the round warns, checkpoint refuses."""
    from assay_testing import make_project

    project = make_project(tmp_path / "plain")
    view = start(project)
    assert view["checkpoints"] == []
    assert view["warnings"][0]["code"] == "checkpoint_unavailable"
    err = _err(project, "loop.checkpoint", {"handle": json.dumps(view["submissionHandle"])})
    assert err.code == "checkpoint_unavailable"


def test_recover_never_writes_through_a_symlinked_directory(tmp_path: Path) -> None:
    """A directory replaced by an ignored symlink to the outside fails the restore; nothing is
    written outside the work tree."""
    project = _rich(tmp_path / "p")
    root = project.root
    (root / "sub").mkdir()
    (root / "sub" / "inner.txt").write_text("inside\n", encoding="utf-8")
    view = start(project)
    taken = op(project, "loop.checkpoint", {"handle": json.dumps(view["submissionHandle"])})
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.rmtree(root / "sub")
    with (root / ".gitignore").open("a", encoding="utf-8") as handle:
        handle.write("sub\n")
    os.symlink(outside, root / "sub")
    err = _err(project, "loop.recover", {"handle": json.dumps(view["submissionHandle"]),
                                         "checkpoint": taken["checkpoint"]["checkpointId"],
                                         "reason": "undo"})
    assert err.code == "restore_failed"
    assert list(outside.iterdir()) == []


def test_checkpoint_stale_handle_is_mismatch(gitproj: Project) -> None:
    """checkpoint with a handle that no longer names the held attempt is an error, not a warning."""
    view = start(gitproj)
    submit(gitproj, view["submissionHandle"], evaluation(round_contract=contract()))
    err = _err(gitproj, "loop.checkpoint", {"handle": json.dumps(view["submissionHandle"])})
    assert err.code == "submission_handle_mismatch"
    assert err.details["submissionHandle"]["roundId"].endswith(":round:2")


@pytest.mark.parametrize(("toml", "pointer"), [
    ("backtrack_after = -1", "/loop/backtrack_after"),
    ("backtrack_after = true", "/loop/backtrack_after"),
    ('recovery = "yes"', "/loop/recovery"),
])
def test_checkpoint_loop_config_is_closed(tmp_path: Path, toml: str, pointer: str) -> None:
    """The recovery settings of [loop] are checked with their exact pointer."""
    from assay.config import load_project

    project = loop_project(tmp_path / "p", loop_toml=toml)
    with pytest.raises(AssayError) as caught:
        load_project(project.root)
    assert (caught.value.code, caught.value.pointer) == ("invalid_config", pointer)


def test_checkpoint_large_file_is_chunked_and_restored(tmp_path: Path) -> None:
    """A dirty file over one chunk is stored as several blobs and restored byte for byte."""
    project = loop_project(tmp_path / "p")
    root = project.root
    view = start(project)
    big = os.urandom(2 * 1024 * 1024 + 12345)
    (root / "big.bin").write_bytes(big)
    taken = op(project, "loop.checkpoint", {"handle": json.dumps(view["submissionHandle"])})
    manifest = next(r.data for r in records(project, "loop-checkpoint").values()
                    if r.data["checkpointId"] == taken["checkpoint"]["checkpointId"])
    assert len(manifest["blobs"]["big.bin"]["chunks"]) == 3
    (root / "big.bin").write_bytes(b"small now")
    _recover(project, view["submissionHandle"], taken["checkpoint"]["checkpointId"])
    assert (root / "big.bin").read_bytes() == big


def test_recover_rewritten_manifest_is_checkpoint_invalid(tmp_path: Path) -> None:
    """A manifest version written by a client is refused before any write: checkpoint_invalid."""
    project = _rich(tmp_path / "p")
    view = start(project)
    _dirty(project.root)
    ck = op(project, "loop.checkpoint", {"handle": json.dumps(view["submissionHandle"])})
    record_id = f"loop-checkpoint:{view['loopId']}:{ck['checkpoint']['checkpointId']}"
    data = records(project, "loop-checkpoint")[record_id].data
    project.ok("put", "--data-file", "-", "--", record_id, input=json.dumps(data))
    before = project.ok("ledger", "info")["data"]["ledger_revision"]
    err = _err(project, "loop.recover", {"handle": json.dumps(view["submissionHandle"]),
                                         "checkpoint": ck["checkpoint"]["checkpointId"],
                                         "reason": "x"})
    assert (err.code, err.pointer) == ("checkpoint_invalid", "/checkpoint")
    assert err.details["problems"] == ["the stored version was not written by assay"]
    assert project.ok("ledger", "info")["data"]["ledger_revision"] == before
