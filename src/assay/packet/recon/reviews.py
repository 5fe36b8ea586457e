"""Review briefs, review results and the one reconciliation of a recon-layout packet.

Each review resolves its exact typed brief, and every claim it disposes of
(and, in version 2, every entry its brief shows) is that claim's exact
projection; new evidence is associated with disposed claims. The
reconciliation binds the prior and current ledger revisions, authorizes
every removal by a typed rejection, preserves every surviving claim and
evidence record, appends exactly the incorporated evidence, and binds each
coverage finding to its manifest gap and disposition. Imports the base
modules and the packet modules.
"""

from __future__ import annotations

from typing import Any

from assay.canonical import fingerprint
from assay.packet.layout import (
    LEDGER_FILE,
)
from assay.packet.recon.contract import (
    distinct,
    is_int,
    items,
    keyable,
)
from assay.packet.recon.routing import typed_artifacts
from assay.packet.recon.run import (
    BRIEF_MODE,
    ReconRun,
    obj,
    same,
    same_json,
    same_json_members,
)

__all__ = ["binds", "brief_of", "reconciliation", "review_bindings"]


def brief_of(r: ReconRun, result: dict[str, Any]) -> dict[str, Any] | None:
    """The review's exact, listed, typed brief, or None."""
    entry = r.s.by_path.get(str((result.get("brief") or {}).get("path"))) \
        if type(result.get("brief")) is dict else None
    if entry is None or not same(entry.ref, result.get("brief")) or type(entry.value) \
            is not dict or entry.value.get("kind") != "recon.review-brief":
        return None
    return entry.value


def shown_entries(r: ReconRun, brief: dict[str, Any], key: str) -> dict[Any, dict[str, Any]]:
    """The entries of ``brief[key]`` by id, the first of each (computed once per brief)."""
    cache = r.s.shown.setdefault(id(brief), {})
    if key not in cache:
        entries: dict[Any, dict[str, Any]] = {}
        for entry in items(brief.get(key)):
            if type(entry) is dict and keyable(entry.get("id")):
                entries.setdefault(entry.get("id"), entry)
        cache[key] = entries
    return cache[key]


def records_of(r: ReconRun, ledger: dict[str, Any]) -> dict[Any, dict[str, Any]]:
    """A ledger's evidence records by id (computed once per ledger)."""
    if id(ledger) not in r.s.records:
        r.s.records[id(ledger)] = {e.get("id"): e for e in items(ledger.get("evidence"))
                                   if type(e) is dict and keyable(e.get("id"))}
    return r.s.records[id(ledger)]


def binds(r: ReconRun, brief: dict[str, Any], kind: str, claim: dict[str, Any],
          ledger: dict[str, Any]) -> bool:
    """Whether ``brief`` shows ``claim`` exactly as its kind's projection of ``ledger``."""
    memo = (id(brief), kind, claim.get("id"), id(ledger))
    if not keyable(memo[2]):
        return _bind(r, brief, kind, claim, ledger)
    if memo not in r.s.bound:
        r.s.bound[memo] = _bind(r, brief, kind, claim, ledger)
    return r.s.bound[memo]


def _bind(r: ReconRun, brief: dict[str, Any], kind: str, claim: dict[str, Any],
          ledger: dict[str, Any]) -> bool:
    """What :func:`binds` remembers."""
    key = ("provisionalStatements" if kind in ("adversarial", "contradiction-resolution")
           else "claims")
    shown = shown_entries(r, brief, key).get(claim.get("id")) if keyable(claim.get("id")) else None
    if shown is None or shown.get("statement") != claim.get("statement"):
        return False
    if kind not in ("semantic", "redundant-verification"):
        return sorted(shown) == ["id", "statement"]
    records = records_of(r, ledger)
    expected = []
    for link in items(claim.get("evidence")):
        record = records.get(link.get("evidenceId")) \
            if type(link) is dict and keyable(link.get("evidenceId")) else None
        if record is None:
            return False
        expected.append({"id": record.get("id"), "sourceId": record.get("sourceId"),
                         "displayExcerpt": record.get("displayExcerpt"),
                         "locator": record.get("locator")})
    if not same_json(shown.get("evidence"), expected):
        return False
    # Most claims cite the same few sources: each set is compared once per brief.
    if not all(keyable(x["sourceId"]) for x in expected):
        return False  # no listed source has an object or array for its id
    cited = frozenset(x["sourceId"] for x in expected)
    memo = (id(brief), cited)
    if memo not in r.s.sourced:
        sources = [s for s in r.m["sources"] if type(s) is dict and s.get("id") in cited]
        r.s.sourced[memo] = same_json(brief.get("sources"), sources)
    return r.s.sourced[memo]


