"""Goal files written by loopx: assay delivers their todos and never rewrites a byte of them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.context.goal import read_goal_bytes

WRITTEN = Path(__file__).parents[1] / "golden" / "context" / "loopx" / "written"
FILES = sorted(WRITTEN.glob("*.md"))


def _use(ctx, name: str) -> bytes:
    data = (WRITTEN / f"{name}.md").read_bytes()
    ctx.goal.write_bytes(data)
    return data


def test_goal_write_leaves_loopx_written_file_byte_identical(ctx) -> None:
    """The data-loss case: goal write on loopx's regions (two agent todos, one user todo) writes nothing."""
    before = _use(ctx, "three_todos")
    out = ctx.data("goal.write", goal_id="parser", expect_revision=ctx.revision())
    assert ctx.goal.read_bytes() == before
    assert out["changed"] is False and out["regions"] == []
    assert [(r["id"], r["owner"]) for r in out["untouched_regions"]] == [
        ("loopx-agent", "loopx"), ("loopx-user", "loopx")]


def test_goal_write_with_ledger_todos_still_leaves_loopx_regions(ctx) -> None:
    """Ledger todos never overwrite loopx's own regions or projection lines."""
    before = _use(ctx, "claimed_and_archived")
    ctx.data("todo.add", goal_id="parser", text="A ledger todo", todo_id="ledger-one")
    ctx.data("goal.write", goal_id="parser", expect_revision=ctx.revision())
    assert ctx.goal.read_bytes() == before


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_goal_read_delivers_every_loopx_written_todo(path: Path) -> None:
    """Every todo loopx wrote reaches the reader, under its region's role, with its text whole."""
    read = read_goal_bytes(path.read_bytes(), goal_id="g", path="goal.md")
    expected = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    role_of = {r.id: r.role for r in read.regions}
    got: dict[str, list[str]] = {"agent": [], "user": [], "archive": []}
    for todo in read.todos:
        got[role_of[todo.region_id]].append(todo.text)
    assert got == expected
    assert read.ownership == "explicit"


def test_goal_read_loopx_todo_keeps_its_metadata_and_detail() -> None:
    """A loopx todo carries its id, status, claimant and verbatim metadata line."""
    read = read_goal_bytes((WRITTEN / "claimed_and_archived.md").read_bytes(), goal_id="g",
                           path="goal.md")
    view = read.todo_views()[0]
    assert (view["id"], view["owner_role"], view["status"], view["origin"]) == (
        "todo:todo_parse_manifest", "agent", "open", "goal_file")
    assert ["claimed_by", "agent-a"] in view["metadata"]
    assert view["detail"] == [("  <!-- loopx:todo todo_id=todo_parse_manifest status=open "
                              "task_class=advancement_task action_kind=implement "
                              "claimed_by=agent-a -->")]
    archived = [v for v in read.todo_views() if v["archived"]]
    assert [(v["text"], v["owner_role"], v["done"]) for v in archived] == [
        ("Set up the repository", "agent", True)]


def test_goal_read_op_lists_loopx_todos_beside_the_text(ctx) -> None:
    """goal read returns the narrative without loopx's sections and their todos separately."""
    _use(ctx, "three_todos")
    out = ctx.data("goal.read", goal_id="parser")
    assert out["ownership"] == "explicit"
    assert "Keep this line outside the todo sections." in out["text"]
    assert "Parse the manifest" not in out["text"]
    assert [t["text"] for t in out["todos"]] == ["Parse the manifest", "Write the fixture tests",
                                                 "Approve the schema"]


def test_work_context_delivers_loopx_todos_and_user_obligations(ctx) -> None:
    """work context selects the first open loopx agent todo and lists loopx user todos as obligations."""
    _use(ctx, "three_todos")
    envelope = ctx.call("work.context")
    wc = envelope["data"]["work_context"]
    assert wc["complete"] is True and wc["required_reads"] == []
    assert wc["selection"] == "heartbeat"
    selected = next(s for s in wc["sources"] if s["source"] == "selected_todo")
    assert (selected["origin"], selected["todo"]["text"]) == ("goal_file", "Parse the manifest")
    assert [(u["text"], u["origin"]) for u in wc["user_obligations"]] == [
        ("Approve the schema", "goal_file")]
    goal = wc["sources"][0]
    assert [t["text"] for t in goal["todos"]] == ["Parse the manifest", "Write the fixture tests",
                                                  "Approve the schema"]


def test_work_context_ledger_todo_is_selected_before_goal_file_todos(ctx) -> None:
    """A ledger agent todo wins the heartbeat; loopx user todos still count as obligations."""
    _use(ctx, "three_todos")
    ctx.data("todo.add", goal_id="parser", text="Ledger work", todo_id="ledger-work")
    wc = ctx.call("work.context")["data"]["work_context"]
    selected = next(s for s in wc["sources"] if s["source"] == "selected_todo")
    assert selected["id"] == "todo:ledger-work" and "origin" not in selected
    assert [u["text"] for u in wc["user_obligations"]] == ["Approve the schema"]


def test_work_context_exact_selection_of_a_goal_file_todo(ctx) -> None:
    """--todo-id naming a loopx todo selects it exactly from the goal file."""
    _use(ctx, "three_todos")
    wc = ctx.call("work.context", todo_id="todo_write_tests")["data"]["work_context"]
    assert wc["selection"] == "exact"
    selected = next(s for s in wc["sources"] if s["source"] == "selected_todo")
    assert selected["todo"]["text"] == "Write the fixture tests"


def test_todo_exact_read_finds_a_goal_file_todo(ctx) -> None:
    """An exact read of a loopx todo id returns that todo, marked as coming from the goal file."""
    data = _use(ctx, "three_todos")
    out = ctx.data("todo.list", goal_id="parser", todo_id="todo_approve_schema")
    assert out["matched"] is True and out["not_found"] is False
    todo = out["todo"]
    assert (todo["origin"], todo["owner_role"], todo["text"]) == (
        "goal_file", "user", "Approve the schema")
    assert todo["source"]["revision"] == read_goal_bytes(data, goal_id="g", path="g").revision
    missing = ctx.data("todo.list", goal_id="parser", todo_id="todo_no_such")
    assert (missing["matched"], missing["todo"]) == (False, None)
