"""Checkpoint and verified recover through the real CLI on both ledger backends."""

from __future__ import annotations

import json
import os
from pathlib import Path

from loop_helpers import loop_project

from assay.evidence.git import observe


def test_recover_on_each_backend(tmp_path: Path, ledger_url: str) -> None:
    """Blobs, manifests and directives round-trip through the ledger: the restore is exact
    and every prompt replays, on SQLite and on PostgreSQL."""
    project = loop_project(tmp_path / "p")
    project.db = ledger_url
    root = project.root
    view = project.ok("loop", "start", "--task", "t", "--criterion", "c", "--loop", "b")["data"]
    handle = json.dumps(view["submissionHandle"])
    (root / "calc.py").write_text("def add(a, b):\n    return b + a\n", encoding="utf-8")
    (root / "blob.bin").write_bytes(os.urandom(1024 * 1024 + 7))
    os.symlink("calc.py", root / "alias")
    taken = project.ok("loop", "checkpoint", "--handle", handle)["data"]["checkpoint"]
    at = observe(root)
    (root / "blob.bin").write_bytes(b"gone")
    (root / "alias").unlink()
    (root / "extra.txt").write_text("extra\n", encoding="utf-8")
    out = project.ok("loop", "recover", "--handle", handle, "--checkpoint",
                     taken["checkpointId"], "--reason", "back to the savepoint")["data"]
    assert out["recovery"]["restore_verified"] is True
    assert dict(observe(root).files) == dict(at.files)
    assert project.ok("loop", "replay", "--all")["data"]["match"] is True
    audit = project.ok("loop", "audit")["data"]
    assert [d["status"] for d in audit["directives"]] == ["verified"]
