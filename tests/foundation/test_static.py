"""Static checks run with the suite: ruff over the tree and mypy --strict over src/."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def test_static_ruff_is_clean() -> None:
    """ruff finds nothing in src, tests or bench (configuration in pyproject.toml)."""
    proc = subprocess.run([str(BIN / "ruff"), "check", "--output-format", "concise",
                           "src", "tests", "bench"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_static_mypy_strict_is_clean(tmp_path: Path) -> None:
    """mypy --strict (configured in pyproject.toml) type-checks src/assay without an error."""
    proc = subprocess.run([str(BIN / "mypy"), "--cache-dir", str(tmp_path / "cache")], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# An assertion on a measured duration: `elapsed < 3.0`, `time.monotonic() - started < 30`,
# `obs.duration_ms < 10_000`. A wait that gives up at a deadline (`time.monotonic() <
# deadline` while polling for a lease to lapse) is a hang guard, not a measurement.
_WALL_CLOCK = re.compile(r"\bassert\b.*(\belapsed\b|\b(monotonic|perf_counter|time)\(\)\s*-|"
                         r"\w*duration\w*\s*[<>]|_ms\"?\]?\s*<|\btook\b)")


def test_static_no_test_asserts_wall_clock_time() -> None:
    """No test asserts a wall-clock duration; timings are rows in bench/, never assertions."""
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
             for path in sorted((ROOT / "tests").rglob("*.py")) if path.name != "test_static.py"
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if _WALL_CLOCK.search(line)]
    assert not found, "move these timings to bench/:\n" + "\n".join(found)
