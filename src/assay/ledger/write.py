"""The write path shared by both backends: validating writes and the write transaction.

:func:`validate_write` checks a write's fields and computes its canonical
text and digests once; :class:`SqlWriter` holds the rules of a write
transaction (see :mod:`assay.ledger.sql` for their order), which the SQLite
backend runs as statements and the PostgreSQL backend mirrors in its server
functions (function_postgres.sql). This module imports only the record
module and the base modules.
"""

from __future__ import annotations

import re
import time
from collections import namedtuple
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

from assay.canonical import canonical_data, canonical_text, digest_bytes
from assay.errors import AssayError, EpochConflict, RequestConflict, RevisionConflict, pointer
from assay.ids import invisible_character, split_record_id, validate_principal
from assay.ledger.record import (
    AUDIENCE_PREFIX,
    CHAIN_GENESIS,
    DATA_KEYS,
    LINK_RELATIONS,
    MAX_DATA_DEPTH,
    ORIGINS,
    PROJECT_AUDIENCE,
    RECORD_STATUSES,
    VERSION_COLUMNS,
    VERSION_FIELDS,
    Link,
    SourceRef,
    chain_digest,
    data_keys,
    nesting_depth,
    version_digest,
    view_audiences,
)
from assay.value import field, frozen_value

# The typing module is for type checkers only (see assay.value): at run time
# PreparedWrite is a collections.namedtuple.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NamedTuple

__all__ = [
    "MAX_BATCH",
    "MAX_DATA_BYTES",
    "MAX_REVISION",
    "PREFERRED",
    "PreparedWrite",
    "Receipt",
    "SqlWriter",
    "Write",
    "WriteBasis",
    "marks",
    "now_rfc3339",
    "validate_write",
    "version_values",
]

# Revisions (a record's and the ledger's) stay far below both backends'
# 64-bit integers; a larger number names nothing and is refused as input.
MAX_REVISION = 2**53
MAX_DATA_BYTES = 4 * 1024 * 1024
MAX_BATCH = 1000


@frozen_value
class Receipt:
    """What a committed (or replayed) write returns."""

    id: str
    revision: int
    ledger_revision: int
    data_sha256: str
    request_id: str | None
    replayed: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "revision": self.revision,
            "ledger_revision": self.ledger_revision,
            "data_sha256": self.data_sha256,
            "request_id": self.request_id,
            "replayed": self.replayed,
        }


@frozen_value
class WriteBasis:
    """What a read saw, so a later write can require that nothing moved.

    ``records`` maps record ids to the revision the read depended on (0 means
    the record was absent). A basis from another ledger is ``epoch_conflict``.
    """

    epoch: str
    ledger_revision: int
    records: Mapping[str, int] = field(default_factory=dict)
    project: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "epoch": self.epoch,
            "ledger_revision": self.ledger_revision,
            "records": dict(sorted(self.records.items())),
        }
        if self.project is not None:
            out["project"] = dict(self.project)
        return out

    @classmethod
    def from_dict(cls, value: Any, *, where: str = "/write_basis") -> WriteBasis:
        if not isinstance(value, dict) or set(value) - {"epoch", "ledger_revision", "records",
                                                         "project"}:
            raise AssayError("a write basis is {epoch, ledger_revision, records, project?}",
                             code="invalid_write_basis", pointer=where)
        project = value.get("project")
        if project is not None and not (
            isinstance(project, dict) and isinstance(project.get("scope"), str)
            and isinstance(project.get("admitted_scopes", []), list)
        ):
            raise AssayError("a write basis project binding is {scope, admitted_scopes}",
                             code="invalid_write_basis", pointer=where + "/project")
        epoch = value.get("epoch")
        revision = value.get("ledger_revision", 0)
        records = value.get("records", {})
        if not isinstance(epoch, str) or not isinstance(revision, int) or isinstance(revision, bool):
            raise AssayError("write basis epoch must be a string and ledger_revision an integer",
                             code="invalid_write_basis", pointer=where)
        if not isinstance(records, dict) or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in records.values()
        ):
            raise AssayError("write basis records map ids to revisions >= 0",
                             code="invalid_write_basis", pointer=where + "/records")
        return cls(epoch=epoch, ledger_revision=revision, records=dict(records), project=project)


