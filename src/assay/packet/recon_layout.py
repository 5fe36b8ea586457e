"""The recon tool's packet layout: its versions, closed shapes and projections.

What a packet the recon tool writes looks like, as data: the one version of
each ``recon.`` kind whose layout is read, the closed shape of every file
(checked with assay's shape combinators, so the issue codes are the same and
the pointers point into the recon file), the projection a recon review
brief shows of a ledger, and how a typed line locator selects bytes of a
capture. :mod:`assay.packet.recon` maps documents of this layout onto
assay's model. Imports the base modules and the packet shapes.
"""

from __future__ import annotations

import re
from typing import Any

from assay.packet.model import (
    CLAIM_STATES,
    EVIDENCE_STATES,
    PROFILES,
    RELATIONS,
    RUN_STATUSES,
    SOURCE_STATES,
)
from assay.packet.shape import (
    ANY_OBJECT,
    BOOL,
    DIGEST,
    Check,
    array,
    enum,
    integer,
    nullable,
    obj,
    string,
    union,
)

__all__ = [
    "BRIEF",
    "BRIEF_MODE",
    "DOSSIER",
    "LEDGER",
    "MANIFEST",
    "RECON_VERSIONS",
    "RESULT",
    "VERDICTS",
    "Pending",
    "is_recon_layout",
    "line_breaks",
    "line_range",
    "recon_projection",
]

# The recon tool's kinds and the one schemaVersion of each whose layout is
# defined by the contract assay follows (approval bound by a fingerprint).
# Manifest version 2 of that tool drops the fingerprint, so it fails closed.
RECON_VERSIONS = {
    "packet-manifest": 1,
    "claim-ledger": 1,
    "raw-dossier": 1,
    "review-brief": 1,
    "review-result": 1,
}

ANY = Check(lambda value: True, lambda sink, value, ptr: True)
TEXT = string()
TEXT_LIST = array(string())
REF = obj({"path": string(), "digest": DIGEST})
LINES = integer(minimum=1)
_COMMON = {"kind": string(), "id": TEXT, "available": BOOL, "authority": TEXT,
           "observedAt": TEXT, "validationState": enum(*SOURCE_STATES)}
SOURCE: Check = union("kind", {
    "repository": obj({**_COMMON, "root": TEXT, "revision": TEXT, "dirty": BOOL,
                       "contentHashes": ANY_OBJECT}),
    "file": obj({**_COMMON, "path": TEXT, "contentHash": DIGEST}),
    "url": obj({**_COMMON, "url": TEXT},
               {"capturePath": TEXT, "captureDigest": DIGEST,
                "validatorState": obj({}, {"etag": TEXT, "lastModified": TEXT,
                                           "capturePath": TEXT, "captureDigest": DIGEST})}),
    "command-output": obj({**_COMMON, "argv": TEXT_LIST, "cwd": TEXT,
                           "exitStatus": integer(minimum=-(2**31)), "outputPath": TEXT,
                           "outputDigest": DIGEST, "environmentNames": TEXT_LIST}),
    "connected-resource": obj({**_COMMON, "system": TEXT, "resourceId": TEXT},
                              {"resourceVersion": TEXT, "retrievalToken": TEXT,
                               "capturePath": TEXT, "captureDigest": DIGEST}),
})
GAP = obj({"id": TEXT, "code": TEXT, "message": TEXT, "material": BOOL},
          {"sourceIds": TEXT_LIST, "claimIds": TEXT_LIST, "coverageFindingIds": TEXT_LIST})
