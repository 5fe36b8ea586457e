"""Packet lifecycle steps that write: init, approve, brief.

Each step checks before it writes and writes nothing when it refuses:
``init`` lays out a new packet, ``approve`` binds an execution envelope to an
explicit user approval (fingerprint of the envelope without ``approval``),
and ``create_brief`` runs the full validation as a preflight (sources,
locators, links and digests are checked before any review brief exists),
snapshots the ledger it projects as the prior ledger, and writes one
immutable, mode-specific projection. Imports the base modules and the packet
modules.
"""

from __future__ import annotations

import os
import time
from typing import Any

from assay.canonical import parse
from assay.errors import AssayError, UsageError
from assay.packet.layout import LEDGER_FILE, MANIFEST_FILE, PacketRoot, file_digest, json_file_bytes
from assay.packet.ledger_file import new_ledger
from assay.packet.manifest import APPROVAL_TYPE, EXECUTION_SHAPE, approval_fingerprint, new_manifest
from assay.packet.model import PROFILES, Issue
from assay.packet.reviews import BRIEF_MODES, project, slug
from assay.packet.shape import Sink

__all__ = ["approve", "create_brief", "init_packet", "now", "read_canonical", "register"]


def now() -> str:
    """The current UTC instant at second precision (``YYYY-MM-DDTHH:MM:SSZ``)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def read_canonical(root: PacketRoot, path: str) -> dict[str, Any]:
    """Read a canonical JSON file of the packet, or raise ``packet_unreadable``."""
    data = root.read(path)
    if not isinstance(data, bytes):
        raise AssayError(f"cannot read {path}: {data.message}", code="packet_unreadable",
                         details={"issue": data.code})
    value = parse(data)
    if not isinstance(value, dict):
        raise AssayError(f"{path} is not a JSON object", code="packet_unreadable")
    return value


def register(manifest: dict[str, Any], path: str, data: bytes) -> None:
    """Add (or refresh) the ``{path, digest}`` reference of an artifact in the manifest."""
    ref = {"path": path, "digest": file_digest(data)}
    for index, existing in enumerate(manifest["artifacts"]):
        if existing.get("path") == path:
            manifest["artifacts"][index] = ref
            return
    manifest["artifacts"].append(ref)


def init_packet(directory: str | os.PathLike[str], *, objective: str, profile: str,
                questions: list[str] | None = None, run_id: str | None = None,
                created_at: str | None = None, kind_prefix: str = "assay.") -> dict[str, Any]:
    """Lay out a new packet: the directories, a ``preparing`` manifest and an empty ledger.

    Refuses an existing ``manifest.json`` (``packet_exists``) and a symlinked
    directory; creates the directory when it does not exist.
    """
    if profile not in PROFILES:
        raise UsageError(f"profile must be one of {', '.join(PROFILES)}", code="invalid_argument",
                         pointer="/profile")
    if not objective.strip():
        raise UsageError("the objective must not be empty", code="invalid_argument",
                         pointer="/objective")
    path = os.path.abspath(directory)
    if not os.path.lexists(path):
        os.makedirs(path)
    root = PacketRoot(path)
    root.open_check()
    if root.exists(MANIFEST_FILE):
        raise AssayError(f"{path} already holds a packet", code="packet_exists",
                         action="Use another directory; a packet is never re-initialised.")
    created = created_at or now()
    run = run_id or "run-" + file_digest(f"{path}\n{created}\n{objective}".encode())[7:19]
    root.make_layout()
    root.write(LEDGER_FILE, json_file_bytes(new_ledger(run, kind_prefix=kind_prefix)))
    manifest = new_manifest(run_id=run, created_at=created, objective=objective, profile=profile,
                            questions=questions, kind_prefix=kind_prefix)
    root.write(MANIFEST_FILE, json_file_bytes(manifest))
    return {"directory": path, "run_id": run, "profile": profile, "status": "preparing"}


def approve(directory: str | os.PathLike[str], execution: dict[str, Any], *,
            approved_at: str | None = None) -> dict[str, Any]:
    """Record an explicit user approval of ``execution`` and move the run to ``running``.

    The envelope is checked as a closed object first (``invalid_execution``
    with the pointer of the first issue); an envelope that already carries
    ``approval`` is refused, since approval is what this step adds.
    """
    root = PacketRoot(directory)
    root.open_check()
    manifest = read_canonical(root, MANIFEST_FILE)
    if manifest.get("status") not in ("preparing", "awaiting-approval"):
        raise AssayError(f"the run is {manifest.get('status')!r}; only a preparing or "
                         "awaiting-approval run can be approved", code="packet_already_approved")
    if isinstance(execution, dict) and "approval" in execution:
        raise AssayError("the envelope to approve must not carry an approval",
                         code="invalid_execution", pointer="/approval")
    issues: list[Issue] = []
    if not EXECUTION_SHAPE(Sink(issues, "execution"), execution, ""):
        first = issues[0]
        raise AssayError(f"invalid execution envelope: {first.message}", code="invalid_execution",
                         pointer=first.pointer,
                         details={"issues": [i.to_dict() for i in issues]})
    stamp = approved_at or now()
    envelope = dict(execution)
    fp = approval_fingerprint(envelope)
    envelope["approval"] = {"type": APPROVAL_TYPE, "approvedAt": stamp, "fingerprint": fp}
    manifest["execution"] = envelope
    manifest["status"] = "running"
    root.write(MANIFEST_FILE, json_file_bytes(manifest))
    return {"fingerprint": fp, "approved_at": stamp, "status": "running"}


def create_brief(directory: str | os.PathLike[str], *, mode: str, brief_id: str | None = None,
                 created_at: str | None = None) -> dict[str, Any]:
    """Write one immutable selective-blind review brief for ``mode``; return its reference.

    Preflight: the whole packet must validate (``packet_preflight_failed``
    lists every issue). The current ``claims.json`` is snapshotted once as
    ``raw/drafts/claims-r<revision>.json`` (the prior ledger every brief and
    the reconciliation bind), and the brief is written to
    ``reviews/briefs/<briefId>.json``. Writing the same brief again returns
    it unchanged; a different brief under the same id is ``artifact_exists``.
    """
    from assay.packet.validate import validate

    if mode not in BRIEF_MODES:
        raise UsageError(f"mode must be one of {', '.join(BRIEF_MODES)}", code="invalid_argument",
                         pointer="/mode")
    outcome = validate(directory)
    if not outcome.valid:
        raise AssayError(
            f"the packet fails preflight with {len(outcome.issues)} issue(s); no brief written",
            code="packet_preflight_failed",
            details={"issues": [i.to_dict() for i in outcome.issues[:200]]},
            action="Run 'assay packet validate DIR' and fix every issue first.",
        )
    root = PacketRoot(directory)
    manifest = read_canonical(root, MANIFEST_FILE)
    raw_ledger = root.read(LEDGER_FILE)
    assert isinstance(raw_ledger, bytes)
    ledger = parse(raw_ledger)
    prior_path = f"raw/drafts/claims-r{ledger['revision']}.json"
    existing = root.read(prior_path)
    if isinstance(existing, bytes) and existing != raw_ledger:
        raise AssayError(f"{prior_path} exists with other content", code="artifact_exists")
    brief_name = brief_id or slug(mode)
    brief = {
        "kind": manifest["kind"].split(".")[0] + ".review-brief",
        "schemaVersion": 1,
        "briefId": brief_name,
        "runId": manifest["runId"],
        "mode": mode,
        "createdAt": created_at or now(),
        "priorLedger": {"path": prior_path, "digest": file_digest(raw_ledger)},
        "priorRevision": ledger["revision"],
        "projection": project(mode, ledger, manifest),
    }
    brief_path = f"reviews/briefs/{brief_name}.json"
    current = root.read(brief_path)
    if isinstance(current, bytes):
        old = parse(current)
        same = {k: v for k, v in old.items() if k != "createdAt"} == \
            {k: v for k, v in brief.items() if k != "createdAt"}
        if not same:
            raise AssayError(f"{brief_path} exists with another projection; briefs are immutable",
                             code="artifact_exists", action="Choose another --brief-id.")
        return {"path": brief_path, "digest": file_digest(current), "mode": mode,
                "prior_ledger": brief["priorLedger"], "created": False}
    data = json_file_bytes(brief)
    if not isinstance(existing, bytes):
        root.write(prior_path, raw_ledger, exclusive=True)
        register(manifest, prior_path, raw_ledger)
    root.write(brief_path, data, exclusive=True)
    register(manifest, brief_path, data)
    root.write(MANIFEST_FILE, json_file_bytes(manifest))
    return {"path": brief_path, "digest": file_digest(data), "mode": mode,
            "prior_ledger": brief["priorLedger"], "created": True}
