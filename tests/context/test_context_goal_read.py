"""Reading goal markdown: ownership, verbatim text, region lineage, fail-closed markers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from context_docs import EXPLICIT, sha

from assay.context.goal import read_goal, read_goal_bytes
from assay.errors import AssayError, UnavailableError


def _read(text: str | bytes):
    data = text.encode("utf-8") if isinstance(text, str) else text
    return read_goal_bytes(data, goal_id="g", path="goal.md")


def _lines(text: str, start: int, end: int) -> str:
    return "".join(text.splitlines(keepends=True)[start - 1:end])


def test_goal_explicit_returns_all_non_generated_text_verbatim() -> None:
    """Explicit ownership returns every byte outside the regions, in order."""
    read = _read(EXPLICIT)
    assert read.ownership == "explicit"
    expected = EXPLICIT
    for start, end in ((19, 22), (9, 13)):
        expected = expected.replace(_lines(EXPLICIT, start, end), "", 1)
    assert read.text == expected
    assert "Final stop: the fixtures pass.\n" in read.text
    assert "title: Ship the parser" in read.text


def test_goal_explicit_reports_region_role_lines_and_digest() -> None:
    """Each excluded region carries its role, 1-based line interval and SHA-256 of its bytes."""
    out = _read(EXPLICIT).to_dict()
    assert out["excluded_todo_regions"] == [
        {"id": "agent-todo", "role": "agent", "marker": "assay",
         "lines": {"start": 9, "end": 13}, "sha256": sha(_lines(EXPLICIT, 9, 13))},
        {"id": "user-todo", "role": "user", "marker": "assay",
         "lines": {"start": 19, "end": 22}, "sha256": sha(_lines(EXPLICIT, 19, 22))},
    ]
    assert out["required_reads"] == []


def test_goal_revision_hashes_every_byte() -> None:
    """The revision is the SHA-256 of the whole file, regions included."""
    read = _read(EXPLICIT)
    assert read.revision == sha(EXPLICIT)
    assert read.size_bytes == len(EXPLICIT.encode())
    assert read.line_count == EXPLICIT.count("\n")


def test_goal_without_regions_is_explicit_and_whole() -> None:
    """A goal with no todo list at all is explicitly owned: its whole text is returned."""
    text = "# Goal\n\nJust narrative.\n\n## Notes\n- a plain bullet\n"
    read = _read(text)
    assert (read.ownership, read.text, read.regions) == ("explicit", text, ())


def test_goal_unmarked_task_list_yields_no_body() -> None:
    """A task list outside any region makes ownership unmarked: only path, revision and a read."""
    text = "# Goal\n\n## Agent Todo\n- [ ] do it\n- [x] done\n"
    out = _read(text).to_dict()
    assert out["ownership"] == "unmarked"
    assert out["text"] is None and out["excluded_todo_regions"] is None
    assert out["first_unmarked_line"] == 3
    assert out["required_reads"] == [{
        "command": ["assay", "goal", "read", "--goal-id", "g", "--full"],
        "source": "goal_state",
        "reason": out["required_reads"][0]["reason"],
        "ordering": "before_work",
    }]


def test_goal_unmarked_list_heading_without_tasks_counts() -> None:
    """A todo-list heading not followed by a begin marker is an unmarked region."""
    read = _read("# Goal\n\n## User Todo\n\n- approve the plan\n")
    assert (read.ownership, read.first_unmarked_line) == ("unmarked", 3)


def test_goal_mixed_marked_and_unmarked_yields_no_body() -> None:
    """Marked regions plus a task line elsewhere is mixed ownership, with no body."""
    text = EXPLICIT + "\n- [ ] a stray task\n"
    read = _read(text)
    assert read.ownership == "mixed"
    assert read.text is None
    assert read.to_dict()["required_reads"][0]["source"] == "goal_state"


def test_goal_headings_never_decide_delivered_text() -> None:
    """Sections named like history or notes are delivered whole, never classified."""
    text = ("# Goal\n## Old history\nlong history\n## Scratch\nnotes\n"
            "<!-- assay:todo-region role=agent id=a begin -->\n"
            "<!-- assay:todo-region id=a end -->\n## Done when\nall green\n")
    read = _read(text)
    assert read.text == text.replace("<!-- assay:todo-region role=agent id=a begin -->\n"
                                     "<!-- assay:todo-region id=a end -->\n", "")


def test_goal_loopx_region_owns_its_heading() -> None:
    """A loopx region runs from its todo heading through its end marker, with id loopx-<role>."""
    text = ("# Goal\n\n## Agent Todo\n<!-- loopx:todo-region-v0 role=agent begin -->\n"
            "- [ ] task\n<!-- loopx:todo-region-v0 role=agent end -->\nafter\n")
    read = _read(text)
    assert read.ownership == "explicit"
    assert read.text == "# Goal\n\nafter\n"
    assert [(r.id, r.start_line, r.end_line) for r in read.regions] == [("loopx-agent", 3, 6)]
    assert read.regions[0].syntax == "loopx"


def test_goal_markers_in_frontmatter_code_and_comments_are_not_scanned() -> None:
    """Markers inside frontmatter, fenced code and multi-line comments are plain text."""
    marker = "<!-- assay:todo-region role=agent id=x begin -->\n"
    text = ("---\n" + marker + "---\n"
            "````md\n```\n" + marker + "```\n````\n"
            "~~~\n" + marker + "~~~\n"
            "<!-- a note that\n" + marker + "spans lines -->\n"
            "    " + marker + "done\n")
    read = _read(text)
    assert (read.ownership, read.regions, read.text) == ("explicit", (), text)


def test_goal_marker_after_byte_order_mark_is_seen() -> None:
    """A begin marker on line 1 after a UTF-8 byte-order mark is still a marker."""
    text = "\ufeff<!-- assay:todo-region role=agent id=a begin -->\n<!-- assay:todo-region id=a end -->\nx\n"
    read = _read(text)
    assert [r.id for r in read.regions] == ["a"]
    assert read.text == "x\n"


def test_goal_crlf_line_endings_are_preserved() -> None:
    """CRLF files keep their CRLF bytes in the text and in the region digests."""
    text = EXPLICIT.replace("\n", "\r\n")
    read = _read(text)
    assert read.ownership == "explicit"
    assert "\r\n" in read.text and read.text.count("\r\n") == read.text.count("\n")
    region = read.regions[0]
    assert (region.start_line, region.end_line) == (9, 13)
    assert region.sha256 == sha(_lines(text, 9, 13))
    assert region.newline == "\r\n"


def test_goal_invalid_utf8_fails_closed() -> None:
    """Invalid UTF-8 is goal_invalid_utf8 with the byte offset and line."""
    data = b"# Goal\nline two \xff\n"
    with pytest.raises(AssayError) as info:
        _read(data)
    assert info.value.code == "goal_invalid_utf8"
    assert info.value.details["offset"] == 16 and info.value.details["line"] == 2
    assert info.value.pointer is None


def test_goal_large_file_is_never_clipped() -> None:
    """A 5 MB goal with 200 regions returns all of its non-generated text."""
    chunk = "narrative line with some words in it, kept verbatim\n" * 480
    parts = []
    for i in range(200):
        parts.append(chunk)
        parts.append(f"<!-- assay:todo-region role=agent id=r{i} begin -->\n- [ ] t{i}\n"
                     f"<!-- assay:todo-region id=r{i} end -->\n")
    text = "".join(parts) + "the end\n"
    assert len(text.encode()) > 5_000_000
    read = _read(text)
    assert len(read.regions) == 200
    assert read.text == chunk * 200 + "the end\n"


def test_goal_read_file_never_writes(tmp_path: Path, goal_file) -> None:
    """Reading a goal file leaves its bytes and modification time as they were."""
    path = goal_file(EXPLICIT)
    os.utime(path, (1_000_000, 1_000_000))
    before = path.stat()
    read, data = read_goal(tmp_path, "g", "goal.md")
    after = path.stat()
    assert data == EXPLICIT.encode() and read.ownership == "explicit"
    assert (after.st_mtime_ns, after.st_size) == (before.st_mtime_ns, before.st_size)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["goal.md"]


def test_goal_missing_file_is_unavailable(tmp_path: Path) -> None:
    """A registered goal whose file is missing fails closed with goal_unavailable (exit 4)."""
    with pytest.raises(UnavailableError) as info:
        read_goal(tmp_path, "g", "goals/missing.md")
    assert info.value.code == "goal_unavailable"
    assert info.value.details == {"goal_id": "g", "path": "goals/missing.md"}


def test_goal_symlink_out_of_project_is_refused(tmp_path: Path) -> None:
    """A goal path that resolves outside the project root is goal_path_outside_project."""
    outside = tmp_path / "outside.md"
    outside.write_text("# elsewhere\n")
    root = tmp_path / "proj"
    root.mkdir()
    (root / "goal.md").symlink_to(outside)
    with pytest.raises(AssayError) as info:
        read_goal(root, "g", "goal.md")
    assert info.value.code == "goal_path_outside_project"
    assert info.value.pointer == "/goals/g/path"
