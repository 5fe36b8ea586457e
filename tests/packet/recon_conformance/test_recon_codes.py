"""One case per recon code the recon tool's own tests do not assert, and the coverage check.

Each case is the fixture packet plus one deliberate change, named by the
code it must produce (and the recon tool's location where it is fixed).
:func:`test_recon_codes_every_code_has_a_case` holds the catalogue, the
integrity and reconcile-ledger cases and the packet tests together to every
code the recon validator can emit.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from recon_cases import PRIOR, check, edit, fixture, gap

from recon_testing import ReconPacket

Change = Callable[[ReconPacket], None]
HERE = Path(__file__).parent
SRC = HERE.parents[2] / "src/assay/packet"


def manifest(change: Callable[[dict[str, Any]], None], *, approve: bool = False) -> Change:
    def run(packet: ReconPacket) -> None:
        change(packet.manifest)
        if approve:
            packet.approve()
        packet.write("manifest.json", packet.manifest)
    return run


def ledger(change: Callable[[dict[str, Any]], None]) -> Change:
    def run(packet: ReconPacket) -> None:
        change(packet.ledger)
        packet.persist()
    return run


def artifact(path: str, change: Callable[[Any], None]) -> Change:
    return lambda packet: edit(packet, path, change) and None


def execution(change: Callable[[dict[str, Any]], None]) -> Change:
    return manifest(lambda m: change(m["execution"]), approve=True)


def wave(mode: str, change: Callable[[dict[str, Any]], None]) -> Change:
    return execution(lambda e: change(next(w for w in e["waves"] if w["mode"] == mode)))


def first_evidence(change: Callable[[dict[str, Any]], None]) -> Change:
    return ledger(lambda L: change(L["evidence"][0]))


def claim_one(change: Callable[[dict[str, Any]], None]) -> Change:
    return ledger(lambda L: change(L["claims"][0]))


def both(*changes: Change) -> Change:
    def run(packet: ReconPacket) -> None:
        for change in changes:
            change(packet)
    return run


CONDITIONAL = {"waveId": "wave-contradiction", "mode": "contradiction-resolution",
               "taskClass": "mechanical-recon", "classFloor": "mechanical-recon",
               "selectionReason": "A bounded contradiction pass.",
               "lanes": [{"laneId": "lane-contradiction", "scope": "packet/contradiction",
                          "writeRoot": "reviews/contradiction-resolution.json"}],
               "conditional": True}


def conditional(*, condition: dict[str, Any] | None = None, outcome: Any = "not-triggered",
                evidence: list[Any] | None = None) -> Change:
    """A conditional contradiction wave before the reconciliation, its condition and outcome."""
    def run(packet: ReconPacket) -> None:
        execution = packet.manifest["execution"]
        execution["waves"].insert(len(execution["waves"]) - 1, json.loads(json.dumps(CONDITIONAL)))
        execution["conditions"] = [{"conditionId": "condition-1",
                                    "destinationWaveId": "wave-contradiction",
                                    "afterWaveIds": ["wave-map"],
                                    "predicate": "insufficient-evidence", "maxActivations": 1,
                                    **(condition or {})}]
        if outcome is not None:
            refs = evidence if evidence is not None else [packet.listed(
                "raw/dossiers/pass-map.json")]
            packet.manifest["conditionOutcomes"] = [
                outcome if isinstance(outcome, dict) else
                {"conditionId": "condition-1", "disposition": outcome,
                 "reason": "The mapping pass decided it.", "evidence": refs}]
        packet.approve()
        packet.write("manifest.json", packet.manifest)
    return run


def coverage_finding(disposition: dict[str, Any]) -> Change:
    finding = {"id": "finding-1", "gapId": "gap-coverage", "code": "MISSING_CORROBORATION",
               "message": "A corroborating source is absent.", "material": True,
               "claimIds": ["claim-1"]}
    return both(
        artifact("reviews/coverage.json", lambda r: r.update(coverageFindings=[finding])),
        manifest(lambda m: m["gaps"].append(gap(
            "gap-coverage", "MISSING_CORROBORATION", "A corroborating source is absent.",
            claims=["claim-1"], findings=["finding-1"]))),
        artifact("reviews/reconciliation.json", lambda r: r.update(coverageDispositions=[
            {"findingId": "finding-1", "gapId": "gap-coverage", **disposition}])))


def _sparse_capture(packet: ReconPacket) -> None:
    with open(packet.root / "raw/captures/command.txt", "r+b") as handle:
        handle.truncate(100 << 20)


def _symlinked_artifact(packet: ReconPacket) -> None:
    target = packet.root / "raw/dossiers/pass-map.json"
    (packet.root.parent / "outside.json").write_bytes(target.read_bytes())
    target.unlink()
    target.symlink_to(packet.root.parent / "outside.json")


def _not_utf8(packet: ReconPacket) -> None:
    data = (packet.root / "claims.json").read_bytes()
    packet.manifest["artifacts"][0] = packet.write(
        "claims.json", data.replace(b"pinned fixture.", b"pinned \xff."))
    packet.write("manifest.json", packet.manifest)


def _inactive_dossier(packet: ReconPacket) -> None:
    conditional()(packet)
    value = packet.read("raw/dossiers/gather.json")
    value.update(id="dossier-contradiction", laneId="lane-contradiction")
    packet.manifest["artifacts"].append(packet.write("raw/dossiers/contradiction.json", value))
    packet.write("manifest.json", packet.manifest)


def _nan_topic(packet: ReconPacket) -> None:
    text = json.dumps(packet.manifest).replace('"render fixture"', "NaN")
    (packet.root / "manifest.json").write_text(text)


# code -> (recon location or None, versions, profile, source kind, change)
Case = tuple[str, str | None, tuple[int, ...], str, str, Change]
CASES: list[Case] = [
    # -- the contract, manifest ------------------------------------------------------
    ("INVALID_RUN_STATUS", "$.run.status", (1, 2), "quick", "file",
     manifest(lambda m: m["run"].update(status="done"))),
    ("INVALID_PROFILE", "$.run.achievedProfile", (1, 2), "quick", "file",
     manifest(lambda m: m["run"].update(achievedProfile="extreme"))),
    ("SOURCE_AVAILABILITY_MISMATCH", "$.sources[0]", (1, 2), "quick", "file",
     manifest(lambda m: m["sources"][0].update(available=False))),
    ("INVALID_SOURCE_KIND", "$.sources[0].kind", (1, 2), "quick", "file",
     manifest(lambda m: m["sources"][0].update(kind="ftp"))),
    ("DUAL_URL_CAPTURE", "$.sources[0]", (1, 2), "quick", "url",
     manifest(lambda m: m["sources"][0].update(validatorState={
         "etag": "x", "capturePath": "raw/captures/url.txt",
         "captureDigest": m["sources"][0]["captureDigest"]}))),
    ("INVALID_AUTHORITY_LEVEL", "$.execution.authority", (1, 2), "quick", "file",
     execution(lambda e: e.update(authority="none"))),
    ("INVALID_APPROVAL_EVIDENCE", "$.execution.approval.type", (1, 2), "quick", "file",
     manifest(lambda m: m["execution"]["approval"].update(type="implicit"))),
    ("INVALID_TIMESTAMP", "$.execution.approval.approvedAt", (1, 2), "quick", "file",
     manifest(lambda m: m["execution"]["approval"].update(approvedAt="yesterday"))),
    ("INVALID_WAVE_MODE", "$.execution.waves[0].mode", (1, 2), "quick", "file",
     wave("map", lambda w: w.update(mode="scan"))),
    ("INVALID_TASK_CLASS", "$.execution.waves[0].taskClass", (1, 2), "quick", "file",
     wave("map", lambda w: w.update(taskClass="genius"))),
    ("TASK_CLASS_BELOW_FLOOR", "$.execution.waves[0].taskClass", (2,), "quick", "file",
     wave("map", lambda w: w.update(taskClass="mechanical-recon", classFloor="consequential"))),
    ("INVALID_WRITE_ROOT", "$.execution.waves[0].lanes[0].writeRoot", (1, 2), "quick", "file",
     wave("map", lambda w: w["lanes"][0].update(writeRoot="/abs"))),
    ("DUPLICATE_WAVE_OUTPUT", "$.execution.waves[1].lanes[0].writeRoot", (1, 2), "quick",
     "file", wave("gather", lambda w: w["lanes"][0].update(
         writeRoot="raw/dossiers/pass-map.json"))),
    ("DUPLICATE_ID", "$.gaps[1].id", (1, 2), "quick", "file",
     manifest(lambda m: m["gaps"].append(dict(m["gaps"][0])))),
    ("INVALID_ARTIFACT_REFERENCE", "$.artifacts[1].digest", (1, 2), "quick", "file",
     manifest(lambda m: m["artifacts"][1].update(digest="nope"))),
    ("PROFILE_LANE_CAP_EXCEEDED", "$.execution.waves", (2,), "quick", "file",
     wave("gather", lambda w: w["lanes"].extend(
         {"laneId": f"lane-gather-{n}", "scope": "packet/gather",
          "writeRoot": f"raw/dossiers/gather-{n}.json"} for n in range(2, 6)))),
    ("PROFILE_CONCURRENCY_CAP_EXCEEDED", "$.execution.maxConcurrency", (2,), "standard",
     "file", execution(lambda e: e.update(maxConcurrency=7))),
    ("PROFILE_CONDITION_CAP_EXCEEDED", "$.execution.conditions", (2,), "quick", "file",
     conditional()),
    ("INVALID_CONDITION_PREDICATE", "$.execution.conditions[0].predicate", (2,), "standard",
     "file", conditional(condition={"predicate": "whim"})),
    ("INVALID_CONDITION_LIMIT", "$.execution.conditions[0].maxActivations", (2,), "standard",
     "file", conditional(condition={"maxActivations": 2})),
    ("INVALID_CONDITION_DESTINATION", "$.execution.conditions[0].destinationWaveId", (2,),
     "standard", "file", conditional(condition={"destinationWaveId": "wave-map"})),
    ("UNKNOWN_CONDITION_WAVE", "$.execution.conditions[0].afterWaveIds", (2,), "standard",
     "file", conditional(condition={"afterWaveIds": ["wave-nowhere"]})),
    ("NON_FORWARD_CONDITION", "$.execution.conditions[0].afterWaveIds", (2,), "standard",
     "file", conditional(condition={"afterWaveIds": ["wave-reconciliation"]})),
    ("DUPLICATE_CONDITION_DEPENDENCY", "$.execution.conditions[0].afterWaveIds", (2,),
     "standard", "file", conditional(condition={"afterWaveIds": ["wave-map", "wave-map"]})),
    ("DUPLICATE_ROUTING_ID", "$.execution.conditions[1].conditionId", (2,), "standard", "file",
     both(conditional(), execution(lambda e: e["conditions"].append(dict(e["conditions"][0]))))),
    ("DUPLICATE_CONDITION_DESTINATION", "$.execution.conditions[1].destinationWaveId", (2,),
     "standard", "file", both(conditional(), execution(lambda e: e["conditions"].append(
         {**e["conditions"][0], "conditionId": "condition-2"})))),
    ("MISSING_WAVE_CONDITION", "$.execution.waves", (2,), "standard", "file",
     both(conditional(), execution(lambda e: e.update(conditions=[])))),
    ("INVALID_CONDITION_OUTCOME", "$.conditionOutcomes[0]", (2,), "standard", "file",
     manifest(lambda m: m.update(conditionOutcomes=[5]))),
    ("INVALID_CONDITION_DISPOSITION", "$.conditionOutcomes[0].disposition", (2,), "standard",
     "file", conditional(outcome="maybe")),
    ("DUPLICATE_CONDITION_OUTCOME", "$.conditionOutcomes[1].conditionId", (2,), "standard",
     "file", both(conditional(), manifest(lambda m: m["conditionOutcomes"].append(
         dict(m["conditionOutcomes"][0]))))),
    ("UNKNOWN_CONDITION_OUTCOME", "$.conditionOutcomes", (2,), "standard", "file",
     manifest(lambda m: m.update(conditionOutcomes=[{
         "conditionId": "condition-9", "disposition": "not-triggered", "reason": "none",
         "evidence": []}]))),
    ("MISSING_CONDITION_OUTCOME", "condition:condition-1", (2,), "standard", "file",
     conditional(outcome=None)),
    ("INVALID_CONDITION_EVIDENCE", "raw/dossiers/nowhere.json", (2,), "standard", "file",
     conditional(evidence=[{"path": "raw/dossiers/nowhere.json",
                            "digest": "sha256:" + "0" * 64}])),
    ("INCOMPLETE_CONDITION_PREDECESSOR", "condition:condition-1", (2,), "standard", "file",
     conditional(condition={"afterWaveIds": ["wave-map", "wave-gather"]}, outcome="triggered")),
    ("CONDITION_PREDICATE_UNSATISFIED", "condition:condition-1", (2,), "standard", "file",
     conditional(outcome="triggered")),
    ("INACTIVE_CONDITIONAL_ARTIFACT", "dossier-contradiction", (2,), "standard", "file", _inactive_dossier),
    ("CONDITION_EVIDENCE_RUN_MISMATCH", "raw/dossiers/pass-map.json", (2,), "standard", "file",
     both(artifact("raw/dossiers/pass-map.json", lambda d: d.update(runId="run-other")),
          lambda p: conditional(evidence=[p.listed("raw/dossiers/pass-map.json")])(p))),
    # -- the contract, ledger and worker output -------------------------------------
    ("INVALID_REVISION", "$.revision", (1, 2), "quick", "file",
     ledger(lambda L: L.update(revision=0))),
    ("INVALID_ARRAY_ENTRY", "$.synthesis.keyClaimIds[0]", (1, 2), "quick", "file",
     ledger(lambda L: L["synthesis"].update(keyClaimIds=[""]))),
    ("SYNTHESIS_REFERENCE_MISSING", "$.synthesis.keyClaimIds[0]", (1, 2), "quick", "file",
     ledger(lambda L: L["synthesis"].update(keyClaimIds=["claim-9"]))),
    ("INVALID_LOCATOR_STATE", "$.evidence[0].locatorValidation.status", (1, 2), "quick",
     "file", first_evidence(lambda e: e["locatorValidation"].update(status="perfect"))),
    ("INVALID_CLAIM_STATE", "$.claims[0].status", (1, 2), "quick", "file",
     claim_one(lambda c: c.update(status="great"))),
    ("INVALID_EVIDENCE_LINK", "$.claims[0].evidence[0]", (1, 2), "quick", "file",
     claim_one(lambda c: c.update(evidence=["evidence-1"]))),
    ("INVALID_EVIDENCE_RELATION", "$.claims[0].evidence[0].relation", (1, 2), "quick", "file",
     claim_one(lambda c: c["evidence"][0].update(relation="proves"))),
    ("DUPLICATE_EVIDENCE_LINK", "$.claims[0].evidence[1]", (1, 2), "quick", "file",
     claim_one(lambda c: c["evidence"].append(dict(c["evidence"][0])))),
    ("ILLEGAL_CLAIM_TRANSITION", "$.transitions[0]", (1, 2), "quick", "file",
     ledger(lambda L: L["transitions"][0].update({"from": "supported", "to": "provisional"}))),
    ("UNKNOWN_TRANSITION_CLAIM", "$.transitions", (1, 2), "quick", "file",
     ledger(lambda L: L["transitions"].append(
         {"claimId": "claim-9", "from": "provisional", "to": "supported"}))),
    ("INVALID_PROVISIONAL_GENESIS", "claim:claim-1", (1, 2), "quick", "file",
     claim_one(lambda c: c.update(status="provisional"))),
    ("INVALID_WORKER_MODE", "raw/dossiers/gather.json:$.mode", (1, 2), "quick", "file",
     artifact("raw/dossiers/gather.json", lambda d: d.update(mode="dig"))),
    ("INVALID_DOSSIER_OUTCOME", "raw/dossiers/gather.json:$.outcome", (1, 2), "quick", "file",
     artifact("raw/dossiers/gather.json", lambda d: d.update(outcome="meh"))),
    ("UNKNOWN_ARTIFACT_KIND", "raw/dossiers/gather.json:$.kind", (1, 2), "quick", "file",
     artifact("raw/dossiers/gather.json", lambda d: d.update(kind="recon.scrap"))),
    ("INVALID_ARTIFACT", "raw/dossiers/gather.json:$", (1, 2), "quick", "file",
     lambda p: p.replace("raw/dossiers/gather.json", []) and None),
    ("INVALID_REVIEW_BRIEF", "reviews/briefs/verify.json:$.id", (1, 2), "standard", "file",
     artifact("reviews/briefs/verify.json", lambda b: b.update(id="Bad Id"))),
    ("INVALID_REVIEW_MODE", "reviews/briefs/verify.json:$.mode", (1, 2), "standard", "file",
     artifact("reviews/briefs/verify.json", lambda b: b.update(mode="poke"))),
    ("INVALID_SOURCE_DESCRIPTOR", "reviews/briefs/verify.json:$.sources[1]", (1, 2),
     "standard", "file", artifact("reviews/briefs/verify.json",
                                  lambda b: b["sources"].append(5))),
    ("MISSING_SOURCE_DESCRIPTOR", "reviews/briefs/verify.json:$.sources", (1, 2), "standard",
     "file", artifact("reviews/briefs/verify.json", lambda b: b.update(sources=[]))),
    ("UNREFERENCED_SOURCE_DESCRIPTOR", "reviews/briefs/verify.json:$.sources[1].id", (1, 2),
     "standard", "file", artifact("reviews/briefs/verify.json", lambda b: b["sources"].append(
         {**b["sources"][0], "id": "source-2"}))),
    ("INVALID_UNRESOLVED_ISSUE", "reviews/semantic.json:$.unresolvedIssues[0]", (1, 2),
     "standard", "file", artifact("reviews/semantic.json",
                                  lambda r: r.update(unresolvedIssues=[5]))),
    ("INVALID_REVIEW_KIND", "reviews/semantic.json:$.reviewKind", (1, 2), "standard", "file",
     artifact("reviews/semantic.json", lambda r: r.update(reviewKind="vibe"))),
    ("INVALID_REVIEW_STATUS", "reviews/semantic.json:$.status", (1, 2), "standard", "file",
     artifact("reviews/semantic.json", lambda r: r.update(status="done"))),
    ("INVALID_REVIEW_DISPOSITION", "reviews/semantic.json:$.dispositions[0].disposition",
     (1, 2), "standard", "file",
     artifact("reviews/semantic.json", lambda r: r["dispositions"][0].update(disposition="love"))),
    ("INVALID_CONTRADICTION_DISPOSITION",
     "reviews/contradiction-resolution.json:$.contradictionDispositions[0].disposition", (1,),
     "thorough", "file", artifact("reviews/contradiction-resolution.json", lambda r: r[
         "contradictionDispositions"][0].update(disposition="maybe"))),
    ("EMPTY_ASSURANCE_RESULT", "reviews/redundant-verification.json:$", (1, 2), "thorough",
     "file", artifact("reviews/redundant-verification.json",
                      lambda r: r.update(dispositions=[]))),
    ("INVALID_COVERAGE_FINDING_OWNER", "reviews/semantic.json:$.coverageFindings", (1, 2),
     "standard", "file", artifact("reviews/semantic.json", lambda r: r.update(
         coverageFindings=[{"id": "f", "gapId": "g", "code": "C", "message": "m",
                            "material": False, "claimIds": []}]))),
    ("INVALID_RECONCILIATION_MEMBERSHIP", "reviews/reconciliation.json:$.additions[1]", (1, 2),
     "standard", "file", artifact("reviews/reconciliation.json",
                                  lambda r: r.update(additions=["x", "x"]))),
    ("INVALID_REMOVAL_DISPOSITION",
     "reviews/reconciliation.json:$.removalDispositions[0].disposition", (1, 2), "standard",
     "file", artifact("reviews/reconciliation.json", lambda r: r.update(removalDispositions=[
         {"claimId": "claim-2", "reviewId": "review-semantic", "disposition": "accepted"}]))),
    ("INVALID_COVERAGE_DISPOSITION",
     "reviews/reconciliation.json:$.coverageDispositions[0].disposition", (1, 2), "standard",
     "file", artifact("reviews/reconciliation.json", lambda r: r.update(coverageDispositions=[
         {"findingId": "f", "gapId": "g", "disposition": "ignored"}]))),
    # -- reading the packet ------------------------------------------------------------
    ("OUTPUT_ROOT_MISMATCH", "$.request.outputPath", (1, 2), "quick", "file",
     manifest(lambda m: m["request"].update(outputPath="/elsewhere"))),
    ("RUN_ID_MISMATCH", "$", (1, 2), "quick", "file", ledger(lambda L: L.update(runId="other"))),
    ("MISSING_APPROVAL_ENVELOPE", "$", (1,), "quick", "file",
     manifest(lambda m: m["execution"].pop("approval"))),
    ("PATH_ESCAPE", "../outside.json", (1, 2), "quick", "file",
     manifest(lambda m: m["artifacts"].append({"path": "../outside.json",
                                                "digest": "sha256:" + "0" * 64}))),
    ("MISSING_ARTIFACT", "raw/dossiers/absent.json", (1, 2), "quick", "file",
     manifest(lambda m: m["artifacts"].append({"path": "raw/dossiers/absent.json",
                                                "digest": "sha256:" + "0" * 64}))),
    ("ARTIFACT_DIGEST_MISMATCH", "raw/dossiers/gather.json", (1, 2), "quick", "file",
     manifest(lambda m: m["artifacts"][1].update(digest="sha256:" + "1" * 64))),
    ("SYMLINK_ESCAPE", "raw/dossiers/pass-map.json", (1, 2), "quick", "file",
     _symlinked_artifact),
    ("MISSING_CANONICAL_LEDGER_REFERENCE", "$.artifacts", (1, 2), "quick", "file",
     manifest(lambda m: m.update(artifacts=m["artifacts"][1:]))),
    ("INVALID_LEDGER_JSON", "claims.json", (1, 2), "quick", "file",
     lambda p: (p.root / "claims.json").write_text("{not json")),
    ("INVALID_MANIFEST_JSON", "manifest.json", (1, 2), "quick", "file", _nan_topic),
    ("FILE_TOO_LARGE", "evidence-1", (2,), "quick", "command-output", _sparse_capture),
    # -- reopening evidence --------------------------------------------------------------
    ("MISSING_SOURCE", "evidence-1", (1, 2), "quick", "file",
     first_evidence(lambda e: e.update(sourceId="source-9"))),
    ("INSUFFICIENT_PROVENANCE", "source:source-1", (1, 2), "quick", "file",
     manifest(lambda m: m["sources"][0].update(contentHash="unpinned"))),
    ("INVALID_LOCATOR", "evidence-1", (1, 2), "quick", "file",
     first_evidence(lambda e: e.update(locator={"kind": "url", "url": "https://x.test/",
                                                "retrievedAt": "2026-08-31T00:00:00.000Z"}))),
    ("SOURCE_VERSION_MISMATCH", "evidence-1", (1, 2), "quick", "file",
     first_evidence(lambda e: e.update(observedAt="2026-09-01T00:00:00.000Z"))),
    ("SOURCE_IDENTITY_MISMATCH", "evidence-1", (1, 2), "quick", "file",
     first_evidence(lambda e: e["locator"].update(path="/elsewhere/source.txt"))),
    ("SOURCE_DRIFT", "evidence-1", (1, 2), "quick", "file",
     lambda p: (p.source_root / "source.txt").write_text("alpha evidence\nchanged\n")),
    ("INVALID_LOCATOR_RANGE", "evidence-1", (1, 2), "quick", "file",
     first_evidence(lambda e: e["locator"].update(lineEnd=9))),
    ("INVALID_REDACTED_EVIDENCE", "evidence-1", (1, 2), "quick", "file",
     first_evidence(lambda e: e["locatorValidation"].update(status="redacted-exact"))),
    ("LOCATOR_EXCERPT_MISMATCH", "evidence-1", (1, 2), "quick", "file",
     first_evidence(lambda e: (e.update(displayExcerpt="omega"), e.pop("contentHash")))),
    ("EVIDENCE_DIGEST_MISMATCH", "evidence-1", (1, 2), "quick", "file",
     first_evidence(lambda e: e.update(contentHash="sha256:" + "2" * 64))),
    # -- reviews and the reconciliation --------------------------------------------------
    ("CONTRADICTION_BINDING_MISMATCH", "review-contradiction-resolution", (1,), "thorough",
     "file", artifact("reviews/contradiction-resolution.json", lambda r: r[
         "contradictionDispositions"][0].update(contradictionId="challenge-9"))),
    ("RECONCILIATION_MEMBERSHIP_MISMATCH", "review-reconciliation", (1, 2), "standard", "file",
     artifact("reviews/reconciliation.json", lambda r: r.update(additions=["claim-1"]))),
    ("MISSING_RECONCILIATION_RESULT", "$.revision", (1, 2), "standard", "file",
     artifact("reviews/reconciliation.json", lambda r: r.update(status="failed"))),
    ("REVIEW_RUN_MISMATCH", "claim-1", (1, 2), "standard", "file",
     artifact("reviews/semantic.json", lambda r: r.update(runId="run-other"))),
    ("RECONCILIATION_CONTINUITY_MISMATCH", "claim-1", (1, 2), "standard", "file",
     claim_one(lambda c: c.update(qualifications=[]))),
    ("RECONCILIATION_REVIEW_MISMATCH", "claim-1", (1, 2), "standard", "file",
     claim_one(lambda c: c.update(reviewIds=c["reviewIds"][:-1]))),
    ("RECONCILIATION_EVIDENCE_DRIFT", "evidence-1", (1, 2), "standard", "file",
     first_evidence(lambda e: e["locatorValidation"].update(
         validatedAt="2026-09-01T00:00:00.000Z"))),
    ("RECONCILIATION_EVIDENCE_ASSOCIATION_MISMATCH", "review-semantic", (1, 2), "standard",
     "file", artifact("reviews/semantic.json", lambda r: r.update(evidenceAssociations=[
         {"evidenceId": "evidence-9", "claimId": "claim-1", "relation": "supports"}]))),
    ("RECONCILIATION_TRANSITION_MISMATCH", "review-reconciliation", (1, 2), "standard", "file",
     artifact("reviews/reconciliation.json", lambda r: r["transitions"].append(
         {"claimId": "claim-2", "from": "contested", "to": "unresolved"}))),
    ("COVERAGE_RESOLUTION_EVIDENCE_INVALID", "finding-1", (1, 2), "standard", "file",
     coverage_finding({"disposition": "resolved", "evidenceIds": ["evidence-9"]})),
    ("MISSING_INDEPENDENT_REVIEW", "claim-1", (1, 2), "standard", "file",
     claim_one(lambda c: c["reviewIds"].remove("review-coverage"))),
    ("INCOMPLETE_INDEPENDENT_REVIEW", "claim-1", (1, 2), "standard", "file",
     artifact("reviews/semantic.json", lambda r: r.update(status="failed"))),
    ("REVIEW_KIND_MISMATCH", "claim-1", (1, 2), "standard", "file",
     claim_one(lambda c: c["reviewIds"].append("review-reconciliation"))),
    ("REVIEW_DISPOSITION_MISMATCH", "claim-1", (1, 2), "standard", "file",
     artifact("reviews/semantic.json",
              lambda r: r["dispositions"][0].update(disposition="uncertain"))),
    ("UNRESOLVED_VERIFICATION_CHALLENGE", "claim-1", (1, 2), "standard", "file",
     claim_one(lambda c: c.update(challenges=[{"id": "c", "material": True,
                                              "status": "unresolved"}]))),
    ("DUPLICATE_REVIEW_ID", "claim-1", (1, 2), "standard", "file",
     claim_one(lambda c: c["reviewIds"].append(c["reviewIds"][0]))),
    ("PROFILE_ASSURANCE_EXCEEDED", "claim-1", (1, 2), "quick", "file", ledger(lambda L: (
        L["claims"][0].update(status="verified"),
        L["transitions"][0].update(to="verified")))),
    ("INCOMPLETE_PROFILE", "$.run.status", (1, 2), "quick", "file",
     manifest(lambda m: m["run"].update(requestedProfile="standard"))),
    ("MATERIAL_GAP_REQUIRES_PARTIAL", "$.run.status", (1, 2), "quick", "file",
     manifest(lambda m: m["gaps"][0].update(material=True))),
    ("INVALID_PARTIAL_STATUS", "$.run.status", (1, 2), "quick", "file",
     manifest(lambda m: m["run"].update(status="partial"))),
]


@pytest.mark.parametrize(("code", "where", "version", "profile", "kind", "change"), [
    pytest.param(code, where, version, profile, kind, change, id=f"{code}-v{version}")
    for code, where, versions, profile, kind, change in CASES for version in versions])
def test_recon_code_case(tmp_path: Path, code: str, where: str | None, version: int,
                         profile: str, kind: str, change: Change) -> None:
    """The fixture packet with one deliberate change reports its code at its recon location."""
    packet = fixture(tmp_path, version, profile, source_kind=kind)
    change(packet)
    verdict = check(packet)
    found = {(i.code, i.where) for i in verdict.outcome.issues}
    assert not verdict.valid
    assert (code, where) in found if where else code in verdict.codes, sorted(found)


# code -> (recon location, profile, change): the packet stays valid, the advisory told
ADVISORIES: list[tuple[str, str, str, Change]] = [
    ("INVALID_JSON", "claims.json", "quick", _not_utf8),
    ("UNKNOWN_REFERENCE", "claim-1", "quick", claim_one(lambda c: c.update(
        reviewIds=["review-9"]))),
    # An object among the review ids: the recon tool's contract lets it pass.
    ("INVALID_TYPE", "claim-1", "quick", claim_one(lambda c: c.update(
        reviewIds=[{"id": "review-1"}]))),
]


@pytest.mark.parametrize(("code", "where", "profile", "change"), ADVISORIES,
                         ids=[case[0] for case in ADVISORIES])
def test_recon_advisory_case(tmp_path: Path, code: str, where: str, profile: str,
                             change: Change) -> None:
    """A looseness the recon tool accepts and assay's own layout refuses is an advisory."""
    packet = fixture(tmp_path, 2, profile)
    change(packet)
    verdict = check(packet)
    assert verdict.valid, verdict.codes
    assert (code, where) in {(a.code, a.where) for a in verdict.outcome.advisories}


_EMITS = re.compile(r'(?:err|advise|at_\w+|add|Finding|code, why =)\(?\s*"([A-Z][A-Z0-9_]{3,})"')


def test_recon_codes_every_code_has_a_case() -> None:
    """Every code the recon validator emits is asserted by a case of this suite."""
    source = "".join(path.read_text() for path in sorted(SRC.glob("recon/*.py")))
    emitted = set(_EMITS.findall(source)) | {"SYMLINK_ESCAPE", "NOT_REGULAR_FILE",
                                              "FILE_TOO_LARGE", "SOURCE_UNAVAILABLE"}
    asserted = {case[0] for case in CASES} | {case[0] for case in ADVISORIES}
    for path in HERE.glob("test_*.py"):
        asserted |= set(re.findall(r'"([A-Z][A-Z0-9_]{3,})"', path.read_text()))
    assert len(emitted) > 100
    assert sorted(emitted - asserted) == []


def test_recon_codes_prior_ledger_path() -> None:
    """The catalogue edits the prior ledger at the path the fixture lists it under."""
    assert PRIOR == "raw/drafts/claims-v1.json" and os.sep == "/"
