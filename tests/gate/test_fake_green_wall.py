"""The gated agent's tricks against the stop gate, each played for real, and each refused.

One agent script per bypass: overlay a private copy of what gates it, forge or erase the gate's
state, outwait the hook behind a lock, stop from outside its project, burn the retry cap, and
plant a side file for the writers' queue. Each runs against real ledgers (both backends where a
ledger is involved), real processes holding real locks and the real ``assay`` command, and ends
blocked or refused, and recorded (or spooled, when the ledger itself is what is held). An honest
session meets none of it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from gate_helpers import (
    CLAUDE_SESSION,
    gate_project,
    give_up,
    op,
    payload,
    prove,
    ready_project,
    record_intent,
    session,
    stop,
)
from harness_reader import reads

from assay.errors import AssayError
from assay.ledger import Write, open_store
from assay.ops import Invocation, call
from assay_testing import PG_URL, Project, make_project

AGENT = "agent"  # the gated principal: the project's own principal by default
PERSON = "alice"
HOLDER = str(Path(__file__).with_name("lock_holder.py"))
LEDGER_WORKER = str(Path(__file__).parents[1] / "ledger" / "ledger_worker.py")
SCOPE = "project:demo"


@pytest.fixture(autouse=True)
def no_harness_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests name the project a hook belongs to themselves."""
    for name in ("CLAUDE_PROJECT_DIR", "CURSOR_PROJECT_DIR", "ASSAY_PRINCIPAL", "ASSAY_DB"):
        monkeypatch.delenv(name, raising=False)


def ledger_of(project: Project) -> str:
    return project.db or str(project.root / ".assay" / "ledger.db")


def spooled(project: Project) -> list[dict[str, Any]]:
    path = project.root / ".assay" / "gate-spool.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def revision(project: Project) -> int:
    return int(op(project, "ledger.info")["ledger_revision"])


def refused(project: Project, operation: str, **args: Any) -> AssayError:
    with pytest.raises(AssayError) as info:
        op(project, operation, **args)
    return info.value


def pinned_stop(project: Project, data: dict[str, Any], *, anchor: Path | None = None,
                harness: str = "claude-code") -> dict[str, Any]:
    """``hook stop --scope project`` as the installing project's harness runs it."""
    inv = Invocation(cwd=str(anchor or project.root), db=project.db, surface="test")
    try:
        out: dict[str, Any] = call("hook.stop", {"payload": data, "scope": "project",
                                                 "harness": harness}, inv)[0]["data"]
        return out
    finally:
        inv.close()


