"""The engine with a caller-supplied stop policy and reporter (the resolvelib-style seams)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from loop_helpers import contract, evaluation, start

from assay.config import load_project
from assay.ledger import open_store
from assay.loop.engine import Governor
from assay_testing import Project


class OneRoundPolicy:
    """Stops every loop after its first committed round, whatever it asks."""

    def after_commit(self, *, round_number: int, progress: Sequence[str]) -> str | None:
        return "stalled" if round_number >= 1 else None

    def after_rejection(self, *, round_number: int, consecutive: int,
                        counts: Mapping[str, int]) -> str | None:
        return None


class Recorder:
    """Records every hook call in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def submission_received(self, round_id: str) -> None:
        self.calls.append(("received", round_id))

    def command_started(self, name: str) -> None:
        self.calls.append(("started", name))

    def command_finished(self, name: str, status: str) -> None:
        self.calls.append(("finished", name, status))

    def round_committed(self, round_id: str, posture_status: str) -> None:
        self.calls.append(("committed", round_id, posture_status))

    def submission_rejected(self, round_id: str, checks: Sequence[str]) -> None:
        self.calls.append(("rejected", round_id, tuple(checks)))

    def loop_stopped(self, loop_id: str, reason: str) -> None:
        self.calls.append(("stopped", loop_id, reason))


def test_engine_caller_policy_and_reporter(gitproj: Project) -> None:
    """The engine asks the caller's policy to stop and reports each step, in order."""
    view = start(gitproj)
    store = open_store(gitproj.root / ".assay" / "ledger.db")
    recorder = Recorder()
    try:
        governor = Governor(store, load_project(gitproj.root), policy=OneRoundPolicy(),
                            reporter=recorder)
        rejected = governor.submit(view["submissionHandle"], evaluation())
        out = governor.submit(rejected["submissionHandle"],
                              evaluation(round_contract=contract()))
    finally:
        store.close()
    assert out["stopReason"] == "stalled"
    rid = view["roundId"]
    assert recorder.calls == [
        ("received", rid), ("rejected", rid, ("contract_required",)),
        ("received", rid), ("committed", rid, "insufficient"),
        ("stopped", view["loopId"], "stalled"),
    ]


def test_engine_reporter_sees_gate_commands(gitproj: Project) -> None:
    """Command hooks bracket each gate command with its status."""
    view = start(gitproj)
    store = open_store(gitproj.root / ".assay" / "ledger.db")
    recorder = Recorder()
    try:
        governor = Governor(store, load_project(gitproj.root), reporter=recorder)
        r1 = governor.submit(view["submissionHandle"], evaluation(round_contract=contract()))
        recorder.calls.clear()
        governor.submit(r1["submissionHandle"], evaluation("failed", False))
    finally:
        store.close()
    assert recorder.calls[1:3] == [("started", "unit"), ("finished", "unit", "failed")]
