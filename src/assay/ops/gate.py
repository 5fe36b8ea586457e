"""Gate operations a person runs: gate pin, gate approve (the checks and tests an intent
relies on, and the gate's configuration, reviewed).

Both are admin operations (a person's, never offered to the agent over MCP)
and both are refused to the gated principal (``gated_principal_cannot_review``):
what gates an agent must come from someone else. Handlers import the
capabilities lazily so the registry stays cheap to load.
"""

from __future__ import annotations

from typing import Any

from assay.errors import AssayError, UsageError
from assay.ops import Argument, Invocation, Result, operation

_INTENTS = Argument("intent", {"type": "array", "items": {"type": "string", "minLength": 1}},
                    "The intent record ids (knowledge:NAME).", binding="literals")
_PIN_CODES = ("check_definition_changed", "requirement_tests_changed")
_SIGN = Argument("sign", {"type": "string", "minLength": 1},
                 "A reviewer's private key file: sign each record written with it (the key's "
                 "public half must be listed in [gate] reviewer_keys when that is set).")


def _signer(inv: Invocation, value: str | None) -> Any:
    """The reviewer's signer of ``sign`` (asking its passphrase on the terminal), or None.

    Refused (``reviewer_key_not_allowed``) when ``[gate] reviewer_keys`` is set
    and lists no key file with this key's id.
    """
    if not value:
        return None
    from assay.attest.signing import load_public_key, load_signer
    from assay.ops.outfile import named_path

    signer = load_signer(named_path(value, inv.cwd), where="/sign")
    project = inv.project()
    allowed = project.gate.reviewer_keys
    if allowed:
        ids = []
        for index, path in enumerate(allowed):
            try:
                ids.append(load_public_key(project.root / path,
                                           where=f"/gate/reviewer_keys/{index}").keyid)
            except AssayError:
                continue
        if signer.public_key.keyid not in ids:
            raise AssayError(
                f"the key {value} is not one of [gate] reviewer_keys",
                code="reviewer_key_not_allowed", pointer="/sign",
                details={"keyid": signer.public_key.keyid},
                action="Sign with a reviewer key listed in [gate] reviewer_keys, or list its "
                       "public key there (a change to approve).")
    return signer


def _signed(writes: list[Any], signer: Any, principal: str) -> list[Any]:
    """``writes`` with a reviewer signature in the data of each (see :mod:`assay.attest.review`)."""
    if signer is None:
        return writes
    from assay.attest.review import sign_review

    for write in writes:
        write.data["signature"] = sign_review(write.id, write.data, signer, principal)
    return writes


def _reviewer(inv: Invocation, reader: Any) -> str:
    """The caller, unless it is the gated principal (then ``gated_principal_cannot_review``).

    The gated principal now, and the one the gate's pin names: an agent that
    renames the gated principal in assay.toml is still the one it was.
    """
    from assay.intent.pin import GATE_TARGET, read_pin, usable_pin

    principal = inv.principal
    gated = inv.project().gated_principal
    pinned = usable_pin(read_pin(reader, GATE_TARGET)) or {}
    if principal in (pinned.get("gated_principal"), (pinned.get("gate") or {}).get("principal")):
        gated = principal
    if principal == gated:
        raise AssayError(
            f"{principal} is the gated principal (the one the stop gate judges): it cannot "
            "review what gates it",
            code="gated_principal_cannot_review", pointer="/principal",
            details={"gated_principal": gated},
            action="Run it as the reviewer (--as NAME or ASSAY_PRINCIPAL), a principal other "
                   f"than {gated}.")
    return principal


def _reports(inv: Invocation, reader: Any, binding: Any, intents: list[str]
             ) -> list[tuple[str, Any, dict[str, Any]]]:
    """Each named intent's read and report (an unreadable intent's error points at it)."""
    from assay.intent.check import build_report, read_intent

    out = []
    for index, intent_id in enumerate(intents):
        try:
            read = read_intent(reader, binding, intent_id)
        except AssayError as exc:
            exc.pointer = f"/intent/{index}"
            raise
        out.append((intent_id, read, build_report(read, binding)))
    return out


