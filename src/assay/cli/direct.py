"""One operation call from the command line, parsed without click when the words are plain.

Importing click takes about three times an empty interpreter's start-up in
CPU (bench_cli_start, "python -c 'import click'"), more than the 4x goal
leaves for the whole of a ``get``. Most calls are plain: the command
path, known options with their values, flags, and literals after ``--``.
:func:`run_direct` parses exactly those words the way the click command
built for the same operation would (:mod:`assay.cli.app`) and runs the
operation; anything else (help, an unknown, repeated or malformed option, a
value click would convert or refuse, a missing argument) goes to click,
which parses and reports it as always. A differential test holds the two
parsers to the same parameters.

The rest of a call is shared by both paths and lives here: collecting the
arguments (:func:`execute`), rendering the result, and translating errors
into an exit status and one error object on stderr (:func:`translate`).
"""

from __future__ import annotations

import sys

from assay.cli import (
    debug_requested,
    internal_error,
    is_tty,
    json_requested,
    on_terminal,
    read_stdin_text,
)
from assay.ops import Argument
from assay.ops.argv import command_path as command_words
from assay.ops.argv import parse as parse_words

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from assay.errors import AssayError
    from assay.ops import Operation

__all__ = ["COMMON_OPTIONS", "command_words", "execute", "fail", "interrupted", "parse",
           "run_direct", "translate"]

# The options every command has besides its operation's arguments.
COMMON_OPTIONS = (
    Argument("output_format", {"enum": ["json", "table"]},
             "Output format (default: json on pipes, table on a TTY).", cli="--format"),
    Argument("debug", {"type": "boolean"}, "Show a traceback for internal errors.",
             binding="flag"),
)


def run_direct(args: list[str]) -> int | None:
    """Run ``args`` without click and return the exit status, or None when click must parse them."""
    from assay.ops import operation_for

    found = operation_for(command_words(args))
    if found is None:
        return None
    op, length = found
    params = parse(op, args[length:])
    if params is None:
        return None
    try:
        return execute(op, params)
    except (EOFError, KeyboardInterrupt):
        return interrupted(args)
    except Exception as exc:  # noqa: BLE001 - translate() is where a bug becomes exit 70
        return translate(exc, args)


def parse(op: Operation, words: list[str]) -> dict[str, Any] | None:
    """The parameters click would pass for ``words`` (after the command path), or None.

    The registry's own reading (:func:`assay.ops.argv.parse`) with the
    options every command has (:data:`COMMON_OPTIONS`).
    """
    return parse_words(op, words, COMMON_OPTIONS)


def execute(op: Operation, params: dict[str, Any]) -> int:
    """Call ``op`` with the parsed ``params`` and print its result; return the exit status."""
    from assay.ops import Invocation, call

    output_format = params.pop("output_format", None)
    params.pop("debug", None)
    args = _collect(op, params)
    inv = Invocation(surface="cli", interactive=is_tty(sys.stderr), stdin=sys.stdin.buffer.read)
    try:
        if inv.interactive:
            from assay.cli.render import working

            with working(op, inv.interactive):
                envelope, code = call(op.name, args, inv)
        else:
            envelope, code = call(op.name, args, inv)
    finally:
        inv.close()
    _render(op, envelope, args, output_format)
    return code


def _collect(op: Operation, params: dict[str, Any]) -> dict[str, Any]:
    args: dict[str, Any] = {}
    for arg in op.all_arguments:
        if arg.binding == "stdin":
            args[arg.name] = read_stdin_text()
            continue
        value = params.get(arg.name)
        if value is None or value == () or value is False:
            continue
        if arg.binding == "json_file":
            value = _read_json_file(arg, value)
        elif isinstance(value, tuple):
            value = list(value)
        args[arg.name] = value
    return args


def _read_json_file(arg: Argument, path: str) -> Any:
    """Read (bounded, see :mod:`assay.inputs`) and strictly parse one JSON input.

    Every error names the option and the file, and points into the argument.
    """
    from assay.canonical import parse as parse_json
    from assay.errors import AssayError
    from assay.inputs import in_input, read_bounded

    where, label = "/" + arg.name, arg.cli_name or arg.name
    raw = read_bounded(path, where=where, label=label, stdin=sys.stdin.buffer.read)
    try:
        return parse_json(raw)
    except AssayError as err:
        raise in_input(err, label=label, path=path, where=where) from None


def _render(op: Operation, envelope: dict[str, Any], args: dict[str, Any],
            output_format: str | None) -> None:
    from assay.cli import render

    text = op.raw(envelope, args) if op.raw is not None else None
    if text is None and (output_format == "json"
                         or (output_format is None and not is_tty(sys.stdout))):
        text = render.json_line(envelope)
    if text is not None:
        sys.stdout.write(on_terminal(text, sys.stdout))
        return
    render.readable(op, envelope)


def interrupted(args: list[str], *, echoed: bool = False) -> int:
    """Ctrl-C or end of input while a command runs: a blank line, then the ``aborted`` error."""
    from assay.errors import AssayError

    if not echoed:
        sys.stderr.write("\n")  # closes the terminal's ^C echo (click writes its own)
    return fail(AssayError("interrupted", code="aborted"), args)


def translate(exc: Exception, args: list[str]) -> int:
    """The one place an exception from a command becomes an exit status and an error object."""
    from assay.errors import EXIT_INTERNAL, AssayError

    if isinstance(exc, AssayError):
        return fail(exc, args)
    if isinstance(exc, BrokenPipeError):
        # The reader went away (`assay find | head -1`): stop quietly, as click does.
        _silence_stdout()
        return 1
    if debug_requested(args):
        import traceback

        traceback.print_exc()
    fail(internal_error(exc, args), args)
    return EXIT_INTERNAL


def _silence_stdout() -> None:
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def fail(err: AssayError, args: list[str]) -> int:
    """Print ``err`` on stderr for the command line ``args``; return its exit status.

    One JSON line with ``--format json`` or when stderr is not a terminal,
    readable text otherwise (see :func:`assay.cli.render.fail`).
    """
    from assay.cli.render import fail as render_fail

    return render_fail(err, json_requested(args) or not is_tty(sys.stderr))
