"""Agent scripts that try to get past the stop gate, one per bypass, each played for real.

The gated agent is the adversary. Each script plays it against real
ledgers (both backends where a ledger is involved), real git repositories,
real pytest runs, real processes holding real locks and the real ``assay``
command:

- the checks and tests (bypasses 1-4): it redefines the check, rides stale
  evidence, borrows another intent's run, makes the results unreadable,
  hides changed files, or tampers with the tests or the gate's settings;
- the gate's own ground (bypasses 5-11): it overlays a private copy of what
  gates it, forges or erases the gate's state, outwaits the hook behind a
  lock, stops from outside its project, switches the gate off over MCP,
  burns the retry cap, or plants a side file for the writers' queue.

Each ends blocked or refused, and recorded (or spooled, when the ledger
itself is what is held). An honest agent on the same repository is never
blocked. docs/agents.md's threat table names the script of each bypass.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from gate_helpers import (
    CLAUDE_SESSION,
    commit,
    gate_project,
    give_up,
    payload,
    ready_project,
    record_intent,
    session,
    stop,
)
from gate_helpers import prove as prove_export
from harness_reader import reads

from assay.errors import AssayError
from assay.ledger import Write, open_store
from assay.ops import Invocation, call
from assay_testing import PG_URL, Project, ledger_rows, ledger_sql, make_project, refused
from assay_testing import data as op
from calc_project import BROKEN, CALC, INTENT, PYTEST, TESTS

REVIEWER = "alice"
UNIT = (f"\n[evidence.commands.unit]\nargv = {json.dumps(PYTEST)}\ntimeout = 120\n"
        'results = { format = "junit", path = "reports/unit.xml" }\n')
GATE = f'\n[gate]\nintents = ["{INTENT}"]\n'


def repo(root: Path, db: str, *, gate: bool = True, tests: str = TESTS) -> Project:
    """A committed git project: calc.py, its pytest tests, the unit check and (``gate``) [gate]."""
    project = make_project(root, db=db, git=True, extra_toml=UNIT + (GATE if gate else ""))
    (root / ".gitignore").write_text(".assay/\nreports/\n__pycache__/\n", encoding="utf-8")
    (root / "pytest.ini").write_text("[pytest]\npythonpath = .\n", encoding="utf-8")
    (root / "calc.py").write_text(CALC, encoding="utf-8")
    (root / "tests").mkdir()
    (root / "tests" / "test_calc.py").write_text(tests, encoding="utf-8")
    commit(project, "calc and its tests")
    op(project, "work.new", id=INTENT, brief="calc adds and subtracts",
       requirement=["R1|add adds|its test passes", "R2|sub subtracts|its test passes"],
       verify_with=["R1=unit", "R2=unit"])
    return project


def run(project: Project, *requirements: str, intent: str = INTENT) -> str:
    """``evidence run --for`` each requirement ``-- unit``; the run's ``ID@REVISION``."""
    ran = op(project, "evidence.run", name="unit",
             target=[f"{intent}#{rid}" for rid in requirements])
    return f"{ran['receipt']['id']}@{ran['receipt']['revision']}"


def prove(project: Project) -> str:
    """The honest step: run the check for R1 and R2 and record the run."""
    cited = run(project, "R1", "R2")
    op(project, "work.accept", id=INTENT, from_run=[cited])
    return cited


def check(project: Project, intent: str = INTENT) -> dict[str, Any]:
    return op(project, "work.check", id=intent)


def blocking(report: dict[str, Any]) -> list[str]:
    return [i["code"] for i in report["issues"] if not i.get("advisory")]


def issue(report: dict[str, Any], code: str) -> dict[str, Any]:
    found = [i for i in report["issues"] if i["code"] == code]
    assert found, (code, blocking(report))
    return found[0]


def claude_stop(project: Project, message: str | None) -> dict[str, Any]:
    """A Claude Code Stop payload whose last message is ``message`` (None: the field is absent)."""
    data = payload("claude-code", "stop", project, last_assistant_message=message)
    if message is None:
        del data["last_assistant_message"]
    return data


def stopped(project: Project, **fields: Any) -> dict[str, Any]:
    """The stop hook's decision on a Claude Code Stop, and the decision the ledger recorded."""
    out = stop(project, payload("claude-code", "stop", project, **fields))
    recorded = session(project)["data"]["decision"]
    assert recorded["event"] == out["decision"]["event"]
    return out


def assert_blocked(project: Project, code: str) -> None:
    """The stop is blocked and the recorded decision names ``code`` among the intent's issues."""
    out = stopped(project, last_assistant_message="All tests pass, done.")
    assert out["answer"]["decision"] == "block"
    decision = session(project)["data"]["decision"]
    assert decision["event"] == "gate_blocked"
    assert code in decision["intents"][0]["issue_codes"]


@pytest.fixture
def calc(tmp_path: Path, ledger_url: str) -> Project:
    """The calc repository on each backend, gated on knowledge:calc."""
    return repo(tmp_path / "proj", ledger_url)


# -- 1: redefining the check ----------------------------------------------------------------------


def redefine_unit(project: Project) -> None:
    """The agent's edit: the unit check prints a green line and runs nothing."""
    text = (project.root / "assay.toml").read_text(encoding="utf-8")
    fake = json.dumps([sys.executable, "-c", "print('3 passed')"])
    text = text.replace(f"argv = {json.dumps(PYTEST)}", f"argv = {fake}")
    text = text.replace('results = { format = "junit", path = "reports/unit.xml" }\n', "")
    (project.root / "assay.toml").write_text(text, encoding="utf-8")


def test_fake_green_redefined_check_is_blocked(calc: Project) -> None:
    """Editing the pinned check's argv, breaking the code, running and accepting: blocked."""
    prove(calc)
    redefine_unit(calc)
    (calc.root / "calc.py").write_text(BROKEN, encoding="utf-8")
    op(calc, "work.accept", id=INTENT, from_run=[run(calc, "R1", "R2")])
    report = check(calc)
    assert report["ready_to_review"] is False
    toml, ran = [i for i in report["issues"] if i["code"] == "check_definition_changed"]
    assert (toml["source"], toml["command"], toml["fields"]) == (
        "assay.toml", "unit", ["argv", "results"])
    assert (ran["source"], ran["evidence_id"], ran["recorded_revision"], ran["fields"]) == (
        "run", "evidence:unit", 2, ["argv", "results"])
    assert_blocked(calc, "check_definition_changed")


def test_fake_green_redefined_check_before_the_first_run_is_blocked_by_a_reviewer_pin(
        calc: Project) -> None:
    """A reviewer pinned the intent's checks before any run: the agent's first fake run is caught."""
    op(calc, "gate.pin", principal=REVIEWER, intent=[INTENT])
    redefine_unit(calc)
    op(calc, "work.accept", id=INTENT, from_run=[run(calc, "R1", "R2")])
    report = check(calc)
    assert report["pins"]["checks"]["reviewed"] is True
    assert issue(report, "check_definition_changed")["fields"] == ["argv", "results"]
    assert_blocked(calc, "check_definition_changed")


def test_fake_green_first_use_pin_shows_who_pinned_it(calc: Project) -> None:
    """Without a reviewer, the first accept pins what it saw, and says the agent pinned it."""
    redefine_unit(calc)
    op(calc, "work.accept", id=INTENT, from_run=[run(calc, "R1", "R2")])
    pins = check(calc)["pins"]
    assert pins["checks"]["pinned_by"] == "agent" and pins["checks"]["reviewed"] is False
    assert pins["checks"]["how"] == "first_accept"


