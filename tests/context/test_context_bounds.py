"""Bounded context reads: todo list pages, goal read pages, the bounded work context.

Each read is run on data larger than its default bound, on both backends: the
answer stays within the bound, ``omitted`` counts exactly what it left out, and
following ``read_more`` returns every item exactly once.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from context_docs import generated

from assay.ledger.store import Write
from paging_testing import exactly_once, follow, size

SOURCE = {"kind": "goal", "goal_id": "parser", "path": "goals/parser.md", "revision": "0" * 64}


def seed_todos(ctx: Any, count: int, *, role: str = "agent", text: str = "Todo {i}: keep it exact",
               status: str = "open", start: int = 0) -> list[str]:
    """Write ``count`` todos of goal parser in one transaction; return their ids in order."""
    writes, ids = [], []
    for i in range(start, start + count):
        stamp = f"2026-11-01T10:00:00.{i:06d}Z"
        todo_id = f"todo:t{i:05d}"
        claim = ({"principal": "agent-1", "claimed_at": stamp, "lease_ms": 1,
                  "lease_expires_at": stamp} if status == "claimed" else None)
        data = {"schema": "assay.todo/v1", "goal_id": "parser", "text": text.format(i=i),
                "owner_role": role, "status": status, "claim": claim, "blocked_reason": None,
                "completion": None, "relations": [], "source": SOURCE, "created_at": stamp,
                "created_by": "agent-1", "updated_at": stamp}
        writes.append(Write(id=todo_id, data=data, scope="project:demo"))
        ids.append(todo_id)
    store = ctx.store()
    try:
        store.put_many(writes)
    finally:
        store.close()
    return ids


def _run(ctx: Any) -> Any:
    return lambda tool, arguments: ctx.data(tool, **arguments)


def _texts(pages: list[dict[str, Any]]) -> dict[str, str]:
    return {t["id"]: t["text"] for page in pages for t in page.get("todos", [])}


# -- todo list --------------------------------------------------------------------------------


def test_todo_list_default_page_is_bounded_and_recovers_everything(ctx) -> None:
    """60 open todos: the default page holds 25 whole todos, counts all 60, and its reads
    recover the other 35 exactly once, in creation order."""
    ids = seed_todos(ctx, 60)
    first = ctx.data("todo.list", goal_id="parser")
    assert [t["id"] for t in first["todos"]] == ids[:25]
    assert first["omitted"] == {"todos": 35} and first["truncated"] is True
    assert first["counts"]["selected"] == 60 and first["coverage"] == {
        "active": 60, "before": 0, "included": 25, "omitted": 35}
    assert size(first) <= 64 * 1024
    pages = follow(_run(ctx), first)
    found = [t["id"] for page in pages for t in page["todos"]]
    assert found == ids
    assert [page["omitted"]["todos"] for page in pages] == [35, 10, 0]


def test_todo_list_byte_budget_drops_whole_todos_never_text(ctx) -> None:
    """Todos of 10 KB each: a page stops at the byte budget with whole todos; every text
    comes back in full across the pages."""
    long = "Keep this requirement exactly. " * 330 + "{i}"
    ids = seed_todos(ctx, 12, text=long)
    first = ctx.data("todo.list", goal_id="parser")
    assert size(first) <= 64 * 1024
    assert 0 < len(first["todos"]) < 12
    assert first["omitted"]["todos"] == 12 - len(first["todos"])
    pages = follow(_run(ctx), first)
    assert all(size(page) <= 64 * 1024 for page in pages)
    assert _texts(pages) == {i: long.format(i=int(i[-5:])) for i in ids}
    exactly_once([t["id"] for page in pages for t in page["todos"]], ids)


def test_todo_list_oversized_todo_is_named_with_its_exact_read(ctx) -> None:
    """A todo larger than the page budget is left out, counted, and named by its exact read;
    the page goes on after it."""
    seed_todos(ctx, 2)
    big = seed_todos(ctx, 1, text="x" * 100_000, start=2)[0]
    seed_todos(ctx, 2, start=3)
    first = ctx.data("todo.list", goal_id="parser")
    assert [t["id"] for t in first["todos"]] == ["todo:t00000", "todo:t00001", "todo:t00003",
                                                  "todo:t00004"]
    assert first["omitted"] == {"todos": 1}
    [read] = first["read_more"]
    assert read["reason"] == "item_too_large" and read["id"] == big
    assert read["read_args"] == ["todo", "list", "--goal-id", "parser", "--todo-id", big]
    exact = ctx.data(read["tool"], **read["arguments"])
    assert exact["todo"]["text"] == "x" * 100_000 and exact["complete"] is True


def test_todo_list_limit_and_filters_carry_into_the_next_page(ctx) -> None:
    """--limit, --owner-role and --status stay on every next-page read."""
    seed_todos(ctx, 7, role="user")
    seed_todos(ctx, 5, role="agent", start=7)
    blocked = seed_todos(ctx, 4, role="user", status="blocked", start=12)
    first = ctx.data("todo.list", goal_id="parser", limit=3, owner_role="user",
                     status=["blocked"])
    assert [t["id"] for t in first["todos"]] == blocked[:3]
    assert first["read_more"][0]["arguments"] == {
        "goal_id": "parser", "status": ["blocked"], "owner_role": "user", "limit": 3,
        "after": blocked[2]}
    pages = follow(_run(ctx), first)
    assert [t["id"] for page in pages for t in page["todos"]] == blocked


def test_todo_list_all_is_the_whole_inventory(ctx) -> None:
    """--all returns every selected todo and complete lanes at once."""
    ids = seed_todos(ctx, 40)
    out = ctx.data("todo.list", goal_id="parser", all=True)
    assert [t["id"] for t in out["todos"]] == ids
    assert len(out["agent_todos"]["selected"]) == 40
    assert out["complete"] is True and out["omitted"] == {"todos": 0}


@pytest.mark.parametrize("option", [{"limit": 3}, {"after": "todo:t00001"}, {"thin": True},
                                    {"max_bytes": 8192}])
def test_todo_list_all_with_a_page_option_is_invalid_argument(ctx, option) -> None:
    """--all excludes the options that page a list."""
    seed_todos(ctx, 2)
    err = ctx.fail("todo.list", goal_id="parser", all=True, **option)
    assert err.code == "invalid_argument" and err.pointer == "/" + next(iter(option))


def test_todo_list_after_an_unknown_todo_is_todo_not_found(ctx) -> None:
    """A cursor that is no todo of the goal is todo_not_found at /after."""
    seed_todos(ctx, 2)
    err = ctx.fail("todo.list", goal_id="parser", after="todo:nowhere")
    assert err.code == "todo_not_found" and err.pointer == "/after"


def test_todo_list_after_a_completed_todo_keeps_its_place(ctx) -> None:
    """A cursor todo that left the selection since the last page still marks its place."""
    ids = seed_todos(ctx, 5)
    store = ctx.store()
    try:
        with store.reader() as reader:
            record = reader.get(ids[1])
        data = {**record.data, "status": "archived"}
        store.put(Write(id=ids[1], data=data, scope="project:demo", expect_revision=1))
    finally:
        store.close()
    out = ctx.data("todo.list", goal_id="parser", after=ids[1])
    assert [t["id"] for t in out["todos"]] == ids[2:]
    assert out["coverage"] == {"active": 4, "before": 1, "included": 3, "omitted": 0}


def test_todo_list_thin_pages_hold_at_most_48(ctx) -> None:
    """Thin pages hold at most 48 thin items; their reads reach every todo."""
    ids = seed_todos(ctx, 100)
    first = ctx.data("todo.list", goal_id="parser", thin=True)
    assert len(first["todos"]) == 48 and "text" not in first["todos"][0]
    pages = follow(_run(ctx), first)
    assert [t["id"] for page in pages for t in page["todos"]] == ids


def test_todo_list_next_page_read_runs_on_the_cli(ctx) -> None:
    """The next page's literal argument array, run through the real CLI, gives the same page."""
    from assay_testing import Project

    seed_todos(ctx, 30)
    read = ctx.data("todo.list", goal_id="parser")["read_more"][0]
    ran = Project(ctx.root, db=ctx.db).run(*read["read_args"])
    assert ran.code == 0, ran.stderr
    assert ran.json["data"] == ctx.data(read["tool"], **read["arguments"])


