"""The continuity projection (version 1): what to read before continuing an intent.

Given an intent read and its report, select the records an agent must see to
continue the work, within fixed bounds, and say exactly what was left out.

Selection, in bands (earlier bands first; within a band decision rows, then
constraints and rejections, then other records, each in discovery order):

0. records associated with an *active* requirement (``continuation.context``),
   the evidence its result cites, and their ``requires``/``depends-on`` closure;
1. the same for the active requirements' ancestors and unfinished descendants;
2. the mission: ``context.mission_record_ids`` and the intent record's own
   ``requires``/``depends-on`` links, with their closure.

Active requirements are ``continuation.active_requirement_ids`` when a
continuation is recorded (an explicit empty list stays empty), otherwise
every requirement not yet ``reported_complete_with_current_evidence``.
Records from the project, admitted historical scopes and ``global`` are
admitted; anything missing, private, foreign, retired, superseded or
oversized stays unresolved with a corrective literal read (``read_required``).

Bounds: 256 inspected nodes, 1,024 inspected edges, 128 KiB of UTF-8
canonical continuity JSON. ``limits`` reports usage; ``omitted`` names the
known frontier. The projection is a pure function of the snapshot.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from assay.canonical import canonical_bytes
from assay.errors import AssayError, UnavailableError
from assay.intent.decisions import DECISION_KIND, parse_event, replay
from assay.intent.snapshot import ProjectBinding, is_readable
from assay.ledger.store import Reader, Record

if TYPE_CHECKING:
    from assay.intent.check import IntentRead

__all__ = [
    "MAX_ACTIVE_IDS",
    "MAX_BYTES",
    "MAX_EDGES",
    "MAX_KNOWN_IDS",
    "MAX_NODES",
    "MAX_RECORD_DATA_BYTES",
    "project_continuity",
]

MAX_NODES = 256
MAX_EDGES = 1024
MAX_BYTES = 128 * 1024
MAX_ACTIVE_IDS = 256
MAX_KNOWN_IDS = 64
MAX_RECORD_DATA_BYTES = 16 * 1024
_FOLLOW = ("requires", "depends-on")
_COMPLETE = "reported_complete_with_current_evidence"
_CONSTRAINT_KINDS = ("constraint", "rejection")

_ACTIONS = {
    "context_record_missing": "Record it, or correct the association that names it.",
    "context_record_unreadable": "Read the stored text and correct the record.",
    "context_out_of_scope": "Associate a record of this project, an admitted scope or global.",
    "context_record_retired": "Read the record's history and associate its current replacement.",
    "context_record_unavailable": "Retry when the ledger is reachable.",
    "context_record_oversized": "Read the whole record; the projection holds only its identity.",
    "decision_conflict": "Read the decision stream and record one event superseding the heads.",
    "decision_superseded": "Read the current decision stream; a superseded event is not a choice.",
    "decision_unavailable": "Read the decision stream; no valid event was found for this key.",
    "continuity_truncated": "Read the omitted records named in omitted.known_ids.",
}


def _read_args(kind: str, target: str, root: str) -> list[str]:
    if kind == "raw":
        return ["get", "--raw", "--", target]
    if kind == "decision":
        return ["decision", "show", "--cwd", root, "--", target]
    return ["get", "--", target]


class _Selection:
    __slots__ = ("band", "index", "reasons", "record", "requirement_ids")

    def __init__(self, band: int, index: int) -> None:
        self.band = band
        self.index = index
        self.reasons: list[str] = []
        self.requirement_ids: list[str] = []
        self.record: Record | None = None

    def add(self, reason: str, requirement_id: str | None) -> None:
        if reason not in self.reasons:
            self.reasons.append(reason)
        if requirement_id is not None and requirement_id not in self.requirement_ids:
            self.requirement_ids.append(requirement_id)


def _active_ids(read: IntentRead, report: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    doc = read.document
    status = {row["id"]: row["status"] for row in report["delta"]["requirements"]}
    order = {rid: i for i, rid in enumerate(doc.requirement_ids)}
    parent = {r.id: r.parent_id for r in doc.requirements}
    children: dict[str, list[str]] = {r.id: [] for r in doc.requirements}
    for req in doc.requirements:
        if req.parent_id is not None:
            children[req.parent_id].append(req.id)
    if doc.continuation is not None:
        direct = list(doc.continuation.active_requirement_ids)
    else:
        direct = [rid for rid in doc.requirement_ids if status[rid] != _COMPLETE]
    related: set[str] = set()
    for rid in direct:
        up = parent[rid]
        while up is not None and up not in related:
            related.add(up)
            up = parent[up]
        stack = list(children[rid])
        while stack:
            child = stack.pop()
            if status[child] != _COMPLETE and child not in related:
                related.add(child)
                stack.extend(children[child])
    related -= set(direct)
    return direct, sorted(related, key=order.__getitem__)


def project_continuity(read: IntentRead, binding: ProjectBinding, report: Mapping[str, Any],
                       reader: Reader) -> dict[str, Any]:
    """The bounded continuity projection of one intent (see the module docstring)."""
    doc = read.document
    context = doc.continuation.context if doc.continuation else None
    direct, related = _active_ids(read, report)
    all_active = direct + related
    active_omitted = max(0, len(all_active) - MAX_ACTIVE_IDS)
    active_shown = all_active[:MAX_ACTIVE_IDS]

    associations = dict(context.requirement_record_ids) if context else {}
    cited: dict[str, list[str]] = {}
    for result in doc.acceptance.results if doc.acceptance else ():
        cited[result.requirement_id] = [ref.id for ref in result.evidence]
    seeds: list[tuple[int, str, str, str | None]] = []
    for band, rids in ((0, direct), (1, related)):
        for rid in rids:
            for target in associations.get(rid, ()):
                seeds.append((band, target, "requirement_association", rid))
            for target in cited.get(rid, ()):
                seeds.append((band, target, "cited_evidence", rid))
    for target in context.mission_record_ids if context else ():
        seeds.append((2, target, "mission", None))
    for link in read.record.links:
        if link.rel in _FOLLOW:
            seeds.append((2, link.target, "intent_dependency", None))

    selected: dict[str, _Selection] = {}
    issues: list[dict[str, Any]] = []
    nodes = edges = 0
    truncated = False
    frontier: dict[str, None] = {}  # ordered set: membership must stay O(1)
    queue: list[tuple[int, str, str, str | None]] = list(seeds)
    head = 0
    while head < len(queue):
        band, target, reason, via = queue[head]
        head += 1
        if target in selected:
            selected[target].add(reason, via)
            continue
        if target == read.record.id:
            continue
        if nodes >= MAX_NODES:
            truncated = True
            frontier.setdefault(target, None)
            continue
        nodes += 1
        sel = _Selection(band, len(selected))
        sel.add(reason, via)
        selected[target] = sel
        try:
            record = reader.get(target)
        except UnavailableError:
            issues.append(_issue("context_record_unavailable", target, "get", binding))
            continue
        except AssayError:
            issues.append(_issue("context_record_unreadable", target, "raw", binding))
            continue
        if record is not None and not is_readable(record, binding.principal):
            record = None  # private to someone else: indistinguishable from absent
        problem = _problem(record, binding)
        if problem is not None:
            issues.append(_issue(problem, target, "raw" if problem == "context_record_retired"
                                 else "get", binding))
            if problem != "context_record_retired" or record is None:
                continue
        assert record is not None
        sel.record = record
        for link in record.links:
            if link.rel not in _FOLLOW:
                continue
            if edges >= MAX_EDGES:
                truncated = True
                if link.target not in selected:
                    frontier.setdefault(link.target, None)
                continue
            edges += 1
            queue.append((band, link.target, "dependency", via))

    # Decision streams of every selected decision event.
    keys: dict[str, _Selection] = {}
    selected_events: dict[str, list[Record]] = {}
    for sel in selected.values():
        record = sel.record
        if record is None or record.kind != DECISION_KIND:
            continue
        event = parse_event(record)
        key = event.key if event else f"(invalid) {record.id}"
        selected_events.setdefault(key, []).append(record)
        if key not in keys:
            keys[key] = sel
        else:
            for reason in sel.reasons:
                keys[key].add(reason, None)
            for rid in sel.requirement_ids:
                keys[key].add(sel.reasons[0], rid)
    decision_rows: list[tuple[_Selection, dict[str, Any]]] = []
    for key, sel in keys.items():
        stream = _stream(reader, key, binding, selected_events[key])
        nodes += max(0, len(stream) - len(selected_events[key]))
        outcome = replay(key, stream)
        row = {
            "key": key,
            "status": outcome["status"],
            "choice": outcome["choice"],
            "head_event_ids": outcome["head_event_ids"],
            "selected_event_ids": [r.id for r in selected_events[key]],
            "revisions": {r.id: r.revision for r in sorted(stream, key=lambda r: r.id)},
            "conflict": outcome["conflict"],
            "provenance": [
                {"id": r.id, "revision": r.revision, "scope": r.scope, "origin": r.origin,
                 "status": r.status}
                for r in sorted(stream, key=lambda r: (r.ledger_revision, r.id))
            ],
            "read_args": _read_args("decision", key, binding.root),
        }
        decision_rows.append((sel, row))
        if outcome["status"] == "conflict":
            issues.append(_decision_issue("decision_conflict", key, binding))
        elif outcome["status"] == "unavailable":
            issues.append(_decision_issue("decision_unavailable", key, binding))
        elif any(r.id not in outcome["head_event_ids"] for r in selected_events[key]):
            issues.append(_decision_issue("decision_superseded", key, binding))

    rows: list[tuple[tuple[int, int, int], str, dict[str, Any], _Selection]] = []
    for sel, row in decision_rows:
        rows.append(((sel.band, 0, sel.index), "decision", row, sel))
    for target, sel in selected.items():
        record = sel.record
        if record is None or record.kind == DECISION_KIND:
            continue
        priority = 1 if _is_constraint(record) else 2
        row, oversized = _normalize(record)
        if oversized:
            issues.append(_issue("context_record_oversized", target, "get", binding))
        rows.append(((sel.band, priority, sel.index), "record", row, sel))
    rows.sort(key=lambda item: item[0])
    records_out: list[dict[str, Any]] = []
    decisions_out: list[dict[str, Any]] = []
    for order, (_, kind, row, sel) in enumerate(rows, start=1):
        row["selection"] = {
            "reasons": sel.reasons,
            "requirement_ids": sel.requirement_ids,
            "order": order,
            "reason": sel.reasons[0],
        }
        (decisions_out if kind == "decision" else records_out).append(row)

    projection = _assemble(doc, context, active_shown, records_out, decisions_out, issues,
                           truncated, list(frontier), nodes, edges, active_omitted, binding)
    return projection


def _assemble(doc: Any, context: Any, active: list[str], records: list[dict[str, Any]],
              decisions: list[dict[str, Any]], issues: list[dict[str, Any]], truncated: bool,
              frontier: list[str], nodes: int, edges: int, active_omitted: int,
              binding: ProjectBinding) -> dict[str, Any]:
    dropped: list[str] = []
    while True:
        limits = {"max_nodes": MAX_NODES, "max_edges": MAX_EDGES, "max_bytes": MAX_BYTES,
                  "nodes": min(nodes, MAX_NODES), "edges": min(edges, MAX_EDGES), "bytes": 0}
        shown_issues = list(issues)
        if truncated or dropped:
            shown_issues.append({
                "code": "continuity_truncated",
                "message": "the projection reached its bounds; some records were not included",
                "action": _ACTIONS["continuity_truncated"],
            })
        dropped_set = set(dropped)
        known = dropped + [f for f in frontier if f not in dropped_set]
        read_required = _read_required(shown_issues, known[:MAX_KNOWN_IDS], binding)
        out = {
            "version": 1,
            "association_mode": "explicit" if context is not None else "legacy_defaults",
            "active_requirement_ids": active,
            "records": records,
            "decisions": decisions,
            "issues": shown_issues,
            "read_required": read_required,
            "complete": not shown_issues,
            "truncated": bool(truncated or dropped),
            "limits": limits,
            "omitted": {
                "known_ids": known[:MAX_KNOWN_IDS],
                "deeper_count_unknown": bool(truncated or len(known) > MAX_KNOWN_IDS),
                "active_requirement_ids_omitted": active_omitted,
            },
        }
        # The byte count is part of the document: encode once with a placeholder
        # 0, then settle the count's own digits arithmetically.
        base = len(canonical_bytes(out)) - 1
        size = base + 1
        while base + len(str(size)) != size:
            size = base + len(str(size))
        limits["bytes"] = size
        if size <= MAX_BYTES or not (records or decisions):
            return out
        # Drop the last rows (lowest priority) until the projection fits; a
        # rough estimate first so a large overflow does not take many passes.
        excess = size - MAX_BYTES
        while excess > 0 and (records or decisions):
            victim_list = _last_list(records, decisions)
            victim = victim_list.pop()
            dropped.insert(0, str(victim.get("id") or victim.get("key")))
            excess -= len(canonical_bytes(victim))
        dropped = sorted(set(dropped), key=dropped.index)


def _last_list(records: list[dict[str, Any]], decisions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if not records:
        return decisions
    if not decisions:
        return records
    last_record = records[-1]["selection"]["order"]
    last_decision = decisions[-1]["selection"]["order"]
    return records if last_record > last_decision else decisions


def _read_required(issues: list[dict[str, Any]], known: list[str],
                   binding: ProjectBinding) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, ...]] = set()
    for issue in issues:
        args = issue.get("read_args")
        if args and tuple(args) not in seen:
            seen.add(tuple(args))
            entry = {"reason": issue["code"], "read_args": args, "action": issue["action"]}
            entry["key" if "key" in issue else "id"] = issue.get("key") or issue.get("id")
            out.append(entry)
    for target in known:
        args = _read_args("get", target, binding.root)
        if tuple(args) not in seen:
            seen.add(tuple(args))
            out.append({"id": target, "reason": "continuity_truncated", "read_args": args,
                        "action": _ACTIONS["continuity_truncated"]})
    return out


def _problem(record: Record | None, binding: ProjectBinding) -> str | None:
    if record is None:
        return "context_record_missing"
    if record.scope not in binding.context_scopes:
        return "context_out_of_scope"
    if record.status != "current" and record.kind != DECISION_KIND:
        return "context_record_retired"
    return None


def _issue(code: str, target: str, read: str, binding: ProjectBinding) -> dict[str, Any]:
    messages = {
        "context_record_missing": f"{target} does not exist",
        "context_record_unreadable": f"{target} could not be decoded from the ledger",
        "context_out_of_scope": f"{target} belongs to a scope this project does not admit",
        "context_record_retired": f"{target} is retired or superseded",
        "context_record_unavailable": f"{target} could not be read",
        "context_record_oversized": f"{target} is too large to include in the projection",
    }
    return {"code": code, "id": target, "message": messages[code], "action": _ACTIONS[code],
            "read_args": _read_args(read, target, binding.root)}


def _decision_issue(code: str, key: str, binding: ProjectBinding) -> dict[str, Any]:
    messages = {
        "decision_conflict": f"decision {key!r} has conflicting current events",
        "decision_superseded": f"a selected event of decision {key!r} has been superseded",
        "decision_unavailable": f"decision {key!r} has no valid event",
    }
    return {"code": code, "key": key, "message": messages[code], "action": _ACTIONS[code],
            "read_args": _read_args("decision", key, binding.root)}


def _is_constraint(record: Record) -> bool:
    if record.kind in _CONSTRAINT_KINDS:
        return True
    data = record.data
    return isinstance(data, dict) and data.get("category") in _CONSTRAINT_KINDS


def _normalize(record: Record) -> tuple[dict[str, Any], bool]:
    row: dict[str, Any] = {
        "id": record.id,
        "kind": record.kind,
        "scope": record.scope,
        "revision": record.revision,
        "status": record.status,
        "origin": record.origin,
        "data_sha256": record.data_sha256,
        "links": [link.to_dict() for link in record.links],
    }
    size = len(record.data_text.encode("utf-8")) if record.data_text else len(
        canonical_bytes(record.data))
    oversized = size > MAX_RECORD_DATA_BYTES
    if oversized:
        row["data"] = None
        row["data_omitted"] = True
    else:
        row["data"] = record.data
    return row, oversized


def _stream(reader: Reader, key: str, binding: ProjectBinding,
            selected: list[Record]) -> list[Record]:
    """Every readable event of ``key`` in admitted scopes (always including the selected ones)."""
    found = {r.id: r for r in selected}
    try:
        candidates = reader.find(kind=DECISION_KIND, scopes=list(binding.context_scopes),
                                 query=key, limit=10_000)
    except UnavailableError:
        candidates = []
    for record in candidates:
        data = record.data
        if isinstance(data, dict) and data.get("key") == key and is_readable(
                record, binding.principal):
            found.setdefault(record.id, record)
    return list(found.values())
