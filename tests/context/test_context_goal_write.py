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


def test_goal_write_refuses_a_hand_added_line_in_its_region(tmp_path: Path, goal_file) -> None:
    """A line added by hand inside an assay region is goal_region_foreign_edit with a diff; nothing is written."""
    edited = EXPLICIT.replace("    keep the error pointers exact\n",
                              "    keep the error pointers exact\n- [ ] added by a person\n")
    path = goal_file(edited)
    with pytest.raises(ConflictError) as info:
        write_goal(tmp_path, "g", "goal.md", expect_revision=sha(edited), render=_render)
    err = info.value
    assert err.code == "goal_region_foreign_edit"
    region = err.details["regions"][0]
    assert (region["region_id"], region["lines"]) == ("agent-todo", {"start": 9, "end": 14})
    assert "-- [ ] added by a person" in region["diff"]
    assert path.read_text() == edited
    assert sorted(p.name for p in tmp_path.iterdir()) == ["goal.md"]


def test_goal_write_refuses_an_edited_generated_line(tmp_path: Path, goal_file) -> None:
    """A generated line edited by hand no longer matches its digest: the region is not rewritten."""
    edited = EXPLICIT.replace("Approve the schema", "Approve the schema today")
    path = goal_file(edited)
    with pytest.raises(ConflictError) as info:
        write_goal(tmp_path, "g", "goal.md", expect_revision=sha(edited), render=_render)
    assert [r["region_id"] for r in info.value.details["regions"]] == ["user-todo"]
    assert path.read_text() == edited


def test_goal_write_fills_an_empty_region_and_keeps_its_blank_lines() -> None:
    """An empty region gets a digest line and the rendered lines; blank lines in it stay."""
    doc = ("<!-- assay:todo-region role=agent id=a begin -->\n\n\n"
           "<!-- assay:todo-region id=a end -->\n")
    data = doc.encode()
    new = regenerate(read_goal_bytes(data, goal_id="g", path="goal.md"), data,
                     lambda region: ["- [ ] one"])
    lines = new.decode().splitlines()
    assert lines[1].startswith("<!-- assay:generated sha256=") and lines[1].endswith(" lines=1 -->")
    assert lines[2:5] == ["- [ ] one", "", ""]
    again = regenerate(read_goal_bytes(new, goal_id="g", path="goal.md"), new, lambda region: [])
    assert again == data


def test_goal_write_leaves_loopx_regions_beside_assay_regions() -> None:
    """In a file with both families, only the assay region changes."""
    loopx = ("## User Todo\n<!-- loopx:todo-region-v0 role=user begin -->\n- [ ] Approve\n"
             "<!-- loopx:todo-region-v0 role=user end -->\n")
    doc = EXPLICIT.replace("## User Todo\n", "## Notes\n") + loopx
    data = doc.encode()
    new = regenerate(read_goal_bytes(data, goal_id="g", path="goal.md"), data, _render).decode()
    assert new.endswith(loopx)
    assert "new agent task" in new and new.count("new user task") == 1