# -- goal read --------------------------------------------------------------------------------


def _big_goal(sections: int) -> str:
    """A goal with prose (multi-byte characters, a very long line), assay and loopx regions."""
    parts = ["# Goal: ship the parser\n\n"]
    for i in range(sections):
        parts.append(f"## Section {i}\n\nRequirement {i}: keep every pointer exact — "
                     "naïve parsers fail here. ✓\n" * 20)
        parts.append(f"<!-- assay:todo-region role=agent id=r{i} begin -->\n"
                     + generated(f"- [ ] Task {i} <!-- todo:task{i} status=open -->")
                     + f"<!-- assay:todo-region id=r{i} end -->\n\n")
    parts.append("## User Todo\n<!-- loopx:todo-region-v0 role=user begin -->\n")
    parts.extend(f"- [ ] Approve part {k}\n  <!-- loopx:todo todo_id=approve_{k} status=open -->\n"
                 for k in range(30))
    parts.append("<!-- loopx:todo-region-v0 role=user end -->\n\n")
    parts.append("A very long line: " + "ü" * 40_000 + "\n\nFinal stop.\n")
    return "".join(parts)


def test_goal_read_pages_cover_the_file_exactly(ctx) -> None:
    """A 190 KB goal: every page stays within 64 KiB, never starts or ends inside a region or a
    character, and the pages' text, regions and todos join to the whole read."""
    from assay.context.goal import read_goal_bytes

    ctx.goal.write_text(_big_goal(60), encoding="utf-8")
    data = ctx.goal.read_bytes()
    whole = read_goal_bytes(data, goal_id="parser", path="goals/parser.md")
    first = ctx.data("goal.read", goal_id="parser")
    assert first["truncated"] is True and first["window"]["start"] == 0
    pages = follow(_run(ctx), first)
    assert len(pages) > 3
    assert all(size(page) <= 64 * 1024 for page in pages)
    assert "".join(page["text"] for page in pages) == whole.text
    assert [r for page in pages for r in page["excluded_todo_regions"]] == \
        [r.to_dict() for r in whole.regions]
    assert [t for page in pages for t in page["todos"]] == whole.todo_views()
    for previous, page in itertools.pairwise(pages):
        assert page["window"]["start"] == previous["window"]["end"]
    for page in pages:
        end = page["window"]["end"]
        data[:end].decode("utf-8")
        assert not any(r.start < len(data[:end].decode("utf-8")) < r.end for r in whole.regions)
        later = [r for r in whole.regions if len(data[:end].decode("utf-8")) <= r.start]
        assert page["omitted"] == {
            "bytes": len(data) - end, "regions": len(later),
            "todos": sum(1 for t in whole.todos if t.region_id in {r.id for r in later})}
    assert pages[-1]["window"]["end"] == len(data) and pages[-1]["complete"] is True


