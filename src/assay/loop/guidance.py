"""Derived read views of a held round: the contract requirement and submission guidance.

Both are projections of committed facts and the project's command
declarations; neither is stored as a fact of its own (the held attempt keeps
a copy only so a stale-handle answer returns exactly what was shown).

Imports the base modules, config and its siblings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from assay.config import EvidenceCommand
from assay.loop.contract import capable_commands

__all__ = ["contract_requirement", "guidance"]


def contract_requirement(facts: Mapping[str, Any], commands: Sequence[EvidenceCommand],
                         round_number: int, max_rounds: int) -> dict[str, Any]:
    """Whether continuing after this round needs an active contract for the next one.

    A round that closes the active contract may continue without a successor
    (``successor_required_if_closed`` is false): the next round then has no
    contract and must propose one before it continues.
    """
    contract = facts.get("contract")
    active_id = contract["id"] if contract else None
    if not capable_commands(commands):
        reason, required, if_closed = "no_contract_capability", False, False
    elif round_number >= max_rounds:
        reason, required, if_closed = "no_successor_round", False, False
    elif contract is None:
        reason, required, if_closed = "no_active_contract", True, False
    else:
        reason, required, if_closed = "active_contract_continues", True, False
    return {"required_on_continue": required, "successor_required_if_closed": if_closed,
            "reason": reason, "active_contract_id": active_id}


def _recovery(brief: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The pending recovery of a redo round (its restore was verified before the prompt)."""
    if not brief:
        return None
    return {"pending": True, "redo_round": brief["redoRound"],
            "checkpoint_id": brief["checkpointId"], "restore_verified": True,
            "origin": brief["origin"], "reason": brief["reason"]}


def guidance(facts: Mapping[str, Any], commands: Sequence[EvidenceCommand], round_number: int,
             max_rounds: int, artifact: Mapping[str, Any] | None) -> dict[str, Any]:
    """The SubmissionGuidance of a held round."""
    contract = facts.get("contract")
    statuses: Mapping[str, str] = {}
    posture = facts.get("last_posture")
    if posture and posture.get("contract") and contract and posture["contract"]["id"] == contract["id"]:
        statuses = {i["id"]: i["status"] for i in posture["contract"]["items"]}
    capable = sorted(capable_commands(commands))
    return {
        "active_contract": None if contract is None else {
            "id": contract["id"],
            "work_item": contract["work_item"],
            "scope": list(contract.get("scope", [])),
            "declared_at_round": contract["declared_at_round"],
            "items": [{"id": i["id"], "description": i["description"],
                       "verify_with": list(i["verify_with"]),
                       "criterion_refs": list(i["criterion_refs"]),
                       "status": statuses.get(i["id"], "pending")} for i in contract["items"]],
        },
        "contract_commands": capable,
        "contract_verification_available": bool(capable),
        "contract_requirement": contract_requirement(facts, commands, round_number, max_rounds),
        "subgoals": [{"id": s["id"], "description": s["description"], "status": s["status"]}
                     for s in facts["subgoals"]],
        "criteria": [{"id": c["id"], "text": c["text"], "status": c["status"]}
                     for c in facts["criteria"]],
        "open_questions": [{"id": q["id"], "text": q["text"]} for q in facts["open_questions"]],
        "recovery": _recovery(facts.get("recovery")),
        "prompt": {"level": artifact["level"] if artifact else None,
                   "dropped_sections": list((artifact or {}).get("droppedSections", [])),
                   "protected_overflow": bool((artifact or {}).get("protectedOverflow", False))},
        "checks": [{"field": "verification", "check": f["check"], "severity": f["severity"],
                    "detail": f["detail"], **({"ref": f["ref"]} if f.get("ref") else {})}
                   for f in facts.get("findings", [])],
    }
