"""PostgreSQL roles: the connected role is the principal, reviewers' writes, row-level security.

Every test makes its own login roles (unique names, dropped afterwards) and
grants them on a fresh ledger schema with ``assay ledger grant``, as the
ledger's owner. Refusals are checked through assay (in process and through
the real CLI) and through raw SQL on the server's write functions and tables.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.ledger.roles import GATE_KINDS, REVIEWER_KINDS
from assay.ledger.store import SCHEMA_VERSION
from assay_testing import Project, make_project, refused
from assay_testing import data as op
from junit_testing import junit_xml, writer_code
from pg_roles_testing import login_roles, owner_sql, role_url

pytestmark = pytest.mark.postgres

INTENT = "knowledge:export"
GREEN = junit_xml(("tests.test_csv", "test_rows", "passed", ("R1",)))


class Team:
    """A ledger with an owner, two agents and a reviewer, each connecting as its own role."""

    def __init__(self, root: Path, url: str, roles: dict[str, str]) -> None:
        self.url = url
        self.roles = roles
        self.schema = url.rpartition("assay_schema=")[2]
        argv = json.dumps([sys.executable, "-c", writer_code("reports/unit.xml", GREEN)])
        toml = (f"\n[evidence.commands.unit]\nargv = {argv}\ntimeout = 60\n"
                'results = { format = "junit", path = "reports/unit.xml" }\n\n'
                f'[gate]\nprincipal = "{roles["agent"]}"\n')
        self.owner = make_project(root, db=url, extra_toml=toml)
        (root / "tests").mkdir()
        (root / "tests" / "test_csv.py").write_text("def test_rows():\n    assert True\n",
                                                    encoding="utf-8")
        op(self.owner, "ledger.grant", role=roles["agent"], agent=True)
        op(self.owner, "ledger.grant", role=roles["helper"], agent=True)
        op(self.owner, "ledger.grant", role=roles["reviewer"], reviewer=True)

    def project(self, who: str) -> Project:
        """The project as ``who`` (agent, helper, reviewer) runs it: its own connection string."""
        return Project(root=self.owner.root, db=role_url(self.url, self.roles[who]))

    def sql(self, who: str, statement: str, params: tuple[Any, ...] = ()) -> list[Any]:
        """One raw statement as ``who``'s role (psql's view of the ledger)."""
        import psycopg

        with psycopg.connect(role_url(self.url, self.roles[who]).partition("?")[0],
                             autocommit=True) as conn:
            conn.execute(f"SET search_path TO {self.schema}")
            cur = conn.execute(statement, params)
            return list(cur.fetchall()) if cur.description else []


@pytest.fixture
def team(tmp_path: Path, pg_url: str) -> Iterator[Team]:
    with login_roles("agent", "helper", "reviewer") as roles:
        yield Team(tmp_path / "proj", pg_url, roles)


def raw_put(team: Team, who: str, record_id: str, data: dict[str, Any], *,
            status: str = "current", audience: str = "project", principal: str = "") -> Any:
    """``assay_put`` called with raw SQL as ``who``: the SQLSTATE and JSON of a refusal, or None."""
    import psycopg

    kind = record_id.partition(":")[0]
    try:
        team.sql(who, "SELECT * FROM assay_put(%s, %s, 'project:demo', %s, 'x', %s, NULL, '[]', "
                      "%s, '[]', 'claim', NULL, NULL, NULL, 'now', NULL, NULL, 0, %s, NULL)",
                 (record_id, kind, json.dumps(data), status, audience, principal))
    except psycopg.Error as exc:
        return exc.sqlstate, json.loads(exc.diag.message_primary or "{}")
    return None


def accept_first_run(project: Project) -> None:
    op(project, "work.new", id=INTENT, brief="Ship the export",
       requirement=["R1|rows|its tests pass"], verify_with=["R1=unit"])
    ran = op(project, "evidence.run", name="unit", target=[f"{INTENT}#R1"])
    op(project, "work.accept", id=INTENT,
       from_run=[f"{ran['receipt']['id']}@{ran['receipt']['revision']}"])


def issue_codes(project: Project) -> list[str]:
    return [i["code"] for i in op(project, "work.check", id=INTENT)["issues"]]


# the principal is the role -------------------------------------------------------------------


def test_roles_principal_is_the_connected_role(team: Team) -> None:
    """Without --as, an agent writes as its role: requests, private audience and written_by."""
    agent = team.roles["agent"]
    receipt = op(team.project("agent"), "put", id="note:mine", data={"v": 1},
                 audience=f"private:{agent}", request_id="r1")
    assert receipt["revision"] == 1
    assert team.sql("agent", "SELECT written_by FROM record_versions") == [(agent,)]
    assert team.sql("agent", "SELECT principal FROM requests") == [(agent,)]


def test_roles_agent_cannot_claim_another_principal(team: Team) -> None:
    """--as naming another principal: principal_not_role at /principal, nothing written."""
    error = refused(team.project("agent"), "put", id="note:x", data={"v": 1},
                    principal=team.roles["reviewer"])
    assert (error.code, error.pointer) == ("principal_not_role", "/principal")
    assert error.details == {"principal": team.roles["reviewer"], "role": team.roles["agent"]}
    assert owner_sql("SELECT count(*) FROM record_versions", schema=team.schema) == [(0,)]


def test_roles_agent_cannot_claim_another_principal_on_the_cli(team: Team) -> None:
    """The real CLI, with --as and with ASSAY_PRINCIPAL: exit 1, principal_not_role."""
    agent = team.project("agent")
    by_flag = agent.run("put", "--as", "someone", "--data-file", "-", "--", "note:x", input="{}")
    by_env = agent.run("put", "--data-file", "-", "--", "note:x", input="{}",
                       env={"ASSAY_PRINCIPAL": "someone"})
    for result in (by_flag, by_env):
        assert result.code == 1, result.stderr
        error = json.loads(result.stderr)["error"]
        assert (error["code"], error["pointer"]) == ("principal_not_role", "/principal")
    named = agent.run("put", "--as", team.roles["agent"], "--data-file", "-", "--", "note:x",
                      input="{}")
    assert named.code == 0, named.stderr


def test_roles_raw_sql_cannot_claim_another_principal_or_partition(team: Team) -> None:
    """The write function itself refuses another principal (AS010) and another's private audience (AS011)."""
    other = team.roles["helper"]
    assert raw_put(team, "agent", "note:x", {}, principal=other)[0] == "AS010"
    assert raw_put(team, "agent", "note:x", {}, audience=f"private:{other}")[0] == "AS011"
    assert owner_sql("SELECT count(*) FROM record_versions", schema=team.schema) == [(0,)]