def test_fake_green_approval_by_the_gated_principal_is_refused(calc: Project) -> None:
    """The agent cannot approve its own redefinition: gated_principal_cannot_review."""
    prove(calc)
    redefine_unit(calc)
    error = refused(calc, "gate.approve", intent=[INTENT], reason="it is fine")
    assert (error.code, error.pointer) == ("gated_principal_cannot_review", "/principal")
    assert blocking(check(calc)) == ["check_definition_changed"]


def test_fake_green_renaming_the_gated_principal_does_not_make_a_reviewer(calc: Project) -> None:
    """[gate] principal set to someone else: gate_config_changed, and the agent still cannot approve."""
    prove(calc)
    with open(calc.root / "assay.toml", "a", encoding="utf-8") as handle:
        handle.write('principal = "bob"\n')  # appended to the [gate] table
    assert issue(check(calc), "gate_config_changed")["fields"] == ["principal"]
    error = refused(calc, "gate.approve", gate=True, reason="mine now")
    assert (error.code, error.pointer) == ("gated_principal_cannot_review", "/principal")


def test_fake_green_reviewer_approval_adopts_the_change(calc: Project) -> None:
    """A reviewer's approval is recorded, and the change then needs a run of the new check."""
    prove(calc)
    text = (calc.root / "assay.toml").read_text(encoding="utf-8")
    (calc.root / "assay.toml").write_text(text.replace("timeout = 120", "timeout = 300"),
                                          encoding="utf-8")
    assert issue(check(calc), "check_definition_changed")["fields"] == ["timeout"]
    out = op(calc, "gate.approve", principal=REVIEWER, intent=[INTENT],
             reason="slow CI machines")
    approval = op(calc, "get", id=out["approvals"][0]["id"])["record"]["data"]
    assert (approval["approved_by"], approval["reason"]) == (REVIEWER, "slow CI machines")
    assert [c["code"] for c in approval["changes"]] == ["check_definition_changed"]
    assert blocking(check(calc)) == ["check_definition_changed"]  # the cited run is the old check
    prove(calc)
    assert check(calc)["ready_to_review"] is True


# -- 2: riding stale evidence -------------------------------------------------------------------------


@pytest.mark.parametrize("message", ["LGTM, shipped", None])
def test_fake_green_stale_evidence_is_blocked_whatever_the_message(calc: Project,
                                                                   message: str | None) -> None:
    """A passing accepted run, then the bug back: blocked with or without a success phrase."""
    prove(calc)
    (calc.root / "calc.py").write_text(BROKEN, encoding="utf-8")
    report = check(calc)
    changed = issue(report, "evidence_workspace_changed")
    assert (changed["paths"], changed["path_count"]) == (["calc.py"], 1)
    out = stop(calc, claude_stop(calc, message))
    assert out["answer"]["decision"] == "block"
    reason = out["answer"]["reason"]
    assert "Rerun unit on the current files (calc.py changed) for R1, R2" in reason
    assert "'assay evidence run --for knowledge:calc#R1 --for knowledge:calc#R2 -- unit'" \
        in reason
    recorded = session(calc)["data"]["decision"]
    assert recorded["intents"][0]["issue_codes"] == ["evidence_workspace_changed"] * 2


def test_fake_green_removing_git_is_not_a_clean_workspace(calc: Project) -> None:
    """Deleting .git so nothing can be compared is a changed workspace, not a pass."""
    prove(calc)
    shutil.rmtree(calc.root / ".git")
    report = check(calc)
    assert "cannot be observed now" in issue(report, "evidence_workspace_changed")["message"]
    assert report["workspace"]["compared"] is False
    assert_blocked(calc, "evidence_workspace_changed")


def test_fake_green_ignoring_the_changed_file_is_blocked(calc: Project) -> None:
    """Adding the changed file to [evidence] ignore weakens the pinned gate: gate_config_changed."""
    prove(calc)
    with open(calc.root / "assay.toml", "a", encoding="utf-8") as handle:
        handle.write('\n[evidence]\nignore = ["calc.py"]\n')
    (calc.root / "calc.py").write_text(BROKEN, encoding="utf-8")
    report = check(calc)
    changed = issue(report, "gate_config_changed")
    assert (changed["fields"], changed["changes"][0]["now"]) == (["evidence_ignore"],
                                                                ["calc.py"])
    assert_blocked(calc, "gate_config_changed")


# -- 3: borrowing another intent's run ---------------------------------------------------------------


@pytest.fixture
def borrower(calc: Project) -> Project:
    """knowledge:calc is proven; the agent records knowledge:mul, which has no test of its own."""
    prove(calc)
    op(calc, "work.new", id="knowledge:mul", brief="calc multiplies",
       requirement=["R1|mul multiplies|its test passes"])
    op(calc, "gate.bind", principal=REVIEWER, session="9f1c2a4e-5b7d-4e3a-8c21-0d6f3b2a1e90",
       intent=["knowledge:mul"])
    return calc


def test_fake_green_borrowing_a_run_for_another_intent_is_refused(borrower: Project) -> None:
    """--from-run of knowledge:calc's run for knowledge:mul: run_target_mismatch at /from_run/0."""
    error = refused(borrower, "work.accept", id="knowledge:mul", from_run=["evidence:unit@1"])
    assert (error.code, error.pointer) == ("run_target_mismatch", "/from_run/0")


def test_fake_green_borrowing_an_unattributed_run_is_refused(borrower: Project) -> None:
    """A run for no intent carries unscoped marks nobody owns: run_evidence_unattributed."""
    cited = op(borrower, "evidence.run", name="unit")["receipt"]
    error = refused(borrower, "work.accept", id="knowledge:mul",
                    from_run=[f"evidence:unit@{cited['revision']}"])
    assert (error.code, error.pointer) == ("run_evidence_unattributed", "/from_run/0")
    assert error.details["labels"] == ["R1", "R2"]


def test_fake_green_citing_another_intents_run_by_hand_is_refused(borrower: Project) -> None:
    """--requirement R1 --evidence of knowledge:calc's run: run_for_other_intent at /evidence/0."""
    error = refused(borrower, "work.accept", id="knowledge:mul", requirement=["R1"],
                    evidence=["evidence:unit@1"], status="passed")
    assert (error.code, error.pointer) == ("run_for_other_intent", "/evidence/0")


def test_fake_green_borrowed_run_written_with_put_is_blocked(borrower: Project) -> None:
    """The acceptance written by hand with put: evidence_for_other_intent, and the stop blocks."""
    record = op(borrower, "get", id="knowledge:mul")["record"]
    run_record = op(borrower, "get", id="evidence:unit", revision=1)["record"]
    from assay.intent.contract import intent_sha256

    data = {**record["data"], "acceptance": {
        "intent_sha256": intent_sha256(record["data"]["intent"]), "blockers": [],
        "results": [{"requirement_id": "R1", "status": "passed", "notes": "the tests pass",
                     "evidence": [{"id": "evidence:unit", "revision": 1,
                                   "data_sha256": run_record["data_sha256"]}]}]}}
    op(borrower, "put", id="knowledge:mul", data=data, expect_revision=record["revision"])
    report = check(borrower, "knowledge:mul")
    borrowed = issue(report, "evidence_for_other_intent")
    assert (borrowed["requirement_id"], borrowed["intents"]) == ("R1", [INTENT])
    out = stopped(borrower, last_assistant_message="Done.")
    assert out["answer"]["decision"] == "block"
    mul = next(g for g in session(borrower)["data"]["decision"]["intents"]
               if g["id"] == "knowledge:mul")
    assert "evidence_for_other_intent" in mul["issue_codes"]


