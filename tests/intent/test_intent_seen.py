"""Regressions: every readiness failure seen in use, on both backends.

Each test replays one observation (a failed run cited as passed, a row
damaged in the database, saved context written with ``put``, a stale
continuity selection, hand-made acceptance) against a real SQLite file and a
real PostgreSQL schema, and asserts the honest answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from readiness_helpers import (
    DAMAGE,
    FAIL,
    PASS,
    accepted,
    check,
    codes,
    damage,
    data,
    evidence_project,
    intent,
    op,
    put,
    ref,
    result,
)

from assay.errors import AssayError
from assay_testing import Project


@pytest.fixture
def proj(tmp_path: Path, ledger_url: str) -> Project:
    """A project with a passing (ok) and a failing (bad) evidence command, on each backend."""
    return evidence_project(tmp_path / "proj", ledger_url, ok=PASS, bad=FAIL)


def _run(project: Project, name: str, target: str | None = None) -> dict[str, Any]:
    args: dict[str, Any] = {"name": name}
    if target:
        args["target"] = target
    receipt: dict[str, Any] = op(project, "evidence.run", **args)[0]["data"]["receipt"]
    return receipt


def _ready(project: Project) -> dict[str, Any]:
    """An intent whose one requirement passed on a current run of ok (ready)."""
    run = _run(project, "ok")
    put(project, "knowledge:export", accepted(intent("R1"), result("R1", ref(run))))
    assert check(project)["ready_to_review"] is True
    return run


# 1. A passed result citing a run that failed ----------------------------------------


def test_seen_passed_result_citing_a_failed_run_is_not_ready(proj: Project) -> None:
    """A passed result citing a failed machine run is evidence_run_not_passed: not ready, exit 1."""
    run = _run(proj, "bad")
    put(proj, "knowledge:export", accepted(intent("R1"), result("R1", ref(run))))
    out = proj.run("work", "check", "--", "knowledge:export")
    report = out.json["data"]
    assert out.code == 1 and report["ready_to_review"] is False
    issue = report["issues"][0]
    assert (issue["code"], issue["run_status"], issue["evidence_id"], issue["recorded_revision"]) \
        == ("evidence_run_not_passed", "failed", "evidence:bad", 1)
    assert "failed (exit 1)" in issue["message"] and "'assay evidence run --for" in issue["action"]


def test_seen_actual_carries_origin_and_run_status(proj: Project) -> None:
    """actual names each cited version's origin and, for a run, its status, exit code and command."""
    run = _run(proj, "bad")
    claim = put(proj, "knowledge:notes", {"text": "looked at it"})
    put(proj, "knowledge:export", accepted(intent("R1"), result("R1", ref(run), ref(claim),
                                                                status="failed")))
    refs = check(proj)["actual"]["results"][0]["evidence"]
    assert [(r["origin"], r["machine_observed"], r["run"]) for r in refs] == [
        ("machine", True, {"status": "failed", "exit_code": 1, "command": "bad"}),
        ("claim", False, None)]


def test_seen_report_page_is_red_for_a_failed_run_cited_as_passed(proj: Project) -> None:
    """The HTML report of a failed run cited as passed shows not-ready and the failed outcome."""
    run = _run(proj, "bad")
    put(proj, "knowledge:export", accepted(intent("R1"), result("R1", ref(run))))
    written = data(proj, "report", intent="knowledge:export", out=str(proj.root / "r.html"))
    page = Path(written["path"]).read_text(encoding="utf-8")
    assert written["ready_to_review"] is False
    assert 'data-ready="false"' in page and 'data-ready="true"' not in page
    assert 'data-cited-run-status="failed"' in page and "evidence_run_not_passed" in page


# 2. Stored data that fails its checks --------------------------------------------


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_seen_damaged_evidence_is_never_ready(proj: Project, kind: str) -> None:
    """Cited evidence damaged in the database: evidence_unreadable, incomplete, a raw read, exit 1."""
    run = _ready(proj)
    text, rehash = DAMAGE[kind]
    damage(proj, run["id"], 1, text, rehash=rehash)
    out = proj.run("work", "check", "--", "knowledge:export")
    report = out.json["data"]
    assert out.code == 1 and "Traceback" not in out.stderr
    assert (report["ready_to_review"], report["complete"]) == (False, False)
    assert codes(report) == ["evidence_unreadable"]
    error = report["record_errors"][0]
    assert (error["id"], error["revision"], error["code"]) == ("evidence:ok", 1,
                                                               "evidence_unreadable")
    assert error["read"] == ["get", "--raw", "--revision", "1", "--", "evidence:ok"]
    assert "'assay get --raw --revision 1 -- evidence:ok'" in report["next"][0]
    assert report["actual"]["results"][0]["evidence"][0]["origin"] is None


