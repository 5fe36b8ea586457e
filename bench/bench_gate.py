"""The stop gate: a whole `assay hook stop` process against the harness's hook timeout.

A harness waits for its stop hook and gives up at its timeout: 600 seconds by
default for a command hook in Claude Code and in Codex (an entry written by
``assay hook install`` sets 120). Each row runs a fresh ``assay hook stop``
process as the harness does (the payload piped to standard input) and
measures its wall time, in a git project whose one gating intent has 1,000
requirements, each with a passed result citing a machine run:

- ready, with a success claim: the report, the claim check and one git
  observation of the workspace, then the decision written (the agent may stop);
- not ready (the workspace changed after the run): the same, answered with a
  block whose reason names the run to redo.

The baseline is the 600-second default timeout, so the ratio is the share of
it the hook uses.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.harness import row

ASSAY = str(Path(sys.executable).parent / "assay")
REQUIREMENTS = 1000
DEFAULT_TIMEOUT_S = 600


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@example.com", *args],
                   cwd=root, check=True, capture_output=True)


def _project(root: Path) -> None:
    from assay.ops import Invocation, call

    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    inv = Invocation(cwd=str(root))
    try:
        call("init", {}, inv)
        with (root / "assay.toml").open("a", encoding="utf-8") as handle:
            handle.write(f'\n[evidence.commands.unit]\nargv = {json.dumps([sys.executable, "-c", "pass"])}'
                         '\ntimeout = 60\n\n[gate]\nintents = ["knowledge:big"]\n')
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", "start")
    finally:
        inv.close()
    inv = Invocation(cwd=str(root))
    try:
        call("work.new", {"id": "knowledge:big", "brief": "A large intent", "requirement": [
            f"R{n}|requirement {n} of the export|run the unit check"
            for n in range(1, REQUIREMENTS + 1)]}, inv)
        run = call("evidence.run", {"name": "unit"}, inv)[0]["data"]["evidence_ref"]
        ref = f"{run['id']}@{run['revision']}"
        results = [{"requirement_id": f"R{n}", "status": "passed", "evidence": [ref],
                    "notes": "the unit check covers it"} for n in range(1, REQUIREMENTS + 1)]
        call("work.accept", {"id": "knowledge:big", "results": results}, inv)
        assert call("work.check", {"id": "knowledge:big"}, inv)[0]["data"]["ready_to_review"]
    finally:
        inv.close()


def _stop(root: Path, payload: bytes) -> tuple[float, bytes]:
    start = time.perf_counter()
    proc = subprocess.run([ASSAY, "hook", "stop"], cwd=root, input=payload, capture_output=True,
                          timeout=DEFAULT_TIMEOUT_S, check=True)
    return time.perf_counter() - start, proc.stdout


def _median(root: Path, payload: bytes, runs: int, *, blocks: bool) -> tuple[float, float]:
    _stop(root, payload)  # warm-up: bytecode, page cache
    samples = []
    for _ in range(runs):
        seconds, answer = _stop(root, payload)
        assert bool(answer) is blocks, answer[:200]
        samples.append(seconds)
    samples.sort()
    return samples[len(samples) // 2], samples[-1] - samples[0]


def run(quick: bool) -> list[dict[str, Any]]:
    runs = 3 if quick else 9
    with tempfile.TemporaryDirectory(prefix="assay-bench-gate-") as tmp:
        root = Path(tmp) / "proj"
        _project(root)
        payload = json.dumps({"session_id": "bench", "cwd": str(root), "hook_event_name": "Stop",
                              "stop_hook_active": False,
                              "last_assistant_message": "Done: all tests pass."}).encode()
        rows = []
        ready, spread = _median(root, payload, runs, blocks=False)
        rows.append(row(f"hook stop, {REQUIREMENTS:,}-requirement intent, ready, success claim "
                        "checked (whole process)", assay=ready, baseline=DEFAULT_TIMEOUT_S,
                        baseline_name="default stop-hook timeout (Claude Code, Codex: 600 s)",
                        unit="s", spread=spread, runs=runs, goal="< 6 s",
                        note="wall time of a fresh process; the decision is written each time"))
        (root / "export.py").write_text("changed\n", encoding="utf-8")
        blocked, spread = _median(root, payload, runs, blocks=True)
        rows.append(row(f"hook stop, {REQUIREMENTS:,}-requirement intent, files changed after the "
                        "run (blocked)", assay=blocked, baseline=DEFAULT_TIMEOUT_S,
                        baseline_name="default stop-hook timeout (Claude Code, Codex: 600 s)",
                        unit="s", spread=spread, runs=runs, goal="< 6 s",
                        note="each stop starts a new run of stops (stop_hook_active false), so "
                             "each is answered with a block"))
        return rows
