"""Build the click application from the operations registry and run it.

This is the only place the CLI translates errors: :func:`run` turns an
:class:`~assay.errors.AssayError`, a click usage error or an unexpected
exception into an exit status and one error object on stderr.
"""

from __future__ import annotations

import sys
import traceback
from typing import Any

import click

from assay.cli import debug_requested, internal_error, is_tty, json_requested, read_stdin_text
from assay.errors import EXIT_INTERNAL, AssayError, UsageError
from assay.ops import Argument, Invocation, Operation, call, lookup, operations

_FORMAT = click.Option(["--format", "output_format"], type=click.Choice(["json", "table"]),
                       default=None, help="Output format (default: json on pipes, table on a TTY).")
_DEBUG = click.Option(["--debug"], is_flag=True, help="Show a traceback for internal errors.")


def _click_type(schema: dict[str, Any]) -> click.ParamType[Any]:
    if "enum" in schema:
        return click.Choice([str(v) for v in schema["enum"]])
    kind = schema.get("type")
    if kind == "integer":
        return click.INT
    if kind == "number":
        return click.FLOAT
    return click.STRING


def _param(arg: Argument) -> click.Parameter:
    schema = dict(arg.schema)
    opt = arg.cli_name or ""  # every option binding has one; literals never use it
    if arg.binding == "flag":
        return click.Option([opt, arg.name], is_flag=True, default=None, help=arg.help)
    if arg.binding == "literal":
        return click.Argument([arg.name], required=arg.required)
    if arg.binding == "literals":
        return click.Argument([arg.name], nargs=-1, required=arg.required)
    if arg.binding == "json_file":
        return click.Option([opt, arg.name], metavar="FILE|-", required=arg.required,
                            help=arg.help)
    if schema.get("type") == "array":
        return click.Option([opt, arg.name], multiple=True,
                            type=_click_type(dict(schema.get("items", {}))), help=arg.help)
    return click.Option([opt, arg.name], type=_click_type(schema),
                        required=arg.required, help=arg.help)


def _read_json_file(arg: Argument, path: str) -> Any:
    """Read (bounded, see :mod:`assay.inputs`) and strictly parse one JSON input."""
    from assay.canonical import parse
    from assay.inputs import read_bounded

    return parse(read_bounded(path, where="/" + arg.name, label=arg.cli_name or arg.name,
                              stdin=sys.stdin.buffer.read))


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


def _leaf(op: Operation) -> click.Command:
    def callback(**params: Any) -> int:
        output_format = params.pop("output_format", None)
        params.pop("debug", None)
        args = _collect(op, params)
        inv = Invocation(surface="cli", interactive=is_tty(sys.stderr),
                         stdin=sys.stdin.buffer.read)
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

    params = [_param(a) for a in op.all_arguments if a.binding != "stdin"]
    return click.Command(
        op.cli_path[-1],
        callback=callback,
        params=[*params, _FORMAT, _DEBUG],
        help=op.description or op.summary,
        short_help=op.summary,
        context_settings={"help_option_names": ["--help", "-h"]},
    )


def _render(op: Operation, envelope: dict[str, Any], args: dict[str, Any],
            output_format: str | None) -> None:
    from assay.cli import render

    raw = render.RAW.get(op.name)
    text = raw(envelope, args) if raw is not None else None
    if text is not None:
        sys.stdout.write(text)
        return
    if output_format == "json" or (output_format is None and not is_tty(sys.stdout)):
        sys.stdout.write(render.json_line(envelope))
        return
    render.readable(op, envelope)


def _launchers(root: click.Group) -> None:
    @root.command("mcp", help="Run the MCP server on stdio (one tool per operation).")
    @click.option("--cwd", default=None, help="Default project directory for tool calls.")
    @click.option("--db", default=None, help="Default ledger URL for tool calls.")
    @click.option("--as", "principal", default=None, help="Default principal for tool calls.")
    def mcp_command(cwd: str | None, db: str | None, principal: str | None) -> int:
        from assay.mcp.server import serve

        serve(cwd=cwd, db=db, principal=principal)
        return 0

    @root.command("demo", help="Tell assay's story on a temporary project with the SQLite ledger.")
    @click.option("--keep", "keep", default=None, metavar="DIR",
                  help="Build the demo project in DIR and keep it.")
    def demo_command(keep: str | None) -> int:
        from assay.demo import run_demo

        return run_demo(keep=keep)


def build() -> click.Group:
    """The whole ``assay`` command tree."""
    root = click.Group(
        "assay",
        help="Assay: an evidence ledger and work governor for AI coding agents.",
        context_settings={"help_option_names": ["--help", "-h"]},
    )
    root.params.append(click.Option(["--version"], is_flag=True, expose_value=False,
                                    is_eager=True, help="Print the version and exit.",
                                    callback=_print_version))
    for op in operations():
        group = root
        for part in op.cli_path[:-1]:
            sub = group.commands.get(part)
            if sub is None:
                sub = click.Group(part, help=f"{part} operations.")
                group.add_command(sub)
            assert isinstance(sub, click.Group), f"{part} is both a command and a group"
            group = sub
        group.add_command(_leaf(op))
    _launchers(root)
    return root


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        from assay import __version__

        click.echo(f"assay {__version__}")
        ctx.exit(0)


def _json_help(args: list[str]) -> int:
    head = args[: args.index("--")] if "--" in args else args
    words = [w for w in head if not w.startswith("-")]
    if "json" in words:
        words.remove("json")
    names = [op.name for op in operations()]
    for length in range(len(words), 0, -1):
        name = ".".join(words[:length])
        if name in names:
            sys.stdout.write(_json_line(lookup(name).describe()))
            return 0
    prefix = ".".join(words)
    entries = [op.describe() for op in operations()
               if not prefix or op.name == prefix or op.name.startswith(prefix + ".")]
    sys.stdout.write(_json_line({"operations": entries}))
    return 0


def _json_line(value: Any) -> str:
    from assay.cli.render import json_line

    return json_line(value)


def run(args: list[str]) -> int:
    """Run the CLI on ``args``; return the exit status."""
    as_json = json_requested(args) or not is_tty(sys.stderr)
    head = args[: args.index("--")] if "--" in args else args
    try:
        if ("--help" in head or "-h" in head) and json_requested(args):
            return _json_help(args)
        result = build().main(args, prog_name="assay", standalone_mode=False)
        return int(result or 0)
    except AssayError as err:
        return _fail(err, as_json)
    except click.exceptions.NoSuchOption as exc:
        return _fail(UsageError(exc.format_message(), code="unknown_option"), as_json)
    except click.exceptions.UsageError as exc:
        return _fail(UsageError(exc.format_message()), as_json)
    except click.exceptions.Abort:
        return _fail(AssayError("interrupted", code="aborted"), as_json)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except BrokenPipeError:
        return 0
    except Exception as exc:  # noqa: BLE001 - the one place a bug becomes exit 70
        if debug_requested(args):
            traceback.print_exc()
        _fail(internal_error(exc), as_json)
        return EXIT_INTERNAL


def _fail(err: AssayError, as_json: bool) -> int:
    from assay.cli.render import fail

    return fail(err, as_json)

