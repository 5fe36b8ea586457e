"""The verification gate: assay observes, then judges the round's claims.

:func:`observe` is the I/O half: it runs the active contract items'
``verify_with`` commands plus every enabled, required, after-capable
command (each once, in name order, through
:func:`assay.evidence.commands.run_command`) and observes the git workspace
after them (:func:`assay.evidence.git.observe`), comparing it with the
round's before-observation.

:func:`judge` is the pure half. Contract item statuses:

- an item is *claimed* when this round's ``rci-`` claim is ``met``, or it
  has none and the item's latest earlier claim on this contract was
  ``met``, or the round's outcome is ``success`` (unless this round claims
  the item ``remaining``);
- ``verified``: claimed, and every ``verify_with`` command passed;
- ``contradicted``: claimed, and one of its commands failed;
- ``insufficient``: claimed, but a command could not give an answer
  (timeout, error, aborted, unavailable);
- ``pending``: not claimed, whatever the commands said (closing a contract
  takes a claim the machine then backs).

A claim never verifies anything. ``blocking`` lists the commands whose
answer refuses a completion: every contract ``verify_with`` command and
every required command the gate ran that did not pass.
``machineBackedSuccess`` is true only when
an active contract with items has every item verified, no required command
failed or went unanswered, and the workspace boundary is not unknown; it
does not read the agent's outcome, and ``completed`` never implies it.
Findings get stable ``f-`` ids (:func:`assay.loop.identity.finding_id`).
The posture is :func:`assay.evidence.posture.derive_posture` over these
facts.

Imports the base modules, config, evidence and its siblings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.config import EvidenceCommand
from assay.evidence.commands import CommandObservation, run_command
from assay.evidence.git import Comparison, GitObservation, compare
from assay.evidence.git import observe as observe_git
from assay.evidence.posture import (
    CommandFact,
    ContractFact,
    ContractItemFact,
    FindingFact,
    PostureFacts,
    ProviderFact,
    derive_posture,
)
from assay.loop import identity
from assay.loop.contract import capable_commands, closure

__all__ = [
    "MAX_BOUNDARY_FILES",
    "GateObservations",
    "GateResult",
    "commands_to_run",
    "git_from_dict",
    "git_to_dict",
    "judge",
    "observe",
    "required_verdict",
]

_INDETERMINATE = frozenset({"timeout", "error", "aborted", "unavailable"})
_SEVERITY = {"error": 0, "warn": 1, "info": 2}

Runner = Callable[..., CommandObservation]


# Above this many fingerprinted files a boundary is stored without its file
# map (a record stays far below the ledger's 4 MiB bound); comparing against
# it is then honestly `unknown`, never a guess.
MAX_BOUNDARY_FILES = 20_000


def git_to_dict(obs: GitObservation) -> dict[str, Any]:
    """A git observation with its file map, as stored for the next comparison."""
    omitted = len(obs.files) > MAX_BOUNDARY_FILES
    return {"status": obs.status, "reason": obs.reason, "toplevel": obs.toplevel,
            "head": obs.head, "branch": obs.branch, "object_format": obs.object_format,
            "fingerprint_kind": obs.fingerprint_kind,
            "files": {} if omitted else dict(obs.files), "files_omitted": omitted,
            "file_count": len(obs.files), "workspace_sha256": obs.workspace_sha256,
            "observed_at": obs.observed_at}


def git_from_dict(data: Mapping[str, Any] | None) -> GitObservation | None:
    """The stored observation, or None when it was not stored whole (comparison: unknown)."""
    if data is None or data.get("files_omitted"):
        return None
    return GitObservation(status=data["status"], reason=data.get("reason"),
                          toplevel=data.get("toplevel"), head=data.get("head"),
                          branch=data.get("branch"), object_format=data.get("object_format"),
                          fingerprint_kind=data.get("fingerprint_kind", "git-blob"),
                          files=dict(data.get("files", {})),
                          workspace_sha256=data.get("workspace_sha256"),
                          observed_at=data.get("observed_at", ""))


def commands_to_run(contract: Mapping[str, Any] | None,
                    commands: Sequence[EvidenceCommand]) -> list[EvidenceCommand]:
    """The contract's ``verify_with`` commands plus required after-capable ones, by name."""
    capable = capable_commands(commands)
    names = {n for i in (contract or {}).get("items", []) for n in i["verify_with"]}
    names |= {n for n, c in capable.items() if c.required}
    by_name = {c.name: c for c in commands}
    return [by_name[n] for n in sorted(names) if n in by_name]


