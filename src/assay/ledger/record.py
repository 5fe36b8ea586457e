"""A record version as the ledger stores it, and the checks a read makes before using it.

:data:`VERSION_FIELDS` is the one list of a version's stored fields. Everything
that enumerates them derives from it: the slots of :class:`Record`, the
columns the SQL backends select and append (:data:`VERSION_COLUMNS`), the
mapping of a stored row to a record (:func:`stored_record`) and the record's
JSON form (:meth:`Record.to_dict`). This module imports only the base modules
(errors, canonical, value).
"""

from __future__ import annotations

import gc
import json
from collections.abc import Sequence
from operator import attrgetter, itemgetter

from assay.canonical import canonical_bytes, canonical_text, digest_bytes, read_integer
from assay.errors import AssayError
from assay.value import frozen_value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

__all__ = [
    "AUDIENCE_PREFIX",
    "CHAIN_GENESIS",
    "DATA_KEYS",
    "INDEX_TABLES",
    "LINK_RELATIONS",
    "MAX_DATA_DEPTH",
    "NOT_A_STRING",
    "ORIGINS",
    "PROJECT_AUDIENCE",
    "RECORD_STATUSES",
    "SEALED_FIELDS",
    "VERSION_COLUMNS",
    "VERSION_FIELDS",
    "Damage",
    "Link",
    "Record",
    "RecordUnreadable",
    "SourceRef",
    "chain_digest",
    "data_keys",
    "decode_stored",
    "key_value",
    "nesting_depth",
    "stored_record",
    "version_digest",
    "view_audiences",
]

PROJECT_AUDIENCE = "project"
AUDIENCE_PREFIX = "private:"  # then the principal whose partition it is
RECORD_STATUSES = ("current", "retired", "superseded")
# Who wrote a version. Only assay's own code paths write "machine" (an
# observation it made itself, e.g. an evidence run) or "derived" (a view it
# computed, e.g. a handoff); every client write through `put` is a "claim".
ORIGINS = ("claim", "machine", "derived")
LINK_RELATIONS = ("requires", "depends-on", "supersedes", "supports", "cites", "derived-from",
                  "relates-to", "blocks", "answers")
if TYPE_CHECKING:
    Status = Literal["current", "retired", "superseded"]


def view_audiences(principal: str | None) -> tuple[str, ...]:
    """The partitions a principal reads: the project's and its own private one."""
    if principal is None:
        return (PROJECT_AUDIENCE,)
    return (PROJECT_AUDIENCE, AUDIENCE_PREFIX + principal)


# The stored fields of one record version, in the order of its JSON form:
# the one list of them. ``data_text`` is the canonical data text, stored in
# the column ``data``; every other field is stored in the column of its name.
VERSION_FIELDS = ("id", "kind", "scope", "revision", "data_text", "data_sha256", "status",
                  "superseded_by", "links", "audience", "sources", "created_at",
                  "ledger_revision", "request_id", "origin")
VERSION_COLUMNS = tuple("data" if name == "data_text" else name for name in VERSION_FIELDS)

# A version's seal: ``version_sha256`` covers every stored field but the data
# text (which ``data_sha256`` covers), so a direct edit of any metadata column
# (status, audience, scope, origin, links...) makes the version unreadable.
# ``chain_sha256`` links each version to the one stored before it in ledger
# revision order, so rewriting a version in the middle changes every chain
# value after it (see docs/ledger.md, "Tamper evidence").
SEALED_FIELDS = tuple(name for name in VERSION_FIELDS if name != "data_text")
# The chain value before the first version.
CHAIN_GENESIS = "0" * 64
_SEAL_KEYS = tuple(sorted(SEALED_FIELDS))  # ASCII names: bytewise order is RFC 8785's order
# JSON string escaping as RFC 8785 writes it (the C encoder json.dumps uses).
_quote: Any = json.encoder.encode_basestring
# The seal's text with a slot per value: '{"audience":%s,"created_at":%s,...}'.
_SEAL_FORMAT = "".join(("{" if i == 0 else ",") + f'"{name}":%s'
                       for i, name in enumerate(_SEAL_KEYS)) + "}"
_seal_values = itemgetter(*_SEAL_KEYS)
_LINKS_AT, _SOURCES_AT = _SEAL_KEYS.index("links"), _SEAL_KEYS.index("sources")


