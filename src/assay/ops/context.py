"""Work-context operations: goal read/write, todo add/claim/update/complete/list, work context.

Handlers import :mod:`assay.context` lazily so the registry stays cheap to load.
"""

from __future__ import annotations

from typing import Any

from assay.errors import AssayError, UsageError
from assay.ops import Argument, Bound, Invocation, Result, operation
from assay.ops.bounds import PAGE_FACTS_SCHEMA, max_bytes_argument, recovering_read
from assay.paging import (
    DEFAULT_PAGE_BYTES,
    MAX_PAGE_BYTES,
    MIN_PAGE_BYTES,
    encoded_size,
    page_facts,
)

_GOAL_ID = Argument("goal_id", {"type": "string", "minLength": 1},
                    "The goal id, as registered in assay.toml under [goals.GOAL_ID].",
                    required=True)
_GOAL_ID_OPTIONAL = Argument("goal_id", {"type": "string", "minLength": 1},
                             "The goal id (default: the selected todo's goal, or the only goal).")
_TODO_ID = Argument("todo_id", {"type": "string", "minLength": 1},
                    "The todo id (todo:NAME or NAME).", required=True)
_EXPECT = Argument("expect_revision", {"type": "integer", "minimum": 1},
                   "The todo's current revision; the write fails if it moved.", required=True)
_REQUEST = Argument("request_id", {"type": "string", "minLength": 1},
                    "Idempotency key: the same id and body replays the first receipt.")
_REVISION = {"type": "string", "pattern": "^[0-9a-f]{64}$"}
_RELATION = Argument("relation", {"type": "array", "items": {"type": "string"}},
                     "A relation REL=RECORD_ID (REL: depends-on, blocks, relates-to, supersedes); "
                     "repeatable.")
_TODO_WRITE_SCHEMA = {
    "type": "object",
    "properties": {"todo": {"type": "object"}, "receipt": {"type": "object"}},
    "required": ["todo", "receipt"],
}


def _goal(inv: Invocation, goal_id: str) -> Any:
    project = inv.project()
    for goal in project.goals:
        if goal.id == goal_id:
            return goal
    known = ", ".join(g.id for g in project.goals) or "none"
    raise AssayError(f"no goal {goal_id!r} is registered in assay.toml (registered: {known})",
                     code="goal_not_found", pointer="/goal_id", details={"goal_id": goal_id},
                     action="Add a [goals.GOAL_ID] table with path = \"...\" to assay.toml.")


def _access(inv: Invocation) -> Any:
    from assay.ledger.access import Access

    project = inv.project()
    return Access.for_project(project.scope, project.admitted_scopes, inv.principal)