@frozen_value
class Write:
    """One record version to write.

    ``expect_revision``: None writes unconditionally, 0 requires the record to
    be absent, N requires the current revision to be N. ``request_id`` makes
    the write idempotent: the same id with the same body replays the first
    receipt; with another body it is ``request_conflict``.
    """

    id: str
    data: Any
    scope: str
    status: str = "current"
    superseded_by: str | None = None
    links: tuple[Link, ...] = ()
    audience: str = "project"
    sources: tuple[SourceRef, ...] = ()
    expect_revision: int | None = None
    request_id: str | None = None
    origin: str = "claim"

    def body(self, data_sha256: str) -> dict[str, Any]:
        """The request body that request ids are checked against.

        The data enters through its digest: the same data gives the same body
        without encoding the data a second time.
        """
        return {
            "id": self.id,
            "data_sha256": data_sha256,
            "scope": self.scope,
            "status": self.status,
            "superseded_by": self.superseded_by,
            "links": [link.to_dict() for link in self.links],
            "audience": self.audience,
            "sources": [s.to_dict() for s in self.sources],
            "expect_revision": self.expect_revision,
            "origin": self.origin,
        }


if TYPE_CHECKING:
    class PreparedWrite(NamedTuple):
        """A validated write with its canonical data text and digests computed once.

        A named tuple: it is built on every write, and is internal to the backends.
        """

        write: Write
        kind: str
        data_text: str
        data_sha256: str
        body_sha256: str | None  # None without a request id
        links_text: str
        sources_text: str
        keys: tuple[tuple[str, str], ...]  # record_keys rows (see data_keys)
else:
    PreparedWrite = namedtuple("PreparedWrite", ("write", "kind", "data_text", "data_sha256",
                                                 "body_sha256", "links_text", "sources_text",
                                                 "keys"))


