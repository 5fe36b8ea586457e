"""The store conformance suite: every rule of the ledger, on both backends."""

from __future__ import annotations

from typing import Any

import pytest

from assay.canonical import digest
from assay.errors import AssayError, EpochConflict, RequestConflict, RevisionConflict
from assay.ledger import Link, SourceRef, Write, WriteBasis, open_store
from assay.ledger.store import MAX_DATA_BYTES, SCHEMA_VERSION

SCOPE = "project:demo"


def w(record_id: str = "knowledge:a", data: Any = None, **kw: Any) -> Write:
    return Write(id=record_id, data={"v": 1} if data is None else data, scope=kw.pop("scope", SCOPE), **kw)


def head(store: Any) -> int:
    with store.reader() as r:
        return int(r.ledger_revision)


def test_put_first_version_receipt(store: Any) -> None:
    """A first put creates revision 1 at ledger revision 1 with the data's digest."""
    receipt = store.put(w(data={"b": 2, "a": 1}))
    assert receipt.to_dict() == {
        "id": "knowledge:a", "revision": 1, "ledger_revision": 1,
        "data_sha256": digest({"a": 1, "b": 2}), "request_id": None, "replayed": False,
    }


def test_put_new_versions_keep_history(store: Any) -> None:
    """Each put appends a version; history and old revisions stay readable."""
    store.put(w(data={"n": 1}))
    store.put(w(data={"n": 2}))
    with store.reader() as r:
        assert r.get("knowledge:a").data == {"n": 2}
        assert r.get("knowledge:a", 1).data == {"n": 1}
        assert [v.revision for v in r.history("knowledge:a")] == [1, 2]
        assert [v.ledger_revision for v in r.history("knowledge:a")] == [1, 2]


def test_put_stores_canonical_text(store: Any) -> None:
    """Data is stored as its canonical text, whatever order it came in."""
    store.put(w(data={"z": [1.0, 2.5], "a": "é"}))
    with store.reader() as r:
        assert r.get("knowledge:a").data_text == '{"a":"é","z":[1,2.5]}'


def test_put_expect_absent_conflicts_when_present(store: Any) -> None:
    """expect_revision 0 on an existing record is revision_conflict naming the current revision."""
    store.put(w())
    with pytest.raises(RevisionConflict) as info:
        store.put(w(data={"v": 2}, expect_revision=0))
    assert info.value.code == "revision_conflict"
    assert info.value.current_revision == 1
    assert head(store) == 1


def test_put_expect_revision_matching_succeeds(store: Any) -> None:
    """A matching expected revision commits the next revision."""
    store.put(w(expect_revision=0))
    assert store.put(w(data={"v": 2}, expect_revision=1)).revision == 2


def test_put_stale_expectation_changes_nothing(store: Any) -> None:
    """A stale expected revision leaves the record and the ledger revision unchanged."""
    store.put(w())
    store.put(w(data={"v": 2}))
    with pytest.raises(RevisionConflict):
        store.put(w(data={"v": 3}, expect_revision=1))
    with store.reader() as r:
        assert r.get("knowledge:a").data == {"v": 2}
        assert r.ledger_revision == 2


def test_request_id_replays_original_receipt(store: Any) -> None:
    """The same request id with the same body replays the receipt and writes nothing."""
    first = store.put(w(request_id="req-1"))
    store.put(w("knowledge:b"))
    again = store.put(w(request_id="req-1"))
    assert again.replayed is True
    assert (again.id, again.revision, again.ledger_revision, again.data_sha256) == (
        first.id, first.revision, first.ledger_revision, first.data_sha256)
    assert head(store) == 2


def test_request_id_replays_even_after_record_moved(store: Any) -> None:
    """A replay answers with the original receipt even when a guarded body would now conflict."""
    store.put(w(expect_revision=0, request_id="req-1"))
    store.put(w(data={"v": 9}))
    assert store.put(w(expect_revision=0, request_id="req-1")).replayed is True