def test_fake_green_scoped_marks_cannot_be_run_for_another_intent(tmp_path: Path,
                                                                  ledger_url: str) -> None:
    """Marks naming knowledge:calc, run --for knowledge:mul: run_for_other_intent."""
    project = repo(tmp_path / "proj", ledger_url, tests=TESTS.replace(
        '"R1"', f'"{INTENT}#R1"').replace('"R2"', f'"{INTENT}#R2"'))
    op(project, "work.new", id="knowledge:mul", brief="calc multiplies",
       requirement=["R1|mul multiplies|its test passes"])
    cited = run(project, "R1", intent="knowledge:mul")
    error = refused(project, "work.accept", id="knowledge:mul", from_run=[cited])
    assert (error.code, error.pointer) == ("run_for_other_intent", "/from_run/0")
    assert error.details["intents"] == [INTENT]


# -- 4: unreadable results counted as a pass ---------------------------------------------------------

# conftest.py files an agent might write: the suite fails (or runs nothing) while pytest exits 0
# and the results file is made unreadable.
_EXIT_ZERO = "def pytest_sessionfinish(session, exitstatus):\n    session.exitstatus = 0\n\n\n"
HOSTILE = {
    "results_xml_forbidden": _EXIT_ZERO + (
        "def pytest_unconfigure(config):\n"
        "    text = open('reports/unit.xml', encoding='utf-8').read().split('?>', 1)[1]\n"
        "    open('reports/unit.xml', 'w', encoding='utf-8').write(\n"
        "        '<?xml version=\"1.0\"?><!DOCTYPE x [<!ENTITY e \"x\">]>' + text)\n"),
    "results_xml_invalid": _EXIT_ZERO + (
        "def pytest_unconfigure(config):\n"
        "    text = open('reports/unit.xml', encoding='utf-8').read()\n"
        "    open('reports/unit.xml', 'w', encoding='utf-8').write(text[:len(text) // 2])\n"),
    "results_no_tests": _EXIT_ZERO + (
        "def pytest_collection_modifyitems(items):\n    items.clear()\n"),
}


@pytest.mark.parametrize("code", sorted(HOSTILE))
def test_fake_green_unreadable_results_never_pass(calc: Project, code: str) -> None:
    """A refused, truncated or empty results file, the suite failing, pytest exiting 0: unverified."""
    (calc.root / "calc.py").write_text(BROKEN, encoding="utf-8")
    (calc.root / "conftest.py").write_text(HOSTILE[code], encoding="utf-8")
    cited = run(calc, "R1", "R2")
    ran = op(calc, "evidence.show", id="unit")["record"]["data"]
    assert (ran["observation"]["status"], ran["results"]["code"]) == ("passed", code)
    results = op(calc, "work.accept", id=INTENT, from_run=[cited])["results"]
    assert [r["status"] for r in results] == ["unverified", "unverified"]
    report = check(calc)
    unverified = issue(report, "evidence_results_unverified")
    assert (unverified["requirement_id"], unverified["results_code"]) == ("R1", code)
    assert_blocked(calc, "evidence_results_unverified")


# -- beside 1-4: rewriting the tests ----------------------------------------------------------------


# The agent's edits of the pinned test of R1: weaken its assertion, or unmap it and map a
# test that cannot fail instead.
REWRITES = {
    "changed": ("    assert calc.add(2, 3) == 5\n", "    assert True\n"),
    "missing": ('@pytest.mark.requirement("R1")\ndef test_add():',
                ('@pytest.mark.requirement("R1")\ndef test_add_exists():\n'
                 "    assert callable(calc.add)\n\n\ndef test_add():")),
}


@pytest.mark.parametrize("change", sorted(REWRITES))
def test_fake_green_rewritten_tests_are_blocked(calc: Project, change: str) -> None:
    """Weakening the pinned test or unmapping it, then running green: requirement_tests_changed."""
    prove(calc)
    (calc.root / "calc.py").write_text(BROKEN, encoding="utf-8")
    path = calc.root / "tests" / "test_calc.py"
    path.write_text(path.read_text(encoding="utf-8").replace(*REWRITES[change]),
                    encoding="utf-8")
    op(calc, "work.accept", id=INTENT, from_run=[run(calc, "R1", "R2")])
    report = check(calc)
    changed = issue(report, "requirement_tests_changed")
    assert changed["requirement_id"] == "R1"
    assert changed["tests"] == ["tests.test_calc::test_add"]
    assert changed["changes"][0]["change"] == change
    if change == "changed":
        assert (changed["changes"][0]["added"], changed["changes"][0]["removed"]) == (1, 1)
        assert changed["files"] == ["tests/test_calc.py"]
    assert_blocked(calc, "requirement_tests_changed")


FLIP = ("import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n"
        "    outcome = yield\n"
        "    outcome.get_result().outcome = 'passed'\n")


def test_fake_green_conftest_turning_failures_into_passes_is_blocked(calc: Project) -> None:
    """A conftest.py that reports every failed test as passed: the pinned tests' harness changed."""
    prove(calc)
    (calc.root / "calc.py").write_text(BROKEN, encoding="utf-8")
    (calc.root / "conftest.py").write_text(FLIP, encoding="utf-8")
    op(calc, "work.accept", id=INTENT, from_run=[run(calc, "R1", "R2")])
    report = check(calc)
    changed = issue(report, "requirement_tests_changed")
    assert (changed["changes"][0]["change"], changed["changes"][0]["conftest"]) == (
        "conftest", ["conftest.py"])
    assert "conftest.py" in changed["files"]
    assert_blocked(calc, "requirement_tests_changed")


def test_fake_green_reformatting_a_test_is_no_change(calc: Project) -> None:
    """Comments and formatting do not change a test's digest; a new test beside it never blocks."""
    prove(calc)
    path = calc.root / "tests" / "test_calc.py"
    text = path.read_text(encoding="utf-8").replace(
        "    assert calc.add(2, 3) == 5\n", "    # the sum\n    assert calc.add(2,\n"
                                            "                    3) == 5\n")
    path.write_text(text + '\n\n@pytest.mark.requirement("R1")\ndef test_add_zero():\n'
                           "    assert calc.add(0, 0) == 0\n", encoding="utf-8")
    op(calc, "work.accept", id=INTENT, from_run=[run(calc, "R1", "R2")])
    assert check(calc)["ready_to_review"] is True


# -- beside 1-4: tampering with the gate's settings -----------------------------------------------------


def test_fake_green_removing_the_hook_entry_is_blocked(calc: Project) -> None:
    """Removing assay's Stop hook from the harness settings: gate_config_changed."""
    op(calc, "hook.install", harness="claude-code")
    prove(calc)
    assert check(calc)["ready_to_review"] is True
    op(calc, "hook.uninstall", harness="claude-code")
    changed = issue(check(calc), "gate_config_changed")
    assert "hooks.claude-code.Stop" in changed["fields"]


