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
even where the recon tool's own two patterns see none. Imports the base
modules and the packet modules.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.canonical import fingerprint
from assay.inputs import InputRefused, read_regular
from assay.packet.layout import (
    LEDGER_FILE,
    MANIFEST_FILE,
    MAX_PACKET_FILE_BYTES,
    PacketRoot,
    PathProblem,
    file_digest,
)
from assay.packet.model import (
    GAP_KINDS,
    TRANSITIONS,
    Artifact,
    Claim,
    Evidence,
    Gap,
    Issue,
    Link,
    PassOutcome,
    Review,
    Source,
    ValidatedRun,
    Validation,
)
from assay.packet.recon_contract import (
    LEGAL_TRANSITIONS,
    PROFILES,
    approval_input,
    check_artifact,
    is_digest,
    is_int,
    items,
    json_pointer,
    strings,
)
from assay.redaction import scan

__all__ = ["recon_redact", "validate_recon"]

_REQUIRED = {
    1: {"quick": ("map", "gather"),
        "standard": ("map", "gather", "semantic-verification", "adversarial", "coverage",
                     "reconciliation"),
        "thorough": ("map", "gather", "semantic-verification", "adversarial", "coverage",
                     "reconciliation", "redundant-gather", "redundant-verification",
                     "contradiction-resolution")},
    2: {"quick": ("map", "gather"),
        "standard": ("map", "gather", "semantic-verification", "adversarial", "coverage",
                     "reconciliation"),
        "thorough": ("map", "gather", "semantic-verification", "adversarial", "coverage",
                     "reconciliation", "redundant-gather", "redundant-verification")},
}
# Pass mode -> (artifact kind, the field that must match, its value).
_PASS = {
    "map": ("recon.raw-dossier", "mode", "map"),
    "gather": ("recon.raw-dossier", "mode", "gather"),
    "semantic-verification": ("recon.review-result", "reviewKind", "semantic"),
    "adversarial": ("recon.review-result", "reviewKind", "adversarial"),
    "coverage": ("recon.review-result", "reviewKind", "coverage"),
    "reconciliation": ("recon.review-result", "reviewKind", "reconciliation"),
    "redundant-verification": ("recon.review-result", "reviewKind", "redundant-verification"),
    "contradiction-resolution": ("recon.review-result", "reviewKind",
                                 "contradiction-resolution"),
}
_REVIEW_WAVE = {"semantic": "semantic-verification", "adversarial": "adversarial",
                "coverage": "coverage", "reconciliation": "reconciliation",
                "redundant-verification": "redundant-verification",
                "contradiction-resolution": "contradiction-resolution"}
_ASSURANCE = ("semantic", "adversarial", "coverage", "redundant-verification",
              "contradiction-resolution")
_BRIEF_MODE = {"semantic": "verify", "redundant-verification": "verify",
               "adversarial": "adversary", "contradiction-resolution": "adversary",
               "coverage": "coverage"}
_CONTROLLER = "controller:reconcile-ledger-v1"
_OUTCOME_CODES = ("PASS_FAILED", "PASS_OMITTED")

# The recon tool's own redaction, which a redacted-exact excerpt must equal.
_JS_SPACE = "[ \\t\\n\\r\\f\\v\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]"
_RECON_ASSIGN = re.compile(r"(?<![A-Za-z0-9_])(token|password|secret|api[_-]?key)" + _JS_SPACE
                           + r"*[:=]" + _JS_SPACE + r"*[^\s,;]+", re.IGNORECASE)
_RECON_TOKEN = re.compile(r"\b(?:sk|ghp|xox[baprs])[-_][A-Za-z0-9_-]{8,}\b", re.ASCII)
# Strings of one document are scanned as one text; this separator ends every
# rule's match (no rule spans a bare ";" line).
_JOIN = "\n;\n"


# Every span either rule rewrites holds one of these (lower case): texts
# without any are returned as they are, without a regular-expression pass.
_RECON_WORDS = ("token", "password", "secret", "api_key", "api-key", "apikey", "sk-", "sk_",
                "ghp-", "ghp_", "xox")


def recon_redact(text: str) -> str:
    """``text`` as the recon tool's redaction writes it (``key=[REDACTED]``, ``[REDACTED]``)."""
    low = text.lower()
    if not any(word in low for word in _RECON_WORDS):
        return text
    text = _RECON_ASSIGN.sub(lambda m: f"{m.group(1)}=[REDACTED]", text)
    return _RECON_TOKEN.sub("[REDACTED]", text)


def _secret_rules(values: Iterable[str]) -> tuple[str, ...]:
    """Rules that fire on any of ``values``: assay's shared set, plus the recon tool's own.

    Each distinct value is scanned once; ``sha256:`` digests match no rule and
    are skipped.
    """
    text = _JOIN.join(v for v in dict.fromkeys(values) if not is_digest(v))
    found = set(scan(text))
    if recon_redact(text) != text:
        found.add("recon_redaction")
    return tuple(sorted(found))


def _line_excerpt(content: str, lines: list[str], start: Any, end: Any) -> str | None:
    """Lines ``start..end`` (1-based, inclusive) as the recon tool reads them, or None.

    ``lines`` is ``content`` split as that tool splits it (CRLF read as LF).
    """
    if start is None and end is None:
        return content
    if not is_int(start) or not is_int(end) or start < 1 or end < start:
        return None
    if end > len(lines):
        return None
    return "\n".join(lines[int(start) - 1:int(end)])


