"""The loopx 2.1.1 goal-file grammar: an adapter that reads ``loopx:`` regions as loopx does.

Goal files written by loopx carry todo sections under H2 headings, paired
with ``<!-- loopx:todo-region-v0 role=ROLE begin|end -->`` markers. This
module reads that format exactly as loopx 2.1.1's own reader does, case by
case, so a file means the same to both tools:

- Lines are split like :meth:`str.splitlines` (CR, LF, CRLF, VT, FF, FS, GS,
  RS, NEL, U+2028 and U+2029 all end a line). A byte-order mark is an
  ordinary character of line 1.
- :func:`visible_lines`: frontmatter (line 1 ``---`` up to ``---`` or
  ``...``), fenced code and comments that span lines are not visible.
- :func:`find_regions`: a todo heading is exactly ``## `` plus one of the
  titles in :data:`STRICT_HEADINGS` (case-insensitive, outer whitespace
  ignored). Its region starts at the heading; it is *marked* when the next
  line is exactly the begin marker, and then runs to the exact end marker
  and may hold only generated lines (blank, task, metadata, projection
  lines). Unmarked, it runs while lines look generated. Any other visible
  line mentioning the marker prefix fails the whole read.
- :func:`source_regions`: when no region is marked, loopx falls back to
  its legacy reading, where any ``## `` heading *containing* a todo title
  starts a region that runs to the next ``## `` heading.
- :func:`decode_todos`: the todo items inside a region (task line, then
  indented metadata comments and continuation text).

The one place this adapter does not reproduce loopx value by value is the
validation of a few metadata fields whose loopx normalisers need its
TypeScript runtime or its repository and decision-scope models (see
:data:`_APPROXIMATED`): a token of those keys counts as present when its
decoded value is non-empty. ``docs/context.md`` lists them.

Pure functions over a :class:`Lines` view of the text. Cost: the text is
split once, and only lines that can matter (those holding a comment, fence,
heading, marker or checkbox) are visited one by one; everything between them
is handled in slices. Imports nothing of assay.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any, overload
from urllib.parse import unquote

__all__ = [
    "MARKER_PREFIX",
    "PROJECTION_PREFIX",
    "STRICT_HEADINGS",
    "GrammarError",
    "Lines",
    "LoopxRegion",
    "LoopxTodo",
    "Visible",
    "decode_todos",
    "find_regions",
    "marker",
    "metadata",
    "source_regions",
    "visible_lines",
]

MARKER_PREFIX = "<!-- loopx:todo-region-v0 "
PROJECTION_PREFIX = "<!-- loopx:todo-section-projection-v0 "
STRICT_HEADINGS = {
    "user todo": "user",
    "user todo / owner review reading queue": "user",
    "owner review reading queue": "user",
    "owner reading queue": "user",
    "agent todo": "agent",
    "codex todo": "agent",
    "project agent todo": "agent",
    "completed work archive": "archive",
}
# Legacy (unmarked files only): a heading containing one of these words.
_LEGACY_ARCHIVE = ("todo archive", "work archive", "completed archive", "completed work",
                   "完成归档", "待办归档")
_LEGACY_USER = ("user todo", "owner review reading queue", "owner reading queue")
_LEGACY_AGENT = ("agent todo", "codex todo", "project agent todo")

_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,}).*")
_TASK = re.compile(r"\s*[-*]\s+\[([ xX-])\]\s+(.+?)\s*")
_METADATA = re.compile(r"\s*<!--\s*loopx:(?:todo\s+)?(?P<body>.*?)\s*-->\s*")
_TOKEN = re.compile(r"(?<!\S)(?P<key>[a-z_][a-z0-9_]*)=(?P<value>[^\s<>]+)")

_STATUSES = frozenset({"open", "done", "blocked", "deferred"})
_TERMINAL = frozenset({"done", "deferred"})


class GrammarError(ValueError):
    """The file breaks the loopx grammar; ``kind`` names how, ``line`` is 0-based."""

    def __init__(self, kind: str, line: int, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.line = line


@dataclass(frozen=True, slots=True)
class LoopxRegion:
    """One todo region as loopx delimits it (0-based line indexes).

    ``start`` is the heading line; ``end`` is one past the last line of the
    region (past the end marker when ``marked``); ``body_end`` is one past
    the last generated line (the end marker's index when marked).
    """

    role: str
    start: int
    end: int
    body_end: int
    heading: str
    marked: bool


@dataclass(frozen=True, slots=True)
class LoopxTodo:
    """One todo item decoded from a region (0-based lines ``start`` to ``end`` exclusive).

    ``status`` comes from a valid ``status=`` metadata token, else from the
    checkbox (``x`` done, ``-`` deferred, else open); ``done`` always from
    the checkbox, as loopx keeps them. ``text`` joins the task text and its
    indented continuation lines with single spaces. ``fields`` holds every
    metadata token loopx recognises, decoded (percent-decoding, whitespace
    collapsed), in the order met.
    """

    start: int
    end: int
    marker: str
    done: bool
    status: str
    text: str
    fields: tuple[tuple[str, str], ...]

    def field(self, key: str) -> str | None:
        """The last value loopx accepts for a metadata key, normalised as loopx keeps it."""
        found = None
        for name, value in self.fields:
            if name == key and _accepts(name, value):
                found = value
        if found is None:
            return None
        if key in _LOWERED:
            return found.strip().lower()
        if _RULES[key] is _agent:
            return found.lower().replace(" ", "-")
        return found


def marker(role: str, edge: str) -> str:
    """The exact marker line loopx writes and accepts."""
    return f"{MARKER_PREFIX}role={role} {edge} -->"


def _compact(value: str) -> str:
    return " ".join(value.strip().split())


class _Bare(Sequence[str]):
    """Lines without their endings, stripped when read (most lines never are)."""

    def __init__(self, with_ends: list[str]) -> None:
        self._with_ends = with_ends

    def __len__(self) -> int:
        return len(self._with_ends)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [_bare(line) for line in self._with_ends[index]]
        return _bare(self._with_ends[index])


def _bare(line: str) -> str:
    parts = line.splitlines()
    return parts[0] if parts else ""


class Lines:
    """A text split like :meth:`str.splitlines`, with each line's start offset.

    ``lines`` holds the lines without their endings, ``with_ends`` with them,
    ``starts[i]`` is the offset of line ``i`` (``starts[-1]`` the text length).
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.with_ends = text.splitlines(keepends=True)
        self.lines: Sequence[str] = _Bare(self.with_ends)
        self.starts = [0, *accumulate(map(len, self.with_ends))]

    def __len__(self) -> int:
        return len(self.with_ends)

    def holding(self, needles: tuple[str, ...], start: int = 0) -> list[int]:
        """Indexes (ascending, from line ``start``) of the lines holding any of ``needles``.

        A needle never holds a line break, so each find is within one line.
        """
        found: set[int] = set()
        text, starts = self.text, self.starts
        for needle in needles:
            pos = text.find(needle, starts[start])
            while pos >= 0:
                index = bisect_right(starts, pos) - 1
                found.add(index)
                pos = text.find(needle, starts[index + 1])
        return sorted(found)


class Visible:
    """Which lines are visible: a mask with ``in`` and ordered iteration."""

    def __init__(self, mask: bytearray) -> None:
        self._mask = mask

    def __contains__(self, index: object) -> bool:
        return isinstance(index, int) and 0 <= index < len(self._mask) \
            and self._mask[index] == 1

    def among(self, indexes: Sequence[int]) -> Iterator[int]:
        """The visible ones of ``indexes``, in their order."""
        return (i for i in indexes if self._mask[i] == 1)


_EVENTFUL = ("<!--", "-->", "```", "~~~")
_HEADING_OR_MARKER = ("## ", MARKER_PREFIX)


def visible_lines(doc: Lines, claim: Callable[[int], int | None] | None = None) -> Visible:
    """The lines that are neither frontmatter, fenced code nor a comment block.

    ``claim(i)`` lets a caller take over a visible line holding ``<!--``: it
    returns the index just past a block it owns (those lines are not
    visible), or None. Without claims this is exactly loopx's reading.
    """
    lines = doc.lines
    n = len(lines)
    mask = bytearray(b"\x01") * n
    pos = 0
    if n and lines[0].strip() == "---":
        close = next((k for k in range(1, n) if lines[k].strip() in ("---", "...")), None)
        if close is None:
            raise GrammarError("frontmatter", 0, "frontmatter opened on line 1 is never closed")
        pos = close + 1
        mask[0:pos] = bytes(pos)
    fence: str | None = None
    in_comment = False
    for i in doc.holding(_EVENTFUL, pos) if pos < n else ():
        if i < pos:
            continue
        if fence is not None or in_comment:
            mask[pos:i] = bytes(i - pos)  # uneventful lines inside a fence or comment
        pos = i + 1
        line = lines[i]
        if fence is not None:
            mask[i] = 0
            if re.fullmatch(" {0,3}" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}[ \t]*",
                            line):
                fence = None
            continue
        if in_comment:
            mask[i] = 0
            in_comment = "-->" not in line
            continue
        taken = claim(i) if claim is not None and "<!--" in line else None
        if taken is not None:
            mask[i:taken] = bytes(taken - i)
            pos = taken
            continue
        opening = _FENCE_OPEN.fullmatch(line)
        if opening is not None:
            fence = opening.group(1)
            mask[i] = 0
        elif line.lstrip().startswith("<!--") and "-->" not in line:
            in_comment = True
            mask[i] = 0
    if (fence is not None or in_comment) and pos < n:
        mask[pos:n] = bytes(n - pos)
    return Visible(mask)


