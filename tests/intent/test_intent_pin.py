"""Pins: what work accept pins first, what work check compares, gate pin and gate approve."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from readiness_helpers import damage

from assay.intent.pin import compare_tests, gate_changes
from assay_testing import Project, make_project, refused
from assay_testing import data as op
from junit_testing import junit_xml, writer_code

INTENT = "knowledge:export"
REVIEWER = "alice"
SOURCE = "def test_rows():\n    assert 1 + 1 == 2\n\n\ndef test_header():\n    assert True\n"
# The unit check writes a JUnit file whose two tests are found in tests/test_csv.py.
GREEN = junit_xml(("tests.test_csv", "test_rows", "passed", ("R1",)),
                  ("tests.test_csv", "test_header", "passed", ("R1",)))


def unit(document: str = GREEN, name: str = "unit", timeout: int = 60) -> str:
    argv = json.dumps([sys.executable, "-c", writer_code("reports/unit.xml", document)])
    return (f"\n[evidence.commands.{name}]\nargv = {argv}\ntimeout = {timeout}\n"
            'results = { format = "junit", path = "reports/unit.xml" }\n')


def codes(report: dict[str, Any]) -> list[str]:
    return [i["code"] for i in report["issues"]]


def found(report: dict[str, Any], code: str) -> dict[str, Any]:
    return next(i for i in report["issues"] if i["code"] == code)


@pytest.fixture
def proj(tmp_path: Path, ledger_url: str) -> Project:
    """A project on each backend whose unit check maps two tests of tests/test_csv.py to R1."""
    project = make_project(tmp_path / "proj", db=ledger_url, extra_toml=unit())
    (project.root / "tests").mkdir()
    (project.root / "tests" / "test_csv.py").write_text(SOURCE, encoding="utf-8")
    op(project, "work.new", id=INTENT, brief="Ship the export",
       requirement=["R1|rows|its tests pass", "R2|docs|read them"], verify_with=["R1=unit"])
    return project


def accept_run(project: Project, *rids: str, name: str = "unit") -> dict[str, Any]:
    ran = op(project, "evidence.run", name=name, target=[f"{INTENT}#{r}" for r in rids or ("R1",)])
    cited = f"{ran['receipt']['id']}@{ran['receipt']['revision']}"
    return op(project, "work.accept", id=INTENT, from_run=[cited])


def pin(project: Project, target: str = INTENT) -> dict[str, Any]:
    return op(project, "get", id=f"gate-pin:{target}")["record"]  # type: ignore[no-any-return]


def rewrite(project: Project, old: str, new: str) -> None:
    text = (project.root / "assay.toml").read_text(encoding="utf-8")
    (project.root / "assay.toml").write_text(text.replace(old, new), encoding="utf-8")


# work accept: trust on first use ------------------------------------------------------------


def test_pin_first_accept_pins_checks_tests_and_gate(proj: Project) -> None:
    """The first accept writes the intent's pin and the gate's, as the agent, not reviewed."""
    out = accept_run(proj)
    assert [r["id"] for r in out["pinned"]] == [f"gate-pin:{INTENT}", "gate-pin:gate"]
    data = pin(proj)["data"]
    assert (data["pinned_by"], data["reviewed"], data["how"]) == ("agent", False, "first_accept")
    assert data["commands"]["unit"]["contract"]["timeout"] == 60
    tests = data["requirements"]["R1"]["tests"]
    assert sorted(tests) == ["tests.test_csv::test_header", "tests.test_csv::test_rows"]
    assert tests["tests.test_csv::test_rows"]["kind"] == "function"
    assert data["requirements"]["R1"]["commands"] == ["unit"]


def test_pin_later_accept_extends_without_changing_what_is_pinned(proj: Project) -> None:
    """A second accept adds a newly relied-on requirement and leaves pinned entries alone."""
    accept_run(proj)
    first = pin(proj)
    note = op(proj, "put", id="note:docs", data={"text": "read"})
    op(proj, "work.accept", id=INTENT, requirement=["R2"],
       evidence=[f"note:docs@{note['revision']}"], note="reviewed")
    second = pin(proj)
    assert second["revision"] == first["revision"] + 1 and second["data"]["how"] == "extended"
    assert second["data"]["requirements"]["R1"] == first["data"]["requirements"]["R1"]
    assert second["data"]["requirements"]["R2"]["commands"] == []
    accept_run(proj)
    assert pin(proj)["revision"] == second["revision"]  # nothing new: nothing written


# work check: what is compared ---------------------------------------------------------------


def test_pin_check_definition_changed_in_assay_toml(proj: Project) -> None:
    """The pinned command's timeout changed in assay.toml: named with the field, blocking."""
    accept_run(proj)
    rewrite(proj, "timeout = 60", "timeout = 90")
    report = op(proj, "work.check", id=INTENT)
    issue = found(report, "check_definition_changed")
    assert (issue["command"], issue["fields"], issue["source"], issue["pin_revision"]) == (
        "unit", ["timeout"], "assay.toml", 1)
    assert report["ready_to_review"] is False and "requirement_id" not in issue


