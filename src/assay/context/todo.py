"""Todos: ``todo:`` ledger records, their guarded writes and their read projections.

A todo belongs to one registered goal and holds its text, owner role
(``agent`` or ``user``), status (``open``, ``claimed``, ``blocked``,
``completed``, ``archived``), claim and lease facts, relations to other
records, and its source (the goal file revision it was added against). Every
change is a new record version written with ``expect_revision``, so two
writers never both win.

Reads are projections of current records:

- :func:`exact_read` returns one complete record (``todo.text`` in full plus
  identity, status and claim, relations, source and authority revision) and no
  list views, or ``matched: false, todo: null, not_found: true``.
- :func:`inventory` returns list views: the selected ``todos`` plus
  role-summary lanes (``agent_todos``, ``user_todos``) de-duplicated with
  response-local ``$ref`` pointers (:mod:`assay.context.refs`), or bounded
  ``--thin`` lists without pointers.
- :func:`inventory_page` returns one bounded page of those views: whole
  records after a cursor, at most an item count and a byte budget, with
  counts over the whole selection and the reads that recover the rest.

Reading a todo grants nothing: no claim, lease or execution authority.
Imports errors, canonical, ids, config, the ledger and the sibling context
modules.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

from assay.context import refs
from assay.errors import AssayError, ConflictError, RevisionConflict, UsageError, pointer
from assay.ids import content_id, split_record_id
from assay.ledger.store import Link, Receipt, Record, Store, Write
from assay.paging import encoded_size, fit, page_facts

__all__ = [
    "ACTIVE",
    "DETAIL",
    "OWNER_ROLES",
    "RELATIONS",
    "STATUSES",
    "THIN_LIMIT",
    "TodoChange",
    "add_todo",
    "authority",
    "claim_todo",
    "complete_todo",
    "escape_goal_text",
    "escape_goal_token",
    "exact_read",
    "inventory",
    "inventory_page",
    "load_todos",
    "normalize_todo_id",
    "now_text",
    "order_key",
    "parse_relations",
    "project_record",
    "render_region",
    "update_todo",
    "validate_todo_data",
]

SCHEMA = "assay.todo/v1"
STATUSES = ("open", "claimed", "blocked", "completed", "archived")
ACTIVE = ("open", "claimed", "blocked")
OWNER_ROLES = ("agent", "user")
RELATIONS = ("depends-on", "blocks", "relates-to", "supersedes")
MAX_TEXT_BYTES = 1024 * 1024
DEFAULT_LEASE_MS = 30 * 60 * 1000
MAX_LEASE_MS = 7 * 24 * 3600 * 1000
THIN_LIMIT = 48
# What one record adds to a page besides itself: its two pointers in the lanes.
_LANE_REFS_BYTES = 2 * len('{"$ref":"#/todos/1000"},')
DETAIL = {
    "schema_version": 1,
    "body_path": "todo.text",
    "source_complete": True,
    "omitted_views": ["todos", "agent_todos", "user_todos"],
}
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z")
_DATA_KEYS = {"schema", "goal_id", "text", "owner_role", "status", "claim", "relations",
              "source", "blocked_reason", "completion", "created_at", "created_by", "updated_at"}


def now_text(moment: datetime | None = None) -> str:
    """An RFC 3339 UTC time with microseconds (fixed width, so it sorts as text)."""
    return (moment or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parse_time(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def normalize_todo_id(value: str, *, field: str = "/todo_id") -> str:
    """``todo:NAME`` from ``todo:NAME`` or a bare ``NAME`` (``[A-Za-z0-9][A-Za-z0-9._-]*``)."""
    name = value.removeprefix("todo:")
    if not _NAME.fullmatch(name):
        raise UsageError(f"invalid todo id {value[:80]!r}: use todo:NAME with NAME matching "
                         "[A-Za-z0-9][A-Za-z0-9._-]*", code="invalid_todo_id", pointer=field)
    return "todo:" + name


# -- validation of stored data -------------------------------------------------------------


def _invalid(record_id: str, where: str, problem: str) -> AssayError:
    return AssayError(
        f"todo record {record_id} is not a valid todo: {problem}",
        code="todo_record_invalid",
        pointer=where or None,
        details={"id": record_id},
        action="Write a corrected version of the record (assay todo update) or retire it.",
    )


def validate_todo_data(record_id: str, data: Any) -> dict[str, Any]:
    """Return ``data`` if it is a well-formed todo, else ``todo_record_invalid`` with a pointer.

    Reads fail visibly on a malformed record rather than showing a guess.
    """
    if not isinstance(data, dict):
        raise _invalid(record_id, "/data", "data is not an object")
    for key in data:
        if key not in _DATA_KEYS:
            raise _invalid(record_id, pointer("data", key), f"unknown field {key!r}")
    if data.get("schema") != SCHEMA:
        raise _invalid(record_id, "/data/schema", f"schema is not {SCHEMA!r}")
    for key in ("goal_id", "text", "created_at", "created_by"):
        if not isinstance(data.get(key), str):
            raise _invalid(record_id, pointer("data", key), f"{key} must be a string")
    if data.get("owner_role") not in OWNER_ROLES:
        raise _invalid(record_id, "/data/owner_role", "owner_role must be agent or user")
    if data.get("status") not in STATUSES:
        raise _invalid(record_id, "/data/status", "unknown status")
    claim = data.get("claim")
    if (data["status"] == "claimed") != isinstance(claim, dict):
        raise _invalid(record_id, "/data/claim", "a claimed todo has a claim, no other has one")
    if not isinstance(data.get("relations"), list):
        raise _invalid(record_id, "/data/relations", "relations must be a list")
    if data["status"] == "completed" and not isinstance(data.get("completion"), dict):
        raise _invalid(record_id, "/data/completion", "a completed todo records its completion")
    return data


# -- projections ---------------------------------------------------------------------------


def authority(record: Record) -> dict[str, Any]:
    """The ledger facts that make a projection checkable: id, revision, digest, scope."""
    return {
        "id": record.id,
        "revision": record.revision,
        "ledger_revision": record.ledger_revision,
        "data_sha256": record.data_sha256,
        "scope": record.scope,
    }


def project_record(record: Record) -> dict[str, Any]:
    """The complete projection of a todo record: every fact, the full text, its authority."""
    return _projection(record.id, validate_todo_data(record.id, record.data), authority(record))


def _projection(record_id: str, data: dict[str, Any], authority_: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": record_id,
        "goal_id": data["goal_id"],
        "text": data["text"],
        "owner_role": data["owner_role"],
        "status": data["status"],
        "claim": data.get("claim"),
        "blocked_reason": data.get("blocked_reason"),
        "completion": data.get("completion"),
        "relations": data["relations"],
        "source": data.get("source"),
        "created_at": data["created_at"],
        "created_by": data["created_by"],
        "updated_at": data.get("updated_at"),
        "authority": authority_,
    }


def _thin(record: Record) -> dict[str, Any]:
    data = validate_todo_data(record.id, record.data)
    # The title is the first line, whole: a thin item never carries a cut text.
    lines = data["text"].splitlines() or [""]
    claim = data.get("claim")
    return {
        "id": record.id,
        "owner_role": data["owner_role"],
        "status": data["status"],
        "title": lines[0],
        "content_truncated": len(lines) > 1,
        "claimed_by": claim.get("principal") if isinstance(claim, dict) else None,
        "authority_revision": record.revision,
    }


def order_key(record: Record) -> tuple[str, str]:
    """Where a todo sorts in lists: creation time, then id."""
    data = record.data if isinstance(record.data, dict) else {}
    created = data.get("created_at")
    return (created if isinstance(created, str) else "", record.id)


def load_todos(reader: Any, access: Any, goal_id: str) -> list[Record]:
    """Current, readable todo records of one goal, in creation order (then id).

    ``access`` is a :class:`assay.ledger.access.Access`; records outside its
    scopes or audience do not exist for the caller. Malformed todo data of
    this goal fails the read (``todo_record_invalid``).
    """
    found = reader.find(kind="todo", scopes=list(access.scopes), status="current",
                        data_field=("goal_id", goal_id), limit=10_000_000,
                        audiences=access.audiences)
    out: list[Record] = []
    for record in found:
        if not access.can_read(record):
            continue
        data = record.data
        if isinstance(data, dict) and data.get("goal_id") == goal_id:
            validate_todo_data(record.id, data)
            out.append(record)
    out.sort(key=order_key)
    return out


def _visible(access: Any, record: Record | None) -> Record | None:
    if record is None or record.status != "current" or not access.can_read(record):
        return None
    return record


def exact_read(goal_id: str, todo_id: str, record: Record | None, *,
               file_todo: dict[str, Any] | None = None) -> dict[str, Any]:
    """One complete todo, or ``matched: false, todo: null, not_found: true``.

    ``record`` is the caller-visible current record with that id (None when
    absent, retired or not readable). A record of another goal is filtered:
    not found. Without a record, ``file_todo`` (a todo item of the goal
    file's own loopx regions, ``origin: "goal_file"``) is the answer. No list
    view is ever included (``detail.omitted_views``).
    """
    matched = (record is not None and isinstance(record.data, dict)
               and record.data.get("goal_id") == goal_id)
    todo = project_record(record) if matched and record is not None else None
    if record is None and file_todo is not None:
        matched, todo = True, file_todo
    return {
        "goal_id": goal_id,
        "todo_id": todo_id,
        "matched": matched,
        "not_found": not matched,
        "todo": todo,
        "detail": dict(DETAIL),
    }


def _selection(records: Sequence[Record], statuses: Sequence[str],
               owner_role: str | None) -> tuple[list[Record], list[str], list[str]]:
    wanted = [s for s in STATUSES if s in statuses]
    roles = [r for r in OWNER_ROLES if owner_role in (None, r)]
    selected = [r for r in records
                if r.data["status"] in wanted and r.data["owner_role"] in roles]
    return selected, wanted, roles


def _lanes(doc: dict[str, Any], records: Sequence[Record], wanted: Sequence[str],
           roles: Sequence[str], view: Callable[[Record], dict[str, Any]],
           bound: int | None) -> dict[str, dict[str, int]]:
    """Fill the role lanes of ``doc`` with ``records``; return each lane's size before ``bound``."""
    totals: dict[str, dict[str, int]] = {}
    for role in OWNER_ROLES:
        key = f"{role}_todos"
        if role not in roles:
            doc[key] = {}
            totals[key] = {}
            continue
        mine = [r for r in records if r.data["owner_role"] == role]
        lanes = {"selected": mine, **{s: [r for r in mine if r.data["status"] == s] for s in wanted}}
        totals[key] = {name: len(items) for name, items in lanes.items()}
        doc[key] = {name: [view(r) for r in (items if bound is None else items[:bound])]
                    for name, items in lanes.items()}
    return totals


def _counts(selected: Sequence[Record], wanted: Sequence[str], roles: Sequence[str],
            lanes: dict[str, dict[str, int]]) -> dict[str, Any]:
    return {
        "selected": len(selected),
        "by_status": {s: sum(1 for r in selected if r.data["status"] == s) for s in wanted},
        "by_role": {r: sum(1 for x in selected if x.data["owner_role"] == r) for r in roles},
        "lanes": lanes,
    }


def _with_references(doc: dict[str, Any]) -> dict[str, Any]:
    reduced, replaced = refs.deduplicate(doc)
    reduced["todo_list_record_references"] = {
        "replaced_view_records": replaced,
        "readback": refs.READBACK,
    }
    return reduced


def inventory(goal_id: str, records: Sequence[Record], *,
              statuses: Sequence[str] = ACTIVE, owner_role: str | None = None,
              limit: int | None = None, thin: bool = False,
              references: bool = True) -> dict[str, Any]:
    """The list views of a goal's todos, whole (``todo list --all``).

    ``todos`` holds the selected records (status and owner filters, creation
    order) up to ``limit``; ``agent_todos`` and ``user_todos`` hold, per role,
    a ``selected`` lane and one lane per selected status, over every selected
    record (not cut by ``limit``). Full inventories replace repeated identical
    lane records by ``$ref`` pointers and say so in
    ``todo_list_record_references``; ``thin`` inventories bound every list
    to ``limit`` (at most 48) thin items and never use pointers. Counts are
    over the selection, before any bound. ``references=False`` returns the
    full inventory without pointers (what :func:`refs.expand` restores).
    """
    selected, wanted, roles = _selection(records, statuses, owner_role)
    bound = min(limit or THIN_LIMIT, THIN_LIMIT) if thin else limit
    shown = selected if bound is None else selected[:bound]
    view: Callable[[Record], dict[str, Any]] = _thin if thin else project_record
    doc: dict[str, Any] = {
        "goal_id": goal_id,
        "filters": {"status": wanted, "owner_role": owner_role, "limit": bound, "thin": thin},
        "todos": [view(r) for r in shown],
    }
    lanes = _lanes(doc, selected, wanted, roles, view, bound if thin else None)
    doc["counts"] = _counts(selected, wanted, roles, lanes)
    doc["coverage"] = {"active": len(selected), "included": len(shown),
                       "omitted": len(selected) - len(shown)}
    if thin or not references:
        return doc
    return _with_references(doc)


def _no_view(record: Record) -> dict[str, Any]:
    return {}


PageReads = Callable[[Sequence[Record], Record | None, int], list[dict[str, Any]]]


def inventory_page(goal_id: str, records: Sequence[Record], *, reads: PageReads,
                   statuses: Sequence[str] = ACTIVE, owner_role: str | None = None,
                   after: tuple[str, str] | None = None, limit: int,
                   max_bytes: int, thin: bool = False) -> dict[str, Any]:
    """One bounded page of the list views (``todo list`` without ``--all``).

    The page holds whole records of the selection that sort after the
    cursor ``after`` (creation time and id, :func:`order_key`): at most
    ``limit`` (thin: at most 48) and at most ``max_bytes`` bytes of canonical
    JSON for the whole page. A record larger than the budget on its own is
    left out and counted. ``todos`` and the lanes cover the page only; ``counts``
    cover the whole selection; ``coverage`` says how many records sort
    before the cursor, are on the page, and are omitted after it.
    ``reads(oversized, last, rest)`` gives the reads that recover what the
    page omits (``last`` is the last record walked, ``rest`` how many follow
    it); the page carries them in ``read_more`` with the counts in
    ``omitted`` (:func:`assay.paging.page_facts`). Text is never shortened.
    """
    selected, wanted, roles = _selection(records, statuses, owner_role)
    candidates = [r for r in selected if after is None or order_key(r) > after]
    view: Callable[[Record], dict[str, Any]] = _thin if thin else project_record
    bound = min(limit, THIN_LIMIT) if thin else limit
    budget = max_bytes
    whole = _counts(selected, wanted, roles, _lanes({}, selected, wanted, roles, _no_view, 0))
    views: dict[str, dict[str, Any]] = {}

    def shown_view(record: Record) -> dict[str, Any]:
        if record.id not in views:
            views[record.id] = view(record)
        return views[record.id]

    def build(shown: Sequence[Record], oversized: Sequence[Record], rest: int) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "goal_id": goal_id,
            "filters": {"status": wanted, "owner_role": owner_role, "limit": bound,
                        "max_bytes": budget, "thin": thin,
                        "after": None if after is None else after[1]},
            "todos": [shown_view(r) for r in shown],
        }
        _lanes(doc, shown, wanted, roles, shown_view, None)
        doc["counts"] = whole
        doc["coverage"] = {"active": len(selected), "before": len(selected) - len(candidates),
                           "included": len(shown), "omitted": len(candidates) - len(shown)}
        walked = [*shown, *oversized]
        last = max(walked, key=order_key) if walked else None
        doc.update(page_facts({"todos": len(candidates) - len(shown)},
                              reads(oversized, last, rest) if walked or rest else []))
        return doc if thin else _with_references(doc)

    def size(record: Record) -> int:
        one = encoded_size(shown_view(record)) + 1
        return 3 * one if thin else one + _LANE_REFS_BYTES

    page = fit(candidates, build, limit=bound, max_bytes=budget, size=size)
    return page.document


