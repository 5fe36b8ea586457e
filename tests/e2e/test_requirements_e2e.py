"""End to end: a pytest suite marked with requirements gates an agent's work, then attests it.

A real git repository, a real pytest run through ``assay evidence run`` (the
plugin writes the marks into the JUnit file), the real ``assay`` command line
for every step, and the in-toto library verifying the attestation at the
end. :class:`AgentSteps` runs the agent's side of the story one step at a
time and keeps the transcript, so further steps (a harness hook answering
"done") slot in between the existing ones.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from assay_testing import CliResult, Project

INTENT = "knowledge:lockout"
SUITE = '''import pytest

from app import lock_after, unlock


@pytest.mark.requirement("R1")
def test_account_locks_after_three_failures():
    assert lock_after() == 3


@pytest.mark.requirement("R2")
def test_admin_unlocks():
    assert unlock("admin") is True
'''
BUGGY = "def lock_after():\n    return 4\n\n\ndef unlock(who):\n    return who == 'admin'\n"
FIXED = BUGGY.replace("return 4", "return 3")


@dataclass
class AgentSteps:
    """The agent's steps against a project, each through the real ``assay`` CLI.

    Every call is logged in ``transcript`` as ``(step, exit status, JSON
    output)``; a step that must succeed asserts it.
    """

    project: Project
    intent: str = INTENT
    transcript: list[tuple[str, int, Any]] = field(default_factory=list)

    def assay(self, step: str, *args: str) -> CliResult:
        result = self.project.run(*args)
        output = result.json if result.stdout.strip() else json.loads(result.stderr or "null")
        self.transcript.append((step, result.code, output))
        return result

    def git(self, *args: str) -> str:
        done = subprocess.run(["git", *args], cwd=self.project.root, capture_output=True,
                              text=True, check=True)
        return done.stdout.strip()

    def write(self, path: str, text: str) -> None:
        (self.project.root / path).write_text(text, encoding="utf-8")

    def run_tests(self) -> str:
        """Run the unit tests as machine evidence; return the run's ID@REVISION."""
        result = self.assay("run tests", "evidence", "run", "--", "unit")
        receipt = result.json["data"]["receipt"]
        return f"{receipt['id']}@{receipt['revision']}"

    def accept(self, run: str) -> dict[str, str]:
        """Record each mapped requirement's result from the run; return their statuses."""
        result = self.assay("accept", "work", "accept", "--from-run", run, "--", self.intent)
        assert result.code == 0, result.stderr
        return {r["requirement_id"]: r["status"] for r in result.json["data"]["results"]}

    def check(self) -> CliResult:
        return self.assay("check", "work", "check", "--", self.intent)

    def commit(self, message: str) -> None:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)

    def attest(self) -> Path:
        result = self.assay("attest", "attest", "--intent", self.intent)
        assert result.code == 0, result.stdout + result.stderr
        return Path(result.json["data"]["out"])

    def stop(self, message: str) -> dict[str, Any] | None:
        """Stop as Claude Code stops the agent: ``assay hook stop`` with its payload; its answer."""
        payload = {"session_id": "e2e-session", "cwd": str(self.project.root),
                   "hook_event_name": "Stop", "stop_hook_active": False,
                   "last_assistant_message": message}
        result = self.project.run("hook", "stop", input=json.dumps(payload))
        answer = json.loads(result.stdout) if result.stdout.strip() else None
        self.transcript.append(("stop", result.code, answer))
        assert result.code == 0, result.stderr
        return answer

    def verify(self, bundle: Path) -> CliResult:
        return self.assay("verify", "verify-attestation", str(bundle), "--key",
                          ".assay/keys/attestation.pub.json")


