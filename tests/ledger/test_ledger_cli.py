"""The ledger operations end to end through the real CLI, on both backends."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from assay_testing import Project, make_project


def _put(project: Project, record_id: str, data: object, *args: str) -> dict:
    return project.ok("put", *args, "--data-file", "-", "--", record_id, input=json.dumps(data))


def test_cli_put_get_round_trip(any_project: Project) -> None:
    """put prints a receipt; get returns the record with a write basis at its revision."""
    receipt = _put(any_project, "knowledge:login", {"b": 1, "a": 2})
    assert receipt["ok"] is True and receipt["data"]["revision"] == 1
    got = any_project.ok("get", "--", "knowledge:login")
    assert got["ledger_revision"] == 1
    assert got["data"]["record"]["data"] == {"a": 2, "b": 1}
    assert got["data"]["record"]["origin"] == "claim"
    assert got["data"]["write_basis"]["records"] == {"knowledge:login": 1}


def test_cli_conflicting_put_exits_3(any_project: Project) -> None:
    """A stale --expect-revision exits 3 with revision_conflict on stderr and writes nothing."""
    _put(any_project, "knowledge:a", {"v": 1})
    result = any_project.run("put", "--expect-revision", "0", "--data-file", "-", "--",
                             "knowledge:a", input='{"v":2}')
    assert result.code == 3
    assert result.error["code"] == "revision_conflict"
    assert result.error["details"]["current_revision"] == 1
    assert any_project.ok("ledger", "info")["data"]["ledger_revision"] == 1


def test_cli_replayed_put(any_project: Project) -> None:
    """A put retried with the same request id replays its receipt."""
    first = _put(any_project, "knowledge:a", {"v": 1}, "--request-id", "r-1")
    again = _put(any_project, "knowledge:a", {"v": 1}, "--request-id", "r-1")
    assert again["data"] == {**first["data"], "replayed": True}
    other = any_project.run("put", "--request-id", "r-1", "--data-file", "-", "--", "knowledge:a",
                            input='{"v":2}')
    assert (other.code, other.error["code"]) == (3, "request_conflict")


def test_cli_bad_data_is_rejected(any_project: Project) -> None:
    """Non-JSON data, duplicate keys and unknown statuses are refused with exact codes."""
    cases = [
        (["--data-file", "-"], "{not json", "invalid_json", 1),
        (["--data-file", "-"], '{"a":1,"a":2}', "duplicate_key", 1),
        (["--status", "archived", "--data-file", "-"], "{}", "usage_error", 2),
    ]
    for args, body, code, exit_code in cases:
        result = any_project.run("put", *args, "--", "knowledge:a", input=body)
        assert (result.code, result.error["code"]) == (exit_code, code), result.stderr
    bad_id = any_project.run("put", "--data-file", "-", "--", "Bad Id", input="{}")
    assert (bad_id.code, bad_id.error["code"], bad_id.error["pointer"]) == (1, "invalid_id", "/id")
    assert any_project.ok("ledger", "info")["data"]["ledger_revision"] == 0


def test_cli_literal_after_double_dash(any_project: Project) -> None:
    """What follows -- is a literal id, even --help: never help output."""
    result = any_project.run("get", "--", "--help")
    assert result.code == 1 and result.stdout == ""
    assert result.error["code"] == "invalid_id"


def test_cli_get_history_and_revision(any_project: Project) -> None:
    """get --history lists every version; --revision reads an old one."""
    _put(any_project, "knowledge:a", {"v": 1})
    _put(any_project, "knowledge:a", {"v": 2})
    history = any_project.ok("get", "--history", "--", "knowledge:a")["data"]["versions"]
    assert [v["data"] for v in history] == [{"v": 1}, {"v": 2}]
    old = any_project.ok("get", "--revision", "1", "--", "knowledge:a")
    assert old["data"]["record"]["data"] == {"v": 1}


def test_cli_get_raw_prints_stored_text(any_project: Project) -> None:
    """get --raw prints the stored canonical data text byte for byte."""
    _put(any_project, "knowledge:a", {"n": 1e21, "s": "€", "f": 1.5})
    result = any_project.run("get", "--raw", "--", "knowledge:a")
    assert result.stdout == '{"f":1.5,"n":1e+21,"s":"€"}\n'


def test_cli_at_revision_conflict(any_project: Project) -> None:
    """--at-revision answers only while the ledger is still at that revision."""
    _put(any_project, "knowledge:a", {"v": 1})
    assert any_project.ok("get", "--at-revision", "1", "--", "knowledge:a")["ledger_revision"] == 1
    _put(any_project, "knowledge:b", {"v": 1})
    result = any_project.run("get", "--at-revision", "1", "--", "knowledge:a")
    assert (result.code, result.error["code"]) == (3, "read_revision_conflict")
    assert result.error["details"]["current_ledger_revision"] == 2


def test_cli_find_and_status_changes(any_project: Project) -> None:
    """find filters current records; retire and supersede write guarded status versions."""
    _put(any_project, "knowledge:a", {"text": "Alpha"})
    _put(any_project, "knowledge:b", {"text": "Beta"}, "--link", "requires:knowledge:a")
    assert [r["id"] for r in any_project.ok("find", "--", "alpha")["data"]["records"]] == ["knowledge:a"]
    linked = any_project.ok("find", "--link", "requires:knowledge:a")["data"]["records"]
    assert [r["id"] for r in linked] == ["knowledge:b"]
    stale = any_project.run("retire", "--expect-revision", "2", "--", "knowledge:a")
    assert (stale.code, stale.error["code"]) == (3, "revision_conflict")
    any_project.ok("retire", "--expect-revision", "1", "--", "knowledge:a")
    again = any_project.run("retire", "--expect-revision", "2", "--", "knowledge:a")
    assert again.error["code"] == "invalid_status_transition"
    any_project.ok("supersede", "--by", "knowledge:a", "--expect-revision", "1", "--", "knowledge:b")
    info = any_project.ok("ledger", "info")["data"]
    assert info["by_status"] == {"retired": 1, "superseded": 1}


def test_cli_scopes_are_enforced(tmp_path: Path) -> None:
    """Another project's records are out of scope; admitted historical scopes are readable."""
    db = str(tmp_path / "shared.db")
    old = make_project(tmp_path / "old", name="old", db=db)
    new = make_project(tmp_path / "new", name="new", db=db,
                       extra_toml='admitted_scopes = ["project:old"]\n')
    other = make_project(tmp_path / "other", name="other", db=db)
    _put(old, "knowledge:legacy", {"v": 1})
    assert new.ok("get", "--", "knowledge:legacy")["data"]["record"]["scope"] == "project:old"
    result = other.run("get", "--", "knowledge:legacy")
    assert (result.code, result.error["code"]) == (1, "out_of_scope")
    assert other.ok("find", "--", "legacy")["data"]["records"] == []
    wrong = other.run("put", "--scope", "project:old", "--data-file", "-", "--", "knowledge:x",
                      input="{}")
    assert wrong.error["code"] == "out_of_scope"


