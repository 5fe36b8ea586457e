"""SIGKILL at random points in real ``assay`` processes: puts and checkpoint writes, both backends.

The store-level crash test (a writer process killed mid-stream) lives in
tests/ledger/test_concurrency.py::test_sigkill_mid_write_loses_no_acknowledged_write.
Loop checkpoints and restores: a kill at a fixed point between the recovery
directive and the restore is tests/loop/test_loop_recover_crash.py; here the
kills land at random points, over and over.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from fault_tools import assert_ledger_whole

from assay.canonical import digest
from assay.ledger import Write, open_store
from assay_testing import ASSAY, Project, make_project

pytestmark = pytest.mark.fault
ROUNDS = int(os.environ.get("ASSAY_FAULT_ROUNDS", "12"))
INTENT = json.loads((Path(__file__).parents[1] / "fixtures" / "intent" /
                     "02_valid_intent_only.json").read_text(encoding="utf-8"))["data"]


def _spawn(project: Project, *args: str) -> subprocess.Popen[bytes]:
    env = {**os.environ}
    env.pop("ASSAY_DB", None)
    if project.db:
        env["ASSAY_DB"] = project.db
    return subprocess.Popen([ASSAY, *args], cwd=project.root, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _kill_after(proc: subprocess.Popen[bytes], delay: float) -> tuple[bool, bytes, bytes]:
    """SIGKILL ``proc`` after ``delay`` seconds unless it finished; return (finished, out, err)."""
    end = time.monotonic() + delay
    while time.monotonic() < end and proc.poll() is None:
        time.sleep(0.005)
    finished = proc.poll() is not None
    if not finished:
        os.kill(proc.pid, signal.SIGKILL)
    out, err = proc.communicate(timeout=60)
    return finished and proc.returncode == 0, out, err


def _url(project: Project) -> str:
    return project.db or str(project.root / ".assay" / "ledger.db")


def test_fault_sigkill_cli_puts_lose_nothing_and_retries_are_safe(tmp_path: Path,
                                                                   ledger_url: str) -> None:
    """Puts killed at random points either committed whole or not at all; a retry with the same request id settles each."""
    project = make_project(tmp_path / "proj", db=ledger_url)
    rng = random.Random()
    receipts: list[dict[str, Any]] = []
    intended: dict[str, Any] = {}
    for i in range(ROUNDS * 2):
        data = {"i": i, "pad": "y" * rng.randrange(1, 3000)}
        intended[f"knowledge:k{i}"] = data
        path = tmp_path / f"d{i}.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        proc = _spawn(project, "put", "--request-id", f"req-{i}", "--data-file", str(path), "--",
                      f"knowledge:k{i}")
        finished, out, _ = _kill_after(proc, rng.uniform(0.02, 0.4))
        if finished:
            receipts.append(json.loads(out)["data"])
        # The next command works, and retrying the same request settles the write exactly once.
        retry = project.ok("put", "--request-id", f"req-{i}", "--data-file", str(path), "--",
                           f"knowledge:k{i}")["data"]
        assert retry["revision"] == 1
        if finished:
            assert retry["replayed"] is True and retry["ledger_revision"] == receipts[-1]["ledger_revision"]
        receipts.append(retry)
    head = assert_ledger_whole(_url(project), receipts)
    assert head == len(intended)
    store = open_store(_url(project))
    try:
        with store.reader() as r:
            for record_id, data in intended.items():
                record = r.get(record_id)
                assert record is not None and record.data == data
                assert record.data_sha256 == digest(data)
    finally:
        store.close()


def test_fault_sigkill_checkpoint_writes_recover(tmp_path: Path, ledger_url: str) -> None:
    """Checkpoints killed at random points leave whole handoffs; the next checkpoint recovers and settles."""
    project = make_project(tmp_path / "proj", db=ledger_url)
    url = _url(project)
    rng = random.Random()
    receipts: list[dict[str, Any]] = []
    for i in range(ROUNDS):
        store = open_store(url)
        try:
            data = json.loads(json.dumps(INTENT))
            data["intent"]["brief"] = f"Round {i}: {data['intent']['brief']}"
            receipts.append(store.put(Write(id="knowledge:intent", data=data,
                                            scope="project:demo")).to_dict())
        finally:
            store.close()
        proc = _spawn(project, "work", "checkpoint", "--", "knowledge:intent")
        finished, out, _ = _kill_after(proc, rng.uniform(0.05, 0.9))
        if finished:
            receipts.append(json.loads(out)["data"]["receipt"])
        result = project.run("work", "checkpoint", "--", "knowledge:intent")
        if result.code == 3:  # documented: a pending attempt is replayed at most once
            assert result.error["code"] == "checkpoint_pending" and "Traceback" not in result.stderr
            continue
        assert result.code == 0, result.stderr
        settled = result.json["data"]
        receipts.append(settled["receipt"])
        again = project.ok("work", "checkpoint", "--", "knowledge:intent")["data"]
        assert again["written"] is False and again["signature"] == settled["signature"]
    assert_ledger_whole(url, [r for r in receipts if not r.get("replayed")])
    store = open_store(url)
    try:
        with store.reader() as r:
            handoff = r.get("handoff:intent")
            assert handoff is not None and handoff.data["intent_revision"] >= 1
            for version in r.history("handoff:intent"):
                assert version.data_sha256 == digest(version.data)
                assert set(version.data) >= {"signature", "projection", "intent_sha256"}
    finally:
        store.close()


def _loop_state(url: str, loop_id: str) -> tuple[dict[str, Any], list[Any]]:
    store = open_store(url)
    try:
        with store.reader() as r:
            head = r.get(f"loop:{loop_id}")
            assert head is not None
            versions = [v for rec in r.find(kind="loop", limit=100_000) for v in r.history(rec.id)]
            return head.data, versions
    finally:
        store.close()


def test_fault_sigkill_loop_commits_leave_whole_rounds(tmp_path: Path, ledger_url: str) -> None:
    """loop next killed at random points commits a round whole or not at all; after the lease lapses the loop goes on."""
    project = make_project(tmp_path / "proj", db=ledger_url,
                           extra_toml="[loop]\nstall_rounds = 0\nlease_seconds = 5\nrenew_seconds = 2\n")
    url = _url(project)
    project.ok("loop", "start", "--task", "sigkill", "--criterion", "rounds are whole",
               "--max-rounds", "1000", "--loop", "kill")
    evaluation = tmp_path / "ev.json"
    evaluation.write_text(json.dumps({"outcome": "partial", "output_summary": "work",
                                      "constraint_violations": [], "should_continue": True}),
                          encoding="utf-8")
    rng = random.Random()
    committed = 0
    for _ in range(ROUNDS):
        handle = json.dumps(project.ok("loop", "status", "--loop", "kill")["data"]["submissionHandle"])
        proc = _spawn(project, "loop", "next", "--handle", handle, "--evaluation", str(evaluation))
        finished, out, _ = _kill_after(proc, rng.uniform(0.05, 0.6))
        committed += bool(finished and json.loads(out)["data"].get("receipt"))
        # The next command works: status always; a submission once a dead holder's lease lapses.
        for _attempt in range(60):
            status = project.ok("loop", "status", "--loop", "kill")["data"]
            result = project.run("loop", "next", "--handle", json.dumps(status["submissionHandle"]),
                                 "--evaluation", str(evaluation))
            if result.code == 0:
                committed += bool(result.json["data"].get("receipt"))
                break
            assert result.code == 3 and result.error["code"] == "lease_conflict", result.stderr
            time.sleep(0.25)
        else:
            raise AssertionError("the loop never accepted a submission after the kill")
    head, versions = _loop_state(url, "kill")
    rounds = [v for v in versions if v.id.startswith("loop:kill:round:") and v.id.count(":") == 3]
    assert all(v.revision == 1 for v in rounds), "a round committed twice"
    assert head["facts"]["committed_rounds"] == len(rounds) >= committed
    ids = {v.id for v in versions}
    for v in rounds:  # one transaction: a round never lacks its evaluation or observation
        assert {v.id + ":evaluation", v.id + ":observation"} <= ids
    for v in versions:
        if v.id.endswith((":evaluation", ":observation")):
            assert v.id.rsplit(":", 1)[0] in ids, f"{v.id} without its round"
    assert_ledger_whole(url, [])


def _git_project(root: Path, db: str) -> Project:
    toml = "[loop]\nstall_rounds = 0\nlease_seconds = 5\nrenew_seconds = 2\nmax_rounds = 1000\n"
    project = make_project(root, db=db, git=True, extra_toml=toml)
    (root / ".gitignore").write_text(".assay/\n", encoding="utf-8")
    (root / "keep.txt").write_text("kept\n", encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=root, check=True)
    return project


def _scribble(root: Path, rng: random.Random, tag: str) -> None:
    """Dirty the work tree: edits, a new file, sometimes a multi-chunk binary, a deletion."""
    (root / "keep.txt").write_text(f"kept {tag}\n", encoding="utf-8")
    (root / f"note-{tag}.txt").write_text(tag * rng.randrange(1, 500), encoding="utf-8")
    if rng.random() < 0.5:
        (root / "big.bin").write_bytes(os.urandom(rng.randrange(1, 3) * 1024 * 1024 + 17))
    elif (root / "big.bin").exists():
        (root / "big.bin").unlink()


def _until_ok(project: Project, *args: str) -> dict[str, Any]:
    """Run a loop command until a dead holder's lease lapses (lease_conflict) and it answers."""
    deadline = time.monotonic() + 40
    while True:
        result = project.run(*args)
        if result.code == 0:
            return dict(result.json["data"])
        assert result.code == 3 and result.error["code"] == "lease_conflict", result.stderr
        assert time.monotonic() < deadline, "the lease never lapsed"
        time.sleep(0.25)