def review_bindings(r: ReconRun) -> None:
    """Each review resolves its brief, disposes only of claims the brief shows exactly,
    and associates every new evidence record with a disposed claim."""
    assert r.L is not None
    claims = {c.get("id"): c for c in r.L["claims"]
              if type(c) is dict and keyable(c.get("id"))}
    prior = r.s.prior or {}
    prior_claims = {c.get("id"): c for c in items(prior.get("claims"))
                    if type(c) is dict and keyable(c.get("id"))}
    owners = {ch.get("id"): c.get("id") for c in r.L["claims"] if type(c) is dict
              for ch in items(c.get("challenges"))
              if type(ch) is dict and keyable(ch.get("id"))}
    for aid, result, _entry in typed_artifacts(r):
        kind = result.get("reviewKind")
        if result.get("kind") != "recon.review-result" or kind == "reconciliation":
            continue
        brief = brief_of(r, result)
        if brief is None or brief.get("mode") != BRIEF_MODE.get(str(kind)) \
                or brief.get("runId") != r.L.get("runId"):
            r.at_artifact("REVIEW_BRIEF_MISMATCH", aid,
                          f"review {aid} does not resolve its exact typed brief")
            continue
        if r.version == 2:
            brief_entries(r, aid, brief, str(kind), claims, prior_claims)
        key = "provisionalStatements" if brief.get("mode") == "adversary" else "claims"
        shown = {x.get("id") for x in items(brief.get(key)) if type(x) is dict}
        hidden = [c for c in (prior_claims or claims) if c not in shown]
        if hidden:
            r.advise("REVIEW_BRIEF_MISMATCH", aid, f"the brief of review {aid} shows "
                     f"{len(shown)} of {len(shown) + len(hidden)} prior claims: assay's "
                     "own briefs show every claim", r.s.by_id[aid].path)
        seen: set[Any] = set()
        for item in items(result.get("dispositions")):
            cid = item.get("claimId") if type(item) is dict else None
            claim = prior_claims.get(cid) or claims.get(cid)
            ledger = prior if cid in prior_claims else r.L
            if claim is None or cid in seen or not binds(r, brief, str(kind), claim, ledger):
                r.at_artifact("REVIEW_BRIEF_MISMATCH", aid, f"review {aid} dispositions do "
                              "not match claim-bearing brief projections")
            seen.add(cid)
        supplied = {e.get("id") for e in items(result.get("newEvidence")) if type(e) is dict}
        disposed = {d.get("claimId") for d in items(result.get("dispositions"))
                    if type(d) is dict}
        keys: set[str] = set()
        associated: set[Any] = set()
        for link in items(result.get("evidenceAssociations")):
            key = fingerprint(link)
            if type(link) is not dict or key in keys \
                    or link.get("evidenceId") not in supplied \
                    or link.get("claimId") not in disposed \
                    or (link.get("claimId") not in prior_claims
                        and link.get("claimId") not in claims):
                r.at_artifact("REVIEW_EVIDENCE_ASSOCIATION_MISMATCH", aid,
                              f"review {aid} associations do not bind supplied evidence "
                              "to disposed claims")
            keys.add(key)
            associated.add(link.get("evidenceId") if type(link) is dict else None)
        if supplied != associated:
            r.at_artifact("REVIEW_EVIDENCE_ASSOCIATION_MISMATCH", aid,
                          f"review {aid} leaves new evidence unassociated")
        if kind == "contradiction-resolution":
            for item in items(result.get("contradictionDispositions")):
                item = item if type(item) is dict else {}
                owner = owners.get(item.get("contradictionId"))
                ids = items(item.get("claimIds"))
                if owner is None or owner not in ids or any(x not in claims for x in ids):
                    r.at_artifact("CONTRADICTION_BINDING_MISMATCH", aid,
                                  "a contradiction is not bound to its affected claims")


