"""Static checks run with the suite: ruff over the tree and mypy --strict over src/."""

from __future__ import annotations

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