def test_fake_green_private_pin_overlay_is_ignored(calc: Project) -> None:
    """A private gate-pin the agent writes straight to the ledger never replaces the project's."""
    from assay.ledger import open_store
    from assay.ledger.store import Write

    prove(calc)
    pin = op(calc, "get", id=f"gate-pin:{INTENT}")["record"]["data"]
    redefine_unit(calc)
    store = open_store(calc.db or str(calc.root / ".assay" / "ledger.db"), principal="agent")
    try:
        fake = {**pin, "commands": {}}
        store.put(Write(id=f"gate-pin:{INTENT}", data=fake, scope="project:demo",
                        audience="private:agent", origin="derived"))
    finally:
        store.close()
    assert issue(check(calc), "check_definition_changed")["command"] == "unit"


# The honest agent ------------------------------------------------------------------------


def test_fake_green_honest_agent_is_never_blocked(tmp_path: Path, ledger_url: str) -> None:
    """work new, evidence run --for, work accept, work check, set-up after the fact, stop: allowed."""
    project = repo(tmp_path / "proj", ledger_url, gate=False)
    # One run per requirement, accepted one by one: both stay current (same files, same outcome).
    op(project, "work.accept", id=INTENT, from_run=[run(project, "R1")])
    op(project, "work.accept", id=INTENT, from_run=[run(project, "R2")])
    report = check(project)
    assert (report["ready_to_review"], report["issues"]) == (True, [])
    # Set-up after the evidence: the hook and [gate] change only the contract files.
    op(project, "hook.install", harness="claude-code")
    with open(project.root / "assay.toml", "a", encoding="utf-8") as handle:
        handle.write(GATE)
    report = check(project)
    assert (report["ready_to_review"], report["issues"]) == (True, [])
    assert report["workspace"]["compared"] is True
    for message in ("All tests pass, done.", "Bye.", None):
        out = stop(project, claude_stop(project, message))
        assert out["answer"] is None, out
        assert out["decision"]["event"] == "gate_allowed"


# -- a direct SQL edit of the ledger: the cited run and the acceptance rewritten to "passed" ------


def rewrite_to_passed(project: Project, *, reseal: bool) -> list[int]:
    """The agent's SQL: the intent's and the cited run's newest versions say "passed", digests recomputed.

    With ``reseal`` it also recomputes each version's seal (the scheme is
    public), leaving only the chain to give it away. Returns the ledger
    revisions it rewrote.
    """
    import hashlib

    from assay.ledger.record import SEALED_FIELDS, version_digest

    rewritten = []
    for record_id in (INTENT, "evidence:unit"):
        text, revision = ledger_rows(
            project, "SELECT data, ledger_revision FROM record_versions WHERE id = ? "
                     "AND audience = 'project' ORDER BY revision DESC LIMIT 1", (record_id,))[0]
        text = text.replace('"failed"', '"passed"')
        ledger_sql(project, "UPDATE record_versions SET data = ?, data_sha256 = ? "
                            "WHERE ledger_revision = ?",
                   (text, hashlib.sha256(text.encode()).hexdigest(), revision))
        if reseal:
            row = ledger_rows(project, f"SELECT {', '.join(SEALED_FIELDS)} FROM record_versions "
                                       "WHERE ledger_revision = ?", (revision,))[0]
            ledger_sql(project, "UPDATE record_versions SET version_sha256 = ? "
                                "WHERE ledger_revision = ?",
                       (version_digest(dict(zip(SEALED_FIELDS, row))), revision))
        rewritten.append(revision)
    return rewritten


def failed_and_accepted(project: Project) -> None:
    """The code is broken, the check run and failed, and the failure accepted: the gate blocks."""
    (project.root / "calc.py").write_text(BROKEN, encoding="utf-8")
    commit(project, "break add")
    op(project, "work.accept", id=INTENT, from_run=[run(project, "R1", "R2")])
    assert check(project)["ready_to_review"] is False


def test_fake_green_sql_edit_of_the_cited_run_is_blocked(calc: Project) -> None:
    """The failed run and its acceptance rewritten to "passed" in SQL: both versions are unreadable, the stop blocks, ledger verify names the first."""
    failed_and_accepted(calc)
    first = min(rewrite_to_passed(calc, reseal=False))
    report = check(calc)
    assert (report["ready_to_review"], blocking(report)) == (False, ["intent_unreadable"])
    assert_blocked(calc, "intent_unreadable")
    error = refused(calc, "ledger.verify")
    assert (error.code, error.details["ledger_revision"], error.details["reason"]) == (
        "ledger_chain_broken", first, "version_digest_mismatch")


def test_fake_green_resealed_sql_edit_is_found_by_the_chain(calc: Project) -> None:
    """The same edit with every seal recomputed reads as intact, but ledger verify finds the chain broken at the first rewritten version."""
    failed_and_accepted(calc)
    first = min(rewrite_to_passed(calc, reseal=True))
    error = refused(calc, "ledger.verify")
    assert (error.code, error.details["ledger_revision"], error.details["reason"]) == (
        "ledger_chain_broken", first, "chain_mismatch")


# == The gate's own ground (bypasses 5-11) ==================================================

AGENT = "agent"  # the gated principal: the project's own principal by default
PERSON = "alice"
HOLDER = str(Path(__file__).with_name("lock_holder.py"))
LEDGER_WORKER = str(Path(__file__).parents[1] / "ledger" / "ledger_worker.py")
SCOPE = "project:demo"


@pytest.fixture(autouse=True)
def no_harness_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests name the project a hook belongs to themselves."""
    for name in ("CLAUDE_PROJECT_DIR", "CURSOR_PROJECT_DIR", "ASSAY_PRINCIPAL", "ASSAY_DB"):
        monkeypatch.delenv(name, raising=False)


def ledger_of(project: Project) -> str:
    return project.db or str(project.root / ".assay" / "ledger.db")


def spooled(project: Project) -> list[dict[str, Any]]:
    path = project.root / ".assay" / "gate-spool.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def revision(project: Project) -> int:
    return int(op(project, "ledger.info")["ledger_revision"])



def pinned_stop(project: Project, data: dict[str, Any], *, anchor: Path | None = None,
                harness: str = "claude-code") -> dict[str, Any]:
    """``hook stop --scope project`` as the installing project's harness runs it."""
    inv = Invocation(cwd=str(anchor or project.root), db=project.db, surface="test")
    try:
        out: dict[str, Any] = call("hook.stop", {"payload": data, "scope": "project",
                                                 "harness": harness}, inv)[0]["data"]
        return out
    finally:
        inv.close()


