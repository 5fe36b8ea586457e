"""Shared measurement helpers for the benchmark modules.

Each ``bench/bench_<topic>.py`` module defines ``run(quick: bool) -> list[dict]``
returning rows made by :func:`row`. ``python -m bench`` runs them all, writes
``bench/results.json`` and regenerates the tables in ``BENCHMARKS.md``.
"""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Callable
from typing import Any

__all__ = ["goal_met", "median_time", "row"]

_RATIO_GOAL = re.compile(r"(<=|<|>=|>)\s*([0-9.]+)x\b")
_TIME_GOAL = re.compile(r"(<=|<)\s*([0-9.]+)\s*(\S+)$")


def median_time(fn: Callable[[], Any], *, runs: int = 5, warmup: int = 1) -> tuple[float, float]:
    """Run ``fn`` ``warmup + runs`` times; return (median seconds, spread as max-min seconds)."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples), max(samples) - min(samples)


def goal_met(goal: str, *, ratio: float, assay: float, unit: str) -> bool | None:
    """Whether a row meets its goal: ``<= 4x`` and the like compare the ratio,
    ``< 0.5 s`` the figure in the row's unit; None for a goal only a reader can judge.
    """
    found = _RATIO_GOAL.match(goal.strip())
    value = ratio
    if found is None:
        found = _TIME_GOAL.match(goal.strip())
        if found is None or found.group(3) != unit:
            return None
        value = assay
    bound = float(found.group(2))
    return {"<=": value <= bound, "<": value < bound, ">=": value >= bound,
            ">": value > bound}[found.group(1)]


def row(
    name: str,
    *,
    assay: float,
    baseline: float,
    baseline_name: str,
    unit: str,
    spread: float = 0.0,
    runs: int = 1,
    higher_is_better: bool = False,
    goal: str = "",
    note: str = "",
) -> dict[str, Any]:
    """One result row; ``ratio`` is always ``assay / baseline``.

    For times (``higher_is_better=False``) a ratio of 3.0 means three times slower than
    the baseline; for throughputs (``higher_is_better=True``) 0.7 means 70% of it.
    """
    ratio = assay / baseline if baseline else float("nan")
    return {
        "met": goal_met(goal, ratio=ratio, assay=assay, unit=unit),
        "name": name,
        "unit": unit,
        "assay": assay,
        "baseline": baseline,
        "baseline_name": baseline_name,
        "ratio": ratio,
        "spread": spread,
        "runs": runs,
        "higher_is_better": higher_is_better,
        "goal": goal,
        "note": note,
    }
