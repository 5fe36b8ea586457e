"""Writing packets in the recon tool's layout, for conformance tests and benchmarks.

Assay itself never writes this layout into a packet; this module exists so
the reading side can be checked, case by case, against what the recon tool's
own tests assert. :func:`recon_packet` writes the packet the recon tool's
test fixture describes, in either manifest version: one source (a local
file, a repository, a URL, command output or a connected resource) whose
first line is the evidence ``alpha evidence``, a gather dossier, a
two-claim ledger (``claim-1`` supported, or verified after review;
``claim-2`` contested with an unresolved challenge), and for standard and
thorough packets the prior ledger, one brief per review mode, one review
result per assurance pass and the one reconciliation, plus a dossier per
map and gather pass and a material gap per pass that did not complete.
``claims=N`` writes N evidence lines and N claims instead, for benchmarks.

:class:`ReconPacket` edits such a packet the way the recon tool's tests do
(replace an artifact and re-list its digest, persist the ledger, approve the
envelope again), and :meth:`ReconPacket.reconcile` and
:meth:`ReconPacket.brief` produce a reconciled ledger and a review brief with
the recon tool's own semantics. Nothing here validates: the boundary judges
what was written. A test module, not part of the package (assay never writes
this layout); imports assay's packet modules.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

from assay.canonical import fingerprint
from assay.packet.layout import file_digest
from assay.packet.model import approval_fingerprint
from assay.packet.recon.contract import check_artifact

__all__ = ["APPROVED_AT", "ReconPacket", "recon_packet"]

RUN = "run-render"
SEEN = "2026-08-31T00:00:00.000Z"
APPROVED_AT = "2026-08-31T00:00:45.000Z"
BRIEFED = "2026-08-31T00:03:00.000Z"
SOURCE_TEXT = "alpha evidence\nbeta context\n"
_TARGET = {"provider": "fixture-provider", "route": "fake", "role": "recon-worker",
           "model": "fixture-model", "effort": "high", "reasoningMode": "fixture-reasoning",
           "serviceTier": "fixture"}
_PASSES = {
    "quick": ("map", "gather", "compile"),
    "standard": ("map", "gather", "compile", "semantic-verification", "adversarial", "coverage",
                 "reconciliation"),
}
# Review kind -> (result id, the brief it answers, the disposition that affirms).
_REVIEWS = {
    "semantic": ("review-semantic", "verify", "affirmed"),
    "adversarial": ("review-adversarial", "adversary", "unchallenged"),
    "coverage": ("review-coverage", "coverage", "covered"),
    "redundant-verification": ("review-redundant-verification", "redundant-verify", "affirmed"),
    "contradiction-resolution": ("review-contradiction-resolution", "contradiction-resolution",
                                 "unresolved"),
}
# The reconciler's own transition table (narrower than the ledger's).
_RECONCILABLE = frozenset({
    ("provisional", "verified"), ("provisional", "contested"), ("provisional", "unresolved"),
    ("provisional", "unsupported"), ("supported", "verified"), ("supported", "contested"),
    ("supported", "unresolved"), ("supported", "unsupported"), ("verified", "contested"),
    ("verified", "unresolved"), ("verified", "unsupported"), ("contested", "verified"),
    ("contested", "unresolved"), ("contested", "unsupported"), ("unresolved", "verified"),
    ("unresolved", "contested"), ("unresolved", "unsupported"),
})
_CORE = {"semantic": "affirmed", "adversarial": "unchallenged", "coverage": "covered"}
_ALLOWED = {"semantic": ("affirmed", "rejected", "uncertain"),
            "adversarial": ("unchallenged", "challenged"), "coverage": ("covered", "gap")}


def _json(value: Any) -> bytes:
    """How the recon tool writes a document: two-space indented JSON plus a newline."""
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _passes(profile: str, contradiction: bool) -> tuple[str, ...]:
    if profile == "thorough":
        return ("map", "gather", "redundant-gather", "compile", "semantic-verification",
                "adversarial", "coverage", "redundant-verification",
                *(("contradiction-resolution",) if contradiction else ()), "reconciliation")
    return _PASSES[profile]


def _write_root(mode: str) -> str:
    if mode in ("map", "redundant-gather"):
        return f"raw/dossiers/pass-{mode}.json"
    if mode == "gather":
        return "raw/dossiers"
    if mode == "compile":
        return "claims.json"
    if mode == "semantic-verification":
        return "reviews/semantic.json"
    return f"reviews/{mode}.json"


def _lane(mode: str) -> str:
    return "lane-semantic" if mode == "semantic-verification" else f"lane-{mode}"


class ReconPacket:
    """A recon-layout packet on disk and the documents it was written from."""

    def __init__(self, root: Path, source_root: Path, version: int) -> None:
        self.root = root
        self.source_root = source_root
        self.version = version
        self.manifest: dict[str, Any] = {}
        self.ledger: dict[str, Any] = {}

    # -- files ---------------------------------------------------------------
    def write(self, path: str, value: Any) -> dict[str, str]:
        """Write ``value`` at packet path ``path``; return its ``{path, digest}``."""
        data = value if isinstance(value, bytes) else _json(value)
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        return {"path": path, "digest": file_digest(data)}

    def read(self, path: str) -> Any:
        return json.loads((self.root / path).read_bytes())

    def replace(self, path: str, value: Any) -> dict[str, str]:
        """Rewrite a listed artifact and re-list its digest (the manifest is written too)."""
        ref = self.write(path, value)
        for listed in self.manifest["artifacts"]:
            if listed["path"] == path:
                listed["digest"] = ref["digest"]
        self.write("manifest.json", self.manifest)
        return ref

    def persist(self) -> None:
        """Write the ledger and the manifest, the ledger re-listed with its new digest."""
        ref = self.write("claims.json", self.ledger)
        self.manifest["artifacts"][0] = ref
        self.write("manifest.json", self.manifest)

    def listed(self, path: str) -> dict[str, str]:
        return next(dict(a) for a in self.manifest["artifacts"] if a["path"] == path)

    # -- envelope --------------------------------------------------------------
    def approve(self, execution: dict[str, Any] | None = None) -> dict[str, Any]:
        """Approve the (changed) execution envelope again, as the recon tool records it."""
        envelope = {k: v for k, v in (execution or self.manifest["execution"]).items()
                    if k != "approval"}
        approval: dict[str, Any] = {"type": "explicit-user-approval", "approvedAt": APPROVED_AT}
        if self.version == 1:
            approval["fingerprint"] = approval_fingerprint(envelope)
        envelope["approval"] = approval
        self.manifest["execution"] = envelope
        return envelope

    def execution(self, modes: tuple[str, ...], concurrency: int) -> dict[str, Any]:
        waves = []
        for mode in modes:
            wave: dict[str, Any] = {"waveId": f"wave-{mode}", "mode": mode,
                                    "taskClass": "intelligent-recon"}
            if self.version == 2:
                wave["classFloor"] = "mechanical-recon"
                wave["selectionReason"] = "A bounded contract-validation assignment."
            wave["lanes"] = [{"laneId": _lane(mode), "scope": f"packet/{mode}",
                              "writeRoot": _write_root(mode)}]
            wave["conditional"] = False
            waves.append(wave)
        common = {"authority": "contract-enforced", "maxConcurrency": concurrency,
                  "deadlineSeconds": 60, "retryLimit": 0, "waves": waves}
        if self.version == 1:
            return self.approve({**_TARGET, **common})
        return self.approve({"target": dict(_TARGET), **common, "conditions": []})

    # -- review briefs -----------------------------------------------------------
    def brief(self, brief_id: str, mode: str, ledger: dict[str, Any],
              claim_ids: list[str] | None = None, *,
              excluded: list[str] | None = None) -> dict[str, Any]:
        """The recon tool's brief of ``mode`` over ``ledger`` (the named claims, or all).

        ``excluded`` overrides the scope exclusions the request names.
        """
        chosen = [c for c in ledger["claims"] if claim_ids is None or c["id"] in claim_ids]
        request = self.manifest["request"]
        brief: dict[str, Any] = {"kind": "recon.review-brief", "schemaVersion": 1, "id": brief_id,
                                 "runId": RUN, "mode": mode, "createdAt": BRIEFED,
                                 "excludedInputs": ["prior_reasoning"]}
        if mode == "verify":
            records = {e["id"]: e for e in ledger["evidence"]}
            cited: set[str] = set()
            shown = []
            for claim in chosen:
                links = []
                for link in claim["evidence"]:
                    record = records[link["evidenceId"]]
                    cited.add(record["sourceId"])
                    links.append({"id": record["id"], "sourceId": record["sourceId"],
                                  "displayExcerpt": record["displayExcerpt"],
                                  "locator": record["locator"]})
                shown.append({"id": claim["id"], "statement": claim["statement"],
                              "evidence": links})
            brief["claims"] = shown
            brief["sources"] = [s for s in self.manifest["sources"] if s["id"] in cited]
            return brief
        brief["scope"] = {"included": list(request["includedScope"]),
                          "excluded": list(request["excludedScope"] if excluded is None
                                           else excluded)}
        brief["questions"] = list(request["questions"])
        pairs = [{"id": c["id"], "statement": c["statement"]} for c in chosen]
        brief["provisionalStatements" if mode == "adversary" else "claims"] = pairs
        return brief

    # -- reconciliation ------------------------------------------------------------
    def reconcile(self, prior: dict[str, Any], results: list[dict[str, Any]],
                  prior_ref: dict[str, str]) -> tuple[dict[str, Any], dict[str, Any]]:
        """The next ledger and its reconciliation, as the recon tool's reconciler derives them.

        Raises ValueError where that reconciler refuses its input: a
        schema-invalid, duplicate or missing core review, duplicate or
        conflicting or unassociated new evidence, an invented link, or an
        association without new evidence or a disposition.
        """
        for review in results:
            bare = {k: v for k, v in review.items() if k != "artifactReference"}
            if check_artifact(bare):
                raise ValueError(f"reconciliation rejects schema-invalid review {review.get('id')}")
        kinds = [r["reviewKind"] for r in results]
        if len(set(kinds)) != len(kinds) or "reconciliation" in kinds:
            raise ValueError("reconciliation rejects duplicate, nested or shadow review results")
        by_kind = {r["reviewKind"]: r for r in results}
        for kind, allowed in _ALLOWED.items():
            core = by_kind.get(kind)
            if core is None or core["status"] != "complete":
                raise ValueError(f"reconciliation requires a complete {kind} result")
            if any(d["disposition"] not in allowed for d in core["dispositions"]):
                raise ValueError(f"reconciliation received an invalid {kind} disposition")
        ledger = copy.deepcopy(prior)
        ledger["revision"] = prior["revision"] + 1
        refs = [r.get("artifactReference") or r["permittedInputs"][0] for r in results]
        ledger["inputArtifacts"] = [*prior["inputArtifacts"], prior_ref, *refs]
        self._links(ledger)
        self._incorporate(ledger, results)
        transitions = [t for claim in ledger["claims"]
                       if (t := self._settle(claim, results)) is not None]
        ledger["transitions"] = transitions
        findings = by_kind["coverage"]["coverageFindings"]
        reconciliation = {
            "kind": "recon.review-result", "schemaVersion": 1, "id": "review-reconciliation",
            "runId": RUN, "reviewKind": "reconciliation", "reviewerLane": "lane-reconciliation",
            "status": "complete", "inputLedger": {**prior_ref, "revision": prior["revision"]},
            "outputRevision": ledger["revision"],
            "incorporatedReviewIds": [r["id"] for r in results],
            "transitions": copy.deepcopy(transitions), "additions": [], "removals": [],
            "removalDispositions": [],
            "coverageDispositions": [{"findingId": f["id"], "gapId": f["gapId"],
                                      "disposition": "accepted-gap"} for f in findings],
            "permittedInputs": [prior_ref, *refs], "excludedInputs": [], "dispositions": [],
            "newEvidence": [], "evidenceAssociations": [], "coverageFindings": [],
            "unresolvedIssues": [],
        }
        return ledger, reconciliation

    @staticmethod
    def _links(ledger: dict[str, Any]) -> None:
        known: set[str] = set()
        for record in ledger["evidence"]:
            if record["id"] in known:
                raise ValueError(f"reconciliation rejects duplicate evidence {record['id']}")
            known.add(record["id"])
        for claim in ledger["claims"]:
            seen: set[str] = set()
            for link in claim["evidence"]:
                if link["evidenceId"] not in known:
                    raise ValueError(f"reconciliation rejects invented evidence link "
                                     f"{link['evidenceId']} on {claim['id']}")
                key = fingerprint(link)
                if key in seen:
                    raise ValueError(f"reconciliation rejects duplicate evidence link on "
                                     f"{claim['id']}")
                seen.add(key)

    @staticmethod
    def _incorporate(ledger: dict[str, Any], results: list[dict[str, Any]]) -> None:
        claims = {c["id"]: c for c in ledger["claims"]}
        prior = {e["id"]: fingerprint(e) for e in ledger["evidence"]}
        taken: dict[str, tuple[str, dict[str, Any], list[dict[str, Any]]]] = {}
        for review in results:
            supplied = {e["id"] for e in review["newEvidence"]}
            disposed = {d["claimId"] for d in review["dispositions"]}
            keys: set[str] = set()
            for link in review.get("evidenceAssociations", []):
                key = fingerprint(link)
                if key in keys:
                    raise ValueError(f"reconciliation rejects duplicate evidence association "
                                     f"{link['evidenceId']}")
                keys.add(key)
                if link["evidenceId"] not in supplied:
                    raise ValueError(f"reconciliation rejects association for "
                                     f"{link['evidenceId']} without matching new evidence")
                if link["claimId"] not in claims:
                    raise ValueError(f"reconciliation rejects association to unknown claim "
                                     f"{link['claimId']}")
                if link["claimId"] not in disposed:
                    raise ValueError(f"reconciliation rejects association to claim "
                                     f"{link['claimId']} without a review disposition")
            for record in review["newEvidence"]:
                digest = fingerprint(record)
                existing = prior.get(record["id"]) or (taken[record["id"]][0]
                                                       if record["id"] in taken else None)
                if existing is not None:
                    what = "duplicate" if existing == digest else "conflicting"
                    raise ValueError(f"reconciliation rejects {what} evidence {record['id']}")
                links = [a for a in review.get("evidenceAssociations", [])
                         if a["evidenceId"] == record["id"]]
                if not links:
                    raise ValueError(f"reconciliation rejects unincorporated evidence "
                                     f"{record['id']} without an affected claim")
                taken[record["id"]] = (digest, copy.deepcopy(record), copy.deepcopy(links))
        for _digest, record, links in taken.values():
            ledger["evidence"].append(record)
            for link in links:
                claims[link["claimId"]]["evidence"].append(
                    {"evidenceId": link["evidenceId"], "relation": link["relation"]})

    @staticmethod
    def _settle(claim: dict[str, Any], results: list[dict[str, Any]]) -> dict[str, str] | None:
        """Move one claim by its reviews' dispositions; return the transition, if any."""
        cid = claim["id"]

        def verdicts(review: dict[str, Any]) -> list[str]:
            return [d["disposition"] for d in review["dispositions"] if d["claimId"] == cid]

        reviewing = [r for r in results if verdicts(r)]
        said = {(r["reviewKind"], v) for r in reviewing for v in verdicts(r)}
        material = any(f["material"] is True and cid in f["claimIds"]
                       for r in results if r["reviewKind"] == "coverage"
                       for f in r["coverageFindings"])
        core = all((kind, wanted) in said for kind, wanted in _CORE.items())
        claim["reviewIds"] = list(dict.fromkeys([*claim["reviewIds"],
                                                 *(r["id"] for r in reviewing)]))
        status = claim["status"]
        if any(v == "rejected" for _k, v in said):
            target: str | None = "unsupported"
        elif ("adversarial", "challenged") in said:
            target = "contested"
        elif any(v == "uncertain" for _k, v in said) or any(
                not any(k == kind for k, _v in said) for kind in _CORE):
            target = "unresolved"
        elif ("coverage", "gap") in said and not core and (
                status in ("verified", "provisional") or material):
            target = "contested" if material else "unresolved"
        elif core:
            target = "contested" if material else "verified"
        else:
            target = None
        if target is None or (status, target) not in _RECONCILABLE:
            return None
        claim["status"] = target
        return {"claimId": cid, "from": status, "to": target} if status != target else None


