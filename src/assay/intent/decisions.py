"""Decision streams: immutable ``decision-event:`` records replayed to a current choice.

A decision event's ``data`` is the closed object::

    {version: 1, key, choice, reason, supersedes: [decision-event ids]}

Events are never edited. A later event names the events it supersedes; the
stream's current choice is the choice of its *heads* (events no other event
supersedes and whose record is current). Superseding is permanent: once an
event is superseded, superseding its successor does not revive it. Two heads
with different choices are a named ``conflict``; a stream with no current
head (no valid event, or every event superseded or retired) is
``unavailable``.

Replay is a pure function of the event records; reading them is the
caller's. Imports only the base modules and the ledger contract.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from assay.errors import AssayError, UnavailableError, pointer
from assay.ids import content_id
from assay.intent.snapshot import is_readable
from assay.ledger.store import Reader, Record
from assay.value import frozen_value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "DECISION_KIND",
    "DecisionEvent",
    "event_record_id",
    "parse_event",
    "read_stream",
    "replay",
    "validate_event_data",
    "validate_key",
]

DECISION_KIND = "decision-event"
_KEY = r"[^\x00-\x1f\x7f]{1,200}"  # compiled (and cached by re) when first used
_EVENT_KEYS = {"version", "key", "choice", "reason", "supersedes"}


@frozen_value
class DecisionEvent:
    """One valid decision event version."""

    id: str
    revision: int
    ledger_revision: int
    key: str
    choice: str
    reason: str
    supersedes: tuple[str, ...]
    status: str
    scope: str
    origin: str


def validate_key(key: Any, *, where: str = "/key") -> str:
    """Return a decision key (1-200 characters, no control characters, not blank)."""
    if not isinstance(key, str) or not re.fullmatch(_KEY, key) or not key.strip():
        raise AssayError("a decision key is 1 to 200 characters without control characters",
                         code="invalid_decision_key", pointer=where,
                         action="Use a short stable key such as storage-backend.")
    return key


def validate_event_data(data: Any) -> dict[str, Any]:
    """Check decision-event data exactly; ``invalid_decision_event`` names the field."""

    def fail(field: str, problem: str) -> AssayError:
        return AssayError(f"invalid decision event: {problem}", code="invalid_decision_event",
                          pointer=pointer("data", *([field] if field else [])))

    if not isinstance(data, dict):
        raise fail("", "data must be an object")
    for name in data:
        if name not in _EVENT_KEYS:
            raise fail(name, f"unknown key {name!r}")
    for name in sorted(_EVENT_KEYS):
        if name not in data:
            raise fail(name, "is required")
    if data["version"] != 1 or isinstance(data["version"], bool):
        raise fail("version", "must be the integer 1")
    try:
        validate_key(data["key"])
    except AssayError:
        raise fail("key", "must be 1 to 200 characters without control characters") from None
    for name in ("choice", "reason"):
        if not isinstance(data[name], str) or not data[name].strip():
            raise fail(name, "must be a non-blank string")
    sup = data["supersedes"]
    if not isinstance(sup, list) or not all(
        isinstance(s, str) and s.startswith(DECISION_KIND + ":") for s in sup
    ) or len(set(sup)) != len(sup):
        raise fail("supersedes", "must be distinct decision-event record ids")
    return data


def event_record_id(key: str, choice: str, reason: str, supersedes: Sequence[str]) -> str:
    """The content-derived id of an event: the same content always has the same id."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", key.lower()).strip("-._")[:64] or "decision"
    token = content_id("d", {"key": key, "choice": choice, "reason": reason,
                             "supersedes": sorted(supersedes)})
    return f"{DECISION_KIND}:{slug}.{token[2:]}"


def parse_event(record: Record) -> DecisionEvent | None:
    """The event a record holds, or None when its data is not a valid (or readable) event."""
    if record.kind != DECISION_KIND or record.damage is not None:
        return None
    try:
        data = validate_event_data(record.data)
    except AssayError:
        return None
    return DecisionEvent(
        id=record.id, revision=record.revision, ledger_revision=record.ledger_revision,
        key=data["key"], choice=data["choice"], reason=data["reason"],
        supersedes=tuple(data["supersedes"]), status=record.status, scope=record.scope,
        origin=record.origin,
    )


def replay(key: str, records: Iterable[Record]) -> dict[str, Any]:
    """Replay the stream of ``key`` from its event records to the current choice.

    Returns ``{key, status, choice, head_event_ids, event_ids, events,
    invalid_event_ids, unreadable_event_ids, conflict}``: ``status`` is
    ``resolved``, ``conflict`` or ``unavailable``. Events are ordered by the
    ledger revision that wrote them, so the result does not depend on the
    order ``records`` arrive in. Any unreadable event makes the stream
    ``unavailable`` with no choice.
    """
    events: list[DecisionEvent] = []
    invalid: list[str] = []
    unreadable: list[Record] = []
    for record in sorted(records, key=lambda r: (r.ledger_revision, r.id)):
        if record.kind == DECISION_KIND and record.damage is not None:
            unreadable.append(record)
            continue
        event = parse_event(record)
        if event is None:
            if record.kind == DECISION_KIND and _names_key(record, key):
                invalid.append(record.id)
            continue
        if event.key == key:
            events.append(event)
    superseded: dict[str, str] = {}
    for event in events:
        for old in event.supersedes:
            superseded.setdefault(old, event.id)
    # With a damaged event nothing is known to be a head: what it superseded is unknown.
    heads = [] if unreadable else [e for e in events
                                   if e.id not in superseded and e.status == "current"]
    choices = sorted({e.choice for e in heads})
    conflict = None
    if not heads:
        # No event, a damaged one, or every event superseded or retired (a
        # dropped decision): there is no current choice, and none is revived.
        status, choice = "unavailable", None
    elif len(choices) == 1:
        status, choice = "resolved", choices[0]
    else:
        status, choice = "conflict", None
        conflict = {
            "event_ids": [e.id for e in heads],
            "choices": choices,
            "message": f"{len(heads)} events of {key!r} supersede none of each other",
        }
    return {
        "key": key,
        "status": status,
        "choice": choice,
        "head_event_ids": [e.id for e in heads],
        "event_ids": [e.id for e in events],
        "events": [
            {
                "id": e.id,
                "revision": e.revision,
                "choice": e.choice,
                "reason": e.reason,
                "supersedes": list(e.supersedes),
                "superseded_by": superseded.get(e.id),
                "status": e.status,
                "origin": e.origin,
            }
            for e in events
        ],
        "invalid_event_ids": invalid,
        "unreadable_event_ids": [r.id for r in unreadable],
        "conflict": conflict,
    }


def _names_key(record: Record, key: str) -> bool:
    return isinstance(record.data, dict) and record.data.get("key") == key


def read_stream(reader: Reader, key: str, scopes: Sequence[str], principal: str, *,
                include: Iterable[Record] = (), limit: int = 100_000) -> list[Record]:
    """Every readable event record of ``key`` in ``scopes`` (plus ``include``), any order.

    A damaged event record whose stored text still holds the key is part of
    the stream: its damage must make the stream unavailable, not vanish it.
    A search the reader cannot run (a past snapshot) finds only ``include``.
    """
    found = {r.id: r for r in include}
    try:
        candidates = reader.find(kind=DECISION_KIND, scopes=list(scopes), data_field=("key", key),
                                 limit=limit)
    except UnavailableError:
        candidates = []
    for record in candidates:
        if not is_readable(record, principal) or record.id in found:
            continue
        if record.damage is not None or _names_key(record, key):
            found[record.id] = record
    return list(found.values())