def test_request_id_with_other_body_conflicts(store: Any) -> None:
    """The same request id with a different body is request_conflict and writes nothing."""
    store.put(w(request_id="req-1"))
    with pytest.raises(RequestConflict) as info:
        store.put(w(data={"v": 2}, request_id="req-1"))
    assert info.value.code == "request_conflict"
    assert head(store) == 1


def test_write_basis_other_epoch_conflicts(store: Any) -> None:
    """A write basis read from another ledger is epoch_conflict."""
    with pytest.raises(EpochConflict) as info:
        store.put(w(), basis=WriteBasis(epoch="0" * 32, ledger_revision=0, records={}))
    assert info.value.code == "epoch_conflict"
    assert head(store) == 0


def test_write_basis_moved_record_conflicts(store: Any) -> None:
    """A basis whose record moved since the read is revision_conflict; nothing is written."""
    store.put(w("knowledge:dep"))
    with store.reader() as r:
        basis = WriteBasis(epoch=r.epoch, ledger_revision=r.ledger_revision,
                           records={"knowledge:dep": 1, "knowledge:absent": 0})
    store.put(w("knowledge:dep", data={"v": 2}))
    with pytest.raises(RevisionConflict) as info:
        store.put(w("knowledge:out"), basis=basis)
    assert info.value.current_revision == 2
    with store.reader() as r:
        assert r.get("knowledge:out") is None


def test_write_basis_unchanged_commits(store: Any) -> None:
    """A basis whose records are unchanged (absent ones still absent) lets the write commit."""
    store.put(w("knowledge:dep"))
    with store.reader() as r:
        basis = WriteBasis(epoch=r.epoch, ledger_revision=r.ledger_revision,
                           records={"knowledge:dep": 1, "knowledge:absent": 0})
    assert store.put(w("knowledge:out"), basis=basis).ledger_revision == 2


def test_put_many_is_all_or_nothing(store: Any) -> None:
    """A batch with one conflicting write commits none of its writes."""
    store.put(w("knowledge:b"))
    with pytest.raises(RevisionConflict):
        store.put_many([w("knowledge:a"), w("knowledge:b", expect_revision=0)])
    with store.reader() as r:
        assert r.get("knowledge:a") is None
        assert r.ledger_revision == 1


def test_put_many_takes_consecutive_revisions(store: Any) -> None:
    """A batch of N writes takes N consecutive ledger revisions in order."""
    receipts = store.put_many([w("knowledge:a"), w("knowledge:b"), w("knowledge:c")])
    assert [r.ledger_revision for r in receipts] == [1, 2, 3]


def test_put_many_duplicate_id_rejected(store: Any) -> None:
    """The same id twice in one batch is duplicate_write with the pointer of the second."""
    with pytest.raises(AssayError) as info:
        store.put_many([w("knowledge:a"), w("knowledge:a")])
    assert (info.value.code, info.value.pointer) == ("duplicate_write", "/writes/1/id")


def test_put_many_failing_last_write_leaves_no_trace(store: Any) -> None:
    """A batch whose last write conflicts writes no version, link or request id of any write."""
    store.put(w("knowledge:c"))
    batch = [w("knowledge:a", links=(Link("cites", "knowledge:c"),), request_id="ra"),
             w("knowledge:b", request_id="rb"),
             w("knowledge:c", data={"v": 2}, expect_revision=0)]
    with pytest.raises(RevisionConflict) as info:
        store.put_many(batch)
    assert (info.value.pointer, info.value.current_revision) == ("/writes/2/expect_revision", 1)
    with store.reader() as r:
        assert r.ledger_revision == 1
        assert r.get("knowledge:a") is None and r.get("knowledge:b") is None
        assert r.find(link=("cites", "knowledge:c")) == []
    # The request ids were not spent: the same writes now commit, not replay.
    receipts = store.put_many(batch[:2])
    assert [(r.ledger_revision, r.replayed) for r in receipts] == [(2, False), (3, False)]


