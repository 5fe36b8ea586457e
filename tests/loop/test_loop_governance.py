"""Operator controls and first-hour edges: acceptance, pause, gate approval, the ladder, lookups."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from loop_helpers import contract, evaluation, loop_project, op, start, submit

from assay.errors import AssayError
from assay.ops import Invocation, call
from assay_testing import Project


def _err(project: Project, name: str, args: dict[str, Any], principal: str | None = None
         ) -> AssayError:
    with pytest.raises(AssayError) as caught:
        _as(project, name, args, principal)
    return caught.value


def _as(project: Project, name: str, args: dict[str, Any], principal: str | None
        ) -> dict[str, Any]:
    inv = Invocation(cwd=str(project.root), principal=principal, surface="test")
    try:
        envelope, _ = call(name, args, inv)
    finally:
        inv.close()
    data: dict[str, Any] = envelope["data"]
    return data


def _gate(project: Project, view: dict[str, Any], action: str = "git push origin main"
          ) -> dict[str, Any]:
    out: dict[str, Any] = op(project, "loop.gate-check", {
        "handle": json.dumps(view["submissionHandle"]), "action": action})["gateDecision"]
    return out


# ---------------------------------------------------------------- acceptance (first hour, 9)


def test_loop_start_without_acceptance_refused(gitproj: Project) -> None:
    """A start with neither a criterion nor a constraint is acceptance_empty and writes nothing."""
    ran = gitproj.run("loop", "start", "--task", "x")
    assert ran.code == 2 and (ran.error["code"], ran.error["pointer"]) == ("acceptance_empty",
                                                                          "/criterion")
    assert "--no-criteria" in ran.error["action"]
    assert gitproj.ok("find", "--kind", "loop")["data"]["records"] == []


def test_loop_start_no_criteria_on_purpose(gitproj: Project) -> None:
    """--no-criteria starts a loop with empty acceptance on purpose."""
    data = gitproj.ok("loop", "start", "--task", "x", "--no-criteria")["data"]
    assert data["guidance"]["criteria"] == [] and data["round"] == 1


def test_loop_start_constraint_alone_is_acceptance(gitproj: Project) -> None:
    """A hard constraint alone is operator acceptance enough to start."""
    assert start(gitproj, criterion=[], constraint=["no new dependencies"])["round"] == 1


def test_loop_start_no_criteria_with_criterion_refused(gitproj: Project) -> None:
    """--no-criteria contradicts a --criterion: invalid_argument at /no_criteria."""
    err = _err(gitproj, "loop.start", {"task": "x", "criterion": ["c"], "no_criteria": True})
    assert (err.code, err.pointer) == ("invalid_argument", "/no_criteria")


# ---------------------------------------------------------------- lookups (first hour, 11)


@pytest.mark.parametrize("argv", [("loop", "explain"), ("loop", "replay", "--all"),
                                  ("loop", "questions")])
def test_loop_views_without_active_loop_list_stopped_loops(gitproj: Project,
                                                           argv: tuple[str, ...]) -> None:
    """With no active loop, explain, replay --all and questions name the stopped loops."""
    for name in ("first", "second"):
        view = start(gitproj, loop=name, task=f"task {name}")
        submit(gitproj, view["submissionHandle"], evaluation("failed", False))
    ran = gitproj.run(*argv)
    assert ran.code == 2 and ran.error["code"] == "invalid_argument"
    assert "first (stopped: failed)" in ran.error["message"]
    assert "second (stopped: failed)" in ran.error["message"]
    assert [x["loopId"] for x in ran.error["details"]["loops"]] == ["first", "second"]


def test_loop_missing_loop_names_asked_and_existing(gitproj: Project) -> None:
    """A missing loop's error names the loop asked for and the loops that exist."""
    start(gitproj, loop="real")
    ran = gitproj.run("loop", "status", "--loop", "ghost")
    assert ran.code == 6 and ran.error["code"] == "state_unavailable"
    assert "'ghost'" in ran.error["message"] and "real (active)" in ran.error["message"]
    assert ran.error["details"]["loopId"] == "ghost"
    assert ran.error["details"]["loops"] == [{"loopId": "real", "status": "active",
                                              "stopReason": None}]


def test_loop_next_help_marks_handle_required(gitproj: Project) -> None:
    """loop next --help marks --handle as required (and the registry says so to MCP)."""
    from assay.ops import lookup

    ran = gitproj.run("loop", "next", "--help")
    line = next(x for x in ran.stdout.splitlines() if x.lstrip().startswith("--handle "))
    block = ran.stdout[ran.stdout.index(line):].split("\n  --", 2)[0]
    assert "[required]" in block
    assert "handle" in lookup("loop.next").input_schema()["required"]


