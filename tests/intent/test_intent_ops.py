"""Intent operations end to end: the real CLI and the registry on real SQLite ledgers."""

from __future__ import annotations

import json
from typing import Any

import pytest

from assay.errors import AssayError
from assay.intent.contract import intent_sha256
from assay.ops import Invocation, call
from assay_testing import Project


def op(project: Project, name: str, **args: Any) -> tuple[dict[str, Any], int]:
    inv = Invocation(cwd=str(project.root), surface="test")
    try:
        return call(name, args, inv)
    finally:
        inv.close()


def put(project: Project, record_id: str, data: Any, **args: Any) -> dict[str, Any]:
    return op(project, "put", id=record_id, data=data, **args)[0]["data"]


INTENT = {
    "version": 1, "brief": "Ship the export", "user_reference": "issue 7",
    "requirements": [
        {"id": "R1", "text": "CSV export", "acceptance": "Run the export test"},
        {"id": "R2", "text": "Header row", "acceptance": "Inspect the output", "parent_id": "R1"},
    ],
    "boundaries": [], "non_goals": [],
}


def accepted(*results: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"intent": INTENT, "acceptance": {"intent_sha256": intent_sha256(INTENT),
                                             "results": list(results), "blockers": []}, **extra}


def passed(rid: str, receipt: dict[str, Any]) -> dict[str, Any]:
    return {"requirement_id": rid, "status": "passed", "notes": "covers it",
            "evidence": [{"id": receipt["id"], "revision": receipt["revision"]}]}


def ready_project(project: Project) -> None:
    a = put(project, "evidence:export", {"exit": 0})
    put(project, "knowledge:export", accepted(passed("R1", a), passed("R2", a)))


def test_ops_work_check_cli_exit_one_when_not_ready(project: Project) -> None:
    """`assay work check` exits 1 with the report on stdout when not ready."""
    put(project, "knowledge:export", {"intent": INTENT})
    result = project.run("work", "check", "--", "knowledge:export")
    assert result.code == 1
    assert result.json["data"]["issues"][0]["code"] == "missing_acceptance"


def test_ops_work_check_cli_exit_zero_when_ready(project: Project) -> None:
    """`assay work check` exits 0 when ready."""
    ready_project(project)
    result = project.run("work", "check", "--", "knowledge:export")
    assert result.code == 0 and result.json["data"]["ready_to_review"] is True


def test_ops_work_check_same_revision_byte_identical(project: Project) -> None:
    """Two CLI checks at the same revision print byte-identical output."""
    ready_project(project)
    first = project.run("work", "check", "--at-revision", "2", "--", "knowledge:export")
    second = project.run("work", "check", "--at-revision", "2", "--", "knowledge:export")
    assert first.stdout == second.stdout and first.code == 0


def test_ops_work_check_at_old_revision_conflicts(project: Project) -> None:
    """--at-revision of a moved ledger is read_revision_conflict (exit 3)."""
    ready_project(project)
    put(project, "knowledge:other", {"x": 1})
    result = project.run("work", "check", "--at-revision", "2", "--", "knowledge:export")
    assert result.code == 3 and result.error["code"] == "read_revision_conflict"


def test_ops_reads_leave_ledger_bytes_unchanged(project: Project) -> None:
    """Every intent read leaves the bytes of the ledger files exactly as they were."""
    import hashlib

    ready_project(project)
    project.ok("decision", "record", "--key", "k", "--choice", "a", "--reason", "r")
    state = project.root / ".assay"

    def fingerprint() -> dict[str, str]:
        return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
                for p in sorted(state.glob("ledger.db*"))}

    before = fingerprint()
    for args in (("work", "check", "--", "knowledge:export"), ("work", "status"),
                 ("work", "history", "--", "knowledge:export"), ("work", "attention"),
                 ("work", "resume", "--", "knowledge:export"), ("decision", "show", "--", "k"),
                 ("work", "prepare-capture", "--brief", "b", "--user-reference", "u",
                  "--requirement", "R1|t|a", "--", "knowledge:new")):
        assert project.run(*args).code == 0, args
    assert fingerprint() == before