MANIFEST: Check = obj({
    "kind": string(),
    "schemaVersion": integer(),
    "run": obj({"id": TEXT, "topic": TEXT, "status": enum(*RUN_STATUSES),
                "requestedProfile": enum(*PROFILES),
                "achievedProfile": nullable(enum(*PROFILES)),
                "createdAt": TEXT, "updatedAt": TEXT}),
    "request": obj({"objective": TEXT, "questions": TEXT_LIST, "includedScope": TEXT_LIST,
                    "excludedScope": TEXT_LIST, "contextReferences": TEXT_LIST,
                    "outputPath": TEXT}),
    "sources": array(SOURCE),
    # Passed through unchanged (its fingerprint covers these exact bytes) and
    # checked by assay's own execution shape.
    "execution": ANY_OBJECT,
    "artifacts": array(REF),
    "gaps": array(GAP),
})
LOCATOR: Check = union("kind", {
    "repository": obj({"kind": string(), "path": TEXT, "revision": TEXT,
                       "lineStart": LINES, "lineEnd": LINES}),
    "file": obj({"kind": string(), "path": TEXT}, {"lineStart": LINES, "lineEnd": LINES}),
    "url": obj({"kind": string(), "url": TEXT, "retrievedAt": TEXT},
               {"fragment": TEXT, "validatorToken": DIGEST}),
    "command-output": obj({"kind": string(), "artifactPath": TEXT, "lineStart": LINES,
                           "lineEnd": LINES, "commandDigest": DIGEST}),
    "connected-resource": obj({"kind": string(), "system": TEXT, "resourceId": TEXT,
                               "retrievedAt": TEXT},
                              {"resourceVersion": TEXT, "retrievalToken": TEXT,
                               "fieldOrSection": TEXT}),
})
EVIDENCE: Check = obj(
    {"id": TEXT, "sourceId": TEXT, "locator": LOCATOR, "displayExcerpt": string(),
     "observedAt": TEXT,
     "locatorValidation": obj({"status": enum(*EVIDENCE_STATES), "validatedAt": TEXT}),
     "provenance": REF},
    {"contentHash": DIGEST,
     "redaction": obj({"applied": BOOL, "originalPersisted": BOOL}, {"categories": TEXT_LIST})},
)
CLAIM: Check = obj({
    "id": TEXT, "statement": TEXT, "status": enum(*CLAIM_STATES),
    "evidence": array(obj({"evidenceId": TEXT, "relation": enum(*RELATIONS)})),
    "qualifications": TEXT_LIST, "reviewIds": TEXT_LIST, "derivedFrom": array(REF),
    "challenges": array(ANY_OBJECT),
})
LEDGER: Check = obj({
    "kind": string(),
    "schemaVersion": integer(),
    "runId": TEXT,
    "revision": integer(minimum=1),
    "inputArtifacts": array(REF),
    "synthesis": obj({"answer": TEXT, "keyClaimIds": TEXT_LIST, "caveats": TEXT_LIST,
                      "unresolvedQuestionIds": TEXT_LIST}),
    "evidence": array(EVIDENCE),
    "claims": array(CLAIM),
    "unresolvedQuestions": array(ANY_OBJECT),
    "transitions": array(obj({"claimId": TEXT, "from": enum(*CLAIM_STATES),
                              "to": enum(*CLAIM_STATES)})),
})
DOSSIER: Check = obj({
    "kind": string(),
    "schemaVersion": integer(),
    "id": TEXT,
    "runId": TEXT,
    "waveId": TEXT,
    "laneId": TEXT,
    "mode": enum("map", "gather", "compile", "verify", "adversary", "coverage", "reconcile"),
    "outcome": enum("complete", "partial", "failed"),
    "allowedInputs": TEXT_LIST,
    "excludedInputs": TEXT_LIST,
    # Untyped in the recon layout: any JSON, scanned for secrets, not mapped.
    "findings": array(ANY),
    "uncertainty": array(ANY),
    "contradictions": array(ANY),
    "gaps": array(ANY),
})


_BRIEF_COMMON = {"kind": string(), "schemaVersion": integer(), "id": TEXT, "runId": TEXT,
                 "mode": string(), "createdAt": TEXT, "excludedInputs": TEXT_LIST}
_SCOPE = obj({"included": TEXT_LIST, "excluded": TEXT_LIST})
BRIEF: Check = union("mode", {
    "verify": obj({**_BRIEF_COMMON, "claims": array(ANY_OBJECT), "sources": array(ANY_OBJECT)}),
    "adversary": obj({**_BRIEF_COMMON, "scope": _SCOPE, "questions": TEXT_LIST,
                      "provisionalStatements": array(ANY_OBJECT)}),
    "coverage": obj({**_BRIEF_COMMON, "scope": _SCOPE, "questions": TEXT_LIST,
                     "claims": array(ANY_OBJECT)}),
})
# Review kind -> its disposition vocabulary, mapped onto assay's verdicts.
VERDICTS = {
    "semantic": {"affirmed": "confirmed", "uncertain": "qualified", "rejected": "rejected"},
    "redundant-verification": {"affirmed": "confirmed", "uncertain": "qualified",
                               "rejected": "rejected"},
    "adversarial": {"unchallenged": "confirmed", "challenged": "challenged"},
    "coverage": {"covered": "confirmed", "gap": "challenged"},
    "contradiction-resolution": {"resolved": "confirmed", "unresolved": "challenged",
                                 "rejected": "rejected"},
}
# Review kind -> the recon brief mode that serves it.
BRIEF_MODE = {"semantic": "verify", "redundant-verification": "verify",
              "adversarial": "adversary", "contradiction-resolution": "adversary",
              "coverage": "coverage"}
_RESULT_COMMON = {
    "kind": string(), "schemaVersion": integer(), "id": TEXT, "runId": TEXT,
    "reviewKind": string(), "reviewerLane": TEXT, "status": enum("complete", "failed"),
    "permittedInputs": array(REF), "excludedInputs": TEXT_LIST,
    "newEvidence": array(EVIDENCE),
    "coverageFindings": array(obj({"id": TEXT, "gapId": TEXT, "code": TEXT, "message": TEXT,
                                   "material": BOOL, "claimIds": TEXT_LIST})),
    "unresolvedIssues": array(ANY),
}
_ASSOCIATIONS = {"evidenceAssociations": array(obj({"evidenceId": TEXT, "claimId": TEXT,
                                                    "relation": enum(*RELATIONS)}))}


