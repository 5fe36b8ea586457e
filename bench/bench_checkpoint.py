"""Loop checkpoints: capture and verified restore of a dirty workspace, against ``cp -r``.

The workspace is a git repository whose 1,000 committed files of 10 KB are
all modified (quick mode: 200). A *checkpoint* is what ``assay loop
checkpoint`` does: observe the workspace through git, read and hash every
dirty file, and store the content as ``blob:`` records plus the manifest in
the SQLite ledger. A *restore* is what ``assay loop recover`` does to the
files: load and check the blobs, observe, rewrite every file that differs,
and observe again to verify. Each measured run starts from fresh content
(written untimed), so no blob is deduplicated.

The baseline, measured in the same run on the same files, is ``cp -r`` of
the directory holding them: the cost of copying the bytes once, with no
observation, hashing, ledger or verification.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from assay.ledger import open_store
from assay.ledger.store import Write
from assay.loop.checkpoint import capture, load_blobs, restore, store_blobs
from bench.harness import row

_GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com",
            "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.com"}
_SIZE = 10 * 1024


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, env=_GIT_ENV, check=True, capture_output=True)


def _fill(root: Path, files: int, tag: str) -> None:
    for i in range(files):
        body = (f"{tag} {i} ".encode() * (_SIZE // 8 + 1))[:_SIZE]
        (root / "work" / f"f{i:04d}.txt").write_bytes(body)


def _timed(prepare: Callable[[int], None], fn: Callable[[int], Any], runs: int
           ) -> tuple[float, float]:
    samples = []
    for n in range(runs + 1):
        prepare(n)
        started = time.perf_counter()
        fn(n)
        if n:  # the first run warms caches
            samples.append(time.perf_counter() - started)
    return statistics.median(samples), max(samples) - min(samples)


def run(quick: bool) -> list[dict[str, Any]]:
    files = 200 if quick else 1_000
    runs = 3 if quick else 7
    tmp = Path(tempfile.mkdtemp(prefix="assay-bench-checkpoint-"))
    try:
        root = tmp / "repo"
        (root / "work").mkdir(parents=True)
        (root / ".assay").mkdir()
        (root / ".gitignore").write_text(".assay/\n")
        _git(root, "init", "-q", "-b", "main")
        _fill(root, files, "committed")
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", "files")
        store = open_store(root / ".assay" / "ledger.db")
        scope = "project:bench"
        manifests: dict[int, dict[str, Any]] = {}
        try:
            def checkpoint(n: int) -> None:
                cap = capture(root)
                store_blobs(store, scope, cap.chunks)
                manifest = cap.manifest(loop_id="bench", round_number=n, role="mid",
                                        branch_id="main", created_at="t", transaction_id=None)
                store.put(Write(id=f"loop-checkpoint:bench:{manifest['checkpointId']}",
                                data=manifest, scope=scope, origin="machine"))
                manifests[n] = manifest

            ck_time, ck_spread = _timed(lambda n: _fill(root, files, f"state {n}"), checkpoint,
                                        runs)

            def restore_one(n: int) -> None:
                manifest = manifests[n]
                outcome = restore(root, manifest, load_blobs(store, manifest))
                assert outcome.verified, outcome.to_dict()

            # Each restore starts from other content, so every file is rewritten.
            rs_time, rs_spread = _timed(lambda n: _fill(root, files, f"elsewhere {n}"),
                                        restore_one, runs)
        finally:
            store.close()

        def copy(n: int) -> None:
            subprocess.run(["cp", "-r", str(root / "work"), str(tmp / f"copy{n}")], check=True)

        cp_time, cp_spread = _timed(lambda n: shutil.rmtree(tmp / f"copy{n}", ignore_errors=True),
                                    copy, runs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    label = f"{files:,} dirty files of 10 KB"
    return [
        row(f"loop checkpoint: {label}", assay=ck_time, baseline=cp_time,
            baseline_name="cp -r of the same files", unit="s", spread=max(ck_spread, cp_spread),
            runs=runs, note="git observe, read + hash, blob: records and manifest in SQLite"),
        row(f"loop restore (verified): {label}", assay=rs_time, baseline=cp_time,
            baseline_name="cp -r of the same files", unit="s", spread=max(rs_spread, cp_spread),
            runs=runs, note="load + check blobs, observe, rewrite every file, observe again"),
    ]
