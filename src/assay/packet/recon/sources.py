"""Sources of a recon-layout packet: eligibility, gaps, and reopening every evidence record.

An evidence record counts only when its source is available and pinned and
it reads, now, exactly as recorded: the locator names the source's identity
and observation, the source's bytes hash to the pinned digest, and the
located text (lines, a whole capture, or a field of a connected resource)
contains the display excerpt, or reproduces a redacted-exact one. Captures
are read from the packet; ``file`` and ``repository`` sources only inside the
configured source roots, with no symlink below the root. Imports the base
modules and the packet modules.
"""

from __future__ import annotations

import json
import os
import stat
from typing import Any

from assay.canonical import fingerprint
from assay.inputs import InputRefused, read_regular
from assay.packet.layout import (
    LEDGER_FILE,
    MAX_PACKET_FILE_BYTES,
    PathProblem,
    file_digest,
)
from assay.packet.recon.contract import (
    is_digest,
    is_int,
    items,
)
from assay.packet.recon.run import (
    ReconRun,
    js_string,
    line_excerpt,
    recon_redact,
)

__all__ = ["evidence_records", "source_gaps"]


def claims_by_source(r: ReconRun) -> dict[str, set[Any]]:
    """Which claims cite each source, through their evidence links."""
    assert r.L is not None
    source_of = {e.get("id"): e.get("sourceId") for e in r.L["evidence"]
                 if type(e) is dict}
    out: dict[str, set[Any]] = {}
    for claim in r.L["claims"]:
        if type(claim) is not dict:
            continue
        for link in items(claim.get("evidence")):
            sid = source_of.get(link.get("evidenceId")) if type(link) is dict else None
            if isinstance(sid, str):
                out.setdefault(sid, set()).add(claim.get("id"))
    return out


def source_gaps(r: ReconRun) -> None:
    """A source that is not available and pinned needs a material gap naming it and every
    claim citing it, a partial run, and no supported or verified claim resting on it."""
    assert r.L is not None
    affected_by = claims_by_source(r)
    status = {c.get("id"): c.get("status") for c in r.L["claims"] if type(c) is dict}
    for source in r.m["sources"]:
        if type(source) is not dict or (source.get("available") is True
                                        and source.get("validationState") == "pinned"):
            continue
        sid = source.get("id")
        affected = affected_by.get(sid, set()) if isinstance(sid, str) else set()
        gap = next((g for g in r.m["gaps"] if type(g) is dict
                    and sid in items(g.get("sourceIds"))
                    and affected <= {x for x in items(g.get("claimIds"))
                                     if isinstance(x, str)}), None)
        if gap is None:
            r.at_source("MISSING_SOURCE_GAP", sid,
                        f"ineligible source {sid} needs a gap naming every affected claim")
        elif gap.get("material") is not True or r.m["run"].get("status") != "partial":
            r.at_source("SOURCE_GAP_REQUIRES_MATERIAL_PARTIAL", sid,
                        f"ineligible source {sid} needs a material gap and a partial run")
        if any(status.get(cid) in ("supported", "verified") for cid in affected):
            r.at_source("CLAIM_ASSURANCE_INVALID", sid,
                        f"ineligible source {sid} cannot support assured claims")


def evidence_records(r: ReconRun) -> None:
    """Reopen every evidence record; those that read exactly as recorded become exact."""
    assert r.L is not None
    sources = {s.get("id"): s for s in r.m["sources"] if type(s) is dict}
    citing_by: dict[Any, list[dict[str, Any]]] = {}
    for claim in r.L["claims"]:
        if type(claim) is dict:
            for eid in {x.get("evidenceId") for x in items(claim.get("evidence"))
                        if type(x) is dict and isinstance(x.get("evidenceId"), str)}:
                citing_by.setdefault(eid, []).append(claim)
    for record in r.L["evidence"]:
        if type(record) is not dict:
            continue
        source = sources.get(record.get("sourceId"))
        if source is None:
            r.at_evidence("MISSING_SOURCE", record.get("id"),
                          f"unknown source {str(record.get('sourceId'))[:80]}")
            continue
        citing = citing_by.get(record.get("id"), [])
        audit = any(type(g) is dict and source.get("id") in items(g.get("sourceIds"))
                    and all(c.get("id") in items(g.get("claimIds")) for c in citing)
                    and all(c.get("status") not in ("supported", "verified")
                            for c in citing)
                    for g in r.m["gaps"])
        if reopen(r, source, record, audit):
            r.s.exact.add(record["id"])


