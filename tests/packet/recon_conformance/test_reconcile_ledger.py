"""The recon tool's reconcile-ledger tests: reconciled packets, and what the reconciler refuses.

Each test transcribes one scenario of a ``production reconciliation`` test
in the recon tool's ``tests/integrity-contracts.test.mjs`` (quoted in the
docstring). The reconciled ledger and reconciliation come from
:meth:`ReconPacket.reconcile`, which reconciles as the recon tool's
``reconcileLedger`` does; the packet is then validated in place and must
get that tool's verdict. Where the recon tool's reconciler refuses its
input, the case asserts the refusal and, separately, that a packet
persisting the same dishonest review is refused by the validator with the
code the recon tool's validator gives it.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from recon_cases import (
    PRIOR,
    VERSIONS,
    Verdict,
    check,
    core_results,
    edit,
    fixture,
    gap,
    prior,
    provisional_prior,
    reconcile_into,
)

from assay.packet.render import render_markdown


def claim_transitions(reconciliation: dict[str, Any], claim_id: str) -> list[dict[str, str]]:
    return [t for t in reconciliation["transitions"] if t["claimId"] == claim_id]


def reconciled(packet: Any, ledger_v1: dict[str, Any], ref: dict[str, str], claim_id: str,
               before: str, after: str) -> Verdict:
    """Reconcile and persist; the reconciler moved ``claim_id`` once, and the packet is valid."""
    ledger, reconciliation = reconcile_into(packet, ledger_v1, ref)
    assert next(c for c in ledger["claims"] if c["id"] == claim_id)["status"] == after
    assert claim_transitions(reconciliation, claim_id) == [
        {"claimId": claim_id, "from": before, "to": after}]
    verdict = check(packet)
    assert verdict.valid, verdict.outcome.issues
    assert verdict.claim_state(claim_id) == after
    return verdict


@VERSIONS
def test_reconcile_is_deterministic_and_verifies(tmp_path: Path, version: int) -> None:
    """'production reconciliation deterministically consumes the prior ledger and typed results'."""
    packet = fixture(tmp_path, version)
    ledger_v1, ref = prior(packet)
    results = core_results(packet)
    first = packet.reconcile(ledger_v1, results, ref)
    assert first == packet.reconcile(ledger_v1, results, ref)
    assert first[0]["revision"] == ledger_v1["revision"] + 1
    assert first[0]["claims"][0]["evidence"] == ledger_v1["claims"][0]["evidence"]
    assert first[0]["claims"][0]["status"] == "verified"


@VERSIONS
def test_reconcile_refuses_a_duplicate_result(tmp_path: Path, version: int) -> None:
    """'production reconciliation deterministically consumes ...' (a duplicate result)."""
    packet = fixture(tmp_path, version)
    ledger_v1, ref = prior(packet)
    results = core_results(packet)
    with pytest.raises(ValueError, match="duplicate|shadow"):
        packet.reconcile(ledger_v1, [*results, copy.deepcopy(results[0])], ref)


@VERSIONS
def test_listed_duplicate_result_is_refused(tmp_path: Path, version: int) -> None:
    """'production reconciliation deterministically consumes ...' (the duplicate, persisted)."""
    packet = fixture(tmp_path, version)
    duplicate = packet.write("reviews/semantic-copy.json", packet.read("reviews/semantic.json"))
    packet.manifest["artifacts"].append(duplicate)
    packet.persist()
    assert "DUPLICATE_ARTIFACT_ID" in check(packet).codes


@VERSIONS
def test_reconcile_coverage_gap_never_verifies(tmp_path: Path, version: int) -> None:
    """'production reconciliation never verifies a claim with a coverage gap disposition'."""
    packet = fixture(tmp_path, version)
    edit(packet, "reviews/coverage.json",
         lambda r: r["dispositions"][0].update(disposition="gap"))
    ledger, reconciliation = packet.reconcile(*_prior_pair(packet))
    assert ledger["claims"][0]["status"] == "supported"
    assert claim_transitions(reconciliation, "claim-1") == []


def _prior_pair(packet: Any) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, str]]:
    ledger_v1, ref = prior(packet)
    return ledger_v1, core_results(packet), ref


@VERSIONS
def test_reconcile_downgrades_verified_with_coverage_gap(tmp_path: Path, version: int) -> None:
    """'production reconciliation downgrades a previously verified claim with a coverage gap'."""
    packet = fixture(tmp_path, version)
    ledger_v1, _ref = prior(packet)
    ledger_v1["claims"][0]["status"] = "verified"
    ledger_v1["transitions"][0] = {"claimId": "claim-1", "from": "provisional", "to": "verified"}
    ref = packet.replace(PRIOR, ledger_v1)
    edit(packet, "reviews/coverage.json",
         lambda r: r["dispositions"][0].update(disposition="gap"))
    reconciled(packet, ledger_v1, ref, "claim-1", "verified", "unresolved")


@VERSIONS
def test_reconcile_keeps_challenged_claim_contested(tmp_path: Path, version: int) -> None:
    """'production reconciliation retains a challenged claim as contested through compilation'."""
    packet = fixture(tmp_path, version)
    edit(packet, "reviews/adversarial.json",
         lambda r: r["dispositions"][0].update(disposition="challenged"))
    ledger_v1, ref = prior(packet)
    packet.manifest["run"]["status"] = "partial"
    packet.manifest["gaps"].append(gap("gap-adversarial-challenge", "UNRESOLVED_CHALLENGE",
                                       "The adversarial review retained a material "
                                       "contradiction.", claims=["claim-1"]))
    reconciled(packet, ledger_v1, ref, "claim-1", "supported", "contested")


@VERSIONS
def test_reconcile_typed_rejection_makes_unsupported(tmp_path: Path, version: int) -> None:
    """'production reconciliation converts a typed rejection into an unsupported claim ...'."""
    packet = fixture(tmp_path, version)
    ledger_v1, ref = prior(packet)
    brief = packet.brief("brief-verify-removal", "verify", ledger_v1, ["claim-1", "claim-2"])
    brief_ref = packet.replace("reviews/briefs/verify.json", brief)

    def reject(result: dict[str, Any]) -> None:
        result.update(brief=dict(brief_ref), permittedInputs=[dict(brief_ref)])
        result["dispositions"].append({"claimId": "claim-2", "disposition": "rejected"})

    edit(packet, "reviews/semantic.json", reject)
    reconciled(packet, ledger_v1, ref, "claim-2", "contested", "unsupported")


@VERSIONS
def test_reconcile_rejected_key_claim_renders_unsupported(tmp_path: Path, version: int) -> None:
    """'reconciling a rejected key claim transitions it to unsupported and renders it accurately'."""
    packet = fixture(tmp_path, version)
    edit(packet, "reviews/semantic.json",
         lambda r: r["dispositions"][0].update(disposition="rejected"))
    ledger_v1, ref = prior(packet)
    verdict = reconciled(packet, ledger_v1, ref, "claim-1", "supported", "unsupported")
    assert verdict.outcome.run is not None
    text = render_markdown(verdict.outcome.run)
    by_state = text.split("### Unsupported (1)")[1].split("###")[0]
    assert "**claim-1**" in by_state
    assert "**claim-1** (unsupported)" in text.split("## Contradictions and Qualifications")[1]


def _unresolved_partial(packet: Any, gap_id: str, message: str) -> None:
    packet.manifest["run"]["status"] = "partial"
    packet.manifest["gaps"].append(gap(gap_id, "INCOMPLETE_REVIEW", message, claims=["claim-1"]))


@VERSIONS
@pytest.mark.parametrize("scenario", ["uncertain semantic review", "missing coverage disposition"])
def test_reconcile_uncertain_or_incomplete_is_unresolved(tmp_path: Path, version: int,
                                                         scenario: str) -> None:
    """'production reconciliation transitions uncertain and incomplete provisional claims ...'."""
    packet = fixture(tmp_path, version)
    ledger_v1, ref = provisional_prior(packet)
    if scenario == "uncertain semantic review":
        edit(packet, "reviews/semantic.json",
             lambda r: r["dispositions"][0].update(disposition="uncertain"))
    else:
        edit(packet, "reviews/coverage.json", lambda r: r.update(dispositions=[]))
    _unresolved_partial(packet, f"gap-{scenario.replace(' ', '-')}",
                        f"Claim review remained incomplete: {scenario}.")
    verdict = reconciled(packet, ledger_v1, ref, "claim-1", "provisional", "unresolved")
    assert verdict.status == "partial"


@VERSIONS
def test_reconcile_claim_omitted_by_every_review(tmp_path: Path, version: int) -> None:
    """'production reconciliation transitions a provisional claim omitted by every review ...'."""
    packet = fixture(tmp_path, version)
    ledger_v1, ref = provisional_prior(packet)
    for kind in ("semantic", "adversarial", "coverage"):
        edit(packet, f"reviews/{kind}.json", lambda r: r.update(
            dispositions=[d for d in r["dispositions"] if d["claimId"] != "claim-1"]))
    _unresolved_partial(packet, "gap-claim-omitted-by-all-reviews",
                        "The claim was omitted by every required review.")
    verdict = reconciled(packet, ledger_v1, ref, "claim-1", "provisional", "unresolved")
    assert verdict.status == "partial"


@VERSIONS
def test_reconcile_non_material_coverage_gap_unresolved(tmp_path: Path, version: int) -> None:
    """'production reconciliation transitions a provisional claim with a non-material coverage ...'."""
    packet = fixture(tmp_path, version)
    ledger_v1, ref = provisional_prior(packet)
    edit(packet, "reviews/coverage.json",
         lambda r: r["dispositions"][0].update(disposition="gap"))
    packet.manifest["run"]["status"] = "partial"
    packet.manifest["gaps"].append(gap("gap-claim-coverage-gap", "COVERAGE_GAP",
                                       "The claim was subject to a coverage gap.",
                                       claims=["claim-1"]))
    verdict = reconciled(packet, ledger_v1, ref, "claim-1", "provisional", "unresolved")
    assert verdict.status == "partial"


@VERSIONS
def test_reconcile_material_coverage_gap_contested(tmp_path: Path, version: int) -> None:
    """'production reconciliation transitions a provisional claim with a material coverage ...'."""
    packet = fixture(tmp_path, version)
    ledger_v1, ref = provisional_prior(packet)

    def find(result: dict[str, Any]) -> None:
        result["dispositions"][0]["disposition"] = "gap"
        result["coverageFindings"] = [{"id": "coverage-gap-material",
                                       "gapId": "gap-material-coverage",
                                       "code": "MISSING_CORROBORATION",
                                       "message": "A corroborating source is absent.",
                                       "material": True, "claimIds": ["claim-1"]}]

    edit(packet, "reviews/coverage.json", find)
    packet.manifest["run"]["status"] = "partial"
    packet.manifest["gaps"].append(gap("gap-material-coverage", "MISSING_CORROBORATION",
                                       "A corroborating source is absent.", claims=["claim-1"],
                                       findings=["coverage-gap-material"]))
    verdict = reconciled(packet, ledger_v1, ref, "claim-1", "provisional", "contested")
    assert verdict.status == "partial"


@VERSIONS
def test_reconcile_keeps_unsupported_claim(tmp_path: Path, version: int) -> None:
    """'production reconciliation promotes an unresolved claim ... preserving unsupported claims'."""
    packet = fixture(tmp_path, version)
    ledger_v1, ref = prior(packet)
    ledger_v1["claims"][0]["status"] = "unsupported"
    ledger_v1["transitions"][0]["to"] = "unsupported"
    ledger, reconciliation = packet.reconcile(ledger_v1, core_results(packet), ref)
    assert ledger["claims"][0]["status"] == "unsupported"
    assert claim_transitions(reconciliation, "claim-1") == []


@VERSIONS
def test_reconcile_promotes_unresolved_claim(tmp_path: Path, version: int) -> None:
    """'production reconciliation promotes an unresolved claim after complete independent review'."""
    packet = fixture(tmp_path, version)
    ledger_v1, _ref = prior(packet)
    ledger_v1["claims"][0]["status"] = "unresolved"
    ledger_v1["transitions"][0] = {"claimId": "claim-1", "from": "provisional",
                                   "to": "unresolved"}
    ref = packet.replace(PRIOR, ledger_v1)
    reconciled(packet, ledger_v1, ref, "claim-1", "unresolved", "verified")


def _review_evidence(packet: Any) -> dict[str, Any]:
    record = copy.deepcopy(prior(packet)[0]["evidence"][0])
    record["id"] = "evidence-review-1"
    return record


def _supports(evidence_id: str, claim: str = "claim-1",
              relation: str = "supports") -> dict[str, str]:
    return {"evidenceId": evidence_id, "claimId": claim, "relation": relation}


@VERSIONS
def test_reconcile_incorporates_review_evidence(tmp_path: Path, version: int) -> None:
    """'production reconciliation retains exact incorporated review evidence ...' (incorporated)."""
    packet = fixture(tmp_path, version)
    ledger_v1, results, ref = _prior_pair(packet)
    record = _review_evidence(packet)
    results[0]["dispositions"].append({"claimId": "claim-2", "disposition": "affirmed"})
    results[0]["newEvidence"] = [record]
    results[0]["evidenceAssociations"] = [_supports(record["id"])]
    ledger, _rec = packet.reconcile(ledger_v1, results, ref)
    assert ledger["evidence"][-1] == record
    assert ledger["claims"][0]["evidence"][-1] == {"evidenceId": record["id"],
                                                   "relation": "supports"}
    assert ledger["claims"][1]["evidence"] == ledger_v1["claims"][1]["evidence"]


@VERSIONS
def test_reconcile_without_new_evidence_keeps_evidence(tmp_path: Path, version: int) -> None:
    """'production reconciliation retains exact incorporated review evidence ...' (none)."""
    packet = fixture(tmp_path, version)
    ledger_v1, results, ref = _prior_pair(packet)
    ledger, _rec = packet.reconcile(ledger_v1, results, ref)
    assert ledger["evidence"] == ledger_v1["evidence"]
    assert ledger["claims"][0]["evidence"] == ledger_v1["claims"][0]["evidence"]


def _dishonest(kind: str, packet: Any) -> tuple[list[dict[str, Any]], str]:
    """Results made dishonest the way the recon tool's test does; the refusal it expects."""
    _ledger, results, _ref = _prior_pair(packet)
    record = _review_evidence(packet)
    first = results[0]
    if kind == "duplicate evidence":
        first["newEvidence"] = [record, copy.deepcopy(record)]
        first["evidenceAssociations"] = [_supports(record["id"])]
    elif kind == "conflicting evidence":
        first["newEvidence"] = [record]
        first["evidenceAssociations"] = [_supports(record["id"])]
        other = {**copy.deepcopy(record), "displayExcerpt": "conflicting bytes"}
        results[1]["newEvidence"] = [other]
        results[1]["evidenceAssociations"] = [_supports(record["id"], relation="context")]
    elif kind == "unincorporated evidence":
        first["newEvidence"] = [record]
        first["evidenceAssociations"] = []
    elif kind == "cross-claim association":
        first["newEvidence"] = [record]
        first["evidenceAssociations"] = [_supports(record["id"], claim="claim-2")]
    elif kind == "duplicate association":
        first["newEvidence"] = [record]
        first["evidenceAssociations"] = [_supports(record["id"]), _supports(record["id"])]
    elif kind == "invented association":
        first["evidenceAssociations"] = [_supports("evidence-not-supplied")]
    elif kind == "schema-invalid review":
        first["newEvidence"] = [{k: v for k, v in record.items() if k != "locator"}]
    return results, {"duplicate evidence": "duplicate evidence",
                     "conflicting evidence": "conflicting evidence",
                     "unincorporated evidence": "unincorporated evidence",
                     "cross-claim association": "association.*disposition",
                     "duplicate association": "duplicate evidence association",
                     "invented association": "association.*new evidence",
                     "schema-invalid review": "schema-invalid review"}[kind]


