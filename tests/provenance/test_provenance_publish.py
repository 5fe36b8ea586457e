"""The publication gate: one snapshot, one retry on change, fail closed otherwise."""

from __future__ import annotations

from typing import Any

import pytest
from provenance_helpers import SCOPE, UnreachableAfter, access, as_principal, put, retire, typed

from assay.errors import RevisionConflict
from assay.ledger.store import Write
from assay.provenance import publish, saved
from assay.provenance.envelope import Envelope, Leaf, Origin


def envelope_of(store: Any, *ids: str) -> Envelope:
    with store.reader() as reader:
        leaves = []
        for record_id in ids:
            r = reader.get(record_id)
            leaves.append(Leaf(r.id, r.revision, r.data_sha256, r.audience))
        return Envelope("known", reader.epoch, reader.ledger_revision,
                        tuple(Origin(leaf.id, leaf.revision) for leaf in leaves), tuple(leaves))


def test_publish_check_publishes_when_every_source_is_current(store: Any) -> None:
    """Current, readable, unmodified sources publish on the first attempt with a write basis."""
    put(store, "knowledge:a", {"a": 1})
    put(store, "knowledge:b", {"b": 1})
    verdict = publish.check(store, access(), envelope_of(store, "knowledge:a", "knowledge:b"))
    assert (verdict.published, verdict.attempts, verdict.reason) == (True, 1, None)
    assert dict(verdict.basis.records) == {"knowledge:a": 1, "knowledge:b": 1}


def test_publish_check_change_during_check_retries_exactly_once(store: Any) -> None:
    """A source that gains a version during the check triggers one retry, which then publishes."""
    put(store, "knowledge:a", {"a": 1})
    calls: list[int] = []

    def during(attempt: int) -> None:
        calls.append(attempt)
        if attempt == 1:
            put(store, "knowledge:a", {"a": 1})

    verdict = publish.check(store, access(), envelope_of(store, "knowledge:a"), during=during)
    assert calls == [1, 2]
    assert (verdict.published, verdict.attempts) == (True, 2)
    assert dict(verdict.basis.records) == {"knowledge:a": 2}


def test_publish_check_second_change_during_check_withholds(store: Any) -> None:
    """A source that changes during both attempts withholds with publication_unstable."""
    put(store, "knowledge:a", {"a": 1})
    calls: list[int] = []

    def during(attempt: int) -> None:
        calls.append(attempt)
        put(store, "knowledge:a", {"a": 1})

    verdict = publish.check(store, access(), envelope_of(store, "knowledge:a"), during=during)
    assert calls == [1, 2]
    assert (verdict.published, verdict.attempts, verdict.reason) == \
        (False, 2, "publication_unstable")
    assert verdict.basis is None


def test_publish_check_revocation_during_check_withholds(store: Any) -> None:
    """A source retired during the check is caught by the retry: source_retired, not published."""
    put(store, "knowledge:a", {"a": 1})
    verdict = publish.check(store, access(), envelope_of(store, "knowledge:a"),
                            during=lambda attempt: retire(store, "knowledge:a"))
    assert (verdict.published, verdict.attempts, verdict.reason) == (False, 2, "source_retired")


def test_publish_check_unrelated_write_during_check_is_not_a_change(store: Any) -> None:
    """Writes to records outside the envelope do not count as a change of admission."""
    put(store, "knowledge:a", {"a": 1})
    verdict = publish.check(store, access(), envelope_of(store, "knowledge:a"),
                            during=lambda attempt: put(store, "knowledge:other", {"n": attempt}))
    assert (verdict.published, verdict.attempts) == (True, 1)


@pytest.mark.parametrize(("status", "reason", "expected"), [
    ("unknown", "legacy", "provenance_legacy"),
    ("unknown", "overflow", "provenance_overflow"),
    ("unknown", "equivocation", "provenance_equivocation"),
    ("revoked", None, "provenance_revoked"),
])
def test_publish_check_withholds_unknown_or_revoked_proof(store: Any, status: str,
                                                          reason: str | None, expected: str) -> None:
    """An envelope that is not known is withheld before any source is read."""
    put(store, "knowledge:a", {"a": 1})
    env = envelope_of(store, "knowledge:a")
    env = Envelope(status, env.epoch, env.revision, env.origins, env.leaves, reason)
    verdict = publish.check(UnreachableAfter(store, 0), access(), env)
    assert (verdict.published, verdict.reason, verdict.attempts) == (False, expected, 0)


def test_publish_check_withholds_when_validation_is_unavailable(store: Any) -> None:
    """A ledger that cannot be read during the check withholds with validation_unavailable."""
    put(store, "knowledge:a", {"a": 1})
    verdict = publish.check(UnreachableAfter(store, 1), access(), envelope_of(store, "knowledge:a"))
    assert (verdict.published, verdict.reason) == (False, "validation_unavailable")


def test_publish_check_withholds_an_envelope_from_another_ledger(store: Any,
                                                                 tmp_path: Any) -> None:
    """An envelope whose epoch is another ledger's is epoch_mismatch."""
    from assay.ledger import open_store

    put(store, "knowledge:a", {"a": 1})
    other = open_store(tmp_path / "other.db")
    try:
        put(other, "knowledge:a", {"a": 1})
        verdict = publish.check(store, access(), envelope_of(other, "knowledge:a"))
    finally:
        other.close()
    assert (verdict.published, verdict.reason) == (False, "epoch_mismatch")


