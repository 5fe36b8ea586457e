"""CLI cold start: `assay --version` and `assay canonical --digest` against a bare interpreter.

Both sides run as fresh processes of the same interpreter (the venv's), in
the same run, interleaved so that machine noise hits both alike. The
baseline is `python -c pass`, which pays the same interpreter and site
start-up that the console script does.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.harness import row

ASSAY = str(Path(sys.executable).parent / "assay")
SMALL = b'{"id":"knowledge:login-flow","data":{"brief":"Let users sign in","tags":["auth",1.0]}}'


def _time(argv: list[str], stdin: bytes = b"") -> float:
    start = time.perf_counter()
    subprocess.run(argv, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True)
    return time.perf_counter() - start


def _compare(argv: list[str], stdin: bytes, runs: int) -> tuple[list[float], list[float]]:
    baseline = [sys.executable, "-c", "pass"]
    for _ in range(3):  # warm the page cache and .pyc files
        _time(argv, stdin)
        _time(baseline)
    ours, base = [], []
    for _ in range(runs):
        ours.append(_time(argv, stdin))
        base.append(_time(baseline))
    return ours, base


def run(quick: bool) -> list[dict[str, Any]]:
    runs = 15 if quick else 41
    rows = []
    for name, argv, stdin, goal in [
        ("assay --version", [ASSAY, "--version"], b"", "< 3x"),
        ("assay canonical --digest (small document)", [ASSAY, "canonical", "--digest"], SMALL,
         "< 3x, without click or the registry"),
    ]:
        ours, base = _compare(argv, stdin, runs)
        rows.append(row(
            name,
            assay=statistics.median(ours) * 1e3,
            baseline=statistics.median(base) * 1e3,
            baseline_name="python -c pass",
            unit="ms",
            spread=(max(ours) - min(ours)) * 1e3,
            runs=runs,
            goal=goal,
            note="median wall time of a fresh process, same interpreter, same run",
        ))
    return rows