# -- writes --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TodoChange:
    """The fields ``todo update`` may change; None leaves a field as it is."""

    text: str | None = None
    owner_role: str | None = None
    status: str | None = None
    blocked_reason: str | None = None
    relations: tuple[tuple[str, str], ...] | None = None
    release: bool = False


def _check_text(text: Any, field: str = "/text") -> str:
    if not isinstance(text, str) or not text.strip():
        raise UsageError("a todo's text is a non-empty string", code="invalid_argument",
                         pointer=field)
    if len(text.encode("utf-8", "surrogatepass")) > MAX_TEXT_BYTES:
        raise AssayError(f"a todo's text is at most {MAX_TEXT_BYTES} bytes",
                         code="resource_limit", pointer=field)
    return text


def parse_relations(values: Iterable[str], *, field: str = "/relation") -> tuple[tuple[str, str], ...]:
    """``REL=RECORD_ID`` strings to pairs; REL is depends-on, blocks, relates-to or supersedes."""
    out: list[tuple[str, str]] = []
    for index, value in enumerate(values):
        rel, eq, target = value.partition("=")
        where = f"{field}/{index}"
        if not eq or rel not in RELATIONS:
            raise UsageError(f"a relation is REL=RECORD_ID with REL one of {', '.join(RELATIONS)}",
                             code="invalid_argument", pointer=where)
        if target.startswith("todo:") or ":" not in target:
            target = normalize_todo_id(target, field=where)
        split_record_id(target, field=where)
        if (rel, target) not in out:
            out.append((rel, target))
    return tuple(out)


