"""The one validation boundary: persisted packet files -> ValidatedRun or issues.

:func:`validate` reads every file it needs exactly once (each hashed once),
in two phases over the same bytes:

1. *Structure*: safe paths (containment, no symlinks), strict JSON, known
   kind and schemaVersion, closed shapes, artifact digests, source captures,
   unlisted (shadow) files in listed directories. If anything fails here the
   issues are returned without cross-checks, so one broken file does not
   produce a cascade of derived errors.
2. *Meaning*: run identity, the approved execution envelope and its
   fingerprint, lanes and write roots, ids and references, evidence locators
   and secret safety, claim transitions, brief bindings and projections, the
   one terminal reconciliation against the prior ledger, coverage findings
   and gap materiality, verified-claim assurance, the pass table, the
   achieved profile and the honest publication status.

All or nothing: a packet with any issue yields no run. Nothing here writes
except :func:`check_and_withdraw`, which removes ``packet.md`` from a packet
that is not publishable. Imports the base modules and the packet modules.
"""

from __future__ import annotations

import gc
import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from assay.canonical import fingerprint, parse
from assay.errors import AssayError
from assay.packet.layout import (
    CANONICAL_FILES,
    FAILURE_FILE,
    LEDGER_FILE,
    LISTED_DIRS,
    MANAGED_DIRS,
    MANIFEST_FILE,
    RENDER_FILE,
    PacketRoot,
    PathProblem,
    check_relative_path,
    file_digest,
    is_under,
)
from assay.packet.ledger_file import LEDGER_SHAPE
from assay.packet.manifest import ID, MANIFEST_SHAPE, TEXT, approval_fingerprint
from assay.packet.model import (
    CAPS,
    KINDS,
    PROFILE_PASSES,
    PROFILES,
    REVIEW_WAVE,
    TRANSITIONS,
    WAVE_MODES,
    Artifact,
    Evidence,
    Gap,
    Issue,
    PassOutcome,
    Review,
    Source,
    ValidatedRun,
    Validation,
    kind_name,
)
from assay.packet.recon_contract import is_recon_layout
from assay.packet.redaction import REDACTION_MARKER, find_secret, find_secrets, matches_redacted
from assay.packet.review_checks import Doc, ReviewChecks, json_pointer
from assay.packet.reviews import BRIEF_SHAPE, DOSSIER_SHAPE, RESULT_SHAPE
from assay.packet.shape import (
    INSTANT,
    Check,
    Sink,
    enum,
    forget_matches,
    integer,
    nullable,
    obj,
    string,
)

__all__ = ["check_and_withdraw", "validate"]

FAILURE_SHAPE: Check = obj({
    "kind": string(),
    "schemaVersion": integer(),
    "runId": ID,
    "failedAt": INSTANT,
    "reason": TEXT,
    "mode": nullable(enum(*WAVE_MODES)),
})
_ARTIFACT_SHAPES = {
    "raw-dossier": DOSSIER_SHAPE,
    "review-brief": BRIEF_SHAPE,
    "review-result": RESULT_SHAPE,
    "claim-ledger": LEDGER_SHAPE,
}
_OUTCOME_GAPS = ("PASS_FAILED", "PASS_OMITTED")
# A listed artifact read and parsed: (index, path, digest, kind suffix, document
# or None when it could not be read).
Pending = tuple[int, str, str, str, "dict[str, Any] | None"]

_GATHER_MODES = {"map": ("map",), "gather": ("gather", "redundant-gather")}
_TERMINAL = ("complete", "partial")
_NO_STATE = "(none)"


@dataclass(frozen=True, slots=True)
class _Lane:
    wave_index: int
    lane_index: int
    wave_id: str
    mode: str
    write_root: str
    conditional: bool


