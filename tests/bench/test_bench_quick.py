"""The benchmark runner's quick mode, run as CI runs it: it ran and wrote rows (never a timing)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ROW_KEYS = {"name", "unit", "assay", "baseline", "baseline_name", "ratio", "spread", "runs",
            "higher_is_better", "goal", "note"}


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
    doc = (tmp_path / "BENCHMARKS.md").read_text(encoding="utf-8")
    generated = doc.split("<!-- bench:begin -->")[1].split("<!-- bench:end -->")[0]
    assert "### bench_canonical" in generated and "### bench_cli_start" in generated
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
