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
from assay.errors import AssayError, UnavailableError, UsageError
from assay.packet.assay.ledger_file import new_ledger
from assay.packet.assay.manifest import (
    APPROVAL_TYPE,
    EXECUTION_SHAPE,
    MANIFEST_SHAPE,
    approval_fingerprint,
    new_manifest,
)
from assay.packet.assay.reviews import BRIEF_MODES, project, slug
from assay.packet.layout import LEDGER_FILE, MANIFEST_FILE, PacketRoot, file_digest, json_file_bytes
from assay.packet.model import PROFILES, WAVE_MODES, Issue
from assay.packet.recon.contract import is_recon_layout
from assay.packet.shape import INSTANT, Sink

__all__ = ["add_source", "approve", "close", "create_brief", "init_packet", "now", "read_canonical",
           "register", "require_text"]

# A captured source document may be larger than a ledger record, not unbounded.
MAX_SOURCE_BYTES = 64 * 1024 * 1024
# Manifest field of a new packet -> the init argument it comes from.
_INIT_FIELDS = (("/request/objective", "/objective"), ("/request/questions", "/question"),
                ("/runId", "/run_id"), ("/createdAt", "/created_at"))


def require_text(value: str, pointer: str) -> None:
    """Refuse a text argument that UTF-8 cannot carry (``invalid_argument`` at ``pointer``).

    Command-line words that are not UTF-8 arrive as lone surrogates; no packet
    file can hold one, so they are refused before anything is written.
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(f"{pointer[1:]} holds bytes that are not UTF-8 text (a lone "
                         "surrogate); packet files are UTF-8", code="invalid_argument",
                         pointer=pointer, action="Pass the argument as UTF-8 text.") from None


def now() -> str:
    """The current UTC instant at second precision (``YYYY-MM-DDTHH:MM:SSZ``)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def read_canonical(root: PacketRoot, path: str) -> dict[str, Any]:
    """Read a canonical JSON file of the packet, or raise ``packet_unreadable``."""
    data = root.read(path)
    if not isinstance(data, bytes):
        if data.code == "MISSING_FILE":
            raise AssayError(f"{root.root} has no {path}; it is not a packet",
                             code="packet_not_found",
                             action="Create one with 'assay packet init DIR'.")
        raise UnavailableError(f"cannot read {path}: {data.message}", code="packet_unreadable",
                               details={"issue": data.code})
    value = parse(data)
    if not isinstance(value, dict):
        raise AssayError(f"{path} is not a JSON object", code="packet_unreadable")
    if path == MANIFEST_FILE and is_recon_layout(value):
        # Writing assay-layout pieces into it would mix two layouts in one packet.
        raise AssayError("this packet is in the recon tool's layout; assay validates and "
                         "renders it but does not write into it", code="packet_recon_layout",
                         action="Use 'assay packet validate' or 'assay packet render'; write "
                         "it with the recon tool's own steps.")
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
                created_at: str | None = None) -> dict[str, Any]:
    """Lay out a new packet: the directories, a ``preparing`` manifest and an empty ledger.

    Refuses an existing ``manifest.json`` (``packet_exists``) and a symlinked
    directory; creates the directory when it does not exist. Every argument
    is checked, and both files are serialised, before anything is created: a
    refused call (``invalid_argument`` at the argument's pointer) leaves no
    directory behind, and the manifest it writes passes its own shape check.
    """
    if profile not in PROFILES:
        raise UsageError(f"profile must be one of {', '.join(PROFILES)}", code="invalid_argument",
                         pointer="/profile")
    if not objective.strip():
        raise UsageError("the objective must not be empty", code="invalid_argument",
                         pointer="/objective")
    require_text(objective, "/objective")
    for index, question in enumerate(questions or []):
        require_text(question, f"/question/{index}")
    path = os.path.abspath(directory)
    # The path is reported in the JSON answer, which holds UTF-8 text only.
    require_text(path, "/directory")
    created = created_at or now()
    run = run_id or "run-" + file_digest(f"{path}\n{created}\n{objective}".encode())[7:19]
    manifest = new_manifest(run_id=run, created_at=created, objective=objective, profile=profile,
                            questions=questions)
    issues: list[Issue] = []
    if not MANIFEST_SHAPE.check(Sink(issues, MANIFEST_FILE), manifest):
        first = issues[0]
        where = next((arg + first.pointer[len(field):] for field, arg in _INIT_FIELDS
                      if first.pointer.startswith(field)), first.pointer)
        raise UsageError(f"{where[1:]}: {first.message}", code="invalid_argument", pointer=where)
    ledger_bytes = json_file_bytes(new_ledger(run))
    manifest_bytes = json_file_bytes(manifest)
    if not os.path.lexists(path):
        try:
            os.makedirs(path)
        except OSError as exc:
            raise AssayError(f"cannot create the packet directory {path[:200]}: {exc.strerror}",
                             code="packet_unwritable", pointer="/directory",
                             action="Choose a directory that can be created here.") from None
    root = PacketRoot(path)
    root.open_check()
    if root.exists(MANIFEST_FILE):
        raise AssayError(f"{path} already holds a packet", code="packet_exists",
                         action="Use another directory; a packet is never re-initialised.")
    root.make_layout()
    root.write(LEDGER_FILE, ledger_bytes)
    root.write(MANIFEST_FILE, manifest_bytes)
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
    if not EXECUTION_SHAPE.check(Sink(issues, "execution"), execution):
        first = issues[0]
        raise AssayError(f"invalid execution envelope: {first.message}", code="invalid_execution",
                         pointer=first.pointer,
                         details={"issues": [i.to_dict() for i in issues]})
    if approved_at is not None and not INSTANT.ok(approved_at):
        require_text(approved_at, "/approved_at")
        raise UsageError(f"approved_at {approved_at[:60]!r} is not a UTC RFC 3339 instant "
                         "(YYYY-MM-DDTHH:MM:SS[.fff]Z)", code="invalid_argument",
                         pointer="/approved_at")
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
    root = PacketRoot(directory)
    read_canonical(root, MANIFEST_FILE)  # refuses a recon-layout packet before preflight
    outcome = validate(directory)
    if not outcome.valid:
        raise AssayError(
            f"the packet fails preflight with {len(outcome.issues)} issue(s); no brief written",
            code="packet_preflight_failed",
            details={"issues": [i.to_dict() for i in outcome.issues[:200]]},
            action="Run 'assay packet validate DIR' and fix every issue first.",
        )
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
        "kind": "assay.review-brief",
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


