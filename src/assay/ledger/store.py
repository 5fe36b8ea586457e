"""The ledger contract: the ``Store`` and ``Reader`` protocols, and opening a store.

Every durable fact in assay is a versioned record in one ledger. Both
backends (:mod:`assay.ledger.sqlite`, :mod:`assay.ledger.postgres`) implement
:class:`Store` with identical behaviour, held to it by one conformance suite.
A record version and its read checks are in :mod:`assay.ledger.record`;
writes, their validation and the shared write transaction in
:mod:`assay.ledger.write`. This module names both (the contract is theirs
too) and imports only them and the base modules; a backend's module is
imported only when a store of it is opened.

Invariants every backend keeps:

- The ledger revision rises by exactly one per committed write (gap-free,
  strictly increasing, commit-ordered). A batch of N writes takes N revisions
  in one transaction.
- Every version of a record is kept; a record's revision rises by one per
  version, from 1.
- A rejected write (conflict, invalid input) changes nothing at all.
- Reads never write. A :class:`Reader` sees one consistent ledger revision.

Privacy is part of a record's identity, not a filter applied afterwards. A
record is keyed by its id *and* its audience: ``project`` records form one
partition and each principal's ``private:<principal>`` records another, each
with its own revision sequence. A store handle is opened for one principal
(or none) and every query it runs is confined to the partitions that
principal may read: the project's and its own. Where both hold the same id,
the principal's own private record is the one it sees (its view overlays the
project's). So another principal's private versions are never returned, not
counted, and cannot answer a revision check or a request id: for anyone
outside the audience they are exactly as if never written. The one shared
signal is the ledger revision, a single counter across all partitions.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from assay.errors import AssayError, UsageError
from assay.ids import validate_principal
from assay.ledger.record import (
    LINK_RELATIONS,
    MAX_DATA_DEPTH,
    ORIGINS,
    PROJECT_AUDIENCE,
    RECORD_STATUSES,
    Damage,
    Link,
    Record,
    RecordUnreadable,
    SourceRef,
    decode_stored,
    stored_record,
    view_audiences,
)
from assay.ledger.write import (
    MAX_DATA_BYTES,
    MAX_REVISION,
    PreparedWrite,
    Receipt,
    Write,
    WriteBasis,
    validate_write,
)
from assay.value import frozen_value

# The typing module is for type checkers only (see assay.value): at run time
# the protocols below are plain classes.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from contextlib import AbstractContextManager
    from typing import Any, Protocol

    from assay.ledger.chain import ChainWalk
else:
    Protocol = object

__all__ = [
    "LINK_RELATIONS",
    "MAX_DATA_BYTES",
    "MAX_DATA_DEPTH",
    "MAX_REVISION",
    "ORIGINS",
    "PROJECT_AUDIENCE",
    "RECORD_STATUSES",
    "SCHEMA_VERSION",
    "Damage",
    "LedgerInfo",
    "Link",
    "PreparedWrite",
    "Reader",
    "Receipt",
    "Record",
    "RecordUnreadable",
    "SourceRef",
    "Store",
    "Write",
    "WriteBasis",
    "decode_stored",
    "ledger_not_found",
    "open_store",
    "stored_record",
    "validate_write",
    "view_audiences",
]

SCHEMA_VERSION = 7


@frozen_value
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


class Reader(Protocol):
    """A consistent read view at one ledger revision, for one principal (or none).

    Every method answers from the reader's partitions only (see the module
    docstring): the project's, and the principal's own private records,
    which take precedence over a project record with the same id.
    """

    epoch: str
    ledger_revision: int
    principal: str | None
    # Whether find's ``query`` reads the ledger's text index; False where it
    # has none (a PostgreSQL server without pg_trgm): find then scans.
    text_index: bool

    def get(self, record_id: str, revision: int | None = None) -> Record | None:
        """The current version (or the given revision) of a record, or None."""

    def get_many(self, record_ids: Sequence[str]) -> dict[str, Record]:
        """Current versions of the records that exist among ``record_ids``."""

    def history(self, record_id: str, *, audience: str | None = None) -> list[Record]:
        """Every version of a record, oldest first.

        ``audience`` names one of the reader's own partitions to read from
        (default: the one the reader sees the id in); any other is empty.
        """

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
        after: str | None = None,
        data_field: tuple[str, str | None] | None = None,
        prefix: str | None = None,
    ) -> list[Record]:
        """Current records matching every filter given, ordered by id.

        ``link`` is ``(rel or None, target)``: records with such an edge.
        ``query`` matches case-insensitively in the id or the canonical data
        (the query lower-cased as Python does, in the value lower-cased as
        the backend's SQL ``lower`` does).
        ``audiences`` keeps only records whose audience is one of them; it is
        applied before ``limit``, so a hidden record never shortens a page.
        ``after`` keeps only ids that sort after it (bytewise): the next page.
        ``prefix`` keeps only ids that start with it (a range of the id index).
        ``data_field`` is ``(name, value)``, ``name`` one of
        :data:`~assay.ledger.record.DATA_KEYS`: records whose data is an
        object holding ``name`` at top level, with the string ``value`` (None:
        any value). It is answered from the key index, written with each
        version, so such a read grows with its matches, not the ledger (bench_scale);
        the same holds for ``kind``, ``prefix`` and ``link``. ``query`` of
        three characters or more is answered from the text index (schema 7),
        which names the versions that may hold it; the exact condition then
        decides, so the answer is the scan's. A shorter query, one holding
        NUL, one with ``data_field``, or a ledger without the index
        (:attr:`text_index`) reads every current record of what the other
        filters leave.
        """

    def find_count(
        self,
        *,
        scopes: Sequence[str] | None = None,
        kind: str | None = None,
        status: str | None = None,
        link: tuple[str | None, str] | None = None,
        query: str | None = None,
        audiences: Sequence[str] | None = None,
        after: str | None = None,
        data_field: tuple[str, str | None] | None = None,
        prefix: str | None = None,
        at_most: int | None = None,
    ) -> int:
        """How many records :meth:`find` would return with these filters and no limit.

        Counts only what this reader may read (its partitions, then
        ``audiences``), so a count never reveals a record hidden from it.
        Cost: one counting query over the same rows; with ``at_most``, it
        stops there (the answer is then at most ``at_most``).
        """


    def walk_chain(self, upto: int | None = None) -> ChainWalk:
        """Check the hash chain up to ledger revision ``upto`` (at most the reader's revision).

        Reads every partition (the chain runs through them all); see
        :mod:`assay.ledger.chain`. Whoever reports the result names another
        principal's private version by its ledger revision only.
        """


class Store(Protocol):
    """A ledger backend, opened for one principal. See the module docstring for the invariants.

    ``principal`` is whom reads answer for and whose request ids and private
    partition writes use. A store opened without one reads only project
    records and may write any audience (assay's own tools and tests).
    """

    backend: str
    location: str
    principal: str | None

    def reader(self) -> AbstractContextManager[Reader]:
        """Open a consistent read view for the store's principal; it never writes."""

    def put(self, write: Write, *, basis: WriteBasis | None = None) -> Receipt:
        """Commit one write (see :class:`Write`) or raise, changing nothing.

        A principal writes only ``project`` or its own ``private:<principal>``
        audience (else ``audience_not_allowed``). ``expect_revision`` is
        checked in the write's own partition; a write basis against the
        writer's view.
        """

    def put_many(self, writes: Sequence[Write], *, basis: WriteBasis | None = None) -> list[Receipt]:
        """Commit several writes atomically, in order, or none of them."""

    def walk_chain(self, upto: int | None = None) -> ChainWalk:
        """:meth:`Reader.walk_chain` in a read view of its own (default: up to the head)."""

    def info(self) -> LedgerInfo:
        """Backend, epoch, ledger revision, schema version and counts (as the principal sees them)."""

    def as_principal(self, principal: str | None) -> Store:
        """Another handle on the same ledger for ``principal`` (the caller closes it)."""

    def close(self) -> None:
        """Release connections."""



# A URL scheme (RFC 3986), [A-Za-z][A-Za-z0-9+.-]*, followed by "//": what
# names another store, never a file.
_SCHEME = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+.-"


def open_store(url: str | os.PathLike[str], *, base: str | os.PathLike[str] | None = None,
               principal: str | None = None, create: bool = True,
               default_principal: bool = False) -> Store:
    """Open the ledger at ``url``, for ``principal``; create it first only when ``create``.

    The handle reads and writes as ``principal`` (see
    :mod:`assay.ledger.store` on private partitions); without one it reads
    only project records. On PostgreSQL, a session whose role does not own
    the ledger is bound to its role (:mod:`assay.ledger.roles`): another
    ``principal`` is ``principal_not_role``, unless ``default_principal``
    says it was only a default (assay.toml), which the role then replaces.

    ``postgresql://...`` (or ``postgres://``) opens the PostgreSQL backend; an
    optional ``assay_schema=NAME`` query parameter selects the schema (default
    ``assay``). ``sqlite:///path``, ``sqlite:relative`` or a plain path opens
    SQLite; relative paths are taken from ``base`` (the project root). Any
    other ``scheme://`` is ``invalid_argument`` at ``/db``. Without
    ``create``, a ledger that does not exist yet (no SQLite file, no
    PostgreSQL schema with a ledger in it) is :func:`ledger_not_found` and
    nothing is created: no file, directory, schema or table.
    """
    text = os.fspath(url)
    if principal is not None:
        validate_principal(principal)
    if text.startswith(("postgresql://", "postgres://")):
        from assay.ledger.postgres import PostgresStore

        return PostgresStore(text, principal=principal, create=create,
                             default_principal=default_principal)
    scheme, slashes, _ = text.partition("://")
    if (slashes and scheme[:1].isascii() and scheme[:1].isalpha() and not scheme.strip(_SCHEME)
            and scheme.lower() != "sqlite"):
        raise UsageError(
            f"unknown ledger URL scheme {scheme!r} in {text!r}",
            code="invalid_argument", pointer="/db",
            action="Use postgresql://HOST/DB, sqlite:///PATH or a file path.")
    if text.startswith("sqlite:"):
        text = text[len("sqlite:"):]
        if text.startswith("///"):
            text = text[2:]
    path = Path(text)
    if not path.is_absolute() and base is not None:
        path = Path(base) / path
    from assay.ledger.sqlite import SqliteStore

    return SqliteStore(path, principal=principal, create=create)


def ledger_not_found(location: str) -> AssayError:
    """The error for a read of a ledger that was never created (nothing is created by it)."""
    return AssayError(f"no ledger at {location}", code="ledger_not_found",
                      details={"location": location},
                      action="Run 'assay init' in the project root (or write a record) to "
                             "create the ledger, or check --db, ASSAY_DB and [ledger] url.")
