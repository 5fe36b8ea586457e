"""Validating a packet the recon tool wrote, in place, by the recon tool's own rules.

:func:`validate_recon` is the rule set for a directory whose ``manifest.json``
is in the recon layout (manifest ``schemaVersion`` 1 or 2), over the packet
kernel's :class:`~assay.packet.kernel.Context`: every file read once (no
symlinks, bounded regular files, nothing ever written), each document
checked against the recon contract (:mod:`assay.packet.recon.contract`),
then the recon tool's cross-file rules, in its order and with its codes and
locations (``where``: ``lane:ID``, ``pass:MODE``, ``source:ID``, an artifact
or evidence id, or a ``$``-path): artifact references and digests,
persisted-secret safety, source eligibility and gaps, reopening every
evidence record against its source (captures in the packet; ``file`` and
``repository`` sources only inside the configured source roots), approved
lanes and routing conditions, passes and the achieved profile, the one
terminal reconciliation, brief bindings, claim continuity and verified-claim
assurance. A packet that passes becomes the same
:class:`~assay.packet.model.ValidatedRun` an assay-layout packet does.

Where assay's own rules are stricter than the recon tool's (exact
excerpts, a narrower transition table, briefs of every claim, closed gap
kinds, review ids that must resolve, strict JSON), the finding is an
*advisory*: reported, never a failure. Secrets are the one exception: a
raw secret that assay's shared rule set finds is ``UNREDACTED_SECRET``
even where the recon tool's own two patterns see none. The rules are plain
functions over one :class:`~assay.packet.recon.run.ReconRun`, one module
per concern: :mod:`~assay.packet.recon.run` (documents, references,
secrets), :mod:`~assay.packet.recon.sources`, :mod:`~assay.packet.recon.routing`
and :mod:`~assay.packet.recon.reviews`; this module adds verified-claim
assurance, the advisories and the validated run, and runs them all.
Imports the base modules and the packet modules.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from assay.canonical import fingerprint
from assay.packet.kernel import Context
from assay.packet.layout import LEDGER_FILE, MANIFEST_FILE, PacketRoot, file_digest
from assay.packet.model import (
    GAP_KINDS,
    PROFILES,
    TRANSITIONS,
    Artifact,
    Claim,
    Evidence,
    Gap,
    Link,
    PassOutcome,
    Review,
    Source,
    ValidatedRun,
    Validation,
    approval_fingerprint,
)
from assay.packet.recon.contract import LEGAL_TRANSITIONS, distinct, items
from assay.packet.recon.reviews import binds, brief_of, reconciliation, review_bindings
from assay.packet.recon.routing import (
    achieved_profile,
    approved_lanes,
    assurance_ids,
    collect_passes,
    conditions,
    pass_outcomes,
    terminal,
    wave_list,
)
from assay.packet.recon.run import (
    BRIEF_MODE,
    OUTCOME_CODES,
    REQUIRED,
    ReconRun,
    ReviewFacts,
    complete,
    gap_names_mode,
    obj,
    references,
    same,
    secrets,
    shapes,
    usable,
)
from assay.packet.recon.sources import evidence_records, source_gaps

__all__ = ["validate_recon"]


def claim_assurance(r: ReconRun, achieved: str | None, assurance: set[str]) -> None:
    """Supported and verified claims, synthesis references, and the publication the
    achieved profile allows."""
    assert r.L is not None
    L, m = r.L, r.m
    records = {e.get("id"): e for e in L["evidence"] if type(e) is dict}
    prior = r.s.prior or {}
    prior_claims = {c.get("id"): c for c in items(prior.get("claims")) if type(c) is dict}
    claim_ids = {c.get("id") for c in L["claims"] if type(c) is dict}
    for cid in L["synthesis"]["keyClaimIds"]:
        if cid not in claim_ids:
            r.at_ledger("SYNTHESIS_REFERENCE_MISSING", "$.synthesis.keyClaimIds",
                        "a synthesis key claim does not resolve")
    questions = {q.get("id") for q in L["unresolvedQuestions"] if type(q) is dict}
    for qid in L["synthesis"]["unresolvedQuestionIds"]:
        if qid not in questions:
            r.at_ledger("SYNTHESIS_REFERENCE_MISSING", "$.synthesis.unresolvedQuestionIds",
                        "a synthesis question does not resolve")
    for claim in L["claims"]:
        if type(claim) is not dict:
            continue
        cid, status = claim.get("id"), claim.get("status")
        if status in ("supported", "verified") and achieved is None:
            r.at_claim("PROFILE_ASSURANCE_EXCEEDED", cid, "supported assurance needs at "
                       "least the quick profile achieved")
        if status == "verified" and achieved == "quick":
            r.at_claim("PROFILE_ASSURANCE_EXCEEDED", cid, "a quick packet holds no "
                       "verified claim")
        if status == "verified":
            verified(r, claim, achieved, assurance, prior_claims, prior)
        if status in ("supported", "verified") and not any(
                type(x) is dict and x.get("relation") == "supports"
                and x.get("evidenceId") in records and x.get("evidenceId") in r.s.exact
                for x in items(claim.get("evidence"))):
            r.at_claim("CLAIM_ASSURANCE_INVALID", cid, "a supported claim needs exact "
                       "valid supporting evidence")
    run = m["run"]
    if run.get("achievedProfile") != achieved:
        r.at_manifest("ACHIEVED_PROFILE_MISMATCH", "$.run.achievedProfile",
                      f"the manifest declares {run.get('achievedProfile')}; the complete "
                      f"artifacts achieve {achieved}")
    if run.get("status") == "complete" and achieved != run.get("requestedProfile"):
        r.at_manifest("INCOMPLETE_PROFILE", "$.run.status",
                      "a complete run achieves its requested profile")
    material = any(type(g) is dict and g.get("material") is True for g in m["gaps"])
    if run.get("status") == "complete" and material:
        r.at_manifest("MATERIAL_GAP_REQUIRES_PARTIAL", "$.run.status",
                      "a complete run holds no material gap")
    wanted = PROFILES.index(run["requestedProfile"]) \
        if run.get("requestedProfile") in PROFILES else -1
    got = PROFILES.index(achieved) if achieved in PROFILES else -1
    if run.get("status") == "partial" and got >= wanted and not material:
        r.at_manifest("INVALID_PARTIAL_STATUS", "$.run.status",
                      "a partial run achieves less than requested or has a material gap")


def dispositions_of(r: ReconRun, review: dict[str, Any]) -> dict[Any, list[dict[str, Any]]]:
    """A review's dispositions by claim (computed once per review)."""
    if id(review) not in r.s.by_claim:
        by_claim: dict[Any, list[dict[str, Any]]] = {}
        for item in items(review.get("dispositions")):
            if type(item) is dict:
                by_claim.setdefault(item.get("claimId"), []).append(item)
        r.s.by_claim[id(review)] = by_claim
    return r.s.by_claim[id(review)]