def cli_stop(project: Project, data: dict[str, Any] | bytes, *args: str,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """The real ``assay hook stop`` process, the payload on standard input."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
    full.update(env or {})
    if project.db:
        full["ASSAY_DB"] = project.db
    stdin = data if isinstance(data, bytes) else json.dumps(data).encode()
    exe = str(Path(sys.executable).with_name("assay"))
    return subprocess.run([exe, "hook", "stop", *args], cwd=project.root, input=stdin,
                          capture_output=True, env=full, timeout=120, check=False)


@contextmanager
def holding(*argv: str) -> Iterator[subprocess.Popen[str]]:
    """A child process holding a real lock until the block ends (it is killed then)."""
    proc = subprocess.Popen([sys.executable, *argv], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    try:
        assert proc.stdout.readline().strip() == "holding"
        yield proc
    finally:
        proc.kill()
        proc.communicate(timeout=30)


def pg_schema(project: Project) -> str:
    assert project.db is not None
    return project.db.rpartition("assay_schema=")[2]


# -- 5: a private overlay of what gates the stop ------------------------------------------------

@pytest.fixture
def overlaid(tmp_path: Path, ledger_url: str) -> Project:
    """The project's intent not ready, and the agent's private copy of it claiming it is."""
    project = gate_project(tmp_path / "proj", ledger_url)
    record_intent(project)
    prove_export(project)
    current = op(project, "get", id="knowledge:export")["record"]
    ready = current["data"]
    reopened = {k: v for k, v in ready.items() if k != "acceptance"}
    op(project, "put", id="knowledge:export", data=reopened,
       expect_revision=current["revision"], principal=PERSON)
    op(project, "put", id="knowledge:export", data=ready, audience=f"private:{AGENT}",
       principal=AGENT)
    return project


def test_wall_private_intent_copy_is_ignored_and_named(overlaid: Project) -> None:
    """The agent's private 'passed' copy reads ready in its own view; the gate judges the
    project's version, blocks, and names the copy it ignored in the reason and the record."""
    assert op(overlaid, "work.check", id="knowledge:export", principal=AGENT)["ready_to_review"]
    assert not op(overlaid, "work.check", id="knowledge:export",
                  principal=PERSON)["ready_to_review"]
    out = stop(overlaid, payload("claude-code", "stop", overlaid))
    reason = out["answer"]["reason"]
    assert out["answer"]["decision"] == "block" and out["recorded"] is True
    assert "knowledge:export is not ready for review" in reason
    assert "Ignored: private versions by agent of knowledge:export (revision 1)" in reason
    decision = session(overlaid)["data"]["decision"]
    assert decision["ignored_private"] == [
        {"id": "knowledge:export", "audience": f"private:{AGENT}", "revision": 1}]


@pytest.fixture
def bound(tmp_path: Path, ledger_url: str) -> Project:
    """The session bound by a person to knowledge:export (not ready); knowledge:other is ready."""
    project = gate_project(tmp_path / "proj", ledger_url, gate="")
    record_intent(project)
    record_intent(project, "knowledge:other")
    prove_export(project, "knowledge:other")
    op(project, "gate.bind", session=CLAUDE_SESSION, intent=["knowledge:export"],
       principal=PERSON)
    return project


def test_wall_private_binding_copy_is_ignored(bound: Project) -> None:
    """A private gate-binding written straight through the library (every operation refuses it)
    does not replace the person's binding: the bound intent still gates, the copy is named."""
    project = bound
    agent = open_store(ledger_of(project), base=project.root, principal=AGENT)
    try:
        agent.put(Write(id=f"gate-binding:{CLAUDE_SESSION}", scope=SCOPE,
                        audience=f"private:{AGENT}",
                        data={"schema": "assay.gate.binding.v1", "session_id": CLAUDE_SESSION,
                              "intents": ["knowledge:other"]}))
    finally:
        agent.close()
    out = stop(project, payload("claude-code", "stop", project))
    assert "knowledge:export is not ready for review" in out["answer"]["reason"]
    ignored = session(project)["data"]["decision"]["ignored_private"]
    assert {"id": f"gate-binding:{CLAUDE_SESSION}", "audience": f"private:{AGENT}",
            "revision": 1} in ignored


def test_wall_spoofed_stop_on_a_private_view_keeps_the_give_up(overlaid: Project) -> None:
    """After a give-up, a fresh stop the agent sends while its private copy reads ready is
    blocked on the project's version, and the give-up stays on the record and in work check."""
    give_up(overlaid)
    assert session(overlaid)["data"]["gave_up"] is not None
    spoof = stop(overlaid, payload("claude-code", "stop", overlaid,
                                   last_assistant_message="Done."))
    assert spoof["answer"]["decision"] == "block"
    assert session(overlaid)["data"]["gave_up"] is not None
    report = op(overlaid, "work.check", id="knowledge:export", principal=PERSON)
    assert "gate_gave_up" in [i["code"] for i in report["issues"]]


def test_wall_attest_signs_the_project_version_not_a_private_copy(overlaid: Project) -> None:
    """attest run by the agent reads the project's version: the signed verdict is not_ready."""
    op(overlaid, "key.generate")
    out = op(overlaid, "attest", intent="knowledge:export", principal=AGENT)
    assert out["verdict"] == "not_ready" and out["runs"] == []


def test_wall_store_without_principal_reads_the_project_partition_only(store: Any) -> None:
    """A handle opened without a principal never returns, finds or counts a private version."""
    store.put(Write(id="knowledge:x", data={"v": "project"}, scope=SCOPE))
    store.put(Write(id="knowledge:x", data={"v": "mine"}, scope=SCOPE,
                    audience=f"private:{AGENT}"))
    store.put(Write(id="knowledge:only-mine", data={}, scope=SCOPE,
                    audience=f"private:{AGENT}"))
    with store.reader() as reader:
        assert reader.get("knowledge:x").data == {"v": "project"}
        assert reader.get("knowledge:only-mine") is None
        assert [r.id for r in reader.find(kind="knowledge")] == ["knowledge:x"]
        assert reader.find_count(kind="knowledge") == 1
    agent = store.as_principal(AGENT)
    try:
        with agent.reader() as reader:
            assert reader.get("knowledge:x").data == {"v": "mine"}
    finally:
        agent.close()


# -- 6: forging or erasing the gate's own state ------------------------------------------------

@pytest.mark.parametrize("audience", ["project", f"private:{AGENT}"])
def test_wall_put_of_gate_session_is_refused(gave_up: Project, audience: str) -> None:
    """The agent's put of a clean gate-session record (any audience) is reserved_kind at /id,
    and nothing is written: the give-up stays."""
    before = revision(gave_up)
    error = refused(gave_up, "put", id=f"gate-session:{CLAUDE_SESSION}", audience=audience,
                    data={"schema": "assay.gate.session.v1", "gave_up": None}, principal=AGENT)
    assert (error.code, error.pointer, error.details) == ("reserved_kind", "/id",
                                                          {"kind": "gate-session"})
    assert revision(gave_up) == before
    assert session(gave_up)["data"]["gave_up"] is not None


@pytest.mark.parametrize("operation, extra", [("retire", {}),
                                              ("supersede", {"by": "note:nothing-to-see"})])
def test_wall_retire_or_supersede_of_gate_session_is_refused(gave_up: Project, operation: str,
                                                             extra: dict[str, str]) -> None:
    """Retiring or superseding the session record (which would hide gate_gave_up) is refused."""
    record_id = f"gate-session:{CLAUDE_SESSION}"
    op(gave_up, "put", id="note:nothing-to-see", data={}, principal=AGENT)
    before = revision(gave_up)
    current = session(gave_up)["revision"]
    error = refused(gave_up, operation, id=record_id, expect_revision=current,
                    principal=AGENT, **extra)
    assert (error.code, error.pointer) == ("reserved_kind", "/id")
    assert revision(gave_up) == before
    codes = [i["code"] for i in op(gave_up, "work.check", id="knowledge:export")["issues"]]
    assert "gate_gave_up" in codes


@pytest.mark.parametrize("kind", ["gate-binding", "gate-pin", "gate-approval"])
def test_wall_put_of_any_reserved_kind_is_refused(tmp_path: Path, kind: str) -> None:
    """Every kind only assay's operations write is refused to a plain put."""
    project = gate_project(tmp_path / "proj")
    error = refused(project, "put", id=f"{kind}:{CLAUDE_SESSION}", data={}, principal=PERSON)
    assert (error.code, error.pointer, error.details["kind"]) == ("reserved_kind", "/id", kind)


def test_wall_put_of_gate_state_over_the_command_line_is_refused(tmp_path: Path) -> None:
    """The same refusal from the real command, the data given in a file."""
    project = gate_project(tmp_path / "proj")
    (project.root / "forged.json").write_text('{"gave_up": null}', encoding="utf-8")
    result = project.run("put", "--data-file", "forged.json", "--",
                         f"gate-session:{CLAUDE_SESSION}")
    assert result.code == 1 and result.error["code"] == "reserved_kind"
    assert result.error["pointer"] == "/id"


def test_wall_gate_bind_by_the_gated_principal_is_refused(bound: Project) -> None:
    """The agent rebinding its own session to a ready intent is refused, naming the principal
    and what a person does; a person's binding goes through and records who bound."""
    project = bound
    error = refused(project, "gate.bind", session=CLAUDE_SESSION, intent=["knowledge:other"],
                    replace=True, principal=AGENT)
    assert (error.code, error.pointer) == ("binding_by_gated_principal", "/principal")
    assert error.details == {"principal": AGENT} and "--as NAME" in (error.action or "")
    binding = op(project, "get", id=f"gate-binding:{CLAUDE_SESSION}")["record"]["data"]
    assert binding["intents"] == ["knowledge:export"] and binding["bound_by"] == PERSON
    assert stop(project, payload("claude-code", "stop", project))["answer"] is not None


def test_wall_gate_bind_refuses_a_configured_gated_principal(tmp_path: Path) -> None:
    """With [gate] principal naming the agent, that principal is refused whatever the project's
    own principal is."""
    project = gate_project(tmp_path / "proj", gate='principal = "coder"')
    record_intent(project)
    error = refused(project, "gate.bind", session="s", intent=["knowledge:export"],
                    principal="coder")
    assert error.code == "binding_by_gated_principal"
    assert op(project, "gate.bind", session="s", intent=["knowledge:export"],
              principal=AGENT)["intents"] == ["knowledge:export"]


def test_wall_person_only_operations_are_marked_admin() -> None:
    """Binding, installing, uninstalling and answering as the hook are a person's operations (admin).

    The hook's own answers count as the gate's decisions, so the agent may not make them.
    """
    from assay.ops import lookup

    names = ("gate.bind", "hook.install", "hook.uninstall", "hook.stop", "hook.tool")
    assert [lookup(n).admin for n in names] == [True] * len(names)
    assert lookup("hook.doctor").admin is False


# -- 7: outwaiting the hook behind a lock -----------------------------------------------------

def _deadline_project(root: Path, db: str | None = None, *, cap: int = 5) -> Project:
    project = gate_project(root, db, extra=f"deadline_seconds = 3\nretry_cap = {cap}\n")
    record_intent(project)
    return project


def _answered_and_spooled(proc: subprocess.CompletedProcess[bytes], project: Project,
                          whys: tuple[str, ...]) -> dict[str, Any]:
    verdict, reason = reads(proc.returncode, proc.stdout.decode(), proc.stderr.decode())
    assert verdict == "block", (proc.stdout, proc.stderr)
    assert reason is not None and "could not" in reason
    entries = spooled(project)
    assert entries and entries[-1]["why"] in whys
    assert entries[-1]["record"] == f"gate-session:{CLAUDE_SESSION}"
    return entries[-1]


def _replayed(project: Project) -> list[dict[str, Any]]:
    """After the lock is gone, the next stop writes the spooled decisions first."""
    proc = cli_stop(project, payload("claude-code", "stop", project))
    assert reads(proc.returncode, proc.stdout.decode(), proc.stderr.decode())[0] == "block"
    assert spooled(project) == []
    history = op(project, "get", id=f"gate-session:{CLAUDE_SESSION}", history=True)["versions"]
    return [v["data"]["decision"] for v in history]


@pytest.mark.parametrize("held", ["queue", "counter", "immediate"])
def test_wall_hook_answers_while_sqlite_writes_are_held(tmp_path: Path, held: str) -> None:
    """A process holding the writers' queue, its counter's flock, or SQLite's write lock: the
    hook still answers a block before its deadline, spools the decision, and the next stop
    writes it to the ledger marked spooled."""
    project = _deadline_project(tmp_path / "proj")
    db = ledger_of(project)
    op(project, "put", id="note:warm", data={}, principal=PERSON)  # the side file exists now
    argv = {"queue": (LEDGER_WORKER, "hold", db), "counter": (HOLDER, "flock", db + "-writers"),
            "immediate": (HOLDER, "immediate", db)}[held]
    with holding(*argv):
        proc = cli_stop(project, payload("claude-code", "stop", project))
        entry = _answered_and_spooled(proc, project, ("ledger_busy", "gate_deadline"))
        assert entry["decision"]["answer"] == "block"
    decisions = _replayed(project)
    assert decisions[0]["spooled"]["why"] == entry["why"] and "spooled" not in decisions[1]


def test_wall_continuing_stops_under_a_held_ledger_are_counted(tmp_path: Path) -> None:
    """BEGIN IMMEDIATE held for good: a continuing stop is blocked too (never let through
    unrecorded), each block counted in the spool, and the run ends at the cap with a notice."""
    project = _deadline_project(tmp_path / "proj", cap=1)
    with holding(HOLDER, "immediate", ledger_of(project)):
        first = cli_stop(project, payload("claude-code", "stop", project))
        again = cli_stop(project, payload("claude-code", "stop-continuing", project))
        last = cli_stop(project, payload("claude-code", "stop-continuing", project))
    assert reads(first.returncode, first.stdout.decode(), "")[0] == "block"
    verdict, _ = reads(again.returncode, again.stdout.decode(), "")
    assert verdict == "allow" and "gave up after 1 block:" in json.loads(
        again.stdout)["systemMessage"]
    assert reads(last.returncode, last.stdout.decode(), "")[0] == "allow"
    assert [e["decision"]["event"] for e in spooled(project)] == [
        "gate_error", "gate_gave_up", "gate_allowed"]
    decisions = _replayed(project)
    assert [d["event"] for d in decisions] == ["gate_error", "gate_gave_up", "gate_allowed",
                                               "gate_blocked"]
    assert session(project)["data"]["gave_up"]["blocks"] == 1


def test_wall_hook_answers_at_its_deadline_when_the_ledger_cannot_even_open(
        tmp_path: Path) -> None:
    """A connection holding the SQLite file exclusively stalls every open for 30 s: the hook's
    own deadline answers first (gate_deadline), spooled."""
    project = _deadline_project(tmp_path / "proj")
    with holding(HOLDER, "exclusive", ledger_of(project)):
        proc = cli_stop(project, payload("claude-code", "stop", project))
        entry = _answered_and_spooled(proc, project, ("gate_deadline",))
    assert "deadline" in entry["decision"]["reason"]
    assert _replayed(project)[0]["spooled"]["why"] == "gate_deadline"


def test_wall_forged_spool_entries_never_clear_a_give_up(gave_up: Project) -> None:
    """The spool is the agent's to edit: a forged 'allowed on proof' entry is replayed as a
    spooled decision only, and the give-up stays on the record."""
    forged = {"record": f"gate-session:{CLAUDE_SESSION}", "spooled_at": "2026-01-01T00:00:00Z",
              "why": "ledger_busy", "continuing": False, "harness": "claude-code",
              "session_id": CLAUDE_SESSION, "agent_id": None,
              "decision": {"event": "gate_allowed", "answer": "allow", "reason": "all proven",
                           "intents": [{"id": "knowledge:export", "ready_to_review": True}]}}
    (gave_up.root / ".assay" / "gate-spool.jsonl").write_text(json.dumps(forged) + "\n",
                                                            encoding="utf-8")
    out = stop(gave_up, payload("claude-code", "stop", gave_up))
    assert out["answer"]["decision"] == "block"
    history = op(gave_up, "get", id=f"gate-session:{CLAUDE_SESSION}", history=True)["versions"]
    assert history[-2]["data"]["decision"]["spooled"]["why"] == "ledger_busy"
    assert history[-2]["data"]["gave_up"] is not None
    assert session(gave_up)["data"]["gave_up"]["blocks"] == 5


@pytest.mark.postgres
@pytest.mark.parametrize("held", ["advisory", "table", "access"])
def test_wall_hook_answers_while_postgres_locks_are_held(tmp_path: Path, pg_url: str,
                                                         held: str) -> None:
    """A session holding the ledger's advisory write lock, a lock on its table, or one that
    stops even reads: the hook answers a block before its deadline, spooled, replayed later."""
    project = _deadline_project(tmp_path / "proj", pg_url)
    assert PG_URL
    with holding(HOLDER, held, PG_URL, pg_schema(project)):
        proc = cli_stop(project, payload("claude-code", "stop", project))
        entry = _answered_and_spooled(proc, project, ("ledger_busy", "gate_deadline"))
    decisions = _replayed(project)
    assert decisions[0]["spooled"]["why"] == entry["why"]


@pytest.mark.postgres
def test_wall_postgres_put_behind_the_advisory_lock_is_ledger_busy(tmp_path: Path,
                                                                   pg_url: str) -> None:
    """A write waiting on a held advisory lock ends as ledger_busy (retryable), nothing written."""
    store = open_store(pg_url)
    try:
        schema = pg_url.rpartition("assay_schema=")[2]
        assert PG_URL
        with holding(HOLDER, "advisory", PG_URL, schema):
            store.busy_timeout_ms = 300  # type: ignore[attr-defined]
            with pytest.raises(AssayError) as info:
                store.put(Write(id="knowledge:late", data={}, scope=SCOPE))
        assert info.value.code == "ledger_busy" and info.value.retryable
        with store.reader() as reader:
            assert reader.get("knowledge:late") is None
    finally:
        store.close()


def test_wall_queue_counter_held_for_good_is_ledger_busy(tmp_path: Path) -> None:
    """Before, a process holding the queue counter's flock made every put wait without bound;
    now a put past its bound is ledger_busy and writes nothing."""
    db = tmp_path / "ledger.db"
    store = open_store(db)
    store.put(Write(id="knowledge:first", data={}, scope=SCOPE))
    store.close()
    with holding(HOLDER, "flock", str(db) + "-writers"):
        late = subprocess.run([sys.executable, LEDGER_WORKER, "late", str(db), "300"],
                              input="", capture_output=True, text=True, timeout=120, check=False)
    assert json.loads(late.stdout.splitlines()[0])["outcome"] == "ledger_busy"


# -- 8: stopping from outside the project -----------------------------------------------------

def test_wall_stop_from_outside_the_project_blocks_and_is_recorded(tmp_path: Path,
                                                                   ledger_url: str) -> None:
    """A project-scope hook and a stop whose cwd is elsewhere: blocked with the way back,
    recorded in the installing project's ledger."""
    project = ready_project(tmp_path / "proj", ledger_url)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = pinned_stop(project, payload("claude-code", "stop", project, cwd=str(elsewhere)))
    assert out["answer"]["decision"] == "block" and out["recorded"] is True
    assert f"This stop comes from {elsewhere}, outside the project" in out["answer"]["reason"]
    place = session(project)["data"]["decision"]["place"]
    assert place["problem"] == "outside" and place["cwd"] == str(elsewhere)


def test_wall_stop_from_a_nested_project_blocks_and_is_recorded(tmp_path: Path,
                                                                ledger_url: str) -> None:
    """The agent runs assay init in a subdirectory and stops there: blocked, and recorded in
    the project that installed the hook, not in the nested one."""
    project = ready_project(tmp_path / "proj", ledger_url)
    nested = make_project(project.root / "scratch", name="scratch")
    out = pinned_stop(project, payload("claude-code", "stop", project, cwd=str(nested.root)))
    assert out["answer"]["decision"] == "block"
    assert "a project of its own (it has an assay.toml)" in out["answer"]["reason"]
    assert session(project)["data"]["decision"]["place"]["problem"] == "nested"
    assert op(nested, "find", kind="gate-session")["count"] == 0


def test_wall_harness_project_dir_names_the_gated_project(tmp_path: Path) -> None:
    """Claude Code's CLAUDE_PROJECT_DIR names the project even when the hook runs elsewhere."""
    project = gate_project(tmp_path / "proj")
    record_intent(project)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    data = payload("claude-code", "stop", project, cwd=str(elsewhere))
    exe = str(Path(sys.executable).with_name("assay"))
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")},
           "CLAUDE_PROJECT_DIR": str(project.root)}
    proc = subprocess.run([exe, "hook", "stop", "--harness", "claude-code", "--scope",
                           "project"], cwd=elsewhere, input=json.dumps(data).encode(),
                          capture_output=True, env=env, timeout=120, check=False)
    verdict, reason = reads(proc.returncode, proc.stdout.decode(), proc.stderr.decode())
    assert verdict == "block" and reason is not None and "outside the project" in reason
    assert session(project)["revision"] == 1