@dataclass(frozen=True, slots=True)
class GateObservations:
    """What the machine saw after a submission."""

    before: GitObservation | None
    after: GitObservation
    comparison: Comparison
    commands: tuple[CommandObservation, ...]
    required: frozenset[str] = field(default_factory=frozenset)

    def statuses(self) -> dict[str, str]:
        return {o.command_id: o.status for o in self.commands}

    def to_dict(self) -> dict[str, Any]:
        """The machine record: git summaries and comparison, full command observations."""
        return {
            "git": {"before": self.before.summary() if self.before else None,
                    "after": self.after.summary(), "comparison": self.comparison.to_dict()},
            "commands": [o.to_dict() | {"required": o.command_id in self.required}
                         for o in self.commands],
        }


def observe(root: str | Path, before: GitObservation | None,
            decls: Sequence[EvidenceCommand], *, reporter: Any = None,
            runner: Runner = run_command, ignore: Sequence[str] = ()) -> GateObservations:
    """Run ``decls`` (in order, from the project root), then observe git. Never raises for an outcome.

    Paths under ``ignore`` (the project's ``[evidence] ignore``, e.g. tool
    caches the commands write) are never counted as workspace changes; the
    observations themselves stay whole, as checkpoints need them.
    """
    observations = []
    for decl in decls:
        if reporter is not None:
            reporter.command_started(decl.name)
        obs = runner(decl, root=root)
        if reporter is not None:
            reporter.command_finished(decl.name, obs.status)
        observations.append(obs)
    after = observe_git(root)
    return GateObservations(before, after, compare(before, after, ignore=ignore),
                            tuple(observations),
                            frozenset(d.name for d in decls if d.required))


@dataclass(frozen=True, slots=True)
class GateResult:
    """The gate's judgement of one submission (pure data)."""

    item_statuses: dict[str, str]
    findings: list[dict[str, Any]]
    machine_backed_success: bool
    closure: str | None
    posture: dict[str, Any]
    progress: str
    blocking: list[tuple[str, str]] = field(default_factory=list)
    required: frozenset[str] = frozenset()

    @property
    def command_verdict(self) -> str | None:
        """What the required commands say of this round's claims: contradicted, insufficient or None.

        Only commands declared required judge every claim; a contract's own
        commands judge the criteria its items name (through the item statuses).
        """
        return required_verdict([b for b in self.blocking if b[0] in self.required])


def required_verdict(blocking: Sequence[tuple[str, str]]) -> str | None:
    """``contradicted`` when a blocking command failed, ``insufficient`` when one gave no answer."""
    if any(status == "failed" for _, status in blocking):
        return "contradicted"
    return "insufficient" if blocking else None


def _workspace_status(progress: str) -> str:
    return {"changed": "observed", "unchanged": "observed"}.get(progress, progress)


