"""Assay's own layout, checked whole: every rule in its order, then the validated run.

:func:`check_assay` is the rule set of assay's layout: the first phase
(:func:`~assay.packet.assay.rules.structure`), then, only when every file
holds, the second: run identity, the approved envelope and its lanes, ids and
references, evidence states and secrets, briefs and the prior ledger, review
results, the one reconciliation, transitions, gaps, verified-claim
assurance, stale evidence, the pass table, the achieved profile and the
honest publication status. A packet with any issue yields no run. Imports
the base modules and the packet modules.
"""

from __future__ import annotations

from typing import Any

from assay.canonical import fingerprint
from assay.packet.assay.review_rules import assurance_result, claim_assurance, prior, reconciliation
from assay.packet.assay.rules import (
    Doc,
    Lane,
    Packet,
    execution,
    gap_ids,
    ineligible_evidence,
    json_pointer,
    lane_check,
    ledger,
    screen,
    secret,
    source_index,
    structure,
    transitions,
)
from assay.packet.kernel import Context
from assay.packet.layout import LEDGER_FILE, MANIFEST_FILE, PacketRoot
from assay.packet.model import (
    PROFILE_PASSES,
    PROFILES,
    REVIEW_WAVE,
    WAVE_MODES,
    Artifact,
    Gap,
    PassOutcome,
    Review,
    Source,
    ValidatedRun,
    Validation,
)

__all__ = ["check_assay"]

_OUTCOME_GAPS = ("PASS_FAILED", "PASS_OMITTED")
_GATHER_MODES = {"map": ("map",), "gather": ("gather", "redundant-gather")}
_TERMINAL = ("complete", "partial")


def check_assay(root: PacketRoot) -> Validation:
    """Validate the assay-layout packet at ``root``: a ValidatedRun, or every issue.

    Reads each file once and hashes it once; writes nothing.
    """
    p = Packet(Context(root, "assay"))
    loaded = structure(p)
    run = meaning(p, *loaded) if loaded is not None else None
    return p.cx.outcome(run)