def has_provenance(source: dict[str, Any]) -> bool:
    """Whether the source records what it takes to reopen it (by kind)."""
    kind = source.get("kind")
    if kind == "repository":
        return (type(source.get("root")) is str and type(source.get("revision")) is str
                and type(source.get("contentHashes")) is dict)
    if kind == "file":
        return type(source.get("path")) is str and is_digest(source.get("contentHash"))
    if kind == "url":
        state = source.get("validatorState")
        return type(source.get("url")) is str and (
            (type(source.get("capturePath")) is str and is_digest(source.get("captureDigest")))
            or (type(state) is dict and type(state.get("capturePath")) is str
                and is_digest(state.get("captureDigest"))
                and (type(state.get("etag")) is str
                     or type(state.get("lastModified")) is str)))
    if kind == "command-output":
        return (type(source.get("argv")) is list and type(source.get("cwd")) is str
                and is_int(source.get("exitStatus"))
                and type(source.get("outputPath")) is str
                and is_digest(source.get("outputDigest"))
                and type(source.get("environmentNames")) is list)
    if kind == "connected-resource":
        return (type(source.get("system")) is str and type(source.get("resourceId")) is str
                and (type(source.get("resourceVersion")) is str
                     or type(source.get("retrievalToken")) is str)
                and type(source.get("capturePath")) is str
                and is_digest(source.get("captureDigest")))
    return False


def read_outside(r: ReconRun, path: str, eid: Any, base: str | None = None) -> bytes | None:
    """A ``file`` or ``repository`` source file, only inside a configured source root.

    No component below the root may be a symlink (``SYMLINK_ESCAPE``);
    the file is a bounded regular file opened without following links.
    """
    target = os.path.normpath(path)
    if base is not None and not (target + os.sep).startswith(os.path.normpath(base) + os.sep):
        r.at_evidence("PATH_ESCAPE", eid, "the repository locator leaves its root")
        return None
    root = next((r for r in r.source_roots if target.startswith(r + os.sep)), None)
    if not os.path.isabs(target) or root is None:
        r.at_evidence("SOURCE_UNAVAILABLE", eid, "the source lies outside every "
                      "configured source root (packet validate --source-root)")
        return None
    step = root
    for part in os.path.relpath(target, root).split(os.sep)[:-1]:
        step = os.path.join(step, part)
        try:
            if stat.S_ISLNK(os.lstat(step).st_mode):
                r.at_evidence("SYMLINK_ESCAPE", eid, "the source path holds a symlink")
                return None
        except OSError:
            break
    if target in r.s.outside:
        return r.s.outside[target]
    try:
        data = read_regular(target, limit=MAX_PACKET_FILE_BYTES, label="the source")
        r.s.outside[target] = data
        return data
    except InputRefused as refused:
        code = {"symlink": "SYMLINK_ESCAPE", "not_regular": "NOT_REGULAR_FILE",
                "too_large": "FILE_TOO_LARGE"}.get(refused.reason, "SOURCE_UNAVAILABLE")
        r.at_evidence(code, eid, f"the pinned source could not be reopened: "
                      f"{refused.message}")
        return None


def read_capture(r: ReconRun, path: Any, eid: Any) -> bytes | None:
    """A capture inside the packet, or None (reported at the evidence)."""
    rel = r.rel(path)
    if rel is None:
        r.at_evidence("SOURCE_UNAVAILABLE", eid, "the capture path leaves the packet")
        return None
    data = r.read(rel)
    if isinstance(data, PathProblem):
        r.at_evidence(r.problem_code(data, "SOURCE_UNAVAILABLE"), eid,
                      f"the pinned source could not be reopened: {data.message}")
        return None
    return data