def judge(*, round_number: int, evaluation: Mapping[str, Any],
          contract: Mapping[str, Any] | None, command_statuses: Mapping[str, str],
          required: frozenset[str] | set[str], git_status: str, comparison: Comparison,
          verification_configured: bool, superseded: bool) -> GateResult:
    """Item statuses, findings, machine-backed success and the posture of one submission."""
    success_claim = evaluation["outcome"] == "success"
    earlier = dict((contract or {}).get("claims", {}))
    claims = {c["id"]: c["outcome"] for c in evaluation.get("item_claims", [])}
    findings: list[dict[str, Any]] = []

    def finding(check: str, severity: str, detail: str, ref: str | None = None) -> None:
        entry = {"id": identity.finding_id(check, ref), "check": check, "severity": severity,
                 "detail": detail}
        if ref is not None:
            entry["ref"] = ref
        findings.append(entry)

    statuses: dict[str, str] = {}
    reasons: dict[str, list[str]] = {}
    for item in (contract or {}).get("items", []):
        seen = [command_statuses.get(n, "unavailable") for n in item["verify_with"]]
        latest = claims.get(item["id"], earlier.get(item["id"]))
        claimed = latest == "met" or (success_claim and claims.get(item["id"]) != "remaining")
        why = [f"{n}: {s}" for n, s in zip(item["verify_with"], seen)]
        if not claimed:
            status = "pending"
        elif all(s == "passed" for s in seen):
            status = "verified"
        elif "failed" in seen:
            status = "contradicted"
            finding("claim_contradicted", "error", "the item is claimed met, but its check "
                    "failed: " + ", ".join(why), item["id"])
        else:
            status = "insufficient"
            finding("claim_unbacked", "warn", "the item is claimed met, but its check gave no "
                    "answer: " + ", ".join(why), item["id"])
        statuses[item["id"]] = status
        reasons[item["id"]] = why

    for name in sorted(command_statuses):
        status = command_statuses[name]
        if status == "failed":
            finding("command_failed", "error" if name in required else "warn",
                    f"{name} failed", name)
        elif status in _INDETERMINATE:
            finding("command_unanswered", "warn", f"{name} ended {status}", name)
    if comparison.progress == "unknown":
        finding("workspace_unknown", "warn", f"the workspace boundary could not be compared: "
                f"{comparison.reason}")
    elif comparison.progress == "unchanged":
        finding("no_workspace_change", "info", "the workspace did not change this round")
    reported = evaluation.get("execution_report", {}).get("files_changed")
    if (reported is not None and comparison.progress in ("changed", "unchanged")
            and {p.removeprefix("./") for p in reported} != set(comparison.changed_paths)):
        finding("files_mismatch", "info", f"reported {len(reported)} changed files; git "
                f"observed {len(comparison.changed_paths)}")
    verified_refs = {r for i in (contract or {}).get("items", [])
                     if statuses.get(i["id"]) == "verified" for r in i["criterion_refs"]}
    for claim in evaluation.get("criterion_claims", []):
        if claim["outcome"] == "met" and claim["id"] not in verified_refs:
            finding("criterion_claim_unbacked", "info", "no verified contract item backs this "
                    "criterion claim", claim["id"])

    items = (contract or {}).get("items", [])
    machine_backed = (
        bool(items)
        and all(statuses[i["id"]] == "verified" for i in items)
        and all(command_statuses.get(n) == "passed" for n in required)
        and comparison.progress != "unknown"
    )
    if success_claim and not machine_backed:
        finding("success_unbacked", "warn", "the round claims success, but no machine "
                "observation backs it")
    findings.sort(key=lambda f: (_SEVERITY[f["severity"]], f["check"], f.get("ref", ""), f["id"]))
    state = closure(contract, statuses, outcome=evaluation["outcome"], superseded=superseded)

    providers: tuple[ProviderFact, ...] = ()
    if git_status != "not_applicable":
        providers = (ProviderFact("git", "git", git_status),)
    posture = derive_posture(PostureFacts(
        round=round_number,
        machine_backed_success=machine_backed,
        verification_configured=verification_configured,
        workspace_status=_workspace_status(comparison.progress),
        changed_paths=tuple(comparison.changed_paths),
        reported_files=tuple(reported) if reported is not None else None,
        providers=providers,
        commands=tuple(CommandFact(n, s, n in required) for n, s in command_statuses.items()),
        contract=(ContractFact(contract["id"], state or "open", tuple(
            ContractItemFact(i["id"], statuses[i["id"]], tuple(i["criterion_refs"]),
                             tuple(reasons[i["id"]])) for i in items))
                  if contract is not None else None),
        findings=tuple(FindingFact(f["id"], f["check"], f["severity"], f.get("ref"))
                       for f in findings),
    ))
    bound = {n for i in items for n in i["verify_with"]}
    blocking = [(n, s) for n, s in sorted(command_statuses.items())
                if s != "passed" and (n in required or n in bound)]
    return GateResult(statuses, findings, machine_backed, state, posture, comparison.progress,
                      blocking, frozenset(required))