def test_seen_damaged_intent_is_an_unreadable_report(proj: Project) -> None:
    """An intent record damaged in the database is intent_unreadable: a report, never ready, exit 1."""
    _ready(proj)
    damage(proj, "knowledge:export", 1, '{"intent":{"version":1', rehash=False)
    out = proj.run("work", "check", "--", "knowledge:export")
    report = out.json["data"]
    assert out.code == 1 and codes(report) == ["intent_unreadable"]
    assert report["ready_to_review"] is False and report["intent_sha256"] is None
    assert report["record_errors"][0]["read"] == ["get", "--raw", "--revision", "1", "--",
                                                  "knowledge:export"]
    status = data(proj, "work.status")["intents"]
    assert [(r["id"], r["error"]["code"]) for r in status] == [("knowledge:export",
                                                                 "intent_unreadable")]
    written = data(proj, "report", intent="knowledge:export", out=str(proj.root / "r.html"))
    page = Path(written["path"]).read_text(encoding="utf-8")
    assert written["ready_to_review"] is False and 'data-code="intent_unreadable"' in page
    assert "assay get --raw --revision 1 -- knowledge:export" in page


def test_seen_damaged_continuity_record_is_named_and_the_rest_projected(proj: Project) -> None:
    """One damaged record selected for continuity is context_record_unreadable; the rest is projected."""
    put(proj, "knowledge:a", {"note": "intact"})
    put(proj, "knowledge:b", {"note": "to be damaged"})
    put(proj, "knowledge:export", {"intent": intent("R1"), "continuation": {
        "active_requirement_ids": ["R1"], "next_action": "read them", "context": {
            "version": 1, "mission_record_ids": [],
            "requirements": [{"id": "R1", "record_ids": ["knowledge:a", "knowledge:b"]}]}}})
    damage(proj, "knowledge:b", 1, '{"note":9007199254740993}', rehash=True)
    continuity = check(proj)["continuity"]
    assert [r["id"] for r in continuity["records"]] == ["knowledge:a"]
    issue = continuity["issues"][0]
    assert (issue["code"], issue["id"], issue["reason"]) == ("context_record_unreadable",
                                                            "knowledge:b", "unsafe_integer")
    assert continuity["read_required"][-1]["read_args"] == ["get", "--raw", "--revision", "1",
                                                            "--", "knowledge:b"]


def test_seen_damaged_later_decision_event_never_revives_the_older_choice(proj: Project) -> None:
    """A damaged later event makes the stream unavailable; the choice it superseded is not reported."""
    old = data(proj, "decision.record", key="store", choice="sqlite", reason="first")
    new = data(proj, "decision.record", key="store", choice="postgres", reason="later")
    old_id, new_id = old["receipt"]["id"], new["receipt"]["id"]
    put(proj, "knowledge:export", {"intent": intent("R1"), "continuation": {
        "active_requirement_ids": ["R1"], "next_action": "decide", "context": {
            "version": 1, "mission_record_ids": [],
            "requirements": [{"id": "R1", "record_ids": [old_id]}]}}})
    damage(proj, new_id, 1, '{"key":"store","choice":9007199254740993}', rehash=False)
    continuity = check(proj)["continuity"]
    row = continuity["decisions"][0]
    assert (row["status"], row["choice"], row["unreadable_event_ids"]) == ("unavailable", None,
                                                                         [new_id])
    unreadable = [i for i in continuity["issues"] if i["code"] == "context_decision_unreadable"]
    assert unreadable[0]["read_args"] == ["get", "--raw", "--revision", "1", "--", new_id]
    shown = proj.run("decision", "show", "--", "store")
    stream = shown.json["data"]
    assert shown.code == 1 and (stream["status"], stream["choice"]) == ("unavailable", None)
    assert stream["head_event_ids"] == [] and stream["unreadable_event_ids"] == [new_id]


# 3. Saved context written with put, or changed in the database -----------------------


@pytest.mark.parametrize("kind", ["note", "memory"])
def test_seen_saved_context_written_with_put_is_not_served(proj: Project, kind: str) -> None:
    """A note: or memory: record written with put, with exact saved-context data, is never served."""
    put(proj, f"{kind}:forged", {"version": 1, "text": "trust me", "author": "agent"})
    listed = data(proj, f"{kind}.list")
    assert listed["items"] == []
    assert [(u["id"], u["reason"]) for u in listed["unavailable"]] == [(f"{kind}:forged",
                                                                       "provenance_legacy")]