# reviewer-only writes --------------------------------------------------------------------------


@pytest.mark.parametrize(("record_id", "data", "status"), [
    ("gate-approval:knowledge:export@2", {"approved_by": "me"}, "current"),
    ("gate-binding:s1", {"intents": ["knowledge:export"]}, "current"),
    ("attestation-key:team", {"public_key": "x"}, "current"),
    ("gate-pin:knowledge:export", {"reviewed": True}, "current"),
    ("gate-pin:knowledge:export", {"reviewed": False}, "retired"),
    ("gate-session:s1", {"decision": {}}, "retired"),
    ("gate-session:s1", {"decision": {}}, "superseded"),
])
def test_roles_agent_refused_reviewer_writes_through_raw_sql(
        team: Team, record_id: str, data: dict[str, Any], status: str) -> None:
    """Approve, bind, key, pin as reviewed, retire or supersede gate records by raw SQL: AS012 reviewer_required."""
    state, info = raw_put(team, "agent", record_id, data, status=status)
    assert state == "AS012"
    assert (info["id"], info["role"]) == (record_id, team.roles["agent"])
    assert owner_sql("SELECT count(*) FROM record_versions", schema=team.schema) == [(0,)]
    assert raw_put(team, "reviewer", record_id, data, status=status) is None


def test_roles_agent_first_use_pin_allowed_but_not_over_a_reviewed_one(team: Team) -> None:
    """An unreviewed pin over nothing is the agent's (trust on first use); over a reviewed pin it is not."""
    assert raw_put(team, "agent", "gate-pin:knowledge:a", {"reviewed": False}) is None
    assert raw_put(team, "agent", "gate-pin:knowledge:a", {"reviewed": False}) is None
    assert raw_put(team, "reviewer", "gate-pin:knowledge:a", {"reviewed": True}) is None
    assert raw_put(team, "agent", "gate-pin:knowledge:a", {"reviewed": False})[0] == "AS012"


