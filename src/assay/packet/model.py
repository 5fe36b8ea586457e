"""Packet vocabulary and the immutable values the validation boundary produces.

Owns the closed vocabularies both layouts share (statuses, profiles, modes,
states, relations, authorities), the approval fingerprint of an execution
envelope, the one :class:`Issue` type of every finding, and
:class:`ValidatedRun`, the one deeply immutable graph that assurance and
rendering read. Every value here is a frozen, slotted dataclass holding
tuples and strings only. Imports only :mod:`assay.canonical`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assay.canonical import fingerprint

__all__ = [
    "AUTHORITIES",
    "CLAIM_STATES",
    "EVIDENCE_STATES",
    "GAP_KINDS",
    "KINDS",
    "PROFILES",
    "PROFILE_PASSES",
    "RELATIONS",
    "REVIEW_KINDS",
    "RUN_STATUSES",
    "WAVE_MODES",
    "Artifact",
    "Claim",
    "Evidence",
    "Gap",
    "Issue",
    "Link",
    "PassOutcome",
    "Review",
    "Source",
    "ValidatedRun",
    "Validation",
    "approval_fingerprint",
    "kind_name",
]

# Assay's own layout: kind suffix (after "assay.") -> schemaVersion. A manifest
# of kind recon.packet-manifest is the recon tool's layout (assay.packet.recon).
KINDS = {
    "packet-manifest": 2,
    "claim-ledger": 1,
    "raw-dossier": 1,
    "review-brief": 1,
    "review-result": 1,
    "run-failure": 1,
    "quarantine-record": 1,
}
KIND_PREFIX = "assay."

RUN_STATUSES = ("preparing", "awaiting-approval", "running", "complete", "partial", "failed")
PROFILES = ("quick", "standard", "thorough")
CLAIM_STATES = ("provisional", "supported", "verified", "contested", "unresolved", "unsupported")
RELATIONS = ("supports", "contradicts", "qualifies", "context")
AUTHORITIES = ("provider-enforced", "contract-enforced")
EVIDENCE_STATES = ("exact", "redacted-exact", "stale", "invalid")
ELIGIBLE_EVIDENCE = frozenset({"exact", "redacted-exact"})
SOURCE_STATES = ("pinned", "unpinned", "stale", "invalid", "unavailable")
GAP_KINDS = (
    "PASS_FAILED",
    "PASS_OMITTED",
    "REVIEW_DISPOSITION_OMITTED",
    "COVERAGE_GAP",
    "SOURCE_UNAVAILABLE",
    "SOURCE_STALE",
    "SOURCE_INVALID",
    "QUESTION_UNANSWERED",
)
WAVE_MODES = (
    "map",
    "gather",
    "compile",
    "semantic-verification",
    "adversarial",
    "coverage",
    "reconciliation",
    "redundant-gather",
    "redundant-verification",
    "contradiction-resolution",
)
# Assay's task classes, then the recon tool's durable order; the execution
# envelope is fingerprinted as written, so a recon envelope keeps its own names.
TASK_CLASSES = ("retrieval", "extraction", "analysis", "judgment", "synthesis",
                "mechanical-recon", "intelligent-recon", "default-implementation",
                "hard-reasoning", "consequential")
REVIEW_KINDS = (
    "semantic",
    "adversarial",
    "coverage",
    "reconciliation",
    "redundant-verification",
    "contradiction-resolution",
)
# Review result kind -> the wave mode whose lanes may write it.
REVIEW_WAVE = {
    "semantic": "semantic-verification",
    "adversarial": "adversarial",
    "coverage": "coverage",
    "reconciliation": "reconciliation",
    "redundant-verification": "redundant-verification",
    "contradiction-resolution": "contradiction-resolution",
}
PROFILE_PASSES = {
    "quick": ("map", "gather"),
    "standard": ("map", "gather", "semantic-verification", "adversarial", "coverage",
                 "reconciliation"),
    "thorough": ("map", "gather", "semantic-verification", "adversarial", "coverage",
                 "reconciliation", "redundant-gather", "redundant-verification",
                 "contradiction-resolution"),
}
# Caps per requested profile: (evidence lanes, worker lanes, max concurrency).
CAPS = {"quick": (4, 6, 4), "standard": (10, 12, 6), "thorough": (20, 22, 8)}
# Claim state machine: from -> allowed targets. ``None`` is genesis (used once).
TRANSITIONS: dict[str | None, frozenset[str]] = {
    None: frozenset({"provisional"}),
    "provisional": frozenset({"supported", "contested", "unresolved", "unsupported"}),
    "supported": frozenset({"verified", "contested", "unresolved", "unsupported"}),
    "verified": frozenset({"supported", "contested", "unresolved"}),
    "contested": frozenset({"supported", "unresolved", "unsupported"}),
    "unresolved": frozenset({"supported", "contested", "unsupported"}),
    "unsupported": frozenset(),
}


def approval_fingerprint(execution: dict[str, Any]) -> str:
    """The fingerprint an approval binds: of the execution envelope without ``approval``."""
    return fingerprint({k: v for k, v in execution.items() if k != "approval"})


def kind_name(kind: Any) -> str | None:
    """The suffix of an ``assay.`` kind (``claim-ledger``), or None if it is no such kind."""
    if isinstance(kind, str) and kind.startswith(KIND_PREFIX) and kind[len(KIND_PREFIX):] in KINDS:
        return kind[len(KIND_PREFIX):]
    return None


@dataclass(frozen=True, slots=True, order=True)
class Issue:
    """One finding: code, packet-relative file, JSON pointer, sentence.

    ``where`` is the recon tool's own location for a finding in a recon-layout
    packet (``lane:ID``, ``pass:MODE``, an artifact id, a ``$``-path), so its
    users read the same diagnostics; empty for assay's own layout. An
    ``advisory`` finding never makes a packet invalid: it is what assay's own,
    stricter rules would add to a recon-layout packet.
    """

    code: str
    path: str
    pointer: str
    message: str
    where: str = ""
    advisory: bool = False

    def to_dict(self) -> dict[str, str]:
        out = {"code": self.code, "path": self.path, "pointer": self.pointer,
               "message": self.message}
        if self.where:
            out["where"] = self.where
        return out


@dataclass(frozen=True, slots=True)
class Artifact:
    """A hashed same-run artifact: where it is, its digest, and its kind suffix."""

    path: str
    digest: str
    kind: str


@dataclass(frozen=True, slots=True)
class Source:
    source_id: str
    type: str
    title: str
    state: str
    locator: str


@dataclass(frozen=True, slots=True)
class Evidence:
    evidence_id: str
    source_id: str
    excerpt: str
    state: str
    redacted: bool

    @property
    def eligible(self) -> bool:
        return self.state in ELIGIBLE_EVIDENCE


@dataclass(frozen=True, slots=True)
class Link:
    evidence_id: str
    relation: str


@dataclass(frozen=True, slots=True)
class Claim:
    """A claim with its links and the assurance the validator derived for it."""

    claim_id: str
    statement: str
    state: str
    links: tuple[Link, ...]
    qualifications: tuple[str, ...]
    assurance: str
    reviews: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Gap:
    gap_id: str
    kind: str
    material: bool
    mode: str | None
    description: str
    claim_ids: tuple[str, ...] = ()
    source_ids: tuple[str, ...] = ()
    finding_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PassOutcome:
    """Whether one pass of the profile table has a complete typed artifact."""

    mode: str
    complete: bool
    artifacts: tuple[str, ...]
    gap_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Review:
    path: str
    kind: str
    lane: str
    complete: bool
    brief_digest: str | None


@dataclass(frozen=True, slots=True)
class ValidatedRun:
    """The compiled packet: everything rendering and assurance may read.

    ``identity`` is the fingerprint of the two canonical files' digests; since
    the manifest binds every other artifact by digest, any changed byte
    either invalidates the packet or changes this identity.
    """

    identity: str
    run_id: str
    objective: str
    questions: tuple[str, ...]
    status: str
    requested: str
    achieved: str | None
    publication: str | None
    ledger_revision: int
    synthesis: str
    unresolved_questions: tuple[str, ...]
    sources: tuple[Source, ...]
    evidence: tuple[Evidence, ...]
    claims: tuple[Claim, ...]
    gaps: tuple[Gap, ...]
    passes: tuple[PassOutcome, ...]
    artifacts: tuple[Artifact, ...]
    reviews: tuple[Review, ...]
    approved_at: str | None
    execution_fingerprint: str | None
    # (packet path, sha256 digest) of every file whose bytes the run rests on.
    byte_digests: tuple[tuple[str, str], ...] = ()

    @property
    def publishable(self) -> bool:
        return self.publication is not None

    @property
    def material_gaps(self) -> tuple[Gap, ...]:
        return tuple(g for g in self.gaps if g.material)

    def summary(self) -> dict[str, Any]:
        """The JSON summary ``packet validate`` prints for a valid packet."""
        states: dict[str, int] = {}
        for claim in self.claims:
            states[claim.state] = states.get(claim.state, 0) + 1
        evidence_states: dict[str, int] = {}
        for record in self.evidence:
            evidence_states[record.state] = evidence_states.get(record.state, 0) + 1
        return {
            "identity": self.identity,
            "run_id": self.run_id,
            "status": self.status,
            "requested_profile": self.requested,
            "achieved_profile": self.achieved,
            "publication": self.publication,
            "publishable": self.publishable,
            "ledger_revision": self.ledger_revision,
            "claims": len(self.claims),
            "claim_states": dict(sorted(states.items())),
            "evidence": len(self.evidence),
            "evidence_states": dict(sorted(evidence_states.items())),
            "artifacts": len(self.artifacts),
            "material_gaps": [g.gap_id for g in self.material_gaps],
            "passes": [{"mode": p.mode, "complete": p.complete} for p in self.passes],
        }


@dataclass(frozen=True, slots=True)
class Validation:
    """The outcome of the boundary: a run, or every issue found (never both).

    ``advisories`` are findings that do not invalidate the packet: for a
    recon-layout packet, what assay's own stricter rules would add.
    ``achieved_profile`` is the profile a recon-layout packet's complete
    artifacts achieve, derived even when the packet is invalid.
    """

    issues: tuple[Issue, ...] = field(default_factory=tuple)
    run: ValidatedRun | None = None
    advisories: tuple[Issue, ...] = field(default_factory=tuple)
    achieved_profile: str | None = None
    layout: str = "assay"

    @property
    def valid(self) -> bool:
        return self.run is not None and not self.issues
