"""One recon-layout packet being checked: its documents read once, and the recon tool's locations.

:class:`ReconRun` is what the recon tool's rules share over the kernel's
:class:`~assay.packet.kernel.Context`: the parsed manifest and ledger, every
referenced artifact read once (through :class:`~assay.packet.layout.PacketRoot`),
the state the cross-file rules build, and the recon tool's own ways to locate
a finding (``$.run.status``, ``reviews/x.json:$.id``, an artifact or evidence
id, ``claim:ID``, ``source:ID``) beside the file and JSON pointer. The rules of
the first phase are here: the documents against the recon contract
(:func:`shapes`), every reference read, hashed and checked
(:func:`references`), and no persisted secret (:func:`secrets`), with the
helpers the other rules share. The cross-file rules build on it, one module
per concern (:mod:`~assay.packet.recon.sources`,
:mod:`~assay.packet.recon.routing`, :mod:`~assay.packet.recon.reviews`);
:mod:`assay.packet.recon.check` runs them. Imports the base modules and the
packet modules.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.canonical import fingerprint
from assay.packet.kernel import Context
from assay.packet.layout import LEDGER_FILE, MANIFEST_FILE, PathProblem
from assay.packet.model import PROFILE_PASSES, approval_fingerprint
from assay.packet.recon.contract import (
    check_artifact,
    is_digest,
    is_int,
    items,
    json_pointer,
    keyable,
    strings,
)
from assay.packet.redaction import rules, screen

__all__ = [
    "ASSURANCE_KINDS", "BRIEF_MODE", "CONTROLLER", "OUTCOME_CODES", "PASS_ARTIFACTS", "REQUIRED",
    "Entry", "ReconRun", "ReviewFacts", "State", "complete",
    "gap_names_lane", "gap_names_mode", "has_lane_identity", "js_string", "lane_of",
    "line_excerpt", "obj", "recon_redact", "references", "same", "same_json",
    "same_json_members", "secret_rules", "secret_rules_each", "secrets", "shapes", "usable",
]

# The passes of each requested profile, by manifest version: version 2 no
# longer requires contradiction resolution of a thorough run.
REQUIRED = {1: PROFILE_PASSES,
            2: {**PROFILE_PASSES, "thorough": tuple(m for m in PROFILE_PASSES["thorough"]
                                                    if m != "contradiction-resolution")}}
# Pass mode -> (artifact kind, the field that must match, its value).
PASS_ARTIFACTS = {
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
ASSURANCE_KINDS = ("semantic", "adversarial", "coverage", "redundant-verification",
                   "contradiction-resolution")
BRIEF_MODE = {"semantic": "verify", "redundant-verification": "verify",
              "adversarial": "adversary", "contradiction-resolution": "adversary",
              "coverage": "coverage"}
CONTROLLER = "controller:reconcile-ledger-v1"
OUTCOME_CODES = ("PASS_FAILED", "PASS_OMITTED")

# The recon tool's own redaction, which a redacted-exact excerpt must equal.
_JS_SPACE = "[ \\t\\n\\r\\f\\v\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff]"
_RECON_ASSIGN = re.compile(r"(?<![A-Za-z0-9_])(token|password|secret|api[_-]?key)" + _JS_SPACE
                           + r"*[:=]" + _JS_SPACE + r"*[^\s,;]+", re.IGNORECASE)
_RECON_TOKEN = re.compile(r"\b(?:sk|ghp|xox[baprs])[-_][A-Za-z0-9_-]{8,}\b", re.ASCII)
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


def _recon_rule(text: str) -> str | None:
    return "recon_redaction" if recon_redact(text) != text else None


def secret_rules(values: Iterable[str]) -> tuple[str, ...]:
    """Rules that fire on any of ``values`` (scanned as one text): assay's shared set, plus
    the recon tool's own (``recon_redaction``)."""
    return rules(values, _recon_rule)


def secret_rules_each(groups: Sequence[Sequence[str]]) -> list[tuple[str, ...]]:
    """:func:`secret_rules` of each of ``groups``, in order, screened together
    (:func:`assay.packet.redaction.screen`): documents of one packet share most
    strings (a prior ledger, briefs and reviews repeat the ledger's)."""
    return screen(groups, _recon_rule)