_CONTROL = r"[\x00-\x1f\x7f-\x9f\u2028\u2029]"  # compiled (and cached by re) when first needed


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def validate_write(write: Write, *, index: int | None = None) -> PreparedWrite:
    """Check a write's fields and compute its canonical text and digests.

    Errors name the field with a pointer (``/id``, ``/data``, ``/links/0/rel``;
    prefixed with ``/writes/<index>`` inside a batch). Nothing is written here.
    """
    base = f"/writes/{index}" if index is not None else ""
    kind, _ = split_record_id(write.id, field=base + "/id")
    for name, code in (("scope", "invalid_scope"), ("audience", "invalid_audience"),
                       ("request_id", "invalid_argument")):
        value = getattr(write, name)
        # Both backends must store exactly the same strings; PostgreSQL text
        # cannot hold NUL, so no control character is accepted in either.
        # Nor can UTF-8 hold a lone surrogate. (Printable ASCII, the common
        # case, holds neither: skip the checks.)
        if not isinstance(value, str) or (value.isascii() and value.isprintable()):
            continue
        if re.search(_CONTROL, value):
            raise AssayError(f"{name} holds a control character", code=code,
                             pointer=base + "/" + name)
        if not _encodable(value):
            raise AssayError(f"{name} holds a lone surrogate, which UTF-8 cannot encode",
                             code="lone_surrogate", pointer=base + "/" + name)
    if write.scope != "global" and not (
        isinstance(write.scope, str) and write.scope.startswith("project:") and len(write.scope) > 8
        and (write.scope.isascii() or invisible_character(write.scope) is None)
    ):
        raise AssayError(f"invalid scope {str(write.scope)[:80]!r}", code="invalid_scope",
                         pointer=base + "/scope")
    if write.status not in RECORD_STATUSES:
        raise AssayError(
            f"unknown status {write.status!r}; use one of {', '.join(RECORD_STATUSES)}",
            code="invalid_status", pointer=base + "/status",
        )
    if write.status == "superseded":
        if not write.superseded_by:
            raise AssayError("a superseded record names its successor",
                             code="invalid_status", pointer=base + "/superseded_by")
        split_record_id(write.superseded_by, field=base + "/superseded_by")
        if write.superseded_by == write.id:
            raise AssayError("a record cannot supersede itself", code="invalid_status",
                             pointer=base + "/superseded_by")
    elif write.superseded_by is not None:
        raise AssayError("superseded_by is only for status 'superseded'",
                         code="invalid_status", pointer=base + "/superseded_by")
    if write.audience != PROJECT_AUDIENCE:
        if not isinstance(write.audience, str) or not write.audience.startswith(AUDIENCE_PREFIX):
            raise AssayError(
                f"invalid audience {str(write.audience)[:80]!r}; use 'project' or 'private:<principal>'",
                code="invalid_audience", pointer=base + "/audience")
        try:
            validate_principal(write.audience[len(AUDIENCE_PREFIX):], field=base + "/audience")
        except AssayError as exc:
            raise AssayError(exc.message.replace("principal", "audience principal", 1),
                             code="invalid_audience", pointer=base + "/audience",
                             action="Use 'project' or 'private:<principal>'.") from None
    for i, link in enumerate(write.links):
        if link.rel not in LINK_RELATIONS:
            raise AssayError(f"unknown link relation {link.rel!r}; use one of "
                             f"{', '.join(LINK_RELATIONS)}", code="invalid_link",
                             pointer=pointer("links", i, "rel") if not base else base + f"/links/{i}/rel")
        split_record_id(link.target, field=base + f"/links/{i}/target")
    for i, src in enumerate(write.sources):
        split_record_id(src.id, field=base + f"/sources/{i}/id")
        if not isinstance(src.revision, int) or isinstance(src.revision, bool) or src.revision < 1:
            raise AssayError("a source revision is an integer >= 1", code="invalid_source",
                             pointer=base + f"/sources/{i}/revision")
    if write.origin not in ORIGINS:
        raise AssayError(f"unknown origin {write.origin!r}", code="invalid_origin",
                         pointer=base + "/origin")
    if write.expect_revision is not None and (
        not isinstance(write.expect_revision, int) or isinstance(write.expect_revision, bool)
        or not 0 <= write.expect_revision <= MAX_REVISION
    ):
        raise AssayError(f"expect_revision is an integer from 0 to {MAX_REVISION}",
                         code="invalid_argument", pointer=base + "/expect_revision")
    if write.request_id is not None and (
        not isinstance(write.request_id, str) or not 0 < len(write.request_id) <= 200
    ):
        raise AssayError("request_id is a string of 1 to 200 characters", code="invalid_argument",
                         pointer=base + "/request_id")
    try:
        text, raw, shallow = canonical_data(write.data, MAX_DATA_DEPTH)
    except AssayError as exc:
        exc.pointer = base + "/data" + (exc.pointer or "")
        raise
    # Most data is vouched for by the encoder's own walk; else nesting past
    # the bound takes more than MAX_DATA_DEPTH opening brackets.
    if not shallow and raw.count(b"[") + raw.count(b"{") > MAX_DATA_DEPTH \
            and nesting_depth(write.data) > MAX_DATA_DEPTH:
        raise AssayError(
            f"record data is nested deeper than {MAX_DATA_DEPTH} levels",
            code="resource_limit", pointer=base + "/data",
            details={"limit": "depth", "max_depth": MAX_DATA_DEPTH},
            action="Flatten the document: every read embeds record data in an envelope, "
                   "which must stay within the canonical encoder's depth bound.")
    if len(raw) > MAX_DATA_BYTES:
        raise AssayError(
            f"record data is {len(raw)} bytes; the limit is {MAX_DATA_BYTES}",
            code="resource_limit", pointer=base + "/data",
            details={"limit_bytes": MAX_DATA_BYTES, "size_bytes": len(raw)},
            action="Store large content as files and record their digests.",
        )
    data_sha256 = digest_bytes(raw)
    return PreparedWrite(
        write=write,
        kind=kind,
        data_text=text,
        data_sha256=data_sha256,
        # Only a request id is ever checked against the body.
        body_sha256=None if write.request_id is None else
        digest_bytes(canonical_text(write.body(data_sha256)).encode("utf-8")),
        links_text=canonical_text([link.to_dict() for link in write.links]) if write.links else "[]",
        sources_text=canonical_text([s.to_dict() for s in write.sources]) if write.sources else "[]",
        keys=data_keys(write.data),
    )



