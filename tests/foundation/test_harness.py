"""The test harness itself: in-process CLI calls match the console script, and leave nothing behind.

``Project.run`` calls the CLI's dispatch in the test process (see
tests/assay_testing.py); these tests hold it to the real script on the same
inputs, and check that the Hypothesis budgets follow the chosen profile.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from assay_testing import Project

TESTS = Path(__file__).resolve().parents[1]

# Successes, refusals with a pointer, usage errors, standard input and the early paths.
COMMANDS: list[tuple[tuple[str, ...], str | None]] = [
    (("--version",), None),
    (("get", "--", "knowledge:seed"), None),
    (("get", "--", "knowledge:absent"), None),
    (("get", "--", "not an id"), None),
    (("find", "--kind", "knowledge"), None),
    (("ledger", "info"), None),
    (("get", "--no-such-option", "--", "knowledge:seed"), None),
    (("put", "--data-file", "-", "--", "knowledge:bad"), "{not json"),
    (("put", "--data-file", "-", "--", "knowledge:bad"), "\xff"),
    (("canonical",), '{"b": 1, "a": [true, null]}'),
    (("canonical", "--digest"), '{"a": 1}'),
    (("nonsense",), None),
]


@pytest.mark.parametrize(("args", "stdin"), COMMANDS, ids=[" ".join(a) for a, _ in COMMANDS])
def test_in_process_call_matches_the_console_script(project: Project, args: tuple[str, ...],
                                                    stdin: str | None) -> None:
    """Exit status, stdout and stderr of an in-process call equal the real script's, byte for byte."""
    project.ok("put", "--data-file", "-", "--", "knowledge:seed", input='{"n": 1}')
    here = project.run(*args, input=stdin)
    real = project.run(*args, input=stdin, process=True)
    assert (here.code, here.stdout, here.stderr) == (real.code, real.stdout, real.stderr)


def test_in_process_call_restores_environment_directory_and_streams(project: Project) -> None:
    """After a call, os.environ, the working directory and the standard streams are the test's again."""
    before = (dict(os.environ), os.getcwd(), sys.stdin, sys.stdout, sys.stderr)
    result = project.run("put", "--data-file", "-", "--", "knowledge:x", input="{}",
                         env={"ASSAY_PRINCIPAL": "someone", "NO_COLOR": "1"})
    assert result.code == 0, result.stderr
    refused = project.run("get", "--", "bad id", env={"COLUMNS": "40"})
    assert (refused.code, refused.error["code"]) == (1, "invalid_id")
    assert (dict(os.environ), os.getcwd(), sys.stdin, sys.stdout, sys.stderr) == before


def test_in_process_call_sees_the_environment_it_was_given(project: Project) -> None:
    """A variable passed to run() reaches the command, and only that call."""
    refused = project.run("put", "--data-file", "-", "--", "knowledge:mine", input="{}",
                          env={"ASSAY_PRINCIPAL": "bad principal!"})
    assert (refused.code, refused.error["code"]) == (2, "invalid_principal")
    assert refused.error["message"].startswith("ASSAY_PRINCIPAL: ")
    assert project.run("put", "--data-file", "-", "--", "knowledge:mine", input="{}").code == 0


@pytest.mark.parametrize(("profile", "expected"), [("", ["60", "10", "20", "30"]),
                                                   ("thorough", ["300", "15", "500", "150"])])
def test_hypothesis_budgets_follow_the_profile(profile: str, expected: list[str]) -> None:
    """The default profile draws a fifth of a stated budget (at least 10); thorough draws it whole."""
    code = ("import assay_testing as t, fuzz_tools as f, hypothesis, conftest; "
            "print(t.examples(300), t.examples(15), "
            "hypothesis.settings.default.max_examples, f.EXAMPLES)")
    env = {k: v for k, v in os.environ.items()
           if k not in ("HYPOTHESIS_PROFILE", "ASSAY_FUZZ_EXAMPLES")}
    env["HYPOTHESIS_PROFILE"] = profile
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(TESTS / "fuzz")])
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == expected
