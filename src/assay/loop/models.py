"""Wire documents of the loop protocol, in the reference's field spelling.

The strict documents are pydantic v2 models (``strict``, ``extra="forbid"``,
frozen) whose JSON Schemas :mod:`assay.loop.schema` publishes: the submission handle,
a round contract proposal with its items and ``supersedes`` modifier, a
sub-goal transition and an execution claim. :func:`validate` runs one of them
and turns EVERY pydantic error into one :class:`~assay.errors.AssayError`
with a stable code (the caller's: ``contract_invalid``,
``evaluation_invalid``, ``submission_handle_required``), the RFC 6901 pointer
of the first failing location, and the pydantic error type in
``details.reason`` (``missing``, ``extra_forbidden``, ``string_type``, ...).

The self-evaluation itself is not one strict model: its optional fields are
normalised leniently (:mod:`assay.loop.submission`); its published schema is
built from that module's tables.

Pydantic is imported here, so only loop code paths load it (operation
modules import this package inside their handlers).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from assay.errors import AssayError, UsageError, pointer

__all__ = [
    "GATE_EFFECTS",
    "OUTCOMES",
    "SUBGOAL_STATUSES",
    "CheckpointRef",
    "ContractItemProposal",
    "ContractSupersede",
    "EvidencePosture",
    "ExecutionClaim",
    "GateDescriptor",
    "LoopTerminalEvent",
    "OperatorAcceptance",
    "PromptArtifact",
    "PromptCoverage",
    "PromptFreshness",
    "PromptWorkingMemoryProjection",
    "RecoveryDirective",
    "RecoveryTarget",
    "RoundContractProposal",
    "SubGoalUpdate",
    "SubmissionDiagnostic",
    "SubmissionGuidance",
    "SubmissionHandle",
    "SubmissionReceipt",
    "output_schemas",
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


GATE_EFFECTS = ("workspace_write", "production", "credentials", "data_migration", "public_api",
                "publish", "payment", "external_communication", "network")


class GateDescriptor(BaseModel):
    """A structured high-risk action for ``loop gate-check`` (what, where, effects, undo, who)."""

    model_config = _STRICT
    description: Annotated[str, Field(min_length=1, max_length=1000)]
    scope: Annotated[list[Annotated[str, Field(max_length=500)]], Field(max_length=20)] = []
    effects: Annotated[list[Literal["workspace_write", "production", "credentials",
                                    "data_migration", "public_api", "publish", "payment",
                                    "external_communication", "network"]],
                       Field(max_length=9)] = []
    reversibility: Literal["reversible", "recoverable", "irreversible", "unknown"] = "unknown"
    authorization: Literal["agent_allowed", "user_required", "unknown"] = "unknown"


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


# ------------------------------------------------------------------ output documents
# What the governor returns. Published so clients can rely on the shapes; the
# tests validate real responses against them (extra="forbid": no drift).

_Status = Literal["verified", "insufficient", "contradicted", "unknown", "not_applicable"]
_Obs = Literal["observed", "passed", "failed", "timeout", "unavailable", "error", "aborted"]
_ItemStatus = Literal["pending", "insufficient", "contradicted", "verified"]
_Severity = Literal["info", "warn", "error"]
_Stop = Literal["completed", "failed", "blocked", "cancelled", "max_rounds", "stalled",
                "enforcement_terminated"]


class OperatorAcceptance(BaseModel):
    """The immutable operator surface of a loop."""

    model_config = _STRICT
    task: str
    success_criteria: list[str]
    hard_constraints: list[str]


class SubmissionDiagnostic(BaseModel):
    """One normalisation correction."""

    model_config = _STRICT
    code: str
    pointer: str
    detail: str


class _PostureWorkspace(BaseModel):
    model_config = _STRICT
    status: Literal["observed", "unknown", "not_applicable"]
    changedPathCount: int


class _PostureFiles(BaseModel):
    model_config = _STRICT
    reconciliation: Literal["match", "mismatch", "unknown", "not_applicable"]
    reported: int
    observed: int


class _PostureProvider(BaseModel):
    model_config = _STRICT
    providerId: str
    kind: Literal["git", "custom"]
    status: _Obs


class _PostureCommand(BaseModel):
    model_config = _STRICT
    commandId: str
    status: _Obs
    required: bool


class _PostureItem(BaseModel):
    model_config = _STRICT
    id: str
    status: _ItemStatus
    criterionRefs: list[str]
    reasons: list[str]


class _PostureContract(BaseModel):
    model_config = _STRICT
    id: str
    closure: Literal["open", "verified", "blocked", "superseded"]
    items: list[_PostureItem]
    verifiedCount: int
    insufficientCount: int
    contradictedCount: int
    pendingCount: int


class _PostureFinding(BaseModel):
    model_config = _STRICT
    id: Annotated[str, Field(pattern=r"^f-[0-9a-f]{8}$")]
    check: str
    severity: _Severity
    ref: str | None = None


class _PostureOmitted(BaseModel):
    model_config = _STRICT
    providers: int
    commands: int
    contractItems: int
    findings: int


class EvidencePosture(BaseModel):
    """The one evidence posture of a round (shared derivation in assay.evidence.posture)."""

    model_config = _STRICT
    round: int
    kind: Literal["evaluation", "rollback"]
    status: _Status
    machineBackedSuccess: bool
    verificationConfigured: bool
    workspace: _PostureWorkspace
    files: _PostureFiles | None
    providers: list[_PostureProvider]
    commands: list[_PostureCommand]
    contract: _PostureContract | None
    findings: list[_PostureFinding]
    omitted: _PostureOmitted


class _Check(BaseModel):
    model_config = _STRICT
    field: str
    check: str
    severity: _Severity
    detail: str
    ref: str | None = None


class _GuidanceItem(BaseModel):
    model_config = _STRICT
    id: str
    description: str
    verify_with: list[str]
    criterion_refs: list[str]
    status: _ItemStatus


class _GuidanceContract(BaseModel):
    model_config = _STRICT
    id: str
    work_item: str
    scope: list[str]
    declared_at_round: int
    items: list[_GuidanceItem]


class _ContractRequirement(BaseModel):
    model_config = _STRICT
    required_on_continue: bool
    successor_required_if_closed: bool
    reason: Literal["no_active_contract", "active_contract_continues", "active_contract_closed",
                    "no_contract_capability", "no_successor_round"]
    active_contract_id: str | None


class _IdText(BaseModel):
    model_config = _STRICT
    id: str
    text: str


class _GuidanceSubGoal(BaseModel):
    model_config = _STRICT
    id: str
    description: str
    status: Literal["pending", "in_progress", "done", "blocked", "abandoned"]


class _GuidanceCriterion(BaseModel):
    model_config = _STRICT
    id: str
    text: str
    status: Literal["unknown", "claimed", "remaining", "insufficient", "contradicted", "verified"]


class _GuidanceRecovery(BaseModel):
    model_config = _STRICT
    pending: bool
    redo_round: int
    checkpoint_id: str
    restore_verified: bool
    origin: Literal["agent", "machine"]
    reason: str


class _GuidancePrompt(BaseModel):
    model_config = _STRICT
    level: Literal["l0", "l1", "l2"] | None
    dropped_sections: list[str]
    protected_overflow: bool


class SubmissionGuidance(BaseModel):
    """The live guidance returned with a held round (derived, never a fact of its own)."""

    model_config = _STRICT
    active_contract: _GuidanceContract | None
    contract_commands: list[str]
    contract_verification_available: bool
    contract_requirement: _ContractRequirement
    subgoals: list[_GuidanceSubGoal]
    criteria: list[_GuidanceCriterion]
    open_questions: list[_IdText]
    recovery: _GuidanceRecovery | None
    prompt: _GuidancePrompt
    checks: list[_Check]


class _ReceiptItem(BaseModel):
    model_config = _STRICT
    item_id: str
    status: _ItemStatus


class _ReceiptCriterion(BaseModel):
    model_config = _STRICT
    id: str
    status: Literal["unknown", "claimed", "remaining", "insufficient", "contradicted", "verified"]
    source: Literal["agent", "machine"] | None


class _Verification(BaseModel):
    model_config = _STRICT
    evidence_posture: EvidencePosture
    checks: list[_Check]
    contract_items: list[_ReceiptItem]
    criteria: list[_ReceiptCriterion]


class _Report(BaseModel):
    model_config = _STRICT
    path: str
    handling: Literal["accepted", "normalized", "dropped"]


class _ContractChange(BaseModel):
    model_config = _STRICT
    before_id: str | None
    after_id: str | None
    activated: bool
    closed: bool
    closure: Literal["open", "verified", "blocked", "superseded"] | None
    superseded: bool | None = None
    redirect_reason: str | None = None


class _SubGoalChange(BaseModel):
    model_config = _STRICT
    id: str
    description: str


class _SubGoalTransition(BaseModel):
    model_config = _STRICT
    id: str
    to: str
    from_: str = Field(alias="from")


class _Boundary(BaseModel):
    model_config = _STRICT
    label: str
    round: int


class _Rollback(BaseModel):
    model_config = _STRICT
    redo_round: int
    target_checkpoint_id: str
    preserved_discoveries: list[str]
    wrong_assumptions: list[str]
    observed_skipped_files: list[str]
    reported_skipped_files: list[str]
    abandoned_rounds: list[int]
    trigger_finding_ids: list[str | None]
    origin: Literal["agent", "machine"] | None = None
    reason: str | None = None


class _RecoveryCheckpoint(BaseModel):
    model_config = _STRICT
    checkpoint_id: str
    redo_round: int
    origin: Literal["agent", "machine"]
    reason: str
    restore_verified: bool


class _Changes(BaseModel):
    model_config = _STRICT
    contract: _ContractChange
    subgoals_created: list[_SubGoalChange]
    subgoals_updated: list[_SubGoalTransition]
    constraints_declared: list[str]
    constraints_retracted: list[str]
    constraints_retraction: Literal["observed", "not_observed"]
    constraints_not_retracted: list[str]
    constraints_activation: Literal["observed", "not_observed"]
    constraints_active_after: list[str] | None
    constraints_not_expanded: list[str]
    questions_opened: list[_IdText]
    questions_resolved: list[str]
    subtask_boundary: _Boundary | None
    rollback: _Rollback | None


class _ReceiptPrompt(BaseModel):
    model_config = _STRICT
    level: Literal["l0", "l1", "l2"]
    dropped_sections: list[str]
    context_mode: Literal["fresh_invocation", "same_round_retry"]
    context_reason: str
    current_user_instruction: str | None = None


class _LadderStep(BaseModel):
    model_config = _STRICT
    count: int
    terminate_at: int
    consequence: Literal["reject", "terminate"]
    next: Literal["reject", "terminate"] | None


class _RejectionCheck(BaseModel):
    model_config = _STRICT
    check: Literal["completion_contract_open", "completion_contradicted", "contract_required",
                   "recurring_violation", "gate_unknown", "gate_unapproved", "gate_denied"]
    ref: str | None
    detail: str
    ladder: _LadderStep


class _Rejection(BaseModel):
    model_config = _STRICT
    checks: list[_RejectionCheck]
    consecutive: int
    record: str


class SubmissionReceipt(BaseModel):
    """What one submission did: committed (or rejected), verification, changes, diagnostics."""

    model_config = _STRICT
    roundId: str
    round: int
    attempt: int
    transactionId: str
    accepted: bool
    record: Literal["committed", "rollback_directive", "none"]
    entered_history: bool
    agent_success_claim: bool
    agent_outcome: Literal["success", "partial", "failed", "blocked"] | None
    objective_refinement: str | None
    loop_stop_reason: _Stop | None
    recovery_checkpoint: _RecoveryCheckpoint | None = None
    reports: list[_Report] = []
    changes: _Changes | None = None
    rejection: _Rejection | None = None
    verification: _Verification
    prompt: _ReceiptPrompt | None = None
    diagnostics: list[SubmissionDiagnostic]


class LoopTerminalEvent(BaseModel):
    """Emitted when a loop stops."""

    model_config = _STRICT
    loopId: str
    task: str
    completed: bool
    machineBackedSuccess: bool | None
    evidencePosture: _Status | None
    stopReason: _Stop
    stopDetail: str | None = None
    roundsCompleted: int
    roundCursor: int
    committedRounds: int
    machineBackedSuccessTrajectory: list[bool]


class _CoverageEntry(BaseModel):
    model_config = _STRICT
    id: str
    kind: Literal["constraint", "criterion", "contract", "contract_item", "subgoal", "finding",
                  "recovery"]


class _Omitted(BaseModel):
    model_config = _STRICT
    id: str
    reason: Literal["defect"]


class PromptCoverage(BaseModel):
    """ID-level proof that every active normative id was rendered."""

    model_config = _STRICT
    active: list[_CoverageEntry]
    rendered: list[str]
    omitted: list[_Omitted]
    complete: bool


class PromptFreshness(BaseModel):
    """What the last committed round changed: the density input."""

    model_config = _STRICT
    machineProgress: Literal["changed", "unchanged", "unknown", "not_applicable"]
    providers: list[str]
    machineActivity: bool
    declaredEvolution: bool
    observableNewInformation: bool
    reasons: list[Literal["progress_changed", "progress_unchanged", "progress_unknown",
                          "no_progress_provider", "after_command_activity",
                          "declared_evolution", "no_observable_activity",
                          "no_previous_committed_round"]]


class _MemoryCounts(BaseModel):
    model_config = _STRICT
    reports: int
    assumptions: int
    openQuestions: int
    recoveries: int
    redirects: int


class _SourceCounts(_MemoryCounts):
    windowRounds: int


class _PreviousReport(BaseModel):
    model_config = _STRICT
    round: int
    sourceChars: int
    renderedChars: int
    truncated: bool


class PromptWorkingMemoryProjection(BaseModel):
    """What the prompt rendered from bounded working memory, and what it left out."""

    model_config = _STRICT
    rendered: bool
    reportRounds: list[int]
    counts: _MemoryCounts
    sourceCounts: _SourceCounts
    omittedCounts: _MemoryCounts
    questionIds: list[str]
    previousReport: _PreviousReport | None
    renderedChars: int
    truncated: bool


class PromptArtifact(BaseModel):
    """The exact prompt delivered for one round attempt (stored with it, replayable)."""

    model_config = _STRICT
    schemaVersion: Literal[3]
    roundId: str
    round: int
    attempt: int
    level: Literal["l0", "l1", "l2"]
    levelReason: str
    contextMode: Literal["fresh_invocation", "same_round_retry"]
    contextReason: Literal["first_round", "next_round", "recovery_redo", "enforcement_retry",
                           "rejection_escalation", "invocation_recovery"]
    renderedPrompt: str
    promptHash: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
    stateHash: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
    budget: int
    renderedChars: int
    coverage: PromptCoverage
    warnings: list[str]
    droppedSections: list[str]
    protectedOverflow: bool
    freshness: PromptFreshness
    workingMemory: PromptWorkingMemoryProjection | None = None
    currentUserInstruction: str | None


class CheckpointRef(BaseModel):
    """A round's reference to a checkpoint manifest (the authority for restoring it)."""

    model_config = _STRICT
    checkpointId: Annotated[str, Field(pattern=r"^ck-[0-9a-f]{8}$")]
    contentHash: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
    role: Literal["before", "mid", "abandoned"]
    round: int
    roundId: str
    transactionId: str | None
    branchId: str
    redoRound: int
    createdAt: str