# A partition's current revision: its highest (0 when it does not exist).
_CURRENT = "SELECT coalesce(max(revision), 0) FROM record_versions WHERE id = ? AND audience = ?"

# One write is two statements under the write lock: the record's current
# revision in its partition (its highest, 0 when absent), read first so a
# failed expectation is refused before anything is written; then the append,
# with its ledger revision (the highest stored one plus one, read once per
# transaction with the chain value it continues, see _LAST) and its seal.
_APPEND = (f"INSERT INTO record_versions ({', '.join(VERSION_COLUMNS)}, version_sha256, "
           f"chain_sha256) VALUES ({', '.join('?' for _ in VERSION_COLUMNS)}, ?, ?)")
# The last stored version: the ledger revision and chain value the next write continues.
_LAST = ("SELECT ledger_revision, chain_sha256 FROM record_versions "
         "ORDER BY ledger_revision DESC LIMIT 1")
# The record_keys rows of a version, by how many there are.
_INSERT_KEYS = {n: "INSERT INTO record_keys (field, value, ledger_revision, audience) VALUES "
                + ", ".join(["(?, ?, ?, ?)"] * n) for n in range(1, len(DATA_KEYS) + 1)}
# Of a viewer's partitions holding an id, the one it sees: its own first.
PREFERRED = "CASE WHEN {a}audience = 'project' THEN 1 ELSE 0 END"


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


def version_values(p: PreparedWrite, revision: int, ledger_revision: int,
                   created_at: str) -> dict[str, Any]:
    """The stored fields of the version a prepared write appends, by name (:data:`VERSION_FIELDS`)."""
    w = p.write
    return {"id": w.id, "kind": p.kind, "scope": w.scope, "revision": revision,
            "data_text": p.data_text, "data_sha256": p.data_sha256, "status": w.status,
            "superseded_by": w.superseded_by, "links": p.links_text, "audience": w.audience,
            "sources": p.sources_text, "created_at": created_at,
            "ledger_revision": ledger_revision, "request_id": w.request_id, "origin": w.origin}


def marks(values: Sequence[Any]) -> str:
    """One ``?`` placeholder per value, comma-separated."""
    return ",".join("?" * len(values))


