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

import os
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
    Claim,
    Evidence,
    Gap,
    Issue,
    Link,
    PassOutcome,
    Review,
    Source,
    ValidatedRun,
    Validation,
    kind_name,
)
from assay.packet.redaction import REDACTION_MARKER, find_secret, matches_redacted
from assay.packet.reviews import BRIEF_SHAPE, DOSSIER_SHAPE, RESULT_SHAPE, project
from assay.packet.shape import INSTANT, Check, Sink, enum, integer, nullable, obj, string

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
_GATHER_MODES = {"map": ("map",), "gather": ("gather", "redundant-gather")}
_TERMINAL = ("complete", "partial")
_NO_STATE = "(none)"


@dataclass(slots=True)
class _Doc:
    """One listed artifact during compilation (mutable scratch, never escapes)."""

    index: int
    path: str
    digest: str
    kind: str
    data: dict[str, Any]


@dataclass(frozen=True, slots=True)
class _Lane:
    wave_index: int
    lane_index: int
    wave_id: str
    mode: str
    write_root: str
    conditional: bool


def _ptr(*parts: str | int) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _same(a: Any, b: Any) -> bool:
    # Both sides have passed a closed shape (or, for brief projections, the
    # expected side holds only strings, lists, objects and null), so Python
    # equality cannot confuse true with 1; and 1 == 1.0 is also canonically
    # equal. That makes ``==`` exactly canonical equality here, at C speed.
    return bool(a == b)