@pytest.fixture
def agent(tmp_path: Path) -> AgentSteps:
    """A committed repository with a buggy app, its marked suite, and an intent for it."""
    root = tmp_path / "repo"
    root.mkdir()
    project = Project(root=root)
    steps = AgentSteps(project)
    steps.git("init", "-q", "-b", "main")
    steps.git("config", "user.email", "agent@example.com")
    steps.git("config", "user.name", "Agent")
    steps.write("app.py", BUGGY)
    steps.write("conftest.py", "")  # the repository root on sys.path for `import app`
    (root / "tests").mkdir()
    steps.write("tests/test_lockout.py", SUITE)
    steps.write(".gitignore", "reports/\n")
    assert project.run("init").code == 0
    argv = [sys.executable, "-B", "-m", "pytest", "-q", "-p", "no:cacheprovider",
            "--junitxml=reports/unit.xml", "tests"]
    with open(root / "assay.toml", "a", encoding="utf-8") as handle:
        handle.write(f"\n[evidence.commands.unit]\nargv = {json.dumps(argv)}\n"
                     'results = { format = "junit", path = "reports/unit.xml" }\n'
                     f'\n[gate]\nintents = ["{INTENT}"]\ndefault_intent = "{INTENT}"\n')
    steps.commit("lockout: first cut")
    assert project.run("work", "new", "--brief", "Lock accounts after three failures",
                       "--requirement", "R1|Lock after three failures|its tests pass",
                       "--requirement", "R2|An admin unlocks|its tests pass",
                       "--", INTENT).code == 0
    assert project.run("key", "generate").code == 0
    return steps


def test_e2e_failing_test_blocks_the_requirement_until_fixed_then_attests(
        agent: AgentSteps) -> None:
    """A failing marked test fails its requirement and names it; the fix makes it ready; it attests."""
    # The agent says it is done while R1's test fails.
    first = agent.run_tests()
    assert agent.transcript[-1][1] == 1
    assert agent.accept(first) == {"R1": "failed", "R2": "passed"}
    report = agent.check()
    assert report.code == 1
    issues = report.json["data"]["issues"]
    failed = next(i for i in issues if i["code"] == "requirement_tests_failed")
    assert failed["requirement_id"] == "R1"
    assert failed["tests"] == ["tests.test_lockout::test_account_locks_after_three_failures"]
    assert "R1" in failed["message"] and "test_account_locks_after_three_failures" in \
        failed["message"]
    # Its stop hook sends it back: the reason names the requirement and the failing test.
    blocked = agent.stop("Done: lockout works and all tests pass.")
    assert blocked is not None and blocked["decision"] == "block"
    assert 'Your last message says "Done", "all tests pass"' in blocked["reason"]
    assert "R1" in blocked["reason"]
    assert "test_account_locks_after_three_failures" in blocked["reason"], blocked["reason"]

    # The agent fixes the code; a new run is accepted and the intent is ready.
    agent.write("app.py", FIXED)
    second = agent.run_tests()
    assert agent.transcript[-1][1] == 0 and second == "evidence:unit@2"
    assert agent.accept(second) == {"R1": "passed", "R2": "passed"}
    assert agent.check().code == 0
    agent.commit("lockout: three failures lock the account")
    # The same claim now rests on a passing run of the files as they are: the agent may stop.
    assert agent.stop("Done: lockout works and all tests pass.") is None

    # The attestation verifies with assay and with the in-toto library.
    bundle = agent.attest()
    verified = agent.verify(bundle)
    assert verified.code == 0 and verified.json["data"]["verdict"] == "ready"
    assert verified.json["data"]["subject"][0]["digest"]["gitCommit"] == agent.git(
        "rev-parse", "HEAD")
    from in_toto.models.metadata import Metadata

    key = json.loads((agent.project.root / ".assay/keys/attestation.pub.json").read_text())
    envelopes = [json.loads(line) for line in bundle.read_text().splitlines()]
    assert len(envelopes) == 2
    for envelope in envelopes:
        metadata = Metadata.from_dict(envelope)
        metadata.verify_signature(key)
        statement = json.loads(metadata.payload)
        if statement["predicateType"].endswith("test-result/v0.1"):
            assert statement["predicate"]["result"] == "PASSED"
            assert statement["predicate"]["url"] == "assay:evidence:unit@2"
            assert "tests.test_lockout::test_account_locks_after_three_failures" in \
                statement["predicate"]["passedTests"]
