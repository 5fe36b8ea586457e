"""Readable views on a real pipe and a pseudo-terminal: nothing cut, no control obeyed.

Record text, command output and error messages carrying ``ESC[2J`` (clear
the screen), OSC sequences, C1 controls or rich markup reach the terminal as
visible ``\\u001b`` escapes; long lines wrap instead of being cropped.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from assay.terminal import UNSAFE, visible, visible_data
from assay_testing import Project, make_project, run_on_tty

CLEAR = "\x1b[2J"
SHOWN = "\\u001b[2J"
LONG = ("the doc says what add does, and every caller sees that its current revision is 2 "
        "while the ledger keeps the first revision for review")


def _words(text: str) -> str:
    """The words of a readable view: tree guides, table rules and line breaks dropped."""
    return " ".join(re.sub(r"[│├└─┃┏┓┗┛┡┩━┳┻╇╈┼┬┴┌┐┘╷╵╹╻|]", " ", text).split())


def _terminal_text(raw: bytes) -> str:
    """What a terminal received, without rich's own colour and style sequences."""
    return re.sub(r"\x1b\[[0-9;]*m", "", raw.decode("utf-8")).replace("\r\n", "\n")


@pytest.fixture
def goal_project(tmp_path: Path) -> Project:
    project = make_project(tmp_path / "p", extra_toml='\n[goals.g]\npath = "goal.md"\n')
    (project.root / "goal.md").write_text("# Goal\n", encoding="utf-8")
    return project


@pytest.mark.parametrize(("text", "shown"), [
    ("clear \x1b[2J now", "clear \\u001b[2J now"),
    ("osc \x1b]8;;http://x\x1b\\link", "osc \\u001b]8;;http://x\\u001b\\link"),
    ("c1 csi \x9b2J", "c1 csi \\u009b2J"),
    ("bell\x07 back\x08 del\x7f", "bell\\u0007 back\\u0008 del\\u007f"),
    ("overwrite\rline", "overwrite\\u000dline"),
    ("rtl \u202eevil\u202c", "rtl \\u202eevil\\u202c"),
    ("lines\nand\ttabs\r\nkept", "lines\nand\ttabs\nkept"),
    ("plain text, é and 漢字", "plain text, é and 漢字"),
    ("nel\x85 csi\x9b apc\x9f", "nel\\u0085 csi\\u009b apc\\u009f"),
    ("line\u2028para\u2029", "line\\u2028para\\u2029"),
    ("zero\u200bwidth\u200djoin\ufeffbom\xadsoft", "zero\\u200bwidth\\u200djoin\\ufeffbom\\u00adsoft"),
    ("tag\U000e0041\U000e007f", "tag\\udb40\\udc41\\udb40\\udc7f"),
    ("vs\ufe0f\U000e0100", "vs\\ufe0f\\udb40\\udd00"),
    ("lone \udcff", "lone \\udcff"),
])
def test_terminal_visible_escapes_every_control(text: str, shown: str) -> None:
    """visible() writes each control as its JSON escape and keeps newlines, tabs and other text."""
    assert visible(text) == shown


def test_terminal_unsafe_set_covers_every_control_and_format_character() -> None:
    """Every Cc, Cf, Zl, Zp and Cs code point of the interpreter's Unicode data but tab and newline is escaped."""
    import unicodedata

    wanted = "".join(chr(c) for c in range(0x110000)
                     if unicodedata.category(chr(c)) in ("Cc", "Cf", "Zl", "Zp", "Cs")
                     and chr(c) not in "\t\n")
    assert re.sub(f"[{UNSAFE}]", "", wanted) == ""


def test_terminal_escapes_are_json_for_the_same_text() -> None:
    """Each escape visible() writes is JSON that reads back as the character it replaced."""
    text = "a\x1b\x9b\u2028\U000e0041\udcff\tb"
    assert json.loads('"' + visible(text).replace("\t", "\\t") + '"') == text


def test_terminal_visible_data_reaches_keys_and_nested_values() -> None:
    """visible_data() escapes strings at every depth, keys included, and leaves other values."""
    value = {"k\x1b": [CLEAR, {"n": 1, "t": True, "z": None}]}
    assert visible_data(value) == {"k\\u001b": [SHOWN, {"n": 1, "t": True, "z": None}]}


def test_terminal_todo_list_shows_escapes_on_a_tty(goal_project: Project) -> None:
    """`todo list` on a terminal shows ESC[2J, an OSC 8 link and link markup in a todo as text."""
    text = f"wipe {CLEAR} [link=http://evil.example]click[/link] \x1b]8;;http://x\x1b\\"
    goal_project.ok("todo", "add", "--goal-id", "g", "--text", text)
    status, raw = run_on_tty("todo", "list", "--goal-id", "g", cwd=goal_project.root,
                             columns=200)
    assert status == 0, raw
    assert CLEAR.encode() not in raw and b"\x1b]8;" not in raw
    out = _terminal_text(raw)
    assert SHOWN in out and "[link=http://evil.example]click[/link]" in out


def test_terminal_error_message_shows_escapes_on_a_tty(goal_project: Project) -> None:
    """A readable error naming a file called ESC[2J shows the name escaped, on a terminal."""
    status, raw = run_on_tty("put", "--data-file", f"x{CLEAR}.json", "--", "knowledge:x",
                             cwd=goal_project.root)
    assert status == 2
    assert CLEAR.encode() not in raw
    assert SHOWN in _terminal_text(raw)


