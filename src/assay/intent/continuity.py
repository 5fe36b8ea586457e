"""The continuity projection (version 1): what to read before continuing an intent.

Given an intent read and its report, select the records an agent must see to
continue the work, within fixed bounds, and say exactly what was left out.

Selection runs in bands; each band's dependency closure is complete before
the next band is seeded, so a later band can never exhaust the node bound
an earlier one needs:

0. ``active_requirement``: records associated with an *active* requirement
   (``continuation.context``) and the current evidence its result cites;
1. ``selected_branch``: the same for the active requirements' ancestors and
   unfinished descendants;
2. ``mission``: ``context.mission_record_ids`` and the intent record's own
   ``requires``/``depends-on`` links;
3. ``orientation``: current records of the project's scopes whose data says
   ``"context_role": "orientation"`` (standing constraints and rejections
   every continuation should see, associated or not).

Within a band, seeds are taken decisions and rejections/constraints first,
then by ``priority`` (an integer in the record data, higher first), then by
id. Each selected record follows its ``requires``/``depends-on`` links with
the reason ``dependency:<id>``; relevance (band, requirement ids) then flows
along the inspected edges. A row's ``selection`` holds its sorted
``reasons`` and ``requirement_ids``, its ``order`` (from 0, over records and
decisions together) and its ``reason`` (the band name, with ``_dependency``
when it was reached through a link). Rows are ordered by band, then
decisions and constraints before other records, then priority, then id.

Active requirements are ``continuation.active_requirement_ids`` when a
continuation is recorded (an explicit empty list stays empty), otherwise
every requirement whose subtree is not yet ready. Records from the project,
admitted historical scopes and ``global`` are admitted; anything missing,
private, foreign, retired, unreadable (stored data failing its integrity
check) or over the byte budget stays unresolved with a literal corrective
read in ``read_required``, and the projection goes on with the rest.

Bounds: 256 inspected nodes (``continuity_node_limit``), 1,024 inspected
edges (``continuity_edge_limit``), 128 KiB of UTF-8 canonical continuity
JSON (``continuity_byte_limit``, whole rows omitted). ``limits`` reports
usage; ``omitted`` names the known frontier; a node-bound cut also asks for
a re-read of the intent record. The projection is a pure function of the
snapshot; :func:`project_continuity` also returns every record version it
inspected, for the report's write basis.
"""

from __future__ import annotations

from collections.abc import Mapping

from assay.canonical import canonical_bytes
from assay.errors import UnavailableError
from assay.intent.decisions import DECISION_KIND, parse_event, read_stream, replay
from assay.intent.snapshot import IntentRead, ProjectBinding, is_readable, raw_read
from assay.ledger.store import Reader, Record, RecordUnreadable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "MAX_ACTIVE_IDS",
    "MAX_BYTES",
    "MAX_EDGES",
    "MAX_KNOWN_IDS",
    "MAX_NODES",
    "ORIENTATION",
    "project_continuity",
]

MAX_NODES = 256
MAX_EDGES = 1024
MAX_BYTES = 128 * 1024
MAX_ACTIVE_IDS = 256
MAX_KNOWN_IDS = 64
# Room kept free for the reads and issues that omitted rows add.
_RESERVE = 2048
ORIENTATION = "orientation"
_FOLLOW = ("requires", "depends-on")
_CONSTRAINT_KINDS = ("constraint", "rejection")
_BANDS = ("active_requirement", "selected_branch", "mission", "orientation")

_ACTIONS = {
    "context_record_missing": "Record it, or correct the association that names it.",
    "context_record_unavailable": "Retry when the ledger is reachable.",
    "context_scope_mismatch": "Associate a record of this project, an admitted scope or global.",
    "context_record_retired": "Read the record's history and associate its current replacement.",
    "context_decision_invalid": "Read the event and record a valid decision event in its place.",
    "context_decision_conflict": "Read the decision stream and record one event superseding "
                                 "the heads.",
    "context_decision_superseded": "Read the current decision stream; a superseded event is "
                                   "not a choice.",
    "context_decision_unavailable": "Read the decision stream; no current choice can be "
                                    "resolved for this key.",
    "continuity_node_limit": "Re-read the intent and its associations; the node bound cut the "
                             "selection and deeper coverage is unknown.",
    "continuity_edge_limit": "Read the named record and its dependencies; the edge bound cut "
                             "the selection and deeper coverage is unknown.",
    "continuity_byte_limit": "Read each omitted whole record before relying on it.",
}


