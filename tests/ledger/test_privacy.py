"""Private records: never leaked, never an existence oracle, on both backends and over MCP.

A record is keyed by id and audience: each principal's private records form a
partition only that principal reads. These tests replay the attacks that the
ledger must answer exactly as if the private record had never been written.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from assay.ledger import Write, open_store
from assay_testing import Project

SECRET = {"secret": "x"}


def _put(project: Project, who: str, record_id: str, data: Any, *args: str) -> Any:
    return project.run("put", "--as", who, *args, "--data-file", "-", "--", record_id,
                       input=json.dumps(data))


def _alice_private(project: Project, record_id: str = "knowledge:plan", *args: str) -> None:
    result = _put(project, "alice", record_id, SECRET, "--audience", "private:alice", *args)
    assert result.code == 0, result.stderr


def test_privacy_history_never_shows_another_principals_private_version(
        any_project: Project) -> None:
    """bob's history, current read and revision read of an id alice holds privately show only bob's writes."""
    _alice_private(any_project)
    assert _put(any_project, "bob", "knowledge:plan", {}).code == 0
    history = any_project.ok("get", "--as", "bob", "--history", "--", "knowledge:plan")["data"]
    assert [(v["revision"], v["data"], v["audience"]) for v in history["versions"]] == [
        (1, {}, "project")]
    assert "secret" not in json.dumps(history)
    assert any_project.ok("get", "--as", "bob", "--revision", "1", "--",
                          "knowledge:plan")["data"]["record"]["data"] == {}
    assert any_project.ok("get", "--as", "bob", "--", "knowledge:plan")["data"]["record"][
        "data"] == {}


def test_privacy_another_principals_write_never_changes_a_private_record(
        any_project: Project) -> None:
    """After bob writes the same id, alice still reads her own private record, revision 1."""
    _alice_private(any_project)
    _put(any_project, "bob", "knowledge:plan", {"bob": True})
    _put(any_project, "bob", "knowledge:plan", {"bob": 2})
    mine = any_project.ok("get", "--as", "alice", "--", "knowledge:plan")["data"]
    assert (mine["record"]["data"], mine["record"]["revision"], mine["record"]["audience"]) == (
        SECRET, 1, "private:alice")
    assert [v["data"] for v in any_project.ok("get", "--as", "alice", "--history", "--",
                                              "knowledge:plan")["data"]["versions"]] == [SECRET]


def test_privacy_find_and_counts_answer_for_the_caller_only(any_project: Project) -> None:
    """find, ledger info counts and `more` reflect only what the caller may read."""
    _alice_private(any_project)
    _alice_private(any_project, "knowledge:other")
    _put(any_project, "bob", "knowledge:open", {"v": 1})
    found = any_project.ok("find", "--as", "bob", "--kind", "knowledge")["data"]
    assert [r["id"] for r in found["records"]] == ["knowledge:open"]
    assert any_project.ok("find", "--as", "bob", "--", "secret")["data"]["count"] == 0
    bob = any_project.ok("ledger", "info", "--as", "bob")["data"]
    alice = any_project.ok("ledger", "info", "--as", "alice")["data"]
    assert (bob["records"], bob["versions"], bob["by_status"]) == (1, 1, {"current": 1})
    assert (alice["records"], alice["versions"]) == (3, 3)


def test_privacy_writing_into_another_principals_audience_is_refused(
        any_project: Project) -> None:
    """bob cannot write a record private to alice: audience_not_allowed, nothing written."""
    result = _put(any_project, "bob", "knowledge:plan", {}, "--audience", "private:alice")
    assert (result.code, result.error["code"], result.error["pointer"]) == (
        1, "audience_not_allowed", "/audience")
    assert any_project.ok("ledger", "info")["data"]["ledger_revision"] == 0


def _normalised(text: str, name: str) -> str:
    """Output with the ledger-wide facts (revision counter, times, the name probed) masked."""
    text = text.replace(name, "NAME")
    text = re.sub(r'"ledger_revision":\d+', '"ledger_revision":N', text)
    return re.sub(r'"created_at":"[^"]*"', '"created_at":T', text)


def _bob_probes(project: Project, name: str, basis_dir: Path) -> list[tuple[int, str, str]]:
    """What bob is answered for every probe that could reveal that ``knowledge:<name>`` exists."""
    record_id = "knowledge:" + name
    epoch = project.ok("ledger", "info", "--as", "bob")["data"]["epoch"]
    absent = basis_dir / f"absent-{name}.json"
    absent.write_text(json.dumps({"epoch": epoch, "ledger_revision": 0,
                                  "records": {record_id: 0}}), encoding="utf-8")
    stale = basis_dir / f"stale-{name}.json"
    stale.write_text(json.dumps({"epoch": epoch, "ledger_revision": 0,
                                 "records": {record_id: 1}}), encoding="utf-8")
    probes = [
        ("get", "--as", "bob", "--", record_id),
        ("get", "--as", "bob", "--revision", "1", "--", record_id),
        ("get", "--as", "bob", "--history", "--", record_id),
        ("find", "--as", "bob", "--", record_id),
        ("put", "--as", "bob", "--expect-revision", "1", "--data-file", "-", "--", record_id),
        ("put", "--as", "bob", "--write-basis", str(stale), "--data-file", "-", "--",
         "knowledge:bob-" + name),
        ("put", "--as", "bob", "--request-id", "req-" + name, "--data-file", "-", "--",
         "knowledge:bob-" + name),
        ("put", "--as", "bob", "--write-basis", str(absent), "--expect-revision", "0",
         "--data-file", "-", "--", record_id),
        ("get", "--as", "bob", "--history", "--", record_id),
        ("find", "--as", "bob", "--kind", "knowledge", "--", name),
    ]
    out = []
    for args in probes:
        result = project.run(*args, input='{"bob":1}')
        out.append((result.code, _normalised(result.stdout, name),
                    _normalised(result.stderr, name)))
    return out


def test_privacy_answers_to_others_match_a_never_written_id(any_project: Project,
                                                           tmp_path: Path) -> None:
    """Every probe bob makes (reads, expect-revision, write bases, alice's request id) answers as for an id never written."""
    _alice_private(any_project, "knowledge:taken", "--request-id", "req-taken")
    probed = _bob_probes(any_project, "taken", tmp_path)
    never = _bob_probes(any_project, "never", tmp_path)
    assert probed == never
    assert probed[4][0] == 3 and '"current_revision":0' in probed[4][2]
    assert probed[6][0] == 0 and '"replayed":false' in probed[6][1]
    assert probed[7][0] == 0


def test_privacy_request_ids_are_scoped_to_their_principal(any_project: Project) -> None:
    """bob reusing alice's request id writes his own record; alice's retry still replays hers."""
    _alice_private(any_project, "knowledge:plan", "--request-id", "r-1")
    bob = _put(any_project, "bob", "knowledge:mine", {"b": 1}, "--request-id", "r-1")
    assert bob.code == 0 and bob.json["data"]["replayed"] is False
    again = _put(any_project, "alice", "knowledge:plan", SECRET, "--audience", "private:alice",
                 "--request-id", "r-1")
    assert again.json["data"]["replayed"] is True and again.json["data"]["id"] == "knowledge:plan"


async def _mcp(root: Path, db: str | None, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    from mcp import Client

    from assay.mcp.server import build_server

    # Each principal is its own agent: its server says who it is (args' principal).
    principal = args.pop("principal", None)
    async with Client(build_server(cwd=str(root), db=db, principal=principal)) as client:
        result = await client.call_tool(tool, args)
    assert result.structured_content is not None
    return dict(result.structured_content)


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_privacy_mcp_history_and_oracles_match_the_cli(any_project: Project,
                                                             anyio_backend: str) -> None:
    """Over MCP, bob's history shows no private version and expect_revision answers as for an absent id."""
    root, db = any_project.root, any_project.db
    await _mcp(root, db, "put", {"id": "knowledge:plan", "data": SECRET, "principal": "alice",
                                 "audience": "private:alice", "request_id": "a-1"})
    await _mcp(root, db, "put", {"id": "knowledge:plan", "data": {}, "principal": "bob"})
    history = await _mcp(root, db, "get", {"id": "knowledge:plan", "history": True,
                                           "principal": "bob"})
    assert [v["data"] for v in history["data"]["versions"]] == [{}]
    conflict = await _mcp(root, db, "put", {"id": "knowledge:plan2", "data": {}, "principal": "bob",
                                            "expect_revision": 1})
    taken = await _mcp(root, db, "put", {"id": "knowledge:plan", "data": {}, "principal": "bob",
                                         "expect_revision": 5})
    assert conflict["error"]["details"]["current_revision"] == 0
    assert taken["error"]["details"]["current_revision"] == 1  # bob's own project version
    reuse = await _mcp(root, db, "put", {"id": "knowledge:bobs", "data": {"x": 1},
                                         "principal": "bob", "request_id": "a-1"})
    assert reuse["ok"] is True and reuse["data"]["replayed"] is False
    mine = await _mcp(root, db, "get", {"id": "knowledge:plan", "principal": "alice"})
    assert mine["data"]["record"]["data"] == SECRET


@pytest.mark.parametrize("principal", ["al ice", "a\u202eb", "a\u200bb", "-x", "a" * 129,
                                       "tab\there", "é\u2066"])
def test_privacy_principal_grammar_at_every_entry_point(project: Project, principal: str) -> None:
    """--as and ASSAY_PRINCIPAL refuse a principal outside the grammar (exit 2), assay.toml too."""
    by_option = project.run("find", "--as", principal)
    assert (by_option.code, by_option.error["code"], by_option.error["pointer"]) == (
        2, "invalid_principal", "/principal")
    by_env = project.run("find", env={"ASSAY_PRINCIPAL": principal})
    assert (by_env.code, by_env.error["code"]) == (2, "invalid_principal")
    audience = project.run("put", "--audience", f"private:{principal}", "--data-file", "-", "--",
                           "knowledge:x", input="{}")
    assert (audience.code, audience.error["code"], audience.error["pointer"]) == (
        1, "invalid_audience", "/audience")
    toml = project.root / "assay.toml"
    toml.write_text(f'[project]\nname = "demo"\nprincipal = {json.dumps(principal)}\n',
                    encoding="utf-8")
    by_config = project.run("find")
    assert (by_config.error["code"], by_config.error["pointer"]) == (
        "invalid_config", "/project/principal")


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_privacy_principal_grammar_over_mcp(project: Project, anyio_backend: str) -> None:
    """An MCP call with a principal holding a bidirectional control is invalid_principal."""
    out = await _mcp(project.root, None, "find", {"principal": "mal\u202elory"})
    assert (out["error"]["code"], out["error"]["pointer"]) == ("invalid_principal", "/principal")


@pytest.mark.parametrize("record_id", ["knowledge:a\u202eb", "knowledge:a\u200bb",
                                       "knowledge:\ufeffa", "knowledge:a\u2066b"])
def test_privacy_ids_refuse_invisible_characters(project: Project, record_id: str) -> None:
    """Ids holding bidirectional-control or zero-width characters are invalid_id (visual spoofing)."""
    result = project.run("put", "--data-file", "-", "--", record_id, input="{}")
    assert (result.code, result.error["code"], result.error["pointer"]) == (1, "invalid_id", "/id")


def test_privacy_scopes_refuse_invisible_characters(tmp_path: Path) -> None:
    """A scope holding a bidirectional control is invalid_scope at the store."""
    from assay.errors import AssayError

    store = open_store(tmp_path / "l.db")
    try:
        with pytest.raises(AssayError) as caught:
            store.put(Write(id="knowledge:a", data={}, scope="project:de\u202emo"))
        assert (caught.value.code, caught.value.pointer) == ("invalid_scope", "/scope")
    finally:
        store.close()


@pytest.mark.parametrize(("args", "code", "where"), [
    (("get", "--revision", "9223372036854775808", "--", "knowledge:a"), "invalid_argument",
     "/revision"),
    (("get", "--at-revision", "9223372036854775808", "--", "knowledge:a"), "invalid_argument",
     "/at_revision"),
    (("put", "--expect-revision", "9223372036854775808", "--data-file", "-", "--", "knowledge:a"),
     "invalid_argument", "/expect_revision"),
    (("put", "--source", "knowledge:a@9223372036854775808", "--data-file", "-", "--",
      "knowledge:b"), "invalid_source", "/source/0"),
])
def test_privacy_huge_integers_are_usage_errors_not_crashes(any_project: Project,
                                                             args: tuple[str, ...], code: str,
                                                             where: str) -> None:
    """Integers beyond 2^53 in options are refused with their pointer (exit 2), never exit 70 or a retryable error."""
    _put(any_project, "agent", "knowledge:a", {"v": 1})
    result = any_project.run(*args, input="{}")
    assert (result.code, result.error["code"], result.error["pointer"],
            result.error["retryable"]) == (2, code, where, False)


def test_privacy_store_revision_beyond_the_bound_reads_as_absent(store: Any) -> None:
    """The store answers a revision past 2^53 as absent instead of overflowing the database."""
    store.put(Write(id="knowledge:a", data={}, scope="project:demo"))
    with store.reader() as reader:
        assert reader.get("knowledge:a", 2**63) is None