class SqlWriter:
    """The write transaction over a DB-API connection; the backends supply the dialect hooks."""

    # -- dialect hooks -------------------------------------------------------------
    def sql(self, statement: str) -> str:
        return statement

    @contextmanager
    def _write_transaction(self) -> Iterator[Any]:  # pragma: no cover - abstract
        raise NotImplementedError
        yield

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

    # Whom this handle reads and writes for (see assay.ledger.store.Store).
    principal: str | None = None

    def _prepare(self, write: Write, index: int | None = None) -> PreparedWrite:
        """Validate a write for this handle's principal (see :func:`validate_write`)."""
        prepared = validate_write(write, index=index)
        if self.principal is not None and write.audience not in view_audiences(self.principal):
            raise AssayError(
                f"{self.principal} may write only project records or its own "
                f"private:{self.principal} records, not {write.audience}",
                code="audience_not_allowed",
                pointer=("" if index is None else f"/writes/{index}") + "/audience",
                action=f"Use --audience project or --audience private:{self.principal}.")
        return prepared

    def put(self, write: Write, *, basis: WriteBasis | None = None) -> Receipt:
        return self._put_prepared(self._prepare(write), basis)

    def _put_prepared(self, p: PreparedWrite, basis: WriteBasis | None) -> Receipt:
        """Commit one validated write (the storage half of :meth:`put`)."""
        return self._commit([p], basis)[0]

    def put_many(self, writes: Sequence[Write], *, basis: WriteBasis | None = None) -> list[Receipt]:
        if not writes:
            return []
        if len(writes) > MAX_BATCH:
            raise AssayError(f"a batch holds at most {MAX_BATCH} writes", code="resource_limit",
                             pointer="/writes")
        prepared = [self._prepare(w, i) for i, w in enumerate(writes)]
        seen: set[tuple[str, str]] = set()
        for i, p in enumerate(prepared):
            key = (p.write.id, p.write.audience)
            if key in seen:
                raise AssayError(f"{p.write.id} appears twice in one batch", code="duplicate_write",
                                 pointer=f"/writes/{i}/id")
            seen.add(key)
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
            last = self._one(cur, _LAST)
            ledger_revision, chain = (0, CHAIN_GENESIS) if last is None else (
                int(last[0]), "" if last[1] is None else str(last[1]))
            for index, p in enumerate(prepared):
                if receipts[index] is not None:
                    continue
                w = p.write
                cur.execute(_CURRENT, (w.id, w.audience))
                current = int(cur.fetchone()[0])
                if w.expect_revision is not None and w.expect_revision != current:
                    raise RevisionConflict(
                        f"{w.id} is at revision {current}, not {w.expect_revision}",
                        record_id=w.id, current_revision=current,
                        pointer=f"/writes/{index}/expect_revision" if len(prepared) > 1
                        else "/expect_revision",
                    )
                revision = current + 1
                ledger_revision += 1
                values = version_values(p, revision, ledger_revision, now)
                sealed = version_digest(values)
                chain = chain_digest(chain, sealed)
                cur.execute(_APPEND, [*(values[name] for name in VERSION_FIELDS), sealed, chain])
                self._index_write(cur, p, revision, ledger_revision)
                receipts[index] = Receipt(w.id, revision, ledger_revision, p.data_sha256,
                                          w.request_id, False)
            return [r for r in receipts if r is not None]

    def _replay(self, cur: Any, p: PreparedWrite) -> Receipt | None:
        # Request ids belong to the principal that used them: another
        # principal's id is simply unknown here.
        row = self._one(cur, "SELECT body_sha256, id, revision, ledger_revision, data_sha256 "
                        "FROM requests WHERE principal = ? AND request_id = ?",
                        (self.principal or "", p.write.request_id))
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
        audiences = view_audiences(self.principal)
        for record_id, expected in sorted(basis.records.items()):
            # The revision the writer sees now, in the partition its view
            # shows; a version written after the read (even one that moved the
            # view to another partition at the same revision number) is a change.
            row = self._one(
                cur, f"SELECT revision, ledger_revision FROM record_versions WHERE id = ? AND "
                f"audience IN ({marks(audiences)}) ORDER BY {PREFERRED.format(a='')}, "
                "revision DESC LIMIT 1", (record_id, *audiences))
            current = 0 if row is None else int(row[0])
            moved = row is not None and 0 < basis.ledger_revision < int(row[1])
            if current != expected or moved:
                raise RevisionConflict(
                    f"{record_id} moved from revision {expected} to {current} since it was read",
                    record_id=record_id, current_revision=current,
                    pointer=f"/write_basis/records/{record_id.replace('~', '~0').replace('/', '~1')}",
                )

    def _index_write(self, cur: Any, p: PreparedWrite, revision: int, ledger_revision: int) -> None:
        """Point the link index at the new version, index its data keys; remember its request id."""
        w = p.write
        if revision > 1:
            cur.execute(self.sql("DELETE FROM record_links WHERE id = ? AND audience = ?"),
                        (w.id, w.audience))
        if p.keys:
            # One statement for all of them (each statement adds to a put's cost).
            cur.execute(self.sql(_INSERT_KEYS[len(p.keys)]),
                        [x for name, value in p.keys
                         for x in (name, value, ledger_revision, w.audience)])
        for link in {(link.rel, link.target) for link in w.links}:
            cur.execute(self.sql("INSERT INTO record_links (id, audience, rel, target) "
                                 "VALUES (?, ?, ?, ?)"), (w.id, w.audience, *link))
        if w.request_id is not None:
            cur.execute(self.sql(
                "INSERT INTO requests (principal, request_id, body_sha256, id, audience, revision, "
                "ledger_revision, data_sha256) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"),
                (self.principal or "", w.request_id, p.body_sha256, w.id, w.audience, revision,
                 ledger_revision, p.data_sha256))