def version_digest(fields: Any) -> str:
    """The ``version_sha256`` of one version: SHA-256 of its seal's canonical text.

    ``fields`` maps each name of :data:`SEALED_FIELDS` to its stored value,
    ``links`` and ``sources`` as their stored canonical text. The seal is the
    RFC 8785 text of the object of those fields, every value a JSON string,
    integer or null (links and sources as strings, so the text is never
    ambiguous). The PostgreSQL server builds the same text
    (``assay_version_digest`` in function_postgres.sql): a string escaped as
    JSON escapes it there and here alike (``"``, ``\\``, the short escapes,
    ``\\u00xx`` for other control characters, nothing else), and a test
    holds both to :func:`assay.canonical.canonical_text`. TypeError for a
    value of a type assay never stores (a bool, a float). Cost: bench_chain,
    "get with the seal check".
    """
    return _seal_digest(_seal_values(fields))


def _seal_digest(values: tuple[Any, ...]) -> str:
    """:func:`version_digest` of the sealed values in ``_SEAL_KEYS`` order."""
    # Most values are strings: escaped in C, the others one call each.
    text = _SEAL_FORMAT % tuple([_quote(v) if type(v) is str else _json_value(v)
                                 for v in values])
    return digest_bytes(text.encode("utf-8"))


def _json_value(value: Any) -> str:
    """A seal value's JSON text; TypeError for a value of a type assay never stores."""
    if value is None:
        return "null"
    if type(value) is int:
        return str(value)
    return str(_quote(value))


def _seal_of(values: tuple[Any, ...]) -> str:
    """:func:`_seal_digest`, or "" when a stored field is of a type assay never writes."""
    try:
        return _seal_digest(values)
    except (TypeError, ValueError):
        return ""


def chain_digest(previous: str, version_sha256: str) -> str:
    """The ``chain_sha256`` of a version: SHA-256 of the previous chain value then its own digest (hex text)."""
    return digest_bytes((previous + version_sha256).encode("utf-8"))
# The top-level data fields the ledger indexes for every version (the
# ``record_keys`` table), so the reads agents make on every call
# find their records through an index instead of searching the data:
# orientation records (``context_role``), the todos of a goal (``goal_id``),
# a decision stream (``key``), intents (``intent``), loop heads (``schema``)
# and the gate sessions it gave up on (``gave_up``). A fixed list: a new
# entry needs a schema migration that indexes the existing records.
DATA_KEYS = ("context_role", "gave_up", "goal_id", "intent", "key", "schema")
# The tables written beside ``record_versions`` in the same transaction as
# each version, derived from it alone (rebuildable, never an authority).
INDEX_TABLES = ("record_links", "record_keys")
# A string value is indexed as itself up to this many UTF-8 bytes; a longer
# one (or one holding NUL, which PostgreSQL text cannot hold) by its digest.
_KEY_BYTES = 256
# The stored value of a field whose value is not a string (its presence is
# what a read asks for).
NOT_A_STRING = "\x02"


def key_value(value: Any) -> str:
    """How a data field's value is stored in ``record_keys``.

    A string is stored as itself, unless it is longer than 256 UTF-8 bytes,
    holds NUL or starts with a control character: then as U+0001 followed by
    the SHA-256 of its UTF-8 bytes (bounded, and stored like no other
    string). Any other value is :data:`NOT_A_STRING`.
    """
    if not isinstance(value, str):
        return NOT_A_STRING
    raw = value.encode("utf-8")
    if len(raw) <= _KEY_BYTES and "\x00" not in value and not (value and value[0] < " "):
        return value
    return "\x01" + digest_bytes(raw)


def data_keys(data: Any) -> tuple[tuple[str, str], ...]:
    """The ``(field, stored value)`` rows of :data:`DATA_KEYS` that ``data`` holds at top level."""
    if not isinstance(data, dict):
        return ()
    return tuple((name, key_value(data[name])) for name in DATA_KEYS if name in data)


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
_UNSEALED: Any = object()  # a Record built in memory: no stored seal to check

# Stored data is read back only if it could be written today: the bounds of
# :func:`validate_write`. Deeper data is refused on write, so that every
# envelope that embeds a record (a history page, a report) still fits the
# canonical encoder's own bound.
MAX_DATA_DEPTH = 100


