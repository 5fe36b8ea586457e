"""Assay's own layout, read and checked file by file: the rules of its first phase and its ledger.

The rule set of assay's layout works over one :class:`Packet`: the kernel's
:class:`~assay.packet.kernel.Context` (files read once, findings in one list)
and the documents read so far. :func:`structure` is the first phase: layout
directories, the two canonical files and every listed artifact read, parsed
strictly (:func:`assay.canonical.parse`: no duplicate key, no ``NaN``,
UTF-8), kind-checked and shape-checked, source captures hashed, a failed
run's record, unlisted (shadow) files. The rules of the second phase that
read one document at a time live here too: the execution envelope and its
lanes, evidence states and secrets, the ledger's ids and links, claim
transitions, stale or invalid evidence. Reviews and the reconciliation are
:mod:`assay.packet.assay.review_rules`; :mod:`assay.packet.assay.check` runs
everything. Every function reports through the packet; none raises. Imports
the base modules and the packet modules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assay.canonical import parse
from assay.errors import AssayError
from assay.packet.assay.ledger_file import LEDGER_SHAPE
from assay.packet.assay.manifest import ID, MANIFEST_SHAPE, TEXT, approval_fingerprint
from assay.packet.assay.reviews import BRIEF_SHAPE, DOSSIER_SHAPE, RESULT_SHAPE
from assay.packet.kernel import Context
from assay.packet.layout import (
    CANONICAL_FILES,
    FAILURE_FILE,
    LEDGER_FILE,
    LISTED_DIRS,
    MANAGED_DIRS,
    MANIFEST_FILE,
    RENDER_FILE,
    PathProblem,
    check_relative_path,
    is_under,
)
from assay.packet.model import CAPS, KINDS, TRANSITIONS, WAVE_MODES, Evidence, kind_name
from assay.packet.redaction import REDACTION_MARKER, find_secret, find_secrets, matches_redacted
from assay.packet.shape import INSTANT, Check, Sink, enum, integer, nullable, obj, string

__all__ = ["Doc", "Lane", "Packet", "json_pointer", "same", "structure"]

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
_NO_STATE = "(none)"


def json_pointer(*parts: str | int) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def same(a: Any, b: Any) -> bool:
    # Both sides have passed a closed shape (or, for brief projections, the
    # expected side holds only strings, lists, objects and null), so Python
    # equality cannot confuse true with 1; and 1 == 1.0 is also canonically
    # equal. That makes ``==`` exactly canonical equality here, at C speed.
    return bool(a == b)


@dataclass(slots=True)
class Doc:
    """One listed artifact during compilation (mutable scratch, never escapes)."""

    index: int
    path: str
    digest: str
    kind: str
    data: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Lane:
    """An approved lane: where it is in the envelope, its wave, and what it may write."""

    wave_index: int
    lane_index: int
    wave_id: str
    mode: str
    write_root: str
    conditional: bool


@dataclass(slots=True)
class Packet:
    """What assay's rules share while one packet is checked. Use once."""

    cx: Context
    docs: list[Doc] = field(default_factory=list)
    by_path: dict[str, Doc] = field(default_factory=dict)
    listed: set[str] = field(default_factory=set)
    captures: dict[str, bytes] = field(default_factory=dict)
    capture_digests: dict[str, str] = field(default_factory=dict)
    screened: dict[str, str | None] = field(default_factory=dict)

    def add(self, code: str, path: str, pointer: str, message: str) -> None:
        self.cx.add(code, path, pointer, message)

    def sink(self, path: str) -> Sink:
        return Sink(self.cx.issues, path)

    def read(self, path: str, ref_file: str, ref_pointer: str) -> bytes | None:
        """Read and hash ``path`` once; report a problem at the reference."""
        got = self.cx.read(path)
        if isinstance(got, PathProblem):
            self.add(got.code, ref_file, ref_pointer, got.message)
            return None
        return got


# -- phase 1: structure -----------------------------------------------------------------