class _Compiler(ReviewChecks):
    """One compile pass over one packet directory. Use once."""

    def __init__(self, root: PacketRoot) -> None:
        self.root = root
        self.issues: list[Issue] = []
        self.bytes: dict[str, bytes] = {}
        self.digests: dict[str, str] = {}
        self.docs: list[Doc] = []
        self.by_path: dict[str, Doc] = {}
        self.captures: dict[str, bytes] = {}
        self.listed: set[str] = set()
        self.capture_digests: dict[str, str] = {}
        self.screened: dict[str, str | None] = {}

    # -- helpers -------------------------------------------------------
    def add(self, code: str, path: str, pointer: str, message: str) -> None:
        self.issues.append(Issue(code, path, pointer, message))

    def sink(self, path: str) -> Sink:
        return Sink(self.issues, path)

    def read(self, path: str, ref_file: str, ref_pointer: str) -> bytes | None:
        """Read and hash ``path`` once; report problems at the reference."""
        if path in self.bytes:
            return self.bytes[path]
        got = self.root.read(path)
        if isinstance(got, PathProblem):
            self.add(got.code, ref_file, ref_pointer, got.message)
            return None
        self.bytes[path] = got
        self.digests[path] = file_digest(got)
        return got

    def load(self, path: str, data: bytes, expected: str | None) -> dict[str, Any] | None:
        try:
            doc = parse(data)
        except AssayError as err:
            self.add("INVALID_JSON", path, "", err.message)
            return None
        if type(doc) is not dict:
            self.add("INVALID_TYPE", path, "", "a packet artifact must be a JSON object")
            return None
        kind = kind_name(doc.get("kind"))
        if kind is None or (expected is not None and kind != expected):
            want = f"assay.{expected} or recon.{expected}" if expected else "a known packet kind"
            self.add("UNKNOWN_KIND", path, "/kind", f"{str(doc.get('kind'))[:60]!r} is not {want}")
            return None
        version = doc.get("schemaVersion")
        supported = KINDS[kind]
        if type(version) is not int or version != supported:
            self.add("UNKNOWN_KIND", path, "/schemaVersion",
                     f"{kind} schemaVersion {version!r} is not supported (expected {supported})")
            return None
        doc["__kind__"] = kind
        return doc

    @staticmethod
    def strip(doc: dict[str, Any]) -> dict[str, Any]:
        doc.pop("__kind__", None)
        return doc

    # -- phase 1 -------------------------------------------------------
    def structure(self) -> tuple[dict[str, Any], dict[str, Any]] | None:
        for directory in MANAGED_DIRS:
            problem = self.root.check(directory)
            if problem is not None:
                self.add(problem.code, directory, "", problem.message)
        manifest = ledger = None
        raw = self.read(MANIFEST_FILE, MANIFEST_FILE, "")
        raw_ledger = self.read(LEDGER_FILE, LEDGER_FILE, "")
        if raw is not None:
            manifest = self.load(MANIFEST_FILE, raw, "packet-manifest")
            if manifest is not None:
                self.strip(manifest)
                if not MANIFEST_SHAPE.check(self.sink(MANIFEST_FILE), manifest):
                    manifest = None
        if manifest is not None:
            self.sources(manifest)
        if raw_ledger is not None:
            ledger = self.load(LEDGER_FILE, raw_ledger, "claim-ledger")
            if ledger is not None:
                self.strip(ledger)
                if not LEDGER_SHAPE.check(self.sink(LEDGER_FILE), ledger):
                    ledger = None
        if manifest is None:
            return None
        self.register(self.artifacts(manifest))
        if manifest["status"] == "failed":
            self.failure(manifest)
        for directory in LISTED_DIRS:
            for path in self.root.listing(directory):
                if path not in self.listed:
                    self.add("UNLISTED_ARTIFACT", path, "",
                             f"{path} is in a listed directory but not in manifest artifacts")
        if ledger is None or self.issues:
            return None
        return manifest, ledger

    def artifacts(self, manifest: dict[str, Any]) -> list[Pending]:
        """Read, hash and parse every listed artifact; shapes are checked by :meth:`register`."""
        pending: list[Pending] = []
        for index, ref in enumerate(manifest["artifacts"]):
            path, ptr = ref["path"], json_pointer("artifacts", index, "path")
            problem = check_relative_path(path)
            if problem is not None:
                self.add(problem.code, MANIFEST_FILE, ptr, problem.message)
                continue
            if path in CANONICAL_FILES or path == RENDER_FILE or path == FAILURE_FILE:
                self.add("INVALID_PATH", MANIFEST_FILE, ptr,
                         f"{path} is a canonical or generated file, not an artifact")
                continue
            if is_under(path, "raw/quarantine"):
                self.add("QUARANTINED_ARTIFACT_REFERENCED", MANIFEST_FILE, ptr,
                         f"{path} is quarantined output and can never be promoted")
                continue
            if path in self.listed:
                self.add("DUPLICATE_ARTIFACT", MANIFEST_FILE, ptr, f"{path} is listed twice")
                continue
            self.listed.add(path)
            data = self.read(path, MANIFEST_FILE, ptr)
            if data is None:
                continue
            if self.digests[path] != ref["digest"]:
                self.add("DIGEST_MISMATCH", MANIFEST_FILE, json_pointer("artifacts", index, "digest"),
                         f"{path} hashes to {self.digests[path]}, not the recorded digest")
                continue
            doc = self.load(path, data, None)
            if doc is None:
                continue
            pending.append((index, path, ref["digest"], doc.pop("__kind__"), doc))
        return pending

    def register(self, pending: list[Pending]) -> None:
        """Shape-check parsed artifacts (None: could not be read) and index the good ones."""
        for index, path, digest, kind, doc in pending:
            if doc is None:
                self.by_path.setdefault(path, Doc(index, path, digest, kind, {}))
                continue
            shape = _ARTIFACT_SHAPES.get(kind)
            if shape is None:
                self.add("UNKNOWN_KIND", path, "/kind", f"a {kind} cannot be a listed artifact")
                continue
            if shape.check(self.sink(path), doc):
                entry = Doc(index, path, digest, kind, doc)
                self.docs.append(entry)
                self.by_path[path] = entry
            else:
                self.by_path.setdefault(path, Doc(index, path, digest, kind, {}))

    def sources(self, manifest: dict[str, Any]) -> None:
        for index, source in enumerate(manifest["sources"]):
            capture = source["capture"]
            if capture is None:
                continue
            path, ptr = capture["path"], json_pointer("sources", index, "capture", "path")
            problem = check_relative_path(path)
            if problem is not None:
                self.add(problem.code, MANIFEST_FILE, ptr, problem.message)
                continue
            if path in CANONICAL_FILES or is_under(path, "raw/quarantine"):
                self.add("INVALID_PATH", MANIFEST_FILE, ptr, f"{path} cannot be a source capture")
                continue
            data = self.read(path, MANIFEST_FILE, ptr)
            if data is None:
                continue
            if self.digests[path] != capture["digest"]:
                self.add("DIGEST_MISMATCH", MANIFEST_FILE,
                         json_pointer("sources", index, "capture", "digest"),
                         f"capture {path} hashes to {self.digests[path]}, not the recorded digest")
                continue
            self.captures[source["sourceId"]] = data

    def failure(self, manifest: dict[str, Any]) -> None:
        got = self.root.read(FAILURE_FILE)
        if isinstance(got, PathProblem):
            code = "FAILURE_RECORD_MISSING" if got.code == "MISSING_FILE" else got.code
            self.add(code, MANIFEST_FILE, "/status",
                     f"a failed run needs {FAILURE_FILE}: {got.message}")
            return
        doc = self.load(FAILURE_FILE, got, "run-failure")
        if doc is not None:
            self.strip(doc)
            if FAILURE_SHAPE.check(self.sink(FAILURE_FILE), doc) and doc["runId"] != manifest["runId"]:
                self.add("RUN_ID_MISMATCH", FAILURE_FILE, "/runId", "the failure is of another run")

    # -- phase 2 -------------------------------------------------------
    def meaning(self, manifest: dict[str, Any], ledger: dict[str, Any]) -> ValidatedRun | None:
        m, L = manifest, ledger
        run_id = m["runId"]
        requested = m["profile"]
        if L["runId"] != run_id:
            self.add("RUN_ID_MISMATCH", LEDGER_FILE, "/runId", "claims.json belongs to another run")
        for doc in self.docs:
            if doc.data["runId"] != run_id:
                self.add("RUN_ID_MISMATCH", doc.path, "/runId",
                         f"{doc.path} belongs to run {doc.data['runId']!r}, not {run_id!r}")

        lanes, approved = self.execution(m, requested)
        source_ids = self.source_index(m)
        gap_index = self.gap_ids(m)

        dossiers = [d for d in self.docs if d.kind == "raw-dossier"]
        briefs = {d.path: d for d in self.docs if d.kind == "review-brief"}
        results = [d for d in self.docs if d.kind == "review-result"]
        recons = [d for d in results if d.data["reviewKind"] == "reconciliation"]
        assurance = [d for d in results if d.data["reviewKind"] != "reconciliation"]
        self.screen([finding["excerpt"] for d in dossiers for finding in d.data["findings"]]
                    + [record["excerpt"] for record in L["evidence"]]
                    + [record["excerpt"] for d in assurance for record in d.data["newEvidence"]])
        writers: set[str] = set()
        for d in dossiers:
            self.lane_check(d, d.data["laneId"], "/laneId", _GATHER_MODES[d.data["mode"]], lanes,
                            approved, wave_id=d.data["waveId"])
            writers.add(d.data["laneId"])
            for k, finding in enumerate(d.data["findings"]):
                for n, sid in enumerate(finding["sourceIds"]):
                    if sid not in source_ids:
                        self.add("UNKNOWN_REFERENCE", d.path, json_pointer("findings", k, "sourceIds", n),
                                 f"source {sid!r} is not in the manifest")
                self.secret(d.path, json_pointer("findings", k, "excerpt"), finding["excerpt"])
        for d in results:
            kind = d.data["reviewKind"]
            self.lane_check(d, d.data["reviewerLane"], "/reviewerLane", (REVIEW_WAVE[kind],),
                            lanes, approved)
            writers.add(d.data["reviewerLane"])

        evidence = self.ledger(L, m, source_ids)
        prior, prior_ref_ok = self.prior(L, recons, briefs, m)
        base = prior if prior is not None else L
        base_claims = {c["claimId"] for c in base["claims"]}
        current_claims = {c["claimId"] for c in L["claims"]}
        all_claims = base_claims | current_claims
        omitted = {cid for g in m["gaps"] if g["kind"] == "REVIEW_DISPOSITION_OMITTED"
                   for cid in g["claimIds"]}
        findings: dict[str, tuple[Doc, dict[str, Any]]] = {}
        for d in assurance:
            self.assurance_result(d, briefs, base_claims, L, m, gap_index, omitted, findings)
        removed: set[str] = set()
        if recons and prior is not None and prior_ref_ok:
            removed = self.reconciliation(recons[0], prior, L, assurance, findings)
        added = current_claims - base_claims if prior is not None else None
        self.transitions(L, current_claims, removed, added)
        for g, gap in enumerate(m["gaps"]):
            for n, sid in enumerate(gap["sourceIds"]):
                if sid not in source_ids:
                    self.add("UNKNOWN_REFERENCE", MANIFEST_FILE, json_pointer("gaps", g, "sourceIds", n),
                             f"source {sid!r} is not in the manifest")
            for n, cid in enumerate(gap["claimIds"]):
                if cid not in all_claims:
                    self.add("UNKNOWN_REFERENCE", MANIFEST_FILE, json_pointer("gaps", g, "claimIds", n),
                             f"claim {cid!r} is in neither ledger")
            for n, fid in enumerate(gap["findingIds"]):
                if fid not in findings:
                    self.add("UNKNOWN_REFERENCE", MANIFEST_FILE, json_pointer("gaps", g, "findingIds", n),
                             f"coverage finding {fid!r} is in no review result")
            if gap["kind"] in _OUTCOME_GAPS and gap["mode"] is None:
                self.add("INVALID_VALUE", MANIFEST_FILE, json_pointer("gaps", g, "mode"),
                         f"a {gap['kind']} gap names the wave mode it covers")

        assured = self.claim_assurance(L, requested, assurance, findings, evidence)
        self.ineligible_evidence(L, m, evidence)

        # Pass table and achieved profile.
        complete_gather_lanes = {d.data["laneId"] for d in dossiers
                                 if d.data["mode"] == "gather" and d.data["outcome"] == "complete"}
        table: dict[str, list[str]] = {mode: [] for mode in WAVE_MODES if mode != "compile"}
        for d in dossiers:
            if d.data["outcome"] == "complete":
                table[d.data["mode"]].append(d.path)
        for d in results:
            if d.data["complete"]:
                table[REVIEW_WAVE[d.data["reviewKind"]]].append(d.path)
        if len(complete_gather_lanes) >= 2:
            table["redundant-gather"] = [d.path for d in dossiers if d.data["mode"] == "gather"
                                         and d.data["outcome"] == "complete"]
        achieved = None
        for profile in PROFILES:
            if all(table[p] for p in PROFILE_PASSES[profile]):
                achieved = profile
        if achieved is not None and PROFILES.index(achieved) > PROFILES.index(requested):
            achieved = requested
        outcome_gaps: dict[str, list[str]] = {}
        for gap in m["gaps"]:
            if gap["kind"] in _OUTCOME_GAPS and gap["material"] and gap["mode"]:
                outcome_gaps.setdefault(gap["mode"], []).append(gap["gapId"])
        passes = tuple(PassOutcome(p, bool(table[p]), tuple(table[p]),
                                   tuple(outcome_gaps.get(p, ())))
                       for p in PROFILE_PASSES[requested])
        if m["status"] in _TERMINAL:
            for outcome in passes:
                if not outcome.complete and not outcome.gap_ids:
                    self.add("MISSING_PASS_OUTCOME_EVIDENCE", MANIFEST_FILE, "/gaps",
                             f"required pass {outcome.mode!r} has no complete artifact and no "
                             "material PASS_FAILED or PASS_OMITTED gap")
            for lane_id, lane in lanes.items():
                if lane.conditional or lane.mode == "compile" or lane_id in writers:
                    continue
                if lane.mode not in outcome_gaps:
                    self.add("MISSING_LANE_OUTCOME", MANIFEST_FILE,
                             json_pointer("execution", "waves", lane.wave_index, "lanes", lane.lane_index),
                             f"approved lane {lane_id!r} wrote no artifact and no material "
                             f"PASS_FAILED or PASS_OMITTED gap names mode {lane.mode!r}")
        if requested == "thorough":
            inputs = {ref["path"] for ref in L["inputs"]}
            missing = sorted(d.path for d in dossiers if d.data["mode"] == "gather"
                             and d.data["outcome"] == "complete" and d.path not in inputs)
            if missing:
                self.add("MISSING_THOROUGH_GATHER_LEDGER_INPUT", LEDGER_FILE, "/inputs",
                         f"complete gather dossiers are not ledger inputs: {', '.join(missing)}")

        publication = None
        material = any(g["material"] for g in m["gaps"])
        if m["status"] in _TERMINAL:
            if achieved is None:
                self.add("PUBLICATION_STATUS_MISMATCH", MANIFEST_FILE, "/status",
                         "not even the quick passes are complete; the run is failed, not "
                         f"{m['status']}")
            else:
                honest = ("partial" if material or PROFILES.index(achieved)
                          < PROFILES.index(requested) else "complete")
                if m["status"] != honest:
                    why = (f"achieved {achieved} of requested {requested}, "
                           f"{'a' if material else 'no'} material gap")
                    self.add("PUBLICATION_STATUS_MISMATCH", MANIFEST_FILE, "/status",
                             f"status {m['status']!r} is not honest: {why}, so it must be {honest!r}")
                publication = m["status"]
        if self.issues:
            return None

        ex = m["execution"]
        return ValidatedRun(
            identity=fingerprint({"manifest": self.digests[MANIFEST_FILE],
                                  "ledger": self.digests[LEDGER_FILE]}),
            run_id=run_id,
            objective=m["request"]["objective"],
            questions=tuple(m["request"]["questions"]),
            status=m["status"],
            requested=requested,
            achieved=achieved,
            publication=publication,
            ledger_revision=L["revision"],
            synthesis=L["synthesis"],
            unresolved_questions=tuple(L["unresolvedQuestions"]),
            sources=tuple(
                Source(s["sourceId"], s["type"], s["title"],
                       "pinned" if s["sourceId"] in self.captures else "unpinned",
                       s.get("url") or (s["capture"] or {}).get("path", ""))
                for s in m["sources"]),
            evidence=tuple(evidence.values()),
            claims=tuple(assured),
            gaps=tuple(Gap(g["gapId"], g["kind"], g["material"], g["mode"], g["description"],
                           tuple(g["claimIds"]), tuple(g["sourceIds"]), tuple(g["findingIds"]))
                       for g in m["gaps"]),
            passes=passes,
            artifacts=tuple(Artifact(d.path, d.digest, d.kind) for d in self.docs),
            reviews=tuple(Review(d.path, d.data["reviewKind"], d.data["reviewerLane"],
                                 d.data["complete"], (d.data.get("brief") or {}).get("digest"))
                          for d in results),
            approved_at=(ex or {}).get("approval", {}).get("approvedAt") if ex else None,
            execution_fingerprint=(ex or {}).get("approval", {}).get("fingerprint") if ex else None,
        )

    def execution(self, m: dict[str, Any], requested: str) -> tuple[dict[str, _Lane], bool]:
        ex = m["execution"]
        lanes: dict[str, _Lane] = {}
        if m["status"] not in ("preparing", "awaiting-approval") and (
                ex is None or "approval" not in ex):
            self.add("EXECUTION_NOT_APPROVED", MANIFEST_FILE,
                     "/execution" if ex is None else "/execution/approval",
                     f"a {m['status']} run needs an explicitly approved execution envelope")
        if ex is None:
            return lanes, False
        approved = "approval" in ex
        if approved:
            try:
                expected = approval_fingerprint(ex)
            except AssayError as err:
                self.add("INVALID_VALUE", MANIFEST_FILE, "/execution", err.message)
                return lanes, False
            if expected != ex["approval"]["fingerprint"]:
                self.add("APPROVAL_FINGERPRINT_MISMATCH", MANIFEST_FILE,
                         "/execution/approval/fingerprint",
                         f"the execution envelope now fingerprints to {expected}; it changed "
                         "after approval")
                # The packet is already invalid; lanes stay declared so that
                # the drift is reported once instead of once per artifact.
        waves: set[str] = set()
        evidence_lanes = 0
        for w, wave in enumerate(ex["waves"]):
            if wave["waveId"] in waves:
                self.add("DUPLICATE_ID", MANIFEST_FILE, json_pointer("execution", "waves", w, "waveId"),
                         f"wave id {wave['waveId']!r} is repeated")
            waves.add(wave["waveId"])
            for n, lane in enumerate(wave["lanes"]):
                lptr = json_pointer("execution", "waves", w, "lanes", n)
                if wave["mode"] in ("gather", "redundant-gather"):
                    evidence_lanes += 1
                if lane["laneId"] in lanes:
                    self.add("DUPLICATE_ID", MANIFEST_FILE, lptr + "/laneId",
                             f"lane id {lane['laneId']!r} is repeated across the run")
                    continue
                root = lane["writeRoot"]
                problem = check_relative_path(root)
                if problem is not None:
                    self.add(problem.code, MANIFEST_FILE, lptr + "/writeRoot", problem.message)
                elif root in CANONICAL_FILES or root == RENDER_FILE or is_under(root, "raw/quarantine"):
                    self.add("INVALID_PATH", MANIFEST_FILE, lptr + "/writeRoot",
                             f"a lane may not write {root}")
                lanes[lane["laneId"]] = _Lane(w, n, wave["waveId"], wave["mode"], root,
                                              wave["conditional"])
        max_evidence, max_workers, max_concurrency = CAPS[requested]
        if evidence_lanes > max_evidence:
            self.add("EXECUTION_CAP_EXCEEDED", MANIFEST_FILE, "/execution/waves",
                     f"{evidence_lanes} evidence lanes exceed the {requested} cap of {max_evidence}")
        if len(lanes) > max_workers:
            self.add("EXECUTION_CAP_EXCEEDED", MANIFEST_FILE, "/execution/waves",
                     f"{len(lanes)} lanes exceed the {requested} cap of {max_workers}")
        if ex["maxConcurrency"] > max_concurrency:
            self.add("EXECUTION_CAP_EXCEEDED", MANIFEST_FILE, "/execution/maxConcurrency",
                     f"concurrency {ex['maxConcurrency']} exceeds the {requested} cap of "
                     f"{max_concurrency}")
        return lanes, approved

    def lane_check(self, doc: Doc, lane_id: str, pointer: str, modes: tuple[str, ...],
                   lanes: dict[str, _Lane], approved: bool, *, wave_id: str | None = None) -> None:
        lane = lanes.get(lane_id) if approved else None
        if lane is None or lane.mode not in modes or (wave_id is not None and lane.wave_id != wave_id):
            why = ("no approved execution envelope" if not approved else
                   f"lane {lane_id!r} is not an approved lane of a {' or '.join(modes)} wave"
                   + (f" {wave_id!r}" if wave_id else ""))
            self.add("UNAPPROVED_LANE", doc.path, pointer, f"{doc.path}: {why}")
            return
        if not is_under(doc.path, lane.write_root):
            self.add("LANE_WRITE_PATH_VIOLATION", MANIFEST_FILE, json_pointer("artifacts", doc.index, "path"),
                     f"{doc.path} is outside lane {lane_id!r} write root {lane.write_root!r}")

    def source_index(self, m: dict[str, Any]) -> set[str]:
        seen: set[str] = set()
        for i, source in enumerate(m["sources"]):
            if source["sourceId"] in seen:
                self.add("DUPLICATE_ID", MANIFEST_FILE, json_pointer("sources", i, "sourceId"),
                         f"source id {source['sourceId']!r} is repeated")
            seen.add(source["sourceId"])
        return seen

    def gap_ids(self, m: dict[str, Any]) -> dict[str, int]:
        index: dict[str, int] = {}
        for g, gap in enumerate(m["gaps"]):
            if gap["gapId"] in index:
                self.add("DUPLICATE_ID", MANIFEST_FILE, json_pointer("gaps", g, "gapId"),
                         f"gap id {gap['gapId']!r} is repeated")
            index.setdefault(gap["gapId"], g)
        return index

    def ineligible_evidence(self, L: dict[str, Any], m: dict[str, Any],
                            evidence: dict[str, Evidence]) -> None:
        """Stale or invalid evidence a claim still cites needs a material gap and weak claims.

        The gap names the evidence's source and every claim citing it, and is
        material (a caller cannot declare it otherwise); each citing claim
        stays below ``supported``.
        """
        citing: dict[str, list[int]] = {}
        for i, claim in enumerate(L["claims"]):
            for link in claim["evidence"]:
                citing.setdefault(link["evidenceId"], []).append(i)
        gaps = list(enumerate(m["gaps"]))
        weak = ("provisional", "contested", "unresolved", "unsupported")
        flagged: set[int] = set()
        for i, record in enumerate(L["evidence"]):
            found = evidence.get(record["evidenceId"])
            if found is None or found.eligible or record["evidenceId"] not in citing:
                continue
            claims = {L["claims"][c]["claimId"] for c in citing[record["evidenceId"]]}
            covering = [(g, gap) for g, gap in gaps if record["sourceId"] in gap["sourceIds"]
                        and claims <= set(gap["claimIds"])]
            if not covering:
                self.add("MISSING_SOURCE_GAP", LEDGER_FILE, json_pointer("evidence", i),
                         f"evidence {record['evidenceId']!r} is {found.state}; a material gap "
                         f"must name source {record['sourceId']!r} and claims "
                         f"{', '.join(sorted(claims))}")
            for g, gap in covering:
                if not gap["material"]:
                    self.add("GAP_MATERIALITY_DOWNGRADED", MANIFEST_FILE,
                             json_pointer("gaps", g, "material"),
                             f"gap {gap['gapId']!r} covers {found.state} evidence, which is "
                             "always material")
            for c in citing[record["evidenceId"]]:
                if L["claims"][c]["state"] not in weak and c not in flagged:
                    flagged.add(c)
                    self.add("INELIGIBLE_EVIDENCE_ASSURANCE_EXCEEDED", LEDGER_FILE,
                             json_pointer("claims", c, "state"),
                             f"claim {L['claims'][c]['claimId']!r} cites {found.state} evidence "
                             f"{record['evidenceId']!r} and must stay below supported")

    def screen(self, texts: list[str]) -> None:
        """Scan ``texts`` for secrets in batches ahead of :meth:`secret`, which reads the result."""
        self.screened.update(zip(texts, find_secrets(texts), strict=True))

    def secret(self, path: str, pointer: str, text: str) -> bool:
        found = self.screened[text] if text in self.screened else find_secret(text)
        if found is not None:
            self.add("SECRET_IN_EXCERPT", path, pointer,
                     f"a raw secret-shaped value is persisted ({found}); redact it")
            return True
        return False

    def evidence_state(self, record: dict[str, Any], path: str, pointer: str) -> str:
        """Derive exact / redacted-exact / stale / invalid by reopening the source capture."""
        redaction = record.get("redaction")
        marked = REDACTION_MARKER in record["excerpt"]
        if redaction is not None and (not redaction["applied"] or redaction["originalPersisted"]):
            self.add("INVALID_REDACTION", path, pointer + "/redaction",
                     "redaction must be {applied: true, originalPersisted: false}")
        elif redaction is not None and not marked:
            self.add("INVALID_REDACTION", path, pointer + "/excerpt",
                     f"a redacted excerpt marks each removed secret with {REDACTION_MARKER}")
        elif redaction is None and marked:
            self.add("INVALID_REDACTION", path, pointer + "/redaction",
                     "an excerpt with redaction markers must record its redaction")
        data = self.captures.get(record["sourceId"])
        if data is None:
            return "invalid"
        if self.capture_digests[record["sourceId"]] != record["sourceDigest"]:
            return "stale"
        start, end = record["locator"]["start"], record["locator"]["end"]
        if end < start or end > len(data):
            return "invalid"
        try:
            original = data[start:end].decode("utf-8")
        except UnicodeDecodeError:
            return "invalid"
        if redaction is not None:
            return "redacted-exact" if matches_redacted(record["excerpt"], original) else "invalid"
        return "exact" if original == record["excerpt"] else "invalid"

    def ledger(self, L: dict[str, Any], m: dict[str, Any], source_ids: set[str]
               ) -> dict[str, Evidence]:
        self.capture_digests = {
            s["sourceId"]: s["capture"]["digest"] for s in m["sources"]
            if s["sourceId"] in self.captures
        }
        evidence: dict[str, Evidence] = {}
        for i, record in enumerate(L["evidence"]):
            ptr = f"/evidence/{i}"
            eid = record["evidenceId"]
            if eid in evidence:
                self.add("DUPLICATE_ID", LEDGER_FILE, ptr + "/evidenceId",
                         f"evidence id {eid!r} is repeated")
                continue
            if record["sourceId"] not in source_ids:
                self.add("UNKNOWN_REFERENCE", LEDGER_FILE, ptr + "/sourceId",
                         f"source {record['sourceId']!r} is not in the manifest")
            if self.secret(LEDGER_FILE, ptr + "/excerpt", record["excerpt"]):
                continue
            state = self.evidence_state(record, LEDGER_FILE, ptr)
            evidence[eid] = Evidence(eid, record["sourceId"], record["excerpt"], state,
                                     "redaction" in record)
        all_ids = {e["evidenceId"] for e in L["evidence"]}
        claims: dict[str, dict[str, Any]] = {}
        for i, claim in enumerate(L["claims"]):
            ptr = f"/claims/{i}"
            cid = claim["claimId"]
            if cid in claims:
                self.add("DUPLICATE_ID", LEDGER_FILE, ptr + "/claimId",
                         f"claim id {cid!r} is repeated")
                continue
            claims[cid] = claim
            linked: set[str] = set()
            for j, link in enumerate(claim["evidence"]):
                if link["evidenceId"] in linked:
                    self.add("DUPLICATE_EVIDENCE_LINK", LEDGER_FILE, json_pointer("claims", i, "evidence", j),
                             f"claim {cid!r} links evidence {link['evidenceId']!r} more than once")
                linked.add(link["evidenceId"])
                if link["evidenceId"] not in all_ids:
                    self.add("UNKNOWN_REFERENCE", LEDGER_FILE,
                             json_pointer("claims", i, "evidence", j, "evidenceId"),
                             f"evidence {link['evidenceId']!r} is not in this ledger")
        for k, ref in enumerate(L["inputs"]):
            doc = self.by_path.get(ref["path"])
            if doc is None:
                self.add("UNKNOWN_REFERENCE", LEDGER_FILE, json_pointer("inputs", k, "path"),
                         f"ledger input {ref['path']} is not a listed artifact")
            elif doc.digest != ref["digest"]:
                self.add("DIGEST_MISMATCH", LEDGER_FILE, json_pointer("inputs", k, "digest"),
                         f"ledger input {ref['path']} has another digest in the manifest")
        return evidence

    def transitions(self, L: dict[str, Any], current: set[str], removed: set[str],
                    added: set[str] | None) -> None:
        """Replay every claim's transitions from its genesis and check each step.

        A claim of revision one begins as ``provisional`` with no transition
        (the genesis is the claim itself). That exception is not reused: a
        claim added by a later revision (``added``; None when there is no
        prior ledger to tell) begins with one explicit ``from: null`` to
        ``provisional`` transition, which is illegal anywhere else.
        """
        explicit = {t["claimId"] for t in L["transitions"] if t["from"] is None}
        if L["revision"] == 1:
            explicit = set()  # each explicit genesis is reported once, below
        state: dict[str, str] = {}
        genesis: set[str] = set()
        for k, t in enumerate(L["transitions"]):
            cid, src, dst = t["claimId"], t["from"], t["to"]
            at = json_pointer("transitions", k, "from")
            if cid not in current and cid not in removed:
                self.add("UNKNOWN_REFERENCE", LEDGER_FILE, json_pointer("transitions", k, "claimId"),
                         f"transition names unknown claim {cid!r}")
                continue
            if src is None:
                if L["revision"] == 1:
                    self.add("GENESIS_REUSED", LEDGER_FILE, at,
                             f"claim {cid!r}: revision-one claims begin as provisional with no "
                             "transition; an explicit genesis is only for claims added later")
                    continue
                if cid in genesis or cid in state or (added is not None and cid not in added):
                    self.add("GENESIS_REUSED", LEDGER_FILE, at,
                             f"claim {cid!r} already has its genesis; it cannot begin again")
                    continue
                genesis.add(cid)
            else:
                now = state.get(cid, _NO_STATE if cid in explicit else "provisional")
                if now == _NO_STATE:
                    self.add("ILLEGAL_CLAIM_TRANSITION", LEDGER_FILE, at,
                             f"the first transition of added claim {cid!r} is its genesis "
                             "(from null)")
                    continue
                if src != now:
                    self.add("CLAIM_STATE_MISMATCH", LEDGER_FILE, at,
                             f"claim {cid!r} is {now!r} here, not {src!r}")
                    continue
            if dst not in TRANSITIONS[src]:
                self.add("ILLEGAL_CLAIM_TRANSITION", LEDGER_FILE, json_pointer("transitions", k, "to"),
                         f"claim {cid!r} cannot move from {src or 'genesis'!r} to {dst!r}")
                continue
            state[cid] = dst
        for i, claim in enumerate(L["claims"]):
            cid = claim["claimId"]
            if added is not None and cid in added and cid not in explicit:
                self.add("GENESIS_REUSED", LEDGER_FILE, json_pointer("claims", i, "claimId"),
                         f"claim {cid!r} was added after revision one without an explicit "
                         "genesis transition")
                continue
            now = state.get(cid, _NO_STATE if cid in explicit else "provisional")
            if now != claim["state"]:
                self.add("CLAIM_STATE_MISMATCH", LEDGER_FILE, json_pointer("claims", i, "state"),
                         f"claim {cid!r} is recorded {claim['state']!r} but its "
                         f"transitions end at {now!r}")

