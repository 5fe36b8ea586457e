"""Goal operations over the ledger: regions regenerated from todos, guards, record checks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from context_docs import EXPLICIT

from assay.errors import AssayError


def _outside_regions(data: bytes) -> list[bytes]:
    from assay.context.goal import read_goal_bytes

    read = read_goal_bytes(data, goal_id="g", path="goal.md")
    text = data.decode()
    out, last = [], 0
    for r in read.regions:
        out.append(text[last:r.content_start].encode())
        last = r.content_end
    out.append(text[last:].encode())
    return out


def test_goal_write_op_renders_todos_into_their_regions(ctx) -> None:
    """goal.write puts agent todos in the agent region, user todos in the user region."""
    ctx.data("todo.add", goal_id="parser", text="Parse it\nwith detail", todo_id="parse")
    ctx.data("todo.add", goal_id="parser", text="Approve", todo_id="ok", owner_role="user")
    before = ctx.goal.read_bytes()
    out = ctx.data("goal.write", goal_id="parser", expect_revision=ctx.revision())
    after = ctx.goal.read_bytes()
    assert out["changed"] is True
    assert _outside_regions(after) == _outside_regions(before)
    text = after.decode()
    agent = text[text.index("id=agent-todo begin"):text.index("id=agent-todo end")]
    user = text[text.index("id=user-todo begin"):text.index("id=user-todo end")]
    assert "- [ ] Parse it <!-- todo:parse status=open -->\n    with detail\n" in agent
    assert "- [ ] Approve <!-- todo:ok status=open -->\n" in user and "Parse it" not in user


def test_goal_write_op_changes_only_region_bytes_crlf(ctx) -> None:
    """On a CRLF goal, regeneration keeps CRLF and changes no byte outside the regions."""
    ctx.goal.write_bytes(EXPLICIT.replace("\n", "\r\n").encode())
    ctx.data("todo.add", goal_id="parser", text="Parse it", todo_id="parse")
    before = ctx.goal.read_bytes()
    ctx.data("goal.write", goal_id="parser", expect_revision=ctx.revision())
    after = ctx.goal.read_bytes()
    assert _outside_regions(after) == _outside_regions(before)
    assert after.count(b"\n") == after.count(b"\r\n")
    assert b"- [ ] Parse it <!-- todo:parse status=open -->\r\n" in after


def test_goal_write_op_refuses_repeated_role(ctx) -> None:
    """Two regions of the same role leave the writer no place to put a todo: refused."""
    ctx.goal.write_text(EXPLICIT + "<!-- assay:todo-region role=agent id=more begin -->\n"
                        "<!-- assay:todo-region id=more end -->\n")
    err = ctx.fail("goal.write", goal_id="parser", expect_revision=ctx.revision())
    assert err.code == "goal_region_role_repeated"
    assert err.details == {"role": "agent"}


def test_goal_read_op_full_adds_whole_file(ctx) -> None:
    """goal.read --full returns the whole file as full_text beside the ownership read."""
    out = ctx.data("goal.read", goal_id="parser", full=True)
    assert out["full_text"] == EXPLICIT


def test_todo_claim_retry_with_request_id_replays(ctx) -> None:
    """Retrying a claim with its request id replays the first receipt instead of conflicting."""
    ctx.data("todo.add", goal_id="parser", text="x", todo_id="parse")
    first = ctx.data("todo.claim", todo_id="parse", expect_revision=1, request_id="c-1")
    again = ctx.data("todo.claim", todo_id="parse", expect_revision=1, request_id="c-1")
    assert again["receipt"]["replayed"] is True
    assert again["todo"] == first["todo"]


def test_todo_claim_expired_lease_can_be_taken_over(ctx) -> None:
    """Once a lease has expired, another principal may claim the todo."""
    from assay.context.todo import claim_todo
    from assay.ledger.access import Access

    ctx.data("todo.add", goal_id="parser", text="x", todo_id="parse")
    store = ctx.store()
    try:
        past = datetime.now(UTC) - timedelta(hours=2)
        claim_todo(store, Access.for_project("project:demo", (), "a"), principal="a",
                   todo_id="todo:parse", expect_revision=1, lease_ms=60_000, now=past)
        out = claim_todo(store, Access.for_project("project:demo", (), "b"), principal="b",
                         todo_id="todo:parse", expect_revision=2)
    finally:
        store.close()
    assert out["todo"]["claim"]["principal"] == "b"


def test_todo_list_malformed_stored_todo_fails_visibly(ctx) -> None:
    """A todo record whose data breaks the schema fails the read with todo_record_invalid."""
    from assay.ledger import Write

    store = ctx.store()
    try:
        store.put(Write(id="todo:bad", data={"schema": "assay.todo/v1", "goal_id": "parser",
                                             "text": "x", "status": "done"},
                        scope="project:demo"))
    finally:
        store.close()
    err = ctx.fail("todo.list", goal_id="parser")
    assert (err.code, err.pointer) == ("todo_record_invalid", "/data/created_at")
    err = ctx.fail("todo.list", goal_id="parser", todo_id="bad")
    assert err.code == "todo_record_invalid"


def test_work_context_needs_goal_id_with_several_goals(ctx) -> None:
    """Without --goal-id and with two registered goals, work context asks for one."""
    toml = ctx.root / "assay.toml"
    toml.write_text(toml.read_text() + '\n[goals.other]\npath = "goals/parser.md"\n')
    err = ctx.fail("work.context")
    assert (err.code, err.pointer) == ("missing_argument", "/goal_id")


@pytest.mark.parametrize("text", ["", "   "])
def test_todo_add_blank_text_is_refused(ctx, text: str) -> None:
    """A todo needs non-blank text; nothing is written otherwise."""
    err = ctx.fail("todo.add", goal_id="parser", text=text)
    assert err.code in ("invalid_argument",) and err.pointer == "/text"
    assert ctx.data("todo.list", goal_id="parser")["todos"] == []
    assert isinstance(err, AssayError)
