"""Property: no read ever returns requirement, todo or acceptance text shortened.

For generated todo texts, requirement texts with their acceptance procedures
and loop criteria, and generated bounds, every read operation in the registry
is run (following every recovering read of a bounded answer). Wherever an
answer holds an item with one of those ids, its text is the stored text in
full; and every string in an answer that begins as one of those texts begins
(each starts with its own marker, ``⟦T3⟧``) is that text whole. A bound drops
whole items; it never clips one.
"""

from __future__ import annotations

import json
import string
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay.errors import AssayError
from assay.ledger import open_store
from assay.ledger.store import Write
from assay.ops import operations
from assay_testing import examples
from paging_testing import runner

# Thin list items carry a todo's first line as its title (content_truncated
# says there is more): a title, by definition not the text.
EXEMPT_KEYS = {"title"}
# Texts from one character to several kilobytes: a short piece, repeated. No
# NUL: no argument carries one.
_TEXT = st.tuples(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                          min_size=1, max_size=60),
                  st.integers(1, 40)).map(lambda p: p[0] * p[1])
_WORDS = st.lists(st.text(string.ascii_letters + string.digits, min_size=1, max_size=10),
                  min_size=1, max_size=30).map(" ".join)
_GOAL = ("# Goal: ship the parser\n\nKeep every requirement.\n\n"
         "## User Todo\n<!-- loopx:todo-region-v0 role=user begin -->\n{items}"
         "<!-- loopx:todo-region-v0 role=user end -->\n\nFinal stop.\n")


def _reads(bound: dict[str, int], envelope: Any, intent: dict[str, Any]) -> dict[str, list[Any]]:
    """Every read operation, with the arguments to run it on the generated project."""
    paged = {"limit": bound["limit"], "max_bytes": bound["max_bytes"]}
    return {
        "canonical": [{"text": json.dumps({"intent": intent})}],
        "describe": [{}],
        "get": [{"id": "knowledge:export"},
                {"id": "knowledge:export", "history": True, **paged}],
        "find": [{"kind": "todo", "limit": bound["limit"]}, {"query": "export"},
                 {"kind": "knowledge", "limit": 1}],
        "ledger.info": [{}],
        "ledger.verify": [{}],
        # Roles exist on PostgreSQL only, and their answer quotes no record text.
        "ledger.roles": [],
        "work.check": [{"id": "knowledge:export"}],
        "work.status": [{"limit": bound["limit"]}, {"limit": 1}],
        "work.history": [{"id": "knowledge:export", "limit": bound["limit"]},
                         {"id": "knowledge:export", "limit": 1}],
        "work.attention": [{}],
        "work.prepare-capture": [{"id": "knowledge:draft", "intent": intent}],
        "work.resume": [{"id": "knowledge:export"}],
        "decision.show": [{"key": "route"}],
        "evidence.list": [{"limit": bound["limit"]}],
        "evidence.show": [{"id": "export", "tail_bytes": 256}],
        "evidence.observe": [{}],
        "goal.read": [{"goal_id": "parser", "max_bytes": bound["max_bytes"]},
                      {"goal_id": "parser", "full": True, "max_bytes": bound["max_bytes"]}],
        "todo.list": [{"goal_id": "parser", **paged},
                      {"goal_id": "parser", "thin": True, **paged},
                      {"goal_id": "parser", "all": True},
                      {"goal_id": "parser", "todo_id": "todo:t00000"}],
        "work.context": [{"goal_id": "parser", "max_bytes": bound["max_bytes"]}],
        "note.list": [{"limit": bound["limit"]}, {"limit": 1}],
        "memory.search": [{"query": ["export"]}, {"query": ["export"], "limit": 1}],
        "memory.list": [{}, {"limit": 1}],
        "publish.check": [{"envelope": envelope}],
        "pending.list": [{}, {"limit": 1}],
        "loop.status": [{"loop": "l"}],
        "loop.questions": [{"loop": "l"}],
        "loop.schema": [{}],
        "loop.explain": [{"loop": "l"}],
        "loop.replay": [{"loop": "l", "all": True, "limit": bound["limit"]}],
        "loop.audit": [{"loop": "l", "limit": bound["limit"]}],
        # A verification answers ids, digests and a verdict; it carries no item text.
        "verify-attestation": [],
        "hook.doctor": [{"harness": "claude-code", "session": "s"}],
    }


def _walk(value: Any, known: dict[str, dict[str, str]], texts: set[str]) -> None:
    if isinstance(value, dict):
        item = value.get("id")
        if isinstance(item, str) and item in known:
            for key, full in known[item].items():
                if isinstance(value.get(key), str):
                    assert value[key] == full, (item, key)
        for key, inner in value.items():
            if key not in EXEMPT_KEYS:
                _walk(inner, known, texts)
    elif isinstance(value, list):
        for inner in value:
            _walk(inner, known, texts)
    elif isinstance(value, str) and value.startswith("⟦"):
        assert value in texts, value[:80]


def _follow(run: Any, data: Any, pages: list[Any]) -> None:
    pages.append(data)
    if isinstance(data, dict) and isinstance(data.get("read_more"), list):
        for read in data["read_more"]:
            assert len(pages) < 200, [(page.get("read_more") if isinstance(page, dict) else None)
                                      for page in pages[-3:]]
            _follow(run, run(read["tool"], read["arguments"]), pages)