def test_goal_read_full_pages_join_to_the_file(ctx) -> None:
    """With full, the pages' full_text joins to the file's text, byte for byte."""
    ctx.goal.write_text(_big_goal(40), encoding="utf-8")
    pages = follow(_run(ctx), ctx.data("goal.read", goal_id="parser", full=True))
    assert "".join(p["full_text"] for p in pages).encode("utf-8") == ctx.goal.read_bytes()
    assert all(size(page) <= 64 * 1024 for page in pages)


def test_goal_read_next_page_is_pinned_to_the_revision(ctx) -> None:
    """A file changed between pages makes the next page goal_revision_conflict."""
    ctx.goal.write_text(_big_goal(60), encoding="utf-8")
    read = ctx.data("goal.read", goal_id="parser")["read_more"][0]
    with ctx.goal.open("a", encoding="utf-8") as handle:
        handle.write("Another stop.\n")
    err = ctx.fail(read["tool"], **read["arguments"])
    assert err.code == "goal_revision_conflict" and err.pointer == "/expect_revision"


@pytest.mark.parametrize("where", ["region", "character", "past_end"])
def test_goal_read_offset_outside_a_page_start_is_invalid_argument(ctx, where) -> None:
    """An offset inside a region, inside a UTF-8 sequence or past the end is refused."""
    text = "é\n" + "<!-- assay:todo-region role=agent id=r begin -->\n" \
        "<!-- assay:todo-region id=r end -->\n"
    ctx.goal.write_text(text, encoding="utf-8")
    offset = {"region": len("é\n".encode()) + 5, "character": 1, "past_end": 10_000}[where]
    err = ctx.fail("goal.read", goal_id="parser", offset=offset)
    assert err.code == "invalid_argument" and err.pointer == "/offset"


