"""The evidence posture: how well machine observations cover a round's claims.

:func:`derive_posture` is a pure function of complete facts (no I/O, no
clock): the same :class:`PostureFacts` always give the byte-identical
canonical posture. It is shared by ``assay evidence run`` (one command, one
workspace boundary) and the loop governor (a round's commands, providers,
contract and findings). The posture is a compact projection: it carries no
output, no file fingerprints, no paths; full observations stay in the record
they came from.

The output keeps the reference's camelCase spelling (``machineBackedSuccess``,
``changedPathCount``, ...) for interoperability with the loop protocol.

Status, computed from the COMPLETE facts before any cap; first rule wins:

1. ``not_applicable``: a rollback directive (it carries no observations), or
   nothing participated (no command, no provider, no contract, and the
   workspace boundary is ``not_applicable``).
2. ``contradicted``: a machine fact denies a claim: a contract item is
   ``contradicted``, or a required command ``failed``.
3. ``unknown``: something that should have been observed could not be: a
   required command ended ``timeout``/``error``/``aborted``/``unavailable``,
   a provider ended in one of those, or the workspace boundary is
   ``unknown``. ``unknown`` never degrades to ``verified`` or to an empty
   result.
4. ``verified``: ``machine_backed_success`` is true (only the caller's
   verification step may set it; it is passed through, never re-derived),
   every required command passed, every contract item is ``verified``, and at
   least one command passed or one item is verified.
5. ``insufficient`` otherwise: claims are not contradicted but not covered.

Optional (not required) commands and findings are reported, never decide the
status; the file reconciliation is a report too ("never a ledger of verified
files"). Arrays are sorted in the reference's stable orders, then capped by
code constants; ``omitted`` counts what each cap hid.

Imports only :mod:`assay.errors`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from assay.errors import AssayError, pointer

__all__ = [
    "CONTRACT_ITEM_STATUSES",
    "MAX_COMMANDS",
    "MAX_CONTRACT_ITEMS",
    "MAX_FINDINGS",
    "MAX_PROVIDERS",
    "MAX_REASONS",
    "OBSERVATION_STATUSES",
    "POSTURE_STATUSES",
    "CommandFact",
    "ContractFact",
    "ContractItemFact",
    "FindingFact",
    "PostureFacts",
    "ProviderFact",
    "derive_posture",
]

POSTURE_STATUSES = ("verified", "insufficient", "contradicted", "unknown", "not_applicable")
OBSERVATION_STATUSES = ("observed", "passed", "failed", "timeout", "unavailable", "error", "aborted")
CONTRACT_ITEM_STATUSES = ("pending", "insufficient", "contradicted", "verified")
CONTRACT_CLOSURES = ("open", "verified", "blocked", "superseded")
WORKSPACE_STATUSES = ("observed", "unknown", "not_applicable")
SEVERITIES = ("error", "warn", "info")
# Code constants, never policy.
MAX_PROVIDERS = 16
MAX_COMMANDS = 32
MAX_CONTRACT_ITEMS = 32
MAX_FINDINGS = 32
MAX_REASONS = 8

_INDETERMINATE = frozenset({"timeout", "error", "aborted", "unavailable"})


@dataclass(frozen=True, slots=True)
class CommandFact:
    """One command's observed status in the round."""

    command_id: str
    status: str
    required: bool = False


@dataclass(frozen=True, slots=True)
class ProviderFact:
    """One non-command provider (``git`` or ``custom``) and its status."""

    provider_id: str
    kind: str
    status: str


@dataclass(frozen=True, slots=True)
class ContractItemFact:
    """A contract item's machine-derived status at commit time."""

    id: str
    status: str
    criterion_refs: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ContractFact:
    """The active contract at commit time."""

    id: str
    closure: str
    items: tuple[ContractItemFact, ...] = ()


@dataclass(frozen=True, slots=True)
class FindingFact:
    """A verification finding (``f-`` id)."""

    id: str
    check: str
    severity: str
    ref: str | None = None


@dataclass(frozen=True, slots=True)
class PostureFacts:
    """Everything the posture is derived from; all arrays complete (uncapped).

    ``changed_paths`` is the machine-observed change set of the workspace
    boundary; ``reported_files`` the agent's own list (None when it reported
    none).
    """

    round: int
    kind: str = "evaluation"
    machine_backed_success: bool = False
    verification_configured: bool = False
    workspace_status: str = "not_applicable"
    changed_paths: tuple[str, ...] = ()
    reported_files: tuple[str, ...] | None = None
    providers: tuple[ProviderFact, ...] = ()
    commands: tuple[CommandFact, ...] = ()
    contract: ContractFact | None = None
    findings: tuple[FindingFact, ...] = ()


def _bad(where: str, message: str) -> AssayError:
    return AssayError(message, code="invalid_posture_input", pointer=where,
                      action="Pass statuses from the documented vocabularies.")


