"""Property: what one principal reads never depends on another principal's private writes.

Two ledgers replay the same random sequence of writes by alice and bob, one of
them without alice's private writes. Every read bob makes (current version,
each revision, history, find, counts) is byte-identical in both, once the
ledger-wide revision counter and the write times are masked. On PostgreSQL
the property also runs with alice and bob as two real login roles, each
connected as itself; then bob's raw SQL reads of every private table are
compared too (row-level security).
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay.canonical import canonical_text
from assay.errors import AssayError
from assay.ops import Invocation, call
from assay_testing import examples, make_project
from pg_roles_testing import login_roles, role_url

IDS = ["knowledge:a", "knowledge:b", "note:c"]

writes = st.lists(
    st.tuples(
        st.sampled_from(["alice", "bob"]),
        st.sampled_from(IDS),
        st.booleans(),  # private to the writer
        st.integers(min_value=0, max_value=3),  # data
        st.sampled_from(["current", "retired"]),
        st.sampled_from([None, 0, 1, 2]),  # expect_revision
    ),
    max_size=12,
)


_OPEN: dict[tuple[Path, str], Invocation] = {}
# With login roles: each principal's role, and each project's ledger URL as the owner.
_ROLES: dict[str, str] = {}
_URLS: dict[Path, str] = {}
_NEVER = ("principal_not_role", "audience_not_allowed", "reviewer_required", "ledger_error",
          "ledger_admin_required")


def _who(principal: str) -> str:
    """The principal's name in the ledger: its login role when the roles run."""
    return _ROLES.get(principal, principal)


def _invocation(root: Path, principal: str) -> Invocation:
    if principal in _ROLES:
        # Connected as its own role, naming no principal: the role is the principal.
        return Invocation(cwd=str(root), db=role_url(_URLS[root], _ROLES[principal]))
    return Invocation(cwd=str(root), principal=principal)


def _answer(root: Path, principal: str, name: str, args: dict[str, Any]) -> str:
    """One call's whole answer (envelope or error) as canonical text, with ledger-wide facts masked."""
    inv = _OPEN.get((root, principal)) or _OPEN.setdefault((root, principal),
                                                           _invocation(root, principal))
    try:
        envelope, code = call(name, args, inv)
        text = canonical_text({"code": code, "envelope": envelope})
    except AssayError as exc:
        text = canonical_text({"error": exc.to_dict(), "exit": exc.exit_code})
    text = re.sub(r'"ledger_revision":\d+', '"ledger_revision":0', text)
    return re.sub(r'"created_at":"[^"]*"', '"created_at":""', text)


def _replay(root: Path, sequence: list[tuple[Any, ...]], *, skip_alice_private: bool) -> None:
    for who, record_id, private, value, status, expect in sequence:
        if skip_alice_private and who == "alice" and private:
            continue
        args: dict[str, Any] = {"id": record_id, "data": {"v": value, "by": _who(who)},
                                "status": status}
        if private:
            args["audience"] = f"private:{_who(who)}"
        if expect is not None:
            args["expect_revision"] = expect
        answer = _answer(root, who, "put", args)  # a refused write is part of the story too
        # ...but never for who the writer is: each role may write as itself.
        assert not any(f'"code":"{code}"' in answer for code in _NEVER), answer


def _bob_reads(root: Path) -> list[str]:
    out = [_answer(root, "bob", "find", {}), _answer(root, "bob", "ledger.info", {})]
    for record_id in IDS:
        out.append(_answer(root, "bob", "get", {"id": record_id}))
        out.append(_answer(root, "bob", "get", {"id": record_id, "history": True}))
        for revision in (1, 2, 3):
            out.append(_answer(root, "bob", "get", {"id": record_id, "revision": revision}))
        out.append(_answer(root, "bob", "find", {"query": record_id.partition(":")[2]}))
    if "bob" in _ROLES:
        out.extend(_raw_reads(root))
    return [re.sub(r'"(epoch|location)":"[^"]+"', r'"\1":""', text) for text in out]


