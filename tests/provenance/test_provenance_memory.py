"""Memory: private by default, searched only after scope and audience filters, switchable off."""

from __future__ import annotations

from typing import Any

import pytest
from provenance_helpers import SCOPE, access, as_principal, put, retire, typed

from assay.errors import AssayError
from assay.ledger.store import SourceRef
from assay.provenance import saved
from assay_testing import make_project


def remember(store: Any, text: str, who: str = "alice", *, sources: tuple[str, ...] = (),
             **kw: Any) -> str:
    refs = [SourceRef(s.rpartition("@")[0], int(s.rpartition("@")[2])) for s in sources]
    kw.setdefault("scope", SCOPE)
    with as_principal(store, who) as handle:
        out = saved.add(handle, access(who), kind="memory", text=text, sources=refs, **kw)
    return str(out["receipt"]["id"])


def search(store: Any, query: str, who: str = "alice", **kw: Any) -> dict[str, Any]:
    with as_principal(store, who) as handle, handle.reader() as reader:
        return saved.search(reader, access(who), query=query, **kw)


def test_memory_add_is_private_to_its_author_by_default(store: Any) -> None:
    """A memory entry without --audience is private:<author>; others do not find it."""
    remember(store, "the staging password rotates on mondays")
    assert search(store, "staging", "alice")["count"] == 1
    assert search(store, "staging", "bob") == {**search(store, "staging", "bob"), "count": 0,
                                               "items": [], "unavailable": []}


def test_memory_search_requires_every_query_word(store: Any) -> None:
    """Every query word must occur in the text; more occurrences rank first."""
    remember(store, "retry the flaky login test twice", audience="project")
    remember(store, "login login login: use the fixture user", audience="project")
    remember(store, "unrelated", audience="project")
    out = search(store, "LOGIN")
    assert [i["text"] for i in out["items"]] == ["login login login: use the fixture user",
                                                 "retry the flaky login test twice"]
    assert [i["text"] for i in search(store, "login flaky")["items"]] == [
        "retry the flaky login test twice"]


def test_memory_search_filters_by_scope(store: Any) -> None:
    """Global memory is found from the project; --scope restricts to one readable scope."""
    remember(store, "global tip about caching", scope="global")
    remember(store, "project tip about caching")
    assert search(store, "caching")["count"] == 2
    assert [i["scope"] for i in search(store, "caching", scope="global")["items"]] == ["global"]
    with pytest.raises(AssayError) as caught:
        search(store, "caching", scope="project:elsewhere")
    assert (caught.value.code, caught.value.pointer) == ("out_of_scope", "/scope")


def test_memory_search_skips_records_outside_the_readers_scopes(store: Any) -> None:
    """A memory written in another project's scope never enters this project's search."""
    put(store, "memory:other", typed("caching elsewhere"), scope="project:other",
        origin="derived")
    remember(store, "caching here")
    assert [i["text"] for i in search(store, "caching")["items"]] == ["caching here"]
    assert search(store, "caching")["unavailable"] == []


def test_memory_search_omits_entry_with_revoked_source_keeps_safe_ones(store: Any) -> None:
    """An entry whose source was retired is omitted; an entry without that source stays."""
    put(store, "knowledge:k", {"v": 1})
    bad = remember(store, "deploy order from k", sources=("knowledge:k@1",))
    good = remember(store, "deploy order by hand")
    retire(store, "knowledge:k")
    out = search(store, "deploy order")
    assert [i["id"] for i in out["items"]] == [good]
    assert [(u["id"], u["reason"]) for u in out["unavailable"]] == [(bad, "source_retired")]


def test_memory_search_omits_entry_with_modified_content_digest(store: Any) -> None:
    """An entry whose source content changed after it was derived is omitted by the digest check."""
    put(store, "knowledge:k", {"v": 1})
    derived = remember(store, "about k", sources=("knowledge:k@1",))
    put(store, "knowledge:k", {"v": "changed"})
    assert [(u["id"], u["reason"]) for u in search(store, "about")["unavailable"]] == [
        (derived, "source_modified")]


