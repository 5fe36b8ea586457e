"""Assembling packets programmatically: the controller's writing side.

:class:`PacketBuilder` holds a manifest and a ledger in memory, writes
sources, dossiers, briefs and review results as hashed artifacts, and writes
the two canonical files on :meth:`PacketBuilder.finish`. It performs no
validation of its own: the validation boundary judges what it wrote (which
is what makes it useful for building invalid fixtures too).
:func:`example_packet` builds a complete quick, standard or thorough packet
of any size for the tests and the benchmarks. A test module: it is not part of
the package, and imports only assay's public packet modules.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from assay.canonical import parse
from assay.packet.assay.ledger_file import new_ledger
from assay.packet.assay.manifest import APPROVAL_TYPE, approval_fingerprint, new_manifest
from assay.packet.assay.reviews import project
from assay.packet.layout import (
    LEDGER_FILE,
    MANIFEST_FILE,
    PacketRoot,
    file_digest,
    json_file_bytes,
)

__all__ = ["PacketBuilder", "default_execution", "example_packet"]

T0 = "2026-01-05T10:00:00Z"

# (waveId, mode, taskClass, [(laneId, writeRoot)]) per profile, cumulative.
_WAVES = {
    "quick": [
        ("w-map", "map", "retrieval", [("map-1", "raw/dossiers/map-1")]),
        ("w-gather", "gather", "extraction", [("gather-1", "raw/dossiers/gather-1")]),
        ("w-compile", "compile", "synthesis", [("compile-1", "raw/drafts")]),
    ],
    "standard": [
        ("w-semantic", "semantic-verification", "judgment",
         [("semantic-1", "reviews/semantic/semantic-1")]),
        ("w-adversarial", "adversarial", "judgment",
         [("adversarial-1", "reviews/adversarial/adversarial-1")]),
        ("w-coverage", "coverage", "analysis", [("coverage-1", "reviews/coverage/coverage-1")]),
        ("w-reconcile", "reconciliation", "synthesis",
         [("reconciler-1", "reviews/reconciliation")]),
    ],
    "thorough": [
        ("w-regather", "redundant-gather", "extraction", [("gather-2", "raw/dossiers/gather-2")]),
        ("w-reverify", "redundant-verification", "judgment",
         [("reverify-1", "reviews/redundant-verification/reverify-1")]),
        ("w-contradiction", "contradiction-resolution", "judgment",
         [("contra-1", "reviews/contradiction-resolution/contra-1")]),
    ],
}
_ORDER = ("quick", "standard", "thorough")
REVIEW_LANES = {
    "semantic": "semantic-1",
    "adversarial": "adversarial-1",
    "coverage": "coverage-1",
    "redundant-verification": "reverify-1",
    "contradiction-resolution": "contra-1",
    "reconciliation": "reconciler-1",
}


def default_execution(profile: str, *, extra_gather_lanes: int = 0) -> dict[str, Any]:
    """An unapproved execution envelope with the standard waves of ``profile``."""
    waves = []
    for level in _ORDER[: _ORDER.index(profile) + 1]:
        for wave_id, mode, task_class, lanes in _WAVES[level]:
            lane_list = [{"laneId": lane, "scope": f"{mode} work", "writeRoot": root}
                         for lane, root in lanes]
            if mode == "gather":
                lane_list += [{"laneId": f"gather-x{n}", "scope": "gather work",
                               "writeRoot": f"raw/dossiers/gather-x{n}"}
                              for n in range(1, extra_gather_lanes + 1)]
            waves.append({"waveId": wave_id, "mode": mode, "taskClass": task_class,
                          "lanes": lane_list, "conditional": False})
    return {
        "provider": "local",
        "route": "default",
        "role": "researcher",
        "model": "example-model",
        "effort": "medium",
        "reasoningMode": None,
        "serviceTier": None,
        "authority": "contract-enforced",
        "maxConcurrency": 4,
        "deadlineSeconds": 3600,
        "retryLimit": 1,
        "waves": waves,
    }


class PacketBuilder:
    """Write a packet piece by piece; nothing canonical is written until :meth:`finish`."""

    def __init__(self, directory: str | os.PathLike[str], *, profile: str = "quick",
                 run_id: str = "run-example", objective: str = "Example research question",
                 questions: list[str] | None = None, created_at: str = T0) -> None:
        os.makedirs(directory, exist_ok=True)
        self.root = PacketRoot(directory)
        self.root.make_layout()
        self.profile = profile
        self.manifest = new_manifest(run_id=run_id, created_at=created_at, objective=objective,
                                     profile=profile, questions=questions)
        self.ledger = new_ledger(run_id)
        self.captures: dict[str, bytes] = {}
        self.dossiers: list[dict[str, str]] = []
        self.results: list[dict[str, str]] = []
        self.prior: dict[str, Any] | None = None
        self.prior_ref: dict[str, str] | None = None

    @property
    def run_id(self) -> str:
        return str(self.manifest["runId"])

    # -- files ---------------------------------------------------------
    def write_artifact(self, path: str, doc: dict[str, Any] | bytes,
                       *, register: bool = True) -> dict[str, str]:
        """Write a JSON artifact (or raw bytes) and list ``{path, digest}`` in the manifest."""
        data = doc if isinstance(doc, bytes) else json_file_bytes(doc)
        self.root.write(path, data)
        ref = {"path": path, "digest": file_digest(data)}
        if register:
            self.manifest["artifacts"] = [a for a in self.manifest["artifacts"]
                                          if a["path"] != path] + [ref]
        return ref

    def source(self, source_id: str, text: str, *, title: str | None = None) -> dict[str, Any]:
        """A document source whose capture is stored under ``raw/sources/``."""
        data = text.encode("utf-8")
        path = f"raw/sources/{source_id}.txt"
        self.root.write(path, data)
        self.captures[source_id] = data
        source = {"sourceId": source_id, "type": "document", "title": title or source_id,
                  "capture": {"path": path, "digest": file_digest(data)}}
        self.manifest["sources"].append(source)
        return source

    def evidence(self, evidence_id: str, source_id: str, excerpt: str, *,
                 redact: list[str] | None = None, start: int | None = None) -> dict[str, Any]:
        """An evidence record located exactly in its source (optionally redacted)."""
        data = self.captures[source_id]
        raw = excerpt.encode("utf-8")
        begin = data.find(raw) if start is None else start
        if begin < 0:
            raise ValueError(f"{excerpt!r} is not in source {source_id}")
        record: dict[str, Any] = {
            "evidenceId": evidence_id,
            "sourceId": source_id,
            "sourceDigest": file_digest(data),
            "locator": {"start": begin, "end": begin + len(raw)},
            "excerpt": excerpt,
        }
        if redact:
            for secret in redact:
                record["excerpt"] = record["excerpt"].replace(secret, "[REDACTED]")
            record["redaction"] = {"applied": True, "originalPersisted": False}
        self.ledger["evidence"].append(record)
        return record

    def claim(self, claim_id: str, statement: str, links: list[tuple[str, str]], *,
              state: str = "supported", qualifications: list[str] | None = None) -> dict[str, Any]:
        """A revision-one claim (genesis implicit) with a legal path to ``state``."""
        claim = {"claimId": claim_id, "statement": statement, "state": state,
                 "evidence": [{"evidenceId": e, "relation": r} for e, r in links],
                 "qualifications": list(qualifications or [])}
        self.ledger["claims"].append(claim)
        path = {"provisional": [], "supported": ["supported"], "verified": ["supported", "verified"],
                "contested": ["contested"], "unresolved": ["unresolved"],
                "unsupported": ["unsupported"]}[state]
        previous = "provisional"
        for step in path:
            self.transition(claim_id, previous, step, f"{step} by compile")
            previous = step
        return claim

    def transition(self, claim_id: str, src: str | None, dst: str, reason: str) -> dict[str, Any]:
        item = {"claimId": claim_id, "from": src, "to": dst, "reason": reason}
        self.ledger["transitions"].append(item)
        return item

    # -- execution -----------------------------------------------------
    def approve(self, execution: dict[str, Any] | None = None, *,
                approved_at: str = "2026-01-05T10:05:00Z") -> dict[str, Any]:
        envelope = dict(execution or default_execution(self.profile))
        envelope.pop("approval", None)
        envelope["approval"] = {"type": APPROVAL_TYPE, "approvedAt": approved_at,
                                "fingerprint": approval_fingerprint(envelope)}
        self.manifest["execution"] = envelope
        self.manifest["status"] = "running"
        return envelope

    # -- worker output -------------------------------------------------
    def dossier(self, lane_id: str, mode: str, wave_id: str, *, outcome: str = "complete",
                path: str | None = None, name: str = "dossier",
                findings: list[dict[str, Any]] | None = None) -> dict[str, str]:
        roots = {lane["laneId"]: lane["writeRoot"]
                 for wave in (self.manifest["execution"] or {}).get("waves", [])
                 for lane in wave["lanes"]}
        target = path or f"{roots.get(lane_id, 'raw/dossiers/' + lane_id)}/{name}.json"
        sources = [s["sourceId"] for s in self.manifest["sources"][:1]]
        doc = {
            "kind": "assay.raw-dossier", "schemaVersion": 1,
            "dossierId": f"{lane_id}-{name}", "runId": self.run_id,
            "waveId": wave_id, "laneId": lane_id, "mode": mode,
            "inputs": ["request"], "exclusions": [],
            "findings": findings if findings is not None else [
                {"findingId": f"{lane_id}-{name}-f1", "statement": f"{mode} finding",
                 "sourceIds": sources, "excerpt": ""}],
            "uncertainty": [], "contradictions": [], "gaps": [], "outcome": outcome,
        }
        ref = self.write_artifact(target, doc)
        self.dossiers.append(ref)
        return ref

    def compile(self) -> None:
        """Bind every dossier written so far as a direct input of the ledger."""
        self.ledger["inputs"] = [dict(r) for r in self.dossiers]

    def snapshot(self) -> dict[str, str]:
        """Freeze the current ledger as the prior ledger every brief binds."""
        data = json_file_bytes(self.ledger)
        path = f"raw/drafts/claims-r{self.ledger['revision']}.json"
        self.prior = parse(data)
        self.prior_ref = self.write_artifact(path, data)
        return self.prior_ref

    def brief(self, mode: str, *, brief_id: str | None = None,
              projection: dict[str, Any] | None = None) -> dict[str, str]:
        assert self.prior is not None and self.prior_ref is not None, "snapshot() first"
        doc = {
            "kind": "assay.review-brief", "schemaVersion": 1,
            "briefId": brief_id or mode, "runId": self.run_id, "mode": mode,
            "createdAt": "2026-01-05T11:00:00Z",
            "priorLedger": dict(self.prior_ref), "priorRevision": self.prior["revision"],
            "projection": projection if projection is not None else
            project(mode, self.prior, self.manifest),
        }
        return self.write_artifact(f"reviews/briefs/{doc['briefId']}.json", doc)

    def result(self, kind: str, brief: dict[str, str], /, *, lane: str | None = None,
               verdict: str = "confirmed", dispositions: list[dict[str, Any]] | None = None,
               name: str = "result", path: str | None = None, complete: bool = True,
               **fields: Any) -> dict[str, str]:
        """A review result answering ``brief``; by default it confirms every shown claim."""
        assert self.prior is not None
        lane = lane or REVIEW_LANES[kind]
        raw = self.root.read(brief["path"])
        shown = parse(raw)["projection"].get("claims", []) if isinstance(raw, bytes) else []
        if dispositions is None:
            dispositions = [{"claimId": c["claimId"], "verdict": verdict, "material": False,
                             "note": ""} for c in shown]
        doc = {
            "kind": "assay.review-result", "schemaVersion": 1,
            "resultId": f"{lane}-{name}", "runId": self.run_id, "reviewKind": kind,
            "reviewerLane": lane, "complete": complete, "brief": dict(brief),
            "permittedInputs": ["brief"], "excludedInputs": ["other reviews"],
            "dispositions": dispositions, "newEvidence": [], "associations": [],
            "coverageFindings": [], "unresolvedIssues": [],
        }
        doc.update(fields)
        roots = {x["laneId"]: x["writeRoot"] for w in self.manifest["execution"]["waves"]
                 for x in w["lanes"]} if self.manifest["execution"] else {}
        target = path or f"{roots.get(lane, 'reviews/' + kind)}/{name}.json"
        ref = self.write_artifact(target, doc)
        if complete:
            self.results.append(ref)
        return ref

    def reconcile(self, transitions: list[dict[str, Any]], *, lane: str = "reconciler-1",
                  path: str = "reviews/reconciliation/reconciliation.json",
                  **fields: Any) -> dict[str, str]:
        """Apply ``transitions`` to the ledger as the next revision and record the reconciliation."""
        assert self.prior is not None and self.prior_ref is not None
        for item in transitions:
            self.ledger["transitions"].append(item)
            for claim in self.ledger["claims"]:
                if claim["claimId"] == item["claimId"]:
                    claim["state"] = item["to"]
        self.ledger["revision"] = self.prior["revision"] + 1
        doc = {
            "kind": "assay.review-result", "schemaVersion": 1,
            "resultId": "reconciliation", "runId": self.run_id,
            "reviewKind": "reconciliation", "reviewerLane": lane, "complete": True,
            "priorLedger": dict(self.prior_ref), "priorRevision": self.prior["revision"],
            "nextRevision": self.prior["revision"] + 1,
            "reviewResults": [dict(r) for r in self.results],
            "transitions": transitions, "additions": [], "removals": [],
            "coverageDispositions": [],
        }
        doc.update(fields)
        return self.write_artifact(path, doc)

    def gap(self, gap_id: str, kind: str, *, material: bool, mode: str | None = None,
            description: str = "recorded gap", **fields: Any) -> dict[str, Any]:
        gap = {"gapId": gap_id, "kind": kind, "material": material, "mode": mode,
               "description": description, "sourceIds": [], "claimIds": [], "findingIds": []}
        gap.update(fields)
        self.manifest["gaps"].append(gap)
        return gap

    def finish(self, status: str | None = "complete") -> None:
        """Write ``claims.json`` and ``manifest.json`` (with ``status`` unless None)."""
        if status is not None:
            self.manifest["status"] = status
        self.root.write(LEDGER_FILE, json_file_bytes(self.ledger))
        self.root.write(MANIFEST_FILE, json_file_bytes(self.manifest))


def example_packet(directory: str | os.PathLike[str], profile: str = "quick", *,
                   claims: int = 3, evidence_per_claim: int = 1, evidence: int | None = None,
                   sources: int = 1,
                   dossiers_per_gather_lane: int = 1, extra_gather_lanes: int = 0,
                   status: str | None = "complete",
                   run_id: str = "run-example",
                   result_fields: dict[str, dict[str, Any]] | None = None,
                   projection_hook: Callable[[str, dict[str, Any]], dict[str, Any]] | None = None,
                   ) -> PacketBuilder:
    """A complete, valid packet of ``profile`` with the given sizes.

    Quick packets end with supported claims; standard and thorough packets
    go through briefs, confirming reviews and one reconciliation that moves
    every claim to verified as ledger revision 2. With ``status=None`` the
    canonical files are not written, so a caller can change the builder
    before :meth:`PacketBuilder.finish`. ``result_fields`` overrides fields of
    the review result of a mode, and ``projection_hook`` may replace a brief's
    projection (both exist to build deliberately invalid packets).
    """
    b = PacketBuilder(directory, profile=profile, run_id=run_id,
                      objective="Which storage engine suits the ledger?",
                      questions=["Is SQLite WAL safe for concurrent readers?"])
    total = evidence if evidence is not None else claims * evidence_per_claim
    per_source = -(-total // sources)
    for s in range(sources):
        lines = [f"Fact {s}-{n}: observation number {n} of source {s} holds."
                 for n in range(per_source)]
        b.source(f"src-{s}", "\n".join(lines) + "\n", title=f"Source document {s}")
    links: list[list[tuple[str, str]]] = [[] for _ in range(claims)]
    offsets = {s: 0 for s in range(sources)}
    for n in range(total):
        s, k = n // per_source, n % per_source
        text = f"Fact {s}-{k}: observation number {k} of source {s} holds."
        b.evidence(f"ev-{n}", f"src-{s}", text, start=offsets[s])
        offsets[s] += len(text.encode("utf-8")) + 1
        links[n % claims].append((f"ev-{n}", "supports"))
    for c in range(claims):
        b.claim(f"claim-{c}", f"Claim number {c} is supported by its sources.", links[c])
    b.approve(default_execution(profile, extra_gather_lanes=extra_gather_lanes))
    b.dossier("map-1", "map", "w-map")
    gather_lanes = ["gather-1"] + [f"gather-x{k}" for k in range(1, extra_gather_lanes + 1)]
    for lane in gather_lanes:
        for d in range(dossiers_per_gather_lane):
            b.dossier(lane, "gather", "w-gather", name=f"dossier-{d}")
    if profile == "thorough":
        b.dossier("gather-2", "gather", "w-regather")
    b.compile()
    if profile != "quick":
        b.snapshot()
        modes = ["semantic", "adversarial", "coverage"]
        if profile == "thorough":
            modes += ["redundant-verification", "contradiction-resolution"]
        for mode in modes:
            projection = project(mode, b.prior or {}, b.manifest)
            if projection_hook is not None:
                projection = projection_hook(mode, projection)
            b.result(mode, b.brief(mode, projection=projection),
                     **(result_fields or {}).get(mode, {}))
        b.reconcile([{"claimId": c["claimId"], "from": "supported", "to": "verified",
                      "reason": "confirmed by every independent review"}
                     for c in b.ledger["claims"]])
    if status is not None:
        b.finish(status)
    return b