def test_ops_work_check_invalid_contract_error(project: Project) -> None:
    """An invalid intent is reported as invalid_intent_contract with its pointer on stderr."""
    put(project, "knowledge:bad", {"intent": dict(INTENT, version=2)})
    result = project.run("work", "check", "--", "knowledge:bad")
    assert result.code == 1
    assert (result.error["code"], result.error["pointer"]) == ("invalid_intent_contract",
                                                               "/data/intent/version")


def test_ops_work_check_literal_id_after_double_dash(project: Project) -> None:
    """An id such as --help after -- is read literally (and is simply not found)."""
    result = project.run("work", "check", "--", "--help")
    assert (result.code, result.error["code"]) in ((6, "intent_not_found"), (1, "invalid_id"))


def test_ops_work_check_table_renders_tree(project: Project) -> None:
    """--format table prints a readable requirement tree."""
    ready_project(project)
    result = project.run("work", "check", "--format", "table", "--", "knowledge:export")
    assert result.code == 0
    assert "R1" in result.stdout and "R2" in result.stdout and "ready" in result.stdout.lower()


def test_ops_decision_record_and_show(project: Project) -> None:
    """decision record supersedes the current head; show replays to the latest choice."""
    op(project, "decision.record", key="format", choice="csv", reason="simple")
    out, _ = op(project, "decision.record", key="format", choice="parquet", reason="typed")
    assert out["data"]["decision"]["choice"] == "parquet"
    shown = project.run("decision", "show", "--", "format")
    assert shown.code == 0 and shown.json["data"]["status"] == "resolved"
    assert len(shown.json["data"]["events"]) == 2


def test_ops_decision_record_same_content_replays(project: Project) -> None:
    """Recording the same event twice replays the first receipt."""
    op(project, "decision.record", key="k", choice="a", reason="r")
    first = op(project, "decision.record", key="k2", choice="a", reason="r")[0]["data"]
    again = op(project, "decision.record", key="k2", choice="a", reason="r",
               supersedes=[])[0]["data"]
    assert first["receipt"]["id"] == again["receipt"]["id"]
    assert again["receipt"]["replayed"] is True


def test_ops_decision_show_conflict_exits_one(project: Project) -> None:
    """Two events superseding nothing conflict; show exits 1 and names them."""
    op(project, "decision.record", key="k", choice="a", reason="r")
    op(project, "decision.record", key="k", choice="b", reason="r", supersedes=[])
    result = project.run("decision", "show", "--", "k")
    assert result.code == 1 and result.json["data"]["status"] == "conflict"


def test_ops_decision_unknown_supersedes(project: Project) -> None:
    """Superseding an event of another stream is unknown_decision_event."""
    with pytest.raises(AssayError) as info:
        op(project, "decision.record", key="k", choice="a", reason="r",
           supersedes=["decision-event:x.1"])
    assert (info.value.code, info.value.pointer) == ("unknown_decision_event", "/supersedes/0")


def test_ops_checkpoint_unchanged_writes_nothing(project: Project) -> None:
    """A second checkpoint of an unchanged projection returns the prior receipt, no revision."""
    ready_project(project)
    first = op(project, "work.checkpoint", id="knowledge:export")[0]["data"]
    put(project, "knowledge:unrelated", {"x": 1})
    revision = op(project, "ledger.info")[0]["data"]["ledger_revision"]
    second = op(project, "work.checkpoint", id="knowledge:export")[0]["data"]
    assert first["written"] is True and second["written"] is False
    assert second["receipt"]["revision"] == first["receipt"]["revision"]
    assert op(project, "ledger.info")[0]["data"]["ledger_revision"] == revision


