"""Shared fixtures: ledgers on both backends, projects on disk, the real CLI.

PostgreSQL tests run against ``ASSAY_TEST_POSTGRES_URL``, each in its own
fresh schema that is dropped afterwards. Without that variable they skip with
a reason; with it set, an unreachable server fails them (CI sets it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

PG_URL = os.environ.get("ASSAY_TEST_POSTGRES_URL")
ASSAY = str(Path(sys.executable).with_name("assay"))


def postgres_url(schema: str) -> str:
    """The test server's URL pointing assay at ``schema``."""
    assert PG_URL
    return f"{PG_URL}{'&' if '?' in PG_URL else '?'}assay_schema={schema}"


def _drop_schema(schema: str) -> None:
    import psycopg

    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A PostgreSQL ledger URL in a fresh schema (skips without ASSAY_TEST_POSTGRES_URL)."""
    if not PG_URL:
        pytest.skip("set ASSAY_TEST_POSTGRES_URL (e.g. postgresql://postgres@127.0.0.1:5432/test)")
    import psycopg

    try:
        psycopg.connect(PG_URL, connect_timeout=5).close()
    except psycopg.Error as exc:
        pytest.fail(f"ASSAY_TEST_POSTGRES_URL is set but the server is unreachable: {exc}")
    schema = "t_" + uuid.uuid4().hex[:16]
    try:
        yield postgres_url(schema)
    finally:
        _drop_schema(schema)


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


@dataclass
class CliResult:
    code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> Any:
        return json.loads(self.stdout)

    @property
    def error(self) -> dict[str, Any]:
        return json.loads(self.stderr)["error"]


@dataclass
class Project:
    """A project directory with assay.toml, driven through the real CLI."""

    root: Path
    db: str | None = None

    def run(self, *args: str, input: str | bytes | None = None, env: dict[str, str] | None = None,
            timeout: float = 120) -> CliResult:
        full_env = {**os.environ, **(env or {})}
        full_env.pop("ASSAY_DB", None)
        if self.db:
            full_env["ASSAY_DB"] = self.db
        data = input.encode() if isinstance(input, str) else input
        proc = subprocess.run([ASSAY, *args], cwd=self.root, input=data, capture_output=True,
                              env=full_env, timeout=timeout, check=False)
        return CliResult(proc.returncode, proc.stdout.decode("utf-8", "replace"),
                         proc.stderr.decode("utf-8", "replace"))

    def ok(self, *args: str, **kw: Any) -> Any:
        """Run a command that must succeed; return its parsed JSON envelope."""
        result = self.run(*args, **kw)
        assert result.code == 0, (result.code, result.stdout, result.stderr)
        return result.json


def make_project(root: Path, *, name: str = "demo", db: str | None = None,
                 extra_toml: str = "", git: bool = False) -> Project:
    """Create ``root`` as a project named ``name`` (optionally a git work tree)."""
    root.mkdir(parents=True, exist_ok=True)
    if git:
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
        subprocess.run(["git", "config", "user.email", "test@example.com"], cwd=root, check=True)
        subprocess.run(["git", "config", "user.name", "Test"], cwd=root, check=True)
    (root / "assay.toml").write_text(f'[project]\nname = "{name}"\n{extra_toml}', encoding="utf-8")
    (root / ".assay").mkdir(exist_ok=True)
    return Project(root=root, db=db)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """A project on the embedded SQLite ledger."""
    return make_project(tmp_path / "proj")


@pytest.fixture
def any_project(tmp_path: Path, ledger_url: str) -> Project:
    """A project on each backend in turn (SQLite file, then PostgreSQL schema)."""
    return make_project(tmp_path / "proj", db=ledger_url)
