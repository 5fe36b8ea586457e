"""Test helpers shared by every test directory (a uniquely named module, not a conftest).

``Project`` drives the real ``assay`` console script of the running
interpreter's environment in a project directory.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PG_URL = os.environ.get("ASSAY_TEST_POSTGRES_URL")
ASSAY = str(Path(sys.executable).with_name("assay"))


def postgres_url(schema: str) -> str:
    """The test server's URL pointing assay at ``schema``."""
    assert PG_URL
    return f"{PG_URL}{'&' if '?' in PG_URL else '?'}assay_schema={schema}"


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


def ledger_sql(project: Project, statement: str, params: tuple[Any, ...] = ()) -> None:
    """Run one statement directly against the project's ledger (SQLite file or PostgreSQL schema).

    For tests that damage stored rows as a disk fault or a hand edit would;
    ``?`` placeholders work on both backends.
    """
    if project.db and project.db.startswith(("postgresql://", "postgres://")):
        import psycopg

        schema = project.db.rpartition("assay_schema=")[2]
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(f"SET search_path TO {schema}")
            conn.execute(statement.replace("?", "%s"), params)
        return
    import sqlite3

    path = Path(project.db) if project.db else project.root / ".assay" / "ledger.db"
    conn = sqlite3.connect(path)
    try:
        with conn:
            conn.execute(statement, params)
    finally:
        conn.close()


def corrupt_version(project: Project, record_id: str, revision: int, text: str | None,
                    data_sha256: str | None, *, links: str | None = None,
                    audience: str = "project") -> None:
    """Overwrite a stored version's data text (and optionally digest or links) in place."""
    sets, params = [], []
    for column, value in (("data", text), ("data_sha256", data_sha256), ("links", links)):
        if value is not None:
            sets.append(f"{column} = ?")
            params.append(value)
    ledger_sql(project, f"UPDATE record_versions SET {', '.join(sets)} "
               "WHERE id = ? AND revision = ? AND audience = ?",
               (*params, record_id, revision, audience))
