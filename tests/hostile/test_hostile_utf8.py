"""Invalid UTF-8 wherever text enters: argv, standard input, data files, JSON escapes, assay.toml.

Goal files are covered in tests/context/test_context_goal_read.py (``goal_invalid_utf8``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from assay_testing import ASSAY, Project


def _run_bytes(project: Project, *args: bytes, stdin: bytes = b"") -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if k != "ASSAY_DB"}
    proc = subprocess.run([ASSAY.encode(), *args], cwd=project.root, input=stdin,
                          capture_output=True, env=env, timeout=60, check=False)
    return proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8")


def _error(stderr: str) -> dict:
    assert "Traceback" not in stderr
    envelope = json.loads(stderr)
    assert envelope["ok"] is False
    return dict(envelope["error"])


@pytest.mark.parametrize(("argv", "code", "status"), [
    ([b"get", b"--", b"knowledge:\xff"], "invalid_id", 1),
    ([b"decision", b"show", b"--", b"key\xfe\xff"], None, None),
    ([b"find", b"--", b"\xff\xfe"], "lone_surrogate", 1),
    ([b"canonical", b"--digest", b"knowledge:\xff"], "usage_error", 2),
    ([b"put", b"--bogus\xff", b"x"], "unknown_option", 2),
    ([b"work", b"check", b"--", b"knowledge:\xc3\x28"], "lone_surrogate", 1),
])
def test_hostile_utf8_argv_bytes_give_a_coded_error(project: Project, argv: list[bytes],
                                                     code: str | None, status: int | None) -> None:
    """Arguments that are not UTF-8 end in one printable JSON error object, never a traceback."""
    status_seen, _, stderr = _run_bytes(project, *argv)
    error = _error(stderr)
    assert status_seen in (1, 2, 3, 4)
    if code is not None:
        assert (error["code"], status_seen) == (code, status)
    assert error["code"] != "internal_error"


def test_hostile_utf8_argv_error_message_escapes_the_bad_bytes(project: Project) -> None:
    """The error message spells undecodable argv bytes as escapes instead of failing to print."""
    _, _, stderr = _run_bytes(project, b"canonical", b"--digest", b"knowledge:\xff")
    assert "\\udcff" in _error(stderr)["message"]


def test_hostile_utf8_stdin_to_canonical_is_invalid_utf8(project: Project) -> None:
    """Standard input that is not UTF-8 is invalid_utf8 with the byte offset."""
    status, _, stderr = _run_bytes(project, b"canonical", stdin=b'{"a":"\xff"}')
    error = _error(stderr)
    assert (status, error["code"], error["details"]["offset"]) == (1, "invalid_utf8", 6)


def test_hostile_utf8_data_file_is_invalid_utf8_and_writes_nothing(project: Project,
                                                                   tmp_path: Path) -> None:
    """A data file that is not UTF-8 is refused with invalid_utf8 and the ledger stays empty."""
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"a":"\xc3\x28"}')
    status, _, stderr = _run_bytes(project, b"put", b"--data-file", str(bad).encode(), b"--",
                                   b"knowledge:x")
    assert (status, _error(stderr)["code"]) == (1, "invalid_utf8")
    assert project.ok("ledger", "info")["data"]["ledger_revision"] == 0


def test_hostile_utf8_escaped_lone_surrogate_in_data_is_refused(project: Project) -> None:
    """A JSON escape that decodes to a lone surrogate is lone_surrogate at its pointer; nothing is written."""
    result = project.run("put", "--data-file", "-", "--", "knowledge:x",
                         input='{"notes":["ok","\\ud800"]}')
    assert result.code == 1
    assert (result.error["code"], result.error["pointer"]) == ("lone_surrogate", "/data/notes/1")
    assert project.ok("ledger", "info")["data"]["ledger_revision"] == 0


def test_hostile_utf8_duplicate_surrogate_key_error_is_printable(project: Project) -> None:
    """A duplicate key spelled with a lone surrogate escape is reported as printable JSON."""
    result = project.run("canonical", input='{"\\ud800":1,"\\ud800":2}')
    assert result.code == 1 and "Traceback" not in result.stderr
    assert result.error["code"] == "duplicate_key"


def test_hostile_utf8_assay_toml_is_refused_with_a_code(project: Project) -> None:
    """An assay.toml that is not UTF-8 is a coded configuration error, not a crash."""
    (project.root / "assay.toml").write_bytes(b'[project]\nname = "d\xffemo"\n')
    result = project.run("ledger", "info")
    assert result.code in (1, 2, 4, 5) and "Traceback" not in result.stderr
    assert result.error["code"] != "internal_error"


def test_hostile_utf8_command_output_is_recorded_with_its_true_digest(tmp_path: Path) -> None:
    """A command printing bytes that are not UTF-8 is recorded with utf8 false and the digest of the raw bytes."""
    import hashlib

    from assay_testing import make_project

    script = "import sys; sys.stdout.buffer.write(bytes([0xff, 0xfe]) * 100)"
    project = make_project(tmp_path / "proj", extra_toml=(
        f'\n[evidence.commands.raw]\nargv = ["{sys.executable}", "-c", {json.dumps(script)}]\n'))
    result = project.run("evidence", "run", "--", "raw")
    assert result.code in (0, 1) and "Traceback" not in result.stderr
    record = project.ok("evidence", "show", "--", "evidence:raw")["data"]["record"]
    stdout = record["data"]["observation"]["stdout"]
    assert stdout["utf8"] is False and stdout["bytes"] == 200
    assert stdout["sha256"] == hashlib.sha256(bytes([0xFF, 0xFE]) * 100).hexdigest()


def test_hostile_utf8_git_path_that_is_not_utf8_is_observed(tmp_path: Path) -> None:
    """A tracked file whose name is not UTF-8 is observed (escaped), never a crash."""
    from assay_testing import make_project

    project = make_project(tmp_path / "proj", git=True)
    bad = os.fsdecode(b"bad\xff.txt")
    (project.root / bad).write_text("x\n", encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=project.root, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=project.root, check=True)
    (project.root / bad).write_text("y\n", encoding="utf-8")
    data = project.ok("evidence", "observe")["data"]
    assert data["status"] == "observed" and data["dirty_count"] == 1
    path = data["dirty"][0]["path"]
    path.encode("utf-8")
    assert path.startswith("bad")
