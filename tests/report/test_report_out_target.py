"""`assay report --out` onto something that is not a regular file is refused, never replaced."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest

from assay.errors import AssayError
from assay.ops import Invocation, call
from assay_testing import Project, make_project

INTENT = ('{"intent": {"version": 1, "brief": "b", "user_reference": "u", "boundaries": [], '
          '"non_goals": [], "requirements": [{"id": "R1", "text": "t", "acceptance": "a"}]}}')


@pytest.fixture
def reported(tmp_path: Path) -> Project:
    project = make_project(tmp_path / "p")
    project.ok("put", "--data-file", "-", "--", "knowledge:i", input=INTENT)
    return project


def _refused(project: Project, out: Path) -> dict:
    result = project.run("report", "--intent", "knowledge:i", "--out", str(out))
    assert result.code == 1, result.stderr
    error = result.error
    assert (error["code"], error["pointer"]) == ("report_unwritable", "/out")
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".report-")]
    return dict(error)


def test_report_out_fifo_is_refused_and_stays_a_fifo(reported: Project, tmp_path: Path) -> None:
    """--out naming a FIFO is report_unwritable; the FIFO is still there, unopened."""
    fifo = tmp_path / "pipe.html"
    os.mkfifo(fifo)
    error = _refused(reported, fifo)
    assert error["details"] == {"path": str(fifo), "kind": "a FIFO"}
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_report_out_device_node_is_refused_and_kept(reported: Project, tmp_path: Path) -> None:
    """--out naming a /dev/null-like character device is refused; the node is not replaced.

    A node made for the test, never the system's /dev/null: as root, a regression
    here would replace it.
    """
    node = tmp_path / "null.html"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating a device node needs CAP_MKNOD")
    error = _refused(reported, node)
    assert error["details"]["kind"] == "a character device"
    assert stat.S_ISCHR(os.lstat(node).st_mode)


def test_report_out_socket_directory_and_symlink_are_refused(reported: Project,
                                                            tmp_path: Path) -> None:
    """A socket, a directory and a symlink (even to a regular file) are each refused and kept."""
    sock_path = tmp_path / "s.html"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    folder = tmp_path / "dir.html"
    folder.mkdir()
    target = tmp_path / "real.html"
    target.write_text("mine", encoding="utf-8")
    link = tmp_path / "link.html"
    link.symlink_to(target)
    try:
        for out, kind in ((sock_path, "a socket"), (folder, "a directory"), (link, "a symlink")):
            assert _refused(reported, out)["details"]["kind"] == kind
    finally:
        sock.close()
    assert link.is_symlink() and target.read_text(encoding="utf-8") == "mine"


def test_report_out_regular_file_is_replaced(reported: Project, tmp_path: Path) -> None:
    """An existing regular file is still replaced by the page, as before."""
    out = tmp_path / "old.html"
    out.write_text("old", encoding="utf-8")
    data = reported.ok("report", "--intent", "knowledge:i", "--out", str(out))["data"]
    assert data["path"] == str(out) and out.read_bytes().startswith(b"<!DOCTYPE html>")


def test_report_out_fifo_is_refused_over_the_api(reported: Project, tmp_path: Path) -> None:
    """The report operation refuses a FIFO before reading the ledger (MCP and API alike)."""
    fifo = tmp_path / "pipe.html"
    os.mkfifo(fifo)
    inv = Invocation(cwd=str(reported.root))
    try:
        with pytest.raises(AssayError) as caught:
            call("report", {"intent": "knowledge:i", "out": str(fifo)}, inv)
    finally:
        inv.close()
    assert (caught.value.code, caught.value.pointer) == ("report_unwritable", "/out")


def test_report_out_with_dot_dot_prints_the_normalised_path(reported: Project,
                                                            tmp_path: Path) -> None:
    """`--out ../x.html` writes beside the project and prints that path without the `..`."""
    data = reported.ok("report", "--intent", "knowledge:i", "--out", "../x.html")
    written = tmp_path.resolve() / "x.html"
    assert data["data"]["path"] == str(written) and ".." not in data["data"]["path"]
    assert written.read_bytes().startswith(b"<!DOCTYPE html>")
    assert data["next"] == [f"Open {written} in a browser."]


def test_report_out_through_a_linked_directory_prints_where_it_was_written(
        reported: Project, tmp_path: Path) -> None:
    """`..` after a symlinked directory is resolved as the system opens it, not cut lexically."""
    (tmp_path / "elsewhere" / "deep").mkdir(parents=True)
    (reported.root / "link").symlink_to(tmp_path / "elsewhere" / "deep")
    data = reported.ok("report", "--intent", "knowledge:i", "--out", "link/../x.html")["data"]
    written = (tmp_path / "elsewhere" / "x.html").resolve()
    assert data["path"] == str(written) and written.is_file()
    assert not (reported.root / "x.html").exists()