def _relations_data(pairs: Iterable[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"rel": rel, "target": target} for rel, target in pairs]


def _links(data: dict[str, Any]) -> tuple[Link, ...]:
    return tuple(Link(rel["rel"], rel["target"]) for rel in data["relations"])


def _receipt_view(record_id: str, data: dict[str, Any], receipt: Any, scope: str) -> dict[str, Any]:
    projection = _projection(record_id, data, {
        "id": record_id, "revision": receipt.revision, "ledger_revision": receipt.ledger_revision,
        "data_sha256": receipt.data_sha256, "scope": scope})
    return {"todo": projection, "receipt": receipt.to_dict()}


def _replayed(store: Store, todo_id: str, request_id: str | None) -> dict[str, Any] | None:
    """The view of the version an earlier call with this request id wrote, if any.

    Todo writes stamp times, so a retried request would not carry a
    byte-identical body; finding its version first makes the retry a replay.
    """
    if request_id is None:
        return None
    with store.reader() as reader:
        versions = reader.history(todo_id)
    for version in versions:
        if version.request_id == request_id:
            receipt = Receipt(id=version.id, revision=version.revision,
                              ledger_revision=version.ledger_revision,
                              data_sha256=version.data_sha256, request_id=request_id,
                              replayed=True)
            return _receipt_view(version.id, version.data, receipt, version.scope)
    return None