def _get_args(target: str) -> list[str]:
    return ["get", "--", target]


def _decision_args(key: str, root: str) -> list[str]:
    return ["decision", "show", "--cwd", root, "--", key]


# (record id, reason, requirement ids, band)
_Seed = tuple[str, str, list[str], int]


class _Entry:
    __slots__ = ("band", "reasons", "record", "requirement_ids")

    def __init__(self, band: int) -> None:
        self.band = band
        self.reasons: set[str] = set()
        self.requirement_ids: set[str] = set()
        self.record: Record | None = None

    def selection(self) -> dict[str, Any]:
        return {"reasons": sorted(self.reasons), "requirement_ids": sorted(self.requirement_ids)}


def _requirements(read: IntentRead, report: Mapping[str, Any]) -> tuple[list[str], set[str]]:
    """The active requirement ids, and every requirement selected with them."""
    doc = read.document
    ready = {row["id"]: row["subtree_ready_to_review"] for row in report["delta"]["requirements"]}
    parent = {r.id: r.parent_id for r in doc.requirements}
    children: dict[str, list[str]] = {r.id: [] for r in doc.requirements}
    for req in doc.requirements:
        if req.parent_id is not None:
            children[req.parent_id].append(req.id)
    if doc.continuation is not None:
        active = list(doc.continuation.active_requirement_ids)
    else:
        active = [rid for rid in doc.requirement_ids if not ready[rid]]
    selected = set(active)
    for rid in active:
        up = parent[rid]
        while up is not None and up not in selected:
            selected.add(up)
            up = parent[up]
    queue = list(active)
    for rid in queue:
        for child in children[rid]:
            if not ready[child] and child not in selected:
                selected.add(child)
                queue.append(child)
    return active, selected


def _current_evidence(read: IntentRead, binding: ProjectBinding, selected: set[str]
                      ) -> dict[str, list[str]]:
    """Per selected requirement, the cited evidence that is the intact current version in scope."""
    out: dict[str, list[str]] = {}
    acceptance = read.document.acceptance
    evidence, scopes, intent_id = read.evidence, binding.evidence_scopes, read.record.id
    for result in acceptance.results if acceptance else ():
        if result.requirement_id not in selected:
            continue
        for ref in result.evidence:
            record = evidence.get(ref.id)
            if (record is not None and record.damage is None and record.revision == ref.revision
                    and record.status == "current" and record.scope in scopes
                    and record.id != intent_id
                    and ref.data_sha256 in (None, record.data_sha256)):
                out.setdefault(result.requirement_id, []).append(ref.id)
    return out


def _priority(record: Record | None) -> int:
    if record is None or record.damage is not None or not isinstance(record.data, dict):
        return 0
    value = record.data.get("priority")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _leads(record: Record | None) -> bool:
    """Decision events and constraints/rejections come before other bodies in a band."""
    if record is None:
        return False
    if record.kind == DECISION_KIND or record.kind in _CONSTRAINT_KINDS:
        return True
    return (record.damage is None and isinstance(record.data, dict)
            and record.data.get("category") in _CONSTRAINT_KINDS)


