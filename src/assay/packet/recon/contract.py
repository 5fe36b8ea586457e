"""The recon tool's artifact contract: the shape of every file it writes, checked as it does.

A packet the recon tool writes has a ``recon.packet-manifest`` with a
``run`` object (manifest ``schemaVersion`` 1, whose approval carries a
fingerprint of the flat execution envelope, or 2, its current form: an
exact ``target``, classed waves, routing ``conditions`` and
``conditionOutcomes``), a ``recon.claim-ledger``, ``recon.raw-dossier``,
``recon.review-brief`` and ``recon.review-result`` files. :func:`check_artifact`
checks one parsed document against that contract with the packet kernel's
shape checks (:mod:`assay.packet.shape`), field by field in the recon tool's
own order, and returns every finding as an :class:`~assay.packet.model.Issue`
worded and located in the :data:`RECON` dialect: the recon tool's own code
and ``$``-path (so a recon user reads the same diagnostics), never raising on
hostile input (an object where an array belongs, a number where an object
belongs). The cross-file rules live in :mod:`assay.packet.recon.check`.
Imports :mod:`assay.canonical` and the packet kernel.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, TypeGuard

from assay.packet.model import (
    AUTHORITIES,
    CLAIM_STATES,
    EVIDENCE_STATES,
    PROFILES,
    RELATIONS,
    RUN_STATUSES,
    SOURCE_STATES,
    WAVE_MODES,
    Issue,
)
from assay.packet.shape import (
    ANY_OBJECT,
    BOOL,
    Check,
    Dialect,
    Sink,
    array,
    closed,
    integer,
    leaf,
    member,
    string,
)

__all__ = [
    "KINDS",
    "LEGAL_TRANSITIONS",
    "RECON",
    "check_artifact",
    "is_digest",
    "is_int",
    "is_recon_layout",
    "items",
    "json_pointer",
    "strings",
    "text_ids",
]

KINDS = ("recon.packet-manifest", "recon.claim-ledger", "recon.raw-dossier",
         "recon.review-brief", "recon.review-result")
# The manifest versions read; every other kind has version 1.
MANIFEST_VERSIONS = (1, 2)
WORKER_MODES = ("map", "gather", "compile", "verify", "adversary", "coverage")
TASK_CLASSES = ("mechanical-recon", "intelligent-recon", "default-implementation",
                "hard-reasoning", "consequential")
PREDICATES = ("insufficient-evidence", "unresolved-material-challenge")
# The recon tool's state machine: wider than assay's own (see docs/packet.md).
LEGAL_TRANSITIONS = frozenset({
    ("provisional", "supported"), ("provisional", "verified"), ("provisional", "contested"),
    ("provisional", "unresolved"), ("provisional", "unsupported"),
    ("supported", "verified"), ("supported", "contested"), ("supported", "unresolved"),
    ("supported", "unsupported"),
    ("verified", "contested"), ("verified", "unresolved"), ("verified", "unsupported"),
    ("contested", "supported"), ("contested", "verified"), ("contested", "unresolved"),
    ("contested", "unsupported"),
    ("unresolved", "supported"), ("unresolved", "verified"), ("unresolved", "contested"),
    ("unresolved", "unsupported"),
    ("unsupported", "provisional"),
})
DISPOSITIONS = {
    "semantic": ("affirmed", "rejected", "uncertain"),
    "adversarial": ("unchallenged", "challenged"),
    "coverage": ("covered", "gap"),
    "redundant-verification": ("affirmed", "rejected", "uncertain"),
    "contradiction-resolution": ("resolved", "unresolved", "rejected"),
    "reconciliation": (),
}
# Per requested profile (v2 routing): lane modes counted against the cap, caps.
_POLICY = {
    "quick": (("gather",), 4, 4, 0),
    "standard": (("gather", "semantic-verification", "adversarial", "coverage",
                  "contradiction-resolution"), 10, 6, 1),
    "thorough": (("gather", "semantic-verification", "adversarial", "coverage",
                  "redundant-gather", "redundant-verification", "contradiction-resolution"),
                 20, 8, 1),
}
_SOURCE_KEYS = {
    "repository": ("root", "revision", "dirty", "contentHashes"),
    "file": ("path", "contentHash"),
    "url": ("url", "capturePath", "captureDigest", "validatorState"),
    "command-output": ("argv", "cwd", "exitStatus", "outputPath", "outputDigest",
                       "environmentNames"),
    "connected-resource": ("system", "resourceId", "resourceVersion", "retrievalToken",
                           "capturePath", "captureDigest"),
}
_SOURCE_COMMON = ("kind", "id", "available", "authority", "observedAt", "validationState")
_LOCATOR_KEYS = {
    "repository": ("kind", "path", "revision", "lineStart", "lineEnd"),
    "file": ("kind", "path", "lineStart", "lineEnd"),
    "url": ("kind", "url", "retrievedAt", "fragment", "validatorToken"),
    "command-output": ("kind", "artifactPath", "lineStart", "lineEnd", "commandDigest"),
    "connected-resource": ("kind", "system", "resourceId", "resourceVersion", "retrievalToken",
                           "fieldOrSection", "retrievedAt"),
}
_EVIDENCE_KEYS = ("id", "sourceId", "locator", "displayExcerpt", "observedAt", "contentHash",
                  "locatorValidation", "provenance", "redaction")
_TARGET_KEYS = ("provider", "route", "role", "model", "effort", "reasoningMode", "serviceTier")
_DIGEST = re.compile(r"sha256:[a-f0-9]{64}")
_BRIEF_ID = re.compile(r"[a-z0-9]+(?:[-_.][a-z0-9]+)*")
_BRIEF_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?Z")


def is_recon_layout(doc: Any) -> bool:
    """Whether a parsed ``manifest.json`` is the recon tool's: kind ``recon.packet-manifest``.

    Assay's own layout has only ``assay.`` kinds, so the kind alone decides
    which rule set reads a packet (a recon manifest without its ``run`` object
    is the recon tool's, and broken by its contract).
    """
    return type(doc) is dict and doc.get("kind") == KINDS[0]


def is_digest(value: Any) -> bool:
    return type(value) is str and _DIGEST.fullmatch(value) is not None


def is_int(value: Any) -> TypeGuard[int | float]:
    """An integer as JSON numbers are read by the recon tool (``5.0`` counts)."""
    return (type(value) is int or (type(value) is float and value.is_integer()))


def items(value: Any) -> list[Any]:
    """``value`` if it is an array, else nothing (hostile shapes never crash a rule)."""
    return value if type(value) is list else []


def keyable(value: Any) -> bool:
    """Whether a parsed JSON value can key a dict or set (objects and arrays cannot)."""
    return type(value) is not dict and type(value) is not list


def distinct(values: list[Any]) -> list[Any]:
    """``values`` without repeats, in order; an object or array is never a repeat of another.

    Repeats are told apart as a dict's keys are (so hostile members never
    crash a rule); objects and arrays, which cannot be keys, are all kept.
    """
    seen: set[Any] = set()
    out = []
    for value in values:
        if keyable(value):
            if value in seen:
                continue
            seen.add(value)
        out.append(value)
    return out


def text_ids(values: list[Any], key: str = "id") -> set[str]:
    """The string ``key`` of every object in ``values`` (hostile ids are left out)."""
    return {v[key] for v in values if type(v) is dict and isinstance(v.get(key), str)}


def json_pointer(at: str) -> str:
    """The RFC 6901 pointer of a ``$.a.b[0]`` path (``/a/b/0``)."""
    out = []
    for part in re.findall(r"\.([^.\[\]]+)|\[(\d+)\]", at):
        key = part[0] or part[1]
        out.append("/" + key.replace("~", "~0").replace("/", "~1"))
    return "".join(out)


def _legal(step: dict[str, Any]) -> bool:
    pair = (step.get("from"), step.get("to"))
    return all(isinstance(x, str) for x in pair) and pair in LEGAL_TRANSITIONS


def _timestamp(value: str) -> bool:
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


# The recon tool's wording and places: every missing or mistyped field is
# MISSING_REQUIRED_FIELD ("key must be ..."), locations are $-paths.
RECON = Dialect(
    "recon",
    codes={"unknown": "UNKNOWN_FIELD", "missing": "MISSING_REQUIRED_FIELD",
           "type": "MISSING_REQUIRED_FIELD", "value": "MISSING_REQUIRED_FIELD"},
    sentence=lambda kind, key, detail, wants: (f"unexpected field {key}" if kind == "unknown"
                                               else f"{key} must be {wants}"),
    member=lambda at, key: f"{at}.{key}",
    item=lambda at, index: f"{at}[{index}]",
    pointer=json_pointer,
    located=True,
)
TEXT = string()
NULLABLE_TEXT = leaf(lambda v: v is None or (type(v) is str and v != ""),
                     "a non-empty string or null")
LIST = array()
INTEGER_FROM = {minimum: integer(minimum=minimum, maximum=None, integral_floats=True)
                for minimum in (0, 1)}
_REFERENCE_PATH = string(code="INVALID_ARTIFACT_REFERENCE",
                         message="artifact path must be a non-empty string")
_REFERENCE_DIGEST = leaf(lambda v: is_digest(v), "a digest", code="INVALID_ARTIFACT_REFERENCE",
                         message="artifact digest must be sha256:<64 lowercase hex>")


def _report_timestamp(sink: Sink, value: Any, at: str) -> bool:
    if not TEXT.ok(value):
        return TEXT.report(sink, value, at)
    if not _timestamp(value):
        sink.add("INVALID_TIMESTAMP", at, f"{at.rsplit('.', 1)[-1]} must be a parseable timestamp")
        return False
    return True


TIMESTAMP = Check(lambda v: TEXT.ok(v) and _timestamp(v), _report_timestamp, TEXT.wants)


def _reference(c: Sink, value: Any, at: str, extra: tuple[str, ...] = ()) -> None:
    """An exact ``{path, digest}`` artifact reference."""
    if type(value) is not dict:
        c.add("INVALID_ARTIFACT_REFERENCE", at, "expected an object")
        return
    member(c, value, "path", _REFERENCE_PATH, at)
    member(c, value, "digest", _REFERENCE_DIGEST, at)
    closed(c, value, ("path", "digest", *extra), at)


def _unique_ids(c: Sink, values: list[Any], at: str) -> None:
    seen: set[str] = set()
    for index, value in enumerate(values):
        if type(value) is dict and type(value.get("id")) is str:
            if value["id"] in seen:
                c.add("DUPLICATE_ID", f"{at}[{index}].id", f"identifier {value['id']} is repeated")
            seen.add(value["id"])


def check_artifact(doc: Any) -> list[Issue]:
    """Every way ``doc`` breaks the recon artifact contract (empty when it holds).

    Each finding's ``where`` is its ``$``-path (``claim:ID`` for a claim's
    own history) and its pointer the JSON pointer of that path; the caller
    names the file.
    """
    found: list[Issue] = []
    check = Sink(found, "", RECON)
    if type(doc) is not dict:
        check.add("INVALID_ARTIFACT", "$", "expected a JSON object")
        return found
    kind = doc.get("kind")
    if kind not in KINDS:
        check.add("UNKNOWN_ARTIFACT_KIND", "$.kind", "unknown artifact kind")
    elif doc.get("schemaVersion") not in (MANIFEST_VERSIONS if kind == KINDS[0] else (1,)) \
            or type(doc.get("schemaVersion")) is bool:
        check.add("UNSUPPORTED_SCHEMA_VERSION", "$.schemaVersion",
                  f"schemaVersion {str(doc.get('schemaVersion'))[:20]} is not read for {kind}")
    {
        "recon.packet-manifest": _manifest,
        "recon.claim-ledger": _ledger,
        "recon.raw-dossier": _dossier,
        "recon.review-brief": _brief,
        "recon.review-result": _result,
    }.get(str(kind), lambda c, d: None)(check, doc)
    return found


# -- manifest -----------------------------------------------------------------

def _manifest(c: Sink, value: dict[str, Any]) -> None:
    v2 = value.get("schemaVersion") == 2
    closed(c, value, ("kind", "schemaVersion", "run", "request", "sources", "execution",
                      "artifacts", "gaps", *(("conditionOutcomes",) if v2 else ())), "$")
    run = value.get("run")
    if type(run) is not dict:
        c.add("MISSING_REQUIRED_FIELD", "$.run", "run must be an object")
    else:
        closed(c, run, ("id", "topic", "status", "requestedProfile", "achievedProfile",
                        "createdAt", "updatedAt"), "$.run")
        member(c, run, "id", TEXT, "$.run")
        member(c, run, "topic", TEXT, "$.run")
        if run.get("status") not in RUN_STATUSES:
            c.add("INVALID_RUN_STATUS", "$.run.status", "unknown run status")
        if run.get("requestedProfile") not in PROFILES:
            c.add("INVALID_PROFILE", "$.run.requestedProfile", "unknown requested profile")
        if run.get("achievedProfile") is not None and run.get("achievedProfile") not in PROFILES:
            c.add("INVALID_PROFILE", "$.run.achievedProfile", "unknown achieved profile")
    for key in ("sources", "artifacts", "gaps"):
        member(c, value, key, LIST, "$")
    member(c, value, "request", ANY_OBJECT, "$")
    member(c, value, "execution", ANY_OBJECT, "$")
    request = value.get("request")
    if type(request) is dict:
        closed(c, request, ("objective", "questions", "includedScope", "excludedScope",
                            "contextReferences", "outputPath"), "$.request")
        member(c, request, "objective", TEXT, "$.request")
        member(c, request, "outputPath", TEXT, "$.request")
        for key in ("questions", "includedScope", "excludedScope", "contextReferences"):
            member(c, request, key, LIST, "$.request")
    execution = value.get("execution")
    if type(execution) is dict:
        if v2:
            _execution_v2(c, execution, run.get("requestedProfile") if type(run) is dict
                          else None)
        else:
            _execution_v1(c, execution)
    if v2:
        member(c, value, "conditionOutcomes", LIST, "$")
        _condition_outcomes(c, items(value.get("conditionOutcomes")))
    sources, gaps = items(value.get("sources")), items(value.get("gaps"))
    _unique_ids(c, sources, "$.sources")
    _unique_ids(c, gaps, "$.gaps")
    for index, ref in enumerate(items(value.get("artifacts"))):
        _reference(c, ref, f"$.artifacts[{index}]")
    for index, source in enumerate(sources):
        _source(c, source, f"$.sources[{index}]")
    for index, gap in enumerate(gaps):
        at = f"$.gaps[{index}]"
        for key in ("id", "code", "message"):
            member(c, gap, key, TEXT, at)
        member(c, gap, "material", BOOL, at)
        closed(c, gap, ("id", "code", "message", "material",
                        *(("waveId", "laneId") if v2 else ()),
                        "sourceIds", "claimIds", "coverageFindingIds"), at)
        if v2 and type(gap) is dict and ("waveId" in gap or "laneId" in gap):
            member(c, gap, "waveId", TEXT, at)
            member(c, gap, "laneId", TEXT, at)


def _source(c: Sink, source: Any, at: str) -> None:
    for key in ("kind", "id", "authority", "observedAt", "validationState"):
        member(c, source, key, TEXT, at)
    member(c, source, "available", BOOL, at)
    if type(source) is not dict:
        return
    if source.get("validationState") not in SOURCE_STATES:
        c.add("INVALID_SOURCE_VALIDATION_STATE", f"{at}.validationState",
              "unknown source validation state")
    if (source.get("available") is False) != (source.get("validationState") == "unavailable"):
        c.add("SOURCE_AVAILABILITY_MISMATCH", at,
              "an unavailable source has the unavailable validation state, and only it")
    keys = _SOURCE_KEYS.get(str(source.get("kind")))
    if keys is None:
        c.add("INVALID_SOURCE_KIND", f"{at}.kind", "unknown source kind")
        return
    closed(c, source, (*_SOURCE_COMMON, *keys), at)
    state = source.get("validatorState")
    if source["kind"] == "url" and type(state) is dict:
        closed(c, state, ("etag", "lastModified", "capturePath", "captureDigest"), f"{at}.validatorState")
        direct = "capturePath" in source or "captureDigest" in source
        inner = "capturePath" in state or "captureDigest" in state
        if direct and inner:
            c.add("DUAL_URL_CAPTURE", at, "a URL source declares exactly one capture")


def _waves(c: Sink, waves: list[Any], at: str, keys: tuple[str, ...], v2: bool) -> None:
    wave_ids: set[Any] = set()
    lane_ids: set[Any] = set()
    roots: set[str] = set()
    for w, wave in enumerate(waves):
        here = f"{at}[{w}]"
        closed(c, wave, keys, here)
        member(c, wave, "waveId", TEXT, here)
        member(c, wave, "lanes", LIST, here)
        wave = wave if type(wave) is dict else {}
        if v2:
            member(c, wave, "selectionReason", TEXT, here)
            if "target" in wave:
                if type(wave["target"]) is not dict:
                    c.add("MISSING_REQUIRED_FIELD", f"{here}.target",
                          "target must be a complete exact target object")
                else:
                    _target(c, wave["target"], f"{here}.target")
        if type(wave.get("lanes")) is list and not wave["lanes"]:
            c.add("MISSING_REQUIRED_FIELD", f"{here}.lanes", "every wave needs a lane")
        if wave.get("mode") not in WAVE_MODES:
            c.add("INVALID_WAVE_MODE", f"{here}.mode", "unknown wave mode")
        task = TASK_CLASSES.index(wave["taskClass"]) if wave.get("taskClass") in TASK_CLASSES \
            else -1
        if task < 0:
            c.add("INVALID_TASK_CLASS", f"{here}.taskClass", "unknown wave task class")
        if v2:
            floor = TASK_CLASSES.index(wave["classFloor"]) \
                if wave.get("classFloor") in TASK_CLASSES else -1
            if floor < 0:
                c.add("INVALID_TASK_CLASS", f"{here}.classFloor", "unknown wave class floor")
            elif 0 <= task < floor:
                c.add("TASK_CLASS_BELOW_FLOOR", f"{here}.taskClass",
                      "the wave's task class is below its class floor")
        if type(wave.get("conditional")) is not bool:
            c.add("MISSING_REQUIRED_FIELD", f"{here}.conditional", "conditional must be a boolean")
        wave_id = wave.get("waveId")
        if isinstance(wave_id, str) and wave_id in wave_ids:
            c.add("DUPLICATE_ID", f"{here}.waveId", f"wave {wave_id} is repeated")
        wave_ids.add(wave_id if isinstance(wave_id, str) else None)
        for n, lane in enumerate(items(wave.get("lanes"))):
            there = f"{here}.lanes[{n}]"
            closed(c, lane, ("laneId", "scope", "writeRoot"), there)
            for key in ("laneId", "scope", "writeRoot"):
                member(c, lane, key, TEXT, there)
            lane = lane if type(lane) is dict else {}
            root = lane.get("writeRoot")
            if type(root) is str and (root.startswith("/") or ".." in root.split("/")):
                c.add("INVALID_WRITE_ROOT", f"{there}.writeRoot",
                      "a lane write root is a packet-relative path")
            lane_id = lane.get("laneId")
            if isinstance(lane_id, str) and lane_id in lane_ids:
                c.add("DUPLICATE_ID", f"{there}.laneId", f"lane {lane_id} is repeated")
            lane_ids.add(lane_id if isinstance(lane_id, str) else None)
            if type(root) is str:
                if root in roots:
                    c.add("DUPLICATE_WAVE_OUTPUT", f"{there}.writeRoot",
                          f"write root {root} is assigned more than once")
                roots.add(root)


def _target(c: Sink, target: dict[str, Any], at: str) -> None:
    closed(c, target, _TARGET_KEYS, at)
    for key in ("provider", "route", "role", "model"):
        member(c, target, key, TEXT, at)
    for key in ("effort", "reasoningMode", "serviceTier"):
        member(c, target, key, NULLABLE_TEXT, at)


def _execution_common(c: Sink, value: dict[str, Any]) -> None:
    if value.get("authority") not in AUTHORITIES:
        c.add("INVALID_AUTHORITY_LEVEL", "$.execution.authority",
              "approved authority is provider-enforced or contract-enforced")
    member(c, value, "maxConcurrency", INTEGER_FROM[1], "$.execution")
    member(c, value, "deadlineSeconds", INTEGER_FROM[1], "$.execution")
    member(c, value, "retryLimit", INTEGER_FROM[0], "$.execution")
    member(c, value, "waves", LIST, "$.execution")
    member(c, value, "approval", ANY_OBJECT, "$.execution")


def _approval(c: Sink, approval: Any, keys: tuple[str, ...]) -> None:
    if type(approval) is not dict:
        return
    closed(c, approval, keys, "$.execution.approval")
    if approval.get("type") != "explicit-user-approval":
        c.add("INVALID_APPROVAL_EVIDENCE", "$.execution.approval.type",
              "approval evidence records explicit user approval")
    member(c, approval, "approvedAt", TIMESTAMP, "$.execution.approval")


def _execution_v1(c: Sink, value: dict[str, Any]) -> None:
    """The fingerprinted flat envelope of manifest version 1."""
    closed(c, value, (*_TARGET_KEYS, "authority", "maxConcurrency", "deadlineSeconds",
                      "retryLimit", "waves", "approval"), "$.execution")
    for key in ("provider", "route", "role", "model", "effort"):
        member(c, value, key, TEXT, "$.execution")
    for key in ("reasoningMode", "serviceTier"):
        member(c, value, key, NULLABLE_TEXT, "$.execution")
    _execution_common(c, value)
    _approval(c, value.get("approval"), ("type", "approvedAt", "fingerprint"))
    if type(value.get("approval")) is dict and not is_digest(value["approval"].get("fingerprint")):
        c.add("MISSING_REQUIRED_FIELD", "$.execution.approval.fingerprint",
              "fingerprint must be a sha256 digest")
    _waves(c, items(value.get("waves")), "$.execution.waves",
           ("waveId", "mode", "taskClass", "lanes", "conditional"), v2=False)


def _execution_v2(c: Sink, value: dict[str, Any], profile: Any) -> None:
    """The current envelope: an exact target, classed waves, routing conditions."""
    closed(c, value, ("target", "authority", "maxConcurrency", "deadlineSeconds", "retryLimit",
                      "waves", "conditions", "reconciliation", "approval"), "$.execution")
    member(c, value, "target", ANY_OBJECT, "$.execution")
    if type(value.get("target")) is dict:
        _target(c, value["target"], "$.execution.target")
    _execution_common(c, value)
    member(c, value, "conditions", LIST, "$.execution")
    _approval(c, value.get("approval"), ("type", "approvedAt"))
    waves = value.get("waves")
    _waves(c, items(waves), "$.execution.waves",
           ("waveId", "mode", "taskClass", "classFloor", "selectionReason", "target", "lanes",
            "conditional"), v2=True)
    if type(waves) is list and type(value.get("conditions")) is list and keyable(profile) \
            and profile in _POLICY:
        _routing(c, value, waves, value["conditions"], str(profile))


def _routing(c: Sink, value: dict[str, Any], waves: list[Any], conditions: list[Any],
             profile: str) -> None:
    counted, lane_cap, concurrency_cap, condition_cap = _POLICY[profile]
    lanes = sum(len(items(w.get("lanes"))) for w in waves
                if type(w) is dict and w.get("mode") in counted)
    if lanes > lane_cap:
        c.add("PROFILE_LANE_CAP_EXCEEDED", "$.execution.waves",
              f"{profile} routing permits at most {lane_cap} adaptive evidence lanes")
    if is_int(value.get("maxConcurrency")) and value["maxConcurrency"] > concurrency_cap:
        c.add("PROFILE_CONCURRENCY_CAP_EXCEEDED", "$.execution.maxConcurrency",
              f"{profile} routing permits concurrency at most {concurrency_cap}")
    if len(conditions) > condition_cap:
        c.add("PROFILE_CONDITION_CAP_EXCEEDED", "$.execution.conditions",
              f"{profile} routing permits at most {condition_cap} conditional waves")
    position = {w["waveId"]: i for i, w in enumerate(waves)
                if type(w) is dict and isinstance(w.get("waveId"), str)}
    seen_ids: set[str] = set()
    destinations: set[str] = set()
    fields = ("conditionId", "destinationWaveId", "afterWaveIds", "predicate", "maxActivations")
    for index, condition in enumerate(conditions):
        at = f"$.execution.conditions[{index}]"
        if type(condition) is not dict or any(key not in fields for key in condition):
            c.add("INVALID_ROUTING_CONDITION", at, "a routing condition is a closed object")
            continue
        cid, dest = condition.get("conditionId"), condition.get("destinationWaveId")
        if type(cid) is not str or not cid or type(dest) is not str or not dest:
            c.add("INVALID_ROUTING_CONDITION", at,
                  "condition and destination ids are non-empty strings")
            continue
        after = condition.get("afterWaveIds")
        if type(after) is not list or not after:
            c.add("INVALID_CONDITION_DEPENDENCY", f"{at}.afterWaveIds",
                  "a condition depends on at least one predecessor wave")
        if condition.get("predicate") not in PREDICATES:
            c.add("INVALID_CONDITION_PREDICATE", f"{at}.predicate", "unknown condition predicate")
        if condition.get("maxActivations") != 1 or type(condition.get("maxActivations")) is bool:
            c.add("INVALID_CONDITION_LIMIT", f"{at}.maxActivations",
                  "a condition allows exactly one activation")
        if cid in seen_ids:
            c.add("DUPLICATE_ROUTING_ID", f"{at}.conditionId", f"condition {cid} is repeated")
        seen_ids.add(cid)
        if dest in destinations:
            c.add("DUPLICATE_CONDITION_DESTINATION", f"{at}.destinationWaveId",
                  f"wave {dest} has more than one activating condition")
        destinations.add(dest)
        target = position.get(dest)
        wave = waves[target] if target is not None else None
        if not (type(wave) is dict and wave.get("conditional") is True
                and wave.get("mode") == "contradiction-resolution"):
            c.add("INVALID_CONDITION_DESTINATION", f"{at}.destinationWaveId",
                  "a destination is a conditional contradiction-resolution wave")
        predecessors: set[str] = set()
        for wave_id in items(after):
            if type(wave_id) is not str or not wave_id:
                c.add("INVALID_CONDITION_DEPENDENCY", f"{at}.afterWaveIds",
                      "condition dependencies are non-empty wave ids")
                continue
            if wave_id in predecessors:
                c.add("DUPLICATE_CONDITION_DEPENDENCY", f"{at}.afterWaveIds",
                      f"predecessor {wave_id} is repeated")
            predecessors.add(wave_id)
            before = position.get(wave_id)
            if before is None:
                c.add("UNKNOWN_CONDITION_WAVE", f"{at}.afterWaveIds",
                      f"unknown predecessor wave {wave_id}")
            elif target is not None and before >= target:
                c.add("NON_FORWARD_CONDITION", f"{at}.afterWaveIds",
                      f"predecessor {wave_id} comes after its destination")
    for wave in waves:
        if type(wave) is dict and wave.get("conditional") is True \
                and wave.get("mode") == "contradiction-resolution" \
                and wave.get("waveId") not in destinations:
            c.add("MISSING_WAVE_CONDITION", "$.execution.waves",
                  f"conditional wave {wave.get('waveId')} has no activating condition")


def _condition_outcomes(c: Sink, outcomes: list[Any]) -> None:
    seen: set[Any] = set()
    for index, outcome in enumerate(outcomes):
        at = f"$.conditionOutcomes[{index}]"
        if type(outcome) is not dict:
            c.add("INVALID_CONDITION_OUTCOME", at, "a condition outcome is an object")
            continue
        closed(c, outcome, ("conditionId", "disposition", "reason", "evidence"), at)
        member(c, outcome, "conditionId", TEXT, at)
        member(c, outcome, "reason", TEXT, at)
        member(c, outcome, "evidence", LIST, at)
        if outcome.get("disposition") not in ("triggered", "not-triggered", "unresolved"):
            c.add("INVALID_CONDITION_DISPOSITION", f"{at}.disposition",
                  "a disposition is triggered, not-triggered or unresolved")
        for n, ref in enumerate(items(outcome.get("evidence"))):
            _reference(c, ref, f"{at}.evidence[{n}]")
        key = outcome.get("conditionId")
        if isinstance(key, str) and key in seen:
            c.add("DUPLICATE_CONDITION_OUTCOME", f"{at}.conditionId",
                  f"condition {key} has more than one disposition")
        seen.add(key if isinstance(key, str) else None)


# -- ledger ---------------------------------------------------------------------

def _evidence_record(c: Sink, record: Any, at: str, *, new: bool = False) -> None:
    closed(c, record, _EVIDENCE_KEYS, at)
    for key in ("id", "sourceId", "displayExcerpt", "observedAt"):
        member(c, record, key, TEXT, at)
    record = record if type(record) is dict else {}
    locator = record.get("locator")
    if new:
        member(c, record, "locator", ANY_OBJECT, at)
        member(c, record, "locatorValidation", ANY_OBJECT, at)
    elif type(locator) is not dict:
        c.add("INVALID_LOCATOR", f"{at}.locator", "locator must be an object")
    if type(locator) is dict and not new:
        keys = _LOCATOR_KEYS.get(str(locator.get("kind")))
        if keys is None:
            c.add("INVALID_LOCATOR", f"{at}.locator.kind", "unknown locator kind")
        else:
            closed(c, locator, keys, f"{at}.locator")
    validation = record.get("locatorValidation")
    if not new:
        status = validation.get("status") if type(validation) is dict else None
        if status not in EVIDENCE_STATES:
            c.add("INVALID_LOCATOR_STATE", f"{at}.locatorValidation.status",
                  "unknown locator validation state")
        if type(validation) is dict:
            closed(c, validation, ("status", "validatedAt"), f"{at}.locatorValidation")
            member(c, validation, "validatedAt", TEXT, f"{at}.locatorValidation")
    _reference(c, record.get("provenance"), f"{at}.provenance")


def _ledger(c: Sink, value: dict[str, Any]) -> None:
    closed(c, value, ("kind", "schemaVersion", "runId", "revision", "inputArtifacts", "synthesis",
                      "evidence", "claims", "unresolvedQuestions", "transitions"), "$")
    member(c, value, "runId", TEXT, "$")
    revision = value.get("revision")
    if not is_int(revision) or revision < 1:
        c.add("INVALID_REVISION", "$.revision", "revision must be a positive integer")
    for key in ("inputArtifacts", "evidence", "claims", "unresolvedQuestions", "transitions"):
        member(c, value, key, LIST, "$")
    member(c, value, "synthesis", ANY_OBJECT, "$")
    claims = items(value.get("claims"))
    evidence = items(value.get("evidence"))
    questions = items(value.get("unresolvedQuestions"))
    synthesis = value.get("synthesis")
    if type(synthesis) is dict:
        member(c, synthesis, "answer", TEXT, "$.synthesis")
        for key in ("keyClaimIds", "caveats", "unresolvedQuestionIds"):
            member(c, synthesis, key, LIST, "$.synthesis")
        closed(c, synthesis, ("answer", "keyClaimIds", "caveats", "unresolvedQuestionIds"), "$.synthesis")
        for key, known, what in (
                ("keyClaimIds", text_ids(claims), "claim"),
                ("unresolvedQuestionIds", text_ids(questions), "question")):
            for index, ref in enumerate(items(synthesis.get(key))):
                at = f"$.synthesis.{key}[{index}]"
                if type(ref) is not str or not ref.strip():
                    c.add("INVALID_ARRAY_ENTRY", at, f"{key} entries are non-empty strings")
                elif ref not in known:
                    c.add("SYNTHESIS_REFERENCE_MISSING", at,
                          f"synthesis {what} {ref} does not resolve")
    for key in ("evidence", "claims", "unresolvedQuestions"):
        _unique_ids(c, items(value.get(key)), f"$.{key}")
    evidence_ids = text_ids(evidence)
    for index, ref in enumerate(items(value.get("inputArtifacts"))):
        _reference(c, ref, f"$.inputArtifacts[{index}]")
    for index, record in enumerate(evidence):
        _evidence_record(c, record, f"$.evidence[{index}]")
    for index, claim in enumerate(claims):
        at = f"$.claims[{index}]"
        closed(c, claim, ("id", "statement", "status", "evidence", "qualifications", "reviewIds",
                          "derivedFrom", "challenges"), at)
        member(c, claim, "id", TEXT, at)
        member(c, claim, "statement", TEXT, at)
        claim = claim if type(claim) is dict else {}
        if claim.get("status") not in CLAIM_STATES:
            c.add("INVALID_CLAIM_STATE", f"{at}.status", "unknown claim state")
        for key in ("evidence", "qualifications", "reviewIds", "derivedFrom", "challenges"):
            member(c, claim, key, LIST, at)
        linked: set[Any] = set()
        for n, link in enumerate(items(claim.get("evidence"))):
            there = f"{at}.evidence[{n}]"
            if type(link) is not dict:
                c.add("INVALID_EVIDENCE_LINK", there,
                      "a claim's evidence link is an {evidenceId, relation} object")
                continue
            closed(c, link, ("evidenceId", "relation"), there)
            member(c, link, "evidenceId", TEXT, there)
            if link.get("relation") not in RELATIONS:
                c.add("INVALID_EVIDENCE_RELATION", f"{there}.relation", "unknown relation")
            eid = link.get("evidenceId")
            if type(eid) is str and eid not in evidence_ids:
                c.add("UNRESOLVED_EVIDENCE_LINK", f"{there}.evidenceId",
                      f"evidence link {eid} does not resolve in this ledger")
            if isinstance(eid, str) and eid in linked:
                c.add("DUPLICATE_EVIDENCE_LINK", there, f"evidence {eid} is linked twice")
            linked.add(eid if isinstance(eid, str) else None)
        for n, ref in enumerate(items(claim.get("derivedFrom"))):
            _reference(c, ref, f"{at}.derivedFrom[{n}]")
    _transitions(c, value, claims)


def _transitions(c: Sink, value: dict[str, Any], claims: list[Any]) -> None:
    transitions = items(value.get("transitions"))
    for index, step in enumerate(transitions):
        closed(c, step, ("claimId", "from", "to"), f"$.transitions[{index}]")
        step = step if type(step) is dict else {}
        if not _legal(step):
            c.add("ILLEGAL_CLAIM_TRANSITION", f"$.transitions[{index}]",
                  f"illegal claim transition {step.get('from')} -> {step.get('to')}")
    ids = text_ids(claims)
    last: dict[Any, Any] = {}
    for step in transitions:
        step = step if type(step) is dict else {}
        cid = step.get("claimId")
        if not isinstance(cid, str) or cid not in ids:
            c.add("UNKNOWN_TRANSITION_CLAIM", "$.transitions",
                  f"a transition names unknown claim {str(cid)[:80]}")
        if isinstance(cid, str):
            last[cid] = step
    revision = value.get("revision")
    for claim in claims:
        if type(claim) is not dict or not isinstance(claim.get("id"), str):
            continue
        step = last.get(claim["id"])
        status = claim.get("status")
        at = f"claim:{claim['id']}"
        if revision == 1 and status == "provisional":
            if step is not None:
                c.add("INVALID_PROVISIONAL_GENESIS", at,
                      "a revision-one provisional claim has no incoming transition")
            continue
        if (revision == 1 or step is not None) and (step or {}).get("to") != status:
            c.add("CLAIM_TRANSITION_MISMATCH", at,
                  f"the final transition does not establish {claim['id']} as {status}")
        if is_int(revision) and revision > 1 and status == "provisional" \
                and (step or {}).get("to") != "provisional":
            c.add("INVALID_PROVISIONAL_GENESIS", at,
                  "a later provisional claim needs a legal incoming transition")


# -- worker output ---------------------------------------------------------------

def _dossier(c: Sink, value: dict[str, Any]) -> None:
    closed(c, value, ("kind", "schemaVersion", "id", "runId", "waveId", "laneId", "mode",
                      "outcome", "allowedInputs", "excludedInputs", "findings", "uncertainty",
                      "contradictions", "gaps"), "$")
    for key in ("runId", "waveId", "laneId", "mode", "outcome"):
        member(c, value, key, TEXT, "$")
    if value.get("mode") not in WORKER_MODES:
        c.add("INVALID_WORKER_MODE", "$.mode", "unknown worker mode")
    if value.get("outcome") not in ("complete", "partial", "failed"):
        c.add("INVALID_DOSSIER_OUTCOME", "$.outcome", "unknown dossier outcome")
    for key in ("allowedInputs", "excludedInputs", "findings", "uncertainty", "contradictions",
                "gaps"):
        member(c, value, key, LIST, "$")


_BRIEF_COMMON = ("kind", "schemaVersion", "id", "runId", "mode", "createdAt", "excludedInputs")


def _brief(c: Sink, value: dict[str, Any]) -> None:
    for key in ("id", "runId", "mode", "createdAt"):
        member(c, value, key, TEXT, "$")
    brief_id, created = value.get("id"), value.get("createdAt")
    if type(brief_id) is str and (len(brief_id) > 64 or not _BRIEF_ID.fullmatch(brief_id)):
        c.add("INVALID_REVIEW_BRIEF", "$.id", "a brief id is a lowercase slug of at most 64")
    if type(created) is str and not (_BRIEF_TIME.fullmatch(created) and _timestamp(created)):
        c.add("INVALID_REVIEW_BRIEF", "$.createdAt", "a brief's createdAt is a UTC ISO-8601 instant")
    member(c, value, "excludedInputs", LIST, "$")
    mode = value.get("mode")
    if mode == "verify":
        member(c, value, "claims", LIST, "$")
        member(c, value, "sources", LIST, "$")
        closed(c, value, (*_BRIEF_COMMON, "claims", "sources"), "$")
        cited: set[str] = set()
        for index, claim in enumerate(items(value.get("claims"))):
            at = f"$.claims[{index}]"
            member(c, claim, "id", TEXT, at)
            member(c, claim, "statement", TEXT, at)
            member(c, claim, "evidence", LIST, at)
            closed(c, claim, ("id", "statement", "evidence"), at)
            for n, record in enumerate(items(claim.get("evidence") if type(claim) is dict
                                             else None)):
                there = f"{at}.evidence[{n}]"
                for key in ("id", "sourceId", "displayExcerpt"):
                    member(c, record, key, TEXT, there)
                member(c, record, "locator", ANY_OBJECT, there)
                closed(c, record, ("id", "sourceId", "displayExcerpt", "locator"), there)
                if type(record) is dict and type(record.get("sourceId")) is str:
                    cited.add(record["sourceId"])
        sources = items(value.get("sources"))
        supplied = text_ids(sources)
        for index, source in enumerate(sources):
            if type(source) is not dict:
                c.add("INVALID_SOURCE_DESCRIPTOR", f"$.sources[{index}]",
                      "verification brief sources are objects")
                continue
            _source(c, source, f"$.sources[{index}]")
            if isinstance(source.get("id"), str) and source["id"] not in cited:
                c.add("UNREFERENCED_SOURCE_DESCRIPTOR", f"$.sources[{index}].id",
                      f"brief source {source['id']} backs no shown evidence")
        _unique_ids(c, sources, "$.sources")
        for sid in sorted(cited - supplied):
            c.add("MISSING_SOURCE_DESCRIPTOR", "$.sources",
                  f"evidence source {sid} has no brief source descriptor")
    elif mode in ("adversary", "coverage"):
        entries = "provisionalStatements" if mode == "adversary" else "claims"
        member(c, value, "scope", ANY_OBJECT, "$")
        member(c, value, "questions", LIST, "$")
        member(c, value, entries, LIST, "$")
        closed(c, value, (*_BRIEF_COMMON, "scope", "questions", entries), "$")
        closed(c, value.get("scope"), ("included", "excluded"), "$.scope")
        for key in ("included", "excluded"):
            member(c, value.get("scope"), key, LIST, "$.scope")
        for index, entry in enumerate(items(value.get(entries))):
            at = f"$.{entries}[{index}]"
            member(c, entry, "id", TEXT, at)
            member(c, entry, "statement", TEXT, at)
            closed(c, entry, ("id", "statement"), at)
    else:
        c.add("INVALID_REVIEW_MODE", "$.mode", "unknown review brief mode")


def _unresolved(value: Any, covered: set[str]) -> str | None:
    """Why one unresolved-issue entry is not a recognised form (None when it is)."""
    if type(value) is str:
        return None
    if type(value) is not dict:
        return "an unresolved issue is a string or a scoped issue object"
    if type(value.get("text")) is not str or not value["text"].strip():
        return "a scoped unresolved issue has non-empty text"
    if set(value) == {"text", "scope"}:
        return None if value["scope"] == "global" else "an unresolved issue scope is global"
    ids = value.get("claimIds")
    if set(value) != {"text", "claimIds"} or type(ids) is not list or not ids \
            or not all(type(x) is str and x for x in ids) or len(set(ids)) != len(ids):
        return "an unresolved issue names unique claim ids or the global scope"
    if any(x not in covered for x in ids):
        return "an unresolved issue names claims the review does not cover"
    return None


def _result(c: Sink, value: dict[str, Any]) -> None:
    for key in ("id", "runId", "reviewKind", "reviewerLane", "status"):
        member(c, value, key, TEXT, "$")
    for key in ("permittedInputs", "excludedInputs", "dispositions", "newEvidence",
                "coverageFindings", "unresolvedIssues"):
        member(c, value, key, LIST, "$")
    kind = value.get("reviewKind")
    covered = {d.get("claimId") for d in items(value.get("dispositions")) if type(d) is dict
               and isinstance(d.get("claimId"), str)}
    for index, entry in enumerate(items(value.get("unresolvedIssues"))):
        why = _unresolved(entry, {x for x in covered if isinstance(x, str)})
        if why:
            c.add("INVALID_UNRESOLVED_ISSUE", f"$.unresolvedIssues[{index}]", why)
    if not isinstance(kind, str) or kind not in DISPOSITIONS:
        c.add("INVALID_REVIEW_KIND", "$.reviewKind", "unknown review result kind")
    if value.get("status") not in ("complete", "failed"):
        c.add("INVALID_REVIEW_STATUS", "$.status", "unknown review status")
    if kind == "reconciliation":
        _reconciliation(c, value)
    else:
        _reference(c, value.get("brief"), "$.brief")
    for index, ref in enumerate(items(value.get("permittedInputs"))):
        _reference(c, ref, f"$.permittedInputs[{index}]")
    allowed = DISPOSITIONS.get(str(kind))
    for index, item in enumerate(items(value.get("dispositions"))):
        at = f"$.dispositions[{index}]"
        member(c, item, "claimId", TEXT, at)
        member(c, item, "disposition", TEXT, at)
        closed(c, item, ("claimId", "disposition"), at)
        if allowed is not None and (item.get("disposition") if type(item) is dict else None) \
                not in allowed:
            c.add("INVALID_REVIEW_DISPOSITION", f"{at}.disposition",
                  "the disposition does not belong to this review kind")
    if kind == "contradiction-resolution":
        member(c, value, "contradictionDispositions", LIST, "$")
        for index, item in enumerate(items(value.get("contradictionDispositions"))):
            at = f"$.contradictionDispositions[{index}]"
            member(c, item, "contradictionId", TEXT, at)
            member(c, item, "claimIds", LIST, at)
            member(c, item, "disposition", TEXT, at)
            if (item.get("disposition") if type(item) is dict else None) \
                    not in ("resolved", "unresolved"):
                c.add("INVALID_CONTRADICTION_DISPOSITION", f"{at}.disposition",
                      "a contradiction is resolved or unresolved")
            closed(c, item, ("contradictionId", "claimIds", "disposition"), at)
    if kind in ("redundant-verification", "contradiction-resolution") and (
            not items(value.get("dispositions")) or not items(value.get("permittedInputs"))
            or (kind == "contradiction-resolution"
                and not items(value.get("contradictionDispositions")))):
        c.add("EMPTY_ASSURANCE_RESULT", "$",
              "a thorough assurance result binds inputs, claims and contradictions")
    for index, finding in enumerate(items(value.get("coverageFindings"))):
        at = f"$.coverageFindings[{index}]"
        for key in ("id", "gapId", "code", "message"):
            member(c, finding, key, TEXT, at)
        member(c, finding, "claimIds", LIST, at)
        member(c, finding, "material", BOOL, at)
        closed(c, finding, ("id", "gapId", "code", "message", "material", "claimIds"), at)
    if kind not in ("coverage", "reconciliation") and items(value.get("coverageFindings")):
        c.add("INVALID_COVERAGE_FINDING_OWNER", "$.coverageFindings",
              "only coverage results report coverage findings")
    for index, record in enumerate(items(value.get("newEvidence"))):
        _evidence_record(c, record, f"$.newEvidence[{index}]", new=True)
    if items(value.get("newEvidence")) or "evidenceAssociations" in value:
        member(c, value, "evidenceAssociations", LIST, "$")
    for index, link in enumerate(items(value.get("evidenceAssociations"))):
        at = f"$.evidenceAssociations[{index}]"
        for key in ("evidenceId", "claimId", "relation"):
            member(c, link, key, TEXT, at)
        if (link.get("relation") if type(link) is dict else None) not in RELATIONS:
            c.add("INVALID_EVIDENCE_RELATION", f"{at}.relation", "unknown relation")
        closed(c, link, ("evidenceId", "claimId", "relation"), at)
    common = ("kind", "schemaVersion", "id", "runId", "reviewKind", "reviewerLane", "status",
              "permittedInputs", "excludedInputs", "dispositions", "newEvidence",
              "evidenceAssociations", "coverageFindings", "unresolvedIssues")
    extra = {"reconciliation": ("inputLedger", "outputRevision", "incorporatedReviewIds",
                                "transitions", "additions", "removals", "removalDispositions",
                                "coverageDispositions"),
             "contradiction-resolution": ("brief", "contradictionDispositions")}
    closed(c, value, (*common, *extra.get(str(kind), ("brief",))), "$")


def _reconciliation(c: Sink, value: dict[str, Any]) -> None:
    member(c, value, "inputLedger", ANY_OBJECT, "$")
    ledger = value.get("inputLedger")
    if type(ledger) is dict:
        _reference(c, ledger, "$.inputLedger", ("revision",))
        if not is_int(ledger.get("revision")):
            c.add("INVALID_REVISION", "$.inputLedger.revision", "an input revision is an integer")
    if not is_int(value.get("outputRevision")):
        c.add("INVALID_REVISION", "$.outputRevision", "outputRevision is an integer")
    for key in ("incorporatedReviewIds", "transitions", "additions", "removals",
                "removalDispositions", "coverageDispositions"):
        member(c, value, key, LIST, "$")
    for key in ("additions", "removals"):
        seen: set[Any] = set()
        for index, cid in enumerate(items(value.get(key))):
            if type(cid) is not str or not cid or cid in seen:
                c.add("INVALID_RECONCILIATION_MEMBERSHIP", f"$.{key}[{index}]",
                      f"{key} holds unique non-empty claim ids")
            seen.add(cid if isinstance(cid, str) else None)
    for index, item in enumerate(items(value.get("removalDispositions"))):
        at = f"$.removalDispositions[{index}]"
        for key in ("claimId", "reviewId", "disposition"):
            member(c, item, key, TEXT, at)
        if (item.get("disposition") if type(item) is dict else None) != "rejected":
            c.add("INVALID_REMOVAL_DISPOSITION", f"{at}.disposition",
                  "a removal is authorized by a rejected disposition")
        closed(c, item, ("claimId", "reviewId", "disposition"), at)
    for index, step in enumerate(items(value.get("transitions"))):
        at = f"$.transitions[{index}]"
        closed(c, step, ("claimId", "from", "to"), at)
        member(c, step, "claimId", TEXT, at)
        step = step if type(step) is dict else {}
        if not _legal(step):
            c.add("ILLEGAL_CLAIM_TRANSITION", at,
                  f"illegal claim transition {step.get('from')} -> {step.get('to')}")
    for index, item in enumerate(items(value.get("coverageDispositions"))):
        at = f"$.coverageDispositions[{index}]"
        for key in ("findingId", "gapId", "disposition"):
            member(c, item, key, TEXT, at)
        item = item if type(item) is dict else {}
        if item.get("disposition") not in ("accepted-gap", "resolved"):
            c.add("INVALID_COVERAGE_DISPOSITION", f"{at}.disposition",
                  "a coverage disposition is accepted-gap or resolved")
        if item.get("disposition") == "resolved" and not items(item.get("evidenceIds")):
            c.add("INVALID_COVERAGE_DISPOSITION", f"{at}.evidenceIds",
                  "a resolved finding names its evidence")
        closed(c, item, ("findingId", "gapId", "disposition", "evidenceIds"), at)


def strings(value: Any) -> list[str]:
    """Every string value inside ``value`` (object values and array members), in order."""
    if type(value) is str:
        return [value]
    if type(value) is not dict and type(value) is not list:
        return []
    out: list[str] = []
    append = out.append
    # One iterator per open container: the inner loop runs over a container's
    # members until it meets a nested one, which it enters (any depth, no recursion).
    stack = [iter(value.values() if type(value) is dict else value)]
    while stack:
        for item in stack[-1]:
            kind = type(item)
            if kind is str:
                append(item)
            elif kind is dict:
                stack.append(iter(item.values()))
                break
            elif kind is list:
                stack.append(iter(item))
                break
        else:
            stack.pop()
    return out
