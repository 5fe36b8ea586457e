"""Schema 6: the key index (record_keys) and the migration of a ledger the previous release wrote."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assay.errors import AssayError
from assay.ledger import Write, open_store
from assay.ledger.record import DATA_KEYS, INDEX_TABLES, NOT_A_STRING, data_keys, key_value
from assay.ledger.store import SCHEMA_VERSION
from assay_testing import package_at

SCOPE = "project:demo"
ROOT = Path(__file__).resolve().parents[2]
# The release whose ledgers are at schema 3 (the one before the key index).
RELEASE = "89c7b35679aad1fdc734694ad5fbc1121b480fdd"
LONG = "g" * 300

# What the previous release writes, then reads back the way its agent-path
# reads did (a text search for the field), as one JSON document on stdout.
_WRITER = r"""
import json, sys
from assay.ledger import Link, Write, open_store

url = sys.argv[1]
S = "project:demo"
store = open_store(url)
puts = [
    Write(id="knowledge:orient", data={"context_role": "orientation", "text": "read me"}, scope=S),
    Write(id="knowledge:not-orient", data={"note": '"context_role":"orientation"'}, scope=S),
    Write(id="knowledge:intent-a", data={"intent": {"brief": "b"}}, scope=S),
    Write(id="knowledge:intent-null", data={"intent": None}, scope=S),
    Write(id="todo:t1", data={"goal_id": "goal-1", "title": "one"}, scope=S),
    Write(id="todo:t2", data={"goal_id": "goal-2", "title": "two"}, scope=S),
    Write(id="todo:long", data={"goal_id": "g" * 300, "title": "long"}, scope=S),
    Write(id="todo:private", data={"goal_id": "goal-1"}, scope=S, audience="private:alice"),
    Write(id="decision-event:e1", data={"key": "route", "choice": "a"}, scope=S),
    Write(id="loop:l1", data={"schema": "loop-head/v1"}, scope=S),
    Write(id="loop:l1:gate:g1", data={"round": 1}, scope=S),
    Write(id="gate-session:s1", data={"gave_up": {"intents": ["knowledge:intent-a"]}}, scope=S),
    Write(id="note:plain", data=[1, 2, 3], scope=S),
]
for w in puts:
    store.put(w)
store.put(Write(id="todo:t1", data={"goal_id": "goal-2", "title": "moved"}, scope=S))
store.put_many([Write(id="todo:t3", data={"goal_id": "goal-1"}, scope=S),
                Write(id="knowledge:orient", data={"context_role": "orientation", "v": 2},
                      scope=S, links=(Link("relates-to", "todo:t3"),))])
out = {}
alice = store.as_principal("alice")
for name, handle in (("project", store), ("alice", alice)):
    with handle.reader() as r:
        ids = [x.id for x in r.find(limit=1000)]
        out[name] = {
            "ids": ids,
            "get": {i: r.get(i).to_dict() for i in ids},
            "history": {i: [v.to_dict() for v in r.history(i)] for i in ids},
        }
    out[name]["info"] = handle.info().to_dict()
