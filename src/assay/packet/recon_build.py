"""Writing packets in the recon tool's layout, for tests and benchmarks.

Assay itself never writes this layout into a packet (its steps refuse a
recon-layout packet); this module exists so the reading side can be tested
and measured on packets shaped exactly as the recon tool writes them.
:class:`ReconBuilder` writes the shapes of the recon packet contract
(manifest ``recon.packet-manifest`` version 1 with a ``run`` object and
``kind``-discriminated sources, ``recon.claim-ledger`` with
``inputArtifacts``, a structured synthesis and typed line locators,
``recon.raw-dossier``, ``recon.review-brief``, ``recon.review-result``) and
validates nothing itself: the boundary judges what it wrote. Its brief
projection is written here independently of the reader's. :func:`recon_packet`
builds a complete quick, standard or thorough packet shaped like the assay
twin :func:`assay.packet.build.example_packet` builds. Imports the base
modules and the packet modules.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from assay.canonical import fingerprint
from assay.packet.build import REVIEW_LANES, default_execution
from assay.packet.layout import PacketRoot, file_digest, json_file_bytes
from assay.packet.manifest import APPROVAL_TYPE, approval_fingerprint

__all__ = ["ReconBuilder", "recon_execution", "recon_packet"]

T0 = "2026-01-05T10:00:00.000Z"
SEEN = "2026-01-05T10:01:00.000Z"
# The recon tool's durable task classes, per wave mode.
TASK_CLASS = {
    "map": "mechanical-recon", "gather": "mechanical-recon", "redundant-gather": "mechanical-recon",
    "compile": "intelligent-recon", "semantic-verification": "hard-reasoning",
    "adversarial": "hard-reasoning", "coverage": "intelligent-recon",
    "reconciliation": "consequential", "redundant-verification": "hard-reasoning",
    "contradiction-resolution": "hard-reasoning",
}

BRIEF_MODE = {"semantic": "verify", "redundant-verification": "verify",
              "adversarial": "adversary", "contradiction-resolution": "adversary",
              "coverage": "coverage"}
# The disposition that affirms a claim, per review kind.
AFFIRM = {"semantic": "affirmed", "redundant-verification": "affirmed",
          "adversarial": "unchallenged", "coverage": "covered",
          "contradiction-resolution": "resolved"}


RECONCILIATION = "reviews/reconciliation.json"


def recon_execution(profile: str) -> dict[str, Any]:
    """The twin's execution envelope, with the recon tool's task classes.

    The reconciler's write root is the file the recon layout names,
    ``reviews/reconciliation.json``: a write root may be the artifact itself.
    """
    execution = default_execution(profile)
    for wave in execution["waves"]:
        wave["taskClass"] = TASK_CLASS[wave["mode"]]
        if wave["mode"] == "reconciliation":
            wave["lanes"][0]["writeRoot"] = RECONCILIATION
    return execution


class ReconBuilder:
    """Write a recon-layout packet piece by piece; canonical files on :meth:`finish`."""

    def __init__(self, directory: str | os.PathLike[str], *, profile: str = "quick",
                 run_id: str = "run-recon") -> None:
        os.makedirs(directory, exist_ok=True)
        self.root = PacketRoot(directory)
        self.root.make_layout()
        self.directory = Path(directory)
        self.captures: dict[str, bytes] = {}
        self.dossiers: list[dict[str, str]] = []
        self.reviews: list[str] = []
        self.prior = b""
        self.prior_doc: dict[str, Any] = {}
        self.prior_ref: dict[str, str] = {}
        self.manifest: dict[str, Any] = {
            "kind": "recon.packet-manifest", "schemaVersion": 1,
            "run": {"id": run_id, "topic": "storage", "status": "running",
                    "requestedProfile": profile, "achievedProfile": None,
                    "createdAt": T0, "updatedAt": T0},
            "request": {"objective": "Which storage engine suits the ledger?",
                        "questions": ["Is SQLite WAL safe for concurrent readers?"],
                        "includedScope": [], "excludedScope": [], "contextReferences": [],
                        "outputPath": os.path.realpath(directory)},
            "sources": [], "execution": None, "artifacts": [], "gaps": [],
        }
        self.ledger: dict[str, Any] = {
            "kind": "recon.claim-ledger", "schemaVersion": 1, "runId": run_id, "revision": 1,
            "inputArtifacts": [],
            "synthesis": {"answer": "SQLite in WAL mode serves the ledger.", "keyClaimIds": [],
                          "caveats": [], "unresolvedQuestionIds": []},
            "evidence": [], "claims": [], "unresolvedQuestions": [], "transitions": [],
        }

    @property
    def run_id(self) -> str:
        return str(self.manifest["run"]["id"])

    def write(self, path: str, doc: dict[str, Any] | bytes, *, register: bool = True
              ) -> dict[str, str]:
        data = doc if isinstance(doc, bytes) else json_file_bytes(doc)
        self.root.write(path, data)
        ref = {"path": path, "digest": file_digest(data)}
        if register:
            self.manifest["artifacts"] = [a for a in self.manifest["artifacts"]
                                          if a["path"] != path] + [ref]
        return ref

    # -- sources -------------------------------------------------------------
    def _source(self, kind: str, source_id: str, **fields: Any) -> dict[str, Any]:
        source = {"kind": kind, "id": source_id, "available": True, "authority": "primary",
                  "observedAt": SEEN, "validationState": "pinned", **fields}
        self.manifest["sources"].append(source)
        return source

    def command_source(self, source_id: str, text: str) -> dict[str, Any]:
        """A command's captured output inside the packet."""
        data = text.encode("utf-8")
        path = f"raw/sources/{source_id}.txt"
        self.root.write(path, data)
        self.captures[source_id] = data
        return self._source("command-output", source_id, argv=["cat", f"{source_id}.txt"],
                            cwd="/srv/notes", exitStatus=0, outputPath=path,
                            outputDigest=file_digest(data), environmentNames=["LANG"])

    def url_source(self, source_id: str, url: str, text: str) -> dict[str, Any]:
        """A web page captured inside the packet."""
        data = text.encode("utf-8")
        path = f"raw/sources/{source_id}.html"
        self.root.write(path, data)
        self.captures[source_id] = data
        return self._source("url", source_id, url=url, capturePath=path,
                            captureDigest=file_digest(data))

    def file_source(self, source_id: str, path: str, text: str) -> dict[str, Any]:
        """A local file outside the packet, identified by its canonical path and digest."""
        return self._source("file", source_id, path=path,
                            contentHash=file_digest(text.encode("utf-8")))

    # -- ledger ----------------------------------------------------------------
    def evidence(self, evidence_id: str, source_id: str, line_start: int, line_end: int, *,
                 excerpt: str | None = None, status: str = "exact") -> dict[str, Any]:
        """Evidence located by lines of its source (the excerpt is those lines unless given)."""
        source = next(s for s in self.manifest["sources"] if s["id"] == source_id)
        if excerpt is None:
            lines = self.captures[source_id].decode("utf-8").split("\n")
            excerpt = "\n".join(lines[line_start - 1:line_end])
        kind = source["kind"]
        locator: dict[str, Any] = {"kind": kind}
        if kind == "command-output":
            locator.update(artifactPath=source["outputPath"], lineStart=line_start,
                           lineEnd=line_end, commandDigest=fingerprint(source["argv"]))
        elif kind == "url":
            locator.update(url=source["url"], retrievedAt=source["observedAt"])
        else:
            locator.update(path=source["path"], lineStart=line_start, lineEnd=line_end)
        record = {"id": evidence_id, "sourceId": source_id, "locator": locator,
                  "displayExcerpt": excerpt, "observedAt": source["observedAt"],
                  "locatorValidation": {"status": status, "validatedAt": SEEN},
                  "provenance": {"path": "", "digest": ""}}
        self.ledger["evidence"].append(record)
        return record

    def claim(self, claim_id: str, statement: str, links: list[tuple[str, str]], *,
              state: str = "supported") -> dict[str, Any]:
        claim = {"id": claim_id, "statement": statement, "status": state,
                 "evidence": [{"evidenceId": e, "relation": r} for e, r in links],
                 "qualifications": [], "reviewIds": [], "derivedFrom": [], "challenges": []}
        self.ledger["claims"].append(claim)
        path = {"provisional": [], "supported": ["supported"], "verified": ["supported", "verified"],
                "contested": ["contested"], "unresolved": ["unresolved"],
                "unsupported": ["unsupported"]}[state]
        previous = "provisional"
        for step in path:
            self.ledger["transitions"].append({"claimId": claim_id, "from": previous, "to": step})
            previous = step
        return claim

    # -- execution and worker output -------------------------------------------
    def approve(self, execution: dict[str, Any] | None = None) -> dict[str, Any]:
        profile = self.manifest["run"]["requestedProfile"]
        envelope = dict(execution or recon_execution(profile))
        envelope.pop("approval", None)
        envelope["approval"] = {"type": APPROVAL_TYPE, "approvedAt": "2026-01-05T10:05:00.000Z",
                                "fingerprint": approval_fingerprint(envelope)}
        self.manifest["execution"] = envelope
        return envelope

    def lane_root(self, lane_id: str) -> str:
        return str(next(lane["writeRoot"] for wave in self.manifest["execution"]["waves"]
                        for lane in wave["lanes"] if lane["laneId"] == lane_id))

    def dossier(self, lane_id: str, mode: str, wave_id: str, *, outcome: str = "complete",
                path: str | None = None, findings: list[Any] | None = None) -> dict[str, str]:
        doc = {
            "kind": "recon.raw-dossier", "schemaVersion": 1, "id": f"dossier-{lane_id}",
            "runId": self.run_id, "waveId": wave_id, "laneId": lane_id, "mode": mode,
            "outcome": outcome, "allowedInputs": ["request"], "excludedInputs": [],
            "findings": findings if findings is not None else [
                {"statement": f"{mode} finding", "sourceIds": ["src-0"]}],
            "uncertainty": [], "contradictions": [], "gaps": [],
        }
        ref = self.write(path or f"{self.lane_root(lane_id)}/dossier.json", doc)
        self.dossiers.append(ref)
        return ref

    # -- reviews ------------------------------------------------------------------
    def snapshot(self) -> dict[str, str]:
        """Freeze the current ledger as the prior ledger the reconciliation binds."""
        self.prior = json_file_bytes(self.ledger)
        self.prior_doc = json.loads(self.prior)
        self.prior_ref = self.write(f"raw/drafts/claims-r{self.ledger['revision']}.json",
                                    self.prior)
        return self.prior_ref

    def brief(self, kind: str, *, change: Any = None) -> dict[str, str]:
        """The recon tool's brief for ``kind``: every claim of the prior ledger, blind per mode."""
        mode = BRIEF_MODE[kind]
        ledger, request = self.prior_doc, self.manifest["request"]
        doc: dict[str, Any] = {"kind": "recon.review-brief", "schemaVersion": 1,
                               "id": f"brief-{kind}", "runId": self.run_id, "mode": mode,
                               "createdAt": "2026-01-05T11:00:00.000Z",
                               "excludedInputs": ["dossiers", "synthesis", "prior reviews"]}
        if mode == "verify":
            records = {e["id"]: e for e in ledger["evidence"]}
            claims, cited = [], []
            for claim in ledger["claims"]:
                shown = []
                for link in claim["evidence"]:
                    record = records[link["evidenceId"]]
                    cited.append(record["sourceId"])
                    shown.append({key: record[key]
                                  for key in ("id", "sourceId", "displayExcerpt", "locator")})
                claims.append({"id": claim["id"], "statement": claim["statement"],
                               "evidence": shown})
            doc["claims"] = claims
            doc["sources"] = [s for s in self.manifest["sources"] if s["id"] in cited]
        else:
            doc["scope"] = {"included": request["includedScope"],
                            "excluded": request["excludedScope"]}
            doc["questions"] = list(request["questions"])
            pairs = [{"id": c["id"], "statement": c["statement"]} for c in ledger["claims"]]
            doc["provisionalStatements" if mode == "adversary" else "claims"] = pairs
        if change is not None:
            change(doc)
        return self.write(f"reviews/briefs/brief-{kind}.json", doc)

    def result(self, kind: str, brief: dict[str, str], *, disposition: str | None = None,
               lane: str | None = None, **fields: Any) -> dict[str, str]:
        """A complete review result of ``kind`` disposing of every prior claim."""
        lane = lane or REVIEW_LANES[kind]
        verdict = disposition or AFFIRM[kind]
        doc: dict[str, Any] = {
            "kind": "recon.review-result", "schemaVersion": 1, "id": f"review-{kind}",
            "runId": self.run_id, "reviewKind": kind, "reviewerLane": lane,
            "status": "complete", "permittedInputs": [dict(brief)],
            "excludedInputs": ["dossiers", "other reviews"],
            "dispositions": [{"claimId": c["id"], "disposition": verdict}
                             for c in self.prior_doc["claims"]],
            "newEvidence": [], "evidenceAssociations": [], "coverageFindings": [],
            "unresolvedIssues": [], "brief": dict(brief),
        }
        if kind == "contradiction-resolution":
            doc["contradictionDispositions"] = [{"contradictionId": "ch-0",
                                                 "claimIds": ["claim-0"],
                                                 "disposition": "resolved"}]
        doc.update(fields)
        ref = self.write(f"{self.lane_root(lane)}/result.json", doc)
        self.reviews.append(doc["id"])
        return ref

    def reconcile(self, *, to: str = "verified", **fields: Any) -> dict[str, str]:
        """Move every claim to ``to`` as the next revision; record the one reconciliation."""
        transitions = [{"claimId": c["id"], "from": c["status"], "to": to}
                       for c in self.ledger["claims"]]
        for claim in self.ledger["claims"]:
            claim["status"] = to
            claim["reviewIds"] = list(self.reviews)
        # A recon ledger of a later revision records that revision's transitions.
        self.ledger["transitions"] = [dict(t) for t in transitions]
        self.ledger["revision"] = self.prior_doc["revision"] + 1
        doc: dict[str, Any] = {
            "kind": "recon.review-result", "schemaVersion": 1, "id": "reconciliation",
            "runId": self.run_id, "reviewKind": "reconciliation", "reviewerLane": "reconciler-1",
            "status": "complete", "permittedInputs": [dict(self.prior_ref)], "excludedInputs": [],
            "dispositions": [], "newEvidence": [], "coverageFindings": [], "unresolvedIssues": [],
            "inputLedger": {**self.prior_ref, "revision": self.prior_doc["revision"]},
            "outputRevision": self.prior_doc["revision"] + 1,
            "incorporatedReviewIds": list(self.reviews), "transitions": transitions,
            "additions": [], "removals": [], "removalDispositions": [], "coverageDispositions": [],
        }
        doc.update(fields)
        return self.write(RECONCILIATION, doc)

    def compile(self) -> None:
        """Bind the dossiers as ledger inputs and as the provenance of every evidence record."""
        self.ledger["inputArtifacts"] = [dict(r) for r in self.dossiers]
        for record in self.ledger["evidence"]:
            record["provenance"] = dict(self.dossiers[-1])

    def gap(self, gap_id: str, code: str, message: str, *, material: bool,
            **fields: Any) -> dict[str, Any]:
        gap = {"id": gap_id, "code": code, "message": message, "material": material, **fields}
        self.manifest["gaps"].append(gap)
        return gap

    def finish(self, status: str = "complete", achieved: str | None = "quick") -> None:
        """Write ``claims.json``, list it with its digest, and write ``manifest.json``."""
        self.manifest["run"]["status"] = status
        self.manifest["run"]["achievedProfile"] = achieved
        self.write("claims.json", self.ledger)
        self.root.write("manifest.json", json_file_bytes(self.manifest))