def meaning(p: Packet, m: dict[str, Any], L: dict[str, Any]) -> ValidatedRun | None:
    """Phase 2 over documents that all hold their shapes; the run, or None with issues."""
    run_id = m["runId"]
    requested = m["profile"]
    if L["runId"] != run_id:
        p.add("RUN_ID_MISMATCH", LEDGER_FILE, "/runId", "claims.json belongs to another run")
    for doc in p.docs:
        if doc.data["runId"] != run_id:
            p.add("RUN_ID_MISMATCH", doc.path, "/runId",
                  f"{doc.path} belongs to run {doc.data['runId']!r}, not {run_id!r}")

    lanes, approved = execution(p, m, requested)
    source_ids = source_index(p, m)
    gap_index = gap_ids(p, m)

    dossiers = [d for d in p.docs if d.kind == "raw-dossier"]
    briefs = {d.path: d for d in p.docs if d.kind == "review-brief"}
    results = [d for d in p.docs if d.kind == "review-result"]
    recons = [d for d in results if d.data["reviewKind"] == "reconciliation"]
    assurance = [d for d in results if d.data["reviewKind"] != "reconciliation"]
    screen(p, [finding["excerpt"] for d in dossiers for finding in d.data["findings"]]
           + [record["excerpt"] for record in L["evidence"]]
           + [record["excerpt"] for d in assurance for record in d.data["newEvidence"]])
    writers: set[str] = set()
    for d in dossiers:
        lane_check(p, d, d.data["laneId"], "/laneId", _GATHER_MODES[d.data["mode"]], lanes,
                   approved, wave_id=d.data["waveId"])
        writers.add(d.data["laneId"])
        for k, finding in enumerate(d.data["findings"]):
            for n, sid in enumerate(finding["sourceIds"]):
                if sid not in source_ids:
                    p.add("UNKNOWN_REFERENCE", d.path,
                          json_pointer("findings", k, "sourceIds", n),
                          f"source {sid!r} is not in the manifest")
            secret(p, d.path, json_pointer("findings", k, "excerpt"), finding["excerpt"])
    for d in results:
        kind = d.data["reviewKind"]
        lane_check(p, d, d.data["reviewerLane"], "/reviewerLane", (REVIEW_WAVE[kind],),
                   lanes, approved)
        writers.add(d.data["reviewerLane"])

    evidence = ledger(p, L, m, source_ids)
    base_ledger, prior_ref_ok = prior(p, L, recons, briefs, m)
    base = base_ledger if base_ledger is not None else L
    base_claims = {c["claimId"] for c in base["claims"]}
    current_claims = {c["claimId"] for c in L["claims"]}
    omitted = {cid for g in m["gaps"] if g["kind"] == "REVIEW_DISPOSITION_OMITTED"
               for cid in g["claimIds"]}
    findings: dict[str, tuple[Doc, dict[str, Any]]] = {}
    for d in assurance:
        assurance_result(p, d, briefs, base_claims, L, m, gap_index, omitted, findings)
    removed: set[str] = set()
    if recons and base_ledger is not None and prior_ref_ok:
        removed = reconciliation(p, recons[0], base_ledger, L, assurance, findings)
    added = current_claims - base_claims if base_ledger is not None else None
    transitions(p, L, current_claims, removed, added)
    gap_references(p, m, source_ids, base_claims | current_claims, findings)

    assured = claim_assurance(p, L, requested, assurance, findings, evidence)
    ineligible_evidence(p, L, m, evidence)
    achieved, passes = pass_table(p, m, L, dossiers, results, lanes, writers)
    publication = published(p, m, achieved)
    if p.cx.issues:
        return None

    ex = m["execution"]
    return ValidatedRun(
        identity=fingerprint({"manifest": p.cx.digests[MANIFEST_FILE],
                              "ledger": p.cx.digests[LEDGER_FILE]}),
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
                   "pinned" if s["sourceId"] in p.captures else "unpinned",
                   s.get("url") or (s["capture"] or {}).get("path", ""))
            for s in m["sources"]),
        evidence=tuple(evidence.values()),
        claims=tuple(assured),
        gaps=tuple(Gap(g["gapId"], g["kind"], g["material"], g["mode"], g["description"],
                       tuple(g["claimIds"]), tuple(g["sourceIds"]), tuple(g["findingIds"]))
                   for g in m["gaps"]),
        passes=passes,
        artifacts=tuple(Artifact(d.path, d.digest, d.kind) for d in p.docs),
        reviews=tuple(Review(d.path, d.data["reviewKind"], d.data["reviewerLane"],
                             d.data["complete"], (d.data.get("brief") or {}).get("digest"))
                      for d in results),
        approved_at=(ex or {}).get("approval", {}).get("approvedAt") if ex else None,
        execution_fingerprint=(ex or {}).get("approval", {}).get("fingerprint") if ex else None,
    )


def gap_references(p: Packet, m: dict[str, Any], source_ids: set[str], claim_ids: set[str],
                   findings: dict[str, tuple[Doc, dict[str, Any]]]) -> None:
    """Every id a gap names resolves; a pass outcome gap names its wave mode."""
    for g, gap in enumerate(m["gaps"]):
        for n, sid in enumerate(gap["sourceIds"]):
            if sid not in source_ids:
                p.add("UNKNOWN_REFERENCE", MANIFEST_FILE, json_pointer("gaps", g, "sourceIds", n),
                      f"source {sid!r} is not in the manifest")
        for n, cid in enumerate(gap["claimIds"]):
            if cid not in claim_ids:
                p.add("UNKNOWN_REFERENCE", MANIFEST_FILE, json_pointer("gaps", g, "claimIds", n),
                      f"claim {cid!r} is in neither ledger")
        for n, fid in enumerate(gap["findingIds"]):
            if fid not in findings:
                p.add("UNKNOWN_REFERENCE", MANIFEST_FILE, json_pointer("gaps", g, "findingIds", n),
                      f"coverage finding {fid!r} is in no review result")
        if gap["kind"] in _OUTCOME_GAPS and gap["mode"] is None:
            p.add("INVALID_VALUE", MANIFEST_FILE, json_pointer("gaps", g, "mode"),
                  f"a {gap['kind']} gap names the wave mode it covers")


