"""The heartbeat work context: selection, sources with revisions, required reads, complete."""

from __future__ import annotations

from context_docs import EXPLICIT, sha

from assay.context.refs import resolve_pointer


def _add(ctx, name: str, text: str = "Parse the manifest", **kw) -> dict:
    return ctx.data("todo.add", goal_id="parser", text=text, todo_id=name, **kw)["todo"]


def _wc(ctx, **args) -> tuple[dict, dict]:
    envelope = ctx.call("work.context", **args)
    return envelope["data"], envelope["data"]["work_context"]


def test_work_context_explicit_goal_is_delivered_without_reads(ctx) -> None:
    """An explicit goal's text is delivered in sources with its revision; nothing is left to read."""
    _add(ctx, "parse")
    _, wc = _wc(ctx)
    goal = wc["sources"][0]
    assert (goal["source"], goal["status"], goal["revision"]) == ("goal_state", "delivered",
                                                                  sha(EXPLICIT))
    assert "Final stop: the fixtures pass." in goal["text"]
    assert [r["id"] for r in goal["excluded_todo_regions"]] == ["agent-todo", "user-todo"]
    assert wc["required_reads"] == [] and wc["complete"] is True


def test_work_context_selected_todo_ref_points_at_exact_record(ctx) -> None:
    """A short selected todo is given by pointer to the complete record in sources."""
    _add(ctx, "parse")
    data, wc = _wc(ctx)
    assert wc["selection"] == "heartbeat" and wc["selected_todo"] is None
    target = resolve_pointer(data, wc["selected_todo_ref"]["$ref"])
    exact = ctx.data("todo.list", goal_id="parser", todo_id="parse")["todo"]
    assert target == exact


def test_work_context_long_todo_is_never_shown_shortened(ctx) -> None:
    """A long body is given by pointer to the complete record too, never as an excerpt."""
    text = "Parse the manifest\n" + "x" * 5000
    _add(ctx, "parse", text)
    data, wc = _wc(ctx)
    assert wc["selected_todo"] is None
    assert resolve_pointer(data, wc["selected_todo_ref"]["$ref"])["text"] == text


def test_work_context_prefers_own_claimed_todo(ctx) -> None:
    """The heartbeat selects the caller's claimed agent todo before the first open one."""
    _add(ctx, "first")
    _add(ctx, "second")
    ctx.data("todo.claim", todo_id="second", expect_revision=1)
    _, wc = _wc(ctx)
    assert wc["sources"][1]["id"] == "todo:second"


def test_work_context_user_obligations_in_scope(ctx) -> None:
    """Open user todos of the goal are delivered as user obligations with their revisions."""
    _add(ctx, "approve", "Approve the schema", owner_role="user")
    _, wc = _wc(ctx)
    assert [t["id"] for t in wc["user_obligations"]] == ["todo:approve"]
    source = wc["sources"][-1]
    assert source["source"] == "user_obligations" and source["revisions"] == {"todo:approve": 1}


def test_work_context_mixed_goal_requires_full_read(ctx) -> None:
    """A mixed goal is not delivered; its full read stays in required_reads, in order."""
    ctx.goal.write_text(EXPLICIT + "- [ ] stray task\n")
    _add(ctx, "parse")
    _, wc = _wc(ctx)
    goal = wc["sources"][0]
    assert goal["status"] == "pending" and "text" not in goal
    assert wc["required_reads"][0]["command"] == ["assay", "goal", "read", "--goal-id", "parser",
                                                  "--full"]
    assert wc["complete"] is True


def test_work_context_missing_goal_blocks_dependent_delivery(ctx) -> None:
    """A missing goal file fails its source, keeps its read and blocks the todo sources."""
    _add(ctx, "parse")
    ctx.goal.unlink()
    envelope = ctx.call("work.context")
    wc = envelope["data"]["work_context"]
    assert wc["complete"] is False
    assert wc["failures"] == [{"source": "goal_state", "code": "context_source_unavailable",
                               "cause": {"code": "goal_unavailable",
                                         "message": wc["failures"][0]["cause"]["message"]}}]
    assert [s["status"] for s in wc["sources"]] == ["failed", "blocked", "blocked"]
    assert [r["source"] for r in wc["required_reads"]] == ["goal_state", "selected_todo",
                                                           "user_obligations"]
    assert wc["required_reads"][1]["command"] == ["assay", "todo", "list", "--goal-id", "parser",
                                                  "--todo-id", "todo:parse"]
    assert wc["user_obligations"] == []


def test_work_context_invalid_utf8_goal_fails_closed(ctx) -> None:
    """A goal file that is not UTF-8 is a failed source with goal_invalid_utf8."""
    ctx.goal.write_bytes(b"# Goal \xff\n")
    _, wc = _wc(ctx)
    assert wc["failures"][0]["cause"]["code"] == "goal_invalid_utf8"
    assert wc["complete"] is False


def test_work_context_exact_todo_of_another_goal_is_not_found(ctx) -> None:
    """An exact --todo-id that is not in the goal is selection not_found, not a guess."""
    _, wc = _wc(ctx, goal_id="parser", todo_id="ghost")
    assert wc["selection"] == "not_found" and wc["selected_todo_ref"] is None


def test_work_context_configured_acceptance_without_provider_is_a_failure(ctx, tmp_path) -> None:
    """A configured acceptance record that cannot be read keeps its read and fails the context."""
    toml = ctx.root / "assay.toml"
    toml.write_text(toml.read_text().replace(
        'path = "goals/parser.md"', 'path = "goals/parser.md"\nacceptance = "knowledge:parser"'))
    _, wc = _wc(ctx)
    acceptance = next(s for s in wc["sources"] if s["source"] == "goal_acceptance")
    assert acceptance["status"] == "failed"
    assert acceptance["read"]["command"] == ["assay", "work", "check", "--", "knowledge:parser"]
    assert wc["complete"] is False


def test_work_context_delivers_acceptance_from_the_intent_check(ctx) -> None:
    """A goal's configured intent record is read through the readiness check and delivered."""
    from assay.ledger import Write

    toml = ctx.root / "assay.toml"
    toml.write_text(toml.read_text().replace(
        'path = "goals/parser.md"', 'path = "goals/parser.md"\nacceptance = "knowledge:parser"'))
    intent = {"version": 1, "brief": "Ship the parser", "user_reference": "ticket 7",
              "requirements": [{"id": "R1", "text": "Parse manifests",
                                "acceptance": "Run the parser tests"}],
              "boundaries": [], "non_goals": []}
    store = ctx.store()
    try:
        store.put(Write(id="knowledge:parser", data={"intent": intent}, scope="project:demo"))
    finally:
        store.close()
    data, wc = _wc(ctx)
    source = next(s for s in wc["sources"] if s["source"] == "goal_acceptance")
    assert (source["status"], source["revision"]) == ("delivered", 1)
    assert resolve_pointer(data, wc["acceptance"]["$ref"])["ready_to_review"] is False
    assert wc["complete"] is True