def reopen(r: ReconRun, source: dict[str, Any], record: dict[str, Any], audit: bool) -> bool:
    """Whether ``record`` reads exactly from its source now (the recon tool's reopening)."""
    eid = record.get("id")
    if source.get("available") is not True or source.get("validationState") != "pinned":
        if not audit:
            r.at_source("INELIGIBLE_SOURCE_STATE", source.get("id"),
                        f"source {source.get('id')} is not available and pinned")
        return False
    if not has_provenance(source):
        r.at_source("INSUFFICIENT_PROVENANCE", source.get("id"),
                    f"source {source.get('id')} lacks reopenable provenance")
        return False
    locator = record.get("locator")
    kind = source.get("kind")
    if type(locator) is not dict or locator.get("kind") != kind:
        r.at_evidence("INVALID_LOCATOR", eid, "the locator kind is not its source's")
        return False
    validation = record.get("locatorValidation")
    declared = validation.get("status") if type(validation) is dict else None
    if declared not in ("exact", "redacted-exact"):
        return False
    if record.get("observedAt") != source.get("observedAt"):
        r.at_evidence("SOURCE_VERSION_MISMATCH", eid,
                      "the evidence observation time is not the pinned source's")
        return False
    mismatch = identity(r, kind, source, locator)
    if mismatch:
        r.at_evidence(mismatch[0], eid, mismatch[1])
        return False
    data, expected = source_bytes(r, kind, source, locator, eid)
    if data is None:
        return False
    digest, text, lines = text_of(r, data)
    if digest != expected:
        r.at_evidence("SOURCE_DRIFT", eid, "the pinned source's digest changed")
        return False
    return located(r, kind, locator, record, text, lines, declared)


def text_of(r: ReconRun, data: bytes) -> tuple[str, str, list[str]]:
    """A source's digest, text and lines, computed once per source read."""
    known = r.s.texts.get(id(data))
    if known is None or known[0] is not data:
        text = data.decode("utf-8", "replace")
        known = (data, file_digest(data), text, text.replace("\r\n", "\n").split("\n"))
        r.s.texts[id(data)] = known
    return known[1], known[2], known[3]


def identity(r: ReconRun, kind: Any, source: dict[str, Any], locator: dict[str, Any]
             ) -> tuple[str, str] | None:
    """The locator must name its source's identity and observation, as bound."""
    checks: list[tuple[bool, str, str]] = []
    if kind == "repository":
        checks = [(locator.get("revision") != source.get("revision"),
                   "SOURCE_VERSION_MISMATCH", "the repository revision changed")]
    elif kind == "file":
        checks = [(type(locator.get("path")) is not str
                   or os.path.normpath(str(locator.get("path")))
                   != os.path.normpath(str(source.get("path"))),
                   "SOURCE_IDENTITY_MISMATCH", "the file locator is not its source's path")]
    elif kind == "url":
        state = source.get("validatorState")
        token = fingerprint({"etag": state.get("etag"), "lastModified": state.get("lastModified")}
                        ) if type(state) is dict else None
        checks = [(locator.get("url") != source.get("url"), "SOURCE_VERSION_MISMATCH",
                   "the URL identity changed"),
                  (locator.get("retrievedAt") != source.get("observedAt"),
                   "SOURCE_VERSION_MISMATCH", "the URL observation time changed"),
                  (token is not None and locator.get("validatorToken") != token,
                   "SOURCE_VERSION_MISMATCH", "the URL validator token changed")]
    elif kind == "command-output":
        checks = [(locator.get("artifactPath") != source.get("outputPath"),
                   "SOURCE_VERSION_MISMATCH", "the command artifact changed"),
                  (locator.get("commandDigest") != r.digest_once(source.get("argv")),
                   "SOURCE_VERSION_MISMATCH", "the command identity changed")]
    elif kind == "connected-resource":
        checks = [(locator.get("system") != source.get("system")
                   or locator.get("resourceId") != source.get("resourceId"),
                   "SOURCE_VERSION_MISMATCH", "the connected resource identity changed"),
                  (bool(source.get("resourceVersion"))
                   and locator.get("resourceVersion") != source.get("resourceVersion"),
                   "SOURCE_VERSION_MISMATCH", "the connected resource version changed"),
                  (bool(source.get("retrievalToken"))
                   and locator.get("retrievalToken") != source.get("retrievalToken"),
                   "SOURCE_VERSION_MISMATCH", "the retrieval token changed"),
                  (locator.get("retrievedAt") != source.get("observedAt"),
                   "SOURCE_VERSION_MISMATCH", "the resource observation time changed")]
    for failed, code, message in checks:
        if failed:
            return code, message
    return None