def load(p: Packet, path: str, data: bytes, expected: str | None) -> dict[str, Any] | None:
    """Strict JSON of a known kind and version (``None`` once reported); ``__kind__`` added."""
    try:
        doc = parse(data)
    except AssayError as err:
        p.add("INVALID_JSON", path, "", err.message)
        return None
    if type(doc) is not dict:
        p.add("INVALID_TYPE", path, "", "a packet artifact must be a JSON object")
        return None
    kind = kind_name(doc.get("kind"))
    if kind is None or (expected is not None and kind != expected):
        want = f"assay.{expected}" if expected else "a known packet kind"
        p.add("UNKNOWN_KIND", path, "/kind", f"{str(doc.get('kind'))[:60]!r} is not {want}")
        return None
    version = doc.get("schemaVersion")
    supported = KINDS[kind]
    if type(version) is not int or version != supported:
        p.add("UNKNOWN_KIND", path, "/schemaVersion",
              f"{kind} schemaVersion {version!r} is not supported (expected {supported})")
        return None
    doc["__kind__"] = kind
    return doc


def structure(p: Packet) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """Phase 1: every file read, parsed and shape-checked; the canonical documents, or None.

    None when anything failed here: the second phase then does not run, so
    one broken file does not produce a cascade of derived issues.
    """
    for directory in MANAGED_DIRS:
        problem = p.cx.root.check(directory)
        if problem is not None:
            p.add(problem.code, directory, "", problem.message)
    raw = p.read(MANIFEST_FILE, MANIFEST_FILE, "")
    raw_ledger = p.read(LEDGER_FILE, LEDGER_FILE, "")
    manifest = ledger = None
    if raw is not None:
        manifest = load(p, MANIFEST_FILE, raw, "packet-manifest")
        if manifest is not None:
            manifest.pop("__kind__", None)
            if not MANIFEST_SHAPE.check(p.sink(MANIFEST_FILE), manifest):
                manifest = None
    if manifest is not None:
        sources(p, manifest)
    if raw_ledger is not None:
        ledger = load(p, LEDGER_FILE, raw_ledger, "claim-ledger")
        if ledger is not None:
            ledger.pop("__kind__", None)
            if not LEDGER_SHAPE.check(p.sink(LEDGER_FILE), ledger):
                ledger = None
    if manifest is None:
        return None
    artifacts(p, manifest)
    if manifest["status"] == "failed":
        failure(p, manifest)
    for directory in LISTED_DIRS:
        for path in p.cx.root.listing(directory):
            if path not in p.listed:
                p.add("UNLISTED_ARTIFACT", path, "",
                      f"{path} is in a listed directory but not in manifest artifacts")
    if ledger is None or p.cx.issues:
        return None
    return manifest, ledger


def artifacts(p: Packet, manifest: dict[str, Any]) -> None:
    """Read, hash, parse and shape-check every listed artifact; index the good ones."""
    for index, ref in enumerate(manifest["artifacts"]):
        path, ptr = ref["path"], json_pointer("artifacts", index, "path")
        problem = check_relative_path(path)
        if problem is not None:
            p.add(problem.code, MANIFEST_FILE, ptr, problem.message)
            continue
        if path in CANONICAL_FILES or path == RENDER_FILE or path == FAILURE_FILE:
            p.add("INVALID_PATH", MANIFEST_FILE, ptr,
                  f"{path} is a canonical or generated file, not an artifact")
            continue
        if is_under(path, "raw/quarantine"):
            p.add("QUARANTINED_ARTIFACT_REFERENCED", MANIFEST_FILE, ptr,
                  f"{path} is quarantined output and can never be promoted")
            continue
        if path in p.listed:
            p.add("DUPLICATE_ARTIFACT", MANIFEST_FILE, ptr, f"{path} is listed twice")
            continue
        p.listed.add(path)
        data = p.read(path, MANIFEST_FILE, ptr)
        if data is None:
            continue
        if p.cx.digests[path] != ref["digest"]:
            p.add("DIGEST_MISMATCH", MANIFEST_FILE, json_pointer("artifacts", index, "digest"),
                  f"{path} hashes to {p.cx.digests[path]}, not the recorded digest")
            continue
        doc = load(p, path, data, None)
        if doc is None:
            continue
        kind = doc.pop("__kind__")
        shape = _ARTIFACT_SHAPES.get(kind)
        if shape is None:
            p.add("UNKNOWN_KIND", path, "/kind", f"a {kind} cannot be a listed artifact")
            continue
        if shape.check(p.sink(path), doc):
            entry = Doc(index, path, ref["digest"], kind, doc)
            p.docs.append(entry)
            p.by_path[path] = entry
        else:
            p.by_path.setdefault(path, Doc(index, path, ref["digest"], kind, {}))


