"""Which calls may create a ledger: writes do, reads never, and an unknown --db scheme nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from assay.errors import AssayError
from assay_testing import PG_URL, Project, make_project


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def _schema_exists(url: str) -> bool:
    import psycopg

    schema = url.rpartition("assay_schema=")[2]
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM information_schema.schemata "
                           "WHERE schema_name = %s", (schema,)).fetchone()
    return bool(row and row[0])


def _ledger_exists(project: Project) -> bool:
    assert project.db is not None
    if project.db.startswith("postgresql://"):
        return _schema_exists(project.db)
    return Path(project.db).exists()


@pytest.fixture
def bare(tmp_path: Path, ledger_url: str) -> Project:
    """A project whose ledger (SQLite file or PostgreSQL schema) was never created."""
    return make_project(tmp_path / "proj", db=ledger_url, ledger=False)


@pytest.mark.parametrize("url", ["mysql://x/y", "MySQL://host/db?x=1", "redis://localhost:6379/0"])
def test_ledger_open_unknown_scheme_is_invalid_argument_and_creates_nothing(
        project: Project, url: str) -> None:
    """`get` and `put` with --db of an unknown scheme exit 2 (invalid_argument at /db); no file appears."""
    before = _files(project.root)
    for args, stdin in ((("get",), None), (("put", "--data-file", "-"), "{}")):
        result = project.run(*args, "--db", url, "--", "knowledge:calc", input=stdin)
        assert result.code == 2, result.stderr
        assert (result.error["code"], result.error["pointer"]) == ("invalid_argument", "/db")
        assert url in result.error["message"]
    assert _files(project.root) == before


def test_ledger_open_read_of_missing_ledger_is_ledger_not_found(bare: Project) -> None:
    """A read before any write exits 5 (ledger_not_found, action `assay init`) on both backends."""
    result = bare.run("get", "--", "knowledge:x")
    assert result.code == 5, result.stderr
    error = result.error
    assert error["code"] == "ledger_not_found" and "assay init" in error["action"]
    assert not _ledger_exists(bare)


@pytest.mark.parametrize("read", [("find",), ("ledger", "info"), ("work", "status"),
                                  ("work", "check", "--", "knowledge:x"),
                                  ("report", "--intent", "knowledge:x")])
def test_ledger_open_no_read_creates_the_ledger(bare: Project, read: tuple[str, ...]) -> None:
    """Reads (and the report, which writes only its page) leave a missing ledger missing."""
    result = bare.run(*read)
    assert result.code == 5 and result.error["code"] == "ledger_not_found", result.stderr
    assert not _ledger_exists(bare)


def test_ledger_open_write_creates_the_ledger(bare: Project) -> None:
    """A write on a missing ledger creates it as before, and reads work after it."""
    bare.ok("put", "--data-file", "-", "--", "knowledge:x", input="{}")
    assert _ledger_exists(bare)
    assert bare.ok("get", "--", "knowledge:x")["data"]["record"]["revision"] == 1


def test_ledger_open_init_then_read(tmp_path: Path) -> None:
    """After `assay init`, a read answers from the new, empty ledger."""
    root = tmp_path / "fresh"
    root.mkdir()
    project = Project(root=root)
    project.ok("init")
    assert project.ok("ledger", "info")["data"]["ledger_revision"] == 0


def test_ledger_open_mistyped_sqlite_path_creates_no_file_or_directory(project: Project) -> None:
    """A read naming a SQLite file in a missing directory creates neither the file nor the directory."""
    before = _files(project.root)
    result = project.run("get", "--db", "typo/ledgr.db", "--", "knowledge:x")
    assert result.code == 5 and result.error["code"] == "ledger_not_found"
    assert result.error["details"]["location"] == str(project.root / "typo" / "ledgr.db")
    assert _files(project.root) == before


def test_ledger_open_empty_sqlite_file_is_not_a_ledger(project: Project) -> None:
    """A read of an empty (or foreign) SQLite file is ledger_not_found and leaves it untouched."""
    empty = project.root / "empty.db"
    empty.write_bytes(b"")
    foreign = project.root / "foreign.db"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE t (x)")
    foreign_bytes = foreign.read_bytes()
    for path in (empty, foreign):
        result = project.run("get", "--db", str(path), "--", "knowledge:x")
        assert result.code == 5 and result.error["code"] == "ledger_not_found", result.stderr
    assert empty.read_bytes() == b"" and foreign.read_bytes() == foreign_bytes


def test_ledger_open_read_over_mcp_creates_nothing(bare: Project) -> None:
    """The MCP tool `get` answers ledger_not_found as an error result and creates nothing."""
    from assay.mcp.server import invoke

    envelope, is_error = invoke("get", {"id": "knowledge:x"}, cwd=str(bare.root), db=bare.db)
    assert is_error and envelope["error"]["code"] == "ledger_not_found"
    assert not _ledger_exists(bare)


def test_ledger_open_api_open_store_without_create(tmp_path: Path) -> None:
    """open_store(create=False) refuses a missing file with ledger_not_found and makes no directory."""
    from assay.ledger import open_store

    with pytest.raises(AssayError) as caught:
        open_store(tmp_path / "a" / "ledger.db", create=False)
    assert caught.value.code == "ledger_not_found" and caught.value.exit_code == 5
    assert not (tmp_path / "a").exists()
    open_store(tmp_path / "a" / "ledger.db").close()
    store = open_store(tmp_path / "a" / "ledger.db", create=False)
    try:
        assert store.info().ledger_revision == 0
    finally:
        store.close()


@pytest.mark.parametrize(("scheme", "names_a_store"), [
    ("foo", True), ("Foo+bar.baz-1", True), ("z", True), ("SQLITE", False), ("sqlite", False),
    ("1abc", False), ("+a", False), ("a_b", False), ("é", False), ("", False), ("a:b", False),
    ("a b", False), ("a/b", False),
])
def test_open_store_scheme_is_rfc3986(tmp_path: Path, scheme: str, names_a_store: bool) -> None:
    """SCHEME://x names another store exactly when SCHEME is [A-Za-z][A-Za-z0-9+.-]*; else a file."""
    from assay.ledger import open_store

    with pytest.raises(AssayError) as info:
        open_store(f"{scheme}://x", base=tmp_path, create=False)
    assert info.value.code == ("invalid_argument" if names_a_store else "ledger_not_found")
    assert _files(tmp_path) == []