def add_todo(store: Store, *, scope: str, principal: str, goal_id: str, text: str,
             owner_role: str, source: dict[str, Any], todo_id: str | None = None,
             relations: Sequence[tuple[str, str]] = (), request_id: str | None = None,
             now: str | None = None) -> dict[str, Any]:
    """Write a new open todo (``expect_revision=0``: the id must be new).

    Without ``todo_id`` the id is content-derived (``todo:td-<8 hex>``) from
    the goal, text, role and the request id (or a random nonce), so a retried
    request keeps its id.
    """
    _check_text(text)
    if owner_role not in OWNER_ROLES:
        raise UsageError("owner role is agent or user", code="invalid_argument",
                         pointer="/owner_role")
    if todo_id is None:
        nonce = request_id if request_id is not None else secrets.token_hex(8)
        todo_id = "todo:" + content_id("td", {"goal_id": goal_id, "text": text,
                                              "owner_role": owner_role, "nonce": nonce})
    replay = _replayed(store, todo_id, request_id)
    if replay is not None:
        return replay
    stamp = now or now_text()
    data = {
        "schema": SCHEMA,
        "goal_id": goal_id,
        "text": text,
        "owner_role": owner_role,
        "status": "open",
        "claim": None,
        "blocked_reason": None,
        "completion": None,
        "relations": _relations_data(relations),
        "source": source,
        "created_at": stamp,
        "created_by": principal,
        "updated_at": stamp,
    }
    receipt = store.put(Write(id=todo_id, data=data, scope=scope, links=_links(data),
                              expect_revision=0, request_id=request_id))
    return _receipt_view(todo_id, data, receipt, scope)