# -- work context ------------------------------------------------------------------------------


def test_work_context_bounds_user_obligations_and_names_the_rest(ctx) -> None:
    """300 user todos: the context stays within 64 KiB, counts the obligations it left out,
    and its reads (todo list pages) recover exactly those, with the delivered ones all 300."""
    users = seed_todos(ctx, 300, role="user",
                       text="User obligation {i}: approve the schema before release")
    seed_todos(ctx, 100, start=300)
    out = ctx.data("work.context", goal_id="parser")
    context = out["work_context"]
    assert size(out) <= 64 * 1024
    delivered = [t["id"] for t in context["user_obligations"]]
    assert delivered == users[:len(delivered)] and 0 < len(delivered) < 300
    assert out["omitted"] == {"sources": 0, "user_obligations": 300 - len(delivered)}
    source = next(s for s in context["sources"] if s["source"] == "user_obligations")
    assert source["status"] == "pending" and source["ids"] == delivered
    assert source["read"] in context["required_reads"]
    assert context["complete"] is True and out["complete"] is False
    pages = follow(_run(ctx), out)
    rest = [t["id"] for page in pages[1:] for t in page["todos"]]
    exactly_once(delivered + rest, users)


def test_work_context_large_goal_text_is_pending_with_its_read(ctx) -> None:
    """A goal text larger than the budget is not delivered: the selected todo still is, and
    the goal state is pending with its page-by-page read."""
    ctx.goal.write_text(_big_goal(60), encoding="utf-8")
    seed_todos(ctx, 3)
    out = ctx.data("work.context", goal_id="parser")
    context = out["work_context"]
    goal = context["sources"][0]
    assert goal["status"] == "pending" and "text" not in goal
    assert goal["read"]["command"] == ["assay", "goal", "read", "--goal-id", "parser"]
    selected = next(s for s in context["sources"] if s["source"] == "selected_todo")
    assert selected["status"] == "delivered" and selected["todo"]["text"] == "Todo 0: keep it exact"
    assert out["omitted"] == {"sources": 1, "user_obligations": 0}
    assert [r["tool"] for r in out["read_more"]] == ["goal_read"]
    assert size(out) <= 64 * 1024


def test_work_context_within_its_bound_is_complete(ctx) -> None:
    """A small context is delivered whole: complete, nothing omitted, no reads."""
    seed_todos(ctx, 3)
    out = ctx.data("work.context", goal_id="parser")
    assert out["complete"] is True and out["read_more"] == []
    assert out["omitted"] == {"sources": 0, "user_obligations": 0}


def test_todo_list_readable_view_names_what_it_left_out(ctx) -> None:
    """--format table ends a bounded page with the counts left out and the read of the rest."""
    from assay_testing import Project

    seed_todos(ctx, 30)
    ran = Project(ctx.root, db=ctx.db).run("todo", "list", "--goal-id", "parser",
                                           "--format", "table")
    assert ran.code == 0, ran.stderr
    assert "not shown: 5 todos" in ran.stdout
    assert "read: assay todo list --goal-id parser --after todo:t00024" in ran.stdout
