"""The demo's intent chapter, run through the real `assay demo` command."""

from __future__ import annotations

import subprocess

from assay_testing import ASSAY


def test_demo_intent_chapter_goes_from_not_ready_to_ready() -> None:
    """The chapter shows the intent unready, then ready with machine-observed evidence."""
    proc = subprocess.run([ASSAY, "demo"], capture_output=True, text=True, timeout=300,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    chapter = proc.stdout.split("Intent: is it ready for review?", 1)[1]
    assert "work check: ready_to_review=false" in chapter
    assert "after recording R3's evidence: ready_to_review=true" in chapter
    assert "R1 evidence: evidence:calc-adds@1 machine_observed=true" in chapter
    assert "machine_observed=false" in chapter  # the hand-written note stays a claim
    assert "written=false, same receipt true" in chapter