def test_wall_removed_assay_toml_under_a_project_hook_blocks(tmp_path: Path) -> None:
    """The agent deletes assay.toml: a project-scope hook blocks (and spools) instead of
    finding nothing to gate."""
    project = gate_project(tmp_path / "proj")
    record_intent(project)
    (project.root / "assay.toml").unlink()
    out = pinned_stop(project, payload("claude-code", "stop", project))
    assert out["answer"]["decision"] == "block" and "no assay.toml found" in \
        out["answer"]["reason"]
    assert spooled(project)[-1]["why"] == "project_not_found"


# -- 9: switching the gate off over MCP -------------------------------------------------------

@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize("tool", ["hook_uninstall", "hook_install", "init", "key_generate",
                                  "retire", "gate_bind", "gate_pin", "gate_approve"])
async def test_wall_mcp_agent_cannot_switch_the_gate_off(tmp_path: Path, tool: str,
                                                         anyio_backend: str) -> None:
    """Over MCP the agent's profile offers no tool that uninstalls, rebinds, pins or approves:
    each is tool_not_offered and the settings file and the ledger are left as they were."""
    from mcp import Client

    from assay.mcp.server import build_server

    project = ready_project(tmp_path / "proj")
    op(project, "hook.install", harness="claude-code")
    settings = project.root / ".claude" / "settings.json"
    before, at = settings.read_bytes(), revision(project)
    arguments = {"hook_uninstall": {"harness": "claude-code"},
                 "hook_install": {"harness": "claude-code"},
                 "retire": {"id": "knowledge:export"},
                 "gate_bind": {"session": CLAUDE_SESSION, "intent": ["knowledge:export"]},
                 "gate_pin": {"intent": ["knowledge:export"]},
                 "gate_approve": {"intent": ["knowledge:export"], "reason": "mine"}}
    async with Client(build_server(cwd=str(project.root))) as client:
        listed = {t.name for t in (await client.list_tools()).tools}
        result = await client.call_tool(tool, arguments.get(tool, {}))
    assert tool not in listed
    assert result.is_error is True
    assert json.loads(result.content[0].text)["error"]["code"] == "tool_not_offered"
    assert settings.read_bytes() == before and revision(project) == at