def brief_entries(r: ReconRun, aid: str, brief: dict[str, Any], kind: str,
                  claims: dict[Any, dict[str, Any]],
                  prior_claims: dict[Any, dict[str, Any]]) -> None:
    """Every entry a version-2 brief shows is a distinct, exactly projected ledger claim."""
    key = "provisionalStatements" if brief.get("mode") == "adversary" else "claims"
    ids = [x.get("id") if type(x) is dict else None for x in items(brief.get(key))]
    if len(set(map(str, ids))) != len(ids):
        r.at_artifact("REVIEW_BRIEF_MISMATCH", aid, f"review {aid} brief repeats a claim")
    prior = r.s.prior or {}
    assert r.L is not None
    for cid in ids:
        claim = prior_claims.get(cid) or claims.get(cid)
        ledger = prior if cid in prior_claims else r.L
        if claim is None or not binds(r, brief, kind, claim, ledger):
            r.at_artifact("REVIEW_BRIEF_MISMATCH", aid, f"review {aid} brief shows an entry "
                          "that is not an exact ledger claim projection")
            break


def reconciliation(r: ReconRun, assurance: set[str], required: bool) -> None:
    """The reconciliation binds the prior and the next revision and accounts for every
    change between them."""
    assert r.L is not None
    L, rec, prior = r.L, r.s.reconciliation, r.s.prior
    revision = L.get("revision")
    if not is_int(revision) or revision <= 1:
        if required:
            r.at_ledger("RECONCILIATION_REVISION_MISMATCH", "$.revision",
                        "a standard or thorough ledger is the next revision of its prior")
        return
    if rec is None or rec.get("status") != "complete":
        r.at_ledger("MISSING_RECONCILIATION_RESULT", "$.revision",
                    "a revised ledger needs a complete reconciliation result")
        return
    rid = rec.get("id")
    if rec.get("runId") != L.get("runId"):
        r.at_artifact("REVIEW_RUN_MISMATCH", rid, "the reconciliation is of another run")
    bound = obj(rec.get("inputLedger"))
    if prior is None or prior.get("revision") != bound.get("revision") \
            or rec.get("outputRevision") != revision \
            or not is_int(prior.get("revision")) or prior["revision"] + 1 != revision:
        r.at_artifact("RECONCILIATION_REVISION_MISMATCH", rid,
                      "the reconciliation binds the previous and the current revision")
    if prior is None:
        return
    before = {c.get("id"): c for c in items(prior.get("claims")) if type(c) is dict}
    after = {c.get("id"): c for c in L["claims"] if type(c) is dict}
    added = [c for c in after if c not in before]
    removed = [c for c in before if c not in after]
    if rec.get("additions") != added or rec.get("removals") != removed:
        r.at_artifact("RECONCILIATION_MEMBERSHIP_MISMATCH", rid, "additions and removals "
                      "are exactly the ledger's membership changes")
    incorporated = [x for x in items(rec.get("incorporatedReviewIds"))]
    removals(r, rec, removed, assurance, incorporated)
    reviews = [r.s.by_id[x].value for x in incorporated
               if isinstance(x, str) and x in r.s.by_id
               and type(r.s.by_id[x].value) is dict]
    offered, links = offered_evidence(r, reviews)
    continuity(r, rec, before, after, links, incorporated)
    evidence_continuity(r, rec, prior, offered)
    if rec.get("transitions") != L["transitions"]:
        r.at_artifact("RECONCILIATION_TRANSITION_MISMATCH", rid,
                      "the reconciliation's transitions are not the ledger's")
    if set(map(str, incorporated)) != assurance:
        r.at_artifact("RECONCILIATION_REVIEW_MISMATCH", rid, "the reconciliation does not "
                      "incorporate exactly the complete independent reviews")
    coverage(r, rec, after)


def removals(r: ReconRun, rec: dict[str, Any], removed: list[Any], assurance: set[str],
             incorporated: list[Any]) -> None:
    """Each removed claim is authorized by a complete review's typed rejection."""
    authorizations = {d.get("claimId"): d for d in items(rec.get("removalDispositions"))
                      if type(d) is dict}
    for cid in removed:
        grant = authorizations.get(cid) or {}
        review = r.s.by_id.get(str(grant.get("reviewId")))
        verdict = next((d.get("disposition") for d in items(
            review.value.get("dispositions") if review and type(review.value) is dict
            else None) if type(d) is dict and d.get("claimId") == cid), None)
        if not grant or grant.get("disposition") != "rejected" \
                or grant.get("reviewId") not in assurance \
                or grant.get("reviewId") not in incorporated or verdict != "rejected":
            r.err("UNAUTHORIZED_CLAIM_REMOVAL", str(cid), f"claim {cid} lacks a complete "
                  "typed review rejection authorizing its removal", LEDGER_FILE, "/claims")
    if len(authorizations) != len(removed):
        r.at_artifact("UNAUTHORIZED_CLAIM_REMOVAL", rec.get("id"),
                      "removal dispositions are exactly the removed prior claims")


