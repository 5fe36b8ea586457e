"""The small project the gate's and CI's end-to-end tests put an agent in.

calc.py with two functions, a pytest file whose tests carry their
requirement marks (R1 add, R2 sub), and the ``unit`` check's argv writing
JUnit XML (``-B``: a source rewritten within the same second is never
served from stale bytecode).
"""

from __future__ import annotations

import sys

INTENT = "knowledge:calc"
CALC = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
BROKEN = CALC.replace("return a + b", "return a * b")
TESTS = '''import pytest

import calc


@pytest.mark.requirement("R1")
def test_add():
    assert calc.add(2, 3) == 5


@pytest.mark.requirement("R2")
def test_sub():
    assert calc.sub(5, 3) == 2
'''
PYTEST = [sys.executable, "-B", "-m", "pytest", "-q", "-p", "no:cacheprovider",
          "--junitxml=reports/unit.xml", "tests"]
