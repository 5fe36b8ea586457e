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
4. per write: read the record's current revision in its partition and
   check the expected revision against it, then append the version with the
   next revision (the current one plus one) and the next ledger revision
   (the highest stored one plus one), and index the version's links and
   request id. (This is the SQLite path; the PostgreSQL backend runs the same
   rules in its server functions.)

Versions are the only copy of a record. They are only ever appended, one per
write, under the write lock, so the ledger revision (the highest key of
``record_versions``) is gap-free and strictly increasing in commit order, and
a record's current version is simply its highest revision: no counter or
head row is updated on every write.

Any exception before commit rolls the transaction back: nothing is written.

Every read statement is confined to the reader's partitions (``audience IN
(...)``, built in one place, :meth:`SqlReader._view`, or ``audience = ?`` with
one of them, as a point read probes them in turn); a record's versions,
its current revision, its links and its request ids are all keyed by
``(id, audience)``, so no statement can reach another principal's private
versions by id alone.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from assay.errors import AssayError
from assay.ledger.record import (
    CHAIN_GENESIS,
    DATA_KEYS,
    PROJECT_AUDIENCE,
    SEALED_FIELDS,
    VERSION_COLUMNS,
    VERSION_FIELDS,
    Damage,
    Link,
    Record,
    SourceRef,
    data_keys,
    key_value,
    stored_record,
    view_audiences,
)
from assay.ledger.store import LedgerInfo
from assay.ledger.write import MAX_BATCH, MAX_REVISION, PREFERRED, SqlWriter, marks, now_rfc3339

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from assay.ledger.chain import ChainWalk

# How many versions a chain walk reads per statement.
_CHAIN_PAGE = 2000

__all__ = ["FUNCTIONS_FROM", "MAX_BATCH", "MIGRATIONS", "TEXT_INDEX_MIN", "SqlLedger", "SqlReader",
           "index_keys", "like_pattern", "migration_steps", "now_rfc3339"]

# Every read selects a version's columns in VERSION_FIELDS order, then its
# seal (see _record).
_VERSION_COLUMNS = ", ".join("v." + column for column in (*VERSION_COLUMNS, "version_sha256"))
_SEAL = len(VERSION_FIELDS)
_ID = VERSION_FIELDS.index("id")
_AUDIENCE = VERSION_FIELDS.index("audience")
_LINKS = VERSION_FIELDS.index("links")
_SOURCES = VERSION_FIELDS.index("sources")


_SEALED = ", ".join(SEALED_FIELDS)
# Seals every stored version, then chains them in ledger revision order (each
# to the version stored before it), with the server's (PostgreSQL) or the
# connection's (SQLite, registered from assay.ledger.record) digest functions.
_SEAL_ALL = f"UPDATE record_versions SET version_sha256 = assay_version_digest({_SEALED})"
_CHAIN_ALL = (
    "UPDATE record_versions SET chain_sha256 = c.chain FROM (WITH RECURSIVE c(n, chain) AS "
    f"(SELECT CAST(0 AS BIGINT), CAST('{CHAIN_GENESIS}' AS TEXT) UNION ALL SELECT v.ledger_revision, "
    "assay_chain_digest(c.chain, v.version_sha256) FROM c JOIN record_versions v "
    "ON v.ledger_revision = (SELECT min(x.ledger_revision) FROM record_versions x "
    "WHERE x.ledger_revision > c.n)) SELECT n, chain FROM c) AS c "
    "WHERE record_versions.ledger_revision = c.n")