DISHONEST = ["duplicate evidence", "conflicting evidence", "unincorporated evidence",
             "cross-claim association", "duplicate association", "invented association",
             "schema-invalid review"]
# The recon tool's validator's code for a packet persisting each dishonest review.
PERSISTED = {"duplicate evidence": "RECONCILIATION_EVIDENCE_INVENTION",
             "conflicting evidence": "RECONCILIATION_EVIDENCE_INVENTION",
             "unincorporated evidence": "REVIEW_EVIDENCE_ASSOCIATION_MISMATCH",
             "cross-claim association": "REVIEW_EVIDENCE_ASSOCIATION_MISMATCH",
             "duplicate association": "REVIEW_EVIDENCE_ASSOCIATION_MISMATCH",
             "invented association": "REVIEW_EVIDENCE_ASSOCIATION_MISMATCH",
             "schema-invalid review": "MISSING_REQUIRED_FIELD"}


@VERSIONS
@pytest.mark.parametrize("kind", DISHONEST)
def test_reconcile_refuses_dishonest_review_evidence(tmp_path: Path, version: int,
                                                     kind: str) -> None:
    """'production reconciliation retains exact incorporated review evidence and rejects ...'."""
    packet = fixture(tmp_path, version)
    results, refusal = _dishonest(kind, packet)
    ledger_v1, ref = prior(packet)
    with pytest.raises(ValueError, match=refusal):
        packet.reconcile(ledger_v1, results, ref)