def close(directory: str | os.PathLike[str], *, status: str, reason: str | None = None,
          mode: str | None = None) -> dict[str, Any]:
    """End a running run as ``complete``, ``partial`` or ``failed``.

    ``failed`` also writes ``raw/failure.json`` (``reason`` required). For
    ``complete`` and ``partial`` the packet is validated with the new status;
    a status the validator does not derive as honest (or any other issue) is
    refused and the manifest is restored byte for byte, so a refused close
    writes nothing. Returns the validation issues (empty on success).
    """
    from assay.packet.validate import validate

    if status not in ("complete", "partial", "failed"):
        raise UsageError("status must be complete, partial or failed", code="invalid_argument",
                         pointer="/status")
    if reason is not None:
        require_text(reason, "/reason")
    if mode is not None and mode not in WAVE_MODES:
        raise UsageError(f"mode must be one of {', '.join(WAVE_MODES)}", code="invalid_argument",
                         pointer="/mode")
    root = PacketRoot(directory)
    root.open_check()
    manifest = read_canonical(root, MANIFEST_FILE)
    original = root.read(MANIFEST_FILE)
    assert isinstance(original, bytes)
    if manifest.get("status") != "running":
        raise AssayError(f"only a running run can be closed (it is {manifest.get('status')!r})",
                         code="packet_not_running")
    if status == "failed":
        if not reason:
            raise UsageError("a failed run records its reason", code="missing_argument",
                             pointer="/reason")
        failure = {"kind": "assay.run-failure", "schemaVersion": 1,
                   "runId": manifest["runId"], "failedAt": now(), "reason": reason, "mode": mode}
        root.write("raw/failure.json", json_file_bytes(failure), exclusive=True)
    manifest["status"] = status
    root.write(MANIFEST_FILE, json_file_bytes(manifest))
    outcome = validate(directory)
    if status != "failed" and not outcome.valid:
        root.write(MANIFEST_FILE, original)
        raise AssayError(
            f"closing as {status} leaves the packet invalid ({outcome.issues[0].code}); "
            "nothing changed",
            code="packet_close_refused",
            details={"issues": [i.to_dict() for i in outcome.issues[:200]]},
            action="Record the missing outcomes as gaps, or close as partial or failed.",
        )
    return {"status": status, "valid": outcome.valid,
            "issues": [i.to_dict() for i in outcome.issues]}


def add_source(directory: str | os.PathLike[str], *, source_id: str, file: str,
               title: str | None = None) -> dict[str, Any]:
    """Capture ``file`` as document source ``source_id`` under ``raw/sources/``.

    The capture is copied byte for byte and its digest recorded, so every
    evidence locator into it can be reopened and checked. Sources are frozen
    once a review brief exists (briefs project them): ``sources_frozen``.
    """
    from assay.packet.assay.manifest import ID

    issues: list[Issue] = []
    if not ID(Sink(issues, "source"), source_id, "/source_id"):
        raise UsageError(f"invalid source id: {issues[0].message}", code="invalid_argument",
                         pointer="/source_id")
    if title is not None:
        require_text(title, "/title")
    root = PacketRoot(directory)
    root.open_check()
    manifest = read_canonical(root, MANIFEST_FILE)
    if any(str(a.get("path", "")).startswith("reviews/briefs/") for a in manifest["artifacts"]):
        raise AssayError("sources are frozen once a review brief exists", code="sources_frozen")
    if any(s.get("sourceId") == source_id for s in manifest["sources"]):
        raise AssayError(f"source {source_id!r} already exists", code="source_exists")
    from assay.inputs import read_regular

    # A path the caller names: a symlink to a regular file is followed, but a
    # FIFO, device or directory is refused without blocking on it.
    data = read_regular(file, limit=MAX_SOURCE_BYTES, follow_symlinks=True,
                        label="the source file", where="/file")
    path = f"raw/sources/{source_id}.txt"
    source = {"sourceId": source_id, "type": "document", "title": title or source_id,
              "capture": {"path": path, "digest": file_digest(data)}}
    manifest["sources"].append(source)
    manifest_bytes = json_file_bytes(manifest)
    root.write(path, data, exclusive=True)
    root.write(MANIFEST_FILE, manifest_bytes)
    return {"source": source}
