"""The demo's provenance chapter: a note derived from a record, withheld once the record is retired."""

from __future__ import annotations

import subprocess

from assay_testing import ASSAY

LINES = [
    "Saved context: a note is only as good as the record it was derived from",
    "alice's private memory, searched by bob: count 0, 0 unavailable lines",
    "note list: 1 admitted; envelope known over 2 record versions",
    "unavailable: a source was retired (knowledge:login-limit@1)",
    "publish check of the earlier read: withheld: a source was retired",
]


def test_provenance_demo_chapter_withholds_the_note_after_retirement() -> None:
    """`assay demo` shows the note admitted, then omitted and withheld after its source is retired."""
    proc = subprocess.run([ASSAY, "demo"], capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    position = 0
    for line in LINES:
        found = proc.stdout.find(line, position)
        assert found >= 0, f"missing or out of order: {line!r}"
        position = found