def recon_packet(directory: str | os.PathLike[str], profile: str = "quick", *,
                 claims: int = 3, status: str | None = "complete") -> ReconBuilder:
    """A valid recon-layout packet: the twin of ``example_packet(dir, profile)``.

    One captured command output holds one line per evidence record; each
    claim is supported by one exact line. Quick packets end with supported
    claims; standard and thorough ones go through one brief and one
    affirming review per kind and one reconciliation to verified claims as
    ledger revision 2. With ``status=None`` nothing canonical is written,
    so a caller can change the builder first.
    """
    b = ReconBuilder(directory, profile=profile)
    lines = [f"Fact 0-{n}: observation number {n} of source 0 holds." for n in range(claims)]
    b.command_source("src-0", "\n".join(lines) + "\n")
    for n in range(claims):
        b.evidence(f"ev-{n}", "src-0", n + 1, n + 1)
        b.claim(f"claim-{n}", f"Claim number {n} is supported by its sources.",
                [(f"ev-{n}", "supports")])
    b.ledger["synthesis"]["keyClaimIds"] = ["claim-0"]
    b.approve()
    b.dossier("map-1", "map", "w-map")
    b.dossier("gather-1", "gather", "w-gather")
    if profile == "thorough":
        b.dossier("gather-2", "gather", "w-regather")
        b.ledger["claims"][0]["challenges"] = [
            {"id": "ch-0", "material": False, "status": "resolved", "note": "a narrower reading"}]
    b.compile()
    if profile != "quick":
        b.snapshot()
        kinds = ["semantic", "adversarial", "coverage"]
        if profile == "thorough":
            kinds += ["redundant-verification", "contradiction-resolution"]
        for kind in kinds:
            b.result(kind, b.brief(kind))
        b.reconcile()
    if status is not None:
        b.finish(status, achieved=profile)
    return b
