"""The heartbeat work context: what an agent must have read before dependent work.

:func:`build_work_context` is pure: given what was read (the goal file read
or its failure, the goal's todos, the acceptance report or its failure), it
assembles ``work_context``:

- ``selected_todo_ref``: a pointer to the selected todo's exact record in
  ``sources`` (``{"$ref": "#/work_context/sources/<i>/todo"}``). The text
  is never shown shortened, so there is no separate display view:
  ``selected_todo`` is always null.
- ``acceptance``: the enabled acceptance for the selected work, when an
  acceptance provider supplied one (the intent capability; see
  :class:`AcceptanceProvider`).
- ``user_obligations``: the goal's open, claimed and blocked user todos,
  from the ledger and then from the goal file's own (loopx) todo regions
  (``origin: "goal_file"``).
- ``sources``: every source with its revision and delivery status
  (``delivered``, ``pending``, ``failed``, ``blocked``).
- ``required_reads``: the exact argument arrays still to run, in order;
  delivered sources are not in it, failed and blocked ones keep their read.
- ``complete``: no known source failure. It does not mean the reads were done.

With ``max_bytes``, :func:`build_work_context` bounds the context: sources
are delivered in priority order (the selected todo, the goal state, the
acceptance, then user obligations one by one) while the canonical JSON fits;
a source that does not fit becomes ``pending`` with its read, and user
obligations that do not fit are counted with the read of the rest. Nothing
delivered is shortened. ``bound`` in the result says what was left out.

A failed goal source blocks the todo sources that depend on it. Reading the
context grants nothing: no claim, lease or execution authority.

Imports the sibling context modules, errors and the ledger contract.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from assay.context.goal import GoalRead, full_read
from assay.context.todo import project_record
from assay.errors import AssayError
from assay.ledger.store import Record
from assay.paging import encoded_size

__all__ = [
    "AcceptanceProvider",
    "AcceptanceRead",
    "build_work_context",
    "select_todo",
]

_BEFORE = "before_work"


@dataclass(frozen=True, slots=True)
class AcceptanceRead:
    """What an acceptance provider returned for one acceptance record.

    ``report`` is the provider's JSON report (delivered verbatim); ``revision``
    identifies the version read. ``error`` is set instead when the source could
    not be read.
    """

    record_id: str
    report: dict[str, Any] | None = None
    revision: int | None = None
    error: dict[str, Any] | None = None


class AcceptanceProvider(Protocol):
    """The seam through which the intent capability supplies acceptance.

    The operations layer passes one when ``assay.intent`` offers a readiness
    check; the context package never imports it. Called with the configured
    acceptance record id and the selected todo (or None).
    """

    def __call__(self, record_id: str, selected: Record | None) -> AcceptanceRead: ...


def _first_open_file_todo(goal: GoalRead) -> dict[str, Any] | None:
    for todo, view in zip(goal.todos, goal.todo_views(), strict=True):
        if todo.role == "agent" and not todo.archived and todo.status == "open":
            return view
    return None


def select_todo(records: Sequence[Record], principal: str) -> Record | None:
    """The heartbeat's selection: the caller's own claimed agent todo, else the first open one.

    ``records`` are in creation order; the first match wins.
    """
    agent = [r for r in records if r.data["owner_role"] == "agent"]
    for record in agent:
        claim = record.data.get("claim")
        if record.data["status"] == "claimed" and isinstance(claim, dict) \
                and claim.get("principal") == principal:
            return record
    for record in agent:
        if record.data["status"] == "open":
            return record
    return None


def _read(command: list[str], source: str, reason: str) -> dict[str, Any]:
    return {"command": command, "source": source, "reason": reason, "ordering": _BEFORE}


def _todo_read(goal_id: str, todo_id: str) -> dict[str, Any]:
    return _read(["assay", "todo", "list", "--goal-id", goal_id, "--todo-id", todo_id],
                 "selected_todo", "the selected todo's complete record")


def _user_read(goal_id: str) -> dict[str, Any]:
    return _read(["assay", "todo", "list", "--goal-id", goal_id, "--owner-role", "user"],
                 "user_obligations", "the user obligations in scope of this goal")


def _acceptance_read(record_id: str) -> dict[str, Any]:
    return _read(["assay", "work", "check", "--", record_id], "goal_acceptance",
                 "the enabled acceptance for the selected work")


def _failure(source: str, error: dict[str, Any]) -> dict[str, Any]:
    """A failure entry: always ``context_source_unavailable``, with the source's own error."""
    return {"source": source, "code": "context_source_unavailable",
            "cause": {"code": error.get("code", "context_source_unavailable"),
                      "message": error.get("message", "")}}


