"""High-risk gate decisions: classify an action before it is taken, and approve or deny it.

A gate decision ``loop:<loopId>:gate:<g-id>`` is recorded in the held round
by :func:`check` (``assay loop gate-check``), before a risky action. The
action is a one-line text, or a structured descriptor ``{description, scope,
effects, reversibility, authorization}`` (:class:`~assay.loop.models.GateDescriptor`).
The classification states a ``risk`` and the ``reasonCodes`` behind it:

- ``high``: a text rule matched the one-line action (``rule:destructive_delete``,
  ``rule:publish``, ...), or the descriptor says ``authorization:user_required``,
  ``reversibility:irreversible`` or ``reversibility:unknown``, or has an effect
  that always needs a person (``effects:production``, ``effects:credentials``,
  ``effects:data_migration``, ``effects:public_api``, ``effects:publish``,
  ``effects:payment``, ``effects:external_communication``);
- ``unknown``: a descriptor that cannot prove itself safe
  (``authorization:unknown``, ``effects_empty``);
- ``low``: otherwise (``scope_empty`` is reported but decides nothing).

``high`` and ``unknown`` gates are ``ask_user`` (kind ``user``): citing one
in a submission's ``gate_ids`` is rejected (``gate_unapproved``) until a
principal other than the loop's agent principal (and other than whoever
recorded the gate) approves it with :func:`decide` (``assay loop approve``);
a denied gate stays refused (``gate_denied``). ``low`` gates are
``proceed`` (kind ``agent``) and need no one.

The same action in the same round (and branch) has the same ``g-`` id;
checking it again returns the recorded decision. An approval is a new
version of the decision record, so the ledger keeps who decided and when.

Imports the base modules, the ledger contract and its siblings.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from assay.canonical import digest
from assay.config import Project
from assay.errors import AssayError, ConflictError, RevisionConflict, UsageError
from assay.ledger.store import Store, Write
from assay.loop import identity
from assay.loop.models import GateDescriptor, validate
from assay.loop.recovery import restore_pending_error
from assay.loop.session import (
    handle_of,
    load_head,
    mismatch_error,
    now_text,
    refuse_paused,
    round_gates,
    stopped_error,
)

__all__ = ["ACTION_LIMIT", "GATE_RULES", "USER_EFFECTS", "check", "cited", "classify", "decide"]

# High-risk action rules (name, pattern); a match asks for a person.
GATE_RULES: tuple[tuple[str, str], ...] = (
    ("destructive_delete", r"\brm\s+-[a-zA-Z]*[rf]|\bshred\b|\brmdir\b"),
    ("history_rewrite", r"\bgit\s+(push\s+.*(--force|-f)\b|reset\s+--hard|rebase|filter-branch)"),
    ("publish", r"\b(git\s+push|npm\s+publish|twine\s+upload|docker\s+push|deploy)\b"),
    ("database_drop", r"\b(drop\s+(table|database|schema)|truncate\s+table)\b"),
    ("credentials", r"\b(secret|credential|password|token|api[_-]?key)s?\b"),
    ("privilege", r"\b(sudo|chmod\s+777|chown)\b"),
)
USER_EFFECTS = frozenset({"production", "credentials", "data_migration", "public_api", "publish",
                          "payment", "external_communication"})
ACTION_LIMIT = 1000
REASON_LIMIT = 500
_GATE_ID = re.compile(r"g-[0-9a-f]{8}")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _gate_invalid(message: str, where: str, **details: Any) -> AssayError:
    return AssayError(message, code="gate_invalid", pointer=where, details=details or None,
                      action="Describe the risky action in one line, or as a descriptor "
                             "{description, scope, effects, reversibility, authorization}.")


def classify(text: str, descriptor: Mapping[str, Any] | None) -> dict[str, Any]:
    """``{risk, reasonCodes, kind, decision, matchedRules}`` of one action (pure).

    A one-line text is judged by :data:`GATE_RULES`; a descriptor by what it
    declares, never by keywords, and conservatively: what it does not prove
    safe asks for a person.
    """
    if descriptor is None:
        matched = [name for name, pattern in GATE_RULES if re.search(pattern, text, re.IGNORECASE)]
        high = bool(matched)
        codes = [f"rule:{name}" for name in matched]
        level = "high" if high else "low"
    else:
        matched = []
        effects = descriptor["effects"]
        codes = [f"effects:{e}" for e in effects if e in USER_EFFECTS]
        if descriptor["reversibility"] in ("irreversible", "unknown"):
            codes.append(f"reversibility:{descriptor['reversibility']}")
        if descriptor["authorization"] in ("user_required", "unknown"):
            codes.append(f"authorization:{descriptor['authorization']}")
        high = any(c != "authorization:unknown" for c in codes)
        if not effects:
            codes.append("effects_empty")
        if not descriptor["scope"]:
            codes.append("scope_empty")
        unproven = descriptor["authorization"] == "unknown" or not effects
        level = "high" if high else "unknown" if unproven else "low"
    user = level != "low"
    return {"risk": level, "reasonCodes": codes, "kind": "user" if user else "agent",
            "decision": "ask_user" if user else "proceed", "matchedRules": matched}


def _descriptor(value: Any) -> dict[str, Any]:
    parsed: GateDescriptor = validate(
        GateDescriptor, value, code="gate_invalid", base=("descriptor",),
        message="the gate descriptor is invalid",
        action="Give {description, scope, effects, reversibility, authorization}.")
    description = parsed.description.strip()
    if not description or _CONTROL.search(description):
        raise _gate_invalid("the descriptor's description is a non-blank line without control "
                            "characters", "/descriptor/description")
    return {"description": description,
            "scope": sorted({s.strip() for s in parsed.scope if s.strip()}),
            "effects": sorted(set(parsed.effects)), "reversibility": parsed.reversibility,
            "authorization": parsed.authorization}


def _action_text(action: Any, descriptor: Mapping[str, Any] | None) -> str:
    if action is None and descriptor is not None:
        return str(descriptor["description"])
    if not isinstance(action, str) or not action.strip():
        raise _gate_invalid("the action must be a non-blank text (or give a descriptor)",
                            "/action")
    text = action.strip()
    if len(text) > ACTION_LIMIT or _CONTROL.search(text):
        raise _gate_invalid(f"the action is at most {ACTION_LIMIT} characters without control "
                            "characters", "/action")
    return text


def check(store: Store, project: Project, handle: Mapping[str, str], action: Any, *,
          descriptor: Any = None, principal: str, enabled: bool = True) -> dict[str, Any]:
    """Record the gate decision for an action in the held round (see the module docstring).

    Returns ``{gateDecision, recorded}``; ``recorded`` is false when the same
    action was already checked in this round. Writes one record, or nothing.
    """
    if not enabled:
        raise AssayError("the high-risk gate is disabled for this project", code="gate_disabled",
                         action="Set [loop] gate = true in assay.toml to use gate-check.")
    shape = _descriptor(descriptor) if descriptor is not None else None
    text = _action_text(action, shape)
    loop_id, _ = identity.parse_round_id(handle["roundId"]) or ("", 0)
    head = load_head(store, loop_id, scope=project.scope).data
    refuse_paused(head)
    if handle_of(head) != dict(handle):
        raise mismatch_error(head, handle)
    if (head.get("recovery") or {}).get("status") == "pending":
        raise restore_pending_error(head)
    action_hash = digest({"action": text, "descriptor": shape} if shape else text)
    branch = str(head.get("branchId", "main"))
    gid = identity.gate_id(handle["roundId"], action_hash, branch)
    rec_id = identity.gate_record_id(loop_id, gid)
    with store.reader() as reader:
        existing = reader.get(rec_id)
    if existing is not None:
        return {"gateDecision": existing.data, "recorded": False}
    decision = {
        "type": "gate-decision", "gateId": gid, "loopId": loop_id,
        "roundId": handle["roundId"], "round": head["round"], "attempt": head["attempt"],
        "branchId": branch, "transactionId": handle["transactionId"], "action": text,
        "actionHash": action_hash, "descriptor": shape, **classify(text, shape),
        "requestedBy": principal, "approval": None, "decidedAt": now_text(),
    }
    decision["classification"] = decision["kind"]
    try:
        store.put(Write(id=rec_id, data=decision, scope=project.scope, origin="derived",
                        expect_revision=0))
    except RevisionConflict:
        with store.reader() as reader:
            again = reader.get(rec_id)
        return {"gateDecision": again.data if again else decision, "recorded": False}
    return {"gateDecision": decision, "recorded": True}


def decide(store: Store, project: Project, loop_id: str, gate_id: Any, *, approve: bool,
           principal: str, reason: Any = None) -> dict[str, Any]:
    """Approve (or deny) an ``ask_user`` gate as ``principal``; returns ``{gateDecision, recorded}``.

    Refused with ``approval_forbidden`` for the loop's agent principal and for
    whoever recorded the gate; ``gate_decided`` when the other answer was
    given already (the same answer again is returned, not written twice).
    """
    if not isinstance(gate_id, str) or not _GATE_ID.fullmatch(gate_id):
        raise UsageError(f"{gate_id!r} is not a gate id (g- and 8 hex digits)",
                         code="invalid_argument", pointer="/gate")
    note = reason.strip() if isinstance(reason, str) else ""
    if len(note) > REASON_LIMIT or _CONTROL.search(note):
        raise UsageError(f"--reason is at most {REASON_LIMIT} characters without control "
                         "characters", code="invalid_argument", pointer="/reason")
    head = load_head(store, loop_id, scope=project.scope, code="state_unavailable").data
    if head["status"] == "stopped":
        raise stopped_error(head)
    rec_id = identity.gate_record_id(loop_id, gate_id)
    with store.reader() as reader:
        record = reader.get(rec_id)
    if record is None or not isinstance(record.data, dict):
        held = [g["gateId"] for g in round_gates(store, head)]
        raise AssayError(f"loop {loop_id!r} has no gate {gate_id}"
                         + (f"; this round's gates: {', '.join(held)}" if held else ""),
                         code="gate_not_found", pointer="/gate",
                         details={"loopId": loop_id, "gateId": gate_id, "roundGates": held},
                         action="List the round's gates with 'assay loop status'.")
    gate = dict(record.data)
    if gate.get("decision") != "ask_user":
        raise _gate_invalid(f"gate {gate_id} is {gate.get('decision')}: it needs no approval",
                            "/gate", reason="no_approval_needed")
    forbidden = {head.get("agentPrincipal"), gate.get("requestedBy")} - {None}
    if principal in forbidden:
        raise AssayError(
            f"{principal!r} may not decide gate {gate_id}: it is the loop's agent principal or "
            "recorded the gate, and a gate needs a second principal",
            code="approval_forbidden",
            details={"principal": principal, "agentPrincipal": head.get("agentPrincipal"),
                     "requestedBy": gate.get("requestedBy"), "gateId": gate_id},
            action="Ask another principal to decide it (assay --as NAME or ASSAY_PRINCIPAL).")
    status = "approved" if approve else "denied"
    if gate.get("approval") is not None:
        return _already(gate, status)
    gate["approval"] = {"status": status, "principal": principal, "reason": note or None,
                        "decidedAt": now_text()}
    try:
        store.put(Write(id=rec_id, data=gate, scope=project.scope, origin="derived",
                        expect_revision=record.revision))
    except RevisionConflict:
        with store.reader() as reader:
            again = reader.get(rec_id)
        return _already(dict(again.data) if again else gate, status)
    return {"gateDecision": gate, "recorded": True}


def _already(gate: Mapping[str, Any], status: str) -> dict[str, Any]:
    given = gate["approval"]
    if given["status"] == status:
        return {"gateDecision": dict(gate), "recorded": False}
    raise ConflictError(f"gate {gate['gateId']} was already {given['status']} by "
                        f"{given['principal']}", code="gate_decided",
                        details={"gateId": gate["gateId"], "approval": dict(given)},
                        action="A gate is decided once; check a new action to ask again.")


def cited(store: Store, head: Mapping[str, Any], gate_ids: Sequence[str]) -> list[dict[str, Any]]:
    """Enforcement checks for the gates a submission cites: unknown, unapproved or denied."""
    checks: list[dict[str, Any]] = []
    if not gate_ids:
        return checks
    loop_id = head["loopId"]
    with store.reader() as reader:
        found = reader.get_many([identity.gate_record_id(loop_id, g) for g in gate_ids])
    for gid in gate_ids:
        rec = found.get(identity.gate_record_id(loop_id, gid))
        data = rec.data if rec is not None and isinstance(rec.data, dict) else None
        if (data is None or data.get("round") != head["round"]
                or data.get("branchId", head.get("branchId")) != head.get("branchId")):
            checks.append({"check": "gate_unknown", "ref": gid,
                           "detail": f"{gid} is not a gate decision recorded in this round "
                                     "('assay loop gate-check')"})
        elif data["decision"] == "ask_user" and data.get("approval") is None:
            checks.append({"check": "gate_unapproved", "ref": gid,
                           "detail": f"{gid} ({data['action'][:120]}) is {data['risk']} "
                                     "risk and waits for a person: another principal approves "
                                     f"it with 'assay loop approve --gate {gid} -- {loop_id}'"})
        elif (data.get("approval") or {}).get("status") == "denied":
            checks.append({"check": "gate_denied", "ref": gid,
                           "detail": f"{gid} ({data['action'][:120]}) was denied by "
                                     f"{data['approval']['principal']}: do not take the action"})
    return checks
