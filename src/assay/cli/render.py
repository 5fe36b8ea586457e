"""Rendering of operation results for people and for pipes.

JSON output is one canonical line per result, so the same ledger revision
and inputs print byte-identical text. Readable output (a terminal, or
``--format table``) goes through ``rich`` when available, which honours
``NO_COLOR``; rich is imported only here and only for readable output.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any

from assay.errors import AssayError
from assay.ops import Operation

__all__ = ["RAW", "READABLE", "json_line", "readable", "readable_error"]


def json_line(value: Any) -> str:
    """One canonical JSON line (RFC 8785) followed by a newline."""
    from assay.canonical import canonical_text

    return canonical_text(value) + "\n"


def _canonical_raw(envelope: dict[str, Any], args: dict[str, Any]) -> str:
    data = envelope["data"]
    if args.get("digest"):
        return str(data["digest"]) + "\n"
    if args.get("fingerprint"):
        return str(data["fingerprint"]) + "\n"
    return str(data["canonical"]) + "\n"


def _get_raw(envelope: dict[str, Any], args: dict[str, Any]) -> str | None:
    if args.get("raw"):
        return str(envelope["data"]["raw"]) + "\n"
    return None


# Operations whose CLI output is bare text (whatever the format) when the
# function returns a string; None falls back to the normal rendering.
RAW: dict[str, Callable[[dict[str, Any], dict[str, Any]], str | None]] = {
    "canonical": _canonical_raw,
    "get": _get_raw,
}

# Operation name -> function that prints a readable view of its envelope.
READABLE: dict[str, Callable[[dict[str, Any]], None]] = {}


def _console(stderr: bool = False) -> Any:
    from rich.console import Console

    return Console(stderr=stderr, no_color=bool(os.environ.get("NO_COLOR")) or None,
                   highlight=False, soft_wrap=True)


def readable(op: Operation, envelope: dict[str, Any]) -> None:
    """Print a readable view of a successful result."""
    special = READABLE.get(op.name)
    if special is not None:
        special(envelope)
        return
    console = _console()
    revision = envelope.get("ledger_revision")
    title = f"[bold]{op.name}[/bold]" + (f"  (ledger revision {revision})" if revision else "")
    console.print(title)
    console.print_json(json.dumps(envelope["data"], ensure_ascii=False))
    for step in envelope.get("next", []):
        console.print(f"next: {step}")


def readable_error(err: AssayError) -> None:
    """Print an error for a person: code, message, pointer, action."""
    try:
        console = _console(stderr=True)
    except ImportError:  # pragma: no cover - rich is a dependency
        sys.stderr.write(f"error [{err.code}]: {err.message}\n")
        return
    from rich.markup import escape

    console.print(f"[bold red]error[/bold red] {escape(f'[{err.code}]')}: {escape(err.message)}")
    if err.pointer is not None:
        console.print(f"  at {escape(err.pointer)}")
    if err.action:
        console.print(f"  next: {escape(err.action)}")
