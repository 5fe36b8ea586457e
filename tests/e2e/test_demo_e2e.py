"""`assay demo` tells the whole story as a real subprocess."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from assay_testing import ASSAY

# The story's key lines, in the order they must appear.
STORY = [
    "1. Create a project",
    "assay evidence run -- unit: failed",
    "machine_observed=false: a claim stays a claim",
    "A governed loop: a claim is contradicted, the fix is verified",
    "round 2 claims success: accepted=false, posture contradicted",
    "the agent approves its own gate: refused (approval_forbidden)",
    "approved by reviewer, a second principal",
    "round 2 after the fix: posture verified, machineBackedSuccess=true",
    "loop stopped: completed after 2 committed rounds",
    "assay work new -- knowledge:calc: R1, R2 (child of R1), R3 in one guarded put",
    "work check: ready_to_review=false",
    "issue: evidence_run_not_passed",
    "assay work accept --from-run evidence:unit@2 -- knowledge:calc: R1 passed",
    "after recording R3's evidence: ready_to_review=true",
    ("work accept pinned the checks knowledge:calc relies on: calc-compiles, unit by agent "
     "(reviewed=false)"),
    "work check: ready_to_review=false; check_definition_changed: unit argv",
    "the agent approves its own change: refused (gated_principal_cannot_review)",
    "assay.toml restored: ready_to_review=true",
    "valid: profile quick achieved of quick, publication complete",
    "refused: DIGEST_MISMATCH",
    "packet.md withdrawn: true",
    "sections intent, loop, packet; ready_to_review=true",
    "publication gate: published",
    "report written: ",
    "Done in ",
]


def test_demo_tells_the_story() -> None:
    """`assay demo` exits 0 and prints every key line of the story in order.

    How long it takes (the goal is under a minute) is the bench_demo benchmark row.
    """
    proc = subprocess.run([ASSAY, "demo"], capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    position = 0
    for line in STORY:
        found = proc.stdout.find(line, position)
        assert found >= 0, f"missing or out of order: {line!r}"
        position = found
    assert "'assay demo --keep DIR' keeps it" in proc.stdout


def test_demo_keep_leaves_the_project_and_its_report(tmp_path: Path) -> None:
    """`assay demo --keep DIR` leaves the project, its ledger and the printed report path."""
    root = tmp_path / "kept"
    proc = subprocess.run([ASSAY, "demo", "--keep", str(root)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    match = re.search(r"report written: (\S+)", proc.stdout)
    assert match is not None
    report = Path(match.group(1))
    assert report == root / "assay-report.html"
    assert report.read_bytes().startswith(b"<!DOCTYPE html>")
    assert (root / "assay.toml").is_file() and (root / ".assay" / "ledger.db").is_file()
    ran = subprocess.run([ASSAY, "work", "check", "--", "knowledge:calc"], cwd=root,
                         capture_output=True, text=True, timeout=60, check=False)
    assert ran.returncode == 0, ran.stderr
