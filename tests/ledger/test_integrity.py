"""Integrity on read: stored data that fails its digest or strict parse is unreadable, never used.

Each test damages a row directly in the database (SQLite file or PostgreSQL
schema), as a disk fault or a hand edit would, then reads through the CLI.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from assay_testing import Project, corrupt_version


def _put(project: Project, record_id: str, data: Any) -> dict[str, Any]:
    return project.ok("put", "--data-file", "-", "--", record_id, input=json.dumps(data))["data"]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# (stored text, whether the digest is recomputed to match it, the damage reason)
DAMAGE = [
    pytest.param('{"result":"passed"', False, "digest_mismatch", id="truncated"),
    pytest.param('{"result":9007199254740993}', False, "digest_mismatch", id="changed-old-digest"),
    pytest.param('{"result":9007199254740993}', True, "unsafe_integer", id="unsafe-integer"),
    pytest.param("not json at all", True, "not_json", id="not-json"),
    pytest.param('{"result":"a","result":"b"}', True, "not_json", id="duplicate-key"),
    pytest.param('{"result":NaN}', True, "not_json", id="nan"),
    pytest.param('{"result":"\\ud800"}', True, "lone_surrogate", id="lone-surrogate"),
    pytest.param("[" * 101 + "]" * 101, True, "too_deep", id="too-deep"),
]


@pytest.mark.parametrize(("text", "rehash", "reason"), DAMAGE)
def test_integrity_get_of_damaged_version_is_record_unreadable(any_project: Project, text: str,
                                                               rehash: bool, reason: str) -> None:
    """get answers record_unreadable (exit 1) naming the id, revision and reason, never the damaged data."""
    _put(any_project, "evidence:unit", {"result": "passed"})
    corrupt_version(any_project, "evidence:unit", 1, text, _sha(text) if rehash else None)
    result = any_project.run("get", "--", "evidence:unit")
    assert (result.code, result.error["code"]) == (1, "record_unreadable")
    assert result.error["details"] == {"id": "evidence:unit", "revision": 1, "reason": reason}
    assert "get --raw --revision 1 -- evidence:unit" in result.error["action"]
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(("text", "rehash", "reason"), DAMAGE)
def test_integrity_raw_read_shows_the_stored_text(any_project: Project, text: str, rehash: bool,
                                                  reason: str) -> None:
    """get --raw prints the stored text exactly as held, damaged or not."""
    _put(any_project, "evidence:unit", {"result": "passed"})
    corrupt_version(any_project, "evidence:unit", 1, text, _sha(text) if rehash else None)
    result = any_project.run("get", "--raw", "--", "evidence:unit")
    assert result.code == 0 and result.stdout == text + "\n"


def test_integrity_listings_survive_a_damaged_row(any_project: Project) -> None:
    """find and history list a damaged version with data null and its reason; the others read normally."""
    _put(any_project, "evidence:a", {"v": 1})
    _put(any_project, "evidence:b", {"v": 1})
    _put(any_project, "evidence:b", {"v": 2})
    corrupt_version(any_project, "evidence:a", 1, '{"v":2}', None)
    found = any_project.ok("find", "--kind", "evidence")["data"]["records"]
    assert [(r["id"], r["data"], r.get("unreadable", {}).get("reason")) for r in found] == [
        ("evidence:a", None, "digest_mismatch"), ("evidence:b", {"v": 2}, None)]
    corrupt_version(any_project, "evidence:b", 1, "{", None)
    versions = any_project.ok("get", "--history", "--", "evidence:b")["data"]["versions"]
    assert [(v["revision"], v["data"]) for v in versions] == [(1, None), (2, {"v": 2})]
    assert versions[0]["unreadable"]["read"] == ["assay", "get", "--raw", "--revision", "1", "--",
                                                 "evidence:b"]
    assert any_project.ok("get", "--", "evidence:b")["data"]["record"]["data"] == {"v": 2}


def test_integrity_damaged_links_make_the_version_unreadable(any_project: Project) -> None:
    """A version whose stored links are not JSON is unreadable (metadata_damaged), not a crash."""
    _put(any_project, "evidence:a", {"v": 1})
    corrupt_version(any_project, "evidence:a", 1, None, None, links="[{")
    result = any_project.run("get", "--", "evidence:a")
    assert (result.code, result.error["details"]["reason"]) == (1, "metadata_damaged")
    assert any_project.ok("find", "--kind", "evidence")["data"]["count"] == 1


def test_integrity_ledger_info_and_a_new_version_still_work(any_project: Project) -> None:
    """A damaged record can be replaced: the next put writes revision 2 and reads back."""
    _put(any_project, "evidence:a", {"v": 1})
    corrupt_version(any_project, "evidence:a", 1, "garbage", None)
    assert any_project.ok("ledger", "info")["data"]["records"] == 1
    assert _put(any_project, "evidence:a", {"v": 3})["revision"] == 2
    assert any_project.ok("get", "--", "evidence:a")["data"]["record"]["data"] == {"v": 3}


@pytest.mark.parametrize(("text", "damaged"), [
    ('{"n":900719925474099}', False),  # 15 digits: read as a plain integer
    ('{"n":9007199254740991}', False),  # 16 digits, the largest safe integer
    ('{"n":9007199254740993}', True),  # 16 digits past 2**53
    ('{"id":"12345678901234567890","n":9007199254740993}', True),
    ('{"id":"12345678901234567890","n":7}', False),  # a long run inside a string
    ('{"n":-9007199254740993}', True),
])
def test_integrity_integers_checked_whatever_the_digit_runs(text: str, damaged: bool) -> None:
    """Stored integers past 2**53 are damage, however the text's digit runs fall."""
    from assay.canonical import digest_bytes
    from assay.ledger.store import Damage, decode_stored

    sha = digest_bytes(text.encode())
    if damaged:
        with pytest.raises(Exception) as caught:
            decode_stored(text, sha)
        assert isinstance(caught.value.damage, Damage)  # type: ignore[attr-defined]
    else:
        assert decode_stored(text, sha) == json.loads(text)


def test_integrity_read_records_are_sealed_and_checked_like_built_ones() -> None:
    """A record built from a stored row equals one built by its constructor, refuses assignment and checks its text."""
    from assay.canonical import digest_bytes
    from assay.ledger.store import Record, RecordUnreadable, stored_record

    text = '{"a":1}'
    fields: dict[str, Any] = {
        "id": "knowledge:a", "revision": 2, "kind": "knowledge", "scope": "project:x",
        "data_text": text, "data_sha256": digest_bytes(text.encode()), "status": "current",
        "superseded_by": None, "links": (), "audience": "project", "sources": (),
        "origin": "claim", "created_at": "2026-01-01T00:00:00.000Z", "ledger_revision": 7,
        "request_id": None, "damage": None}
    read = stored_record(**fields)
    assert type(read) is Record
    assert read == Record(**fields)
    assert read.data == {"a": 1}
    with pytest.raises(AttributeError):
        read.status = "retired"  # type: ignore[misc]
    bad = stored_record(**{**fields, "data_text": '{"a":2}'})
    with pytest.raises(RecordUnreadable):
        bad.data  # noqa: B018