@operation(
    "goal.read",
    summary="Read a goal file a page at a time: revision, region ownership, non-generated text.",
    description=(
        "Reads the registered goal markdown file and returns its revision (SHA-256 of every "
        "byte), its ownership (explicit, unmarked or mixed) and one page of it: the window of "
        "the file from `offset` (a byte offset, default 0) as far as `max_bytes` allows. For "
        "explicit ownership the page holds the non-generated text of the window verbatim plus "
        "excluded_todo_regions (role, line interval, SHA-256); unmarked or mixed ownership "
        "returns the path, revision and the full read that remains required. todos lists the "
        "todo items of the window's loopx regions. `full` adds the window's bytes as "
        "full_text. A window never splits a region or a character; joining the pages gives "
        "the whole text. read_more holds the next page's read, pinned to the revision read "
        "(`expect_revision`: goal_revision_conflict when the file changed). Malformed markers, "
        "invalid UTF-8, links in the path, non-regular files and files over the size bound "
        "fail closed. Never writes."
    ),
    writes=False,
    bounds=Bound("byte", bytes=DEFAULT_PAGE_BYTES, max_bytes=MAX_PAGE_BYTES,
                 arguments=("offset", "max_bytes"), recover=(
                     "The next page starts at the byte offset where this one stopped "
                     "(offset), pinned to the file revision read (expect_revision).")),
    arguments=(
        _GOAL_ID,
        Argument("full", {"type": "boolean"}, "Also return the window's bytes as full_text.",
                 binding="flag"),
        Argument("offset", {"type": "integer", "minimum": 0},
                 "Start the page at this byte offset (0, or where the previous page stopped)."),
        max_bytes_argument(DEFAULT_PAGE_BYTES),
        Argument("expect_revision", _REVISION,
                 "The file must still be at this revision (the revision of the first page)."),
    ),
    output_schema={
        "type": "object",
        "properties": {
            "goal_id": {"type": "string"},
            "path": {"type": "string"},
            "revision": _REVISION,
            "ownership": {"enum": ["explicit", "unmarked", "mixed"]},
            "window": {"type": "object"},
            "text": {"type": ["string", "null"]},
            "excluded_todo_regions": {"type": ["array", "null"]},
            "required_reads": {"type": "array"},
            **PAGE_FACTS_SCHEMA,
        },
        "required": ["goal_id", "path", "revision", "ownership", "text", "required_reads",
                     "complete", "truncated", "omitted", "read_more"],
    },
)
def goal_read(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.context.goal import read_goal
    from assay.context.goal_page import goal_page

    goal = _goal(inv, args["goal_id"])
    read, data = read_goal(inv.project().root, goal.id, goal.path)
    _expect_goal_revision(goal, read.revision, args.get("expect_revision"), "/expect_revision")
    budget = args.get("max_bytes", DEFAULT_PAGE_BYTES)
    same = {k: args[k] for k in ("full", "max_bytes") if args.get(k)}

    def next_read(offset: int, max_bytes: int | None) -> dict[str, Any]:
        wider = {} if max_bytes is None else {"max_bytes": max_bytes}
        return recovering_read("goal.read", {"goal_id": goal.id, **same, **wider,
                                             "offset": offset, "expect_revision": read.revision},
                               "next_page" if max_bytes is None else "item_too_large")

    return Result(goal_page(read, data, offset=args.get("offset", 0), max_bytes=budget,
                            full=bool(args.get("full")), next_read=next_read))


@operation(
    "goal.write",
    destructive=True,
    idempotent=True,
    summary="Regenerate a goal file's marked todo regions from the ledger's todos.",
    description=(
        "Rewrites only the block assay generated last time in each todo region marked by assay (or "
        "fills an empty one): agent and user regions list that role's open, claimed and "
        "blocked todos, the archive region the completed and archived ones. A region holding "
        "lines assay did not generate is goal_region_foreign_edit with a diff, and loopx "
        "regions are never written. Every other byte is left untouched. The file must still "
        "be at `expect_revision` (goal_revision_conflict otherwise, nothing written)."
    ),
    writes=True,
    arguments=(
        _GOAL_ID,
        Argument("expect_revision", _REVISION,
                 "The goal file's revision from goal read; the write fails if the file changed.",
                 required=True),
    ),
    output_schema={"type": "object",
                   "properties": {"revision": _REVISION, "changed": {"type": "boolean"},
                                  "regions": {"type": "array"}}},
)
def goal_write(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.context.goal import read_goal, write_goal
    from assay.context.todo import load_todos, render_region
    from assay.provenance.admission import envelopes_of_versions
    from assay.provenance.publish import require_all

    goal = _goal(inv, args["goal_id"])
    root = inv.project().root
    read, _ = read_goal(root, goal.id, goal.path)
    roles = [r.role for r in read.regions if r.syntax == "assay"]
    for role in sorted(set(roles)):
        if roles.count(role) > 1:
            raise AssayError(f"goal {goal.id!r} has {roles.count(role)} {role} regions; the "
                             "writer needs at most one region per role",
                             code="goal_region_role_repeated", details={"role": role},
                             action="Keep one marked region per role in the goal file.")
    with inv.store().reader() as reader:
        todos = load_todos(reader, _access(inv), goal.id)
        ledger_revision = reader.ledger_revision
        inputs = envelopes_of_versions(reader, {r.id: r.revision for r in todos})
    # The regions are derived from todo records and the file is read by the
    # whole project: the todos pass the publication gate, and none may be
    # private to one principal.
    require_all(inv.store(), _access(inv), inputs, what="the goal file's todo regions")
    private = sorted({r.id for r in todos if r.audience != "project"})
    if private:
        raise AssayError(f"{private[0]} is {_audience_of(todos, private[0])}, but the goal file "
                         "is read by the whole project", code="audience_too_wide",
                         pointer="/goal_id", details={"private_todos": private},
                         action="Make the todo project-wide, or keep it out of this goal.")
    out = write_goal(root, goal.id, goal.path, expect_revision=args["expect_revision"],
                     render=lambda region: render_region(region.role, todos))
    return Result(out, ledger_revision=ledger_revision)


def _audience_of(records: Any, record_id: str) -> str:
    return next(str(r.audience) for r in records if r.id == record_id)


def _expect_goal_revision(goal: Any, revision: str, expect: str | None, where: str) -> None:
    if expect is not None and revision != expect:
        from assay.errors import ConflictError

        raise ConflictError(
            f"goal {goal.id!r} is at revision {revision[:12]}..., not {expect[:12]}...",
            code="goal_revision_conflict", pointer=where,
            details={"goal_id": goal.id, "expected_revision": expect,
                     "current_revision": revision},
            action="Read the goal again (assay goal read) and decide on its current text.")


def _source(inv: Invocation, goal: Any, expect: str | None) -> dict[str, Any]:
    from assay.context.goal import read_goal

    read, _ = read_goal(inv.project().root, goal.id, goal.path)
    _expect_goal_revision(goal, read.revision, expect, "/expect_goal_revision")
    return {"kind": "goal", "goal_id": goal.id, "path": goal.path, "revision": read.revision}


@operation(
    "todo.add",
    summary="Add an open todo to a goal (a new todo: ledger record).",
    description=(
        "Writes a new todo record with the goal id, text, owner role (agent or user), "
        "relations and its source: the goal file's revision when it was added (guarded by "
        "`expect_goal_revision` when given). The id is new or the write fails."
    ),
    writes=True,
    arguments=(
        _GOAL_ID,
        Argument("text", {"type": "string", "minLength": 1}, "The todo's full text.",
                 required=True),
        Argument("owner_role", {"type": "string", "enum": ["agent", "user"]},
                 "Who owns the todo: agent (default) or user."),
        Argument("todo_id", {"type": "string", "minLength": 1},
                 "Choose the id (todo:NAME); default: derived from the content."),
        _RELATION,
        Argument("expect_goal_revision", _REVISION,
                 "The goal file must still be at this revision."),
        _REQUEST,
    ),
    output_schema=_TODO_WRITE_SCHEMA,
)
def todo_add(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.context.todo import add_todo, normalize_todo_id, parse_relations

    goal = _goal(inv, args["goal_id"])
    relations = parse_relations(args.get("relation", []))
    todo_id = normalize_todo_id(args["todo_id"]) if args.get("todo_id") else None
    source = _source(inv, goal, args.get("expect_goal_revision"))
    out = add_todo(inv.store(), scope=inv.project().scope, principal=inv.principal,
                   goal_id=goal.id, text=args["text"], owner_role=args.get("owner_role", "agent"),
                   source=source, todo_id=todo_id, relations=relations,
                   request_id=args.get("request_id"))
    return Result(out, ledger_revision=out["receipt"]["ledger_revision"],
                  next=((f"assay todo claim --todo-id {out['todo']['id']} --expect-revision "
                         f"{out['todo']['authority']['revision']}"),))


@operation(
    "todo.claim",
    summary="Claim a todo with a lease (or renew your own claim).",
    description=(
        "Sets status claimed with the caller as claimant and a lease (default 30 minutes). "
        "A live lease held by another principal is todo_claimed; blocked, completed and "
        "archived todos cannot be claimed. Guarded by `expect_revision`."
    ),
    writes=True,
    arguments=(
        _TODO_ID, _EXPECT,
        Argument("lease_ms", {"type": "integer", "minimum": 1, "maximum": 7 * 24 * 3600 * 1000},
                 "Lease length in milliseconds (default 1800000)."),
        _REQUEST,
    ),
    output_schema=_TODO_WRITE_SCHEMA,
)
def todo_claim(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.context.todo import DEFAULT_LEASE_MS, claim_todo, normalize_todo_id

    out = claim_todo(inv.store(), _access(inv), principal=inv.principal,
                     todo_id=normalize_todo_id(args["todo_id"]),
                     expect_revision=args["expect_revision"],
                     lease_ms=args.get("lease_ms", DEFAULT_LEASE_MS),
                     request_id=args.get("request_id"))
    return Result(out, ledger_revision=out["receipt"]["ledger_revision"])


@operation(
    "todo.update",
    summary="Change a todo's text, owner, relations or status (open, blocked, archived).",
    description=(
        "Writes a new version of the todo. `release` returns a claimed todo to open. "
        "`relation` replaces all relations. Completed todos may only be archived; archived "
        "todos are final. Guarded by `expect_revision`."
    ),
    writes=True,
    arguments=(
        _TODO_ID, _EXPECT,
        Argument("text", {"type": "string", "minLength": 1}, "The new full text."),
        Argument("owner_role", {"type": "string", "enum": ["agent", "user"]}, "The new owner role."),
        Argument("status", {"type": "string", "enum": ["open", "blocked", "archived"]},
                 "The new status."),
        Argument("blocked_reason", {"type": "string", "minLength": 1},
                 "Why the todo is blocked (with `status` blocked)."),
        _RELATION,
        Argument("clear_relations", {"type": "boolean"}, "Remove every relation.",
                 binding="flag"),
        Argument("release", {"type": "boolean"}, "Release the claim (status back to open).",
                 binding="flag"),
        _REQUEST,
    ),
    output_schema=_TODO_WRITE_SCHEMA,
)
def todo_update(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.context.todo import TodoChange, normalize_todo_id, parse_relations, update_todo

    if args.get("clear_relations") and args.get("relation"):
        raise UsageError("--relation and --clear-relations exclude each other",
                         code="invalid_argument", pointer="/clear_relations")
    relations = None
    if args.get("relation"):
        relations = parse_relations(args["relation"])
    elif args.get("clear_relations"):
        relations = ()
    change = TodoChange(text=args.get("text"), owner_role=args.get("owner_role"),
                        status=args.get("status"), blocked_reason=args.get("blocked_reason"),
                        relations=relations, release=bool(args.get("release")))
    if change == TodoChange():
        raise UsageError("todo update needs at least one change", code="missing_argument",
                         pointer="/status")
    out = update_todo(inv.store(), _access(inv), principal=inv.principal,
                      todo_id=normalize_todo_id(args["todo_id"]),
                      expect_revision=args["expect_revision"], change=change,
                      request_id=args.get("request_id"))
    return Result(out, ledger_revision=out["receipt"]["ledger_revision"])


@operation(
    "todo.complete",
    summary="Mark an open or claimed todo completed (a claim, with optional evidence ids).",
    description=(
        "Records who completed the todo and when, with an optional note and evidence record "
        "ids. Completion is a claim, not proof. Guarded by `expect_revision`."
    ),
    writes=True,
    arguments=(
        _TODO_ID, _EXPECT,
        Argument("note", {"type": "string"}, "What was done."),
        Argument("evidence", {"type": "array", "items": {"type": "string"}},
                 "An evidence record id supporting the completion; repeatable."),
        _REQUEST,
    ),
    output_schema=_TODO_WRITE_SCHEMA,
)
def todo_complete(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.context.todo import complete_todo, normalize_todo_id

    out = complete_todo(inv.store(), _access(inv), principal=inv.principal,
                        todo_id=normalize_todo_id(args["todo_id"]),
                        expect_revision=args["expect_revision"], note=args.get("note"),
                        evidence=args.get("evidence", []), request_id=args.get("request_id"))
    return Result(out, ledger_revision=out["receipt"]["ledger_revision"])


_LIST_ONLY = ("thin", "limit", "status", "owner_role", "after", "max_bytes", "all")
_PAGE_ONLY = ("thin", "limit", "after", "max_bytes")
_TODO_PAGE, _TODO_PAGE_MAX = 25, 1000


@operation(
    "todo.list",
    view="context:todo_list",
    summary="List a goal's todos a bounded page at a time, or read one todo exactly.",
    description=(
        "With `todo_id`: one complete record (todo.text in full, identity, status and claim, "
        "relations, source, authority revision) and no list views; a missing or filtered todo "
        "is matched=false, todo=null, not_found=true. Without it: one page of the selected "
        "todos in creation order, whole records only: after the todo named by `after`, at most "
        "`limit` records and `max_bytes` bytes. todos and the agent_todos and user_todos lanes "
        "cover the page (a repeated identical record is a response-local "
        "{\"$ref\": \"#/todos/0\"} pointer, see todo_list_record_references); counts cover "
        "every selected todo; omitted counts what the page left out and read_more holds the "
        "next page's read and the exact read of any todo too large for a page. `all` returns "
        "the whole inventory at once; `thin` gives thin items (titles only), at most 48 to a "
        "page, and is a usage error with `todo_id`."
    ),
    writes=False,
    bounds=Bound("todo", items=_TODO_PAGE, max_items=_TODO_PAGE_MAX, bytes=DEFAULT_PAGE_BYTES,
                 max_bytes=MAX_PAGE_BYTES, arguments=("limit", "after", "max_bytes"),
                 unbounded="all", recover=(
                     "The next page starts after the last todo walked (after); a todo too large "
                     "for a page is named with its exact read (todo_id). An exact read returns "
                     "one todo whole.")),
    arguments=(
        _GOAL_ID,
        Argument("todo_id", {"type": "string", "minLength": 1},
                 "Read exactly this todo (todo:NAME or NAME)."),
        Argument("thin", {"type": "boolean"}, "Thin items (titles only), at most 48 a page.",
                 binding="flag"),
        Argument("limit", {"type": "integer", "minimum": 1, "maximum": _TODO_PAGE_MAX},
                 f"At most this many todos on the page (default {_TODO_PAGE}; thin: at most 48)."),
        Argument("after", {"type": "string", "minLength": 1},
                 "Start after this todo (todo:NAME or NAME), as the previous page's read_more "
                 "says."),
        max_bytes_argument(DEFAULT_PAGE_BYTES),
        Argument("all", {"type": "boolean"},
                 "The whole inventory at once: every selected todo, unbounded.", binding="flag"),
        Argument("status", {"type": "array", "items": {
            "type": "string", "enum": ["open", "claimed", "blocked", "completed", "archived"]}},
            "Select these statuses (repeatable; default open, claimed, blocked)."),
        Argument("owner_role", {"type": "string", "enum": ["agent", "user"]},
                 "Select only this owner role."),
    ),
    output_schema={"type": "object", "properties": {
        "goal_id": {"type": "string"}, **PAGE_FACTS_SCHEMA}},
)
def todo_list(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.context.todo import ACTIVE, exact_read, load_todos, normalize_todo_id

    if args.get("todo_id"):
        for name in _LIST_ONLY:
            if args.get(name):
                raise UsageError(f"--{name.replace('_', '-')} belongs to list views; an exact "
                                 "read with --todo-id returns one complete record",
                                 code="list_option_with_exact_read", pointer=f"/{name}")
    if args.get("all"):
        for name in _PAGE_ONLY:
            if args.get(name):
                raise UsageError(f"--{name.replace('_', '-')} pages a list; --all returns the "
                                 "whole inventory", code="invalid_argument", pointer=f"/{name}")
    goal = _goal(inv, args["goal_id"])
    access = _access(inv)
    with inv.store().reader() as reader:
        if args.get("todo_id"):
            todo_id = normalize_todo_id(args["todo_id"])
            record = reader.get(todo_id)
            visible = None
            if record is not None and record.kind == "todo" and record.status == "current" \
                    and access.can_read(record):
                visible = record
            file_todo = None
            if visible is None:
                file_todo = _file_todo(inv, goal, todo_id)
            out = exact_read(goal.id, todo_id, visible, file_todo=file_todo)
            out.update(page_facts({"todos": 0}, []))
        else:
            todos = load_todos(reader, access, goal.id)
            out = _todo_page(reader, access, goal.id, todos, args,
                             statuses=args.get("status") or ACTIVE)
        revision = reader.ledger_revision
    return Result(out, ledger_revision=revision)


def _todo_page(reader: Any, access: Any, goal_id: str, todos: Any, args: dict[str, Any], *,
               statuses: Any) -> dict[str, Any]:
    """The whole inventory (--all) or one page of it, with the reads that recover the rest."""
    from assay.context.todo import (
        THIN_LIMIT,
        inventory,
        inventory_page,
        normalize_todo_id,
        order_key,
    )

    if args.get("all"):
        return {**inventory(goal_id, todos, statuses=statuses, owner_role=args.get("owner_role")),
                **page_facts({"todos": 0}, [])}
    after = None
    if args.get("after"):
        after_id = normalize_todo_id(args["after"], field="/after")
        cursor = next((r for r in todos if r.id == after_id), None)
        if cursor is None:
            # A todo completed, archived or retired since the last page still
            # marks its place in creation order.
            cursor = access.visible(reader.get(after_id))
        if cursor is None or not isinstance(cursor.data, dict) \
                or cursor.data.get("goal_id") != goal_id:
            raise AssayError(f"no todo {after_id} in goal {goal_id!r} to page after",
                             code="todo_not_found", pointer="/after",
                             details={"id": after_id},
                             action="Start again without --after, or use the read in read_more.")
        after = order_key(cursor)
    same = {k: args[k] for k in ("goal_id", "status", "owner_role", "thin", "limit", "max_bytes")
            if args.get(k)}

    def reads(oversized: Any, last: Any, rest: int) -> list[dict[str, Any]]:
        out = [recovering_read("todo.list", {"goal_id": goal_id, "todo_id": r.id},
                               "item_too_large", id=r.id) for r in oversized]
        if rest:
            cursor_id = last.id if last is not None else args.get("after")
            out.append(recovering_read("todo.list", {**same, "after": cursor_id}, "next_page"))
        return out

    return inventory_page(goal_id, todos, reads=reads, statuses=statuses,
                          owner_role=args.get("owner_role"), after=after,
                          limit=args.get("limit", THIN_LIMIT if args.get("thin") else _TODO_PAGE),
                          max_bytes=args.get("max_bytes", DEFAULT_PAGE_BYTES),
                          thin=bool(args.get("thin")))


def _file_todo(inv: Invocation, goal: Any, todo_id: str) -> dict[str, Any] | None:
    """The goal file's own todo with this id (a loopx region item), if there is one."""
    from assay.context.goal import read_goal

    read, _ = read_goal(inv.project().root, goal.id, goal.path)
    return next((t for t in read.todo_views() if t["id"] == todo_id), None)


def _acceptance_provider(inv: Invocation) -> Any:
    """The intent capability's readiness check as an acceptance source, when it is installed."""
    import importlib.util

    if importlib.util.find_spec("assay.intent.check") is None:
        return None
    try:
        from assay.intent.check import work_check
        from assay.intent.snapshot import ProjectBinding
    except ImportError:
        return None
    from assay.context.work_context import AcceptanceRead

    project = inv.project()
    binding = ProjectBinding(root=str(project.root), scope=project.scope,
                             admitted_scopes=tuple(project.admitted_scopes),
                             principal=inv.principal)

    def provide(record_id: str, selected: Any) -> AcceptanceRead:
        try:
            with inv.store().reader() as reader:
                record = reader.get(record_id)
                report = work_check(reader, binding, record_id, continuity=False)
        except AssayError as err:
            return AcceptanceRead(record_id=record_id, error=err.to_dict())
        return AcceptanceRead(record_id=record_id, report=report,
                              revision=record.revision if record is not None else None)

    return provide


def _context_envelope(inv: Invocation, context: dict[str, Any]) -> dict[str, Any] | None:
    """The dependency envelope of the ledger record versions the context delivered.

    Goal files are not ledger records: their source carries its own byte
    revision. None when the ledger cannot be read (the context says so in
    its failures).
    """
    from assay.provenance.admission import envelope_of_versions

    pairs: list[tuple[Any, Any]] = []
    for source in context.get("sources", []):
        if source.get("status") != "delivered":
            continue
        pairs.append((source.get("id"), source.get("revision")))
        revisions = source.get("revisions")
        if isinstance(revisions, dict):
            pairs.extend(revisions.items())
        report = source.get("report")
        if isinstance(report, dict) and isinstance(report.get("write_basis"), dict):
            pairs.extend(report["write_basis"].get("records", {}).items())
    versions = {i: r for i, r in pairs if isinstance(i, str) and isinstance(r, int)
                and not isinstance(r, bool)}
    try:
        with inv.store().reader() as reader:
            return envelope_of_versions(reader, versions).to_dict()
    except AssayError:
        return None


@operation(
    "work.context",
    view="context:work_context",
    summary="The heartbeat work context: selected todo, sources with revisions, required reads.",
    description=(
        "Assembles what must be read before dependent work on a goal: the selected todo (the "
        "exact record in sources; selected_todo_ref points at it when the display body is "
        "identical), the goal's enabled acceptance when configured, the user obligations in "
        "scope, every source with its revision and status, and required_reads (exact argument "
        "arrays, in order; delivered sources are not in it). complete means no known source "
        "failure, not that the reads were done."
    ),
    cli_note="Exit status 1 when a source failed.",
    writes=False,
    bounds=Bound("byte", bytes=DEFAULT_PAGE_BYTES, max_bytes=MAX_PAGE_BYTES,
                 arguments=("max_bytes",), recover=(
                     "Sources are delivered whole in priority order (selected todo, goal state, "
                     "acceptance, then user obligations one by one); each one left out is "
                     "pending with its read in required_reads and read_more.")),
    arguments=(
        _GOAL_ID_OPTIONAL,
        Argument("todo_id", {"type": "string", "minLength": 1},
                 "Select this todo (default: your claimed agent todo, else the first open one)."),
        max_bytes_argument(DEFAULT_PAGE_BYTES),
    ),
    output_schema={"type": "object", "properties": {
        "work_context": {"type": "object"},
        "envelope": {"type": ["object", "null"],
                     "description": "Dependency envelope of the ledger records delivered."},
        **PAGE_FACTS_SCHEMA},
        "required": ["work_context", "complete", "truncated", "omitted", "read_more"]},
)
def work_context(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.context.goal import read_goal
    from assay.context.todo import load_todos, normalize_todo_id
    from assay.context.work_context import build_work_context

    project = inv.project()
    access = _access(inv)
    todo_id = normalize_todo_id(args["todo_id"]) if args.get("todo_id") else None
    goal_id = args.get("goal_id")
    if goal_id is None and todo_id is not None:
        with inv.store().reader() as reader:
            record = reader.get(todo_id)
        if record is not None and access.can_read(record) and isinstance(record.data, dict):
            goal_id = record.data.get("goal_id")
    if goal_id is None:
        if len(project.goals) != 1:
            raise UsageError("pass --goal-id: the project registers "
                             f"{len(project.goals)} goals", code="missing_argument",
                             pointer="/goal_id")
        goal_id = project.goals[0].id
    goal = _goal(inv, goal_id)
    goal_result: Any
    try:
        goal_result, _ = read_goal(project.root, goal.id, goal.path)
    except AssayError as err:
        goal_result = err
    todos: Any
    ledger_revision = None
    try:
        with inv.store().reader() as reader:
            todos = load_todos(reader, access, goal.id)
            ledger_revision = reader.ledger_revision
    except AssayError as err:
        todos = err
    acceptance = None
    if goal.acceptance is not None:
        provider = _acceptance_provider(inv)
        if provider is not None:
            selected = None
            if not isinstance(todos, AssayError) and todo_id is not None:
                selected = next((r for r in todos if r.id == todo_id), None)
            acceptance = provider(goal.acceptance, selected)
    limit = args.get("max_bytes", DEFAULT_PAGE_BYTES)
    budget = limit
    while True:
        out = build_work_context(goal_id=goal.id, goal=goal_result, todos=todos,
                                 principal=inv.principal, todo_id=todo_id,
                                 acceptance_id=goal.acceptance, acceptance=acceptance,
                                 ledger_revision=ledger_revision, max_bytes=budget)
        bound = out.pop("bound")
        out["envelope"] = _context_envelope(inv, out["work_context"])
        out.update(page_facts(bound["omitted"], [
            recovering_read(r["operation"], r["arguments"], r["reason"]) for r in bound["reads"]]))
        # The envelope and the page facts come on top of the context: shrink
        # the context's own budget by whatever they added beyond the limit.
        over = encoded_size(out) - limit
        if over <= 0 or budget <= MIN_PAGE_BYTES:
            break
        budget = max(MIN_PAGE_BYTES, budget - over)
    reads = out["work_context"]["required_reads"]
    return Result(out, ledger_revision=ledger_revision,
                  next=tuple(" ".join(r["command"]) for r in reads),
                  exit_code=0 if out["work_context"]["complete"] else 1)