def test_publish_check_withholds_an_envelope_from_the_future(store: Any) -> None:
    """An envelope taken at a ledger revision this ledger has not reached is envelope_ahead."""
    put(store, "knowledge:a", {"a": 1})
    env = envelope_of(store, "knowledge:a")
    ahead = Envelope("known", env.epoch, env.revision + 5, env.origins, env.leaves)
    assert publish.check(store, access(), ahead).reason == "envelope_ahead"


def test_publish_check_private_source_of_another_reads_as_missing(store: Any) -> None:
    """Denied by audience and absent are the same answer: source_missing."""
    put(store, "knowledge:bobs", {"b": 1}, audience="private:bob")
    with as_principal(store, "bob") as bob, as_principal(store, "alice") as alice:
        env = envelope_of(bob, "knowledge:bobs")
        as_alice = publish.check(alice, access("alice"), env)
        assert (as_alice.published, as_alice.reason) == (False, "source_missing")
        absent = Envelope("known", env.epoch, env.revision, (),
                          (Leaf("knowledge:nothing", 1, "a" * 64, "project"),))
        assert publish.check(alice, access("alice"), absent).reason == "source_missing"
        assert publish.check(bob, access("bob"), env).published


def test_publish_check_envelope_audience_excluding_the_caller_is_denied(store: Any) -> None:
    """A leaf whose recorded audience excludes the caller is access_denied, even if now public."""
    put(store, "knowledge:k", {"v": 1}, audience="private:bob")
    with as_principal(store, "bob") as bob:
        env = envelope_of(bob, "knowledge:k")
    put(store, "knowledge:k", {"v": 1}, audience="project")
    with as_principal(store, "alice") as alice:
        assert publish.check(alice, access("alice"), env).reason == "access_denied"


def test_publish_require_basis_refuses_a_write_after_a_source_moves(store: Any) -> None:
    """A writer that commits under the gate's basis fails if a source moved after the gate."""
    put(store, "knowledge:a", {"a": 1})
    verdict = publish.require(store, access(), envelope_of(store, "knowledge:a"))
    retire(store, "knowledge:a")
    with pytest.raises(RevisionConflict):
        store.put(Write(id="note:late", data=typed("late"), scope=SCOPE), basis=verdict.basis)
    with store.reader() as reader:
        assert reader.get("note:late") is None


def test_note_add_source_retired_during_gate_writes_nothing(store: Any) -> None:
    """A source retired while the note's gate runs withholds the note; nothing is persisted."""
    from assay.errors import AssayError
    from assay.ledger.store import SourceRef

    put(store, "knowledge:a", {"a": 1})
    with pytest.raises(AssayError) as caught:
        saved.add(store, access(), kind="note", text="x", scope=SCOPE,
                  sources=[SourceRef("knowledge:a", 1)],
                  during=lambda attempt: retire(store, "knowledge:a") if attempt == 1 else None)
    assert caught.value.code == "publication_withheld"
    assert caught.value.details["reason"] == "source_retired"
    assert caught.value.details["attempts"] == 2
    with store.reader() as reader:
        assert reader.find(kind="note") == []


def test_publish_check_cli_reads_a_context_read_output(project: Any) -> None:
    """note list's JSON output piped into publish check publishes, then withholds after a retire."""
    project.ok("put", "--data-file", "-", "--", "knowledge:k", input='{"v":1}')
    project.ok("note", "add", "--source", "knowledge:k@1", "--", "derived")
    listed = project.run("note", "list")
    first = project.ok("publish", "check", "--", "-", input=listed.stdout)
    assert first["data"]["published"] is True
    project.ok("retire", "--expect-revision", "1", "--", "knowledge:k")
    again = project.run("publish", "check", "--", "-", input=listed.stdout)
    assert again.code == 1
    assert again.json["data"]["reason"] == "source_retired"
    assert again.json["data"]["line"] == "withheld: a source was retired"


def test_publish_check_cli_rejects_malformed_envelope(project: Any) -> None:
    """A malformed envelope file is invalid_envelope with the pointer of the bad field."""
    bad = project.root / "env.json"
    bad.write_text('{"version":1,"status":"known","epoch":"x","revision":0,"origins":[],'
                   '"leaves":[],"reason":"legacy"}', encoding="utf-8")
    result = project.run("publish", "check", "--", str(bad))
    assert result.code == 1
    assert (result.error["code"], result.error["pointer"]) == ("invalid_envelope", "/reason")


def test_publish_require_all_gates_inputs_beyond_one_envelope(store: Any) -> None:
    """Forty inputs pack into two known envelopes; each passes the gate; one basis holds all heads."""
    from assay.provenance.admission import envelopes_of_versions

    for i in range(40):
        put(store, f"knowledge:in{i:02}", {"i": i})
    with store.reader() as reader:
        envelopes = envelopes_of_versions(reader, {f"knowledge:in{i:02}": 1 for i in range(40)})
    assert [len(e.leaves) for e in envelopes] == [32, 8]
    assert all(e.is_known for e in envelopes)
    basis = publish.require_all(store, access(), envelopes, what="the view")
    assert basis is not None and len(basis.records) == 40
    retire(store, "knowledge:in39")
    with pytest.raises(publish.PublicationWithheld) as caught:
        publish.require_all(store, access(), envelopes, what="the view")
    assert caught.value.details["reason"] == "source_retired"