def test_ops_checkpoint_changed_uses_new_request(project: Project) -> None:
    """A changed projection writes a new handoff revision with a new request id."""
    ready_project(project)
    first = op(project, "work.checkpoint", id="knowledge:export")[0]["data"]
    put(project, "evidence:export", {"exit": 0, "again": True})
    second = op(project, "work.checkpoint", id="knowledge:export")[0]["data"]
    assert second["written"] is True and second["receipt"]["revision"] == 2
    assert second["receipt"]["request_id"] != first["receipt"]["request_id"]
    assert second["last_good"] == second["receipt"]


def test_ops_checkpoint_pending_replayed_once(project: Project) -> None:
    """A pending attempt is replayed exactly once, then blind replay stops."""
    from assay.intent.checkpoint import journal_path

    ready_project(project)
    op(project, "work.checkpoint", id="knowledge:export")
    path = journal_path(project.root, "knowledge:export")
    journal = json.loads(path.read_text())
    journal["latest_attempt"]["status"] = "pending"
    path.write_text(json.dumps(journal))
    out = op(project, "work.checkpoint", id="knowledge:export")[0]["data"]
    assert out["recovery"]["outcome"] == "committed"
    assert out["recovery"]["receipt"]["replayed"] is True
    journal = json.loads(path.read_text())
    journal["latest_attempt"]["status"] = "pending"
    path.write_text(json.dumps(journal))
    with pytest.raises(AssayError) as info:
        op(project, "work.checkpoint", id="knowledge:export")
    assert info.value.code == "checkpoint_pending"


def test_ops_resume_view(project: Project) -> None:
    """resume renders recovery first, then mission, with literal reads."""
    put(project, "knowledge:export", {"intent": INTENT})
    out = op(project, "work.resume", id="knowledge:export")[0]["data"]
    text = out["text"]
    assert text.index("RECOVERY") < text.index("MISSION") < text.index("REQUIRED READS")
    assert out["read_required"][0]["read_args"][:2] == ["work", "check"]
    assert out["must_read_before_action"] is False


def test_ops_resume_capped_at_7000_utf16(project: Project) -> None:
    """A large intent's resume view fits 7,000 UTF-16 units and sets must_read_before_action."""
    reqs = [{"id": f"R{i}", "text": "𝒳 long text " * 30, "acceptance": "check"}
            for i in range(200)]
    put(project, "knowledge:big", {"intent": dict(INTENT, requirements=reqs)})
    out = op(project, "work.resume", id="knowledge:big")[0]["data"]
    assert out["utf16_length"] <= 7000
    assert len(out["text"].encode("utf-16-le")) // 2 == out["utf16_length"]
    assert out["must_read_before_action"] is True


def test_ops_status_lists_intents(project: Project) -> None:
    """work status lists intent records with readiness, bounded by --limit."""
    ready_project(project)
    put(project, "knowledge:second", {"intent": INTENT})
    put(project, "knowledge:plain-note", {"text": "not an intent"})
    out = op(project, "work.status", limit=1)[0]["data"]
    assert [i["id"] for i in out["intents"]] == ["knowledge:export"]
    assert out["more"] is True and out["omitted_count"] == 1


def test_ops_history_shows_readiness_over_time(project: Project) -> None:
    """work history shows each version's readiness as of its own ledger revision."""
    a = put(project, "evidence:export", {"exit": 0})
    put(project, "knowledge:export", {"intent": INTENT})
    put(project, "knowledge:export", accepted(passed("R1", a), passed("R2", a)))
    put(project, "evidence:export", {"exit": 1})
    out = op(project, "work.history", id="knowledge:export")[0]["data"]
    assert [v["ready_to_review"] for v in out["versions"]] == [True, False]
    check = op(project, "work.check", id="knowledge:export")
    assert check[1] == 1


def test_ops_attention_sections(project: Project) -> None:
    """work attention reports section coverage per intent."""
    put(project, "knowledge:export", {"intent": INTENT})
    out = op(project, "work.attention")[0]["data"]
    sections = out["intents"][0]["sections"]
    assert sections["acceptance"] == "missing" and sections["continuation"] == "absent"
    assert sections["handoff"] == "absent"


