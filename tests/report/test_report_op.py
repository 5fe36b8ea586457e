"""The report operation: one snapshot in, one self-contained HTML file out (no browser)."""

from __future__ import annotations

from pathlib import Path

import pytest
from report_helpers import (
    HOSTILE,
    hostile_project,
    mixed_project,
    op,
    put_intent,
    reviewer_project,
)

from assay.errors import AssayError
from assay_testing import make_project


def test_report_same_revision_is_byte_identical(tmp_path: Path) -> None:
    """Two reports of the same ledger revision are the same bytes."""
    project = mixed_project(tmp_path / "p")
    first = op(project, "report", {"intent": "knowledge:limit", "out": str(tmp_path / "a.html")})
    second = op(project, "report", {"intent": "knowledge:limit", "out": str(tmp_path / "b.html")})
    assert first["ledger_revision"] == second["ledger_revision"]
    assert (tmp_path / "a.html").read_bytes() == (tmp_path / "b.html").read_bytes()
    assert first["sha256"] == second["sha256"]


def test_report_reviewer_page_same_revision_is_byte_identical(tmp_path: Path,
                                                               ledger_url: str) -> None:
    """With per-test results, observed workspaces and shared notes, one revision gives one page."""
    project = reviewer_project(tmp_path / "p", db=ledger_url)
    first = op(project, "report", {"intent": "knowledge:review", "out": str(tmp_path / "a.html")})
    second = op(project, "report", {"intent": "knowledge:review", "out": str(tmp_path / "b.html")})
    assert first["ledger_revision"] == second["ledger_revision"]
    assert (tmp_path / "a.html").read_bytes() == (tmp_path / "b.html").read_bytes()


def test_report_run_outside_git_says_no_commit_was_observed(tmp_path: Path) -> None:
    """A cited run in a project that is no git work tree says so, instead of a commit and digest."""
    project = mixed_project(tmp_path / "p")
    op(project, "report", {"intent": "knowledge:limit", "out": str(tmp_path / "r.html")})
    text = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "no git commit observed (not a git work tree)" in text
    assert 'data-key="workspace sha256"' not in text


def test_report_new_revision_changes_the_page(tmp_path: Path) -> None:
    """A write to the ledger shows in the next report's revision."""
    project = mixed_project(tmp_path / "p")
    first = op(project, "report", {"intent": "knowledge:limit", "out": str(tmp_path / "a.html")})
    op(project, "put", {"id": "knowledge:other", "data": {"x": 1}})
    second = op(project, "report", {"intent": "knowledge:limit", "out": str(tmp_path / "b.html")})
    assert second["ledger_revision"] == first["ledger_revision"] + 1
    assert f'id="ledger-revision">{second["ledger_revision"]}<' in (
        tmp_path / "b.html").read_text(encoding="utf-8")


def test_report_escapes_record_text(tmp_path: Path) -> None:
    """Markup from records and command output appears only escaped in the HTML source."""
    project = hostile_project(tmp_path / "p")
    op(project, "report", {"intent": "knowledge:hostile", "out": str(tmp_path / "r.html")})
    text = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert HOSTILE not in text
    assert "<img src=x" not in text
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in text
    assert text.count("<script>") == 1  # the page's own, allowed by its hash only


def test_report_has_no_external_reference(tmp_path: Path) -> None:
    """The page references no URL: no src/href to the network, and a CSP of default-src 'none'."""
    project = mixed_project(tmp_path / "p")
    op(project, "report", {"intent": "knowledge:limit", "out": str(tmp_path / "r.html")})
    text = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "default-src 'none'" in text
    assert "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in text
    assert 'src="' not in text


def test_report_without_subject_is_missing_argument(tmp_path: Path) -> None:
    """A report naming no intent, loop or packet is refused and writes nothing."""
    project = make_project(tmp_path / "p")
    with pytest.raises(AssayError) as caught:
        op(project, "report", {"out": str(tmp_path / "r.html")})
    assert caught.value.code == "missing_argument"
    assert caught.value.pointer == "/intent"
    assert not (tmp_path / "r.html").exists()


def test_report_unknown_loop_is_session_not_found(tmp_path: Path) -> None:
    """A loop id with no loop behind it is session_not_found."""
    project = make_project(tmp_path / "p")
    with pytest.raises(AssayError) as caught:
        op(project, "report", {"loop": "nope", "out": str(tmp_path / "r.html")})
    assert caught.value.code == "session_not_found"
    assert not (tmp_path / "r.html").exists()


def test_report_withheld_when_a_source_fails_the_gate(tmp_path: Path) -> None:
    """An intent derived from a version that does not match its pinned digest is withheld."""
    from assay.intent.contract import intent_sha256
    from assay.ledger import open_store
    from assay.ledger.store import SourceRef, Write

    project = make_project(tmp_path / "p")
    op(project, "put", {"id": "knowledge:base", "data": {"text": "v1"}})
    intent = {"version": 1, "brief": "b", "user_reference": "u", "boundaries": [],
              "non_goals": [], "requirements": [{"id": "R1", "text": "t", "acceptance": "a"}]}
    store = open_store(project.root / ".assay" / "ledger.db")
    try:
        store.put(Write(id="knowledge:derived", scope="project:demo",
                        data={"intent": intent, "acceptance": {
                            "intent_sha256": intent_sha256(intent), "results": [],
                            "blockers": []}},
                        sources=(SourceRef("knowledge:base", 1, "0" * 64),)))
    finally:
        store.close()
    with pytest.raises(AssayError) as caught:
        op(project, "report", {"intent": "knowledge:derived", "out": str(tmp_path / "r.html")})
    assert caught.value.code == "publication_withheld"
    assert caught.value.details["reason"] == "provenance_invalid"
    assert not (tmp_path / "r.html").exists()


