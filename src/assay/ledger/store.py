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

import gc
import json
import re
from collections import namedtuple
from collections.abc import Mapping, Sequence

from assay.canonical import (
    canonical_bytes,
    canonical_data,
    canonical_text,
    digest_bytes,
    read_integer,
)
from assay.errors import AssayError, pointer
from assay.ids import invisible_character, split_record_id, validate_principal
from assay.value import field, frozen_value

# The typing module is for type checkers only (see assay.value): at run time
# the protocols below are plain classes and PreparedWrite a collections.namedtuple.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from contextlib import AbstractContextManager
    from typing import Any, Literal, NamedTuple, Protocol
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
    "Reader",
    "Receipt",
    "Record",
    "RecordUnreadable",
    "SourceRef",
    "Store",
    "Write",
    "WriteBasis",
    "decode_stored",
    "stored_record",
    "validate_write",
    "view_audiences",
]

SCHEMA_VERSION = 3
PROJECT_AUDIENCE = "project"
# Revisions (a record's and the ledger's) stay far below both backends'
# 64-bit integers; a larger number names nothing and is refused as input.
MAX_REVISION = 2**53
MAX_DATA_BYTES = 4 * 1024 * 1024
RECORD_STATUSES = ("current", "retired", "superseded")
# Who wrote a version. Only assay's own code paths write "machine" (an
# observation it made itself, e.g. an evidence run) or "derived" (a view it
# computed, e.g. a handoff); every client write through `put` is a "claim".
ORIGINS = ("claim", "machine", "derived")
LINK_RELATIONS = ("requires", "depends-on", "supersedes", "supports", "cites", "derived-from",
                  "relates-to", "blocks", "answers")
if TYPE_CHECKING:
    Status = Literal["current", "retired", "superseded"]


@frozen_value
class Link:
    """A typed edge from a record to another record id."""

    rel: str
    target: str

    def to_dict(self) -> dict[str, str]:
        return {"rel": self.rel, "target": self.target}


@frozen_value
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


_UNREAD: Any = object()  # a Record's data not decoded yet

# Stored data is read back only if it could be written today: the bounds of
# :func:`validate_write`. Deeper data is refused on write, so that every
# envelope that embeds a record (a history page, a report) still fits the
# canonical encoder's own bound.
MAX_DATA_DEPTH = 100


class _Fields:
    """The stored fields of one record version: the layout :class:`Record` and its builder share."""

    __slots__ = ("_damage", "_data", "audience", "created_at", "data_sha256", "data_text", "id",
                 "kind", "ledger_revision", "links", "origin", "request_id", "revision", "scope",
                 "sources", "status", "superseded_by")
    id: str
    kind: str
    scope: str
    revision: int
    data_sha256: str
    status: str
    superseded_by: str | None
    links: tuple[Link, ...]
    audience: str
    sources: tuple[SourceRef, ...]
    created_at: str
    ledger_revision: int
    request_id: str | None
    origin: str
    data_text: str
    _data: Any
    _damage: Damage | None


