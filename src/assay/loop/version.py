"""The loop protocol version assay speaks, and the refusal of older documents.

assay speaks loop protocol 4.0. A 3.x self-evaluation is never mapped onto
4.0 silently: its shape says different things (``success`` was a boolean
where 4.0 has the one ``outcome``; claims lived in ``execution_evidence``
and ``criterion_claims`` where 4.0 has ``execution_report.claims``; a
contract was ``done_when`` text where 4.0 has items bound to commands), so a
guess could turn a 3.x claim into something it never said.
:func:`refuse_legacy` answers such a document with
``protocol_version_mismatch``, naming every 3.x field found, its pointer and
what 4.0 uses instead.

``prompt_requests`` is a 3.x field that assay keeps on purpose (see
docs/loop.md): it is not a marker here.

Imports only the base modules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assay.errors import AssayError, pointer

__all__ = ["LEGACY_FIELDS", "PROTOCOL_VERSION", "legacy_fields", "refuse_legacy"]

PROTOCOL_VERSION = "4.0"

# 3.x field -> what protocol 4.0 uses instead, by where it sits.
LEGACY_FIELDS: dict[tuple[str, ...], str] = {
    ("success",): "outcome (success | partial | failed | blocked)",
    ("agent_stop_reason",): "outcome",
    ("stop_reason",): "outcome with blocker",
    ("execution_evidence",): "execution_report {files_changed, claims}",
    ("contract_transition",): "round_contract.supersedes",
    ("completed_subtasks",): "subgoal_updates [{id, status: done}]",
    ("blocked_subtasks",): "subgoal_updates [{id, status: blocked}]",
    ("canceled_subtasks",): "subgoal_updates [{id, status: abandoned}]",
    ("compression_checkpoint",): "subtask_boundary",
    ("checkpoint_label",): "subtask_boundary_label",
    ("next_action",): "round_contract for the next slice",
    ("drift_clarification",): "nothing (intent drift is not judged in 4.0)",
    ("revised_success_criteria",): "nothing (success criteria are immutable operator acceptance)",
    ("retroactiveClaims",): "execution_report.claims in the round the work is checked",
    ("no_change_reason",): "output_summary",
    ("execution_report", "criterion_claims"): "execution_report.claims with cr- ids",
    ("execution_report", "contract_item_claims"): "execution_report.claims with rci- ids",
    ("execution_report", "tests_reported"): "nothing (assay runs the checks itself)",
    ("execution_report", "progress_estimate"): "nothing (progress is observed, not estimated)",
    ("round_contract", "done_when"): "round_contract.items[].criterion_refs",
    ("round_contract", "verification_plan"): "round_contract.items[].verify_with",
}


def legacy_fields(raw: Mapping[str, Any]) -> list[dict[str, str]]:
    """The 3.x fields of a self-evaluation, in the table's order: ``{field, pointer, use}``."""
    found = []
    for path, use in LEGACY_FIELDS.items():
        node: Any = raw
        for part in path[:-1]:
            node = node.get(part) if isinstance(node, Mapping) else None
        if isinstance(node, Mapping) and path[-1] in node:
            found.append({"field": ".".join(path), "pointer": pointer(*path), "use": use})
    return found


def refuse_legacy(raw: Mapping[str, Any]) -> None:
    """Raise ``protocol_version_mismatch`` when ``raw`` carries any 3.x field."""
    found = legacy_fields(raw)
    if not found:
        return
    names = ", ".join(f["field"] for f in found)
    raise AssayError(
        f"this self-evaluation is in the loop protocol 3.x shape ({names}); assay speaks "
        f"protocol {PROTOCOL_VERSION}, which has no such field"
        + ("s" if len(found) > 1 else ""),
        code="protocol_version_mismatch", pointer=found[0]["pointer"],
        details={"protocol": PROTOCOL_VERSION, "detected": "3.x", "fields": found},
        action=("Resubmit in the 4.0 shape: " + "; ".join(
            f"{f['field']} -> {f['use']}" for f in found)
            + ". 'assay loop schema' prints it; the handle stays valid."))