# What brings a ledger at an older schema version up to each version, per
# dialect. A new ledger gets the current DDL and needs none of them.
MIGRATIONS: dict[str, dict[int, tuple[str, ...]]] = {
    # 2: versions are the only copy of a record. The ledger revision is the
    # highest version key and a record's current version its highest
    # revision, so neither the counter row nor the heads table is kept up to
    # date on every write. On PostgreSQL ids compare bytewise (as on SQLite),
    # which makes the ids of one kind a range of the (id, revision) index.
    # 3: a record is keyed by (id, audience): each principal's private records
    # are a partition of their own, with their own revisions, links and
    # request ids. Existing versions keep their revisions; the link index is
    # rebuilt per partition and earlier request ids belong to no principal.
    # 4: every version is sealed (version_sha256) and chained (chain_sha256);
    # existing versions are sealed and chained as they stand, so the chain
    # vouches for them from the migration on.
    # 5 (PostgreSQL only): the role that wrote each version (written_by).
    # 6: the indexed data fields of each version (record_keys). The schema
    # script creates the table; :func:`index_keys` fills it from the current
    # versions (SQLite cannot compute the digest of a long value in SQL).
    # 7: the text index of find's query. On SQLite the schema script creates
    # the FTS5 table and the triggers that keep it; the migration fills it
    # from every stored version. On PostgreSQL it is two trigram indexes on
    # record_versions, made by assay.ledger.postgres where the server has
    # the pg_trgm extension (a ledger without them works, by the scan).
    "sqlite": {
        2: ("DROP TABLE IF EXISTS ledger_head", "DROP TABLE IF EXISTS records"),
        3: ("DROP INDEX IF EXISTS record_versions_id",
            "CREATE UNIQUE INDEX record_versions_id ON record_versions (id, audience, revision)",
            "DROP TABLE IF EXISTS record_links",
            ("CREATE TABLE record_links (id TEXT NOT NULL, audience TEXT NOT NULL, "
            "rel TEXT NOT NULL, target TEXT NOT NULL, PRIMARY KEY (id, audience, rel, target)) "
            "WITHOUT ROWID"),
            "CREATE INDEX IF NOT EXISTS record_links_target ON record_links (target, rel)",
            ("INSERT OR IGNORE INTO record_links (id, audience, rel, target) "
            "SELECT v.id, v.audience, json_extract(j.value, '$.rel'), "
            "json_extract(j.value, '$.target') FROM record_versions v, json_each(v.links) j "
            "WHERE v.links <> '[]' AND v.revision = (SELECT max(x.revision) FROM record_versions x "
            "WHERE x.id = v.id AND x.audience = v.audience)"),
            "ALTER TABLE requests RENAME TO requests_v2",
            ("CREATE TABLE requests (principal TEXT NOT NULL, request_id TEXT NOT NULL, "
            "body_sha256 TEXT NOT NULL, id TEXT NOT NULL, audience TEXT NOT NULL, "
            "revision INTEGER NOT NULL, ledger_revision INTEGER NOT NULL, "
            "data_sha256 TEXT NOT NULL, PRIMARY KEY (principal, request_id)) WITHOUT ROWID"),
            ("INSERT INTO requests SELECT '', q.request_id, q.body_sha256, q.id, "
            "coalesce((SELECT v.audience FROM record_versions v "
            "WHERE v.ledger_revision = q.ledger_revision), 'project'), q.revision, "
            "q.ledger_revision, q.data_sha256 FROM requests_v2 q"),
            "DROP TABLE requests_v2"),
        4: ("ALTER TABLE record_versions ADD COLUMN version_sha256 TEXT",
            "ALTER TABLE record_versions ADD COLUMN chain_sha256 TEXT",
            _SEAL_ALL, _CHAIN_ALL),
        6: (),
        7: ("INSERT INTO record_text (record_text) VALUES ('rebuild')",
            ("INSERT INTO record_text_nul (ledger_revision) SELECT ledger_revision "
             "FROM record_versions WHERE instr(CAST(id AS BLOB), x'00') > 0 "
             "OR instr(CAST(data AS BLOB), x'00') > 0")),
    },
    "postgres": {
        2: ("DROP TABLE IF EXISTS ledger_head", "DROP TABLE IF EXISTS records",
            'ALTER TABLE record_versions ALTER COLUMN id TYPE TEXT COLLATE "C"'),
        3: ("DROP INDEX IF EXISTS record_versions_id",
            "CREATE UNIQUE INDEX record_versions_id ON record_versions (id, audience, revision)",
            "DROP TABLE IF EXISTS record_links",
            ('CREATE TABLE record_links (id TEXT COLLATE "C" NOT NULL, audience TEXT NOT NULL, '
            "rel TEXT NOT NULL, target TEXT NOT NULL, PRIMARY KEY (id, audience, rel, target))"),
            "CREATE INDEX IF NOT EXISTS record_links_target ON record_links (target, rel)",
            ("INSERT INTO record_links (id, audience, rel, target) "
            "SELECT DISTINCT v.id, v.audience, x->>'rel', x->>'target' FROM record_versions v, "
            "jsonb_array_elements(v.links::jsonb) x WHERE v.links <> '[]' AND v.revision = "
            "(SELECT max(y.revision) FROM record_versions y WHERE y.id = v.id "
            "AND y.audience = v.audience)"),
            "ALTER TABLE requests RENAME TO requests_v2",
            ("CREATE TABLE requests (principal TEXT NOT NULL, request_id TEXT NOT NULL, "
            "body_sha256 TEXT NOT NULL, id TEXT NOT NULL, audience TEXT NOT NULL, "
            "revision BIGINT NOT NULL, ledger_revision BIGINT NOT NULL, "
            "data_sha256 TEXT NOT NULL, PRIMARY KEY (principal, request_id))"),
            ("INSERT INTO requests SELECT '', q.request_id, q.body_sha256, q.id, "
            "coalesce((SELECT v.audience FROM record_versions v "
            "WHERE v.ledger_revision = q.ledger_revision), 'project'), q.revision, "
            "q.ledger_revision, q.data_sha256 FROM requests_v2 q"),
            "DROP TABLE requests_v2",
            ("DROP FUNCTION IF EXISTS assay_put(text, text, text, text, text, text, text, text, "
            "text, text, text, text, text, bigint, text, text, text)")),
        4: ("ALTER TABLE record_versions ADD COLUMN IF NOT EXISTS version_sha256 TEXT",
            "ALTER TABLE record_versions ADD COLUMN IF NOT EXISTS chain_sha256 TEXT",
            _SEAL_ALL, _CHAIN_ALL),
        # 5: each version records the database role that wrote it. Versions
        # written before keep NULL (unknown), not the migrating role. The
        # row-level security policies and the checked write functions are
        # (re)made by function_postgres.sql after every migration.
        5: ("ALTER TABLE record_versions ADD COLUMN IF NOT EXISTS written_by TEXT",
            "ALTER TABLE record_versions ALTER COLUMN written_by SET DEFAULT session_user"),
        6: (),
        7: (),
    },
}