def _raw_reads(root: Path) -> list[str]:
    """Every row of every private table as bob's role selects it with raw SQL (revisions masked)."""
    import psycopg

    url = role_url(_URLS[root], _ROLES["bob"])
    with psycopg.connect(url.partition("?")[0], autocommit=True) as conn:
        conn.execute(f"SET search_path TO {url.rpartition('assay_schema=')[2]}")
        return [canonical_text([[str(v) for v in row] for row in conn.execute(sql).fetchall()])
                for sql in (
                    ("SELECT id, revision, audience, data, status, written_by FROM record_versions "
                    "ORDER BY id, audience, revision"),
                    "SELECT id, audience, rel, target FROM record_links ORDER BY 1, 2, 3, 4",
                    ("SELECT principal, request_id, id, audience, revision FROM requests "
                    "ORDER BY 1, 2"))]


def _check(sequence: list[tuple[Any, ...]], dbs: tuple[str | None, str | None], *,
           grant: bool = False) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        with_private = make_project(Path(tmp) / "with", db=dbs[0])
        without = make_project(Path(tmp) / "without", db=dbs[1])
        for project in (with_private, without):
            if project.db:
                _URLS[project.root] = project.db
                (project.root / "assay.toml").write_text(
                    f'[project]\nname = "demo"\n[ledger]\nurl = "{project.db}"\n', encoding="utf-8")
        try:
            if grant:
                _grant(with_private.root)
                _grant(without.root)
            _replay(with_private.root, sequence, skip_alice_private=False)
            _replay(without.root, sequence, skip_alice_private=True)
            assert _bob_reads(with_private.root) == _bob_reads(without.root)
        finally:
            while _OPEN:
                _OPEN.popitem()[1].close()


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sequence=writes)
def test_privacy_property_reads_ignore_others_private_writes(sequence: list[tuple[Any, ...]]) -> None:
    """For random writes by two principals with random audiences, bob's every read is unchanged by alice's private writes."""
    _check(sequence, (None, None))


@pytest.mark.postgres
def test_privacy_property_reads_ignore_others_private_writes_on_postgresql(pg_url: str) -> None:
    """The same property on PostgreSQL (two schemas, one per replay)."""
    other = pg_url.replace("assay_schema=", "assay_schema=w")

    @settings(max_examples=examples(20), deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(sequence=writes)
    def run(sequence: list[tuple[Any, ...]]) -> None:
        _drop(pg_url, other)
        _check(sequence, (pg_url, other))

    try:
        run()
    finally:
        _drop(pg_url, other)


@pytest.mark.postgres
def test_privacy_property_holds_for_two_real_login_roles(pg_url: str) -> None:
    """The same property with alice and bob as login roles, raw SQL reads of bob's role included."""
    other = pg_url.replace("assay_schema=", "assay_schema=w")

    @settings(max_examples=examples(15), deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(sequence=writes)
    def run(sequence: list[tuple[Any, ...]]) -> None:
        _drop(pg_url, other)
        _check(sequence, (pg_url, other), grant=True)

    with login_roles("alice", "bob") as roles:
        _ROLES.update(roles)
        try:
            run()
        finally:
            _ROLES.clear()
            _drop(pg_url, other)


def _grant(root: Path) -> None:
    """Make both roles agents of the project's ledger (as its owner)."""
    inv = Invocation(cwd=str(root))
    try:
        for role in _ROLES.values():
            call("ledger.grant", {"role": role, "agent": True}, inv)
    finally:
        inv.close()


def _drop(*urls: str) -> None:
    import psycopg

    from assay_testing import PG_URL

    with psycopg.connect(PG_URL, autocommit=True) as conn:
        for url in urls:
            conn.execute(f"DROP SCHEMA IF EXISTS {url.rpartition('assay_schema=')[2]} CASCADE")
