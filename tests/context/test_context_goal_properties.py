"""Properties of goal reading and region regeneration over generated documents."""

from __future__ import annotations

import hashlib
import re

from context_records import record, todo_data
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.context.goal import read_goal_bytes, regenerate
from assay.context.todo import render_region
from assay_testing import examples

_chars = st.characters(blacklist_categories=("Cs",))
_prose = st.text(_chars, max_size=40).map(lambda s: " ".join((s + "x").splitlines())[:-1])
_narrative_line = st.one_of(
    _prose.map(lambda s: "text " + s),
    st.just(""),
    st.just("## Notes"),
    st.just("<!-- a one-line comment -->"),
    st.just("- a plain bullet"),
)


@st.composite
def _document(draw: st.DrawFn) -> tuple[str, list[tuple[int, int]]]:
    """A document of narrative blocks and regions, with each region's expected line interval."""
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    lines: list[str] = []
    intervals: list[tuple[int, int]] = []
    for index in range(draw(st.integers(0, 5))):
        lines += draw(st.lists(_narrative_line, max_size=4))
        if draw(st.booleans()):
            lines += ["```", "<!-- assay:todo-region role=agent id=in-fence begin -->", "```"]
        role = draw(st.sampled_from(["agent", "user", "archive"]))
        body = draw(st.lists(st.sampled_from(["", "- [ ] task", "- [x] done", "  detail",
                                              "<!-- todo:x -->"]), max_size=3))
        seen_task = False
        kept = []
        for line in body:  # a detail line belongs to a task before it
            seen_task = seen_task or line.startswith("- [")
            if line != "  detail" or seen_task:
                kept.append(line)
        body = kept
        start = len(lines) + 1
        lines += [f"<!-- assay:todo-region role={role} id=r{index} begin -->", *body,
                  f"<!-- assay:todo-region id=r{index} end -->"]
        intervals.append((start, len(lines)))
    lines += draw(st.lists(_narrative_line, max_size=3))
    text = "".join(line + newline for line in lines)
    if text and draw(st.booleans()):
        text = text[: -len(newline)]  # no newline at the end of the file
    return text, intervals


@settings(max_examples=examples(200), deadline=None)
@given(_document())
def test_goal_text_plus_regions_is_the_whole_file(doc: tuple[str, list[tuple[int, int]]]) -> None:
    """The verbatim text and the excluded regions' lines partition the file exactly."""
    text, intervals = doc
    data = text.encode("utf-8")
    read = read_goal_bytes(data, goal_id="g", path="goal.md")
    assert read.ownership == "explicit"
    assert [(r.start_line, r.end_line) for r in read.regions] == intervals
    lines = [line.encode() for line in text.splitlines(keepends=True)]
    inside = {n for a, b in intervals for n in range(a, b + 1)}
    assert read.text is not None
    assert read.text.encode() == b"".join(l for n, l in enumerate(lines, 1) if n not in inside)
    for region, (a, b) in zip(read.regions, intervals, strict=True):
        assert region.sha256 == hashlib.sha256(b"".join(lines[a - 1:b])).hexdigest()
    assert read.revision == hashlib.sha256(data).hexdigest()


_todo_text = st.text(_chars, min_size=1, max_size=120).filter(lambda s: s.strip())


@settings(max_examples=examples(200), deadline=None)
@given(texts=st.lists(_todo_text, min_size=1, max_size=5),
       newline=st.sampled_from(["\n", "\r\n"]))
def test_goal_regenerated_regions_read_back_with_text_untouched(texts: list[str],
                                                                newline: str) -> None:
    """Any todo text, even one spelling a marker, renders into a region that reads back."""
    doc = ("# Goal" + newline + "<!-- assay:todo-region role=agent id=a begin -->" + newline +
           "<!-- assay:todo-region id=a end -->" + newline + "after" + newline)
    records = [record(f"todo:t{i}", todo_data(t, created_at=f"2026-11-01T10:00:0{i}.000000Z"))
               for i, t in enumerate(texts)]
    data = doc.encode()
    before = read_goal_bytes(data, goal_id="g", path="goal.md")
    new = regenerate(before, data, lambda region: render_region(region.role, records))
    after = read_goal_bytes(new, goal_id="g", path="goal.md")
    assert after.text == before.text
    assert [r.id for r in after.regions] == ["a"]


