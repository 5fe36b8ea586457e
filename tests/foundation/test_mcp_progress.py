"""Progress over MCP: a long evidence run keeps a client with a short tool timeout waiting.

The command in these tests prints a line and then waits until the test's
progress callback has seen that line in a notification, so nothing depends
on how fast the machine is: without the notification the run would only end
at the command's own timeout, and fail.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from assay.mcp.server import ProgressReporter, build_server
from assay_testing import make_project

ASSAY = str(Path(sys.executable).parent / "assay")
pytestmark = pytest.mark.anyio
LINE = "collected 3 items"


@pytest.fixture
def anyio_backend() -> str:
    """The server runs on asyncio."""
    return "asyncio"


def _waiting_project(root: Path) -> tuple[Path, Path]:
    """A project whose `slow` check prints LINE, then waits for a go file (at most 60 s)."""
    go = root / "go"
    script = (f"import os, time\nprint({LINE!r}, flush=True)\nend = time.monotonic() + 60\n"
              f"while not os.path.exists({str(go)!r}) and time.monotonic() < end:\n"
              "    time.sleep(0.02)\nraise SystemExit(0 if os.path.exists("
              f"{str(go)!r}) else 3)\n")
    project = make_project(root, extra_toml=(
        "\n[evidence.commands.slow]\n"
        f"argv = {json.dumps([sys.executable, '-c', script])}\ntimeout = 120\n"))
    return project.root, go


class _Seen:
    """A progress callback that records every notification and opens the go file on LINE."""

    def __init__(self, go: Path) -> None:
        self.go = go
        self.notes: list[tuple[float, float | None, str | None]] = []

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.notes.append((progress, total, message))
        if message and LINE in message:
            self.go.touch()


def _check_notes(notes: list[tuple[float, float | None, str | None]]) -> None:
    progress = [p for p, _, _ in notes]
    messages = [m or "" for _, _, m in notes]
    assert progress == sorted(set(progress)), "progress must increase with every notification"
    assert messages[0] == "slow: started"
    assert any(LINE in m for m in messages)
    assert messages[-1].startswith("slow: passed in ")


async def test_mcp_evidence_run_over_stdio_sends_progress(tmp_path: Path) -> None:
    """Over real stdio, evidence_run with a progress token notifies start, output and end."""
    root, go = _waiting_project(tmp_path / "proj")
    seen = _Seen(go)
    params = StdioServerParameters(command=ASSAY, args=["mcp", "--cwd", str(root)])
    async with Client(params) as client:
        result = await client.call_tool("evidence_run", {"name": "slow"},
                                        progress_callback=seen)
    envelope = dict(result.structured_content or {})
    assert result.is_error is False, envelope
    assert envelope["data"]["status"] == "passed"
    _check_notes(seen.notes)


async def test_mcp_evidence_run_in_process_sends_progress(tmp_path: Path) -> None:
    """With the SDK's in-process client the same notifications reach the callback."""
    root, go = _waiting_project(tmp_path / "proj")
    seen = _Seen(go)
    async with Client(build_server(cwd=str(root))) as client:
        result = await client.call_tool("evidence_run", {"name": "slow"},
                                        progress_callback=seen)
    assert result.is_error is False
    _check_notes(seen.notes)


class _Observation:
    command_id = "unit"
    status = "failed"
    duration_ms = 1234


def test_mcp_progress_reporter_sends_a_changed_line_and_a_heartbeat() -> None:
    """The reporter sends on start, on a changed line (controls shown escaped), on a heartbeat, at the end."""
    sent: list[tuple[float, str]] = []
    reporter = ProgressReporter(lambda p, m: sent.append((p, m)), line_interval_s=0.0,
                                heartbeat_s=3600.0)
    reporter.started("unit", ("pytest",))
    reporter.tick(0.1)  # no line yet, no heartbeat due: nothing
    reporter.output("stdout", "tests/test_a.py ..\x1b[2K  \t40%")
    reporter.tick(1.0)
    reporter.tick(1.1)  # the same line again: nothing
    reporter.finished(_Observation())
    assert sent == [(1.0, "unit: started"), (2.0, "unit: 1s: tests/test_a.py ..\\u001b[2K 40%"),
                    (3.0, "unit: failed in 1234 ms")]
    beat: list[tuple[float, str]] = []
    quiet = ProgressReporter(lambda p, m: beat.append((p, m)), heartbeat_s=0.0)
    quiet.started("unit", ())
    quiet.tick(7.0)
    assert beat[-1] == (2.0, "unit: 7s")


def test_mcp_progress_message_is_bounded() -> None:
    """A very long output line is cut in the notification, never in what is recorded."""
    sent: list[str] = []
    reporter = ProgressReporter(lambda p, m: sent.append(m), line_interval_s=0.0)
    reporter.started("unit", ())
    reporter.output("stdout", "x" * 10_000)
    reporter.tick(1.0)
    assert 0 < len(sent[-1]) <= 300
