"""Reading packets the recon tool writes: its field layout mapped onto assay's model.

The recon tool writes the same contract in another layout: a manifest with a
``run`` object, ``kind``-discriminated sources, gaps with ``code``/``message``,
a ledger with ``inputArtifacts``, a structured ``synthesis``, claims with
``id``/``status`` and evidence with typed line locators, ``displayExcerpt`` and
a declared ``locatorValidation``. :class:`ReconReader` checks each such file
against the recon layout (closed objects, the same issue codes as assay's
shapes, pointers into the recon file) and maps it field by field onto the
document assay's boundary validates; the compiler in
:mod:`assay.packet.validate` then applies every rule of its own unchanged.
Issues the boundary finds in a mapped document are reported at the pointer of
the recon field they came from (:meth:`ReconReader.remap`).

The unit is the packet, not the file: a later ledger revision's transition
history starts in the prior ledger the reconciliation binds, a brief is
bound to that same prior ledger, and a coverage finding's status is the
reconciliation's disposition of it (:meth:`ReconReader.map_packet`). The
layout itself (versions, closed shapes, brief projections, line locators)
is :mod:`assay.packet.recon_layout`.

What cannot be mapped without guessing fails closed with a stable code: a
failure record, which the recon layout does not define
(``UNSUPPORTED_RECON_KIND``), a locator that does not name its source's identity
(``LOCATOR_SOURCE_MISMATCH``), a declared locator state the validator does
not derive (``LOCATOR_STATE_MISMATCH``), a declared achieved profile the
validator does not derive (``ACHIEVED_PROFILE_MISMATCH``), a brief that is
not the recon projection of its prior ledger (``REVIEW_BRIEF_MISMATCH``).
See ``docs/packet.md`` ("Reading recon packets"). Imports the base modules
and the packet modules; never a surface.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from assay.canonical import fingerprint
from assay.packet.layout import LEDGER_FILE, MANIFEST_FILE, file_digest
from assay.packet.model import ELIGIBLE_EVIDENCE, WAVE_MODES, Evidence, Issue
from assay.packet.recon_layout import (
    BRIEF,
    BRIEF_MODE,
    DOSSIER,
    LEDGER,
    MANIFEST,
    RECON_VERSIONS,
    RESULT,
    VERDICTS,
    Pending,
    is_recon_layout,
    line_breaks,
    line_range,
    recon_projection,
)
from assay.packet.redaction import find_secret
from assay.packet.reviews import project
from assay.packet.shape import Sink

# Re-exported: the compiler and the tests read the layout through this module.
__all__ = [
    "RECON_VERSIONS",
    "Pending",
    "ReconReader",
    "is_recon_layout",
    "line_range",
    "recon_projection",
]

_NO_REASON = "(the recon layout records no reason)"
# A record whose source has no capture derives as ``invalid`` whatever digest
# it names; the boundary needs a well-formed one to get that far.
_NO_CAPTURE = "sha256:" + "0" * 64


Rule = tuple[re.Pattern[str], Callable[[re.Match[str]], str]]


def _rule(pattern: str, target: str | Callable[[re.Match[str]], str]) -> Rule:
    """Map the pointer prefix ``pattern`` (whole segments) to ``target``."""
    compiled = re.compile("^" + pattern + "(?=/|$)")
    if callable(target):
        return compiled, target
    return compiled, lambda m: m.expand(target)


def _evidence_rules(base: str) -> list[Rule]:
    return [
        _rule(base + r"/(\d+)/evidenceId", base + r"/\1/id"),
        _rule(base + r"/(\d+)/excerpt", base + r"/\1/displayExcerpt"),
        _rule(base + r"/(\d+)/sourceDigest", base + r"/\1/sourceId"),
        _rule(base + r"/(\d+)/locator(?:/[^/]*)?", base + r"/\1/locator"),
    ]


_LEDGER_RULES = [
    _rule(r"/inputs", "/inputArtifacts"),
    _rule(r"/synthesis", "/synthesis/answer"),
    *_evidence_rules("/evidence"),
    _rule(r"/claims/(\d+)/claimId", r"/claims/\1/id"),
    _rule(r"/claims/(\d+)/state", r"/claims/\1/status"),
    _rule(r"/unresolvedQuestions/(\d+)", r"/unresolvedQuestions/\1/id"),
    _rule(r"/transitions/(\d+)/reason", r"/transitions/\1"),
]
_RESULT_RULES = [
    _rule(r"/resultId", "/id"),
    _rule(r"/complete", "/status"),
    _rule(r"/associations", "/evidenceAssociations"),
    _rule(r"/dispositions/(\d+)/verdict", r"/dispositions/\1/disposition"),
    _rule(r"/dispositions/(\d+)/(?:material|note)", r"/dispositions/\1"),
    _rule(r"/coverageFindings/(\d+)/findingId", r"/coverageFindings/\1/id"),
    _rule(r"/coverageFindings/(\d+)/gapIds(?:/\d+)?", r"/coverageFindings/\1/gapId"),
    _rule(r"/coverageFindings/(\d+)/note", r"/coverageFindings/\1/message"),
    _rule(r"/coverageFindings/(\d+)/(?:status|evidenceIds)(?:/.*)?", r"/coverageFindings/\1"),
    _rule(r"/unresolvedIssues/(\d+)(?:/.*)?", r"/unresolvedIssues/\1"),
    _rule(r"/permittedInputs/(\d+)", r"/permittedInputs/\1/path"),
]
_RECONCILIATION_RULES = [
    _rule(r"/resultId", "/id"),
    _rule(r"/complete", "/status"),
    _rule(r"/priorLedger", "/inputLedger"),
    _rule(r"/priorRevision", "/inputLedger/revision"),
    _rule(r"/nextRevision", "/outputRevision"),
    _rule(r"/reviewResults/(\d+)(?:/.*)?", r"/incorporatedReviewIds/\1"),
    _rule(r"/reviewResults", "/incorporatedReviewIds"),
    _rule(r"/transitions/(\d+)/reason", r"/transitions/\1"),
]
_DOSSIER_RULES = [
    _rule(r"/dossierId", "/id"),
    _rule(r"/inputs", "/allowedInputs"),
    _rule(r"/exclusions", "/excludedInputs"),
]


@dataclass(slots=True)
class _Mapped:
    """Pointer rules of one mapped file: assay pointer prefix -> recon pointer."""

    rules: list[Rule] = field(default_factory=list)

    def recon(self, pointer: str) -> str:
        for pattern, target in self.rules:
            found = pattern.match(pointer)
            if found is not None:
                return target(found) + pointer[found.end():]
        return pointer


def _strings(value: Any, pointer: str) -> Iterator[tuple[str, str]]:
    """Every string inside ``value`` with its JSON pointer."""
    if isinstance(value, str):
        yield pointer, value
    elif isinstance(value, list):
        for n, item in enumerate(value):
            yield from _strings(item, f"{pointer}/{n}")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, pointer + "/" + key.replace("~", "~0").replace("/", "~1"))


class ReconReader:
    """Check and map the files of one recon-layout packet. Use for one compile pass.

    Every method reports the recon layout's own problems to ``native`` with
    pointers into the recon file; :meth:`remap` turns the pointers of issues
    the boundary found in a mapped document back into recon pointers.
    """

    def __init__(self) -> None:
        self.native: list[Issue] = []
        self.mapped: dict[str, _Mapped] = {}
        self.sources: dict[str, dict[str, Any]] = {}
        self.declared_profile: str | None = None
        self.ledgers: dict[str, dict[str, Any]] = {}
        self.manifest_raw: dict[str, Any] = {}
        self.manifest_mapped: dict[str, Any] = {}
        self.result_ids: set[str] = set()
        # Per source id: the capture's digest and line breaks, computed once.
        self._captures: dict[str, tuple[str, list[int]]] = {}

    def _sink(self, path: str) -> Sink:
        return Sink(self.native, path)

    def _add(self, code: str, path: str, pointer: str, message: str) -> None:
        self.native.append(Issue(code, path, pointer, message))

    def _secrets(self, path: str, value: Any, pointer: str) -> None:
        """Secret-safe persistence for content the recon layout leaves untyped."""
        for at, text in _strings(value, pointer):
            found = find_secret(text)
            if found is not None:
                self._add("SECRET_IN_EXCERPT", path, at,
                          f"a raw secret-shaped value is persisted ({found}); redact it")

    def version(self, kind: str) -> int | None:
        """The schemaVersion read for ``kind`` in the recon layout (None: not a recon kind)."""
        return RECON_VERSIONS.get(kind)

    # -- manifest --------------------------------------------------------
    def manifest(self, doc: dict[str, Any], ledger_digest: str | None) -> dict[str, Any] | None:
        """Check a recon manifest and map it onto assay's manifest (None if it cannot be)."""
        if not MANIFEST.check(self._sink(MANIFEST_FILE), doc):
            return None
        run, request = doc["run"], doc["request"]
        self.declared_profile = run["achievedProfile"]
        rules: list[Rule] = [
            _rule(r"/runId", "/run/id"),
            _rule(r"/createdAt", "/run/createdAt"),
            _rule(r"/status", "/run/status"),
            _rule(r"/profile", "/run/requestedProfile"),
            _rule(r"/request/contextRefs", "/request/contextReferences"),
            _rule(r"/sources/(\d+)/sourceId", r"/sources/\1/id"),
            _rule(r"/sources/(\d+)/type", r"/sources/\1/kind"),
            _rule(r"/sources/(\d+)/(?:title|url|retrievedAt)", r"/sources/\1"),
            _rule(r"/gaps/(\d+)/gapId", r"/gaps/\1/id"),
            _rule(r"/gaps/(\d+)/kind", r"/gaps/\1/code"),
            _rule(r"/gaps/(\d+)/(?:mode|description)", r"/gaps/\1/message"),
            _rule(r"/gaps/(\d+)/findingIds", r"/gaps/\1/coverageFindingIds"),
        ]
        artifacts: list[dict[str, str]] = []
        ledger_listed = False
        positions: list[int] = []
        for index, ref in enumerate(doc["artifacts"]):
            if ref["path"] == LEDGER_FILE:
                # The recon layout lists the canonical ledger among the
                # artifacts; assay binds it by reading it, so the listed
                # digest must be the digest of the bytes read.
                ledger_listed = True
                if ledger_digest is not None and ref["digest"] != ledger_digest:
                    self._add("DIGEST_MISMATCH", MANIFEST_FILE, f"/artifacts/{index}/digest",
                              f"claims.json hashes to {ledger_digest}, not the listed digest")
                continue
            positions.append(index)
            artifacts.append({"path": ref["path"], "digest": ref["digest"]})
        if not ledger_listed:
            self._add("MISSING_FIELD", MANIFEST_FILE, "/artifacts",
                      "the recon layout lists claims.json with its digest among the artifacts")
        rules.append(_rule(r"/artifacts/(\d+)", lambda m: f"/artifacts/{positions[int(m[1])]}"))
        sources = []
        for index, source in enumerate(doc["sources"]):
            mapped, capture_at = self._source(source)
            sources.append(mapped)
            self.sources[source["id"]] = source
            if capture_at is not None:
                rules.append(_rule(rf"/sources/{index}/capture/path",
                                   f"/sources/{index}{capture_at[0]}"))
                rules.append(_rule(rf"/sources/{index}/capture/digest",
                                   f"/sources/{index}{capture_at[1]}"))
            rules.append(_rule(rf"/sources/{index}/capture", f"/sources/{index}"))
        gaps = []
        for index, gap in enumerate(doc["gaps"]):
            mode = None
            if gap["code"] in ("PASS_FAILED", "PASS_OMITTED"):
                mode = self._gap_mode(index, gap["message"])
            gaps.append({
                "gapId": gap["id"], "kind": gap["code"], "material": gap["material"],
                "mode": mode, "description": gap["message"],
                "sourceIds": list(gap.get("sourceIds", [])),
                "claimIds": list(gap.get("claimIds", [])),
                "findingIds": list(gap.get("coverageFindingIds", [])),
            })
        self.mapped[MANIFEST_FILE] = _Mapped(rules)
        self.manifest_raw = doc
        self.manifest_mapped = {
            "kind": doc["kind"],
            "schemaVersion": 2,
            "runId": run["id"],
            "createdAt": run["createdAt"],
            "status": run["status"],
            "profile": run["requestedProfile"],
            "request": {
                "objective": request["objective"], "questions": list(request["questions"]),
                "includedScope": list(request["includedScope"]),
                "excludedScope": list(request["excludedScope"]),
                "contextRefs": list(request["contextReferences"]),
                "outputPath": request["outputPath"],
            },
            "sources": sources,
            "execution": doc["execution"],
            "artifacts": artifacts,
            "gaps": gaps,
        }
        return self.manifest_mapped

    def _gap_mode(self, index: int, message: str) -> str | None:
        """The one wave mode a PASS gap's message names (the recon layout has no mode field)."""
        named = {mode for mode in WAVE_MODES
                 if re.search(r"(?<![a-z-])" + re.escape(mode) + r"(?![a-z-])", message)}
        if len(named) == 1:
            return named.pop()
        self._add("INVALID_VALUE", MANIFEST_FILE, f"/gaps/{index}/message",
                  "a PASS_FAILED or PASS_OMITTED gap's message must name exactly one wave mode "
                  f"(it names {len(named)})")
        return None

    @staticmethod
    def _source(source: dict[str, Any]) -> tuple[dict[str, Any], tuple[str, str] | None]:
        """Assay's descriptor of a recon source, and where its capture pair is in recon."""
        kind = source["kind"]
        pinned = source["available"] and source["validationState"] == "pinned"
        capture: dict[str, str] | None = None
        at: tuple[str, str] | None = None
        if kind == "url":
            state = source.get("validatorState") or {}
            if "capturePath" in source and "captureDigest" in source:
                capture = {"path": source["capturePath"], "digest": source["captureDigest"]}
                at = ("/capturePath", "/captureDigest")
            elif "capturePath" in state and "captureDigest" in state:
                capture = {"path": state["capturePath"], "digest": state["captureDigest"]}
                at = ("/validatorState/capturePath", "/validatorState/captureDigest")
            mapped: dict[str, Any] = {"sourceId": source["id"], "type": "web",
                                      "title": source["url"], "url": source["url"],
                                      "retrievedAt": source["observedAt"]}
        else:
            if kind == "command-output":
                capture = {"path": source["outputPath"], "digest": source["outputDigest"]}
                at = ("/outputPath", "/outputDigest")
                title = " ".join(source["argv"]) or "command output"
            elif kind == "connected-resource":
                if "capturePath" in source and "captureDigest" in source:
                    capture = {"path": source["capturePath"], "digest": source["captureDigest"]}
                    at = ("/capturePath", "/captureDigest")
                title = f"{source['system']}:{source['resourceId']}"
            elif kind == "file":
                title = source["path"]  # outside the packet: never reopened here
            else:
                title = source["root"]  # repository: outside the packet likewise
            mapped = {"sourceId": source["id"], "type": "document", "title": title}
        # A source the recon writer itself did not pin is not reopened: its
        # evidence derives as invalid and needs the usual material gap.
        mapped["capture"] = capture if pinned else None
        return mapped, (at if pinned else None)

    # -- claim ledger ------------------------------------------------------
    def ledger(self, path: str, doc: dict[str, Any], captures: dict[str, bytes], *,
               history: list[dict[str, Any]] | None = None) -> dict[str, Any] | None:
        """Check a recon claim ledger and map it onto assay's (None if it cannot be).

        A recon ledger of a later revision records only that revision's
        transitions; ``history`` is the mapped transitions of the prior ledger
        it follows, so the mapped ledger carries the whole history assay
        replays from each claim's genesis.
        """
        if not LEDGER.check(self._sink(path), doc):
            return None
        synthesis = doc["synthesis"]
        claim_ids = {c["id"] for c in doc["claims"]}
        question_ids = []
        for k, question in enumerate(doc["unresolvedQuestions"]):
            qid = question.get("id")
            if type(qid) is not str or not qid:
                self._add("MISSING_FIELD", path, f"/unresolvedQuestions/{k}/id",
                          "an unresolved question needs a non-empty string id")
                return None
            question_ids.append(qid)
            self._secrets(path, question, f"/unresolvedQuestions/{k}")
        for key, known in (("keyClaimIds", claim_ids), ("unresolvedQuestionIds", set(question_ids))):
            for n, ref in enumerate(synthesis[key]):
                if ref not in known:
                    self._add("UNKNOWN_REFERENCE", path, f"/synthesis/{key}/{n}",
                              f"{ref!r} is not in this ledger")
        self._secrets(path, synthesis, "/synthesis")
        for i, claim in enumerate(doc["claims"]):
            self._secrets(path, claim["challenges"], f"/claims/{i}/challenges")
            for k, challenge in enumerate(claim["challenges"]):
                if claim["status"] == "verified" and challenge.get("material") is True \
                        and challenge.get("status") == "unresolved":
                    self._add("MATERIAL_CHALLENGE_UNRESOLVED", path, f"/claims/{i}/challenges/{k}",
                              f"claim {claim['id']!r} is verified despite a material unresolved "
                              "challenge")
        evidence = [self._evidence(path, i, record, captures)
                    for i, record in enumerate(doc["evidence"])]
        earlier = list(history or [])
        shift = len(earlier)

        def own(found: re.Match[str]) -> str:
            k = int(found[1]) - shift
            return f"/transitions/{k}" if k >= 0 else "/transitions"

        self.mapped[path] = _Mapped([_rule(r"/transitions/(\d+)(?:/reason)?", own)]
                                    + _LEDGER_RULES)
        self.ledgers[path] = doc
        return {
            "kind": doc["kind"],
            "schemaVersion": doc["schemaVersion"],
            "runId": doc["runId"],
            "revision": doc["revision"],
            "inputs": [dict(ref) for ref in doc["inputArtifacts"]],
            "synthesis": synthesis["answer"],
            "evidence": evidence,
            "claims": [{"claimId": c["id"], "statement": c["statement"], "state": c["status"],
                        "evidence": [dict(link) for link in c["evidence"]],
                        "qualifications": list(c["qualifications"])} for c in doc["claims"]],
            "unresolvedQuestions": question_ids,
            "transitions": earlier + [{"claimId": t["claimId"], "from": t["from"],
                                       "to": t["to"], "reason": _NO_REASON}
                                      for t in doc["transitions"]],
        }

    def _evidence(self, path: str, i: int, record: dict[str, Any], captures: dict[str, bytes],
                  base: str = "/evidence") -> dict[str, Any]:
        at = f"{base}/{i}"
        locator = record["locator"]
        source = self.sources.get(record["sourceId"])
        digest = _NO_CAPTURE
        start, end = 0, 0
        if source is not None:
            self._bind(path, at, record, source)
            data = captures.get(source["id"])
            if data is not None:
                known = self._captures.get(source["id"])
                if known is None:
                    known = self._captures[source["id"]] = (file_digest(data), line_breaks(data))
                digest = known[0]
                start, end = line_range(data, locator.get("lineStart"), locator.get("lineEnd"),
                                        known[1])
        redaction = record.get("redaction")
        if "contentHash" in record:
            if redaction is not None:
                self._add("INVALID_REDACTION", path, at + "/contentHash",
                          "redacted evidence stores no digest of the sensitive span")
            elif record["contentHash"] != fingerprint(record["displayExcerpt"]):
                self._add("DIGEST_MISMATCH", path, at + "/contentHash",
                          "contentHash is not the canonical digest of displayExcerpt")
        mapped: dict[str, Any] = {
            "evidenceId": record["id"], "sourceId": record["sourceId"], "sourceDigest": digest,
            "locator": {"start": start, "end": end}, "excerpt": record["displayExcerpt"],
        }
        if redaction is not None:
            mapped["redaction"] = {"applied": redaction["applied"],
                                   "originalPersisted": redaction["originalPersisted"]}
        return mapped

    def _bind(self, path: str, at: str, record: dict[str, Any], source: dict[str, Any]) -> None:
        """A locator must name its source's exact identity and observation (recon's binding)."""
        locator, kind = record["locator"], source["kind"]
        wrong: list[str] = []
        if locator["kind"] != kind:
            wrong.append("/locator/kind")
        elif kind == "url":
            if locator["url"] != source["url"]:
                wrong.append("/locator/url")
            if locator["retrievedAt"] != source["observedAt"]:
                wrong.append("/locator/retrievedAt")
            state = source.get("validatorState")
            if state is not None and locator.get("validatorToken") != fingerprint(
                    {"etag": state.get("etag"), "lastModified": state.get("lastModified")}):
                wrong.append("/locator/validatorToken")
        elif kind == "command-output":
            if locator["artifactPath"] != source["outputPath"]:
                wrong.append("/locator/artifactPath")
            if locator["commandDigest"] != fingerprint(source["argv"]):
                wrong.append("/locator/commandDigest")
        elif kind == "connected-resource":
            for key in ("system", "resourceId", "resourceVersion", "retrievalToken"):
                if key in source and locator.get(key) != source[key]:
                    wrong.append(f"/locator/{key}")
            if locator["retrievedAt"] != source["observedAt"]:
                wrong.append("/locator/retrievedAt")
        elif kind == "file":
            if locator["path"] != source["path"]:
                wrong.append("/locator/path")
        elif locator["revision"] != source["revision"]:
            wrong.append("/locator/revision")
        if not wrong and record["observedAt"] != source["observedAt"]:
            wrong.append("/observedAt")
        for tail in wrong:
            self._add("LOCATOR_SOURCE_MISMATCH", path, at + tail,
                      f"evidence {record['id']!r} does not name the identity or observation of "
                      f"source {source['id']!r}")

    # -- the listed artifacts, as one packet ------------------------------------
    def map_packet(self, ledger: dict[str, Any] | None, pending: list[Pending],
                   captures: dict[str, bytes]) -> tuple[dict[str, Any] | None, list[Pending]]:
        """Map ``claims.json`` and every listed artifact of a recon packet.

        A packet, not a file, is the unit: the canonical ledger's transition
        history starts in the prior ledger the reconciliation binds, a brief's
        prior ledger is that same one, and a coverage finding's status is the
        reconciliation's disposition of it. Returns the mapped ledger and the
        artifacts, each mapped or None.
        """
        checks = {"raw-dossier": DOSSIER, "review-brief": BRIEF, "review-result": RESULT,
                  "claim-ledger": LEDGER}
        good: dict[str, dict[str, Any]] = {}
        results: dict[str, dict[str, str]] = {}
        for _, path, digest, kind, doc in pending:
            if doc is None:
                continue
            shape = checks.get(kind)
            if shape is None:
                self._add("UNKNOWN_KIND", path, "/kind", f"a recon.{kind} cannot be a listed artifact")
            elif shape.check(self._sink(path), doc):
                good[path] = doc
                if kind == "review-result":
                    if doc["id"] in results:
                        self._add("DUPLICATE_ID", path, "/id",
                                  f"review result id {doc['id']!r} is repeated")
                    results.setdefault(doc["id"], {"path": path, "digest": digest})
        self.result_ids = set(results)
        reconciliation = next((good[p] for _, p, _, k, _ in pending if k == "review-result"
                               and p in good and good[p]["reviewKind"] == "reconciliation"), None)
        prior_path: str | None = None
        if reconciliation is not None:
            bound = reconciliation["inputLedger"]
            prior_path = next((p for _, p, d, k, _ in pending if k == "claim-ledger"
                               and p in good and p == bound["path"] and d == bound["digest"]),
                              None)
        prior = None if prior_path is None else self.ledger(prior_path, good[prior_path],
                                                            captures)
        mapped_ledger = None
        if ledger is not None:
            history = prior["transitions"] if prior is not None else []
            mapped_ledger = self.ledger(LEDGER_FILE, ledger, captures, history=history)
        status: dict[str, tuple[str, list[str]]] = {}
        if reconciliation is not None:
            for item in reconciliation["coverageDispositions"]:
                status[item["findingId"]] = (
                    "accepted" if item["disposition"] == "accepted-gap" else "resolved",
                    list(item.get("evidenceIds", [])))
        users: dict[tuple[str, str], list[str]] = {}
        for doc in good.values():
            if doc["kind"].endswith("review-result") and "brief" in doc:
                users.setdefault((doc["brief"]["path"], doc["brief"]["digest"]),
                                 []).append(doc["reviewKind"])
        out: list[Pending] = []
        for index, path, digest, kind, doc in pending:
            mapped: dict[str, Any] | None = None
            if path in good:
                doc = good[path]
                if path == prior_path:
                    mapped = prior
                elif kind == "claim-ledger":
                    mapped = self.ledger(path, doc, captures)
                elif kind == "raw-dossier":
                    mapped = self._dossier(path, doc)
                elif kind == "review-brief":
                    mapped = self._brief(path, doc, users.get((path, digest), []),
                                         reconciliation, None if prior_path is None
                                         else good[prior_path], prior)
                elif doc["reviewKind"] == "reconciliation":
                    mapped = self._reconciliation(path, doc, results)
                else:
                    mapped = self._result(path, doc, captures, status)
            out.append((index, path, digest, kind, mapped))
        if mapped_ledger is not None and prior is not None and prior_path is not None \
                and reconciliation is not None and ledger is not None:
            # Both ledgers passed the recon layout's shape (they were mapped).
            self._continuity(ledger, good[prior_path], reconciliation, good, results)
        return mapped_ledger, out

    def _continuity(self, ledger: dict[str, Any], prior: dict[str, Any],
                    reconciliation: dict[str, Any], good: dict[str, dict[str, Any]],
                    results: dict[str, dict[str, str]]) -> None:
        """Reconciliation continuity over the whole recon records, not only the mapped fields.

        The mapping leaves out fields assay's model has no place for
        (``observedAt``, ``provenance``, ``contentHash``, the declared locator
        state; a claim's ``derivedFrom`` and ``challenges``), so the boundary's
        own continuity checks cannot see them: a surviving evidence record is
        the prior one exactly (``CLAIM_CONTINUITY_BROKEN``), a new one is
        exactly the record a reconciled review supplied
        (``UNSOURCED_NEW_EVIDENCE``), and a surviving claim keeps its
        ``derivedFrom`` and ``challenges``.
        """
        before = {e["id"]: e for e in prior["evidence"]}
        offered: dict[str, Any] = {}
        for rid in reconciliation["incorporatedReviewIds"]:
            ref = results.get(rid)
            if ref is not None and ref["path"] in good:
                for record in good[ref["path"]]["newEvidence"]:
                    offered.setdefault(record["id"], record)
        for i, record in enumerate(ledger["evidence"]):
            if record["id"] in before:
                if record != before[record["id"]]:
                    self._add("CLAIM_CONTINUITY_BROKEN", LEDGER_FILE, f"/evidence/{i}",
                              f"prior evidence {record['id']!r} changed during reconciliation")
            elif record["id"] in offered and record != offered[record["id"]]:
                self._add("UNSOURCED_NEW_EVIDENCE", LEDGER_FILE, f"/evidence/{i}",
                          f"new evidence {record['id']!r} is not the exact record a reconciled "
                          "review supplied")
        claims = {c["id"]: c for c in prior["claims"]}
        for i, claim in enumerate(ledger["claims"]):
            old = claims.get(claim["id"])
            for key in ("derivedFrom", "challenges"):
                # Untyped members: compare canonically (true is not 1).
                if old is not None and fingerprint(old[key]) != fingerprint(claim[key]):
                    self._add("CLAIM_CONTINUITY_BROKEN", LEDGER_FILE, f"/claims/{i}/{key}",
                              f"claim {claim['id']!r} changed its {key} during reconciliation")

    def _dossier(self, path: str, doc: dict[str, Any]) -> dict[str, Any]:
        for key in ("findings", "uncertainty", "contradictions", "gaps"):
            self._secrets(path, doc[key], "/" + key)
        self.mapped[path] = _Mapped(list(_DOSSIER_RULES))
        return {
            "kind": doc["kind"], "schemaVersion": doc["schemaVersion"],
            "dossierId": doc["id"], "runId": doc["runId"], "waveId": doc["waveId"],
            "laneId": doc["laneId"], "mode": doc["mode"],
            "inputs": list(doc["allowedInputs"]), "exclusions": list(doc["excludedInputs"]),
            # Untyped in the recon layout: scanned above, not mapped.
            "findings": [], "uncertainty": [], "contradictions": [], "gaps": [],
            "outcome": doc["outcome"],
        }

    def _brief(self, path: str, doc: dict[str, Any], users: list[str],
               reconciliation: dict[str, Any] | None, prior_raw: dict[str, Any] | None,
               prior: dict[str, Any] | None) -> dict[str, Any] | None:
        """A recon brief checked against its mode's recon projection, then bound as assay's."""
        self._secrets(path, doc["excludedInputs"], "/excludedInputs")
        if reconciliation is None or prior_raw is None or prior is None:
            self._add("PRIOR_LEDGER_MISMATCH", path, "",
                      "a recon brief is bound to its prior ledger through the reconciliation's "
                      "inputLedger, and this packet has no readable one")
            return None
        expected = recon_projection(doc["mode"], prior_raw, self.manifest_raw)
        for key, value in expected.items():
            if doc[key] != value:
                self._add("REVIEW_BRIEF_MISMATCH", path, "/" + key,
                          f"the brief's {key} is not the {doc['mode']} view of the prior ledger")
        # The brief answers the kind of review that cites it (when it can serve
        # it), so a result of another kind is the boundary's brief mismatch.
        fitting = [kind for kind in users if BRIEF_MODE[kind] == doc["mode"]]
        mode = fitting[0] if fitting else {"verify": "semantic", "adversary": "adversarial",
                                           "coverage": "coverage"}[doc["mode"]]
        bound = reconciliation["inputLedger"]
        self.mapped[path] = _Mapped([_rule("/briefId", "/id"),
                                     _rule(r"/(?:priorLedger|priorRevision|projection)(?:/.*)?",
                                           "")])
        return {
            "kind": doc["kind"], "schemaVersion": doc["schemaVersion"], "briefId": doc["id"],
            "runId": doc["runId"], "mode": mode, "createdAt": doc["createdAt"],
            "priorLedger": {"path": bound["path"], "digest": bound["digest"]},
            "priorRevision": bound["revision"],
            "projection": project(mode, prior, self.manifest_mapped),
        }

    def _result(self, path: str, doc: dict[str, Any], captures: dict[str, bytes],
                status: dict[str, tuple[str, list[str]]]) -> dict[str, Any]:
        kind = doc["reviewKind"]
        disposed = list(dict.fromkeys(d["claimId"] for d in doc["dispositions"]))
        dispositions = []
        for item in doc["dispositions"]:
            verdict = VERDICTS[kind][item["disposition"]]
            # The recon layout records no materiality: a disposition that does
            # not confirm is taken as material, so it can only withhold assurance.
            dispositions.append({"claimId": item["claimId"], "verdict": verdict,
                                 "material": verdict != "confirmed", "note": ""})
        issues = []
        for k, item in enumerate(doc["unresolvedIssues"]):
            self._secrets(path, item, f"/unresolvedIssues/{k}")
            # Untyped in the recon layout; it withholds verification from every
            # claim the result disposes of, as the recon tool reads it.
            issues.append({"issueId": f"{doc['id']}-issue-{k}", "claimIds": disposed,
                           "material": True, "note": "an unresolved issue (untyped in the recon "
                           "layout)"})
        findings = []
        for item in doc["coverageFindings"]:
            state, evidence_ids = status.get(item["id"], ("open", []))
            findings.append({"findingId": item["id"], "claimIds": list(item["claimIds"]),
                             "gapIds": [item["gapId"]], "status": state,
                             "material": item["material"], "evidenceIds": evidence_ids,
                             "note": item["message"]})
        self._secrets(path, doc.get("contradictionDispositions", []), "/contradictionDispositions")
        self.mapped[path] = _Mapped(_RESULT_RULES + _evidence_rules("/newEvidence"))
        return {
            "kind": doc["kind"], "schemaVersion": doc["schemaVersion"], "resultId": doc["id"],
            "runId": doc["runId"], "reviewKind": kind, "reviewerLane": doc["reviewerLane"],
            "complete": doc["status"] == "complete", "brief": dict(doc["brief"]),
            "permittedInputs": [ref["path"] for ref in doc["permittedInputs"]],
            "excludedInputs": list(doc["excludedInputs"]),
            "dispositions": dispositions,
            "newEvidence": [self._evidence(path, i, record, captures, "/newEvidence")
                            for i, record in enumerate(doc["newEvidence"])],
            "associations": [dict(a) for a in doc.get("evidenceAssociations", [])],
            "coverageFindings": findings,
            "unresolvedIssues": issues,
        }

    def _reconciliation(self, path: str, doc: dict[str, Any],
                        results: dict[str, dict[str, str]]) -> dict[str, Any]:
        for key in ("dispositions", "newEvidence", "coverageFindings", "unresolvedIssues",
                    "evidenceAssociations"):
            if doc.get(key):
                self._add("INVALID_VALUE", path, "/" + key,
                          f"a reconciliation carries no {key} of its own: they come from the "
                          "review results it incorporates")
        refs = []
        for k, rid in enumerate(doc["incorporatedReviewIds"]):
            if rid in results:
                refs.append(dict(results[rid]))
            else:
                self._add("UNKNOWN_REFERENCE", path, f"/incorporatedReviewIds/{k}",
                          f"review {rid!r} is not a listed review result")
        bound = doc["inputLedger"]
        self.mapped[path] = _Mapped(list(_RECONCILIATION_RULES))
        return {
            "kind": doc["kind"], "schemaVersion": doc["schemaVersion"], "resultId": doc["id"],
            "runId": doc["runId"], "reviewKind": "reconciliation",
            "reviewerLane": doc["reviewerLane"], "complete": doc["status"] == "complete",
            "priorLedger": {"path": bound["path"], "digest": bound["digest"]},
            "priorRevision": bound["revision"], "nextRevision": doc["outputRevision"],
            "reviewResults": refs,
            "transitions": [{"claimId": t["claimId"], "from": t["from"], "to": t["to"],
                             "reason": _NO_REASON} for t in doc["transitions"]],
            "additions": list(doc["additions"]), "removals": list(doc["removals"]),
            "coverageDispositions": [
                {"findingId": item["findingId"],
                 "disposition": "accepted" if item["disposition"] == "accepted-gap"
                 else "resolved"} for item in doc["coverageDispositions"]],
        }

    # -- after the boundary's own checks -------------------------------------
    def finish(self, listed: dict[str, str], evidence: dict[str, Evidence],
               achieved: str | None) -> None:
        """Checks only the recon layout states: declared values against derived ones.

        ``listed`` maps each listed artifact path to its digest; ``evidence``
        is the boundary's derived evidence of ``claims.json``.
        """
        ledger = self.ledgers.get(LEDGER_FILE)
        if ledger is not None:
            for i, record in enumerate(ledger["evidence"]):
                derived = evidence.get(record["id"])
                declared = record["locatorValidation"]["status"]
                if derived is not None and (derived.state in ELIGIBLE_EVIDENCE
                                            or declared in ELIGIBLE_EVIDENCE) \
                        and derived.state != declared:
                    self._add("LOCATOR_STATE_MISMATCH", LEDGER_FILE,
                              f"/evidence/{i}/locatorValidation/status",
                              f"evidence {record['id']!r} is declared {declared!r} but "
                              f"reopening its source derives {derived.state!r}")
                self._ref(listed, record["provenance"], f"/evidence/{i}/provenance")
            for i, claim in enumerate(ledger["claims"]):
                for k, ref in enumerate(claim["derivedFrom"]):
                    self._ref(listed, ref, f"/claims/{i}/derivedFrom/{k}")
                for k, review in enumerate(claim["reviewIds"]):
                    if review not in self.result_ids:
                        self._add("UNKNOWN_REFERENCE", LEDGER_FILE, f"/claims/{i}/reviewIds/{k}",
                                  f"review {review!r} is not a listed review result")
        if self.declared_profile != achieved:
            self._add("ACHIEVED_PROFILE_MISMATCH", MANIFEST_FILE, "/run/achievedProfile",
                      f"the manifest declares {self.declared_profile!r}; the complete artifacts "
                      f"achieve {achieved!r}")

    def _ref(self, listed: dict[str, str], ref: dict[str, str], pointer: str) -> None:
        digest = listed.get(ref["path"])
        if digest is None:
            self._add("UNKNOWN_REFERENCE", LEDGER_FILE, pointer + "/path",
                      f"{ref['path']} is not a listed artifact")
        elif digest != ref["digest"]:
            self._add("DIGEST_MISMATCH", LEDGER_FILE, pointer + "/digest",
                      f"{ref['path']} is listed with another digest")

    def remap(self, issues: list[Issue]) -> list[Issue]:
        """Issues of mapped documents at recon pointers, plus the recon layout's own."""
        out = []
        for found in issues:
            mapped = self.mapped.get(found.path)
            if mapped is not None:
                found = Issue(found.code, found.path, mapped.recon(found.pointer), found.message)
            out.append(found)
        return out + self.native

