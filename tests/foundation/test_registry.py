"""The operations registry: complete entries, and the CLI, MCP and docs all derived from it."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path
from typing import Any

import click
import pytest
from foundation_cli import Runner, cli_in
from jsonschema import Draft202012Validator

from assay.cli.app import build
from assay.ops import DECLARED, GROUPS, Argument, Bound, Operation, Result, operations

ROOT = Path(__file__).resolve().parents[2]
OPERATIONS = list(operations())
OP_NAMES = [op.name for op in OPERATIONS]
LAUNCHERS = {("mcp",), ("demo",)}


@pytest.fixture
def assay_cli(tmp_path: Path) -> Runner:
    """The console script, run in this test's tmp_path."""
    return cli_in(tmp_path)


def _cli_leaves(group: click.Group, prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], click.Command]:
    leaves: dict[tuple[str, ...], click.Command] = {}
    for name, command in group.commands.items():
        path = (*prefix, name)
        if isinstance(command, click.Group):
            leaves.update(_cli_leaves(command, path))
        else:
            leaves[path] = command
    return leaves


def test_registry_has_the_foundation_operations() -> None:
    """canonical, describe and init are registered."""
    assert {"canonical", "describe", "init"} <= set(OP_NAMES)


def test_registry_names_unique_on_every_surface() -> None:
    """Operation names, CLI paths and MCP tool names are each unique."""
    assert len(set(OP_NAMES)) == len(OP_NAMES)
    assert len({op.cli_path for op in OPERATIONS}) == len(OPERATIONS)
    assert len({op.tool_name for op in OPERATIONS}) == len(OPERATIONS)


@pytest.mark.parametrize("name", OP_NAMES)
def test_registry_entry_complete(name: str) -> None:
    """Each operation has a summary, a description, writes, and valid input and output JSON Schemas."""
    op = next(op for op in OPERATIONS if op.name == name)
    entry = op.describe()
    assert entry["summary"].strip() and entry["description"].strip()
    assert isinstance(entry["writes"], bool)
    assert entry["cli"] == "assay " + name.replace(".", " ")
    assert entry["mcp_tool"] == name.replace(".", "_").replace("-", "_")
    for key in ("input_schema", "output_schema"):
        Draft202012Validator.check_schema(entry[key])
    schema = entry["input_schema"]
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert [a["name"] for a in entry["arguments"]] == list(schema["properties"])
    for arg in entry["arguments"]:
        assert arg["help"].strip(), arg["name"]
        assert arg["binding"] in {"option", "flag", "literal", "literals", "stdin", "json_file"}
        assert schema["properties"][arg["name"]]["description"] == op.text(arg["help"], "mcp")
        assert (arg["name"] in schema.get("required", [])) == arg["required"]


def test_registry_describe_lists_every_operation(assay_cli: Runner) -> None:
    """`assay describe` prints every registered operation, in registry order, as the registry describes it."""
    ran = assay_cli("describe")
    assert ran.code == 0, ran.stderr
    envelope = ran.json()
    assert envelope["ok"] is True and envelope["operation"] == "describe"
    assert envelope["data"]["operations"] == [op.describe() for op in OPERATIONS]


def test_registry_describe_one_operation(assay_cli: Runner) -> None:
    """`assay describe -- NAME` prints only that entry, by dotted name or MCP tool name."""
    op = next((op for op in OPERATIONS if op.tool_name != op.name), OPERATIONS[0])
    for spelling in {op.name, op.tool_name}:
        ran = assay_cli("describe", "--", spelling)
        assert ran.code == 0, ran.stderr
        assert ran.json()["data"]["operations"] == [op.describe()]


@pytest.mark.parametrize("name", OP_NAMES)
def test_registry_json_help_is_the_entry(assay_cli: Runner, name: str) -> None:
    """`assay COMMAND --help --format json` prints exactly that operation's registry entry."""
    op = next(op for op in OPERATIONS if op.name == name)
    ran = assay_cli(*op.cli_path, "--help", "--format", "json")
    assert ran.code == 0, ran.stderr
    assert ran.json() == op.describe()


