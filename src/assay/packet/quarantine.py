"""Admitting worker output, and quarantining what fails.

A worker writes its dossier or review result under ``raw/drafts/``.
:func:`admit` checks that one file on its own (strict JSON, known kind,
closed shape, same run, an approved lane of the matching wave mode, a target
inside that lane's write root, no raw secret in any excerpt). Valid output
moves to its target and is registered in the manifest with its digest;
invalid output moves to ``raw/quarantine/`` beside a
``<name>.quarantine.json`` record of why, and is never promoted. Imports the
base modules and the packet modules.
"""

from __future__ import annotations

import os
from typing import Any

from assay.canonical import parse
from assay.errors import AssayError, UsageError
from assay.packet.assay.manifest import approval_fingerprint
from assay.packet.assay.reviews import DOSSIER_SHAPE, RESULT_SHAPE
from assay.packet.layout import (
    MANIFEST_FILE,
    PacketRoot,
    check_relative_path,
    file_digest,
    is_under,
    json_file_bytes,
)
from assay.packet.lifecycle import now, read_canonical, register
from assay.packet.model import KINDS, REVIEW_WAVE, Issue, kind_name
from assay.packet.redaction import find_secret
from assay.packet.shape import Sink

__all__ = ["admit", "check_output"]

_MODES = {"map": ("map",), "gather": ("gather", "redundant-gather")}


def check_output(manifest: dict[str, Any], path: str, target: str, data: bytes) -> list[Issue]:
    """Every reason the worker output ``data`` cannot become artifact ``target``."""
    issues: list[Issue] = []
    sink = Sink(issues, path)
    try:
        doc = parse(data)
    except AssayError as err:
        return [Issue("INVALID_JSON", path, "", err.message)]
    if not isinstance(doc, dict):
        return [Issue("INVALID_TYPE", path, "", "worker output must be a JSON object")]
    kind = kind_name(doc.get("kind"))
    if kind not in ("raw-dossier", "review-result"):
        return [Issue("UNKNOWN_KIND", path, "/kind", "worker output is a raw-dossier or review-result")]
    if doc.get("schemaVersion") != KINDS[kind]:
        return [Issue("UNKNOWN_KIND", path, "/schemaVersion", "unsupported schemaVersion")]
    shape = DOSSIER_SHAPE if kind == "raw-dossier" else RESULT_SHAPE
    if not shape.check(sink, doc):
        return issues
    if doc["runId"] != manifest.get("runId"):
        sink.add("RUN_ID_MISMATCH", "/runId", "the output belongs to another run")
    execution = manifest.get("execution") or {}
    approval = execution.get("approval")
    lanes: dict[str, tuple[str, str, str]] = {}
    if approval and approval_fingerprint(execution) == approval.get("fingerprint"):
        for wave in execution.get("waves", []):
            for lane in wave.get("lanes", []):
                lanes[lane["laneId"]] = (wave["waveId"], wave["mode"], lane["writeRoot"])
    if kind == "raw-dossier":
        lane_id, modes, pointer = doc["laneId"], _MODES[doc["mode"]], "/laneId"
        excerpts = [(f"/findings/{k}/excerpt", f["excerpt"]) for k, f in enumerate(doc["findings"])]
    else:
        lane_id, modes, pointer = doc["reviewerLane"], (REVIEW_WAVE[doc["reviewKind"]],), "/reviewerLane"
        excerpts = [(f"/newEvidence/{k}/excerpt", e["excerpt"])
                    for k, e in enumerate(doc.get("newEvidence", []))]
    lane = lanes.get(lane_id)
    if lane is None or lane[1] not in modes or (kind == "raw-dossier" and lane[0] != doc["waveId"]):
        sink.add("UNAPPROVED_LANE", pointer, f"lane {lane_id!r} is not an approved "
                 f"{' or '.join(modes)} lane")
    elif not is_under(target, lane[2]):
        issues.append(Issue("LANE_WRITE_PATH_VIOLATION", target, "",
                            f"{target} is outside lane {lane_id!r} write root {lane[2]!r}"))
    for pointer_, text in excerpts:
        found = find_secret(text)
        if found:
            sink.add("SECRET_IN_EXCERPT", pointer_, f"a raw secret-shaped value ({found})")
    return issues


def admit(directory: str | os.PathLike[str], draft: str, target: str) -> dict[str, Any]:
    """Promote the draft ``draft`` to ``target``, or quarantine it with the reasons.

    Returns ``{admitted, path, digest?, quarantined?, record?, issues}``.
    Operational problems (a path outside ``raw/drafts/``, a target that
    exists, symlinks) raise and move nothing.
    """
    for name, value in (("draft", draft), ("target", target)):
        problem = check_relative_path(value)
        if problem is not None:
            raise UsageError(f"{name}: {problem.message}", code="invalid_argument",
                             pointer="/" + name)
    if not is_under(draft, "raw/drafts") or draft == "raw/drafts":
        raise UsageError("worker output is admitted from raw/drafts/", code="invalid_argument",
                         pointer="/draft")
    if is_under(target, "raw/quarantine") or is_under(target, "raw/drafts"):
        raise UsageError("the target is where the artifact will live, outside raw/drafts and "
                         "raw/quarantine", code="invalid_argument", pointer="/target")
    root = PacketRoot(directory)
    root.open_check()
    manifest = read_canonical(root, MANIFEST_FILE)
    data = root.read(draft)
    if not isinstance(data, bytes):
        raise AssayError(f"cannot read {draft}: {data.message}", code="draft_unreadable",
                         details={"issue": data.code})
    if root.exists(target):
        raise AssayError(f"{target} already exists", code="artifact_exists")
    issues = check_output(manifest, draft, target, data)
    digest = file_digest(data)
    if issues:
        name = os.path.basename(draft)
        base = f"raw/quarantine/{name}"
        n = 1
        while root.exists(base) or root.exists(base + ".quarantine.json"):
            n += 1
            base = f"raw/quarantine/{n}-{name}"
        record = {
            "kind": "assay.quarantine-record",
            "schemaVersion": 1,
            "runId": manifest.get("runId"),
            "originalPath": draft,
            "intendedPath": target,
            "quarantinedPath": base,
            "digest": digest,
            "quarantinedAt": now(),
            "issues": [i.to_dict() for i in issues],
        }
        record_bytes = json_file_bytes(record)
        root.move(draft, base)
        root.write(base + ".quarantine.json", record_bytes, exclusive=True)
        return {"admitted": False, "quarantined": base, "record": base + ".quarantine.json",
                "digest": digest, "issues": record["issues"]}
    register(manifest, target, data)
    manifest_bytes = json_file_bytes(manifest)
    root.move(draft, target)
    root.write(MANIFEST_FILE, manifest_bytes)
    return {"admitted": True, "path": target, "digest": digest, "issues": []}