def test_memory_transformation_cannot_widen_a_private_memory(store: Any) -> None:
    """A note derived from alice's private memory stays private to alice, even if asked wider."""
    private = remember(store, "alice's private hunch")
    with as_principal(store, "alice") as alice:
        note = saved.add(alice, access("alice"), kind="note", text="summary of my hunch",
                         scope=SCOPE, sources=[SourceRef(private, 1)])
        assert note["audience"] == "private:alice"
        with pytest.raises(AssayError) as caught:
            saved.add(alice, access("alice"), kind="note", text="public summary", scope=SCOPE,
                      sources=[SourceRef(private, 1)], audience="project")
    assert (caught.value.code, caught.value.pointer) == ("audience_too_wide", "/audience")


def test_memory_add_rejects_an_audience_for_someone_else(store: Any) -> None:
    """A writer may choose project or its own private audience, nobody else's."""
    with pytest.raises(AssayError) as caught:
        remember(store, "for bob's eyes", audience="private:bob")
    assert (caught.value.code, caught.value.pointer) == ("invalid_audience", "/audience")


def test_memory_search_query_without_words_is_invalid(store: Any) -> None:
    """A query of punctuation only is invalid_query."""
    with pytest.raises(AssayError) as caught:
        search(store, "?! ...")
    assert (caught.value.code, caught.value.pointer) == ("invalid_query", "/query")


def test_memory_add_empty_text_is_invalid(store: Any) -> None:
    """Blank text is invalid_text and writes nothing."""
    with pytest.raises(AssayError) as caught:
        remember(store, "   ")
    assert (caught.value.code, caught.value.pointer) == ("invalid_text", "/text")


def test_memory_disabled_performs_no_reads(tmp_path: Any) -> None:
    """With [memory] enabled = false, search and list answer enabled=false without opening the ledger."""
    proj = make_project(tmp_path / "p", extra_toml="\n[memory]\nenabled = false\n", ledger=False)
    ledger = proj.root / ".assay" / "ledger.db"
    for args in (("memory", "search", "--", "anything"), ("memory", "list")):
        out = proj.ok(*args)["data"]
        assert out["enabled"] is False and out["items"] == [] and out["envelope"] is None
    assert not ledger.exists()
    refused = proj.run("memory", "add", "--", "remember this")
    assert refused.code == 5
    assert (refused.error["code"], refused.error["pointer"]) == ("memory_disabled",
                                                                 "/memory/enabled")
    assert not ledger.exists()


def test_memory_config_enabled_must_be_boolean(tmp_path: Any) -> None:
    """A non-boolean [memory] enabled is invalid_config pointing at it."""
    proj = make_project(tmp_path / "p", extra_toml='\n[memory]\nenabled = "no"\n')
    result = proj.run("memory", "search", "--", "x")
    assert (result.error["code"], result.error["pointer"]) == ("invalid_config", "/memory/enabled")


def test_memory_cli_add_and_search_as_principals(project: Any) -> None:
    """memory add --as alice is found by alice's search and not by bob's; words need no quotes."""
    project.ok("memory", "add", "--as", "alice", "--", "the", "flaky", "test", "is", "test_login")
    alice = project.ok("memory", "search", "--as", "alice", "--", "flaky", "test_login")["data"]
    assert alice["items"][0]["text"] == "the flaky test is test_login"
    bob = project.ok("memory", "search", "--as", "bob", "--", "flaky")["data"]
    assert alice["count"] == 1 and alice["items"][0]["author"] == "alice"
    assert bob["count"] == 0 and bob["envelope"]["leaves"] == []


def test_memory_search_folds_case_beyond_ascii(store: Any) -> None:
    """A query word matches whatever the case of non-ASCII letters in the text."""
    remember(store, "ÜBER die Grenze: Straße gesperrt", audience="project")
    assert search(store, "über")["count"] == 1
    assert search(store, "über straße")["count"] == 1