_GENERATED_LINE = re.compile(r"<!-- assay:generated sha256=[0-9a-f]{64} lines=(\d+) -->")
_NARRATIVE = ["", "# Goal", "Some narrative, kept.", "- [ ] a narrative checkbox",
              "## Notes", "```", "x = 1", "```", "<!-- a note -->", "  indented text"]


def _without_generated(text: str) -> list[str]:
    """The file's lines (with endings) minus every assay digest line and the lines it covers."""
    lines = text.splitlines(keepends=True)
    out, skip = [], 0
    for line in lines:
        if skip:
            skip -= 1
            continue
        found = _GENERATED_LINE.fullmatch(line.rstrip("\r\n"))
        if found:
            skip = int(found.group(1))
            continue
        out.append(line)
    return out


@st.composite
def _owned_document(draw: st.DrawFn) -> tuple[str, bool]:
    """A goal with narrative, loopx sections and assay regions in every state; and whether any
    assay region holds lines assay did not generate."""
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    parts: list[str] = []
    foreign = False
    for index in range(draw(st.integers(0, 4))):
        parts += draw(st.lists(st.sampled_from(_NARRATIVE), max_size=3))
        if parts.count("```") % 2:
            parts.append("```")
        kind = draw(st.sampled_from(["empty", "blank", "generated", "foreign", "tampered",
                                     "loopx"]))
        if kind == "loopx":
            parts += ["## Agent Todo", "<!-- loopx:todo-region-v0 role=agent begin -->",
                      "- [ ] loopx work", "  <!-- loopx:todo todo_id=todo_work status=open -->",
                      "<!-- loopx:todo-region-v0 role=agent end -->"]
            continue
        role = draw(st.sampled_from(["agent", "user", "archive"]))
        body: list[str] = []
        if kind == "blank":
            body = [""] * draw(st.integers(1, 3))
        elif kind in ("generated", "tampered"):
            lines = ["- [ ] one <!-- todo:one status=open -->", *draw(st.lists(
                st.sampled_from(["    detail", "", "- [x] two <!-- todo:two status=completed -->"]),
                max_size=3))]
            digest = hashlib.sha256("\n".join(lines).encode()).hexdigest()
            if kind == "tampered":
                lines = [lines[0].replace("one", "one, edited", 1), *lines[1:]]
            body = [f"<!-- assay:generated sha256={digest} lines={len(lines)} -->", *lines]
            body += [""] * draw(st.integers(0, 2))
        elif kind == "foreign":
            body = ["- [ ] written by a person"]
        foreign = foreign or kind in ("foreign", "tampered")
        parts += [f"<!-- assay:todo-region role={role} id=r{index} begin -->", *body,
                  f"<!-- assay:todo-region id=r{index} end -->"]
    parts += draw(st.lists(st.sampled_from(_NARRATIVE[:5]), max_size=2))
    return "".join(p + newline for p in parts), foreign


@settings(max_examples=examples(300), deadline=None)
@given(doc=_owned_document(), texts=st.lists(_todo_text, max_size=3),
       principal=st.text(_chars, min_size=1, max_size=30))
def test_goal_write_then_read_preserves_every_line_not_generated(
        doc: tuple[str, bool], texts: list[str], principal: str) -> None:
    """Writing keeps every line outside assay's last generated blocks; a region with foreign
    lines makes the write a conflict instead."""
    from assay.errors import ConflictError

    text, foreign = doc
    claim = {"principal": principal, "claimed_at": "2026-11-01T10:05:00.000000Z",
             "lease_ms": 1, "lease_expires_at": "2026-11-01T10:35:00.000000Z"}
    records = [record(f"todo:t{i}", todo_data(t, status="claimed", claim=claim,
                                              created_at=f"2026-11-01T10:00:0{i}.000000Z"))
               for i, t in enumerate(texts)]
    data = text.encode()
    before = read_goal_bytes(data, goal_id="g", path="goal.md")
    try:
        new = regenerate(before, data, lambda region: render_region(region.role, records))
    except ConflictError as err:
        assert foreign and err.code == "goal_region_foreign_edit"
        return
    assert not foreign or not [r for r in before.regions if r.syntax == "assay"]
    after = read_goal_bytes(new, goal_id="g", path="goal.md")
    assert _without_generated(new.decode()) == _without_generated(text)
    assert (after.text, after.ownership) == (before.text, before.ownership)
    assert [(r.id, r.role) for r in after.regions] == [(r.id, r.role) for r in before.regions]
    assert [t.to_dict("g", "p", "r")["text"] for t in after.todos] == \
        [t.to_dict("g", "p", "r")["text"] for t in before.todos]