def sources(p: Packet, manifest: dict[str, Any]) -> None:
    """Reopen and hash every source capture the manifest records."""
    for index, source in enumerate(manifest["sources"]):
        capture = source["capture"]
        if capture is None:
            continue
        path, ptr = capture["path"], json_pointer("sources", index, "capture", "path")
        problem = check_relative_path(path)
        if problem is not None:
            p.add(problem.code, MANIFEST_FILE, ptr, problem.message)
            continue
        if path in CANONICAL_FILES or is_under(path, "raw/quarantine"):
            p.add("INVALID_PATH", MANIFEST_FILE, ptr, f"{path} cannot be a source capture")
            continue
        data = p.read(path, MANIFEST_FILE, ptr)
        if data is None:
            continue
        if p.cx.digests[path] != capture["digest"]:
            p.add("DIGEST_MISMATCH", MANIFEST_FILE,
                  json_pointer("sources", index, "capture", "digest"),
                  f"capture {path} hashes to {p.cx.digests[path]}, not the recorded digest")
            continue
        p.captures[source["sourceId"]] = data


def failure(p: Packet, manifest: dict[str, Any]) -> None:
    """A failed run's record: present, of this run, and well formed."""
    got = p.cx.root.read(FAILURE_FILE)
    if isinstance(got, PathProblem):
        code = "FAILURE_RECORD_MISSING" if got.code == "MISSING_FILE" else got.code
        p.add(code, MANIFEST_FILE, "/status", f"a failed run needs {FAILURE_FILE}: {got.message}")
        return
    doc = load(p, FAILURE_FILE, got, "run-failure")
    if doc is not None:
        doc.pop("__kind__", None)
        if FAILURE_SHAPE.check(p.sink(FAILURE_FILE), doc) and doc["runId"] != manifest["runId"]:
            p.add("RUN_ID_MISMATCH", FAILURE_FILE, "/runId", "the failure is of another run")


# -- phase 2: the envelope, the ledger and its evidence ------------------------------------

