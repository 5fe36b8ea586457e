"""Test helpers shared by every test directory (a uniquely named module, not a conftest).

``Project`` drives the ``assay`` command line in a project directory. By
default it calls the CLI's own dispatch function in this process, with the
command's standard streams, environment and working directory swapped in and
restored afterwards (see :func:`run_in_process`); ``Project.run(...,
process=True)``, the commands in :data:`SUBPROCESS_COMMANDS` and
``ASSAY_TEST_SUBPROCESS=1`` run the real console script instead. Tests about
the process boundary itself (exit statuses at start-up, signals, the MCP
stdio server, the stop hook's command) use the subprocess.
"""

from __future__ import annotations

import fcntl
import io
import json
import os
import pty
import signal
import struct
import subprocess
import sys
import termios
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

PG_URL = os.environ.get("ASSAY_TEST_POSTGRES_URL")
ASSAY = str(Path(sys.executable).with_name("assay"))
# Launchers that own the process (a stdio server, a story on the terminal) always run for real.
SUBPROCESS_COMMANDS = frozenset({"mcp", "demo"})
ALWAYS_SUBPROCESS = os.environ.get("ASSAY_TEST_SUBPROCESS", "") not in ("", "0")
# Hypothesis budgets (profiles registered in tests/conftest.py): the default run
# draws a fifth of each property's examples, HYPOTHESIS_PROFILE=thorough all of them.
THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"


def examples(thorough: int) -> int:
    """A property's example budget: ``thorough`` under the thorough profile, a fifth by default.

    The default keeps at least 10 (or ``thorough`` itself when smaller).
    """
    return thorough if THOROUGH else min(thorough, max(10, thorough // 5))


def package_at(commit: str, factory: Any) -> Path:
    """The ``assay`` package of ``commit`` of this repository, to put on ``PYTHONPATH``.

    Unpacked under a directory of ``factory`` (pytest's ``tmp_path_factory``);
    the test is skipped when the commit is not in the history (a shallow clone).
    """
    import pytest

    root = Path(__file__).resolve().parents[1]
    archive = subprocess.run(["git", "-C", str(root), "archive", commit, "src/assay"],
                             capture_output=True, check=False)
    if archive.returncode != 0:
        pytest.skip(f"the commit {commit[:7]} is not in this repository's history")
    target = factory.mktemp("package")
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return Path(target) / "src"


def postgres_url(schema: str) -> str:
    """The test server's URL pointing assay at ``schema``."""
    assert PG_URL
    return f"{PG_URL}{'&' if '?' in PG_URL else '?'}assay_schema={schema}"


def _drop_schema(schema: str) -> None:
    import psycopg

    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@contextmanager
def pg_server_alone() -> Iterator[None]:
    """Hold the test server's cluster-wide lock (across xdist workers) for the block.

    DROP DATABASE and DROP TABLESPACE wait for a checkpoint, and a checkpoint fails while
    another test holds a tablespace full on purpose ("checkpoint request failed"). Tests
    that create or drop databases or fill a tablespace take this lock so they never overlap.
    """
    import tempfile

    path = Path(tempfile.gettempdir()) / "assay-test-pg-server.lock"
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def fresh_pg_url() -> Iterator[str]:
    """A URL in a fresh schema, dropped afterwards: for fixtures of any scope (see pg_url)."""
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
            timeout: float = 120, process: bool = False) -> CliResult:
        """Run ``assay ARGS`` in the project; ``process=True`` starts the real console script.

        ``timeout`` bounds the child process; an in-process call is bounded by
        pytest-timeout like the rest of its test.
        """
        full_env = {**os.environ, **(env or {})}
        full_env.pop("ASSAY_DB", None)
        if self.db:
            full_env["ASSAY_DB"] = self.db
        data = input.encode() if isinstance(input, str) else input
        if not (process or ALWAYS_SUBPROCESS or args[:1] and args[0] in SUBPROCESS_COMMANDS):
            return run_in_process(list(args), cwd=self.root, env=full_env, stdin=data or b"")
        proc = subprocess.run([ASSAY, *args], cwd=self.root, input=data, capture_output=True,
                              env=full_env, timeout=timeout, check=False)
        return CliResult(proc.returncode, proc.stdout.decode("utf-8", "replace"),
                         proc.stderr.decode("utf-8", "replace"))

    def ok(self, *args: str, **kw: Any) -> Any:
        """Run a command that must succeed; return its parsed JSON envelope."""
        result = self.run(*args, **kw)
        assert result.code == 0, (result.code, result.stdout, result.stderr)
        return result.json


def run_in_process(args: list[str], *, cwd: Path | str, env: dict[str, str],
                   stdin: bytes = b"") -> CliResult:
    """Run the CLI's dispatch on ``args`` here, as the console script would in a child process.

    The child's view is rebuilt for the call and taken down after it: the
    working directory, ``os.environ`` (replaced whole, so child processes the
    command starts see it too), and pipes for the three standard streams
    (UTF-8; stdout strict and stderr ``backslashreplace``, as Python sets up
    pipes). Exit statuses come from the return value or a ``SystemExit``.
    """
    from assay.cli import dispatch

    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    out, err = io.BytesIO(), io.BytesIO()
    pipes = (io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"),
             io.TextIOWrapper(out, encoding="utf-8", errors="strict", write_through=True),
             io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace",
                              write_through=True))
    try:
        os.environ.clear()
        os.environ.update(env)
        os.chdir(cwd)
        sys.stdin, sys.stdout, sys.stderr = pipes
        try:
            code = dispatch(args)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        for pipe in pipes:  # flushed, then let go without closing the buffers read below
            if not pipe.closed:
                pipe.flush()
                pipe.detach()
    return CliResult(code, out.getvalue().decode("utf-8", "replace"),
                     err.getvalue().decode("utf-8", "replace"))


