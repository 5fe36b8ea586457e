"""A live progress display for command runs, on a terminal only.

:class:`TerminalReporter` implements the runner's ``Reporter`` hooks with a
``rich`` live line on standard error: a spinner, the command name, the
elapsed time and the last line the command printed (already redacted). When
the run ends the live line is replaced by one summary line. Controls in the
command's output and name are shown as visible escapes
(:func:`assay.terminal.visible`), never obeyed. On a pipe,
:func:`reporter_for` returns None and nothing at all is printed. ``rich`` is
imported only when a display is actually shown; ``NO_COLOR`` is honoured.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, TextIO

from assay.evidence.commands import CommandObservation
from assay.terminal import visible

__all__ = ["TerminalReporter", "reporter_for"]

_LINE_LIMIT = 120


class TerminalReporter:
    """Live status of one command at a time on a rich console (standard error by default)."""

    def __init__(self, console: Any | None = None) -> None:
        if console is None:
            from rich.console import Console

            console = Console(stderr=True, no_color=bool(os.environ.get("NO_COLOR")) or None,
                              highlight=False)
        self.console = console
        self.name = ""
        self.last = ""
        self.started_at = time.monotonic()
        self._live: Any = None

    def __rich__(self) -> Any:
        from rich.spinner import Spinner
        from rich.table import Table
        from rich.text import Text

        grid = Table.grid(padding=(0, 1))
        elapsed = time.monotonic() - self.started_at
        grid.add_row(Spinner("dots"), Text(self.name, style="bold"), Text(f"{elapsed:6.1f}s"),
                     Text(self.last[:_LINE_LIMIT], style="dim", overflow="ellipsis", no_wrap=True))
        return grid

    def started(self, name: str, argv: tuple[str, ...]) -> None:
        from rich.live import Live

        self.name = visible(name)
        self.last = ""
        self.started_at = time.monotonic()
        self._live = Live(self, console=self.console, refresh_per_second=8, transient=True)
        self._live.start()

    def output(self, stream: str, line: str) -> None:
        # The command's own output: a progress bar's carriage returns become spaces,
        # every other control a visible escape, so the live line obeys none of them.
        self.last = visible(line.replace("\r", " ").replace("\t", " "))

    def tick(self, elapsed_s: float) -> None:
        pass  # the live display reads the clock itself on each refresh

    def finished(self, observation: CommandObservation) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None
        from rich.markup import escape

        colour = {"passed": "green", "failed": "red"}.get(observation.status, "yellow")
        self.console.print(f"[{colour}]{observation.status}[/{colour}] "
                           f"{escape(visible(observation.command_id))}"
                           f" in {observation.duration_ms / 1000:.1f}s"
                           + (f" ({escape(visible(observation.reason))})"
                              if observation.reason else ""))


def reporter_for(interactive: bool, stream: TextIO | None = None) -> TerminalReporter | None:
    """A terminal reporter when ``interactive`` and standard error is a TTY, else None."""
    target = sys.stderr if stream is None else stream
    try:
        tty = bool(target.isatty())
    except (AttributeError, ValueError):
        tty = False
    if not (interactive and tty):
        return None
    return TerminalReporter()
