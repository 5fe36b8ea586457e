"""The PostgreSQL backend (psycopg 3), for teams and many agents on many machines.

Every write transaction first takes the ledger's write lock (a transaction
advisory lock keyed by the schema's ``record_versions`` table, see
``assay_write_lock`` in function_postgres.sql), so writes are serialised in
commit order. Every lock wait of a session is bounded (``lock_timeout``, 30
s, the bound of a SQLite writer): past it the call fails with
``ledger_busy`` and nothing is written. Write statements run at ``READ COMMITTED`` (set for the session,
whatever the server's default), so each one sees every write committed
before the lock was granted: the next ledger revision, the highest stored
one plus one, is gap-free and commit-ordered (a sequence would not be: a
reader could see revision 2 before 1 commits). Reads run in ``REPEATABLE
READ READ ONLY`` transactions: one consistent snapshot per reader.

Imported only when a ``postgresql://`` URL is opened.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg

from assay.errors import (
    AssayError,
    EpochConflict,
    RequestConflict,
    RevisionConflict,
    UnavailableError,
)
from assay.ledger.sql import FUNCTIONS_FROM, SqlLedger, index_keys, migration_steps, now_rfc3339
from assay.ledger.sqlite import _seed_meta, _statements, schema_too_new
from assay.ledger.store import SCHEMA_VERSION, ledger_not_found
from assay.ledger.write import PreparedWrite, Receipt, Write, WriteBasis

__all__ = ["PostgresStore"]

# find's text index (schema 7): a trigram index on the lower-cased id and
# data of every version, which LIKE '%needle%' on the same expressions reads.
_TEXT_INDEXES = (("record_versions_id_text", "id"), ("record_versions_data_text", "data"))
_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
_MIGRATION_LOCK = 0x61737361  # advisory lock key for schema creation ("assa")
# How long any statement waits for a lock before it fails (ledger_busy), in ms.
LOCK_TIMEOUT_MS = 30_000


def _split_url(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    schema = "assay"
    kept = []
    for key, value in query:
        if key == "assay_schema":
            schema = value
        else:
            kept.append((key, value))
    if not _SCHEMA_NAME.fullmatch(schema):
        raise AssayError(f"invalid assay_schema {schema!r}", code="invalid_db_url",
                         pointer="/db")
    return urlunsplit(parts._replace(query=urlencode(kept))), schema


def _redact(url: str) -> str:
    parts = urlsplit(url)
    if parts.password:
        netloc = parts.netloc.replace(":" + parts.password + "@", ":***@")
        return urlunsplit(parts._replace(netloc=netloc))
    return url


class PostgresStore(SqlLedger):
    """A ledger in one PostgreSQL schema. See :class:`~assay.ledger.store.Store`."""

    dialect = "postgres"
    backend = "postgresql"
    write_lock = "SELECT assay_write_lock()"
    # How long a statement waits for any lock before ledger_busy; a handle
    # may be given a shorter bound (set before its next call).
    busy_timeout_ms = LOCK_TIMEOUT_MS
    _lock_timeout_ms = LOCK_TIMEOUT_MS

    # The role this session authenticated as (session_user), and whether it
    # is bound to it: true for any role but the ledger's owner (a member of
    # the role owning the tables, or a superuser), whose principal is then
    # that role alone (see assay.ledger.roles).
    role = ""
    role_bound = False

    def __init__(self, url: str, *, principal: str | None = None, create: bool = True,
                 default_principal: bool = False) -> None:
        self.principal = principal
        self._url = url
        self._create = create
        conninfo, self.schema = _split_url(url)
        self.location = f"{_redact(conninfo)} (schema {self.schema})"
        try:
            self._conn = psycopg.connect(conninfo, autocommit=True, connect_timeout=10)
        except psycopg.Error as exc:
            raise UnavailableError(f"cannot connect to the ledger at {_redact(conninfo)}: "
                                   f"{str(exc).strip()}", code="ledger_unavailable",
                                   action="Check that the PostgreSQL server is running and the URL is right.") from None
        try:
            # Every wait for a lock (the migration and write advisory locks, a
            # row or table lock someone holds) ends after the same bound as a
            # SQLite writer's, as ledger_busy: no session holding one can make
            # a call wait for good.
            self._conn.execute(f"SET lock_timeout = {LOCK_TIMEOUT_MS}")
            self._migrate()
        except psycopg.Error as exc:
            self._conn.close()
            raise _unavailable(exc) from None
        except BaseException:
            self._conn.close()
            raise
        if self.role_bound and principal is not None and principal != self.role:
            if not default_principal:
                self._conn.close()
                raise principal_not_role(principal, self.role)
            self.principal = self.role
        # The cursor every write goes through: a cursor keeps the dumpers it
        # found for each parameter type, so a new cursor per write (as
        # connection.execute makes) would look all nineteen up again.
        self._writes = self._conn.cursor()

    def sql(self, statement: str) -> str:
        return statement.replace("?", "%s")

    def _migrate(self) -> None:
        with self._conn.transaction():
            cur = self._conn.cursor()
            cur.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            # The schema name is checked by _split_url; a missing schema reads as NULL.
            # A role that does not own the tables yet will own them when it
            # creates them (NULL membership: no tables).
            cur.execute(f"SELECT to_regclass('{self.schema}.ledger_meta') IS NOT NULL, "
                        "session_user, coalesce(pg_has_role(session_user, (SELECT c.relowner "
                        f"FROM pg_class c WHERE c.oid = to_regclass('{self.schema}."
                        "record_versions')), 'MEMBER'), true), "
                        f"to_regnamespace('{self.schema}') IS NOT NULL, "
                        f"to_regclass('{self.schema}.{_TEXT_INDEXES[1][0]}') IS NOT NULL, "
                        "EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm')")
            exists = cur.fetchone()
            assert exists is not None  # one row, always
            self.role, self.role_bound = str(exists[1]), not exists[2]
            self.text_index = bool(exists[4])
            if not exists[0] and not self._create:
                raise ledger_not_found(self.location)
            if not exists[3]:
                # Only when missing: a schema made for the role by an
                # administrator needs no privilege on the database.
                cur.execute(f"CREATE SCHEMA IF NOT EXISTS {self.schema}")
            cur.execute(f"SET LOCAL search_path TO {self.schema}, pg_temp")
            version = 0
            if exists[0]:
                cur.execute("SELECT value FROM ledger_meta WHERE key = 'schema_version'")
                row = cur.fetchone()
                version = int(row[0]) if row else 0
                if version > SCHEMA_VERSION:
                    raise schema_too_new(version, self.location)
                if version == SCHEMA_VERSION:
                    if not self.text_index and exists[5] and not self.role_bound:
                        # pg_trgm was installed since the ledger was made
                        # without it: its owner builds the index now, once.
                        self.text_index = self._make_text_index(cur)
                    self._set_path()
                    return
                if self.role_bound:
                    raise admin_required(
                        f"the ledger at {self.location} is at schema version {version} and "
                        f"needs migrating to {SCHEMA_VERSION} by its owner, not {self.role}")
            script = resources.files("assay.ledger").joinpath("schema_postgres.sql").read_text("utf-8")
            for statement in _statements(script):
                cur.execute(statement)
            # The migrations before FUNCTIONS_FROM add columns the functions and
            # policies use; the ones from it on may call those functions (schema
            # 4 seals the existing versions with them).
            for statement in migration_steps(self.dialect, version, below=FUNCTIONS_FROM):
                cur.execute(statement)
            if 0 < version < 6:
                index_keys(cur, "%s")
            cur.execute(resources.files("assay.ledger").joinpath("function_postgres.sql")
                        .read_text("utf-8"))
            for statement in migration_steps(self.dialect, version, start=FUNCTIONS_FROM):
                cur.execute(statement)
            self.text_index = self._make_text_index(cur)
            _seed_meta(cur, "%s")
        self._set_path()

    def _make_text_index(self, cur: Any) -> bool:
        """Make find's trigram indexes (schema 7), installing ``pg_trgm`` if it is missing.

        False, with nothing changed, when the server cannot: the extension is
        not installed on it, or this role may not create it (a trusted
        extension needs the CREATE privilege on the database). The ledger
        then works without the index: find scans (``text_index_unavailable``).
        A new extension goes in the ``public`` schema, not the ledger's, so
        that dropping one ledger's schema never drops another's index.
        """
        try:
            with self._conn.transaction():  # a savepoint: a refusal undoes only this
                cur.execute("SELECT n.nspname FROM pg_extension e JOIN pg_namespace n "
                            "ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'")
                row = cur.fetchone()
                if row is None:
                    cur.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public")
                    namespace = "public"
                else:
                    namespace = str(row[0])
                opclass = '"' + namespace.replace('"', '""') + '".gin_trgm_ops'
                for name, column in _TEXT_INDEXES:
                    cur.execute(f"CREATE INDEX IF NOT EXISTS {name} ON record_versions "
                                f"USING gin (lower({column}) {opclass})")
        except (psycopg.errors.InsufficientPrivilege, psycopg.errors.FeatureNotSupported,
                psycopg.errors.UndefinedFile, psycopg.errors.UndefinedObject,
                psycopg.errors.InvalidSchemaName):
            return False
        return True

    def _set_path(self) -> None:
        self._conn.execute(f"SET search_path TO {self.schema}, pg_temp; "
                           "SET default_transaction_isolation TO 'read committed'")

    def _bound_locks(self) -> None:
        """Apply a changed ``busy_timeout_ms`` to the session (one statement, only when it changed)."""
        if self.busy_timeout_ms != self._lock_timeout_ms:
            self._conn.execute(f"SET lock_timeout = {max(1, int(self.busy_timeout_ms))}")
            self._lock_timeout_ms = self.busy_timeout_ms

    @contextmanager
    def _write_transaction(self) -> Iterator[Any]:
        try:
            self._bound_locks()
            with self._conn.transaction():
                # The shared logic's first statement takes the write lock
                # (write_lock), which serialises every write.
                yield self._conn.cursor()
        except psycopg.Error as exc:
            # The transaction was rolled back (or the connection is gone with
            # it): nothing of the write is committed.
            raise _unavailable(exc) from None

    @contextmanager
    def _read_transaction(self) -> Iterator[Any]:
        try:
            self._bound_locks()
            with self._conn.transaction():
                cur = self._conn.cursor()
                cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                yield cur
        except psycopg.Error as exc:
            raise _unavailable(exc) from None

    def _put_prepared(self, p: PreparedWrite, basis: WriteBasis | None) -> Receipt:
        """One write in one round trip through the ``assay_put`` server function.

        Batches (:meth:`put_many`) go through ``assay_put_many`` (see
        :meth:`_commit`); the conformance suite runs every rule through both.
        """
        w = p.write
        try:
            self._bound_locks()
            row = self._writes.execute(
                "SELECT * FROM assay_put(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
                "%s::bigint, %s, %s, %s, %s::bigint, %s, %s)",
                (w.id, p.kind, w.scope, p.data_text, p.data_sha256, w.status, w.superseded_by,
                 p.links_text, w.audience, p.sources_text, w.origin, w.request_id, p.body_sha256,
                 w.expect_revision, now_rfc3339(),
                 basis.epoch if basis else None,
                 json.dumps(dict(basis.records)) if basis else None,
                 basis.ledger_revision if basis else 0, self.principal or "",
                 json.dumps(p.keys) if p.keys else None),
            ).fetchone()
        except psycopg.Error as exc:
            raise _conflict(exc, w) from None
        assert row is not None  # the function always returns one row or raises
        return Receipt(w.id, int(row[0]), int(row[1]), row[3], w.request_id, bool(row[2]))

    def _commit(self, prepared: list[PreparedWrite], basis: WriteBasis | None) -> list[Receipt]:
        """A batch in one round trip through the ``assay_put_many`` server function.

        It keeps the rules and receipts of the shared path (see
        :meth:`SqlLedger._commit`); the conformance suite holds both to the
        same behaviour.
        """
        if len(prepared) == 1:
            return [self._put_prepared(prepared[0], basis)]
        writes = [p.write for p in prepared]
        # The optional fields go as NULL arrays when no write has them.
        superseded_by = [w.superseded_by for w in writes]
        request_ids = [w.request_id for w in writes]
        expect = [w.expect_revision for w in writes]
        params = (
            [w.id for w in writes], [p.kind for p in prepared], [w.scope for w in writes],
            [p.data_text for p in prepared], [p.data_sha256 for p in prepared],
            [w.status for w in writes],
            superseded_by if superseded_by.count(None) < len(writes) else None,
            [p.links_text for p in prepared], [w.audience for w in writes],
            [p.sources_text for p in prepared], [w.origin for w in writes],
            *((request_ids, [p.body_sha256 for p in prepared])
              if request_ids.count(None) < len(writes) else (None, None)),
            expect if expect.count(None) < len(writes) else None,
            now_rfc3339(), basis.epoch if basis else None,
            json.dumps(dict(basis.records)) if basis else None,
            basis.ledger_revision if basis else 0, self.principal or "",
            [json.dumps(p.keys) if p.keys else None for p in prepared]
            if any(p.keys for p in prepared) else None)
        statement = _PUT_MANY
        try:
            self._bound_locks()
            try:
                rows = self._writes.execute(statement, params).fetchall()
            except psycopg.errors.UndefinedFunction:
                # A ledger made before batches had their function: add it, once.
                self._install_functions()
                rows = self._writes.execute(statement, params).fetchall()
        except psycopg.Error as exc:
            raise _conflict(exc, prepared[0].write, batch=True) from None
        receipts: list[Receipt | None] = [None] * len(prepared)
        for index, revision, ledger_revision, replayed, data_sha256 in rows:
            w = prepared[index].write
            receipts[index] = Receipt(w.id, int(revision), int(ledger_revision), data_sha256,
                                      w.request_id, bool(replayed))
        return [r for r in receipts if r is not None]

    def _install_functions(self) -> None:
        with self._conn.transaction():
            cur = self._conn.cursor()
            cur.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            cur.execute(resources.files("assay.ledger").joinpath("function_postgres.sql")
                        .read_text("utf-8"))

    def as_principal(self, principal: str | None) -> PostgresStore:
        """Another handle on this ledger, reading and writing as ``principal``."""
        return PostgresStore(self._url, principal=principal, create=self._create)

    def roles(self) -> dict[str, Any]:
        """The roles and privileges of this ledger, and where this session stands (as data)."""
        from assay.ledger.roles import AGENT_ROLE, REVIEWER_ROLE, describe

        out = describe(self.schema)
        try:
            rows = self._conn.execute(
                "SELECT g.rolname, m.rolname FROM pg_roles g LEFT JOIN pg_auth_members a "
                "ON a.roleid = g.oid LEFT JOIN pg_roles m ON m.oid = a.member "
                "WHERE g.rolname IN (%s, %s) ORDER BY g.rolname, m.rolname COLLATE \"C\"",
                (AGENT_ROLE, REVIEWER_ROLE)).fetchall()
            reviewer = self._conn.execute("SELECT assay_is_reviewer()").fetchone()
        except psycopg.Error as exc:
            raise _unavailable(exc) from None
        groups = out["groups"]
        assert isinstance(groups, dict)
        for name, group in groups.items():
            group["exists"] = any(row[0] == name for row in rows)
            group["members"] = [row[1] for row in rows if row[0] == name and row[1] is not None]
        out["session"] = {"role": self.role, "owner": not self.role_bound,
                          "reviewer": bool(reviewer and reviewer[0]) or not self.role_bound}
        return out

    def grant(self, role: str, group: str) -> list[str]:
        """Make ``role`` a member of ``group``'s role (agent or reviewer), setting the groups up.

        Only the ledger's owner may (``ledger_admin_required``); ``role`` must
        be an existing role (``role_not_found``). Idempotent: the statements
        run are returned, and running them again changes nothing.
        """
        from assay.ledger.roles import grant_statements

        if self.role_bound:
            raise admin_required(f"{self.role} does not own the ledger at {self.location}: "
                                 "only its owner grants roles")
        try:
            found = self._conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s",
                                       (role,)).fetchone()
            if found is None:
                raise AssayError(f"no database role {role!r} on this server", code="role_not_found",
                                 pointer="/role", details={"role": role},
                                 action="Create the login role first (CREATE ROLE NAME LOGIN), "
                                        "then grant it.")
            statements = grant_statements(self.schema, role, group)
            with self._conn.transaction():
                for statement in statements:
                    self._conn.execute(statement)
        except psycopg.Error as exc:
            raise _unavailable(exc) from None
        return statements

    def close(self) -> None:
        self._conn.close()


# Every array in binary (%b): no text escaping of the data on either side.
_PUT_MANY = ("SELECT * FROM assay_put_many(%b::text[], %b::text[], %b::text[], %b::text[], "
             "%b::text[], %b::text[], %b::text[], %b::text[], %b::text[], %b::text[], %b::text[], "
             "%b::text[], %b::text[], %b::bigint[], %s, %s, %s, %s::bigint, %s, %b::text[])")


def principal_not_role(principal: str, role: str) -> AssayError:
    """The error for a principal other than the role the session authenticated as."""
    return AssayError(
        f"on this PostgreSQL ledger the principal is the role the connection authenticated as "
        f"({role}), not {principal}", code="principal_not_role", pointer="/principal",
        details={"principal": principal, "role": role},
        action=f"Omit --as and ASSAY_PRINCIPAL (or name {role}); to act as another principal, "
               "connect as its role.")


def admin_required(message: str) -> AssayError:
    return AssayError(message, code="ledger_admin_required",
                      action="Run it connected as the ledger's owner (the role that created the "
                             "ledger's schema) or a superuser.")


def _unavailable(exc: psycopg.Error) -> AssayError:
    """A server or connection failure as an error with a stable code (never a traceback).

    Only a failure of the connection or the server itself is retryable: a
    statement the server refuses for what it holds would be refused again.
    """
    detail = str(exc).strip()
    if isinstance(exc, psycopg.DataError):
        # A value the server cannot hold (e.g. NUL in a read filter, a number
        # out of range): the input is at fault, not the server.
        return AssayError(f"the ledger refused a value: {detail}", code="invalid_input",
                          action="Remove control characters from the ids, filters and fields, "
                                 "and keep numbers within range.")
    if isinstance(exc, psycopg.errors.InsufficientPrivilege):
        return admin_required(f"the ledger refused the statement: {detail}")
    if isinstance(exc, psycopg.errors.DiskFull):
        return UnavailableError(f"the ledger's disk is full: {detail}",
                                code="ledger_disk_full", action="Free disk space, then retry the write.")
    if isinstance(exc, (psycopg.errors.SerializationFailure, psycopg.errors.DeadlockDetected,
                        psycopg.errors.LockNotAvailable)):
        return UnavailableError(f"the ledger is busy: {detail}", code="ledger_busy")
    if isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError)):
        return UnavailableError(f"the ledger connection failed: {detail}",
                                code="ledger_unavailable",
                                action="Check the PostgreSQL server, then retry the call (a retry "
                                       "with the same --request-id never writes twice).")
    return UnavailableError(f"the ledger refused the statement: {detail}", code="ledger_error",
                            retryable=False,
                            action="Check the ledger's schema and the server log; retrying the "
                                   "same call will fail the same way.")


def _conflict(exc: psycopg.Error, write: Write, *, batch: bool = False) -> AssayError:
    """Translate the server function's conflict signals into assay's errors."""
    state = getattr(exc, "sqlstate", None)
    if state not in ("AS001", "AS002", "AS003", "AS010", "AS011", "AS012"):
        return _unavailable(exc)
    info = json.loads(exc.diag.message_primary or "{}")
    where = f"/writes/{info['index']}" if batch and info.get("index") is not None else ""
    if state == "AS010":
        return principal_not_role(info["principal"], info["role"])
    if state == "AS011":
        return AssayError(
            f"{info['role']} may write only project records or its own private:{info['role']} "
            f"records, not {info['audience']}", code="audience_not_allowed",
            pointer=f"{where}/audience",
            action=f"Use --audience project or --audience private:{info['role']}.")
    if state == "AS012":
        status = "" if info["status"] == "current" else f" (to {info['status']})"
        return AssayError(
            f"{info['role']} is not a member of assay_reviewer: it cannot write {info['id']}"
            f"{status}, a reviewer's record", code="reviewer_required", pointer="/principal",
            details={"role": info["role"], "id": info["id"], "kind": info["kind"],
                     **({"index": info["index"]} if where else {})},
            action="Ask a reviewer (a member of assay_reviewer) to run it, connected as their "
                   "own role.")
    if state == "AS001":
        return RequestConflict(
            f"request id {info['request_id']!r} was already used with a different body",
            details=info, action="Use a new request id for a new write.")
    if state == "AS003":
        return EpochConflict("the write basis was read from another ledger", details=info,
                             action="Read again from this ledger before writing.")
    record_id, current = info["id"], int(info["current_revision"])
    if info["basis"]:
        escaped = record_id.replace("~", "~0").replace("/", "~1")
        return RevisionConflict(
            f"{record_id} moved from revision {info['expected']} to {current} since it was read",
            record_id=record_id, current_revision=current,
            pointer=f"/write_basis/records/{escaped}")
    index = info.get("index")
    return RevisionConflict(f"{record_id} is at revision {current}, not {info['expected']}",
                            record_id=record_id, current_revision=current,
                            pointer=f"/writes/{index}/expect_revision" if batch and index is not None
                            else "/expect_revision")