def test_pin_check_removed_from_assay_toml_is_a_change(proj: Project) -> None:
    """A pinned command no longer declared is check_definition_changed with field declared."""
    accept_run(proj)
    rewrite(proj, "[evidence.commands.unit]", "[evidence.commands.other]")
    report = op(proj, "work.check", id=INTENT)
    assert found(report, "check_definition_changed")["fields"] == ["declared"]


def test_pin_requirement_resting_on_another_command_is_a_change(tmp_path: Path) -> None:
    """R1 pinned to unit (no verify_with) later rests on a run of lint: field command."""
    project = make_project(tmp_path / "proj", extra_toml=unit() + unit(name="lint"))
    op(project, "work.new", id=INTENT, brief="b", requirement=["R1|rows|tests"])
    accept_run(project)
    accept_run(project, name="lint")
    issue = found(op(project, "work.check", id=INTENT), "check_definition_changed")
    assert (issue["command"], issue["fields"], issue["requirement_ids"]) == (
        "lint", ["command"], ["R1"])


@pytest.mark.parametrize("edit, change", [
    (("    assert 1 + 1 == 2\n", "    assert True\n"), "changed"),
    (("def test_rows():", "@pytest.mark.skip\ndef test_rows():"), "changed"),
])
def test_pin_tests_changed_names_test_and_diff_stat(proj: Project, edit: tuple[str, str],
                                                    change: str) -> None:
    """A pinned test's source changed (or gained a skip decorator): requirement_tests_changed."""
    accept_run(proj)
    path = proj.root / "tests" / "test_csv.py"
    path.write_text(path.read_text(encoding="utf-8").replace(*edit), encoding="utf-8")
    accept_run(proj)
    issue = found(op(proj, "work.check", id=INTENT), "requirement_tests_changed")
    assert (issue["requirement_id"], issue["tests"], issue["files"]) == (
        "R1", ["tests.test_csv::test_rows"], ["tests/test_csv.py"])
    assert issue["changes"][0]["change"] == change and issue["changes"][0]["added"] >= 1


def test_pin_gate_pin_unreadable_when_damaged(proj: Project) -> None:
    """A pin whose stored text is damaged: gate_pin_unreadable, blocking."""
    accept_run(proj)
    damage(proj, f"gate-pin:{INTENT}", 1, '{"schema":"x"}')
    issue = found(op(proj, "work.check", id=INTENT), "gate_pin_unreadable")
    assert (issue["pin_id"], issue["pin_revision"]) == (f"gate-pin:{INTENT}", 1)


# gate pin and gate approve ------------------------------------------------------------------


def test_pin_gate_pin_by_the_gated_principal_is_refused(proj: Project) -> None:
    """The agent pinning its own checks: gated_principal_cannot_review at /principal."""
    error = refused(proj, "gate.pin", intent=[INTENT])
    assert (error.code, error.pointer) == ("gated_principal_cannot_review", "/principal")


