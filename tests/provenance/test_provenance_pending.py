"""Pending decisions: an answer or a bare assent binds only to context that still holds."""

from __future__ import annotations

from typing import Any

import pytest
from provenance_helpers import SCOPE, access, as_principal, current, put, retire

from assay.errors import AssayError
from assay.ledger.store import SourceRef
from assay.provenance import pending


def ask(store: Any, *sources: str, who: str = "alice", kind: str = "question") -> str:
    refs = [SourceRef(s.rpartition("@")[0], int(s.rpartition("@")[2])) for s in sources]
    with as_principal(store, who) as handle:
        out = pending.ask(handle, access(who), text="ship the rate limit at 5/min?", scope=SCOPE,
                          kind=kind, sources=refs)
    return str(out["receipt"]["id"])


def test_pending_ask_stores_its_input_envelope(store: Any) -> None:
    """The pending record keeps the envelope of the context the question was derived from."""
    src = put(store, "knowledge:limit", {"per_minute": 5})
    record = current(store, ask(store, "knowledge:limit@1"))
    env = record.data["envelope"]
    assert env["status"] == "known"
    assert env["leaves"] == [{"id": "knowledge:limit", "revision": 1,
                              "data_sha256": src.data_sha256, "audience": "project"}]
    assert record.data["state"] == "open"


def test_pending_answer_binds_when_context_still_holds(store: Any) -> None:
    """With every source current, an answer is bound and the pending record is answered."""
    put(store, "knowledge:limit", {"per_minute": 5})
    pid = ask(store, "knowledge:limit@1", kind="proposal")
    out = pending.answer(store, access("bob"), pending_id=pid, assent=True)
    assert out["bound"] is True
    assert current(store, pid).data["state"] == "answered"
    answer = current(store, out["answer"]["id"])
    assert answer.data["assent"] is True and answer.links[0].target == pid


def test_pending_bare_assent_cannot_bind_to_revoked_context(store: Any) -> None:
    """After a source is retired, a bare assent is unbound and nothing is written."""
    put(store, "knowledge:limit", {"per_minute": 5})
    pid = ask(store, "knowledge:limit@1", kind="proposal")
    retire(store, "knowledge:limit")
    with store.reader() as reader:
        before = reader.ledger_revision
    out = pending.answer(store, access("alice"), pending_id=pid, assent=True)
    assert (out["bound"], out["reason"]) == (False, "source_retired")
    with store.reader() as reader:
        assert reader.ledger_revision == before


def test_pending_text_answer_cannot_reintroduce_revoked_context(store: Any) -> None:
    """A free-text answer to a question over a changed source is unbound as well."""
    put(store, "knowledge:limit", {"per_minute": 5})
    pid = ask(store, "knowledge:limit@1")
    put(store, "knowledge:limit", {"per_minute": 50})
    out = pending.answer(store, access("alice"), pending_id=pid, text="yes, go ahead")
    assert (out["bound"], out["reason"]) == (False, "source_modified")
    assert current(store, pid).data["state"] == "open"


def test_pending_answer_revalidates_after_revocation_during_check(store: Any) -> None:
    """A source retired while the answer's gate runs leaves the decision unbound."""
    put(store, "knowledge:limit", {"per_minute": 5})
    pid = ask(store, "knowledge:limit@1")
    out = pending.answer(store, access("alice"), pending_id=pid, assent=True,
                         during=lambda attempt: retire(store, "knowledge:limit")
                         if attempt == 1 else None)
    assert (out["bound"], out["reason"]) == (False, "source_retired")
    assert out["gate"]["attempts"] == 2


def test_pending_answer_without_stored_envelope_is_unavailable(store: Any) -> None:
    """A pending record written by hand (no envelope) cannot bind an answer: provenance_legacy."""
    put(store, "pending:by-hand", {"text": "ok?", "state": "open"})
    out = pending.answer(store, access("alice"), pending_id="pending:by-hand", assent=True)
    assert (out["bound"], out["reason"]) == (False, "provenance_legacy")


def test_pending_answer_twice_is_closed(store: Any) -> None:
    """An answered decision cannot be answered again."""
    pid = ask(store)
    pending.answer(store, access("alice"), pending_id=pid, text="yes")
    with pytest.raises(AssayError) as caught:
        pending.answer(store, access("alice"), pending_id=pid, text="yes again")
    assert (caught.value.code, caught.value.pointer) == ("pending_closed", "/id")


def test_pending_answer_needs_text_or_assent_not_both(store: Any) -> None:
    """Text and --assent together (or neither) is invalid_answer."""
    pid = ask(store)
    for kw in ({"text": "yes", "assent": True}, {}):
        with pytest.raises(AssayError) as caught:
            pending.answer(store, access("alice"), pending_id=pid, **kw)
        assert (caught.value.code, caught.value.pointer) == ("invalid_answer", "/text")


def test_pending_private_question_of_another_is_not_found(store: Any) -> None:
    """A question derived from alice's private record is private to her: bob cannot answer it."""
    put(store, "knowledge:mine", {"v": 1}, audience="private:alice")
    pid = ask(store, "knowledge:mine@1")
    with as_principal(store, "bob") as bob, pytest.raises(AssayError) as caught:
        pending.answer(bob, access("bob"), pending_id=pid, assent=True)
    assert (caught.value.code, caught.value.pointer) == ("record_not_found", "/id")


def test_pending_cli_assent_withheld_exits_one(project: Any) -> None:
    """On the CLI an unbound answer is exit status 1 with the reason in the data."""
    project.ok("put", "--data-file", "-", "--", "knowledge:k", input='{"v":1}')
    pid = project.ok("pending", "ask", "--proposal", "--source", "knowledge:k@1", "--",
                     "use k?")["data"]["receipt"]["id"]
    project.ok("retire", "--expect-revision", "1", "--", "knowledge:k")
    result = project.run("pending", "answer", "--id", pid, "--assent")
    assert result.code == 1
    assert result.json["data"]["bound"] is False
    assert result.json["data"]["reason"] == "source_retired"


def test_pending_list_shows_open_decisions_and_omits_revoked_ones(store: Any) -> None:
    """Open decisions are listed; one over a retired source is an unavailable line; answered ones wait for --state."""
    from provenance_helpers import put as put_record

    put_record(store, "knowledge:a", {"v": 1})
    put_record(store, "knowledge:b", {"v": 1})
    over_a = ask(store, "knowledge:a@1")
    over_b = pending.ask(store, access("alice"), text="and b?", scope=SCOPE,
                         sources=[SourceRef("knowledge:b", 1)])["receipt"]["id"]
    answered = pending.ask(store, access("alice"), text="done?", scope=SCOPE)["receipt"]["id"]
    pending.answer(store, access("alice"), pending_id=answered, assent=True)
    retire(store, "knowledge:a")
    with store.reader() as reader:
        open_now = pending.list_pending(reader, access("alice"))
        everything = pending.list_pending(reader, access("alice"), state="any")
    assert [i["id"] for i in open_now["items"]] == [over_b]
    assert [(u["id"], u["reason"]) for u in open_now["unavailable"]] == [(over_a, "source_retired")]
    assert {i["id"] for i in everything["items"]} == {over_b, answered}