def test_put_many_replays_keep_their_place_among_new_writes(store: Any) -> None:
    """A batch mixing replayed request ids and new writes answers each write in batch order."""
    first = store.put(w("knowledge:a", request_id="ra"))
    receipts = store.put_many([w("knowledge:b", request_id="rb"),
                               w("knowledge:a", request_id="ra"), w("knowledge:c")])
    assert [(r.id, r.ledger_revision, r.replayed) for r in receipts] == [
        ("knowledge:b", 2, False), ("knowledge:a", 1, True), ("knowledge:c", 3, False)]
    assert receipts[1].to_dict() == first.to_dict() | {"replayed": True}
    replayed = store.put_many([w("knowledge:b", request_id="rb"), w("knowledge:a", request_id="ra")])
    assert [r.replayed for r in replayed] == [True, True]
    assert head(store) == 3


def test_put_many_request_conflict_writes_nothing(store: Any) -> None:
    """A reused request id with another body anywhere in a batch refuses the whole batch."""
    store.put(w("knowledge:a", request_id="ra"))
    with pytest.raises(RequestConflict):
        store.put_many([w("knowledge:b"), w("knowledge:a", data={"v": 9}, request_id="ra")])
    assert head(store) == 1


def test_put_many_checks_the_basis_once_before_any_write(store: Any) -> None:
    """A batch with a stale basis commits nothing; with a fresh one, writes to basis records commit."""
    store.put(w("knowledge:dep"))
    with store.reader() as r:
        basis = WriteBasis(epoch=r.epoch, ledger_revision=r.ledger_revision,
                           records={"knowledge:dep": 1})
    receipts = store.put_many([w("knowledge:dep", data={"v": 2}), w("knowledge:out")], basis=basis)
    assert [r.ledger_revision for r in receipts] == [2, 3]
    with pytest.raises(RevisionConflict):
        store.put_many([w("knowledge:x"), w("knowledge:y")], basis=basis)
    assert head(store) == 3


def test_put_many_private_partitions_take_their_own_revisions(store: Any) -> None:
    """A batch of one principal's private and project writes numbers each partition on its own."""
    alice = store.as_principal("alice")
    try:
        alice.put(w("knowledge:a"))
        receipts = alice.put_many([w("knowledge:a", audience="private:alice"),
                                   w("knowledge:a", data={"v": 2}, audience="project",
                                     expect_revision=1)])
        assert [(r.revision, r.ledger_revision) for r in receipts] == [(1, 2), (2, 3)]
        with pytest.raises(AssayError) as info:
            alice.put_many([w("knowledge:b"), w("knowledge:c", audience="private:bob")])
        assert (info.value.code, info.value.pointer) == ("audience_not_allowed",
                                                         "/writes/1/audience")
        with store.reader() as r:
            assert r.get("knowledge:a").revision == 2 and r.ledger_revision == 3
    finally:
        alice.close()


def test_ledger_revisions_gap_free(store: Any) -> None:
    """Ledger revisions rise by one per committed write, across records and rejections."""
    for i in range(10):
        store.put(w(f"knowledge:r{i % 3}", data={"i": i}))
        with pytest.raises(RevisionConflict):
            store.put(w(f"knowledge:r{i % 3}", expect_revision=0))
    with store.reader() as r:
        seen = sorted(v.ledger_revision for i in range(3) for v in r.history(f"knowledge:r{i}"))
    assert seen == list(range(1, 11))


def test_reader_is_a_consistent_snapshot(store: Any, ledger_url: str) -> None:
    """A reader keeps seeing the revision it opened at while another connection writes."""
    store.put(w(data={"v": 1}))
    other = open_store(ledger_url)
    try:
        with store.reader() as r:
            before = r.get("knowledge:a").data
            other.put(w(data={"v": 2}))
            assert r.get("knowledge:a").data == before == {"v": 1}
            assert r.ledger_revision == 1
        with store.reader() as r:
            assert r.get("knowledge:a").data == {"v": 2}
    finally:
        other.close()


def test_get_many_returns_only_existing(store: Any) -> None:
    """get_many returns the current versions of the ids that exist."""
    store.put(w("knowledge:a"))
    store.put(w("knowledge:b", data={"v": 2}))
    with store.reader() as r:
        found = r.get_many(["knowledge:a", "knowledge:b", "knowledge:zzz"])
    assert sorted(found) == ["knowledge:a", "knowledge:b"]


