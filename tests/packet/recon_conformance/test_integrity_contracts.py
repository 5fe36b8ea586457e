"""The recon tool's integrity-contract tests, case by case, against assay's validator.

Each test transcribes one scenario of a test in the recon tool's
``tests/integrity-contracts.test.mjs`` (the test's name is quoted in the
docstring) and asserts that tool's verdict: valid, or the code it asserts,
at the location it asserts where it asserts one. Cases run on both manifest
versions unless the scenario exists in one version's tests only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from recon_cases import (
    PRIOR,
    V1,
    V2,
    VERSIONS,
    check,
    edit,
    fixture,
    gap,
)

from assay.packet.layout import file_digest
from assay.packet.recon.contract import check_artifact


def save(packet: Any) -> None:
    packet.write("manifest.json", packet.manifest)


@VERSIONS
def test_ledger_later_revision_final_transition_mismatch(tmp_path: Path, version: int) -> None:
    """'later ledger revisions reject final transitions that mismatch claim status'."""
    packet = fixture(tmp_path, version)
    ledger = packet.read("claims.json")
    assert ledger["revision"] == 2
    next(t for t in ledger["transitions"] if t["claimId"] == "claim-1")["to"] = "contested"
    found = check_artifact(ledger)
    assert ("CLAIM_TRANSITION_MISMATCH", "claim:claim-1") in {(f.code, f.where) for f in found}


@V2
def test_manifest_object_valued_waves(tmp_path: Path, version: int) -> None:
    """'manifest shape validation returns stable errors for object-valued waves'."""
    packet = fixture(tmp_path, version)
    packet.manifest["execution"]["waves"] = {}
    found = check_artifact(packet.manifest)
    assert ("MISSING_REQUIRED_FIELD", "$.execution.waves") in {(f.code, f.where) for f in found}


@V2
@pytest.mark.parametrize("hostile", [{}, 7], ids=["object", "number"])
@pytest.mark.parametrize("field", ["inputArtifacts", "evidence", "claims", "unresolvedQuestions",
                                   "transitions"])
def test_ledger_collections_are_categorical(tmp_path: Path, version: int, field: str,
                                            hostile: Any) -> None:
    """'ledger collection shape validation is categorical for objects and numbers' (ledger)."""
    ledger = fixture(tmp_path, version).read("claims.json")
    ledger[field] = hostile
    found = check_artifact(ledger)
    assert ("MISSING_REQUIRED_FIELD", f"$.{field}") in {(f.code, f.where) for f in found}


@V2
@pytest.mark.parametrize("hostile", [{}, 7], ids=["object", "number"])
@pytest.mark.parametrize("field", ["evidence", "derivedFrom"])
def test_claim_collections_are_categorical(tmp_path: Path, version: int, field: str,
                                           hostile: Any) -> None:
    """'ledger collection shape validation is categorical for objects and numbers' (claims)."""
    ledger = fixture(tmp_path, version).read("claims.json")
    ledger["claims"][0][field] = hostile
    found = check_artifact(ledger)
    assert ("MISSING_REQUIRED_FIELD", f"$.claims[0].{field}") in {(f.code, f.where) for f in found}


@VERSIONS
def test_validated_run_retains_exact_digests(tmp_path: Path, version: int) -> None:
    """'ValidatedRun retains exact digests for canonical and referenced packet bytes'."""
    packet = fixture(tmp_path, version)
    verdict = check(packet)
    assert verdict.valid, verdict.outcome.issues
    assert verdict.outcome.run is not None
    retained = dict(verdict.outcome.run.byte_digests)
    ledger = packet.ledger
    expected = {"manifest.json", "claims.json", *(a["path"] for a in packet.manifest["artifacts"]),
                *(r["path"] for r in ledger["inputArtifacts"]),
                *(e["provenance"]["path"] for e in ledger["evidence"]),
                *(r["path"] for c in ledger["claims"] for r in c["derivedFrom"])}
    assert set(retained) == expected
    for path in expected:
        assert retained[path] == file_digest((packet.root / path).read_bytes())


@V2
@pytest.mark.parametrize("conditions", [[None, None], [False, False], ["condition", 1]],
                         ids=["null", "false", "mixed"])
def test_hostile_condition_entries(tmp_path: Path, version: int, conditions: list[Any]) -> None:
    """'hostile repeated condition entries return structured errors instead of throwing'."""
    packet = fixture(tmp_path, version)
    packet.manifest["execution"]["conditions"] = conditions
    packet.approve()
    found = check_artifact(packet.manifest)
    assert found and all(isinstance(f.code, str) for f in found)
    assert "INVALID_ROUTING_CONDITION" in {f.code for f in found}


@V2
def test_condition_predecessor_ids_are_non_empty_strings(tmp_path: Path, version: int) -> None:
    """'condition predecessor IDs must all be non-empty strings'."""
    packet = fixture(tmp_path, version)
    execution = packet.manifest["execution"]
    execution["waves"].insert(len(execution["waves"]) - 1, {
        "waveId": "wave-conditional", "mode": "contradiction-resolution",
        "taskClass": "mechanical-recon", "classFloor": "mechanical-recon",
        "selectionReason": "A hostile-input regression case.",
        "lanes": [{"laneId": "lane-conditional", "scope": "packet/conditional",
                   "writeRoot": "reviews/conditional.json"}],
        "conditional": True})
    execution["conditions"] = [{"conditionId": "condition-invalid-after",
                                "destinationWaveId": "wave-conditional",
                                "afterWaveIds": ["", None, 1],
                                "predicate": "insufficient-evidence", "maxActivations": 1}]
    packet.approve()
    found = check_artifact(packet.manifest)
    assert sum(1 for f in found if f.code == "INVALID_CONDITION_DEPENDENCY") == 3


@V1
@pytest.mark.parametrize(("axis", "value"), [("model", "other-model"), ("effort", "low"),
                                             ("role", "generic"),
                                             ("authority", "provider-enforced"),
                                             ("maxConcurrency", 9), ("deadlineSeconds", 5)])
def test_approval_fingerprint_binds_every_axis(tmp_path: Path, version: int, axis: str,
                                               value: Any) -> None:
    """'approval fingerprint binds every approved execution axis'."""
    packet = fixture(tmp_path, version, "quick")
    packet.manifest["execution"][axis] = value
    save(packet)
    assert "APPROVAL_FINGERPRINT_MISMATCH" in check(packet).codes


@VERSIONS
def test_execution_rejects_unknown_axis(tmp_path: Path, version: int) -> None:
    """'approved execution rejects unknown axes and unapproved lanes' (unknown axis)."""
    packet = fixture(tmp_path, version, "quick")
    packet.manifest["execution"]["catalogRecheck"] = {"id": "legacy"}
    save(packet)
    assert "UNKNOWN_FIELD" in check(packet).codes


@VERSIONS
def test_execution_rejects_unapproved_lane(tmp_path: Path, version: int) -> None:
    """'approved execution rejects unknown axes and unapproved lanes' (rogue lane)."""
    packet = fixture(tmp_path, version, "quick")
    edit(packet, "raw/dossiers/pass-map.json", lambda d: d.update(laneId="lane-rogue"))
    assert "UNAPPROVED_LANE" in check(packet).codes


@VERSIONS
def test_dispositions_bind_claim_bearing_briefs(tmp_path: Path, version: int) -> None:
    """'review dispositions bind exact claim-bearing typed immutable briefs' (empty brief)."""
    packet = fixture(tmp_path, version)
    ref = edit(packet, "reviews/briefs/verify.json", lambda b: b.update(claims=[]))
    edit(packet, "reviews/semantic.json",
         lambda r: r.update(brief=dict(ref), permittedInputs=[dict(ref)]))
    assert "REVIEW_BRIEF_MISMATCH" in check(packet).codes


@VERSIONS
def test_brief_projects_only_the_named_claims(tmp_path: Path, version: int) -> None:
    """'review dispositions bind exact claim-bearing typed immutable briefs' (claim subset)."""
    packet = fixture(tmp_path, version)
    brief = packet.brief("brief-test-coverage", "coverage", packet.ledger, ["claim-1"])
    assert brief["claims"] == [{"id": "claim-1",
                                "statement": packet.ledger["claims"][0]["statement"]}]


@VERSIONS
def test_lane_of_another_wave_is_unapproved(tmp_path: Path, version: int) -> None:
    """'approved lanes bind wave mode, write root, and per-lane outcomes' (wrong wave)."""
    packet = fixture(tmp_path, version)
    edit(packet, "reviews/semantic.json", lambda r: r.update(reviewerLane="lane-gather"))
    assert check(packet).at("UNAPPROVED_LANE", "review-semantic")


@VERSIONS
def test_artifact_outside_write_root(tmp_path: Path, version: int) -> None:
    """'approved lanes bind wave mode, write root, and per-lane outcomes' (write root)."""
    packet = fixture(tmp_path, version, "quick")
    wave = next(w for w in packet.manifest["execution"]["waves"] if w["mode"] == "map")
    wave["lanes"][0]["writeRoot"] = "raw/elsewhere"
    packet.approve()
    save(packet)
    assert "LANE_WRITE_PATH_VIOLATION" in check(packet).codes


def _silent_lane(tmp_path: Path, version: int) -> Any:
    packet = fixture(tmp_path, version, "quick")
    wave = next(w for w in packet.manifest["execution"]["waves"] if w["mode"] == "gather")
    wave["lanes"].append({"laneId": "lane-gather-2", "scope": "packet/gather-2",
                          "writeRoot": "raw/dossiers/gather-2.json"})
    packet.approve()
    save(packet)
    return packet


def _failed_second_lane(tmp_path: Path, version: int) -> Any:
    packet = _silent_lane(tmp_path, version)
    ref = packet.write("raw/dossiers/gather-2.json", {
        "kind": "recon.raw-dossier", "schemaVersion": 1, "id": "dossier-gather-2",
        "runId": "run-render", "waveId": "wave-gather", "laneId": "lane-gather-2",
        "mode": "gather", "outcome": "failed", "allowedInputs": ["source-1"],
        "excludedInputs": [], "findings": [], "uncertainty": [], "contradictions": [],
        "gaps": []})
    packet.manifest["artifacts"].append(ref)
    packet.manifest["run"]["status"] = "partial"
    return packet


LANE_GAP_MESSAGE = "gather lane lane-gather-2 was cancelled before writing."


def _failed_lane_with(tmp_path: Path, version: int, outcome_gap: dict[str, Any]) -> Any:
    """The failed second gather lane with one more manifest gap; the verdict."""
    packet = _failed_second_lane(tmp_path, version)
    packet.manifest["gaps"].append(outcome_gap)
    save(packet)
    return check(packet)


@VERSIONS
def test_silent_lane_needs_an_outcome(tmp_path: Path, version: int) -> None:
    """'approved lanes bind wave mode, write root, and per-lane outcomes' (silent lane)."""
    assert check(_silent_lane(tmp_path, version)).at("MISSING_LANE_OUTCOME", "lane:lane-gather-2")


@VERSIONS
def test_failed_lane_artifact_is_no_outcome(tmp_path: Path, version: int) -> None:
    """'approved lanes bind wave mode, write root, and per-lane outcomes' (failed artifact)."""
    packet = _failed_second_lane(tmp_path, version)
    packet.manifest["run"]["status"] = "complete"
    save(packet)
    assert check(packet).at("MISSING_LANE_OUTCOME", "lane:lane-gather-2")


@VERSIONS
def test_redundant_gather_gap_does_not_cover_gather(tmp_path: Path, version: int) -> None:
    """'approved lanes bind wave mode, write root, and per-lane outcomes' (whole-token mode)."""
    verdict = _failed_lane_with(tmp_path, version, gap(
        "gap-substring", "PASS_FAILED", "redundant-gather was omitted before writing."))
    assert verdict.at("MISSING_LANE_OUTCOME", "lane:lane-gather-2")


@V2
def test_mode_only_gap_does_not_cover_one_lane_of_many(tmp_path: Path, version: int) -> None:
    """'approved lanes bind wave mode, write root, and per-lane outcomes' (mode-only gap)."""
    verdict = _failed_lane_with(tmp_path, version,
                                gap("gap-mode-only-gather", "PASS_FAILED", LANE_GAP_MESSAGE))
    assert verdict.at("MISSING_LANE_OUTCOME", "lane:lane-gather-2")


@V1
def test_mode_gap_covers_the_lane_honest_partial(tmp_path: Path, version: int) -> None:
    """'approved lanes bind wave mode, write root, and per-lane outcomes' (honest partial, v1)."""
    verdict = _failed_lane_with(tmp_path, version,
                                gap("gap-lane-gather-2", "PASS_FAILED", LANE_GAP_MESSAGE))
    assert verdict.valid, verdict.outcome.issues
    assert verdict.outcome.achieved_profile == "quick"


@V2
def test_lane_identity_gap_is_an_honest_partial(tmp_path: Path, version: int) -> None:
    """'approved lanes bind wave mode, write root, and per-lane outcomes' (honest partial, v2)."""
    verdict = _failed_lane_with(tmp_path, version, gap(
        "gap-lane-gather-2", "PASS_FAILED", LANE_GAP_MESSAGE, waveId="wave-gather",
        laneId="lane-gather-2"))
    assert verdict.valid, verdict.outcome.issues
    assert verdict.outcome.achieved_profile == "quick"
    assert verdict.outcome.run is not None and verdict.outcome.run.publishable
    assert verdict.status == "partial"
    assert "CONTRADICTORY_PASS_OUTCOME" not in verdict.codes


@VERSIONS
def test_cancelled_lane_downgrades_the_profile(tmp_path: Path, version: int) -> None:
    """'a cancelled lane without a typed result downgrades the achieved profile'."""
    packet = fixture(tmp_path, version)
    packet.manifest["artifacts"] = [a for a in packet.manifest["artifacts"]
                                    if a["path"] != "reviews/semantic.json"]
    save(packet)
    verdict = check(packet)
    assert not verdict.valid
    assert verdict.outcome.achieved_profile != "standard"
    assert {"MISSING_PASS_OUTCOME_EVIDENCE", "ACHIEVED_PROFILE_MISMATCH"} <= verdict.codes


def _failed_semantic(tmp_path: Path, version: int) -> Any:
    return fixture(tmp_path, version, requested="standard", achieved="quick", status="partial",
                   failed_pass="semantic-verification")


@VERSIONS
def test_missing_pass_with_outcome_gap_is_honest(tmp_path: Path, version: int) -> None:
    """'a missing required pass needs a material outcome gap naming it' (honest)."""
    verdict = check(_failed_semantic(tmp_path, version))
    assert verdict.valid, verdict.outcome.issues
    assert verdict.outcome.achieved_profile == "quick"


@VERSIONS
def test_missing_pass_without_gap(tmp_path: Path, version: int) -> None:
    """'a missing required pass needs a material outcome gap naming it' (silent)."""
    packet = _failed_semantic(tmp_path, version)
    packet.manifest["gaps"] = [g for g in packet.manifest["gaps"]
                               if "semantic-verification" not in g["message"]]
    save(packet)
    assert check(packet).at("MISSING_PASS_OUTCOME_EVIDENCE", "pass:semantic-verification")


@VERSIONS
@pytest.mark.parametrize("state", ["unpinned", "stale", "invalid", "unavailable"])
def test_closed_source_states_need_a_gap(tmp_path: Path, version: int, state: str) -> None:
    """'closed source states are ineligible until explicitly gapped'."""
    packet = fixture(tmp_path, version, "quick")
    packet.manifest["sources"][0].update(validationState=state, available=state != "unavailable")
    save(packet)
    assert {"INELIGIBLE_SOURCE_STATE", "MISSING_SOURCE_GAP"} <= check(packet).codes


@VERSIONS
def test_invented_source_state(tmp_path: Path, version: int) -> None:
    """'closed source states are ineligible until explicitly gapped' (invented state)."""
    packet = fixture(tmp_path, version, "quick")
    packet.manifest["sources"][0]["validationState"] = "invented"
    save(packet)
    assert "INVALID_SOURCE_VALIDATION_STATE" in check(packet).codes


@VERSIONS
def test_reconciliation_binds_prior_state(tmp_path: Path, version: int) -> None:
    """'reconciliation binds every prior/current state and preserves ...' (wrong origin)."""
    packet = fixture(tmp_path, version)
    edit(packet, "reviews/reconciliation.json",
         lambda r: r["transitions"][0].update({"from": "provisional"}))
    packet.ledger["transitions"][0]["from"] = "provisional"
    packet.persist()
    assert "RECONCILIATION_TRANSITION_BINDING_MISMATCH" in check(packet).codes


@VERSIONS
def test_reconciliation_binds_exactly_one_transition(tmp_path: Path, version: int) -> None:
    """'reconciliation binds every prior/current state and preserves ...' (duplicate)."""
    packet = fixture(tmp_path, version)
    edit(packet, "reviews/reconciliation.json",
         lambda r: r["transitions"].append(dict(r["transitions"][0])))
    packet.ledger["transitions"].append(dict(packet.ledger["transitions"][0]))
    packet.persist()
    assert "RECONCILIATION_TRANSITION_BINDING_MISMATCH" in check(packet).codes


FINDING = {"id": "coverage-gap-1", "gapId": "gap-missing", "code": "MISSING_CORROBORATION",
           "message": "A corroborating source is absent.", "material": True,
           "claimIds": ["claim-1"]}


@VERSIONS
def test_material_coverage_finding_bindings(tmp_path: Path, version: int) -> None:
    """'material coverage findings bind an affected claim, manifest gap, and reconciliation ...'."""
    packet = fixture(tmp_path, version)
    edit(packet, "reviews/coverage.json", lambda r: r.update(coverageFindings=[dict(FINDING)]))
    codes = check(packet).codes
    assert {"COVERAGE_GAP_MISMATCH", "COVERAGE_RECONCILIATION_MISMATCH"} <= codes


@VERSIONS
def test_review_from_unapproved_lane(tmp_path: Path, version: int) -> None:
    """'claim assurance and reconciliation reject a review from an unapproved lane'."""
    packet = fixture(tmp_path, version)
    edit(packet, "reviews/semantic.json", lambda r: r.update(reviewerLane="lane-semantic-rogue"))
    assert "UNAPPROVED_LANE" in check(packet).codes


@VERSIONS
def test_thorough_only_passes_are_claim_bearing(tmp_path: Path, version: int) -> None:
    """'thorough-only assurance passes use claim-bearing typed results'."""
    packet = fixture(tmp_path, version, "thorough")
    kinds = ["redundant-verification"] + (["contradiction-resolution"] if version == 1 else [])
    for kind in kinds:
        artifact = packet.read(f"reviews/{kind}.json")
        assert artifact["kind"] == "recon.review-result" and artifact["reviewKind"] == kind
        assert artifact["dispositions"] and artifact["permittedInputs"]
    assert check(packet).outcome.achieved_profile == "thorough"


@VERSIONS
def test_reconciliation_cannot_reset_to_revision_one(tmp_path: Path, version: int) -> None:
    """'standard reconciliation cannot reset the canonical ledger to revision one'."""
    packet = fixture(tmp_path, version)
    packet.ledger["revision"] = 1
    packet.persist()
    assert "RECONCILIATION_REVISION_MISMATCH" in check(packet).codes


@VERSIONS
def test_removal_needs_typed_authorization(tmp_path: Path, version: int) -> None:
    """'reconciliation cannot remove a contested claim without a typed review authorization'."""
    packet = fixture(tmp_path, version)
    packet.ledger["claims"] = [c for c in packet.ledger["claims"] if c["id"] != "claim-2"]
    edit(packet, "reviews/reconciliation.json", lambda r: r.update(removals=["claim-2"]))
    packet.persist()
    assert "UNAUTHORIZED_CLAIM_REMOVAL" in check(packet).codes


def _rejecting_semantic(packet: Any, prior_ledger: dict[str, Any], brief_id: str) -> None:
    """A verify brief of both claims, and a semantic review rejecting claim-2."""
    brief = packet.brief(brief_id, "verify", prior_ledger, ["claim-1", "claim-2"])
    ref = packet.replace("reviews/briefs/verify.json", brief)

    def reject(result: dict[str, Any]) -> None:
        result.update(brief=dict(ref), permittedInputs=[dict(ref)])
        result["dispositions"].append({"claimId": "claim-2", "disposition": "rejected"})

    edit(packet, "reviews/semantic.json", reject)


AUTHORIZED = [{"claimId": "claim-2", "reviewId": "review-semantic", "disposition": "rejected"}]


@VERSIONS
def test_typed_rejection_authorizes_removal(tmp_path: Path, version: int) -> None:
    """'a complete typed rejection can explicitly authorize prior claim removal'."""
    packet = fixture(tmp_path, version)
    _rejecting_semantic(packet, packet.read(PRIOR), "brief-verify-removal")
    packet.ledger["claims"] = [c for c in packet.ledger["claims"] if c["id"] != "claim-2"]
    edit(packet, "reviews/reconciliation.json",
         lambda r: r.update(removals=["claim-2"], removalDispositions=AUTHORIZED))
    packet.persist()
    verdict = check(packet)
    assert verdict.valid, verdict.outcome.issues
    assert "claim-2" not in {c["id"] for c in packet.ledger["claims"]}


@VERSIONS
def test_shadow_reconciliation_from_forged_prior(tmp_path: Path, version: int) -> None:
    """'a shadow reconciliation cannot authorize removal from a forged prior ledger'."""
    packet = fixture(tmp_path, version)
    forged = packet.read(PRIOR)
    next(c for c in forged["claims"] if c["id"] == "claim-2")["statement"] = \
        "Forged prior statement that was never canonical."
    forged_ref = packet.write("raw/drafts/claims-forged.json", forged)
    _rejecting_semantic(packet, forged, "brief-verify-shadow")
    packet.ledger["claims"] = [c for c in packet.ledger["claims"] if c["id"] != "claim-2"]
    edit(packet, "reviews/reconciliation.json",
         lambda r: r.update(removals=["claim-2"], removalDispositions=AUTHORIZED))
    shadow = packet.read("reviews/reconciliation.json")
    shadow.update(id="review-reconciliation-shadow",
                  inputLedger={**forged_ref, "revision": forged["revision"]})
    shadow_ref = packet.write("reviews/reconciliation-shadow.json", shadow)
    at = [a["path"] for a in packet.manifest["artifacts"]].index("reviews/reconciliation.json")
    packet.manifest["artifacts"][at:at] = [forged_ref, shadow_ref]
    packet.persist()
    assert "SHADOW_RECONCILIATION" in check(packet).codes


def _material_coverage_gap(packet: Any, *, downgrade: bool) -> None:
    def find(result: dict[str, Any]) -> None:
        result["coverageFindings"] = [{**FINDING, "id": "coverage-gap-material",
                                       "gapId": "gap-material-coverage"}]
        if downgrade:
            result["dispositions"][0]["disposition"] = "gap"

    edit(packet, "reviews/coverage.json", find)
    packet.manifest["gaps"].append(gap("gap-material-coverage", "MISSING_CORROBORATION",
                                       "A corroborating source is absent.", claims=["claim-1"],
                                       findings=["coverage-gap-material"]))
    packet.manifest["run"]["status"] = "partial"

    def accept(result: dict[str, Any]) -> None:
        result["coverageDispositions"] = [{"findingId": "coverage-gap-material",
                                           "gapId": "gap-material-coverage",
                                           "disposition": "accepted-gap"}]
        if downgrade:
            result["transitions"][0] = {"claimId": "claim-1", "from": "supported",
                                        "to": "contested"}
            packet.ledger["transitions"] = json.loads(json.dumps(result["transitions"]))
            packet.ledger["claims"][0]["status"] = "contested"

    edit(packet, "reviews/reconciliation.json", accept)
    packet.persist()


@VERSIONS
def test_material_coverage_gap_prevents_verified(tmp_path: Path, version: int) -> None:
    """'material coverage gaps prevent verified assurance for every affected claim'."""
    packet = fixture(tmp_path, version)
    _material_coverage_gap(packet, downgrade=False)
    assert "MATERIAL_COVERAGE_ASSURANCE_EXCEEDED" in check(packet).codes


@VERSIONS
def test_material_coverage_gap_honest_partial(tmp_path: Path, version: int) -> None:
    """'material coverage gaps publish an honest partial at the exact downgraded claim state'."""
    packet = fixture(tmp_path, version)
    _material_coverage_gap(packet, downgrade=True)
    verdict = check(packet)
    assert verdict.valid, verdict.outcome.issues
    assert verdict.claim_state("claim-1") == "contested" and verdict.status == "partial"


def _stale_source(packet: Any) -> None:
    packet.manifest["sources"][0]["validationState"] = "stale"
    packet.ledger["evidence"][0]["locatorValidation"]["status"] = "stale"


@VERSIONS
def test_gapped_stale_source_stays_auditable(tmp_path: Path, version: int) -> None:
    """'exactly gapped stale sources remain auditable below supported assurance'."""
    packet = fixture(tmp_path, version, "quick")
    _stale_source(packet)
    packet.ledger["claims"][0]["status"] = "contested"
    packet.ledger["transitions"][0] = {"claimId": "claim-1", "from": "provisional",
                                       "to": "contested"}
    packet.manifest["run"]["status"] = "partial"
    packet.manifest["gaps"].append(gap("gap-stale-source", "SOURCE_STALE",
                                       "The source changed after collection.",
                                       sources=["source-1"], claims=["claim-1", "claim-2"]))
    packet.persist()
    verdict = check(packet)
    assert verdict.valid, verdict.outcome.issues
    assert verdict.status == "partial" and verdict.claim_state("claim-1") == "contested"


def _all_contested(packet: Any) -> None:
    for claim in packet.ledger["claims"]:
        claim["status"] = "contested"
    packet.ledger["transitions"] = [{"claimId": c["id"], "from": "provisional", "to": "contested"}
                                    for c in packet.ledger["claims"]]


@VERSIONS
@pytest.mark.parametrize("state", ["stale", "invalid", "unavailable"])
def test_audit_evidence_is_still_secret_safe(tmp_path: Path, version: int, state: str) -> None:
    """'ineligible audit evidence remains subject to secret-safe persistence'."""
    packet = fixture(tmp_path, version, "quick")
    packet.manifest["sources"][0].update(validationState=state, available=state != "unavailable")
    record = packet.ledger["evidence"][0]
    record["locatorValidation"]["status"] = "invalid" if state == "unavailable" else state
    record["displayExcerpt"] = "api_key=round-four-secret-value"
    _all_contested(packet)
    packet.manifest["run"]["status"] = "partial"
    packet.manifest["gaps"].append(gap(f"gap-{state}-source", "SOURCE_INELIGIBLE",
                                       "The source is retained only for audit.",
                                       sources=["source-1"], claims=["claim-1", "claim-2"]))
    packet.persist()
    verdict = check(packet)
    assert "UNREDACTED_SECRET" in verdict.codes
    told = json.dumps([i.to_dict() for i in verdict.outcome.issues + verdict.outcome.advisories])
    assert "round-four-secret-value" not in told


@VERSIONS
def test_source_gap_requires_material_partial(tmp_path: Path, version: int) -> None:
    """'source ineligibility derives a material gap and partial publication'."""
    packet = fixture(tmp_path, version, "quick")
    _stale_source(packet)
    _all_contested(packet)
    packet.manifest["gaps"].append(gap("gap-stale-non-material", "SOURCE_STALE",
                                       "The source changed after collection.", material=False,
                                       sources=["source-1"], claims=["claim-1", "claim-2"]))
    packet.persist()
    assert "SOURCE_GAP_REQUIRES_MATERIAL_PARTIAL" in check(packet).codes


@VERSIONS
def test_stale_gap_must_cover_every_claim(tmp_path: Path, version: int) -> None:
    """'stale-source audit gaps must cover every affected claim and downgrade assurance' (cover)."""
    packet = fixture(tmp_path, version, "quick")
    _stale_source(packet)
    _all_contested(packet)
    packet.manifest["run"]["status"] = "partial"
    packet.manifest["gaps"].append(gap("gap-stale-incomplete", "SOURCE_STALE",
                                       "The source changed after collection.",
                                       sources=["source-1"], claims=["claim-1"]))
    packet.persist()
    assert "MISSING_SOURCE_GAP" in check(packet).codes


@VERSIONS
def test_stale_gap_must_downgrade_assurance(tmp_path: Path, version: int) -> None:
    """'stale-source audit gaps must cover every affected claim and downgrade assurance' (level)."""
    packet = fixture(tmp_path, version, "quick")
    _stale_source(packet)
    packet.manifest["run"]["status"] = "partial"
    packet.manifest["gaps"].append(gap("gap-stale-without-downgrade", "SOURCE_STALE",
                                       "The source changed after collection.",
                                       sources=["source-1"], claims=["claim-1", "claim-2"]))
    packet.persist()
    assert "CLAIM_ASSURANCE_INVALID" in check(packet).codes