def review_facts(r: ReconRun, review: dict[str, Any]) -> ReviewFacts:
    """What every verified claim checks of one review, whatever the claim (computed once
    per review)."""
    assert r.L is not None
    facts = r.s.facts.get(id(review))
    if facts is None:
        brief = brief_of(r, review)
        run_id = r.L.get("runId")
        fits = brief is not None and brief.get("runId") == run_id \
            and brief.get("mode") == BRIEF_MODE.get(str(review.get("reviewKind")))
        facts = ReviewFacts(
            other_run=review.get("runId") != run_id,
            incomplete=review.get("status") != "complete",
            lane=review.get("reviewerLane"),
            brief=brief if fits else None,
            permitted=any(same(x, review.get("brief"))
                          for x in items(review.get("permittedInputs"))),
            unresolved=bool(items(review.get("unresolvedIssues"))))
        r.s.facts[id(review)] = facts
    return facts


def verified(r: ReconRun, claim: dict[str, Any], achieved: str | None, assurance: set[str],
             prior_claims: dict[Any, dict[str, Any]], prior: dict[str, Any]) -> None:
    """A verified claim's independent, complete, affirming reviews bound to its brief."""
    assert r.L is not None
    cid = claim.get("id")
    if any(type(ch) is dict and ch.get("material") is True and ch.get("status") == "unresolved"
           for ch in items(claim.get("challenges"))):
        r.at_claim("UNRESOLVED_VERIFICATION_CHALLENGE", cid,
                   "a verified claim has an unresolved material challenge")
    review_ids = claim.get("reviewIds")
    if type(review_ids) is not list or len(set(map(str, review_ids))) != len(review_ids):
        r.at_claim("DUPLICATE_REVIEW_ID", cid, "a verified claim's review ids are unique")
    required = {"semantic": "affirmed", "adversarial": "unchallenged", "coverage": "covered"}
    if achieved == "thorough":
        required["redundant-verification"] = "affirmed"
    satisfied: set[str] = set()
    lanes: set[Any] = set()
    for rid in distinct(items(review_ids)):
        entry = r.s.by_id.get(rid) if isinstance(rid, str) else None
        review = entry.value if entry and type(entry.value) is dict else None
        if review is None or review.get("kind") != "recon.review-result":
            r.at_claim("MISSING_INDEPENDENT_REVIEW", cid, f"review {rid} is no hashed result")
            continue
        if rid not in assurance:
            r.at_claim("INCOMPLETE_INDEPENDENT_REVIEW", cid,
                       f"review {rid} is no complete same-run assurance result")
        kind = review.get("reviewKind")
        if kind not in required and kind != "contradiction-resolution":
            r.at_claim("REVIEW_KIND_MISMATCH", cid, f"review {rid} has an ineligible kind")
            continue
        facts = review_facts(r, review)
        if facts.other_run:
            r.at_claim("REVIEW_RUN_MISMATCH", cid, f"review {rid} is of another run")
        if facts.incomplete:
            r.at_claim("INCOMPLETE_INDEPENDENT_REVIEW", cid, f"review {rid} is not complete")
        if facts.lane in lanes:
            r.at_claim("MISSING_INDEPENDENT_REVIEW", cid, "a review lane is reused")
        lanes.add(facts.lane)
        basis = prior_claims.get(cid) or claim
        if facts.brief is None \
                or not binds(r, facts.brief, str(kind), basis,
                             prior if cid in prior_claims else r.L) \
                or not facts.permitted:
            r.at_claim("REVIEW_BRIEF_MISMATCH", cid,
                       f"review {rid} is not bound to the expected immutable brief")
        mine = dispositions_of(r, review).get(cid, [])
        wanted = "resolved" if kind == "contradiction-resolution" else required.get(str(kind))
        if len(mine) != 1 or mine[0].get("disposition") != wanted:
            r.at_claim("REVIEW_DISPOSITION_MISMATCH", cid,
                       f"review {rid} does not support a verified disposition")
        if facts.unresolved:
            r.at_claim("REVIEW_DISPOSITION_MISMATCH", cid,
                       f"review {rid} retains unresolved issues")
        if kind in required:
            satisfied.add(str(kind))
    missing = [k for k in required if k not in satisfied]
    if missing:
        r.at_claim("MISSING_INDEPENDENT_REVIEW", cid,
                   f"a verified claim needs {', '.join(missing)} reviews")