def offered_evidence(r: ReconRun, reviews: list[dict[str, Any]]
            ) -> tuple[dict[str, Any], dict[Any, list[dict[str, Any]]]]:
    """New evidence the incorporated reviews supply, and the links they associate."""
    offered: dict[str, Any] = {}
    links: dict[Any, list[dict[str, Any]]] = {}
    keys: set[str] = set()
    for review in reviews:
        supplied = {e.get("id") for e in items(review.get("newEvidence")) if type(e) is dict}
        disposed = {d.get("claimId") for d in items(review.get("dispositions"))
                    if type(d) is dict}
        for record in items(review.get("newEvidence")):
            if type(record) is not dict:
                continue
            if record.get("id") in offered:
                r.at_evidence("RECONCILIATION_EVIDENCE_INVENTION", record.get("id"),
                              "the evidence was supplied more than once")
                continue
            offered[str(record.get("id"))] = record
        for link in items(review.get("evidenceAssociations")):
            key = fingerprint(link)
            if type(link) is not dict or key in keys \
                    or link.get("evidenceId") not in supplied \
                    or link.get("claimId") not in disposed:
                r.at_artifact("RECONCILIATION_EVIDENCE_ASSOCIATION_MISMATCH",
                              review.get("id"), "an incorporated association is invalid")
            keys.add(key)
            if type(link) is dict:
                links.setdefault(link.get("claimId"), []).append(
                    {"evidenceId": link.get("evidenceId"), "relation": link.get("relation")})
    return offered, links


def continuity(r: ReconRun, rec: dict[str, Any], before: dict[Any, dict[str, Any]],
               after: dict[Any, dict[str, Any]], links: dict[Any, list[dict[str, Any]]],
               incorporated: list[Any]) -> None:
    """Each surviving claim keeps what it had, plus exactly what the reviews brought."""
    steps: dict[Any, list[dict[str, Any]]] = {}
    for step in items(rec.get("transitions")):
        if type(step) is dict:
            steps.setdefault(step.get("claimId"), []).append(step)
    disposers = {aid: {d.get("claimId") for d in items(v.get("dispositions"))
                       if type(d) is dict}
                 for aid, v, _e in typed_artifacts(r) if aid in incorporated}
    for cid, old in before.items():
        new = after.get(cid)
        if new is None:
            continue
        for key in ("statement", "qualifications"):
            if not same_json(old.get(key), new.get(key)):
                r.at_claim("RECONCILIATION_CONTINUITY_MISMATCH", cid,
                           f"claim {cid} changed its {key} across reconciliation")
        if not same_json([*items(old.get("evidence")), *links.get(cid, [])],
                         new.get("evidence")):
            r.at_claim("RECONCILIATION_CONTINUITY_MISMATCH", cid, f"claim {cid}'s links are "
                       "not its prior links plus the incorporated associations")
        for key in ("derivedFrom", "challenges"):
            if not same_json(old.get(key), new.get(key)):
                r.at_claim("RECONCILIATION_CONTINUITY_MISMATCH", cid,
                           f"claim {cid} changed its {key} without a typed input")
        expected = distinct([*items(old.get("reviewIds")),
                             *(a for a, ids in disposers.items() if cid in ids)])
        current = items(new.get("reviewIds"))
        if len(expected) != len(set(map(str, current))) or any(x not in current
                                                               for x in expected):
            r.at_claim("RECONCILIATION_REVIEW_MISMATCH", cid, f"claim {cid}'s reviews are "
                       "not derived from the incorporated results")
        mine = steps.get(cid, [])
        want = 0 if old.get("status") == new.get("status") else 1
        if len(mine) != want or (want and (mine[0].get("from") != old.get("status")
                                           or mine[0].get("to") != new.get("status"))):
            r.at_claim("RECONCILIATION_TRANSITION_BINDING_MISMATCH", cid, f"claim {cid} is "
                       "not bound to exactly its prior-to-current transition")