def execution(p: Packet, m: dict[str, Any], requested: str) -> tuple[dict[str, Lane], bool]:
    """The approved lanes (by id) and whether the envelope is approved at all."""
    ex = m["execution"]
    lanes: dict[str, Lane] = {}
    if m["status"] not in ("preparing", "awaiting-approval") and (
            ex is None or "approval" not in ex):
        p.add("EXECUTION_NOT_APPROVED", MANIFEST_FILE,
              "/execution" if ex is None else "/execution/approval",
              f"a {m['status']} run needs an explicitly approved execution envelope")
    if ex is None:
        return lanes, False
    approved = "approval" in ex
    if approved:
        try:
            expected = approval_fingerprint(ex)
        except AssayError as err:
            p.add("INVALID_VALUE", MANIFEST_FILE, "/execution", err.message)
            return lanes, False
        if expected != ex["approval"]["fingerprint"]:
            p.add("APPROVAL_FINGERPRINT_MISMATCH", MANIFEST_FILE,
                  "/execution/approval/fingerprint",
                  f"the execution envelope now fingerprints to {expected}; it changed "
                  "after approval")
            # The packet is already invalid; lanes stay declared so that
            # the drift is reported once instead of once per artifact.
    waves: set[str] = set()
    evidence_lanes = 0
    for w, wave in enumerate(ex["waves"]):
        if wave["waveId"] in waves:
            p.add("DUPLICATE_ID", MANIFEST_FILE, json_pointer("execution", "waves", w, "waveId"),
                  f"wave id {wave['waveId']!r} is repeated")
        waves.add(wave["waveId"])
        for n, lane in enumerate(wave["lanes"]):
            lptr = json_pointer("execution", "waves", w, "lanes", n)
            if wave["mode"] in ("gather", "redundant-gather"):
                evidence_lanes += 1
            if lane["laneId"] in lanes:
                p.add("DUPLICATE_ID", MANIFEST_FILE, lptr + "/laneId",
                      f"lane id {lane['laneId']!r} is repeated across the run")
                continue
            root = lane["writeRoot"]
            problem = check_relative_path(root)
            if problem is not None:
                p.add(problem.code, MANIFEST_FILE, lptr + "/writeRoot", problem.message)
            elif root in CANONICAL_FILES or root == RENDER_FILE or is_under(root, "raw/quarantine"):
                p.add("INVALID_PATH", MANIFEST_FILE, lptr + "/writeRoot",
                      f"a lane may not write {root}")
            lanes[lane["laneId"]] = Lane(w, n, wave["waveId"], wave["mode"], root,
                                         wave["conditional"])
    max_evidence, max_workers, max_concurrency = CAPS[requested]
    if evidence_lanes > max_evidence:
        p.add("EXECUTION_CAP_EXCEEDED", MANIFEST_FILE, "/execution/waves",
              f"{evidence_lanes} evidence lanes exceed the {requested} cap of {max_evidence}")
    if len(lanes) > max_workers:
        p.add("EXECUTION_CAP_EXCEEDED", MANIFEST_FILE, "/execution/waves",
              f"{len(lanes)} lanes exceed the {requested} cap of {max_workers}")
    if ex["maxConcurrency"] > max_concurrency:
        p.add("EXECUTION_CAP_EXCEEDED", MANIFEST_FILE, "/execution/maxConcurrency",
              f"concurrency {ex['maxConcurrency']} exceeds the {requested} cap of "
              f"{max_concurrency}")
    return lanes, approved


def lane_check(p: Packet, doc: Doc, lane_id: str, pointer: str, modes: tuple[str, ...],
               lanes: dict[str, Lane], approved: bool, *, wave_id: str | None = None) -> None:
    """An artifact comes from an approved lane of a wave of its mode, inside its write root."""
    lane = lanes.get(lane_id) if approved else None
    if lane is None or lane.mode not in modes or (wave_id is not None and lane.wave_id != wave_id):
        why = ("no approved execution envelope" if not approved else
               f"lane {lane_id!r} is not an approved lane of a {' or '.join(modes)} wave"
               + (f" {wave_id!r}" if wave_id else ""))
        p.add("UNAPPROVED_LANE", doc.path, pointer, f"{doc.path}: {why}")
        return
    if not is_under(doc.path, lane.write_root):
        p.add("LANE_WRITE_PATH_VIOLATION", MANIFEST_FILE,
              json_pointer("artifacts", doc.index, "path"),
              f"{doc.path} is outside lane {lane_id!r} write root {lane.write_root!r}")


def source_index(p: Packet, m: dict[str, Any]) -> set[str]:
    """The source ids (each repeat reported)."""
    seen: set[str] = set()
    for i, source in enumerate(m["sources"]):
        if source["sourceId"] in seen:
            p.add("DUPLICATE_ID", MANIFEST_FILE, json_pointer("sources", i, "sourceId"),
                  f"source id {source['sourceId']!r} is repeated")
        seen.add(source["sourceId"])
    return seen


def gap_ids(p: Packet, m: dict[str, Any]) -> dict[str, int]:
    """Each gap id's first index (each repeat reported)."""
    index: dict[str, int] = {}
    for g, gap in enumerate(m["gaps"]):
        if gap["gapId"] in index:
            p.add("DUPLICATE_ID", MANIFEST_FILE, json_pointer("gaps", g, "gapId"),
                  f"gap id {gap['gapId']!r} is repeated")
        index.setdefault(gap["gapId"], g)
    return index