def test_find_filters(store: Any) -> None:
    """find filters by scope, kind, status, link and a case-insensitive text query."""
    store.put(w("knowledge:login", data={"text": "Login Flow"}))
    store.put(w("evidence:unit", data={"cmd": "pytest"},
                links=(Link("supports", "knowledge:login"),)))
    store.put(w("knowledge:old", status="retired"))
    store.put(w("knowledge:elsewhere", scope="project:other"))
    store.put(w("knowledge:shared", scope="global"))
    with store.reader() as r:
        ids = lambda rs: [x.id for x in rs]
        assert ids(r.find(kind="knowledge", scopes=[SCOPE])) == ["knowledge:login", "knowledge:old"]
        assert ids(r.find(status="retired")) == ["knowledge:old"]
        assert ids(r.find(link=(None, "knowledge:login"))) == ["evidence:unit"]
        assert ids(r.find(link=("requires", "knowledge:login"))) == []
        assert ids(r.find(query="login flow")) == ["knowledge:login"]
        assert ids(r.find(scopes=[SCOPE, "global"], query="shared")) == ["knowledge:shared"]
        assert len(r.find(limit=2)) == 2
        assert r.find(scopes=[]) == []


def test_find_by_kind_never_matches_a_longer_kind(store: Any) -> None:
    """A kind filter matches that kind exactly, not kinds it is a prefix of or that sort next to it."""
    for record_id in ("task:a", "task:z~", "task-list:b", "tasks:c", "tas:d", "tasl:e", "u:f"):
        store.put(w(record_id))
    with store.reader() as r:
        assert [x.id for x in r.find(kind="task")] == ["task:a", "task:z~"]
        assert [x.id for x in r.find(kind="task-list")] == ["task-list:b"]
        assert [x.id for x in r.find(kind="tas")] == ["tas:d"]
        assert r.find(kind="ta") == []


def test_find_orders_ids_bytewise(store: Any) -> None:
    """find returns ids in bytewise (code point) order on both backends, whatever the collation."""
    ids = ["note:b", "note:B", "note:a", "note:_", "note:\u00e9", "note:Z9", "note:z"]
    for record_id in ids:
        store.put(w(record_id))
    with store.reader() as r:
        assert [x.id for x in r.find(kind="note")] == sorted(ids)
        assert [x.id for x in r.find()] == sorted(ids)


def test_links_follow_the_current_version(store: Any) -> None:
    """Link queries see the links of the current version only."""
    store.put(w("evidence:e", links=(Link("supports", "knowledge:a"),)))
    store.put(w("evidence:e", links=(Link("supports", "knowledge:b"),)))
    with store.reader() as r:
        assert r.find(link=(None, "knowledge:a")) == []
        assert [x.id for x in r.find(link=("supports", "knowledge:b"))] == ["evidence:e"]


def test_record_fields_round_trip(store: Any, ledger_url: str) -> None:
    """Status, successor, audience, sources, origin and links are stored as written."""
    store.put(w("knowledge:new"))
    store.put(w("note:n", status="superseded", superseded_by="knowledge:new",
                audience="private:alice", sources=(SourceRef("knowledge:new", 1, "ab" * 32),),
                links=(Link("derived-from", "knowledge:new"),), origin="derived"))
    alice = open_store(ledger_url, principal="alice")
    try:
        with alice.reader() as r:
            rec = r.get("note:n")
    finally:
        alice.close()
    assert (rec.status, rec.superseded_by, rec.audience, rec.origin) == (
        "superseded", "knowledge:new", "private:alice", "derived")
    assert rec.sources == (SourceRef("knowledge:new", 1, "ab" * 32),)
    assert rec.links == (Link("derived-from", "knowledge:new"),)
    assert rec.kind == "note" and rec.created_at.endswith("Z")


