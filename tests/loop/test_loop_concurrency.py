"""Two real processes submitting the same handle: exactly one round commits."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from loop_helpers import contract, evaluation, loop_project, op, records, submit

from assay_testing import ASSAY


@pytest.mark.parametrize("stagger", [0.0, 0.3, 1.5])
def test_loop_concurrency_same_handle_one_commit(tmp_path: Path, stagger: float) -> None:
    """Two `assay loop next` processes on one handle: one commits, the other gets
    lease_conflict or the held result; never two commits."""
    project = loop_project(tmp_path / "race", slow=1.0)
    first = op(project, "loop.start", {"task": "race", "loop": "race", "criterion": ["one commit"]})
    r1 = submit(project, first["submissionHandle"], evaluation(round_contract=contract()))
    handle = json.dumps(r1["submissionHandle"])
    path = project.root / ".assay" / "ev.json"
    path.write_text(json.dumps(evaluation()), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "ASSAY_DB"}

    def spawn() -> subprocess.Popen[bytes]:
        return subprocess.Popen([ASSAY, "loop", "next", "--handle", handle, "--evaluation",
                                 str(path)], cwd=project.root, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    one = spawn()
    time.sleep(stagger)
    two = spawn()
    results = []
    for proc in (one, two):
        out, err = proc.communicate(timeout=120)
        results.append((proc.returncode, out.decode(), err.decode()))

    committed = [json.loads(o)["data"] for code, o, _ in results
                 if code == 0 and json.loads(o)["data"]["receipt"] is not None]
    assert len(committed) == 1, results
    assert committed[0]["receipt"]["record"] == "committed"
    loser = next(r for r in results if not (r[0] == 0 and json.loads(r[1])["data"]["receipt"]))
    if loser[0] == 0:
        held = json.loads(loser[1])["data"]
        assert held["stale"] is True
        assert held["warnings"][0]["code"] == "submission_handle_mismatch"
        assert held["submissionHandle"] == committed[0]["submissionHandle"]
        assert held["committedReceipt"]["transactionId"] == r1["submissionHandle"]["transactionId"]
    else:
        assert loser[0] == 3, loser
        assert json.loads(loser[2])["error"]["code"] == "lease_conflict"

    stored = records(project)
    assert stored["loop:race:round:2"].revision == 1
    assert "loop:race:round:3" not in stored
    head = stored["loop:race"].data
    assert (head["round"], head["attempt"], head["facts"]["committed_rounds"]) == (3, 1, 2)
    lease = records(project, "loop-lease")["loop-lease:race"].data
    assert lease["holder"] is None