def _current(store: Store, access: Any, todo_id: str, expect_revision: int,
             request_id: str | None = None) -> Record | dict[str, Any]:
    replay = _replayed(store, todo_id, request_id)
    if replay is not None:
        return replay
    with store.reader() as reader:
        record = _visible(access, reader.get(todo_id))
    if record is None or record.kind != "todo" or record.scope != access.own_scope:
        raise AssayError(f"no todo {todo_id} in this project", code="todo_not_found",
                         pointer="/todo_id", details={"id": todo_id},
                         action="List the goal's todos (assay todo list --goal-id G).")
    if record.revision != expect_revision:
        raise RevisionConflict(f"{todo_id} is at revision {record.revision}, not {expect_revision}",
                               record_id=todo_id, current_revision=record.revision,
                               pointer="/expect_revision")
    validate_todo_data(record.id, record.data)
    return record


def _live_claim(data: dict[str, Any], now: datetime) -> dict[str, Any] | None:
    claim = data.get("claim")
    if data["status"] != "claimed" or not isinstance(claim, dict):
        return None
    expires = claim.get("lease_expires_at")
    if isinstance(expires, str) and _TIME.fullmatch(expires) and _parse_time(expires) <= now:
        return None
    return claim


def _refuse_foreign_claim(todo_id: str, data: dict[str, Any], principal: str,
                          now: datetime) -> None:
    claim = _live_claim(data, now)
    if claim is not None and claim.get("principal") != principal:
        raise ConflictError(
            f"{todo_id} is claimed by {claim.get('principal')} until {claim.get('lease_expires_at')}",
            code="todo_claimed",
            details={"id": todo_id, "claimed_by": claim.get("principal"),
                     "lease_expires_at": claim.get("lease_expires_at")},
            action="Wait for the lease to expire, or ask the holder to release it.",
        )