@pytest.mark.parametrize(
    ("write", "code", "pointer"),
    [
        (w("nocolon"), "invalid_id", "/id"),
        (w("Knowledge:a"), "invalid_id", "/id"),
        (w("knowledge:"), "invalid_id", "/id"),
        (w("knowledge:a\nb"), "invalid_id", "/id"),
        (w("knowledge:" + "x" * 600), "invalid_id", "/id"),
        (w(data={"bad": {1, 2}}), "invalid_json", "/data/bad"),
        (w(data={"n": float("nan")}), "invalid_json", "/data/n"),
        (w(data={"big": 2**53 + 1}), "unsafe_integer", "/data/big"),
        (w(data={"s": "\ud800"}), "lone_surrogate", "/data/s"),
        (w(data="x" * (MAX_DATA_BYTES + 1)), "resource_limit", "/data"),
        (w(status="archived"), "invalid_status", "/status"),
        (w(status="superseded"), "invalid_status", "/superseded_by"),
        (w(scope="team"), "invalid_scope", "/scope"),
        (w(audience="everyone"), "invalid_audience", "/audience"),
        (w(links=(Link("likes", "knowledge:b"),)), "invalid_link", "/links/0/rel"),
        (w(sources=(SourceRef("knowledge:b", 0),)), "invalid_source", "/sources/0/revision"),
        (w(origin="oracle"), "invalid_origin", "/origin"),
    ],
)
def test_put_rejects_bad_input_and_writes_nothing(store: Any, write: Write, code: str,
                                                   pointer: str) -> None:
    """Bad input is refused with its exact code and pointer, and nothing is written."""
    with pytest.raises(AssayError) as info:
        store.put(write)
    assert (info.value.code, info.value.pointer) == (code, pointer)
    assert head(store) == 0


def test_info_reports_counts(store: Any) -> None:
    """info names the backend, schema version, revision and counts by status."""
    store.put(w("knowledge:a"))
    store.put(w("knowledge:a", status="retired"))
    store.put(w("knowledge:b"))
    info = store.info().to_dict()
    assert info["backend"] in ("sqlite", "postgresql")
    assert (info["ledger_revision"], info["records"], info["versions"], info["schema_version"]) == (3, 2, 3,
                                                                                           SCHEMA_VERSION)
    assert info["by_status"] == {"current": 1, "retired": 1}
    assert len(info["epoch"]) == 32


def test_epoch_is_stable_across_opens(ledger_url: str) -> None:
    """Reopening a ledger keeps its epoch; the epoch is minted once at creation."""
    first = open_store(ledger_url)
    epoch = first.info().epoch
    first.close()
    second = open_store(ledger_url)
    try:
        assert second.info().epoch == epoch
    finally:
        second.close()


def test_newer_schema_is_refused(store: Any, ledger_url: str) -> None:
    """A ledger written by a newer schema version is refused with schema_too_new."""
    with store._write_transaction() as cur:  # a future assay's migration, simulated in SQL
        cur.execute(store.sql("UPDATE ledger_meta SET value = ? WHERE key = 'schema_version'"), ("99",))
    with pytest.raises(AssayError) as info:
        open_store(ledger_url)
    assert info.value.code == "schema_too_new"
    assert info.value.details["schema_version"] == 99


def _has_table(store: Any, name: str) -> bool:
    sql = ("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?"
           if store.dialect == "sqlite" else
           "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() "
           "AND table_name = ?")
    with store.reader() as r:
        return bool(r._rows(sql, (name,))[0][0])


def as_unsealed(store: Any, cur: Any) -> None:
    """Drop what schema 4 added (the seal and chain columns, PostgreSQL's sealing trigger)."""
    if store.dialect == "postgres":
        cur.execute("DROP TRIGGER IF EXISTS assay_seal_version ON record_versions")
    cur.execute("ALTER TABLE record_versions DROP COLUMN version_sha256")
    cur.execute("ALTER TABLE record_versions DROP COLUMN chain_sha256")