def test_registry_json_help_of_a_group_lists_its_operations(assay_cli: Runner) -> None:
    """`assay GROUP --help --format json` prints the entries of the operations in that group."""
    group = next((op.cli_path[0] for op in OPERATIONS if len(op.cli_path) > 1), None)
    if group is None:
        pytest.skip("no grouped operation registered")
    ran = assay_cli(group, "--help", "--format", "json")
    assert ran.code == 0, ran.stderr
    assert ran.json() == {"operations": [op.describe() for op in OPERATIONS
                                         if op.cli_path[0] == group]}


def test_registry_every_cli_command_comes_from_the_registry() -> None:
    """The CLI's commands are exactly the registry's operations plus the mcp and demo launchers."""
    leaves = set(_cli_leaves(build()))
    assert leaves == {op.cli_path for op in OPERATIONS} | LAUNCHERS


@pytest.mark.parametrize("name", OP_NAMES)
def test_registry_cli_options_match_arguments(name: str) -> None:
    """Each command's options and positionals are the operation's argument bindings, with help."""
    op = next(op for op in OPERATIONS if op.name == name)
    command = _cli_leaves(build())[op.cli_path]
    assert command.help
    options = {o for p in command.params if isinstance(p, click.Option) for o in p.opts}
    positionals = [p.name for p in command.params if isinstance(p, click.Argument)]
    for arg in op.all_arguments:
        if arg.binding in ("literal", "literals"):
            assert arg.name in positionals
        elif arg.binding != "stdin":
            assert arg.cli_name in options, arg.name
    expected = {a.cli_name for a in op.all_arguments if a.cli_name} | {"--format", "--debug"}
    assert options == expected
    assert len(positionals) == len([a for a in op.all_arguments
                                    if a.binding in ("literal", "literals")])


def test_registry_every_mcp_tool_comes_from_the_registry() -> None:
    """The admin profile's tools are the registry's operations, with the very same input schemas."""
    from assay.mcp.server import tool_definitions

    tools = {tool.name: tool for tool in tool_definitions("admin")}
    assert list(tools) == [op.tool_name for op in OPERATIONS]
    for op in OPERATIONS:
        tool = tools[op.tool_name]
        assert tool.input_schema == op.input_schema()
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is (not op.writes)


def test_registry_agent_tools_are_the_operations_not_declared_admin() -> None:
    """The agent profile offers exactly the operations whose declaration is not admin."""
    from assay.mcp.server import tool_definitions

    assert [t.name for t in tool_definitions()] == [op.tool_name for op in OPERATIONS
                                                    if not op.admin]


def test_registry_a_read_declares_no_hint_of_a_write() -> None:
    """A read cannot be declared destructive or idempotent (hints only a write has)."""
    from assay.ops import operation

    with pytest.raises(ValueError, match="hint of a write"):
        operation("demo.read", summary="s", writes=False, destructive=True,
                  bounds=Bound("item", items=1, max_items=1, whole=True, recover="r"))(_noop)


def test_registry_declared_table_names_each_operations_module() -> None:
    """DECLARED lists every operation with the module that registers it, in registry order."""
    declared = [(module, name) for module, names in DECLARED.items() for name in names]
    assert [(op.handler.__module__, op.name) for op in OPERATIONS] == declared


# ---------------------------------------------------------------- views declared with their operation


def _exported_views() -> dict[str, Any]:
    """Every function a module of assay.ops.views exports, by its MODULE:FUNCTION reference."""
    import importlib
    import pkgutil

    from assay.ops import views

    found = {}
    for info in pkgutil.iter_modules(views.__path__):
        module = importlib.import_module(f"assay.ops.views.{info.name}")
        for name in module.__all__:
            found[f"{info.name}:{name}"] = getattr(module, name)
    return found


def test_registry_every_declared_view_resolves() -> None:
    """Each operation's declared view is a function exported by a module of assay.ops.views."""
    from assay.ops.views import resolve

    exported = _exported_views()
    for op in OPERATIONS:
        if op.view:
            assert op.view in exported, f"{op.name}: no view {op.view}"
            assert resolve(op.view) is exported[op.view]


