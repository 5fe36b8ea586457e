"""The caller's side of the governor: stop/budget policy and progress hooks.

The engine (:mod:`assay.loop.engine`) decides nothing about budgets by
itself: after every committed round and every enforcement rejection it asks
the :class:`StopPolicy` the caller supplied. The agent's own stop is mapped
by :func:`agent_stop_reason` (not a policy: these are the protocol's
definitions):

- ``completed``: outcome ``success`` with ``should_continue=false`` (the gate
  already refused it while the active contract was open). It never implies
  ``machineBackedSuccess``;
- ``failed``: outcome ``failed`` or ``partial`` with ``should_continue=false``;
- ``blocked``: outcome ``blocked`` (which requires ``should_continue=false``);
- ``cancelled``: an operator's ``loop stop`` (never from a round).

:class:`DefaultStopPolicy` adds the budgets: ``max_rounds`` (the round that
reaches it stops the loop even when it asks to continue), ``stalled``
(``stall_rounds`` consecutive committed rounds whose workspace was observed
``unchanged``; ``unknown`` never counts as no progress) and
``enforcement_terminated``: the recurring-violation ladder. Every enforcement
check code has its own count of consecutive rejections (a committed round
resets them all): reject, reject, then terminate when one code reaches
``ladder_terminate`` (3); ``max_rejections`` (3) consecutive rejections of
any codes in one round terminate as well. :func:`ladder` states the step a
count is at, for the rejection to say it.

:class:`Reporter` hooks are called synchronously and must return quickly;
:class:`NullReporter` does nothing. Imports nothing of assay.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

__all__ = [
    "STOP_REASONS",
    "DefaultStopPolicy",
    "LadderStep",
    "Limits",
    "NullReporter",
    "Reporter",
    "StopPolicy",
    "agent_stop_reason",
    "ladder",
]

STOP_REASONS = ("completed", "failed", "blocked", "cancelled", "max_rounds", "stalled",
                "enforcement_terminated")


@dataclass(frozen=True, slots=True)
class Limits:
    """Budgets and timings, from ``[loop]`` in assay.toml or the reference defaults."""

    max_rounds: int = 20
    stall_rounds: int = 3
    max_rejections: int = 3
    max_active_constraints: int = 15
    lease_seconds: float = 30.0
    renew_seconds: float = 10.0
    backtrack_after: int = 0
    ladder_terminate: int = 3
    violation_rounds: int = 3


@dataclass(frozen=True, slots=True)
class LadderStep:
    """Where one check code stands on the ladder after a rejection.

    ``count`` consecutive rejections carried the code; this one's
    ``consequence`` is ``reject`` or ``terminate``; ``next`` is what the same
    violation would get next time (None once it terminated).
    """

    count: int
    terminate_at: int
    consequence: str
    next: str | None

    def to_dict(self) -> dict[str, object]:
        return {"count": self.count, "terminate_at": self.terminate_at,
                "consequence": self.consequence, "next": self.next}


def ladder(count: int, terminate_at: int) -> LadderStep:
    """The ladder step of the ``count``-th consecutive rejection of one code."""
    if count >= terminate_at:
        return LadderStep(count, terminate_at, "terminate", None)
    return LadderStep(count, terminate_at, "reject",
                      "terminate" if count + 1 >= terminate_at else "reject")


def agent_stop_reason(outcome: str, should_continue: bool) -> str | None:
    """The stop reason the agent's own declaration gives, or None when it continues."""
    if should_continue:
        return None
    return {"success": "completed", "blocked": "blocked"}.get(outcome, "failed")


class StopPolicy(Protocol):
    """Decides when the loop stops for budget reasons. Must be pure and cheap."""

    def after_commit(self, *, round_number: int, progress: Sequence[str]) -> str | None:
        """Called after round ``round_number`` committed and asked to continue.

        ``progress`` holds the workspace progress of every committed round,
        oldest first, this one last. Return a stop reason or None.
        """

    def after_rejection(self, *, round_number: int, consecutive: int,
                        counts: Mapping[str, int]) -> str | None:
        """Called after an enforcement rejection.

        ``consecutive`` rejections in a row in this round; ``counts`` the
        consecutive rejections of each check code this rejection carried.
        """


@dataclass(frozen=True, slots=True)
class DefaultStopPolicy:
    """``max_rounds``, ``stalled`` and ``enforcement_terminated`` from :class:`Limits`."""

    limits: Limits = Limits()

    def after_commit(self, *, round_number: int, progress: Sequence[str]) -> str | None:
        if round_number >= self.limits.max_rounds:
            return "max_rounds"
        window = self.limits.stall_rounds
        if window > 0 and len(progress) >= window and all(
                p == "unchanged" for p in progress[-window:]):
            return "stalled"
        return None

    def after_rejection(self, *, round_number: int, consecutive: int,
                        counts: Mapping[str, int]) -> str | None:
        if consecutive >= self.limits.max_rejections or any(
                ladder(n, self.limits.ladder_terminate).consequence == "terminate"
                for n in counts.values()):
            return "enforcement_terminated"
        return None


class Reporter(Protocol):
    """Progress hooks; each must return quickly and never raise."""

    def submission_received(self, round_id: str) -> None: ...

    def command_started(self, name: str) -> None: ...

    def command_finished(self, name: str, status: str) -> None: ...

    def round_committed(self, round_id: str, posture_status: str) -> None: ...

    def submission_rejected(self, round_id: str, checks: Sequence[str]) -> None: ...

    def loop_stopped(self, loop_id: str, reason: str) -> None: ...


class NullReporter:
    """A reporter that does nothing."""

    def submission_received(self, round_id: str) -> None:
        pass

    def command_started(self, name: str) -> None:
        pass

    def command_finished(self, name: str, status: str) -> None:
        pass

    def round_committed(self, round_id: str, posture_status: str) -> None:
        pass

    def submission_rejected(self, round_id: str, checks: Sequence[str]) -> None:
        pass

    def loop_stopped(self, loop_id: str, reason: str) -> None:
        pass