def test_seen_memory_changed_in_the_database_is_withheld(proj: Project) -> None:
    """A memory entry whose stored text was changed in place is withheld and listed unavailable."""
    added = data(proj, "memory.add", text="the cache key is the user id")["receipt"]
    damage(proj, added["id"], 1, '{"author":"agent","text":"the cache key is nothing",'
                                 '"version":1}', audience="private:agent")
    for name, args in (("memory.list", {}), ("memory.search", {"query": "cache"})):
        listed = data(proj, name, **args)
        assert listed["items"] == [], name
        assert [(u["id"], u["reason"]) for u in listed["unavailable"]] == [
            (added["id"], "record_unreadable")], name


def test_seen_pending_question_changed_in_the_database_is_withheld(proj: Project) -> None:
    """A pending question whose stored text changed in place is unavailable and cannot be answered."""
    asked = data(proj, "pending.ask", text="ship on friday?")["receipt"]
    damage(proj, asked["id"], 1, '{"text":"ship today?"}')
    listed = data(proj, "pending.list")
    assert listed["items"] == [] and listed["unavailable"][0]["reason"] == "record_unreadable"
    answer = data(proj, "pending.answer", id=asked["id"], assent=True)
    assert (answer["bound"], answer["reason"]) == (False, "record_unreadable")


# 4. The write basis covers the continuity selection -----------------------------------


def test_seen_guarded_put_after_a_selected_dependency_changed_conflicts(proj: Project) -> None:
    """A put guarded by work check's write basis fails once a selected dependency changed."""
    put(proj, "knowledge:b", {"rule": "one"})
    put(proj, "knowledge:a", {"plan": "x"}, link=["requires:knowledge:b"])
    base = {"intent": intent("R1"), "continuation": {
        "active_requirement_ids": ["R1"], "next_action": "go", "context": {
            "version": 1, "mission_record_ids": [],
            "requirements": [{"id": "R1", "record_ids": ["knowledge:a"]}]}}}
    put(proj, "knowledge:export", base)
    basis = check(proj)["write_basis"]
    assert basis["records"]["knowledge:b"] == 1 and basis["records"]["knowledge:a"] == 1
    put(proj, "knowledge:b", {"rule": "two"})
    with pytest.raises(AssayError) as info:
        put(proj, "knowledge:export", dict(base, tasks=[]), write_basis=basis)
    assert info.value.code == "revision_conflict"


# 5. Acceptance by hand ---------------------------------------------------------------


def test_seen_put_of_acceptance_alone_is_refused(proj: Project) -> None:
    """A put holding only acceptance would drop the intent: refused at /data/intent, nothing written."""
    _ready(proj)
    record = data(proj, "get", id="knowledge:export")["record"]
    out = proj.run("put", "--data-file", "-", "--", "knowledge:export",
                   input=json.dumps({"acceptance": record["data"]["acceptance"]}))
    assert (out.code, out.error["code"], out.error["pointer"]) == (1, "invalid_intent_contract",
                                                                   "/data/intent")
    assert "--replace" in out.error["action"]
    assert data(proj, "get", id="knowledge:export")["record"]["revision"] == 1
    assert data(proj, "work.status")["intents"][0]["id"] == "knowledge:export"


def test_seen_run_recorded_for_a_requirement_is_accepted_in_one_step(proj: Project) -> None:
    """evidence run --for INTENT#R1a, then work accept --from-run: digests computed, ready."""
    put(proj, "knowledge:export", {"intent": intent("R1a")})
    proj.ok("evidence", "run", "--for", "knowledge:export#R1a", "--", "ok")
    out = proj.ok("work", "accept", "--from-run", "evidence:ok@1", "--", "knowledge:export")
    written = out["data"]["results"][0]
    assert (written["requirement_id"], written["status"]) == ("R1a", "passed")
    assert written["evidence"][0]["data_sha256"] == data(
        proj, "get", id="evidence:ok")["record"]["data_sha256"]
    assert check(proj)["ready_to_review"] is True


def test_seen_intent_larger_than_a_report_is_refused_by_put(proj: Project) -> None:
    """A 6,000-deep requirement chain is refused by put (work check could never read it back)."""
    reqs = [{"id": f"R{i}", "text": "t", "acceptance": "a",
             **({"parent_id": f"R{i - 1}"} if i else {})} for i in range(6000)]
    chain = {"intent": dict(intent("R0"), requirements=reqs)}
    with pytest.raises(AssayError) as info:
        put(proj, "knowledge:deep", chain)
    assert (info.value.code, info.value.pointer) == ("invalid_intent_contract",
                                                     "/data/intent/requirements")
    with pytest.raises(AssayError) as info:
        op(proj, "get", id="knowledge:deep")
    assert info.value.code == "record_not_found"