def source_bytes(r: ReconRun, kind: Any, source: dict[str, Any], locator: dict[str, Any],
                 eid: Any) -> tuple[bytes | None, Any]:
    """The bytes a locator of ``kind`` reads, and the digest they were pinned at."""
    if kind == "repository":
        root = str(source["root"])
        path = os.path.join(root, str(locator.get("path")))
        return (read_outside(r, path, eid, base=root),
                source["contentHashes"].get(locator.get("path")))
    if kind == "file":
        return read_outside(r, str(source["path"]), eid), source["contentHash"]
    if kind == "url":
        state = source.get("validatorState") or {}
        return (read_capture(r, source.get("capturePath", state.get("capturePath")), eid),
                source.get("captureDigest", state.get("captureDigest")))
    if kind == "command-output":
        return read_capture(r, source.get("outputPath"), eid), source.get("outputDigest")
    return read_capture(r, source.get("capturePath"), eid), source.get("captureDigest")


def located(r: ReconRun, kind: Any, locator: dict[str, Any], record: dict[str, Any], content: str,
            lines: list[str], declared: str) -> bool:
    """Whether the located text holds the record's excerpt as declared."""
    eid = record.get("id")
    observed: str | None = content
    if kind in ("repository", "file", "command-output"):
        observed = line_excerpt(content, lines, locator.get("lineStart"),
                                locator.get("lineEnd"))
        if observed is None:
            r.at_evidence("INVALID_LOCATOR_RANGE", eid, "the locator line range is invalid")
            return False
    elif kind == "connected-resource" and locator.get("fieldOrSection"):
        try:
            parsed = json.loads(content)
            observed = js_string(parsed.get(str(locator["fieldOrSection"]))
                                 if type(parsed) is dict else None)
        except (ValueError, RecursionError):
            observed = content
    assert observed is not None
    excerpt = record.get("displayExcerpt")
    if type(excerpt) is not str:
        return False
    if declared == "redacted-exact":
        redaction = record.get("redaction")
        if (type(redaction) is not dict or redaction.get("applied") is not True
                or redaction.get("originalPersisted") is not False
                or "contentHash" in record
                or recon_redact(observed).strip() != excerpt.strip()):
            r.at_evidence("INVALID_REDACTED_EVIDENCE", eid,
                          "the redacted-exact evidence does not reproduce from its source")
            return False
        return True
    if recon_redact(observed) != observed:
        r.at_evidence("UNREDACTED_SECRET", eid, "the located source text holds a "
                      "secret-shaped span: persist it redacted-exact")
        return False
    if excerpt not in observed:
        r.at_evidence("LOCATOR_EXCERPT_MISMATCH", eid,
                      "the display excerpt is not in the located source text")
        return False
    if "contentHash" in record and record["contentHash"] != fingerprint(excerpt):
        r.at_evidence("EVIDENCE_DIGEST_MISMATCH", eid, "the excerpt's digest changed")
        return False
    if excerpt != observed:
        r.advise("LOCATOR_STATE_MISMATCH", str(eid), "the excerpt is part of the located "
                 "text, not all of it: assay's own layout derives it invalid",
                 LEDGER_FILE)
    return True

