"""Worker and review artifacts: dossiers, review briefs, review results.

Owns the closed shapes of ``raw-dossier``, ``review-brief`` and
``review-result`` (schemaVersion 1 each, kinds ``assay.*``) and
the selective-blind brief projection: :func:`project` decides, per review
mode, exactly which parts of the prior ledger and manifest a reviewer may see.
The validator recomputes every brief's projection with the same function, so
a brief that shows more (or other) than its mode allows is
``REVIEW_BRIEF_MISMATCH``. Imports the base modules and packet shape checks.
"""

from __future__ import annotations

import re
from typing import Any

from assay.packet.assay.ledger_file import EVIDENCE_SHAPE, TRANSITION_SHAPE
from assay.packet.assay.manifest import ID, ID_LIST, REF, TEXT, TEXT_LIST
from assay.packet.model import RELATIONS
from assay.packet.shape import (
    ANY_OBJECT,
    BOOL,
    INSTANT,
    Check,
    array,
    enum,
    integer,
    obj,
    string,
    union,
)

__all__ = [
    "BRIEF_MODES",
    "BRIEF_SHAPE",
    "DOSSIER_SHAPE",
    "RESULT_SHAPE",
    "project",
]

# Review modes that consume a brief (reconciliation binds the prior ledger instead).
BRIEF_MODES = ("semantic", "adversarial", "coverage", "redundant-verification",
               "contradiction-resolution")
BRIEF_ID = r"[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?"

FINDING = obj({
    "findingId": ID,
    "statement": TEXT,
    "sourceIds": ID_LIST,
    "excerpt": string(empty=True),
})
DOSSIER_SHAPE: Check = obj({
    "kind": string(),
    "schemaVersion": integer(),
    "dossierId": ID,
    "runId": ID,
    "waveId": ID,
    "laneId": ID,
    "mode": enum("map", "gather"),
    "inputs": TEXT_LIST,
    "exclusions": TEXT_LIST,
    "findings": array(FINDING),
    "uncertainty": TEXT_LIST,
    "contradictions": TEXT_LIST,
    "gaps": TEXT_LIST,
    "outcome": enum("complete", "partial", "failed"),
})


BRIEF_SHAPE: Check = obj({
    "kind": string(),
    "schemaVersion": integer(),
    "briefId": string(pattern=BRIEF_ID, what="a lowercase slug of at most 64 characters"),
    "runId": ID,
    "mode": enum(*BRIEF_MODES),
    "createdAt": INSTANT,
    "priorLedger": REF,
    "priorRevision": integer(minimum=1),
    "projection": obj({}, {"claims": array(ANY_OBJECT), "sources": array(ANY_OBJECT),
                           "scope": ANY_OBJECT}),
})

DISPOSITION = obj({
    "claimId": ID,
    "verdict": enum("confirmed", "qualified", "challenged", "rejected"),
    "material": BOOL,
    "note": string(empty=True),
})
ASSOCIATION = obj({"evidenceId": ID, "claimId": ID, "relation": enum(*RELATIONS)})
COVERAGE_FINDING = obj({
    "findingId": ID,
    "claimIds": ID_LIST,
    "gapIds": ID_LIST,
    "status": enum("open", "accepted", "resolved"),
    "material": BOOL,
    "evidenceIds": ID_LIST,
    "note": string(empty=True),
})
UNRESOLVED = obj({"issueId": ID, "claimIds": ID_LIST, "material": BOOL, "note": TEXT})
_RESULT_COMMON = {
    "kind": string(),
    "schemaVersion": integer(),
    "resultId": ID,
    "runId": ID,
    "reviewKind": string(),
    "reviewerLane": ID,
    "complete": BOOL,
}
_ASSURANCE = obj({
    **_RESULT_COMMON,
    "brief": REF,
    "permittedInputs": TEXT_LIST,
    "excludedInputs": TEXT_LIST,
    "dispositions": array(DISPOSITION),
    "newEvidence": array(EVIDENCE_SHAPE),
    "associations": array(ASSOCIATION),
    "coverageFindings": array(COVERAGE_FINDING),
    "unresolvedIssues": array(UNRESOLVED),
})
RECONCILIATION: Check = obj({
    **_RESULT_COMMON,
    "priorLedger": REF,
    "priorRevision": integer(minimum=1),
    "nextRevision": integer(minimum=2),
    "reviewResults": array(REF),
    "transitions": array(TRANSITION_SHAPE),
    "additions": ID_LIST,
    "removals": ID_LIST,
    "coverageDispositions": array(obj({"findingId": ID,
                                       "disposition": enum("accepted", "resolved")})),
})
RESULT_SHAPE: Check = union("reviewKind", {
    **{mode: _ASSURANCE for mode in BRIEF_MODES},
    "reconciliation": RECONCILIATION,
})


