"""Fixtures for the stop-gate tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from gate_helpers import gate_project, give_up, record_intent

from assay_testing import Project


@pytest.fixture(autouse=True)
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home directory of the test's own, so user-scope settings are never the machine's."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    return home


@pytest.fixture
def gave_up(tmp_path: Path, ledger_url: str) -> Project:
    """A project whose gate gave up on a session while its intent was not ready."""
    project = gate_project(tmp_path / "proj", ledger_url)
    record_intent(project)
    give_up(project)
    return project
