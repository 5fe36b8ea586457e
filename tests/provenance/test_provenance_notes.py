"""Notes: written with pinned sources, read back only when their whole closure still holds."""

from __future__ import annotations

from typing import Any

import pytest
from provenance_helpers import SCOPE, access, as_principal, current, put, retire, typed

from assay.errors import AssayError
from assay.ledger.store import SourceRef
from assay.provenance import saved


def add_note(store: Any, text: str, *sources: str, who: str = "alice", **kw: Any) -> dict[str, Any]:
    refs = [SourceRef(s.rpartition("@")[0], int(s.rpartition("@")[2])) for s in sources]
    with as_principal(store, who) as handle:
        return saved.add(handle, access(who), kind="note", text=text, scope=SCOPE, sources=refs,
                         **kw)


def read(store: Any, who: str = "alice", **kw: Any) -> dict[str, Any]:
    with as_principal(store, who) as handle, handle.reader() as reader:
        return saved.list_entries(reader, access(who, **kw), kind="note")


def test_note_add_pins_exact_revision_and_digest(store: Any) -> None:
    """A note's sources record the exact revision and that version's data digest."""
    put(store, "knowledge:k", {"v": 1})
    src = put(store, "knowledge:k", {"v": 2})
    out = add_note(store, "seen v2", "knowledge:k@2")
    assert out["sources"] == [{"id": "knowledge:k", "revision": 2, "data_sha256": src.data_sha256}]
    note = current(store, out["receipt"]["id"])
    assert note.sources == (SourceRef("knowledge:k", 2, src.data_sha256),)


def test_note_add_from_an_outdated_version_is_withheld(store: Any) -> None:
    """Citing a version whose content has since changed withholds the note (source_modified)."""
    put(store, "knowledge:k", {"v": 1})
    put(store, "knowledge:k", {"v": 2})
    with pytest.raises(AssayError) as caught:
        add_note(store, "seen v1", "knowledge:k@1")
    assert caught.value.code == "publication_withheld"
    assert caught.value.details["failures"] == [
        {"id": "knowledge:k", "revision": 1, "reason": "source_modified"}]


def test_note_list_omits_retired_source_and_keeps_other_notes(store: Any) -> None:
    """A note whose source was retired is an unavailable line; an independent note stays."""
    put(store, "knowledge:a", {"a": 1})
    put(store, "knowledge:b", {"b": 1})
    bad = add_note(store, "from a", "knowledge:a@1")["receipt"]["id"]
    good = add_note(store, "from b", "knowledge:b@1")["receipt"]["id"]
    retire(store, "knowledge:a")
    out = read(store)
    assert [i["id"] for i in out["items"]] == [good]
    assert out["unavailable"] == [{"id": bad, "revision": 1, "reason": "source_retired",
                                   "source": "knowledge:a@1",
                                   "line": f"{bad}@1 unavailable: a source was retired "
                                           "(knowledge:a@1)"}]
    assert {leaf["id"] for leaf in out["envelope"]["leaves"]} == {good, "knowledge:b"}


def test_note_list_omits_superseded_source(store: Any) -> None:
    """A source superseded by another record revokes the notes derived from it."""
    put(store, "knowledge:old", {"v": 1})
    put(store, "knowledge:new", {"v": 2})
    add_note(store, "from old", "knowledge:old@1")
    put(store, "knowledge:old", {"v": 1}, status="superseded", superseded_by="knowledge:new")
    assert [u["reason"] for u in read(store)["unavailable"]] == ["source_superseded"]


def test_note_list_omits_note_whose_source_content_changed(store: Any) -> None:
    """A source whose current data differs from the pinned digest is source_modified."""
    put(store, "knowledge:k", {"v": 1})
    add_note(store, "from v1", "knowledge:k@1")
    put(store, "knowledge:k", {"v": 2})
    assert [u["reason"] for u in read(store)["unavailable"]] == ["source_modified"]


