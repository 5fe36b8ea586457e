"""The terminal surface: readable views on a real pseudo-terminal, NO_COLOR, JSON on pipes."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
from pathlib import Path

from report_helpers import mixed_project, reviewer_project

from assay_testing import ASSAY, Project

ANSI = "\x1b["
_SGR = re.compile(r"\x1b\[([0-9;]*)m")


def _colours(text: str) -> list[int]:
    """The colour parameters (foreground or background) of every SGR sequence in ``text``."""
    found = []
    for params in _SGR.findall(text):
        for value in (int(p) for p in params.split(";") if p):
            if 30 <= value <= 38 or 40 <= value <= 48 or 90 <= value <= 97 or 100 <= value <= 107:
                found.append(value)
    return found


def _plain(text: str) -> str:
    return _SGR.sub("", text).replace("\r\n", "\n")


def _on_tty(args: list[str], cwd: Path, **env: str) -> tuple[int, str]:
    """Run assay with stdout and stderr on a pseudo-terminal; return (status, what it printed)."""
    full = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "ASSAY_DB", "CI")}
    full.update({"TERM": "xterm-256color", "COLUMNS": "120"}, **env)
    master, slave = pty.openpty()
    proc = subprocess.Popen([ASSAY, *args], cwd=cwd, stdin=subprocess.DEVNULL, stdout=slave,
                            stderr=slave, env=full)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=60), b"".join(chunks).decode("utf-8", "replace")


def test_terminal_report_is_readable_and_coloured(tmp_path: Path) -> None:
    """On a terminal `assay report` prints the verdict in words, the path, and colour."""
    project = mixed_project(tmp_path / "p")
    code, text = _on_tty(["report", "--intent", "knowledge:limit"], project.root)
    assert code == 0, text
    assert "not ready to review" in text
    assert str(project.root / ".assay" / "report.html") in _plain(text).replace("\n", "")
    assert '"ok"' not in text
    assert _colours(text)


def test_terminal_no_color_turns_colour_off(tmp_path: Path) -> None:
    """With NO_COLOR set the readable views carry no colour escape sequences."""
    project = mixed_project(tmp_path / "p")
    for args in (["report", "--intent", "knowledge:limit"],
                 ["work", "check", "--", "knowledge:limit"],
                 ["evidence", "show", "--", "red"]):
        code, text = _on_tty(args, project.root, NO_COLOR="1")
        assert code in (0, 1), text
        assert _colours(text) == [], args


def test_terminal_work_check_tree(tmp_path: Path) -> None:
    """`assay work check` on a terminal is a requirement tree with words for each status."""
    project = mixed_project(tmp_path / "p")
    code, text = _on_tty(["work", "check", "--", "knowledge:limit"], project.root, NO_COLOR="1")
    assert code == 1
    lines = _plain(text).splitlines()
    assert "not ready for review" in lines[0]
    for rid, words in (("R1", "awaiting descendants"), ("R2", "failed"),
                       ("R3", "needs evidence"), ("R4", "not started")):
        assert any(f"{rid} {words}" in line for line in lines), (rid, words)
    assert ("evidence evidence:green@1 (revision 1, the current one; machine: green passed)"
            in _plain(text).replace("\n", ""))


def test_terminal_pipe_gets_one_json_line(tmp_path: Path) -> None:
    """On a pipe the same command prints one canonical JSON line and nothing readable."""
    project = mixed_project(tmp_path / "p")
    ran = project.run("report", "--intent", "knowledge:limit")
    assert ran.code == 0
    lines = ran.stdout.splitlines()
    assert len(lines) == 1
    envelope = json.loads(lines[0])
    assert envelope["ok"] is True and envelope["operation"] == "report"
    assert ran.stderr == ""
    assert ANSI not in ran.stdout


def _tree(root: Path) -> str:
    """The work check tree of the reviewer's intent, wide enough that no line wraps."""
    ran = Project(root).run("work", "check", "--format", "table", "--", "knowledge:review",
                            env={"NO_COLOR": "1", "COLUMNS": "250"})
    assert ran.code == 1, ran.stderr
    return ran.stdout


def test_terminal_work_check_tree_requirement_passed_in_a_failed_run(tmp_path: Path) -> None:
    """R1's line says it passed on its own tests and that the run failed elsewhere; R2's says failed."""
    text = _tree(reviewer_project(tmp_path / "p").root)
    assert ("evidence evidence:unit@1 (revision 1, the current one; machine: R1 passed on its "
            "own 2 tests; the run of unit failed elsewhere (exit 1))") in text
    assert ("evidence evidence:unit@1 (revision 1, the current one; machine: R2 failed on its "
            "own 2 tests; the run of unit failed (exit 1))") in text


def test_terminal_work_check_tree_prints_a_shared_issue_once(tmp_path: Path) -> None:
    """An issue text said of R3 and R4 is printed once, naming both; R4's line points back to R3."""
    text = _tree(reviewer_project(tmp_path / "p").root)
    message = ("evidence evidence:lint is cited at revision 1; its current revision 2 is a run "
               "that failed (exit 1)")
    assert text.count(message) == 1
    assert f"evidence_revision_stale: {message} (said of R3 and R4)" in text
    assert "evidence_revision_stale: as under R3 above" in text
    assert ("evidence evidence:lint@1 (revision 1, not the current revision 2; machine: lint "
            "passed)") in text