def metadata(line: str) -> list[tuple[str, str]] | None:
    """The ``key=value`` tokens of a loopx metadata comment line, decoded; None if not one."""
    found = _METADATA.fullmatch(line)
    if found is None:
        return None
    return [(t.group("key"), _compact(unquote(t.group("value"))))
            for t in _TOKEN.finditer(found.group("body"))]


def _is_metadata_line(line: str) -> bool:
    tokens = metadata(line)
    return tokens is not None and any(_accepts(k, v) for k, v in tokens)


def _is_generated(line: str, visible: bool, marked: bool, task_open: bool) -> bool:
    if not visible:
        return False
    return (not line.strip() or _TASK.fullmatch(line) is not None or _is_metadata_line(line)
            or line.startswith(PROJECTION_PREFIX)
            or (not marked and task_open and line.startswith((" ", "\t"))))


def _marker_problem(line: str, role: str | None, index: int) -> GrammarError:
    for edge in ("begin", "end"):
        for candidate in ("user", "agent", "archive"):
            if line == marker(candidate, edge):
                if role is None:
                    kind = "orphan_end" if edge == "end" else "misplaced_begin"
                elif edge == "begin":
                    kind = "nested"
                else:
                    kind = "mismatched"
                return GrammarError(kind, index, f"a loopx {edge} marker out of place")
    return GrammarError("malformed", index, "a malformed loopx region marker")


