"""The ``assay`` command line: generated from the operations registry.

Each registered operation ``a.b`` becomes ``assay a b``; its arguments become
options, flags or literals after ``--`` as the registry binds them. The CLI
parses, calls exactly one operation, and renders: JSON (one canonical line)
when stdout is not a terminal or with ``--format json``, readable text on a
terminal. Errors are rendered in one place (:func:`_fail`) on stderr.

Two commands are surface launchers rather than operations: ``assay mcp``
(the MCP server) and ``assay demo`` (the guided story).
"""

from __future__ import annotations

import os
import sys
from typing import Any, NoReturn

__all__ = ["main"]


def _version() -> str:
    from assay import __version__

    return __version__


def main(argv: list[str] | None = None) -> NoReturn:
    """Entry point of the ``assay`` console script."""
    args = list(sys.argv[1:] if argv is None else argv)
    # Agents call `assay --version` to probe for the tool: answer before click loads.
    if args == ["--version"]:
        sys.stdout.write(f"assay {_version()}\n")
        sys.exit(0)
    from assay.cli.app import run

    sys.exit(run(args))


def is_tty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def json_requested(args: list[str]) -> bool:
    """Whether ``--format json`` appears among the options (before ``--``)."""
    head = args[: args.index("--")] if "--" in args else args
    for i, word in enumerate(head):
        if word == "--format=json" or (word == "--format" and head[i + 1 : i + 2] == ["json"]):
            return True
    return False


def debug_requested(args: list[str]) -> bool:
    head = args[: args.index("--")] if "--" in args else args
    return "--debug" in head or os.environ.get("ASSAY_DEBUG") == "1"