def _check(facts: PostureFacts) -> None:
    if not isinstance(facts.round, int) or isinstance(facts.round, bool) or facts.round < 0:
        raise _bad("/round", "round is an integer >= 0")
    if facts.kind not in ("evaluation", "rollback"):
        raise _bad("/kind", "kind is 'evaluation' or 'rollback'")
    if facts.workspace_status not in WORKSPACE_STATUSES:
        raise _bad("/workspace_status", f"workspace status is one of {', '.join(WORKSPACE_STATUSES)}")
    for i, provider in enumerate(facts.providers):
        if provider.kind not in ("git", "custom"):
            raise _bad(pointer("providers", i, "kind"), "provider kind is 'git' or 'custom'")
        if provider.status not in OBSERVATION_STATUSES:
            raise _bad(pointer("providers", i, "status"), "unknown observation status")
    for i, command in enumerate(facts.commands):
        if command.status not in OBSERVATION_STATUSES:
            raise _bad(pointer("commands", i, "status"), "unknown observation status")
    if facts.contract is not None:
        if facts.contract.closure not in CONTRACT_CLOSURES:
            raise _bad("/contract/closure", f"closure is one of {', '.join(CONTRACT_CLOSURES)}")
        for i, item in enumerate(facts.contract.items):
            if item.status not in CONTRACT_ITEM_STATUSES:
                raise _bad(pointer("contract", "items", i, "status"), "unknown contract item status")
    for i, finding in enumerate(facts.findings):
        if finding.severity not in SEVERITIES:
            raise _bad(pointer("findings", i, "severity"), "severity is error, warn or info")


def _status(facts: PostureFacts) -> str:
    items = facts.contract.items if facts.contract is not None else ()
    required = [c for c in facts.commands if c.required]
    if facts.kind == "rollback":
        return "not_applicable"
    if (not facts.commands and not facts.providers and facts.contract is None
            and facts.workspace_status == "not_applicable"):
        return "not_applicable"
    if any(i.status == "contradicted" for i in items) or any(c.status == "failed" for c in required):
        return "contradicted"
    if (any(c.status in _INDETERMINATE for c in required)
            or any(p.status in _INDETERMINATE for p in facts.providers)
            or facts.workspace_status == "unknown"):
        return "unknown"
    backed = any(c.status == "passed" for c in facts.commands) or any(
        i.status == "verified" for i in items)
    if (facts.machine_backed_success and backed
            and all(c.status == "passed" for c in required)
            and all(i.status == "verified" for i in items)):
        return "verified"
    return "insufficient"


def _dedupe(values: Sequence[str]) -> list[str]:
    seen: dict[str, None] = {}
    for value in values:
        seen.setdefault(value, None)
    return list(seen)


def _normal_path(path: str) -> str:
    while path.startswith("./"):
        path = path[2:]
    return path


def derive_posture(facts: PostureFacts) -> dict[str, Any]:
    """Derive the posture (reference ``EvidencePosture`` shape) from complete facts.

    Raises ``invalid_posture_input`` (with a pointer into the facts) for a
    status outside the vocabularies; an outcome is never an exception.
    """
    _check(facts)
    status = _status(facts)

    changed = sorted(set(facts.changed_paths)) if facts.workspace_status == "observed" else []
    files: dict[str, Any] | None = None
    if facts.reported_files is not None:
        reported = {_normal_path(p) for p in facts.reported_files}
        if facts.workspace_status == "observed":
            reconciliation = "match" if reported == set(changed) else "mismatch"
        else:
            reconciliation = facts.workspace_status
        files = {"reconciliation": reconciliation, "reported": len(reported),
                 "observed": len(changed)}

    providers = sorted(facts.providers, key=lambda p: (("git", "custom").index(p.kind),
                                                        p.provider_id))
    commands = sorted(facts.commands, key=lambda c: c.command_id)
    findings = sorted(facts.findings, key=lambda f: (SEVERITIES.index(f.severity), f.check,
                                                     f.ref or "", f.id))
    contract: dict[str, Any] | None = None
    omitted_items = 0
    if facts.contract is not None:
        items = sorted(facts.contract.items, key=lambda i: i.id)
        counts = {s: sum(1 for i in items if i.status == s) for s in CONTRACT_ITEM_STATUSES}
        shown = items[:MAX_CONTRACT_ITEMS]
        omitted_items = len(items) - len(shown)
        contract = {
            "id": facts.contract.id,
            "closure": facts.contract.closure,
            "items": [
                {
                    "id": i.id,
                    "status": i.status,
                    "criterionRefs": list(i.criterion_refs),
                    "reasons": _dedupe(i.reasons)[:MAX_REASONS],
                }
                for i in shown
            ],
            "verifiedCount": counts["verified"],
            "insufficientCount": counts["insufficient"],
            "contradictedCount": counts["contradicted"],
            "pendingCount": counts["pending"],
        }

    return {
        "round": facts.round,
        "kind": facts.kind,
        "status": status,
        "machineBackedSuccess": facts.machine_backed_success,
        "verificationConfigured": facts.verification_configured,
        "workspace": {"status": facts.workspace_status, "changedPathCount": len(changed)},
        "files": files,
        "providers": [
            {"providerId": p.provider_id, "kind": p.kind, "status": p.status}
            for p in providers[:MAX_PROVIDERS]
        ],
        "commands": [
            {"commandId": c.command_id, "status": c.status, "required": c.required}
            for c in commands[:MAX_COMMANDS]
        ],
        "contract": contract,
        "findings": [
            {"id": f.id, "check": f.check, "severity": f.severity,
             **({"ref": f.ref} if f.ref is not None else {})}
            for f in findings[:MAX_FINDINGS]
        ],
        "omitted": {
            "providers": max(0, len(providers) - MAX_PROVIDERS),
            "commands": max(0, len(commands) - MAX_COMMANDS),
            "contractItems": omitted_items,
            "findings": max(0, len(findings) - MAX_FINDINGS),
        },
    }