def find_regions(doc: Lines, visible: Visible) -> list[LoopxRegion]:
    """Todo regions under exact todo headings, marked or not; raises :class:`GrammarError`."""
    regions: list[LoopxRegion] = []
    lines = doc.lines
    n = len(lines)
    i = 0
    for candidate in visible.among(doc.holding(_HEADING_OR_MARKER)):
        if candidate < i:
            continue  # inside a region already read
        i = candidate
        line = lines[i]
        if MARKER_PREFIX in line:
            raise _marker_problem(line, None, i)
        title = line[3:].strip() if line.startswith("## ") else ""
        role = STRICT_HEADINGS.get(title.lower())
        if role is None:
            continue
        start = i
        i += 1
        marked = i < n and lines[i] == marker(role, "begin")
        if marked:
            i += 1
        task_open = False
        while i < n:
            content = lines[i]
            if marked and content == marker(role, "end"):
                break
            if MARKER_PREFIX in content:
                raise _marker_problem(content, role, i)
            if not _is_generated(content, i in visible, marked, task_open):
                if marked:
                    raise GrammarError("foreign_content", i,
                                       "a line inside a marked loopx region is not generated")
                break
            if _TASK.fullmatch(content):
                task_open = True
            elif not content.strip():
                task_open = False
            i += 1
        if marked and i == n:
            raise GrammarError("unterminated", start + 1, "a loopx region is never closed")
        body_end = i
        if marked:
            i += 1
        regions.append(LoopxRegion(role, start, i, body_end, title, marked))
    return regions


def _legacy_role(title: str) -> str | None:
    lowered = title.lower()
    if any(word in lowered for word in _LEGACY_ARCHIVE):
        return "archive"
    if any(word in lowered for word in _LEGACY_USER):
        return "user"
    if any(word in lowered for word in _LEGACY_AGENT):
        return "agent"
    return None


def source_regions(doc: Lines, visible: Visible, *,
                   marked_elsewhere: bool = False) -> list[LoopxRegion]:
    """The regions loopx reads todos from.

    When any region is marked (here, or by another marker family when
    ``marked_elsewhere``), the strict regions of :func:`find_regions`;
    otherwise loopx's legacy heading reading.
    """
    strict = find_regions(doc, visible)
    if marked_elsewhere or any(r.marked for r in strict):
        return strict
    lines = doc.lines
    headings = [i for i in visible.among(doc.holding(_HEADING_OR_MARKER))
                if lines[i].startswith("## ")]
    out: list[LoopxRegion] = []
    for k, start in enumerate(headings):
        title = lines[start][3:].strip()
        role = _legacy_role(title)
        if role is None:
            continue
        end = headings[k + 1] if k + 1 < len(headings) else len(lines)
        out.append(LoopxRegion(role, start, end, end, title, False))
    return out


