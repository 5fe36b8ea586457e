"""Fuzzing the real CLI entry in process: random argv and standard input.

Every call ends with an exit status in {0, 1, 2, 3, 4} (never 70, the status
of an internal error), every failure prints one JSON error object with a
stable code, and no call writes outside the project except where the argv
itself names a place (``--cwd``, ``--db``, a packet directory).
"""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from fuzz_tools import CODE, FUZZ, corpus_bytes, corpus_lines, mutated
from hypothesis import event, given
from hypothesis import strategies as st

from assay.ops import operations
from assay_testing import make_project

SKIP = {"mcp", "demo"}  # launchers: a stdio server and the guided story, not operations
SEED_ARGV: list[list[str]] = corpus_lines("cli", "argv.jsonl")
STDIN_SEEDS = corpus_bytes("canonical")
VALUES = ["0", "1", "-1", "99999999999999999999", "", "knowledge:x", "knowledge:intent",
          "requires:knowledge:x", "knowledge:x@1", "-", "json", "table", "main", "x" * 600,
          "../outside", "/etc/passwd", "sub/dir", "knowledge:\udcff", "\udcfe\udcff", "--",
          "--help", "-h", "data.json", "bad.json", "missing.json", "deep.json", "dir"]
PLACE_OPTIONS = ("--cwd", "--db")


def arg_text(size: int) -> st.SearchStrategy[str]:
    """Text an argv word can hold: anything but NUL, which execve cannot pass."""
    return st.text(st.characters(blacklist_characters="\x00"), max_size=size)


INTS = ["0", "1", "2", "-1", "3", "99999999999999999999", "1e3", ""]
IDS = ["knowledge:x", "knowledge:intent", "counter:c", "handoff:intent", "evidence:e", "x",
       "knowledge:\udcff", "Knowledge:X", "knowledge:" + "n" * 600, "--help", "-"]
FILES = ["data.json", "bad.json", "missing.json", "deep.json", "dir", "-", "../outside.json"]


def _operations() -> list[Any]:
    return [op for op in operations() if op.cli_path[0] not in SKIP]


OPS = _operations()


def _value(draw: st.DrawFn, arg: Any) -> str:
    schema = dict(arg.schema)
    if arg.binding == "json_file":
        return draw(st.sampled_from(FILES))
    if "enum" in schema:
        return draw(st.one_of(st.sampled_from([str(v) for v in schema["enum"]]),
                              st.sampled_from(VALUES)))
    if schema.get("type") == "integer":
        return draw(st.sampled_from(INTS))
    if arg.name == "dir":
        return draw(st.sampled_from(["pk", "sub/pk", "../outside-pk", "dir", "", "-", "/etc",
                                     "x" * 300]))
    if arg.name in ("cwd", "db"):
        return draw(st.sampled_from([".", "sub/dir", "../outside", "dir", "ledger2.db",
                                     "postgresql://nobody@127.0.0.1:1/x", "sqlite:///dev/null/x"]))
    return draw(st.one_of(st.sampled_from(IDS + VALUES), arg_text(16)))


@st.composite
def argvs(draw: st.DrawFn) -> list[str]:
    """Argument vectors built from the registry's own commands and arguments, plus some noise."""
    if draw(st.integers(0, 5)) == 0:
        base = list(draw(st.sampled_from(SEED_ARGV)))
    else:
        op = draw(st.sampled_from(OPS))
        base = list(op.cli_path)
        literals: list[str] = []
        for arg in op.all_arguments:
            if arg.binding == "stdin" or not (arg.required or draw(st.integers(0, 3)) == 0):
                continue
            if arg.binding == "flag":
                base.append(arg.cli_name)
            elif arg.binding in ("literal", "literals"):
                literals.append(draw(st.sampled_from(IDS)) if arg.name == "id" else _value(draw, arg))
            else:
                base += [arg.cli_name, _value(draw, arg)]
        if draw(st.integers(0, 5)) == 0:
            base += ["--format", draw(st.sampled_from(["json", "table", "xml"]))]
        if literals:
            base += ["--", *literals]
    if draw(st.integers(0, 4)) == 0:
        at = draw(st.integers(0, len(base)))
        base.insert(at, draw(st.one_of(st.sampled_from(VALUES), arg_text(12))))
    if base and base[0] in SKIP:
        base[0] = "describe"
    return base