def pass_table(p: Packet, m: dict[str, Any], L: dict[str, Any], dossiers: list[Doc],
               results: list[Doc], lanes: dict[str, Lane], writers: set[str]
               ) -> tuple[str | None, tuple[PassOutcome, ...]]:
    """The achieved profile and the requested profile's passes; lanes and passes without an
    outcome, and a thorough ledger's missing gather inputs, reported."""
    requested = m["profile"]
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
        if all(table[mode] for mode in PROFILE_PASSES[profile]):
            achieved = profile
    if achieved is not None and PROFILES.index(achieved) > PROFILES.index(requested):
        achieved = requested
    outcome_gaps: dict[str, list[str]] = {}
    for gap in m["gaps"]:
        if gap["kind"] in _OUTCOME_GAPS and gap["material"] and gap["mode"]:
            outcome_gaps.setdefault(gap["mode"], []).append(gap["gapId"])
    passes = tuple(PassOutcome(mode, bool(table[mode]), tuple(table[mode]),
                               tuple(outcome_gaps.get(mode, ())))
                   for mode in PROFILE_PASSES[requested])
    if m["status"] in _TERMINAL:
        for outcome in passes:
            if not outcome.complete and not outcome.gap_ids:
                p.add("MISSING_PASS_OUTCOME_EVIDENCE", MANIFEST_FILE, "/gaps",
                      f"required pass {outcome.mode!r} has no complete artifact and no "
                      "material PASS_FAILED or PASS_OMITTED gap")
        for lane_id, lane in lanes.items():
            if lane.conditional or lane.mode == "compile" or lane_id in writers:
                continue
            if lane.mode not in outcome_gaps:
                p.add("MISSING_LANE_OUTCOME", MANIFEST_FILE,
                      json_pointer("execution", "waves", lane.wave_index, "lanes",
                                   lane.lane_index),
                      f"approved lane {lane_id!r} wrote no artifact and no material "
                      f"PASS_FAILED or PASS_OMITTED gap names mode {lane.mode!r}")
    if requested == "thorough":
        inputs = {ref["path"] for ref in L["inputs"]}
        missing = sorted(d.path for d in dossiers if d.data["mode"] == "gather"
                         and d.data["outcome"] == "complete" and d.path not in inputs)
        if missing:
            p.add("MISSING_THOROUGH_GATHER_LEDGER_INPUT", LEDGER_FILE, "/inputs",
                  f"complete gather dossiers are not ledger inputs: {', '.join(missing)}")
    return achieved, passes


def published(p: Packet, m: dict[str, Any], achieved: str | None) -> str | None:
    """The publication a complete or partial status earns, or None; a dishonest one reported."""
    requested = m["profile"]
    material = any(g["material"] for g in m["gaps"])
    if m["status"] not in _TERMINAL:
        return None
    if achieved is None:
        p.add("PUBLICATION_STATUS_MISMATCH", MANIFEST_FILE, "/status",
              f"not even the quick passes are complete; the run is failed, not {m['status']}")
        return None
    honest = ("partial" if material or PROFILES.index(achieved) < PROFILES.index(requested)
              else "complete")
    if m["status"] != honest:
        why = (f"achieved {achieved} of requested {requested}, "
               f"{'a' if material else 'no'} material gap")
        p.add("PUBLICATION_STATUS_MISMATCH", MANIFEST_FILE, "/status",
              f"status {m['status']!r} is not honest: {why}, so it must be {honest!r}")
    return str(m["status"])