class _Compiler:
    """One compile pass over one packet directory. Use once."""

    def __init__(self, root: PacketRoot) -> None:
        self.root = root
        self.issues: list[Issue] = []
        self.bytes: dict[str, bytes] = {}
        self.digests: dict[str, str] = {}
        self.docs: list[_Doc] = []
        self.by_path: dict[str, _Doc] = {}
        self.captures: dict[str, bytes] = {}
        self.listed: set[str] = set()
        self.capture_digests: dict[str, str] = {}

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
        if type(version) is not int or version != KINDS[kind]:
            self.add("UNKNOWN_KIND", path, "/schemaVersion",
                     f"{kind} schemaVersion {version!r} is not supported (expected {KINDS[kind]})")
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
        if raw is not None:
            manifest = self.load(MANIFEST_FILE, raw, "packet-manifest")
            if manifest is not None:
                self.strip(manifest)
                if not MANIFEST_SHAPE(self.sink(MANIFEST_FILE), manifest, ""):
                    manifest = None
        raw = self.read(LEDGER_FILE, LEDGER_FILE, "")
        if raw is not None:
            ledger = self.load(LEDGER_FILE, raw, "claim-ledger")
            if ledger is not None:
                self.strip(ledger)
                if not LEDGER_SHAPE(self.sink(LEDGER_FILE), ledger, ""):
                    ledger = None
        if manifest is None:
            return None
        self.artifacts(manifest)
        self.sources(manifest)
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

    def artifacts(self, manifest: dict[str, Any]) -> None:
        for index, ref in enumerate(manifest["artifacts"]):
            path, ptr = ref["path"], _ptr("artifacts", index, "path")
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
                self.add("DIGEST_MISMATCH", MANIFEST_FILE, _ptr("artifacts", index, "digest"),
                         f"{path} hashes to {self.digests[path]}, not the recorded digest")
                continue
            doc = self.load(path, data, None)
            if doc is None:
                continue
            kind = doc.pop("__kind__")
            shape = _ARTIFACT_SHAPES.get(kind)
            if shape is None:
                self.add("UNKNOWN_KIND", path, "/kind", f"a {kind} cannot be a listed artifact")
                continue
            if shape(self.sink(path), doc, ""):
                entry = _Doc(index, path, ref["digest"], kind, doc)
                self.docs.append(entry)
                self.by_path[path] = entry
            else:
                self.by_path.setdefault(path, _Doc(index, path, ref["digest"], kind, {}))

    def sources(self, manifest: dict[str, Any]) -> None:
        for index, source in enumerate(manifest["sources"]):
            capture = source["capture"]
            if capture is None:
                continue
            path, ptr = capture["path"], _ptr("sources", index, "capture", "path")
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
                         _ptr("sources", index, "capture", "digest"),
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
            if FAILURE_SHAPE(self.sink(FAILURE_FILE), doc, "") and doc["runId"] != manifest["runId"]:
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
        writers: set[str] = set()
        for d in dossiers:
            self.lane_check(d, d.data["laneId"], "/laneId", _GATHER_MODES[d.data["mode"]], lanes,
                            approved, wave_id=d.data["waveId"])
            writers.add(d.data["laneId"])
            for k, finding in enumerate(d.data["findings"]):
                for n, sid in enumerate(finding["sourceIds"]):
                    if sid not in source_ids:
                        self.add("UNKNOWN_REFERENCE", d.path, _ptr("findings", k, "sourceIds", n),
                                 f"source {sid!r} is not in the manifest")
                self.secret(d.path, _ptr("findings", k, "excerpt"), finding["excerpt"])
        for d in results:
            kind = d.data["reviewKind"]
            self.lane_check(d, d.data["reviewerLane"], "/reviewerLane", (REVIEW_WAVE[kind],),
                            lanes, approved)
            writers.add(d.data["reviewerLane"])

        evidence, claims = self.ledger(L, m, source_ids)
        prior, prior_ref_ok = self.prior(L, recons, briefs, m)
        base = prior if prior is not None else L
        base_claims = {c["claimId"] for c in base["claims"]}
        current_claims = {c["claimId"] for c in L["claims"]}
        all_claims = base_claims | current_claims
        omitted = {cid for g in m["gaps"] if g["kind"] == "REVIEW_DISPOSITION_OMITTED"
                   for cid in g["claimIds"]}
        findings: dict[str, tuple[_Doc, dict[str, Any]]] = {}
        for d in assurance:
            self.assurance_result(d, briefs, base_claims, L, m, gap_index, omitted, findings)
        removed: set[str] = set()
        if recons and prior is not None and prior_ref_ok:
            removed = self.reconciliation(recons[0], prior, L, assurance, findings)
        self.transitions(L, current_claims, removed)
        for g, gap in enumerate(m["gaps"]):
            for n, sid in enumerate(gap["sourceIds"]):
                if sid not in source_ids:
                    self.add("UNKNOWN_REFERENCE", MANIFEST_FILE, _ptr("gaps", g, "sourceIds", n),
                             f"source {sid!r} is not in the manifest")
            for n, cid in enumerate(gap["claimIds"]):
                if cid not in all_claims:
                    self.add("UNKNOWN_REFERENCE", MANIFEST_FILE, _ptr("gaps", g, "claimIds", n),
                             f"claim {cid!r} is in neither ledger")
            for n, fid in enumerate(gap["findingIds"]):
                if fid not in findings:
                    self.add("UNKNOWN_REFERENCE", MANIFEST_FILE, _ptr("gaps", g, "findingIds", n),
                             f"coverage finding {fid!r} is in no review result")
            if gap["kind"] in _OUTCOME_GAPS and gap["mode"] is None:
                self.add("INVALID_VALUE", MANIFEST_FILE, _ptr("gaps", g, "mode"),
                         f"a {gap['kind']} gap names the wave mode it covers")

        assured = self.claim_assurance(L, requested, assurance, findings, evidence)

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
                             _ptr("execution", "waves", lane.wave_index, "lanes", lane.lane_index),
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
        if m["status"] not in ("preparing", "awaiting-approval"):
            if ex is None or "approval" not in ex:
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
                self.add("DUPLICATE_ID", MANIFEST_FILE, _ptr("execution", "waves", w, "waveId"),
                         f"wave id {wave['waveId']!r} is repeated")
            waves.add(wave["waveId"])
            for n, lane in enumerate(wave["lanes"]):
                lptr = _ptr("execution", "waves", w, "lanes", n)
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

    def lane_check(self, doc: _Doc, lane_id: str, pointer: str, modes: tuple[str, ...],
                   lanes: dict[str, _Lane], approved: bool, *, wave_id: str | None = None) -> None:
        lane = lanes.get(lane_id) if approved else None
        if lane is None or lane.mode not in modes or (wave_id is not None and lane.wave_id != wave_id):
            why = ("no approved execution envelope" if not approved else
                   f"lane {lane_id!r} is not an approved lane of a {' or '.join(modes)} wave"
                   + (f" {wave_id!r}" if wave_id else ""))
            self.add("UNAPPROVED_LANE", doc.path, pointer, f"{doc.path}: {why}")
            return
        if not is_under(doc.path, lane.write_root):
            self.add("LANE_WRITE_PATH_VIOLATION", MANIFEST_FILE, _ptr("artifacts", doc.index, "path"),
                     f"{doc.path} is outside lane {lane_id!r} write root {lane.write_root!r}")

    def source_index(self, m: dict[str, Any]) -> set[str]:
        seen: set[str] = set()
        for i, source in enumerate(m["sources"]):
            if source["sourceId"] in seen:
                self.add("DUPLICATE_ID", MANIFEST_FILE, _ptr("sources", i, "sourceId"),
                         f"source id {source['sourceId']!r} is repeated")
            seen.add(source["sourceId"])
        return seen

    def gap_ids(self, m: dict[str, Any]) -> dict[str, int]:
        index: dict[str, int] = {}
        for g, gap in enumerate(m["gaps"]):
            if gap["gapId"] in index:
                self.add("DUPLICATE_ID", MANIFEST_FILE, _ptr("gaps", g, "gapId"),
                         f"gap id {gap['gapId']!r} is repeated")
            index.setdefault(gap["gapId"], g)
        return index

    def secret(self, path: str, pointer: str, text: str) -> bool:
        found = find_secret(text)
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
               ) -> tuple[dict[str, Evidence], dict[str, dict[str, Any]]]:
        self.capture_digests = {
            s["sourceId"]: s["capture"]["digest"] for s in m["sources"]
            if s["sourceId"] in self.captures
        }
        evidence: dict[str, Evidence] = {}
        for i, record in enumerate(L["evidence"]):
            ptr = _ptr("evidence", i)
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
            ptr = _ptr("claims", i)
            cid = claim["claimId"]
            if cid in claims:
                self.add("DUPLICATE_ID", LEDGER_FILE, ptr + "/claimId",
                         f"claim id {cid!r} is repeated")
                continue
            claims[cid] = claim
            linked: set[str] = set()
            for j, link in enumerate(claim["evidence"]):
                if link["evidenceId"] in linked:
                    self.add("DUPLICATE_EVIDENCE_LINK", LEDGER_FILE, _ptr("claims", i, "evidence", j),
                             f"claim {cid!r} links evidence {link['evidenceId']!r} more than once")
                linked.add(link["evidenceId"])
                if link["evidenceId"] not in all_ids:
                    self.add("UNKNOWN_REFERENCE", LEDGER_FILE,
                             _ptr("claims", i, "evidence", j, "evidenceId"),
                             f"evidence {link['evidenceId']!r} is not in this ledger")
        for k, ref in enumerate(L["inputs"]):
            doc = self.by_path.get(ref["path"])
            if doc is None:
                self.add("UNKNOWN_REFERENCE", LEDGER_FILE, _ptr("inputs", k, "path"),
                         f"ledger input {ref['path']} is not a listed artifact")
            elif doc.digest != ref["digest"]:
                self.add("DIGEST_MISMATCH", LEDGER_FILE, _ptr("inputs", k, "digest"),
                         f"ledger input {ref['path']} has another digest in the manifest")
        return evidence, claims

    def transitions(self, L: dict[str, Any], current: set[str], removed: set[str]) -> None:
        state: dict[str, str] = {}
        genesis: set[str] = set()
        for k, t in enumerate(L["transitions"]):
            cid, src, dst = t["claimId"], t["from"], t["to"]
            if cid not in current and cid not in removed:
                self.add("UNKNOWN_REFERENCE", LEDGER_FILE, _ptr("transitions", k, "claimId"),
                         f"transition names unknown claim {cid!r}")
                continue
            now = state.get(cid, _NO_STATE)
            if src is None:
                if cid in genesis:
                    self.add("GENESIS_REUSED", LEDGER_FILE, _ptr("transitions", k, "from"),
                             f"claim {cid!r} already had its one genesis transition")
                    continue
                genesis.add(cid)
            elif now == _NO_STATE:
                self.add("ILLEGAL_CLAIM_TRANSITION", LEDGER_FILE, _ptr("transitions", k, "from"),
                         f"the first transition of claim {cid!r} must be genesis (from null)")
                continue
            elif src != now:
                self.add("CLAIM_STATE_MISMATCH", LEDGER_FILE, _ptr("transitions", k, "from"),
                         f"claim {cid!r} is {now!r} here, not {src!r}")
                continue
            if dst not in TRANSITIONS[src]:
                self.add("ILLEGAL_CLAIM_TRANSITION", LEDGER_FILE, _ptr("transitions", k, "to"),
                         f"claim {cid!r} cannot move from {src or 'genesis'!r} to {dst!r}")
                continue
            state[cid] = dst
        for i, claim in enumerate(L["claims"]):
            now = state.get(claim["claimId"], _NO_STATE)
            if now != claim["state"]:
                self.add("CLAIM_STATE_MISMATCH", LEDGER_FILE, _ptr("claims", i, "state"),
                         f"claim {claim['claimId']!r} is recorded {claim['state']!r} but its "
                         f"transitions end at {now!r}")

    def prior(self, L: dict[str, Any], recons: list[_Doc], briefs: dict[str, _Doc],
              m: dict[str, Any]) -> tuple[dict[str, Any] | None, bool]:
        for extra in recons[1:]:
            self.add("DUPLICATE_RECONCILIATION", MANIFEST_FILE, _ptr("artifacts", extra.index, "path"),
                     f"{extra.path} is a second reconciliation result; a run has exactly one")
        if recons:
            anchor, ref = recons[0], recons[0].data["priorLedger"]
        elif briefs:
            anchor = next(iter(briefs.values()))
            ref = anchor.data["priorLedger"]
        else:
            return None, True
        target = self.by_path.get(ref["path"])
        if target is None or target.kind != "claim-ledger" or target.digest != ref["digest"]:
            self.add("PRIOR_LEDGER_MISMATCH", anchor.path, "/priorLedger",
                     f"{ref['path']} is not a listed claim ledger with that digest")
            return None, False
        prior = target.data
        ok = True
        for brief in briefs.values():
            if not _same(brief.data["priorLedger"], ref):
                self.add("PRIOR_LEDGER_MISMATCH", brief.path, "/priorLedger",
                         "every brief binds the one prior ledger the reconciliation uses")
                ok = False
                continue
            if brief.data["priorRevision"] != prior["revision"]:
                self.add("LEDGER_REVISION_MISMATCH", brief.path, "/priorRevision",
                         f"the prior ledger is revision {prior['revision']}")
            expected = project(brief.data["mode"], prior, m)
            if not _same(expected, brief.data["projection"]):
                self.add("REVIEW_BRIEF_MISMATCH", brief.path, "/projection",
                         f"the projection is not the {brief.data['mode']} view of the prior ledger")
        if not recons and self.digests[LEDGER_FILE] != target.digest:
            self.add("PRIOR_LEDGER_MISMATCH", LEDGER_FILE, "",
                     "claims.json changed after its briefs without a reconciliation")
            ok = False
        return prior, ok

    def assurance_result(self, d: _Doc, briefs: dict[str, _Doc], base_claims: set[str],
                         L: dict[str, Any], m: dict[str, Any], gap_index: dict[str, int],
                         omitted: set[str],
                         findings: dict[str, tuple[_Doc, dict[str, Any]]]) -> None:
        data, path = d.data, d.path
        brief = briefs.get(data["brief"]["path"])
        if brief is None:
            self.add("UNKNOWN_REFERENCE", path, "/brief/path",
                     f"{data['brief']['path']} is not a listed review brief")
        elif brief.digest != data["brief"]["digest"]:
            self.add("REVIEW_BRIEF_MISMATCH", path, "/brief/digest",
                     "the result is bound to another version of its brief")
        elif brief.data["mode"] != data["reviewKind"]:
            self.add("REVIEW_BRIEF_MISMATCH", path, "/brief/path",
                     f"a {data['reviewKind']} result cannot answer a {brief.data['mode']} brief")
        disposed: set[str] = set()
        for k, disp in enumerate(data["dispositions"]):
            if disp["claimId"] not in base_claims:
                self.add("UNKNOWN_REFERENCE", path, _ptr("dispositions", k, "claimId"),
                         f"claim {disp['claimId']!r} is not in the reviewed ledger")
            if disp["claimId"] in disposed:
                self.add("DUPLICATE_ID", path, _ptr("dispositions", k, "claimId"),
                         f"claim {disp['claimId']!r} has two dispositions")
            disposed.add(disp["claimId"])
        new_ids: dict[str, int] = {}
        for k, record in enumerate(data["newEvidence"]):
            if record["evidenceId"] in new_ids:
                self.add("DUPLICATE_ID", path, _ptr("newEvidence", k, "evidenceId"),
                         f"new evidence id {record['evidenceId']!r} is repeated")
            new_ids[record["evidenceId"]] = k
            self.secret(path, _ptr("newEvidence", k, "excerpt"), record["excerpt"])
        associated: set[str] = set()
        for k, assoc in enumerate(data["associations"]):
            if assoc["evidenceId"] not in new_ids:
                self.add("INVALID_ASSOCIATION", path, _ptr("associations", k, "evidenceId"),
                         f"evidence {assoc['evidenceId']!r} is not new evidence of this result")
            elif assoc["claimId"] not in disposed:
                self.add("INVALID_ASSOCIATION", path, _ptr("associations", k, "claimId"),
                         f"claim {assoc['claimId']!r} has no disposition in this result")
            associated.add(assoc["evidenceId"])
        for eid, k in new_ids.items():
            if eid not in associated:
                self.add("INVALID_ASSOCIATION", path, _ptr("newEvidence", k),
                         f"new evidence {eid!r} has no claim association")
        known_evidence = {e["evidenceId"] for e in L["evidence"]} | set(new_ids)
        for k, finding in enumerate(data["coverageFindings"]):
            fptr = _ptr("coverageFindings", k)
            findings[finding["findingId"]] = (d, finding)
            for n, cid in enumerate(finding["claimIds"]):
                if cid not in base_claims:
                    self.add("UNKNOWN_REFERENCE", path, f"{fptr}/claimIds/{n}",
                             f"claim {cid!r} is not in the reviewed ledger")
            for n, eid in enumerate(finding["evidenceIds"]):
                if eid not in known_evidence:
                    self.add("UNKNOWN_REFERENCE", path, f"{fptr}/evidenceIds/{n}",
                             f"evidence {eid!r} is unknown")
            if finding["status"] == "resolved" and not finding["evidenceIds"]:
                self.add("INVALID_VALUE", path, fptr + "/evidenceIds",
                         "a resolved coverage finding names the exact evidence that resolves it")
            for n, gid in enumerate(finding["gapIds"]):
                g = gap_index.get(gid)
                if g is None:
                    self.add("UNKNOWN_REFERENCE", path, f"{fptr}/gapIds/{n}",
                             f"gap {gid!r} is not in the manifest")
                elif finding["material"] and finding["status"] != "resolved" \
                        and not m["gaps"][g]["material"]:
                    self.add("GAP_MATERIALITY_DOWNGRADED", MANIFEST_FILE,
                             _ptr("gaps", g, "material"),
                             f"gap {gid!r} records material coverage finding "
                             f"{finding['findingId']!r} as non-material")
            if finding["material"] and finding["status"] != "resolved" and not finding["gapIds"]:
                self.add("MISSING_COVERAGE_GAP", path, fptr + "/gapIds",
                         "an unresolved material coverage finding is recorded as a manifest gap")
        for k, issue in enumerate(data["unresolvedIssues"]):
            for n, cid in enumerate(issue["claimIds"]):
                if cid not in base_claims:
                    self.add("UNKNOWN_REFERENCE", path, _ptr("unresolvedIssues", k, "claimIds", n),
                             f"claim {cid!r} is not in the reviewed ledger")
        if data["complete"] and brief is not None and data["reviewKind"] != "contradiction-resolution":
            shown = [c["claimId"] for c in brief.data["projection"].get("claims", [])
                     if isinstance(c, dict)]
            missing = [cid for cid in shown if cid not in disposed and cid not in omitted]
            if missing:
                self.add("MISSING_REVIEW_OMISSION_GAP", path, "/dispositions",
                         f"no disposition and no REVIEW_DISPOSITION_OMITTED gap for: "
                         f"{', '.join(missing[:10])}")

    def reconciliation(self, recon: _Doc, prior: dict[str, Any], L: dict[str, Any],
                       assurance: list[_Doc],
                       findings: dict[str, tuple[_Doc, dict[str, Any]]]) -> set[str]:
        data, path = recon.data, recon.path
        if data["priorRevision"] != prior["revision"]:
            self.add("LEDGER_REVISION_MISMATCH", path, "/priorRevision",
                     f"the prior ledger is revision {prior['revision']}")
        if data["nextRevision"] != prior["revision"] + 1:
            self.add("LEDGER_REVISION_MISMATCH", path, "/nextRevision",
                     "the next revision is exactly the prior revision plus one")
        elif L["revision"] != data["nextRevision"]:
            self.add("LEDGER_REVISION_MISMATCH", LEDGER_FILE, "/revision",
                     f"claims.json must be the reconciled revision {data['nextRevision']}")
        incorporated = [d for d in assurance if d.data["complete"]]
        want = sorted((d.path, d.digest) for d in incorporated)
        got = sorted((r["path"], r["digest"]) for r in data["reviewResults"])
        if want != got:
            self.add("RECONCILIATION_MISMATCH", path, "/reviewResults",
                     "the reconciliation binds exactly the complete assurance review results")
        if not _same(L["transitions"], prior["transitions"] + data["transitions"]):
            self.add("RECONCILIATION_MISMATCH", path, "/transitions",
                     "claims.json transitions are the prior transitions plus exactly these")
        prior_claims = {c["claimId"]: c for c in prior["claims"]}
        current = {c["claimId"]: c for c in L["claims"]}
        additions = sorted(set(current) - set(prior_claims))
        removals = sorted(set(prior_claims) - set(current))
        if sorted(data["additions"]) != additions:
            self.add("RECONCILIATION_MISMATCH", path, "/additions",
                     f"claims added since the prior ledger: {additions}")
        if sorted(data["removals"]) != removals:
            self.add("RECONCILIATION_MISMATCH", path, "/removals",
                     f"claims removed since the prior ledger: {removals}")
        rejected = {disp["claimId"] for d in incorporated for disp in d.data["dispositions"]
                    if disp["verdict"] == "rejected"}
        for k, cid in enumerate(data["removals"]):
            if cid not in rejected:
                self.add("REMOVAL_WITHOUT_REJECTION", path, _ptr("removals", k),
                         f"claim {cid!r} is removed without a rejection from a complete review")
        offered: dict[str, str] = {}
        assoc: set[tuple[str, str, str]] = set()
        for d in incorporated:
            for record in d.data["newEvidence"]:
                offered[record["evidenceId"]] = record
            for a in d.data["associations"]:
                assoc.add((a["evidenceId"], a["claimId"], a["relation"]))
        prior_evidence = {e["evidenceId"]: e for e in prior["evidence"]}
        seen_prior = set()
        for i, record in enumerate(L["evidence"]):
            eid = record["evidenceId"]
            if eid in prior_evidence:
                seen_prior.add(eid)
                if not _same(record, prior_evidence[eid]):
                    self.add("CLAIM_CONTINUITY_BROKEN", LEDGER_FILE, _ptr("evidence", i),
                             f"prior evidence {eid!r} changed during reconciliation")
            elif not _same(offered.get(eid), record):
                self.add("UNSOURCED_NEW_EVIDENCE", LEDGER_FILE, _ptr("evidence", i),
                         f"new evidence {eid!r} is not the exact record a reconciled review supplied")
        if len(seen_prior) != len(prior_evidence):
            gone = sorted(set(prior_evidence) - seen_prior)
            self.add("CLAIM_CONTINUITY_BROKEN", LEDGER_FILE, "/evidence",
                     f"prior evidence was dropped: {', '.join(gone[:10])}")
        for i, claim in enumerate(L["claims"]):
            before = prior_claims.get(claim["claimId"])
            if before is None:
                continue
            if claim["statement"] != before["statement"]:
                self.add("CLAIM_CONTINUITY_BROKEN", LEDGER_FILE, _ptr("claims", i, "statement"),
                         f"claim {claim['claimId']!r} changed its statement")
            old = {(x["evidenceId"], x["relation"]) for x in before["evidence"]}
            new = {(x["evidenceId"], x["relation"]) for x in claim["evidence"]}
            if not old <= new:
                self.add("CLAIM_CONTINUITY_BROKEN", LEDGER_FILE, _ptr("claims", i, "evidence"),
                         f"claim {claim['claimId']!r} lost prior evidence links")
            for j, link in enumerate(claim["evidence"]):
                key = (link["evidenceId"], link["relation"])
                if key not in old and (link["evidenceId"], claim["claimId"], link["relation"]) \
                        not in assoc:
                    self.add("UNSOURCED_NEW_EVIDENCE", LEDGER_FILE,
                             _ptr("claims", i, "evidence", j),
                             f"link to {link['evidenceId']!r} has no matching review association")
        for k, item in enumerate(data["coverageDispositions"]):
            if item["findingId"] not in findings:
                self.add("UNKNOWN_REFERENCE", path, _ptr("coverageDispositions", k, "findingId"),
                         f"coverage finding {item['findingId']!r} is in no review result")
        return set(removals)

    def claim_assurance(self, L: dict[str, Any], requested: str, assurance: list[_Doc],
                        findings: dict[str, tuple[_Doc, dict[str, Any]]],
                        evidence: dict[str, Evidence]) -> list[Claim]:
        confirmed: dict[str, set[str]] = {}
        challenged: set[str] = set()
        reviewed: dict[str, list[str]] = {}
        for d in assurance:
            if not d.data["complete"]:
                continue
            kind = d.data["reviewKind"]
            for disp in d.data["dispositions"]:
                reviewed.setdefault(disp["claimId"], []).append(d.path)
                if disp["verdict"] == "confirmed":
                    confirmed.setdefault(disp["claimId"], set()).add(kind)
                elif disp["material"] and disp["verdict"] in ("challenged", "rejected"):
                    challenged.add(disp["claimId"])
            for issue in d.data["unresolvedIssues"]:
                if issue["material"]:
                    challenged.update(issue["claimIds"])
        coverage_blocked = {cid for _, f in findings.values()
                            if f["material"] and f["status"] != "resolved" for cid in f["claimIds"]}
        needed = {"semantic", "adversarial", "coverage"}
        if requested == "thorough":
            needed.add("redundant-verification")
        out = []
        for i, claim in enumerate(L["claims"]):
            cid, state = claim["claimId"], claim["state"]
            ptr = _ptr("claims", i, "state")
            if state == "verified":
                if requested == "quick":
                    self.add("QUICK_PACKET_VERIFIED_CLAIM", LEDGER_FILE, ptr,
                             f"claim {cid!r} is verified, but quick packets never verify")
                elif needed - confirmed.get(cid, set()):
                    lacking = ", ".join(sorted(needed - confirmed.get(cid, set())))
                    self.add("VERIFIED_WITHOUT_REVIEW", LEDGER_FILE, ptr,
                             f"claim {cid!r} is verified without a confirming {lacking} review")
                elif cid in challenged:
                    self.add("MATERIAL_CHALLENGE_UNRESOLVED", LEDGER_FILE, ptr,
                             f"claim {cid!r} is verified despite a material unresolved challenge")
                elif cid in coverage_blocked:
                    self.add("MATERIAL_COVERAGE_ASSURANCE_EXCEEDED", LEDGER_FILE, ptr,
                             f"claim {cid!r} is verified despite a material coverage finding")
            eligible = any(link["relation"] == "supports" and link["evidenceId"] in evidence
                           and evidence[link["evidenceId"]].eligible for link in claim["evidence"])
            if state in ("supported", "verified") and not eligible:
                self.add("CLAIM_EVIDENCE_INELIGIBLE", LEDGER_FILE, _ptr("claims", i, "evidence"),
                         f"claim {cid!r} is {state} without supporting exact or redacted-exact "
                         "evidence")
            assurance_level = ("verified" if state == "verified" else
                               "evidenced" if eligible else "unevidenced")
            out.append(Claim(
                claim_id=cid, statement=claim["statement"], state=state,
                links=tuple(Link(x["evidenceId"], x["relation"]) for x in claim["evidence"]),
                qualifications=tuple(claim["qualifications"]),
                assurance=assurance_level,
                reviews=tuple(reviewed.get(cid, ())),
            ))
        return out


