"""Adoption: notes and memory an earlier release wrote, listed for a person and re-stamped on confirmation.

The earlier release's ``note add`` and ``memory add`` wrote exactly what
:func:`legacy_add` writes: the same data, id and pinned sources, with the
origin every client ``put`` has. The tests write those records into a real
ledger of each backend and drive the real CLI or the operations.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from assay.ids import content_id
from assay.ledger import open_store
from assay.ledger.store import SourceRef, Store, Write
from assay.ops import lookup
from assay.provenance.saved import KINDS
from assay_testing import Project, make_project, op

SCOPE = "project:demo"


@pytest.fixture
def ledger(any_project: Project) -> Iterator[Store]:
    """The project's own ledger, opened directly (as the earlier release's code wrote it)."""
    store = open_store(any_project.db or any_project.root / ".assay" / "ledger.db")
    try:
        yield store
    finally:
        store.close()


def legacy_add(store: Store, kind: str, text: str, *, author: str = "agent",
               audience: str = "project", sources: Sequence[SourceRef] = ()) -> str:
    """Write an entry as the earlier release's note add / memory add did (origin claim)."""
    data = {"version": 1, "text": text, "author": author}
    record_id = f"{kind}:" + content_id(KINDS[kind], {
        "data": data, "scope": SCOPE, "audience": audience,
        "sources": [s.to_dict() for s in sources]})
    principal = audience.removeprefix("private:") if audience != "project" else None
    handle = store.as_principal(principal)
    try:
        handle.put(Write(id=record_id, data=data, scope=SCOPE, audience=audience,
                         sources=tuple(sources), request_id=f"saved:{record_id}"))
    finally:
        handle.close()
    return record_id


def pin(store: Store, record_id: str, data: Any) -> SourceRef:
    receipt = store.put(Write(id=record_id, data=data, scope=SCOPE))
    return SourceRef(record_id, receipt.revision, receipt.data_sha256)


def revision(project: Project) -> int:
    return int(project.ok("ledger", "info")["data"]["ledger_revision"])


def test_adopt_lists_legacy_notes_whole_and_writes_nothing(any_project: Project,
                                                           ledger: Store) -> None:
    """`note adopt` alone lists each untyped note with its text and sources; the ledger is unchanged."""
    source = pin(ledger, "knowledge:limit", {"limit": 5})
    legacy = legacy_add(ledger, "note", "the limit is five", sources=[source])
    any_project.ok("note", "add", "--", "typed already")
    assert any_project.ok("note", "list")["data"]["unavailable"][0]["reason"] == \
        "provenance_legacy"
    before = revision(any_project)
    out = any_project.ok("note", "adopt")["data"]
    assert [e["id"] for e in out["entries"]] == [legacy]
    entry = out["entries"][0]
    assert (entry["text"], entry["author"], entry["origin"], entry["adoptable"]) == (
        "the limit is five", "agent", "claim", True)
    assert entry["sources"] == [source.to_dict()]
    assert revision(any_project) == before


def test_adopt_restamps_the_note_and_records_who_adopted_it(any_project: Project,
                                                           ledger: Store) -> None:
    """Adopting a legacy note serves it again and writes an adoption record naming the adopter."""
    source = pin(ledger, "knowledge:limit", {"limit": 5})
    legacy = legacy_add(ledger, "note", "the limit is five", sources=[source])
    out = any_project.ok("note", "adopt", "--as", "alice", "--", legacy)["data"]
    assert out["adopted"] == [{"id": legacy, "revision": 1, "adopted_revision": 2,
                               "data_sha256": out["adopted"][0]["data_sha256"]}]
    assert out["by"] == "alice" and out["created_at"]
    listed = any_project.ok("note", "list")["data"]
    assert [i["id"] for i in listed["items"]] == [legacy] and listed["unavailable"] == []
    record = any_project.ok("get", "--", out["adoption"]["id"])["data"]["record"]
    assert (record["origin"], record["data"]["by"], record["data"]["kind"]) == (
        "derived", "alice", "note")
    assert record["data"]["entries"] == out["adopted"]
    assert record["created_at"] == out["created_at"]
    note = any_project.ok("get", "--", legacy)["data"]["record"]
    assert (note["origin"], note["revision"], note["sources"]) == (
        "derived", 2, [source.to_dict()])


def test_adopt_keeps_what_was_derived_from_the_earlier_version(any_project: Project,
                                                               ledger: Store) -> None:
    """A note pinned to the legacy note's first version stays admitted after adoption (same data)."""
    legacy = legacy_add(ledger, "note", "base fact")
    derived = any_project.ok("note", "add", "--source", f"{legacy}@1", "--",
                             "built on it")["data"]["receipt"]["id"]
    any_project.ok("note", "adopt", "--", legacy)
    items = [i["id"] for i in any_project.ok("note", "list")["data"]["items"]]
    assert sorted(items) == sorted([legacy, derived])