alice.close()
store.close()
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def release_src(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package of the previous release, checked out of this repository's history."""
    return package_at(RELEASE, tmp_path_factory)


def _written_by_release(release_src: Path, url: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(release_src)}
    done = subprocess.run([sys.executable, "-c", _WRITER, url], capture_output=True, text=True,
                          env=env, check=True)
    return dict(json.loads(done.stdout))


def _schema(url: str) -> int:
    store = open_store(url, create=False)
    try:
        return store.info().schema_version
    finally:
        store.close()


def test_ledger_of_the_previous_release_migrates_in_place(release_src: Path, ledger_url: str,
                                                          tmp_path: Path) -> None:
    """A schema-3 ledger written by the previous release opens at the current schema and
    answers every get, history, find and info exactly as the release did."""
    if not ledger_url.startswith("postgres"):
        ledger_url = str(tmp_path / "release.db")
    before = _written_by_release(release_src, ledger_url)
    assert before["project"]["info"]["schema_version"] == 3
    store = open_store(ledger_url)
    alice = store.as_principal("alice")
    try:
        for name, handle in (("project", store), ("alice", alice)):
            with handle.reader() as r:
                ids = [x.id for x in r.find(limit=1000)]
                assert ids == before[name]["ids"]
                assert {i: r.get(i).to_dict() for i in ids} == before[name]["get"]
                assert {i: [v.to_dict() for v in r.history(i)]
                        for i in ids} == before[name]["history"]
            info = handle.info().to_dict()
            assert info == {**before[name]["info"], "schema_version": SCHEMA_VERSION}
        assert _schema(ledger_url) == SCHEMA_VERSION
    finally:
        alice.close()
        store.close()


def _found(handle: Any, **filters: Any) -> list[str]:
    with handle.reader() as r:
        return [x.id for x in r.find(limit=1000, **filters)]


def test_migrated_ledger_answers_key_reads_like_a_new_one(release_src: Path, ledger_url: str,
                                                          tmp_path: Path) -> None:
    """After the migration, every indexed-field read finds what the same writes find on a
    ledger created at the current schema (current versions only, partitions kept)."""
    fresh_url = ledger_url
    if not ledger_url.startswith("postgres"):
        ledger_url = str(tmp_path / "release.db")
        fresh_url = str(tmp_path / "fresh.db")
    _written_by_release(release_src, ledger_url)
    migrated = open_store(ledger_url)
    reads: list[dict[str, Any]] = [
        {"data_field": ("context_role", "orientation")},
        {"data_field": ("intent", None), "kind": "knowledge"},
        {"data_field": ("goal_id", "goal-1"), "kind": "todo"},
        {"data_field": ("goal_id", "goal-2"), "kind": "todo"},
        {"data_field": ("goal_id", LONG)},
        {"data_field": ("key", "route")},
        {"data_field": ("schema", "loop-head/v1"), "kind": "loop"},
        {"data_field": ("gave_up", None)},
        {"prefix": "loop:l1:gate:"},
    ]
    try:
        answers = {json.dumps(read): _found(migrated, **read) for read in reads}
        alice = migrated.as_principal("alice")
        try:
            assert _found(alice, data_field=("goal_id", "goal-1")) == ["todo:private", "todo:t3"]
        finally:
            alice.close()
    finally:
        migrated.close()
    assert answers == {
        json.dumps(reads[0]): ["knowledge:orient"],
        json.dumps(reads[1]): ["knowledge:intent-a", "knowledge:intent-null"],
        json.dumps(reads[2]): ["todo:t3"],
        json.dumps(reads[3]): ["todo:t1", "todo:t2"],
        json.dumps(reads[4]): ["todo:long"],
        json.dumps(reads[5]): ["decision-event:e1"],
        json.dumps(reads[6]): ["loop:l1"],
        json.dumps(reads[7]): ["gate-session:s1"],
        json.dumps(reads[8]): ["loop:l1:gate:g1"],
    }
    if fresh_url == ledger_url:
        return  # one PostgreSQL schema per test: the fresh-ledger side runs on SQLite
    subprocess.run([sys.executable, "-c", _WRITER, fresh_url], check=True, capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    fresh = open_store(fresh_url)
    try:
        assert {json.dumps(read): _found(fresh, **read) for read in reads} == answers
    finally:
        fresh.close()


def test_key_index_follows_the_current_version(store: Any) -> None:
    """A new version replaces its record's key rows: a todo moved to another goal leaves the first."""
    store.put(Write(id="todo:a", data={"goal_id": "g1"}, scope=SCOPE))
    store.put(Write(id="todo:a", data={"goal_id": "g2"}, scope=SCOPE))
    store.put(Write(id="todo:b", data={"title": "no goal"}, scope=SCOPE))
    store.put(Write(id="todo:b", data={"goal_id": "g1"}, scope=SCOPE))
    store.put_many([Write(id="todo:a", data={"goal_id": "g1"}, scope=SCOPE),
                    Write(id="todo:c", data={"goal_id": "g2"}, scope=SCOPE)])
    assert _found(store, data_field=("goal_id", "g1")) == ["todo:a", "todo:b"]
    assert _found(store, data_field=("goal_id", "g2")) == ["todo:c"]
    store.put_many([Write(id="todo:a", data={}, scope=SCOPE),
                    Write(id="todo:b", data={}, scope=SCOPE)])
    assert _found(store, data_field=("goal_id", None)) == ["todo:c"]
    with store.reader() as r:
        assert r.find_count(data_field=("goal_id", "g2")) == 1


def test_key_index_matches_long_and_nul_values_exactly(store: Any) -> None:
    """Values past the stored bound or holding NUL are found by their exact value only."""
    values = ["x" * 300, "x" * 301, "a\x00b", "\x01lead", "\x02", "é" * 200, ""]
    for i, value in enumerate(values):
        store.put(Write(id=f"todo:v{i}", data={"goal_id": value}, scope=SCOPE))
    for i, value in enumerate(values):
        assert _found(store, data_field=("goal_id", value)) == [f"todo:v{i}"]
    assert _found(store, data_field=("goal_id", "a")) == []
    store.put(Write(id="todo:not-a-string", data={"goal_id": 7}, scope=SCOPE))
    assert _found(store, data_field=("goal_id", "\x02")) == ["todo:v4"]


def test_find_refuses_a_field_that_is_not_indexed(store: Any) -> None:
    """A data field outside DATA_KEYS is invalid_argument at /data_field: no silent scan."""
    with store.reader() as r, pytest.raises(AssayError) as info:
        r.find(data_field=("title", "x"))
    assert (info.value.code, info.value.pointer) == ("invalid_argument", "/data_field")


def test_find_by_a_value_with_a_lone_surrogate_is_lone_surrogate(store: Any) -> None:
    """A data-field value UTF-8 cannot encode is lone_surrogate, as any other read filter."""
    with store.reader() as r, pytest.raises(AssayError) as info:
        r.find(data_field=("key", "k\udcff"))
    assert info.value.code == "lone_surrogate"


def test_find_prefix_is_exact(store: Any) -> None:
    """prefix keeps exactly the ids that start with it, bytewise, across kinds."""
    for record_id in ("loop:a:gate:1", "loop:a:gate:2", "loop:a:gatf", "loop:a:gate",
                      "loop:b:gate:1", "loop:a:gate:\u00e9"):
        store.put(Write(id=record_id, data={}, scope=SCOPE))
    assert _found(store, prefix="loop:a:gate:") == ["loop:a:gate:1", "loop:a:gate:2",
                                                    "loop:a:gate:\u00e9"]
    assert len(_found(store, prefix="")) == 6
    assert _found(store, prefix="loop:a:gate") == ["loop:a:gate", "loop:a:gate:1", "loop:a:gate:2",
                                                   "loop:a:gate:\u00e9"]


def test_data_keys_cover_only_top_level_fields() -> None:
    """data_keys reads the indexed fields at the top level of an object only."""
    assert data_keys({"goal_id": "g", "nested": {"key": "k"}, "intent": {"a": 1}}) == (
        ("goal_id", "g"), ("intent", NOT_A_STRING))
    assert data_keys(["goal_id"]) == ()
    assert key_value("x" * 256) == "x" * 256
    assert key_value("x" * 257) != "x" * 257 and len(key_value("x" * 257) or "") == 65
    assert set(DATA_KEYS) <= {"context_role", "gave_up", "goal_id", "intent", "key", "schema"}
    assert "record_keys" in INDEX_TABLES
