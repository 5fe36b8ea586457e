"""Fixtures for the work-context tests: goal files written to real paths."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def goal_file(tmp_path: Path):
    """Write a goal file (text or bytes) under tmp_path and return its path."""

    def write(content: str | bytes, name: str = "goal.md") -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
        return path

    return write
