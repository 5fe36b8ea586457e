"""The ledger logic shared by both SQL backends.

Both backends store the same tables and run the same statements (written
with ``?`` placeholders; the PostgreSQL backend rewrites them to ``%s``).
What differs lives in the backend modules: how a connection is opened, how a
write transaction takes the ledger's single write lock, how a read view is
made consistent, and the DDL. This module imports only the ledger contract and
the base modules.

A write transaction always follows the same order, so that every rule is
checked against the state the write will commit on top of:

1. take the write lock;
2. replay or refuse request ids;
3. check the write basis (epoch, then every record precondition);
4. per write: append the version in one statement that takes the next
   ledger revision (the highest stored one plus one) and the record's next
   revision (its highest plus one), then check the expected revision and
   index the version's links and request id.

Versions are the only copy of a record. They are only ever appended, one per
write, under the write lock, so the ledger revision (the highest key of
``record_versions``) is gap-free and strictly increasing in commit order, and
a record's current version is simply its highest revision: no counter or
head row is updated on every write.

Any exception before commit rolls the transaction back: nothing is written.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from assay.canonical import read_integer
from assay.errors import AssayError, EpochConflict, RequestConflict, RevisionConflict
from assay.ledger.store import (
    LedgerInfo,
    Link,
    PreparedWrite,
    Receipt,
    Record,
    SourceRef,
    Write,
    WriteBasis,
    validate_write,
)

__all__ = ["MIGRATIONS", "SqlLedger", "SqlReader", "migration_steps", "now_rfc3339"]

MAX_BATCH = 1000
_VERSION_COLUMNS = (
    "v.id, v.revision, v.kind, v.scope, v.data, v.data_sha256, v.status, v.superseded_by, "
    "v.links, v.audience, v.sources, v.origin, v.created_at, v.ledger_revision, v.request_id"
)


# What brings a ledger at an older schema version up to each version, per
# dialect. A new ledger gets the current DDL and needs none of them.
MIGRATIONS: dict[str, dict[int, tuple[str, ...]]] = {
    # 2: versions are the only copy of a record. The ledger revision is the
    # highest version key and a record's current version its highest
    # revision, so neither the counter row nor the heads table is kept up to
    # date on every write. On PostgreSQL ids compare bytewise (as on SQLite),
    # which makes the ids of one kind a range of the (id, revision) index.
    "sqlite": {2: ("DROP TABLE IF EXISTS ledger_head", "DROP TABLE IF EXISTS records")},
    "postgres": {2: ("DROP TABLE IF EXISTS ledger_head", "DROP TABLE IF EXISTS records",
                     'ALTER TABLE record_versions ALTER COLUMN id TYPE TEXT COLLATE "C"')},
}


def migration_steps(dialect: str, version: int) -> list[str]:
    """The statements that bring a ledger at schema ``version`` (0: new) to the current one."""
    steps = MIGRATIONS[dialect]
    return [step for target in sorted(steps) if 0 < version < target for step in steps[target]]


# The ledger revision: the highest version key (0 for an empty ledger).
_HEAD = "SELECT coalesce(max(ledger_revision), 0) FROM record_versions"
# A record's current revision: its highest (0 when it does not exist).
_CURRENT = "SELECT coalesce(max(revision), 0) FROM record_versions WHERE id = ?"
# Keeps only the current version of each record in a query over versions v
# (checked on the (id, revision) index, so a query that stops at its limit
# reads only as far as it needs).
_IS_CURRENT = "v.revision = (SELECT max(x.revision) FROM record_versions x WHERE x.id = v.id)"


def _current_versions(id_filter: str = "") -> str:
    """A FROM clause of the current versions ``v`` of the ids ``id_filter`` keeps.

    For a known set of ids, or an aggregate over all of them: the (id,
    revision) index alone gives each id's highest revision, so only one table
    row per record is read, not one per version.
    """
    return (f"(SELECT id, max(revision) AS revision FROM record_versions{id_filter} "
            "GROUP BY id) c JOIN record_versions v ON v.id = c.id AND v.revision = c.revision")


# One write is one statement: the next ledger revision and the record's next
# revision are read under the write lock by the statement that appends the
# version; a failed expectation then rolls it back.
_APPEND = (
    "INSERT INTO record_versions (ledger_revision, id, revision, kind, scope, data, data_sha256, "
    "status, superseded_by, links, audience, sources, origin, created_at, request_id) "
    "SELECT (SELECT coalesce(max(ledger_revision), 0) + 1 FROM record_versions), ?, "
    "(SELECT coalesce(max(revision), 0) + 1 FROM record_versions WHERE id = ?), "
    "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? RETURNING revision, ledger_revision"
)


_second: tuple[int, str] = (-1, "")


def now_rfc3339() -> str:
    """The current UTC time as RFC 3339 with milliseconds (``2026-01-02T03:04:05.678Z``).

    Every write stamps one; the text of the current second is formatted once.
    """
    global _second
    seconds, nanos = divmod(time.time_ns(), 1_000_000_000)
    cached = _second
    if cached[0] != seconds:
        cached = _second = (seconds, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)))
    return f"{cached[1]}.{nanos // 1_000_000:03d}Z"


def _data(text: str) -> Any:
    """The stored canonical data text as values that canonicalise back to the same text.

    JCS writes a large double such as 3.549762440783015e16 as the integer
    literal 35497624407830150, which no double holds exactly; plain
    ``json.loads`` would read that exact integer and the value could then be
    neither digested nor written again (``unsafe_integer``). Integer literals
    go through the canonical module's reading of such literals (a cheap call
    per integer, never a scan of the whole text).
    """
    return json.loads(text, parse_int=read_integer)


def _record(row: Sequence[Any]) -> Record:
    # Most records have neither links nor sources: skip decoding "[]".
    links = () if row[8] == "[]" else tuple(
        Link(x["rel"], x["target"]) for x in json.loads(row[8]))
    sources = () if row[10] == "[]" else tuple(
        SourceRef(x["id"], x["revision"], x.get("data_sha256")) for x in json.loads(row[10]))
    return Record(
        id=row[0], revision=row[1], kind=row[2], scope=row[3], data=_data(row[4]),
        data_sha256=row[5], status=row[6], superseded_by=row[7], links=links,
        audience=row[9], sources=sources, origin=row[11], created_at=row[12],
        ledger_revision=row[13], request_id=row[14], data_text=row[4],
    )


class SqlReader:
    """A consistent read view over one open transaction (see :class:`~assay.ledger.store.Reader`)."""

    def __init__(self, ledger: SqlLedger, cursor: Any, epoch: str, ledger_revision: int) -> None:
        self._ledger = ledger
        self._cur = cursor
        self.epoch = epoch
        self.ledger_revision = ledger_revision

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        try:
            self._cur.execute(self._ledger.sql(sql), tuple(params))
        except UnicodeEncodeError:
            # An id or filter with a lone surrogate (from argv bytes that are
            # not UTF-8, or a JSON escape) can name nothing in the ledger.
            raise AssayError("a read filter holds a lone surrogate, which UTF-8 cannot encode",
                             code="lone_surrogate",
                             action="Pass ids and filters as valid UTF-8 text.") from None
        return list(self._cur.fetchall())

    def get(self, record_id: str, revision: int | None = None) -> Record | None:
        if revision is None:
            rows = self._rows(f"SELECT {_VERSION_COLUMNS} FROM record_versions v WHERE v.id = ? "
                              "ORDER BY v.revision DESC LIMIT 1", (record_id,))
        else:
            rows = self._rows(f"SELECT {_VERSION_COLUMNS} FROM record_versions v "
                              "WHERE v.id = ? AND v.revision = ?", (record_id, revision))
        return _record(rows[0]) if rows else None

    def get_many(self, record_ids: Sequence[str]) -> dict[str, Record]:
        out: dict[str, Record] = {}
        unique = sorted(set(record_ids))
        for start in range(0, len(unique), 500):
            chunk = unique[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for row in self._rows(
                f"SELECT {_VERSION_COLUMNS} FROM {_current_versions(f' WHERE id IN ({marks})')}",
                chunk):
                out[row[0]] = _record(row)
        return out

    def history(self, record_id: str) -> list[Record]:
        return [_record(r) for r in self._rows(
            f"SELECT {_VERSION_COLUMNS} FROM record_versions v WHERE v.id = ? "
            "ORDER BY v.revision", (record_id,))]

    def find(
        self,
        *,
        scopes: Sequence[str] | None = None,
        kind: str | None = None,
        status: str | None = None,
        link: tuple[str | None, str] | None = None,
        query: str | None = None,
        limit: int = 100,
        audiences: Sequence[str] | None = None,
    ) -> list[Record]:
        where: list[str] = [_IS_CURRENT]
        params: list[Any] = []
        joins = ""
        if kind is not None:
            if ":" in kind:  # no kind holds ':' (it ends the kind in an id)
                return []
            # An id is "<kind>:<name>" and ids compare bytewise on both
            # backends: the ids of one kind are the range ["<kind>:", "<kind>;"),
            # read from the (id, revision) index in order.
            where.append("v.id >= ? AND v.id < ?")
            params.extend([kind + ":", kind + ";"])
        if audiences is not None:
            if not audiences:
                return []
            where.append(f"v.audience IN ({','.join('?' * len(audiences))})")
            params.extend(audiences)
        if scopes is not None:
            if not scopes:
                return []
            where.append(f"v.scope IN ({','.join('?' * len(scopes))})")
            params.extend(scopes)
        if status is not None:
            where.append("v.status = ?")
            params.append(status)
        if link is not None:
            rel, target = link
            joins = " JOIN record_links l ON l.id = v.id"
            where.append("l.target = ?")
            params.append(target)
            if rel is not None:
                where.append("l.rel = ?")
                params.append(rel)
        if query:
            needle = query.lower()
            where.append("(instr(lower(v.id), ?) > 0 OR instr(lower(v.data), ?) > 0)"
                         if self._ledger.dialect == "sqlite"
                         else "(strpos(lower(v.id), ?) > 0 OR strpos(lower(v.data), ?) > 0)")
            params.extend([needle, needle])
        sql = (f"SELECT DISTINCT {_VERSION_COLUMNS} FROM record_versions v{joins} WHERE "
               + " AND ".join(where) + " ORDER BY v.id LIMIT ?")
        params.append(int(limit))
        return [_record(r) for r in self._rows(sql, params)]

    def counts(self) -> tuple[int, int, dict[str, int]]:
        # Every record has exactly one first version.
        records = self._rows("SELECT COUNT(*) FROM record_versions WHERE revision = 1")[0][0]
        versions = self._rows("SELECT COUNT(*) FROM record_versions")[0][0]
        by_status = {row[0]: row[1] for row in self._rows(
            f"SELECT v.status, COUNT(*) FROM {_current_versions()} GROUP BY v.status")}
        return int(records), int(versions), by_status


class SqlLedger:
    """Ledger operations over a DB-API connection; subclasses supply the dialect."""

    dialect = "sqlite"
    backend = "sqlite"
    location = ""

    # -- dialect hooks -------------------------------------------------------------
    def sql(self, statement: str) -> str:
        return statement

    @contextmanager
    def _write_transaction(self) -> Iterator[Any]:  # pragma: no cover - abstract
        raise NotImplementedError
        yield

    @contextmanager
    def _read_transaction(self) -> Iterator[Any]:  # pragma: no cover - abstract
        raise NotImplementedError
        yield

    def close(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- shared logic --------------------------------------------------------------
    def _one(self, cur: Any, statement: str, params: Sequence[Any] = ()) -> Any:
        cur.execute(self.sql(statement), tuple(params))
        return cur.fetchone()

    _epoch: str | None = None

    # The first statement of a write transaction, when the dialect needs one
    # to take the write lock (PostgreSQL takes a transaction advisory lock;
    # SQLite's BEGIN IMMEDIATE already holds the lock).
    write_lock: str | None = None

    def _epoch_of(self, cur: Any) -> str:
        # The epoch never changes once minted: read it once per connection.
        if self._epoch is None:
            self._epoch = str(self._one(cur, "SELECT value FROM ledger_meta WHERE key = 'epoch'")[0])
        return self._epoch

    def _head(self, cur: Any) -> tuple[str, int]:
        epoch = self._epoch_of(cur)
        return epoch, int(self._one(cur, _HEAD)[0])

    @contextmanager
    def reader(self) -> Iterator[SqlReader]:
        """A consistent read view; see :class:`~assay.ledger.store.Store.reader`."""
        with self._read_transaction() as cur:
            epoch, revision = self._head(cur)
            yield SqlReader(self, cur, epoch, revision)

    def info(self) -> LedgerInfo:
        with self.reader() as r:
            records, versions, by_status = r.counts()
            schema = int(self._one(r._cur, "SELECT value FROM ledger_meta WHERE key = 'schema_version'")[0])
            return LedgerInfo(
                backend=self.backend, location=self.location, epoch=r.epoch,
                ledger_revision=r.ledger_revision, schema_version=schema, records=records,
                versions=versions, by_status=by_status,
            )

    def put(self, write: Write, *, basis: WriteBasis | None = None) -> Receipt:
        return self._put_prepared(validate_write(write), basis)

    def _put_prepared(self, p: PreparedWrite, basis: WriteBasis | None) -> Receipt:
        """Commit one validated write (the storage half of :meth:`put`)."""
        return self._commit([p], basis)[0]

    def put_many(self, writes: Sequence[Write], *, basis: WriteBasis | None = None) -> list[Receipt]:
        if not writes:
            return []
        if len(writes) > MAX_BATCH:
            raise AssayError(f"a batch holds at most {MAX_BATCH} writes", code="resource_limit",
                             pointer="/writes")
        prepared = [validate_write(w, index=i) for i, w in enumerate(writes)]
        seen: set[str] = set()
        for i, p in enumerate(prepared):
            if p.write.id in seen:
                raise AssayError(f"{p.write.id} appears twice in one batch", code="duplicate_write",
                                 pointer=f"/writes/{i}/id")
            seen.add(p.write.id)
        return self._commit(prepared, basis)

    def _commit(self, prepared: list[PreparedWrite], basis: WriteBasis | None) -> list[Receipt]:
        with self._write_transaction() as cur:
            if self.write_lock is not None:
                cur.execute(self.write_lock)
            receipts = [None if p.write.request_id is None else self._replay(cur, p)
                        for p in prepared]
            if None not in receipts:  # every write is a replay
                return [r for r in receipts if r is not None]
            if basis is not None:
                self._check_basis(cur, self._epoch_of(cur), basis)
            now = now_rfc3339()
            for index, p in enumerate(prepared):
                if receipts[index] is not None:
                    continue
                w = p.write
                row = self._one(cur, _APPEND, (
                    w.id, w.id, p.kind, w.scope, p.data_text, p.data_sha256, w.status,
                    w.superseded_by, p.links_text, w.audience, p.sources_text, w.origin, now,
                    w.request_id))
                revision, ledger_revision = int(row[0]), int(row[1])
                if w.expect_revision is not None and w.expect_revision != revision - 1:
                    raise RevisionConflict(
                        f"{w.id} is at revision {revision - 1}, not {w.expect_revision}",
                        record_id=w.id, current_revision=revision - 1,
                        pointer=f"/writes/{index}/expect_revision" if len(prepared) > 1
                        else "/expect_revision",
                    )
                self._index_write(cur, p, revision, ledger_revision)
                receipts[index] = Receipt(w.id, revision, ledger_revision, p.data_sha256,
                                          w.request_id, False)
            return [r for r in receipts if r is not None]

    def _replay(self, cur: Any, p: PreparedWrite) -> Receipt | None:
        row = self._one(cur, "SELECT body_sha256, id, revision, ledger_revision, data_sha256 "
                        "FROM requests WHERE request_id = ?", (p.write.request_id,))
        if row is None:
            return None
        if row[0] != p.body_sha256:
            raise RequestConflict(
                f"request id {p.write.request_id!r} was already used with a different body",
                details={"request_id": p.write.request_id, "id": row[1], "revision": row[2]},
                action="Use a new request id for a new write.",
            )
        return Receipt(row[1], int(row[2]), int(row[3]), row[4], p.write.request_id, True)

    def _check_basis(self, cur: Any, epoch: str, basis: WriteBasis) -> None:
        if basis.epoch != epoch:
            raise EpochConflict(
                "the write basis was read from another ledger",
                details={"expected_epoch": basis.epoch, "epoch": epoch},
                action="Read again from this ledger before writing.",
            )
        for record_id, expected in sorted(basis.records.items()):
            current = int(self._one(cur, _CURRENT, (record_id,))[0])
            if current != expected:
                raise RevisionConflict(
                    f"{record_id} moved from revision {expected} to {current} since it was read",
                    record_id=record_id, current_revision=current,
                    pointer=f"/write_basis/records/{record_id.replace('~', '~0').replace('/', '~1')}",
                )

    def _index_write(self, cur: Any, p: PreparedWrite, revision: int, ledger_revision: int) -> None:
        """Point the link index at the new version's links; remember its request id."""
        w = p.write
        if revision > 1:
            cur.execute(self.sql("DELETE FROM record_links WHERE id = ?"), (w.id,))
        for link in {(link.rel, link.target) for link in w.links}:
            cur.execute(self.sql("INSERT INTO record_links (id, rel, target) VALUES (?, ?, ?)"),
                        (w.id, *link))
        if w.request_id is not None:
            cur.execute(self.sql(
                "INSERT INTO requests (request_id, body_sha256, id, revision, ledger_revision, "
                "data_sha256) VALUES (?, ?, ?, ?, ?, ?)"),
                (w.request_id, p.body_sha256, w.id, revision, ledger_revision, p.data_sha256))