def evidence_continuity(r: ReconRun, rec: dict[str, Any], prior: dict[str, Any],
                        offered: dict[str, Any]) -> None:
    """Prior evidence survives unchanged; new evidence is exactly what the reviews
    supplied."""
    assert r.L is not None
    old = {e.get("id"): e for e in items(prior.get("evidence")) if type(e) is dict}
    # Each pair of records is compared once: the comparison of the whole
    # lists below meets the pairs the records' own checks compared.
    compared: dict[tuple[int, int], bool] = {}

    def alike(a: Any, b: Any) -> bool:
        key = (id(a), id(b))
        if key not in compared:
            compared[key] = same_json(a, b)
        return compared[key]

    for record in r.L["evidence"]:
        if type(record) is not dict:
            continue
        eid = record.get("id")
        if eid in old and not alike(old[eid], record):
            r.at_evidence("RECONCILIATION_EVIDENCE_DRIFT", eid, f"evidence {eid} changed")
        if eid not in old and (eid not in offered
                               or not alike(offered[str(eid)], record)):
            r.at_evidence("RECONCILIATION_EVIDENCE_INVENTION", eid, f"evidence {eid} was "
                          "not supplied by an incorporated review")
    if not same_json_members([*items(prior.get("evidence")), *offered.values()],
                             r.L["evidence"], alike):
        r.at_artifact("RECONCILIATION_EVIDENCE_INVENTION", rec.get("id"), "the ledger's "
                      "evidence is not the prior evidence plus the supplied records")


def coverage(r: ReconRun, rec: dict[str, Any], after: dict[Any, dict[str, Any]]) -> None:
    """Every coverage finding is bound to its manifest gap and disposed of."""
    assert r.L is not None
    gaps = [g for g in r.m["gaps"] if type(g) is dict]
    dispositions = {d.get("findingId"): d for d in items(rec.get("coverageDispositions"))
                    if type(d) is dict}
    evidence_ids = {e.get("id") for e in r.L["evidence"] if type(e) is dict}
    for aid in r.s.passes.get("coverage", []):
        result = r.s.by_id[aid].value
        for finding in items(result.get("coverageFindings")):
            if type(finding) is not dict:
                continue
            fid = finding.get("id")
            gap = next((g for g in gaps if g.get("id") == finding.get("gapId")), None)
            ids = items(finding.get("claimIds"))
            if gap is None or gap.get("material") != finding.get("material") \
                    or gap.get("code") != finding.get("code") \
                    or gap.get("message") != finding.get("message") \
                    or fid not in items(gap.get("coverageFindingIds")) \
                    or any(x not in items(gap.get("claimIds")) for x in ids) \
                    or any(x not in after for x in ids):
                r.err("COVERAGE_GAP_MISMATCH", str(fid), f"coverage finding {fid} is not "
                      "bound to an exact manifest gap and its claims",
                      r.s.by_id[aid].path, "/coverageFindings")
            disposition = dispositions.get(fid)
            if disposition is None or disposition.get("gapId") != finding.get("gapId"):
                r.err("COVERAGE_RECONCILIATION_MISMATCH", str(fid), f"coverage finding "
                      f"{fid} has no exact reconciliation disposition",
                      r.s.by_id[str(rec.get("id"))].path, "/coverageDispositions")
            if disposition is not None and disposition.get("disposition") == "accepted-gap":
                for cid in ids:
                    own = next((d.get("disposition") for d in items(result.get(
                        "dispositions")) if type(d) is dict and d.get("claimId") == cid), None)
                    if finding.get("material") is True and (
                            (after.get(cid) or {}).get("status") == "verified"
                            or own != "gap"):
                        r.at_claim("MATERIAL_COVERAGE_ASSURANCE_EXCEEDED", cid,
                                   f"a material open coverage finding requires claim {cid} "
                                   "to be downgraded")
            elif disposition is not None and disposition.get("disposition") == "resolved" \
                    and not all(x in r.s.exact and x in evidence_ids
                                for x in items(disposition.get("evidenceIds"))):
                r.err("COVERAGE_RESOLUTION_EVIDENCE_INVALID", str(fid),
                      f"coverage finding {fid} is not resolved by exact evidence",
                      r.s.by_id[str(rec.get("id"))].path, "/coverageDispositions")

