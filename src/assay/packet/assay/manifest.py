"""The packet manifest (``manifest.json``): closed schema and execution envelope.

Owns the manifest shape (kind ``assay.packet-manifest``, schemaVersion 2), the execution envelope and its
approval fingerprint, and the constructor :func:`new_manifest` used by
``packet init``. Imports the base modules and the packet shape checks.
"""

from __future__ import annotations

from typing import Any

from assay.packet.model import (
    AUTHORITIES,
    GAP_KINDS,
    PROFILES,
    RUN_STATUSES,
    TASK_CLASSES,
    WAVE_MODES,
    approval_fingerprint,
)
from assay.packet.shape import (
    BOOL,
    DIGEST,
    INSTANT,
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
    "APPROVAL_TYPE",
    "EXECUTION_SHAPE",
    "MANIFEST_SHAPE",
    "approval_fingerprint",
    "new_manifest",
]

APPROVAL_TYPE = "explicit-user-approval"
ID = string(pattern=r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}", what="an id ([A-Za-z0-9._:-], at most 128)")
TEXT = string()
TEXT_LIST = array(string(), unique=True)
ID_LIST = array(ID, unique=True)
REF = obj({"path": string(), "digest": DIGEST})

LANE = obj({"laneId": ID, "scope": TEXT, "writeRoot": string()})
WAVE = obj({
    "waveId": ID,
    "mode": enum(*WAVE_MODES),
    "taskClass": enum(*TASK_CLASSES),
    "lanes": array(LANE, min_items=1),
    "conditional": BOOL,
})
APPROVAL = obj({
    "type": enum(APPROVAL_TYPE),
    "approvedAt": INSTANT,
    "fingerprint": DIGEST,
})
EXECUTION_SHAPE: Check = obj(
    {
        "provider": TEXT,
        "route": TEXT,
        "role": TEXT,
        "model": TEXT,
        "effort": TEXT,
        "reasoningMode": nullable(string()),
        "serviceTier": nullable(string()),
        "authority": enum(*AUTHORITIES),
        "maxConcurrency": integer(minimum=1),
        "deadlineSeconds": integer(minimum=1),
        "retryLimit": integer(minimum=0),
        "waves": array(WAVE, min_items=1),
    },
    {"approval": APPROVAL},
)

_SOURCE_COMMON = {"sourceId": ID, "type": string(), "title": TEXT, "capture": nullable(REF)}
SOURCE = union("type", {
    "document": obj(_SOURCE_COMMON),
    "web": obj({**_SOURCE_COMMON, "url": TEXT, "retrievedAt": INSTANT}),
    "repository": obj({**_SOURCE_COMMON, "url": TEXT,
                       "commit": string(pattern=r"[0-9a-f]{40}", what="a 40-hex commit id"),
                       "path": TEXT}),
})
GAP = obj({
    "gapId": ID,
    "kind": enum(*GAP_KINDS),
    "material": BOOL,
    "mode": nullable(enum(*WAVE_MODES)),
    "description": TEXT,
    "sourceIds": ID_LIST,
    "claimIds": ID_LIST,
    "findingIds": ID_LIST,
})
REQUEST = obj({
    "objective": TEXT,
    "questions": TEXT_LIST,
    "includedScope": TEXT_LIST,
    "excludedScope": TEXT_LIST,
    "contextRefs": TEXT_LIST,
    "outputPath": nullable(string()),
})
MANIFEST_SHAPE: Check = obj({
    "kind": string(),
    "schemaVersion": integer(),
    "runId": ID,
    "createdAt": INSTANT,
    "status": enum(*RUN_STATUSES),
    "profile": enum(*PROFILES),
    "request": REQUEST,
    "sources": array(SOURCE),
    "execution": nullable(EXECUTION_SHAPE),
    "artifacts": array(REF),
    "gaps": array(GAP),
})


def new_manifest(*, run_id: str, created_at: str, objective: str, profile: str,
                 questions: list[str] | None = None) -> dict[str, Any]:
    """A fresh ``preparing`` manifest with no execution, artifacts or gaps."""
    return {
        "kind": "assay.packet-manifest",
        "schemaVersion": 2,
        "runId": run_id,
        "createdAt": created_at,
        "status": "preparing",
        "profile": profile,
        "request": {
            "objective": objective,
            "questions": list(questions or []),
            "includedScope": [],
            "excludedScope": [],
            "contextRefs": [],
            "outputPath": None,
        },
        "sources": [],
        "execution": None,
        "artifacts": [],
        "gaps": [],
    }
