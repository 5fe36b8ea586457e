"""The ``assay`` command line: generated from the operations registry.

Each registered operation ``a.b`` becomes ``assay a b``; its arguments become
options, flags or literals after ``--`` as the registry binds them. The CLI
parses, calls exactly one operation, and renders: JSON (one canonical line)
when stdout is not a terminal or with ``--format json``, readable text on a
terminal. Errors are rendered in one place (:func:`assay.cli.render.fail`)
on stderr.

Two commands are surface launchers rather than operations: ``assay mcp``
(the MCP server) and ``assay demo`` (the guided story).

Every call pays for its start-up, so click loads only when it is needed.
``assay --version`` and ``assay canonical [--digest|--fingerprint]``
answer before anything else loads (:mod:`assay.cli.canonical`); a plain
call of any other operation is parsed without click and imports only that
operation's module (:mod:`assay.cli.direct`); help, usage errors and the
launchers go through click (:mod:`assay.cli.app`), which builds only the
commands the words can name.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn

    from assay.errors import AssayError

__all__ = ["dispatch", "main"]


def _version() -> str:
    from assay import __version__

    return __version__


def main(argv: list[str] | None = None) -> NoReturn:
    """Entry point of the ``assay`` console script.

    Once the command has answered, every object still alive is moved out of
    the cyclic collector's sight (``gc.freeze``): the interpreter's final
    collection would otherwise walk them all (modules, classes, the
    command's data) to free memory the exiting process gives back anyway,
    about a twentieth of a ``work check``. Everything the command opened is
    closed by then (the ledger by its invocation, output flushed at exit).
    """
    status = dispatch(list(sys.argv[1:] if argv is None else argv))
    import gc

    gc.freeze()
    sys.exit(status)


def dispatch(args: list[str]) -> int:
    """Run the command line ``args`` on the cheapest path that can; return the exit status."""
    # Agents call `assay --version` to probe for the tool: answer before anything loads.
    if args == ["--version"]:
        sys.stdout.write(f"assay {_version()}\n")
        return 0
    if args[:1] == ["--debug"]:
        args = debug_after_command(args[1:])
    if args[:1] == ["canonical"] and is_plain_canonical(args[1:]):
        from assay.cli.canonical import run_canonical

        return run_canonical(args[1:])
    from assay.cli.direct import run_direct

    status = run_direct(args)
    if status is None:
        from assay.cli.app import run

        status = run(args)
    return status


# The commands that are not operations: they take no --debug of their own.
LAUNCHERS = ("mcp", "demo")


def debug_after_command(rest: list[str]) -> list[str]:
    """``assay --debug WORDS...`` as ``assay WORDS --debug ...``: --debug is every command's option.

    A launcher, or no command at all, keeps it first, where the top-level
    command takes it.
    """
    from assay.ops.argv import command_path

    words = command_path(rest)
    if not words or words[0] in LAUNCHERS:
        return ["--debug", *rest]
    return [*words, "--debug", *rest[len(words):]]


_CANONICAL_FLAGS = frozenset({"--digest", "--fingerprint"})


def is_plain_canonical(flags: list[str]) -> bool:
    """Whether ``assay canonical FLAGS`` may skip click: only distinct --digest/--fingerprint."""
    return set(flags) <= _CANONICAL_FLAGS and len(set(flags)) == len(flags)


def read_stdin_text() -> str:
    """Standard input as text (bounded, see :mod:`assay.inputs`); not UTF-8 is ``invalid_utf8``."""
    from assay.inputs import read_stdin_bounded

    data = read_stdin_bounded()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        from assay.errors import AssayError

        raise AssayError(f"standard input is not valid UTF-8 (byte {exc.start})",
                         code="invalid_utf8", details={"offset": exc.start}) from None


def internal_error(exc: BaseException, args: list[str] | None = None) -> AssayError:
    """The error object for a bug: anything but an AssayError reaching the surface.

    Its action names the command again with ``--debug`` right after
    ``assay``, where it works for every command.
    """
    from assay.errors import AssayError
    from assay.ops.argv import command_path

    words = command_path(args or [])
    again = " ".join(["assay", "--debug", *words, "..."] if words else ["assay", "--debug", "..."])
    return AssayError(f"internal error: {type(exc).__name__}: {exc}", code="internal_error",
                      action=f"Rerun it as '{again}' to see the traceback, and report it.")


def is_tty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def on_terminal(text: str, stream: Any) -> str:
    """``text`` as written to ``stream``: every control made visible when it is a terminal.

    JSON and bare text (``get --raw``, ``canonical``) keep their bytes on a
    pipe; a terminal gets the same text with controls written as ``\\uXXXX``
    escapes (see :mod:`assay.terminal`), which for JSON is the same value.
    """
    if not is_tty(stream):
        return text
    from assay.terminal import visible

    return visible(text)


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