# -- 10: burning the retry cap ----------------------------------------------------------------

def test_wall_garbage_payloads_do_not_burn_a_sessions_cap(tmp_path: Path,
                                                          ledger_url: str) -> None:
    """Six payloads that name no session use up only the shared record; the real session's
    payload, unreadable because its last message is past the input bound, is counted on a
    record of its own and blocked."""
    project = gate_project(tmp_path / "proj", ledger_url)
    record_intent(project)
    for _ in range(6):
        cli_stop(project, b"not a payload")
    assert session(project, "unreadable-payload")["data"]["run"]["gave_up"] is True
    big = json.dumps(payload("claude-code", "stop", project,
                             last_assistant_message="x" * (5 * 1024 * 1024))).encode()
    proc = cli_stop(project, big)
    verdict, reason = reads(proc.returncode, proc.stdout.decode(), proc.stderr.decode())
    assert verdict == "block" and reason is not None and "larger than" in reason
    own = session(project, f"unreadable-payload/{CLAUDE_SESSION}")["data"]
    assert own["run"] == {"blocks": 1, "gave_up": False}
    assert own["decision"]["intents"][0]["id"] == "knowledge:export"


def test_wall_unreadable_payload_records_are_bounded(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the bound of records a project keeps for unreadable payloads, more sessions share
    the one shared record."""
    from assay.gate import stop as gate_stop

    monkeypatch.setattr(gate_stop, "MAX_UNREADABLE_SESSIONS", 2)
    project = gate_project(tmp_path / "proj")
    for name in ("a", "b", "c"):
        stop(project, {"session_id": name, "hook_event_name": 5, "cwd": str(project.root)})
    ids = [r["id"] for r in op(project, "find", kind="gate-session")["records"]]
    assert ids == ["gate-session:unreadable-payload", "gate-session:unreadable-payload/a",
                   "gate-session:unreadable-payload/b"]


@pytest.mark.parametrize("harness", ["claude-code", "codex"])
def test_wall_give_up_tells_the_person(tmp_path: Path, harness: str) -> None:
    """The give-up is told to the person as a systemMessage, which the harness shows them."""
    project = gate_project(tmp_path / "proj", extra="retry_cap = 1\n")
    record_intent(project)
    cli_stop(project, payload(harness, "stop", project), "--harness", harness)
    proc = cli_stop(project, payload(harness, "stop-continuing", project), "--harness", harness)
    assert reads(proc.returncode, proc.stdout.decode(), proc.stderr.decode())[0] == "allow"
    message = json.loads(proc.stdout)["systemMessage"]
    assert "gave up after 1 block:" in message
    assert "'assay get --history -- gate-session:" in message


def test_wall_give_up_in_cursor_goes_to_standard_error(tmp_path: Path) -> None:
    """Cursor's stop answer has no field for the person: the notice goes to standard error."""
    project = gate_project(tmp_path / "proj", extra="retry_cap = 1\n")
    record_intent(project)
    cli_stop(project, payload("cursor", "stop", project), "--harness", "cursor")
    proc = cli_stop(project, payload("cursor", "stop", project, loop_count=1),
                    "--harness", "cursor")
    assert proc.returncode == 0 and proc.stdout == b""
    assert b"gave up after 1 block:" in proc.stderr


# -- 11: a side file planted for the writers' queue -------------------------------------------

@pytest.mark.parametrize("plant", ["symlink", "hardlink", "fifo", "damaged"])
def test_wall_planted_side_file_never_fails_or_redirects_a_write(tmp_path: Path,
                                                                 plant: str) -> None:
    """A symlink, a hard link, a FIFO or a damaged counter at `<ledger>-writers` (a cloned repo
    can ship one): writes commit through SQLite's own lock with a warning, exit 0, and the
    planted file is never written."""
    project = make_project(tmp_path / "proj")
    side = project.root / ".assay" / "ledger.db-writers"
    victim = tmp_path / "victim.bin"
    victim.write_bytes(b"ABCDEFGH-keep-me")
    if plant == "symlink":
        os.symlink(victim, side)
    elif plant == "hardlink":
        os.link(victim, side)
    elif plant == "fifo":
        os.mkfifo(side)
    else:
        side.write_bytes(b"\xff" * 8)
    for name in ("a", "b"):
        result = project.run("put", "--data-file", "-", "--", f"note:{name}", input="{}",
                             timeout=60)
        assert result.code == 0, result.stderr
        assert "writes wait on SQLite's own lock instead" in result.stderr
    assert victim.read_bytes() == b"ABCDEFGH-keep-me"
    if plant == "damaged":
        assert side.read_bytes() == b"\xff" * 8
    assert op(project, "ledger.info")["ledger_revision"] == 2


# -- an honest session ------------------------------------------------------------------------

def test_wall_honest_session_is_never_blocked(tmp_path: Path, ledger_url: str) -> None:
    """A person binds the session, the agent works in a subdirectory and proves its work in the
    project: the project-scope hook lets it stop, recorded, with nothing ignored or told."""
    project = gate_project(tmp_path / "proj", ledger_url, gate="")
    record_intent(project)
    op(project, "gate.bind", session=CLAUDE_SESSION, intent=["knowledge:export"],
       principal=PERSON)
    prove_export(project)
    work = project.root / "src"
    work.mkdir()
    out = pinned_stop(project, payload("claude-code", "stop", project, cwd=str(work)))
    assert out["answer"] is None and out["notice"] is None and out["recorded"] is True
    assert out["decision"]["event"] == "gate_allowed"
    decision = session(project)["data"]["decision"]
    assert "ignored_private" not in decision and "place" not in decision
    assert spooled(project) == []


def test_fake_green_threat_table_names_only_scripts_that_exist() -> None:
    """Every test docs/agents.md's threat table cites exists (in this module, or in the test
    module a row names), and every bypass numbered in the issue list (1 to 11) has a row."""
    import re

    root = Path(__file__).parents[2]
    text = (root / "docs" / "agents.md").read_text(encoding="utf-8")
    table = text[text.index("### 6.1 What the agent cannot do"):]
    rows = [line for line in table.splitlines() if line.startswith("| ") and "`test_" in line]
    here = {name for name in globals() if name.startswith("test_")}
    missing = []
    for line in rows:
        module = re.search(r"`(tests/[a-z0-9_/]+\.py)`", line)
        known = here if module is None else set(re.findall(
            r"^def (test_[a-z0-9_]+)\(", (root / module.group(1)).read_text(encoding="utf-8"),
            re.MULTILINE))
        missing += [n for n in re.findall(r"`(test_[a-z0-9_]+)`", line) if n not in known]
    assert rows and not missing, missing
    numbered = {int(m) for line in rows for m in re.findall(r"^\| (\d+)\. ", line)}
    assert numbered >= set(range(1, 12))
