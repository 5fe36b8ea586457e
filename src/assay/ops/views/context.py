"""Terminal views of the work context and a goal's todos.

The contract of a view is in :mod:`assay.ops.views`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["todo_list", "work_context"]


SOURCE_STYLE = {"delivered": "green", "pending": "yellow", "failed": "red", "blocked": "red"}


def work_context(envelope: dict[str, Any], console: Any) -> None:
    """``work context``: the selected todo, each source's status, the reads still required."""
    from rich.markup import escape

    from assay.context.refs import resolve_pointer

    data = envelope["data"]
    wc = data["work_context"]
    state = ("[green]complete[/green]" if wc["complete"]
             else "[red]incomplete: a source failed[/red]")
    console.print(f"[bold]work context[/bold] for goal {escape(wc['goal_id'])}: {state}")
    todo = None
    if wc.get("selected_todo_ref"):
        todo = resolve_pointer(data, wc["selected_todo_ref"]["$ref"])
    elif wc.get("selected_todo"):
        todo = wc["selected_todo"]
    if todo is not None:
        console.print(f"selected ({escape(wc['selection'])}): {escape(todo['id'])} "
                      + escape(f"[{todo['status']}]"))
        console.print(escape(todo["text"]))
    else:
        console.print(f"selected: none ({escape(wc['selection'])})")
    for source in wc["sources"]:
        colour = SOURCE_STYLE.get(source["status"], "yellow")
        revision = source.get("revision")
        label = source.get("id") or source.get("path") or source.get("goal_id", "")
        console.print(f"  {escape(source['source'])} {escape(str(label))}: "
                      f"[{colour}]{escape(source['status'])}[/{colour}]"
                      + (f" (revision {escape(str(revision))[:16]})" if revision else ""))
    for read in wc["required_reads"]:
        console.print("read before work: " + escape(" ".join(read["command"])))
    for obligation in wc["user_obligations"]:
        console.print(f"user obligation: {escape(obligation['id'])} "
                      f"{escape(obligation['text'].splitlines()[0] if obligation['text'] else '')}")


def todo_list(envelope: dict[str, Any], console: Any) -> None:
    """``todo list``: one full todo for an exact read, else a table of the selected todos."""
    from rich.markup import escape
    from rich.table import Table

    data = envelope["data"]
    if "matched" in data:
        if not data["matched"]:
            console.print(f"{escape(data['todo_id'])}: not found in goal {escape(data['goal_id'])}")
            return
        todo = data["todo"]
        claim = todo.get("claim") or {}
        console.print(f"[bold]{escape(todo['id'])}[/bold] {escape(todo['owner_role'])} "
                      + escape(f"[{todo['status']}]")
                      + f" revision {todo['authority']['revision']}"
                      + (f", claimed by {escape(claim['principal'])}" if claim else ""))
        console.print(escape(todo["text"]))
        return
    table = Table("todo", "owner", "status", "title")
    for todo in data["todos"]:
        title = todo.get("title")
        if title is None:
            title = (todo["text"].splitlines() or [""])[0]
        table.add_row(escape(todo["id"]), escape(todo["owner_role"]), escape(todo["status"]),
                      escape(title))
    console.print(table)