def decode_todos(lines: Sequence[str], region: LoopxRegion,
                 visible: Visible) -> list[LoopxTodo]:
    """The todo items of one region, in order.

    A task line starts an item; a following visible line that starts with
    a space or tab is either a metadata comment (its tokens join the item)
    or continuation text. An invisible line ends the item; other visible
    lines are skipped.
    """
    items: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for i in range(region.start + 1, region.body_end):
        if i not in visible:
            if current is not None:
                current["end"] = i
                current = None
            continue
        task = _TASK.fullmatch(lines[i])
        if task is not None:
            if current is not None:
                current["end"] = i
            box = task.group(1).lower()
            current = {"start": i, "end": region.body_end, "marker": task.group(1),
                       "done": box in ("x", "-"),
                       "status": "done" if box == "x" else "deferred" if box == "-" else "open",
                       "text": _compact(task.group(2)), "fields": []}
            items.append(current)
        elif current is not None and lines[i].startswith((" ", "\t")):
            tokens = metadata(lines[i])
            if tokens is not None and any(_accepts(k, v) for k, v in tokens):
                current["fields"].extend((k, v) for k, v in tokens if k in _KNOWN)
            elif lines[i].strip():
                current["text"] = _compact(current["text"] + " " + lines[i].strip())
    out: list[LoopxTodo] = []
    for item in items:
        todo = LoopxTodo(item["start"], item["end"], item["marker"], item["done"],
                         item["status"], item["text"], tuple(item["fields"]))
        status = todo.field("status")
        out.append(todo if status is None else LoopxTodo(
            todo.start, todo.end, todo.marker, todo.done, status, todo.text, todo.fields))
    return out


# -- metadata values loopx accepts -----------------------------------------------------------


def _token(pattern: str, *, lower: bool = True) -> Callable[[str], bool]:
    shape = re.compile(pattern)

    def accepts(value: str) -> bool:
        candidate = value.strip()
        return bool(shape.fullmatch(candidate.lower() if lower else candidate))

    return accepts


def _member(values: frozenset[str]) -> Callable[[str], bool]:
    return lambda value: value.strip().lower() in values


def _agent(value: str) -> bool:
    candidate = _compact(value).lower().replace(" ", "-")
    return bool(re.fullmatch(r"[a-z][a-z0-9_.:@-]{0,79}", candidate))


def _text(value: str) -> bool:
    return bool(_compact(value))


_TODO_ID = _token(r"todo_[a-z0-9_-]{3,64}")
_RULES: dict[str, Callable[[str], bool]] = {
    "todo_id": _TODO_ID,
    "unblocks_todo_id": _TODO_ID,
    "superseded_by": _TODO_ID,
    "status": _member(_STATUSES),
    "role": _member(frozenset({"user", "agent"})),
    "task_class": _member(frozenset({"advancement_task", "continuous_monitor", "user_gate",
                                     "user_action", "blocker"})),
    "action_kind": _token(r"[a-z][a-z0-9_-]{0,63}"),
    "task_domain": _token(r"[a-z][a-z0-9_.-]{0,63}"),
    "claimed_by": _agent,
    "last_actor_agent_id": _agent,
    "bound_agent": _agent,
    "blocks_agent": _agent,
    "decision_outcome": lambda value: _compact(value).lower() in ("approve", "reject", "cancel"),
    "replan_obligation_id": _token(r"replan-[a-f0-9]{16}", lower=False),
}
for _name in ("target_key", "monitor_effect_id", "cadence", "next_due_at", "expires_at",
              "last_checked_at", "result_hash", "consecutive_no_change", "material_change",
              "material_change_generation", "max_no_change_before_replan", "watch_only", "note",
              "evidence", "reason", "completed_at", "updated_at", "completion_turn_key",
              "completion_receipt_id", "validation_command", "validation_command_argv",
              "validation_label", "validation_timeout_seconds"):
    _RULES[_name] = _text
# loopx validates these with its TypeScript runtime or its repository and
# decision-scope models; here a non-empty value counts as present.
_APPROXIMATED = ("capability_binding_ref", "task_repository", "continuation_policy",
                 "removed_continuation_policy", "required_write_scopes", "required_capabilities",
                 "target_capabilities", "explore_result_node_refs", "decision_scope",
                 "required_decision_scopes", "decision_scope_outcomes", "goal_bound",
                 "excluded_agents", "global_gate", "successor_todo_ids",
                 "completion_continuation", "completion_recovery", "resume_when",
                 "resume_monitor_generation", "no_followup")
for _name in _APPROXIMATED:
    _RULES[_name] = _text
_KNOWN = frozenset(_RULES)
_LOWERED = frozenset({"todo_id", "unblocks_todo_id", "superseded_by", "status", "role",
                      "task_class", "action_kind", "task_domain", "decision_outcome"})


def _accepts(key: str, value: str) -> bool:
    rule = _RULES.get(key)
    return rule is not None and rule(value)
