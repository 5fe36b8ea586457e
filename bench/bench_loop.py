"""Loop governor: one governed round against the machine work it cannot avoid.

A round runs the contract's check command and observes the git workspace;
on top of that the governor normalises the evaluation, judges the claims,
derives the posture, compiles the next prompt and commits one ledger
transaction (evaluation, observation, round, head, lease). The baseline,
measured in the same run on the same repository, is that unavoidable part
alone: ``run_command`` of the same declaration plus ``git.observe``. The
ratio is the governor's whole overhead. Goal: within 2x.

The repository has 2,000 files (quick mode: 500); the check is
``python -c pass``; every measured call is a new round of one long loop.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from assay.config import load_project
from assay.evidence.commands import run_command
from assay.evidence.git import observe
from assay.ledger import open_store
from assay.loop.engine import Governor
from assay.loop.policy import Limits
from assay.loop.session import start
from bench.harness import median_time, row

_GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com",
            "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.com"}


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, env=_GIT_ENV, check=True, capture_output=True)


def _project(root: Path, files: int) -> None:
    root.mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    for i in range(files):
        folder = root / f"d{i // 100:03d}"
        folder.mkdir(exist_ok=True)
        (folder / f"f{i % 100:03d}.txt").write_text(f"file {i}\n" * 20)
    (root / ".gitignore").write_text(".assay/\n")
    (root / "assay.toml").write_text(
        '[project]\nname = "bench"\n\n[evidence.commands.check]\n'
        f"argv = {json.dumps([sys.executable, '-c', 'pass'])}\n")
    (root / ".assay").mkdir()
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "generated")
    _git(root, "status", "--porcelain")


def run(quick: bool) -> list[dict[str, Any]]:
    files = 500 if quick else 2_000
    runs = 5 if quick else 11
    tmp = Path(tempfile.mkdtemp(prefix="assay-bench-loop-"))
    try:
        root = tmp / "repo"
        _project(root, files)
        project = load_project(root)
        decl = project.evidence_commands[0]
        store = open_store(project.default_ledger_path)
        try:
            view = start(store, project, task="bench", criteria=["c"], constraints=[],
                         limits=Limits(max_rounds=1000, stall_rounds=0))
            governor = Governor(store, project)
            first = governor.submit(view["submissionHandle"], {
                "outcome": "partial", "output_summary": "declare", "constraint_violations": [],
                "should_continue": True, "round_contract": {"work_item": "w", "items": [
                    {"description": "check passes", "verify_with": ["check"]}]}})
            state: dict[str, Any] = {"view": first, "n": 0}

            def one_round() -> None:
                # Each round claims the active item (it verifies and closes) and
                # declares the next slice, as a continuing agent must.
                view = state["view"]
                item = view["guidance"]["active_contract"]["items"][0]["id"]
                state["n"] += 1
                out = governor.submit(view["submissionHandle"], {
                    "outcome": "partial", "output_summary": "work", "constraint_violations": [],
                    "should_continue": True,
                    "execution_report": {"claims": [{"id": item, "outcome": "met"}]},
                    "round_contract": {"work_item": f"slice {state['n']}", "items": [
                        {"description": "check passes", "verify_with": ["check"]}]}})
                assert out["accepted"], out["receipt"]
                state["view"] = out

            def machine_work() -> None:
                run_command(decl, root=root)
                observe(root)

            governed, spread = median_time(one_round, runs=runs)
            base, base_spread = median_time(machine_work, runs=runs)
        finally:
            store.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return [row(f"loop: one governed round ({files} files, one check)", assay=governed,
                baseline=base, baseline_name="run_command + git observe", unit="s",
                spread=max(spread, base_spread), runs=runs, goal="<= 2x",
                note="normalise, gate, posture, next prompt and one ledger transaction")]
