"""Property: a find by an indexed data field returns exactly the current records whose data
holds it, as a walk over every current record's data says."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay.ledger import Write, open_store
from assay.ledger.record import DATA_KEYS
from assay_testing import examples

IDS = ["todo:a", "todo:b", "note:c", "knowledge:d"]
# Strings near every edge of how a value is stored: empty, control characters
# first, NUL, past the 256-byte bound, non-ASCII, and the not-a-string marker.
STRINGS = st.one_of(
    st.sampled_from(["", "g", "G", "\x01", "\x02", "a\x00b", "x" * 256, "x" * 257, "é" * 128,
                     "é" * 129, "\U0001f600"]),
    st.text(max_size=8))
VALUES = st.one_of(STRINGS, st.none(), st.integers(-2, 2), st.just({"a": 1}), st.just([1]))
DATA = st.dictionaries(st.sampled_from([*DATA_KEYS, "other"]), VALUES, max_size=3)
WRITES = st.lists(st.tuples(st.sampled_from(IDS), DATA, st.sampled_from(["current", "retired"]),
                            st.booleans()), min_size=1, max_size=10)


def _expected(current: dict[str, Any], name: str, value: str | None) -> list[str]:
    return sorted(record_id for record_id, data in current.items()
                  if name in data and (value is None or data[name] == value))


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(writes=WRITES, name=st.sampled_from(DATA_KEYS), probe=st.one_of(STRINGS, st.none()))
def test_find_by_data_field_matches_the_data(writes: list[Any], name: str,
                                             probe: str | None) -> None:
    """find(data_field=(name, probe)) is the set of current records whose data has name == probe."""
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(Path(tmp) / "ledger.db")
        try:
            current: dict[str, Any] = {}
            for record_id, data, status, batch in writes:
                write = Write(id=record_id, data=data, scope="project:demo", status=status)
                if batch:
                    store.put_many([write])
                else:
                    store.put(write)
                current[record_id] = data
            with store.reader() as r:
                found = [x.id for x in r.find(data_field=(name, probe), limit=100)]
                assert found == _expected(current, name, probe)
                assert r.find_count(data_field=(name, probe)) == len(found)
                for record_id, data in current.items():
                    if name in data and isinstance(data[name], str):
                        assert record_id in [x.id for x in r.find(
                            data_field=(name, data[name]), limit=100)]
        finally:
            store.close()
