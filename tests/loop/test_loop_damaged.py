"""One damaged loop head never hides the others, and is never chosen past or ignored by the gate."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from loop_helpers import loop_project, op, start

from assay.errors import AssayError
from assay_testing import Project, corrupt_version


def _stored(project: Project, record_id: str) -> tuple[int, str]:
    """(revision, data text) of the record's newest stored version."""
    conn = sqlite3.connect(project.root / ".assay" / "ledger.db")
    try:
        row = conn.execute("SELECT revision, data FROM record_versions WHERE id = ? "
                           "ORDER BY revision DESC LIMIT 1", (record_id,)).fetchone()
    finally:
        conn.close()
    return int(row[0]), str(row[1])


def _damage_head(project: Project, loop_id: str, how: str) -> None:
    revision, text = _stored(project, f"loop:{loop_id}")
    if how == "changed-old-digest":  # a value changed, the old digest kept
        damaged = text.replace('"status":"stopped"', '"status":"active"')
        assert damaged != text
    else:  # text cut short, still naming the head schema
        damaged = text[: text.index('"schema"') + 40]
    corrupt_version(project, f"loop:{loop_id}", revision, damaged, None)


@pytest.fixture(params=["changed-old-digest", "truncated"])
def two_loops(request: pytest.FixtureRequest, tmp_path: Path) -> Project:
    """Loop ``old`` stopped and then damaged; loop ``live`` active."""
    project = loop_project(tmp_path / "proj")
    start(project, loop="old")
    op(project, "loop.stop", {"loop": "old", "reason": "superseded"})
    start(project, loop="live", task="Fix calc.sub")
    _damage_head(project, "old", request.param)
    return project


def test_named_loop_still_read_past_a_damaged_one(two_loops: Project) -> None:
    """Naming the intact loop reads it; naming the damaged one is record_unreadable."""
    assert op(two_loops, "loop.status", {"loop": "live"})["loopId"] == "live"
    with pytest.raises(AssayError) as caught:
        op(two_loops, "loop.status", {"loop": "old"})
    assert caught.value.code == "record_unreadable"


def test_implicit_loop_never_chosen_past_a_damaged_head(two_loops: Project) -> None:
    """Without --loop, a damaged head (maybe live) makes the choice ambiguous: both are named."""
    with pytest.raises(AssayError) as caught:
        op(two_loops, "loop.status", {})
    err = caught.value
    assert (err.code, err.pointer) == ("invalid_argument", "/loop")
    assert "1 cannot be read" in err.message
    assert {(x["loopId"], x["status"]) for x in err.details["loops"]} == {
        ("live", "active"), ("old", "unreadable")}


def test_missing_loop_lists_the_damaged_one(two_loops: Project) -> None:
    """An unknown loop's error lists every loop, the damaged one as unreadable."""
    with pytest.raises(AssayError) as caught:
        op(two_loops, "loop.status", {"loop": "nope"})
    assert caught.value.code == "state_unavailable"
    assert "old (unreadable" in caught.value.message and "live (active" in caught.value.message