def _transition(todo_id: str, status: str, action: str) -> ConflictError:
    return ConflictError(f"{todo_id} is {status}; it cannot be {action}",
                         code="todo_invalid_transition", pointer="/todo_id",
                         details={"id": todo_id, "status": status, "requested": action},
                         action="Read the todo again; completed and archived todos are final.")


def _put(store: Store, record: Record, data: dict[str, Any], request_id: str | None) -> dict[str, Any]:
    receipt = store.put(Write(id=record.id, data=data, scope=record.scope, links=_links(data),
                              audience=record.audience, expect_revision=record.revision,
                              request_id=request_id))
    return _receipt_view(record.id, data, receipt, record.scope)


def claim_todo(store: Store, access: Any, *, principal: str, todo_id: str, expect_revision: int,
               lease_ms: int = DEFAULT_LEASE_MS, request_id: str | None = None,
               now: datetime | None = None) -> dict[str, Any]:
    """Claim an open todo (or renew one's own claim, or take over an expired lease).

    ``todo_claimed`` when another principal holds a live lease;
    ``todo_invalid_transition`` for blocked, completed and archived todos.
    """
    if not 0 < lease_ms <= MAX_LEASE_MS:
        raise UsageError(f"lease is 1 to {MAX_LEASE_MS} ms", code="invalid_argument",
                         pointer="/lease_ms")
    moment = now or datetime.now(UTC)
    record = _current(store, access, todo_id, expect_revision, request_id)
    if isinstance(record, dict):
        return record
    data = dict(record.data)
    if data["status"] not in ("open", "claimed"):
        raise _transition(todo_id, data["status"], "claimed")
    _refuse_foreign_claim(todo_id, data, principal, moment)
    data["status"] = "claimed"
    data["claim"] = {
        "principal": principal,
        "claimed_at": now_text(moment),
        "lease_ms": lease_ms,
        "lease_expires_at": now_text(moment + timedelta(milliseconds=lease_ms)),
    }
    data["updated_at"] = now_text(moment)
    return _put(store, record, data, request_id)


