"""SQLite's text search (``find(query=...)``) matches exactly the rows the plain condition matches.

The condition :func:`assay.ledger.sql.text_match` builds rules ids out with a
plain ``instr`` before it lowers them; these tests hold it to the plain
``instr(lower(id)) OR instr(lower(data))`` on real SQLite files, with values
that only a damaged row holds: NUL bytes, BLOBs, bytes that are not UTF-8,
upper and non-ASCII case.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from assay.ledger import Write, open_store
from assay.ledger.sql import text_match
from assay_testing import examples

PLAIN = "(instr(lower(v.id), ?) > 0 OR instr(lower(v.data), ?) > 0)"

# Ids and data as a damaged row may hold them: text with NUL bytes, BLOBs
# (some not UTF-8), quotes, upper and non-ASCII case.
VALUES: list[str | bytes] = [
    "knowledge:a", 'knowledge:"Context_Role":"ORIENTATION"', "x\x00\"context_role\":\"orientation\"",
    '{"context_role":"orientation"}', '{"CONTEXT_ROLE":"Orientation"}', '{"context_role" :"orientation"}',
    '{"a":1}\x00{"context_role":"orientation"}', b'{"context_role":"orientation"}',
    b'\x00"context_role":"orientation"', b'\xff\xfe"Context_Role":"orientation"\x80',
    b'\xc3"context_role":"orientation"', 'É"context_role":"orientation"', "\u0130 stanbul",
    "Stra\u00dfe", "KELVIN \u212a", "loop-recovery:L1:2", "LOOP-RECOVERY:l1:2", '"gave_up":{"a":1}',
    '"GAVE_UP":{', "", "\x00", b"", b"\x00\x00", "a\x00b", "record 12", "RECORD 12",
]
NEEDLES = ['"context_role":"orientation"', "loop-recovery:l1:", '"gave_up":{', '"intent":', "record",
           "12", "a\x00b", "\x00", "é\"context", "i\u0307", "stra\u00dfe", "k", '"', " stanbul",
           "ab", "-", "é"]


def _matches(conn: sqlite3.Connection, condition: str, params: list[str]) -> list[int]:
    sql = f"SELECT v.rowid FROM t v WHERE {condition} ORDER BY v.rowid"
    return [row[0] for row in conn.execute(sql, params)]


def _table(path: Path, rows: list[tuple[str | bytes, str | bytes]]) -> sqlite3.Connection:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (id TEXT NOT NULL, data TEXT NOT NULL)")
    conn.executemany("INSERT INTO t (id, data) VALUES (?, ?)", rows)
    return conn


def test_text_match_equals_the_plain_condition_on_damaged_values(tmp_path: Path) -> None:
    """Every pair of the damaged ids and data above matches each needle exactly as the plain condition does."""
    conn = _table(tmp_path / "t.db", [(i, d) for i in VALUES for d in VALUES])
    try:
        for needle in NEEDLES:
            condition, params = text_match(needle)
            assert _matches(conn, condition, params) == _matches(conn, PLAIN, [needle, needle]), needle
    finally:
        conn.close()


_CHARS = st.sampled_from(list('aAzZéÉ"_:{} -\x00\xff\u0130\u212a0') + ["\u00df", "\u0307"])
_TEXT = st.text(_CHARS, max_size=12)
_VALUE = st.one_of(_TEXT, _TEXT.map(lambda t: t.encode("utf-8")),
                   st.binary(max_size=12), _TEXT.map(lambda t: t.encode("latin-1", "replace")))


@settings(max_examples=examples(300), deadline=None)
@given(rows=st.lists(st.tuples(_VALUE, _VALUE), min_size=1, max_size=8),
       query=_TEXT.filter(bool))
def test_text_match_equals_the_plain_condition_property(tmp_path_factory, rows, query) -> None:  # type: ignore[no-untyped-def]
    """For generated ids, data (text, BLOB, not UTF-8) and queries, the rows matched are the plain condition's."""
    needle = query.lower()
    conn = _table(tmp_path_factory.mktemp("m") / "t.db", rows)
    try:
        condition, params = text_match(needle)
        assert _matches(conn, condition, params) == _matches(conn, PLAIN, [needle, needle])
    finally:
        conn.close()


def test_text_match_find_returns_what_the_plain_condition_selects(tmp_path: Path) -> None:
    """find(query=...) on a ledger with damaged rows returns the current records the plain condition selects."""
    path = tmp_path / "ledger.db"
    store = open_store(path)
    try:
        store.put_many([Write(id=f"knowledge:r{i}", scope="project:p", data={"i": i})
                        for i in range(12)])
        store.put(Write(id="knowledge:orient", scope="project:p",
                        data={"context_role": "orientation"}))
    finally:
        store.close()
    damaged: list[str | bytes] = ['{"i":1}\x00"context_role":"orientation"',
                                  b'\xff"CONTEXT_ROLE":"Orientation"', b"\x00\x00",
                                  '{"Context_Role":"ORIENTATION"}', "É\x00"]
    conn = sqlite3.connect(path)
    with conn:
        for i, data in enumerate(damaged):
            conn.execute("UPDATE record_versions SET data = ? WHERE id = ?", (data, f"knowledge:r{i}"))
        conn.execute("UPDATE record_versions SET id = ? WHERE id = ?",
                     ('knowledge:"context_role":"orientation"', "knowledge:r11"))
    conn.close()
    for query in ['"context_role":"orientation"', '"CONTEXT_ROLE":"orientation"', "r1", "é", "\x00"]:
        needle = query.lower()
        conn = sqlite3.connect(path)
        expected = [row[0] for row in conn.execute(
            f"SELECT v.id FROM record_versions v WHERE {PLAIN} ORDER BY v.id", [needle, needle])]
        conn.close()
        store = open_store(path)
        try:
            with store.reader() as reader:
                found = [r.id for r in reader.find(query=query, limit=1000)]
        finally:
            store.close()
        assert found == expected, query
    assert len(expected) >= 1