class _Projection:
    """The mutable state of one projection run."""

    def __init__(self, read: IntentRead, binding: ProjectBinding, reader: Reader) -> None:
        self.read = read
        self.binding = binding
        self.reader = reader
        self.entries: dict[str, _Entry] = {}
        self.queue: list[str] = []
        self.head = 0
        self.nodes = 0
        self.edges = 0
        self.truncated = False
        self.deeper_unknown = False
        self.frontier: dict[str, None] = {}  # ordered set
        self.cuts: set[tuple[str, str, str]] = set()
        self.issues: list[dict[str, Any]] = []
        self.reads: dict[tuple[str, str, tuple[str, ...]], dict[str, Any]] = {}
        self.edges_of: dict[str, list[str]] = {}
        self.accepted: dict[str, Record] = {}
        self.decision_groups: dict[str, list[str]] = {}
        self.versions: dict[str, int] = {}
        self.cache: dict[str, Record | None] = {}

    # -- problems ---------------------------------------------------------------------

    def problem(self, code: str, target: str, message: str, read_args: list[str], *,
                action: str | None = None, **extra: Any) -> None:
        action = action or _ACTIONS[code]
        issue = {"code": code, "id": target, "message": message, "action": action,
                 "read_args": read_args, **extra}
        if issue not in self.issues:
            self.issues.append(issue)
        key = (code, target, tuple(read_args))
        if key not in self.reads:
            self.reads[key] = {"target_id": target, "requirement_ids": [], "code": code,
                               "action": action, "read_args": read_args}

    def cutoff(self, code: str, target: str, message: str, read_target: str) -> None:
        self.truncated = self.deeper_unknown = True
        self.frontier.setdefault(target, None)
        if (code, read_target, message) not in self.cuts:  # once: the same issue and read
            self.cuts.add((code, read_target, message))
            self.problem(code, read_target, message, _get_args(read_target))

    # -- selection --------------------------------------------------------------------

    def seed(self, target: str, reason: str, requirement_ids: list[str], band: int) -> None:
        entry = self.entries.get(target)
        if entry is None:
            if target == self.read.record.id:
                return
            if len(self.entries) >= MAX_NODES:
                # Even a missing frontier is bounded: no unbounded queue of reads.
                self.cutoff("continuity_node_limit", target,
                            "the projection reached its node bound; deeper coverage is unknown",
                            self.read.record.id)
                return
            entry = _Entry(band)
            self.entries[target] = entry
            self.queue.append(target)
        entry.reasons.add(reason)
        entry.band = min(entry.band, band)
        entry.requirement_ids.update(requirement_ids)

    def load(self, ids: list[str]) -> None:
        """Read the current versions of ``ids`` not read yet (one batch)."""
        wanted = [i for i in dict.fromkeys(ids) if i not in self.cache]
        if not wanted:
            return
        try:
            batch: dict[str, Record] | None = self.reader.get_many(wanted)
        except UnavailableError:
            batch = None
        for target in wanted:
            if batch is None:
                continue  # left unread: inspect() reports it unavailable
            record = batch.get(target)
            if record is not None and not is_readable(record, self.binding.principal):
                record = None  # private to someone else: indistinguishable from absent
            self.cache[target] = record

    def run_band(self, seeds: list[_Seed]) -> None:
        self.load([s[0] for s in seeds])
        seeds.sort(key=lambda s: (not _leads(self.cache.get(s[0])),
                                  -_priority(self.cache.get(s[0])), s[0]))
        for seed in seeds:
            self.seed(*seed)
        while self.head < len(self.queue):
            target = self.queue[self.head]
            if target not in self.cache:
                # One batch for everything queued and not read yet.
                self.load(self.queue[self.head:])
            self.head += 1
            self.inspect(target)

    def inspect(self, target: str) -> None:
        self.nodes += 1
        entry = self.entries[target]
        if target not in self.cache:
            self.problem("context_record_unavailable", target, f"{target} could not be read",
                         _get_args(target))
            return
        record = self.cache[target]
        self.versions[target] = record.revision if record is not None else 0
        if record is None:
            self.problem("context_record_missing", target, f"{target} does not exist",
                         _get_args(target))
            return
        if record.damage is not None:
            # The same words a read of the record gives: the read names the fix.
            error = RecordUnreadable(target, record.revision, record.damage)
            self.problem("context_record_unreadable", target, error.message,
                         raw_read(target, record.revision), action=error.action,
                         reason=record.damage.reason)
            return
        if record.scope not in self.binding.context_scopes:
            self.problem("context_scope_mismatch", target,
                         f"{target} belongs to {record.scope}, a scope this project does not "
                         "admit", _get_args(target))
            return
        if record.kind == DECISION_KIND:
            event = parse_event(record)
            if event is None:
                self.problem("context_decision_invalid", target,
                             f"{target} is not a valid decision event", _get_args(target))
                return
            self.decision_groups.setdefault(event.key, []).append(target)
            entry.record = record
            return
        if record.status != "current":
            self.problem("context_record_retired", target, f"{target} is {record.status}",
                         _get_args(target))
            return
        entry.record = record
        self.accepted[target] = record
        deps: list[str] = []
        for link in record.links:
            if link.rel not in _FOLLOW:
                continue
            if self.edges >= MAX_EDGES:
                self.cutoff("continuity_edge_limit", link.target,
                            "the projection reached its edge bound; deeper coverage is unknown",
                            target)
                break
            self.edges += 1
            deps.append(link.target)
            self.seed(link.target, f"dependency:{target}", sorted(entry.requirement_ids),
                      entry.band)
        self.edges_of[target] = deps

    def propagate(self) -> None:
        """Carry band and requirement ids along inspected edges (no further reads)."""
        work = list(self.entries)
        queued = set(work)
        cursor = 0
        while cursor < len(work):
            source = work[cursor]
            cursor += 1
            queued.discard(source)
            entry = self.entries[source]
            for target in self.edges_of.get(source, ()):
                peer = self.entries.get(target)
                if peer is None:
                    continue
                changed = False
                if entry.band < peer.band:
                    peer.band, changed = entry.band, True
                if not entry.requirement_ids <= peer.requirement_ids:
                    peer.requirement_ids |= entry.requirement_ids
                    changed = True
                if changed and target not in queued:
                    work.append(target)
                    queued.add(target)