def _assert_checkpoints_whole(url: str) -> dict[str, Any]:
    """Every checkpoint manifest names only blob chunks that exist with the bytes they name."""
    import base64
    import hashlib

    store = open_store(url)
    try:
        with store.reader() as r:
            manifests = {m.id: m.data for m in r.find(kind="loop-checkpoint", limit=100_000)}
            for manifest in manifests.values():
                for blob in manifest["blobs"].values():
                    whole = b""
                    for chunk in blob["chunks"]:
                        record = r.get(f"blob:{chunk}")
                        assert record is not None, f"manifest names a missing blob {chunk}"
                        raw = base64.b64decode(record.data["data"])
                        assert hashlib.sha256(raw).hexdigest() == chunk
                        whole += raw
                    assert hashlib.sha256(whole).hexdigest() == blob["sha256"]
            return manifests
    finally:
        store.close()


def test_fault_sigkill_loop_checkpoints_and_restores_settle(tmp_path: Path, ledger_url: str) -> None:
    """loop checkpoint and loop recover killed at random points leave whole manifests; the next recover restores exactly."""
    from assay.evidence.git import observe

    project = _git_project(tmp_path / "proj", ledger_url)
    root = project.root
    url = _url(project)
    project.ok("loop", "start", "--task", "restore", "--criterion", "restores are exact",
               "--loop", "ck")
    rng = random.Random()
    for i in range(max(2, ROUNDS // 2)):
        _scribble(root, rng, f"a{i}")
        handle = json.dumps(_until_ok(project, "loop", "status", "--loop", "ck")["submissionHandle"])
        proc = _spawn(project, "loop", "checkpoint", "--handle", handle)
        _kill_after(proc, rng.uniform(0.05, 0.8))
        _assert_checkpoints_whole(url)
        # The next command works: a checkpoint once the dead holder's lease lapses.
        target = _until_ok(project, "loop", "checkpoint", "--handle", handle)["checkpoint"]
        at = dict(observe(root).files)
        _scribble(root, rng, f"b{i}")
        proc = _spawn(project, "loop", "recover", "--handle", handle, "--checkpoint",
                      target["checkpointId"], "--reason", f"undo {i}")
        _kill_after(proc, rng.uniform(0.05, 1.5))
        _assert_checkpoints_whole(url)
        status = _until_ok(project, "loop", "status", "--loop", "ck")
        directives = _directives(url, target["checkpointId"])
        if status.get("pendingRecovery") or not directives:
            # Killed between directive and verification (or before the directive): the same
            # recover resumes (or starts) and verifies.
            done = _until_ok(project, "loop", "recover", "--handle",
                             json.dumps(status["submissionHandle"]), "--checkpoint",
                             target["checkpointId"], "--reason", f"undo {i}")
            assert done["recovery"]["restore_verified"] is True
        [directive] = _directives(url, target["checkpointId"])
        assert directive["status"] == "verified", directive["status"]
        assert dict(observe(root).files) == at, "the restore is not exact"


def _directives(url: str, checkpoint_id: str) -> list[dict[str, Any]]:
    store = open_store(url)
    try:
        with store.reader() as r:
            return [d.data for d in r.find(kind="loop-recovery", limit=100_000)
                    if d.data["target"]["checkpoint_id"] == checkpoint_id]
    finally:
        store.close()