class Record(_Fields):
    """One version of a record, exactly as stored, checked before its data is used.

    ``data`` is decoded from the stored canonical text on first use, and only
    after the text has been checked: it must hash to ``data_sha256`` and parse
    strictly within the bounds a write accepts (no duplicate keys, no integer
    a double cannot hold, no lone surrogate, nesting at most
    :data:`MAX_DATA_DEPTH`). A version that fails is *unreadable*: ``damage``
    names why, and reading ``data`` raises :class:`RecordUnreadable` instead of
    handing out values nobody wrote. Listings therefore never fail on one bad
    row; whoever needs the data of that row gets a coded error naming it.

    Records built in memory (``data`` given, no ``data_text``) are taken as
    they are.
    """

    __slots__ = ()

    def __init__(
        self,
        *,
        id: str,
        kind: str,
        scope: str,
        revision: int,
        data_sha256: str,
        status: str,
        superseded_by: str | None,
        links: tuple[Link, ...],
        audience: str,
        sources: tuple[SourceRef, ...],
        created_at: str,
        ledger_revision: int,
        request_id: str | None = None,
        origin: str = "claim",
        data: Any = _UNREAD,
        data_text: str = "",
        damage: Damage | None = None,
    ) -> None:
        # Straight to the slots: the guarding __setattr__ below costs more
        # than the rest of building a record (listings build thousands).
        init = object.__setattr__
        init(self, "id", id)
        init(self, "kind", kind)
        init(self, "scope", scope)
        init(self, "revision", revision)
        init(self, "data_sha256", data_sha256)
        init(self, "status", status)
        init(self, "superseded_by", superseded_by)
        init(self, "links", links)
        init(self, "audience", audience)
        init(self, "sources", sources)
        init(self, "created_at", created_at)
        init(self, "ledger_revision", ledger_revision)
        init(self, "request_id", request_id)
        init(self, "origin", origin)
        init(self, "data_text", data_text)
        init(self, "_data", data)
        init(self, "_damage", damage)

    @property
    def damage(self) -> Damage | None:
        """Why the stored data cannot be used (None when it is intact)."""
        if self._data is _UNREAD and self._damage is None:
            self._decode()
        return self._damage

    @property
    def is_intact(self) -> bool:
        return self.damage is None

    @property
    def data(self) -> Any:
        """The record's data; :class:`RecordUnreadable` when the stored text fails its checks."""
        if self._data is _UNREAD and self._damage is None:
            self._decode()
        if self._damage is not None:
            raise RecordUnreadable(self.id, self.revision, self._damage)
        return self._data

    def _decode(self) -> None:
        try:
            self._data = decode_stored(self.data_text, self.data_sha256)
        except _Damaged as exc:
            self._damage = exc.damage

    @property
    def is_machine_observed(self) -> bool:
        """Whether assay itself wrote this version from what it observed."""
        return self.origin == "machine"

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON data.

        An unreadable version has ``data: null`` and an ``unreadable`` object
        (reason, message, and the read that shows the stored text) instead of
        values nobody wrote.
        """
        out = {
            "id": self.id,
            "kind": self.kind,
            "scope": self.scope,
            "revision": self.revision,
            "data": None if self.damage is not None else self._data,  # damage decodes
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
        if self._damage is not None:
            out["unreadable"] = self._damage.to_dict(self.id, self.revision)
        return out

    def _key(self) -> tuple[Any, ...]:
        return (self.id, self.audience, self.revision, self.ledger_revision, self.data_sha256)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Record):
            return NotImplemented
        return self._key() == other._key() and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(self._key())

    def __setattr__(self, name: str, value: Any) -> None:
        # Frozen after construction, like the other value objects; only the
        # lazily decoded data fills in later.
        if name not in ("_data", "_damage") and hasattr(self, "_damage"):
            raise AttributeError(f"Record is immutable: cannot set {name}")
        object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        return (f"Record(id={self.id!r}, revision={self.revision}, audience={self.audience!r}, "
                f"ledger_revision={self.ledger_revision})")


class _Unsealed(_Fields):
    """A stored version being built: its fields are plain slot stores, then it is sealed."""

    __slots__ = ()


def stored_record(id: str, revision: int, kind: str, scope: str, data_text: str,
                  data_sha256: str, status: str, superseded_by: str | None,
                  links: tuple[Link, ...], audience: str, sources: tuple[SourceRef, ...],
                  origin: str, created_at: str, ledger_revision: int, request_id: str | None,
                  damage: Damage | None) -> Record:
    """A :class:`Record` of one stored version, its data not decoded yet (the backends' reads).

    The same value ``Record(...)`` gives, built for listings of thousands:
    the fields are plain slot stores on an unguarded twin of the same layout,
    which then becomes the immutable :class:`Record` (the guarded stores cost
    more than the rest of reading a version).
    """
    version: Any = _Unsealed()
    version.id = id
    version.kind = kind
    version.scope = scope
    version.revision = revision
    version.data_sha256 = data_sha256
    version.status = status
    version.superseded_by = superseded_by
    version.links = links
    version.audience = audience
    version.sources = sources
    version.created_at = created_at
    version.ledger_revision = ledger_revision
    version.request_id = request_id
    version.origin = origin
    version.data_text = data_text
    version._data = _UNREAD
    version._damage = damage
    version.__class__ = Record
    sealed: Record = version
    return sealed


@frozen_value
class Damage:
    """Why a stored version's data cannot be used."""

    reason: str  # digest_mismatch | not_json | unsafe_integer | lone_surrogate | too_deep | ...
    message: str

    def to_dict(self, record_id: str, revision: int) -> dict[str, Any]:
        return {"reason": self.reason, "message": self.message,
                "read": ["assay", "get", "--raw", "--revision", str(revision), "--", record_id]}


class _Damaged(Exception):
    def __init__(self, damage: Damage) -> None:
        super().__init__(damage.message)
        self.damage = damage


class RecordUnreadable(AssayError):
    """A stored version whose data fails its integrity checks (never used, never guessed)."""

    default_code = "record_unreadable"

    def __init__(self, record_id: str, revision: int, damage: Damage) -> None:
        super().__init__(
            f"{record_id} revision {revision} is unreadable: {damage.message}",
            details={"id": record_id, "revision": revision, "reason": damage.reason},
            action=f"Inspect the stored text with 'assay get --raw --revision {revision} -- "
                   f"{record_id}', then write a new version of the record.",
        )
        self.record_id = record_id
        self.revision = revision
        self.damage = damage


_SAFE = 2**53


def _strict_int(text: str) -> int:
    if len(text) < 16:  # at most 15 digits: exact in a double, and read as written
        return int(text)
    value = read_integer(text)
    # read_integer keeps a literal no double holds exact; such a number was
    # never written by assay (the encoder refuses it), so the text is damaged.
    if (value > _SAFE or value < -_SAFE) and float(value) != value:
        raise _Damaged(Damage("unsafe_integer",
                              f"the stored data holds the integer {text[:40]}, which no JSON "
                              "double holds exactly"))
    return value


def _no_constant(name: str) -> Any:
    raise _Damaged(Damage("not_json", f"the stored data holds {name}, which is not JSON"))


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _Damaged(Damage("not_json", "the stored data holds a duplicate object key"))
    return out


_STRICT = json.JSONDecoder(object_pairs_hook=_unique, parse_int=_strict_int,
                           parse_constant=_no_constant)


def decode_stored(text: str, data_sha256: str) -> Any:
    """Check stored canonical text against its digest and bounds, and parse it.

    Raises ``_Damaged`` (internal) naming why the text cannot be used. The
    digest is checked first: most damage (a value edited in place) stops
    there, before any parsing. Cost on top of parsing: one SHA-256 of the
    text, a duplicate-key check per object and a count of the value's
    levels (in C); the escape and depth walks run only when that text could
    need them. One decoder serves every call (building one per call costs
    more than a small record's parse).
    """
    try:
        raw = text.encode("utf-8")
    except (UnicodeEncodeError, AttributeError):
        raise _Damaged(Damage("not_text", "the stored data is not UTF-8 text")) from None
    if digest_bytes(raw) != data_sha256:
        raise _Damaged(Damage("digest_mismatch",
                              "the stored data does not hash to its recorded data_sha256"))
    try:
        value = _STRICT.decode(text)
        if "\\" in text and ("\\ud" in text or "\\uD" in text):
            # Canonical text escapes only control characters; a surrogate
            # escape can only be forged, and a lone one must not reach UTF-8.
            canonical_bytes(value)
    except _Damaged:
        raise
    except (ValueError, RecursionError) as exc:
        raise _Damaged(Damage("not_json", f"the stored data is not JSON: {str(exc)[:200]}")) from None
    except AssayError as exc:
        raise _Damaged(Damage(exc.code, f"the stored data cannot be canonicalised: {exc.message}")) \
            from None
    # Nesting past the bound takes more than 2 * MAX_DATA_DEPTH brackets.
    if len(raw) > 2 * MAX_DATA_DEPTH and _nests_past(value, MAX_DATA_DEPTH) \
            and _depth(value) > MAX_DATA_DEPTH:
        raise _Damaged(Damage("too_deep",
                              f"the stored data is nested deeper than {MAX_DATA_DEPTH} levels"))
    return value


_referents = gc.get_referents


def _nests_past(value: Any, bound: int) -> bool:
    """Whether a parsed value could nest deeper than ``bound`` (a cheap upper bound, in C).

    Goes down the value one level per call: the referents of a level's
    containers are the next level (a JSON object's values, an array's items;
    scalars have none, and the collector must see every object a container
    holds). A value whose levels run out within ``bound`` steps nests at
    most ``bound`` deep; one that does not is sent to the exact walk.
    """
    level = [value]
    for _ in range(bound):
        level = _referents(*level)
        if not level:
            return False
    return True


def _depth(value: Any) -> int:
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, depth)
            children = node.values() if isinstance(node, dict) else node
            stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


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
else:
    PreparedWrite = namedtuple("PreparedWrite", ("write", "kind", "data_text", "data_sha256",
                                                 "body_sha256", "links_text", "sources_text"))


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