def update_todo(store: Store, access: Any, *, principal: str, todo_id: str, expect_revision: int,
                change: TodoChange, request_id: str | None = None,
                now: datetime | None = None) -> dict[str, Any]:
    """Change text, owner role, relations or status (open, blocked, archived), or release a claim.

    Completed todos may only be archived; archived todos are final. A todo
    another principal holds a live lease on is ``todo_claimed``.
    """
    moment = now or datetime.now(UTC)
    record = _current(store, access, todo_id, expect_revision, request_id)
    if isinstance(record, dict):
        return record
    data = dict(record.data)
    status = data["status"]
    if status == "archived":
        raise _transition(todo_id, status, "changed")
    if status == "completed" and (change.status != "archived" or change.text is not None
                                  or change.owner_role is not None or change.relations is not None
                                  or change.blocked_reason is not None or change.release):
        raise _transition(todo_id, status, "changed except by archiving")
    _refuse_foreign_claim(todo_id, data, principal, moment)
    if change.text is not None:
        data["text"] = _check_text(change.text)
    if change.owner_role is not None:
        if change.owner_role not in OWNER_ROLES:
            raise UsageError("owner role is agent or user", code="invalid_argument",
                             pointer="/owner_role")
        data["owner_role"] = change.owner_role
    if change.relations is not None:
        data["relations"] = _relations_data(change.relations)
    new_status = change.status
    if change.release:
        if status != "claimed":
            raise _transition(todo_id, status, "released")
        new_status = new_status or "open"
    if new_status is not None:
        if new_status not in ("open", "blocked", "archived"):
            raise UsageError("update sets status open, blocked or archived (claim and complete "
                             "have their own commands)", code="invalid_argument", pointer="/status")
        data["status"] = new_status
        if new_status != "claimed":
            data["claim"] = None
        if new_status != "blocked":
            data["blocked_reason"] = None
    if change.blocked_reason is not None:
        if data["status"] != "blocked":
            raise UsageError("a blocked reason goes with status blocked", code="invalid_argument",
                             pointer="/blocked_reason")
        data["blocked_reason"] = change.blocked_reason
    data["updated_at"] = now_text(moment)
    return _put(store, record, data, request_id)