def test_roles_agent_may_only_extend_a_reviewed_pin(team: Team) -> None:
    """Over a reviewer's pin, an agent's pin that keeps every entry is allowed; one that changes an entry is AS012."""
    pinned = {"reviewed": True, "how": "gate_pin", "commands": {"unit": {"timeout": 60}}}
    assert raw_put(team, "reviewer", "gate-pin:knowledge:a", pinned) is None
    extended = {**pinned, "how": "extended", "commands": {"unit": {"timeout": 60}, "lint": {}}}
    assert raw_put(team, "agent", "gate-pin:knowledge:a", extended) is None
    changed = {**extended, "commands": {"unit": {"timeout": 600}, "lint": {}}}
    assert raw_put(team, "agent", "gate-pin:knowledge:a", changed)[0] == "AS012"
    dropped = {**extended, "commands": {"lint": {}}}
    assert raw_put(team, "agent", "gate-pin:knowledge:a", dropped)[0] == "AS012"


def test_roles_agent_accept_after_a_reviewer_pin_extends_it(team: Team) -> None:
    """A reviewer pins before the first run; the agent's accept then adds the tests it ran, as before."""
    agent = team.project("agent")
    op(agent, "work.new", id=INTENT, brief="Ship the export",
       requirement=["R1|rows|its tests pass"], verify_with=["R1=unit"])
    op(team.project("reviewer"), "gate.pin", intent=[INTENT])
    ran = op(agent, "evidence.run", name="unit", target=[f"{INTENT}#R1"])
    op(agent, "work.accept", id=INTENT,
       from_run=[f"{ran['receipt']['id']}@{ran['receipt']['revision']}"])
    data = op(agent, "get", id=f"gate-pin:{INTENT}")["record"]["data"]
    assert (data["pinned_by"], data["reviewed"]) == (team.roles["reviewer"], True)
    assert data["requirements"]["R1"]["tests_pinned_by"] == team.roles["agent"]


def test_roles_agent_accept_leaves_a_reviewed_gate_pin_alone_when_stronger(team: Team) -> None:
    """A gate made stronger after a reviewer pinned it: the agent's accept succeeds and the pin stays the reviewer's."""
    agent = team.project("agent")
    op(agent, "work.new", id=INTENT, brief="Ship the export",
       requirement=["R1|rows|its tests pass"], verify_with=["R1=unit"])
    op(team.project("reviewer"), "gate.pin", intent=[INTENT])
    before = op(agent, "get", id="gate-pin:gate")["record"]
    text = (team.owner.root / "assay.toml").read_text(encoding="utf-8")
    (team.owner.root / "assay.toml").write_text(text.replace("[gate]\n", "[gate]\nretry_cap = 9\n"),
                                                encoding="utf-8")
    ran = op(agent, "evidence.run", name="unit", target=[f"{INTENT}#R1"])
    op(agent, "work.accept", id=INTENT,
       from_run=[f"{ran['receipt']['id']}@{ran['receipt']['revision']}"])
    after = op(agent, "get", id="gate-pin:gate")["record"]
    assert (after["revision"], after["data"]["pinned_by"]) == (before["revision"],
                                                               team.roles["reviewer"])
    assert "gate_config_changed" not in issue_codes(agent)


def test_roles_batch_refusal_points_at_the_write(team: Team) -> None:
    """A batch holding a reviewer's write: reviewer_required, nothing of the batch written."""
    from assay.errors import AssayError
    from assay.ledger import open_store
    from assay.ledger.store import Write

    store = open_store(role_url(team.url, team.roles["agent"]))
    try:
        with pytest.raises(AssayError) as info:
            store.put_many([Write(id="note:a", data={}, scope="project:demo"),
                            Write(id="gate-approval:x@1", data={}, scope="project:demo")])
    finally:
        store.close()
    assert (info.value.code, info.value.pointer) == ("reviewer_required", "/principal")
    assert info.value.details["index"] == 1
    assert owner_sql("SELECT count(*) FROM record_versions", schema=team.schema) == [(0,)]


