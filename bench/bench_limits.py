"""How soon assay gives up at a bound: a command past its timeout, a cancelled command,
an 8 GiB data file refused from its size.

These timings were assertions in tests once (under 10 s, 10 s and 30 s); the
tests now check the behaviour (status ``timeout`` with the grandchild gone,
``aborted``, ``resource_limit`` with the size from ``fstat``) and the times
live here, with those bounds as goals. Baselines, measured in the same run:
a plain ``subprocess.run`` of a process that sleeps exactly as long as the
timeout or the cancel delay (what stopping at the bound costs at best), and a
successful ``assay put`` of a two-byte file (one whole CLI call).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from assay.config import EvidenceCommand
from assay.evidence.commands import run_command
from bench.harness import row

ASSAY = str(Path(sys.executable).parent / "assay")
PYTHON = sys.executable
TIMEOUT_S = 1.0
CANCEL_S = 0.5
# A child that spawns a grandchild holding stdout, then sleeps: the runner must kill the group.
GRANDCHILD = ("import subprocess, sys, time\n"
              f"subprocess.Popen([{PYTHON!r}, '-c', 'import time; time.sleep(60)'])\n"
              "print('spawned', flush=True)\n"
              "time.sleep(60)\n")


def _wall(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _sleep(seconds: float) -> None:
    subprocess.run([PYTHON, "-c", f"import time; time.sleep({seconds})"], check=True)


def _timed_out(root: Path) -> None:
    decl = EvidenceCommand(name="slow", argv=(PYTHON, "-c", GRANDCHILD))
    obs = run_command(decl, root=root, environ={}, timeout_s=TIMEOUT_S)
    assert obs.status == "timeout", obs.status


def _cancelled(root: Path) -> None:
    cancel = threading.Event()
    threading.Timer(CANCEL_S, cancel.set).start()
    decl = EvidenceCommand(name="slow", argv=(PYTHON, "-c", "import time; time.sleep(60)"))
    obs = run_command(decl, root=root, environ={}, cancel=cancel)
    assert obs.status == "aborted", obs.status


def _put(root: Path, data_file: Path, *, refused: bool) -> None:
    proc = subprocess.run([ASSAY, "put", "--data-file", str(data_file), "--", "knowledge:x"],
                          cwd=root, capture_output=True, timeout=600, check=False)
    assert (proc.returncode != 0) == refused, proc.stderr


def _pairs(jobs: dict[str, Callable[[], Any]], runs: int) -> dict[str, list[float]]:
    """Interleaved wall times of each job (one warm-up each), so load hits all alike."""
    for job in jobs.values():
        job()
    samples: dict[str, list[float]] = {name: [] for name in jobs}
    for _ in range(runs):
        for name, job in jobs.items():
            samples[name].append(_wall(job))
    return samples


def _row(name: str, samples: dict[str, list[float]], goal: str, baseline_name: str,
         runs: int) -> dict[str, Any]:
    assay, base = samples["assay"], samples["baseline"]
    return row(name, assay=statistics.median(assay) * 1000, baseline=statistics.median(base) * 1000,
               baseline_name=baseline_name, unit="ms", runs=runs,
               spread=(max(assay) - min(assay)) * 1000, goal=goal)


def run(quick: bool) -> list[dict[str, Any]]:
    runs = 3 if quick else 7
    with tempfile.TemporaryDirectory(prefix="bench-limits-") as tmp:
        root = Path(tmp)
        (root / "assay.toml").write_text('[project]\nname = "bench"\n', encoding="utf-8")
        huge = root / "huge.json"
        with huge.open("wb") as handle:
            handle.truncate(8 * 1024**3)  # sparse: no disk used
        small = root / "small.json"
        small.write_text("{}", encoding="utf-8")
        return [
            _row(f"command past a {TIMEOUT_S:g} s timeout, grandchild holding the pipe",
                 _pairs({"assay": lambda: _timed_out(root),
                         "baseline": lambda: _sleep(TIMEOUT_S)}, runs),
                 "< 10000 ms", f"a process sleeping {TIMEOUT_S:g} s", runs),
            _row(f"command cancelled after {CANCEL_S:g} s",
                 _pairs({"assay": lambda: _cancelled(root),
                         "baseline": lambda: _sleep(CANCEL_S)}, runs),
                 "< 10000 ms", f"a process sleeping {CANCEL_S:g} s", runs),
            _row("put --data-file of an 8 GiB sparse file, refused from its size",
                 _pairs({"assay": lambda: _put(root, huge, refused=True),
                         "baseline": lambda: _put(root, small, refused=False)}, runs),
                 "< 30000 ms", "assay put of a 2-byte file", runs),
        ]
