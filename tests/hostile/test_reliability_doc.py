"""docs/reliability.md: every test it cites exists, so the table cannot drift from the suite."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "reliability.md"


def _citations() -> list[tuple[str, str | None]]:
    out: list[tuple[str, str | None]] = []
    for cell in re.findall(r"\|([^|\n]*tests/[^|\n]*)\|\s*$", DOC.read_text(encoding="utf-8"), re.MULTILINE):
        current = None
        for part in re.split(r"[;,]\s*", cell.strip()):
            match = re.fullmatch(r"(tests/[\w/]+\.py)?(?:::(\w+))?", part.strip())
            if not match or not (match.group(1) or match.group(2)):
                continue
            current = match.group(1) or current
            assert current is not None, part
            out.append((current, match.group(2)))
    return out


def test_reliability_doc_cites_only_existing_tests() -> None:
    """Each file::test cited in docs/reliability.md's tables names a test function in that file."""
    citations = _citations()
    assert len(citations) > 40
    for path, name in citations:
        source = (ROOT / path).read_text(encoding="utf-8")
        if name is not None:
            assert re.search(rf"^(async )?def {name}\(", source, re.MULTILINE), f"{path}::{name}"