# The versions whose data may hold an indexed field (a cheap text test first).
_MAY_HOLD_KEYS = " OR ".join(f"v.data LIKE '%\"{name}\":%'" for name in DATA_KEYS)


def index_keys(cur: Any, mark: str) -> None:
    """Fill ``record_keys`` from every current version (the migration to schema 6).

    Only current versions: a read keeps only those. A version whose stored
    data no longer parses is left unindexed (a read of its data would not
    use it either).
    """
    cur.execute("SELECT v.ledger_revision, v.audience, v.data FROM record_versions v "
                f"WHERE ({_MAY_HOLD_KEYS}) AND {_IS_CURRENT}")
    rows: list[tuple[str, str, int, str]] = []
    for ledger_revision, audience, text in cur.fetchall():
        try:
            data = json.loads(text)
        except ValueError:
            continue
        rows.extend((name, value, ledger_revision, audience) for name, value in data_keys(data))
    if rows:
        cur.executemany("INSERT INTO record_keys (field, value, ledger_revision, audience) "
                        f"VALUES ({mark}, {mark}, {mark}, {mark})", rows)


# The first migration that may call the server's functions (function_postgres.sql:
# schema 4 seals existing versions with them); the ones before run first, since
# those functions and policies need the columns they add.
FUNCTIONS_FROM = 4


def migration_steps(dialect: str, version: int, *, below: int | None = None,
                    start: int = 0) -> list[str]:
    """The statements that bring a ledger at schema ``version`` (0: new) to the current one.

    ``start`` and ``below`` keep the migrations whose target schema is in
    ``[start, below)``: a backend can run its functions between two phases.
    """
    steps = MIGRATIONS[dialect]
    return [step for target in sorted(steps) if 0 < version < target and start <= target
            and (below is None or target < below) for step in steps[target]]


