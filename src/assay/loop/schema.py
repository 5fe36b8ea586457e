"""The published JSON Schemas of the loop's wire documents (``assay loop schema``).

The strict documents publish their pydantic models' own schemas
(:mod:`assay.loop.models`). The self-evaluation is normalised leniently, so
its schema is built here from the tables the normaliser enforces
(:mod:`assay.loop.submission`): :data:`~assay.loop.submission.FIELDS`,
:data:`~assay.loop.submission.LIMITS`, the text limits and the outcome
vocabularies. A document valid against it normalises without a diagnostic
(within the 256 KiB bound of a whole document, which a schema cannot state);
tests hold each limit to that. Imports its siblings (and so pydantic).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.loop.models import (
    OUTCOMES,
    ExecutionClaim,
    RoundContractProposal,
    SubGoalUpdate,
    SubmissionHandle,
    output_schemas,
)
from assay.loop.submission import (
    BLOCKER_LIMIT,
    FIELDS,
    LABEL_LIMIT,
    LIMITS,
    REFINEMENT_LIMIT,
    SUMMARY_LIMIT,
    WORKER_LIMIT,
    WORKER_OUTCOMES,
    WORKER_TEXT_LIMIT,
)

__all__ = ["schemas", "self_evaluation_schema"]


def schemas() -> dict[str, Any]:
    """The published JSON Schemas, by document name."""
    return {
        "SelfEvaluation": self_evaluation_schema(),
        "SubmissionHandle": SubmissionHandle.model_json_schema(),
        "RoundContractProposal": RoundContractProposal.model_json_schema(),
        "SubGoalUpdate": SubGoalUpdate.model_json_schema(),
        "ExecutionClaim": ExecutionClaim.model_json_schema(),
        **output_schemas(),
    }


def self_evaluation_schema() -> dict[str, Any]:
    """The JSON Schema of a self-evaluation that normalises without a diagnostic."""
    def text(limit: int) -> dict[str, Any]:
        return {"type": "string", "minLength": 1, "maxLength": limit}

    def strings(name: str) -> dict[str, Any]:
        most, chars = LIMITS[name]
        return {"type": "array", "maxItems": most, "uniqueItems": True, "items": text(chars)}

    def closed(properties: dict[str, Any], required: Sequence[str] = ()) -> dict[str, Any]:
        return {"type": "object", "properties": properties, "required": list(required),
                "additionalProperties": False}

    worker = closed({"agentId": text(WORKER_TEXT_LIMIT), "subTask": text(WORKER_TEXT_LIMIT),
                     "resultSummary": text(WORKER_TEXT_LIMIT),
                     "outcome": {"enum": list(WORKER_OUTCOMES)}},
                    ("agentId", "subTask", "resultSummary", "outcome"))
    claim = closed({"id": {"type": "string", "pattern": "^(cr|rci)-[0-9a-f]{8}$"},
                    "outcome": {"enum": ["met", "remaining"]}}, ("id", "outcome"))
    spec: dict[str, Any] = {
        "outcome": {"enum": list(OUTCOMES)},
        "output_summary": text(SUMMARY_LIMIT),
        "constraint_violations": strings("constraint_violations"),
        "should_continue": {"type": "boolean"},
        **{name: strings(name) for name in (
            "discovered_constraints", "retracted_constraints", "emerged_subtasks",
            "wrong_assumptions", "open_questions", "resolved_open_question_ids", "gate_ids")},
        "subgoal_updates": {"type": "array", "items": {"$ref": "#/$defs/SubGoalUpdate"}},
        "subtask_boundary": {"type": "boolean"},
        "subtask_boundary_label": text(LABEL_LIMIT),
        "worker_results": {"type": "array", "maxItems": WORKER_LIMIT, "items": worker},
        "objective_refinement": text(REFINEMENT_LIMIT),
        "blocker": text(BLOCKER_LIMIT),
        "execution_report": closed({"files_changed": strings("files_changed"),
                                    "claims": {"type": "array", "items": claim}}),
        "round_contract": {"$ref": "#/$defs/RoundContractProposal"},
        "prompt_requests": {**closed({key: {**strings(key), "minItems": 1}
                                      for key in ("emphasize", "confusion_points")}),
                            "minProperties": 1},
    }
    properties = {name: spec[name] for name in FIELDS}
    contract = RoundContractProposal.model_json_schema()
    return {
        "title": "SelfEvaluation",
        **closed(properties, ("outcome", "output_summary", "constraint_violations",
                              "should_continue")),
        "$defs": {**contract.pop("$defs", {}), "SubGoalUpdate": SubGoalUpdate.model_json_schema(),
                  "RoundContractProposal": contract},
    }