def test_version_1_ledger_is_migrated(store: Any, ledger_url: str) -> None:
    """A schema-1 ledger (with its counter row and heads table) opens migrated and keeps every fact.

    Version 1 kept the ledger revision in a one-row ``ledger_head`` table and
    each record's current revision in a ``records`` heads table; version 2
    reads both from the versions. The migration drops the two tables; the
    revision, epoch and records stay, and the next write takes the next
    revisions.
    """
    store.put(w("knowledge:a"))
    store.put(w("knowledge:a", data={"v": 2}, status="retired"))
    store.put(w("knowledge:b"))
    epoch = store.info().epoch
    with store._write_transaction() as cur:  # how version 1 left a ledger, in SQL
        cur.execute("CREATE TABLE ledger_head (one INTEGER PRIMARY KEY CHECK (one = 1), "
                    "revision BIGINT NOT NULL)")
        cur.execute("INSERT INTO ledger_head (one, revision) VALUES (1, 3)")
        cur.execute("CREATE TABLE records (id TEXT PRIMARY KEY, revision BIGINT NOT NULL, "
                    "kind TEXT NOT NULL, scope TEXT NOT NULL, status TEXT NOT NULL, "
                    "ledger_revision BIGINT NOT NULL)")
        cur.execute("CREATE INDEX records_kind_scope ON records (kind, scope)")
        cur.execute("INSERT INTO records VALUES ('knowledge:a', 2, 'knowledge', 'project:demo', "
                    "'retired', 2), ('knowledge:b', 1, 'knowledge', 'project:demo', 'current', 3)")
        if store.dialect == "postgres":  # version 1 compared ids by the database's collation
            cur.execute('ALTER TABLE record_versions ALTER COLUMN id TYPE TEXT COLLATE "default"')
        as_unsealed(store, cur)
        cur.execute("UPDATE ledger_meta SET value = '1' WHERE key = 'schema_version'")
    store.close()
    migrated = open_store(ledger_url)
    try:
        info = migrated.info()
        assert (info.schema_version, info.epoch, info.ledger_revision, info.records,
                info.versions, dict(info.by_status)) == (
            SCHEMA_VERSION, epoch, 3, 2, 3, {"current": 1, "retired": 1})
        assert not _has_table(migrated, "ledger_head") and not _has_table(migrated, "records")
        receipt = migrated.put(w("knowledge:a", data={"v": 3}, expect_revision=2))
        assert (receipt.revision, receipt.ledger_revision) == (3, 4)
        with migrated.reader() as r:
            assert [v.data for v in r.history("knowledge:a")] == [{"v": 1}, {"v": 2}, {"v": 3}]
    finally:
        migrated.close()


def _as_version_2(store: Any) -> None:
    """Rebuild this ledger's tables the way schema version 2 laid them out, keeping every row.

    Version 2 keyed versions by (id, revision) alone, so one sequence of
    revisions could change audience; its link index and request ids knew no
    audience or principal.
    """
    with store._write_transaction() as cur:
        # knowledge:a: revision 1 for the project, then revision 2 made private to alice.
        cur.execute(store.sql("UPDATE record_versions SET revision = 2 "
                              "WHERE id = 'knowledge:a' AND ledger_revision = 2"))
        cur.execute("DROP INDEX record_versions_id")
        cur.execute("CREATE UNIQUE INDEX record_versions_id ON record_versions (id, revision)")
        cur.execute("DROP TABLE record_links")
        cur.execute("CREATE TABLE record_links (id TEXT NOT NULL, rel TEXT NOT NULL, "
                    "target TEXT NOT NULL, PRIMARY KEY (id, rel, target))")
        cur.execute("DROP TABLE requests")
        cur.execute("CREATE TABLE requests (request_id TEXT PRIMARY KEY, body_sha256 TEXT NOT NULL, "
                    "id TEXT NOT NULL, revision BIGINT NOT NULL, ledger_revision BIGINT NOT NULL, "
                    "data_sha256 TEXT NOT NULL)")
        cur.execute("INSERT INTO record_links VALUES ('knowledge:b', 'requires', 'knowledge:a')")
        cur.execute("INSERT INTO requests VALUES ('r-1', 'ab', 'knowledge:b', 1, 3, 'cd')")
        as_unsealed(store, cur)
        cur.execute("UPDATE ledger_meta SET value = '2' WHERE key = 'schema_version'")