def screen(p: Packet, texts: list[str]) -> None:
    """Scan ``texts`` for secrets together ahead of :func:`secret`, which reads the result."""
    p.screened.update(zip(texts, find_secrets(texts), strict=True))


def secret(p: Packet, path: str, pointer: str, text: str) -> bool:
    """Report a persisted excerpt that holds a raw secret; whether it does."""
    found = p.screened[text] if text in p.screened else find_secret(text)
    if found is not None:
        p.add("SECRET_IN_EXCERPT", path, pointer,
              f"a raw secret-shaped value is persisted ({found}); redact it")
        return True
    return False


def evidence_state(p: Packet, record: dict[str, Any], path: str, pointer: str) -> str:
    """Derive exact / redacted-exact / stale / invalid by reopening the source capture."""
    redaction = record.get("redaction")
    marked = REDACTION_MARKER in record["excerpt"]
    if redaction is not None and (not redaction["applied"] or redaction["originalPersisted"]):
        p.add("INVALID_REDACTION", path, pointer + "/redaction",
              "redaction must be {applied: true, originalPersisted: false}")
    elif redaction is not None and not marked:
        p.add("INVALID_REDACTION", path, pointer + "/excerpt",
              f"a redacted excerpt marks each removed secret with {REDACTION_MARKER}")
    elif redaction is None and marked:
        p.add("INVALID_REDACTION", path, pointer + "/redaction",
              "an excerpt with redaction markers must record its redaction")
    data = p.captures.get(record["sourceId"])
    if data is None:
        return "invalid"
    if p.capture_digests[record["sourceId"]] != record["sourceDigest"]:
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


def ledger(p: Packet, L: dict[str, Any], m: dict[str, Any], source_ids: set[str]
           ) -> dict[str, Evidence]:
    """The ledger's evidence records with their derived states; ids, links and inputs checked."""
    p.capture_digests = {
        s["sourceId"]: s["capture"]["digest"] for s in m["sources"]
        if s["sourceId"] in p.captures
    }
    evidence: dict[str, Evidence] = {}
    for i, record in enumerate(L["evidence"]):
        ptr = f"/evidence/{i}"
        eid = record["evidenceId"]
        if eid in evidence:
            p.add("DUPLICATE_ID", LEDGER_FILE, ptr + "/evidenceId",
                  f"evidence id {eid!r} is repeated")
            continue
        if record["sourceId"] not in source_ids:
            p.add("UNKNOWN_REFERENCE", LEDGER_FILE, ptr + "/sourceId",
                  f"source {record['sourceId']!r} is not in the manifest")
        if secret(p, LEDGER_FILE, ptr + "/excerpt", record["excerpt"]):
            continue
        state = evidence_state(p, record, LEDGER_FILE, ptr)
        evidence[eid] = Evidence(eid, record["sourceId"], record["excerpt"], state,
                                 "redaction" in record)
    all_ids = {e["evidenceId"] for e in L["evidence"]}
    claims: dict[str, dict[str, Any]] = {}
    for i, claim in enumerate(L["claims"]):
        ptr = f"/claims/{i}"
        cid = claim["claimId"]
        if cid in claims:
            p.add("DUPLICATE_ID", LEDGER_FILE, ptr + "/claimId", f"claim id {cid!r} is repeated")
            continue
        claims[cid] = claim
        linked: set[str] = set()
        for j, link in enumerate(claim["evidence"]):
            if link["evidenceId"] in linked:
                p.add("DUPLICATE_EVIDENCE_LINK", LEDGER_FILE,
                      json_pointer("claims", i, "evidence", j),
                      f"claim {cid!r} links evidence {link['evidenceId']!r} more than once")
            linked.add(link["evidenceId"])
            if link["evidenceId"] not in all_ids:
                p.add("UNKNOWN_REFERENCE", LEDGER_FILE,
                      json_pointer("claims", i, "evidence", j, "evidenceId"),
                      f"evidence {link['evidenceId']!r} is not in this ledger")
    for k, ref in enumerate(L["inputs"]):
        doc = p.by_path.get(ref["path"])
        if doc is None:
            p.add("UNKNOWN_REFERENCE", LEDGER_FILE, json_pointer("inputs", k, "path"),
                  f"ledger input {ref['path']} is not a listed artifact")
        elif doc.digest != ref["digest"]:
            p.add("DIGEST_MISMATCH", LEDGER_FILE, json_pointer("inputs", k, "digest"),
                  f"ledger input {ref['path']} has another digest in the manifest")
    return evidence


