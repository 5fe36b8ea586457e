"""`assay demo` end to end, against one `assay init`: the whole story's wall time.

The demo builds a project, runs machine evidence, a governed two-round loop,
a packet and the report, all through the operations registry on its own
SQLite ledger. Its goal is the bound the end-to-end test once asserted
(under a minute); the test now checks only the story it tells. The
baseline, measured in the same run, is one ``assay init`` in a fresh
directory (a process start and a new ledger), so the ratio reads as "so many
CLI calls' worth". Wall time, because a person waits for it.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.harness import row

ASSAY = str(Path(sys.executable).parent / "assay")


def _wall(argv: list[str], cwd: str) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, timeout=600, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{argv} exited {proc.returncode}: {proc.stderr[-400:]!r}")
    return elapsed


def run(quick: bool) -> list[dict[str, Any]]:
    runs = 1 if quick else 3
    demo: list[float] = []
    init: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench-demo-") as tmp:
        for n in range(runs):
            demo.append(_wall([ASSAY, "demo"], tmp))
            for m in range(3):
                fresh = Path(tmp) / f"init-{n}-{m}"
                fresh.mkdir()
                init.append(_wall([ASSAY, "init"], str(fresh)))
    return [row("assay demo, the whole story", assay=statistics.median(demo),
                baseline=statistics.median(init), baseline_name="one assay init", unit="s",
                runs=runs, spread=max(demo) - min(demo), goal="< 60 s",
                note="wall time; the end-to-end test checks the story, not the time")]
