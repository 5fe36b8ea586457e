"""Build the click application from the operations registry and run it.

Click parses what :mod:`assay.cli.direct` leaves to it: help, usage errors
and any spelling that is not plain. Only the commands the words can name are
built, and only their operation modules imported (``assay work check``
builds one command, ``assay work --help`` the ``work`` group, ``assay
--help`` everything). :func:`run` turns a click usage error into an exit
status and one error object on stderr, and leaves every other exception to
:func:`assay.cli.direct.translate`.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from assay.cli import LAUNCHERS, json_requested
from assay.cli.direct import COMMON_OPTIONS, command_words, execute, fail, interrupted, translate
from assay.errors import UsageError
from assay.ops import GROUPS, Argument, Operation, command_operations, operation_for


def _click_type(schema: dict[str, Any]) -> click.ParamType[Any]:
    if "enum" in schema:
        return click.Choice([str(v) for v in schema["enum"]])
    kind = schema.get("type")
    if kind == "integer":
        return click.INT
    if kind == "number":
        return click.FLOAT
    return click.STRING


def _param(arg: Argument, help_text: str) -> click.Parameter:
    schema = dict(arg.schema)
    opt = arg.cli_name or ""  # every option binding has one; literals never use it
    if arg.binding == "flag":
        return click.Option([opt, arg.name], is_flag=True, default=None, help=help_text)
    if arg.binding == "literal":
        return click.Argument([arg.name], required=arg.required)
    if arg.binding == "literals":
        return click.Argument([arg.name], nargs=-1, required=arg.required)
    if arg.binding == "json_file":
        return click.Option([opt, arg.name], metavar="FILE|-", required=arg.required,
                            help=help_text)
    if schema.get("type") == "array":
        return click.Option([opt, arg.name], multiple=True,
                            type=_click_type(dict(schema.get("items", {}))), help=help_text)
    return click.Option([opt, arg.name], type=_click_type(schema),
                        required=arg.required, help=help_text)


def _leaf(op: Operation) -> click.Command:
    def callback(**params: Any) -> int:
        return execute(op, params)

    params = [_param(a, op.argument_help(a, "cli"))
              for a in (*op.all_arguments, *COMMON_OPTIONS) if a.binding != "stdin"]
    return click.Command(
        op.cli_path[-1],
        callback=callback,
        params=params,
        # Like every MCP tool description, the help ends with what a call writes.
        help=f"{op.help('cli')}\n\n{op.text(op.effect_line, 'cli')}",
        short_help=op.text(op.summary, "cli"),
        epilog=EXIT_STATUSES,
        context_settings={"help_option_names": ["--help", "-h"]},
    )


# Every command's help ends with the statuses a script can branch on (docs/errors.md).
EXIT_STATUSES = ("Exit status: 0 ok; 1 a negative answer (not ready) or invalid content; "
                 "2 usage; 3 conflict; 4 unavailable; 5 not set up (no project, a broken "
                 "assay.toml, no ledger yet); 6 not found; 70 internal error.")


def _launchers(root: click.Group) -> None:
    @root.command("mcp", help=(
        "Run the MCP server on stdio: one tool per operation of the profile. The agent "
        "profile (default) leaves out a person's operations (set-up, hooks, keys, bindings, "
        "approvals, retiring records), and its calls act on the ledger and as the principal "
        "given here; --profile admin offers every operation, for a person's client."),
        short_help="Run the MCP server on stdio (the agent's tools by default).")
    @click.option("--cwd", default=None, help="Default project directory for tool calls.")
    @click.option("--db", default=None, help="The ledger URL of every tool call.")
    @click.option("--as", "principal", default=None, help="The principal of every tool call.")
    @click.option("--profile", type=click.Choice(["agent", "admin"]), default="agent",
                  show_default=True, help="Which operations the server offers.")
    def mcp_command(cwd: str | None, db: str | None, principal: str | None,
                    profile: str) -> int:
        from assay.mcp.server import serve

        serve(cwd=cwd, db=db, principal=principal, profile=profile)
        return 0

    @root.command("demo", help="Tell assay's story on a temporary project with the SQLite ledger.",
                  short_help="Tell assay's story on a temporary SQLite project.")
    @click.option("--keep", "keep", default=None, metavar="DIR",
                  help="Build the demo project in DIR and keep it.")
    def demo_command(keep: str | None) -> int:
        from assay.demo import run_demo

        return run_demo(keep=keep)


def build(words: list[str] | tuple[str, ...] = ()) -> click.Group:
    """The ``assay`` command tree, or the part of it that ``words`` can name.

    With no words, every command; with ``work check``, that one command;
    with ``work``, the ``work`` group.
    """
    root = click.Group(
        "assay",
        help="Assay: an evidence ledger and work governor for AI coding agents.",
        context_settings={"help_option_names": ["--help", "-h"]},
    )
    root.params.append(click.Option(["--version"], is_flag=True, expose_value=False,
                                    is_eager=True, help="Print the version and exit.",
                                    callback=_print_version))
    # `assay --debug COMMAND` reaches a command's own --debug (assay.cli.dispatch);
    # here it is for the launchers and for no command at all.
    root.params.append(click.Option(["--debug"], is_flag=True, expose_value=False,
                                    help="Show a traceback for internal errors."))
    for op in [] if words[:1] and words[0] in LAUNCHERS else command_operations(words):
        group = root
        for part in op.cli_path[:-1]:
            sub = group.commands.get(part)
            if sub is None:
                sub = click.Group(part, help=GROUPS.get(part, f"The {part} commands."))
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
    found = operation_for(words)
    if found is not None:
        sys.stdout.write(_json_line(found[0].describe()))
        return 0
    entries = [op.describe() for op in command_operations(words)]
    sys.stdout.write(_json_line({"operations": entries}))
    return 0


def _json_line(value: Any) -> str:
    from assay.cli.render import json_line

    return json_line(value)


def _usage_action(exc: click.exceptions.UsageError, args: list[str]) -> str:
    """What to do about a command line click refused: the literal it lacks, or the command's help."""
    found = operation_for(command_words(args))
    if found is None:
        return "Run 'assay --help' for the commands."
    op = found[0]
    command = "assay " + " ".join(op.cli_path)
    param = getattr(exc, "param", None)
    if isinstance(exc, click.exceptions.MissingParameter) and isinstance(param, click.Argument):
        literals = [a.name.upper() for a in op.arguments
                    if a.binding in ("literal", "literals") and a.required]
        return (f"Give {' '.join(literals)} after --: '{command} [OPTIONS] -- "
                f"{' '.join(literals)}' (see '{command} --help').")
    return f"See '{command} --help' for its options and arguments."


def run(args: list[str]) -> int:
    """Run the CLI on ``args`` through click; return the exit status."""
    head = args[: args.index("--")] if "--" in args else args
    try:
        if ("--help" in head or "-h" in head) and json_requested(args):
            return _json_help(args)
        result = build(command_words(args)).main(args, prog_name="assay",
                                                 standalone_mode=False)
        return int(result or 0)
    except click.exceptions.NoSuchOption as exc:
        return fail(UsageError(exc.format_message(), code="unknown_option",
                               action=_usage_action(exc, args)), args)
    except click.exceptions.UsageError as exc:
        return fail(UsageError(exc.format_message(), action=_usage_action(exc, args)), args)
    except click.exceptions.Abort:
        return interrupted(args, echoed=True)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except Exception as exc:  # noqa: BLE001 - translate() is where a bug becomes exit 70
        return translate(exc, args)
