"""Explain, replay and audit; restore_pending; machine backtrack; the terminal event."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from loop_helpers import FIXED, contract, evaluation, loop_project, op, records, start, submit

from assay.config import load_project
from assay.errors import AssayError
from assay.evidence.git import observe
from assay.ledger import open_store
from assay_testing import Project


def _cli_next(project: Project, handle: dict[str, Any], ev: dict[str, Any], name: str) -> Any:
    path = project.root / ".assay" / f"{name}.json"
    path.write_text(json.dumps(ev), encoding="utf-8")
    ran = project.run("loop", "next", "--handle", json.dumps(handle), "--evaluation", str(path))
    assert ran.code in (0, 1), ran.stderr
    return ran.json["data"]


def test_replay_every_round_of_an_end_to_end_loop(gitproj: Project) -> None:
    """Through the real CLI: a loop with a rejection, a recovery and a redo; every stored
    prompt re-derives to the same promptHash, and audit shows both branches."""
    started = gitproj.ok("loop", "start", "--task", "Fix calc.add", "--criterion",
                         "add returns the sum", "--loop", "calc", "--max-rounds", "6",
                         "--instruction", "keep the diff small")["data"]
    assert started["promptArtifact"]["currentUserInstruction"] == "keep the diff small"
    rejected = _cli_next(gitproj, started["submissionHandle"], evaluation(), "r0")
    assert rejected["receipt"]["rejection"]["checks"][0]["check"] == "contract_required"
    d1 = _cli_next(gitproj, rejected["submissionHandle"],
                   evaluation(round_contract=contract()), "r1")
    item = d1["guidance"]["active_contract"]["items"][0]["id"]
    (gitproj.root / "calc.py").write_text("def add(a, b):\n    return 0\n", encoding="utf-8")
    d2 = _cli_next(gitproj, d1["submissionHandle"], evaluation(
        execution_report={"claims": [{"id": item, "outcome": "met"}]}), "r2")
    assert d2["receipt"]["verification"]["evidence_posture"]["status"] == "contradicted"
    recovered = gitproj.ok("loop", "recover", "--handle", json.dumps(d2["submissionHandle"]),
                           "--checkpoint", d1["checkpoints"][0]["checkpointId"],
                           "--reason", "zero is not a sum")["data"]
    assert recovered["round"] == 2 and recovered["recovery"]["abandoned_rounds"] == [2]
    (gitproj.root / "calc.py").write_text(FIXED, encoding="utf-8")
    d3 = _cli_next(gitproj, recovered["submissionHandle"], evaluation(
        execution_report={"files_changed": ["calc.py"], "claims": [{"id": item, "outcome": "met"}]},
        round_contract=contract(work_item="keep it green")), "r3")
    assert d3["receipt"]["verification"]["evidence_posture"]["status"] == "verified"
    d4 = _cli_next(gitproj, d3["submissionHandle"], evaluation("success", False,
                   execution_report={"claims": [{"id": d3["guidance"]["active_contract"]["items"]
                                                 [0]["id"], "outcome": "met"}]}), "r4")
    assert d4["stopReason"] == "completed"

    replayed = gitproj.run("loop", "replay", "--all", "--loop", "calc")
    assert replayed.code == 0, replayed.stdout
    data = replayed.json["data"]
    assert data["match"] is True
    assert [(r["round"], r["attempt"], r["source"]) for r in data["replays"]] == [
        (1, 1, "rejected"), (1, 2, "committed"), (2, 1, "committed"), (3, 1, "committed")]
    assert all(r["stateMatch"] for r in data["replays"])

    audit = gitproj.ok("loop", "audit", "--loop", "calc")["data"]
    assert [(r["round"], r["currentBranch"]) for r in audit["rounds"]] == [
        (1, True), (2, False), (2, True), (3, True)]
    assert [d["status"] for d in audit["directives"]] == ["verified"]
    assert audit["rejections"][0]["checks"] == ["contract_required"]
    assert audit["lineage"][-1]["fromRound"] == 2
    assert audit["terminal"]["stopReason"] == "completed"
    assert audit["terminal"]["committedRounds"] == 3
    terminal = records(gitproj)["loop:calc:terminal"].data
    assert terminal["machineBackedSuccess"] is True and terminal["completed"] is True


def test_replay_single_round_checks_hash(gitproj: Project) -> None:
    """replay --round N recompiles the committed round and compares both hashes."""
    view = start(gitproj, loop="one")
    submit(gitproj, view["submissionHandle"], evaluation(round_contract=contract()))
    out = op(gitproj, "loop.replay", {"loop": "one", "round": 1})
    [one] = out["replays"]
    assert one["match"] and one["stored"] == one["replayed"] and one["source"] == "committed"


def test_replay_unknown_round_is_invalid_argument(gitproj: Project) -> None:
    """Replaying a round that holds no prompt is invalid_argument at /round."""
    start(gitproj, loop="one")
    with pytest.raises(AssayError) as caught:
        op(gitproj, "loop.replay", {"loop": "one", "round": 7})
    assert (caught.value.code, caught.value.pointer) == ("invalid_argument", "/round")


def test_explain_held_prompt(gitproj: Project) -> None:
    """explain names the level and why, the context, budget use, coverage and checkpoints."""
    view = start(gitproj, loop="one")
    out = op(gitproj, "loop.explain", {"loop": "one"})
    assert out["source"] == "held" and out["level"] == "l2"
    assert out["levelReason"] == "clean start (first_round)"
    assert out["context"]["mode"] == "fresh_invocation"
    assert out["coverage"]["complete"] and out["coverage"]["byKind"]["criterion"] == 1
    assert out["renderedChars"] <= out["budget"]
    assert out["checkpoints"] == view["checkpoints"]
    assert out["promptHash"] == view["promptArtifact"]["promptHash"]


def test_explain_readable_on_terminal_matches_json(gitproj: Project) -> None:
    """The readable explain and audit views render without error."""
    view = start(gitproj, loop="one")
    submit(gitproj, view["submissionHandle"], evaluation(round_contract=contract()))
    for name in ("explain", "audit"):
        ran = gitproj.run("loop", name, "--loop", "one", "--format", "table")
        assert ran.code == 0, ran.stderr
        assert "loop one" in ran.stdout


def test_restore_pending_blocks_submissions_until_retried(gitproj: Project) -> None:
    """A recovery interrupted after its directive leaves restore_pending; retrying the same
    checkpoint completes it (verified), another checkpoint is refused."""
    from assay.loop.recovery import recover

    root = gitproj.root
    view = start(gitproj, loop="one")
    target = view["checkpoints"][0]["checkpointId"]
    at = observe(root)
    (root / "calc.py").write_text("broken\n", encoding="utf-8")

    class Crash(BaseException):
        pass

    def crash(directive_id: str) -> None:
        raise Crash(directive_id)

    store = open_store(root / ".assay" / "ledger.db")
    try:
        with pytest.raises(Crash):
            recover(store, load_project(root), view["submissionHandle"], checkpoint_id=target,
                    reason="undo", on_restore=crash)
    finally:
        store.close()
    assert (root / "calc.py").read_text(encoding="utf-8") == "broken\n"
    with pytest.raises(AssayError) as caught:
        submit(gitproj, view["submissionHandle"], evaluation())
    assert caught.value.code == "restore_pending"
    with pytest.raises(AssayError) as blocked:
        op(gitproj, "loop.checkpoint", {"handle": json.dumps(view["submissionHandle"])})
    assert blocked.value.code == "restore_pending"
    with pytest.raises(AssayError) as other:
        op(gitproj, "loop.recover", {"handle": json.dumps(view["submissionHandle"]),
                                     "checkpoint": "ck-00000000", "reason": "other"})
    assert other.value.code == "restore_pending"
    done = op(gitproj, "loop.recover", {"handle": json.dumps(view["submissionHandle"]),
                                        "checkpoint": target, "reason": "undo"})
    assert done["recovery"]["restore_verified"] is True
    assert dict(observe(root).files) == dict(at.files)
    [directive] = records(gitproj, "loop-recovery").values()
    assert directive.data["status"] == "verified" and directive.data["attempts"] == 2


def test_machine_backtrack_after_repeated_contradiction(tmp_path: Path) -> None:
    """With backtrack_after = 2, two contradicted rounds in a row restore the first one's
    before checkpoint and issue a machine recovery with its trigger findings."""
    project = loop_project(tmp_path / "p", loop_toml="backtrack_after = 2")
    root = project.root
    view = start(project, loop="bt")
    r1 = submit(project, view["submissionHandle"], evaluation(round_contract=contract()))
    item = r1["guidance"]["active_contract"]["items"][0]["id"]
    at = observe(root)
    claim = {"execution_report": {"claims": [{"id": item, "outcome": "met"}]}}
    (root / "notes.txt").write_text("attempt one\n", encoding="utf-8")
    r2 = submit(project, r1["submissionHandle"], evaluation(**claim))
    assert r2["receipt"]["verification"]["evidence_posture"]["status"] == "contradicted"
    assert "recovery" not in r2
    (root / "notes.txt").write_text("attempt two\n", encoding="utf-8")
    r3 = submit(project, r2["submissionHandle"], evaluation(**claim))
    assert r3["receipt"]["accepted"] is True and r3["round"] == 2
    rollback = r3["receipt"]["changes"]["rollback"]
    assert rollback["origin"] == "machine" and rollback["abandoned_rounds"] == [2, 3]
    assert rollback["trigger_finding_ids"]
    assert r3["promptArtifact"]["contextReason"] == "recovery_redo"
    assert dict(observe(root).files) == dict(at.files)
    [directive] = records(project, "loop-recovery").values()
    assert directive.data["trigger_rule"] == "repeated_contradiction"
    assert directive.data["failed_rounds"] == [2, 3]
    from assay.loop.models import SubmissionGuidance, SubmissionReceipt

    SubmissionReceipt.model_validate(r3["receipt"])
    SubmissionGuidance.model_validate(r3["guidance"])


def test_replay_all_after_enforcement_terminated(tmp_path: Path) -> None:
    """A loop ended by rejections replays its rejected attempts too."""
    project = loop_project(tmp_path / "p", loop_toml="max_rejections = 2")
    view = start(project, loop="rej")
    first = submit(project, view["submissionHandle"], evaluation())
    second = submit(project, first["submissionHandle"], evaluation())
    assert second["stopReason"] == "enforcement_terminated"
    out = op(project, "loop.replay", {"loop": "rej", "all": True})
    assert [(r["round"], r["attempt"], r["source"]) for r in out["replays"]] == [
        (1, 1, "rejected"), (1, 2, "rejected")]
    assert out["match"] is True