def build_work_context(
    *,
    goal_id: str,
    goal: GoalRead | AssayError,
    todos: Sequence[Record] | AssayError,
    principal: str,
    todo_id: str | None = None,
    acceptance_id: str | None = None,
    acceptance: AcceptanceRead | None = None,
    ledger_revision: int | None = None,
    max_bytes: int | None = None,
) -> dict[str, Any]:
    """Assemble the work context from what was read; pure. See the module docstring.

    ``todo_id`` selects a todo exactly (a todo of another goal, or none, is
    ``selection: not_found``); without it :func:`select_todo` chooses.
    ``acceptance_id`` is the goal's configured acceptance record; when it is
    set and ``acceptance`` is None, no provider was available and that source
    fails with ``context_source_unavailable``. ``max_bytes`` bounds the
    result as the module docstring says; the result's ``bound`` holds
    ``omitted`` (counts of ``sources`` and ``user_obligations`` left out) and
    ``reads`` (``{operation, arguments, reason}`` of each recovering read).
    """
    sources: list[dict[str, Any]] = []
    reads: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    goal_failed = isinstance(goal, AssayError)

    # 1. goal state
    if isinstance(goal, AssayError):
        err = goal.to_dict()
        read = _read(["assay", "goal", "read", "--goal-id", goal_id], "goal_state",
                     "the goal file could not be read; recover it, then read it again")
        sources.append({"source": "goal_state", "goal_id": goal_id, "status": "failed",
                        "error": err, "read": read})
        reads.append(read)
        failures.append(_failure("goal_state", err))
    elif goal.is_explicit:
        sources.append({"source": "goal_state", "goal_id": goal_id, "status": "delivered",
                        "path": goal.path, "revision": goal.revision,
                        "ownership": goal.ownership, "text": goal.text,
                        "excluded_todo_regions": [r.to_dict() for r in goal.regions],
                        "todos": goal.todo_views()})
    else:
        read = full_read(goal_id)
        sources.append({"source": "goal_state", "goal_id": goal_id, "status": "pending",
                        "path": goal.path, "revision": goal.revision,
                        "ownership": goal.ownership, "todos": goal.todo_views(),
                        "read": read})
        reads.append(read)

    # 2. acceptance (optional source)
    acceptance_view: dict[str, Any] | None = None
    if acceptance_id is not None:
        read = _acceptance_read(acceptance_id)
        if acceptance is None:
            err = {"code": "context_source_unavailable",
                   "message": "no acceptance provider is available in this installation"}
            sources.append({"source": "goal_acceptance", "id": acceptance_id, "status": "failed",
                            "error": err, "read": read})
            reads.append(read)
            failures.append(_failure("goal_acceptance", err))
        elif acceptance.error is not None:
            sources.append({"source": "goal_acceptance", "id": acceptance_id, "status": "failed",
                            "error": acceptance.error, "read": read})
            reads.append(read)
            failures.append(_failure("goal_acceptance", acceptance.error))
        else:
            sources.append({"source": "goal_acceptance", "id": acceptance_id,
                            "status": "delivered", "revision": acceptance.revision,
                            "report": acceptance.report})
            acceptance_view = {"$ref": f"#/work_context/sources/{len(sources) - 1}/report"}

    # 3. selected todo and user obligations depend on the goal and the ledger read
    selected_ref: dict[str, Any] | None = None
    selection = "none"
    user_obligations: list[dict[str, Any]] = []
    todo_failed = isinstance(todos, AssayError)
    if isinstance(todos, AssayError):
        err = todos.to_dict()
        failures.append(_failure("todos", err))
        if todo_id is not None:
            read = _todo_read(goal_id, todo_id)
            sources.append({"source": "selected_todo", "id": todo_id, "status": "failed",
                            "error": err, "read": read})
            reads.append(read)
        read = _user_read(goal_id)
        sources.append({"source": "user_obligations", "goal_id": goal_id, "status": "failed",
                        "error": err, "read": read})
        reads.append(read)
        selection = "unavailable"
    else:
        chosen: Record | None
        file_todos = [] if isinstance(goal, AssayError) else goal.todo_views()
        file_chosen: dict[str, Any] | None = None
        if todo_id is not None:
            chosen = next((r for r in todos if r.id == todo_id), None)
            if chosen is None:
                file_chosen = next((t for t in file_todos if t["id"] == todo_id), None)
            selection = "exact" if chosen is not None or file_chosen is not None else "not_found"
        else:
            chosen = select_todo(todos, principal)
            if chosen is None and not isinstance(goal, AssayError):
                file_chosen = _first_open_file_todo(goal)
            selection = "heartbeat" if chosen is not None or file_chosen is not None else "none"
        selected_source: dict[str, Any] | None = None
        if chosen is not None and goal_failed:
            read = _todo_read(goal_id, chosen.id)
            sources.append({"source": "selected_todo", "id": chosen.id, "status": "blocked",
                            "blocked_by": "goal_state", "read": read})
            reads.append(read)
        elif chosen is not None:
            selected_source = {"source": "selected_todo", "id": chosen.id, "status": "delivered",
                               "revision": chosen.revision,
                               "ledger_revision": chosen.ledger_revision,
                               "todo": project_record(chosen)}
        elif file_chosen is not None and not isinstance(goal, AssayError):
            selected_source = {"source": "selected_todo", "origin": "goal_file",
                               "id": file_chosen["id"], "status": "delivered",
                               "revision": goal.revision, "todo": file_chosen}
        if selected_source is not None:
            sources.append(selected_source)
            selected_ref = {"$ref": f"#/work_context/sources/{len(sources) - 1}/todo"}
        users = [r for r in todos
                 if r.data["owner_role"] == "user" and r.data["status"] in ("open", "claimed",
                                                                              "blocked")]
        read = _user_read(goal_id)
        if goal_failed:
            sources.append({"source": "user_obligations", "goal_id": goal_id, "status": "blocked",
                            "blocked_by": "goal_state", "read": read})
            reads.append(read)
        else:
            assert not isinstance(goal, AssayError)
            from_file = [view for todo, view in zip(goal.todos, file_todos, strict=True)
                         if todo.role == "user" and todo.is_active]
            user_obligations = [project_record(r) for r in users] + from_file
            sources.append({"source": "user_obligations", "goal_id": goal_id,
                            "status": "delivered", "ledger_revision": ledger_revision,
                            "ids": [r.id for r in users],
                            "revisions": {r.id: r.revision for r in users},
                            "goal_file": {"revision": goal.revision,
                                          "lines": [v["source"]["lines"] for v in from_file]}})

    context: dict[str, Any] = {
        "goal_id": goal_id,
        "principal": principal,
        "selection": selection,
        "selected_todo": None,
        "selected_todo_ref": selected_ref,
        "acceptance": acceptance_view,
        "user_obligations": user_obligations,
        "sources": sources,
        "required_reads": reads,
        "failures": failures,
        "complete": not failures,
        "ledger_revision": ledger_revision,
        "notice": ("Read every delivered source and every remaining required read before "
                   "dependent work; a changed source needs a fresh read. This context grants "
                   "no claim, lease or execution authority."),
    }
    if todo_failed or goal_failed:
        context["complete"] = False
    out = {"work_context": context}
    out["bound"] = _bound(out, goal_id, max_bytes)
    return out