def test_registry_every_view_is_bound_to_an_operation() -> None:
    """Every view assay.ops.views exports is declared by a registered operation (none is orphaned)."""
    declared = {op.view for op in OPERATIONS if op.view}
    assert set(_exported_views()) - declared == set()


def test_registry_raw_text_lives_in_the_operations_module() -> None:
    """An operation's bare-text function is defined in the module that declares the operation."""
    raws = [op for op in OPERATIONS if op.raw is not None]
    assert {op.name for op in raws} >= {"canonical", "get", "hook.stop", "hook.tool"}
    for op in raws:
        assert op.raw is not None and op.raw.__module__ == op.handler.__module__, op.name


def test_registry_refuses_a_view_that_is_not_module_function() -> None:
    """A view must be declared as MODULE:FUNCTION."""
    from assay.ops import operation

    for ref in ("work_check", "intent:work:check", "intent:work-check"):
        with pytest.raises(ValueError, match="MODULE:FUNCTION"):
            operation("demo.view", summary="s", writes=True, view=ref)(_noop)


def test_registry_render_holds_no_view_of_its_own() -> None:
    """cli/render.py keeps the console and the fallback: no table of views by operation name."""
    from assay.cli import render

    assert not hasattr(render, "READABLE") and not hasattr(render, "RAW")
    assert not hasattr(render, "LONG_WORK")


# ---------------------------------------------------------------- texts per surface

# Words only the command line has: option spellings and the `--` before
# literals, exit statuses, standard streams and the `-` that names one, asides
# about the command line, printing and command lines (`assay` followed by one
# of its commands).
COMMANDS = "|".join(sorted({op.cli_path[0] for op in OPERATIONS} | {"mcp", "demo"}))
CLI_WORDS = re.compile(r"(?<![\w-])--[a-z]|(?<![\w-])--(?=[\s).,]|$)"
                       r"|\bexit(s|ed)?( status| code)? \d|\bexit status\b"
                       r"|\bstandard (input|output|error)\b|\bstd(in|out|err)\b|\bor -(?=[\s).,]|$)"
                       r"|\bCLI:|\bon the command line\b"
                       rf"|\bprint(s|ed)?\b|\bassay ({COMMANDS})\b", re.IGNORECASE)


def _schema_descriptions(schema: Any, where: str = "") -> list[tuple[str, str]]:
    """Every description inside a JSON Schema, with its JSON pointer."""
    found: list[tuple[str, str]] = []
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "description" and isinstance(value, str):
                found.append((where, value))
            else:
                found += _schema_descriptions(value, f"{where}/{key}")
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            found += _schema_descriptions(value, f"{where}/{index}")
    return found


def test_registry_every_group_says_what_it_is_for() -> None:
    """Every command group has one short line in GROUPS, and none is a placeholder."""
    groups = {op.cli_path[0] for op in OPERATIONS if len(op.cli_path) > 1}
    assert set(GROUPS) == groups
    for group, line in GROUPS.items():
        assert line.strip() and "\n" not in line and len(line) <= 55, group
        assert not line.endswith(" operations."), group


def test_registry_help_lists_each_group_with_its_purpose(assay_cli: Runner) -> None:
    """`assay --help` shows each group's line from GROUPS, whole, and no "X operations." line."""
    ran = assay_cli("--help")
    assert ran.code == 0, ran.stderr
    for group, line in GROUPS.items():
        assert re.search(rf"^  {group} +{re.escape(line)}$", ran.stdout, re.MULTILINE), group
    assert " operations." not in ran.stdout


@pytest.mark.parametrize("profile", ["agent", "admin"])
def test_registry_mcp_tool_texts_have_no_cli_words(profile: str) -> None:
    """No MCP tool title, description or argument description holds a command line's spelling."""
    from assay.mcp.server import tool_definitions

    for tool in tool_definitions(profile):
        texts = [("/title", tool.title or ""), ("/description", tool.description or "")]
        texts += _schema_descriptions(tool.input_schema, "/inputSchema")
        for where, text in texts:
            found = CLI_WORDS.search(text)
            assert found is None, f"{tool.name}{where}: {found.group(0)!r} in {text!r}"