def stricter(r: ReconRun) -> None:
    """Advisories: assay's own rules that are stricter than the recon tool's."""
    assert r.L is not None
    for index, gap in enumerate(r.m["gaps"]):
        if type(gap) is dict and gap.get("code") not in GAP_KINDS:
            r.advise("INVALID_VALUE", f"$.gaps[{index}].code", "an open gap code: assay's "
                     "own layout has a closed list of gap kinds", MANIFEST_FILE,
                     f"/gaps/{index}/code")
    for index, claim in enumerate(r.L["claims"]):
        for n, rid in enumerate(items(claim.get("reviewIds") if type(claim) is dict
                                      else None)):
            if type(rid) is not str:
                r.advise("INVALID_TYPE", str(claim.get("id")), "a review id that is not "
                         "a string: assay's own layout resolves every review id",
                         LEDGER_FILE, f"/claims/{index}/reviewIds/{n}")
            elif rid not in r.s.by_id:
                r.advise("UNKNOWN_REFERENCE", str(claim.get("id")), f"review {rid} is no "
                         "listed result: assay's own layout resolves every review id",
                         LEDGER_FILE, f"/claims/{index}/reviewIds/{n}")
    for index, step in enumerate(r.L["transitions"]):
        if type(step) is dict and step.get("to") not in TRANSITIONS.get(step.get("from"),
                                                                        frozenset()) \
                and (step.get("from"), step.get("to")) in LEGAL_TRANSITIONS:
            r.advise("ILLEGAL_CLAIM_TRANSITION", f"$.transitions[{index}]",
                     f"{step.get('from')} -> {step.get('to')} is outside assay's own "
                     "transition table", LEDGER_FILE, f"/transitions/{index}")


