"""The claim ledger file (``claims.json``): closed schema and a fresh ledger.

Kind ``assay.claim-ledger``, schemaVersion 1: run
id, monotonic revision, direct input references, synthesis, evidence, claims
with closed ``{evidenceId, relation}`` links, unresolved questions, and the
explicit claim transitions. Review results reuse the evidence shape for the
new evidence they propose. Imports the base modules and packet shape checks.
"""

from __future__ import annotations

from typing import Any

from assay.packet.assay.manifest import ID, REF, TEXT, TEXT_LIST
from assay.packet.model import CLAIM_STATES, RELATIONS
from assay.packet.shape import BOOL, DIGEST, Check, array, enum, integer, nullable, obj, string

__all__ = ["EVIDENCE_SHAPE", "LEDGER_SHAPE", "LINK_SHAPE", "TRANSITION_SHAPE", "new_ledger"]

REDACTION = obj({"applied": BOOL, "originalPersisted": BOOL})
EVIDENCE_SHAPE: Check = obj(
    {
        "evidenceId": ID,
        "sourceId": ID,
        "sourceDigest": DIGEST,
        "locator": obj({"start": integer(minimum=0), "end": integer(minimum=0)}),
        "excerpt": string(),
    },
    {"redaction": REDACTION},
)
LINK_SHAPE: Check = obj({"evidenceId": ID, "relation": enum(*RELATIONS)})
CLAIM_SHAPE: Check = obj({
    "claimId": ID,
    "statement": TEXT,
    "state": enum(*CLAIM_STATES),
    "evidence": array(LINK_SHAPE),
    "qualifications": TEXT_LIST,
})
TRANSITION_SHAPE: Check = obj({
    "claimId": ID,
    "from": nullable(enum(*CLAIM_STATES)),
    "to": enum(*CLAIM_STATES),
    "reason": TEXT,
})
LEDGER_SHAPE: Check = obj({
    "kind": string(),
    "schemaVersion": integer(),
    "runId": ID,
    "revision": integer(minimum=1),
    "inputs": array(REF),
    "synthesis": string(empty=True),
    "evidence": array(EVIDENCE_SHAPE),
    "claims": array(CLAIM_SHAPE),
    "unresolvedQuestions": TEXT_LIST,
    "transitions": array(TRANSITION_SHAPE),
})


def new_ledger(run_id: str) -> dict[str, Any]:
    """An empty revision-1 ledger for ``run_id``."""
    return {
        "kind": "assay.claim-ledger",
        "schemaVersion": 1,
        "runId": run_id,
        "revision": 1,
        "inputs": [],
        "synthesis": "",
        "evidence": [],
        "claims": [],
        "unresolvedQuestions": [],
        "transitions": [],
    }