# The ledger revision: the highest version key (0 for an empty ledger).
_HEAD = "SELECT coalesce(max(ledger_revision), 0) FROM record_versions"
# A partition's current version (one of the reader's partitions, as get probes them).
_CURRENT_VERSION = (f"SELECT {_VERSION_COLUMNS} FROM record_versions v WHERE v.id = ? "
                    "AND v.audience = ? ORDER BY v.revision DESC LIMIT 1")
# Keeps only the current version of each (id, audience) in a query over
# versions v (checked on the (id, audience, revision) index, so a query that
# stops at its limit reads only as far as it needs).
_IS_CURRENT = ("v.revision = (SELECT max(x.revision) FROM record_versions x "
               "WHERE x.id = v.id AND x.audience = v.audience)")
# A private record overlays the project record of the same id: in a view
# with a private partition, a project version is shadowed when the viewer
# holds a version of that id of its own.
_NOT_SHADOWED = ("NOT (v.audience = 'project' AND EXISTS (SELECT 1 FROM record_versions y "
                 "WHERE y.id = v.id AND y.audience = ?))")


# A text query's needle is looked up in the text index only from this many
# characters: a trigram index holds no shorter term (a shorter one is scanned).
TEXT_INDEX_MIN = 3
# Past this many candidates in the text index (SQLite, and PostgreSQL under
# row-level security), a find reads the current records in id order instead
# (a common term fills a page from the first few), so neither plan reads
# more than about this many rows for a page.
_TEXT_CANDIDATES = 5_000


# SQLite: the versions the text index names for a needle (the rows holding a
# NUL byte always), each joined to its version by its key.
_TEXT_CANDIDATES_SOURCE = (
    "(SELECT rowid AS ledger_revision FROM record_text WHERE record_text MATCH ? "
    "UNION SELECT ledger_revision FROM record_text_nul) t "
    "CROSS JOIN record_versions v ON v.ledger_revision = t.ledger_revision")


def is_indexable(needle: str) -> bool:
    """Whether the text index can name the candidates of ``needle`` (lower-cased already).

    A trigram index needs three characters; FTS5 reads its query up to a NUL.
    """
    return len(needle) >= TEXT_INDEX_MIN and "\x00" not in needle


def like_pattern(needle: str) -> str:
    """The LIKE pattern (escape character ``\\``) of the values that hold ``needle``."""
    escaped = needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def fts_phrase(needle: str) -> str:
    """The FTS5 query of the rows that hold ``needle`` (one quoted phrase: no operator in it)."""
    return '"' + needle.replace('"', '""') + '"'


def _lone_surrogate() -> AssayError:
    # An id or filter with a lone surrogate (from argv bytes that are not
    # UTF-8, or a JSON escape) can name nothing in the ledger.
    return AssayError("a read filter holds a lone surrogate, which UTF-8 cannot encode",
                      code="lone_surrogate", action="Pass ids and filters as valid UTF-8 text.")


def _successor(prefix: str) -> str:
    """The least string above every string that starts with ``prefix`` (code point order)."""
    last = ord(prefix[-1])
    if last == 0x10FFFF:
        raise AssayError("an id prefix cannot end in U+10FFFF", code="invalid_argument",
                         pointer="/prefix")
    # Surrogates are never in an id: skip over them.
    return prefix[:-1] + chr(0xE000 if last == 0xD7FF else last + 1)


def _record(row: Sequence[Any]) -> Record:
    """A stored version; its data is decoded (and checked) only when used."""
    damage = None
    try:
        # Most records have neither links nor sources: skip decoding "[]".
        links_text, sources_text = row[_LINKS], row[_SOURCES]
        links = () if links_text == "[]" else tuple(
            Link(x["rel"], x["target"]) for x in json.loads(links_text))
        sources = () if sources_text == "[]" else tuple(
            SourceRef(x["id"], x["revision"], x.get("data_sha256")) for x in json.loads(sources_text))
    except (ValueError, TypeError, KeyError, AttributeError):
        links, sources = (), ()
        damage = Damage("metadata_damaged", "the stored links or sources of this version are "
                                            "not the JSON assay wrote")
    fields = list(row)
    fields[_LINKS], fields[_SOURCES] = links, sources
    return stored_record(fields, damage, row[_SEAL])


