"""The cost of PostgreSQL roles on put and get: row-level security and the write functions' checks.

Measured on two ledgers in one run, holding the same records:

- *with roles*: the ledger as created, read and written by a login role in
  ``assay_agent`` (every read passes the row-level security policies, every
  write the checks of ``assay_writer`` and ``assay_check_write``), or by the
  owner (policies bypassed, the checks ending at the owner test);
- *without roles*: a second ledger where the owner has disabled row-level
  security and replaced ``assay_writer`` with one that answers "the owner"
  at once: the write path of a ledger before roles, plus one empty call.

Every handle acts as the same principal (the role's name), so both sides
probe the same partitions; puts and gets alternate with the baseline in
chunks (:func:`bench.bench_ledger._paired`). PostgreSQL only: without
``ASSAY_TEST_POSTGRES_URL`` (or ``ASSAY_BENCH_POSTGRES_URL``) there are no rows.
"""

from __future__ import annotations

import os
import uuid
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from assay.ledger import Write, open_store
from bench.bench_ledger import PAYLOAD, SCOPE, _paired, _written
from bench.harness import row


def _as_role(url: str, role: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=f"{role}@{parts.netloc.rpartition('@')[2]}"))


def _puts(store: Any, prefix: str) -> Any:
    def puts(items: range) -> None:
        for i in items:
            store.put(Write(id=f"knowledge:{prefix}{i}", data=PAYLOAD, scope=SCOPE))
    return puts


def _gets(store: Any, written: int) -> Any:
    def gets(items: range) -> None:
        with store.reader() as r:
            for i in items:
                r.get(f"knowledge:g{i % written}").data  # noqa: B018  # the read a caller makes
    return gets


def _rows(url: str, n: int) -> list[dict[str, Any]]:
    import psycopg

    tag = uuid.uuid4().hex[:10]
    role, with_roles, without = f"bench_{tag}_agent", f"bench_{tag}_r", f"bench_{tag}_n"
    sep = "&" if "?" in url else "?"
    admin = psycopg.connect(url, autocommit=True)
    admin.execute(f"CREATE ROLE {role} LOGIN")
    stores: list[Any] = []
    try:
        owner = open_store(f"{url}{sep}assay_schema={with_roles}", principal=role)
        plain = open_store(f"{url}{sep}assay_schema={without}", principal=role)
        stores += [owner, plain]
        owner.grant(role, "agent")  # type: ignore[attr-defined]
        admin.execute(f"SET search_path TO {without}")
        admin.execute("CREATE OR REPLACE FUNCTION assay_writer(p_principal text) RETURNS text "
                      "LANGUAGE sql STABLE AS 'SELECT NULL::text'")
        for table in ("record_versions", "record_links", "requests"):
            admin.execute(f"ALTER TABLE {table} DISABLE ROW LEVEL SECURITY")
        agent = open_store(_as_role(f"{url}{sep}assay_schema={with_roles}", role), principal=role)
        stores.append(agent)
        written = _written(n)
        for store in (owner, plain):
            for start in range(0, written, 500):
                store.put_many([Write(id=f"knowledge:g{i}", data=PAYLOAD, scope=SCOPE)
                                for i in range(start, min(written, start + 500))])
        base = "the same calls on a ledger without roles (no row-level security, no checks)"
        put_agent, put_plain, put_spread = _paired(n, _puts(plain, "b"), _puts(agent, "a"))
        put_owner, put_plain2, owner_spread = _paired(n, _puts(plain, "c"), _puts(owner, "o"))
        # Without waiting for the disk, what is left is the statements' own cost.
        for store in (agent, plain):
            store._conn.execute("SET synchronous_commit = off")
        cpu_agent, cpu_plain, cpu_spread = _paired(n, _puts(plain, "d"), _puts(agent, "e"))
        # Reads are cheap: ten times as many, so that each group holds many chunks.
        get_agent, get_plain, get_spread = _paired(10 * n, _gets(plain, written),
                                                   _gets(agent, written), chunk=100)
        get_owner, get_plain2, gown_spread = _paired(10 * n, _gets(plain, written),
                                                     _gets(owner, written), chunk=100)
        return [
            row("postgresql single put as an agent role (row-level security, checked writes)",
                assay=put_agent, baseline=put_plain, baseline_name=base, unit="writes/s",
                spread=put_spread, higher_is_better=True),
            row("postgresql single put as an agent role, synchronous_commit=off on both sides",
                assay=cpu_agent, baseline=cpu_plain, baseline_name=base, unit="writes/s",
                spread=cpu_spread, higher_is_better=True),
            row("postgresql single put as the ledger's owner (checks end at the owner test)",
                assay=put_owner, baseline=put_plain2, baseline_name=base, unit="writes/s",
                spread=owner_spread, higher_is_better=True),
            row("postgresql get by id as an agent role (row-level security)",
                assay=get_agent, baseline=get_plain, baseline_name=base, unit="reads/s",
                spread=get_spread, higher_is_better=True),
            row("postgresql get by id as the ledger's owner (policies bypassed)",
                assay=get_owner, baseline=get_plain2, baseline_name=base, unit="reads/s",
                spread=gown_spread, higher_is_better=True),
        ]
    finally:
        for store in stores:
            store.close()
        admin.execute("RESET search_path")
        for schema in (with_roles, without):
            admin.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        admin.execute(f"DROP ROLE IF EXISTS {role}")
        admin.close()


def run(quick: bool = False) -> list[dict[str, Any]]:
    url = os.environ.get("ASSAY_TEST_POSTGRES_URL") or os.environ.get("ASSAY_BENCH_POSTGRES_URL")
    if not url:
        return []
    return _rows(url, 300 if quick else 3000)