def test_pin_gate_pin_by_a_reviewer_is_reviewed(proj: Project) -> None:
    """A reviewer's pin before any run: reviewed, the verify_with command pinned."""
    op(proj, "gate.pin", principal=REVIEWER, intent=[INTENT])
    data = pin(proj)["data"]
    assert (data["pinned_by"], data["reviewed"], data["how"]) == (REVIEWER, True, "gate_pin")
    assert list(data["commands"]) == ["unit"]
    accept_run(proj)
    tests = pin(proj)["data"]["requirements"]["R1"]
    assert (tests["pinned_by"], tests["tests_pinned_by"], tests["tests_reviewed"]) == (
        REVIEWER, "agent", False)


def test_pin_gate_pin_over_a_change_is_refused(proj: Project) -> None:
    """gate pin does not paper over a change: pin_has_changes at /intent/0, nothing written."""
    accept_run(proj)
    rewrite(proj, "timeout = 60", "timeout = 90")
    error = refused(proj, "gate.pin", principal=REVIEWER, intent=[INTENT])
    assert (error.code, error.pointer) == ("pin_has_changes", "/intent/0")
    assert pin(proj)["revision"] == 1


def test_pin_gate_pin_over_a_weaker_gate_is_refused(proj: Project) -> None:
    """gate pin over a gate weaker than its pin: pin_has_changes at /gate."""
    accept_run(proj)
    with open(proj.root / "assay.toml", "a", encoding="utf-8") as handle:
        handle.write('\n[gate]\non_error = "allow"\n')
    error = refused(proj, "gate.pin", principal=REVIEWER)
    assert (error.code, error.pointer) == ("pin_has_changes", "/gate")


def test_pin_gate_approve_with_nothing_changed_is_refused(proj: Project) -> None:
    """Approving an unchanged intent: nothing_to_approve at /intent/0."""
    accept_run(proj)
    error = refused(proj, "gate.approve", principal=REVIEWER, intent=[INTENT], reason="r")
    assert (error.code, error.pointer) == ("nothing_to_approve", "/intent/0")


def test_pin_gate_approve_of_an_unchanged_gate_is_refused(proj: Project) -> None:
    """--gate while the gate is as pinned: nothing_to_approve at /gate."""
    accept_run(proj)
    error = refused(proj, "gate.approve", principal=REVIEWER, gate=True, reason="r")
    assert (error.code, error.pointer) == ("nothing_to_approve", "/gate")


def test_pin_gate_approve_needs_a_target(proj: Project) -> None:
    """Neither an intent nor --gate: missing_argument at /intent."""
    error = refused(proj, "gate.approve", principal=REVIEWER, reason="r")
    assert (error.code, error.pointer) == ("missing_argument", "/intent")


def test_pin_gate_approve_records_the_change_and_repins(proj: Project) -> None:
    """An approval names who, why and what; the new pin is the approved state."""
    accept_run(proj)
    rewrite(proj, "timeout = 60", "timeout = 90")
    out = op(proj, "gate.approve", principal=REVIEWER, intent=[INTENT], reason="slower disks")
    approval = op(proj, "get", id=out["approvals"][0]["id"])["record"]["data"]
    assert out["approvals"][0]["id"] == f"gate-approval:{INTENT}@2"
    assert (approval["approved_by"], approval["gated_principal"], approval["surface"]) == (
        REVIEWER, "agent", "test")
    data = pin(proj)["data"]
    assert (data["how"], data["approval"], data["commands"]["unit"]["contract"]["timeout"]) == (
        "approved", f"gate-approval:{INTENT}@2", 90)


def test_pin_gate_config_weakened_then_approved(proj: Project) -> None:
    """on_error allow is weaker than the pinned block: gate_config_changed until approved."""
    accept_run(proj)
    with open(proj.root / "assay.toml", "a", encoding="utf-8") as handle:
        handle.write('\n[gate]\non_error = "allow"\n')
    issue = found(op(proj, "work.check", id=INTENT), "gate_config_changed")
    assert issue["fields"] == ["on_error"]
    op(proj, "gate.approve", principal=REVIEWER, gate=True, reason="CI flakes")
    assert "gate_config_changed" not in codes(op(proj, "work.check", id=INTENT))