class _Fields:
    """The stored fields of one record version: the layout :class:`Record` and its builder share.

    The slots are :data:`VERSION_FIELDS` and the decoded data; the
    annotations below only tell type checkers what each holds (a test holds
    them to the list).
    """

    __slots__ = (*VERSION_FIELDS, "_data", "_damage", "_seal")
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
    _seal: Any


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
    A stored version is also checked against its seal (``version_sha256``,
    see :func:`version_digest`) once its data passes: a version whose
    metadata was edited in place is unreadable too (``version_digest_mismatch``).

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
        seal: Any = _UNSEALED,
    ) -> None:
        # Straight to the slots, past the guarding __setattr__ below (what
        # building records costs: bench_ledger, "get by id, data not read").
        given = locals()
        init = object.__setattr__
        for name in VERSION_FIELDS:
            init(self, name, given[name])
        init(self, "_data", data)
        init(self, "_damage", damage)
        init(self, "_seal", seal)

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
            data = decode_stored(self.data_text, self.data_sha256)
        except _Damaged as exc:
            self._damage = exc.damage
            return
        if self._seal is not _UNSEALED and self._seal != _seal_of(self._sealed_values()):
            self._damage = Damage("version_digest_mismatch",
                                  "the stored version does not hash to its recorded "
                                  "version_sha256: its metadata or data digest was changed")
            return
        self._data = data

    def _sealed_values(self) -> tuple[Any, ...]:
        """The values :func:`version_digest` covers, in ``_SEAL_KEYS`` order, links and
        sources as canonical text."""
        values = list(_sealed_attributes(self))
        values[_LINKS_AT] = (canonical_text([x.to_dict() for x in self.links]) if self.links
                             else "[]")
        values[_SOURCES_AT] = (canonical_text([x.to_dict() for x in self.sources])
                               if self.sources else "[]")
        return tuple(values)

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
        data = None if self.damage is not None else self._data  # damage decodes
        # Keyed by column: the stored text's field is the record's data.
        out = dict(zip(VERSION_COLUMNS, [getattr(self, name) for name in VERSION_FIELDS]))
        out["data"] = data
        out["links"] = [link.to_dict() for link in self.links]
        out["sources"] = [s.to_dict() for s in self.sources]
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
        if name not in ("_data", "_damage") and hasattr(self, "_seal"):
            raise AttributeError(f"Record is immutable: cannot set {name}")
        object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        return (f"Record(id={self.id!r}, revision={self.revision}, audience={self.audience!r}, "
                f"ledger_revision={self.ledger_revision})")


class _Unsealed(_Fields):
    """A stored version being built: its fields are plain slot stores, then it is sealed."""

    __slots__ = ()


# A record's sealed fields in _SEAL_KEYS order (links and sources as tuples).
_sealed_attributes = attrgetter(*_SEAL_KEYS)

# The slot setters of the stored fields, in list order (what stored_record stores with).
_SETTERS = tuple(getattr(_Fields, name).__set__ for name in VERSION_FIELDS)


def stored_record(row: Sequence[Any], damage: Damage | None, seal: Any = _UNSEALED) -> Record:
    """A :class:`Record` of one stored version, its data not decoded yet (the backends' reads).

    ``row`` holds the version's fields in :data:`VERSION_FIELDS` order (links
    and sources decoded); ``seal`` is its stored ``version_sha256`` (None when
    the column is empty, which no intact version has). The same value ``Record(...)`` gives, built for
    listings of thousands: the fields are plain slot stores on an unguarded
    twin of the same layout, which then becomes the immutable :class:`Record`
    (the guarded stores cost more than the rest of reading a version).
    """
    version: Any = _Unsealed()
    for store, value in zip(_SETTERS, row):
        store(version, value)
    version._data = _UNREAD
    version._damage = damage
    version._seal = seal
    version.__class__ = Record
    sealed: Record = version
    return sealed


@frozen_value
class Damage:
    """Why a stored version's data cannot be used."""

    reason: str  # digest_mismatch | version_digest_mismatch | not_json | unsafe_integer | ...
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
    need them. One decoder serves every call, built once instead of per
    read. Cost: bench_ledger, "sqlite get by id", and bench_integrity.
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
            and nesting_depth(value) > MAX_DATA_DEPTH:
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


def nesting_depth(value: Any) -> int:
    """How many levels of arrays and objects ``value`` nests (0 for a scalar)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, depth)
            children = node.values() if isinstance(node, dict) else node
            stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return deepest