def _linked(claim: dict[str, Any], evidence: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for link in claim["evidence"]:
        record = evidence.get(link["evidenceId"])
        out.append({
            "evidenceId": link["evidenceId"],
            "relation": link["relation"],
            "sourceId": record["sourceId"] if record else None,
            "locator": record["locator"] if record else None,
            "excerpt": record["excerpt"] if record else None,
        })
    return out


def _verification(claims: list[dict[str, Any]], ledger: dict[str, Any],
                  manifest: dict[str, Any]) -> dict[str, Any]:
    evidence = {e["evidenceId"]: e for e in ledger["evidence"]}
    shown = [{"claimId": c["claimId"], "statement": c["statement"],
              "evidence": _linked(c, evidence)} for c in claims]
    cited = {link["sourceId"] for c in shown for link in c["evidence"]}
    return {
        "claims": shown,
        "sources": [{"sourceId": s["sourceId"], "type": s["type"], "title": s["title"]}
                    for s in manifest["sources"] if s["sourceId"] in cited],
    }


def _scope(manifest: dict[str, Any]) -> dict[str, Any]:
    request = manifest["request"]
    return {k: request[k] for k in ("questions", "includedScope", "excludedScope")}


# Modes whose briefs show the same projection of a ledger.
PROJECTION_FAMILY = {
    "semantic": "verification",
    "redundant-verification": "verification",
    "adversarial": "scope",
    "coverage": "scope",
    "contradiction-resolution": "contradiction",
}


def project(mode: str, ledger: dict[str, Any], manifest: dict[str, Any]) -> dict[str, Any]:
    """The selective-blind projection a ``mode`` reviewer sees of ``ledger``.

    Pure and deterministic (ledger order is kept). Verification briefs show
    claim statements with their excerpts, locators and the cited source
    descriptors; adversarial and coverage briefs show only the scope, the
    questions and claim id/statement pairs. No brief shows claim states,
    qualifications, transitions, synthesis, dossier paths, provenance or
    other reviews. Only the prior ledger and the manifest's request and
    sources are read, which do not change once a brief exists; manifest gaps
    are not projected because they may still be recorded after the reviews.
    """
    claims = ledger["claims"]
    family = PROJECTION_FAMILY.get(mode)
    if family == "verification":
        return _verification(claims, ledger, manifest)
    if family == "scope":
        return {"scope": _scope(manifest),
                "claims": [{"claimId": c["claimId"], "statement": c["statement"]}
                           for c in claims]}
    if family == "contradiction":
        chosen = [c for c in claims if c["state"] == "contested"
                  or any(link["relation"] == "contradicts" for link in c["evidence"])]
        return _verification(chosen, ledger, manifest)
    raise ValueError(f"no brief projection for mode {mode!r}")


def projected_claim_ids(projection: dict[str, Any]) -> list[str]:
    """The claim ids a brief put in front of its reviewer."""
    return [c["claimId"] for c in projection.get("claims", [])]


def slug(text: str) -> str:
    """A brief id from free text: lowercase, [a-z0-9-], at most 64 characters."""
    out = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:64].strip("-")
    return out or "brief"
