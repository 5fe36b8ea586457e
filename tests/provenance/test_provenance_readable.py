"""Readable terminal views of the provenance operations."""

from __future__ import annotations

from typing import Any

from assay.cli.render import readable
from assay.ops import lookup


def test_note_list_readable_view_shows_unavailable_lines(project: Any, capsys: Any) -> None:
    """A person sees each admitted note with its sources and each omitted note's reason."""
    project.ok("put", "--data-file", "-", "--", "knowledge:k", input='{"v":1}')
    project.ok("note", "add", "--source", "knowledge:k@1", "--", "derived from k")
    project.ok("note", "add", "--", "stands alone")
    project.ok("retire", "--expect-revision", "1", "--", "knowledge:k")
    readable(lookup("note.list"), project.ok("note", "list"))
    out = capsys.readouterr().out
    assert "stands alone" in out and "derived from k" not in out
    assert "unavailable: a source was retired (knowledge:k@1)" in out
    assert "1 admitted; envelope known" in out


def test_publish_check_readable_view_names_failing_sources(project: Any, capsys: Any) -> None:
    """A withheld verdict shows its line and each failing source with its reason."""
    project.ok("put", "--data-file", "-", "--", "knowledge:k", input='{"v":1}')
    project.ok("note", "add", "--source", "knowledge:k@1", "--", "derived")
    listed = project.run("note", "list").stdout
    project.ok("retire", "--expect-revision", "1", "--", "knowledge:k")
    readable(lookup("publish.check"), project.run("publish", "check", "--", "-", input=listed).json)
    out = capsys.readouterr().out
    assert "withheld: a source was retired" in out
    assert "knowledge:k@1: source_retired" in out