def _plain_run(needle: str) -> str:
    """The longest run of ``needle`` without an ASCII letter (the first, of equal ones)."""
    best = run = ""
    for char in needle:
        if "a" <= char <= "z" or "A" <= char <= "Z":
            run = ""
            continue
        run += char
        if len(run) > len(best):
            best = run
    return best


def text_match(needle: str) -> tuple[str, list[str]]:
    """SQLite's condition (and parameters) that a version's id or data holds ``needle``.

    ``needle`` is already lower case; the match is ``instr(lower(...), needle)``
    on the id and on the data. SQLite's ``lower`` changes only the bytes
    ``A``-``Z``, so a run of the needle without ASCII letters must stand in the
    id exactly as it is for ``lower(id)`` to hold the needle: a plain
    ``instr`` on it (no copy of the id) rules out almost every id first,
    as ids are letters, digits and a few separators while a needle usually
    holds a quote or a space. ``instr`` reads the whole value, NUL bytes and
    BLOBs included, as ``lower`` does, and the run starts at a character, so
    it is never skipped as a UTF-8 continuation byte: the result is that of
    the plain condition on every row, damaged ones included.
    """
    run = _plain_run(needle)
    on_id = "instr(lower(v.id), ?) > 0"
    if not run:
        return f"({on_id} OR instr(lower(v.data), ?) > 0)", [needle, needle]
    return (f"((instr(v.id, ?) > 0 AND {on_id}) OR instr(lower(v.data), ?) > 0)",
            [run, needle, needle])