def test_cli_private_records_are_invisible_to_others(project: Project) -> None:
    """A private record does not exist for another principal, not even in find."""
    _put(project, "note:secret", {"text": "mine"}, "--audience", "private:alice", "--as", "alice")
    assert project.ok("get", "--as", "alice", "--", "note:secret")["data"]["record"]["audience"] == "private:alice"
    result = project.run("get", "--as", "bob", "--", "note:secret")
    assert result.error["code"] == "record_not_found"
    assert project.ok("find", "--as", "bob", "--", "mine")["data"] == {
        "count": 0, "more": False, "records": [], "complete": True, "truncated": False,
        "omitted": {"records": 0}, "read_more": [], "omitted_at_least": False}


def test_cli_sources_are_pinned_to_digests(project: Project) -> None:
    """--source ID@REV records the digest of that exact version; unknown sources are refused."""
    receipt = _put(project, "knowledge:a", {"v": 1})["data"]
    _put(project, "note:n", {"text": "derived"}, "--source", "knowledge:a@1")
    record = project.ok("get", "--", "note:n")["data"]["record"]
    assert record["sources"] == [{"id": "knowledge:a", "revision": 1,
                                  "data_sha256": receipt["data_sha256"]}]
    missing = project.run("put", "--source", "knowledge:a@7", "--data-file", "-", "--", "note:m",
                          input="{}")
    assert (missing.error["code"], missing.error["pointer"]) == ("source_not_found", "/source/0")


def test_cli_reads_never_write(project: Project) -> None:
    """get, find and ledger info leave the SQLite ledger's bytes unchanged."""
    _put(project, "knowledge:a", {"v": 1})
    db = project.root / ".assay" / "ledger.db"
    import sqlite3

    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()

    def snapshot() -> list[str]:
        return [hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(db.parent.glob("ledger.db*"))]

    before = snapshot()
    project.ok("get", "--", "knowledge:a")
    project.ok("get", "--history", "--", "knowledge:a")
    project.ok("find", "--kind", "knowledge")
    project.ok("ledger", "info")
    assert snapshot() == before


def test_cli_find_more_flag_ignores_hidden_records(project: Project) -> None:
    """find's `more` flag and count never reveal records private to another principal."""
    _put(project, "note:a-secret", {"text": "x"}, "--audience", "private:alice", "--as", "alice")
    _put(project, "note:b-open", {"text": "x"})
    page = project.ok("find", "--as", "bob", "--limit", "1", "--kind", "note")["data"]
    assert (page["count"], page["more"], [r["id"] for r in page["records"]]) == (1, False, ["note:b-open"])