def _source(packet: ReconPacket, kind: str, text: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The packet's one source (holding ``text``) and the locator of its first line."""
    base = {"id": "source-1", "available": True, "authority": "contract-enforced",
            "observedAt": SEEN, "validationState": "pinned"}
    path = str(packet.source_root / "source.txt")
    if kind == "repository":
        source = {**base, "kind": "repository", "root": str(packet.source_root),
                  "revision": "abc123", "dirty": False,
                  "contentHashes": {"source.txt": file_digest(text.encode())}}
        return source, {"kind": "repository", "path": "source.txt", "revision": "abc123",
                        "lineStart": 1, "lineEnd": 1}
    if kind == "url":
        ref = packet.write("raw/captures/url.txt", b"alpha evidence on a page\n")
        return ({**base, "kind": "url", "authority": "provider-enforced",
                 "url": "https://example.test/evidence", "capturePath": ref["path"],
                 "captureDigest": ref["digest"]},
                {"kind": "url", "url": "https://example.test/evidence", "retrievedAt": SEEN})
    if kind == "command-output":
        ref = packet.write("raw/captures/command.txt", text.encode())
        argv = ["example", "--read-only"]
        return ({**base, "kind": "command-output", "argv": argv, "cwd": str(packet.source_root),
                 "exitStatus": 0, "outputPath": ref["path"], "outputDigest": ref["digest"],
                 "environmentNames": ["PATH"]},
                {"kind": "command-output", "artifactPath": ref["path"], "lineStart": 1,
                 "lineEnd": 1, "commandDigest": fingerprint(argv)})
    if kind == "connected-resource":
        ref = packet.write("raw/captures/connected.json",
                           _json({"finding": "alpha evidence", "other": "beta context"}))
        return ({**base, "kind": "connected-resource", "authority": "provider-enforced",
                 "system": "fixture", "resourceId": "resource-1", "resourceVersion": "v1",
                 "capturePath": ref["path"], "captureDigest": ref["digest"]},
                {"kind": "connected-resource", "system": "fixture", "resourceId": "resource-1",
                 "resourceVersion": "v1", "fieldOrSection": "finding", "retrievedAt": SEEN})
    return ({**base, "kind": "file", "path": path, "contentHash": file_digest(text.encode())},
            {"kind": "file", "path": path, "lineStart": 1, "lineEnd": 1})


def _dossier(dossier_id: str, wave: str, lane: str, mode: str,
             outcome: str = "complete") -> dict[str, Any]:
    return {"kind": "recon.raw-dossier", "schemaVersion": 1, "id": dossier_id, "runId": RUN,
            "waveId": wave, "laneId": lane, "mode": mode, "outcome": outcome,
            "allowedInputs": ["source-1"], "excludedInputs": [], "findings": [],
            "uncertainty": [], "contradictions": [], "gaps": []}


def _claims(count: int | None, locator: dict[str, Any], verified: bool,
            dossier: dict[str, str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Evidence records and claims: the fixture's two, or ``count`` one-line facts."""
    status = "verified" if verified else "supported"
    if count is None:
        evidence = [{"id": "evidence-1", "sourceId": "source-1", "locator": locator,
                     "displayExcerpt": "alpha evidence", "observedAt": SEEN,
                     "contentHash": fingerprint("alpha evidence"),
                     "locatorValidation": {"status": "exact", "validatedAt": SEEN},
                     "provenance": dict(dossier)}]
        claims = [
            {"id": "claim-1", "statement": "The source contains alpha evidence.",
             "status": status, "evidence": [{"evidenceId": "evidence-1", "relation": "supports"}],
             "qualifications": ["Scoped to source-1."], "reviewIds": [],
             "derivedFrom": [dict(dossier)], "challenges": []},
            {"id": "claim-2", "statement": "A secondary interpretation remains open.",
             "status": "contested",
             "evidence": [{"evidenceId": "evidence-1", "relation": "qualifies"}],
             "qualifications": ["Needs another source."], "reviewIds": ["review-adversarial"],
             "derivedFrom": [dict(dossier)],
             "challenges": [{"id": "challenge-1", "material": True, "status": "unresolved"}]},
        ]
        return evidence, claims
    evidence, claims = [], []
    for n in range(count):
        text = f"fact {n} holds"
        evidence.append({"id": f"evidence-{n}", "sourceId": "source-1",
                         "locator": {**locator, "lineStart": n + 1, "lineEnd": n + 1},
                         "displayExcerpt": text, "observedAt": SEEN,
                         "contentHash": fingerprint(text),
                         "locatorValidation": {"status": "exact", "validatedAt": SEEN},
                         "provenance": dict(dossier)})
        claims.append({"id": f"claim-{n}", "statement": f"Fact {n} holds.", "status": status,
                       "evidence": [{"evidenceId": f"evidence-{n}", "relation": "supports"}],
                       "qualifications": [], "reviewIds": [], "derivedFrom": [dict(dossier)],
                       "challenges": []})
    return evidence, claims


def recon_packet(directory: str | os.PathLike[str], *, version: int = 2,
                 profile: str = "standard", status: str = "complete",
                 requested: str | None = None, achieved: str | None = None,
                 source_kind: str = "file", failed_pass: str | None = None,
                 contradiction: bool | None = None, claims: int | None = None,
                 source_root: str | os.PathLike[str] | None = None) -> ReconPacket:
    """Write the recon tool's fixture packet into ``directory``; return it for editing.

    ``requested`` and ``achieved`` default to ``profile``; a pass of the
    requested profile beyond the achieved one gets a material
    ``PASS_OMITTED`` gap (``PASS_FAILED`` for ``failed_pass``). Local sources
    (``file``, ``repository``) are written under ``source_root`` (default: a
    ``sources`` directory beside the packet), with their real paths.
    """
    requested = requested or profile
    achieved = achieved or profile
    if contradiction is None:
        # The version-1 fixture always resolved contradictions in a thorough run.
        contradiction = version == 1 and achieved == "thorough"
    root = Path(os.path.realpath(directory))
    root.mkdir(parents=True, exist_ok=True)
    sources = Path(source_root) if source_root is not None else root.parent / "sources"
    sources.mkdir(parents=True, exist_ok=True)
    sources = Path(os.path.realpath(sources))
    packet = ReconPacket(root, sources, version)
    text = SOURCE_TEXT if claims is None else "".join(f"fact {n} holds\n" for n in range(claims))
    (sources / "source.txt").write_text(text, encoding="utf-8")
    packet.manifest = {"request": {"objective": "Find fixture evidence.",
                                   "questions": ["What evidence exists?"],
                                   "includedScope": ["source-1"],
                                   "excludedScope": ["unrelated sources"],
                                   "contextReferences": [], "outputPath": str(root)}}
    source, locator = _source(packet, source_kind, text)
    packet.manifest["sources"] = [source]
    dossier = packet.write("raw/dossiers/gather.json",
                           _dossier("dossier-input", "wave-gather", "lane-gather", "gather"))
    evidence, claim_list = _claims(claims, locator, achieved != "quick", dossier)
    ledger: dict[str, Any] = {
        "kind": "recon.claim-ledger", "schemaVersion": 1, "runId": RUN,
        "revision": 1 if achieved == "quick" else 2, "inputArtifacts": [dossier],
        "synthesis": {"answer": "The source contains alpha evidence.",
                      "keyClaimIds": [claim_list[0]["id"]],
                      "caveats": ["Evidence is scoped to the pinned fixture."],
                      "unresolvedQuestionIds": ["question-1"]},
        "evidence": evidence, "claims": claim_list,
        "unresolvedQuestions": [{"id": "question-1",
                                 "question": "Does another source confirm the result?"}],
        "transitions": [{"claimId": c["id"], "from": "provisional", "to": c["status"]}
                        for c in claim_list],
    }
    reviews: list[dict[str, str]] = []
    redundant: dict[str, str] | None = None
    if achieved == "thorough":
        redundant = packet.write("raw/dossiers/pass-redundant-gather.json", _dossier(
            "dossier-redundant-gather", "wave-redundant-gather", "lane-redundant-gather",
            "gather"))
        ledger["inputArtifacts"].append(redundant)
    if achieved != "quick":
        reviews = _reviewed(packet, ledger, achieved, contradiction)
    packet.ledger = ledger
    claims_ref = packet.write("claims.json", ledger)
    modes = _passes(requested, contradiction)
    done = set(_passes(achieved, contradiction)) if achieved in ("quick", "standard",
                                                                  "thorough") else set()
    gaps: list[dict[str, Any]] = []
    passes: list[dict[str, str]] = []
    for mode in modes:
        if mode not in done:
            word = "failed" if mode == failed_pass else "omitted"
            gaps.append({"id": f"gap-pass-{len(gaps) + 1}",
                         "code": "PASS_FAILED" if word == "failed" else "PASS_OMITTED",
                         "message": f"{mode} was {word}; no complete result was published.",
                         "material": True, "sourceIds": [], "claimIds": [],
                         "coverageFindingIds": []})
        elif mode == "redundant-gather" and redundant is not None:
            passes.append(redundant)
        elif mode in ("map", "gather"):
            passes.append(packet.write(f"raw/dossiers/pass-{mode}.json", _dossier(
                f"dossier-{mode}", f"wave-{mode}", _lane(mode), mode)))
    packet.manifest = {
        "kind": "recon.packet-manifest", "schemaVersion": version,
        "run": {"id": RUN, "topic": "render fixture", "status": status,
                "requestedProfile": requested, "achievedProfile": achieved,
                "createdAt": SEEN, "updatedAt": "2026-08-31T00:02:00.000Z"},
        "request": packet.manifest["request"], "sources": [source],
        "execution": {}, "artifacts": [claims_ref, dossier, *reviews, *passes],
        "gaps": [{"id": "gap-1", "code": "OPTIONAL_SOURCE_UNAVAILABLE",
                  "message": "An optional comparison source was unavailable.",
                  "material": False, "sourceIds": [], "claimIds": [],
                  "coverageFindingIds": []}, *gaps],
    }
    packet.execution(modes, 4 if requested == "thorough" else 2)
    if version == 2:
        packet.manifest["conditionOutcomes"] = []
    packet.write("manifest.json", packet.manifest)
    return packet


def _reviewed(packet: ReconPacket, ledger: dict[str, Any], achieved: str,
              contradiction: bool) -> list[dict[str, str]]:
    """Write the prior ledger, briefs, review results and the reconciliation; list them."""
    prior = copy.deepcopy(ledger)
    prior["revision"] = 1
    for claim in prior["claims"]:
        claim["status"] = "supported" if claim["status"] == "verified" else claim["status"]
        if claim["status"] != "contested":
            claim["reviewIds"] = []
    prior["transitions"] = [{"claimId": c["id"], "from": "provisional", "to": c["status"]}
                            for c in prior["claims"]]
    prior_ref = packet.write("raw/drafts/claims-v1.json", prior)
    contested = [c["id"] for c in ledger["claims"] if c["status"] == "contested"]
    main = [c["id"] for c in ledger["claims"] if c["status"] != "contested"]
    ledger["transitions"] = [t for t in ledger["transitions"] if t["claimId"] in main]
    for step in ledger["transitions"]:
        step["from"] = "supported"
    ledger["inputArtifacts"].append(prior_ref)
    listed = [prior_ref]
    kinds = ["semantic", "adversarial", "coverage"]
    if achieved == "thorough":
        kinds.append("redundant-verification")
    if contradiction:
        kinds.append("contradiction-resolution")
    briefs: dict[str, dict[str, str]] = {}
    for kind in kinds:
        result_id, brief_name, verdict = _REVIEWS[kind]
        mode = {"verify": "verify", "redundant-verify": "verify"}.get(
            brief_name, "adversary" if brief_name in ("adversary", "contradiction-resolution")
            else "coverage")
        shown = contested if kind == "contradiction-resolution" else main
        brief = packet.brief(f"brief-{brief_name}", mode, prior, shown, excluded=[])
        briefs[kind] = packet.write(f"reviews/briefs/{brief_name}.json", brief)
        listed.append(briefs[kind])
    for kind in kinds:
        result_id, _brief, verdict = _REVIEWS[kind]
        shown = contested if kind == "contradiction-resolution" else main
        result: dict[str, Any] = {
            "kind": "recon.review-result", "schemaVersion": 1, "id": result_id, "runId": RUN,
            "reviewKind": kind, "reviewerLane": f"lane-{kind}", "status": "complete",
            "brief": dict(briefs[kind]), "permittedInputs": [dict(briefs[kind])],
            "excludedInputs": ["prior_reasoning"],
            "dispositions": [{"claimId": cid, "disposition": verdict} for cid in shown],
            "newEvidence": [], "evidenceAssociations": [], "coverageFindings": [],
            "unresolvedIssues": []}
        if kind == "contradiction-resolution":
            result["contradictionDispositions"] = [{"contradictionId": "challenge-1",
                                                    "claimIds": ["claim-2"],
                                                    "disposition": "unresolved"}]
        listed.append(packet.write(f"reviews/{kind}.json", result))
    incorporated = [_REVIEWS[k][0] for k in kinds]
    for claim in ledger["claims"]:
        if claim["id"] in main:
            claim["reviewIds"] = [r for r in incorporated if r != "review-contradiction-resolution"]
        elif contradiction:
            claim["reviewIds"] = ["review-adversarial", "review-contradiction-resolution"]
    reconciliation = {
        "kind": "recon.review-result", "schemaVersion": 1, "id": "review-reconciliation",
        "runId": RUN, "reviewKind": "reconciliation", "reviewerLane": "lane-reconciliation",
        "status": "complete", "inputLedger": {**prior_ref, "revision": 1}, "outputRevision": 2,
        "incorporatedReviewIds": incorporated,
        "transitions": copy.deepcopy(ledger["transitions"]), "additions": [], "removals": [],
        "removalDispositions": [], "coverageDispositions": [],
        "permittedInputs": [dict(r) for r in listed], "excludedInputs": [], "dispositions": [],
        "newEvidence": [], "evidenceAssociations": [], "coverageFindings": [],
        "unresolvedIssues": []}
    listed.append(packet.write("reviews/reconciliation.json", reconciliation))
    return listed
