"""The packet fixture library: valid packets and one invalid packet per rule.

Every case is built on demand by :func:`packet_testing.example_packet`
plus one deliberate change, so the fixtures stay in step with the format
instead of drifting as copied blobs. ``CASES`` maps a case name to its
builder and its expectation: ``None`` for a valid packet (with the expected
publication), or the exact ``(code, path, pointer)`` the validator must
report. ``materialize(directory)`` writes every case to disk (used by
``PYTHONPATH=tests python tests/packet/packet_fixtures.py DIR`` to inspect them).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.canonical import parse
from assay.packet.layout import file_digest
from packet_testing import PacketBuilder, default_execution, example_packet

AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
M, L = "manifest.json", "claims.json"
REC = "reviews/reconciliation/reconciliation.json"


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[Path], Any]
    expect: tuple[str, str, str] | None = None
    publication: str | None = "complete"


@contextmanager
def validated_packet(make: Callable[[Path], Any], prefix: str) -> Iterator[tuple[Path, Any]]:
    """A packet that ``make`` writes into a fresh temporary directory, with its validated run.

    The directory is removed afterwards. Returns ``(root, run)``.
    """
    from assay.packet.validate import validate

    root = Path(tempfile.mkdtemp(prefix=prefix)) / "p"
    try:
        make(root)
        outcome = validate(root)
        assert outcome.run is not None
        yield root, outcome.run
    finally:
        shutil.rmtree(root.parent)


def boundary_files(run: Any) -> list[str]:
    """The JSON files of a validated packet that the validator reads."""
    return ["manifest.json", "claims.json", *(a.path for a in run.artifacts)]


def unfinished(root: Path, profile: str = "quick", **kw: Any) -> PacketBuilder:
    return example_packet(root, profile, status=None, **kw)


def rewrite(b: PacketBuilder, path: str, change: Callable[[dict[str, Any]], None]) -> None:
    """Edit a JSON artifact and re-register its digest (a consistent edit)."""
    data = b.root.read(path)
    assert isinstance(data, bytes)
    doc = parse(data)
    change(doc)
    b.write_artifact(path, doc)


def artifact_index(b: PacketBuilder, path: str) -> int:
    return [a["path"] for a in b.manifest["artifacts"]].index(path)


def first_dossier(b: PacketBuilder) -> str:
    return b.dossiers[0]["path"]


# -- valid packets ------------------------------------------------------------

def valid_quick(root: Path) -> None:
    example_packet(root, "quick")


def valid_standard(root: Path) -> None:
    example_packet(root, "standard")


def valid_thorough(root: Path) -> None:
    example_packet(root, "thorough")


def valid_partial_lower_profile(root: Path) -> None:
    b = unfinished(root, "quick")
    b.manifest["profile"] = "standard"
    for mode in ("semantic-verification", "adversarial", "coverage", "reconciliation"):
        b.gap(f"gap-{mode}", "PASS_OMITTED", material=True, mode=mode,
              description=f"{mode} was not run")
    b.finish("partial")


def valid_partial_material_gap(root: Path) -> None:
    b = unfinished(root, "quick")
    b.gap("gap-q", "QUESTION_UNANSWERED", material=True, description="the question is open")
    b.finish("partial")


def valid_running(root: Path) -> None:
    b = unfinished(root, "standard")
    b.finish("running")


def valid_redacted(root: Path) -> None:
    b = unfinished(root, "quick")
    b.source("src-secret", f"config: key={AWS_KEY} region=eu\n", title="config")
    b.evidence("ev-red", "src-secret", f"key={AWS_KEY} region=eu", redact=[AWS_KEY])
    b.ledger["claims"][0]["evidence"].append({"evidenceId": "ev-red", "relation": "context"})
    b.finish()


def valid_contested(root: Path) -> None:
    b = unfinished(root, "quick")
    b.evidence("ev-against", "src-0", "Fact 0-1: observation number 1 of source 0 holds.")
    b.claim("claim-c", "A contested statement.", [("ev-0", "supports"), ("ev-against", "contradicts")],
            state="contested", qualifications=["only for small inputs"])
    b.finish()


# -- invalid packets: one per rule ------------------------------------------

def fingerprint_drift(root: Path) -> None:
    b = unfinished(root)
    b.manifest["execution"]["maxConcurrency"] = 3
    b.finish()


def unknown_execution_field(root: Path) -> None:
    b = unfinished(root)
    b.manifest["execution"]["gpu"] = "a100"
    b.finish()


def unapproved_lane(root: Path) -> None:
    b = unfinished(root)
    b.dossier("rogue-1", "gather", "w-gather", path="raw/dossiers/gather-1/rogue.json")
    b.finish()


def write_outside_lane_root(root: Path) -> None:
    b = unfinished(root)
    b.dossier("gather-1", "gather", "w-gather", path="raw/dossiers/map-1/stray.json")
    b.finish()


def missing_lane_outcome(root: Path) -> None:
    b = unfinished(root)
    execution = default_execution("quick")
    execution["waves"][0]["lanes"].append(
        {"laneId": "map-2", "scope": "second map", "writeRoot": "raw/dossiers/map-2"})
    b.approve(execution)
    b.finish()


def missing_pass_outcome(root: Path) -> None:
    b = unfinished(root)
    b.manifest["profile"] = "standard"
    for mode in ("semantic-verification", "adversarial", "coverage"):
        b.gap(f"gap-{mode}", "PASS_OMITTED", material=True, mode=mode, description="not run")
    b.finish("partial")


def duplicate_reconciliation(root: Path) -> None:
    b = unfinished(root, "standard")
    data = b.root.read("reviews/reconciliation/reconciliation.json")
    assert isinstance(data, bytes)
    b.write_artifact("reviews/reconciliation/second.json", data)
    b.finish()


def shadow_reconciliation(root: Path) -> None:
    b = unfinished(root, "standard")
    b.finish()
    shutil.copy(root / "reviews/reconciliation/reconciliation.json",
                root / "reviews/reconciliation/shadow.json")


def symlink_root_alias(root: Path) -> None:
    example_packet(root, "quick")
    elsewhere = root.parent / (root.name + "-elsewhere")
    shutil.copytree(root / "raw/dossiers", elsewhere)
    shutil.rmtree(root / "raw/dossiers")
    os.symlink(elsewhere, root / "raw/dossiers")


def symlink_final_component(root: Path) -> None:
    b = example_packet(root, "quick")
    path = first_dossier(b)
    outside = root.parent / (root.name + "-outside.json")
    shutil.copy(root / path, outside)
    os.unlink(root / path)
    os.symlink(outside, root / path)


def path_escape(root: Path) -> None:
    b = unfinished(root)
    b.manifest["artifacts"].append({"path": "raw/../../outside.json",
                                    "digest": file_digest(b"{}")})
    b.finish()


def digest_mismatch_one_byte(root: Path) -> None:
    b = example_packet(root, "quick")
    path = root / first_dossier(b)
    data = bytearray(path.read_bytes())
    data[data.index(b"finding")] ^= 0x20  # 'f' -> 'F'
    path.write_bytes(bytes(data))


def unknown_evidence_link(root: Path) -> None:
    b = unfinished(root)
    b.ledger["claims"][0]["evidence"].append({"evidenceId": "ev-missing", "relation": "supports"})
    b.finish()


def duplicate_link(root: Path) -> None:
    b = unfinished(root)
    b.ledger["claims"][0]["evidence"].append({"evidenceId": "ev-0", "relation": "context"})
    b.finish()


def open_link_object(root: Path) -> None:
    b = unfinished(root)
    b.ledger["claims"][0]["evidence"][0]["weight"] = 1
    b.finish()


def unknown_relation(root: Path) -> None:
    b = unfinished(root)
    b.ledger["claims"][0]["evidence"][0]["relation"] = "proves"
    b.finish()


def illegal_transition(root: Path) -> None:
    b = unfinished(root)
    b.transition("claim-0", "supported", "provisional", "demoted")
    b.ledger["claims"][0]["state"] = "provisional"
    b.finish()


def genesis_reused(root: Path) -> None:
    b = unfinished(root)
    b.transition("claim-0", None, "provisional", "compiled again")
    b.finish()


NEW_CLAIM = {"claimId": "claim-new", "statement": "A claim the reconciler added.",
             "state": "provisional", "evidence": [], "qualifications": []}
NEW_GENESIS = {"claimId": "claim-new", "from": None, "to": "provisional",
               "reason": "added by reconciliation"}


def _add_claim(root: Path, *, genesis: bool) -> None:
    b = unfinished(root, "standard")
    b.ledger["claims"].append(dict(NEW_CLAIM))
    if genesis:
        b.ledger["transitions"].append(dict(NEW_GENESIS))

    def change(doc: dict[str, Any]) -> None:
        doc["additions"] = ["claim-new"]
        if genesis:
            doc["transitions"].append(dict(NEW_GENESIS))

    rewrite(b, REC, change)
    b.finish()


def valid_added_claim(root: Path) -> None:
    _add_claim(root, genesis=True)


def added_claim_without_genesis(root: Path) -> None:
    _add_claim(root, genesis=False)


def claim_state_mismatch(root: Path) -> None:
    b = unfinished(root)
    b.ledger["claims"][0]["state"] = "unresolved"
    b.finish()


def verified_in_quick(root: Path) -> None:
    b = unfinished(root)
    b.transition("claim-0", "supported", "verified", "promoted")
    b.ledger["claims"][0]["state"] = "verified"
    b.finish()


def secret_in_excerpt(root: Path) -> None:
    b = unfinished(root)
    b.source("src-secret", f"config: key={AWS_KEY} region=eu\n", title="config")
    b.evidence("ev-secret", "src-secret", f"key={AWS_KEY} region=eu")
    b.finish()


def invalid_redaction(root: Path) -> None:
    b = unfinished(root)
    b.source("src-secret", f"config: key={AWS_KEY} region=eu\n", title="config")
    record = b.evidence("ev-red", "src-secret", f"key={AWS_KEY} region=eu", redact=[AWS_KEY])
    record["redaction"]["originalPersisted"] = True
    b.finish()


def stale_evidence_for_supported_claim(root: Path) -> None:
    b = unfinished(root)
    b.ledger["evidence"][0]["sourceDigest"] = file_digest(b"an older capture")
    b.finish()


def _stale(b: PacketBuilder, *, state: str = "provisional", relation: str = "supports",
           gap: bool | None = True) -> None:
    record = b.evidence("ev-old", "src-0", "Fact 0-2: observation number 2 of source 0 holds.")
    record["sourceDigest"] = file_digest(b"the capture as it was before")
    links = [("ev-old", relation)]
    if state == "supported":
        links.insert(0, ("ev-0", "supports"))
    b.claim("claim-s", "A claim resting on a recaptured source.", links, state=state)
    if gap is not None:
        b.gap("gap-stale", "SOURCE_STALE", material=gap, description="src-0 was recaptured",
              sourceIds=["src-0"], claimIds=["claim-s"])


def valid_partial_stale_source(root: Path) -> None:
    b = unfinished(root)
    _stale(b)
    b.finish("partial")


def stale_evidence_without_gap(root: Path) -> None:
    b = unfinished(root)
    _stale(b, gap=None)
    b.finish("complete")


def stale_evidence_gap_not_material(root: Path) -> None:
    b = unfinished(root)
    _stale(b, gap=False)
    b.finish("complete")


def stale_evidence_claim_too_strong(root: Path) -> None:
    b = unfinished(root)
    _stale(b, state="supported", relation="context")
    b.finish("partial")


def _material_finding(gap_material: bool, claim_ids: list[str]) -> dict[str, Any]:
    return {"coverageFindings": [{
        "findingId": "cf-1", "claimIds": claim_ids, "gapIds": ["gap-cov"], "status": "open",
        "material": True, "evidenceIds": [], "note": "storage limits are not covered"}]}


def downgraded_gap_materiality(root: Path) -> None:
    b = unfinished(root, "standard", result_fields={"coverage": _material_finding(False, [])})
    b.gap("gap-cov", "COVERAGE_GAP", material=False, description="limits not covered",
          findingIds=["cf-1"])
    b.finish()


def missing_coverage_gap(root: Path) -> None:
    fields = _material_finding(True, [])
    fields["coverageFindings"][0]["gapIds"] = []
    b = unfinished(root, "standard", result_fields={"coverage": fields})
    b.finish()


def material_coverage_exceeded(root: Path) -> None:
    b = unfinished(root, "standard",
                   result_fields={"coverage": _material_finding(True, ["claim-0"])})
    b.gap("gap-cov", "COVERAGE_GAP", material=True, description="limits not covered",
          findingIds=["cf-1"], claimIds=["claim-0"])
    b.finish("partial")


def coverage_gap_keeps_verified(root: Path) -> None:
    finding = _material_finding(False, ["claim-2"])
    finding["coverageFindings"][0]["material"] = False
    b = unfinished(root, "standard", result_fields={"coverage": finding})
    b.gap("gap-cov", "COVERAGE_GAP", material=False, description="limits not covered",
          findingIds=["cf-1"], claimIds=["claim-2"])
    b.finish()


def verified_without_review(root: Path) -> None:
    dispositions = [{"claimId": f"claim-{n}", "verdict": "qualified" if n == 0 else "confirmed",
                     "material": False, "note": ""} for n in range(3)]
    b = unfinished(root, "standard", result_fields={"adversarial": {"dispositions": dispositions}})
    b.finish()


def material_challenge(root: Path) -> None:
    issue = {"issueId": "iss-1", "claimIds": ["claim-1"], "material": True,
             "note": "a counter-example was found"}
    b = unfinished(root, "standard", result_fields={"adversarial": {"unresolvedIssues": [issue]}})
    b.finish()


def missing_review_omission_gap(root: Path) -> None:
    dispositions = [{"claimId": f"claim-{n}", "verdict": "confirmed", "material": False,
                     "note": ""} for n in range(2)]
    b = unfinished(root, "standard", result_fields={"coverage": {"dispositions": dispositions}})
    b.finish()


def review_brief_digest_mismatch(root: Path) -> None:
    b = unfinished(root, "standard", result_fields={"semantic": {
        "brief": {"path": "reviews/briefs/semantic.json", "digest": file_digest(b"other")}}})
    b.finish()


def brief_not_blind(root: Path) -> None:
    def leak(mode: str, projection: dict[str, Any]) -> dict[str, Any]:
        if mode == "semantic":
            for claim in projection["claims"]:
                claim["state"] = "supported"
        return projection

    b = unfinished(root, "standard", projection_hook=leak)
    b.finish()


def invalid_association(root: Path) -> None:
    record = {"evidenceId": "ev-new", "sourceId": "src-0",
              "sourceDigest": "sha256:" + "0" * 64, "locator": {"start": 0, "end": 4},
              "excerpt": "Fact"}
    b = unfinished(root, "standard", result_fields={"semantic": {"newEvidence": [record]}})
    b.finish()


def reconciliation_additions_mismatch(root: Path) -> None:
    b = unfinished(root, "standard")
    rewrite(b, "reviews/reconciliation/reconciliation.json",
            lambda doc: doc.__setitem__("additions", ["claim-9"]))
    b.finish()


def prior_ledger_mismatch(root: Path) -> None:
    b = unfinished(root, "standard")
    rewrite(b, "reviews/reconciliation/reconciliation.json",
            lambda doc: doc["priorLedger"].__setitem__("digest", file_digest(b"another ledger")))
    b.finish()


def ledger_revision_mismatch(root: Path) -> None:
    b = unfinished(root, "standard")
    b.ledger["revision"] = 3
    b.finish()


def unsourced_new_evidence(root: Path) -> None:
    b = unfinished(root, "standard")
    b.evidence("ev-late", "src-0", "Fact 0-1: observation number 1 of source 0 holds.")
    b.finish()


def claim_continuity_broken(root: Path) -> None:
    b = unfinished(root, "standard")
    b.ledger["claims"][0]["statement"] = "A quietly reworded statement."
    b.finish()


def thorough_missing_gather_input(root: Path) -> None:
    b = unfinished(root, "thorough")
    b.ledger["inputs"] = [r for r in b.ledger["inputs"] if "gather-2" not in r["path"]]
    b.finish()


def unknown_claim_field(root: Path) -> None:
    b = unfinished(root)
    b.ledger["claims"][0]["confidence"] = "high"
    b.finish()


def run_id_mismatch(root: Path) -> None:
    b = unfinished(root)
    b.ledger["runId"] = "run-other"
    b.finish()


def unknown_kind_version(root: Path) -> None:
    b = unfinished(root)
    b.write_artifact("raw/dossiers/gather-1/future.json",
                     {"kind": "assay.raw-dossier", "schemaVersion": 2})
    b.finish()


def invalid_json_artifact(root: Path) -> None:
    b = unfinished(root)
    b.write_artifact("raw/dossiers/gather-1/broken.json", b'{"kind": ')
    b.finish()


def missing_artifact_file(root: Path) -> None:
    b = unfinished(root)
    b.manifest["artifacts"].append({"path": "raw/dossiers/gather-1/gone.json",
                                    "digest": file_digest(b"{}")})
    b.finish()


def duplicate_artifact(root: Path) -> None:
    b = unfinished(root)
    b.manifest["artifacts"].append(dict(b.manifest["artifacts"][0]))
    b.finish()


def quarantined_artifact(root: Path) -> None:
    b = unfinished(root)
    b.write_artifact("raw/quarantine/bad.json", b"{}")
    b.finish()


def execution_not_approved(root: Path) -> None:
    b = unfinished(root)
    b.manifest["execution"] = None
    b.finish()


def execution_cap_exceeded(root: Path) -> None:
    b = unfinished(root)
    execution = default_execution("quick")
    execution["maxConcurrency"] = 9
    b.approve(execution)
    b.finish()


def duplicate_lane_id(root: Path) -> None:
    b = unfinished(root)
    execution = default_execution("quick")
    execution["waves"][1]["lanes"][0]["laneId"] = "map-1"
    b.approve(execution)
    b.finish()


def write_root_escape(root: Path) -> None:
    b = unfinished(root)
    execution = default_execution("quick")
    execution["waves"][2]["lanes"][0]["writeRoot"] = "../elsewhere"
    b.approve(execution)
    b.finish()


def dishonest_complete(root: Path) -> None:
    b = unfinished(root)
    b.gap("gap-q", "QUESTION_UNANSWERED", material=True, description="open question")
    b.finish("complete")


def dishonest_partial(root: Path) -> None:
    b = unfinished(root)
    b.finish("partial")


def failed_without_record(root: Path) -> None:
    b = unfinished(root)
    b.finish("failed")


def removal_without_rejection(root: Path) -> None:
    b = unfinished(root, "standard")
    b.ledger["claims"] = [c for c in b.ledger["claims"] if c["claimId"] != "claim-2"]
    rewrite(b, REC, lambda doc: doc.__setitem__("removals", ["claim-2"]))
    b.finish()


def sources_not_an_array(root: Path) -> None:
    b = unfinished(root)
    b.manifest["sources"] = {}
    b.finish()


def manifest_missing_field(root: Path) -> None:
    b = unfinished(root)
    del b.manifest["gaps"]
    b.finish()


def malformed_artifact_path(root: Path) -> None:
    b = unfinished(root)
    b.manifest["artifacts"].append({"path": "raw//dossiers/x.json", "digest": file_digest(b"{}")})
    b.finish()


def quick_nothing_achieved(root: Path) -> None:
    b = unfinished(root)
    rewrite(b, first_dossier(b), lambda doc: doc.__setitem__("outcome", "failed"))
    b.gap("gap-map", "PASS_FAILED", material=True, mode="map", description="map failed")
    b.finish("partial")



CASES: dict[str, Case] = {c.name: c for c in [
    Case("valid-quick", valid_quick),
    Case("valid-standard", valid_standard),
    Case("valid-thorough", valid_thorough),
    Case("valid-partial-lower-profile", valid_partial_lower_profile, publication="partial"),
    Case("valid-partial-material-gap", valid_partial_material_gap, publication="partial"),
    Case("valid-running", valid_running, publication=None),
    Case("valid-redacted-exact", valid_redacted),
    Case("valid-contested", valid_contested),
    Case("valid-added-claim", valid_added_claim),
    Case("valid-partial-stale-source", valid_partial_stale_source, publication="partial"),
    Case("fingerprint-drift", fingerprint_drift,
         ("APPROVAL_FINGERPRINT_MISMATCH", M, "/execution/approval/fingerprint")),
    Case("unknown-execution-field", unknown_execution_field,
         ("UNKNOWN_FIELD", M, "/execution/gpu")),
    Case("unapproved-lane", unapproved_lane,
         ("UNAPPROVED_LANE", "raw/dossiers/gather-1/rogue.json", "/laneId")),
    Case("write-outside-lane-root", write_outside_lane_root,
         ("LANE_WRITE_PATH_VIOLATION", M, "/artifacts/2/path")),
    Case("missing-lane-outcome", missing_lane_outcome,
         ("MISSING_LANE_OUTCOME", M, "/execution/waves/0/lanes/1")),
    Case("missing-pass-outcome", missing_pass_outcome,
         ("MISSING_PASS_OUTCOME_EVIDENCE", M, "/gaps")),
    Case("duplicate-reconciliation", duplicate_reconciliation,
         ("DUPLICATE_RECONCILIATION", M, "/artifacts/10/path")),
    Case("shadow-reconciliation", shadow_reconciliation,
         ("UNLISTED_ARTIFACT", "reviews/reconciliation/shadow.json", "")),
    Case("symlink-root-alias", symlink_root_alias, ("SYMLINK_ROOT_ALIAS", "raw/dossiers", "")),
    Case("symlink-final-component", symlink_final_component,
         ("SYMLINK_PATH", M, "/artifacts/0/path")),
    Case("path-escape", path_escape, ("PATH_ESCAPE", M, "/artifacts/2/path")),
    Case("digest-mismatch-one-byte", digest_mismatch_one_byte,
         ("DIGEST_MISMATCH", M, "/artifacts/0/digest")),
    Case("unknown-evidence-link", unknown_evidence_link,
         ("UNKNOWN_REFERENCE", L, "/claims/0/evidence/1/evidenceId")),
    Case("duplicate-evidence-link", duplicate_link,
         ("DUPLICATE_EVIDENCE_LINK", L, "/claims/0/evidence/1")),
    Case("open-link-object", open_link_object, ("UNKNOWN_FIELD", L, "/claims/0/evidence/0/weight")),
    Case("unknown-relation", unknown_relation,
         ("INVALID_VALUE", L, "/claims/0/evidence/0/relation")),
    Case("illegal-transition", illegal_transition,
         ("ILLEGAL_CLAIM_TRANSITION", L, "/transitions/3/to")),
    Case("genesis-reused", genesis_reused, ("GENESIS_REUSED", L, "/transitions/3/from")),
    Case("added-claim-without-genesis", added_claim_without_genesis,
         ("GENESIS_REUSED", L, "/claims/3/claimId")),
    Case("claim-state-mismatch", claim_state_mismatch,
         ("CLAIM_STATE_MISMATCH", L, "/claims/0/state")),
    Case("verified-in-quick", verified_in_quick,
         ("QUICK_PACKET_VERIFIED_CLAIM", L, "/claims/0/state")),
    Case("secret-in-excerpt", secret_in_excerpt, ("SECRET_IN_EXCERPT", L, "/evidence/3/excerpt")),
    Case("invalid-redaction", invalid_redaction,
         ("INVALID_REDACTION", L, "/evidence/3/redaction")),
    Case("stale-evidence-supported-claim", stale_evidence_for_supported_claim,
         ("CLAIM_EVIDENCE_INELIGIBLE", L, "/claims/0/evidence")),
    Case("stale-evidence-without-gap", stale_evidence_without_gap,
         ("MISSING_SOURCE_GAP", L, "/evidence/3")),
    Case("stale-evidence-gap-not-material", stale_evidence_gap_not_material,
         ("GAP_MATERIALITY_DOWNGRADED", M, "/gaps/0/material")),
    Case("stale-evidence-claim-too-strong", stale_evidence_claim_too_strong,
         ("INELIGIBLE_EVIDENCE_ASSURANCE_EXCEEDED", L, "/claims/3/state")),
    Case("downgraded-gap-materiality", downgraded_gap_materiality,
         ("GAP_MATERIALITY_DOWNGRADED", M, "/gaps/0/material")),
    Case("missing-coverage-gap", missing_coverage_gap,
         ("MISSING_COVERAGE_GAP", "reviews/coverage/coverage-1/result.json",
          "/coverageFindings/0/gapIds")),
    Case("material-coverage-exceeded", material_coverage_exceeded,
         ("MATERIAL_COVERAGE_ASSURANCE_EXCEEDED", L, "/claims/0/state")),
    Case("coverage-gap-keeps-verified", coverage_gap_keeps_verified,
         ("COVERAGE_ASSURANCE_EXCEEDED", L, "/claims/2/state")),
    Case("verified-without-review", verified_without_review,
         ("VERIFIED_WITHOUT_REVIEW", L, "/claims/0/state")),
    Case("material-challenge", material_challenge,
         ("MATERIAL_CHALLENGE_UNRESOLVED", L, "/claims/1/state")),
    Case("missing-review-omission-gap", missing_review_omission_gap,
         ("MISSING_REVIEW_OMISSION_GAP", "reviews/coverage/coverage-1/result.json",
          "/dispositions")),
    Case("review-brief-digest-mismatch", review_brief_digest_mismatch,
         ("REVIEW_BRIEF_MISMATCH", "reviews/semantic/semantic-1/result.json", "/brief/digest")),
    Case("brief-not-blind", brief_not_blind,
         ("REVIEW_BRIEF_MISMATCH", "reviews/briefs/semantic.json", "/projection")),
    Case("invalid-association", invalid_association,
         ("INVALID_ASSOCIATION", "reviews/semantic/semantic-1/result.json", "/newEvidence/0")),
    Case("reconciliation-additions-mismatch", reconciliation_additions_mismatch,
         ("RECONCILIATION_MISMATCH", REC, "/additions")),
    Case("prior-ledger-mismatch", prior_ledger_mismatch,
         ("PRIOR_LEDGER_MISMATCH", REC, "/priorLedger")),
    Case("ledger-revision-mismatch", ledger_revision_mismatch,
         ("LEDGER_REVISION_MISMATCH", L, "/revision")),
    Case("unsourced-new-evidence", unsourced_new_evidence,
         ("UNSOURCED_NEW_EVIDENCE", L, "/evidence/3")),
    Case("claim-continuity-broken", claim_continuity_broken,
         ("CLAIM_CONTINUITY_BROKEN", L, "/claims/0/statement")),
    Case("thorough-missing-gather-input", thorough_missing_gather_input,
         ("MISSING_THOROUGH_GATHER_LEDGER_INPUT", L, "/inputs")),
    Case("unknown-claim-field", unknown_claim_field, ("UNKNOWN_FIELD", L, "/claims/0/confidence")),
    Case("run-id-mismatch", run_id_mismatch, ("RUN_ID_MISMATCH", L, "/runId")),
    Case("unknown-kind-version", unknown_kind_version,
         ("UNKNOWN_KIND", "raw/dossiers/gather-1/future.json", "/schemaVersion")),
    Case("invalid-json-artifact", invalid_json_artifact,
         ("INVALID_JSON", "raw/dossiers/gather-1/broken.json", "")),
    Case("missing-artifact-file", missing_artifact_file, ("MISSING_FILE", M, "/artifacts/2/path")),
    Case("duplicate-artifact", duplicate_artifact, ("DUPLICATE_ARTIFACT", M, "/artifacts/2/path")),
    Case("quarantined-artifact", quarantined_artifact,
         ("QUARANTINED_ARTIFACT_REFERENCED", M, "/artifacts/2/path")),
    Case("execution-not-approved", execution_not_approved,
         ("EXECUTION_NOT_APPROVED", M, "/execution")),
    Case("execution-cap-exceeded", execution_cap_exceeded,
         ("EXECUTION_CAP_EXCEEDED", M, "/execution/maxConcurrency")),
    Case("duplicate-lane-id", duplicate_lane_id,
         ("DUPLICATE_ID", M, "/execution/waves/1/lanes/0/laneId")),
    Case("write-root-escape", write_root_escape,
         ("PATH_ESCAPE", M, "/execution/waves/2/lanes/0/writeRoot")),
    Case("dishonest-complete", dishonest_complete, ("PUBLICATION_STATUS_MISMATCH", M, "/status")),
    Case("dishonest-partial", dishonest_partial, ("PUBLICATION_STATUS_MISMATCH", M, "/status")),
    Case("failed-without-record", failed_without_record, ("FAILURE_RECORD_MISSING", M, "/status")),
    Case("removal-without-rejection", removal_without_rejection,
         ("REMOVAL_WITHOUT_REJECTION", REC, "/removals/0")),
    Case("sources-not-an-array", sources_not_an_array, ("INVALID_TYPE", M, "/sources")),
    Case("manifest-missing-field", manifest_missing_field, ("MISSING_FIELD", M, "/gaps")),
    Case("malformed-artifact-path", malformed_artifact_path,
         ("INVALID_PATH", M, "/artifacts/2/path")),
    Case("nothing-achieved-partial", quick_nothing_achieved,
         ("PUBLICATION_STATUS_MISMATCH", M, "/status")),
]}

VALID = sorted(name for name, case in CASES.items() if case.expect is None)
INVALID = sorted(name for name, case in CASES.items() if case.expect is not None)


def materialize(directory: Path) -> list[str]:
    """Build every case under ``directory/<name>``; return the names."""
    for name, case in CASES.items():
        case.build(directory / name)
    return list(CASES)


if __name__ == "__main__":  # pragma: no cover - a convenience for inspecting fixtures
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "packet-fixtures")
    print(json.dumps(materialize(target), indent=1))


def json_locations(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every location in a parsed JSON value, as key and index paths (the root first)."""
    out = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            out += json_locations(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out += json_locations(item, (*path, index))
    return out
