"""Packet commands refuse an argument no packet file can hold before they write anything.

Command-line words that are not UTF-8 reach assay as lone surrogates
(``\\udcff`` for the byte 0xff); a packet file is UTF-8, so such a word, an
empty or repeated question, a malformed instant or an unknown mode is a
usage error at the argument's pointer, and the packet on disk is as it was.
"""

from __future__ import annotations

import os
from pathlib import Path

from assay.canonical import canonical_text
from assay_testing import Project
from packet_testing import default_execution

NOT_UTF8 = "knowledge:\udcff"  # the argv byte 0xff, as Python decodes it


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def _running(tmp_path: Path) -> tuple[Project, Path]:
    cli = Project(root=tmp_path)
    packet = tmp_path / "pk"
    cli.ok("packet", "init", str(packet), "--objective", "Q", "--run-id", "run-args")
    (tmp_path / "execution.json").write_text(canonical_text(default_execution("quick")))
    cli.ok("packet", "approve", str(packet), "--execution", str(tmp_path / "execution.json"))
    return cli, packet


def test_packet_init_non_utf8_objective_is_refused(tmp_path: Path) -> None:
    """A non-UTF-8 objective is invalid_argument at /objective, and no directory is left behind."""
    result = Project(root=tmp_path).run("packet", "init", "--objective", NOT_UTF8, "--", "pk")
    assert result.code == 2, result.stderr
    assert (result.error["code"], result.error["pointer"]) == ("invalid_argument", "/objective")
    assert not (tmp_path / "pk").exists()


def test_packet_init_non_utf8_question_is_refused(tmp_path: Path) -> None:
    """A non-UTF-8 question is refused at its pointer before the layout is created."""
    result = Project(root=tmp_path).run("packet", "init", "--objective", "Q", "--question", "ok",
                                        "--question", "why\udcfe", "--", "pk")
    assert result.code == 2
    assert (result.error["code"], result.error["pointer"]) == ("invalid_argument", "/question/1")
    assert not (tmp_path / "pk").exists()


def test_packet_init_questions_the_validator_refuses_are_refused(tmp_path: Path) -> None:
    """An empty or repeated question (which would make the packet invalid) is refused up front."""
    cli = Project(root=tmp_path)
    empty = cli.run("packet", "init", "--objective", "Q", "--question", "", "--", "pk")
    repeated = cli.run("packet", "init", "--objective", "Q", "--question", "a", "--question", "a",
                       "--", "pk")
    assert (empty.code, empty.error["pointer"]) == (2, "/question/0")
    assert (repeated.code, repeated.error["pointer"]) == (2, "/question/1")
    assert not (tmp_path / "pk").exists()


def test_packet_init_non_utf8_directory_is_refused(tmp_path: Path) -> None:
    """A directory path that is not UTF-8 (which no JSON answer can name) is refused, not created."""
    result = Project(root=tmp_path).run("packet", "init", "--objective", "Q", "--", "pk\udcff")
    assert (result.code, result.error["pointer"]) == (2, "/directory")
    assert os.listdir(tmp_path) == []


def test_packet_approve_malformed_instant_is_refused(tmp_path: Path) -> None:
    """--approved-at that is not a UTC instant is refused at /approved_at; the run stays unapproved."""
    cli = Project(root=tmp_path)
    packet = tmp_path / "pk"
    cli.ok("packet", "init", str(packet), "--objective", "Q")
    (tmp_path / "execution.json").write_text(canonical_text(default_execution("quick")))
    before = _tree(packet)
    for stamp in ("yesterday", "2026-01-01T00:00:00Z\udcff"):
        result = cli.run("packet", "approve", str(packet), "--execution",
                         str(tmp_path / "execution.json"), "--approved-at", stamp)
        assert (result.code, result.error["pointer"]) == (2, "/approved_at")
    assert _tree(packet) == before


def test_packet_source_non_utf8_title_leaves_no_capture(tmp_path: Path) -> None:
    """A refused title writes no capture, so the same source can then be added."""
    cli, packet = _running(tmp_path)
    (tmp_path / "notes.txt").write_text("notes\n")
    before = _tree(packet)
    result = cli.run("packet", "source", str(packet), "--id", "notes", "--file",
                     str(tmp_path / "notes.txt"), "--title", NOT_UTF8)
    assert (result.code, result.error["pointer"]) == (2, "/title")
    assert _tree(packet) == before
    cli.ok("packet", "source", str(packet), "--id", "notes", "--file", str(tmp_path / "notes.txt"))


def test_packet_close_refuses_reason_and_mode_it_cannot_record(tmp_path: Path) -> None:
    """A non-UTF-8 reason or an unknown mode is refused before raw/failure.json is written."""
    cli, packet = _running(tmp_path)
    before = _tree(packet)
    reason = cli.run("packet", "close", str(packet), "--status", "failed", "--reason", NOT_UTF8)
    mode = cli.run("packet", "close", str(packet), "--status", "failed", "--reason", "r",
                   "--mode", "sideways")
    assert (reason.code, reason.error["pointer"]) == (2, "/reason")
    assert (mode.code, mode.error["pointer"]) == (2, "/mode")
    assert _tree(packet) == before


def test_packet_admit_non_utf8_target_moves_nothing(tmp_path: Path) -> None:
    """A target path that is not UTF-8 is refused; the draft stays where it was."""
    cli, packet = _running(tmp_path)
    (packet / "raw/drafts/d.json").write_text("{}")
    before = _tree(packet)
    result = cli.run("packet", "admit", str(packet), "--draft", "raw/drafts/d.json",
                     "--to", "raw/dossiers/\udcff.json")
    assert (result.code, result.error["pointer"]) == (2, "/target")
    assert _tree(packet) == before
