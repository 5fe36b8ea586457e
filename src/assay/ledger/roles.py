"""PostgreSQL roles: who may read and write what, as data, and the statements that set it up.

On a PostgreSQL ledger the principal is the database role a session
authenticated as (``session_user``). Two group roles (``NOLOGIN``) carry the
privileges; each person's or agent's login role is made a member of one:

- ``assay_agent``: reads the ledger's tables (through row-level security:
  the project partition, its own private partition and its own request ids)
  and writes only through the checked write functions;
- ``assay_reviewer``: the same, and the reviewer-only writes
  (:data:`REVIEWER_KINDS`, retiring or superseding :data:`GATE_KINDS`,
  reviewed gate pins).

The ledger's owner (the role that created the schema, or a superuser) is
outside both: it migrates, grants, and acts as any principal.

This module holds the lists the server-side checks and the grants are made
from (function_postgres.sql spells the kinds again; a test holds the two
equal), and the statements :func:`grant_statements` runs. It imports only
the base modules; the PostgreSQL backend runs the statements.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "AGENT_ROLE",
    "GATE_KINDS",
    "GROUPS",
    "PRIVATE_TABLES",
    "READ_TABLES",
    "REVIEWER_KINDS",
    "REVIEWER_ROLE",
    "WRITE_FUNCTIONS",
    "describe",
    "grant_statements",
    "group_statements",
]

AGENT_ROLE = "assay_agent"
REVIEWER_ROLE = "assay_reviewer"
GROUPS: Mapping[str, str] = {"agent": AGENT_ROLE, "reviewer": REVIEWER_ROLE}

# Kinds of which every version needs a reviewer: approvals of changed checks,
# gate bindings, and attestation keys. A gate pin needs one too unless it is
# an unreviewed first-use pin (see assay_check_write in function_postgres.sql).
REVIEWER_KINDS = ("gate-approval", "gate-binding", "attestation-key")
# Kinds whose versions only a reviewer retires or supersedes.
GATE_KINDS = ("gate-approval", "gate-binding", "gate-pin", "gate-session", "shell-claim",
              "attestation-key")

# The functions every write of another role goes through (SECURITY DEFINER),
# with their argument types as PostgreSQL names them in GRANT.
WRITE_FUNCTIONS = (
    ("assay_put(text, text, text, text, text, text, text, text, text, text, text, text, text, "
    "bigint, text, text, text, bigint, text, text)"),
    ("assay_put_many(text[], text[], text[], text[], text[], text[], text[], text[], text[], "
    "text[], text[], text[], text[], bigint[], text, text, text, bigint, text, text[])"),
    "assay_write_lock()",
)
# Tables every member role reads in full.
READ_TABLES = ("ledger_meta",)
# Tables under row-level security, with the column their policy reads: a role
# sees the rows whose audience is 'project' or 'private:<its role>', and the
# request ids of its role.
PRIVATE_TABLES: Mapping[str, str] = {
    "record_versions": "audience",
    "record_links": "audience",
    "record_keys": "audience",
    "requests": "principal",
}


def _quote(name: str) -> str:
    """``name`` as a quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def group_statements(schema: str) -> list[str]:
    """The statements that give both group roles their privileges on ``schema`` (idempotent).

    The group roles themselves are made first (:func:`grant_statements`). Every
    table privilege other than SELECT is revoked from them and from PUBLIC,
    and the write functions are executable by the two groups alone.
    """
    groups = f"{AGENT_ROLE}, {REVIEWER_ROLE}"
    tables = ", ".join(f"{schema}.{table}" for table in (*READ_TABLES, *PRIVATE_TABLES))
    out = [f"GRANT USAGE ON SCHEMA {schema} TO {groups}",
           f"REVOKE ALL ON {tables} FROM PUBLIC, {groups}",
           f"GRANT SELECT ON {tables} TO {groups}"]
    for function in WRITE_FUNCTIONS:
        out.append(f"REVOKE ALL ON FUNCTION {schema}.{function} FROM PUBLIC")
        out.append(f"GRANT EXECUTE ON FUNCTION {schema}.{function} TO {groups}")
    return out


# Makes each group role when missing; two sessions making one at once both succeed.
CREATE_GROUPS = tuple(
    f"DO $do$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{role}') THEN "
    f"CREATE ROLE {role} NOLOGIN; END IF; "
    "EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $do$"
    for role in (AGENT_ROLE, REVIEWER_ROLE))


def grant_statements(schema: str, role: str, group: str) -> list[str]:
    """Everything ``assay ledger grant`` runs: the groups, their privileges, the membership."""
    return [*CREATE_GROUPS, *group_statements(schema),
            f"GRANT {GROUPS[group]} TO {_quote(role)}"]


def describe(schema: str) -> dict[str, object]:
    """The roles and privileges of a ledger in ``schema``, as data (``assay ledger roles``)."""
    return {
        "schema": schema,
        "principal": "session_user",
        "owner": "the role owning the ledger's tables (or a superuser): migrates, grants, "
                 "acts as any principal, reads every partition",
        "groups": {
            AGENT_ROLE: {"login": False, "select": [*READ_TABLES, *PRIVATE_TABLES],
                         "execute": [f.partition("(")[0] for f in WRITE_FUNCTIONS],
                         "reviewer_writes": False},
            REVIEWER_ROLE: {"login": False, "select": [*READ_TABLES, *PRIVATE_TABLES],
                            "execute": [f.partition("(")[0] for f in WRITE_FUNCTIONS],
                            "reviewer_writes": True},
        },
        "row_level_security": {table: ("audience IN ('project', 'private:' || session_user)"
                                       if column == "audience" else "principal = session_user")
                               for table, column in PRIVATE_TABLES.items()},
        "reviewer_kinds": list(REVIEWER_KINDS),
        "gate_kinds": list(GATE_KINDS),
        "reviewer_pins": "a gate-pin version with reviewed other than false, or over one",
        "direct_writes": "none: INSERT, UPDATE, DELETE and TRUNCATE are revoked from both groups",
    }