def test_report_retired_evidence_is_named_not_shown(tmp_path: Path) -> None:
    """A cited record that was retired is listed as unavailable, and the page is still written."""
    project = make_project(tmp_path / "p")
    note = op(project, "put", {"id": "knowledge:note", "data": {"text": "SECRET-BODY"}})
    intent = {"version": 1, "brief": "b", "user_reference": "u", "boundaries": [],
              "non_goals": [], "requirements": [{"id": "R1", "text": "t", "acceptance": "a"}]}
    put_intent(project, "knowledge:i", intent, [
        {"requirement_id": "R1", "status": "passed", "notes": "see note",
         "evidence": [{"id": note["id"], "revision": note["revision"]}]}])
    op(project, "retire", {"id": "knowledge:note", "expect_revision": note["revision"]})
    data = op(project, "report", {"intent": "knowledge:i", "out": str(tmp_path / "r.html")})
    text = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert data["ready_to_review"] is False
    assert "SECRET-BODY" not in text
    assert "the record is retired" in text
    assert 'data-code="evidence_retired"' in text


def test_report_cli_default_path_and_json_on_a_pipe(tmp_path: Path) -> None:
    """`assay report --intent ID` on a pipe prints one JSON envelope and writes .assay/report.html."""
    project = mixed_project(tmp_path / "p")
    ran = project.run("report", "--intent", "knowledge:limit")
    assert ran.code == 0, ran.stderr
    data = ran.json["data"]
    assert data["path"] == str(project.root / ".assay" / "report.html")
    assert Path(data["path"]).stat().st_size == data["bytes"]
    assert data["ready_to_review"] is False and data["sections"] == ["intent"]


def test_report_render_without_intent_says_not_assessed() -> None:
    """A page without an intent says readiness is not assessed, in words."""
    from assay.report.html import render

    text = render({"ledger": {"revision": 1, "epoch": "e"}, "project": {"scope": "project:x"},
                   "intent": None, "loop": None, "packet": None})
    assert 'data-ready="unknown"' in text
    assert "readiness not assessed" in text


def test_report_unwritable_out_is_a_coded_error(tmp_path: Path) -> None:
    """An --out under a plain file is report_unwritable at /out, and no temporary file is left."""
    project = mixed_project(tmp_path / "p")
    blocker = tmp_path / "file.txt"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(AssayError) as caught:
        op(project, "report", {"intent": "knowledge:limit", "out": str(blocker / "r.html")})
    assert caught.value.code == "report_unwritable"
    assert caught.value.pointer == "/out"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt", "p"]


def test_report_packet_outside_a_project(tmp_path: Path) -> None:
    """A packet-only report needs no project: it writes report.html beside the caller, no ledger."""
    from assay.ops import Invocation, call

    (tmp_path / "pkt").mkdir()
    inv = Invocation(cwd=str(tmp_path), surface="test")
    try:
        envelope, code = call("report", {"packet": "pkt"}, inv)
    finally:
        inv.close()
    data = envelope["data"]
    assert code == 0 and "ledger_revision" not in envelope
    assert data["path"] == str(tmp_path / "report.html")
    assert data["ledger_revision"] is None and data["sections"] == ["packet"]
    text = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert 'data-valid="false"' in text and 'data-code="MISSING_FILE"' in text
    assert "no ledger (a packet outside any project)" in text


def test_report_intent_outside_a_project_is_project_not_found(tmp_path: Path) -> None:
    """An intent report outside any project is project_not_found and writes nothing."""
    from assay.ops import Invocation, call

    inv = Invocation(cwd=str(tmp_path), surface="test")
    try:
        with pytest.raises(AssayError) as caught:
            call("report", {"intent": "knowledge:x", "packet": "."}, inv)
    finally:
        inv.close()
    assert caught.value.code == "project_not_found"
    assert list(tmp_path.iterdir()) == []


def test_report_active_loop_shows_the_rejected_attempt(tmp_path: Path) -> None:
    """A success claim the contract's test contradicts appears as a rejected attempt of the held round."""
    import json

    from report_helpers import evaluation, loop_project

    project = loop_project(tmp_path / "p")
    started = op(project, "loop.start", {"task": "Fix calc.add", "loop": "fix",
                                         "criterion": ["add(2, 3) == 5"]})
    r1 = op(project, "loop.next", {"handle": json.dumps(started["submissionHandle"]),
                                   "evaluation": evaluation("partial", True, round_contract={
                                       "work_item": "calc.add adds", "items": [
                                           {"description": "the test passes",
                                            "verify_with": ["unit"]}]})})
    claim = op(project, "loop.next", {"handle": json.dumps(r1["submissionHandle"]),
                                      "evaluation": evaluation("success", False)})
    assert claim["accepted"] is False and claim["status"] == "active"
    op(project, "report", {"loop": "fix", "out": str(tmp_path / "r.html")})
    text = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert '<tr class="rejection" data-round="2" data-attempt="1" data-claimed="success" ' \
           'data-observed="contradicted">' in text
    assert text.count('<tr class="round"') == 1
    assert "1 committed round(s), 1 rejected attempt(s); <strong>active (round 2 held)" in text
