"""Rendering of operation results for people and for pipes.

JSON output is one canonical line per result, so the same ledger revision
and inputs print byte-identical text. Readable output (a terminal, or
``--format table``) goes through ``rich`` when available, which honours
``NO_COLOR``; rich is imported only here and only for readable output.

An operation declares its own readable view (``view``, a function in
:mod:`assay.ops.views`) and its bare text (``raw``); this module keeps the
console every view prints on and the fallback for an operation without a
view: the envelope's data as indented JSON, then its next steps.

Two rules hold for every readable view, here in one place. Nothing a view
shows reaches the terminal as a control: :func:`readable` and
:func:`readable_error` pass the whole result or error through
:func:`assay.terminal.visible` before any view sees it. And nothing is cut:
a plain line is written whole (the terminal wraps it, a pipe keeps it one
line, so a printed command stays one line), while trees and tables wrap
their text to the width and fold a word longer than a column, never crop it
(see :func:`_console`).
"""

from __future__ import annotations

import json
import os
import sys

from assay.cli import on_terminal
from assay.errors import EXIT_USAGE, AssayError
from assay.ops import Operation

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["fail", "json_line", "readable", "readable_error", "working"]


def json_line(value: Any) -> str:
    """One canonical JSON line (RFC 8785) followed by a newline.

    A result may embed many records: it is bounded by what it holds, not by
    the input bounds of one document (:func:`assay.canonical.output_text`).
    """
    from assay.canonical import output_text

    return output_text(value) + "\n"


_CONSOLE: Any = None


def _console(stderr: bool = False) -> Any:
    """A rich console for readable output that never cuts text (see the module docstring)."""
    global _CONSOLE
    if _CONSOLE is None:
        from rich.console import Console
        from rich.errors import StyleError
        from rich.table import Table
        from rich.text import Span

        class Readable(Console):
            def print(self, *objects: Any, **kw: Any) -> None:
                if any(not isinstance(o, str) for o in objects):
                    # A tree or table: wrap to the width rather than crop, fold long words.
                    kw.setdefault("soft_wrap", False)
                    for table in (o for o in objects if isinstance(o, Table)):
                        for column in table.columns:
                            if column.overflow == "ellipsis":
                                column.overflow = "fold"
                super().print(*objects, **kw)

            def render_str(self, text: str, **kw: Any) -> Any:
                # No view makes a hyperlink, so a [link=...] tag came from data a view
                # forgot to escape: drop the link (its OSC 8 sequence), keep the text.
                rendered = super().render_str(text, **kw)
                spans = []
                for span in rendered.spans:
                    try:
                        style = self.get_style(span.style)
                    except StyleError:
                        spans.append(span)
                        continue
                    spans.append(Span(span.start, span.end, style.update_link(None))
                                 if style.link else span)
                rendered.spans = spans
                return rendered

        _CONSOLE = Readable
    return _CONSOLE(stderr=stderr, no_color=bool(os.environ.get("NO_COLOR")) or None,
                    highlight=False, soft_wrap=True)


def readable(op: Operation, envelope: dict[str, Any]) -> None:
    """Print a readable view of a successful result, every control in it made visible."""
    from rich.markup import escape

    from assay.terminal import json_view, visible, visible_data

    console = _console()
    if op.view:
        from assay.ops.views import resolve

        resolve(op.view)(visible_data(envelope), console)
        _omitted(visible_data(envelope["data"]))
        return
    revision = envelope.get("ledger_revision")
    title = f"[bold]{op.name}[/bold]" + (f"  (ledger revision {revision})" if revision else "")
    console.print(title)
    console.print(json_view(envelope["data"]), soft_wrap=True)
    for step in envelope.get("next", []):
        console.print(f"next: {escape(visible(step))}")


def _omitted(data: Any) -> None:
    """Under a bounded answer's own view: what it left out and the reads that recover it."""
    if not isinstance(data, dict) or not data.get("truncated"):
        return
    import shlex

    from rich.markup import escape

    console = _console()
    counts = ", ".join(f"{n} {kind.replace('_', ' ')}" for kind, n in data["omitted"].items() if n)
    console.print(f"not shown: {escape(counts)}")
    for read in data.get("read_more", []):
        console.print(f"read: {escape(shlex.join(['assay', *read['read_args']]))}")


def fail(err: AssayError, as_json: bool) -> int:
    """Print ``err`` on stderr (one JSON line, or readable text); return its exit status."""
    if as_json:
        from assay.ops import error_envelope

        line = json.dumps(error_envelope(err), ensure_ascii=False, sort_keys=True,
                          separators=(",", ":")) + "\n"
        sys.stderr.write(on_terminal(line, sys.stderr))
    else:
        readable_error(err)
    return err.exit_code if err.exit_code else EXIT_USAGE


def readable_error(err: AssayError) -> None:
    """Print an error for a person: code, message, pointer, action (controls made visible)."""
    from assay.terminal import visible_data

    shown = visible_data(err.to_dict())
    try:
        console = _console(stderr=True)
    except ImportError:  # pragma: no cover - rich is a dependency
        sys.stderr.write(f"error [{err.code}]: {shown['message']}\n")
        return
    from rich.markup import escape

    console.print(f"[bold red]error[/bold red] {escape(f'[{err.code}]')}: "
                  f"{escape(shown['message'])}")
    if "pointer" in shown:
        console.print(f"  at {escape(shown['pointer'])}")
    if shown.get("action"):
        console.print(f"  next: {escape(shown['action'])}")


def working(op: Operation, interactive: bool) -> Any:
    """A context manager showing a spinner on stderr while ``op`` runs, on a terminal only.

    Only an operation that declares what it is busy with (``busy``) shows one;
    evidence runs and loop gates show their commands live instead.
    """
    import contextlib

    if not interactive or not op.busy:
        return contextlib.nullcontext()
    return _console(stderr=True).status(op.busy + "\u2026", spinner="dots")