def test_registry_cli_words_scan_catches_cli_words() -> None:
    """The scan above finds each kind of CLI word (so it can fail)."""
    for text in ("with --at-revision N", "Exit 0 when ready", "exit status 1", "exits 1",
                 "reads standard input", "Prints the receipt", "run assay work check",
                 "pairs in order with --evidence", "Why (with --status blocked).",
                 "The text (the words after --).", "(CLI: a file, or - for stdin)",
                 "A JSON file or -.", "The payload (on the command line: standard input)."):
        assert CLI_WORDS.search(text), text
    assert CLI_WORDS.search("assay records the command's exit code and `at_revision`") is None
    assert CLI_WORDS.search("pairs in order with `evidence`; a - b, x-y") is None


_POINTS_TO_OUTPUT_SCHEMA = re.compile(r"output[ _]schema|outputSchema", re.IGNORECASE)


@pytest.mark.parametrize("profile", ["agent", "admin"])
def test_registry_tool_pointing_to_an_output_schema_has_one(profile: str) -> None:
    """A tool whose description points to an output schema carries one, or says `describe` has it."""
    from assay.mcp.server import tool_definitions

    pointing = []
    for tool in tool_definitions(profile):
        for sentence in re.split(r"(?<=\.) ", tool.description or ""):
            if _POINTS_TO_OUTPUT_SCHEMA.search(sentence):
                pointing.append(tool.name)
                assert tool.output_schema is not None or "`describe`" in sentence, sentence
    assert profile != "agent" or "work_check" in pointing  # the scan sees the one pointer


def test_registry_schema_descriptions_found_at_every_depth() -> None:
    """The scan reads descriptions of properties, items and nested schemas, with their pointers."""
    schema = {"description": "a", "properties": {"x": {"description": "b", "items": [
        {"description": "c"}]}}}
    assert _schema_descriptions(schema) == [("", "a"), ("/properties/x", "b"),
                                            ("/properties/x/items/0", "c")]


def test_registry_argument_help_spelled_per_surface(assay_cli: Runner) -> None:
    """An argument's help names another argument as an option on the CLI and as itself over MCP."""
    from assay.mcp.server import tool_definitions

    tool = next(t for t in tool_definitions() if t.name == "todo_update")
    assert (tool.input_schema["properties"]["blocked_reason"]["description"]
            == "Why the todo is blocked (with `status` blocked).")
    ran = assay_cli("todo", "update", "--help")
    assert "(with --status blocked)" in " ".join(ran.stdout.split())
    put = assay_cli("put", "--help")
    assert "The record's JSON data. A JSON file, or - for standard input." in " ".join(
        put.stdout.split())


def test_registry_work_check_help_per_surface(assay_cli: Runner) -> None:
    """work check says --at-revision and its exit statuses on the CLI, `at_revision` over MCP."""
    from assay.mcp.server import tool_definitions

    ran = assay_cli("work", "check", "--help")
    assert ran.code == 0, ran.stderr
    text = " ".join(ran.stdout.split())
    assert "With --at- revision N" in text or "With --at-revision N" in text
    assert "Exit status 0 when ready_to_review, 1 when not." in text
    assert "when not. Read-only: writes nothing." in text  # the effect line ends the help
    tool = next(t for t in tool_definitions() if t.name == "work_check")
    assert "With `at_revision` N" in (tool.description or "")
    assert "ready_to_review" in (tool.description or "")


def _noop(inv: Any, args: dict[str, Any]) -> Result:
    return Result(None)


def test_registry_text_spells_references_per_surface() -> None:
    """Backticked arguments and operations become options and commands on the CLI, tools over MCP."""
    op = Operation(
        name="demo.op", summary="s", writes=False, handler=_noop,
        arguments=(Argument("at_revision", {"type": "integer"}, "h"),
                   Argument("id", {"type": "string"}, "h", binding="literal"),
                   Argument("text", {"type": "string"}, "h", binding="stdin"),
                   Argument("for_req", {"type": "string"}, "h", cli="--for")),
        cli_note="Exit status 1 when `id` is not ready.",
    )
    text = "`at_revision`, `id`, `text`, `for_req`, `loop.recover`, `ready_to_review`."
    assert op.text(text, "mcp") == ("`at_revision`, `id`, `text`, `for_req`, `loop_recover`, "
                                    "`ready_to_review`.")
    assert op.text(text, "cli") == ("--at-revision, ID, standard input, --for, "
                                    "assay loop recover, `ready_to_review`.")
    assert op.help("cli") == "s Exit status 1 when ID is not ready."
    assert op.help("mcp") == "s"


