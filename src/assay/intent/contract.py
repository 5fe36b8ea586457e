"""The intent contract: exact validation of an intent record's ``data``.

An intent lives in the ``data`` of a current project ``knowledge`` record::

    {intent, acceptance?, tasks?, continuation?}

Every key set is closed. Any rule broken (wrong type, blank string, unknown
key, duplicate or unknown requirement id, a parent that is missing, itself or
part of a cycle, a malformed evidence reference, zero requirements, a
malformed continuation or context, a task naming an unknown requirement)
raises ``invalid_intent_contract`` whose pointer names the offending field,
prefixed with ``/data``. The first fault in document order is reported.

:func:`check_report_bound` is the one rule about size: an intent whose
readiness report could exceed the canonical encoder's bound of 100,000 JSON
values could be stored but never checked through the command line or MCP.
Writers (``put``, ``work new``, ``work accept``) refuse it; reading keeps
working on records stored before.

Facts that are readable *outcomes* rather than malformed input are left to
:mod:`assay.intent.check`: an absent ``acceptance`` (``missing_acceptance``),
a result with no evidence (``missing_evidence``) or a blank note
(``missing_claim_note``), and a result naming a requirement the intent no
longer has (``unknown_requirement``: the intent may have changed after the
result was recorded).

A requirement may name the evidence commands that verify it
(``verify_with``, names of ``[evidence.commands.NAME]``); that key is assay's
own addition to the interchange format.

This module imports only the base modules (errors, canonical, ids).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from assay.canonical import digest
from assay.errors import AssayError, pointer
from assay.ids import is_plain_record_id, split_record_id
from assay.value import frozen_value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "CODE",
    "REPORT_VALUE_BUDGET",
    "RESULT_STATUSES",
    "Acceptance",
    "ContextAssociation",
    "Continuation",
    "EvidenceRef",
    "IntentDocument",
    "Requirement",
    "RequirementResult",
    "TaskReference",
    "check_report_bound",
    "intent_data_schema",
    "intent_sha256",
    "name_record",
    "parse_intent_data",
]

CODE = "invalid_intent_contract"
RESULT_STATUSES = ("passed", "failed", "unverified")
# Compiled (and cached by re) when an intent's text first needs them.
_HEX_DIGITS = "0123456789abcdef"
_COMMAND_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}"
# The JSON values a requirement and a cited evidence reference add to a
# readiness report when each carries one issue (measured: 24 and 20 without
# an issue, about 31 and 30 with one), and what the rest of a report may hold
# (the continuity projection, the envelope, the frame). The encoder's bound
# is 100,000 values. A report in which most references carry several issues
# at once can still pass it; the bound refuses what could never fit.
_VALUES_PER_REQUIREMENT = 32
_VALUES_PER_REFERENCE = 30
_VALUES_PER_BLOCKER = 8
_VALUES_PER_TASK = 12
REPORT_VALUE_BUDGET = 100_000 - 22_000

_DATA_KEYS = ("intent", "acceptance", "tasks", "continuation")
_INTENT_KEYS = ("version", "brief", "user_reference", "requirements", "boundaries", "non_goals")
_REQUIREMENT_KEYS = ("id", "text", "acceptance")
_ACCEPTANCE_KEYS = ("intent_sha256", "results", "blockers")
_RESULT_KEYS = ("requirement_id", "status", "evidence", "notes")
_EVIDENCE_KEYS = ("id", "revision")
_TASK_KEYS = ("runtime_task_id", "owner", "requirement_ids", "status")
_CONTINUATION_KEYS = ("active_requirement_ids", "next_action")
_CONTEXT_KEYS = ("version", "mission_record_ids", "requirements")
_ASSOCIATION_KEYS = ("id", "record_ids")
# The key sets a well-formed item may have, for the quick path through long lists.
_PLAIN_REQUIREMENT = frozenset((*_REQUIREMENT_KEYS, "parent_id", "verify_with"))
_PLAIN_RESULT = frozenset(_RESULT_KEYS)
_PLAIN_EVIDENCE = frozenset((*_EVIDENCE_KEYS, "data_sha256"))


@frozen_value
class Requirement:
    """One requirement of the intent, in recorded order."""

    id: str
    text: str
    acceptance: str
    parent_id: str | None
    verify_with: tuple[str, ...] = ()


@frozen_value
class EvidenceRef:
    """A cited record version: ``{id, revision, data_sha256?}``."""

    id: str
    revision: int
    data_sha256: str | None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "revision": self.revision}
        if self.data_sha256 is not None:
            out["data_sha256"] = self.data_sha256
        return out


@frozen_value
class RequirementResult:
    """A supplied acceptance result for one requirement."""

    requirement_id: str
    status: str
    evidence: tuple[EvidenceRef, ...]
    notes: str


@frozen_value
class Acceptance:
    """The supplied acceptance mapping."""

    intent_sha256: str
    results: tuple[RequirementResult, ...]
    blockers: tuple[str, ...]


@frozen_value
class TaskReference:
    """An advisory task reference; its strings establish nothing."""

    runtime_task_id: str
    owner: str
    requirement_ids: tuple[str, ...]
    status: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "runtime_task_id": self.runtime_task_id,
            "owner": self.owner,
            "requirement_ids": list(self.requirement_ids),
            "status": self.status,
        }


@frozen_value
class ContextAssociation:
    """Records explicitly associated with the mission or one requirement."""

    mission_record_ids: tuple[str, ...]
    requirement_record_ids: tuple[tuple[str, tuple[str, ...]], ...]


@frozen_value
class Continuation:
    """The recorded handoff hint."""

    active_requirement_ids: tuple[str, ...]
    next_action: str
    context: ContextAssociation | None


@frozen_value
class IntentDocument:
    """A validated intent record data document."""

    intent: Mapping[str, Any]
    intent_sha256: str
    brief: str
    user_reference: str
    requirements: tuple[Requirement, ...]
    boundaries: tuple[str, ...]
    non_goals: tuple[str, ...]
    acceptance: Acceptance | None
    tasks: tuple[TaskReference, ...]
    continuation: Continuation | None
    continuation_raw: Any

    @property
    def requirement_ids(self) -> tuple[str, ...]:
        return tuple(r.id for r in self.requirements)


def intent_sha256(intent: Any) -> str:
    """Lowercase hex SHA-256 of the canonical ``intent`` object (only that object)."""
    return digest(intent)


def _fail(path: tuple[str | int, ...], problem: str) -> AssayError:
    return AssayError(
        f"invalid intent contract at {pointer(*path)}: {problem}",
        code=CODE,
        pointer=pointer(*path),
        action="Correct the named field of the record data and put it again with its write basis.",
    )


def _object(value: Any, path: tuple[str | int, ...], required: tuple[str, ...],
            optional: tuple[str, ...] = ()) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(path, "must be an object")
    for key in value:
        if key not in required and key not in optional:
            raise _fail((*path, key), f"unknown key {key!r}")
    for key in required:
        if key not in value:
            raise _fail((*path, key), "is required")
    return value


def _text(value: Any, path: tuple[str | int, ...]) -> str:
    if not isinstance(value, str):
        raise _fail(path, "must be a string")
    if not value.strip():
        raise _fail(path, "must not be blank")
    return value


def _array(value: Any, path: tuple[str | int, ...]) -> list[Any]:
    if not isinstance(value, list):
        raise _fail(path, "must be an array")
    return value


def _texts(value: Any, path: tuple[str | int, ...], *, distinct: bool = False) -> tuple[str, ...]:
    items = _array(value, path)
    out: list[str] = []
    for index, item in enumerate(items):
        text = _text(item, (*path, index))
        if distinct and text in out:
            raise _fail((*path, index), f"duplicate value {text!r}")
        out.append(text)
    return tuple(out)


def _record_ids(value: Any, path: tuple[str | int, ...]) -> tuple[str, ...]:
    ids = _texts(value, path, distinct=True)
    for index, record_id in enumerate(ids):
        _record_id(record_id, (*path, index))
    return ids


def _record_id(value: Any, path: tuple[str | int, ...]) -> str:
    text = _text(value, path)
    try:
        split_record_id(text)
    except AssayError as exc:
        raise _fail(path, exc.message) from None
    return text


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _version(value: Any, path: tuple[str | int, ...]) -> None:
    if not _integer(value) or value != 1:
        raise _fail(path, "must be the integer 1")


def name_record(exc: AssayError, record_id: str | None) -> AssayError:
    """``exc`` naming the intent record it is about: ``details.id``, message and action.

    A contract error says where in the data the fault is; the record id says
    in which record, so a caller holding several intents (an inventory, a
    batch of puts) knows which one to correct.
    """
    if record_id is None or exc.details.get("id") is not None:
        return exc
    exc.details = {"id": record_id, **exc.details}
    exc.message = f"{record_id}: {exc.message}"
    exc.args = (exc.message,)
    if exc.code == CODE:
        exc.action = (f"Correct {exc.pointer or 'the data'} of {record_id} and put it again "
                      "with its write basis.")
    return exc


def parse_intent_data(data: Any, *, base: tuple[str | int, ...] = ("data",),
                      record_id: str | None = None) -> IntentDocument:
    """Validate intent record data exactly and return it as an :class:`IntentDocument`.

    Raises ``invalid_intent_contract`` with the pointer of the first offending
    field (prefixed with ``base``, ``/data`` by default); with ``record_id``,
    the error names that record too (``details.id``, see :func:`name_record`).
    Never writes.
    """
    try:
        return _parse(data, base)
    except AssayError as exc:
        name_record(exc, record_id)
        raise


def _parse(data: Any, base: tuple[str | int, ...]) -> IntentDocument:
    doc = _object(data, base, ("intent",), ("acceptance", "tasks", "continuation"))
    ipath = (*base, "intent")
    intent = _object(doc["intent"], ipath, _INTENT_KEYS)
    _version(intent["version"], (*ipath, "version"))
    brief = _text(intent["brief"], (*ipath, "brief"))
    user_reference = _text(intent["user_reference"], (*ipath, "user_reference"))
    requirements = _requirements(intent["requirements"], (*ipath, "requirements"))
    boundaries = _texts(intent["boundaries"], (*ipath, "boundaries"))
    non_goals = _texts(intent["non_goals"], (*ipath, "non_goals"))
    known = {r.id for r in requirements}

    acceptance = None
    if "acceptance" in doc:
        acceptance = _acceptance(doc["acceptance"], (*base, "acceptance"))
    tasks: tuple[TaskReference, ...] = ()
    if "tasks" in doc:
        tasks = _tasks(doc["tasks"], (*base, "tasks"), known)
    continuation = None
    if "continuation" in doc:
        continuation = _continuation(doc["continuation"], (*base, "continuation"), known)
    try:
        sha256 = intent_sha256(intent)
    except AssayError as exc:  # e.g. lone_surrogate: point into the record data, not the intent
        exc.pointer = pointer(*ipath) + (exc.pointer or "")
        raise
    return IntentDocument(
        intent=intent,
        intent_sha256=sha256,
        brief=brief,
        user_reference=user_reference,
        requirements=requirements,
        boundaries=boundaries,
        non_goals=non_goals,
        acceptance=acceptance,
        tasks=tasks,
        continuation=continuation,
        continuation_raw=doc.get("continuation"),
    )


def _length(value: Any, *keys: str) -> int:
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return len(value) if isinstance(value, list) else 0


def check_report_bound(data: Any, *, record_id: str | None = None) -> None:
    """Refuse intent record data whose readiness report would pass 100,000 JSON values.

    The estimate counts every requirement (and its ``verify_with`` names),
    every cited evidence reference, blocker and task at what a report gives
    each with one issue. The pointer names the part that dominates:
    ``/data/intent/requirements`` or ``/data/acceptance/results``; with
    ``record_id`` the error names that record too. Cheap: it counts list
    lengths, it validates nothing else.
    """
    try:
        _check_bound(data)
    except AssayError as exc:
        name_record(exc, record_id)
        raise


def _check_bound(data: Any) -> None:
    if not isinstance(data, dict):
        return
    requirements = data.get("intent", {}).get("requirements") if isinstance(
        data.get("intent"), dict) else None
    if not isinstance(requirements, list):
        return
    results = data.get("acceptance", {}).get("results") if isinstance(
        data.get("acceptance"), dict) else None
    references = sum(_length(r, "evidence") for r in results) if isinstance(results, list) else 0
    tasks: list[Any] = data["tasks"] if isinstance(data.get("tasks"), list) else []
    req_cost = sum(_VALUES_PER_REQUIREMENT + _length(r, "verify_with") for r in requirements)
    ref_cost = references * _VALUES_PER_REFERENCE
    cost = (req_cost + ref_cost
            + _length(data, "acceptance", "blockers") * _VALUES_PER_BLOCKER
            + sum(_VALUES_PER_TASK + _length(t, "requirement_ids") for t in tasks))
    if cost <= REPORT_VALUE_BUDGET:
        return
    path: tuple[str | int, ...] = (("data", "intent", "requirements") if req_cost >= ref_cost
                                   else ("data", "acceptance", "results"))
    raise _fail(path, f"an intent of {len(requirements):,} requirements citing {references:,} "
                      "evidence references makes a readiness report too large to print "
                      f"(up to {cost:,} JSON values; the budget is {REPORT_VALUE_BUDGET:,}): "
                      "split it into several intents")


def _requirements(value: Any, path: tuple[str | int, ...]) -> tuple[Requirement, ...]:
    items = _array(value, path)
    if not items:
        raise _fail(path, "an intent needs at least one requirement")
    out: list[Requirement] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(items):
        if type(item) is dict and item.keys() <= _PLAIN_REQUIREMENT:
            # The quick path: a requirement every check below accepts as it is.
            rid, text, acceptance = item.get("id"), item.get("text"), item.get("acceptance")
            parent = item.get("parent_id")
            if (type(rid) is str and rid.strip() and rid not in seen
                    and (parent is None and "parent_id" not in item
                         or type(parent) is str and parent.strip())
                    and type(text) is str and text.strip()
                    and type(acceptance) is str and acceptance.strip()):
                seen[rid] = index
                out.append(Requirement(rid, text, acceptance, parent, _commands(
                    item["verify_with"], (*path, index, "verify_with"))
                    if "verify_with" in item else ()))
                continue
        rpath = (*path, index)
        req = _object(item, rpath, _REQUIREMENT_KEYS, ("parent_id", "verify_with"))
        rid = _text(req["id"], (*rpath, "id"))
        if rid in seen:
            raise _fail((*rpath, "id"), f"duplicate requirement id {rid!r}")
        seen[rid] = index
        parent = None
        if "parent_id" in req:
            parent = _text(req["parent_id"], (*rpath, "parent_id"))
        out.append(Requirement(
            id=rid,
            text=_text(req["text"], (*rpath, "text")),
            acceptance=_text(req["acceptance"], (*rpath, "acceptance")),
            parent_id=parent,
            verify_with=_commands(req["verify_with"], (*rpath, "verify_with"))
            if "verify_with" in req else (),
        ))
    parents = {r.id: r.parent_id for r in out}
    for index, node in enumerate(out):
        if node.parent_id is None:
            continue
        ppath = (*path, index, "parent_id")
        if node.parent_id == node.id:
            raise _fail(ppath, f"requirement {node.id!r} cannot be its own parent")
        if node.parent_id not in parents:
            raise _fail(ppath, f"unknown parent requirement {node.parent_id!r}")
    # Each requirement is walked up once: a walk stops at a root or at a
    # requirement already known to reach one, so the check is linear.
    position = {r.id: i for i, r in enumerate(out)}
    rooted: set[str] = set()
    for node in out:
        trail: list[str] = []
        on_trail: set[str] = set()
        current: str | None = node.id
        while current is not None and current not in rooted:
            if current in on_trail:
                cycle = trail[trail.index(current):]
                first = min(cycle, key=position.__getitem__)
                raise _fail((*path, position[first], "parent_id"),
                            f"requirement {first!r} is its own ancestor (a parent cycle)")
            trail.append(current)
            on_trail.add(current)
            current = parents[current]
        rooted.update(trail)
    return tuple(out)


def _commands(value: Any, path: tuple[str | int, ...]) -> tuple[str, ...]:
    names = _texts(value, path, distinct=True)
    for index, name in enumerate(names):
        if not re.fullmatch(_COMMAND_NAME, name):
            raise _fail((*path, index), f"{name!r} is not an evidence command name")
    return names


def _is_hex64(value: Any) -> bool:
    """Whether ``value`` is 64 lowercase hex digits (``[0-9a-f]{64}``, checked without a pattern)."""
    return isinstance(value, str) and len(value) == 64 and not value.strip(_HEX_DIGITS)


def _acceptance(value: Any, path: tuple[str | int, ...]) -> Acceptance:
    acc = _object(value, path, _ACCEPTANCE_KEYS)
    sha = acc["intent_sha256"]
    if not _is_hex64(sha):
        raise _fail((*path, "intent_sha256"), "must be 64 lowercase hex digits")
    results: list[RequirementResult] = []
    seen: set[str] = set()
    rpath = (*path, "results")
    for index, item in enumerate(_array(acc["results"], rpath)):
        if type(item) is dict and item.keys() == _PLAIN_RESULT:
            # The quick path: a result every check below accepts as it is.
            rid, status, notes = item["requirement_id"], item["status"], item["notes"]
            if (type(rid) is str and rid.strip() and rid not in seen
                    and status in RESULT_STATUSES and type(notes) is str):
                seen.add(rid)
                results.append(RequirementResult(
                    rid, status, _evidence(item["evidence"], (*rpath, index, "evidence")), notes))
                continue
        ipath = (*rpath, index)
        res = _object(item, ipath, _RESULT_KEYS)
        rid = _text(res["requirement_id"], (*ipath, "requirement_id"))
        if rid in seen:
            raise _fail((*ipath, "requirement_id"), f"a second result for requirement {rid!r}")
        seen.add(rid)
        status = res["status"]
        if status not in RESULT_STATUSES:
            raise _fail((*ipath, "status"), "must be one of passed, failed, unverified")
        evidence = _evidence(res["evidence"], (*ipath, "evidence"))
        notes = res["notes"]
        if not isinstance(notes, str):
            raise _fail((*ipath, "notes"), "must be a string")
        results.append(RequirementResult(rid, status, evidence, notes))
    blockers = _texts(acc["blockers"], (*path, "blockers"))
    return Acceptance(intent_sha256=sha, results=tuple(results), blockers=blockers)


def _evidence(value: Any, path: tuple[str | int, ...]) -> tuple[EvidenceRef, ...]:
    out: list[EvidenceRef] = []
    seen: set[str] = set()
    for index, item in enumerate(_array(value, path)):
        if type(item) is dict and item.keys() <= _PLAIN_EVIDENCE:
            # The quick path: a reference every check below accepts as it is.
            record_id, revision, sha = item.get("id"), item.get("revision"), item.get("data_sha256")
            if (type(record_id) is str and type(revision) is int and revision >= 1
                    and record_id not in seen and is_plain_record_id(record_id)
                    and (sha is None and "data_sha256" not in item
                         or type(sha) is str and len(sha) == 64 and not sha.strip(_HEX_DIGITS))):
                seen.add(record_id)
                out.append(EvidenceRef(record_id, revision, sha))
                continue
        epath = (*path, index)
        ref = _object(item, epath, _EVIDENCE_KEYS, ("data_sha256",))
        record_id = _record_id(ref["id"], (*epath, "id"))
        if record_id in seen:
            raise _fail((*epath, "id"), f"evidence {record_id!r} is cited twice in one result")
        seen.add(record_id)
        revision = ref["revision"]
        if not _integer(revision) or revision < 1:
            raise _fail((*epath, "revision"), "must be an integer >= 1")
        sha = ref.get("data_sha256")
        if "data_sha256" in ref and not _is_hex64(sha):
            raise _fail((*epath, "data_sha256"), "must be 64 lowercase hex digits")
        out.append(EvidenceRef(record_id, revision, sha))
    return tuple(out)


def _tasks(value: Any, path: tuple[str | int, ...], known: set[str]) -> tuple[TaskReference, ...]:
    out: list[TaskReference] = []
    for index, item in enumerate(_array(value, path)):
        tpath = (*path, index)
        task = _object(item, tpath, _TASK_KEYS)
        out.append(TaskReference(
            runtime_task_id=_text(task["runtime_task_id"], (*tpath, "runtime_task_id")),
            owner=_text(task["owner"], (*tpath, "owner")),
            requirement_ids=_known_ids(task["requirement_ids"], (*tpath, "requirement_ids"),
                                       known),
            status=_text(task["status"], (*tpath, "status")),
        ))
    return tuple(out)


def _known_ids(value: Any, path: tuple[str | int, ...], known: set[str]) -> tuple[str, ...]:
    ids = _texts(value, path, distinct=True)
    for index, rid in enumerate(ids):
        if rid not in known:
            raise _fail((*path, index), f"unknown requirement id {rid!r}")
    return ids


def _continuation(value: Any, path: tuple[str | int, ...], known: set[str]) -> Continuation:
    cont = _object(value, path, _CONTINUATION_KEYS, ("context",))
    active = _known_ids(cont["active_requirement_ids"], (*path, "active_requirement_ids"), known)
    next_action = _text(cont["next_action"], (*path, "next_action"))
    context = None
    if "context" in cont:
        cpath = (*path, "context")
        ctx = _object(cont["context"], cpath, _CONTEXT_KEYS)
        _version(ctx["version"], (*cpath, "version"))
        mission = _record_ids(ctx["mission_record_ids"], (*cpath, "mission_record_ids"))
        associations: list[tuple[str, tuple[str, ...]]] = []
        seen: set[str] = set()
        apath = (*cpath, "requirements")
        for index, item in enumerate(_array(ctx["requirements"], apath)):
            ipath = (*apath, index)
            assoc = _object(item, ipath, _ASSOCIATION_KEYS)
            rid = _text(assoc["id"], (*ipath, "id"))
            if rid not in known:
                raise _fail((*ipath, "id"), f"unknown requirement id {rid!r}")
            if rid in seen:
                raise _fail((*ipath, "id"), f"requirement {rid!r} is associated twice")
            seen.add(rid)
            associations.append((rid, _record_ids(assoc["record_ids"], (*ipath, "record_ids"))))
        context = ContextAssociation(mission, tuple(associations))
    return Continuation(active, next_action, context)


_NONBLANK = {"type": "string", "minLength": 1, "pattern": "\\S"}
_HEX = {"type": "string", "pattern": "^[0-9a-f]{64}$"}
_RECORD_ID = {"type": "string", "pattern": "^[a-z][a-z0-9-]*:.+$"}


def _closed(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required,
            "additionalProperties": False}


def intent_data_schema() -> dict[str, Any]:
    """The JSON Schema (2020-12) of intent record data.

    The schema states the shape; some rules are beyond it and enforced by
    :func:`parse_intent_data` alone: distinct requirement ids, parents that
    exist without cycles, results naming known requirements at most once, and
    distinct evidence ids within a result.
    """
    unique_texts = {"type": "array", "items": _NONBLANK, "uniqueItems": True}
    unique_ids = {"type": "array", "items": _RECORD_ID, "uniqueItems": True}
    requirement = _closed({"id": _NONBLANK, "text": _NONBLANK, "acceptance": _NONBLANK,
                           "parent_id": _NONBLANK,
                           "verify_with": {"type": "array", "uniqueItems": True, "items": {
                               "type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._-]*$"}}},
                          ["id", "text", "acceptance"])
    evidence = _closed({"id": _RECORD_ID, "revision": {"type": "integer", "minimum": 1},
                        "data_sha256": _HEX}, ["id", "revision"])
    result = _closed({
        "requirement_id": _NONBLANK,
        "status": {"enum": list(RESULT_STATUSES)},
        "evidence": {"type": "array", "items": evidence},
        "notes": {"type": "string"},
    }, list(_RESULT_KEYS))
    context = _closed({
        "version": {"const": 1},
        "mission_record_ids": unique_ids,
        "requirements": {"type": "array", "items": _closed(
            {"id": _NONBLANK, "record_ids": unique_ids}, ["id", "record_ids"])},
    }, list(_CONTEXT_KEYS))
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://assay.dev/schemas/intent-record-data-v1.json",
        "title": "Intent record data",
        "description": ("The data of a current project knowledge record holding an intent. "
                        "intent_sha256 is the lowercase hex SHA-256 of the RFC 8785 canonical "
                        "intent object; an evidence data_sha256 covers only the cited "
                        "version's data."),
        **_closed({
            "intent": _closed({
                "version": {"const": 1},
                "brief": _NONBLANK,
                "user_reference": _NONBLANK,
                "requirements": {"type": "array", "minItems": 1, "items": requirement},
                "boundaries": {"type": "array", "items": _NONBLANK},
                "non_goals": {"type": "array", "items": _NONBLANK},
            }, list(_INTENT_KEYS)),
            "acceptance": _closed({
                "intent_sha256": _HEX,
                "results": {"type": "array", "items": result},
                "blockers": {"type": "array", "items": _NONBLANK},
            }, list(_ACCEPTANCE_KEYS)),
            "tasks": {"type": "array", "items": _closed({
                "runtime_task_id": _NONBLANK, "owner": _NONBLANK,
                "requirement_ids": unique_texts, "status": _NONBLANK,
            }, list(_TASK_KEYS))},
            "continuation": _closed({
                "active_requirement_ids": unique_texts,
                "next_action": _NONBLANK,
                "context": context,
            }, list(_CONTINUATION_KEYS)),
        }, ["intent"]),
    }
