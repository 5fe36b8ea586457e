"""Round contracts: strict validation of proposals and claims, and successor rules.

A proposal carried by round *n* is for round *n+1*: it becomes the ACTIVE
contract only once round *n* commits, and only when the successor rules
allow (:func:`successor`). Everything here is pure; the command
declarations come from the project's ``[evidence.commands.NAME]`` tables.

Strict rules (``contract_invalid``, pointer into the submitted evaluation):

- the proposal's shape (:class:`~assay.loop.models.RoundContractProposal`);
- ``verify_with`` names declared, enabled, after-capable commands, and a
  proposal needs at least one such command to exist at all;
- ``criterion_refs`` are active ``cr-`` ids;
- item ids are unique inside a contract (two identical items are one);
- ``supersedes.contract_id`` equals the active contract id, and the
  successor's id differs from it;
- ``rci-`` claims name items of the active contract, once each.

Imports the base modules, config and its siblings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from assay.config import EvidenceCommand
from assay.errors import AssayError, pointer
from assay.loop import identity
from assay.loop.models import ContractItemProposal, RoundContractProposal, validate

__all__ = [
    "ContractDecision",
    "capable_commands",
    "closure",
    "normalise_contract",
    "successor",
]

_ACTION = "Fix the round_contract as the pointer says, then submit again with the same handle."


def contract_invalid(message: str, where: str, reason: str) -> AssayError:
    return AssayError(message, code="contract_invalid", pointer=where, action=_ACTION,
                      details={"reason": reason})


class _Faults:
    """Every referential defect of one proposal, raised together (the first one's pointer)."""

    def __init__(self) -> None:
        self.errors: list[dict[str, str]] = []

    def add(self, message: str, where: str, reason: str) -> None:
        self.errors.append({"pointer": where, "reason": reason, "detail": message})

    def raise_any(self) -> None:
        if not self.errors:
            return
        first = self.errors[0]
        more = f" (and {len(self.errors) - 1} more)" if len(self.errors) > 1 else ""
        raise AssayError(first["detail"] + more, code="contract_invalid", pointer=first["pointer"],
                         action=_ACTION, details={"reason": first["reason"],
                                                  "errors": self.errors[:50]})


def capable_commands(commands: Sequence[EvidenceCommand]) -> dict[str, EvidenceCommand]:
    """Declared commands a contract may bind: enabled and after-capable, by name."""
    return {c.name: c for c in commands if c.enabled and "after" in c.phases}


def normalise_contract(raw: Any, *, base: tuple[str | int, ...],
                       commands: Sequence[EvidenceCommand], criteria: Sequence[str],
                       active: Mapping[str, Any] | None, round_number: int) -> dict[str, Any]:
    """Validate a proposal strictly and return it with its ``rc-``/``rci-`` ids.

    ``raw.scope`` must already be normalised (it is report-only and lenient).
    Every defect is listed in ``details.errors``. The result: ``{id,
    work_item, scope, items[{id, description, criterion_refs, verify_with}],
    supersedes, proposed_at_round}``.
    """
    proposal: RoundContractProposal = validate(
        RoundContractProposal, raw, code="contract_invalid", base=base,
        message="the round contract is invalid", action=_ACTION)
    by_name = {c.name: c for c in commands}
    capable = capable_commands(commands)
    if not capable:
        raise contract_invalid(
            "no enabled, after-capable evidence command is declared, so a contract cannot be "
            "verified; declare one in assay.toml or omit round_contract", pointer(*base),
            "no_contract_capability")
    faults = _Faults()
    active_criteria = set(criteria)
    items: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(proposal.items):
        where = (*base, "items", index)
        _check_item(item, where, by_name, capable, active_criteria, faults)
        refs = sorted(set(item.criterion_refs))
        verify = sorted(set(item.verify_with))
        iid = identity.item_id(item.description, refs, verify)
        if iid in seen:
            faults.add(f"item {index} repeats item {seen[iid]} ({iid})", pointer(*where),
                       "duplicate_item")
            continue
        seen[iid] = index
        items.append({"id": iid, "description": item.description.strip(),
                      "criterion_refs": refs, "verify_with": verify})
    cid = identity.contract_id(proposal.work_item, items)
    supersedes = None
    if proposal.supersedes is not None:
        target = pointer(*base, "supersedes", "contract_id")
        if active is None:
            faults.add("supersedes names a contract, but no contract is active", target,
                       "no_active_contract")
        elif proposal.supersedes.contract_id != active["id"]:
            faults.add(f"supersedes names {proposal.supersedes.contract_id}, but the active "
                       f"contract is {active['id']}", target, "not_the_active_contract")
        elif cid == active["id"]:
            faults.add("a superseding contract must differ from the one it replaces",
                       pointer(*base, "items"), "successor_unchanged")
        supersedes = {"contract_id": proposal.supersedes.contract_id,
                      "reason": proposal.supersedes.reason}
    faults.raise_any()
    return {"id": cid, "work_item": proposal.work_item.strip(), "scope": list(proposal.scope),
            "items": sorted(items, key=lambda i: i["id"]), "supersedes": supersedes,
            "proposed_at_round": round_number}


def _check_item(item: ContractItemProposal, where: tuple[str | int, ...],
                by_name: Mapping[str, EvidenceCommand], capable: Mapping[str, EvidenceCommand],
                criteria: set[str], faults: _Faults) -> None:
    if not item.description.strip():
        faults.add("an item description must not be blank", pointer(*where, "description"),
                   "blank")
    for j, name in enumerate(item.verify_with):
        at = pointer(*where, "verify_with", j)
        decl = by_name.get(name)
        if decl is None:
            faults.add(f"verify_with names {name!r}, which is not declared in "
                       f"[evidence.commands]; declared: {', '.join(sorted(capable)) or 'none'}",
                       at, "undeclared_command")
        elif not decl.enabled:
            faults.add(f"evidence command {name!r} is disabled", at, "disabled_command")
        elif "after" not in decl.phases:
            faults.add(f"evidence command {name!r} has no 'after' phase", at,
                       "not_after_capable")
    for j, ref in enumerate(item.criterion_refs):
        if ref not in criteria:
            faults.add(f"criterion_refs names {ref!r}, which is not an active criterion id "
                       f"({', '.join(sorted(criteria)) or 'none'})",
                       pointer(*where, "criterion_refs", j), "unknown_criterion")


def item_claims(raw: Sequence[tuple[int, Any]], *, base: tuple[str | int, ...],
                active: Mapping[str, Any] | None) -> list[dict[str, str]]:
    """Validate the strict ``rci-`` claims ``(index, entry)`` against the active contract."""
    from assay.loop.models import ExecutionClaim

    known = {i["id"] for i in active["items"]} if active else set()
    out: list[dict[str, str]] = []
    seen: set[str] = set()
    faults = _Faults()
    for index, entry in raw:
        claim: ExecutionClaim = validate(ExecutionClaim, entry, code="contract_invalid",
                                         base=(*base, index), message="a contract item claim is "
                                         "invalid", action=_ACTION)
        where = pointer(*base, index, "id")
        if claim.id not in known:
            faults.add(f"{claim.id} is not an item of the active contract"
                       + (f" {active['id']}" if active else " (no contract is active)"), where,
                       "unknown_item")
        elif claim.id in seen:
            faults.add(f"{claim.id} is claimed twice", where, "duplicate_claim")
        else:
            seen.add(claim.id)
            out.append({"id": claim.id, "outcome": claim.outcome})
    faults.raise_any()
    return out


def closure(active: Mapping[str, Any] | None, item_statuses: Mapping[str, str], *,
            outcome: str, superseded: bool) -> str | None:
    """The active contract's closure after a round: open, verified, blocked or superseded."""
    if active is None:
        return None
    if superseded:
        return "superseded"
    if active["items"] and all(item_statuses.get(i["id"]) == "verified" for i in active["items"]):
        return "verified"
    if outcome == "blocked":
        return "blocked"
    return "open"


@dataclass(frozen=True, slots=True)
class ContractDecision:
    """What a round did to the contracts: the next active one and why."""

    before_id: str | None
    after: dict[str, Any] | None
    activated: bool
    closed: bool
    superseded: bool
    premature: bool
    redirect_reason: str | None

    @property
    def after_id(self) -> str | None:
        return self.after["id"] if self.after else None


def successor(active: Mapping[str, Any] | None, active_closure: str | None,
              proposal: Mapping[str, Any] | None, round_number: int) -> ContractDecision:
    """Which contract governs the next round.

    - ``supersedes`` (already checked against the active id): the active one is
      closed as superseded and the proposal activates;
    - restating the active contract (same ``rc-`` id) keeps it while it is
      open; restating a closed one activates nothing;
    - a new proposal activates when no contract is active or the active one
      closed this round; while the active one stays open it is premature
      and the active contract continues;
    - no proposal: the active contract continues while open.
    """
    before_id = active["id"] if active else None
    closed = active_closure in ("verified", "blocked", "superseded")

    def declared(p: Mapping[str, Any]) -> dict[str, Any]:
        return {"id": p["id"], "work_item": p["work_item"], "scope": list(p["scope"]),
                "items": [dict(i) for i in p["items"]], "declared_at_round": round_number}

    keep = dict(active) if active is not None and not closed else None
    if proposal is None:
        return ContractDecision(before_id, keep, False, closed, False, False, None)
    if proposal.get("supersedes"):
        return ContractDecision(before_id, declared(proposal), True, True, True, False,
                                proposal["supersedes"].get("reason"))
    if active is not None and proposal["id"] == active["id"]:
        return ContractDecision(before_id, keep, False, closed, False, False, None)
    if active is None or closed:
        return ContractDecision(before_id, declared(proposal), True, closed, False, False, None)
    return ContractDecision(before_id, keep, False, False, False, True, None)
