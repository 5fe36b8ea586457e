"""Fixtures for the loop governor tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from loop_helpers import loop_project

from assay_testing import Project


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "surfaces(*kinds): run a loop scenario on these surfaces (api, mcp, cli)")


@pytest.fixture
def gitproj(tmp_path: Path) -> Project:
    """A git project with a buggy calc.py and the `unit` check command."""
    return loop_project(tmp_path / "proj")