def project_continuity(read: IntentRead, binding: ProjectBinding, report: Mapping[str, Any],
                       reader: Reader) -> tuple[dict[str, Any], dict[str, int]]:
    """The bounded continuity projection of one intent, and the versions it inspected.

    The second value maps every inspected record id (and every event of each
    selected decision stream) to the revision read, 0 for absent: the write
    basis a guarded write needs to fail once the selection changed.
    """
    doc = read.document
    context = doc.continuation.context if doc.continuation else None
    active, selected_requirements = _requirements(read, report)
    state = _Projection(read, binding, reader)
    if not read.failures:
        # The cited records were read from this same reader (private ones of
        # others already absent): they are what a batch read here returns.
        state.cache.update(read.evidence)

    bands: list[list[_Seed]] = [[], [], [], []]
    for target in context.mission_record_ids if context else ():
        bands[2].append((target, "mission", [], 2))
    associated: list[tuple[str, str, tuple[str, ...] | list[str]]] = [
        ("requirement", rid, targets)
        for rid, targets in (context.requirement_record_ids if context else ())]
    associated += [("current_evidence", rid, targets)
                   for rid, targets in _current_evidence(read, binding,
                                                         selected_requirements).items()]
    for reason, rid, targets in associated:
        if rid in selected_requirements:
            level = 0 if rid in active else 1
            bands[level].extend((target, reason, [rid], level) for target in targets)
    for link in read.record.links:
        if link.rel not in _FOLLOW:
            continue
        if state.edges >= MAX_EDGES:
            state.cutoff("continuity_edge_limit", link.target,
                         "the intent's dependency edges reached the edge bound; deeper coverage "
                         "is unknown", read.record.id)
            break
        state.edges += 1
        bands[2].append((link.target, "intent_dependency", [], 2))
    for seeds in bands[:3]:
        state.run_band(seeds)
    state.run_band(_orientation(state))
    state.propagate()

    active_set = set(active)

    def band_of(entry: _Entry) -> int:
        if entry.requirement_ids:
            return 0 if entry.requirement_ids & active_set else min(entry.band, 1)
        return entry.band

    def reason_of(entry: _Entry) -> str:
        dependency = any(r.startswith("dependency:") for r in entry.reasons)
        return _BANDS[band_of(entry)] + ("_dependency" if dependency else "")

    ranked: list[tuple[tuple[int, int, int, str], _Entry, dict[str, Any], bool]] = []
    for target, record in state.accepted.items():
        entry = state.entries[target]
        row = _normalize(record)
        row["selection"] = entry.selection()
        ranked.append(((band_of(entry), 0 if _leads(record) else 1, -_priority(record), target),
                       entry, row, False))
    for key, event_ids in state.decision_groups.items():
        row, group = _decision_row(state, key, event_ids)
        ranked.append(((band_of(group), 0, 0, key), group, row, True))
    ranked.sort(key=lambda item: item[0])
    order_of: dict[str, int] = {}
    for order, (_, entry, row, is_decision) in enumerate(ranked):
        row["selection"]["order"] = order
        row["selection"]["reason"] = reason_of(entry)
        for target in row["selected_event_ids"] if is_decision else [row["id"]]:
            order_of[target] = order
    for read_entry in state.reads.values():
        found = state.entries.get(read_entry["target_id"])
        if found is not None:
            read_entry["requirement_ids"] = sorted(found.requirement_ids)
            read_entry["selection"] = {"order": order_of.get(read_entry["target_id"], len(ranked)),
                                       "reason": reason_of(found)}
    shown_active = active[:MAX_ACTIVE_IDS]
    projection = _fit(state, context, shown_active, max(0, len(active) - MAX_ACTIVE_IDS),
                      ranked, len(ranked))
    return projection, dict(sorted(state.versions.items()))