class SqlReader:
    """A consistent read view over one open transaction (see :class:`~assay.ledger.store.Reader`).

    Every statement is built through :meth:`_view`, which confines it to the
    reader's partitions; no method takes an audience from its caller that
    could widen them.
    """

    def __init__(self, ledger: SqlLedger, cursor: Any, epoch: str, ledger_revision: int,
                 principal: str | None = None) -> None:
        self._ledger = ledger
        self._cur = cursor
        self.epoch = epoch
        self.ledger_revision = ledger_revision
        self.principal = principal
        self._audiences = view_audiences(principal)
        # Where the reader looks for an id: its own partition, then the project's.
        self._preference = self._audiences[::-1]
        # Whether a text query reads the text index (else every current record).
        self.text_index = ledger.text_index
        self._candidates: dict[str, bool] = {}
        self._secured: dict[str, list[int] | None] = {}

    def _execute(self, sql: str, params: Sequence[Any]) -> None:
        try:
            self._cur.execute(self._ledger.sql(sql), tuple(params))
        except UnicodeEncodeError:
            raise _lone_surrogate() from None

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        self._execute(sql, params)
        return list(self._cur.fetchall())

    def _row(self, sql: str, params: Sequence[Any]) -> Any:
        """The first row of a statement, or None."""
        self._execute(sql, params)
        return self._cur.fetchone()

    def _view(self, alias: str = "v.") -> tuple[str, list[Any]]:
        """The condition (and its parameters) that keeps rows of this reader's partitions."""
        return f"{alias}audience IN ({marks(self._audiences)})", list(self._audiences)

    def _partition(self, record_id: str) -> str | None:
        """The partition this reader sees ``record_id`` in (its own first), or None."""
        if len(self._audiences) == 1:
            return PROJECT_AUDIENCE
        view, params = self._view("")
        rows = self._rows(f"SELECT audience FROM record_versions WHERE id = ? AND {view} "
                          f"ORDER BY {PREFERRED.format(a='')} LIMIT 1", [record_id, *params])
        return str(rows[0][0]) if rows else None

    def get(self, record_id: str, revision: int | None = None) -> Record | None:
        if revision is None:
            # The reader's own partition first, then the project's: each is
            # one probe of the (id, audience, revision) index for its highest
            # revision (ordering the partitions in SQL would sort every
            # version of the record instead).
            for partition in self._preference:
                row = self._row(_CURRENT_VERSION, (record_id, partition))
                if row is not None:
                    return _record(row)
            return None
        if not 1 <= revision <= MAX_REVISION:
            return None
        if len(self._audiences) == 1:
            partition, params = "?", [PROJECT_AUDIENCE]
        else:
            # The partition the reader sees the record in (its own first), chosen
            # in the same statement: one round trip instead of two.
            view, params = self._view("")
            partition = (f"(SELECT audience FROM record_versions WHERE id = ? AND {view} "
                         f"ORDER BY {PREFERRED.format(a='')} LIMIT 1)")
            params = [record_id, *params]
        row = self._row(f"SELECT {_VERSION_COLUMNS} FROM record_versions v "
                        f"WHERE v.id = ? AND v.revision = ? AND v.audience = {partition}",
                        (record_id, revision, *params))
        return None if row is None else _record(row)

    def get_many(self, record_ids: Sequence[str]) -> dict[str, Record]:
        out: dict[str, Record] = {}
        unique = sorted(set(record_ids))
        view, params = self._view("")
        for start in range(0, len(unique), 500):
            chunk = unique[start : start + 500]
            # The (id, audience, revision) index alone gives each partition's
            # highest revision: one table row is read per record and partition.
            for row in self._rows(
                f"SELECT {_VERSION_COLUMNS} FROM (SELECT id, audience, max(revision) AS revision "
                f"FROM record_versions WHERE id IN ({marks(chunk)}) AND {view} "
                "GROUP BY id, audience) c JOIN record_versions v ON v.id = c.id "
                "AND v.audience = c.audience AND v.revision = c.revision", [*chunk, *params]):
                if row[_ID] not in out or row[_AUDIENCE] != PROJECT_AUDIENCE:
                    out[row[_ID]] = _record(row)
        return out

    def history(self, record_id: str, *, audience: str | None = None) -> list[Record]:
        if audience is None:
            audience = self._partition(record_id)
        if audience not in self._audiences:
            return []
        return [_record(r) for r in self._rows(
            f"SELECT {_VERSION_COLUMNS} FROM record_versions v WHERE v.id = ? AND v.audience = ? "
            "ORDER BY v.revision", (record_id, audience))]

    def _matching(self, *, scopes: Sequence[str] | None, kind: str | None, status: str | None,
                  link: tuple[str | None, str] | None, query: str | None,
                  audiences: Sequence[str] | None, after: str | None,
                  data_field: tuple[str, str | None] | None = None, prefix: str | None = None,
                  ) -> tuple[str, list[Any]] | None:
        """The FROM/WHERE text (and parameters) of the current records ``find`` matches.

        None when no record can match. Confined to the reader's partitions
        (:meth:`_view`) before any other filter, so ``find`` and
        ``find_count`` see exactly the same rows.
        """
        view, params = self._view()
        where: list[str] = [view, _IS_CURRENT]
        joins = ""
        source = "record_versions v"
        if data_field is not None:
            # The key index names the candidates: only versions that hold
            # the field are read (and of those, the current ones kept).
            name, value = data_field
            if name not in DATA_KEYS:
                raise AssayError(f"{name!r} is not an indexed data field", code="invalid_argument",
                                 pointer="/data_field")
            source = "record_keys k JOIN record_versions v ON v.ledger_revision = k.ledger_revision"
            key_where = ["k.field = ?"]
            key_params: list[Any] = [name]
            if value is not None:
                key_where.append("k.value = ?")
                try:
                    key_params.append(key_value(value))
                except UnicodeEncodeError:
                    raise _lone_surrogate() from None
            where = key_where + where
            params = key_params + params
        if len(self._audiences) > 1:
            where.append(_NOT_SHADOWED)
            params.append(self._audiences[1])
        if kind is not None:
            if ":" in kind:  # no kind holds ':' (it ends the kind in an id)
                return None
            # An id is "<kind>:<name>" and ids compare bytewise on both
            # backends: the ids of one kind are the range ["<kind>:", "<kind>;"),
            # read from the (id, audience, revision) index in order.
            where.append("v.id >= ? AND v.id < ?")
            params.extend([kind + ":", kind + ";"])
        if prefix:
            # Like a kind: the ids that start with prefix are a range of the index.
            where.append("v.id >= ? AND v.id < ?")
            params.extend([prefix, _successor(prefix)])
        if after is not None:
            where.append("v.id > ?")
            params.append(after)
        if audiences is not None:
            # A narrower filter within the view (it can never widen it).
            if not audiences:
                return None
            where.append(f"v.audience IN ({marks(audiences)})")
            params.extend(audiences)
        if scopes is not None:
            if not scopes:
                return None
            where.append(f"v.scope IN ({marks(scopes)})")
            params.extend(scopes)
        if status is not None:
            where.append("v.status = ?")
            params.append(status)
        if link is not None:
            rel, target = link
            joins = " JOIN record_links l ON l.id = v.id AND l.audience = v.audience"
            where.append("l.target = ?")
            params.append(target)
            if rel is not None:
                where.append("l.rel = ?")
                params.append(rel)
        if query:
            needle = query.lower()
            indexed = (self.text_index and data_field is None and is_indexable(needle))
            if self._ledger.dialect == "sqlite":
                # The index names candidates (folding case more widely than
                # SQLite's lower); the scan's exact condition decides.
                match, match_params = text_match(needle)
                where.append(match)
                params.extend(match_params)
                if indexed and self._few_candidates(needle):
                    source = _TEXT_CANDIDATES_SOURCE
                    params.insert(0, fts_phrase(needle))
            elif indexed:
                # The same rows as strpos (a LIKE pattern with every wildcard
                # escaped), in the form the trigram indexes answer.
                pattern = like_pattern(needle)
                where.append("(lower(v.id) LIKE ? OR lower(v.data) LIKE ?)")
                params.extend([pattern, pattern])
                if self._ledger.role_bound:
                    candidates = self._secured_candidates(pattern)
                    if candidates is not None:
                        where.append("v.ledger_revision = ANY(?)")
                        params.append(candidates)
            else:
                where.append("(strpos(lower(v.id), ?) > 0 OR strpos(lower(v.data), ?) > 0)")
                params.extend([needle, needle])
        return f"{source}{joins} WHERE " + " AND ".join(where), params

    def _secured_candidates(self, pattern: str) -> list[int] | None:
        """PostgreSQL under row-level security: the versions the trigram indexes name, if few.

        The server function ``assay_text_candidates`` reads the indexes for
        this role's rows (see function_postgres.sql); None past
        ``_TEXT_CANDIDATES`` (a common term: the id walk is cheaper).
        """
        if pattern not in self._secured:
            rows = self._rows("SELECT assay_text_candidates(?, ?)",
                              (pattern, _TEXT_CANDIDATES + 1))
            self._secured[pattern] = ([int(row[0]) for row in rows]
                                      if len(rows) <= _TEXT_CANDIDATES else None)
        return self._secured[pattern]

    def _few_candidates(self, needle: str) -> bool:
        """Whether SQLite's text index holds at most ``_TEXT_CANDIDATES`` versions with ``needle``.

        Reads at most that many entries of the index (once per needle and reader).
        """
        if needle not in self._candidates:
            row = self._row("SELECT count(*) FROM (SELECT 1 FROM record_text WHERE record_text "
                            "MATCH ? LIMIT ?)", (fts_phrase(needle), _TEXT_CANDIDATES + 1))
            self._candidates[needle] = int(row[0]) <= _TEXT_CANDIDATES
        return self._candidates[needle]

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
        matching = self._matching(scopes=scopes, kind=kind, status=status, link=link,
                                  query=query, audiences=audiences, after=after, data_field=data_field,
                                  prefix=prefix)
        if matching is None:
            return []
        source, params = matching
        # Only a link join can meet one version twice (two edges to the
        # target); without DISTINCT, PostgreSQL walks the id index in order
        # and stops at the limit instead of sorting every match first.
        distinct = "DISTINCT " if link is not None else ""
        sql = f"SELECT {distinct}{_VERSION_COLUMNS} FROM {source} ORDER BY v.id LIMIT ?"
        return [_record(r) for r in self._rows(sql, [*params, int(limit)])]

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
        matching = self._matching(scopes=scopes, kind=kind, status=status, link=link,
                                  query=query, audiences=audiences, after=after, data_field=data_field,
                                  prefix=prefix)
        if matching is None:
            return 0
        source, params = matching
        # A record is one id in this view (a shadowed project version is
        # excluded), so counting distinct ids counts the records find returns.
        if at_most is None:
            rows = self._rows(f"SELECT COUNT(DISTINCT v.id) FROM {source}", params)
        else:
            # Only a link join meets one version twice (see find).
            distinct = "DISTINCT " if link is not None else ""
            rows = self._rows(f"SELECT COUNT(*) FROM (SELECT {distinct}v.id FROM {source} "
                              "LIMIT ?) c", [*params, max(0, int(at_most))])
        return int(rows[0][0])

    def walk_chain(self, upto: int | None = None) -> ChainWalk:
        """Walk the hash chain up to ledger revision ``upto`` (default: this reader's revision).

        The one read that is not confined to the reader's partitions: the
        chain runs through all of them. What it returns names a broken
        version's id and audience for the caller to show only to whom may
        read it. Paged by ledger revision, so memory stays flat.
        """
        from assay.ledger.chain import CHAIN_COLUMNS, walk_chain

        statement = self._ledger.sql(
            f"SELECT {', '.join(CHAIN_COLUMNS)} FROM record_versions WHERE ledger_revision > ? "
            "AND ledger_revision <= ? ORDER BY ledger_revision LIMIT ?")
        last = CHAIN_COLUMNS.index("ledger_revision")
        bound = self.ledger_revision if upto is None else min(upto, self.ledger_revision)
        cur = self._cur

        def rows() -> Iterator[Any]:
            after = 0
            while True:
                cur.execute(statement, (after, bound, _CHAIN_PAGE))
                page = cur.fetchall()
                if not page:
                    return
                yield from page
                after = int(page[-1][last])

        return walk_chain(rows())

    def counts(self) -> tuple[int, int, dict[str, int]]:
        """Records, versions and current statuses as this reader sees them."""
        view, params = self._view("")
        shadow = ""
        if len(self._audiences) > 1:
            shadow = " WHERE " + _NOT_SHADOWED.replace("v.", "c.")
            params.append(self._audiences[1])
        rows = self._rows(
            "SELECT v.status, COUNT(*), SUM(c.n) FROM (SELECT id, audience, max(revision) AS "
            f"revision, COUNT(*) AS n FROM record_versions WHERE {view} GROUP BY id, audience) c "
            "JOIN record_versions v ON v.id = c.id AND v.audience = c.audience "
            f"AND v.revision = c.revision{shadow} GROUP BY v.status", params)
        by_status = {str(row[0]): int(row[1]) for row in rows}
        return sum(by_status.values()), sum(int(row[2]) for row in rows), by_status


