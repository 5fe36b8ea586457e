"""Wire documents of the loop protocol, in the reference's field spelling.

The strict documents are pydantic v2 models (``strict``, ``extra="forbid"``,
frozen) whose JSON Schemas :func:`schemas` publishes: the submission handle,
a round contract proposal with its items and ``supersedes`` modifier, a
sub-goal transition and an execution claim. :func:`validate` runs one of them
and turns EVERY pydantic error into one :class:`~assay.errors.AssayError`
with a stable code (the caller's: ``contract_invalid``,
``evaluation_invalid``, ``submission_handle_required``), the RFC 6901 pointer
of the first failing location, and the pydantic error type in
``details.reason`` (``missing``, ``extra_forbidden``, ``string_type``, ...).

The self-evaluation itself is not one strict model: its optional fields are
normalised leniently (:mod:`assay.loop.submission`). :data:`SELF_EVALUATION_SCHEMA`
publishes the normalised shape for clients.

Pydantic is imported here, so only loop code paths load it (operation
modules import this package inside their handlers).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from assay.errors import AssayError, UsageError, pointer

__all__ = [
    "OUTCOMES",
    "SELF_EVALUATION_SCHEMA",
    "SUBGOAL_STATUSES",
    "ContractItemProposal",
    "ContractSupersede",
    "ExecutionClaim",
    "RoundContractProposal",
    "SubGoalUpdate",
    "SubmissionHandle",
    "schemas",
    "validate",
]

OUTCOMES = ("success", "partial", "failed", "blocked")
SUBGOAL_STATUSES = ("pending", "in_progress", "done", "blocked", "abandoned")

_STRICT = ConfigDict(strict=True, extra="forbid", frozen=True)
_ITEM_TEXT = Annotated[str, Field(min_length=1, max_length=500)]
_COMMAND = Annotated[str, Field(min_length=1, max_length=128)]


class SubmissionHandle(BaseModel):
    """The held round attempt a submission answers: session, round, transaction."""

    model_config = _STRICT
    sessionId: Annotated[str, Field(min_length=1, max_length=128)]
    roundId: Annotated[str, Field(min_length=1, max_length=200)]
    transactionId: Annotated[str, Field(pattern=r"^tx-[0-9a-f]{8}$")]


class ContractItemProposal(BaseModel):
    """One acceptance condition: what must be true, checked by declared commands."""

    model_config = _STRICT
    description: _ITEM_TEXT
    criterion_refs: Annotated[list[str], Field(max_length=16)] = []
    verify_with: Annotated[list[_COMMAND], Field(min_length=1, max_length=8)]


class ContractSupersede(BaseModel):
    """Explicit replacement of the active contract, bound to its id."""

    model_config = _STRICT
    contract_id: Annotated[str, Field(pattern=r"^rc-[0-9a-f]{8}$")]
    reason: Annotated[str, Field(max_length=500)] | None = None


class RoundContractProposal(BaseModel):
    """A contract proposal for the NEXT round (``scope`` is normalised leniently before this)."""

    model_config = _STRICT
    work_item: Annotated[str, Field(min_length=1, max_length=500)]
    scope: Annotated[list[str], Field(max_length=100)] = []
    supersedes: ContractSupersede | None = None
    items: Annotated[list[ContractItemProposal], Field(min_length=1, max_length=16)]


class SubGoalUpdate(BaseModel):
    """One explicit transition of an existing sub-goal."""

    model_config = _STRICT
    id: Annotated[str, Field(pattern=r"^sg-[0-9a-f]{8}$")]
    status: Literal["pending", "in_progress", "done", "blocked", "abandoned"]


class ExecutionClaim(BaseModel):
    """One strict claim about an active contract item (``rci-``)."""

    model_config = _STRICT
    id: Annotated[str, Field(pattern=r"^rci-[0-9a-f]{8}$")]
    outcome: Literal["met", "remaining"]


def validate(model: type[BaseModel], value: Any, *, code: str, base: tuple[str | int, ...],
             message: str, action: str) -> Any:
    """Validate ``value`` against ``model``; map the first pydantic error to ``code`` + pointer.

    ``base`` is the pointer of ``value`` inside the submitted document. All
    errors are listed in ``details.errors`` (pointer and reason each).
    """
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        errors = []
        for err in exc.errors(include_url=False):
            loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function")))
            errors.append({"pointer": pointer(*base, *loc), "reason": err["type"],
                           "detail": err["msg"]})
        first = errors[0]
        cls = UsageError if code == "submission_handle_required" else AssayError
        raise cls(f"{message}: {first['detail']} at {first['pointer'] or '/'}", code=code,
                  pointer=first["pointer"], action=action,
                  details={"reason": first["reason"], "errors": errors[:20]}) from None


def schemas() -> dict[str, Any]:
    """The published JSON Schemas, by document name."""
    return {
        "SelfEvaluation": SELF_EVALUATION_SCHEMA,
        "SubmissionHandle": SubmissionHandle.model_json_schema(),
        "RoundContractProposal": RoundContractProposal.model_json_schema(),
        "SubGoalUpdate": SubGoalUpdate.model_json_schema(),
        "ExecutionClaim": ExecutionClaim.model_json_schema(),
    }


_STRINGS = {"type": "array", "items": {"type": "string"}}

# The normalised shape the governor stores (and what a careful client sends).
SELF_EVALUATION_SCHEMA: dict[str, Any] = {
    "title": "SelfEvaluation",
    "type": "object",
    "required": ["outcome", "output_summary", "constraint_violations", "should_continue"],
    "properties": {
        "outcome": {"enum": list(OUTCOMES)},
        "output_summary": {"type": "string", "minLength": 1, "maxLength": 4000},
        "constraint_violations": _STRINGS,
        "should_continue": {"type": "boolean"},
        "discovered_constraints": _STRINGS,
        "retracted_constraints": _STRINGS,
        "emerged_subtasks": _STRINGS,
        "subgoal_updates": {"type": "array", "items": {"$ref": "#/$defs/SubGoalUpdate"}},
        "wrong_assumptions": _STRINGS,
        "open_questions": {"type": "array", "maxItems": 3,
                           "items": {"type": "string", "maxLength": 300}},
        "resolved_open_question_ids": _STRINGS,
        "subtask_boundary": {"type": "boolean"},
        "subtask_boundary_label": {"type": "string", "maxLength": 200},
        "worker_results": {"type": "array", "items": {
            "type": "object",
            "properties": {"agentId": {"type": "string"}, "subTask": {"type": "string"},
                           "resultSummary": {"type": "string"},
                           "outcome": {"enum": ["success", "partial", "failed"]}},
            "required": ["agentId", "subTask", "resultSummary", "outcome"]}},
        "objective_refinement": {"type": "string", "minLength": 1, "maxLength": 1000},
        "blocker": {"type": "string", "minLength": 1, "maxLength": 500},
        "execution_report": {"type": "object", "properties": {
            "files_changed": _STRINGS,
            "claims": {"type": "array", "items": {
                "type": "object",
                "properties": {"id": {"type": "string", "pattern": "^(cr|rci)-[0-9a-f]{8}$"},
                               "outcome": {"enum": ["met", "remaining"]}},
                "required": ["id", "outcome"]}}}},
        "gate_ids": _STRINGS,
        "round_contract": {"$ref": "#/$defs/RoundContractProposal"},
    },
    "$defs": {"SubGoalUpdate": {"type": "object"}, "RoundContractProposal": {"type": "object"}},
}
