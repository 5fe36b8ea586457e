"""Fuzzing the MCP tool surface: random arguments, right and wrong types, for every tool.

Calls go through ``assay.mcp.server.invoke``, the function the server runs for
each ``tools/call``: every answer is a success envelope or an error envelope
with a stable code, never ``internal_error``, and nothing is written outside
the project except where an argument names a place.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from fuzz_tools import CODE, FUZZ, json_values
from hypothesis import event, given
from hypothesis import strategies as st

from assay.ops import operations
from assay_testing import make_project

OPS = [op for op in operations()]
TEXT = st.one_of(st.sampled_from(["knowledge:x", "knowledge:intent", "main", "-", "../outside",
                                  "/etc", "x" * 300, "knowledge:\ud800", "", "1"]),
                 st.text(max_size=16))
PLACE_ARGUMENTS = ("cwd", "db", "dir", "keep")


def _value(draw: st.DrawFn, schema: dict[str, Any]) -> Any:
    if draw(st.integers(0, 3)) == 0:
        return draw(json_values(4))  # any type at all
    if "enum" in schema:
        return draw(st.sampled_from(list(schema["enum"])))
    kind = schema.get("type")
    if kind == "integer":
        return draw(st.integers(-2, 5))
    if kind == "boolean":
        return draw(st.booleans())
    if kind == "array":
        return draw(st.lists(TEXT, max_size=3))
    if kind == "object" or not kind:
        return draw(json_values(8))
    return draw(TEXT)


@st.composite
def calls(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    op = draw(st.sampled_from(OPS))
    args: dict[str, Any] = {}
    for arg in op.all_arguments:
        if arg.name in ("cwd", "db"):
            continue
        if arg.required or draw(st.integers(0, 2)) == 0:
            args[arg.name] = _value(draw, dict(arg.schema))
    if draw(st.integers(0, 9)) == 0:
        args[draw(st.text(max_size=8))] = draw(json_values(2))
    return op.tool_name, args


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            stat = (Path(dirpath) / name).lstat()
            out[str(Path(dirpath) / name)] = (stat.st_size, stat.st_mtime_ns)
    return out


@pytest.fixture
def mcp_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project for the tool calls, inside an otherwise empty directory."""
    for name in ("ASSAY_DB", "ASSAY_PRINCIPAL"):
        monkeypatch.delenv(name, raising=False)
    project = make_project(tmp_path / "proj")
    monkeypatch.chdir(project.root)
    return project.root


@FUZZ
@given(call=calls())
def test_fuzz_mcp_tool_calls_answer_with_stable_envelopes(mcp_project: Path,
                                                          call: tuple[str, dict[str, Any]]) -> None:
    """Any tool call answers with an ok envelope or a coded error, and writes only inside the project."""
    from assay.mcp.server import invoke

    name, args = call
    before = _tree(mcp_project.parent)
    envelope, is_error = invoke(name, args, cwd=str(mcp_project))
    assert envelope["ok"] is (not is_error)
    if is_error:
        code = envelope["error"]["code"]
        event(f"code {code}")
        assert CODE.match(code) and code != "internal_error", (name, args, envelope)
    allowed = [mcp_project.resolve()]
    for key in PLACE_ARGUMENTS:
        value = args.get(key)
        if isinstance(value, str) and "\x00" not in value:
            try:
                allowed.append((mcp_project / value).resolve())
            except (OSError, ValueError, RuntimeError):
                pass
    for path, stat in _tree(mcp_project.parent).items():
        if before.get(path) != stat:
            resolved = Path(path).resolve()
            assert any(resolved == a or a in resolved.parents for a in allowed), (name, args, path)