def _run(argv: list[str], stdin: bytes) -> tuple[int, str, str]:
    from assay.cli import dispatch as run

    saved = sys.stdin, sys.stdout, sys.stderr
    out, err = io.StringIO(), io.StringIO()
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    sys.stdout, sys.stderr = out, err
    try:
        code = run(argv)
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    return code, out.getvalue(), err.getvalue()


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            path = Path(dirpath) / name
            try:
                stat = path.lstat()
            except OSError:
                continue
            out[str(path)] = (stat.st_size, stat.st_mtime_ns)
    return out


COMPANIONS = ("-writers", "-wal", "-shm", "-journal")


def _allowed(argv: list[str], cwd: Path) -> list[Path]:
    """Places the argv names for writing: --cwd/--db values and packet directories."""
    places = []
    for i, word in enumerate(argv[:-1]):
        if word in PLACE_OPTIONS:
            places.append(argv[i + 1])
    if argv[:1] == ["packet"] and "--" in argv:
        places += argv[argv.index("--") + 1 :]
    out = []
    for place in places:
        try:
            resolved = (cwd / place).resolve() if place else cwd
        except (OSError, ValueError, RuntimeError):
            continue
        # A SQLite ledger's companions sit beside it: its journals and the writers' queue.
        out += [resolved, *(Path(f"{resolved}{suffix}") for suffix in COMPANIONS)]
    return out


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project inside an otherwise empty directory, as the current directory."""
    project = make_project(tmp_path / "proj")
    (project.root / "data.json").write_text('{"a":1}', encoding="utf-8")
    (project.root / "bad.json").write_bytes(b'{"a":"\xff"}')
    (project.root / "deep.json").write_text("[" * 5000 + "]" * 5000, encoding="utf-8")
    (project.root / "dir").mkdir()
    (project.root / "sub" / "dir").mkdir(parents=True)
    for name in ("ASSAY_DB", "ASSAY_PRINCIPAL", "ASSAY_DEBUG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(project.root)
    return project.root


@FUZZ
@given(argv=argvs(), stdin=st.one_of(mutated(STDIN_SEEDS), st.sampled_from(STDIN_SEEDS)))
def test_fuzz_cli_exit_codes_and_errors_are_stable(sandbox: Path, argv: list[str],
                                                   stdin: bytes) -> None:
    """Random argv and stdin end with exit 0-6, a coded JSON error on failure, and no stray writes."""
    before = _tree(sandbox.parent)
    code, out, err = _run(argv, stdin)
    event(f"exit {code}")
    assert code in (0, 1, 2, 3, 4, 5, 6), (argv, code, err)
    # ci verify answers its verdicts as exit codes: unverifiable (5) is an answer on stdout.
    verdict = argv[:2] == ["ci", "verify"] and code == 5 and not err.strip()
    if (code in (2, 3, 4, 5, 6) and not verdict) or (code == 1 and err.strip()):
        envelope: dict[str, Any] = json.loads(err)
        assert envelope["ok"] is False
        assert CODE.match(envelope["error"]["code"]), envelope
        assert envelope["error"]["code"] != "internal_error"
        event(f"code {envelope['error']['code']}")
    elif code == 1 or verdict:  # a negative answer on stdout (JSON, or a table with --format table)
        assert out.strip()
        if "table" not in argv:
            assert json.loads(out)["ok"] is True
    after = _tree(sandbox.parent)
    allowed = [sandbox.resolve(), *_allowed(argv, sandbox)]
    for path, stat in after.items():
        if before.get(path) == stat:
            continue
        resolved = Path(path).resolve()
        assert any(resolved == a or a in resolved.parents for a in allowed), (argv, path)