def _recon_manifest(root: PacketRoot) -> bytes | None:
    """The bytes of ``manifest.json`` when it is in the recon tool's layout, else None."""
    raw = root.read(MANIFEST_FILE)
    if not isinstance(raw, bytes) or b"recon.packet-manifest" not in raw:
        return None
    try:
        doc = json.loads(raw.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return None
    return raw if is_recon_layout(doc) else None


@contextmanager
def _one_validation() -> Iterator[None]:
    """Run one validation with the cyclic collector paused; forget its matched ids after.

    Parsed documents are trees of fresh containers that hold no cycles, and
    a large packet allocates hundreds of thousands of them: each collection
    would walk all that survived, which costs more than the validation's own
    checks. The collector is resumed (if it ran before) whatever happens;
    reference counting frees everything as usual meanwhile. The shape
    checks' memories of matched ids (:func:`~assay.packet.shape.string`)
    are emptied, so one packet neither stays in memory nor warms the next.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        forget_matches()
        if was_enabled:
            gc.enable()


def validate(directory: str | os.PathLike[str], *,
             source_roots: Sequence[str] = ()) -> Validation:
    """Compile the packet at ``directory`` once: a ValidatedRun, or every issue.

    A packet in the recon tool's layout is validated by that tool's rules
    (:func:`assay.packet.recon_check.validate_recon`), its ``file`` and
    ``repository`` sources reopened only inside ``source_roots``. Raises only
    for operational failures (``packet_not_found``, ``packet_unreadable``,
    ``packet_root_symlink``); an invalid packet is a :class:`Validation`
    with issues, sorted by file, pointer and code. Reads each referenced
    file once and hashes it once; writes nothing.
    """
    root = PacketRoot(directory)
    root.open_check()
    raw = _recon_manifest(root)
    if raw is not None:
        from assay.packet.recon_check import validate_recon

        with _one_validation():
            return validate_recon(root, raw, source_roots)
    compiler = _Compiler(root)
    with _one_validation():
        loaded = compiler.structure()
        run = compiler.meaning(*loaded) if loaded is not None else None
        issues = tuple(sorted(set(compiler.issues),
                              key=lambda i: (i.path, i.pointer, i.code, i.message)))
        # The parsed files go before the collector resumes: its next pass then
        # walks what the result holds, not every parsed file still alive.
        del compiler, loaded
    if issues:
        return Validation(issues=issues, run=None)
    return Validation(issues=(), run=run)


def check_and_withdraw(directory: str | os.PathLike[str], *,
                       source_roots: Sequence[str] = ()) -> tuple[Validation, bool]:
    """Validate, then withdraw ``packet.md`` unless the packet is publishable.

    Returns the validation and whether a ``packet.md`` was removed, so no
    consumer entry point from another generation survives a rejected one.
    A recon-layout packet is read in place and never written to: nothing is
    withdrawn from it.
    """
    outcome = validate(directory, source_roots=source_roots)
    withdrawn = False
    if outcome.layout == "assay" and not (outcome.valid and outcome.run is not None
                                          and outcome.run.publishable):
        withdrawn = PacketRoot(directory).remove(RENDER_FILE)
    return outcome, withdrawn
