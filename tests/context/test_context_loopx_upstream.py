"""loopx's own goal-file scenarios, read by assay (each names the loopx test it comes from).

The scenarios come from loopx's tests of its todo region reader and writer
(loopx-project/loopx). Where loopx's writer is needed, the file is either a
real loopx-written file from ``tests/golden/context/loopx/written`` or
produced in the test by loopx's bootstrap writer, which is pure Python.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from loopx_documents import assay_view, loopx_marker, loopx_view

from assay.context.goal import read_goal_bytes, regenerate
from assay.errors import AssayError

WRITTEN = Path(__file__).parents[1] / "golden" / "context" / "loopx" / "written"
EMPTY_SECTIONS = (WRITTEN / "empty_sections.md").read_text(encoding="utf-8")


def _read(text: str):
    return read_goal_bytes(text.encode("utf-8"), goal_id="g", path="goal.md")


def _texts(text: str) -> dict[str, list[str]]:
    read = _read(text)
    role_of = {r.id: r.role for r in read.regions}
    out: dict[str, list[str]] = {"agent": [], "user": [], "archive": []}
    for todo in read.todos:
        out[role_of[todo.region_id]].append(todo.text)
    return out


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("tail", [
    "# Next Action\n\n- [ ] Narrative checkbox, not a Todo.\n",
    "Next Action\n===========\n\n- [ ] Narrative checkbox, not a Todo.\n",
    "  ## Next Action\n\n- [ ] Narrative checkbox, not a Todo.\n",
    "This paragraph is not generated Todo data.\n\n- [ ] Narrative checkbox.\n",
])
def test_loopx_upstream_suffix_after_projected_sections_is_narrative(tail: str,
                                                                     newline: str) -> None:
    """loopx test_legacy_adoption_preserves_non_generated_suffix: text after the sections stays narrative."""
    text = (EMPTY_SECTIONS + tail).replace("\n", newline)
    read = _read(text)
    assert read.ownership == "explicit"
    assert read.text is not None and read.text.endswith(tail.replace("\n", newline))
    assert read.todos == ()
    assert assay_view(text) == loopx_view(text)


@pytest.mark.parametrize("example", [
    "```markdown\n## Agent Todo\n- [ ] Example only.\n```\n",
    "~~~~markdown\n## Agent Todo\n- [ ] Example only.\n~~~~\n",
    "<!-- example\n## Agent Todo\n- [ ] Example only.\n-->\n",
])
def test_loopx_upstream_code_and_comment_examples_are_not_todos(example: str) -> None:
    """loopx test_code_and_comment_examples_are_not_adopted: examples in code or comments hold no todo."""
    text = example + "\n" + EMPTY_SECTIONS
    read = _read(text)
    assert read.todos == () and read.text is not None and read.text.startswith(example)
    assert assay_view(text) == loopx_view(text)


def test_loopx_upstream_unclosed_code_example_supplies_no_region() -> None:
    """loopx test_unclosed_code_example_cannot_supply_todo_regions: inside an open fence nothing is a region."""
    text = "```markdown\n## User Todo / Owner Review Reading Queue\n\n## Agent Todo\n\n"
    read = _read(text)
    assert (read.regions, read.todos, read.ownership) == ((), (), "explicit")
    assert assay_view(text) == loopx_view(text)


@pytest.mark.parametrize("replacement", [
    "",
    loopx_marker("user", "end"),
    loopx_marker("agent", "begin"),
    "<!-- loopx:todo-region-v0 role=agent finish -->",
    "Human narrative unexpectedly placed inside.\n" + loopx_marker("agent", "end"),
])
def test_loopx_upstream_malformed_region_is_refused_not_read_as_legacy(
        replacement: str) -> None:
    """loopx test_malformed_region_is_never_reinterpreted_as_legacy: a broken region fails the read."""
    text = EMPTY_SECTIONS.replace(loopx_marker("agent", "end"), replacement)
    with pytest.raises(AssayError) as info:
        _read(text)
    assert info.value.code.startswith("goal_")
    assert loopx_view(text) == {"verdict": "refused"}


def test_loopx_upstream_narrative_after_the_end_marker_is_not_a_todo() -> None:
    """loopx test_section_editor_and_reader_share_generated_bounds (reader half): the end marker bounds the region."""
    text = EMPTY_SECTIONS + "Narrative outside the paired marker.\n- [ ] Not an active Todo.\n"
    read = _read(text)
    assert read.todos == () and read.ownership == "explicit"
    assert [r.role for r in read.regions] == ["user", "agent"]
    assert read.text is not None and read.text.endswith("- [ ] Not an active Todo.\n")


def test_loopx_upstream_mixed_boundary_does_not_skip_the_next_heading() -> None:
    """loopx test_mixed_legacy_boundary_does_not_skip_next_heading: an unmarked list ends at the next heading."""
    text = "\n".join(["## User Todo", "- [ ] User task.", "## Agent Todo",
                      loopx_marker("agent", "begin"), "- [ ] Agent task.",
                      loopx_marker("agent", "end")])
    assert _texts(text) == {"user": ["User task."], "agent": ["Agent task."], "archive": []}
    assert _read(text).ownership == "mixed"


def test_loopx_upstream_heading_roles_follow_the_region_writer() -> None:
    """loopx test_state_counts_classify_headings_exactly_as_the_region_writer: archive, Codex and Ownership headings."""
    lines = ["# Goal state", "", "## Agent Todo", "", "- [ ] [P1] implement the reader metric",
             "- [ ] [P2] classify the candidate groups", "", "## Agent Todo Archive", "",
             "- [ ] [P1] archived one", "- [ ] [P2] archived two", "", "## Codex Todo", "",
             "- [ ] [P1] a heading the region writer creates", "", "## Ownership", "",
             "- [ ] prose about who owns what, not a Todo", ""]
    text = "\n".join(lines)
    assert _texts(text) == {
        "agent": ["[P1] implement the reader metric", "[P2] classify the candidate groups",
                  "[P1] a heading the region writer creates"],
        "user": [],
        "archive": ["[P1] archived one", "[P2] archived two"],
    }
    assert assay_view(text) == loopx_view(text)


@pytest.mark.parametrize("source", [
    b"\xffgenerated document",
    b"## Agent Todo\n<!-- loopx:todo-region-v0 role=agent begin -->\nUnstructured content\n",
])
def test_loopx_upstream_damaged_document_is_never_rewritten(source: bytes) -> None:
    """loopx test_rebuild_never_discards_an_existing_damaged_document: a damaged goal is refused, not rewritten."""
    with pytest.raises(AssayError) as info:
        read = read_goal_bytes(source, goal_id="g", path="goal.md")
        regenerate(read, source, lambda region: ["- [ ] replacement"])
    assert info.value.code in ("goal_invalid_utf8", "goal_region_foreign_content")


_OBJECTIVES = [
    "Implement and validate the task.",
    "```text Implement and validate the task. ```",
    "~~~text Implement and validate the task. ~~~",
    "<!-- Implement and validate the task.",
    "Review ## Objective and ## Next Action examples.",
    *[f"Example{sep}---{sep}## Agent Todo{sep}- [ ] Example only.{sep}## Objective"
      for sep in ("\x85", "\u2028", "\u2029")],
    "Compare a < b && c > d without decoding &amp;.",
    r'Inspect C:\tools\new and "quoted text".',
    "Compare --- delimiters in prose.",
    "Describe the format:\n\n## Next Action\n\n- Example only.\n\nContinue the task.",
    ("Describe this example:\n\n## Agent Todo\n\n- [ ] Example only.\n"
     "  <!-- loopx:todo todo_id=todo_example task_class=advancement_task -->"),
    "```markdown\n## Agent Todo\n" + loopx_marker("agent", "begin") + "\n- [ ] Example only.\n"
    + loopx_marker("agent", "end") + "\n```",
]


@pytest.mark.parametrize("objective", _OBJECTIVES)
def test_loopx_upstream_bootstrap_objective_creates_no_todo(tmp_path: Path,
                                                            objective: str) -> None:
    """loopx test_bootstrap_keeps_objective_separate_from_todo_sources: a goal loopx's bootstrap wrote has no todo from its objective."""
    from loopx.bootstrap import render_state_markdown

    text = render_state_markdown(project=tmp_path, goal_id="objective-projection",
                                 adapter_kind="read_only_project_map_v0", objective=objective,
                                 updated_at="2026-08-21T00:00:00+08:00", goal_doc=None,
                                 execution_profile=None)
    read = _read(text)
    assert read.todos == ()
    assert [(r.role, r.marked) for r in read.regions] == [("user", False), ("agent", False)]
    assert assay_view(text) == loopx_view(text)