def _project(root: Path, todos: list[tuple[str, str]], requirements: list[tuple[str, str]],
             goal_items: list[str], criteria: list[str]) -> tuple[Any, dict[str, Any]]:
    (root / "goals").mkdir(parents=True)
    (root / ".assay").mkdir()
    (root / "assay.toml").write_text(
        '[project]\nname = "demo"\n\n[goals.parser]\npath = "goals/parser.md"\n'
        'acceptance = "knowledge:export"\n', encoding="utf-8")
    items = "".join(f"- [ ] {text}\n  <!-- loopx:todo todo_id=file_{i} status=open -->\n"
                    for i, text in enumerate(goal_items))
    (root / "goals" / "parser.md").write_text(_GOAL.format(items=items), encoding="utf-8")
    intent = {"version": 1, "brief": "Ship the export", "user_reference": "issue 7",
              "requirements": [{"id": f"R{i}", "text": text, "acceptance": acceptance}
                               for i, (text, acceptance) in enumerate(requirements)],
              "boundaries": [], "non_goals": []}
    source = {"kind": "goal", "goal_id": "parser", "path": "goals/parser.md", "revision": "0" * 64}
    # Three versions of the intent and two more intents holding the same
    # requirements: the work views and find page through them.
    earlier = [Write(id="knowledge:export", data={"intent": {**intent, "brief": f"Ship {n}"}},
                     scope="project:demo") for n in (1, 2)]
    writes = [Write(id="knowledge:export", data={"intent": intent}, scope="project:demo"),
              Write(id="evidence:export", data={"observation": {"stdout": {"tail": "ok"}}},
                    scope="project:demo")]
    writes += [Write(id=f"knowledge:export{n}", data={"intent": intent}, scope="project:demo")
               for n in (2, 3)]
    for i, (text, role) in enumerate(todos):
        stamp = f"2026-11-01T10:00:00.{i:06d}Z"
        writes.append(Write(id=f"todo:t{i:05d}", scope="project:demo", data={
            "schema": "assay.todo/v1", "goal_id": "parser", "text": text, "owner_role": role,
            "status": "open", "claim": None, "blocked_reason": None, "completion": None,
            "relations": [], "source": source, "created_at": stamp, "created_by": "agent-1",
            "updated_at": stamp}))
    store = open_store(str(root / ".assay" / "ledger.db"))
    try:
        for write in earlier:
            store.put(write)
        store.put_many(writes)
    finally:
        store.close()
    run = runner(root, None)
    # Saved context quoting the texts whole: the lists page through it.
    for text in [t for t, _ in todos] + [r for r, _ in requirements]:
        run("note.add", {"text": text})
        run("memory.add", {"text": f"{text} export"})
        run("pending.ask", {"text": text})
    view = run("loop.start", {"task": "Ship the export", "criterion": criteria, "loop": "l"})
    run("loop.next", {"handle": json.dumps(view["submissionHandle"]), "evaluation": {
        "outcome": "partial", "output_summary": "first round", "constraint_violations": [],
        "should_continue": True}})
    return run, intent


@settings(max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(todos=st.lists(st.tuples(_TEXT, st.sampled_from(["agent", "user"])), min_size=1,
                      max_size=12),
       requirements=st.lists(st.tuples(_TEXT, _TEXT), min_size=1, max_size=4),
       goal_items=st.lists(_WORDS, max_size=8),
       criteria=st.lists(_TEXT.map(lambda t: t[:400]), min_size=1, max_size=3),
       limit=st.integers(2, 6), max_bytes=st.integers(4096, 16384))
def test_bounds_no_read_shortens_requirement_todo_or_acceptance_text(
        todos: list[tuple[str, str]], requirements: list[tuple[str, str]], goal_items: list[str],
        criteria: list[str], limit: int, max_bytes: int) -> None:
    """Every read, at generated bounds, returns each item's text whole or not at all."""
    todos = [(f"⟦T{i}⟧ {text}", role) for i, (text, role) in enumerate(todos)]
    requirements = [(f"⟦R{i}⟧ {text}", f"⟦A{i}⟧ {acceptance}")
                    for i, (text, acceptance) in enumerate(requirements)]
    goal_items = [f"⟦F{i}⟧ {text}" for i, text in enumerate(goal_items)]
    # The loop keeps a criterion stripped of surrounding white space.
    criteria = [f"⟦C{i}⟧ {text}".strip() for i, text in enumerate(criteria)]
    with tempfile.TemporaryDirectory(prefix="assay-bounds-") as tmp:
        run, intent = _project(Path(tmp) / "p", todos, requirements, goal_items, criteria)
        known = {f"todo:t{i:05d}": {"text": text} for i, (text, _) in enumerate(todos)}
        known.update({f"R{i}": {"text": text, "acceptance": acceptance}
                      for i, (text, acceptance) in enumerate(requirements)})
        known.update({f"todo:file_{i}": {"text": text} for i, text in enumerate(goal_items)})
        texts = {t for item in known.values() for t in item.values()} | set(criteria)
        # Memory entries quote todo and requirement texts whole, then a search word.
        texts |= {f"{t} export" for t, _ in todos} | {f"{r} export" for r, _ in requirements}
        envelope = run("work.check", {"id": "knowledge:export"})["envelope"]
        reads = _reads({"limit": limit, "max_bytes": max_bytes}, envelope, intent)
        assert set(reads) == {op.name for op in operations() if not op.writes}
        for name, calls in reads.items():
            for arguments in calls:
                pages: list[Any] = []
                try:
                    _follow(run, run(name, arguments), pages)
                except AssayError as err:  # a refusal returns no text at all
                    assert err.code in {"resource_limit"}, (name, err.code, err.message)
                for page in pages:
                    _walk(page, known, texts)
