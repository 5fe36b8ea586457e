"""Properties of goal reading and region regeneration over generated documents."""

from __future__ import annotations

import hashlib

from context_records import record, todo_data
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.context.goal import read_goal_bytes, regenerate
from assay.context.todo import render_region

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


@settings(max_examples=200, deadline=None)
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


@settings(max_examples=200, deadline=None)
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