def _orientation(state: _Projection) -> list[_Seed]:
    """Seeds of the orientation band: records whose data marks them orientation."""
    try:
        found = state.reader.find(scopes=list(state.binding.context_scopes),
                                  data_field=("context_role", ORIENTATION), status="current",
                                  limit=MAX_NODES + 1)
    except UnavailableError:
        return []
    seeds: list[_Seed] = []
    for record in found:
        if record.kind == DECISION_KIND or not is_readable(record, state.binding.principal):
            continue
        if record.damage is None and not (isinstance(record.data, dict) and record.data.get(
                "context_role") == ORIENTATION):
            continue  # the text matched elsewhere in the data
        state.cache.setdefault(record.id, record)
        seeds.append((record.id, ORIENTATION, [], 3))
    return seeds


def _decision_row(state: _Projection, key: str, event_ids: list[str]
                  ) -> tuple[dict[str, Any], _Entry]:
    binding = state.binding
    selected = [state.entries[i].record for i in event_ids]
    stream = read_stream(state.reader, key, binding.context_scopes, binding.principal,
                         include=[r for r in selected if r is not None])
    for record in stream:
        state.versions.setdefault(record.id, record.revision)
    state.nodes += max(0, len(stream) - len(event_ids))
    outcome = replay(key, stream)
    group = _Entry(min(state.entries[i].band for i in event_ids))
    for target in event_ids:
        group.reasons |= state.entries[target].reasons
        group.requirement_ids |= state.entries[target].requirement_ids
    args = _decision_args(key, binding.root)
    for record in stream:
        if record.damage is not None:
            raw = raw_read(record.id, record.revision)
            state.problem("context_decision_unreadable", record.id,
                          f"decision event {record.id} revision {record.revision} is "
                          f"unreadable: {record.damage.message}", raw,
                          action=f"Inspect the stored text with 'assay {' '.join(raw)}', then "
                                 "put the event's original content as a new version.",
                          key=key, reason=record.damage.reason)
    if outcome["status"] == "conflict":
        state.problem("context_decision_conflict", event_ids[0],
                      f"decision {key!r} has conflicting current events", args, key=key)
    elif outcome["status"] == "unavailable":
        state.problem("context_decision_unavailable", event_ids[0],
                      f"decision {key!r} has no current choice that can be resolved", args,
                      key=key)
    else:
        for target in event_ids:
            if target not in outcome["head_event_ids"]:
                state.problem("context_decision_superseded", target,
                              f"selected event {target} of decision {key!r} has been superseded",
                              args, key=key)
    row = {
        "key": key,
        "status": outcome["status"],
        "choice": outcome["choice"],
        "head_event_ids": outcome["head_event_ids"],
        "selected_event_ids": sorted(event_ids),
        "unreadable_event_ids": outcome["unreadable_event_ids"],
        "revisions": {r.id: r.revision for r in sorted(stream, key=lambda r: r.id)},
        "conflict": outcome["conflict"],
        "provenance": [
            {"id": r.id, "revision": r.revision, "scope": r.scope, "origin": r.origin,
             "status": r.status}
            for r in sorted(stream, key=lambda r: (r.ledger_revision, r.id))
        ],
        "read_args": args,
        "selection": group.selection(),
    }
    return row, group


def _normalize(record: Record) -> dict[str, Any]:
    return {
        "id": record.id,
        "kind": record.kind,
        "scope": record.scope,
        "revision": record.revision,
        "status": record.status,
        "origin": record.origin,
        "data_sha256": record.data_sha256,
        "links": [link.to_dict() for link in record.links],
        "data": record.data,
    }


def _size(value: Any) -> int:
    return len(canonical_bytes(value))