def test_roles_kind_lists_match_the_server_functions() -> None:
    """roles.REVIEWER_KINDS and GATE_KINDS are the lists assay_check_write spells."""
    from importlib import resources

    text = resources.files("assay.ledger").joinpath("function_postgres.sql").read_text("utf-8")
    body = text[text.index("FUNCTION assay_check_write("):]
    arrays = [part.partition("]")[0] for part in body.split("ARRAY[")[1:3]]
    assert [tuple(k.strip().strip("'") for k in a.split(",")) for a in arrays] == [
        REVIEWER_KINDS, GATE_KINDS]


# the gate, through assay --------------------------------------------------------------------------


def test_roles_gate_honours_only_reviewer_approvals(team: Team) -> None:
    """A weakened gate stays blocking after a non-reviewer's approve (refused by the server); a reviewer's clears it."""
    agent = team.project("agent")
    accept_first_run(agent)
    text = (team.owner.root / "assay.toml").read_text(encoding="utf-8")
    (team.owner.root / "assay.toml").write_text(
        text.replace("[gate]\n", '[gate]\non_error = "allow"\n'), encoding="utf-8")
    assert "gate_config_changed" in issue_codes(agent)
    error = refused(team.project("helper"), "gate.approve", gate=True, reason="mine")
    assert (error.code, error.pointer) == ("reviewer_required", "/principal")
    assert "gate_config_changed" in issue_codes(agent)
    error = refused(agent, "gate.approve", gate=True, reason="mine")
    assert error.code == "gated_principal_cannot_review"
    op(team.project("reviewer"), "gate.approve", gate=True, reason="CI flakes")
    assert "gate_config_changed" not in issue_codes(agent)
    written = owner_sql("SELECT written_by FROM record_versions WHERE kind = 'gate-approval'",
                        schema=team.schema)
    assert written == [(team.roles["reviewer"],)]


def test_roles_changed_check_needs_a_reviewer(team: Team) -> None:
    """A changed check's approval by a non-reviewer is refused by the server; a reviewer's is recorded."""
    accept_first_run(team.project("agent"))
    text = (team.owner.root / "assay.toml").read_text(encoding="utf-8")
    (team.owner.root / "assay.toml").write_text(text.replace("timeout = 60", "timeout = 90"),
                                                encoding="utf-8")
    error = refused(team.project("helper"), "gate.approve", intent=[INTENT], reason="mine")
    assert (error.code, error.pointer) == ("reviewer_required", "/principal")
    assert owner_sql("SELECT count(*) FROM record_versions WHERE kind = 'gate-approval'",
                     schema=team.schema) == [(0,)]
    out = op(team.project("reviewer"), "gate.approve", intent=[INTENT], reason="slower disks")
    assert out["approvals"][0]["id"] == f"gate-approval:{INTENT}@2"


def test_roles_agent_stop_is_gated_and_recorded_as_its_role(team: Team) -> None:
    """The stop hook run as the agent's role judges its work and records the decision under that role."""
    from assay.ops import Invocation, call

    agent = team.project("agent")
    accept_first_run(agent)
    fixture = Path(__file__).parents[1] / "fixtures" / "hooks" / "claude-code" / "stop.json"
    payload = {**json.loads(fixture.read_text(encoding="utf-8")), "cwd": str(team.owner.root)}
    inv = Invocation(db=agent.db, surface="test")
    try:
        out = call("hook.stop", {"payload": payload}, inv)[0]["data"]
    finally:
        inv.close()
    assert out["decision"]["event"] == "gate_allowed"
    assert owner_sql("SELECT DISTINCT written_by FROM record_versions WHERE kind = 'gate-session'",
                     schema=team.schema) == [(team.roles["agent"],)]


