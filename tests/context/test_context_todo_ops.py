"""Todo records through the operations: add, claim, update, complete, list, guarded writes."""

from __future__ import annotations

import pytest
from context_docs import EXPLICIT, sha

from assay.errors import ConflictError, RevisionConflict, UsageError


def _add(ctx, name: str, text: str = "Parse the manifest", **kw) -> dict:
    return ctx.data("todo.add", goal_id="parser", text=text, todo_id=name, **kw)["todo"]


def test_todo_add_records_goal_source_and_open_status(ctx) -> None:
    """A new todo is open, owned by the agent, with the goal file revision as its source."""
    todo = _add(ctx, "parse")
    assert (todo["id"], todo["status"], todo["owner_role"]) == ("todo:parse", "open", "agent")
    assert todo["source"] == {"kind": "goal", "goal_id": "parser", "path": "goals/parser.md",
                              "revision": sha(EXPLICIT)}
    assert todo["authority"]["revision"] == 1 and todo["claim"] is None


def test_todo_add_existing_id_is_revision_conflict(ctx) -> None:
    """Adding a todo under an id that exists fails and changes nothing."""
    _add(ctx, "parse")
    err = ctx.fail("todo.add", goal_id="parser", text="other", todo_id="parse")
    assert isinstance(err, RevisionConflict) and err.code == "revision_conflict"
    assert ctx.data("todo.list", goal_id="parser", todo_id="parse")["todo"]["text"] == \
        "Parse the manifest"


def test_todo_add_derived_id_is_stable_for_a_request_id(ctx) -> None:
    """Without --todo-id, a retried request with the same request id replays the same todo."""
    first = ctx.data("todo.add", goal_id="parser", text="x", request_id="r-1")
    again = ctx.data("todo.add", goal_id="parser", text="x", request_id="r-1")
    assert first["todo"]["id"] == again["todo"]["id"]
    assert first["todo"]["id"].startswith("todo:td-")
    assert again["receipt"]["replayed"] is True


def test_todo_add_unknown_goal_is_goal_not_found(ctx) -> None:
    """A goal id not registered in assay.toml is goal_not_found at /goal_id."""
    err = ctx.fail("todo.add", goal_id="nope", text="x")
    assert (err.code, err.pointer) == ("goal_not_found", "/goal_id")


def test_todo_add_stale_goal_revision_is_refused(ctx) -> None:
    """--expect-goal-revision guards the goal file the todo is added against."""
    err = ctx.fail("todo.add", goal_id="parser", text="x", expect_goal_revision="0" * 64)
    assert isinstance(err, ConflictError)
    assert (err.code, err.pointer) == ("goal_revision_conflict", "/expect_goal_revision")


def test_todo_claim_sets_claim_and_lease(ctx) -> None:
    """Claiming records the principal, the claim time and the lease expiry."""
    _add(ctx, "parse")
    todo = ctx.data("todo.claim", todo_id="parse", expect_revision=1, lease_ms=60000)["todo"]
    assert todo["status"] == "claimed" and todo["claim"]["principal"] == "agent"
    assert todo["claim"]["lease_ms"] == 60000
    assert todo["claim"]["lease_expires_at"] > todo["claim"]["claimed_at"]


def test_todo_claim_stale_revision_is_refused(ctx) -> None:
    """A claim with an old expected revision is revision_conflict with the current revision."""
    _add(ctx, "parse")
    ctx.data("todo.claim", todo_id="parse", expect_revision=1)
    err = ctx.fail("todo.claim", todo_id="parse", expect_revision=1)
    assert isinstance(err, RevisionConflict)
    assert (err.pointer, err.current_revision) == ("/expect_revision", 2)


def test_todo_claim_by_another_principal_is_todo_claimed(ctx) -> None:
    """A live lease held by someone else refuses another claim."""
    _add(ctx, "parse")
    ctx.data("todo.claim", todo_id="parse", expect_revision=1)
    err = ctx.fail("todo.claim", todo_id="parse", expect_revision=2, principal="other-agent")
    assert err.code == "todo_claimed" and err.details["claimed_by"] == "agent"


def test_todo_update_blocks_with_reason_and_release(ctx) -> None:
    """Update can block a todo with a reason; release returns a claimed todo to open."""
    _add(ctx, "parse")
    ctx.data("todo.claim", todo_id="parse", expect_revision=1)
    todo = ctx.data("todo.update", todo_id="parse", expect_revision=2, release=True)["todo"]
    assert (todo["status"], todo["claim"]) == ("open", None)
    todo = ctx.data("todo.update", todo_id="parse", expect_revision=3, status="blocked",
                    blocked_reason="waiting for the schema")["todo"]
    assert (todo["status"], todo["blocked_reason"]) == ("blocked", "waiting for the schema")


def test_todo_update_relations_become_record_links(ctx) -> None:
    """Relations are kept in the todo and as typed ledger links."""
    _add(ctx, "parse")
    _add(ctx, "schema", "Write the schema")
    todo = ctx.data("todo.update", todo_id="parse", expect_revision=1,
                    relation=["depends-on=schema"])["todo"]
    assert todo["relations"] == [{"rel": "depends-on", "target": "todo:schema"}]
    record = ctx.data("get", id="todo:parse") if False else None  # noqa: F841

    store = ctx.store()
    try:
        with store.reader() as reader:
            links = reader.get("todo:parse").links
    finally:
        store.close()
    assert [(link.rel, link.target) for link in links] == [("depends-on", "todo:schema")]