def _fit(state: _Projection, context: Any, active: list[str], active_omitted: int,
         ranked: list[tuple[Any, _Entry, dict[str, Any], bool]], count: int) -> dict[str, Any]:
    """Admit whole rows in rank order while the projection fits its byte bound."""
    records: list[dict[str, Any]] = []
    decisions: list[dict[str, Any]] = []

    def assemble() -> dict[str, Any]:
        known = list(state.frontier)[:MAX_KNOWN_IDS]
        complete = not state.issues and not state.truncated
        reads = sorted(state.reads.values(), key=lambda r: (
            r.get("selection", {}).get("order", count), r["target_id"], r["read_args"]))
        return {
            "version": 1,
            "association_mode": "explicit" if context is not None else "legacy_defaults",
            "active_requirement_ids": active,
            "records": records,
            "decisions": decisions,
            "issues": list(state.issues),
            "read_required": reads,
            "complete": complete,
            "truncated": state.truncated,
            "limits": {"max_nodes": MAX_NODES, "max_edges": MAX_EDGES, "max_bytes": MAX_BYTES,
                       "nodes": min(state.nodes, MAX_NODES), "edges": min(state.edges, MAX_EDGES),
                       "bytes": 0},
            "omitted": {
                "known_ids": known,
                "deeper_count_unknown": (state.deeper_unknown
                                         or len(state.frontier) > MAX_KNOWN_IDS),
                "active_requirement_ids_omitted": active_omitted,
            },
        }

    def omit(row: dict[str, Any], is_decision: bool) -> None:
        target = row["selected_event_ids"][0] if is_decision else row["id"]
        state.truncated = True
        state.frontier.setdefault(target, None)
        if not any(i["code"] == "continuity_byte_limit" for i in state.issues):
            state.issues.append({"code": "continuity_byte_limit", "id": state.read.record.id,
                                 "message": "whole rows were omitted to keep the projection "
                                            "within its byte bound",
                                 "action": _ACTIONS["continuity_byte_limit"],
                                 "read_args": _get_args(state.read.record.id)})
        args = _decision_args(row["key"], state.binding.root) if is_decision else _get_args(target)
        key = ("continuity_byte_limit", target, tuple(args))
        if key not in state.reads:
            state.reads[key] = {"target_id": target,
                                "requirement_ids": row["selection"]["requirement_ids"],
                                "code": "continuity_byte_limit",
                                "action": _ACTIONS["continuity_byte_limit"], "read_args": args,
                                "selection": {"order": row["selection"]["order"],
                                              "reason": row["selection"]["reason"]}}

    # Running total: one encoding of the frame, then each row's own size (plus
    # its separating comma). Canonical JSON encodes each value on its own, so
    # the whole document is the frame (its row lists empty) plus every row
    # and the commas between rows: rows are encoded once, the frame per try.
    used = _size(assemble())
    retained: list[tuple[dict[str, Any], bool, int]] = []
    row_bytes = {False: 0, True: 0}  # records, decisions: their rows and commas
    for _, _, row, is_decision in ranked:
        cost = _size(row) + 1
        if used + cost <= MAX_BYTES - _RESERVE:
            (decisions if is_decision else records).append(row)
            retained.append((row, is_decision, cost))
            used += cost
            row_bytes[is_decision] += cost
        else:
            omit(row, is_decision)
    while True:
        out = assemble()
        # The byte count is part of the document: encode once with a placeholder
        # 0, then settle the count's own digits arithmetically.
        base = (_size({**out, "records": [], "decisions": []}) - 1
                + max(row_bytes[False] - 1, 0) + max(row_bytes[True] - 1, 0))
        size = base + 1
        while base + len(str(size)) != size:
            size = base + len(str(size))
        out["limits"]["bytes"] = size
        if size <= MAX_BYTES:
            return out
        if not retained:
            return _collapsed(state, out)
        row, is_decision, cost = retained.pop()
        (decisions if is_decision else records).pop()
        row_bytes[is_decision] -= cost
        omit(row, is_decision)


def _collapsed(state: _Projection, out: dict[str, Any]) -> dict[str, Any]:
    """The last resort when even the issues and reads exceed the byte bound.

    Everything detailed goes; one issue and one read of the intent remain,
    from which every association and link can be read again.
    """
    target = state.read.record.id
    args = _get_args(target)
    action = ("Read the intent and its associations, then read the records and decisions "
              "they name before relying on them.")
    out.update(
        active_requirement_ids=[], records=[], decisions=[], complete=False, truncated=True,
        issues=[{"code": "continuity_byte_limit", "id": target, "action": action,
                 "message": "the detailed coverage exceeds the byte bound; omitted counts are "
                            "unknown", "read_args": args}],
        read_required=[{"target_id": target, "requirement_ids": [],
                        "code": "continuity_byte_limit", "action": action, "read_args": args}],
        omitted={"known_ids": [], "deeper_count_unknown": True,
                 "active_requirement_ids_omitted": (out["omitted"]["active_requirement_ids_omitted"]
                                                    + len(out["active_requirement_ids"]))})
    base = _size(out) - len(str(out["limits"]["bytes"]))
    size = base + 1
    while base + len(str(size)) != size:
        size = base + len(str(size))
    out["limits"]["bytes"] = size
    return out
