"""The bounded regular-file reader: FIFOs, devices, links and huge files are refused unread."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assay.inputs import InputRefused, read_bounded, read_regular


def refusal(path: Path, **kw: object) -> InputRefused:
    with pytest.raises(InputRefused) as caught:
        read_regular(path, **kw)  # type: ignore[arg-type]
    return caught.value


def test_read_regular_reads_a_regular_file(tmp_path: Path) -> None:
    """A regular file within the bound is returned byte for byte."""
    (tmp_path / "f").write_bytes(b"\x00abc\xff")
    assert read_regular(tmp_path / "f") == b"\x00abc\xff"


@pytest.mark.timeout(20)
def test_read_regular_refuses_a_fifo_without_blocking(tmp_path: Path) -> None:
    """A FIFO with no writer is refused at once instead of blocking the open."""
    os.mkfifo(tmp_path / "fifo")
    found = refusal(tmp_path / "fifo")
    assert (found.reason, found.code) == ("not_regular", "file_not_regular")


def test_read_regular_refuses_a_device(tmp_path: Path) -> None:
    """A character device (``/dev/zero``) is refused before any read."""
    found = refusal(Path("/dev/zero"), follow_symlinks=True)
    assert found.reason == "not_regular"


def test_read_regular_refuses_a_directory(tmp_path: Path) -> None:
    """A directory is not a file."""
    assert refusal(tmp_path).reason == "not_regular"


def test_read_regular_refuses_a_sparse_huge_file_from_its_size(tmp_path: Path) -> None:
    """A 1 GiB sparse file is refused from fstat with its size, not read."""
    path = tmp_path / "huge.json"
    with open(path, "wb") as handle:
        handle.truncate(1 << 30)
    found = refusal(path)
    assert (found.reason, found.code, found.size) == ("too_large", "resource_limit", 1 << 30)


def test_read_regular_bound_is_inclusive(tmp_path: Path) -> None:
    """Exactly ``limit`` bytes are read; one more is refused."""
    (tmp_path / "f").write_bytes(b"x" * 10)
    assert read_regular(tmp_path / "f", limit=10) == b"x" * 10
    assert refusal(tmp_path / "f", limit=9).reason == "too_large"


def test_read_regular_does_not_follow_a_final_symlink(tmp_path: Path) -> None:
    """A final-component symlink is refused unless following is asked for."""
    (tmp_path / "real").write_bytes(b"data")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert refusal(tmp_path / "link").reason == "symlink"
    assert read_regular(tmp_path / "link", follow_symlinks=True) == b"data"


def test_read_regular_missing_file(tmp_path: Path) -> None:
    """A missing file is ``file_not_found`` with the caller's pointer."""
    found = refusal(tmp_path / "nope", where="/file")
    assert (found.reason, found.code, found.pointer) == ("missing", "file_not_found", "/file")


def test_read_regular_relative_to_a_directory_descriptor(tmp_path: Path) -> None:
    """With ``dir_fd`` the path is resolved from that directory."""
    (tmp_path / "f").write_bytes(b"near")
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        assert read_regular("f", dir_fd=fd) == b"near"
    finally:
        os.close(fd)


def test_read_bounded_still_reads_named_files(tmp_path: Path) -> None:
    """The input reader for named files keeps working as before."""
    (tmp_path / "doc.json").write_bytes(b"{}")
    assert read_bounded(str(tmp_path / "doc.json"), where="/x", label="doc") == b"{}"