def validated(r: ReconRun, achieved: str | None) -> ValidatedRun:
    """The validated run of a packet that holds."""
    assert r.L is not None
    m, L = r.m, r.L
    run, request = m["run"], m.get("request") or {}
    execution = obj(m.get("execution"))
    approval = obj(execution.get("approval"))
    records = [e for e in L["evidence"] if type(e) is dict]
    evidence = tuple(evidence_value(r, e) for e in records)
    exact_ids = {e.evidence_id for e in evidence if e.eligible}
    claims = tuple(claim_value(c, exact_ids) for c in L["claims"] if type(c) is dict)
    gaps = tuple(gap_value(r, g) for g in m["gaps"] if type(g) is dict)
    passes = tuple(
        PassOutcome(mode, mode in r.s.passes,
                    tuple(r.s.by_id[a].path for a in r.s.passes.get(mode, [])),
                    tuple(g.gap_id for g in gaps if g.material and g.mode == mode))
        for mode in REQUIRED[r.version][str(run["requestedProfile"])])
    listed = [e for path, e in r.s.by_path.items() if path != LEDGER_FILE
              and any(same(a, e.ref) for a in m["artifacts"])]
    status = str(run.get("status"))
    return ValidatedRun(
        identity=fingerprint({"manifest": r.cx.digests[MANIFEST_FILE],
                              "ledger": r.cx.digests[LEDGER_FILE]}),
        run_id=str(run["id"]),
        objective=str(request.get("objective", "")),
        questions=tuple(q for q in items(request.get("questions")) if isinstance(q, str)),
        status=status,
        requested=str(run["requestedProfile"]),
        achieved=achieved,
        publication=status if status in ("complete", "partial") else None,
        ledger_revision=int(L["revision"]),
        synthesis=str(L["synthesis"].get("answer", "")),
        unresolved_questions=tuple(
            str(q.get("question", q.get("id"))) for q in L["unresolvedQuestions"]
            if type(q) is dict),
        sources=tuple(source_value(s) for s in m["sources"] if type(s) is dict),
        evidence=evidence,
        claims=claims,
        gaps=gaps,
        passes=passes,
        artifacts=tuple(Artifact(e.path, str(e.ref.get("digest")), artifact_kind(e.value))
                        for e in listed),
        reviews=tuple(Review(e.path, str(e.value.get("reviewKind")),
                             str(e.value.get("reviewerLane")), complete(e.value),
                             (e.value.get("brief") or {}).get("digest"))
                      for e in listed if type(e.value) is dict
                      and e.value.get("kind") == "recon.review-result"),
        approved_at=approval.get("approvedAt"),
        execution_fingerprint=approval.get("fingerprint") or (
            approval_fingerprint(execution) if approval else None),
        byte_digests=tuple(sorted({MANIFEST_FILE: r.cx.digests[MANIFEST_FILE],
                                   LEDGER_FILE: r.cx.digests[LEDGER_FILE],
                                   **r.ref_digests}.items())),
    )


def artifact_kind(value: Any) -> str:
    kind = value.get("kind") if type(value) is dict else None
    return kind[len("recon."):] if isinstance(kind, str) and kind.startswith("recon.") \
        else "file"


def evidence_value(r: ReconRun, record: dict[str, Any]) -> Evidence:
    """An evidence record with the state it earned (declared only if it reopened)."""
    declared = (record.get("locatorValidation") or {}).get("status")
    state = declared if record.get("id") in r.s.exact else (
        "stale" if declared == "stale" else "invalid")
    return Evidence(str(record.get("id")), str(record.get("sourceId")),
                    str(record.get("displayExcerpt")), str(state), "redaction" in record)


