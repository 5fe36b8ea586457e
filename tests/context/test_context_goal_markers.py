"""Malformed goal markers fail closed, each with its own code and line."""

from __future__ import annotations

import pytest

from assay.context.goal import read_goal_bytes
from assay.errors import AssayError

B = "<!-- assay:todo-region role=agent id=a begin -->\n"
E = "<!-- assay:todo-region id=a end -->\n"
LA = "## Agent Todo\n"
LB = "<!-- loopx:todo-region-v0 role=agent begin -->\n"
LE = "<!-- loopx:todo-region-v0 role=agent end -->\n"

CASES = [
    # (case name, document, code, line)
    ("begin never closed", "# G\n" + B + "- [ ] t\n", "goal_marker_unbalanced", 2),
    ("end without begin", "# G\n" + E, "goal_marker_unbalanced", 2),
    ("begin inside a region", B + "<!-- assay:todo-region role=user id=b begin -->\n" + E,
     "goal_marker_nested", 2),
    ("end names another region", B + "<!-- assay:todo-region id=b end -->\n",
     "goal_marker_mismatched", 2),
    ("end names another role", B + "<!-- assay:todo-region role=user id=a end -->\n",
     "goal_marker_mismatched", 2),
    ("end in the other syntax", B + "<!-- loopx:todo-region-v0 role=agent end -->\n",
     "goal_marker_mismatched", 2),
    ("loopx end with another role", LA + LB + "<!-- loopx:todo-region-v0 role=user end -->\n",
     "goal_marker_mismatched", 3),
    ("loopx unknown role", LA + "<!-- loopx:todo-region-v0 role=bot begin -->\n",
     "goal_marker_malformed", 2),
    ("duplicate region id", B + E + "text\n" + B + E, "goal_region_duplicate_id", 4),
    ("no begin or end word", "<!-- assay:todo-region role=agent id=a -->\n",
     "goal_marker_malformed", 1),
    ("unknown token", "<!-- assay:todo-region role=agent id=a kind=x begin -->\n",
     "goal_marker_malformed", 1),
    ("repeated attribute", "<!-- assay:todo-region role=agent role=user id=a begin -->\n",
     "goal_marker_malformed", 1),
    ("begin without id", "<!-- assay:todo-region role=agent begin -->\n",
     "goal_marker_malformed", 1),
    ("begin without role", "<!-- assay:todo-region id=a begin -->\n", "goal_marker_malformed", 1),
    ("id with capitals", "<!-- assay:todo-region role=agent id=Agent begin -->\n",
     "goal_marker_malformed", 1),
    ("text after the marker", "<!-- assay:todo-region role=agent id=a begin --> more\n",
     "goal_marker_malformed", 1),
    ("marker never closed on its line", "<!-- assay:todo-region role=agent id=a begin\n-->\n",
     "goal_marker_malformed", 1),
    ("loopx marker with an id", "<!-- loopx:todo-region-v0 role=agent id=a begin -->\n",
     "goal_marker_malformed", 1),
    ("loopx end without begin", "# G\n" + LE, "goal_marker_unbalanced", 2),
    ("loopx begin not under its heading", "# G\n\n" + LB + LE, "goal_marker_malformed", 3),
    ("loopx begin never closed", LA + LB + "- [ ] t\n", "goal_marker_unbalanced", 2),
    ("loopx begin inside a loopx region", LA + LB + LB, "goal_marker_nested", 3),
    ("prose inside a loopx region", LA + LB + "some prose\n" + LE,
     "goal_region_foreign_content", 3),
    ("loopx marker inside an assay region", B + LB + E, "goal_marker_nested", 2),
    ("malformed end inside a region", B + "<!-- assay:todo-region id=a stop -->\n",
     "goal_marker_malformed", 2),
    ("heading inside a region", B + "## Notes\n" + E, "goal_region_foreign_content", 2),
    ("paragraph inside a region", B + "- [ ] t\nsome prose\n" + E,
     "goal_region_foreign_content", 3),
    ("indented line before any task", B + "    detail\n" + E, "goal_region_foreign_content", 2),
    ("comment spanning lines inside a region", B + "<!-- a\nb -->\n" + E,
     "goal_region_foreign_content", 2),
    ("fence inside a region", B + "```\n" + E, "goal_region_foreign_content", 2),
    ("frontmatter never closed", "---\ntitle: x\n", "goal_frontmatter_unterminated", 1),
]


@pytest.mark.parametrize(("document", "code", "line"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_goal_marker_malformed_fails_closed(document: str, code: str, line: int) -> None:
    """Each malformed marker layout raises its specific code at the right line."""
    with pytest.raises(AssayError) as info:
        read_goal_bytes(document.encode(), goal_id="g", path="goal.md")
    assert (info.value.code, info.value.details["line"]) == (code, line)
    assert info.value.details["path"] == "goal.md"
    assert info.value.pointer is None


def test_goal_marker_allowed_region_lines_are_accepted() -> None:
    """Blank lines, tasks, indented task details and one-line comments are region content."""
    doc = (B + "\n- [ ] one <!-- todo:one -->\n  detail\n\t tab detail\n* [x] two\n"
           "1. [X] three\n<!-- projection: 3 items -->\n" + E)
    read = read_goal_bytes(doc.encode(), goal_id="g", path="goal.md")
    assert read.ownership == "explicit" and read.text == ""