# ---------------------------------------------------------------- error codes documented


def _string_constants(node: ast.AST, names: dict[str, str]) -> set[str]:
    """The strings an expression can evaluate to: literals, module constants, both arms of an if."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.Name) and node.id in names:
        return {names[node.id]}
    if isinstance(node, ast.IfExp):
        return _string_constants(node.body, names) | _string_constants(node.orelse, names)
    return set()


@functools.cache
def raised_codes(root: Path) -> dict[str, str]:
    """Every error code given to an error constructor under ``root``: code -> first place.

    Parsed once per process: the tests below only read the answer.
    """
    found: dict[str, str] = {}
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign)
                 and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
                 for t in n.targets if isinstance(t, ast.Name)}
        where = f"{path.relative_to(ROOT)}"
        for node in ast.walk(tree):
            codes: set[str] = set()
            if isinstance(node, ast.Call):
                func = node.func
                callee = (func.id if isinstance(func, ast.Name)
                          else func.attr if isinstance(func, ast.Attribute) else "")
                if callee.endswith(("Error", "Conflict")):
                    for kw in node.keywords:
                        if kw.arg == "code":
                            codes |= _string_constants(kw.value, names)
                if callee == "_Reject" and node.args:
                    codes |= _string_constants(node.args[0], names)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Name) and t.id == "default_code" for t in targets):
                    assert node.value is not None
                    codes |= _string_constants(node.value, names)
            for code in codes:
                found.setdefault(code, f"{where}:{getattr(node, 'lineno', 0)}")
    return found


def documented_codes() -> dict[str, str]:
    """The codes of docs/errors.md's tables: code -> exit status column."""
    rows = re.findall(r"^\| `([A-Za-z0-9_]+)` \| (\S+) \|", (ROOT / "docs" / "errors.md").read_text(),
                      re.MULTILINE)
    return dict(rows)


def test_error_codes_all_documented() -> None:
    """Every error code raised in src/ has a row in docs/errors.md."""
    missing = {c: w for c, w in raised_codes(ROOT / "src" / "assay").items()
               if c not in documented_codes()}
    assert not missing, f"add a row to docs/errors.md for each of: {missing}"


def test_error_codes_scan_finds_known_codes() -> None:
    """The scan sees codes given as keywords, conditional codes, class defaults and _Reject codes."""
    found = raised_codes(ROOT / "src" / "assay")
    for code in ("invalid_id", "ledger_corrupt", "invalid_input", "revision_conflict",
                 "unsafe_integer", "duplicate_key"):
        assert code in found


def test_error_codes_documented_once_with_exit_status() -> None:
    """Each documented code appears in one row, with a known exit status."""
    text = (ROOT / "docs" / "errors.md").read_text()
    rows = re.findall(r"^\| `([A-Za-z0-9_]+)` \|", text, re.MULTILINE)
    assert len(rows) == len(set(rows))
    for code, status in documented_codes().items():
        assert status in {"1", "2", "3", "4", "5", "6", "70", "130"}, code


@pytest.mark.parametrize(
    ("cls_name", "status"),
    [("AssayError", "1"), ("UsageError", "2"), ("ConflictError", "3"), ("RevisionConflict", "3"),
     ("RequestConflict", "3"), ("EpochConflict", "3"), ("ReadRevisionConflict", "3"),
     ("UnavailableError", "4")],
)
def test_error_codes_class_defaults_documented_with_their_status(cls_name: str, status: str) -> None:
    """Each error class's default code is documented with that class's exit status."""
    from assay import errors

    cls: Any = getattr(errors, cls_name)
    assert documented_codes()[cls.default_code] == status
