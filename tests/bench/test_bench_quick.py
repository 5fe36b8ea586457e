"""The benchmark runner's quick mode, run as CI runs it: it ran and wrote rows (never a timing)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
ROW_KEYS = {"name", "unit", "assay", "baseline", "baseline_name", "ratio", "spread", "runs",
            "higher_is_better", "goal", "note", "met", "command"}


def _run_quick(out: Path, *modules: str) -> subprocess.CompletedProcess[str]:
    only = [arg for m in modules for arg in ("--only", m)]
    return subprocess.run([sys.executable, "-m", "bench", "--quick", *only, "--out-dir", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=240, check=False)


def test_bench_quick_subset_writes_results_and_tables(tmp_path: Path) -> None:
    """A quick run of two modules writes results.json rows and regenerates the tables beside the fixed text."""
    proc = _run_quick(tmp_path, "bench_canonical", "bench_cli_start")
    assert proc.returncode == 0, proc.stderr
    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert results["quick"] is True
    assert set(results["benchmarks"]) == {"bench_canonical", "bench_cli_start"}
    for rows in results["benchmarks"].values():
        assert rows
        for r in rows:
            assert set(r) == ROW_KEYS
            assert r["baseline"] > 0 and r["assay"] > 0
            assert r["ratio"] == r["assay"] / r["baseline"]
            assert r["met"] in (True, False, None)
            assert r["command"].endswith("--quick") and "python -m bench --only" in r["command"]
    doc = (tmp_path / "BENCHMARKS.md").read_text(encoding="utf-8")
    generated = doc.split("<!-- bench:begin -->")[1].split("<!-- bench:end -->")[0]
    assert "### bench_canonical" in generated and "### bench_cli_start" in generated
    assert "`.venv/bin/python -m bench --only bench_cli_start --quick`" in generated
    assert "(quick mode)" in generated
    assert "## Machine" in doc and "python -m bench --quick" in doc


def test_bench_quick_leaves_repository_files_alone(tmp_path: Path) -> None:
    """With --out-dir the runner changes neither bench/results.json nor BENCHMARKS.md beside it."""
    # A private copy of the runner, so benchmarks others run meanwhile cannot interfere.
    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "bench", copy / "bench", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copyfile(ROOT / "BENCHMARKS.md", copy / "BENCHMARKS.md")
    paths = [copy / "bench" / "results.json", copy / "BENCHMARKS.md"]
    before = [p.read_bytes() if p.exists() else None for p in paths]
    out = tmp_path / "out"
    out.mkdir()
    proc = subprocess.run([sys.executable, "-m", "bench", "--quick", "--only", "bench_canonical",
                           "--out-dir", str(out)], cwd=copy, capture_output=True, text=True,
                          timeout=240, check=False)
    assert proc.returncode == 0, proc.stderr
    assert (out / "results.json").exists() and (out / "BENCHMARKS.md").exists()
    assert [p.read_bytes() if p.exists() else None for p in paths] == before


def _bench(module: str) -> Any:
    """A module of the benchmark package, imported from the repository root."""
    import importlib

    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    return importlib.import_module(module)


@pytest.mark.parametrize(("goal", "ratio", "assay", "unit", "met"), [
    ("<= 4x", 3.9, 50.0, "ms CPU", True),
    ("<= 4x", 4.1, 50.0, "ms CPU", False),
    (">= 0.70x", 0.63, 5000.0, "writes/s", False),
    ("< 3x, without click or the registry", 2.6, 30.0, "ms CPU", True),
    ("< 0.5 s", 2.0, 0.3, "s", True),
    ("< 0.5 s", 2.0, 0.3, "ms", None),
    ("flat (~1x)", 1.3, 20.0, "us", None),
    ("", 1.0, 1.0, "us", None),
])
def test_bench_goal_met_compares_ratios_and_times(goal: str, ratio: float, assay: float,
                                                  unit: str, met: bool | None) -> None:
    """A comparison goal is checked against the ratio (or the figure in its unit); others are left to a reader."""
    assert _bench("bench.harness").goal_met(goal, ratio=ratio, assay=assay, unit=unit) is met


def test_bench_render_lists_unmet_goals_above_the_tables() -> None:
    """Rows that miss their goal are listed before the tables and marked in them; each module shows its command."""
    harness, runner = _bench("bench.harness"), _bench("bench.__main__")
    rows = [harness.row("fast", assay=1.0, baseline=1.0, baseline_name="b", unit="ms", goal="<= 2x"),
            harness.row("slow", assay=5.0, baseline=1.0, baseline_name="b", unit="ms", goal="<= 2x")]
    for r in rows:
        r["command"] = runner.command("bench_x", False)
    text = runner.render({"measured_at": "now", "quick": False, "benchmarks": {"bench_x": rows},
                          "machine": {"platform": "p", "python": "3", "cpus": "2"}})
    summary, tables = text.split("### bench_x")
    assert "- bench_x: slow: 5.00x against <= 2x" in summary and "fast" not in summary
    assert "`.venv/bin/python -m bench --only bench_x`" in tables
    assert "| <= 2x (met) |" in tables and "| <= 2x (**not met**) |" in tables


def _module_names() -> list[str]:
    return list(_bench("bench.__main__").modules())


@pytest.mark.bench
@pytest.mark.parametrize("module", _module_names())
def test_bench_module_runs_in_quick_mode(module: str, tmp_path: Path) -> None:
    """Every benchmark module runs to the end in quick mode and writes its rows (``-m bench``)."""
    proc = _run_quick(tmp_path / "out", module)
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    if module == "bench_report_browser" and not Path("/usr/bin/chromium").exists():
        pytest.fail("bench_report_browser needs Debian's chromium (apt-get install chromium)")
    assert results["benchmarks"][module]


@pytest.mark.bench  # runs the writer processes for half a minute: a benchmark, not a unit check
def test_bench_quick_writers_rows_name_their_goals(tmp_path: Path) -> None:
    """The writer-process rows run in quick mode, each N with p50, p99, worst, fairness and throughput."""
    proc = _run_quick(tmp_path, "bench_writers")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))["benchmarks"][
        "bench_writers"]
    for writers in (2, 4, 8):
        mine = {r["name"].split(": ")[1]: r for r in rows
                if r["name"].startswith(f"sqlite, {writers} writer processes")}
        assert set(mine) == {"p50 put", "p99 put", "worst put", "slowest writer's puts",
                             "throughput"}
        assert (mine["p99 put"]["goal"], mine["worst put"]["goal"]) == ("<= 20 ms", "<= 250 ms")
        assert mine["slowest writer's puts"]["goal"] == ">= 0.8x"
        assert all(r["met"] in (True, False, None) and r["assay"] > 0 for r in mine.values())


def test_bench_render_names_a_unit_goal_by_its_measurement() -> None:
    """An unmet goal in units (``<= 20 ms``) is listed with the measurement, not the ratio."""
    render = _bench("bench.__main__").render
    r = {"name": "p99", "unit": "ms", "assay": 41.2, "baseline": 34.8, "baseline_name": "b",
         "ratio": 41.2 / 34.8, "spread": 0, "runs": 1, "higher_is_better": False,
         "goal": "<= 20 ms", "note": "", "met": False, "command": "c"}
    text = render({"measured_at": "t", "machine": {"platform": "p", "python": "3", "cpus": 2},
                   "quick": False, "benchmarks": {"bench_x": [r]}})
    assert "- bench_x: p99: 41.2 ms against <= 20 ms" in text


def test_bench_render_never_rounds_a_missed_goal_onto_it() -> None:
    """A ratio that misses ``>= 0.70x`` by less than the rounding shows three decimals, not 0.70x."""
    harness, runner = _bench("bench.harness"), _bench("bench.__main__")
    rows = [harness.row("close", assay=697.0, baseline=1000.0, baseline_name="b", unit="writes/s",
                        higher_is_better=True, goal=">= 0.70x"),
            harness.row("clear", assay=710.0, baseline=1000.0, baseline_name="b", unit="writes/s",
                        higher_is_better=True, goal=">= 0.70x")]
    text = runner.render({"measured_at": "t", "machine": {"platform": "p", "python": "3", "cpus": 2},
                          "quick": False, "benchmarks": {"bench_x": rows}})
    assert "- bench_x: close: 0.697x against >= 0.70x" in text
    assert "| 0.697x |" in text and "| 0.71x |" in text
