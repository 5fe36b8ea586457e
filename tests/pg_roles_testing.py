"""Real PostgreSQL login roles for the tests, made and dropped by each test.

Role names are unique per call (the server is shared by parallel workers);
the roles are dropped even when the test fails. The group roles
``assay_agent`` and ``assay_reviewer`` are server-wide and shared: ``assay
ledger grant`` makes them once and every test only adds members, so no test
depends on another's.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

from assay_testing import PG_URL


def role_url(url: str, role: str) -> str:
    """``url`` (a ledger URL) connecting as ``role`` instead of its user (trust authentication)."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{role}@{host}"))


def owner_sql(statement: str, *, schema: str | None = None) -> list[tuple[object, ...]]:
    """Run one statement as the server's owner role (the test URL's user)."""
    import psycopg

    assert PG_URL
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        if schema:
            conn.execute(f"SET search_path TO {schema}")
        cur = conn.execute(statement)
        return list(cur.fetchall()) if cur.description else []


@contextmanager
def login_roles(*names: str) -> Iterator[dict[str, str]]:
    """Fresh login roles, one per name (``{name: role}``), dropped afterwards whatever happens."""
    tag = uuid.uuid4().hex[:10]
    roles = {name: f"ar_{tag}_{name}" for name in names}
    try:
        for role in roles.values():
            owner_sql(f"CREATE ROLE {role} LOGIN")
        yield roles
    finally:
        for role in roles.values():
            owner_sql(f"DROP ROLE IF EXISTS {role}")