# Which source is kept first when the context must shrink, and the read that
# recovers each one when it is not delivered.
_PRIORITY = ("selected_todo", "goal_state", "goal_acceptance")


def _recovery(source: dict[str, Any], goal_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(required read, recovering read) of a source left out of a bounded context."""
    kind = source["source"]
    if kind == "selected_todo":
        return _todo_read(goal_id, source["id"]), {
            "operation": "todo.list", "arguments": {"goal_id": goal_id, "todo_id": source["id"]},
            "reason": "source_too_large"}
    if kind == "goal_acceptance":
        return _acceptance_read(source["id"]), {
            "operation": "work.check", "arguments": {"id": source["id"]},
            "reason": "source_too_large"}
    read = _read(["assay", "goal", "read", "--goal-id", goal_id], "goal_state",
                 "the goal's text did not fit in this context; read it page by page")
    return read, {"operation": "goal.read", "arguments": {"goal_id": goal_id},
                  "reason": "source_too_large"}


def _bound(out: dict[str, Any], goal_id: str, max_bytes: int | None) -> dict[str, Any]:
    """Shrink ``out`` in place to ``max_bytes``; return what was left out and how to read it."""
    context = out["work_context"]
    omitted = {"sources": 0, "user_obligations": 0}
    reads: list[dict[str, Any]] = []
    if max_bytes is None or encoded_size(out) <= max_bytes:
        return {"omitted": omitted, "reads": reads}
    sources = context["sources"]
    pointers = {"selected_todo": ("selected_todo_ref",),
                "goal_acceptance": ("acceptance",)}
    saved = {key: context[key] for keys in pointers.values() for key in keys}
    # Start from the context with nothing droppable delivered, then add back in
    # priority order whatever still fits.
    whole: dict[str, dict[str, Any]] = {}
    for source in sources:
        if source["source"] in _PRIORITY and source["status"] == "delivered":
            whole[source["source"]] = dict(source)
            for key in pointers.get(source["source"], ()):
                context[key] = None
            facts = {k: v for k, v in source.items()
                    if k in ("source", "id", "goal_id", "path", "revision", "origin")}
            source.clear()
            source.update(facts, status="pending", read=_recovery(whole[facts["source"]],
                                                                  goal_id)[0])
    obligations = context["user_obligations"]
    users = next((s for s in sources if s["source"] == "user_obligations"
                  and s["status"] == "delivered"), None)
    revisions = dict(users["revisions"]) if users is not None else {}
    _keep_users(context, users, obligations, 0, revisions)
    budget = max_bytes - encoded_size(out)
    for kind in _PRIORITY:
        if kind not in whole:
            continue
        source = next(s for s in sources if s["source"] == kind)
        cost = encoded_size(whole[kind]) - encoded_size(source) + sum(
            encoded_size(saved[key]) for key in pointers.get(kind, ()))
        if cost <= budget:
            source.clear()
            source.update(whole[kind])
            for key in pointers.get(kind, ()):
                context[key] = saved[key]
            budget -= cost
        else:
            omitted["sources"] += 1
            reads.append(_recovery(whole[kind], goal_id)[1])
    kept = 0
    for item in obligations:
        # The item, and its id and revision in the source's lists.
        cost = encoded_size(item) + 2 * len(str(item.get("id"))) + 32
        if cost > budget:
            break
        budget -= cost
        kept += 1
    _keep_users(context, users, obligations, kept, revisions)
    while kept and encoded_size(out) > max_bytes:
        kept -= 1
        _keep_users(context, users, obligations, kept, revisions)
    if kept < len(obligations) and users is not None:
        omitted["user_obligations"] = len(obligations) - kept
        reads.extend(_pending_users(users, obligations, kept, goal_id))
    context["required_reads"] = [s["read"] for s in sources
                                 if "read" in s and s["status"] != "delivered"]
    return {"omitted": omitted, "reads": reads}


def _keep_users(context: dict[str, Any], source: dict[str, Any] | None,
                obligations: list[dict[str, Any]], kept: int, revisions: dict[str, int]) -> None:
    """Deliver the first ``kept`` user obligations and list exactly those in their source."""
    shown = obligations[:kept]
    context["user_obligations"] = shown
    if source is None:
        return
    ids = [t["id"] for t in shown if t.get("origin") != "goal_file"]
    source["ids"] = ids
    source["revisions"] = {i: revisions[i] for i in ids}
    source["goal_file"] = {**source["goal_file"],
                           "lines": [t["source"]["lines"] for t in shown
                                     if t.get("origin") == "goal_file"]}


def _pending_users(source: dict[str, Any], obligations: list[dict[str, Any]], kept: int,
                   goal_id: str) -> list[dict[str, Any]]:
    """Mark the user obligations source pending; return the reads of what was left out.

    Ledger obligations left out are the goal's user todos after the last one
    delivered (a todo list page); goal-file obligations come with the goal
    read, whose todos list them.
    """
    rest = obligations[kept:]
    source["status"] = "pending"
    source["omitted"] = len(rest)
    reads: list[dict[str, Any]] = []
    if any(t.get("origin") != "goal_file" for t in rest):
        arguments: dict[str, Any] = {"goal_id": goal_id, "owner_role": "user"}
        if source["ids"]:
            arguments["after"] = source["ids"][-1]
        reads.append({"operation": "todo.list", "arguments": arguments, "reason": "next_page"})
        command = ["assay", "todo", "list", "--goal-id", goal_id, "--owner-role", "user"]
        if "after" in arguments:
            command += ["--after", arguments["after"]]
    else:
        command = ["assay", "goal", "read", "--goal-id", goal_id]
    if any(t.get("origin") == "goal_file" for t in rest):
        reads.append({"operation": "goal.read", "arguments": {"goal_id": goal_id},
                      "reason": "next_page"})
    source["read"] = _read(command, "user_obligations",
                           "the user obligations that did not fit in this context")
    return reads
