"""Command lines and operation arguments, one into the other, by the registry's bindings.

An operation's arguments declare how the command line spells them
(:class:`~assay.ops.Argument` ``binding``). This module holds both
directions of that spelling in one place:

- :func:`argv_for` writes arguments as the argument array after ``assay``
  (options first, literals after ``--``): the ``read_args`` of a recovering
  read.
- :func:`parse` reads the words after a command's path back into the
  parameters click would pass, or None when the words are not plain (the
  CLI's click-free path, :mod:`assay.cli.direct`).
- :func:`quoted_calls` finds the commands a ``next`` step quotes
  (``'assay work check -- knowledge:x'``) and reads each into the tool call
  it names, so a surface without a command line can offer the call itself.

Light to import (it is on the path of every plain CLI call): nothing here
imports more than the registry.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from assay.ops import Argument, Operation

__all__ = ["argv_for", "command_path", "parse", "quoted_calls"]


def argv_for(op: Operation, arguments: Mapping[str, Any]) -> list[str]:
    """``arguments`` of ``op`` as the CLI argument array after ``assay``.

    Options come first in declaration order, literals after ``--``. An
    argument the operation does not take, or one bound to standard input or
    a JSON file, is a ``ValueError``: no argument array can carry it.
    """
    argv = list(op.cli_path)
    literals: list[str] = []
    for arg in op.all_arguments:
        if arg.name not in arguments or arguments[arg.name] is None:
            continue
        value = arguments[arg.name]
        if arg.binding == "flag":
            if value:
                argv.append(str(arg.cli_name))
        elif arg.binding == "option":
            for one in (value if isinstance(value, (list, tuple)) else [value]):
                argv += [str(arg.cli_name), str(one)]
        elif arg.binding == "literal":
            literals.append(str(value))
        elif arg.binding == "literals":
            literals.extend(str(v) for v in value)
        else:
            raise ValueError(f"a command line cannot carry the {arg.binding} argument {arg.name}")
    unknown = set(arguments) - {a.name for a in op.all_arguments}
    if unknown:
        raise ValueError(f"{op.name} takes no argument {min(unknown)!r}")
    if literals:
        argv += ["--", *literals]
    return argv


def parse(op: Operation, words: list[str],
          extra: tuple[Argument, ...] = ()) -> dict[str, Any] | None:
    """The parameters click would pass for ``words`` (after the command path), or None.

    ``extra`` are options the surface adds to every command (``--format``).
    Parameters that are absent are left out (click passes None or an empty
    tuple); repeatable options are tuples, as click gives them. None means
    the words are not plain and click must parse them.
    """
    options = {arg.cli_name: arg for arg in (*op.all_arguments, *extra)
               if arg.cli_name is not None}
    params: dict[str, Any] = {}
    positional: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if word == "--":
            positional.extend(words[index:])
            break
        if not word.startswith("-") or word == "-":
            positional.append(word)
            continue
        name, has_value, value = word.partition("=")
        arg = options.get(name)
        if arg is None or (arg.binding == "flag" and has_value):
            return None  # --help, -h, an unknown option, or a value given to a flag
        if arg.binding == "flag":
            params[arg.name] = True
            continue
        if not has_value:
            if index == len(words) or (words[index].startswith("-") and words[index] != "-"):
                return None  # no value, or one click might read as an option
            value = words[index]
            index += 1
        converted = _convert(arg, value)
        if converted is None:
            return None
        if _repeatable(arg):
            params[arg.name] = (*params.get(arg.name, ()), converted)
        elif arg.name in params:
            return None  # click keeps the last of a repeated option; leave that to click
        else:
            params[arg.name] = converted
    if not _bind_literals(op, positional, params):
        return None
    missing = [arg for arg in op.all_arguments if arg.required and arg.binding != "stdin"
               and arg.name not in params]
    return None if missing else params


def _repeatable(arg: Argument) -> bool:
    return arg.binding == "option" and arg.schema.get("type") == "array"


def _convert(arg: Argument, value: str) -> Any:
    """``value`` as click's parameter type for ``arg`` converts it, or None to let click decide."""
    schema = arg.schema.get("items", {}) if _repeatable(arg) else arg.schema
    if arg.binding == "json_file":
        return value
    if "enum" in schema:
        return value if value in [str(v) for v in schema["enum"]] else None
    kind = schema.get("type")
    if kind == "integer":
        return int(value) if value.isascii() and value.isdigit() else None
    if kind == "number":
        return None
    return value


def _bind_literals(op: Operation, words: list[str], params: dict[str, Any]) -> bool:
    """Assign the positional words as click does; False when click would refuse them."""
    literals = [arg for arg in op.all_arguments if arg.binding in ("literal", "literals")]
    if any(arg.binding == "literals" for arg in literals[:-1]):
        return False  # click shares words between a list and what follows it; leave that to it
    for arg in literals:
        if arg.binding == "literal":
            if words:
                params[arg.name] = words.pop(0)
            elif arg.required:
                return False
        elif arg.binding == "literals":
            if words:
                params[arg.name] = tuple(words)
                words = []
            elif arg.required:
                return False
    return not words


# A command a step quotes whole: 'assay WORDS' between single quotes. A command
# written without quotes is a template (it names placeholders), never a call.
_QUOTED = r"'assay ([^'\n]+)'"
# A placeholder a person fills in: FILE, INTENT_ID, <submissionHandle JSON>.
_PLACEHOLDER = r"[A-Z][A-Z_]+|.*<[^>]*>.*"


def quoted_calls(text: str) -> list[dict[str, Any]]:
    """The tool calls ``text`` quotes as commands: ``[{tool, arguments}]``, in order.

    A quoted command becomes a call when its words name an operation and
    parse plainly by its bindings (:func:`parse`), every value it gives is
    concrete (no placeholder such as ``FILE`` or ``<...>``), and no argument
    is one that only a command line can carry (standard input, a file to
    read). Any other quoted command, and every unquoted one, stays text only.
    """
    import shlex

    from assay.ops import operation_for

    calls = []
    for match in re.finditer(_QUOTED, text):
        try:
            words = shlex.split(match.group(1).rstrip(".,;: "))
        except ValueError:
            continue
        found = operation_for(command_path(words))
        if found is None:
            continue
        op, length = found
        params = parse(op, words[length:])
        if params is None or not _concrete(op, params):
            continue
        arguments = {name: list(value) if isinstance(value, tuple) else value
                     for name, value in params.items()}
        calls.append({"tool": op.tool_name, "arguments": arguments})
    return calls


def command_path(words: list[str]) -> list[str]:
    """The leading words that name a command (``work check``), before any option or ``--``."""
    path = []
    for word in words:
        if word.startswith("-"):
            break
        path.append(word)
    return path


def _concrete(op: Operation, params: Mapping[str, Any]) -> bool:
    if any(arg.binding == "stdin" and arg.required for arg in op.all_arguments):
        return False
    by_name = {arg.name: arg for arg in op.all_arguments}
    for name, value in params.items():
        if by_name[name].binding in ("stdin", "json_file"):
            return False
        for one in (value if isinstance(value, tuple) else (value,)):
            if isinstance(one, str) and re.fullmatch(_PLACEHOLDER, one):
                return False
    return True
