"""Assay's own layout: the rules that relate reviews to the ledger they reviewed.

Prior-ledger identity and brief projections (selective blindness), review
result bindings and associations, coverage findings and gap materiality, the
one terminal reconciliation, and verified-claim assurance: plain functions
over the :class:`~assay.packet.assay.rules.Packet` being checked, reporting
through it and raising nothing. :mod:`assay.packet.assay.check` runs them.
Imports the base modules and the packet modules.
"""

from __future__ import annotations

from typing import Any

from assay.packet.assay.reviews import PROJECTION_FAMILY, project
from assay.packet.assay.rules import Doc, Packet, json_pointer, same, secret
from assay.packet.layout import LEDGER_FILE, MANIFEST_FILE
from assay.packet.model import Claim, Evidence, Link

__all__ = ["assurance_result", "claim_assurance", "prior", "reconciliation"]


def prior(p: Packet, L: dict[str, Any], recons: list[Doc], briefs: dict[str, Doc],
          m: dict[str, Any]) -> tuple[dict[str, Any] | None, bool]:
    """The prior ledger every brief and the reconciliation bind, and whether it is bound well.

    Each brief's projection is recomputed from it (once per projection
    family); without a reconciliation, ``claims.json`` must still be it.
    """
    for extra in recons[1:]:
        p.add("DUPLICATE_RECONCILIATION", MANIFEST_FILE,
              json_pointer("artifacts", extra.index, "path"),
              f"{extra.path} is a second reconciliation result; a run has exactly one")
    if recons:
        anchor, ref = recons[0], recons[0].data["priorLedger"]
    elif briefs:
        anchor = next(iter(briefs.values()))
        ref = anchor.data["priorLedger"]
    else:
        return None, True
    target = p.by_path.get(ref["path"])
    if target is None or target.kind != "claim-ledger" or target.digest != ref["digest"]:
        p.add("PRIOR_LEDGER_MISMATCH", anchor.path, "/priorLedger",
              f"{ref['path']} is not a listed claim ledger with that digest")
        return None, False
    prior = target.data
    ok = True
    # Briefs of one projection family show the same view: build it once.
    expected_by_family: dict[str, Any] = {}
    for brief in briefs.values():
        if not same(brief.data["priorLedger"], ref):
            p.add("PRIOR_LEDGER_MISMATCH", brief.path, "/priorLedger",
                  "every brief binds the one prior ledger the reconciliation uses")
            ok = False
            continue
        if brief.data["priorRevision"] != prior["revision"]:
            p.add("LEDGER_REVISION_MISMATCH", brief.path, "/priorRevision",
                  f"the prior ledger is revision {prior['revision']}")
        mode = brief.data["mode"]
        family = PROJECTION_FAMILY.get(mode, mode)
        if family not in expected_by_family:
            expected_by_family[family] = project(mode, prior, m)
        expected = expected_by_family[family]
        if not same(expected, brief.data["projection"]):
            p.add("REVIEW_BRIEF_MISMATCH", brief.path, "/projection",
                  f"the projection is not the {brief.data['mode']} view of the prior ledger")
    if not recons and p.cx.digests[LEDGER_FILE] != target.digest:
        p.add("PRIOR_LEDGER_MISMATCH", LEDGER_FILE, "",
              "claims.json changed after its briefs without a reconciliation")
        ok = False
    return prior, ok


