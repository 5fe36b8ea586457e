"""End to end through the real `assay` console script over a real git repository."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from loop_helpers import FIXED, contract, evaluation, records
from loop_surfaces import build_project

from assay_testing import Project


def _next(project: Project, handle: dict[str, Any], ev: dict[str, Any], name: str) -> Any:
    path = project.root / ".assay" / f"{name}.json"
    path.write_text(json.dumps(ev), encoding="utf-8")
    return project.run("loop", "next", "--handle", json.dumps(handle), "--evaluation", str(path))


def test_loop_e2e_four_rounds_contradicted_verified_stale_invalid_max_rounds(gitproj: Project) -> None:
    """A 4-round loop: a failing claim is contradicted, the fix is verified, a stale handle is
    recovered, an invalid contract is rejected with its pointer, and max_rounds stops the loop."""
    started = gitproj.ok("loop", "start", "--task", "Fix calc.add", "--criterion",
                         "add returns the sum", "--constraint", "no new dependencies",
                         "--max-rounds", "4", "--loop", "calc")["data"]
    crit = started["guidance"]["criteria"][0]["id"]
    assert crit.startswith("cr-") and started["round"] == 1
    assert "<<FILL" in started["prompt"] and crit in started["prompt"]

    # Round 1: declares the contract for round 2 (it is not active in round 1).
    r1 = _next(gitproj, started["submissionHandle"], evaluation(round_contract=contract(
        {"description": "the unit check passes", "criterion_refs": [crit],
         "verify_with": ["unit"]})), "r1")
    assert r1.code == 0, r1.stderr
    d1 = r1.json["data"]
    assert d1["accepted"] and d1["receipt"]["changes"]["contract"]["activated"] is True
    item = d1["guidance"]["active_contract"]["items"][0]["id"]
    assert d1["receipt"]["verification"]["evidence_posture"]["commands"] == []

    # Round 2: claims the item met while calc.add is still wrong -> contradicted.
    r2 = _next(gitproj, d1["submissionHandle"], evaluation(
        execution_report={"claims": [{"id": item, "outcome": "met"}]}), "r2")
    assert r2.code == 0, r2.stderr
    d2 = r2.json["data"]
    posture = d2["receipt"]["verification"]["evidence_posture"]
    assert posture["status"] == "contradicted" and posture["machineBackedSuccess"] is False
    assert d2["receipt"]["verification"]["contract_items"] == [
        {"item_id": item, "status": "contradicted"}]
    assert posture["commands"] == [{"commandId": "unit", "required": False, "status": "failed"}]

    # A stale handle (round 2's, already committed) is recovered: held prompt + warning, ok.
    stale = _next(gitproj, d1["submissionHandle"], evaluation(), "stale")
    assert stale.code == 0, stale.stderr
    ds = stale.json["data"]
    assert ds["stale"] is True and ds["warnings"][0]["code"] == "submission_handle_mismatch"
    assert ds["submissionHandle"] == d2["submissionHandle"] and ds["round"] == 3
    assert ds["committedReceipt"]["roundId"] == "loop:calc:round:2"

    # An invalid contract (an undeclared command) is contract_invalid with its pointer.
    bad = _next(gitproj, d2["submissionHandle"], evaluation(round_contract=contract(
        {"description": "x", "verify_with": ["nope"]})), "bad")
    assert bad.code == 1
    assert bad.error["code"] == "contract_invalid"
    assert bad.error["pointer"] == "/round_contract/items/0/verify_with/0"

    # Round 3: the fix; the same handle still works after the rejected payload.
    (gitproj.root / "calc.py").write_text(FIXED, encoding="utf-8")
    r3 = _next(gitproj, d2["submissionHandle"], evaluation(
        execution_report={"files_changed": ["calc.py"], "claims": [{"id": item, "outcome": "met"}]},
        round_contract=contract({"description": "the unit check passes again",
                                 "verify_with": ["unit"]}, work_item="keep calc.add correct")),
        "r3")
    assert r3.code == 0, r3.stderr
    d3 = r3.json["data"]
    posture = d3["receipt"]["verification"]["evidence_posture"]
    assert posture["status"] == "verified" and posture["machineBackedSuccess"] is True
    assert posture["files"] == {"reconciliation": "match", "reported": 1, "observed": 1}
    assert d3["receipt"]["changes"]["contract"]["closure"] == "verified"
    assert d3["guidance"]["criteria"][0]["status"] == "verified"

    # Round 4 claims the new item and asks to continue, but it is the last round:
    # max_rounds stops the loop.
    item4 = d3["guidance"]["active_contract"]["items"][0]["id"]
    r4 = _next(gitproj, d3["submissionHandle"], evaluation(
        execution_report={"claims": [{"id": item4, "outcome": "met"}]}), "r4")
    assert r4.code == 0, r4.stderr
    d4 = r4.json["data"]
    assert d4["status"] == "stopped" and d4["stopReason"] == "max_rounds"
    assert d4["submissionHandle"] is None and d4["prompt"] is None
    assert d4["terminal"]["completed"] is False
    assert d4["terminal"]["committedRounds"] == 4
    assert d4["terminal"]["machineBackedSuccessTrajectory"] == [False, False, True, True]

    status = gitproj.ok("loop", "status", "--loop", "calc")["data"]
    assert status["status"] == "stopped" and status["stopReason"] == "max_rounds"
    replayed = gitproj.ok("loop", "replay", "--all", "--loop", "calc")["data"]
    assert replayed["match"] is True and len(replayed["replays"]) == 4
    stored = records(gitproj)
    rounds = sorted(k for k in stored if k.count(":") == 3)
    assert rounds == [f"loop:calc:round:{n}" for n in (1, 2, 3, 4)]
    assert all(stored[k].revision == 1 for k in rounds)
    assert stored["loop:calc:round:2:evaluation"].origin == "claim"
    assert stored["loop:calc:round:2:observation"].origin == "machine"
    assert stored["loop:calc:round:2"].data["evidencePosture"]["status"] == "contradicted"


def test_loop_e2e_invalid_payload_writes_nothing(gitproj: Project) -> None:
    """A rejected payload leaves the ledger revision unchanged."""
    started = gitproj.ok("loop", "start", "--task", "t", "--no-criteria", "--loop", "quiet")["data"]
    before = gitproj.ok("ledger", "info")["data"]["ledger_revision"]
    bad = _next(gitproj, started["submissionHandle"], {"outcome": "maybe"}, "bad")
    assert bad.error["code"] == "evaluation_invalid" and bad.error["pointer"] == "/outcome"
    assert gitproj.ok("ledger", "info")["data"]["ledger_revision"] == before


def test_loop_e2e_handle_from_stdin_file_dash(gitproj: Project) -> None:
    """`--evaluation -` reads the evaluation from standard input."""
    started = gitproj.ok("loop", "start", "--task", "t", "--criterion", "c", "--loop", "stdin")["data"]
    ran = gitproj.run("loop", "next", "--handle", json.dumps(started["submissionHandle"]),
                      "--evaluation", "-",
                      input=json.dumps(evaluation("failed", False)))
    assert ran.code == 0, ran.stderr
    assert ran.json["data"]["stopReason"] == "failed"


def test_loop_e2e_success_claimed_three_times_while_the_test_fails(tmp_path: Path) -> None:
    """An agent claims success three times while the required test fails: each claim is
    contradicted and rejected, the third ends the loop by the ladder, and the audit shows every
    step."""
    project = build_project(tmp_path / "p", unit="required")
    started = project.ok("loop", "start", "--task", "Fix calc.add", "--criterion",
                         "add returns the sum", "--loop", "claims")["data"]
    crit = started["guidance"]["criteria"][0]["id"]
    claim = evaluation("success", False, output_summary="calc.add is fixed (it is not)",
                       execution_report={"claims": [{"id": crit, "outcome": "met"}]})
    handle = started["submissionHandle"]
    seen = []
    for n in (1, 2, 3):
        ran = _next(project, handle, claim, f"claim{n}")
        assert ran.code == 1, ran.stderr
        data = ran.json["data"]
        receipt = data["receipt"]
        check = receipt["rejection"]["checks"][0]
        assert [c["check"] for c in receipt["rejection"]["checks"]] == ["completion_contradicted"]
        assert check["ref"] == "unit" and "unit failed" in check["detail"]
        assert receipt["verification"]["evidence_posture"]["commands"] == [
            {"commandId": "unit", "required": True, "status": "failed"}]
        assert receipt["verification"]["criteria"] == [
            {"id": crit, "status": "contradicted", "source": "machine"}]
        seen.append((data["status"], check["ladder"]["count"], check["ladder"]["consequence"],
                     check["ladder"]["next"]))
        handle = data["submissionHandle"]
    assert seen == [("active", 1, "reject", "reject"), ("active", 2, "reject", "terminate"),
                    ("stopped", 3, "terminate", None)]

    status = project.ok("loop", "status", "--loop", "claims")["data"]
    assert (status["status"], status["stopReason"]) == ("stopped", "enforcement_terminated")
    terminal = status["terminal"]
    assert terminal["completed"] is False and terminal["committedRounds"] == 0
    assert "completion_contradicted x3" in terminal["stopDetail"]
    assert "unit failed" in terminal["stopDetail"]

    audit = project.ok("loop", "audit", "--loop", "claims")["data"]
    assert audit["rounds"] == []
    steps = [(r["attempt"], r["checks"], r["ladder"]["completion_contradicted"]["count"],
              r["outcome"], r["criteria"], r["commands"], r["stopReason"])
             for r in audit["rejections"]]
    contradicted = [{"id": crit, "status": "contradicted"}]
    failed = [{"commandId": "unit", "status": "failed"}]
    assert steps == [
        (1, ["completion_contradicted"], 1, "success", contradicted, failed, None),
        (2, ["completion_contradicted"], 2, "success", contradicted, failed, None),
        (3, ["completion_contradicted"], 3, "success", contradicted, failed,
         "enforcement_terminated")]
    assert audit["terminal"]["stopReason"] == "enforcement_terminated"
    replayed = project.ok("loop", "replay", "--all", "--loop", "claims")["data"]
    assert [r["source"] for r in replayed["replays"]] == ["rejected"] * 3
    assert replayed["match"] is True