def test_roles_agent_cannot_pin_or_bind_through_assay(team: Team) -> None:
    """gate pin and gate bind by a role that is neither gated nor a reviewer: reviewer_required."""
    helper = team.project("helper")
    accept_first_run(team.project("agent"))
    error = refused(helper, "gate.pin", intent=[INTENT])
    assert (error.code, error.pointer) == ("reviewer_required", "/principal")
    error = refused(helper, "gate.bind", session="s1", intent=[INTENT])
    assert (error.code, error.pointer) == ("reviewer_required", "/principal")
    op(team.project("reviewer"), "gate.pin", intent=[INTENT])
    op(team.project("reviewer"), "gate.bind", session="s1", intent=[INTENT])


# row-level security ---------------------------------------------------------------------------


def test_roles_agent_cannot_select_another_roles_private_rows(team: Team) -> None:
    """Raw SELECTs on every private table return only the project's and the role's own rows."""
    helper = team.roles["helper"]
    op(team.project("helper"), "put", id="note:secret", data={"v": 1},
       audience=f"private:{helper}", request_id="h1", link=["relates-to:note:pub"])
    op(team.project("agent"), "put", id="note:pub", data={"v": 2}, request_id="a1")
    assert team.sql("agent", "SELECT id FROM record_versions") == [("note:pub",)]
    assert team.sql("agent", "SELECT id FROM record_links") == []
    assert team.sql("agent", "SELECT request_id FROM requests") == [("a1",)]
    assert team.sql("agent", "SELECT count(*) FROM record_versions WHERE data LIKE %s",
                    ("%1%",)) == [(0,)]
    assert sorted(team.sql("helper", "SELECT id FROM record_versions")) == [
        ("note:pub",), ("note:secret",)]
    assert refused(team.project("agent"), "get", id="note:secret").code == "record_not_found"
    assert owner_sql("SELECT count(*) FROM record_versions", schema=team.schema) == [(2,)]


def test_roles_agent_cannot_write_tables_directly(team: Team) -> None:
    """INSERT, UPDATE, DELETE and TRUNCATE on the ledger's tables: permission denied."""
    import psycopg

    op(team.project("agent"), "put", id="note:pub", data={"v": 1})
    for statement in ("UPDATE record_versions SET data = '{}'",
                      "DELETE FROM record_versions",
                      "INSERT INTO requests VALUES ('x', 'r', 'b', 'note:x', 'project', 1, 1, 'd')",
                      "TRUNCATE record_links",
                      "UPDATE ledger_meta SET value = 'x'"):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            team.sql("agent", statement)
    assert owner_sql("SELECT data FROM record_versions", schema=team.schema) == [('{"v":1}',)]


# the set-up operations ------------------------------------------------------------------------------


def test_roles_grant_needs_the_owner(team: Team) -> None:
    """ledger grant run by a member role: ledger_admin_required, nothing granted."""
    error = refused(team.project("reviewer"), "ledger.grant", role=team.roles["helper"],
                    reviewer=True)
    assert error.code == "ledger_admin_required"
    roles = op(team.owner, "ledger.roles")
    assert team.roles["helper"] not in roles["groups"]["assay_reviewer"]["members"]


def test_roles_grant_refuses_unknown_role_and_missing_group(team: Team) -> None:
    """An unknown role: role_not_found at /role; neither --agent nor --reviewer: grant_group_required."""
    error = refused(team.owner, "ledger.grant", role="ar_no_such_role_x", agent=True)
    assert (error.code, error.pointer, error.exit_code) == ("role_not_found", "/role", 6)
    error = refused(team.owner, "ledger.grant", role=team.roles["agent"])
    assert (error.code, error.pointer) == ("grant_group_required", "/agent")
    error = refused(team.owner, "ledger.grant", role=team.roles["agent"], agent=True,
                    reviewer=True)
    assert (error.code, error.pointer) == ("grant_group_required", "/reviewer")


