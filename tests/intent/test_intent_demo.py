"""The demo's intent chapter, run through the real `assay demo` command."""

from __future__ import annotations

import subprocess

from assay_testing import ASSAY


def test_demo_intent_chapter_goes_from_not_ready_to_ready() -> None:
    """The chapter catches a failed run cited as passed, records a passing run in one step, ends ready."""
    proc = subprocess.run([ASSAY, "demo"], capture_output=True, text=True, timeout=300,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    chapter = proc.stdout.split("Intent: is it ready for review?", 1)[1]
    assert "work check: ready_to_review=false" in chapter
    assert ("issue: evidence_run_not_passed: R1 is recorded as passed, but the run evidence:unit "
            "revision 1 failed (exit 1)") in chapter
    assert "refused (evidence_run_not_passed)" in chapter
    assert ("assay work accept --from-run evidence:unit@2 -- knowledge:calc: R1 passed in one "
            "guarded put") in chapter
    assert "after recording R3's evidence: ready_to_review=true" in chapter
    assert "R1 evidence: evidence:unit@2 machine_observed=true, run passed" in chapter
    assert "machine_observed=false" in chapter  # the hand-written note stays a claim
    assert "written=false, same receipt true" in chapter
