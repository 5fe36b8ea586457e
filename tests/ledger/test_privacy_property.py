"""Property: what one principal reads never depends on another principal's private writes.

Two ledgers replay the same random sequence of writes by alice and bob, one of
them without alice's private writes. Every read bob makes (current version,
each revision, history, find, counts) is byte-identical in both, once the
ledger-wide revision counter and the write times are masked.
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


def _answer(root: Path, principal: str, name: str, args: dict[str, Any]) -> str:
    """One call's whole answer (envelope or error) as canonical text, with ledger-wide facts masked."""
    inv = _OPEN.setdefault((root, principal), Invocation(cwd=str(root), principal=principal))
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
        args: dict[str, Any] = {"id": record_id, "data": {"v": value, "by": who}, "status": status}
        if private:
            args["audience"] = f"private:{who}"
        if expect is not None:
            args["expect_revision"] = expect
        _answer(root, who, "put", args)  # a refused write is part of the story too


def _bob_reads(root: Path) -> list[str]:
    out = [_answer(root, "bob", "find", {}), _answer(root, "bob", "ledger.info", {})]
    for record_id in IDS:
        out.append(_answer(root, "bob", "get", {"id": record_id}))
        out.append(_answer(root, "bob", "get", {"id": record_id, "history": True}))
        for revision in (1, 2, 3):
            out.append(_answer(root, "bob", "get", {"id": record_id, "revision": revision}))
        out.append(_answer(root, "bob", "find", {"query": record_id.partition(":")[2]}))
    return [re.sub(r'"(epoch|location)":"[^"]+"', r'"\1":""', text) for text in out]


def _check(sequence: list[tuple[Any, ...]], dbs: tuple[str | None, str | None]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        with_private = make_project(Path(tmp) / "with", db=dbs[0])
        without = make_project(Path(tmp) / "without", db=dbs[1])
        for project in (with_private, without):
            if project.db:
                (project.root / "assay.toml").write_text(
                    f'[project]\nname = "demo"\n[ledger]\nurl = "{project.db}"\n', encoding="utf-8")
        try:
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


def _drop(*urls: str) -> None:
    import psycopg

    from assay_testing import PG_URL

    with psycopg.connect(PG_URL, autocommit=True) as conn:
        for url in urls:
            conn.execute(f"DROP SCHEMA IF EXISTS {url.rpartition('assay_schema=')[2]} CASCADE")