def test_ops_attention_handoff_current_then_behind(project: Project) -> None:
    """attention compares the saved handoff's signature with the current read."""
    ready_project(project)
    op(project, "work.checkpoint", id="knowledge:export")
    assert op(project, "work.attention")[0]["data"]["intents"][0]["sections"]["handoff"] == "current"
    put(project, "evidence:export", {"exit": 0, "rerun": True})
    assert op(project, "work.attention")[0]["data"]["intents"][0]["sections"]["handoff"] == "behind"


def test_ops_prepare_capture_two_guarded_saves(project: Project) -> None:
    """prepare-capture drafts two guarded puts that save cleanly in order."""
    put(project, "knowledge:note", {"text": "context"})
    draft = op(project, "work.prepare-capture", id="knowledge:new", brief="b",
               user_reference="u", requirement=["R1|Do it|Run it", "R2|Part|Check|R1"],
               associate=["R2=knowledge:note"])[0]["data"]
    before = op(project, "ledger.info")[0]["data"]["ledger_revision"]
    assert before == 1  # the draft wrote nothing
    step1, step2 = draft["saves"]
    put(project, "knowledge:new", step1["data"], expect_revision=step1["expect_revision"])
    put(project, "knowledge:new", step2["data"], expect_revision=step2["expect_revision"])
    report = op(project, "work.check", id="knowledge:new")[0]["data"]
    assert report["continuity"]["association_mode"] == "explicit"
    assert report["continuity"]["records"][0]["id"] == "knowledge:note"


def test_ops_prepare_capture_rejects_bad_draft(project: Project) -> None:
    """A draft that breaks the contract is refused with its pointer."""
    with pytest.raises(AssayError) as info:
        op(project, "work.prepare-capture", id="knowledge:new", brief="b", user_reference="u",
           requirement=["R1|a|b|R1"])
    assert info.value.pointer == "/data/intent/requirements/0/parent_id"


def test_ops_check_and_checkpoint_on_every_backend(any_project: Project) -> None:
    """Not ready, then ready, then an unchanged checkpoint, on SQLite and PostgreSQL."""
    put(any_project, "knowledge:export", {"intent": INTENT})
    assert op(any_project, "work.check", id="knowledge:export")[1] == 1
    ready_project_update(any_project)
    envelope, code = op(any_project, "work.check", id="knowledge:export")
    assert code == 0 and envelope["data"]["ready_to_review"] is True
    first = op(any_project, "work.checkpoint", id="knowledge:export")[0]["data"]
    second = op(any_project, "work.checkpoint", id="knowledge:export")[0]["data"]
    assert (first["written"], second["written"]) == (True, False)


def ready_project_update(project: Project) -> None:
    a = put(project, "evidence:export", {"exit": 0})
    put(project, "knowledge:export", accepted(passed("R1", a), passed("R2", a)),
        expect_revision=1)


def test_ops_checkpoint_rejected_attempt_not_replayed(project: Project) -> None:
    """A pending attempt that conflicts is marked rejected and never replayed again."""
    from assay.intent.checkpoint import journal_path

    ready_project(project)
    op(project, "work.checkpoint", id="knowledge:export")
    path = journal_path(project.root, "knowledge:export")
    journal = json.loads(path.read_text())
    attempt = journal["latest_attempt"]
    attempt.update(status="pending", request_id="ckpt-stale000")
    attempt["write"].update(request_id="ckpt-stale000", expect_revision=0)
    path.write_text(json.dumps(journal))
    out = op(project, "work.checkpoint", id="knowledge:export")[0]["data"]
    assert out["recovery"] == {"replayed_request_id": "ckpt-stale000", "outcome": "rejected"}
    assert out["written"] is False
    assert json.loads(path.read_text())["latest_attempt"]["status"] == "rejected"
    again = op(project, "work.checkpoint", id="knowledge:export")[0]["data"]
    assert again["recovery"] is None