def line_excerpt(content: str, lines: list[str], start: Any, end: Any) -> str | None:
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


def js_string(value: Any) -> str:
    """``String(value ?? '')`` for a parsed JSON value."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return ",".join(js_string(item) for item in value)
    if isinstance(value, dict):
        return "[object Object]"
    return str(value)


def gap_names_mode(gap: Any, mode: str) -> bool:
    """A material PASS gap whose message names ``mode`` as a whole token."""
    return (type(gap) is dict and gap.get("code") in OUTCOME_CODES
            and gap.get("material") is True and type(gap.get("message")) is str
            and re.search(r"(?:^|[^a-z-])" + re.escape(mode) + r"(?:$|[^a-z-])",
                          gap["message"]) is not None)


def gap_names_lane(gap: Any, wave_id: Any, lane_id: Any) -> bool:
    return (type(gap) is dict and gap.get("code") in OUTCOME_CODES
            and gap.get("material") is True and gap.get("waveId") == wave_id
            and gap.get("laneId") == lane_id)


def has_lane_identity(gap: Any) -> bool:
    return type(gap) is dict and ("waveId" in gap or "laneId" in gap)


def complete(value: dict[str, Any]) -> bool:
    return (("status" not in value or value["status"] == "complete")
            and ("outcome" not in value or value["outcome"] == "complete"))


def lane_of(value: dict[str, Any]) -> Any:
    if value.get("kind") == "recon.raw-dossier":
        return value.get("laneId")
    if value.get("kind") == "recon.review-result":
        return value.get("reviewerLane")
    return None


def same(left: Any, right: Any) -> bool:
    return (type(left) is dict and type(right) is dict and left.get("path") == right.get("path")
            and left.get("digest") == right.get("digest"))


def same_json(a: Any, b: Any) -> bool:
    """Whether two parsed JSON values have the same canonical form (without hashing them).

    Equal canonical forms are equal Python values, so most pairs are settled
    by ``==`` and ``repr`` (which tells ``true`` from ``1``); only a pair
    those cannot settle (``1`` and ``1.0``, keys in another order) is walked.
    """
    if a != b:
        return False
    return type(a) is str or repr(a) == repr(b) or _same_walk(a, b)


def same_json_members(a: list[Any], b: list[Any],
                      alike: Callable[[Any, Any], bool] = same_json) -> bool:
    """``same_json(a, b)`` of two lists, decided member by member with ``alike``.

    Two lists have the same canonical form exactly when their members pair
    up that way, so a caller that already compared (and remembered) most
    pairs passes its memory as ``alike`` instead of comparing both whole
    lists again.
    """
    return len(a) == len(b) and all(map(alike, a, b))


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


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _text(value: str) -> str:
    return "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in value)


def _replace_lone_surrogates(value: Any) -> bool:
    """Replace, in place, every lone surrogate in ``value``'s strings and keys with U+FFFD.

    UTF-8 cannot carry a lone surrogate (a ``\\ud800`` escape without its
    pair), so no path, digest or canonical form could be computed from one;
    U+FFFD is what a UTF-8 encoder writes in its place. Returns whether any
    was replaced. Iterative: a document may nest as deep as the parser allows.
    """
    def bad(text: str) -> bool:
        if text.isascii():
            return False
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False

    found = False
    pending = [value]
    while pending:
        current = pending.pop()
        if type(current) is list:
            for index, item in enumerate(current):
                if type(item) is str:
                    if bad(item):
                        current[index], found = _text(item), True
                elif type(item) in (list, dict):
                    pending.append(item)
        elif type(current) is dict:
            if any(bad(key) for key in current):
                members = list(current.items())
                current.clear()
                for key, item in members:
                    current[_text(key) if bad(key) else key] = item
                found = True
            for key, item in current.items():
                if type(item) is str:
                    if bad(item):
                        current[key], found = _text(item), True
                elif type(item) in (list, dict):
                    pending.append(item)
    return found


def obj(value: Any) -> dict[str, Any]:
    """``value`` if it is an object, else an empty one (hostile shapes never crash a rule)."""
    return value if type(value) is dict else {}


@dataclass(slots=True)
class Entry:
    """One referenced artifact read: its reference, parsed value and packet path."""

    ref: dict[str, Any]
    value: Any
    path: str


@dataclass(frozen=True, slots=True)
class ReviewFacts:
    """What the verified-claim rule reads of one review result, whatever the claim.

    ``brief`` is the review's exact typed brief of this run and of the
    review's mode, or None.
    """

    other_run: bool
    incomplete: bool
    lane: Any
    brief: dict[str, Any] | None
    permitted: bool
    unresolved: bool


@dataclass(slots=True)
class State:
    """What the cross-file rules share while one packet is checked."""

    by_path: dict[str, Entry] = field(default_factory=dict)
    by_id: dict[str, Entry] = field(default_factory=dict)
    exact: set[str] = field(default_factory=set)
    passes: dict[str, list[str]] = field(default_factory=dict)
    active: set[str] = field(default_factory=set)
    reconciliation: dict[str, Any] | None = None
    prior: dict[str, Any] | None = None
    # Indexes built once per parsed document (keyed by its identity).
    shown: dict[int, dict[str, dict[Any, dict[str, Any]]]] = field(default_factory=dict)
    records: dict[int, dict[Any, dict[str, Any]]] = field(default_factory=dict)
    by_claim: dict[int, dict[Any, list[dict[str, Any]]]] = field(default_factory=dict)
    facts: dict[int, ReviewFacts] = field(default_factory=dict)
    texts: dict[int, tuple[bytes, str, str, list[str]]] = field(default_factory=dict)
    bound: dict[tuple[int, str, Any, int], bool] = field(default_factory=dict)
    sourced: dict[tuple[int, frozenset[Any]], bool] = field(default_factory=dict)
    outside: dict[str, bytes] = field(default_factory=dict)
    rels: dict[str, str | None] = field(default_factory=dict)
    # Canonical digests of values many records compare against (a source's argv).
    value_digests: dict[int, tuple[Any, str]] = field(default_factory=dict)
    # The first index of each id in a listed document array (see Base._index).
    positions: dict[tuple[int, str], tuple[list[Any], dict[Any, int]]] = field(
        default_factory=dict)


class ReconRun:
    """One validation of one recon-layout packet: documents, state, the recon tool's locations.

    Create one per validation.
    """

    def __init__(self, cx: Context, source_roots: Sequence[str]) -> None:
        self.cx = cx
        self.root = cx.root
        self.m: dict[str, Any] = {}
        self.version = 1
        self.s = State()
        self.source_roots = tuple(os.path.realpath(r) for r in source_roots)
        self.L: dict[str, Any] | None = None
        self.ref_digests: dict[str, str] = {}
        # Set once any document breaks the recon contract: the packet is invalid,
        # and a cross-file rule may then meet values of any shape (see guarded).
        self.broken = False

    # -- reporting -------------------------------------------------------------
    def err(self, code: str, where: str, message: str, path: str = "",
            pointer: str = "") -> None:
        self.cx.add(code, path, pointer, message, where)

    def advise(self, code: str, where: str, message: str, path: str = "",
               pointer: str = "") -> None:
        self.cx.advise(code, path, pointer, message, where)

    def at_manifest(self, code: str, where: str, message: str) -> None:
        self.err(code, where, message, MANIFEST_FILE, json_pointer(where))

    def at_ledger(self, code: str, where: str, message: str) -> None:
        self.err(code, where, message, LEDGER_FILE, json_pointer(where))

    def _index(self, values: Any, key: str, wanted: Any) -> int | None:
        """The index of the first object in ``values`` whose ``key`` equals ``wanted``.

        Each list is indexed once, at its first finding, so a packet with a
        finding on every claim is not scanned once per finding. Unhashable
        values (hostile ids) equal no hashable one; an unhashable ``wanted``
        is looked for one by one.
        """
        members = items(values)
        try:
            hash(wanted)
        except TypeError:
            return next((index for index, value in enumerate(members)
                         if type(value) is dict and value.get(key) == wanted), None)
        known = self.s.positions.get((id(members), key))
        if known is None or known[0] is not members:
            first: dict[Any, int] = {}
            for index, value in enumerate(members):
                if type(value) is dict:
                    with contextlib.suppress(TypeError):
                        first.setdefault(value.get(key), index)
            known = (members, first)
            self.s.positions[(id(members), key)] = known
        return known[1].get(wanted)

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
        if path in self.s.rels:
            return self.s.rels[path]
        base = str(self.root.root)
        full = os.path.normpath(os.path.join(base, path))
        found = (os.path.relpath(full, base).replace(os.sep, "/")
                 if full.startswith(base + os.sep) else None)
        self.s.rels[path] = found
        return found

    def digest_once(self, value: Any) -> str:
        """:func:`~assay.canonical.fingerprint` of ``value``, computed once per value object."""
        known = self.s.value_digests.get(id(value))
        if known is None or known[0] is not value:
            known = (value, fingerprint(value))
            self.s.value_digests[id(value)] = known
        return known[1]

    def read(self, rel: str) -> bytes | PathProblem:
        return self.cx.read(rel)

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
        try:
            value = json.loads(text, parse_constant=constant)
        except RecursionError:
            raise ValueError("nested too deeply") from None
        if "\\u" in text and _SURROGATE_ESCAPE.search(text) and _replace_lone_surrogates(value):
            self.advise("INVALID_JSON", path, "a lone surrogate escape, read as U+FFFD: assay's "
                        "own layout refuses it", path)
        return value


# -- phase 1: documents -------------------------------------------------------------------


def shapes(r: ReconRun) -> bool:
    """Contract findings of manifest, ledger and run identity; whether the manifest holds."""
    m = r.m
    request = m.get("request")
    root = os.path.realpath(r.root.root)
    if type(request) is not dict or request.get("outputPath") != root:
        r.at_manifest("OUTPUT_ROOT_MISMATCH", "$.request.outputPath",
                      "the declared output path is not the canonical packet root")
    data = r.read(LEDGER_FILE)
    if isinstance(data, PathProblem):
        r.err(r.problem_code(data, "INVALID_LEDGER_JSON"), LEDGER_FILE, data.message,
              LEDGER_FILE)
    else:
        try:
            r.L = r.parse(data, LEDGER_FILE)
        except ValueError as exc:
            r.err("INVALID_LEDGER_JSON", LEDGER_FILE, f"not JSON: {exc}"[:200], LEDGER_FILE)
    manifest_found = check_artifact(m)
    for found in manifest_found:
        r.at_manifest(found.code, found.where, found.message)
    if r.L is not None:
        ledger_found = check_artifact(r.L)
        r.broken = bool(manifest_found or ledger_found)
        for found in ledger_found:
            if found.where.startswith("claim:"):
                r.at_claim(found.code, found.where[6:], found.message, where=found.where)
            else:
                r.at_ledger(found.code, found.where, found.message)
    run = m.get("run")
    if type(r.L) is dict and type(run) is dict and run.get("id") != r.L.get("runId"):
        r.err("RUN_ID_MISMATCH", "$", "manifest and ledger run ids differ", LEDGER_FILE,
              "/runId")
    execution = m.get("execution")
    approval = execution.get("approval") if type(execution) is dict else None
    if r.version == 1:
        if type(approval) is dict:
            assert type(execution) is dict
            if approval.get("fingerprint") != approval_fingerprint(execution):
                r.at_manifest("APPROVAL_FINGERPRINT_MISMATCH",
                              "$.execution.approval.fingerprint",
                              "the approved execution envelope no longer matches its "
                              "approval fingerprint")
        else:
            r.err("MISSING_APPROVAL_ENVELOPE", "$",
                  "the manifest holds no approval-bound execution", MANIFEST_FILE,
                  "/execution")
        return type(execution) is dict
    return type(approval) is dict and not manifest_found


def references(r: ReconRun) -> None:
    """Read, hash and check every referenced artifact once (the recon tool's reference set)."""
    refs: list[Any] = list(items(r.m.get("artifacts")))
    L = r.L if type(r.L) is dict else {}
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
        digest = ref.get("digest")
        if keyable(digest):  # a reference checked once per path and digest
            if (ref["path"], digest) in checked:
                continue
            checked.add((ref["path"], digest))
        reference(r, ref)
    if LEDGER_FILE not in r.s.by_path and type(r.m.get("artifacts")) is list:
        r.at_manifest("MISSING_CANONICAL_LEDGER_REFERENCE", "$.artifacts",
                      "the manifest binds claims.json by exact digest")


def reference(r: ReconRun, ref: dict[str, Any]) -> None:
    """Read, hash and check one reference (once per path and digest); index its document."""
    path = ref["path"]
    rel = r.rel(path)
    if rel is None:
        r.err("PATH_ESCAPE", path, "the artifact path leaves the packet directory")
        return
    if rel != path:
        r.advise("INVALID_PATH", path, f"artifact path is not in its plain form {rel!r}",
                 MANIFEST_FILE)
    data = r.read(rel)
    if isinstance(data, PathProblem):
        r.err(r.problem_code(data, "MISSING_ARTIFACT"), path,
              f"missing artifact {path}: {data.message}", rel)
        return
    actual = r.cx.digests[rel]
    r.ref_digests[path] = actual
    if is_digest(ref.get("digest")) and actual != ref["digest"]:
        r.err("ARTIFACT_DIGEST_MISMATCH", path, f"{path} hashes to another digest", rel)
    if not path.endswith(".json"):
        return
    if rel == MANIFEST_FILE or (rel == LEDGER_FILE and r.L is not None):
        value = r.m if rel == MANIFEST_FILE else r.L
    else:
        try:
            value = r.parse(data, rel)
        except ValueError:
            r.err("MISSING_ARTIFACT", path, f"artifact {path} is not JSON", rel)
            return
        for found in check_artifact(value):
            r.broken = True
            r.err(found.code, f"{path}:{found.where}", found.message, rel,
                  json_pointer(found.where))
    entry = Entry(ref, value, rel)
    r.s.by_path[path] = entry
    if type(value) is dict and type(value.get("id")) is str:
        if value["id"] in r.s.by_id:
            r.err("DUPLICATE_ARTIFACT_ID", path, f"artifact id {value['id']} is repeated",
                  rel)
        r.s.by_id[value["id"]] = entry


def secrets(r: ReconRun) -> None:
    """No persisted string holds a raw secret (rule names reported, never values)."""
    documents: list[tuple[str, str, Any]] = [(MANIFEST_FILE, MANIFEST_FILE, r.m),
                                             (LEDGER_FILE, LEDGER_FILE, r.L)]
    documents += [(path, e.path, e.value) for path, e in r.s.by_path.items()
                  if e.path not in (MANIFEST_FILE, LEDGER_FILE)]
    found = secret_rules_each([strings(value) for _where, _rel, value in documents])
    for (where, rel, _value), fired in zip(documents, found, strict=True):
        if fired:
            r.err("UNREDACTED_SECRET", where, "persisted packet data holds a secret-shaped "
                  f"span (rules: {', '.join(fired)})", rel)


# -- what the cross-file rules need --------------------------------------------------------


def usable(r: ReconRun) -> bool:
    """Whether the documents have the containers every cross-file rule reads."""
    m, L = r.m, r.L
    return (type(L) is dict and all(type(m.get(k)) is list
                                    for k in ("sources", "artifacts", "gaps"))
            and (r.version == 1 or type(m.get("conditionOutcomes")) is list)
            and type(m.get("run")) is dict and type(m["run"].get("id")) is str
            and all(type(L.get(k)) is list for k in ("inputArtifacts", "evidence", "claims",
                                                     "unresolvedQuestions", "transitions"))
            and type(L.get("synthesis")) is dict
            and all(type(L["synthesis"].get(k)) is list
                    for k in ("keyClaimIds", "caveats", "unresolvedQuestionIds")))