class RecoveryTarget(BaseModel):
    """The checkpoint a directive restores, and the first round of the child branch."""

    model_config = _STRICT
    checkpoint_id: str
    content_hash: str
    role: Literal["before", "mid"]
    round: int
    round_id: str
    transaction_id: str | None
    redo_round: int


class RecoveryDirective(BaseModel):
    """A recovery directive as committed (an event, not a round)."""

    model_config = _STRICT
    type: Literal["recovery"]
    schema_: Literal["assay.loop.recovery.v1"] = Field(alias="schema")
    loopId: str
    directiveId: Annotated[str, Field(pattern=r"^rv-[0-9a-f]{8}$")]
    origin: Literal["agent", "machine"]
    reason: str
    trigger_rule: str | None = None
    target: RecoveryTarget
    skipped_files: list[str]
    observed_skipped_files: list[str]
    reported_skipped_files: list[str]
    abandoned_rounds: list[int]
    skipped_discoveries: list[str]
    failed_rounds: list[int]
    trigger_findings: list[dict[str, Any]]
    approaches: list[str]
    wrong_assumptions: list[str]
    transaction_id: str
    parentBranchId: str
    heldRound: int
    heldAttempt: int
    abandonedBoundary: dict[str, str]
    evidencePosture: EvidencePosture
    status: Literal["pending", "verified", "restore_failed"]
    restore: dict[str, Any] | None
    restoredBoundary: dict[str, Any] | None = None
    attempts: int
    createdAt: str


def output_schemas() -> dict[str, Any]:
    """JSON Schemas of the documents the governor returns."""
    return {m.__name__: m.model_json_schema(by_alias=True) for m in (
        OperatorAcceptance, SubmissionGuidance, SubmissionReceipt, EvidencePosture,
        LoopTerminalEvent, PromptArtifact, CheckpointRef, RecoveryDirective)}