def claim_value(claim: dict[str, Any], exact: set[str]) -> Claim:
    links = tuple(Link(str(x.get("evidenceId")), str(x.get("relation")))
                  for x in items(claim.get("evidence")) if type(x) is dict)
    assurance = ("verified" if claim.get("status") == "verified" else
                 "evidenced" if any(x.relation == "supports" and x.evidence_id in exact
                                    for x in links) else "unevidenced")
    return Claim(str(claim.get("id")), str(claim.get("statement")), str(claim.get("status")),
                 links, tuple(str(q) for q in items(claim.get("qualifications"))), assurance,
                 tuple(str(r) for r in items(claim.get("reviewIds"))))


def gap_value(r: ReconRun, gap: dict[str, Any]) -> Gap:
    """A gap, with the wave mode a pass outcome gap names."""
    mode = None
    if gap.get("code") in OUTCOME_CODES:
        named = [w for w in {w.get("mode") for w in wave_list(r)} if isinstance(w, str)
                 and gap_names_mode({**gap, "material": True}, w)]
        mode = named[0] if len(named) == 1 else None
    return Gap(str(gap.get("id")), str(gap.get("code")), gap.get("material") is True, mode,
               str(gap.get("message")),
               tuple(str(x) for x in items(gap.get("claimIds"))),
               tuple(str(x) for x in items(gap.get("sourceIds"))),
               tuple(str(x) for x in items(gap.get("coverageFindingIds"))))


def source_value(source: dict[str, Any]) -> Source:
    kind = source.get("kind")
    title = {"file": source.get("path"), "repository": source.get("root"),
             "url": source.get("url"),
             "command-output": " ".join(map(str, items(source.get("argv")))),
             "connected-resource": f"{source.get('system')}:{source.get('resourceId')}"
             }.get(str(kind))
    state = "pinned" if source.get("available") is True \
        and source.get("validationState") == "pinned" else source.get("validationState")
    return Source(str(source.get("id")), str(kind), str(title), str(state), "")


def guarded(r: ReconRun, rule: Callable[..., Any], *args: Any) -> Any:
    """Run one cross-file rule. On a packet that already breaks the contract, a rule
    meeting a value of the wrong shape stops quietly (the contract findings stand);
    on one that holds, any such failure is a bug and is raised."""
    try:
        return rule(r, *args)
    except (TypeError, AttributeError, KeyError, IndexError, ValueError):
        if not r.broken:
            raise
        return None


def validate_recon(root: PacketRoot, raw: bytes, source_roots: Sequence[str] = ()) -> Validation:
    """Validate the recon-layout packet at ``root`` whose ``manifest.json`` bytes are ``raw``.

    Every rule, in the recon tool's order. ``file`` and ``repository`` sources
    are reopened only inside ``source_roots``. Reads each file once; writes
    nothing.
    """
    cx = Context(root, "recon")
    cx.raw[MANIFEST_FILE] = raw
    cx.digests[MANIFEST_FILE] = file_digest(raw)
    r = ReconRun(cx, source_roots)
    try:
        manifest = r.parse(raw, MANIFEST_FILE)
    except ValueError as exc:
        r.err("INVALID_MANIFEST_JSON", MANIFEST_FILE, f"not JSON: {exc}"[:200], MANIFEST_FILE)
        return Validation(issues=tuple(i for i in cx.issues if not i.advisory), layout="recon")
    r.m = manifest if type(manifest) is dict else {}
    r.version = 2 if r.m.get("schemaVersion") == 2 else 1
    holds = shapes(r)
    references(r)
    guarded(r, secrets)
    achieved = None
    if usable(r):
        for rule in (source_gaps, evidence_records,
                     *((conditions,) if holds and r.version == 2 else ()),
                     *((approved_lanes,) if holds else ()),
                     collect_passes):
            guarded(r, rule)
        achieved = guarded(r, achieved_profile)
        guarded(r, pass_outcomes)
        assurance = guarded(r, assurance_ids) or set()
        required = achieved in ("standard", "thorough")
        for rule, args in ((terminal, (required,)), (review_bindings, ()),
                           (reconciliation, (assurance, required)),
                           *(((claim_assurance, (achieved, assurance)),) if holds else ()),
                           (stricter, ())):
            guarded(r, rule, *args)
    run = validated(r, achieved) if not cx.failed and usable(r) and holds else None
    return cx.outcome(run, achieved=achieved)
