"""A process killed in the middle of a recovery leaves the loop restore_pending, then retryable."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from loop_helpers import evaluation, loop_project, op, records, start, submit

from assay.errors import AssayError
from assay.evidence.git import observe

_KILLED = """
import json, os, signal, sys
from assay.config import load_project
from assay.ledger import open_store
from assay.loop.recovery import recover
root, handle, checkpoint = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
store = open_store(os.path.join(root, ".assay", "ledger.db"))
recover(store, load_project(root), handle, checkpoint_id=checkpoint, reason="undo",
        on_restore=lambda directive: os.kill(os.getpid(), signal.SIGKILL))
"""


def test_recover_sigkill_after_directive_then_retry(tmp_path: Path) -> None:
    """SIGKILL between the committed directive and the restore: submissions are restore_pending;
    once the dead holder's lease expires, the same recover completes and is verified."""
    project = loop_project(tmp_path / "p", loop_toml="lease_seconds = 5\nrenew_seconds = 1")
    root = project.root
    view = start(project)
    target = view["checkpoints"][0]["checkpointId"]
    at = observe(root)
    (root / "calc.py").write_text("broken\n", encoding="utf-8")
    killed = subprocess.run([sys.executable, "-c", _KILLED, str(root),
                             json.dumps(view["submissionHandle"]), target],
                            capture_output=True, timeout=60, check=False)
    assert killed.returncode == -9, killed.stderr
    [directive] = records(project, "loop-recovery").values()
    assert directive.data["status"] == "pending"
    assert (root / "calc.py").read_text(encoding="utf-8") == "broken\n"
    with pytest.raises(AssayError) as caught:
        submit(project, view["submissionHandle"], evaluation())
    assert caught.value.code == "restore_pending"
    assert op(project, "loop.status", {})["pendingRecovery"]["checkpointId"] == target
    deadline = time.monotonic() + 30
    while True:
        try:
            done = op(project, "loop.recover", {"handle": json.dumps(view["submissionHandle"]),
                                                "checkpoint": target, "reason": "undo"})
            break
        except AssayError as exc:
            assert exc.code == "lease_conflict" and time.monotonic() < deadline
            time.sleep(0.5)
    assert done["recovery"]["restore_verified"] is True
    assert dict(observe(root).files) == dict(at.files)
    [directive] = records(project, "loop-recovery").values()
    assert directive.data["status"] == "verified" and directive.data["attempts"] == 2
