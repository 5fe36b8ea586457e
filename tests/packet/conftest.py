"""Fixtures for packet tests: build any catalogued packet in a temporary directory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from packet_fixtures import CASES


@pytest.fixture
def build_case(tmp_path: Path) -> Callable[[str], Path]:
    """Build the named case of the fixture library; return its packet directory."""

    def build(name: str) -> Path:
        root = tmp_path / name
        CASES[name].build(root)
        return root

    return build
