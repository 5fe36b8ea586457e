"""Several SQLite writer processes on one ledger: put latency, fairness and throughput.

N processes (2, 4, 8) put distinct records (the 2 KB one-long-string
payload) into one ledger for a fixed time, each timing every put. The rows
give the p50, p99 and worst single put over all writers, the slowest
writer's put count against the busiest's, and the total puts per second.

The baseline is the same run with the writers' queue switched off, so that
writers wait for SQLite's lock through its busy handler alone (what assay
did before the queue). The two runs of each N alternate, queue first in one
round and last in the next.

Run one writer by hand with ``python -m bench.bench_writers LEDGER SECONDS
START [--no-queue]``: it starts at the Unix time START and prints its put
latencies (microseconds) as one JSON list.
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

ROOT = Path(__file__).resolve().parent.parent
WRITERS = (2, 4, 8)
SCOPE = "project:bench"


def _writer(ledger: str, seconds: float, start: float, queue: bool) -> None:
    from assay.ledger import Write, open_store
    from bench.payloads import LONG_STRING

    store = open_store(ledger)
    if not queue:
        store._queue.available = False  # type: ignore[attr-defined]
    name = f"w{time.monotonic_ns() % 1_000_000_007}"
    latencies = []
    time.sleep(max(0.0, start - time.time()))
    end = time.monotonic() + seconds
    i = 0
    while time.monotonic() < end:
        began = time.perf_counter()
        store.put(Write(id=f"knowledge:{name}-{i}", data=LONG_STRING, scope=SCOPE))
        latencies.append(round((time.perf_counter() - began) * 1e6))
        i += 1
    store.close()
    print(json.dumps(latencies))


def _run(ledger: Path, writers: int, seconds: float, queue: bool) -> list[list[int]]:
    """Start ``writers`` processes together; their put latencies in microseconds, one list each."""
    start = time.time() + 1.0  # every process has imported assay by then
    argv = [sys.executable, "-m", "bench.bench_writers", str(ledger), str(seconds), str(start)]
    procs = [subprocess.Popen(argv + ([] if queue else ["--no-queue"]), cwd=ROOT,
                              stdout=subprocess.PIPE, text=True) for _ in range(writers)]
    out = []
    for proc in procs:
        stdout, _ = proc.communicate(timeout=seconds + 120)
        if proc.returncode != 0:
            raise RuntimeError(f"a writer exited {proc.returncode}")
        out.append(json.loads(stdout))
    return out


def _figures(runs: list[list[int]], seconds: float) -> dict[str, float]:
    every = sorted(x for run in runs for x in run)
    counts = [len(run) for run in runs]
    return {
        "p50": every[len(every) // 2] / 1000,
        "p99": every[min(len(every) - 1, int(len(every) * 0.99))] / 1000,
        "worst": every[-1] / 1000,
        "slowest": min(counts),
        "busiest": max(counts),
        "throughput": len(every) / seconds,
    }


def run(quick: bool = False) -> list[dict[str, Any]]:
    from assay.ledger import open_store

    seconds = 3.0 if quick else 20.0
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="assay-bench-writers-") as tmp:
        for round_, writers in enumerate(WRITERS):
            figures: dict[bool, dict[str, float]] = {}
            for queue in ((True, False) if round_ % 2 == 0 else (False, True)):
                ledger = Path(tmp) / f"ledger-{writers}-{'queue' if queue else 'busy'}.db"
                open_store(ledger).close()
                figures[queue] = _figures(_run(ledger, writers, seconds, queue), seconds)
            ours, base = figures[True], figures[False]
            label = f"sqlite, {writers} writer processes for {seconds:g} s"
            busy = "the same writers, SQLite's busy handler alone (no queue)"
            note = f"{int(ours['throughput'] * seconds):,} puts"
            rows += [
                row(f"{label}: p50 put", assay=ours["p50"], baseline=base["p50"], unit="ms",
                    baseline_name=busy, note=note),
                row(f"{label}: p99 put", assay=ours["p99"], baseline=base["p99"], unit="ms",
                    baseline_name=busy, goal="<= 20 ms"),
                row(f"{label}: worst put", assay=ours["worst"], baseline=base["worst"],
                    unit="ms", baseline_name=busy, goal="<= 250 ms"),
                row(f"{label}: slowest writer's puts", assay=ours["slowest"],
                    baseline=ours["busiest"], unit="puts", higher_is_better=True,
                    baseline_name="the busiest writer's puts", goal=">= 0.8x",
                    note=f"without the queue: {base['slowest']:.0f} against "
                         f"{base['busiest']:.0f} ({base['slowest'] / base['busiest']:.2f}x)"),
                row(f"{label}: throughput", assay=ours["throughput"],
                    baseline=base["throughput"], unit="puts/s", higher_is_better=True,
                    baseline_name=busy, goal=">= 0.8x"),
            ]
    return rows


if __name__ == "__main__":
    _writer(sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), "--no-queue" not in sys.argv)