def validate(directory: str | os.PathLike[str]) -> Validation:
    """Compile the packet at ``directory`` once: a ValidatedRun, or every issue.

    Raises only for operational failures (``packet_not_found``,
    ``packet_unreadable``, ``packet_root_symlink``); an invalid packet is a
    :class:`Validation` with issues, sorted by file, pointer and code.
    Reads each referenced file once and hashes it once; writes nothing.
    """
    root = PacketRoot(directory)
    root.open_check()
    compiler = _Compiler(root)
    loaded = compiler.structure()
    run = compiler.meaning(*loaded) if loaded is not None else None
    issues = tuple(sorted(set(compiler.issues), key=lambda i: (i.path, i.pointer, i.code, i.message)))
    if issues:
        return Validation(issues=issues, run=None)
    return Validation(issues=(), run=run)


def check_and_withdraw(directory: str | os.PathLike[str]) -> tuple[Validation, bool]:
    """Validate, then withdraw ``packet.md`` unless the packet is publishable.

    Returns the validation and whether a ``packet.md`` was removed, so no
    consumer entry point from another generation survives a rejected one.
    """
    outcome = validate(directory)
    withdrawn = False
    if not (outcome.valid and outcome.run is not None and outcome.run.publishable):
        withdrawn = PacketRoot(directory).remove(RENDER_FILE)
    return outcome, withdrawn