def complete_todo(store: Store, access: Any, *, principal: str, todo_id: str,
                  expect_revision: int, note: str | None = None,
                  evidence: Sequence[str] = (), request_id: str | None = None,
                  now: datetime | None = None) -> dict[str, Any]:
    """Mark an open or claimed todo completed, recording who, when, a note and evidence ids.

    Completion is the todo owner's claim, not proof: evidence ids are kept as
    references for the readiness check to weigh.
    """
    moment = now or datetime.now(UTC)
    for index, ref in enumerate(evidence):
        split_record_id(ref, field=f"/evidence/{index}")
    record = _current(store, access, todo_id, expect_revision, request_id)
    if isinstance(record, dict):
        return record
    data = dict(record.data)
    if data["status"] not in ("open", "claimed"):
        raise _transition(todo_id, data["status"], "completed")
    _refuse_foreign_claim(todo_id, data, principal, moment)
    data["status"] = "completed"
    data["claim"] = None
    data["completion"] = {"completed_at": now_text(moment), "completed_by": principal,
                          "note": note, "evidence": list(evidence)}
    data["updated_at"] = now_text(moment)
    return _put(store, record, data, request_id)


# -- goal regions --------------------------------------------------------------------------

_REGION_STATUSES = {"agent": ACTIVE, "user": ACTIVE, "archive": ("completed", "archived")}
# Characters that never reach a goal file as themselves: controls (every line
# break str.splitlines knows among them), line and paragraph separators,
# surrogates, and the bidirectional controls that reorder what a reader sees.
_UNSAFE_CHAR = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e"
                          "\u2066-\u2069\ud800-\udfff]")
_FENCE_RUN = re.compile(r"`{3,}|~{3,}")


def escape_goal_text(value: str) -> str:
    """One line of todo text as it may appear in a goal file.

    Nothing in the result can open or close an HTML comment (so no region
    marker and no metadata comment), start or end a code fence, or break
    the line: ``<!--`` and ``-->`` become ``&lt;!--`` and ``--&gt;``, runs
    of three or more backticks or tildes are backslash-escaped, a tab is a
    space, and every other control, separator or bidirectional control is
    written as ``\\uXXXX``.
    """
    value = value.replace("\t", " ")
    value = _UNSAFE_CHAR.sub(lambda m: f"\\u{ord(m.group()):04x}", value)
    value = value.replace("<!--", "&lt;!--").replace("-->", "--&gt;")
    return _FENCE_RUN.sub(lambda m: "".join("\\" + ch for ch in m.group()), value)


def escape_goal_token(value: str) -> str:
    """A value written as ``key=value`` inside a goal file comment: percent-encoded.

    Only ASCII letters, digits and ``_.-~:@+`` stay as they are, so a value
    can never hold a space, ``=``, ``<``, ``>`` or a line break.
    """
    return quote(value, safe=":@+")


def render_region(role: str, records: Sequence[Record]) -> list[str]:
    """The generated lines of a ``role`` region: one task line per todo, details indented.

    Agent and user regions list that role's open, claimed and blocked todos;
    the archive region lists completed and archived todos of both roles. Each
    task line ends with a one-line comment naming the todo, its status and
    its claimant. Every value is escaped (:func:`escape_goal_text`,
    :func:`escape_goal_token`), and continuation lines are indented four
    spaces, so no todo text, id or principal can close a region, open or
    close a fence, inject a comment or a marker, or add a line.
    """
    out: list[str] = []
    for record in records:
        data = record.data
        if data["status"] not in _REGION_STATUSES[role]:
            continue
        if role != "archive" and data["owner_role"] != role:
            continue
        lines = data["text"].splitlines() or [""]
        box = "x" if data["status"] in ("completed", "archived") else " "
        who = ""
        claim = data.get("claim")
        if isinstance(claim, dict):
            who = f" by={escape_goal_token(str(claim.get('principal')))}"
        note = f"{escape_goal_token(record.id)} status={escape_goal_token(data['status'])}{who}"
        out.append(f"- [{box}] {escape_goal_text(lines[0])} <!-- {note} -->")
        out.extend("    " + escape_goal_text(line) if line.strip() else "" for line in lines[1:])
    return out