def transitions(p: Packet, L: dict[str, Any], current: set[str], removed: set[str],
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
            p.add("UNKNOWN_REFERENCE", LEDGER_FILE, json_pointer("transitions", k, "claimId"),
                  f"transition names unknown claim {cid!r}")
            continue
        if src is None:
            if L["revision"] == 1:
                p.add("GENESIS_REUSED", LEDGER_FILE, at,
                      f"claim {cid!r}: revision-one claims begin as provisional with no "
                      "transition; an explicit genesis is only for claims added later")
                continue
            if cid in genesis or cid in state or (added is not None and cid not in added):
                p.add("GENESIS_REUSED", LEDGER_FILE, at,
                      f"claim {cid!r} already has its genesis; it cannot begin again")
                continue
            genesis.add(cid)
        else:
            now = state.get(cid, _NO_STATE if cid in explicit else "provisional")
            if now == _NO_STATE:
                p.add("ILLEGAL_CLAIM_TRANSITION", LEDGER_FILE, at,
                      f"the first transition of added claim {cid!r} is its genesis (from null)")
                continue
            if src != now:
                p.add("CLAIM_STATE_MISMATCH", LEDGER_FILE, at,
                      f"claim {cid!r} is {now!r} here, not {src!r}")
                continue
        if dst not in TRANSITIONS[src]:
            p.add("ILLEGAL_CLAIM_TRANSITION", LEDGER_FILE, json_pointer("transitions", k, "to"),
                  f"claim {cid!r} cannot move from {src or 'genesis'!r} to {dst!r}")
            continue
        state[cid] = dst
    for i, claim in enumerate(L["claims"]):
        cid = claim["claimId"]
        if added is not None and cid in added and cid not in explicit:
            p.add("GENESIS_REUSED", LEDGER_FILE, json_pointer("claims", i, "claimId"),
                  f"claim {cid!r} was added after revision one without an explicit "
                  "genesis transition")
            continue
        now = state.get(cid, _NO_STATE if cid in explicit else "provisional")
        if now != claim["state"]:
            p.add("CLAIM_STATE_MISMATCH", LEDGER_FILE, json_pointer("claims", i, "state"),
                  f"claim {cid!r} is recorded {claim['state']!r} but its "
                  f"transitions end at {now!r}")


def ineligible_evidence(p: Packet, L: dict[str, Any], m: dict[str, Any],
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
            p.add("MISSING_SOURCE_GAP", LEDGER_FILE, json_pointer("evidence", i),
                  f"evidence {record['evidenceId']!r} is {found.state}; a material gap "
                  f"must name source {record['sourceId']!r} and claims "
                  f"{', '.join(sorted(claims))}")
        for g, gap in covering:
            if not gap["material"]:
                p.add("GAP_MATERIALITY_DOWNGRADED", MANIFEST_FILE,
                      json_pointer("gaps", g, "material"),
                      f"gap {gap['gapId']!r} covers {found.state} evidence, which is "
                      "always material")
        for c in citing[record["evidenceId"]]:
            if L["claims"][c]["state"] not in weak and c not in flagged:
                flagged.add(c)
                p.add("INELIGIBLE_EVIDENCE_ASSURANCE_EXCEEDED", LEDGER_FILE,
                      json_pointer("claims", c, "state"),
                      f"claim {L['claims'][c]['claimId']!r} cites {found.state} evidence "
                      f"{record['evidenceId']!r} and must stay below supported")
