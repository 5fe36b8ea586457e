"""``work prepare-capture``: a read-only draft for recording an intent in two guarded saves.

The draft never writes. It returns the record data for two ordinary ``put``
calls, each guarded by the revision the draft was prepared against:

1. save the intent itself (``expect_revision`` 0 for a new record, or the
   current revision, keeping any recorded acceptance, tasks and continuation);
2. associate requirements with existing records (``continuation.context``),
   guarded by the revision step 1 creates.

Both drafts are validated against the intent contract before they are
returned; a draft that would be rejected is an ``invalid_intent_contract``
error naming the field, and nothing is suggested. Imports the ledger
contract, the base modules and its sibling modules.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from assay.errors import UsageError, pointer
from assay.ids import validate_record_id
from assay.intent.contract import parse_intent_data
from assay.intent.snapshot import ProjectBinding, is_readable
from assay.ledger.store import Reader

__all__ = ["parse_requirement_spec", "prepare_capture"]


def parse_requirement_spec(spec: str, index: int) -> dict[str, Any]:
    """``ID|TEXT|ACCEPTANCE`` or ``ID|TEXT|ACCEPTANCE|PARENT_ID`` as a requirement object."""
    parts = [p.strip() for p in spec.split("|")]
    if len(parts) not in (3, 4) or not all(parts):
        raise UsageError(
            f"--requirement takes ID|TEXT|ACCEPTANCE[|PARENT_ID], not {spec!r}",
            code="invalid_argument", pointer=pointer("requirement", index))
    out = {"id": parts[0], "text": parts[1], "acceptance": parts[2]}
    if len(parts) == 4:
        out["parent_id"] = parts[3]
    return out


def _associations(values: Sequence[str]) -> list[tuple[str, str]]:
    out = []
    for index, value in enumerate(values):
        rid, sep, target = value.partition("=")
        if not sep or not rid.strip():
            raise UsageError(f"--associate takes REQUIREMENT_ID=RECORD_ID, not {value!r}",
                             code="invalid_argument", pointer=pointer("associate", index))
        validate_record_id(target, field=pointer("associate", index))
        out.append((rid.strip(), target))
    return out


def prepare_capture(
    reader: Reader,
    binding: ProjectBinding,
    record_id: str,
    *,
    intent: dict[str, Any],
    associate: Sequence[str] = (),
    mission: Sequence[str] = (),
    next_action: str | None = None,
) -> dict[str, Any]:
    """The two-save draft for ``record_id`` (see the module docstring)."""
    validate_record_id(record_id, field="/id")
    if not record_id.startswith("knowledge:"):
        raise UsageError("an intent lives in a knowledge record (knowledge:NAME)",
                         code="invalid_argument", pointer="/id")
    current = reader.get(record_id)
    if current is not None and not is_readable(current, binding.principal):
        current = None
    base: dict[str, Any] = {}
    if current is not None and current.status == "current" and isinstance(current.data, dict):
        base = copy.deepcopy(current.data)
    expect = current.revision if current is not None else 0
    first = {**base, "intent": intent}
    doc = parse_intent_data(first)
    links = []
    for rid, target in _associations(associate):
        links.append((rid, target))
    for index, target in enumerate(mission):
        validate_record_id(target, field=pointer("mission", index))
    saves = [{
        "step": 1,
        "purpose": "save the intent" if current is None else "update the intent",
        "id": record_id,
        "expect_revision": expect,
        "data": first,
        "intent_sha256": doc.intent_sha256,
        "read_args": ["put", "--expect-revision", str(expect), "--data-file", "STEP1.json",
                      "--", record_id],
    }]
    if links or mission or next_action:
        second = copy.deepcopy(first)
        by_requirement: dict[str, list[str]] = {}
        for rid, target in links:
            by_requirement.setdefault(rid, [])
            if target not in by_requirement[rid]:
                by_requirement[rid].append(target)
        previous = second.get("continuation") or {}
        active = previous.get("active_requirement_ids") or [
            r.id for r in doc.requirements if r.id in by_requirement
        ] or [doc.requirements[0].id]
        second["continuation"] = {
            "active_requirement_ids": active,
            "next_action": next_action or previous.get("next_action")
            or f"Work on {', '.join(active)}",
            "context": {
                "version": 1,
                "mission_record_ids": list(dict.fromkeys(mission)),
                "requirements": [{"id": rid, "record_ids": ids}
                                 for rid, ids in by_requirement.items()],
            },
        }
        parse_intent_data(second)
        saves.append({
            "step": 2,
            "purpose": "associate requirements with records",
            "id": record_id,
            "expect_revision": expect + 1,
            "data": second,
            "intent_sha256": doc.intent_sha256,
            "read_args": ["put", "--expect-revision", str(expect + 1), "--data-file",
                          "STEP2.json", "--", record_id],
        })
    missing = []
    targets = [t for _, t in links] + list(mission)
    found = reader.get_many(list(dict.fromkeys(targets))) if targets else {}
    for target in dict.fromkeys(targets):
        record = found.get(target)
        if record is None or not is_readable(record, binding.principal):
            missing.append(target)
    return {
        "id": record_id,
        "current_revision": expect,
        "ledger_revision": reader.ledger_revision,
        "saves": saves,
        "missing_record_ids": missing,
        "write_basis": {"epoch": reader.epoch, "ledger_revision": reader.ledger_revision,
                        "records": {record_id: expect}},
        "notice": ("A draft only: nothing was written. Save step 1, then step 2 with the "
                   "revision step 1 returned; a conflict means someone else wrote first."),
    }
