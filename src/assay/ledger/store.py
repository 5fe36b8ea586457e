"""The ledger contract: records, receipts, write bases and the ``Store`` protocol.

Every durable fact in assay is a versioned record in one ledger. Both
backends (:mod:`assay.ledger.sqlite`, :mod:`assay.ledger.postgres`) implement
:class:`Store` with identical behaviour, held to it by one conformance suite.
This module imports only the base modules (errors, canonical, ids).

Invariants every backend keeps:

- The ledger revision rises by exactly one per committed write (gap-free,
  strictly increasing, commit-ordered). A batch of N writes takes N revisions
  in one transaction.
- Every version of a record is kept; a record's revision rises by one per
  version, from 1.
- A rejected write (conflict, invalid input) changes nothing at all.
- Reads never write. A :class:`Reader` sees one consistent ledger revision.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, Protocol

from assay.canonical import canonical_bytes, canonical_text, digest_bytes
from assay.errors import AssayError, pointer
from assay.ids import split_record_id

__all__ = [
    "LINK_RELATIONS",
    "MAX_DATA_BYTES",
    "ORIGINS",
    "RECORD_STATUSES",
    "SCHEMA_VERSION",
    "LedgerInfo",
    "Link",
    "Reader",
    "Receipt",
    "Record",
    "SourceRef",
    "Store",
    "Write",
    "WriteBasis",
    "validate_write",
]

SCHEMA_VERSION = 2
MAX_DATA_BYTES = 4 * 1024 * 1024
RECORD_STATUSES = ("current", "retired", "superseded")
# Who wrote a version. Only assay's own code paths write "machine" (an
# observation it made itself, e.g. an evidence run) or "derived" (a view it
# computed, e.g. a handoff); every client write through `put` is a "claim".
ORIGINS = ("claim", "machine", "derived")
LINK_RELATIONS = ("requires", "depends-on", "supersedes", "supports", "cites", "derived-from",
                  "relates-to", "blocks", "answers")
Status = Literal["current", "retired", "superseded"]


@dataclass(frozen=True, slots=True)
class Link:
    """A typed edge from a record to another record id."""

    rel: str
    target: str

    def to_dict(self) -> dict[str, str]:
        return {"rel": self.rel, "target": self.target}


@dataclass(frozen=True, slots=True)
class SourceRef:
    """A record version this record was derived from."""

    id: str
    revision: int
    data_sha256: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "revision": self.revision}
        if self.data_sha256 is not None:
            out["data_sha256"] = self.data_sha256
        return out


@dataclass(frozen=True, slots=True)
class Record:
    """One version of a record, exactly as stored."""

    id: str
    kind: str
    scope: str
    revision: int
    data: Any
    data_sha256: str
    status: str
    superseded_by: str | None
    links: tuple[Link, ...]
    audience: str
    sources: tuple[SourceRef, ...]
    created_at: str
    ledger_revision: int
    request_id: str | None = None
    origin: str = "claim"
    data_text: str = field(default="", repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON data (``data_text`` is the stored canonical text)."""
        return {
            "id": self.id,
            "kind": self.kind,
            "scope": self.scope,
            "revision": self.revision,
            "data": self.data,
            "data_sha256": self.data_sha256,
            "status": self.status,
            "superseded_by": self.superseded_by,
            "links": [link.to_dict() for link in self.links],
            "audience": self.audience,
            "sources": [s.to_dict() for s in self.sources],
            "created_at": self.created_at,
            "ledger_revision": self.ledger_revision,
            "request_id": self.request_id,
            "origin": self.origin,
        }

    @property
    def is_machine_observed(self) -> bool:
        """Whether assay itself wrote this version from what it observed."""
        return self.origin == "machine"


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
class LedgerInfo:
    backend: str
    location: str
    epoch: str
    ledger_revision: int
    schema_version: int
    records: int
    versions: int
    by_status: Mapping[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "location": self.location,
            "epoch": self.epoch,
            "ledger_revision": self.ledger_revision,
            "schema_version": self.schema_version,
            "records": self.records,
            "versions": self.versions,
            "by_status": dict(sorted(self.by_status.items())),
        }


_AUDIENCE_PREFIX = "private:"
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


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
        if _CONTROL.search(value):
            raise AssayError(f"{name} holds a control character", code=code,
                             pointer=base + "/" + name)
        if not _encodable(value):
            raise AssayError(f"{name} holds a lone surrogate, which UTF-8 cannot encode",
                             code="lone_surrogate", pointer=base + "/" + name)
    if write.scope != "global" and not (
        isinstance(write.scope, str) and write.scope.startswith("project:") and len(write.scope) > 8
    ):
        raise AssayError(f"invalid scope {write.scope!r}", code="invalid_scope", pointer=base + "/scope")
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
    if write.audience != "project" and not (
        write.audience.startswith(_AUDIENCE_PREFIX) and len(write.audience) > len(_AUDIENCE_PREFIX)
    ):
        raise AssayError(f"invalid audience {write.audience!r}; use 'project' or 'private:<principal>'",
                         code="invalid_audience", pointer=base + "/audience")
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
        not isinstance(write.expect_revision, int) or write.expect_revision < 0
    ):
        raise AssayError("expect_revision is an integer >= 0", code="invalid_argument",
                         pointer=base + "/expect_revision")
    if write.request_id is not None and (
        not isinstance(write.request_id, str) or not 0 < len(write.request_id) <= 200
    ):
        raise AssayError("request_id is a string of 1 to 200 characters", code="invalid_argument",
                         pointer=base + "/request_id")
    try:
        raw = canonical_bytes(write.data)
    except AssayError as exc:
        exc.pointer = base + "/data" + (exc.pointer or "")
        raise
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
        data_text=raw.decode("utf-8"),
        data_sha256=data_sha256,
        # Only a request id is ever checked against the body.
        body_sha256=None if write.request_id is None else
        digest_bytes(canonical_text(write.body(data_sha256)).encode("utf-8")),
        links_text=canonical_text([link.to_dict() for link in write.links]) if write.links else "[]",
        sources_text=canonical_text([s.to_dict() for s in write.sources]) if write.sources else "[]",
    )


class Reader(Protocol):
    """A consistent read view at one ledger revision."""

    epoch: str
    ledger_revision: int

    def get(self, record_id: str, revision: int | None = None) -> Record | None:
        """The current version (or the given revision) of a record, or None."""

    def get_many(self, record_ids: Sequence[str]) -> dict[str, Record]:
        """Current versions of the records that exist among ``record_ids``."""

    def history(self, record_id: str) -> list[Record]:
        """Every version of a record, oldest first."""

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
        """Current records matching every filter given, ordered by id.

        ``link`` is ``(rel or None, target)``: records with such an edge.
        ``query`` matches case-insensitively in the id or the canonical data.
        ``audiences`` keeps only records whose audience is one of them; it is
        applied before ``limit``, so a hidden record never shortens a page.
        """


class Store(Protocol):
    """A ledger backend. See the module docstring for the invariants."""

    backend: str
    location: str

    def reader(self) -> AbstractContextManager[Reader]:
        """Open a consistent read view; it never writes."""

    def put(self, write: Write, *, basis: WriteBasis | None = None) -> Receipt:
        """Commit one write (see :class:`Write`) or raise, changing nothing."""

    def put_many(self, writes: Sequence[Write], *, basis: WriteBasis | None = None) -> list[Receipt]:
        """Commit several writes atomically, in order, or none of them."""

    def info(self) -> LedgerInfo:
        """Backend, epoch, ledger revision, schema version and counts."""

    def close(self) -> None:
        """Release connections."""