def assurance_result(p: Packet, d: Doc, briefs: dict[str, Doc], base_claims: set[str],
                     L: dict[str, Any], m: dict[str, Any], gap_index: dict[str, int],
                     omitted: set[str],
                     findings: dict[str, tuple[Doc, dict[str, Any]]]) -> None:
    """One assurance review: its brief, dispositions, new evidence, associations, coverage
    findings (collected into ``findings``) and unresolved issues."""
    data, path = d.data, d.path
    brief = briefs.get(data["brief"]["path"])
    if brief is None:
        p.add("UNKNOWN_REFERENCE", path, "/brief/path",
              f"{data['brief']['path']} is not a listed review brief")
    elif brief.digest != data["brief"]["digest"]:
        p.add("REVIEW_BRIEF_MISMATCH", path, "/brief/digest",
              "the result is bound to another version of its brief")
    elif brief.data["mode"] != data["reviewKind"]:
        p.add("REVIEW_BRIEF_MISMATCH", path, "/brief/path",
              f"a {data['reviewKind']} result cannot answer a {brief.data['mode']} brief")
    disposed: set[str] = set()
    for k, disp in enumerate(data["dispositions"]):
        if disp["claimId"] not in base_claims:
            p.add("UNKNOWN_REFERENCE", path, json_pointer("dispositions", k, "claimId"),
                  f"claim {disp['claimId']!r} is not in the reviewed ledger")
        if disp["claimId"] in disposed:
            p.add("DUPLICATE_ID", path, json_pointer("dispositions", k, "claimId"),
                  f"claim {disp['claimId']!r} has two dispositions")
        disposed.add(disp["claimId"])
    new_ids: dict[str, int] = {}
    for k, record in enumerate(data["newEvidence"]):
        if record["evidenceId"] in new_ids:
            p.add("DUPLICATE_ID", path, json_pointer("newEvidence", k, "evidenceId"),
                  f"new evidence id {record['evidenceId']!r} is repeated")
        new_ids[record["evidenceId"]] = k
        secret(p, path, json_pointer("newEvidence", k, "excerpt"), record["excerpt"])
    associated: set[str] = set()
    for k, assoc in enumerate(data["associations"]):
        if assoc["evidenceId"] not in new_ids:
            p.add("INVALID_ASSOCIATION", path, json_pointer("associations", k, "evidenceId"),
                  f"evidence {assoc['evidenceId']!r} is not new evidence of this result")
        elif assoc["claimId"] not in disposed:
            p.add("INVALID_ASSOCIATION", path, json_pointer("associations", k, "claimId"),
                  f"claim {assoc['claimId']!r} has no disposition in this result")
        associated.add(assoc["evidenceId"])
    for eid, k in new_ids.items():
        if eid not in associated:
            p.add("INVALID_ASSOCIATION", path, json_pointer("newEvidence", k),
                  f"new evidence {eid!r} has no claim association")
    known_evidence = {e["evidenceId"] for e in L["evidence"]} | set(new_ids)
    for k, finding in enumerate(data["coverageFindings"]):
        fptr = json_pointer("coverageFindings", k)
        findings[finding["findingId"]] = (d, finding)
        for n, cid in enumerate(finding["claimIds"]):
            if cid not in base_claims:
                p.add("UNKNOWN_REFERENCE", path, f"{fptr}/claimIds/{n}",
                      f"claim {cid!r} is not in the reviewed ledger")
        for n, eid in enumerate(finding["evidenceIds"]):
            if eid not in known_evidence:
                p.add("UNKNOWN_REFERENCE", path, f"{fptr}/evidenceIds/{n}",
                      f"evidence {eid!r} is unknown")
        if finding["status"] == "resolved" and not finding["evidenceIds"]:
            p.add("INVALID_VALUE", path, fptr + "/evidenceIds",
                  "a resolved coverage finding names the exact evidence that resolves it")
        for n, gid in enumerate(finding["gapIds"]):
            g = gap_index.get(gid)
            if g is None:
                p.add("UNKNOWN_REFERENCE", path, f"{fptr}/gapIds/{n}",
                      f"gap {gid!r} is not in the manifest")
            elif finding["material"] and finding["status"] != "resolved" \
                    and not m["gaps"][g]["material"]:
                p.add("GAP_MATERIALITY_DOWNGRADED", MANIFEST_FILE,
                      json_pointer("gaps", g, "material"),
                      f"gap {gid!r} records material coverage finding "
                      f"{finding['findingId']!r} as non-material")
        if finding["material"] and finding["status"] != "resolved" and not finding["gapIds"]:
            p.add("MISSING_COVERAGE_GAP", path, fptr + "/gapIds",
                  "an unresolved material coverage finding is recorded as a manifest gap")
    for k, issue in enumerate(data["unresolvedIssues"]):
        for n, cid in enumerate(issue["claimIds"]):
            if cid not in base_claims:
                p.add("UNKNOWN_REFERENCE", path, json_pointer("unresolvedIssues", k, "claimIds", n),
                      f"claim {cid!r} is not in the reviewed ledger")
    if data["complete"] and brief is not None and data["reviewKind"] != "contradiction-resolution":
        # The stored projection may itself be wrong (that is reported as
        # REVIEW_BRIEF_MISMATCH); read it defensively here.
        shown = [str(c["claimId"]) for c in brief.data["projection"].get("claims", [])
                 if isinstance(c, dict) and isinstance(c.get("claimId"), str)]
        missing = [cid for cid in shown if cid not in disposed and cid not in omitted]
        if missing:
            p.add("MISSING_REVIEW_OMISSION_GAP", path, "/dispositions",
                  f"no disposition and no REVIEW_DISPOSITION_OMITTED gap for: "
                  f"{', '.join(missing[:10])}")