def test_adopt_is_all_or_nothing(any_project: Project, ledger: Store) -> None:
    """Naming one adoptable note and one typed note adopts neither: not_adoptable at /ids/1."""
    legacy = legacy_add(ledger, "note", "old")
    typed = any_project.ok("note", "add", "--", "new")["data"]["receipt"]["id"]
    before = revision(any_project)
    result = any_project.run("note", "adopt", "--", legacy, typed)
    assert result.code == 1
    assert (result.error["code"], result.error["pointer"], result.error["details"]) == (
        "not_adoptable", "/ids/1", {"id": typed, "reason": "already_typed"})
    assert revision(any_project) == before


def test_adopt_refuses_a_note_whose_source_was_retired(any_project: Project,
                                                      ledger: Store) -> None:
    """A legacy note resting on a retired source is listed as not adoptable and refused by name."""
    source = pin(ledger, "knowledge:limit", {"limit": 5})
    legacy = legacy_add(ledger, "note", "the limit is five", sources=[source])
    ledger.put(Write(id="knowledge:limit", data={"limit": 5}, scope=SCOPE, status="retired"))
    entry = any_project.ok("note", "adopt")["data"]["entries"][0]
    assert (entry["adoptable"], entry["reason"]) == (False, "source_retired")
    assert entry["line"] == f"{legacy}@1 cannot be adopted: a source was retired"
    result = any_project.run("note", "adopt", "--", legacy)
    assert (result.error["code"], result.error["details"]["reason"]) == (
        "not_adoptable", "source_retired")


def test_adopt_of_private_memory_stays_private(any_project: Project, ledger: Store) -> None:
    """A legacy memory private to alice is adopted by alice only, and so is the adoption record."""
    memory = legacy_add(ledger, "memory", "alice prefers tabs", author="alice",
                        audience="private:alice")
    assert any_project.ok("memory", "adopt", "--as", "bob")["data"]["entries"] == []
    refused = any_project.run("memory", "adopt", "--as", "bob", "--", memory)
    assert (refused.error["code"], refused.error["details"]["reason"]) == (
        "not_adoptable", "not_found")
    out = any_project.ok("memory", "adopt", "--as", "alice", "--", memory)["data"]
    adoption = out["adoption"]["id"]
    assert any_project.ok("get", "--as", "alice", "--", adoption)["data"]["record"][
        "audience"] == "private:alice"
    assert any_project.run("get", "--as", "bob", "--", adoption).code == 6
    items = any_project.ok("memory", "list", "--as", "alice")["data"]["items"]
    assert [i["id"] for i in items] == [memory]


def test_adopt_refuses_names_it_cannot_adopt(any_project: Project, ledger: Store) -> None:
    """An unknown id, a memory given to note adopt and a repeated id are each refused at their pointer."""
    note = legacy_add(ledger, "note", "old")
    memory = legacy_add(ledger, "memory", "old memory")
    for ids, code, where, reason in (
            (["note:n-00000000"], "not_adoptable", "/ids/0", "not_found"),
            ([note, memory], "not_adoptable", "/ids/1", "other_kind"),
            ([note, note], "invalid_argument", "/ids/1", None)):
        result = any_project.run("note", "adopt", "--", *ids)
        assert (result.error["code"], result.error["pointer"]) == (code, where), ids
        assert result.error.get("details", {}).get("reason") == reason


def test_adopt_memory_when_memory_is_off_is_memory_disabled(tmp_path: Path) -> None:
    """With [memory] enabled = false, memory adopt reads and writes nothing: memory_disabled."""
    project = make_project(tmp_path / "p", extra_toml="\n[memory]\nenabled = false\n")
    result = project.run("memory", "adopt")
    assert (result.code, result.error["code"]) == (5, "memory_disabled")


@pytest.mark.parametrize("name", ["note.adopt", "memory.adopt"])
def test_adopt_operations_are_a_persons(name: str) -> None:
    """Both adopt operations are declared admin: offered to a person, never to the gated agent."""
    assert lookup(name).admin is True


def test_adopt_listing_pages_by_id(project: Project) -> None:
    """With --limit the listing ends early, counts what follows and names the read of the next page."""
    store = open_store(project.root / ".assay" / "ledger.db")
    try:
        ids = sorted(legacy_add(store, "note", f"old {i}") for i in range(3))
    finally:
        store.close()
    first = project.ok("note", "adopt", "--limit", "2")["data"]
    assert [e["id"] for e in first["entries"]] == ids[:2]
    assert first["omitted"]["entries"] == 1
    second = project.ok(*first["read_more"][0]["read_args"])["data"]
    assert [e["id"] for e in second["entries"]] == ids[2:]


def test_adopt_in_process_reports_the_receipts(project: Project) -> None:
    """The operation, called in process, returns the adoption receipt with its ledger revision."""
    store = open_store(project.root / ".assay" / "ledger.db")
    try:
        legacy = legacy_add(store, "note", "old")
    finally:
        store.close()
    envelope, code = op(project, "note.adopt", ids=[legacy])
    assert code == 0
    assert envelope["ledger_revision"] == envelope["data"]["adoption"]["ledger_revision"]
