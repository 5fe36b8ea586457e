"""The demo's work-context chapter, through the real console script."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ASSAY = str(Path(sys.executable).with_name("assay"))


def test_context_demo_chapter_shows_required_reads(tmp_path: Path) -> None:
    """assay demo adds and claims a todo and shows the work context's required read."""
    proc = subprocess.run([ASSAY, "demo", "--keep", str(tmp_path / "demo")], capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "Work context: a goal file, todos in the ledger" in out
    assert "todo:parse claimed by agent" in out
    assert "goal text unchanged: true" in out
    assert 'required read: ["assay", "goal", "read", "--goal-id", "parser", "--full"]' in out