def make_project(root: Path, *, name: str = "demo", db: str | None = None,
                 extra_toml: str = "", git: bool = False, ledger: bool = True) -> Project:
    """Create ``root`` as a project named ``name`` (optionally a git work tree), with its ledger.

    The ledger is created as ``assay init`` creates it, so reads work at once
    (a read never creates one); with ``ledger=False``, or when assay.toml is
    broken on purpose, there is none yet, as before ``assay init``.
    """
    root.mkdir(parents=True, exist_ok=True)
    if git:
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
        subprocess.run(["git", "config", "user.email", "test@example.com"], cwd=root, check=True)
        subprocess.run(["git", "config", "user.name", "Test"], cwd=root, check=True)
    (root / "assay.toml").write_text(f'[project]\nname = "{name}"\n{extra_toml}', encoding="utf-8")
    (root / ".assay").mkdir(exist_ok=True)
    if ledger:
        create_ledger(root, db)
    return Project(root=root, db=db)


def create_ledger(root: Path, db: str | None = None) -> None:
    """Create the ledger of the project at ``root`` (``db``, else its assay.toml's, else the default)."""
    from assay.config import load_project
    from assay.errors import AssayError
    from assay.ledger import open_store

    try:
        project = load_project(root)
    except AssayError:
        return  # assay.toml is broken on purpose: `assay init` would create no ledger either
    open_store(db or project.ledger_url or project.default_ledger_path, base=project.root).close()


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


def ledger_rows(project: Project, statement: str, params: tuple[Any, ...] = ()) -> list[Any]:
    """The rows of one query run directly against the project's ledger (``?`` placeholders)."""
    if project.db and project.db.startswith(("postgresql://", "postgres://")):
        import psycopg

        schema = project.db.rpartition("assay_schema=")[2]
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(f"SET search_path TO {schema}")
            return list(conn.execute(statement.replace("?", "%s"), params).fetchall())
    import sqlite3

    path = Path(project.db) if project.db else project.root / ".assay" / "ledger.db"
    conn = sqlite3.connect(path)
    try:
        return list(conn.execute(statement, params).fetchall())
    finally:
        conn.close()


def reseal_from(project: Project, ledger_revision: int) -> None:
    """Recompute every seal and chain value from ``ledger_revision`` on, as a forger who knows the scheme would."""
    from assay.ledger.record import CHAIN_GENESIS, SEALED_FIELDS, chain_digest, version_digest

    rows = ledger_rows(project, f"SELECT {', '.join(SEALED_FIELDS)}, chain_sha256 "
                                "FROM record_versions ORDER BY ledger_revision")
    chain = CHAIN_GENESIS
    for row in rows:
        fields = dict(zip(SEALED_FIELDS, row))
        if fields["ledger_revision"] >= ledger_revision:
            sealed = version_digest(fields)
            chain = chain_digest(chain, sealed)
            ledger_sql(project, "UPDATE record_versions SET version_sha256 = ?, chain_sha256 = ? "
                                "WHERE ledger_revision = ?",
                       (sealed, chain, fields["ledger_revision"]))
        else:
            chain = row[-1]


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


def run_on_tty(*args: str, cwd: Path, columns: int = 80, env: dict[str, str] | None = None,
               stdin: int | None = subprocess.DEVNULL) -> tuple[int, bytes]:
    """Run assay with stdout and stderr on a pseudo-terminal ``columns`` wide.

    Returns the exit status and the raw bytes the terminal received (CR LF as
    the terminal line discipline writes them); ``ASSAY_*`` variables are dropped.
    """
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
    full_env.pop("COLUMNS", None)
    full_env.update({"TERM": "xterm", **(env or {})})
    proc = subprocess.Popen([ASSAY, *args], stdin=stdin, stdout=slave, stderr=slave,
                            cwd=cwd, env=full_env)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO once the child has closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=60), b"".join(chunks)


def op(project: Project, operation: str, /, **args: Any) -> tuple[dict[str, Any], int]:
    """Call one operation in process against the project's ledger (``principal`` as an arg)."""
    from assay.ops import Invocation, call

    inv = Invocation(cwd=str(project.root), db=project.db, surface="test")
    try:
        return call(operation, args, inv)
    finally:
        inv.close()


def data(project: Project, operation: str, /, **args: Any) -> Any:
    """The data of a successful operation."""
    return op(project, operation, **args)[0]["data"]


def refused(project: Project, operation: str, /, **args: Any) -> Any:
    """The :class:`~assay.errors.AssayError` an operation is refused with (it must be refused)."""
    from assay.errors import AssayError

    try:
        op(project, operation, **args)
    except AssayError as exc:
        return exc
    raise AssertionError(f"{operation} was not refused")


@contextmanager
def sigint_as_on_a_terminal() -> Iterator[None]:
    """Children started inside get SIGINT's default action, as a terminal's processes do.

    A suite run as a shell's background job ignores SIGINT, and an ignored
    signal stays ignored across exec; a handled one is reset to the default.
    """
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