class SqlLedger(SqlWriter):
    """Ledger operations over a DB-API connection; subclasses supply the dialect."""

    dialect = "sqlite"
    backend = "sqlite"
    location = ""
    # Whether find's text query reads the text index (schema 7); a PostgreSQL
    # server without pg_trgm has none, and a test may switch it off to
    # compare the two paths.
    text_index = True
    # PostgreSQL: whether the session reads under row-level security (a role
    # other than the ledger's owner, see assay.ledger.roles).
    role_bound = False

    # -- dialect hooks (with those of SqlWriter) ----------------------------------
    @contextmanager
    def _read_transaction(self) -> Iterator[Any]:  # pragma: no cover - abstract
        raise NotImplementedError
        yield

    def close(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- shared logic --------------------------------------------------------------
    def _head(self, cur: Any) -> tuple[str, int]:
        epoch = self._epoch_of(cur)
        return epoch, int(self._one(cur, _HEAD)[0])

    @contextmanager
    def reader(self) -> Iterator[SqlReader]:
        """A consistent read view; see :class:`~assay.ledger.store.Store.reader`."""
        with self._read_transaction() as cur:
            epoch, revision = self._head(cur)
            yield SqlReader(self, cur, epoch, revision, self.principal)

    def walk_chain(self, upto: int | None = None) -> ChainWalk:
        """Walk the hash chain up to ledger revision ``upto`` (default: all), in one read of its own."""
        with self.reader() as r:
            return r.walk_chain(upto)

    def info(self) -> LedgerInfo:
        with self.reader() as r:
            records, versions, by_status = r.counts()
            schema = int(self._one(r._cur, "SELECT value FROM ledger_meta WHERE key = 'schema_version'")[0])
            return LedgerInfo(
                backend=self.backend, location=self.location, epoch=r.epoch,
                ledger_revision=r.ledger_revision, schema_version=schema, records=records,
                versions=versions, by_status=by_status,
            )