# the comparisons themselves -------------------------------------------------------------------

PINNED_GATE = {"intents": ["knowledge:a"], "on_error": "block", "retry_cap": 5,
               "principal": "agent", "default_intent": None, "evidence_ignore": [".cache"],
               "hooks": {"claude-code": {"Stop": [{"hooks": ["x"]}], "SubagentStop": []}}}


@pytest.mark.parametrize("now, fields", [
    ({"intents": []}, ["intents"]),
    ({"on_error": "allow"}, ["on_error"]),
    ({"retry_cap": 2}, ["retry_cap"]),
    ({"principal": "someone"}, ["principal"]),
    ({"evidence_ignore": [".cache", "src"]}, ["evidence_ignore"]),
    ({"hooks": {"claude-code": None}}, ["hooks.claude-code.Stop"]),
    ({"intents": ["knowledge:a", "knowledge:b"], "retry_cap": 9, "evidence_ignore": [],
      "default_intent": "knowledge:a",
      "hooks": {"claude-code": {"Stop": [{"hooks": ["x"]}], "SubagentStop": [{"h": 1}]},
                "codex": {"Stop": [{"h": 2}]}}}, []),
])
def test_pin_gate_changes_count_only_what_weakens(now: dict[str, Any], fields: list[str]) -> None:
    """Each weakening is named; more intents, a higher cap, fewer ignores, new hooks are not."""
    assert [c["field"] for c in gate_changes(PINNED_GATE, {**PINNED_GATE, **now})] == fields


def test_pin_gate_changes_another_default_intent() -> None:
    """A pinned default intent changed to another is a change; none pinned to one is not."""
    pinned = {**PINNED_GATE, "default_intent": "knowledge:a"}
    assert [c["field"] for c in gate_changes(pinned, {**pinned, "default_intent": "knowledge:b"})
            ] == ["default_intent"]


def test_pin_compare_tests_names_each_kind_of_change() -> None:
    """Missing, renamed (same source elsewhere), newly skipped, changed; a new test never."""
    pinned = {"a": {"sha256": "1", "outcome": "passed", "path": "t.py"},
              "b": {"sha256": "2", "outcome": "passed", "path": "t.py"},
              "c": {"sha256": "3", "outcome": "passed", "path": "t.py"},
              "d": {"sha256": "4", "outcome": "passed", "path": "t.py"}}
    now = {"b2": {"sha256": "2", "outcome": "passed", "path": "t.py"},
           "c": {"sha256": "3", "outcome": "skipped", "path": "t.py"},
           "d": {"sha256": "5", "outcome": "passed", "path": "t.py"},
           "e": {"sha256": "6", "outcome": "passed", "path": "t.py"}}
    changes = compare_tests(pinned, {"4": "x = 1\n"}, now, {"5": "x = 2\ny = 3\n"})
    assert changes == [
        {"test": "a", "change": "missing", "path": "t.py"},
        {"test": "b", "change": "renamed", "path": "t.py", "renamed_to": "b2"},
        {"test": "c", "change": "skipped", "path": "t.py"},
        {"test": "d", "change": "changed", "path": "t.py", "added": 2, "removed": 1},
    ]


def test_pin_compare_tests_names_a_changed_conftest() -> None:
    """A pinned test whose conftest.py digest changed (or appeared) is a conftest change."""
    pinned = {"a": {"sha256": "1", "outcome": "passed", "path": "t/test_a.py",
                    "conftest": {"t/conftest.py": "x"}}}
    now = {"a": {"sha256": "1", "outcome": "passed", "path": "t/test_a.py",
                 "conftest": {"t/conftest.py": "x", "conftest.py": "y"}}}
    assert compare_tests(pinned, {}, now, {}) == [
        {"test": "a", "change": "conftest", "path": "t/test_a.py", "conftest": ["conftest.py"]}]
