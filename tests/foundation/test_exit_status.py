"""Exit statuses a CI step can branch on: 1 is only "not ready" or invalid content.

Setup failures exit 5 and lookups of things that are not there exit 6,
whatever class raises them (``assay.errors.EXIT_BY_CODE``); these tests run
the real console script as a CI step would.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay import errors
from assay.errors import EXIT_BY_CODE, AssayError, UnavailableError, UsageError
from assay_testing import Project, make_project

INTENT = {"intent": {"version": 1, "brief": "b", "user_reference": "u", "boundaries": [],
                     "non_goals": [], "requirements": [
                         {"id": "R1", "text": "it works", "acceptance": "a test"}]}}


def _put_intent(project: Project) -> None:
    project.ok("put", "--data-file", "-", "--", "knowledge:feature", input=json.dumps(INTENT))


def _status(project: Project, *args: str) -> tuple[int, str | None]:
    result = project.run(*args)
    return result.code, (result.error["code"] if result.code else None)


def test_exit_status_table_overrides_the_class_of_the_raiser() -> None:
    """A listed code keeps its status whichever class raises it; others keep their class's."""
    assert AssayError("x", code="project_not_found").exit_code == errors.EXIT_SETUP == 5
    assert UsageError("x", code="record_not_found").exit_code == errors.EXIT_NOT_FOUND == 6
    assert UnavailableError("x", code="ledger_not_found").exit_code == 5
    assert AssayError("x", code="aborted").exit_code == errors.EXIT_ABORTED == 130
    assert AssayError("x", code="invalid_json").exit_code == 1
    assert UsageError("x", code="invalid_principal").exit_code == 2


def test_exit_status_table_never_reuses_one() -> None:
    """The table maps only to the statuses kept for it: no code of it exits 1."""
    assert set(EXIT_BY_CODE.values()) == {5, 6, 130}


def test_exit_status_not_ready_is_one(project: Project) -> None:
    """`work check` of an intent that is not ready exits 1 with its report on stdout."""
    _put_intent(project)
    result = project.run("work", "check", "--", "knowledge:feature")
    assert result.code == 1, result.stderr
    assert result.json["data"]["ready_to_review"] is False


def test_exit_status_mistyped_intent_is_not_found(project: Project) -> None:
    """`work check` of an id that names nothing exits 6 (intent_not_found), not 1."""
    _put_intent(project)
    assert _status(project, "work", "check", "--", "knowledge:featur") == (6, "intent_not_found")


def test_exit_status_record_not_found(project: Project) -> None:
    """`get` of an id that names nothing exits 6 (record_not_found)."""
    assert _status(project, "get", "--", "knowledge:nothing") == (6, "record_not_found")


def test_exit_status_no_project_is_setup(tmp_path: Path) -> None:
    """`work check` outside any project exits 5 (project_not_found)."""
    outside = Project(root=tmp_path)
    assert _status(outside, "work", "check", "--", "knowledge:x") == (5, "project_not_found")


def test_exit_status_broken_config_is_setup(tmp_path: Path) -> None:
    """`work check` in a project whose assay.toml has an unknown key exits 5 (invalid_config)."""
    project = make_project(tmp_path / "p", extra_toml="[project.colour]\n")
    assert _status(project, "work", "check", "--", "knowledge:x") == (5, "invalid_config")


def test_exit_status_missing_ledger_is_setup(tmp_path: Path) -> None:
    """`work check` before the ledger exists exits 5 (ledger_not_found)."""
    project = make_project(tmp_path / "p", ledger=False)
    assert _status(project, "work", "check", "--", "knowledge:x") == (5, "ledger_not_found")


def test_exit_status_disabled_feature_is_setup(project: Project) -> None:
    """`memory add` while memory is switched off in assay.toml exits 5 (memory_disabled)."""
    with (project.root / "assay.toml").open("a", encoding="utf-8") as toml:
        toml.write("[memory]\nenabled = false\n")
    assert _status(project, "memory", "add", "--", "remember") == (5, "memory_disabled")


def test_exit_status_usage_stays_two(project: Project) -> None:
    """An unknown option still exits 2 (unknown_option)."""
    assert _status(project, "work", "check", "--bogus", "--", "knowledge:x") == \
        (2, "unknown_option")


@pytest.mark.parametrize("code", sorted(EXIT_BY_CODE))
def test_exit_status_table_codes_are_documented_with_it(code: str) -> None:
    """docs/errors.md gives every code of the table the table's status."""
    from test_registry import documented_codes

    assert documented_codes()[code] == str(EXIT_BY_CODE[code])


def test_exit_status_listed_in_every_command_help(project: Project) -> None:
    """`assay work check --help` ends with the exit statuses, 5 and 6 included."""
    result = project.run("work", "check", "--help")
    assert result.code == 0
    tail = " ".join(result.stdout.split()[-40:])
    assert "Exit status: 0 ok; 1 a negative answer (not ready)" in tail
    assert "5 not set up" in tail and "6 not found" in tail


def test_exit_status_interrupted_is_130(project: Project) -> None:
    """Ctrl-C while a command waits for its input exits 130 with the aborted error."""
    import signal
    import subprocess
    import time

    from assay_testing import ASSAY, sigint_as_on_a_terminal

    with sigint_as_on_a_terminal():
        proc = subprocess.Popen([ASSAY, "put", "--data-file", "-", "--", "knowledge:x"],
                                cwd=project.root, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
    wchan = Path(f"/proc/{proc.pid}/wchan")
    for _ in range(6000):  # until it blocks reading standard input (a hang guard, no timing)
        if "pipe_read" in wchan.read_text():
            break
        time.sleep(0.05)
    else:
        pytest.fail("assay never blocked reading standard input")
    proc.send_signal(signal.SIGINT)
    # Standard input stays open until the process ends: only the signal can end the read.
    try:
        proc.wait(timeout=300)
    finally:
        proc.kill()
    assert proc.stderr is not None and proc.stdin is not None
    err = proc.stderr.read()
    proc.stdin.close()
    assert proc.returncode == 130, err
    assert json.loads(err.decode().strip().splitlines()[-1])["error"]["code"] == "aborted"