def test_ops_work_check_over_mcp_matches_cli(project: Project) -> None:
    """The MCP tool work_check returns the same report the CLI prints."""
    from assay.mcp.server import invoke

    put(project, "knowledge:export", {"intent": INTENT})
    envelope, is_error = invoke("work_check", {"id": "knowledge:export", "cwd": str(project.root)})
    cli = project.run("work", "check", "--", "knowledge:export")
    assert is_error is False
    assert envelope["data"] == cli.json["data"]


def test_ops_work_check_over_mcp_error_object(project: Project) -> None:
    """An invalid intent over MCP is an error object with code and pointer."""
    from assay.mcp.server import invoke

    put(project, "knowledge:bad", {"intent": dict(INTENT, requirements=[])})
    envelope, is_error = invoke("work_check", {"id": "knowledge:bad", "cwd": str(project.root)})
    assert is_error is True
    assert envelope["error"]["code"] == "invalid_intent_contract"
    assert envelope["error"]["pointer"] == "/data/intent/requirements"


def test_ops_checkpoint_of_private_intent_is_private(project: Project) -> None:
    """A handoff derived from a private intent is private to the same principal."""
    put(project, "knowledge:secret", {"intent": INTENT}, audience="private:agent")
    out = op(project, "work.checkpoint", id="knowledge:secret")[0]["data"]
    record = op(project, "get", id=out["handoff_id"])[0]["data"]["record"]
    assert record["audience"] == "private:agent" and record["origin"] == "derived"


def test_ops_resume_reports_pending_attempt_first(project: Project) -> None:
    """A pending checkpoint attempt is the first thing the resume view says."""
    from assay.intent.checkpoint import journal_path

    ready_project(project)
    op(project, "work.checkpoint", id="knowledge:export")
    path = journal_path(project.root, "knowledge:export")
    journal = json.loads(path.read_text())
    journal["latest_attempt"]["status"] = "pending"
    path.write_text(json.dumps(journal))
    out = op(project, "work.resume", id="knowledge:export")[0]["data"]
    recovery = out["text"].split("MISSION")[0]
    assert "latest checkpoint attempt: pending" in recovery
    assert out["latest_attempt"]["status"] == "pending" and "write" not in out["latest_attempt"]


def test_ops_resume_survives_damaged_journal(project: Project) -> None:
    """A damaged local journal is reported in the resume view instead of failing it."""
    from assay.intent.checkpoint import journal_path

    ready_project(project)
    path = journal_path(project.root, "knowledge:export")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{not json")
    out = op(project, "work.resume", id="knowledge:export")[0]["data"]
    assert "checkpoint journal unreadable" in out["text"]
    assert out["must_read_before_action"] is True


def test_ops_report_write_basis_guards_a_correction(project: Project) -> None:
    """The report's write basis lets a correction commit only if nothing it read has moved."""
    ready_project(project)
    basis = op(project, "work.check", id="knowledge:export")[0]["data"]["write_basis"]
    put(project, "evidence:export", {"exit": 0, "rerun": True})
    with pytest.raises(AssayError) as info:
        put(project, "knowledge:export", {"intent": INTENT}, write_basis=basis)
    assert info.value.code == "revision_conflict"
    fresh = op(project, "work.check", id="knowledge:export")[0]["data"]["write_basis"]
    assert put(project, "knowledge:export", {"intent": INTENT}, write_basis=fresh)["revision"] == 2


def test_ops_report_write_basis_is_bound_to_its_project(project: Project) -> None:
    """A report's write basis carries its project binding; another binding is refused."""
    ready_project(project)
    basis = op(project, "work.check", id="knowledge:export")[0]["data"]["write_basis"]
    foreign = {**basis, "project": {"scope": "project:elsewhere", "admitted_scopes": []}}
    with pytest.raises(AssayError) as info:
        put(project, "knowledge:export", {"intent": INTENT}, write_basis=foreign)
    assert (info.value.code, info.value.pointer) == ("project_binding_conflict",
                                                     "/write_basis/project")