def _assurance(kind: str, **extra: Check) -> Check:
    disposition = obj({"claimId": TEXT, "disposition": enum(*VERDICTS[kind])})
    return obj({**_RESULT_COMMON, "dispositions": array(disposition), "brief": REF, **extra},
               _ASSOCIATIONS)


RESULT: Check = union("reviewKind", {
    **{kind: _assurance(kind) for kind in VERDICTS if kind != "contradiction-resolution"},
    "contradiction-resolution": _assurance(
        "contradiction-resolution",
        contradictionDispositions=array(obj({"contradictionId": TEXT, "claimIds": TEXT_LIST,
                                             "disposition": enum("resolved", "unresolved")}))),
    "reconciliation": obj({
        **_RESULT_COMMON,
        "dispositions": array(ANY), "inputLedger": obj({"path": string(), "digest": DIGEST,
                                                        "revision": integer(minimum=1)}),
        "outputRevision": integer(minimum=1), "incorporatedReviewIds": TEXT_LIST,
        "transitions": array(obj({"claimId": TEXT, "from": enum(*CLAIM_STATES),
                                  "to": enum(*CLAIM_STATES)})),
        "additions": TEXT_LIST, "removals": TEXT_LIST,
        "removalDispositions": array(obj({"claimId": TEXT, "reviewId": TEXT,
                                          "disposition": enum("rejected")})),
        "coverageDispositions": array(obj({"findingId": TEXT, "gapId": TEXT,
                                           "disposition": enum("accepted-gap", "resolved")},
                                          {"evidenceIds": TEXT_LIST})),
    }, _ASSOCIATIONS),
})
# A listed artifact read and parsed: (index, path, digest, kind suffix, document
# or None when it could not be read or mapped).
Pending = tuple[int, str, str, str, "dict[str, Any] | None"]


def is_recon_layout(doc: Any) -> bool:
    """Whether a parsed ``manifest.json`` is in the recon tool's layout (a ``run`` object)."""
    return (type(doc) is dict and doc.get("kind") == "recon.packet-manifest"
            and type(doc.get("run")) is dict)


def recon_projection(mode: str, ledger: dict[str, Any], manifest: dict[str, Any]
                     ) -> dict[str, Any]:
    """What a recon brief of ``mode`` shows of ``ledger``: every claim, in ledger order.

    ``verify`` shows claim statements with each linked record's id, source,
    display excerpt and typed locator, plus the full descriptors of the
    cited sources; ``adversary`` and ``coverage`` show the scope, the
    questions and claim id/statement pairs. Recon-layout documents in and out.
    """
    request = manifest["request"]
    if mode == "verify":
        evidence = {e["id"]: e for e in ledger["evidence"]}
        cited: set[str] = set()
        claims = []
        for claim in ledger["claims"]:
            links: list[dict[str, Any] | None] = []
            for link in claim["evidence"]:
                record = evidence.get(link["evidenceId"])
                if record is None:
                    links.append(None)
                    continue
                cited.add(record["sourceId"])
                links.append({"id": record["id"], "sourceId": record["sourceId"],
                              "displayExcerpt": record["displayExcerpt"],
                              "locator": record["locator"]})
            claims.append({"id": claim["id"], "statement": claim["statement"], "evidence": links})
        return {"claims": claims,
                "sources": [s for s in manifest["sources"] if s["id"] in cited]}
    pairs = [{"id": c["id"], "statement": c["statement"]} for c in ledger["claims"]]
    return {"scope": {"included": request["includedScope"], "excluded": request["excludedScope"]},
            "questions": request["questions"],
            ("provisionalStatements" if mode == "adversary" else "claims"): pairs}


def line_breaks(data: bytes) -> list[int]:
    """The offset of every ``\\n`` in ``data`` (computed once per capture)."""
    return [found.start() for found in re.finditer(b"\\n", data)]


def line_range(data: bytes, start: int | None, end: int | None,
               breaks: list[int] | None = None) -> tuple[int, int]:
    """The byte range ``[start, end)`` of 1-based lines ``start..end`` of ``data``.

    No line range means the whole capture. A range outside the capture maps
    past its end, which the boundary derives as ``invalid``. A line's final
    ``\\r`` before ``\\n`` is not part of it, as the recon tool reads lines.
    ``breaks`` is :func:`line_breaks` of ``data`` when the caller has it.
    """
    if start is None and end is None:
        return 0, len(data)
    if breaks is None:
        breaks = line_breaks(data)
    if start is None or end is None or end < start or end > len(breaks) + 1:
        return 0, len(data) + 1
    begin = 0 if start == 1 else breaks[start - 2] + 1
    stop = breaks[end - 1] if end <= len(breaks) else len(data)
    if stop > begin and stop < len(data) and data[stop - 1] == 13:
        stop -= 1
    return begin, stop
