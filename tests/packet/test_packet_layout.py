"""Packet layout: init, path syntax, and symlink refusal before any read or write."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assay.canonical import parse
from assay.errors import AssayError
from assay.packet.layout import MANAGED_DIRS, PacketRoot, check_relative_path
from assay.packet.lifecycle import init_packet
from assay.packet.validate import validate


def test_layout_init_creates_every_directory(tmp_path: Path) -> None:
    """init lays out manifest.json, claims.json and every reviews/ and raw/ directory."""
    init_packet(tmp_path / "p", objective="Why?", profile="standard")
    for directory in MANAGED_DIRS:
        assert (tmp_path / "p" / directory).is_dir(), directory
    manifest = parse((tmp_path / "p/manifest.json").read_bytes())
    assert manifest["status"] == "preparing" and manifest["profile"] == "standard"
    assert parse((tmp_path / "p/claims.json").read_bytes())["revision"] == 1


def test_layout_init_packet_is_valid_but_unpublishable(tmp_path: Path) -> None:
    """A freshly initialised packet validates and is not publishable."""
    init_packet(tmp_path / "p", objective="Why?", profile="quick")
    outcome = validate(tmp_path / "p")
    assert outcome.valid and outcome.run is not None and not outcome.run.publishable


def test_layout_init_refuses_existing_packet(tmp_path: Path) -> None:
    """init never re-initialises a packet."""
    init_packet(tmp_path / "p", objective="Why?", profile="quick")
    with pytest.raises(AssayError) as err:
        init_packet(tmp_path / "p", objective="Again", profile="quick")
    assert err.value.code == "packet_exists"


def test_layout_init_refuses_symlinked_layout_directory(tmp_path: Path) -> None:
    """init refuses to create directories through a symlinked layout directory."""
    (tmp_path / "p").mkdir()
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", tmp_path / "p" / "raw")
    with pytest.raises(AssayError) as err:
        init_packet(tmp_path / "p", objective="Why?", profile="quick")
    assert err.value.code == "unsafe_packet_path"
    assert not (tmp_path / "p/manifest.json").exists()
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_layout_validate_missing_directory_is_operational_error(tmp_path: Path) -> None:
    """Validating a directory that does not exist raises packet_not_found."""
    with pytest.raises(AssayError) as err:
        validate(tmp_path / "nothing")
    assert err.value.code == "packet_not_found"


def test_layout_validate_symlinked_root_is_refused(tmp_path: Path) -> None:
    """A packet root given as a symlink is refused before anything is read."""
    init_packet(tmp_path / "p", objective="Why?", profile="quick")
    os.symlink(tmp_path / "p", tmp_path / "alias")
    with pytest.raises(AssayError) as err:
        validate(tmp_path / "alias")
    assert err.value.code == "packet_root_symlink"


@pytest.mark.parametrize("path,code", [
    ("../x", "PATH_ESCAPE"),
    ("a/../../x", "PATH_ESCAPE"),
    ("/etc/passwd", "PATH_ESCAPE"),
    ("a//b", "INVALID_PATH"),
    ("./a", "INVALID_PATH"),
    ("a\\b", "INVALID_PATH"),
    ("", "INVALID_PATH"),
])
def test_layout_path_syntax_rejections(path: str, code: str) -> None:
    """Malformed or escaping packet paths are refused with their code."""
    problem = check_relative_path(path)
    assert problem is not None and problem.code == code


def test_layout_ancestor_symlink_is_refused_before_read(tmp_path: Path) -> None:
    """A symlinked ancestor directory stops a read with SYMLINK_PATH."""
    (tmp_path / "real").mkdir()
    (tmp_path / "real/file.json").write_text("{}")
    (tmp_path / "p").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "p/sub")
    got = PacketRoot(tmp_path / "p").read("sub/file.json")
    assert not isinstance(got, bytes) and got.code == "SYMLINK_PATH"


def test_layout_write_refuses_final_symlink(tmp_path: Path) -> None:
    """A write through a final-component symlink is refused and the target is untouched."""
    (tmp_path / "p").mkdir()
    (tmp_path / "target.txt").write_text("keep")
    os.symlink(tmp_path / "target.txt", tmp_path / "p/packet.md")
    with pytest.raises(AssayError) as err:
        PacketRoot(tmp_path / "p").write("packet.md", b"new")
    assert err.value.code == "unsafe_packet_path"
    assert (tmp_path / "target.txt").read_text() == "keep"
