"""Differential: assay reads every loopx-format goal file exactly as loopx 2.1.1 does.

The oracle is the installed ``loopx`` package (the test extra pins 2.1.1):
its region finder, visibility rules and todo decoder. For each generated
file, and for each file in the fixed corpus of cases that once disagreed,
assay's verdict, regions, ownership and todo items must equal loopx's.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from loopx_documents import assay_view, loopx_documents, loopx_view

from assay_testing import examples

CORPUS = Path(__file__).parents[1] / "golden" / "context" / "loopx"
FILES = sorted([*CORPUS.glob("corpus/*.md"), *CORPUS.glob("written/*.md")])


@settings(max_examples=examples(2000), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(loopx_documents())
def test_goal_loopx_reading_equals_loopx(text: str) -> None:
    """On any generated loopx-format file, assay's regions, ownership and todos equal loopx's."""
    expected = loopx_view(text)
    event(f"{expected['verdict']} {expected.get('ownership', '')}".strip())
    assert assay_view(text) == expected


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.stem}" for p in FILES])
def test_goal_loopx_corpus_reading_equals_loopx(path: Path) -> None:
    """Each fixed corpus file (found disagreements, real loopx-written files) reads as loopx reads it."""
    text = path.read_bytes().decode("utf-8")
    assert assay_view(text) == loopx_view(text)
