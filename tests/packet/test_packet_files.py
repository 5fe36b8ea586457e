"""Packet files that are not bounded regular files: refused with a code, never read or waited on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client

from assay.errors import AssayError
from assay.mcp.server import build_server
from assay.ops import call
from assay.packet.layout import MAX_PACKET_FILE_BYTES
from assay.packet.validate import validate
from assay_testing import Project
from packet_testing import example_packet


def _fifo_in_place_of(root: Path, path: str) -> None:
    (root / path).unlink()
    os.mkfifo(root / path)


def _issue(root: Path) -> tuple[str, str, str]:
    issues = validate(root).issues
    assert len(issues) == 1, issues
    return issues[0].code, issues[0].path, issues[0].pointer


@pytest.mark.timeout(30)
@pytest.mark.parametrize("path", ["manifest.json", "claims.json"])
def test_validate_refuses_a_fifo_canonical_file(tmp_path: Path, path: str) -> None:
    """A FIFO in place of a canonical file is NOT_REGULAR_FILE at once, without hanging."""
    example_packet(tmp_path / "p", "quick")
    _fifo_in_place_of(tmp_path / "p", path)
    assert _issue(tmp_path / "p") == ("NOT_REGULAR_FILE", path, "")


@pytest.mark.timeout(30)
def test_validate_refuses_a_fifo_source_capture(tmp_path: Path) -> None:
    """A FIFO in place of a source capture is reported at the manifest field naming it."""
    builder = example_packet(tmp_path / "p", "quick")
    capture = builder.manifest["sources"][0]["capture"]["path"]
    _fifo_in_place_of(tmp_path / "p", capture)
    assert _issue(tmp_path / "p") == ("NOT_REGULAR_FILE", "manifest.json",
                                      "/sources/0/capture/path")


@pytest.mark.timeout(30)
def test_validate_refuses_a_fifo_review(tmp_path: Path) -> None:
    """A FIFO in place of a listed review result is reported at its artifact entry."""
    builder = example_packet(tmp_path / "p", "standard")
    index, ref = next((i, a) for i, a in enumerate(builder.manifest["artifacts"])
                      if a["path"].startswith("reviews/semantic/"))
    _fifo_in_place_of(tmp_path / "p", ref["path"])
    assert _issue(tmp_path / "p") == ("NOT_REGULAR_FILE", "manifest.json",
                                      f"/artifacts/{index}/path")


def test_validate_refuses_a_sparse_huge_ledger_unread(tmp_path: Path) -> None:
    """A 1 GiB sparse claims.json is FILE_TOO_LARGE, and validating it stays small in memory."""
    example_packet(tmp_path / "p", "quick")
    with open(tmp_path / "p" / "claims.json", "r+b") as handle:
        handle.truncate(1 << 30)
    # VmHWM is this process's own peak (ru_maxrss would carry the forking parent's).
    script = ("import json, sys\nfrom assay.packet.validate import validate\n"
              "out = validate(sys.argv[1])\n"
              "peak = next(line for line in open('/proc/self/status') if line.startswith('VmHWM'))\n"
              "print(json.dumps({'codes': [i.code for i in out.issues],"
              " 'rss_kib': int(peak.split()[1])}))\n")
    proc = subprocess.run([sys.executable, "-c", script, str(tmp_path / "p")],
                          capture_output=True, text=True, check=True, timeout=120)
    seen = json.loads(proc.stdout)
    assert seen["codes"] == ["FILE_TOO_LARGE"]
    assert seen["rss_kib"] < 256 * 1024
    assert MAX_PACKET_FILE_BYTES < 1 << 30


@pytest.mark.timeout(30)
def test_packet_source_refuses_a_fifo(tmp_path: Path) -> None:
    """``packet source --file`` on a FIFO is file_not_regular and captures nothing."""
    call("packet.init", {"dir": str(tmp_path / "p"), "objective": "Is a FIFO a source?"})
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(AssayError) as caught:
        call("packet.source", {"dir": str(tmp_path / "p"), "source_id": "s",
                               "file": str(tmp_path / "fifo")})
    assert caught.value.code == "file_not_regular"
    assert not (tmp_path / "p" / "raw" / "sources" / "s.txt").exists()


@pytest.mark.timeout(60)
def test_cli_validate_refuses_a_fifo_ledger(tmp_path: Path) -> None:
    """Through the real CLI a FIFO ledger answers exit 1 with its issue."""
    example_packet(tmp_path / "p", "quick")
    _fifo_in_place_of(tmp_path / "p", "claims.json")
    result = Project(root=tmp_path).run("packet", "validate", str(tmp_path / "p"), timeout=30)
    assert result.code == 1
    assert [i["code"] for i in result.json["data"]["issues"]] == ["NOT_REGULAR_FILE"]


@pytest.mark.anyio
@pytest.mark.timeout(30)
async def test_mcp_validate_refuses_a_fifo_ledger(tmp_path: Path) -> None:
    """Over MCP the packet_validate tool returns the FIFO issue instead of never answering."""
    example_packet(tmp_path / "p", "quick")
    _fifo_in_place_of(tmp_path / "p", "claims.json")
    async with Client(build_server()) as client:
        result = await client.call_tool("packet_validate", {"dir": str(tmp_path / "p")})
    envelope = result.structured_content
    assert envelope is not None and envelope["ok"] is True
    assert [i["code"] for i in envelope["data"]["issues"]] == ["NOT_REGULAR_FILE"]


@pytest.fixture
def anyio_backend() -> str:
    """The MCP server runs on asyncio."""
    return "asyncio"


def test_validate_refuses_a_path_longer_than_a_file_name(tmp_path: Path) -> None:
    """An artifact path with a component longer than the filesystem allows is INVALID_PATH."""
    builder = example_packet(tmp_path / "p", "quick")
    builder.manifest["artifacts"].append({"path": "raw/dossiers/" + "x" * 300,
                                          "digest": "sha256:" + "0" * 64})
    (tmp_path / "p/manifest.json").write_text(json.dumps(builder.manifest))
    assert _issue(tmp_path / "p") == ("INVALID_PATH", "manifest.json", "/artifacts/2/path")