def cli_stop(project: Project, data: dict[str, Any] | bytes, *args: str,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """The real ``assay hook stop`` process, the payload on standard input."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
    full.update(env or {})
    if project.db:
        full["ASSAY_DB"] = project.db
    stdin = data if isinstance(data, bytes) else json.dumps(data).encode()
    exe = str(Path(sys.executable).with_name("assay"))
    return subprocess.run([exe, "hook", "stop", *args], cwd=project.root, input=stdin,
                          capture_output=True, env=full, timeout=120, check=False)


@contextmanager
def holding(*argv: str) -> Iterator[subprocess.Popen[str]]:
    """A child process holding a real lock until the block ends (it is killed then)."""
    proc = subprocess.Popen([sys.executable, *argv], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    try:
        assert proc.stdout.readline().strip() == "holding"
        yield proc
    finally:
        proc.kill()
        proc.communicate(timeout=30)


def pg_schema(project: Project) -> str:
    assert project.db is not None
    return project.db.rpartition("assay_schema=")[2]


# -- 5: a private overlay of what gates the stop ------------------------------------------------

@pytest.fixture
def overlaid(tmp_path: Path, ledger_url: str) -> Project:
    """The project's intent not ready, and the agent's private copy of it claiming it is."""
    project = gate_project(tmp_path / "proj", ledger_url)
    record_intent(project)
    prove(project)
    current = op(project, "get", id="knowledge:export")["record"]
    ready = current["data"]
    reopened = {k: v for k, v in ready.items() if k != "acceptance"}
    op(project, "put", id="knowledge:export", data=reopened,
       expect_revision=current["revision"], principal=PERSON)
    op(project, "put", id="knowledge:export", data=ready, audience=f"private:{AGENT}",
       principal=AGENT)
    return project


def test_wall_private_intent_copy_is_ignored_and_named(overlaid: Project) -> None:
    """The agent's private 'passed' copy reads ready in its own view; the gate judges the
    project's version, blocks, and names the copy it ignored in the reason and the record."""
    assert op(overlaid, "work.check", id="knowledge:export", principal=AGENT)["ready_to_review"]
    assert not op(overlaid, "work.check", id="knowledge:export",
                  principal=PERSON)["ready_to_review"]
    out = stop(overlaid, payload("claude-code", "stop", overlaid))
    reason = out["answer"]["reason"]
    assert out["answer"]["decision"] == "block" and out["recorded"] is True
    assert "knowledge:export is not ready for review" in reason
    assert "Ignored: private versions by agent of knowledge:export (revision 1)" in reason
    decision = session(overlaid)["data"]["decision"]
    assert decision["ignored_private"] == [
        {"id": "knowledge:export", "audience": f"private:{AGENT}", "revision": 1}]


@pytest.fixture
def bound(tmp_path: Path, ledger_url: str) -> Project:
    """The session bound by a person to knowledge:export (not ready); knowledge:other is ready."""
    project = gate_project(tmp_path / "proj", ledger_url, gate="")
    record_intent(project)
    record_intent(project, "knowledge:other")
    prove(project, "knowledge:other")
    op(project, "gate.bind", session=CLAUDE_SESSION, intent=["knowledge:export"],
       principal=PERSON)
    return project


def test_wall_private_binding_copy_is_ignored(bound: Project) -> None:
    """A private gate-binding written straight through the library (every operation refuses it)
    does not replace the person's binding: the bound intent still gates, the copy is named."""
    project = bound
    agent = open_store(ledger_of(project), base=project.root, principal=AGENT)
    try:
        agent.put(Write(id=f"gate-binding:{CLAUDE_SESSION}", scope=SCOPE,
                        audience=f"private:{AGENT}",
                        data={"schema": "assay.gate.binding.v1", "session_id": CLAUDE_SESSION,
                              "intents": ["knowledge:other"]}))
    finally:
        agent.close()
    out = stop(project, payload("claude-code", "stop", project))
    assert "knowledge:export is not ready for review" in out["answer"]["reason"]
    ignored = session(project)["data"]["decision"]["ignored_private"]
    assert {"id": f"gate-binding:{CLAUDE_SESSION}", "audience": f"private:{AGENT}",
            "revision": 1} in ignored


def test_wall_spoofed_stop_on_a_private_view_keeps_the_give_up(overlaid: Project) -> None:
    """After a give-up, a fresh stop the agent sends while its private copy reads ready is
    blocked on the project's version, and the give-up stays on the record and in work check."""
    give_up(overlaid)
    assert session(overlaid)["data"]["gave_up"] is not None
    spoof = stop(overlaid, payload("claude-code", "stop", overlaid,
                                   last_assistant_message="Done."))
    assert spoof["answer"]["decision"] == "block"
    assert session(overlaid)["data"]["gave_up"] is not None
    report = op(overlaid, "work.check", id="knowledge:export", principal=PERSON)
    assert "gate_gave_up" in [i["code"] for i in report["issues"]]


def test_wall_attest_signs_the_project_version_not_a_private_copy(overlaid: Project) -> None:
    """attest run by the agent reads the project's version: the signed verdict is not_ready."""
    op(overlaid, "key.generate")
    out = op(overlaid, "attest", intent="knowledge:export", principal=AGENT)
    assert out["verdict"] == "not_ready" and out["runs"] == []


def test_wall_store_without_principal_reads_the_project_partition_only(store: Any) -> None:
    """A handle opened without a principal never returns, finds or counts a private version."""
    store.put(Write(id="knowledge:x", data={"v": "project"}, scope=SCOPE))
    store.put(Write(id="knowledge:x", data={"v": "mine"}, scope=SCOPE,
                    audience=f"private:{AGENT}"))
    store.put(Write(id="knowledge:only-mine", data={}, scope=SCOPE,
                    audience=f"private:{AGENT}"))
    with store.reader() as reader:
        assert reader.get("knowledge:x").data == {"v": "project"}
        assert reader.get("knowledge:only-mine") is None
        assert [r.id for r in reader.find(kind="knowledge")] == ["knowledge:x"]
        assert reader.find_count(kind="knowledge") == 1
    agent = store.as_principal(AGENT)
    try:
        with agent.reader() as reader:
            assert reader.get("knowledge:x").data == {"v": "mine"}
    finally:
        agent.close()


# -- 6: forging or erasing the gate's own state ------------------------------------------------

@pytest.mark.parametrize("audience", ["project", f"private:{AGENT}"])
def test_wall_put_of_gate_session_is_refused(gave_up: Project, audience: str) -> None:
    """The agent's put of a clean gate-session record (any audience) is reserved_kind at /id,
    and nothing is written: the give-up stays."""
    before = revision(gave_up)
    error = refused(gave_up, "put", id=f"gate-session:{CLAUDE_SESSION}", audience=audience,
                    data={"schema": "assay.gate.session.v1", "gave_up": None}, principal=AGENT)
    assert (error.code, error.pointer, error.details) == ("reserved_kind", "/id",
                                                          {"kind": "gate-session"})
    assert revision(gave_up) == before
    assert session(gave_up)["data"]["gave_up"] is not None


@pytest.mark.parametrize("operation, extra", [("retire", {}),
                                              ("supersede", {"by": "note:nothing-to-see"})])
def test_wall_retire_or_supersede_of_gate_session_is_refused(gave_up: Project, operation: str,
                                                             extra: dict[str, str]) -> None:
    """Retiring or superseding the session record (which would hide gate_gave_up) is refused."""
    record_id = f"gate-session:{CLAUDE_SESSION}"
    op(gave_up, "put", id="note:nothing-to-see", data={}, principal=AGENT)
    before = revision(gave_up)
    current = session(gave_up)["revision"]
    error = refused(gave_up, operation, id=record_id, expect_revision=current,
                    principal=AGENT, **extra)
    assert (error.code, error.pointer) == ("reserved_kind", "/id")
    assert revision(gave_up) == before
    codes = [i["code"] for i in op(gave_up, "work.check", id="knowledge:export")["issues"]]
    assert "gate_gave_up" in codes


@pytest.mark.parametrize("kind", ["gate-binding", "gate-pin", "gate-approval"])
def test_wall_put_of_any_reserved_kind_is_refused(tmp_path: Path, kind: str) -> None:
    """Every kind only assay's operations write is refused to a plain put."""
    project = gate_project(tmp_path / "proj")
    error = refused(project, "put", id=f"{kind}:{CLAUDE_SESSION}", data={}, principal=PERSON)
    assert (error.code, error.pointer, error.details["kind"]) == ("reserved_kind", "/id", kind)


def test_wall_put_of_gate_state_over_the_command_line_is_refused(tmp_path: Path) -> None:
    """The same refusal from the real command, the data given in a file."""
    project = gate_project(tmp_path / "proj")
    (project.root / "forged.json").write_text('{"gave_up": null}', encoding="utf-8")
    result = project.run("put", "--data-file", "forged.json", "--",
                         f"gate-session:{CLAUDE_SESSION}")
    assert result.code == 1 and result.error["code"] == "reserved_kind"
    assert result.error["pointer"] == "/id"


def test_wall_gate_bind_by_the_gated_principal_is_refused(bound: Project) -> None:
    """The agent rebinding its own session to a ready intent is refused, naming the principal
    and what a person does; a person's binding goes through and records who bound."""
    project = bound
    error = refused(project, "gate.bind", session=CLAUDE_SESSION, intent=["knowledge:other"],
                    replace=True, principal=AGENT)
    assert (error.code, error.pointer) == ("binding_by_gated_principal", "/principal")
    assert error.details == {"principal": AGENT} and "--as NAME" in (error.action or "")
    binding = op(project, "get", id=f"gate-binding:{CLAUDE_SESSION}")["record"]["data"]
    assert binding["intents"] == ["knowledge:export"] and binding["bound_by"] == PERSON
    assert stop(project, payload("claude-code", "stop", project))["answer"] is not None


def test_wall_gate_bind_refuses_a_configured_gated_principal(tmp_path: Path) -> None:
    """With [gate] principal naming the agent, that principal is refused whatever the project's
    own principal is."""
    project = gate_project(tmp_path / "proj", gate='principal = "coder"')
    record_intent(project)
    error = refused(project, "gate.bind", session="s", intent=["knowledge:export"],
                    principal="coder")
    assert error.code == "binding_by_gated_principal"
    assert op(project, "gate.bind", session="s", intent=["knowledge:export"],
              principal=AGENT)["intents"] == ["knowledge:export"]


def test_wall_person_only_operations_are_marked_admin() -> None:
    """Binding, installing, uninstalling and answering as the hook are a person's operations (admin).

    The hook's own answers count as the gate's decisions, so the agent may not make them.
    """
    from assay.ops import lookup

    names = ("gate.bind", "hook.install", "hook.uninstall", "hook.stop", "hook.tool")
    assert [lookup(n).admin for n in names] == [True] * len(names)
    assert lookup("hook.doctor").admin is False


# -- 7: outwaiting the hook behind a lock -----------------------------------------------------

def _deadline_project(root: Path, db: str | None = None, *, cap: int = 5) -> Project:
    project = gate_project(root, db, extra=f"deadline_seconds = 3\nretry_cap = {cap}\n")
    record_intent(project)
    return project


def _answered_and_spooled(proc: subprocess.CompletedProcess[bytes], project: Project,
                          whys: tuple[str, ...]) -> dict[str, Any]:
    verdict, reason = reads(proc.returncode, proc.stdout.decode(), proc.stderr.decode())
    assert verdict == "block", (proc.stdout, proc.stderr)
    assert reason is not None and "could not" in reason
    entries = spooled(project)
    assert entries and entries[-1]["why"] in whys
    assert entries[-1]["record"] == f"gate-session:{CLAUDE_SESSION}"
    return entries[-1]


def _replayed(project: Project) -> list[dict[str, Any]]:
    """After the lock is gone, the next stop writes the spooled decisions first."""
    proc = cli_stop(project, payload("claude-code", "stop", project))
    assert reads(proc.returncode, proc.stdout.decode(), proc.stderr.decode())[0] == "block"
    assert spooled(project) == []
    history = op(project, "get", id=f"gate-session:{CLAUDE_SESSION}", history=True)["versions"]
    return [v["data"]["decision"] for v in history]


@pytest.mark.parametrize("held", ["queue", "counter", "immediate"])
def test_wall_hook_answers_while_sqlite_writes_are_held(tmp_path: Path, held: str) -> None:
    """A process holding the writers' queue, its counter's flock, or SQLite's write lock: the
    hook still answers a block before its deadline, spools the decision, and the next stop
    writes it to the ledger marked spooled."""
    project = _deadline_project(tmp_path / "proj")
    db = ledger_of(project)
    op(project, "put", id="note:warm", data={}, principal=PERSON)  # the side file exists now
    argv = {"queue": (LEDGER_WORKER, "hold", db), "counter": (HOLDER, "flock", db + "-writers"),
            "immediate": (HOLDER, "immediate", db)}[held]
    with holding(*argv):
        proc = cli_stop(project, payload("claude-code", "stop", project))
        entry = _answered_and_spooled(proc, project, ("ledger_busy", "gate_deadline"))
        assert entry["decision"]["answer"] == "block"
    decisions = _replayed(project)
    assert decisions[0]["spooled"]["why"] == entry["why"] and "spooled" not in decisions[1]


def test_wall_continuing_stops_under_a_held_ledger_are_counted(tmp_path: Path) -> None:
    """BEGIN IMMEDIATE held for good: a continuing stop is blocked too (never let through
    unrecorded), each block counted in the spool, and the run ends at the cap with a notice."""
    project = _deadline_project(tmp_path / "proj", cap=1)
    with holding(HOLDER, "immediate", ledger_of(project)):
        first = cli_stop(project, payload("claude-code", "stop", project))
        again = cli_stop(project, payload("claude-code", "stop-continuing", project))
        last = cli_stop(project, payload("claude-code", "stop-continuing", project))
    assert reads(first.returncode, first.stdout.decode(), "")[0] == "block"
    verdict, _ = reads(again.returncode, again.stdout.decode(), "")
    assert verdict == "allow" and "gave up after 1 block:" in json.loads(
        again.stdout)["systemMessage"]
    assert reads(last.returncode, last.stdout.decode(), "")[0] == "allow"
    assert [e["decision"]["event"] for e in spooled(project)] == [
        "gate_error", "gate_gave_up", "gate_allowed"]
    decisions = _replayed(project)
    assert [d["event"] for d in decisions] == ["gate_error", "gate_gave_up", "gate_allowed",
                                               "gate_blocked"]
    assert session(project)["data"]["gave_up"]["blocks"] == 1


def test_wall_hook_answers_at_its_deadline_when_the_ledger_cannot_even_open(
        tmp_path: Path) -> None:
    """A connection holding the SQLite file exclusively stalls every open for 30 s: the hook's
    own deadline answers first (gate_deadline), spooled."""
    project = _deadline_project(tmp_path / "proj")
    with holding(HOLDER, "exclusive", ledger_of(project)):
        proc = cli_stop(project, payload("claude-code", "stop", project))
        entry = _answered_and_spooled(proc, project, ("gate_deadline",))
    assert "deadline" in entry["decision"]["reason"]
    assert _replayed(project)[0]["spooled"]["why"] == "gate_deadline"


def test_wall_forged_spool_entries_never_clear_a_give_up(gave_up: Project) -> None:
    """The spool is the agent's to edit: a forged 'allowed on proof' entry is replayed as a
    spooled decision only, and the give-up stays on the record."""
    forged = {"record": f"gate-session:{CLAUDE_SESSION}", "spooled_at": "2026-01-01T00:00:00Z",
              "why": "ledger_busy", "continuing": False, "harness": "claude-code",
              "session_id": CLAUDE_SESSION, "agent_id": None,
              "decision": {"event": "gate_allowed", "answer": "allow", "reason": "all proven",
                           "intents": [{"id": "knowledge:export", "ready_to_review": True}]}}
    (gave_up.root / ".assay" / "gate-spool.jsonl").write_text(json.dumps(forged) + "\n",
                                                            encoding="utf-8")
    out = stop(gave_up, payload("claude-code", "stop", gave_up))
    assert out["answer"]["decision"] == "block"
    history = op(gave_up, "get", id=f"gate-session:{CLAUDE_SESSION}", history=True)["versions"]
    assert history[-2]["data"]["decision"]["spooled"]["why"] == "ledger_busy"
    assert history[-2]["data"]["gave_up"] is not None
    assert session(gave_up)["data"]["gave_up"]["blocks"] == 5


@pytest.mark.postgres
@pytest.mark.parametrize("held", ["advisory", "table", "access"])
def test_wall_hook_answers_while_postgres_locks_are_held(tmp_path: Path, pg_url: str,
                                                         held: str) -> None:
    """A session holding the ledger's advisory write lock, a lock on its table, or one that
    stops even reads: the hook answers a block before its deadline, spooled, replayed later."""
    project = _deadline_project(tmp_path / "proj", pg_url)
    assert PG_URL
    with holding(HOLDER, held, PG_URL, pg_schema(project)):
        proc = cli_stop(project, payload("claude-code", "stop", project))
        entry = _answered_and_spooled(proc, project, ("ledger_busy", "gate_deadline"))
    decisions = _replayed(project)
    assert decisions[0]["spooled"]["why"] == entry["why"]


@pytest.mark.postgres
def test_wall_postgres_put_behind_the_advisory_lock_is_ledger_busy(tmp_path: Path,
                                                                   pg_url: str) -> None:
    """A write waiting on a held advisory lock ends as ledger_busy (retryable), nothing written."""
    store = open_store(pg_url)
    try:
        schema = pg_url.rpartition("assay_schema=")[2]
        assert PG_URL
        with holding(HOLDER, "advisory", PG_URL, schema):
            store.busy_timeout_ms = 300  # type: ignore[attr-defined]
            with pytest.raises(AssayError) as info:
                store.put(Write(id="knowledge:late", data={}, scope=SCOPE))
        assert info.value.code == "ledger_busy" and info.value.retryable
        with store.reader() as reader:
            assert reader.get("knowledge:late") is None
    finally:
        store.close()


def test_wall_queue_counter_held_for_good_is_ledger_busy(tmp_path: Path) -> None:
    """Before, a process holding the queue counter's flock made every put wait without bound;
    now a put past its bound is ledger_busy and writes nothing."""
    db = tmp_path / "ledger.db"
    store = open_store(db)
    store.put(Write(id="knowledge:first", data={}, scope=SCOPE))
    store.close()
    with holding(HOLDER, "flock", str(db) + "-writers"):
        late = subprocess.run([sys.executable, LEDGER_WORKER, "late", str(db), "300"],
                              input="", capture_output=True, text=True, timeout=120, check=False)
    assert json.loads(late.stdout.splitlines()[0])["outcome"] == "ledger_busy"


# -- 8: stopping from outside the project -----------------------------------------------------

def test_wall_stop_from_outside_the_project_blocks_and_is_recorded(tmp_path: Path,
                                                                   ledger_url: str) -> None:
    """A project-scope hook and a stop whose cwd is elsewhere: blocked with the way back,
    recorded in the installing project's ledger."""
    project = ready_project(tmp_path / "proj", ledger_url)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = pinned_stop(project, payload("claude-code", "stop", project, cwd=str(elsewhere)))
    assert out["answer"]["decision"] == "block" and out["recorded"] is True
    assert f"This stop comes from {elsewhere}, outside the project" in out["answer"]["reason"]
    place = session(project)["data"]["decision"]["place"]
    assert place["problem"] == "outside" and place["cwd"] == str(elsewhere)


def test_wall_stop_from_a_nested_project_blocks_and_is_recorded(tmp_path: Path,
                                                                ledger_url: str) -> None:
    """The agent runs assay init in a subdirectory and stops there: blocked, and recorded in
    the project that installed the hook, not in the nested one."""
    project = ready_project(tmp_path / "proj", ledger_url)
    nested = make_project(project.root / "scratch", name="scratch")
    out = pinned_stop(project, payload("claude-code", "stop", project, cwd=str(nested.root)))
    assert out["answer"]["decision"] == "block"
    assert "a project of its own (it has an assay.toml)" in out["answer"]["reason"]
    assert session(project)["data"]["decision"]["place"]["problem"] == "nested"
    assert op(nested, "find", kind="gate-session")["count"] == 0


def test_wall_harness_project_dir_names_the_gated_project(tmp_path: Path) -> None:
    """Claude Code's CLAUDE_PROJECT_DIR names the project even when the hook runs elsewhere."""
    project = gate_project(tmp_path / "proj")
    record_intent(project)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    data = payload("claude-code", "stop", project, cwd=str(elsewhere))
    exe = str(Path(sys.executable).with_name("assay"))
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")},
           "CLAUDE_PROJECT_DIR": str(project.root)}
    proc = subprocess.run([exe, "hook", "stop", "--harness", "claude-code", "--scope",
                           "project"], cwd=elsewhere, input=json.dumps(data).encode(),
                          capture_output=True, env=env, timeout=120, check=False)
    verdict, reason = reads(proc.returncode, proc.stdout.decode(), proc.stderr.decode())
    assert verdict == "block" and reason is not None and "outside the project" in reason
    assert session(project)["revision"] == 1


