"""Validating a packet the recon tool wrote, in place, by the recon tool's own rules.

:func:`validate_recon` is the boundary for a directory whose ``manifest.json``
is in the recon layout (manifest ``schemaVersion`` 1 or 2). It reads every
file once through :class:`~assay.packet.layout.PacketRoot` (no symlinks,
bounded regular files, nothing ever written), checks each document against
the recon contract (:mod:`assay.packet.recon_contract`), then applies the
recon tool's cross-file rules, in its order and with its codes and
locations (``where``: ``lane:ID``, ``pass:MODE``, ``source:ID``, an
artifact or evidence id, or a ``$``-path): artifact references and
digests, persisted-secret safety, source eligibility and gaps, reopening
every evidence record against its source (captures in the packet; ``file``
and ``repository`` sources only inside the configured source roots),
approved lanes and routing conditions, passes and the achieved profile,
the one terminal reconciliation, brief bindings, claim continuity and
verified-claim assurance. A packet that passes becomes the same
:class:`~assay.packet.model.ValidatedRun` an assay-layout packet does.

Where assay's own rules are stricter than the recon tool's (exact
excerpts, a narrower transition table, briefs of every claim, closed gap
kinds, review ids that must resolve, strict JSON), the finding is an
*advisory*: reported, never a failure. Secrets are the one exception: a
raw secret that assay's shared rule set finds is ``UNREDACTED_SECRET``
even where the recon tool's own two patterns see none. The rules live in
:mod:`~assay.packet.recon_base` (documents, references, secrets),
:mod:`~assay.packet.recon_sources`, :mod:`~assay.packet.recon_routing` and
:mod:`~assay.packet.recon_reviews`; this module adds verified-claim
assurance, the advisories and the validated run, and runs them all.
Imports the base modules and the packet modules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.canonical import fingerprint
from assay.packet.layout import (
    LEDGER_FILE,
    MANIFEST_FILE,
    PacketRoot,
)
from assay.packet.model import (
    GAP_KINDS,
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
)
from assay.packet.recon_base import (
    BRIEF_MODE,
    OUTCOME_CODES,
    REQUIRED,
    ReviewFacts,
    complete,
    gap_names_mode,
    obj,
    recon_redact,
    same,
)
from assay.packet.recon_contract import (
    LEGAL_TRANSITIONS,
    PROFILES,
    approval_input,
    distinct,
    items,
)
from assay.packet.recon_reviews import Reviews

__all__ = ["recon_redact", "validate_recon"]


class _ReconCheck(Reviews):
    """One validation of one recon-layout packet: every rule, in the recon tool's order."""

    # -- assurance and publication --------------------------------------------------
    def assurance(self, achieved: str | None, assurance: set[str]) -> None:
        assert self.L is not None
        L, m = self.L, self.m
        records = {e.get("id"): e for e in L["evidence"] if type(e) is dict}
        prior = self.s.prior or {}
        prior_claims = {c.get("id"): c for c in items(prior.get("claims")) if type(c) is dict}
        claim_ids = {c.get("id") for c in L["claims"] if type(c) is dict}
        for cid in L["synthesis"]["keyClaimIds"]:
            if cid not in claim_ids:
                self.at_ledger("SYNTHESIS_REFERENCE_MISSING", "$.synthesis.keyClaimIds",
                               "a synthesis key claim does not resolve")
        questions = {q.get("id") for q in L["unresolvedQuestions"] if type(q) is dict}
        for qid in L["synthesis"]["unresolvedQuestionIds"]:
            if qid not in questions:
                self.at_ledger("SYNTHESIS_REFERENCE_MISSING", "$.synthesis.unresolvedQuestionIds",
                               "a synthesis question does not resolve")
        for claim in L["claims"]:
            if type(claim) is not dict:
                continue
            cid, status = claim.get("id"), claim.get("status")
            if status in ("supported", "verified") and achieved is None:
                self.at_claim("PROFILE_ASSURANCE_EXCEEDED", cid, "supported assurance needs at "
                              "least the quick profile achieved")
            if status == "verified" and achieved == "quick":
                self.at_claim("PROFILE_ASSURANCE_EXCEEDED", cid, "a quick packet holds no "
                              "verified claim")
            if status == "verified":
                self.verified(claim, achieved, assurance, prior_claims, prior)
            if status in ("supported", "verified") and not any(
                    type(x) is dict and x.get("relation") == "supports"
                    and x.get("evidenceId") in records and x.get("evidenceId") in self.s.exact
                    for x in items(claim.get("evidence"))):
                self.at_claim("CLAIM_ASSURANCE_INVALID", cid, "a supported claim needs exact "
                              "valid supporting evidence")
        run = m["run"]
        if run.get("achievedProfile") != achieved:
            self.at_manifest("ACHIEVED_PROFILE_MISMATCH", "$.run.achievedProfile",
                             f"the manifest declares {run.get('achievedProfile')}; the complete "
                             f"artifacts achieve {achieved}")
        if run.get("status") == "complete" and achieved != run.get("requestedProfile"):
            self.at_manifest("INCOMPLETE_PROFILE", "$.run.status",
                             "a complete run achieves its requested profile")
        material = any(type(g) is dict and g.get("material") is True for g in m["gaps"])
        if run.get("status") == "complete" and material:
            self.at_manifest("MATERIAL_GAP_REQUIRES_PARTIAL", "$.run.status",
                             "a complete run holds no material gap")
        wanted = PROFILES.index(run["requestedProfile"]) \
            if run.get("requestedProfile") in PROFILES else -1
        got = PROFILES.index(achieved) if achieved in PROFILES else -1
        if run.get("status") == "partial" and got >= wanted and not material:
            self.at_manifest("INVALID_PARTIAL_STATUS", "$.run.status",
                             "a partial run achieves less than requested or has a material gap")

    def dispositions(self, review: dict[str, Any]) -> dict[Any, list[dict[str, Any]]]:
        """A review's dispositions by claim (computed once per review)."""
        if id(review) not in self.s.by_claim:
            by_claim: dict[Any, list[dict[str, Any]]] = {}
            for item in items(review.get("dispositions")):
                if type(item) is dict:
                    by_claim.setdefault(item.get("claimId"), []).append(item)
            self.s.by_claim[id(review)] = by_claim
        return self.s.by_claim[id(review)]

    def review_facts(self, review: dict[str, Any]) -> ReviewFacts:
        """What every verified claim checks of one review, whatever the claim (computed once
        per review)."""
        assert self.L is not None
        facts = self.s.facts.get(id(review))
        if facts is None:
            brief = self.brief_of(review)
            run_id = self.L.get("runId")
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
            self.s.facts[id(review)] = facts
        return facts

    def verified(self, claim: dict[str, Any], achieved: str | None, assurance: set[str],
                 prior_claims: dict[Any, dict[str, Any]], prior: dict[str, Any]) -> None:
        assert self.L is not None
        cid = claim.get("id")
        if any(type(ch) is dict and ch.get("material") is True and ch.get("status") == "unresolved"
               for ch in items(claim.get("challenges"))):
            self.at_claim("UNRESOLVED_VERIFICATION_CHALLENGE", cid,
                          "a verified claim has an unresolved material challenge")
        review_ids = claim.get("reviewIds")
        if type(review_ids) is not list or len(set(map(str, review_ids))) != len(review_ids):
            self.at_claim("DUPLICATE_REVIEW_ID", cid, "a verified claim's review ids are unique")
        required = {"semantic": "affirmed", "adversarial": "unchallenged", "coverage": "covered"}
        if achieved == "thorough":
            required["redundant-verification"] = "affirmed"
        satisfied: set[str] = set()
        lanes: set[Any] = set()
        for rid in distinct(items(review_ids)):
            entry = self.s.by_id.get(rid) if isinstance(rid, str) else None
            review = entry.value if entry and type(entry.value) is dict else None
            if review is None or review.get("kind") != "recon.review-result":
                self.at_claim("MISSING_INDEPENDENT_REVIEW", cid, f"review {rid} is no hashed result")
                continue
            if rid not in assurance:
                self.at_claim("INCOMPLETE_INDEPENDENT_REVIEW", cid,
                              f"review {rid} is no complete same-run assurance result")
            kind = review.get("reviewKind")
            if kind not in required and kind != "contradiction-resolution":
                self.at_claim("REVIEW_KIND_MISMATCH", cid, f"review {rid} has an ineligible kind")
                continue
            facts = self.review_facts(review)
            if facts.other_run:
                self.at_claim("REVIEW_RUN_MISMATCH", cid, f"review {rid} is of another run")
            if facts.incomplete:
                self.at_claim("INCOMPLETE_INDEPENDENT_REVIEW", cid, f"review {rid} is not complete")
            if facts.lane in lanes:
                self.at_claim("MISSING_INDEPENDENT_REVIEW", cid, "a review lane is reused")
            lanes.add(facts.lane)
            basis = prior_claims.get(cid) or claim
            if facts.brief is None \
                    or not self.binds(facts.brief, str(kind), basis,
                                      prior if cid in prior_claims else self.L) \
                    or not facts.permitted:
                self.at_claim("REVIEW_BRIEF_MISMATCH", cid,
                              f"review {rid} is not bound to the expected immutable brief")
            mine = self.dispositions(review).get(cid, [])
            wanted = "resolved" if kind == "contradiction-resolution" else required.get(str(kind))
            if len(mine) != 1 or mine[0].get("disposition") != wanted:
                self.at_claim("REVIEW_DISPOSITION_MISMATCH", cid,
                              f"review {rid} does not support a verified disposition")
            if facts.unresolved:
                self.at_claim("REVIEW_DISPOSITION_MISMATCH", cid,
                              f"review {rid} retains unresolved issues")
            if kind in required:
                satisfied.add(str(kind))
        missing = [k for k in required if k not in satisfied]
        if missing:
            self.at_claim("MISSING_INDEPENDENT_REVIEW", cid,
                          f"a verified claim needs {', '.join(missing)} reviews")

    # -- what assay's own rules would add -----------------------------------------
    def stricter(self) -> None:
        """Advisories: assay's own rules that are stricter than the recon tool's."""
        assert self.L is not None
        for index, gap in enumerate(self.m["gaps"]):
            if type(gap) is dict and gap.get("code") not in GAP_KINDS:
                self.advise("INVALID_VALUE", f"$.gaps[{index}].code", "an open gap code: assay's "
                            "own layout has a closed list of gap kinds", MANIFEST_FILE,
                            f"/gaps/{index}/code")
        for index, claim in enumerate(self.L["claims"]):
            for n, rid in enumerate(items(claim.get("reviewIds") if type(claim) is dict
                                          else None)):
                if type(rid) is not str:
                    self.advise("INVALID_TYPE", str(claim.get("id")), "a review id that is not "
                                "a string: assay's own layout resolves every review id",
                                LEDGER_FILE, f"/claims/{index}/reviewIds/{n}")
                elif rid not in self.s.by_id:
                    self.advise("UNKNOWN_REFERENCE", str(claim.get("id")), f"review {rid} is no "
                                "listed result: assay's own layout resolves every review id",
                                LEDGER_FILE, f"/claims/{index}/reviewIds/{n}")
        for index, step in enumerate(self.L["transitions"]):
            if type(step) is dict and step.get("to") not in TRANSITIONS.get(step.get("from"),
                                                                            frozenset()) \
                    and (step.get("from"), step.get("to")) in LEGAL_TRANSITIONS:
                self.advise("ILLEGAL_CLAIM_TRANSITION", f"$.transitions[{index}]",
                            f"{step.get('from')} -> {step.get('to')} is outside assay's own "
                            "transition table", LEDGER_FILE, f"/transitions/{index}")

    # -- the validated run ----------------------------------------------------------
    def validated(self, achieved: str | None) -> ValidatedRun:
        assert self.L is not None
        m, L = self.m, self.L
        run, request = m["run"], m.get("request") or {}
        execution = obj(m.get("execution"))
        approval = obj(execution.get("approval"))
        records = [e for e in L["evidence"] if type(e) is dict]
        evidence = tuple(self.evidence_value(e) for e in records)
        exact_ids = {e.evidence_id for e in evidence if e.eligible}
        claims = tuple(self.claim_value(c, exact_ids) for c in L["claims"] if type(c) is dict)
        gaps = tuple(self.gap_value(g) for g in m["gaps"] if type(g) is dict)
        passes = tuple(
            PassOutcome(mode, mode in self.s.passes,
                        tuple(self.s.by_id[a].path for a in self.s.passes.get(mode, [])),
                        tuple(g.gap_id for g in gaps if g.material and g.mode == mode))
            for mode in REQUIRED[self.version][str(run["requestedProfile"])])
        listed = [e for path, e in self.s.by_path.items() if path != LEDGER_FILE
                  and any(same(a, e.ref) for a in m["artifacts"])]
        status = str(run.get("status"))
        return ValidatedRun(
            identity=fingerprint({"manifest": self.s.digests[MANIFEST_FILE],
                                  "ledger": self.s.digests[LEDGER_FILE]}),
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
            sources=tuple(self.source_value(s) for s in m["sources"] if type(s) is dict),
            evidence=evidence,
            claims=claims,
            gaps=gaps,
            passes=passes,
            artifacts=tuple(Artifact(e.path, str(e.ref.get("digest")), self.kind(e.value))
                            for e in listed),
            reviews=tuple(Review(e.path, str(e.value.get("reviewKind")),
                                 str(e.value.get("reviewerLane")), complete(e.value),
                                 (e.value.get("brief") or {}).get("digest"))
                          for e in listed if type(e.value) is dict
                          and e.value.get("kind") == "recon.review-result"),
            approved_at=approval.get("approvedAt"),
            execution_fingerprint=approval.get("fingerprint") or (
                approval_input(execution) if approval else None),
            byte_digests=tuple(sorted({MANIFEST_FILE: self.s.digests[MANIFEST_FILE],
                                       LEDGER_FILE: self.s.digests[LEDGER_FILE],
                                       **self.ref_digests}.items())),
        )

    @staticmethod
    def kind(value: Any) -> str:
        kind = value.get("kind") if type(value) is dict else None
        return kind[len("recon."):] if isinstance(kind, str) and kind.startswith("recon.") \
            else "file"

    def evidence_value(self, record: dict[str, Any]) -> Evidence:
        declared = (record.get("locatorValidation") or {}).get("status")
        state = declared if record.get("id") in self.s.exact else (
            "stale" if declared == "stale" else "invalid")
        return Evidence(str(record.get("id")), str(record.get("sourceId")),
                        str(record.get("displayExcerpt")), str(state), "redaction" in record)

    @staticmethod
    def claim_value(claim: dict[str, Any], exact: set[str]) -> Claim:
        links = tuple(Link(str(x.get("evidenceId")), str(x.get("relation")))
                      for x in items(claim.get("evidence")) if type(x) is dict)
        assurance = ("verified" if claim.get("status") == "verified" else
                     "evidenced" if any(x.relation == "supports" and x.evidence_id in exact
                                        for x in links) else "unevidenced")
        return Claim(str(claim.get("id")), str(claim.get("statement")), str(claim.get("status")),
                     links, tuple(str(q) for q in items(claim.get("qualifications"))), assurance,
                     tuple(str(r) for r in items(claim.get("reviewIds"))))

    def gap_value(self, gap: dict[str, Any]) -> Gap:
        mode = None
        if gap.get("code") in OUTCOME_CODES:
            named = [w for w in {w.get("mode") for w in self.waves()} if isinstance(w, str)
                     and gap_names_mode({**gap, "material": True}, w)]
            mode = named[0] if len(named) == 1 else None
        return Gap(str(gap.get("id")), str(gap.get("code")), gap.get("material") is True, mode,
                   str(gap.get("message")),
                   tuple(str(x) for x in items(gap.get("claimIds"))),
                   tuple(str(x) for x in items(gap.get("sourceIds"))),
                   tuple(str(x) for x in items(gap.get("coverageFindingIds"))))

    @staticmethod
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

    def guarded(self, rule: Any, *args: Any) -> Any:
        """Run one cross-file rule. On a packet that already breaks the contract, a rule
        meeting a value of the wrong shape stops quietly (the contract findings stand);
        on one that holds, any such failure is a bug and is raised."""
        try:
            return rule(*args)
        except (TypeError, AttributeError, KeyError, IndexError, ValueError):
            if not self.broken:
                raise
            return None

    def run(self) -> Validation:
        try:
            manifest = self.parse(self.raw[MANIFEST_FILE], MANIFEST_FILE)
        except ValueError as exc:
            self.err("INVALID_MANIFEST_JSON", MANIFEST_FILE, f"not JSON: {exc}"[:200],
                     MANIFEST_FILE)
            return Validation(issues=tuple(self.issues), layout="recon")
        self.m = manifest if type(manifest) is dict else {}
        self.version = 2 if self.m.get("schemaVersion") == 2 else 1
        holds = self.shapes()
        self.references()
        self.guarded(self.secrets)
        achieved = None
        if self.usable():
            for rule in (self.source_gaps, self.evidence,
                         *((self.conditions,) if holds and self.version == 2 else ()),
                         *((self.approved_lanes,) if holds else ()),
                         self.collect_passes):
                self.guarded(rule)
            achieved = self.guarded(self.achieved)
            self.guarded(self.pass_outcomes)
            assurance = self.guarded(self.assurance_ids) or set()
            required = achieved in ("standard", "thorough")
            for rule, args in ((self.terminal, (required,)), (self.review_bindings, ()),
                               (self.reconciliation, (assurance, required)),
                               *(((self.assurance, (achieved, assurance)),) if holds else ()),
                               (self.stricter, ())):
                self.guarded(rule, *args)
        order = (lambda i: (i.path, i.pointer, i.code, i.where, i.message))
        issues = tuple(sorted(set(self.issues), key=order))
        advisories = tuple(sorted(set(self.advisories), key=order))
        if issues or not self.usable() or not holds:
            return Validation(issues=issues, advisories=advisories, achieved_profile=achieved,
                              layout="recon")
        return Validation(issues=(), run=self.validated(achieved), advisories=advisories,
                          achieved_profile=achieved, layout="recon")


def validate_recon(root: PacketRoot, raw: bytes, source_roots: Sequence[str] = ()) -> Validation:
    """Validate the recon-layout packet at ``root`` whose ``manifest.json`` bytes are ``raw``.

    ``file`` and ``repository`` sources are reopened only inside
    ``source_roots``. Reads each file once; writes nothing.
    """
    return _ReconCheck(root, raw, source_roots).run()
