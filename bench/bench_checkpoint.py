"""Loop checkpoints: capture and verified restore of a dirty workspace, against ``cp -r``.

The workspace is a git repository whose 1,000 committed files of 10 KB are
all modified (quick mode: 200). A *checkpoint* is what ``assay loop
checkpoint`` does: observe the workspace through git, read and hash every
dirty file, and store the content as ``blob:`` records plus the manifest in
the SQLite ledger. A *restore* is what ``assay loop recover`` does to the
files: load and check the blobs, observe, rewrite every file that differs,
and observe again to verify. Each measured run starts from fresh content
(written untimed), so no blob is deduplicated. Every timed step starts
after ``sync``. The baseline runs last, on its own: interleaved with the
ledger's writes, ``cp -r`` slowed down run after run on this machine, which
would flatter the ratio. Even alone it varies several-fold between runs here
(see BENCHMARKS.md): read the absolute times too.

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


def _median(samples: list[float]) -> tuple[float, float]:
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
        samples: dict[str, list[float]] = {"checkpoint": [], "restore": [], "copy": []}
        try:
            # Checkpoint and restore alternate within each run; every timed
            # step starts after sync, so no write-back of the untimed
            # preparation is charged to it.
            for n in range(runs + 1):
                _fill(root, files, f"state {n}")
                os.sync()  # each measurement starts with nothing left to write back
                started = time.perf_counter()
                cap = capture(root)
                store_blobs(store, scope, cap.chunks)
                manifest = cap.manifest(loop_id="bench", round_number=n, role="mid",
                                        branch_id="main", created_at="t", transaction_id=None)
                store.put(Write(id=f"loop-checkpoint:bench:{manifest['checkpointId']}",
                                data=manifest, scope=scope, origin="machine"))
                checkpoint_s = time.perf_counter() - started

                # Each restore starts from other content, so every file is rewritten.
                _fill(root, files, f"elsewhere {n}")
                os.sync()
                started = time.perf_counter()
                outcome = restore(root, manifest, load_blobs(store, manifest))
                restore_s = time.perf_counter() - started
                assert outcome.verified, outcome.to_dict()
                if n:  # the first run warms caches
                    samples["checkpoint"].append(checkpoint_s)
                    samples["restore"].append(restore_s)
        finally:
            store.close()
        for n in range(runs + 1):
            os.sync()
            started = time.perf_counter()
            subprocess.run(["cp", "-r", str(root / "work"), str(tmp / f"copy{n}")], check=True)
            if n:
                samples["copy"].append(time.perf_counter() - started)
        ck_time, ck_spread = _median(samples["checkpoint"])
        rs_time, rs_spread = _median(samples["restore"])
        cp_time, cp_spread = _median(samples["copy"])
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