def reconciliation(p: Packet, recon: Doc, prior: dict[str, Any], L: dict[str, Any],
                   assurance: list[Doc],
                   findings: dict[str, tuple[Doc, dict[str, Any]]]) -> set[str]:
    """The one reconciliation against the prior ledger and ``claims.json``; the removed ids."""
    data, path = recon.data, recon.path
    if data["priorRevision"] != prior["revision"]:
        p.add("LEDGER_REVISION_MISMATCH", path, "/priorRevision",
              f"the prior ledger is revision {prior['revision']}")
    if data["nextRevision"] != prior["revision"] + 1:
        p.add("LEDGER_REVISION_MISMATCH", path, "/nextRevision",
              "the next revision is exactly the prior revision plus one")
    elif L["revision"] != data["nextRevision"]:
        p.add("LEDGER_REVISION_MISMATCH", LEDGER_FILE, "/revision",
              f"claims.json must be the reconciled revision {data['nextRevision']}")
    incorporated = [d for d in assurance if d.data["complete"]]
    want = sorted((d.path, d.digest) for d in incorporated)
    got = sorted((r["path"], r["digest"]) for r in data["reviewResults"])
    if want != got:
        p.add("RECONCILIATION_MISMATCH", path, "/reviewResults",
              "the reconciliation binds exactly the complete assurance review results")
    if not same(L["transitions"], prior["transitions"] + data["transitions"]):
        p.add("RECONCILIATION_MISMATCH", path, "/transitions",
              "claims.json transitions are the prior transitions plus exactly these")
    prior_claims = {c["claimId"]: c for c in prior["claims"]}
    current = {c["claimId"]: c for c in L["claims"]}
    additions = sorted(set(current) - set(prior_claims))
    removals = sorted(set(prior_claims) - set(current))
    if sorted(data["additions"]) != additions:
        p.add("RECONCILIATION_MISMATCH", path, "/additions",
              f"claims added since the prior ledger: {additions}")
    if sorted(data["removals"]) != removals:
        p.add("RECONCILIATION_MISMATCH", path, "/removals",
              f"claims removed since the prior ledger: {removals}")
    rejected = {disp["claimId"] for d in incorporated for disp in d.data["dispositions"]
                if disp["verdict"] == "rejected"}
    for k, cid in enumerate(data["removals"]):
        if cid not in rejected:
            p.add("REMOVAL_WITHOUT_REJECTION", path, json_pointer("removals", k),
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
            if not same(record, prior_evidence[eid]):
                p.add("CLAIM_CONTINUITY_BROKEN", LEDGER_FILE, json_pointer("evidence", i),
                      f"prior evidence {eid!r} changed during reconciliation")
        elif not same(offered.get(eid), record):
            p.add("UNSOURCED_NEW_EVIDENCE", LEDGER_FILE, json_pointer("evidence", i),
                  f"new evidence {eid!r} is not the exact record a reconciled review supplied")
    if len(seen_prior) != len(prior_evidence):
        gone = sorted(set(prior_evidence) - seen_prior)
        p.add("CLAIM_CONTINUITY_BROKEN", LEDGER_FILE, "/evidence",
              f"prior evidence was dropped: {', '.join(gone[:10])}")
    for i, claim in enumerate(L["claims"]):
        before = prior_claims.get(claim["claimId"])
        if before is None:
            continue
        if claim["statement"] != before["statement"]:
            p.add("CLAIM_CONTINUITY_BROKEN", LEDGER_FILE, json_pointer("claims", i, "statement"),
                  f"claim {claim['claimId']!r} changed its statement")
        old = {(x["evidenceId"], x["relation"]) for x in before["evidence"]}
        new = {(x["evidenceId"], x["relation"]) for x in claim["evidence"]}
        if not old <= new:
            p.add("CLAIM_CONTINUITY_BROKEN", LEDGER_FILE, json_pointer("claims", i, "evidence"),
                  f"claim {claim['claimId']!r} lost prior evidence links")
        for j, link in enumerate(claim["evidence"]):
            key = (link["evidenceId"], link["relation"])
            if key not in old and (link["evidenceId"], claim["claimId"], link["relation"]) \
                    not in assoc:
                p.add("UNSOURCED_NEW_EVIDENCE", LEDGER_FILE,
                      json_pointer("claims", i, "evidence", j),
                      f"link to {link['evidenceId']!r} has no matching review association")
    for k, item in enumerate(data["coverageDispositions"]):
        if item["findingId"] not in findings:
            p.add("UNKNOWN_REFERENCE", path, json_pointer("coverageDispositions", k, "findingId"),
                  f"coverage finding {item['findingId']!r} is in no review result")
    return set(removals)


def claim_assurance(p: Packet, L: dict[str, Any], requested: str, assurance: list[Doc],
                    findings: dict[str, tuple[Doc, dict[str, Any]]],
                    evidence: dict[str, Evidence]) -> list[Claim]:
    """Every claim with its derived assurance; verified and supported claims checked."""
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
    coverage_gapped = {cid for _, f in findings.values()
                       if not f["material"] and f["status"] != "resolved"
                       for cid in f["claimIds"]}
    uncovered = coverage_gapped | coverage_blocked
    needed = {"semantic", "adversarial", "coverage"}
    if requested == "thorough":
        needed.add("redundant-verification")
    out = []
    for i, claim in enumerate(L["claims"]):
        cid, state = claim["claimId"], claim["state"]
        ptr = f"/claims/{i}/state"  # integer index: nothing to escape
        if state == "verified":
            if requested == "quick":
                p.add("QUICK_PACKET_VERIFIED_CLAIM", LEDGER_FILE, ptr,
                      f"claim {cid!r} is verified, but quick packets never verify")
            elif needed - confirmed.get(cid, set()):
                lacking = ", ".join(sorted(needed - confirmed.get(cid, set())))
                p.add("VERIFIED_WITHOUT_REVIEW", LEDGER_FILE, ptr,
                      f"claim {cid!r} is verified without a confirming {lacking} review")
            elif cid in challenged:
                p.add("MATERIAL_CHALLENGE_UNRESOLVED", LEDGER_FILE, ptr,
                      f"claim {cid!r} is verified despite a material unresolved challenge")
            elif cid in coverage_blocked:
                p.add("MATERIAL_COVERAGE_ASSURANCE_EXCEEDED", LEDGER_FILE, ptr,
                      f"claim {cid!r} is verified despite a material coverage finding")
            elif cid in coverage_gapped:
                p.add("COVERAGE_ASSURANCE_EXCEEDED", LEDGER_FILE, ptr,
                      f"claim {cid!r} is verified despite an unresolved coverage finding")
        elif state == "provisional" and cid in uncovered:
            p.add("COVERAGE_ASSURANCE_EXCEEDED", LEDGER_FILE, ptr,
                  f"claim {cid!r} has an unresolved coverage finding and is unresolved, "
                  "not provisional")
        eligible = any(link["relation"] == "supports" and link["evidenceId"] in evidence
                       and evidence[link["evidenceId"]].eligible for link in claim["evidence"])
        if state in ("supported", "verified") and not eligible:
            p.add("CLAIM_EVIDENCE_INELIGIBLE", LEDGER_FILE, json_pointer("claims", i, "evidence"),
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
