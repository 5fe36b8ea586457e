"""Evidence: git workspace observation and the command runner against plain git / subprocess.

Baselines, measured in the same run on the same generated repository:
- ``git status --porcelain`` alone (one subprocess, output discarded) for a
  full workspace observation (rev-parse + status v2 + ls-files + parsing +
  fingerprint map + workspace digest), clean and with 1% of files dirty.
  Goal: within 3x when nothing is dirty.
- ``subprocess.run([python, -c, pass])`` for the runner on the same command
  (own process group, pipe threads, redaction, digests, group kill).

The repository has 10,000 files in 100 directories (quick mode: 2,000).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from assay.config import EvidenceCommand
from assay.evidence.commands import run_command
from assay.evidence.git import observe
from bench.harness import median_time, row

_GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com",
            "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.com"}


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, env=_GIT_ENV, check=True, capture_output=True)


def _generate(root: Path, files: int) -> None:
    root.mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    per_dir = 100
    for i in range(files):
        folder = root / f"d{i // per_dir:03d}"
        if i % per_dir == 0:
            folder.mkdir()
        (folder / f"f{i % per_dir:03d}.txt").write_text(f"file {i}\n" * 20)
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "generated")
    # Let git record clean stat data so status does not re-hash files afterwards.
    _git(root, "status", "--porcelain")


def _status(root: Path) -> None:
    subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, check=True)


def run(quick: bool) -> list[dict[str, Any]]:
    files = 2_000 if quick else 10_000
    runs = 5 if quick else 9
    tmp = Path(tempfile.mkdtemp(prefix="assay-bench-evidence-"))
    rows: list[dict[str, Any]] = []
    try:
        root = tmp / "repo"
        _generate(root, files)
        assert len(observe(root).files) == files

        base, _ = median_time(lambda: _status(root), runs=runs)
        clean, clean_spread = median_time(lambda: observe(root), runs=runs)
        rows.append(row(f"git observation, clean, {files:,} files", assay=clean * 1000,
                        baseline=base * 1000, baseline_name="git status --porcelain",
                        unit="ms", spread=clean_spread * 1000, runs=runs, goal="<= 3x"))

        dirty_count = files // 100
        for i in range(dirty_count):
            (root / f"d{i:03d}" / "f000.txt").write_text(f"edited {i}\n")
        for i in range(dirty_count // 2):
            (root / f"new{i:03d}.txt").write_text("new\n")
        base_d, _ = median_time(lambda: _status(root), runs=runs)
        dirty, dirty_spread = median_time(lambda: observe(root), runs=runs)
        rows.append(row(f"git observation, {dirty_count} modified + {dirty_count // 2} untracked",
                        assay=dirty * 1000, baseline=base_d * 1000,
                        baseline_name="git status --porcelain", unit="ms",
                        spread=dirty_spread * 1000, runs=runs,
                        note="dirty files are hashed by git hash-object"))

        full, full_spread = median_time(lambda: observe(root, content_sha256=True), runs=3)
        rows.append(row(f"git observation, SHA-256 of every file, {files:,} files",
                        assay=full * 1000, baseline=base_d * 1000,
                        baseline_name="git status --porcelain", unit="ms",
                        spread=full_spread * 1000, runs=3, note="opt-in mode, reads every file"))

        decl = EvidenceCommand(name="noop", argv=(sys.executable, "-c", "pass"))
        env = {"PATH": os.environ.get("PATH", "")}
        plain, _ = median_time(
            lambda: subprocess.run([sys.executable, "-c", "pass"], capture_output=True, env=env,
                                   check=False),
            runs=runs)
        runner, runner_spread = median_time(lambda: run_command(decl, root=tmp, environ=env),
                                            runs=runs)
        rows.append(row("command runner, python -c pass", assay=runner * 1000,
                        baseline=plain * 1000, baseline_name="subprocess.run", unit="ms",
                        spread=runner_spread * 1000, runs=runs))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rows