def test_version_2_ledger_is_migrated_into_partitions(store: Any, ledger_url: str) -> None:
    """A schema-2 ledger opens migrated: versions split by audience keep their revisions, links and requests move over."""
    store.put(w("knowledge:a", data={"v": 1}))
    store.put(w("knowledge:a", data={"v": 2}, audience="private:alice"))
    store.put(w("knowledge:b", links=(Link("requires", "knowledge:a"),)))
    _as_version_2(store)
    store.close()
    migrated = open_store(ledger_url)
    alice = open_store(ledger_url, principal="alice")
    try:
        info = migrated.info()
        assert (info.schema_version, info.ledger_revision, info.records) == (SCHEMA_VERSION, 3, 2)
        with migrated.reader() as r:
            assert [(v.revision, v.data) for v in r.history("knowledge:a")] == [(1, {"v": 1})]
            assert [x.id for x in r.find(link=("requires", "knowledge:a"))] == ["knowledge:b"]
        with alice.reader() as r:
            assert [(v.revision, v.data) for v in r.history("knowledge:a")] == [(2, {"v": 2})]
        receipt = alice.put(w("knowledge:a", data={"v": 3}, audience="private:alice",
                              expect_revision=2))
        assert (receipt.revision, receipt.ledger_revision) == (3, 4)
        assert migrated.put(w("knowledge:a", data={"v": 4}, expect_revision=1)).revision == 2
    finally:
        migrated.close()
        alice.close()


def test_find_filters_audiences_before_the_limit(store: Any) -> None:
    """An audience filter applies before the limit, so hidden records never fill a page."""
    store.put(w("note:a-private", audience="private:alice"))
    store.put(w("note:b-public"))
    with store.reader() as r:
        assert [x.id for x in r.find(limit=1, audiences=["project", "private:bob"])] == ["note:b-public"]
        assert r.find(audiences=[]) == []


def test_find_after_and_find_count_page_what_the_reader_may_read(store: Any,
                                                                  ledger_url: str) -> None:
    """find pages after an id (bytewise), and find_count counts exactly the records find
    returns for the same filters: never another principal's, never a shadowed project one."""
    for record_id in ("note:a", "note:b", "note:c", "note:\u00e9", "other:x"):
        store.put(w(record_id, data={"text": "match"}))
    store.put(w("note:bob-only", data={"text": "match"}, audience="private:bob"))
    store.put(w("note:b", data={"text": "match"}, audience="private:alice"))
    store.put(w("note:d-alice", data={"text": "match"}, audience="private:alice"))
    alice = open_store(ledger_url, principal="alice")
    try:
        with alice.reader() as r:
            filters: dict[str, Any] = {"kind": "note", "query": "match"}
            every = [x.id for x in r.find(limit=100, **filters)]
            assert every == ["note:a", "note:b", "note:c", "note:d-alice", "note:\u00e9"]
            assert r.find_count(**filters) == 5
            assert [x.id for x in r.find(after="note:b", limit=2, **filters)] == [
                "note:c", "note:d-alice"]
            assert r.find_count(after="note:b", **filters) == 3
            assert r.find_count(after="note:\u00e9", **filters) == 0
            # Alice's own note:b still shadows the project's within a narrower filter.
            assert r.find_count(audiences=["project"], **filters) == 3 == len(
                r.find(audiences=["project"], **filters))
            assert r.find_count(kind="no:kind") == 0 and r.find_count(scopes=[]) == 0
    finally:
        alice.close()


def test_write_timestamps_are_rfc3339_utc_milliseconds(store: Any) -> None:
    """created_at is the commit's UTC time as YYYY-MM-DDTHH:MM:SS.mmmZ."""
    import re
    from datetime import UTC, datetime

    before = datetime.now(UTC).replace(microsecond=0)
    store.put(w("knowledge:t"))
    after = datetime.now(UTC)
    with store.reader() as r:
        stamp = r.get("knowledge:t").created_at
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", stamp)
    assert before <= datetime.fromisoformat(stamp) <= after
