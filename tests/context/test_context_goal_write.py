"""Regenerating goal regions: only region bytes change, under a revision guard."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from context_docs import EXPLICIT, sha

from assay.context.goal import Region, read_goal, read_goal_bytes, regenerate, write_goal
from assay.errors import AssayError, ConflictError


def _render(region: Region) -> list[str]:
    return [f"- [ ] new {region.role} task <!-- todo:{region.role}-1 status=open -->",
            "    with a detail line"]


def _outside(data: bytes) -> list[bytes]:
    """The bytes outside every region's generated lines, in order."""
    read = read_goal_bytes(data, goal_id="g", path="goal.md")
    text = data.decode()
    out, last = [], 0
    for r in read.regions:
        out.append(text[last:r.content_start].encode())
        last = r.content_end
    out.append(text[last:].encode())
    return out


def test_goal_regenerate_changes_only_region_bytes() -> None:
    """Every byte outside the generated lines (markers included) is identical afterwards."""
    data = EXPLICIT.encode()
    new = regenerate(read_goal_bytes(data, goal_id="g", path="goal.md"), data, _render)
    assert new != data
    assert _outside(new) == _outside(data)
    before = read_goal_bytes(data, goal_id="g", path="goal.md")
    after = read_goal_bytes(new, goal_id="g", path="goal.md")
    assert after.text == before.text
    assert b"- [ ] new agent task <!-- todo:agent-1 status=open -->\n    with a detail line\n" in new


def test_goal_regenerate_keeps_crlf() -> None:
    """Generated lines in a CRLF file end with CRLF, and nothing else changes."""
    data = EXPLICIT.replace("\n", "\r\n").encode()
    new = regenerate(read_goal_bytes(data, goal_id="g", path="goal.md"), data, _render)
    assert _outside(new) == _outside(data)
    assert new.count(b"\n") == new.count(b"\r\n")


def test_goal_regenerate_refuses_content_that_would_not_read_back() -> None:
    """A rendering with a line not allowed in a region is refused before any write."""
    data = EXPLICIT.encode()
    with pytest.raises(AssayError) as info:
        regenerate(read_goal_bytes(data, goal_id="g", path="goal.md"), data,
                   lambda region: ["# a heading"])
    assert info.value.code == "goal_region_foreign_content"


def test_goal_write_replaces_regions_on_disk(tmp_path: Path, goal_file) -> None:
    """write_goal regenerates the file and reports both revisions and each region's lineage."""
    path = goal_file(EXPLICIT)
    out = write_goal(tmp_path, "g", "goal.md", expect_revision=sha(EXPLICIT), render=_render)
    data = path.read_bytes()
    assert out["changed"] is True
    assert out["previous_revision"] == sha(EXPLICIT) and out["revision"] == sha(data)
    assert _outside(data) == _outside(EXPLICIT.encode())
    assert [r["id"] for r in out["regions"]] == ["agent-todo", "user-todo"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["goal.md"]


def test_goal_write_refuses_a_stale_revision(tmp_path: Path, goal_file) -> None:
    """A goal edited between read and write is goal_revision_conflict and is not overwritten."""
    path = goal_file(EXPLICIT)
    read, _ = read_goal(tmp_path, "g", "goal.md")
    edited = EXPLICIT.replace("Final stop", "Final stop (edited by a person)")
    path.write_text(edited)
    with pytest.raises(ConflictError) as info:
        write_goal(tmp_path, "g", "goal.md", expect_revision=read.revision, render=_render)
    assert info.value.code == "goal_revision_conflict"
    assert info.value.pointer == "/expect_revision"
    assert info.value.details["current_revision"] == sha(edited)
    assert path.read_text() == edited


def test_goal_write_unchanged_leaves_file_untouched(tmp_path: Path, goal_file) -> None:
    """When regeneration yields the same bytes the file is not rewritten."""
    path = goal_file(EXPLICIT)
    os.utime(path, (1_000_000, 1_000_000))
    keep = lambda region: EXPLICIT[region.content_start:region.content_end].splitlines()[1:]
    out = write_goal(tmp_path, "g", "goal.md", expect_revision=sha(EXPLICIT), render=keep)
    assert out["changed"] is False and out["revision"] == sha(EXPLICIT)
    assert path.stat().st_mtime_ns == 1_000_000 * 10**9


def test_goal_write_keeps_the_file_mode(tmp_path: Path, goal_file) -> None:
    """The replaced goal file keeps its permission bits."""
    path = goal_file(EXPLICIT)
    path.chmod(0o640)
    write_goal(tmp_path, "g", "goal.md", expect_revision=sha(EXPLICIT), render=_render)
    assert path.stat().st_mode & 0o777 == 0o640