@VERSIONS
@pytest.mark.parametrize("kind", DISHONEST)
def test_persisted_dishonest_review_evidence_is_refused(tmp_path: Path, version: int,
                                                        kind: str) -> None:
    """'production reconciliation retains exact ... rejects dishonest links' (persisted review)."""
    packet = fixture(tmp_path, version)
    results, _refusal = _dishonest(kind, packet)
    for result in results[:2]:
        result.pop("artifactReference")
        packet.replace(f"reviews/{result['reviewKind']}.json", result)
    assert PERSISTED[kind] in check(packet).codes


@VERSIONS
def test_reconcile_refuses_an_invented_prior_link(tmp_path: Path, version: int) -> None:
    """'production reconciliation retains exact ... rejects dishonest links' (invented link)."""
    packet = fixture(tmp_path, version)
    ledger_v1, results, ref = _prior_pair(packet)
    ledger_v1["claims"][0]["evidence"].append({"evidenceId": "evidence-invented",
                                               "relation": "context"})
    with pytest.raises(ValueError, match="invented evidence link"):
        packet.reconcile(ledger_v1, results, ref)


@VERSIONS
def test_persisted_invented_prior_link_is_refused(tmp_path: Path, version: int) -> None:
    """'production reconciliation retains exact ... rejects dishonest links' (link, persisted)."""
    packet = fixture(tmp_path, version)
    edit(packet, PRIOR, lambda ledger: ledger["claims"][0]["evidence"].append(
        {"evidenceId": "evidence-invented", "relation": "context"}))
    assert "UNRESOLVED_EVIDENCE_LINK" in check(packet).codes


@VERSIONS
def test_persisted_reconciliation_with_review_evidence(tmp_path: Path, version: int) -> None:
    """'persisted reconciliation compiles exact review evidence associations against ... briefs'."""
    packet = fixture(tmp_path, version)
    ledger_v1, ref = prior(packet)
    record = _review_evidence(packet)
    edit(packet, "reviews/semantic.json", lambda r: r.update(
        newEvidence=[record], evidenceAssociations=[_supports(record["id"])]))
    reconcile_into(packet, ledger_v1, ref)
    verdict = check(packet)
    assert verdict.valid, verdict.outcome.issues
    assert verdict.outcome.run is not None
    claims = {c.claim_id: c for c in verdict.outcome.run.claims}
    assert (claims["claim-1"].links[-1].evidence_id, claims["claim-1"].links[-1].relation) == \
        (record["id"], "supports")
    assert [link.evidence_id for link in claims["claim-2"].links] == \
        [x["evidenceId"] for x in ledger_v1["claims"][1]["evidence"]]