def test_wall_removed_assay_toml_under_a_project_hook_blocks(tmp_path: Path) -> None:
    """The agent deletes assay.toml: a project-scope hook blocks (and spools) instead of
    finding nothing to gate."""
    project = gate_project(tmp_path / "proj")
    record_intent(project)
    (project.root / "assay.toml").unlink()
    out = pinned_stop(project, payload("claude-code", "stop", project))
    assert out["answer"]["decision"] == "block" and "no assay.toml found" in \
        out["answer"]["reason"]
    assert spooled(project)[-1]["why"] == "project_not_found"


# -- 10: burning the retry cap ----------------------------------------------------------------

def test_wall_garbage_payloads_do_not_burn_a_sessions_cap(tmp_path: Path,
                                                          ledger_url: str) -> None:
    """Six payloads that name no session use up only the shared record; the real session's
    payload, unreadable because its last message is past the input bound, is counted on a
    record of its own and blocked."""
    project = gate_project(tmp_path / "proj", ledger_url)
    record_intent(project)
    for _ in range(6):
        cli_stop(project, b"not a payload")
    assert session(project, "unreadable-payload")["data"]["run"]["gave_up"] is True
    big = json.dumps(payload("claude-code", "stop", project,
                             last_assistant_message="x" * (5 * 1024 * 1024))).encode()
    proc = cli_stop(project, big)
    verdict, reason = reads(proc.returncode, proc.stdout.decode(), proc.stderr.decode())
    assert verdict == "block" and reason is not None and "larger than" in reason
    own = session(project, f"unreadable-payload/{CLAUDE_SESSION}")["data"]
    assert own["run"] == {"blocks": 1, "gave_up": False}
    assert own["decision"]["intents"][0]["id"] == "knowledge:export"