# ---------------------------------------------------------------- pause


def test_loop_pause_records_who_and_why(gitproj: Project) -> None:
    """A pause keeps the held prompt and shows who paused it and why in status."""
    view = start(gitproj)
    paused = _as(gitproj, "loop.pause", {"reason": "review first"}, "lead")
    assert (paused["status"], paused["alreadyPaused"]) == ("paused", False)
    assert paused["prompt"] == view["prompt"]
    status = op(gitproj, "loop.status", {})
    assert (status["pause"]["principal"], status["pause"]["reason"]) == ("lead", "review first")
    assert op(gitproj, "loop.pause", {})["alreadyPaused"] is True


@pytest.mark.parametrize("name", ["loop.gate-check", "loop.checkpoint"])
def test_loop_paused_refuses_handle_operations(gitproj: Project, name: str) -> None:
    """While paused, gate checks and checkpoints are loop_paused (exit 3), writing nothing."""
    view = start(gitproj)
    op(gitproj, "loop.pause", {})
    err = _err(gitproj, name, {"handle": json.dumps(view["submissionHandle"]), "action": "x"}
               if name == "loop.gate-check" else {"handle": json.dumps(view["submissionHandle"])})
    assert err.code == "loop_paused" and err.exit_code == 3


def test_loop_paused_can_be_stopped(gitproj: Project) -> None:
    """A paused loop can be stopped; a stopped loop cannot be paused."""
    start(gitproj)
    op(gitproj, "loop.pause", {})
    assert op(gitproj, "loop.stop", {})["stopReason"] == "cancelled"
    assert _err(gitproj, "loop.pause", {}).code == "loop_stopped"


def test_loop_resume_records_the_pause(gitproj: Project) -> None:
    """Resuming a paused loop keeps the pause in the audit."""
    view = start(gitproj)
    op(gitproj, "loop.pause", {"reason": "wait"})
    resumed = op(gitproj, "loop.resume", {})
    submit(gitproj, resumed["submissionHandle"], evaluation(round_contract=contract()))
    pauses = op(gitproj, "loop.audit", {})["pauses"]
    assert [(p["reason"], "resumedAt" in p) for p in pauses] == [("wait", True)]
    assert resumed["submissionHandle"] != view["submissionHandle"]


# ---------------------------------------------------------------- approval


def test_loop_approve_twice_returns_the_approval(gitproj: Project) -> None:
    """Approving an approved gate again writes nothing and returns the recorded approval."""
    view = start(gitproj, loop="g")
    gid = _gate(gitproj, view)["gateId"]
    first = _as(gitproj, "loop.approve", {"gate": gid, "loop": "g"}, "reviewer")
    again = _as(gitproj, "loop.approve", {"gate": gid, "loop": "g"}, "reviewer")
    assert (first["recorded"], again["recorded"]) == (True, False)
    assert again["gateDecision"]["approval"] == first["gateDecision"]["approval"]


def test_loop_approve_by_the_recorder_forbidden(gitproj: Project) -> None:
    """Whoever recorded the gate cannot approve it, even when it is not the loop's agent."""
    view = start(gitproj, loop="g")
    gid = _as(gitproj, "loop.gate-check", {"handle": view["submissionHandle"],
                                           "action": "sudo make install"}, "helper")
    err = _err(gitproj, "loop.approve", {"gate": gid["gateDecision"]["gateId"], "loop": "g"},
               "helper")
    assert err.code == "approval_forbidden" and err.details["requestedBy"] == "helper"


@pytest.mark.parametrize(("gate", "code", "pointer"), [
    ("g-00000000", "gate_not_found", "/gate"),
    ("gate-1", "invalid_argument", "/gate"),
])
def test_loop_approve_unknown_gate(gitproj: Project, gate: str, code: str, pointer: str) -> None:
    """An unknown or malformed gate id is refused with its pointer."""
    start(gitproj, loop="g")
    err = _err(gitproj, "loop.approve", {"gate": gate, "loop": "g"}, "reviewer")
    assert (err.code, err.pointer) == (code, pointer)


def test_loop_approve_low_risk_gate_needs_no_one(gitproj: Project) -> None:
    """A proceed gate cannot be approved: gate_invalid with reason no_approval_needed."""
    view = start(gitproj, loop="g")
    gid = _gate(gitproj, view, "run the unit tests")["gateId"]
    err = _err(gitproj, "loop.approve", {"gate": gid, "loop": "g"}, "reviewer")
    assert (err.code, err.details["reason"]) == ("gate_invalid", "no_approval_needed")