def test_roles_show_groups_members_and_session(team: Team) -> None:
    """ledger roles answers the groups with their members and the caller's standing."""
    roles = op(team.project("reviewer"), "ledger.roles")
    assert team.roles["agent"] in roles["groups"]["assay_agent"]["members"]
    assert team.roles["reviewer"] in roles["groups"]["assay_reviewer"]["members"]
    assert roles["session"] == {"role": team.roles["reviewer"], "owner": False, "reviewer": True}
    assert op(team.project("agent"), "ledger.roles")["session"]["reviewer"] is False
    assert roles["row_level_security"]["requests"] == "principal = session_user"


def test_roles_need_postgres_on_sqlite(tmp_path: Path) -> None:
    """ledger roles and ledger grant on SQLite: roles_need_postgres at /db, exit 5."""
    project = make_project(tmp_path / "p")
    for name, args in (("ledger.roles", {}), ("ledger.grant", {"role": "x", "agent": True})):
        error = refused(project, name, **args)
        assert (error.code, error.pointer, error.exit_code) == ("roles_need_postgres", "/db", 5)


def test_roles_member_cannot_migrate_an_older_ledger(team: Team) -> None:
    """A ledger at an older schema version opened by a member role: ledger_admin_required, unchanged."""
    owner_sql("UPDATE ledger_meta SET value = '3' WHERE key = 'schema_version'", schema=team.schema)
    error = refused(team.project("agent"), "ledger.info")
    assert error.code == "ledger_admin_required"
    assert owner_sql("SELECT value FROM ledger_meta WHERE key = 'schema_version'",
                     schema=team.schema) == [("3",)]
    assert op(team.owner, "ledger.info")["schema_version"] == SCHEMA_VERSION


# over MCP -------------------------------------------------------------------------------------------


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_roles_over_mcp(team: Team) -> None:
    """MCP: ledger_grant only in the admin profile; a role's server answers as the role and refuses the rest."""
    from mcp import Client

    from assay.mcp.server import build_server

    cwd = str(team.owner.root)
    helper = team.project("helper").db
    async with Client(build_server(db=helper)) as client:
        roles = await client.call_tool("ledger_roles", {"cwd": cwd})
        offered = await client.call_tool("ledger_grant", {"cwd": cwd, "role": "x", "agent": True})
    async with Client(build_server(db=helper, principal=team.roles["reviewer"])) as client:
        claimed = await client.call_tool("put", {"cwd": cwd, "id": "note:x", "data": {}})
    async with Client(build_server(db=helper, profile="admin")) as client:
        granted = await client.call_tool("ledger_grant", {"cwd": cwd, "role": team.roles["helper"],
                                                          "reviewer": True})
        approved = await client.call_tool("gate_approve", {"cwd": cwd, "gate": True,
                                                           "reason": "mine"})
    session = json.loads(roles.content[0].text)["data"]["session"]
    assert session == {"role": team.roles["helper"], "owner": False, "reviewer": False}
    errors = [json.loads(r.content[0].text)["error"] for r in (offered, claimed, granted)]
    assert [(e["code"], e.get("pointer")) for e in errors] == [
        ("tool_not_offered", None), ("principal_not_role", "/principal"),
        ("ledger_admin_required", None)]
    assert json.loads(approved.content[0].text)["ok"] is False


def test_roles_migration_adds_written_by_without_inventing_writers(pg_url: str) -> None:
    """A schema-3 ledger opened by its owner gains written_by: NULL for old versions, the role for new ones."""
    from assay.ledger import Write, open_store

    schema = pg_url.rpartition("assay_schema=")[2]
    store = open_store(pg_url)
    store.put(Write(id="note:old", data={}, scope="project:demo"))
    store.close()
    owner_sql("ALTER TABLE record_versions DROP COLUMN written_by", schema=schema)
    owner_sql("UPDATE ledger_meta SET value = '3' WHERE key = 'schema_version'", schema=schema)
    store = open_store(pg_url)
    try:
        assert store.info().schema_version == SCHEMA_VERSION
        store.put(Write(id="note:new", data={}, scope="project:demo"))
    finally:
        store.close()
    owner = owner_sql("SELECT session_user")[0][0]
    assert owner_sql("SELECT id, written_by FROM record_versions ORDER BY id", schema=schema) == [
        ("note:new", owner), ("note:old", None)]