def test_terminal_json_on_a_tty_shows_escapes(goal_project: Project) -> None:
    """`--format json` on a terminal writes a C1 control and a bidi override as \\u escapes."""
    goal_project.ok("put", "--data-file", "-", "--", "knowledge:x",
                    input=json.dumps({"t": "a\x9b2J b\u202e"}))
    status, raw = run_on_tty("get", "--format", "json", "--", "knowledge:x",
                             cwd=goal_project.root)
    assert status == 0
    assert "\x9b".encode() not in raw and "\u202e".encode() not in raw
    line = _terminal_text(raw).strip()
    assert json.loads(line)["data"]["record"]["data"] == {"t": "a\x9b2J b\u202e"}


C1_TEXT = "csi \x9b2J nel\x85 line\u2028 hidden\U000e0041"
C1_SHOWN = "csi \\u009b2J nel\\u0085 line\\u2028 hidden\\udb40\\udc41"


@pytest.mark.parametrize("args", [("get", "--", "knowledge:c1"), ("find", "--", "csi"),
                                  ("get", "--format", "table", "--", "knowledge:c1")],
                         ids=["get", "find", "get-table"])
def test_terminal_readable_record_views_escape_c1_on_a_tty(goal_project: Project,
                                                            args: tuple[str, ...]) -> None:
    """`get` and `find` views on a terminal show C1 controls, separators and tags as escapes."""
    goal_project.ok("put", "--data-file", "-", "--", "knowledge:c1",
                    input=json.dumps({"text": C1_TEXT}))
    status, raw = run_on_tty(*args, cwd=goal_project.root, columns=200)
    assert status == 0, raw
    for char in ("\x9b", "\x85", "\u2028", "\U000e0041"):
        assert char.encode() not in raw, char
    assert C1_SHOWN in _terminal_text(raw)


def test_terminal_evidence_output_shows_escapes_on_a_tty(tmp_path: Path) -> None:
    """`evidence run` (live line and view) and `evidence show` never send a command's ESC[2J."""
    script = f"import sys, time; print({CLEAR!r} + 'cleared?', flush=True); time.sleep(0.6)"
    project = make_project(tmp_path / "p", extra_toml=(
        f'\n[evidence.commands.wipe]\nargv = ["{sys.executable}", "-c", {json.dumps(script)}]\n'))
    status, raw = run_on_tty("evidence", "run", "--", "wipe", cwd=project.root, columns=120)
    assert status == 0, raw
    assert CLEAR.encode() not in raw
    assert "\\u001b[2Jcleared?" in _terminal_text(raw)  # the live line showed the output
    status, raw = run_on_tty("evidence", "show", "--", "evidence:wipe", cwd=project.root)
    assert status == 0, raw
    assert CLEAR.encode() not in raw
    assert "\\u001b[2Jcleared?" in _terminal_text(raw)


def _long_intent(project: Project) -> None:
    intent = {"version": 1, "brief": "b", "user_reference": "u", "boundaries": [],
              "non_goals": [], "requirements": [{"id": "R1", "text": LONG, "acceptance": "a"}]}
    project.ok("put", "--data-file", "-", "--", "knowledge:long",
               input=json.dumps({"intent": intent}))


def test_terminal_work_check_table_wraps_on_a_pipe(project: Project) -> None:
    """`work check --format table | cat` keeps every word of a long requirement (80 columns)."""
    _long_intent(project)
    result = project.run("work", "check", "--format", "table", "--", "knowledge:long",
                         env={"COLUMNS": "80"})
    assert result.code == 1, result.stderr
    assert LONG in _words(result.stdout)
    assert max(len(line) for line in result.stdout.splitlines()) <= 80


def test_terminal_work_check_tree_wraps_on_a_tty(project: Project) -> None:
    """`work check` on an 80-column terminal wraps the requirement inside the tree, every word kept."""
    _long_intent(project)
    status, raw = run_on_tty("work", "check", "--", "knowledge:long", cwd=project.root)
    assert status == 1
    out = _terminal_text(raw)
    assert LONG in _words(out)
    assert max(len(line) for line in out.splitlines()) <= 80


def test_terminal_table_folds_a_long_word_instead_of_cutting_it(goal_project: Project) -> None:
    """A todo title longer than its column is folded over lines on a narrow terminal, not cut."""
    word = "x" * 150
    goal_project.ok("todo", "add", "--goal-id", "g", "--text", word)
    status, raw = run_on_tty("todo", "list", "--goal-id", "g", cwd=goal_project.root,
                             columns=60)
    assert status == 0
    out = _terminal_text(raw)
    assert "…" not in out
    assert out.count("x") >= 150


@pytest.mark.parametrize("group", ["", "work", "loop", "evidence", "todo", "packet"])
def test_terminal_help_lists_commands_uncut(tmp_path: Path, group: str) -> None:
    """No command line of `assay [GROUP] --help` ends in click's "..." cut (usage lines aside)."""
    from foundation_cli import run_assay

    ran = run_assay(*([group] if group else []), "--help", cwd=tmp_path)
    assert ran.code == 0
    cut = [line for line in ran.stdout.splitlines()
           if line.endswith("...") and not line.startswith("Usage:")]
    assert not cut