def _pending(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [i for i in report["issues"] if i["code"] in _PIN_CODES]


def _gate_pending(reader: Any, state: Any) -> tuple[bool, list[dict[str, Any]]]:
    """Whether the gate's pin exists and is usable, and how the gate now is weaker than it."""
    from assay.intent.pin import GATE_TARGET, gate_changes, read_pin, usable_pin

    pinned = usable_pin(read_pin(reader, GATE_TARGET))
    if pinned is None or state.gate is None:
        return pinned is not None, []
    return True, gate_changes(pinned.get("gate") or {}, state.gate)


def _facts(inv: Invocation) -> dict[str, Any]:
    """Where an approval was made: the surface and the operating-system user running it."""
    import getpass

    try:
        user = getpass.getuser()
    except (OSError, KeyError):  # no name for this uid
        user = None
    return {"surface": inv.surface, "os_user": user}


@operation(
    "gate.pin",
    summary="Pin, as a reviewer, the checks and tests intents rely on and the gate's configuration.",
    description=(
        "A person's operation. Records the reviewed pin of each named intent (the contract of "
        "every evidence command it relies on, and per requirement the commands and the tests "
        "mapped to it in the runs its results cite, with their source digests) and of the stop "
        "gate's configuration ([gate], the gated principal, [evidence] ignore and the hook "
        "entries in the project's harness settings files), as gate-pin records. Refused to the "
        "gated principal (gated_principal_cannot_review), and for a target whose current state "
        "differs from an existing pin (pin_has_changes: use `gate.approve`, which records why). "
        "With `sign`, each pin written carries the reviewer key's signature (see "
        "`verify-attestation`'s `reviewer_key`)."),
    writes=True,
    admin=True,
    arguments=(_INTENTS, _SIGN),
    output_schema={"type": "object", "properties": {
        "pins": {"type": "array", "items": {"type": "object"}},
        "signed_by": {"type": ["string", "null"]}}},
)
def gate_pin(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.intent.pin import read_pin, reviewed_gate_pin, reviewed_intent_pin, usable_pin
    from assay.ops.intent import live_binding

    binding = live_binding(inv)
    state = binding.state
    project = inv.project()
    intents = list(dict.fromkeys(args.get("intent") or ()))
    signer = _signer(inv, args.get("sign"))
    store = inv.store()
    with store.reader() as reader:
        principal = _reviewer(inv, reader)
        writes = []
        for index, (intent_id, read, report) in enumerate(
                _reports(inv, reader, binding, intents)):
            pending = _pending(report)
            if pending and usable_pin(read_pin(reader, intent_id)) is not None:
                raise AssayError(
                    f"{intent_id}'s checks or tests differ from its pin: "
                    + "; ".join(i["message"] for i in pending[:3]),
                    code="pin_has_changes", pointer=f"/intent/{index}",
                    details={"codes": [i["code"] for i in pending]},
                    action=f"Review the changes, then approve them: 'assay gate approve --reason "
                           f"WHY -- {intent_id}'.")
            acceptance = read.record.data.get("acceptance")
            writes.append(reviewed_intent_pin(reader, state, intent_id, read.document,
                                              acceptance, principal, project.scope,
                                              "gate_pin", None))
        _, weaker = _gate_pending(reader, state)
        if weaker:
            raise AssayError(
                "the stop gate's configuration is weaker than its pin: "
                + ", ".join(c["field"] for c in weaker),
                code="pin_has_changes", pointer="/gate", details={"changes": weaker},
                action="Review the change, then approve it: 'assay gate approve --gate "
                       "--reason WHY'.")
        writes.append(reviewed_gate_pin(reader, state, principal, project.scope, "gate_pin",
                                        None))
    receipts = store.put_many(_signed(writes, signer, principal))
    return Result({"pins": [r.to_dict() for r in receipts],
                   "signed_by": signer.public_key.keyid if signer is not None else None},
                  ledger_revision=receipts[-1].ledger_revision,
                  next=tuple(f"Check it: 'assay work check -- {i}'" for i in intents))


@operation(
    "gate.approve",
    summary="Approve, as a reviewer, a change to an intent's pinned checks or tests, or to the gate.",
    description=(
        "A person's operation. For each named intent whose work check reports "
        "check_definition_changed or requirement_tests_changed, and with `gate` for a gate "
        "configuration weaker than its pin (gate_config_changed), records a gate-approval "
        "record (the changes, who approved them, the `reason`, the surface and the "
        "operating-system user) and pins the current state in the same write, so the issue is "
        "resolved; a cited run of the old definition then needs running again. Refused to the "
        "gated principal (gated_principal_cannot_review), and when there is nothing to approve "
        "(nothing_to_approve). With `sign`, each approval and pin written carries the "
        "reviewer key's signature."),
    writes=True,
    admin=True,
    arguments=(
        _INTENTS,
        Argument("gate", {"type": "boolean"}, "Approve the change of the gate's configuration.",
                 binding="flag"),
        Argument("reason", {"type": "string", "minLength": 1},
                 "Why the change is right (recorded with the approval).", required=True),
        _SIGN,
    ),
    output_schema={"type": "object", "properties": {
        "approvals": {"type": "array", "items": {"type": "object"}},
        "pins": {"type": "array", "items": {"type": "object"}},
        "signed_by": {"type": ["string", "null"]}}},
)
def gate_approve(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.intent.pin import (
        GATE_TARGET,
        approval_id,
        approval_write,
        read_pin,
        reviewed_gate_pin,
        reviewed_intent_pin,
    )
    from assay.ops.intent import live_binding

    intents = list(dict.fromkeys(args.get("intent") or ()))
    if not intents and not args.get("gate"):
        raise UsageError("name the intents whose changes to approve, or --gate",
                         code="missing_argument", pointer="/intent")
    binding = live_binding(inv)
    state = binding.state
    scope = inv.project().scope
    facts = _facts(inv)
    signer = _signer(inv, args.get("sign"))
    store = inv.store()
    writes = []
    with store.reader() as reader:
        principal = _reviewer(inv, reader)
        for index, (intent_id, read, report) in enumerate(
                _reports(inv, reader, binding, intents)):
            pending = _pending(report)
            current = read_pin(reader, intent_id)
            if not pending:
                raise AssayError(
                    f"{intent_id}'s checks and tests are as pinned: nothing to approve"
                    if current is not None else f"{intent_id} has no pin: nothing to approve",
                    code="nothing_to_approve", pointer=f"/intent/{index}",
                    action=f"See 'assay work check -- {intent_id}'." if current is not None
                    else f"Pin it as it is: 'assay gate pin -- {intent_id}'.")
            revision = (current.revision if current is not None else 0) + 1
            approval = approval_id(intent_id, revision)
            writes.append(approval_write(intent_id, revision, scope, principal, state,
                                         args["reason"], pending, facts))
            writes.append(reviewed_intent_pin(
                reader, state, intent_id, read.document, read.record.data.get("acceptance"),
                principal, scope, "approved", approval))
        if args.get("gate"):
            exists, weaker = _gate_pending(reader, state)
            if not weaker:
                raise AssayError("the stop gate's configuration is not weaker than its pin: "
                                 "nothing to approve", code="nothing_to_approve", pointer="/gate",
                                 action="Pin it as it is with 'assay gate pin'." if not exists
                                 else "Nothing needs doing.")
            current = read_pin(reader, GATE_TARGET)
            revision = (current.revision if current is not None else 0) + 1
            approval = approval_id(GATE_TARGET, revision)
            writes.append(approval_write(GATE_TARGET, revision, scope, principal, state,
                                         args["reason"], weaker, facts))
            writes.append(reviewed_gate_pin(reader, state, principal, scope, "approved",
                                            approval))
    receipts = store.put_many(_signed(writes, signer, principal))
    return Result({"approvals": [r.to_dict() for r in receipts[0::2]],
                   "pins": [r.to_dict() for r in receipts[1::2]],
                   "signed_by": signer.public_key.keyid if signer is not None else None},
                  ledger_revision=receipts[-1].ledger_revision,
                  next=tuple(f"Check it: 'assay work check -- {i}'" for i in intents))