def test_todo_update_bad_relation_is_invalid_argument(ctx) -> None:
    """A relation outside the vocabulary is invalid_argument pointing at it."""
    _add(ctx, "parse")
    err = ctx.fail("todo.update", todo_id="parse", expect_revision=1, relation=["owns=x"])
    assert isinstance(err, UsageError)
    assert (err.code, err.pointer) == ("invalid_argument", "/relation/0")


def test_todo_complete_records_completion(ctx) -> None:
    """Completing records who, the note and evidence ids; completed todos are then final."""
    _add(ctx, "parse")
    todo = ctx.data("todo.complete", todo_id="parse", expect_revision=1, note="done",
                    evidence=["evidence:unit-7"])["todo"]
    assert todo["status"] == "completed"
    assert todo["completion"]["completed_by"] == "agent"
    assert todo["completion"]["evidence"] == ["evidence:unit-7"]
    err = ctx.fail("todo.claim", todo_id="parse", expect_revision=2)
    assert err.code == "todo_invalid_transition"


def test_todo_complete_then_archive_is_final(ctx) -> None:
    """A completed todo can be archived, and an archived todo cannot change."""
    _add(ctx, "parse")
    ctx.data("todo.complete", todo_id="parse", expect_revision=1)
    ctx.data("todo.update", todo_id="parse", expect_revision=2, status="archived")
    err = ctx.fail("todo.update", todo_id="parse", expect_revision=3, status="open")
    assert err.code == "todo_invalid_transition"


def test_todo_write_of_unknown_todo_is_todo_not_found(ctx) -> None:
    """Claiming a todo that does not exist is todo_not_found at /todo_id."""
    err = ctx.fail("todo.claim", todo_id="ghost", expect_revision=1)
    assert (err.code, err.pointer) == ("todo_not_found", "/todo_id")


def test_todo_list_exact_read_returns_full_text(ctx) -> None:
    """An exact read returns the whole text, however long, and no list views."""
    text = "Parse the manifest\n" + "requirement line\n" * 5000
    _add(ctx, "parse", text)
    out = ctx.data("todo.list", goal_id="parser", todo_id="todo:parse")
    assert (out["matched"], out["not_found"]) == (True, False)
    assert out["todo"]["text"] == text
    assert not {"todos", "agent_todos", "user_todos"} & set(out)


def test_todo_list_exact_read_of_missing_todo_is_not_found(ctx) -> None:
    """A missing todo is matched=false, todo=null, not_found=true (not an error)."""
    out = ctx.data("todo.list", goal_id="parser", todo_id="ghost")
    assert (out["matched"], out["todo"], out["not_found"]) == (False, None, True)


def test_todo_list_exact_read_of_private_todo_is_not_found(ctx) -> None:
    """A todo private to another principal does not exist for the caller."""
    from assay.ledger import Write

    _add(ctx, "parse")
    store = ctx.store()
    try:
        with store.reader() as reader:
            rec = reader.get("todo:parse")
        store.put(Write(id="todo:hidden", data=rec.data, scope=rec.scope,
                        audience="private:someone", expect_revision=0))
    finally:
        store.close()
    out = ctx.data("todo.list", goal_id="parser", todo_id="hidden")
    assert out["not_found"] is True


@pytest.mark.parametrize("option", [{"thin": True}, {"limit": 3}, {"owner_role": "user"}])
def test_todo_list_list_options_with_exact_read_are_usage_errors(ctx, option) -> None:
    """--thin (and other list options) with --todo-id is list_option_with_exact_read."""
    err = ctx.fail("todo.list", goal_id="parser", todo_id="parse", **option)
    name = next(iter(option))
    assert isinstance(err, UsageError)
    assert (err.code, err.pointer) == ("list_option_with_exact_read", f"/{name}")


def test_todo_list_inventory_uses_refs_and_expands(ctx) -> None:
    """The inventory's lanes point into todos, and expand() restores the full lanes."""
    from assay.context.refs import expand

    _add(ctx, "parse")
    _add(ctx, "approve", "Approve it", owner_role="user")
    out = ctx.data("todo.list", goal_id="parser")
    assert [t["id"] for t in out["todos"]] == ["todo:parse", "todo:approve"]
    assert out["agent_todos"]["selected"] == [{"$ref": "#/todos/0"}]
    assert out["user_todos"]["open"] == [{"$ref": "#/todos/1"}]
    assert out["todo_list_record_references"]["replaced_view_records"] == 4
    full = expand(out)
    assert full["agent_todos"]["open"] == [out["todos"][0]]


def test_todo_list_thin_is_bounded_without_refs(ctx) -> None:
    """--thin lists hold at most --limit thin items and never pointers."""
    for i in range(5):
        _add(ctx, f"t{i}", f"task {i}\nwith detail")
    out = ctx.data("todo.list", goal_id="parser", thin=True, limit=2)
    assert len(out["todos"]) == 2 and out["todos"][0]["content_truncated"] is True
    assert len(out["agent_todos"]["selected"]) == 2
    assert out["counts"]["lanes"]["agent_todos"]["selected"] == 5
    assert "todo_list_record_references" not in out
    assert "$ref" not in str(out)


def test_todo_list_reads_are_byte_identical(ctx) -> None:
    """Two reads at the same ledger revision print the same canonical bytes."""
    from assay.canonical import canonical_bytes

    _add(ctx, "parse")
    first = canonical_bytes(ctx.call("todo.list", goal_id="parser"))
    assert canonical_bytes(ctx.call("todo.list", goal_id="parser")) == first
