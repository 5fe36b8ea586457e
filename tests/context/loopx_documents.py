"""Goal files in loopx's format, generated, and the two readings compared on them.

:func:`loopx_view` asks the installed loopx 2.1.1 package (the oracle);
:func:`assay_view` asks assay. Both answer with the same shape: the verdict
(``refused`` or ``read``), the regions (role, first and last line 1-based,
marked), the ownership derived from them, and the todo items of each region
role (text, status, done, todo id, owner role).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from assay.context.goal import read_goal_bytes
from assay.errors import AssayError

ROLES = ("agent", "user", "archive")
STRICT = ("Agent Todo", "User Todo", "Completed Work Archive", "Codex Todo",
          "Project Agent Todo", "Owner Reading Queue", "Owner Review Reading Queue",
          "User Todo / Owner Review Reading Queue")
OTHER_TITLES = ("Notes", "Agent Todo Archive", "Work archive", "agent todos", "My User Todo list",
                "Next Action", "Completed work", "History")
NEWLINES = ("\n", "\r\n", "\r", "\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c")
TOKENS = ("todo_id=todo_abc", "todo_id=todo_x", "todo_id=TODO_Upper", "status=open",
          "status=done", "status=blocked", "status=Deferred", "status=bogus", "role=user",
          "role=agent", "role=bot", "task_class=advancement_task", "task_class=nope",
          "claimed_by=Agent%20One", "claimed_by=9bad", "action_kind=implement",
          "task_domain=a.b", "note=hi%20there", "note=%20", "foo=bar", "decision_outcome=approve",
          "replan_obligation_id=replan-0123456789abcdef", "evidence=x")


def loopx_marker(role: str, edge: str) -> str:
    return f"<!-- loopx:todo-region-v0 role={role} {edge} -->"


def _heading(draw: st.DrawFn) -> str:
    title = draw(st.sampled_from(STRICT + OTHER_TITLES))
    title = draw(st.sampled_from([title, title.lower(), title.upper()]))
    lead = draw(st.sampled_from(["## ", "## ", "## ", "##  ", "##\t", " ## ", "### ", "##"]))
    tail = draw(st.sampled_from(["", "", " ", " ##", "\t"]))
    return lead + title + tail


def _marker(draw: st.DrawFn, role: str, edge: str) -> str:
    exact = loopx_marker(role, edge)
    return draw(st.sampled_from([
        exact, exact, exact, exact,
        " " + exact, "    " + exact, exact + " ", exact + "\t",
        f"<!--  loopx:todo-region-v0 role={role} {edge} -->",
        f"<!-- loopx:todo-region-v0  role={role} {edge} -->",
        f"<!-- loopx:todo-region-v0 role={role} {edge}-->",
        f"<!-- loopx:todo-region-v0 role=bot {edge} -->",
        f"<!-- loopx:todo-region-v0 role={role} finish -->",
        f"<!-- loopx:todo-region-v1 role={role} {edge} -->",
        f"Prose mentions {exact} mid-line.",
    ]))


def _task(draw: st.DrawFn) -> str:
    indent = draw(st.sampled_from(["", "", " ", "  ", "\t"]))
    bullet = draw(st.sampled_from(["-", "-", "*", "+", "1."]))
    box = draw(st.sampled_from([" ", " ", "x", "X", "-", "?"]))
    gap = draw(st.sampled_from([" ", " ", "  ", ""]))
    text = draw(st.sampled_from(["Parse the manifest", "Fix `x`  now", "a%20b", "", " ",
                                 "Write <!-- loopx:todo todo_id=todo_inline --> tests"]))
    return f"{indent}{bullet} [{box}]{gap}{text}" + draw(st.sampled_from(["", " ", "\t"]))


def _metadata(draw: st.DrawFn) -> str:
    indent = draw(st.sampled_from(["  ", "  ", "\t", "", "    "]))
    head = draw(st.sampled_from(["<!-- loopx:todo ", "<!-- loopx:todo ", "<!--loopx:",
                                 "<!-- loopx: "]))
    tokens = draw(st.lists(st.sampled_from(TOKENS), min_size=0, max_size=3))
    return f"{indent}{head}{' '.join(tokens)} -->"


def _line(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["blank", "blank", "space", "prose", "task", "task",
                                 "detail", "meta", "meta", "projection", "heading", "fence",
                                 "comment", "marker", "frontmatter"]))
    if kind == "blank":
        return ""
    if kind == "space":
        return draw(st.sampled_from(["  ", "\t", "\u00a0", " \u3000"]))
    if kind == "prose":
        return draw(st.sampled_from(["Some narrative.", "- a plain bullet", "Heading",
                                     "===", "> quoted", "Unicode: é 漢字 \ufeff inside"]))
    if kind == "task":
        return _task(draw)
    if kind == "detail":
        return draw(st.sampled_from(["  indented detail", "\ttab detail", "    four spaces",
                                     " one space"]))
    if kind == "meta":
        return _metadata(draw)
    if kind == "projection":
        return ("<!-- loopx:todo-section-projection-v0 role=agent provider_revision=r1 "
                "records_sha256=" + "a" * 64 + " -->")
    if kind == "heading":
        return _heading(draw)
    if kind == "fence":
        return draw(st.sampled_from(["```", "```md", "~~~~", "   ```", "````", "~~~"]))
    if kind == "comment":
        return draw(st.sampled_from(["<!-- one line -->", "<!-- opens", "closes -->",
                                     "  <!-- indented opens"]))
    if kind == "marker":
        return _marker(draw, draw(st.sampled_from(ROLES)), draw(st.sampled_from(["begin", "end"])))
    return draw(st.sampled_from(["---", "...", "--- "]))


@st.composite
def _section(draw: st.DrawFn) -> list[str]:
    """A todo heading, usually with a begin marker, some body and usually an end marker."""
    role = draw(st.sampled_from(ROLES))
    title = {"agent": "Agent Todo", "user": "User Todo", "archive": "Completed Work Archive"}
    out = [draw(st.sampled_from([f"## {title[role]}", f"## {title[role]}",
                                 f"## {draw(st.sampled_from(STRICT))}", _heading(draw)]))]
    marked = draw(st.integers(0, 9)) < 6
    if marked:
        out.append(_marker(draw, role, "begin") if draw(st.integers(0, 4)) == 0
                   else loopx_marker(role, "begin"))
    body = draw(st.lists(st.sampled_from(["", "task", "task", "meta", "line"]), max_size=6))
    for kind in body:
        if kind == "task":
            out.append(_task(draw))
        elif kind == "meta":
            out.append(_metadata(draw))
        elif kind == "line":
            out.append(_line(draw))
        else:
            out.append("")
    if marked and draw(st.integers(0, 9)) < 9:
        out.append(_marker(draw, role, "end") if draw(st.integers(0, 4)) == 0
                   else loopx_marker(role, "end"))
    return out


@st.composite
def loopx_documents(draw: st.DrawFn) -> str:
    """A goal file in loopx's format, with the variants that trip readers up."""
    lines: list[str] = []
    if draw(st.integers(0, 5)) == 0:
        lines += ["---", "goal_id: g", draw(st.sampled_from(["---", "...", "--- "]))]
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.booleans()):
            lines += draw(_section())
        else:
            lines += [_line(draw) for _ in range(draw(st.integers(0, 4)))]
    uniform = draw(st.sampled_from(["\n", "\n", "\r\n", None]))
    text = "".join(line + (uniform or draw(st.sampled_from(NEWLINES))) for line in lines)
    if text and draw(st.integers(0, 4)) == 0:
        text = text[:-1]
    if draw(st.integers(0, 7)) == 0:
        text = "\ufeff" + text
    return text


