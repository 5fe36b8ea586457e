"""Control characters in a write's text fields: the same refusal on both backends, nothing written."""

from __future__ import annotations

from typing import Any

import pytest

from assay.errors import AssayError
from assay.ledger import Write

CASES = [
    ({"scope": "project:a\x00b"}, "invalid_scope", "/scope"),
    ({"scope": "project:a\nb"}, "invalid_scope", "/scope"),
    ({"audience": "private:\x00"}, "invalid_audience", "/audience"),
    ({"request_id": "req\x00"}, "invalid_argument", "/request_id"),
    ({"request_id": "req\u2028"}, "invalid_argument", "/request_id"),
    ({"scope": "project:\ud800"}, "lone_surrogate", "/scope"),
    ({"audience": "private:\udfff"}, "lone_surrogate", "/audience"),
    ({"request_id": "req-\ud800"}, "lone_surrogate", "/request_id"),
]


@pytest.mark.parametrize(("fields", "code", "where"), CASES)
def test_hostile_ledger_field_with_control_character_is_refused(
        store: Any, fields: dict[str, str], code: str, where: str) -> None:
    """NUL, newlines, separators and lone surrogates in scope, audience or request id are refused."""
    write = Write(**{"id": "knowledge:x", "data": {"a": 1}, "scope": "project:demo", **fields})
    with pytest.raises(AssayError) as caught:
        store.put(write)
    assert (caught.value.code, caught.value.pointer) == (code, where)
    assert store.info().ledger_revision == 0


def test_hostile_ledger_nul_in_batch_names_the_write(store: Any) -> None:
    """In a batch, the refusal points into the offending write and nothing of the batch is written."""
    writes = [Write(id="knowledge:a", data={}, scope="project:demo"),
              Write(id="knowledge:b", data={}, scope="project:demo", audience="private:x\x00")]
    with pytest.raises(AssayError) as caught:
        store.put_many(writes)
    assert (caught.value.code, caught.value.pointer) == ("invalid_audience", "/writes/1/audience")
    assert store.info().ledger_revision == 0


def test_hostile_ledger_nul_in_read_filter_is_an_input_error(store: Any) -> None:
    """A NUL in a find filter is an input error (never a driver exception) on both backends."""
    try:
        with store.reader() as r:
            found = r.find(query="a\x00b", kind="knowledge")
    except AssayError as exc:
        assert exc.code == "invalid_input"
    else:
        assert found == []


def test_hostile_ledger_large_double_reads_back_as_the_same_canonical_data(store: Any) -> None:
    """A double JCS writes as a long integer literal reads back digestible and writable again."""
    from assay.canonical import canonical_text, digest

    data = {"n": 3.549762440783015e16, "m": -1.2345678901234568e20, "s": "12345678901234567890"}
    receipt = store.put(Write(id="knowledge:x", data=data, scope="project:demo"))
    with store.reader() as r:
        record = r.get("knowledge:x")
    assert record is not None
    assert canonical_text(record.data) == record.data_text == canonical_text(data)
    assert digest(record.data) == record.data_sha256 == receipt.data_sha256
    again = store.put(Write(id="knowledge:x", data=record.data, scope="project:demo",
                            expect_revision=1))
    assert again.data_sha256 == receipt.data_sha256