def test_wall_unreadable_payload_records_are_bounded(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the bound of records a project keeps for unreadable payloads, more sessions share
    the one shared record."""
    from assay.gate import stop as gate_stop

    monkeypatch.setattr(gate_stop, "MAX_UNREADABLE_SESSIONS", 2)
    project = gate_project(tmp_path / "proj")
    for name in ("a", "b", "c"):
        stop(project, {"session_id": name, "hook_event_name": 5, "cwd": str(project.root)})
    ids = [r["id"] for r in op(project, "find", kind="gate-session")["records"]]
    assert ids == ["gate-session:unreadable-payload", "gate-session:unreadable-payload/a",
                   "gate-session:unreadable-payload/b"]


@pytest.mark.parametrize("harness", ["claude-code", "codex"])
def test_wall_give_up_tells_the_person(tmp_path: Path, harness: str) -> None:
    """The give-up is told to the person as a systemMessage, which the harness shows them."""
    project = gate_project(tmp_path / "proj", extra="retry_cap = 1\n")
    record_intent(project)
    cli_stop(project, payload(harness, "stop", project), "--harness", harness)
    proc = cli_stop(project, payload(harness, "stop-continuing", project), "--harness", harness)
    assert reads(proc.returncode, proc.stdout.decode(), proc.stderr.decode())[0] == "allow"
    message = json.loads(proc.stdout)["systemMessage"]
    assert "gave up after 1 block:" in message
    assert "'assay get --history -- gate-session:" in message


def test_wall_give_up_in_cursor_goes_to_standard_error(tmp_path: Path) -> None:
    """Cursor's stop answer has no field for the person: the notice goes to standard error."""
    project = gate_project(tmp_path / "proj", extra="retry_cap = 1\n")
    record_intent(project)
    cli_stop(project, payload("cursor", "stop", project), "--harness", "cursor")
    proc = cli_stop(project, payload("cursor", "stop", project, loop_count=1),
                    "--harness", "cursor")
    assert proc.returncode == 0 and proc.stdout == b""
    assert b"gave up after 1 block:" in proc.stderr


# -- 11: a side file planted for the writers' queue -------------------------------------------

@pytest.mark.parametrize("plant", ["symlink", "hardlink", "fifo", "damaged"])
def test_wall_planted_side_file_never_fails_or_redirects_a_write(tmp_path: Path,
                                                                 plant: str) -> None:
    """A symlink, a hard link, a FIFO or a damaged counter at `<ledger>-writers` (a cloned repo
    can ship one): writes commit through SQLite's own lock with a warning, exit 0, and the
    planted file is never written."""
    project = make_project(tmp_path / "proj")
    side = project.root / ".assay" / "ledger.db-writers"
    victim = tmp_path / "victim.bin"
    victim.write_bytes(b"ABCDEFGH-keep-me")
    if plant == "symlink":
        os.symlink(victim, side)
    elif plant == "hardlink":
        os.link(victim, side)
    elif plant == "fifo":
        os.mkfifo(side)
    else:
        side.write_bytes(b"\xff" * 8)
    for name in ("a", "b"):
        result = project.run("put", "--data-file", "-", "--", f"note:{name}", input="{}",
                             timeout=60)
        assert result.code == 0, result.stderr
        assert "writes wait on SQLite's own lock instead" in result.stderr
    assert victim.read_bytes() == b"ABCDEFGH-keep-me"
    if plant == "damaged":
        assert side.read_bytes() == b"\xff" * 8
    assert op(project, "ledger.info")["ledger_revision"] == 2


# -- an honest session ------------------------------------------------------------------------

def test_wall_honest_session_is_never_blocked(tmp_path: Path, ledger_url: str) -> None:
    """A person binds the session, the agent works in a subdirectory and proves its work in the
    project: the project-scope hook lets it stop, recorded, with nothing ignored or told."""
    project = gate_project(tmp_path / "proj", ledger_url, gate="")
    record_intent(project)
    op(project, "gate.bind", session=CLAUDE_SESSION, intent=["knowledge:export"],
       principal=PERSON)
    prove(project)
    work = project.root / "src"
    work.mkdir()
    out = pinned_stop(project, payload("claude-code", "stop", project, cwd=str(work)))
    assert out["answer"] is None and out["notice"] is None and out["recorded"] is True
    assert out["decision"]["event"] == "gate_allowed"
    decision = session(project)["data"]["decision"]
    assert "ignored_private" not in decision and "place" not in decision
    assert spooled(project) == []
