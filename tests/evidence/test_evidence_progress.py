"""The live progress display: shown on a terminal console, absent on a pipe."""

from __future__ import annotations

import io
import os
from pathlib import Path

from evidence_helpers import PYTHON
from rich.console import Console

from assay.config import EvidenceCommand
from assay.evidence.commands import run_command
from assay.evidence.progress import TerminalReporter, reporter_for

ENV = {"PATH": os.environ["PATH"]}


class FakeTTY(io.StringIO):
    """A text stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_progress_reporter_for_pipe_is_none() -> None:
    """On a pipe (or when not interactive) there is no reporter at all."""
    assert reporter_for(True, io.StringIO()) is None
    assert reporter_for(False, FakeTTY()) is None


def test_progress_reporter_for_terminal() -> None:
    """Interactive on a terminal gives a terminal reporter."""
    assert isinstance(reporter_for(True, FakeTTY()), TerminalReporter)


def test_progress_terminal_reporter_shows_name_line_and_outcome(tmp_path: Path) -> None:
    """The terminal display shows the command, its streamed last line, then its outcome."""
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=120, no_color=True)
    reporter = TerminalReporter(console)
    code = "import time\nprint('collecting 12 items', flush=True)\ntime.sleep(0.6)\n"
    obs = run_command(EvidenceCommand(name="unit", argv=(PYTHON, "-c", code)), root=tmp_path,
                      environ=ENV, reporter=reporter)
    text = out.getvalue()
    assert obs.status == "passed"
    assert "collecting 12 items" in text
    assert "passed unit in" in text