def _ownership(marked: list[bool]) -> str:
    if all(marked):
        return "explicit"
    return "mixed" if any(marked) else "unmarked"


def loopx_view(text: str) -> dict[str, Any]:
    """What loopx 2.1.1's own reader makes of ``text``."""
    from loopx.control_plane.todos.active_state_todo_parser import parse_todo_source
    from loopx.control_plane.todos.machine_region import (
        find_todo_source_regions,
        visible_markdown_lines,
    )

    lines = text.splitlines()
    try:
        regions = find_todo_source_regions(lines, visible=visible_markdown_lines(lines))
        items, archive, _ = parse_todo_source(text)
    except ValueError:
        return {"verdict": "refused"}

    def row(item: dict[str, Any]) -> tuple[Any, ...]:
        return (item["text"], item["status"], item["done"], item.get("todo_id"), item.get("role"))

    return {
        "verdict": "read",
        "regions": [(r.role, r.start + 1, r.end, r.marked) for r in regions],
        "ownership": _ownership([r.marked for r in regions]),
        "todos": {"agent": [row(i) for i in items["agent"]],
                  "user": [row(i) for i in items["user"]],
                  "archive": [row(i) for i in archive]},
    }


def assay_view(text: str) -> dict[str, Any]:
    """What assay's goal reader makes of ``text``, in :func:`loopx_view`'s shape."""
    try:
        read = read_goal_bytes(text.encode("utf-8"), goal_id="g", path="goal.md")
    except AssayError:
        return {"verdict": "refused"}
    role_of = {r.id: r.role for r in read.regions}
    todos: dict[str, list[tuple[Any, ...]]] = {role: [] for role in ROLES}
    for todo in read.todos:
        todo_id = todo.todo_id
        todos[role_of[todo.region_id]].append(
            (todo.text, todo.status, todo.done, todo_id, todo.role))
    return {
        "verdict": "read",
        "regions": [(r.role, r.start_line, r.end_line, r.marked) for r in read.regions],
        "ownership": read.ownership,
        "todos": todos,
    }
