"""Shared fixtures: ledgers on both backends, projects on disk, the real CLI.

PostgreSQL tests run against ``ASSAY_TEST_POSTGRES_URL``, each in its own
fresh schema that is dropped afterwards. Without that variable they skip with
a reason; with it set, an unreachable server fails them (CI sets it).

Hypothesis has two profiles: ``default`` (a small budget, for every run) and
``thorough`` (``HYPOTHESIS_PROFILE=thorough``: the full budgets of
:func:`assay_testing.examples`, and more examples for properties without one).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from assay_testing import THOROUGH, Project, fresh_pg_url, make_project

# The suite starts the real `assay` script, its stop hook and MCP server many
# times: each of those processes (and each xdist worker, which inherits this
# environment) reads the package's cached bytecode instead of compiling every
# module again, even where the environment asks Python not to write bytecode.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

settings.register_profile("default", max_examples=20, deadline=None)
settings.register_profile("thorough", max_examples=500, deadline=None)
settings.load_profile("thorough" if THOROUGH else "default")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """Two workers a core for ``-n auto``: many tests wait on a real subprocess, lock or
    server, and a second worker a core keeps the core busy meanwhile."""
    return 2 * (os.cpu_count() or 1)


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A PostgreSQL ledger URL in a fresh schema (skips without ASSAY_TEST_POSTGRES_URL)."""
    with fresh_pg_url() as url:
        yield url


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def ledger_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh ledger URL, once per backend."""
    if request.param == "sqlite":
        return str(tmp_path / "ledger.db")
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture
def store(ledger_url: str) -> Iterator[Any]:
    """An opened fresh ledger, once per backend."""
    from assay.ledger import open_store

    s = open_store(ledger_url)
    try:
        yield s
    finally:
        s.close()


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """A project on the embedded SQLite ledger."""
    return make_project(tmp_path / "proj")


@pytest.fixture
def any_project(tmp_path: Path, ledger_url: str) -> Project:
    """A project on each backend in turn (SQLite file, then PostgreSQL schema)."""
    return make_project(tmp_path / "proj", db=ledger_url)