def test_loop_approve_cli_literal_loop_and_as(gitproj: Project) -> None:
    """assay loop approve --gate G --as P -- LOOP records P's approval with its reason."""
    view = start(gitproj, loop="g")
    gid = _gate(gitproj, view)["gateId"]
    data = gitproj.ok("loop", "approve", "--gate", gid, "--reason", "ship it", "--as", "lead",
                      "--", "g")["data"]
    assert data["gateDecision"]["approval"]["principal"] == "lead"
    assert data["gateDecision"]["approval"]["reason"] == "ship it"


def test_loop_gate_check_descriptor_from_file(gitproj: Project) -> None:
    """gate-check --descriptor FILE classifies a structured action; a bad one is gate_invalid."""
    view = start(gitproj)
    path = gitproj.root / ".assay" / "d.json"
    path.write_text(json.dumps({"description": "rotate the API token", "effects": ["credentials"],
                                "reversibility": "recoverable",
                                "authorization": "agent_allowed"}), encoding="utf-8")
    data = gitproj.ok("loop", "gate-check", "--handle", json.dumps(view["submissionHandle"]),
                      "--descriptor", str(path))["data"]
    assert data["gateDecision"]["reasonCodes"] == ["effects:credentials", "scope_empty"]
    path.write_text(json.dumps({"description": "x", "effects": ["teleport"]}), encoding="utf-8")
    bad = gitproj.run("loop", "gate-check", "--handle", json.dumps(view["submissionHandle"]),
                      "--descriptor", str(path))
    assert (bad.error["code"], bad.error["pointer"]) == ("gate_invalid", "/descriptor/effects/0")


# ---------------------------------------------------------------- the ladder


def test_loop_ladder_threshold_configurable(tmp_path: Path) -> None:
    """[loop] ladder_terminate = 2 ends the loop at the second rejection of one check."""
    project = loop_project(tmp_path / "p", loop_toml="ladder_terminate = 2")
    view = start(project)
    first = submit(project, view["submissionHandle"], evaluation())
    assert first["receipt"]["rejection"]["checks"][0]["ladder"] == {
        "count": 1, "terminate_at": 2, "consequence": "reject", "next": "terminate"}
    second = submit(project, first["submissionHandle"], evaluation())
    assert second["stopReason"] == "enforcement_terminated"


def test_loop_ladder_counts_each_check_apart(gitproj: Project) -> None:
    """A rejection for another check starts its own count; the earlier one's count resets."""
    view = start(gitproj, loop="l")
    one = submit(gitproj, view["submissionHandle"], evaluation())
    gid = _gate(gitproj, one)["gateId"]
    two = submit(gitproj, one["submissionHandle"], evaluation(gate_ids=[gid],
                                                              round_contract=contract()))
    checks = {c["check"]: c["ladder"]["count"] for c in two["receipt"]["rejection"]["checks"]}
    assert checks == {"gate_unapproved": 1}
    assert op(gitproj, "loop.status", {})["ladder"] == {"gate_unapproved": 1}


def test_loop_recurring_violation_check_disabled(tmp_path: Path) -> None:
    """[loop] violation_rounds = 0 never rejects a repeated violation."""
    project = loop_project(tmp_path / "p", loop_toml="violation_rounds = 0\nstall_rounds = 0")
    view = start(project)
    out = submit(project, view["submissionHandle"], evaluation(
        constraint_violations=["x"], round_contract=contract()))
    for _ in range(3):
        out = submit(project, out["submissionHandle"], evaluation(constraint_violations=["x"]))
        assert out["accepted"] is True


@pytest.mark.parametrize(("toml", "pointer"), [
    ("ladder_terminate = 0", "/loop/ladder_terminate"),
    ("violation_rounds = 21", "/loop/violation_rounds"),
])
def test_loop_ladder_config_bounds(tmp_path: Path, toml: str, pointer: str) -> None:
    """Ladder settings out of bounds are invalid_config with their pointer."""
    project = loop_project(tmp_path / "p", loop_toml=toml)
    err = _err(project, "loop.status", {})
    assert (err.code, err.pointer) == ("invalid_config", pointer)


def test_loop_commit_resets_the_ladder(gitproj: Project) -> None:
    """A committed round resets every check's count."""
    view = start(gitproj)
    rejected = submit(gitproj, view["submissionHandle"], evaluation())
    assert op(gitproj, "loop.status", {})["ladder"] == {"contract_required": 1}
    submit(gitproj, rejected["submissionHandle"], evaluation(round_contract=contract()))
    assert op(gitproj, "loop.status", {})["ladder"] == {}