def test_note_list_admits_note_when_source_gains_revision_with_same_data(store: Any) -> None:
    """A new version with identical data (e.g. an audience change) keeps the derivation valid."""
    put(store, "knowledge:k", {"v": 1})
    add_note(store, "from v1", "knowledge:k@1")
    put(store, "knowledge:k", {"v": 1})
    out = read(store)
    assert out["count"] == 1 and out["unavailable"] == []


def test_note_list_omits_legacy_note_without_typed_provenance(store: Any) -> None:
    """A note: record written by a plain put (no typed data) is provenance_legacy, never admitted."""
    put(store, "note:hand-written", {"text": "trust me"})
    add_note(store, "typed")
    out = read(store)
    assert [i["text"] for i in out["items"]] == ["typed"]
    assert [(u["id"], u["reason"]) for u in out["unavailable"]] == [
        ("note:hand-written", "provenance_legacy")]


def test_note_list_omits_note_with_unpinned_source(store: Any) -> None:
    """A source without a pinned digest is legacy provenance: the note is omitted."""
    put(store, "knowledge:k", {"v": 1})
    put(store, "note:unpinned", typed("x"), sources=[SourceRef("knowledge:k", 1)],
        origin="derived")
    assert [u["reason"] for u in read(store)["unavailable"]] == ["provenance_legacy"]


def test_note_list_omits_note_with_forged_source_digest(store: Any) -> None:
    """A pinned digest that is not the version's digest is invalid provenance."""
    put(store, "knowledge:k", {"v": 1})
    put(store, "note:forged", typed("x"), sources=[SourceRef("knowledge:k", 1, "0" * 64)],
        origin="derived")
    assert [u["reason"] for u in read(store)["unavailable"]] == ["provenance_invalid"]


def test_note_text_naming_a_source_grants_no_authority(store: Any) -> None:
    """Text that names a record is not a dependency: only pinned sources enter the envelope."""
    put(store, "knowledge:secret", {"v": 1}, audience="private:bob")
    out = add_note(store, "derived from knowledge:secret@1, trust me")
    leaves = [leaf["id"] for leaf in read(store)["envelope"]["leaves"]]
    assert leaves == [out["receipt"]["id"]]


def test_note_list_envelope_is_the_transitive_closure(store: Any) -> None:
    """A note derived from a note derived from a record carries all three versions."""
    put(store, "knowledge:root", {"v": 1})
    first = add_note(store, "first", "knowledge:root@1")["receipt"]["id"]
    second = add_note(store, "second", f"{first}@1")["receipt"]["id"]
    out = read(store)
    by_id = {i["id"]: i for i in out["items"]}
    assert set(by_id) == {first, second}
    assert {leaf["id"] for leaf in out["envelope"]["leaves"]} == {"knowledge:root", first, second}
    retire(store, "knowledge:root")
    reasons = {u["id"]: (u["reason"], u["source"]) for u in read(store)["unavailable"]}
    assert reasons == {first: ("source_retired", "knowledge:root@1"),
                       second: ("source_retired", "knowledge:root@1")}


def test_note_list_empty_read_returns_known_empty_envelope(store: Any) -> None:
    """No notes: no items, no omissions, and a known envelope with no leaves."""
    out = read(store)
    assert out["items"] == [] and out["unavailable"] == []
    assert out["envelope"]["status"] == "known" and out["envelope"]["leaves"] == []


def test_note_add_private_source_makes_the_note_private(store: Any) -> None:
    """Deriving from a source private to alice makes the note private to alice."""
    put(store, "knowledge:mine", {"v": 1}, audience="private:alice")
    out = add_note(store, "from my private record", "knowledge:mine@1")
    assert out["audience"] == "private:alice"
    assert current(store, out["receipt"]["id"], audience="private:alice").audience == \
        "private:alice"
    assert read(store, "bob")["items"] == [] and read(store, "bob")["unavailable"] == []


def test_note_add_refuses_to_widen_a_private_source(store: Any) -> None:
    """A project audience for a note derived from a private source is audience_too_wide."""
    put(store, "knowledge:mine", {"v": 1}, audience="private:alice")
    with store.reader() as reader:
        before = reader.ledger_revision
    with pytest.raises(AssayError) as caught:
        add_note(store, "leak", "knowledge:mine@1", audience="project")
    assert (caught.value.code, caught.value.pointer) == ("audience_too_wide", "/audience")
    with store.reader() as reader:
        assert reader.ledger_revision == before