def _js_string(value: Any) -> str:
    """``String(value ?? '')`` for a parsed JSON value."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return ",".join(_js_string(item) for item in value)
    if isinstance(value, dict):
        return "[object Object]"
    return str(value)


def _gap_names_mode(gap: Any, mode: str) -> bool:
    """A material PASS gap whose message names ``mode`` as a whole token."""
    return (type(gap) is dict and gap.get("code") in _OUTCOME_CODES
            and gap.get("material") is True and type(gap.get("message")) is str
            and re.search(r"(?:^|[^a-z-])" + re.escape(mode) + r"(?:$|[^a-z-])",
                          gap["message"]) is not None)


def _gap_names_lane(gap: Any, wave_id: Any, lane_id: Any) -> bool:
    return (type(gap) is dict and gap.get("code") in _OUTCOME_CODES
            and gap.get("material") is True and gap.get("waveId") == wave_id
            and gap.get("laneId") == lane_id)


def _has_lane_identity(gap: Any) -> bool:
    return type(gap) is dict and ("waveId" in gap or "laneId" in gap)


def _complete(value: dict[str, Any]) -> bool:
    return (("status" not in value or value["status"] == "complete")
            and ("outcome" not in value or value["outcome"] == "complete"))


def _lane_of(value: dict[str, Any]) -> Any:
    if value.get("kind") == "recon.raw-dossier":
        return value.get("laneId")
    if value.get("kind") == "recon.review-result":
        return value.get("reviewerLane")
    return None


def _same(left: Any, right: Any) -> bool:
    return (type(left) is dict and type(right) is dict and left.get("path") == right.get("path")
            and left.get("digest") == right.get("digest"))


def _digest(value: Any) -> str:
    return fingerprint(value)


def _same_json(a: Any, b: Any) -> bool:
    """Whether two parsed JSON values have the same canonical form (without hashing them).

    Equal canonical forms are equal Python values, so most pairs are settled
    by ``==`` and ``repr`` (which tells ``true`` from ``1``); only a pair
    those cannot settle (``1`` and ``1.0``, keys in another order) is walked.
    """
    if a != b:
        return False
    return type(a) is str or repr(a) == repr(b) or _same_walk(a, b)


def _same_walk(a: Any, b: Any) -> bool:
    if type(a) is bool or type(b) is bool:
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return a.keys() == b.keys() and all(_same_walk(a[k], b[k]) for k in a)
    if type(a) is list:
        return len(a) == len(b) and all(map(_same_walk, a, b))
    return bool(a == b)


def _obj(value: Any) -> dict[str, Any]:
    """``value`` if it is an object, else an empty one (hostile shapes never crash a rule)."""
    return value if type(value) is dict else {}


@dataclass(slots=True)
class _Entry:
    """One referenced artifact read: its reference, parsed value and packet path."""

    ref: dict[str, Any]
    value: Any
    path: str


@dataclass(slots=True)
class _State:
    """What the cross-file rules share while one packet is checked."""

    by_path: dict[str, _Entry] = field(default_factory=dict)
    by_id: dict[str, _Entry] = field(default_factory=dict)
    exact: set[str] = field(default_factory=set)
    passes: dict[str, list[str]] = field(default_factory=dict)
    active: set[str] = field(default_factory=set)
    reconciliation: dict[str, Any] | None = None
    prior: dict[str, Any] | None = None
    digests: dict[str, str] = field(default_factory=dict)
    # Indexes built once per parsed document (keyed by its identity).
    shown: dict[int, dict[str, dict[Any, dict[str, Any]]]] = field(default_factory=dict)
    records: dict[int, dict[Any, dict[str, Any]]] = field(default_factory=dict)
    by_claim: dict[int, dict[Any, list[dict[str, Any]]]] = field(default_factory=dict)
    texts: dict[int, tuple[bytes, str, str, list[str]]] = field(default_factory=dict)
    bound: dict[tuple[int, str, Any, int], bool] = field(default_factory=dict)
    outside: dict[str, bytes] = field(default_factory=dict)


class _ReconCheck:
    """One validation of one recon-layout packet. Use once."""

    def __init__(self, root: PacketRoot, raw: bytes, source_roots: Sequence[str]) -> None:
        self.root = root
        self.m: dict[str, Any] = {}
        self.version = 1
        self.raw = {MANIFEST_FILE: raw}
        self.issues: list[Issue] = []
        self.advisories: list[Issue] = []
        self.s = _State()
        self.s.digests[MANIFEST_FILE] = file_digest(raw)
        self.source_roots = tuple(os.path.realpath(r) for r in source_roots)
        self.L: dict[str, Any] | None = None
        self.ref_digests: dict[str, str] = {}
        # Set once any document breaks the recon contract: the packet is invalid,
        # and a cross-file rule may then meet values of any shape (see guarded).
        self.broken = False

    # -- reporting -------------------------------------------------------------
    def err(self, code: str, where: str, message: str, path: str = "",
            pointer: str = "") -> None:
        self.issues.append(Issue(code, path, pointer, message, where))

    def advise(self, code: str, where: str, message: str, path: str = "",
               pointer: str = "") -> None:
        self.advisories.append(Issue(code, path, pointer, message, where))

    def at_manifest(self, code: str, where: str, message: str) -> None:
        self.err(code, where, message, MANIFEST_FILE, json_pointer(where))

    def at_ledger(self, code: str, where: str, message: str) -> None:
        self.err(code, where, message, LEDGER_FILE, json_pointer(where))

    def _index(self, values: Any, key: str, wanted: Any) -> int | None:
        for index, value in enumerate(items(values)):
            if type(value) is dict and value.get(key) == wanted:
                return index
        return None

    def at_evidence(self, code: str, evidence_id: Any, message: str) -> None:
        index = self._index(self.L and self.L.get("evidence"), "id", evidence_id)
        self.err(code, str(evidence_id), message, LEDGER_FILE,
                 "" if index is None else f"/evidence/{index}")

    def at_claim(self, code: str, claim_id: Any, message: str, where: str | None = None) -> None:
        index = self._index(self.L and self.L.get("claims"), "id", claim_id)
        self.err(code, str(claim_id) if where is None else where, message, LEDGER_FILE,
                 "" if index is None else f"/claims/{index}")

    def at_source(self, code: str, source_id: Any, message: str) -> None:
        index = self._index(self.m.get("sources"), "id", source_id)
        self.err(code, f"source:{source_id}", message, MANIFEST_FILE,
                 "" if index is None else f"/sources/{index}")

    def at_artifact(self, code: str, artifact_id: Any, message: str) -> None:
        entry = self.s.by_id.get(artifact_id) if isinstance(artifact_id, str) else None
        self.err(code, str(artifact_id), message, entry.path if entry else "", "")

    # -- reading -----------------------------------------------------------------
    def rel(self, path: Any) -> str | None:
        """The packet path a recon reference names, or None when it leaves the packet."""
        if type(path) is not str or not path:
            return None
        base = str(self.root.root)
        full = os.path.normpath(os.path.join(base, path))
        if not full.startswith(base + os.sep):
            return None
        return os.path.relpath(full, base).replace(os.sep, "/")

    def read(self, rel: str) -> bytes | PathProblem:
        if rel in self.raw:
            return self.raw[rel]
        got = self.root.read(rel)
        if isinstance(got, bytes):
            self.raw[rel] = got
            self.s.digests[rel] = file_digest(got)
        return got

    @staticmethod
    def problem_code(problem: PathProblem, default: str) -> str:
        if problem.code in ("SYMLINK_PATH", "SYMLINK_ROOT_ALIAS"):
            return "SYMLINK_ESCAPE"
        if problem.code in ("NOT_REGULAR_FILE", "FILE_TOO_LARGE"):
            return problem.code
        return default

    def parse(self, data: bytes, path: str) -> Any:
        """JSON as the recon tool reads it (the last of repeated keys wins, invalid UTF-8
        replaced). Raises ValueError when it is not JSON at all; invalid UTF-8,
        which assay's own layout refuses, is an advisory.
        """
        def constant(name: str) -> Any:
            raise ValueError(f"{name} is not JSON")

        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = data.decode("utf-8", "replace")
            self.advise("INVALID_JSON", path, "not UTF-8: assay's own layout refuses it", path)
        return json.loads(text, parse_constant=constant)

    # -- phase 1: documents ---------------------------------------------------
    def shapes(self) -> bool:
        """Contract findings of manifest, ledger and run identity; whether the manifest holds."""
        m = self.m
        request = m.get("request")
        root = os.path.realpath(self.root.root)
        if type(request) is not dict or request.get("outputPath") != root:
            self.at_manifest("OUTPUT_ROOT_MISMATCH", "$.request.outputPath",
                             "the declared output path is not the canonical packet root")
        data = self.read(LEDGER_FILE)
        if isinstance(data, PathProblem):
            self.err(self.problem_code(data, "INVALID_LEDGER_JSON"), LEDGER_FILE, data.message,
                     LEDGER_FILE)
        else:
            try:
                self.L = self.parse(data, LEDGER_FILE)
            except ValueError as exc:
                self.err("INVALID_LEDGER_JSON", LEDGER_FILE, f"not JSON: {exc}"[:200], LEDGER_FILE)
        manifest_found = check_artifact(m)
        for found in manifest_found:
            self.at_manifest(found.code, found.at, found.message)
        if self.L is not None:
            ledger_found = check_artifact(self.L)
            self.broken = bool(manifest_found or ledger_found)
            for found in ledger_found:
                if found.at.startswith("claim:"):
                    self.at_claim(found.code, found.at[6:], found.message, where=found.at)
                else:
                    self.at_ledger(found.code, found.at, found.message)
        run = m.get("run")
        if type(self.L) is dict and type(run) is dict and run.get("id") != self.L.get("runId"):
            self.err("RUN_ID_MISMATCH", "$", "manifest and ledger run ids differ", LEDGER_FILE,
                     "/runId")
        execution = m.get("execution")
        approval = execution.get("approval") if type(execution) is dict else None
        if self.version == 1:
            if type(approval) is dict:
                assert type(execution) is dict
                if approval.get("fingerprint") != approval_input(execution):
                    self.at_manifest("APPROVAL_FINGERPRINT_MISMATCH",
                                     "$.execution.approval.fingerprint",
                                     "the approved execution envelope no longer matches its "
                                     "approval fingerprint")
            else:
                self.err("MISSING_APPROVAL_ENVELOPE", "$",
                         "the manifest holds no approval-bound execution", MANIFEST_FILE,
                         "/execution")
            return type(execution) is dict
        return type(approval) is dict and not manifest_found

    def references(self) -> None:
        """Read, hash and check every referenced artifact once (the recon tool's reference set)."""
        refs: list[Any] = list(items(self.m.get("artifacts")))
        L = self.L if type(self.L) is dict else {}
        refs += items(L.get("inputArtifacts"))
        refs += [e.get("provenance") for e in items(L.get("evidence")) if type(e) is dict
                 and e.get("provenance")]
        for claim in items(L.get("claims")):
            if type(claim) is dict:
                refs += items(claim.get("derivedFrom"))
        checked: set[tuple[str, Any]] = set()
        for ref in refs:
            if type(ref) is not dict or type(ref.get("path")) is not str:
                continue
            key = (ref["path"], ref.get("digest"))
            if key in checked:
                continue
            checked.add(key)
            self.reference(ref)
        if LEDGER_FILE not in self.s.by_path and type(self.m.get("artifacts")) is list:
            self.at_manifest("MISSING_CANONICAL_LEDGER_REFERENCE", "$.artifacts",
                             "the manifest binds claims.json by exact digest")

    def reference(self, ref: dict[str, Any]) -> None:
        path = ref["path"]
        rel = self.rel(path)
        if rel is None:
            self.err("PATH_ESCAPE", path, "the artifact path leaves the packet directory")
            return
        if rel != path:
            self.advise("INVALID_PATH", path, f"artifact path is not in its plain form {rel!r}",
                        MANIFEST_FILE)
        data = self.read(rel)
        if isinstance(data, PathProblem):
            self.err(self.problem_code(data, "MISSING_ARTIFACT"), path,
                     f"missing artifact {path}: {data.message}", rel)
            return
        actual = self.s.digests[rel]
        self.ref_digests[path] = actual
        if is_digest(ref.get("digest")) and actual != ref["digest"]:
            self.err("ARTIFACT_DIGEST_MISMATCH", path, f"{path} hashes to another digest", rel)
        if not path.endswith(".json"):
            return
        if rel == MANIFEST_FILE or (rel == LEDGER_FILE and self.L is not None):
            value = self.m if rel == MANIFEST_FILE else self.L
        else:
            try:
                value = self.parse(data, rel)
            except ValueError:
                self.err("MISSING_ARTIFACT", path, f"artifact {path} is not JSON", rel)
                return
            for found in check_artifact(value):
                self.broken = True
                self.err(found.code, f"{path}:{found.at}", found.message, rel,
                         json_pointer(found.at))
        entry = _Entry(ref, value, rel)
        self.s.by_path[path] = entry
        if type(value) is dict and type(value.get("id")) is str:
            if value["id"] in self.s.by_id:
                self.err("DUPLICATE_ARTIFACT_ID", path, f"artifact id {value['id']} is repeated",
                         rel)
            self.s.by_id[value["id"]] = entry

    def secrets(self) -> None:
        """No persisted string holds a raw secret (rule names reported, never values)."""
        documents: list[tuple[str, str, Any]] = [(MANIFEST_FILE, MANIFEST_FILE, self.m),
                                                 (LEDGER_FILE, LEDGER_FILE, self.L)]
        documents += [(path, e.path, e.value) for path, e in self.s.by_path.items()
                      if e.path not in (MANIFEST_FILE, LEDGER_FILE)]
        for where, rel, value in documents:
            rules = _secret_rules(strings(value))
            if rules:
                self.err("UNREDACTED_SECRET", where, "persisted packet data holds a secret-shaped "
                         f"span (rules: {', '.join(rules)})", rel)

    # -- phase 2: cross-file rules --------------------------------------------------
    def usable(self) -> bool:
        m, L = self.m, self.L
        return (type(L) is dict and all(type(m.get(k)) is list
                                        for k in ("sources", "artifacts", "gaps"))
                and (self.version == 1 or type(m.get("conditionOutcomes")) is list)
                and type(m.get("run")) is dict and type(m["run"].get("id")) is str
                and all(type(L.get(k)) is list for k in ("inputArtifacts", "evidence", "claims",
                                                         "unresolvedQuestions", "transitions"))
                and type(L.get("synthesis")) is dict
                and all(type(L["synthesis"].get(k)) is list
                        for k in ("keyClaimIds", "caveats", "unresolvedQuestionIds")))

    def claims_by_source(self) -> dict[str, set[Any]]:
        assert self.L is not None
        source_of = {e.get("id"): e.get("sourceId") for e in self.L["evidence"]
                     if type(e) is dict}
        out: dict[str, set[Any]] = {}
        for claim in self.L["claims"]:
            if type(claim) is not dict:
                continue
            for link in items(claim.get("evidence")):
                sid = source_of.get(link.get("evidenceId")) if type(link) is dict else None
                if isinstance(sid, str):
                    out.setdefault(sid, set()).add(claim.get("id"))
        return out

    def source_gaps(self) -> None:
        assert self.L is not None
        affected_by = self.claims_by_source()
        status = {c.get("id"): c.get("status") for c in self.L["claims"] if type(c) is dict}
        for source in self.m["sources"]:
            if type(source) is not dict or (source.get("available") is True
                                            and source.get("validationState") == "pinned"):
                continue
            sid = source.get("id")
            affected = affected_by.get(sid, set()) if isinstance(sid, str) else set()
            gap = next((g for g in self.m["gaps"] if type(g) is dict
                        and sid in items(g.get("sourceIds"))
                        and affected <= {x for x in items(g.get("claimIds"))
                                            if isinstance(x, str)}), None)
            if gap is None:
                self.at_source("MISSING_SOURCE_GAP", sid,
                               f"ineligible source {sid} needs a gap naming every affected claim")
            elif gap.get("material") is not True or self.m["run"].get("status") != "partial":
                self.at_source("SOURCE_GAP_REQUIRES_MATERIAL_PARTIAL", sid,
                               f"ineligible source {sid} needs a material gap and a partial run")
            if any(status.get(cid) in ("supported", "verified") for cid in affected):
                self.at_source("CLAIM_ASSURANCE_INVALID", sid,
                               f"ineligible source {sid} cannot support assured claims")

    def evidence(self) -> None:
        assert self.L is not None
        sources = {s.get("id"): s for s in self.m["sources"] if type(s) is dict}
        citing_by: dict[Any, list[dict[str, Any]]] = {}
        for claim in self.L["claims"]:
            if type(claim) is dict:
                for eid in {x.get("evidenceId") for x in items(claim.get("evidence"))
                            if type(x) is dict and isinstance(x.get("evidenceId"), str)}:
                    citing_by.setdefault(eid, []).append(claim)
        for record in self.L["evidence"]:
            if type(record) is not dict:
                continue
            source = sources.get(record.get("sourceId"))
            if source is None:
                self.at_evidence("MISSING_SOURCE", record.get("id"),
                                 f"unknown source {str(record.get('sourceId'))[:80]}")
                continue
            citing = citing_by.get(record.get("id"), [])
            audit = any(type(g) is dict and source.get("id") in items(g.get("sourceIds"))
                        and all(c.get("id") in items(g.get("claimIds")) for c in citing)
                        and all(c.get("status") not in ("supported", "verified")
                                for c in citing)
                        for g in self.m["gaps"])
            if self.reopen(source, record, audit):
                self.s.exact.add(record["id"])

    def _provenance(self, source: dict[str, Any]) -> bool:
        kind = source.get("kind")
        if kind == "repository":
            return (type(source.get("root")) is str and type(source.get("revision")) is str
                    and type(source.get("contentHashes")) is dict)
        if kind == "file":
            return type(source.get("path")) is str and is_digest(source.get("contentHash"))
        if kind == "url":
            state = source.get("validatorState")
            return type(source.get("url")) is str and (
                (type(source.get("capturePath")) is str and is_digest(source.get("captureDigest")))
                or (type(state) is dict and type(state.get("capturePath")) is str
                    and is_digest(state.get("captureDigest"))
                    and (type(state.get("etag")) is str
                         or type(state.get("lastModified")) is str)))
        if kind == "command-output":
            return (type(source.get("argv")) is list and type(source.get("cwd")) is str
                    and is_int(source.get("exitStatus"))
                    and type(source.get("outputPath")) is str
                    and is_digest(source.get("outputDigest"))
                    and type(source.get("environmentNames")) is list)
        if kind == "connected-resource":
            return (type(source.get("system")) is str and type(source.get("resourceId")) is str
                    and (type(source.get("resourceVersion")) is str
                         or type(source.get("retrievalToken")) is str)
                    and type(source.get("capturePath")) is str
                    and is_digest(source.get("captureDigest")))
        return False

    def read_outside(self, path: str, eid: Any, base: str | None = None) -> bytes | None:
        """A ``file`` or ``repository`` source file, only inside a configured source root.

        No component below the root may be a symlink (``SYMLINK_ESCAPE``);
        the file is a bounded regular file opened without following links.
        """
        target = os.path.normpath(path)
        if base is not None and not (target + os.sep).startswith(os.path.normpath(base) + os.sep):
            self.at_evidence("PATH_ESCAPE", eid, "the repository locator leaves its root")
            return None
        root = next((r for r in self.source_roots if target.startswith(r + os.sep)), None)
        if not os.path.isabs(target) or root is None:
            self.at_evidence("SOURCE_UNAVAILABLE", eid, "the source lies outside every "
                             "configured source root (packet validate --source-root)")
            return None
        step = root
        for part in os.path.relpath(target, root).split(os.sep)[:-1]:
            step = os.path.join(step, part)
            try:
                if stat.S_ISLNK(os.lstat(step).st_mode):
                    self.at_evidence("SYMLINK_ESCAPE", eid, "the source path holds a symlink")
                    return None
            except OSError:
                break
        if target in self.s.outside:
            return self.s.outside[target]
        try:
            data = read_regular(target, limit=MAX_PACKET_FILE_BYTES, label="the source")
            self.s.outside[target] = data
            return data
        except InputRefused as refused:
            code = {"symlink": "SYMLINK_ESCAPE", "not_regular": "NOT_REGULAR_FILE",
                    "too_large": "FILE_TOO_LARGE"}.get(refused.reason, "SOURCE_UNAVAILABLE")
            self.at_evidence(code, eid, f"the pinned source could not be reopened: "
                             f"{refused.message}")
            return None

    def read_capture(self, path: Any, eid: Any) -> bytes | None:
        rel = self.rel(path)
        if rel is None:
            self.at_evidence("SOURCE_UNAVAILABLE", eid, "the capture path leaves the packet")
            return None
        data = self.read(rel)
        if isinstance(data, PathProblem):
            self.at_evidence(self.problem_code(data, "SOURCE_UNAVAILABLE"), eid,
                             f"the pinned source could not be reopened: {data.message}")
            return None
        return data

    def reopen(self, source: dict[str, Any], record: dict[str, Any], audit: bool) -> bool:
        """Whether ``record`` reads exactly from its source now (the recon tool's reopening)."""
        eid = record.get("id")
        if source.get("available") is not True or source.get("validationState") != "pinned":
            if not audit:
                self.at_source("INELIGIBLE_SOURCE_STATE", source.get("id"),
                               f"source {source.get('id')} is not available and pinned")
            return False
        if not self._provenance(source):
            self.at_source("INSUFFICIENT_PROVENANCE", source.get("id"),
                           f"source {source.get('id')} lacks reopenable provenance")
            return False
        locator = record.get("locator")
        kind = source.get("kind")
        if type(locator) is not dict or locator.get("kind") != kind:
            self.at_evidence("INVALID_LOCATOR", eid, "the locator kind is not its source's")
            return False
        validation = record.get("locatorValidation")
        declared = validation.get("status") if type(validation) is dict else None
        if declared not in ("exact", "redacted-exact"):
            return False
        if record.get("observedAt") != source.get("observedAt"):
            self.at_evidence("SOURCE_VERSION_MISMATCH", eid,
                             "the evidence observation time is not the pinned source's")
            return False
        mismatch = self.identity(kind, source, locator)
        if mismatch:
            self.at_evidence(*mismatch)
            return False
        data, expected = self.source_bytes(kind, source, locator, eid)
        if data is None:
            return False
        digest, text, lines = self.text_of(data)
        if digest != expected:
            self.at_evidence("SOURCE_DRIFT", eid, "the pinned source's digest changed")
            return False
        return self.located(kind, locator, record, text, lines, declared)

    def text_of(self, data: bytes) -> tuple[str, str, list[str]]:
        """A source's digest, text and lines, computed once per source read."""
        known = self.s.texts.get(id(data))
        if known is None or known[0] is not data:
            text = data.decode("utf-8", "replace")
            known = (data, file_digest(data), text, text.replace("\r\n", "\n").split("\n"))
            self.s.texts[id(data)] = known
        return known[1], known[2], known[3]

    def identity(self, kind: Any, source: dict[str, Any], locator: dict[str, Any]
                 ) -> tuple[str, Any, str] | None:
        """The locator must name its source's identity and observation, as bound."""
        eid = None
        checks: list[tuple[bool, str, str]] = []
        if kind == "repository":
            checks = [(locator.get("revision") != source.get("revision"),
                       "SOURCE_VERSION_MISMATCH", "the repository revision changed")]
        elif kind == "file":
            checks = [(type(locator.get("path")) is not str
                       or os.path.normpath(str(locator.get("path")))
                       != os.path.normpath(str(source.get("path"))),
                       "SOURCE_IDENTITY_MISMATCH", "the file locator is not its source's path")]
        elif kind == "url":
            state = source.get("validatorState")
            token = _digest({"etag": state.get("etag"), "lastModified": state.get("lastModified")}
                            ) if type(state) is dict else None
            checks = [(locator.get("url") != source.get("url"), "SOURCE_VERSION_MISMATCH",
                       "the URL identity changed"),
                      (locator.get("retrievedAt") != source.get("observedAt"),
                       "SOURCE_VERSION_MISMATCH", "the URL observation time changed"),
                      (token is not None and locator.get("validatorToken") != token,
                       "SOURCE_VERSION_MISMATCH", "the URL validator token changed")]
        elif kind == "command-output":
            checks = [(locator.get("artifactPath") != source.get("outputPath"),
                       "SOURCE_VERSION_MISMATCH", "the command artifact changed"),
                      (locator.get("commandDigest") != _digest(source.get("argv")),
                       "SOURCE_VERSION_MISMATCH", "the command identity changed")]
        elif kind == "connected-resource":
            checks = [(locator.get("system") != source.get("system")
                       or locator.get("resourceId") != source.get("resourceId"),
                       "SOURCE_VERSION_MISMATCH", "the connected resource identity changed"),
                      (bool(source.get("resourceVersion"))
                       and locator.get("resourceVersion") != source.get("resourceVersion"),
                       "SOURCE_VERSION_MISMATCH", "the connected resource version changed"),
                      (bool(source.get("retrievalToken"))
                       and locator.get("retrievalToken") != source.get("retrievalToken"),
                       "SOURCE_VERSION_MISMATCH", "the retrieval token changed"),
                      (locator.get("retrievedAt") != source.get("observedAt"),
                       "SOURCE_VERSION_MISMATCH", "the resource observation time changed")]
        for failed, code, message in checks:
            if failed:
                return code, eid, message
        return None

    def source_bytes(self, kind: Any, source: dict[str, Any], locator: dict[str, Any],
                     eid: Any) -> tuple[bytes | None, Any]:
        if kind == "repository":
            root = str(source["root"])
            path = os.path.join(root, str(locator.get("path")))
            return (self.read_outside(path, eid, base=root),
                    source["contentHashes"].get(locator.get("path")))
        if kind == "file":
            return self.read_outside(str(source["path"]), eid), source["contentHash"]
        if kind == "url":
            state = source.get("validatorState") or {}
            return (self.read_capture(source.get("capturePath", state.get("capturePath")), eid),
                    source.get("captureDigest", state.get("captureDigest")))
        if kind == "command-output":
            return self.read_capture(source.get("outputPath"), eid), source.get("outputDigest")
        return self.read_capture(source.get("capturePath"), eid), source.get("captureDigest")

    def located(self, kind: Any, locator: dict[str, Any], record: dict[str, Any], content: str,
                lines: list[str], declared: str) -> bool:
        eid = record.get("id")
        observed: str | None = content
        if kind in ("repository", "file", "command-output"):
            observed = _line_excerpt(content, lines, locator.get("lineStart"),
                                     locator.get("lineEnd"))
            if observed is None:
                self.at_evidence("INVALID_LOCATOR_RANGE", eid, "the locator line range is invalid")
                return False
        elif kind == "connected-resource" and locator.get("fieldOrSection"):
            try:
                parsed = json.loads(content)
                observed = _js_string(parsed.get(str(locator["fieldOrSection"]))
                                      if type(parsed) is dict else None)
            except ValueError:
                observed = content
        assert observed is not None
        excerpt = record.get("displayExcerpt")
        if type(excerpt) is not str:
            return False
        if declared == "redacted-exact":
            redaction = record.get("redaction")
            if (type(redaction) is not dict or redaction.get("applied") is not True
                    or redaction.get("originalPersisted") is not False
                    or "contentHash" in record
                    or recon_redact(observed).strip() != excerpt.strip()):
                self.at_evidence("INVALID_REDACTED_EVIDENCE", eid,
                                 "the redacted-exact evidence does not reproduce from its source")
                return False
            return True
        if recon_redact(observed) != observed:
            self.at_evidence("UNREDACTED_SECRET", eid, "the located source text holds a "
                             "secret-shaped span: persist it redacted-exact")
            return False
        if excerpt not in observed:
            self.at_evidence("LOCATOR_EXCERPT_MISMATCH", eid,
                             "the display excerpt is not in the located source text")
            return False
        if "contentHash" in record and record["contentHash"] != _digest(excerpt):
            self.at_evidence("EVIDENCE_DIGEST_MISMATCH", eid, "the excerpt's digest changed")
            return False
        if excerpt != observed:
            self.advise("LOCATOR_STATE_MISMATCH", str(eid), "the excerpt is part of the located "
                        "text, not all of it: assay's own layout derives it invalid",
                        LEDGER_FILE)
        return True

    # -- lanes, routing and passes -----------------------------------------------
    def waves(self) -> list[dict[str, Any]]:
        execution = self.m.get("execution")
        waves = execution.get("waves") if type(execution) is dict else None
        return [w for w in items(waves) if type(w) is dict]

    def lanes(self) -> dict[str, tuple[dict[str, Any], dict[str, Any], int, int]]:
        out: dict[str, tuple[dict[str, Any], dict[str, Any], int, int]] = {}
        for w, wave in enumerate(self.waves()):
            for n, lane in enumerate(items(wave.get("lanes"))):
                if type(lane) is dict and isinstance(lane.get("laneId"), str):
                    out[lane["laneId"]] = (wave, lane, w, n)
        return out

    def artifacts(self) -> Iterable[tuple[str, dict[str, Any], _Entry]]:
        for aid, entry in self.s.by_id.items():
            if type(entry.value) is dict:
                yield aid, entry.value, entry

    def conditions(self) -> None:
        """Routing conditions of a version-2 manifest: outcomes, evidence, activation."""
        execution = self.m.get("execution")
        conditions = [c for c in items(execution.get("conditions") if type(execution) is dict
                                       else None) if type(c) is dict]
        lanes = {lid: wave for lid, (wave, *_rest) in self.lanes().items()}
        outcomes = {o.get("conditionId"): o for o in self.m["conditionOutcomes"]
                    if type(o) is dict}
        known = {c.get("conditionId") for c in conditions}
        for stated in outcomes.values():
            if stated.get("conditionId") not in known:
                self.at_manifest("UNKNOWN_CONDITION_OUTCOME", "$.conditionOutcomes",
                                 "an outcome names an unknown condition")
        for condition in conditions:
            cid = condition.get("conditionId")
            outcome = outcomes.get(cid)
            where = f"condition:{cid}"
            if outcome is None:
                self.err("MISSING_CONDITION_OUTCOME", where, f"condition {cid} has no final "
                         "disposition", MANIFEST_FILE, "/conditionOutcomes")
                continue
            evidence: list[dict[str, Any]] = []
            seen: set[Any] = set()
            rejected = False
            for ref in items(outcome.get("evidence")):
                path = ref.get("path") if type(ref) is dict else None
                entry = self.s.by_path.get(path) if isinstance(path, str) else None
                listed = any(_same(a, ref) for a in self.m["artifacts"])
                if not listed or entry is None or not _same(entry.ref, ref):
                    self.err("INVALID_CONDITION_EVIDENCE", str(path), "condition evidence is "
                             "not an exact validated artifact", MANIFEST_FILE, "/conditionOutcomes")
                    rejected = True
                    continue
                value = entry.value if type(entry.value) is dict else {}
                wave = lanes.get(_lane_of(value))
                if value.get("runId") != self.m["run"]["id"]:
                    code, why = "CONDITION_EVIDENCE_RUN_MISMATCH", "belongs to another run"
                elif wave is None or wave.get("waveId") not in items(condition.get("afterWaveIds")):
                    code, why = "INVALID_CONDITION_EVIDENCE", "is not from an approved predecessor"
                elif not _complete(value):
                    code, why = "INCOMPLETE_CONDITION_PREDECESSOR", "is not complete"
                else:
                    evidence.append(value)
                    seen.add(wave.get("waveId"))
                    continue
                self.err(code, str(path), f"condition evidence {why}", entry.path)
                rejected = True
            triggered = outcome.get("disposition") == "triggered"
            if triggered and not rejected:
                if any(w not in seen for w in items(condition.get("afterWaveIds"))):
                    self.err("INCOMPLETE_CONDITION_PREDECESSOR", where, "the condition binds no "
                             "complete evidence of every predecessor", MANIFEST_FILE,
                             "/conditionOutcomes")
                if not self.predicate(condition, evidence):
                    self.err("CONDITION_PREDICATE_UNSATISFIED", where, "the condition lacks typed "
                             "evidence of its predicate", MANIFEST_FILE, "/conditionOutcomes")
            if triggered:
                self.s.active.add(str(condition.get("destinationWaveId")))
        for aid, value, _entry in self.artifacts():
            wave = lanes.get(_lane_of(value))
            if value.get("runId") == self.m["run"]["id"] and wave is not None \
                    and wave.get("conditional") is True and wave.get("waveId") not in self.s.active:
                self.at_artifact("INACTIVE_CONDITIONAL_ARTIFACT", aid,
                                 "an inactive conditional wave cannot contribute artifacts")

    @staticmethod
    def predicate(condition: dict[str, Any], evidence: list[dict[str, Any]]) -> bool:
        if condition.get("predicate") == "insufficient-evidence":
            return any(items(a.get("gaps")) or items(a.get("unresolvedIssues"))
                       or any(type(f) is dict and f.get("material") is True
                              for f in items(a.get("coverageFindings"))) for a in evidence)
        if condition.get("predicate") == "unresolved-material-challenge":
            return any(a.get("reviewKind") == "adversarial" and items(a.get("unresolvedIssues"))
                       and any(type(d) is dict and d.get("disposition") == "challenged"
                               for d in items(a.get("dispositions"))) for a in evidence)
        return False

    def lane_gap(self, wave: dict[str, Any], lane_id: str) -> bool:
        """Whether a material PASS gap accounts for an approved lane that wrote nothing."""
        gaps = self.m["gaps"]
        if self.version == 1:
            return any(_gap_names_mode(g, str(wave.get("mode"))) for g in gaps)
        if any(_gap_names_lane(g, wave.get("waveId"), lane_id) for g in gaps):
            return True
        if wave.get("conditional") is True or len(items(wave.get("lanes"))) != 1:
            return False
        same_mode = [w for w in self.waves() if w.get("mode") == wave.get("mode")]
        return len(same_mode) == 1 and any(not _has_lane_identity(g)
                                           and _gap_names_mode(g, str(wave.get("mode")))
                                           for g in gaps)

    def approved_lanes(self) -> None:
        lanes = self.lanes()
        run_id = self.m["run"]["id"]
        written: set[str] = set()
        for aid, value, entry in self.artifacts():
            if value.get("runId") != run_id:
                continue
            if value.get("kind") == "recon.review-result" \
                    and value.get("reviewKind") == "reconciliation" \
                    and value.get("reviewerLane") == _CONTROLLER:
                continue
            lane_id = _lane_of(value)
            if lane_id is None:
                continue
            approved = lanes.get(lane_id) if isinstance(lane_id, str) else None
            wave = approved[0] if approved else {}
            if value.get("kind") == "recon.raw-dossier":
                fits = (approved is not None and wave.get("waveId") == value.get("waveId")
                        and (value.get("mode") == "gather" if wave.get("mode") == "redundant-gather"
                             else wave.get("mode") == value.get("mode")))
            else:
                fits = approved is not None and \
                    _REVIEW_WAVE.get(str(value.get("reviewKind"))) == wave.get("mode")
            if not fits:
                self.at_artifact("UNAPPROVED_LANE", aid, f"artifact {aid} was not written by an "
                                 "approved lane of a matching wave")
                continue
            assert approved is not None
            root = approved[1].get("writeRoot")
            path = entry.ref["path"]
            if not isinstance(root, str) or (path != root and not path.startswith(root + "/")):
                self.at_artifact("LANE_WRITE_PATH_VIOLATION", aid,
                                 f"artifact {aid} is outside its lane's write root")
            if _complete(value):
                written.add(str(lane_id))
        for lane_id, (wave, lane, w, n) in lanes.items():
            if lane.get("writeRoot") in (LEDGER_FILE, MANIFEST_FILE):
                self.advise("INVALID_PATH", f"lane:{lane_id}", f"lane {lane_id} writes a "
                            "canonical file: assay's own envelopes refuse such a write root",
                            MANIFEST_FILE, f"/execution/waves/{w}/lanes/{n}/writeRoot")
            if (wave.get("conditional") is True and (self.version == 1 or wave.get("waveId")
                                                     not in self.s.active)) \
                    or wave.get("mode") == "compile" or lane_id in written:
                continue
            if not self.lane_gap(wave, lane_id):
                self.err("MISSING_LANE_OUTCOME", f"lane:{lane_id}",
                         f"approved lane {lane_id} has neither a complete result nor a material "
                         "outcome gap naming it", MANIFEST_FILE,
                         f"/execution/waves/{w}/lanes/{n}")

    def collect_passes(self) -> None:
        run_id = self.m["run"]["id"]
        owners = {lid: wave for lid, (wave, *_r) in self.lanes().items()}
        passes: dict[str, list[str]] = {}
        for aid, value, _entry in self.artifacts():
            if value.get("runId") != run_id or not _complete(value):
                continue
            wave = owners.get(_lane_of(value))
            if wave is not None and wave.get("conditional") is True and self.version == 2 \
                    and wave.get("waveId") not in self.s.active:
                continue
            if self.version == 2 and value.get("kind") == "recon.raw-dossier" \
                    and value.get("mode") == "gather":
                if wave is not None and wave.get("waveId") == value.get("waveId") \
                        and wave.get("mode") in ("gather", "redundant-gather"):
                    passes.setdefault(str(wave["mode"]), []).append(aid)
                continue
            for mode, (kind, key, wanted) in _PASS.items():
                if value.get("kind") == kind and value.get(key) == wanted:
                    passes.setdefault(mode, []).append(aid)
        if self.version == 1:
            lanes = {self.s.by_id[a].value.get("laneId") for a in passes.get("gather", [])}
            if len(lanes) >= 2:
                passes["redundant-gather"] = list(passes["gather"])
        for ids in passes.values():
            ids.sort()
        self.s.passes = passes
        if self.version == 2:
            self.contradictory_passes(owners)

    def contradictory_passes(self, owners: dict[str, dict[str, Any]]) -> None:
        for mode in list(self.s.passes):
            lanes = [(owners[lid], lid) for aid in self.s.passes[mode]
                     if (lid := _lane_of(self.s.by_id[aid].value)) in owners]
            gap = next((g for g in self.m["gaps"] for wave, lid in lanes
                        if (_gap_names_lane(g, wave.get("waveId"), lid)
                            if _has_lane_identity(g) else
                            wave.get("mode") == mode and self.lane_gap_legacy(g, wave))), None)
            if gap is not None:
                del self.s.passes[mode]
                self.err("CONTRADICTORY_PASS_OUTCOME", f"pass:{mode}",
                         f"complete {mode} artifacts contradict a material outcome gap",
                         MANIFEST_FILE, "/gaps")

    def lane_gap_legacy(self, gap: Any, wave: dict[str, Any]) -> bool:
        same_mode = [w for w in self.waves() if w.get("mode") == wave.get("mode")]
        return (len(items(wave.get("lanes"))) == 1 and len(same_mode) == 1
                and _gap_names_mode(gap, str(wave.get("mode"))))

    def achieved(self) -> str | None:
        found = None
        for profile in PROFILES:
            if all(mode in self.s.passes for mode in _REQUIRED[self.version][profile]):
                found = profile
        return found

    def pass_outcomes(self) -> None:
        requested = self.m["run"].get("requestedProfile")
        waves = self.waves()
        for mode in _REQUIRED[self.version].get(str(requested), ()):
            if mode in self.s.passes:
                continue
            named = any(
                (_gap_names_mode(g, mode) if not (self.version == 2 and _has_lane_identity(g))
                 else any(w.get("mode") == mode and w.get("waveId") == g.get("waveId")
                          and any(type(x) is dict and x.get("laneId") == g.get("laneId")
                                  for x in items(w.get("lanes")))
                          and _gap_names_lane(g, g.get("waveId"), g.get("laneId"))
                          for w in waves))
                for g in self.m["gaps"])
            if not named:
                self.err("MISSING_PASS_OUTCOME_EVIDENCE", f"pass:{mode}",
                         f"the requested {requested} profile lacks a complete {mode} result and "
                         "a material PASS_FAILED or PASS_OMITTED gap naming it", MANIFEST_FILE,
                         "/gaps")

    def assurance_ids(self) -> set[str]:
        return {aid for aid, value, _e in self.artifacts()
                if value.get("kind") == "recon.review-result"
                and value.get("runId") == self.m["run"]["id"]
                and value.get("reviewKind") in _ASSURANCE and _complete(value)}

    def terminal(self, required: bool) -> None:
        complete = self.s.passes.get("reconciliation", [])
        terminal = complete[0] if complete else None
        results = [v for _a, v, _e in self.artifacts() if v.get("kind") == "recon.review-result"
                   and v.get("reviewKind") == "reconciliation"]
        if len(results) != (1 if required else 0) or (required and results[0].get("id")
                                                      != terminal):
            where = terminal or "$.artifacts"
            self.err("SHADOW_RECONCILIATION", where, "the packet holds exactly its one complete "
                     "terminal reconciliation", MANIFEST_FILE, "/artifacts")
        entry = self.s.by_id.get(terminal) if terminal else None
        self.s.reconciliation = entry.value if entry else None
        if self.s.reconciliation is not None:
            bound = self.s.reconciliation.get("inputLedger")
            prior = next((e.value for e in self.s.by_path.values() if _same(e.ref, bound)
                          and type(e.value) is dict and e.value.get("kind") == "recon.claim-ledger"),
                         None)
            self.s.prior = prior

    # -- briefs and reviews -----------------------------------------------------------
    def brief_of(self, result: dict[str, Any]) -> dict[str, Any] | None:
        entry = self.s.by_path.get(str((result.get("brief") or {}).get("path"))) \
            if type(result.get("brief")) is dict else None
        if entry is None or not _same(entry.ref, result.get("brief")) or type(entry.value) \
                is not dict or entry.value.get("kind") != "recon.review-brief":
            return None
        return entry.value

    def shown(self, brief: dict[str, Any], key: str) -> dict[Any, dict[str, Any]]:
        """The entries of ``brief[key]`` by id, the first of each (computed once per brief)."""
        cache = self.s.shown.setdefault(id(brief), {})
        if key not in cache:
            entries: dict[Any, dict[str, Any]] = {}
            for entry in items(brief.get(key)):
                if type(entry) is dict:
                    entries.setdefault(entry.get("id"), entry)
            cache[key] = entries
        return cache[key]

    def records(self, ledger: dict[str, Any]) -> dict[Any, dict[str, Any]]:
        """A ledger's evidence records by id (computed once per ledger)."""
        if id(ledger) not in self.s.records:
            self.s.records[id(ledger)] = {e.get("id"): e for e in items(ledger.get("evidence"))
                                          if type(e) is dict}
        return self.s.records[id(ledger)]

    def binds(self, brief: dict[str, Any], kind: str, claim: dict[str, Any],
              ledger: dict[str, Any]) -> bool:
        """Whether ``brief`` shows ``claim`` exactly as its kind's projection of ``ledger``."""
        memo = (id(brief), kind, claim.get("id"), id(ledger))
        if memo not in self.s.bound:
            self.s.bound[memo] = self._binds(brief, kind, claim, ledger)
        return self.s.bound[memo]

    def _binds(self, brief: dict[str, Any], kind: str, claim: dict[str, Any],
               ledger: dict[str, Any]) -> bool:
        key = ("provisionalStatements" if kind in ("adversarial", "contradiction-resolution")
               else "claims")
        shown = self.shown(brief, key).get(claim.get("id"))
        if shown is None or shown.get("statement") != claim.get("statement"):
            return False
        if kind not in ("semantic", "redundant-verification"):
            return sorted(shown) == ["id", "statement"]
        records = self.records(ledger)
        expected = []
        for link in items(claim.get("evidence")):
            record = records.get(link.get("evidenceId")) if type(link) is dict else None
            if record is None:
                return False
            expected.append({"id": record.get("id"), "sourceId": record.get("sourceId"),
                             "displayExcerpt": record.get("displayExcerpt"),
                             "locator": record.get("locator")})
        if not _same_json(shown.get("evidence"), expected):
            return False
        cited = {x["sourceId"] for x in expected}
        sources = [s for s in self.m["sources"] if type(s) is dict and s.get("id") in cited]
        return _same_json(brief.get("sources"), sources)

    def review_bindings(self) -> None:
        assert self.L is not None
        claims = {c.get("id"): c for c in self.L["claims"] if type(c) is dict}
        prior = self.s.prior or {}
        prior_claims = {c.get("id"): c for c in items(prior.get("claims")) if type(c) is dict}
        owners = {ch.get("id"): c.get("id") for c in self.L["claims"] if type(c) is dict
                  for ch in items(c.get("challenges")) if type(ch) is dict}
        for aid, result, _entry in self.artifacts():
            kind = result.get("reviewKind")
            if result.get("kind") != "recon.review-result" or kind == "reconciliation":
                continue
            brief = self.brief_of(result)
            if brief is None or brief.get("mode") != _BRIEF_MODE.get(str(kind)) \
                    or brief.get("runId") != self.L.get("runId"):
                self.at_artifact("REVIEW_BRIEF_MISMATCH", aid,
                                 f"review {aid} does not resolve its exact typed brief")
                continue
            if self.version == 2:
                self.brief_entries(aid, brief, str(kind), claims, prior_claims)
            key = "provisionalStatements" if brief.get("mode") == "adversary" else "claims"
            shown = {x.get("id") for x in items(brief.get(key)) if type(x) is dict}
            hidden = [c for c in (prior_claims or claims) if c not in shown]
            if hidden:
                self.advise("REVIEW_BRIEF_MISMATCH", aid, f"the brief of review {aid} shows "
                            f"{len(shown)} of {len(shown) + len(hidden)} prior claims: assay's "
                            "own briefs show every claim", self.s.by_id[aid].path)
            seen: set[Any] = set()
            for item in items(result.get("dispositions")):
                cid = item.get("claimId") if type(item) is dict else None
                claim = prior_claims.get(cid) or claims.get(cid)
                ledger = prior if cid in prior_claims else self.L
                if claim is None or cid in seen or not self.binds(brief, str(kind), claim, ledger):
                    self.at_artifact("REVIEW_BRIEF_MISMATCH", aid, f"review {aid} dispositions do "
                                     "not match claim-bearing brief projections")
                seen.add(cid)
            supplied = {e.get("id") for e in items(result.get("newEvidence")) if type(e) is dict}
            disposed = {d.get("claimId") for d in items(result.get("dispositions"))
                        if type(d) is dict}
            keys: set[str] = set()
            associated: set[Any] = set()
            for link in items(result.get("evidenceAssociations")):
                key = _digest(link)
                if type(link) is not dict or key in keys \
                        or link.get("evidenceId") not in supplied \
                        or link.get("claimId") not in disposed \
                        or (link.get("claimId") not in prior_claims
                            and link.get("claimId") not in claims):
                    self.at_artifact("REVIEW_EVIDENCE_ASSOCIATION_MISMATCH", aid,
                                     f"review {aid} associations do not bind supplied evidence "
                                     "to disposed claims")
                keys.add(key)
                associated.add(link.get("evidenceId") if type(link) is dict else None)
            if supplied != associated:
                self.at_artifact("REVIEW_EVIDENCE_ASSOCIATION_MISMATCH", aid,
                                 f"review {aid} leaves new evidence unassociated")
            if kind == "contradiction-resolution":
                for item in items(result.get("contradictionDispositions")):
                    item = item if type(item) is dict else {}
                    owner = owners.get(item.get("contradictionId"))
                    ids = items(item.get("claimIds"))
                    if owner is None or owner not in ids or any(x not in claims for x in ids):
                        self.at_artifact("CONTRADICTION_BINDING_MISMATCH", aid,
                                         "a contradiction is not bound to its affected claims")

    def brief_entries(self, aid: str, brief: dict[str, Any], kind: str,
                      claims: dict[Any, dict[str, Any]],
                      prior_claims: dict[Any, dict[str, Any]]) -> None:
        """Every entry a version-2 brief shows is a distinct, exactly projected ledger claim."""
        key = "provisionalStatements" if brief.get("mode") == "adversary" else "claims"
        ids = [x.get("id") if type(x) is dict else None for x in items(brief.get(key))]
        if len(set(map(str, ids))) != len(ids):
            self.at_artifact("REVIEW_BRIEF_MISMATCH", aid, f"review {aid} brief repeats a claim")
        prior = self.s.prior or {}
        assert self.L is not None
        for cid in ids:
            claim = prior_claims.get(cid) or claims.get(cid)
            ledger = prior if cid in prior_claims else self.L
            if claim is None or not self.binds(brief, kind, claim, ledger):
                self.at_artifact("REVIEW_BRIEF_MISMATCH", aid, f"review {aid} brief shows an entry "
                                 "that is not an exact ledger claim projection")
                break

    # -- the one reconciliation ----------------------------------------------------
    def reconciliation(self, assurance: set[str], required: bool) -> None:
        assert self.L is not None
        L, rec, prior = self.L, self.s.reconciliation, self.s.prior
        revision = L.get("revision")
        if not is_int(revision) or revision <= 1:
            if required:
                self.at_ledger("RECONCILIATION_REVISION_MISMATCH", "$.revision",
                               "a standard or thorough ledger is the next revision of its prior")
            return
        if rec is None or rec.get("status") != "complete":
            self.at_ledger("MISSING_RECONCILIATION_RESULT", "$.revision",
                           "a revised ledger needs a complete reconciliation result")
            return
        rid = rec.get("id")
        if rec.get("runId") != L.get("runId"):
            self.at_artifact("REVIEW_RUN_MISMATCH", rid, "the reconciliation is of another run")
        bound = _obj(rec.get("inputLedger"))
        if prior is None or prior.get("revision") != bound.get("revision") \
                or rec.get("outputRevision") != revision \
                or not is_int(prior.get("revision")) or prior["revision"] + 1 != revision:
            self.at_artifact("RECONCILIATION_REVISION_MISMATCH", rid,
                             "the reconciliation binds the previous and the current revision")
        if prior is None:
            return
        before = {c.get("id"): c for c in items(prior.get("claims")) if type(c) is dict}
        after = {c.get("id"): c for c in L["claims"] if type(c) is dict}
        added = [c for c in after if c not in before]
        removed = [c for c in before if c not in after]
        if rec.get("additions") != added or rec.get("removals") != removed:
            self.at_artifact("RECONCILIATION_MEMBERSHIP_MISMATCH", rid, "additions and removals "
                             "are exactly the ledger's membership changes")
        incorporated = [x for x in items(rec.get("incorporatedReviewIds"))]
        self.removals(rec, removed, assurance, incorporated)
        reviews = [self.s.by_id[x].value for x in incorporated
                   if isinstance(x, str) and x in self.s.by_id
                   and type(self.s.by_id[x].value) is dict]
        offered, links = self.offered(reviews)
        self.continuity(rec, before, after, links, incorporated)
        self.evidence_continuity(rec, prior, offered)
        if rec.get("transitions") != L["transitions"]:
            self.at_artifact("RECONCILIATION_TRANSITION_MISMATCH", rid,
                             "the reconciliation's transitions are not the ledger's")
        if set(map(str, incorporated)) != assurance:
            self.at_artifact("RECONCILIATION_REVIEW_MISMATCH", rid, "the reconciliation does not "
                             "incorporate exactly the complete independent reviews")
        self.coverage(rec, after)

    def removals(self, rec: dict[str, Any], removed: list[Any], assurance: set[str],
                 incorporated: list[Any]) -> None:
        authorizations = {d.get("claimId"): d for d in items(rec.get("removalDispositions"))
                          if type(d) is dict}
        for cid in removed:
            grant = authorizations.get(cid) or {}
            review = self.s.by_id.get(str(grant.get("reviewId")))
            verdict = next((d.get("disposition") for d in items(
                review.value.get("dispositions") if review and type(review.value) is dict
                else None) if type(d) is dict and d.get("claimId") == cid), None)
            if not grant or grant.get("disposition") != "rejected" \
                    or grant.get("reviewId") not in assurance \
                    or grant.get("reviewId") not in incorporated or verdict != "rejected":
                self.err("UNAUTHORIZED_CLAIM_REMOVAL", str(cid), f"claim {cid} lacks a complete "
                         "typed review rejection authorizing its removal", LEDGER_FILE, "/claims")
        if len(authorizations) != len(removed):
            self.at_artifact("UNAUTHORIZED_CLAIM_REMOVAL", rec.get("id"),
                             "removal dispositions are exactly the removed prior claims")

    def offered(self, reviews: list[dict[str, Any]]
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
                    self.at_evidence("RECONCILIATION_EVIDENCE_INVENTION", record.get("id"),
                                     "the evidence was supplied more than once")
                    continue
                offered[str(record.get("id"))] = record
            for link in items(review.get("evidenceAssociations")):
                key = _digest(link)
                if type(link) is not dict or key in keys \
                        or link.get("evidenceId") not in supplied \
                        or link.get("claimId") not in disposed:
                    self.at_artifact("RECONCILIATION_EVIDENCE_ASSOCIATION_MISMATCH",
                                     review.get("id"), "an incorporated association is invalid")
                keys.add(key)
                if type(link) is dict:
                    links.setdefault(link.get("claimId"), []).append(
                        {"evidenceId": link.get("evidenceId"), "relation": link.get("relation")})
        return offered, links

    def continuity(self, rec: dict[str, Any], before: dict[Any, dict[str, Any]],
                   after: dict[Any, dict[str, Any]], links: dict[Any, list[dict[str, Any]]],
                   incorporated: list[Any]) -> None:
        steps: dict[Any, list[dict[str, Any]]] = {}
        for step in items(rec.get("transitions")):
            if type(step) is dict:
                steps.setdefault(step.get("claimId"), []).append(step)
        disposers = {aid: {d.get("claimId") for d in items(v.get("dispositions"))
                           if type(d) is dict}
                     for aid, v, _e in self.artifacts() if aid in incorporated}
        for cid, old in before.items():
            new = after.get(cid)
            if new is None:
                continue
            for key in ("statement", "qualifications"):
                if not _same_json(old.get(key), new.get(key)):
                    self.at_claim("RECONCILIATION_CONTINUITY_MISMATCH", cid,
                                  f"claim {cid} changed its {key} across reconciliation")
            if not _same_json([*items(old.get("evidence")), *links.get(cid, [])],
                              new.get("evidence")):
                self.at_claim("RECONCILIATION_CONTINUITY_MISMATCH", cid, f"claim {cid}'s links are "
                              "not its prior links plus the incorporated associations")
            for key in ("derivedFrom", "challenges"):
                if not _same_json(old.get(key), new.get(key)):
                    self.at_claim("RECONCILIATION_CONTINUITY_MISMATCH", cid,
                                  f"claim {cid} changed its {key} without a typed input")
            expected = list(dict.fromkeys([*items(old.get("reviewIds")),
                                           *(a for a, ids in disposers.items() if cid in ids)]))
            current = items(new.get("reviewIds"))
            if len(expected) != len(set(map(str, current))) or any(x not in current
                                                                    for x in expected):
                self.at_claim("RECONCILIATION_REVIEW_MISMATCH", cid, f"claim {cid}'s reviews are "
                              "not derived from the incorporated results")
            mine = steps.get(cid, [])
            want = 0 if old.get("status") == new.get("status") else 1
            if len(mine) != want or (want and (mine[0].get("from") != old.get("status")
                                               or mine[0].get("to") != new.get("status"))):
                self.at_claim("RECONCILIATION_TRANSITION_BINDING_MISMATCH", cid, f"claim {cid} is "
                              "not bound to exactly its prior-to-current transition")

    def evidence_continuity(self, rec: dict[str, Any], prior: dict[str, Any],
                            offered: dict[str, Any]) -> None:
        assert self.L is not None
        old = {e.get("id"): e for e in items(prior.get("evidence")) if type(e) is dict}
        for record in self.L["evidence"]:
            if type(record) is not dict:
                continue
            eid = record.get("id")
            if eid in old and not _same_json(old[eid], record):
                self.at_evidence("RECONCILIATION_EVIDENCE_DRIFT", eid, f"evidence {eid} changed")
            if eid not in old and (eid not in offered
                                   or not _same_json(offered[str(eid)], record)):
                self.at_evidence("RECONCILIATION_EVIDENCE_INVENTION", eid, f"evidence {eid} was "
                                 "not supplied by an incorporated review")
        if not _same_json([*items(prior.get("evidence")), *offered.values()],
                          self.L["evidence"]):
            self.at_artifact("RECONCILIATION_EVIDENCE_INVENTION", rec.get("id"), "the ledger's "
                             "evidence is not the prior evidence plus the supplied records")

    def coverage(self, rec: dict[str, Any], after: dict[Any, dict[str, Any]]) -> None:
        assert self.L is not None
        gaps = [g for g in self.m["gaps"] if type(g) is dict]
        dispositions = {d.get("findingId"): d for d in items(rec.get("coverageDispositions"))
                        if type(d) is dict}
        evidence_ids = {e.get("id") for e in self.L["evidence"] if type(e) is dict}
        for aid in self.s.passes.get("coverage", []):
            result = self.s.by_id[aid].value
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
                    self.err("COVERAGE_GAP_MISMATCH", str(fid), f"coverage finding {fid} is not "
                             "bound to an exact manifest gap and its claims",
                             self.s.by_id[aid].path, "/coverageFindings")
                disposition = dispositions.get(fid)
                if disposition is None or disposition.get("gapId") != finding.get("gapId"):
                    self.err("COVERAGE_RECONCILIATION_MISMATCH", str(fid), f"coverage finding "
                             f"{fid} has no exact reconciliation disposition",
                             self.s.by_id[str(rec.get("id"))].path, "/coverageDispositions")
                if disposition is not None and disposition.get("disposition") == "accepted-gap":
                    for cid in ids:
                        own = next((d.get("disposition") for d in items(result.get(
                            "dispositions")) if type(d) is dict and d.get("claimId") == cid), None)
                        if finding.get("material") is True and (
                                (after.get(cid) or {}).get("status") == "verified"
                                or own != "gap"):
                            self.at_claim("MATERIAL_COVERAGE_ASSURANCE_EXCEEDED", cid,
                                          f"a material open coverage finding requires claim {cid} "
                                          "to be downgraded")
                elif disposition is not None and disposition.get("disposition") == "resolved" \
                        and not all(x in self.s.exact and x in evidence_ids
                                    for x in items(disposition.get("evidenceIds"))):
                    self.err("COVERAGE_RESOLUTION_EVIDENCE_INVALID", str(fid),
                             f"coverage finding {fid} is not resolved by exact evidence",
                             self.s.by_id[str(rec.get("id"))].path, "/coverageDispositions")

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
        for rid in dict.fromkeys(items(review_ids)):
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
            if review.get("runId") != self.L.get("runId"):
                self.at_claim("REVIEW_RUN_MISMATCH", cid, f"review {rid} is of another run")
            if review.get("status") != "complete":
                self.at_claim("INCOMPLETE_INDEPENDENT_REVIEW", cid, f"review {rid} is not complete")
            if review.get("reviewerLane") in lanes:
                self.at_claim("MISSING_INDEPENDENT_REVIEW", cid, "a review lane is reused")
            lanes.add(review.get("reviewerLane"))
            brief = self.brief_of(review)
            basis = prior_claims.get(cid) or claim
            if brief is None or brief.get("runId") != self.L.get("runId") \
                    or brief.get("mode") != _BRIEF_MODE.get(str(kind)) \
                    or not self.binds(brief, str(kind), basis,
                                      prior if cid in prior_claims else self.L) \
                    or not any(_same(x, review.get("brief"))
                               for x in items(review.get("permittedInputs"))):
                self.at_claim("REVIEW_BRIEF_MISMATCH", cid,
                              f"review {rid} is not bound to the expected immutable brief")
            mine = self.dispositions(review).get(cid, [])
            wanted = "resolved" if kind == "contradiction-resolution" else required.get(str(kind))
            if len(mine) != 1 or mine[0].get("disposition") != wanted:
                self.at_claim("REVIEW_DISPOSITION_MISMATCH", cid,
                              f"review {rid} does not support a verified disposition")
            if items(review.get("unresolvedIssues")):
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
                if rid not in self.s.by_id:
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
        execution = _obj(m.get("execution"))
        approval = _obj(execution.get("approval"))
        records = [e for e in L["evidence"] if type(e) is dict]
        evidence = tuple(self.evidence_value(e) for e in records)
        exact_ids = {e.evidence_id for e in evidence if e.eligible}
        claims = tuple(self.claim_value(c, exact_ids) for c in L["claims"] if type(c) is dict)
        gaps = tuple(self.gap_value(g) for g in m["gaps"] if type(g) is dict)
        passes = tuple(
            PassOutcome(mode, mode in self.s.passes,
                        tuple(self.s.by_id[a].path for a in self.s.passes.get(mode, [])),
                        tuple(g.gap_id for g in gaps if g.material and g.mode == mode))
            for mode in _REQUIRED[self.version][str(run["requestedProfile"])])
        listed = [e for path, e in self.s.by_path.items() if path != LEDGER_FILE
                  and any(_same(a, e.ref) for a in m["artifacts"])]
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
                                 str(e.value.get("reviewerLane")), _complete(e.value),
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
        if gap.get("code") in _OUTCOME_CODES:
            named = [w for w in {w.get("mode") for w in self.waves()} if isinstance(w, str)
                     and _gap_names_mode({**gap, "material": True}, w)]
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
