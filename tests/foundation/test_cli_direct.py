"""The click-free call path: it parses words exactly as click would, or leaves them to click."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
from foundation_cli import ASSAY
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay.cli.app import _leaf
from assay.cli.direct import COMMON_OPTIONS, command_words, parse
from assay.ops import Invocation, Operation, call, lookup, operation_for, operations
from assay_testing import examples

OPERATIONS = list(operations())
CLICK_PATH = "import sys\nfrom assay.cli.app import run\nsys.exit(run(sys.argv[1:]))"
NOISE = ["--", "-", "-x", "--nope", "--help", "-h", "", "a=b", "knowledge:x", "=", "--=x"]
VALUES = ["0", "3", "-1", "1_0", "\u0663", "x", "", "-", "--", "-x", "json", "table", "xml",
          "knowledge:x", "a:b:c", "x@1", "current"]


def _click_params(op: Operation, words: list[str]) -> dict[str, Any] | None:
    """The parameters click passes for ``words``, without the absent ones; None if it refuses."""
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            ctx = _leaf(op).make_context(op.cli_path[-1], list(words))
    except (click.exceptions.ClickException, click.exceptions.Exit):
        return None
    return {k: v for k, v in ctx.params.items() if v is not None and v != ()}


@st.composite
def command_lines(draw: st.DrawFn, op: Operation) -> list[str]:
    """Words after an operation's command path: its own options, values, flags and noise."""
    tokens: list[str] = []
    for arg in (*op.all_arguments, *COMMON_OPTIONS):
        if arg.cli_name is not None:
            tokens += [arg.cli_name, arg.cli_name + "=" + draw(st.sampled_from(VALUES))]
        for value in arg.schema.get("enum", arg.schema.get("items", {}).get("enum", [])):
            tokens.append(str(value))
    pool = st.sampled_from(tokens + NOISE + VALUES)
    return draw(st.lists(pool, max_size=8))


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_direct_parse_agrees_with_click(data: st.DataObject) -> None:
    """Whenever the direct parser accepts words, click accepts them with the same parameters."""
    op = data.draw(st.sampled_from(OPERATIONS))
    words = data.draw(command_lines(op))
    mine = parse(op, words)
    if mine is not None:
        assert _click_params(op, words) == mine, (op.name, words)


@pytest.mark.parametrize(("name", "words"), [
    ("get", ["--", "knowledge:x"]),
    ("get", ["knowledge:x", "--raw"]),
    ("get", ["--revision", "2", "--format=json", "--", "knowledge:x"]),
    ("put", ["--data-file", "-", "--expect-revision", "0", "--", "knowledge:x"]),
    ("put", ["--data-file=d.json", "--link", "requires:knowledge:a", "--link",
             "requires:knowledge:b", "--", "knowledge:x"]),
    ("work.check", ["--at-revision", "7", "--", "knowledge:x"]),
    ("find", ["--kind", "evidence", "--status", "current", "--limit", "5"]),
    ("note.add", ["--source", "knowledge:x@1", "--", "some", "words"]),
    ("canonical", ["--digest", "--debug"]),
])
def test_direct_parse_takes_plain_words(name: str, words: list[str]) -> None:
    """Plain calls, as agents write them, are parsed without click, to click's parameters."""
    op = lookup(name)
    mine = parse(op, words)
    assert mine is not None
    assert _click_params(op, words) == mine


@pytest.mark.parametrize("words", [
    ["--help"], ["-h", "--", "x"], ["--nope", "--", "x"], ["--revision", "x", "--", "k:x"],
    ["--revision", "1", "--revision", "2", "--", "k:x"], ["--raw=1", "--", "k:x"],
    ["--format", "xml", "--", "k:x"], ["--revision"], ["--cwd", "-x", "--", "k:x"],
    [], ["k:x", "k:y"],
])
def test_direct_parse_leaves_the_rest_to_click(words: list[str]) -> None:
    """Help, unknown or repeated options, bad values and missing or extra literals go to click."""
    assert parse(lookup("get"), words) is None


def test_direct_command_words_stop_at_the_first_option() -> None:
    """The command path is the leading words before any option or --."""
    assert command_words(["work", "check", "--", "knowledge:x"]) == ["work", "check"]
    assert command_words(["work", "--format", "json", "check"]) == ["work"]
    assert command_words(["--help"]) == []


def test_direct_operation_for_reads_one_name_part_per_word() -> None:
    """`work check ID` names work.check with two words; `work.check` is no command, as in click."""
    found = operation_for(["work", "check", "knowledge:x"])
    assert found is not None and (found[0].name, found[1]) == ("work.check", 2)
    assert operation_for(["work.check", "knowledge:x"]) is None
    assert operation_for(["get", "ledger.info"]) == (lookup("get"), 1)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with two versions of knowledge:x and one intent, knowledge:intent."""
    root = tmp_path_factory.mktemp("direct") / "proj"
    root.mkdir()
    inv = Invocation(cwd=str(root))
    call("init", {"cwd": str(root)}, inv)
    call("put", {"id": "knowledge:x", "data": {"a": 1}}, inv)
    call("put", {"id": "knowledge:x", "data": {"a": 2, "s": "é"}}, inv)
    intent = {"version": 1, "brief": "b", "user_reference": "u", "boundaries": [],
              "non_goals": [], "requirements": [{"id": "R1", "text": "t", "acceptance": "a"}]}
    call("put", {"id": "knowledge:intent", "data": {"intent": intent}}, inv)
    return root


@pytest.mark.parametrize("argv", [
    ["get", "--", "knowledge:x"],
    ["get", "--raw", "--revision", "1", "--", "knowledge:x"],
    ["get", "--", "knowledge:missing"],
    ["find", "--kind", "knowledge", "--limit", "1"],
    ["work", "check", "--", "knowledge:intent"],
    ["work", "check", "--at-revision", "1", "--", "knowledge:intent"],
    ["ledger", "info", "--format", "json"],
    ["describe", "--", "get"],
])
def test_direct_path_prints_what_the_click_path_prints(recorded: Path, argv: list[str]) -> None:
    """The console script (direct path) and the click path give the same output and status."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
    direct = subprocess.run([str(ASSAY), *argv], capture_output=True, cwd=recorded, env=env,
                            timeout=60, check=False)
    full = subprocess.run([sys.executable, "-c", CLICK_PATH, *argv], capture_output=True,
                          cwd=recorded, env=env, timeout=60, check=False)
    assert (direct.returncode, direct.stdout, direct.stderr) == (
        full.returncode, full.stdout, full.stderr)