def test_note_add_refuses_a_source_private_to_someone_else(store: Any) -> None:
    """Another principal's private record cannot be cited: it reads as not found."""
    put(store, "knowledge:bobs", {"v": 1}, audience="private:bob")
    with pytest.raises(AssayError) as caught:
        add_note(store, "x", "knowledge:bobs@1", who="alice")
    assert (caught.value.code, caught.value.pointer) == ("source_not_found", "/source/0")


def test_note_add_withholds_a_note_from_a_retired_source(store: Any) -> None:
    """The gate runs before the write: a retired source withholds the note and writes nothing."""
    put(store, "knowledge:k", {"v": 1})
    retire(store, "knowledge:k")
    with pytest.raises(AssayError) as caught:
        add_note(store, "stale", "knowledge:k@1")
    assert caught.value.code == "publication_withheld"
    assert caught.value.details["reason"] == "source_retired"
    assert read(store)["items"] == []


def test_note_add_same_note_twice_replays(store: Any) -> None:
    """The id is content-derived: writing the same note again replays the first receipt."""
    first = add_note(store, "same")["receipt"]
    again = add_note(store, "same")["receipt"]
    assert again["id"] == first["id"] and again["replayed"] is True


def test_note_list_private_record_shadowing_a_source_changes_only_its_owners_view(
        store: Any) -> None:
    """A private record with a source's id withholds the note from its owner only.

    Records are keyed by id and audience: alice's private ``knowledge:k`` is
    another record than the project's, so bob's note derived from the
    project record stays available to bob, while alice, who now sees her own
    record under that id, gets the note withheld instead of a wrong source.
    """
    put(store, "knowledge:k", {"v": 1})
    note = add_note(store, "shared", "knowledge:k@1", who="bob")["receipt"]["id"]
    put(store, "knowledge:k", {"v": 2}, audience="private:alice")
    assert read(store, "bob")["count"] == 1
    for_alice = read(store, "alice")
    assert for_alice["items"] == []
    assert [(u["id"], u["reason"]) for u in for_alice["unavailable"]] == [
        (note, "provenance_invalid")]


def test_note_list_source_outside_the_readers_scopes_is_denied(store: Any) -> None:
    """A source in a scope the reader no longer admits is access_denied."""
    put(store, "knowledge:old", {"v": 1}, scope="project:old")
    saved.add(store, access("alice", admitted=["project:old"]), kind="note", text="x",
              scope=SCOPE, sources=[SourceRef("knowledge:old", 1)])
    assert [u["reason"] for u in read(store)["unavailable"]] == ["access_denied"]
    assert read(store, admitted=["project:old"])["count"] == 1


def test_note_list_closure_beyond_32_leaves_is_overflow(store: Any) -> None:
    """A chain of derivations longer than the envelope holds is omitted as provenance_overflow."""
    prev = put(store, "knowledge:c0", typed("0"))
    for i in range(1, 40):
        prev = put(store, f"note:c{i}", typed(str(i)), sources=[prev], origin="derived")
    reasons = {u["id"]: u["reason"] for u in read(store)["unavailable"]}
    assert reasons["note:c39"] == "provenance_overflow"
    assert "note:c5" not in reasons


def test_note_list_full_read_envelope_ends_the_page(store: Any) -> None:
    """When the union would pass 32 leaves the page ends there: the earlier notes stay known,
    and the later ones are left for the next page, not dropped as unavailable."""
    for i in range(20):
        put(store, f"knowledge:s{i:02}", {"i": i})
        add_note(store, f"note {i:02}", f"knowledge:s{i:02}@1")
    out = read(store)
    assert out["count"] == 16 and out["unavailable"] == []
    assert out["more"] is True and out["page"]["omitted"] == 4
    assert out["envelope"]["status"] == "known" and len(out["envelope"]["leaves"]) == 32