_AUDIENCE_PREFIX = "private:"
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
        if not isinstance(write.audience, str) or not write.audience.startswith(_AUDIENCE_PREFIX):
            raise AssayError(
                f"invalid audience {str(write.audience)[:80]!r}; use 'project' or 'private:<principal>'",
                code="invalid_audience", pointer=base + "/audience")
        try:
            validate_principal(write.audience[len(_AUDIENCE_PREFIX):], field=base + "/audience")
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
            and _depth(write.data) > MAX_DATA_DEPTH:
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
    )


def view_audiences(principal: str | None) -> tuple[str, ...]:
    """The partitions a principal reads: the project's and its own private one."""
    if principal is None:
        return (PROJECT_AUDIENCE,)
    return (PROJECT_AUDIENCE, _AUDIENCE_PREFIX + principal)


class Reader(Protocol):
    """A consistent read view at one ledger revision, for one principal (or none).

    Every method answers from the reader's partitions only (see the module
    docstring): the project's, and the principal's own private records,
    which take precedence over a project record with the same id.
    """

    epoch: str
    ledger_revision: int
    principal: str | None

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
    ) -> list[Record]:
        """Current records matching every filter given, ordered by id.

        ``link`` is ``(rel or None, target)``: records with such an edge.
        ``query`` matches case-insensitively in the id or the canonical data.
        ``audiences`` keeps only records whose audience is one of them; it is
        applied before ``limit``, so a hidden record never shortens a page.
        ``after`` keeps only ids that sort after it (bytewise): the next page.
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
    ) -> int:
        """How many records :meth:`find` would return with these filters and no limit.

        Counts only what this reader may read (its partitions, then
        ``audiences``), so a count never reveals a record hidden from it.
        Cost: one counting query over the same rows.
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

    def info(self) -> LedgerInfo:
        """Backend, epoch, ledger revision, schema version and counts (as the principal sees them)."""

    def as_principal(self, principal: str | None) -> Store:
        """Another handle on the same ledger for ``principal`` (the caller closes it)."""

    def close(self) -> None:
        """Release connections."""

