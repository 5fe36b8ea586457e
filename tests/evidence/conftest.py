"""Fixtures for evidence tests: real git repositories and projects in tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest
from evidence_helpers import make_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A committed repository with two files and a .gitignore."""
    return make_repo(tmp_path / "repo", {
        "README.md": "hello\n",
        "src/app.py": "print('app')\n",
        ".gitignore": "*.log\nbuild/\n",
    })
