"""Goal markdown files: reading them with strict region ownership, regenerating assay's regions.

A goal is a markdown file registered in ``assay.toml`` (``[goals.GOAL_ID]``,
``path = "..."``). Two families of todo regions are read:

- assay's own, written by ``goal write`` between explicit markers::

      <!-- assay:todo-region role=agent id=agent-todo begin -->
      <!-- assay:generated sha256=... lines=1 -->
      - [ ] Parse the manifest <!-- todo:parse-manifest status=open -->
      <!-- assay:todo-region id=agent-todo end -->

- loopx's, read exactly as loopx 2.1.1 reads them (:mod:`assay.context.loopx`):
  a todo heading, optionally paired with ``<!-- loopx:todo-region-v0 ...
  begin|end -->`` markers. Their todo items are delivered as todos that come
  from the goal file; assay never writes these regions.

Every other byte belongs to the people and agents who edit the file and is
returned verbatim, never summarised, classified or clipped. The grammar of
both families is in ``docs/context.md``.

Contracts:

- :func:`read_goal_bytes` is pure: bytes in, :class:`GoalRead` out. The
  revision is the SHA-256 of every byte. Invalid UTF-8 and every malformed
  marker raise an :class:`~assay.errors.AssayError` with a ``goal_*`` code.
- Lines are split as loopx splits them (:meth:`str.splitlines`), line
  numbers are 1-based, and line endings are kept byte for byte.
- :func:`read_goal` reads the file through :mod:`assay.context.project_file`
  (no symlink followed, regular files only, size-bounded) and never writes.
- :func:`write_goal` replaces only the block assay generated last time in
  each assay region (or fills an empty one); a region holding anything else
  is ``goal_region_foreign_edit`` and nothing is written.

Imports errors and the sibling context modules only.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.context import loopx
from assay.context.project_file import open_project_file
from assay.errors import AssayError, ConflictError, pointer

__all__ = [
    "ROLES",
    "GoalRead",
    "GoalTodo",
    "Region",
    "full_read",
    "goal_path",
    "read_goal",
    "read_goal_bytes",
    "regenerate",
    "write_goal",
]

ROLES = ("user", "agent", "archive")
_REGION_ID = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
_CANDIDATE = re.compile(r" {0,3}<!--\s*assay:todo-region")
_MARKER = re.compile(r" {0,3}<!--\s*assay:todo-region((?:\s+\S+)*?)\s*-->[ \t]*")
_GENERATED = re.compile(
    r" {0,3}<!--\s*assay:generated\s+sha256=([0-9a-f]{64})\s+lines=(\d{1,9})\s*-->[ \t]*")
# Inside an assay region; outside, the same task shape marks an unmarked list.
_TASK = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+\[[ xX]\](?:[ \t].*)?")
_CHECKBOX = ("[ ]", "[x]", "[X]")
_ONE_LINE_COMMENT = re.compile(r" {0,3}<!--.*-->[ \t]*")
_CONTINUATION = re.compile(r"(?:  |\t).*")
_DIFF_LINES = 200
_LOOPX_CODES = {
    "frontmatter": "goal_frontmatter_unterminated",
    "orphan_end": "goal_marker_unbalanced",
    "unterminated": "goal_marker_unbalanced",
    "misplaced_begin": "goal_marker_malformed",
    "malformed": "goal_marker_malformed",
    "nested": "goal_marker_nested",
    "mismatched": "goal_marker_mismatched",
    "foreign_content": "goal_region_foreign_content",
}


@dataclass(frozen=True, slots=True)
class Region:
    """One todo region.

    ``start_line``/``end_line`` are 1-based and inclusive: for an assay
    region the begin and end marker lines, for a loopx region its heading
    and its last line (the end marker when ``marked``). ``start``/``end``
    are character offsets of those lines (line endings included);
    ``content_start``/``content_end`` bound the lines between the markers
    (after the heading, for an unmarked loopx region). ``sha256`` hashes the
    region's bytes.
    """

    id: str
    role: str
    syntax: str
    start_line: int
    end_line: int
    start: int
    end: int
    content_start: int
    content_end: int
    sha256: str
    newline: str
    marked: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "role": self.role,
            "marker": self.syntax,
            "lines": {"start": self.start_line, "end": self.end_line},
            "sha256": self.sha256,
        }


@dataclass(frozen=True, slots=True)
class GoalTodo:
    """A todo item read from a loopx region of the goal file (not a ledger record).

    ``role`` is the owner role (the region's, or a ``role=`` metadata token;
    None for an archived item without one). ``detail`` holds the item's
    lines after its task line, verbatim (metadata comments and continuation
    text), without trailing blank lines.
    """

    todo_id: str | None
    region_id: str
    role: str | None
    archived: bool
    status: str
    done: bool
    text: str
    detail: tuple[str, ...]
    fields: tuple[tuple[str, str], ...]
    start_line: int
    end_line: int

    @property
    def is_active(self) -> bool:
        return not self.archived and self.status in ("open", "blocked")

    def to_dict(self, goal_id: str, path: str, revision: str) -> dict[str, Any]:
        return {
            "id": None if self.todo_id is None else "todo:" + self.todo_id,
            "origin": "goal_file",
            "goal_id": goal_id,
            "owner_role": self.role,
            "region": self.region_id,
            "archived": self.archived,
            "status": self.status,
            "done": self.done,
            "text": self.text,
            "detail": list(self.detail),
            "metadata": [[k, v] for k, v in self.fields],
            "source": {"kind": "goal", "goal_id": goal_id, "path": path, "revision": revision,
                       "lines": {"start": self.start_line, "end": self.end_line}},
        }


@dataclass(frozen=True, slots=True)
class GoalRead:
    """What reading a goal file found. See :meth:`to_dict` for the wire form.

    ``regions`` holds every region in file order, marked or not; ``todos``
    the items of the loopx regions.
    """

    goal_id: str
    path: str
    revision: str
    size_bytes: int
    line_count: int
    ownership: str
    regions: tuple[Region, ...]
    text: str | None
    first_unmarked_line: int | None
    todos: tuple[GoalTodo, ...] = ()

    @property
    def is_explicit(self) -> bool:
        return self.ownership == "explicit"

    def todo_views(self) -> list[dict[str, Any]]:
        """Every goal-file todo as JSON data, in file order."""
        return [t.to_dict(self.goal_id, self.path, self.revision) for t in self.todos]

    def to_dict(self, *, full_text: str | None = None) -> dict[str, Any]:
        """The read as JSON data.

        Explicit ownership carries the complete non-generated ``text`` and
        ``excluded_todo_regions``; unmarked or mixed ownership carries only the
        path and revision plus the progressive read that remains required.
        ``todos`` always lists the goal file's own todo items (loopx regions).
        ``full_text`` (the whole file) is included when the caller asked for it.
        """
        out: dict[str, Any] = {
            "goal_id": self.goal_id,
            "path": self.path,
            "revision": self.revision,
            "size_bytes": self.size_bytes,
            "line_count": self.line_count,
            "ownership": self.ownership,
        }
        if self.is_explicit:
            out["text"] = self.text
            out["excluded_todo_regions"] = [r.to_dict() for r in self.regions]
            out["required_reads"] = []
        else:
            out["text"] = None
            out["excluded_todo_regions"] = None
            out["first_unmarked_line"] = self.first_unmarked_line
            out["required_reads"] = [full_read(self.goal_id)]
        out["todos"] = self.todo_views()
        if full_text is not None:
            out["full_text"] = full_text
        return out


def full_read(goal_id: str) -> dict[str, Any]:
    """The required progressive read of a whole goal file, as an exact argument array."""
    return {
        "command": ["assay", "goal", "read", "--goal-id", goal_id, "--full"],
        "source": "goal_state",
        "reason": "the goal's todo regions are not all explicitly marked, so its whole "
                  "text must be read",
        "ordering": "before_work",
    }


def _fail(code: str, message: str, path: str, line: int | None = None,
          **details: Any) -> AssayError:
    facts: dict[str, Any] = {"path": path}
    if line is not None:
        facts["line"] = line
    facts.update(details)
    return AssayError(
        f"{path}" + (f" line {line}" if line is not None else "") + f": {message}",
        code=code,
        details=facts,
        action="Fix the goal file (see docs/context.md for the marker grammar), then read again.",
    )


def _parse_marker(match: re.Match[str], path: str, line: int) -> tuple[str, str | None, str]:
    """Return ``(edge, role, id)`` of a well-formed assay marker line."""
    rest = match.group(1).split()
    if not rest or rest[-1] not in ("begin", "end"):
        raise _fail("goal_marker_malformed", "a region marker ends with 'begin' or 'end'",
                    path, line)
    edge = rest[-1]
    attrs: dict[str, str] = {}
    for token in rest[:-1]:
        key, eq, value = token.partition("=")
        if not eq or key not in ("role", "id") or key in attrs or not value:
            raise _fail("goal_marker_malformed",
                        f"unexpected token {token[:60]!r} in a region marker", path, line)
        attrs[key] = value
    role = attrs.get("role")
    if role is not None and role not in ROLES:
        raise _fail("goal_marker_unknown_role",
                    f"unknown region role {role[:40]!r}; use user, agent or archive", path, line,
                    role=role[:40])
    region_id = attrs.get("id")
    if region_id is None or not _REGION_ID.fullmatch(region_id):
        raise _fail("goal_marker_malformed",
                    "an assay:todo-region marker carries id=<[a-z0-9][a-z0-9._-]*>", path, line)
    if edge == "begin" and role is None:
        raise _fail("goal_marker_malformed", "a begin marker carries role=user|agent|archive",
                    path, line)
    return edge, role, region_id


def _is_blank(line: str) -> bool:
    return not line.strip(" \t")


@dataclass(frozen=True, slots=True)
class _Span:
    """A region's 0-based line indexes: ``first`` and ``last`` inclusive."""

    id: str
    role: str
    first: int
    last: int


class _Lines(loopx.Lines):
    """A decoded goal split into lines (as :meth:`str.splitlines`), named for errors."""

    def __init__(self, text: str, path: str) -> None:
        super().__init__(text)
        self.path = path

    def newline(self, index: int) -> str:
        return "\r\n" if self.with_ends[index].endswith("\r\n") else "\n"

    def region(self, span: _Span, syntax: str, *, content_first: int, content_end: int,
               marked: bool = True) -> Region:
        start, end = self.starts[span.first], self.starts[span.last + 1]
        return Region(
            id=span.id, role=span.role, syntax=syntax, start_line=span.first + 1,
            end_line=span.last + 1, start=start, end=end,
            content_start=self.starts[content_first], content_end=self.starts[content_end],
            sha256=hashlib.sha256(self.text[start:end].encode("utf-8")).hexdigest(),
            newline=self.newline(span.first), marked=marked)


def _assay_line(lines: Sequence[str], index: int) -> str:
    # A byte-order mark never hides an assay marker on line 1.
    return lines[0].removeprefix("\ufeff") if index == 0 else lines[index]


def _read_assay_region(doc: _Lines, first: int, seen: dict[str, int]) -> _Span:
    """The assay region whose begin marker is line ``first``; raises on any grammar fault."""
    lines, path = doc.lines, doc.path
    marker = _MARKER.fullmatch(_assay_line(lines, first))
    if marker is None:
        raise _fail("goal_marker_malformed",
                    "a region marker is one whole line '<!-- ... begin|end -->'", path, first + 1)
    edge, role, region_id = _parse_marker(marker, path, first + 1)
    if edge == "end":
        raise _fail("goal_marker_unbalanced", f"end marker of region {region_id!r} has no begin",
                    path, first + 1, region_id=region_id)
    assert role is not None
    if region_id in seen:
        raise _fail("goal_region_duplicate_id",
                    f"region id {region_id!r} is already used on line {seen[region_id]}",
                    path, first + 1, region_id=region_id, first_line=seen[region_id])
    seen_task = False
    for k in range(first + 1, len(lines)):
        line = lines[k]
        if _CANDIDATE.match(line):
            inner = _MARKER.fullmatch(line)
            if inner is None:
                raise _fail("goal_marker_malformed",
                            "a region marker is one whole line '<!-- ... begin|end -->'",
                            path, k + 1)
            i_edge, i_role, i_id = _parse_marker(inner, path, k + 1)
            if i_edge == "begin":
                raise _fail("goal_marker_nested",
                            f"region {i_id!r} begins inside region {region_id!r} "
                            f"(opened on line {first + 1})", path, k + 1,
                            region_id=i_id, enclosing_region_id=region_id)
            if i_id != region_id or (i_role is not None and i_role != role):
                raise _fail("goal_marker_mismatched",
                            f"end marker does not match region {region_id!r} opened on line "
                            f"{first + 1}", path, k + 1, region_id=region_id)
            seen[region_id] = first + 1
            return _Span(region_id, role, first, k)
        if loopx.MARKER_PREFIX in line:
            code = "goal_marker_mismatched" if line.rstrip().endswith("end -->") \
                else "goal_marker_nested"
            raise _fail(code, f"a loopx region marker inside assay region {region_id!r}",
                        path, k + 1, region_id=region_id)
        if _is_blank(line) or _ONE_LINE_COMMENT.fullmatch(line):
            continue
        if _TASK.fullmatch(line):
            seen_task = True
        elif not (seen_task and _CONTINUATION.fullmatch(line)):
            raise _fail("goal_region_foreign_content",
                        f"region {region_id!r} holds a line that is not a task, an indented "
                        "task detail, a one-line comment or blank", path, k + 1,
                        region_id=region_id)
    raise _fail("goal_marker_unbalanced", f"region {region_id!r} is never closed", path,
                first + 1, region_id=region_id)


def read_goal_bytes(data: bytes, *, goal_id: str, path: str) -> GoalRead:
    """Read a goal from its bytes; pure. See the module docstring for the rules.

    Cost: one SHA-256 over the bytes, one UTF-8 decode, one pass over the
    lines for visibility and assay regions and one for loopx headings; the
    non-generated text is one join of slices. Nothing is clipped.
    """
    revision = hashlib.sha256(data).hexdigest()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise _fail("goal_invalid_utf8", f"not valid UTF-8 at byte {exc.start}", path, line,
                    offset=exc.start) from None
    doc = _Lines(text, path)
    lines = doc.lines
    assay_spans: list[_Span] = []
    seen: dict[str, int] = {}

    def claim(index: int) -> int | None:
        if not _CANDIDATE.match(_assay_line(lines, index)):
            return None
        span = _read_assay_region(doc, index, seen)
        assay_spans.append(span)
        return span.last + 1

    try:
        visible = loopx.visible_lines(doc, claim)
        found = loopx.source_regions(doc, visible, marked_elsewhere=bool(assay_spans))
    except loopx.GrammarError as err:
        raise _fail(_LOOPX_CODES[err.kind], str(err), path, err.line + 1) from None
    assay_starts = {s.first for s in assay_spans}
    regions: list[Region] = [
        doc.region(s, "assay", content_first=s.first + 1, content_end=s.last)
        for s in assay_spans]
    unmarked_lines: list[int] = []
    todos: list[GoalTodo] = []
    counts: dict[str, int] = {}
    for found_region in found:
        adopted = (not found_region.marked and found_region.body_end in assay_starts
                   and all(not lines[k].strip()
                           for k in range(found_region.start + 1, found_region.body_end)))
        if adopted:
            continue  # a todo heading directly above an assay region belongs to it
        counts[found_region.role] = counts.get(found_region.role, 0) + 1
        number = counts[found_region.role]
        region_id = f"loopx-{found_region.role}" + ("" if number == 1 else f"-{number}")
        if region_id in seen:
            raise _fail("goal_region_duplicate_id",
                        f"region id {region_id!r} is already used on line {seen[region_id]}",
                        path, found_region.start + 1, region_id=region_id)
        span = _Span(region_id, found_region.role, found_region.start, found_region.end - 1)
        content_first = found_region.start + (2 if found_region.marked else 1)
        regions.append(doc.region(span, "loopx", content_first=content_first,
                                  content_end=found_region.body_end,
                                  marked=found_region.marked))
        if not found_region.marked:
            unmarked_lines.append(found_region.start + 1)
        todos.extend(_goal_todos(lines, found_region, region_id, visible))
    regions.sort(key=lambda r: r.start_line)
    if assay_spans:
        # assay's stricter rule: a task line outside every region is an unmarked list.
        owned = {k for r in regions for k in range(r.start_line - 1, r.end_line)}
        stray = next((k for k in visible.among(doc.holding(_CHECKBOX))
                      if k not in owned and _TASK.fullmatch(lines[k])), None)
        if stray is not None:
            unmarked_lines.append(stray + 1)
    marked = any(r.marked for r in regions)
    ownership = "explicit" if not unmarked_lines else "mixed" if marked else "unmarked"
    body: str | None = None
    if ownership == "explicit":
        parts: list[str] = []
        last = 0
        for region in regions:
            parts.append(text[last:region.start])
            last = region.end
        parts.append(text[last:])
        body = "".join(parts)
    return GoalRead(
        goal_id=goal_id,
        path=path,
        revision=revision,
        size_bytes=len(data),
        line_count=len(lines),
        ownership=ownership,
        regions=tuple(regions),
        text=body,
        first_unmarked_line=min(unmarked_lines) if unmarked_lines else None,
        todos=tuple(todos),
    )


def _goal_todos(lines: Sequence[str], region: loopx.LoopxRegion, region_id: str,
                visible: loopx.Visible) -> list[GoalTodo]:
    out: list[GoalTodo] = []
    archived = region.role == "archive"
    for item in loopx.decode_todos(lines, region, visible):
        detail = list(lines[item.start + 1:item.end])
        while detail and not detail[-1].strip():
            detail.pop()
        out.append(GoalTodo(
            todo_id=item.field("todo_id"), region_id=region_id,
            role=item.field("role") or (None if archived else region.role), archived=archived,
            status=item.status, done=item.done, text=item.text, detail=tuple(detail),
            fields=item.fields, start_line=item.start + 1, end_line=item.start + 1 + len(detail)))
    return out


def goal_path(root: Path, goal_id: str, relative: str) -> Path:
    """The goal's file under ``root``; ``goal_path_outside_project`` if it escapes.

    A quick check that names the usual mistake; the reads themselves go
    through :func:`~assay.context.project_file.open_project_file`, which
    follows no symlink at all.
    """
    base = root.resolve()
    candidate = (base / relative).resolve()
    if candidate != base and base not in candidate.parents:
        raise AssayError(
            f"goal {goal_id!r}: {relative} resolves outside the project root",
            code="goal_path_outside_project",
            pointer=pointer("goals", goal_id, "path"),
            action="Point [goals.GOAL_ID] path at a file inside the project.",
        )
    return candidate


def _open(root: Path, goal_id: str, relative: str) -> Any:
    goal_path(root, goal_id, relative)
    return open_project_file(root, relative, label=f"goal {goal_id!r}",
                             details={"goal_id": goal_id, "path": relative})


def read_goal(root: Path, goal_id: str, relative: str) -> tuple[GoalRead, bytes]:
    """Read the registered goal file; return the read and the bytes it was computed from.

    Never writes. ``goal_unavailable`` (exit 4) when the file cannot be read,
    ``goal_not_regular_file`` for a FIFO, device or directory,
    ``goal_path_symlink`` when the path goes through a link, and
    ``resource_limit`` beyond :data:`~assay.context.project_file.MAX_GOAL_BYTES`.
    """
    with _open(root, goal_id, relative) as handle:
        data, _ = handle.read()
    return read_goal_bytes(data, goal_id=goal_id, path=relative), data


# -- regeneration --------------------------------------------------------------------------


def _digest_lines(lines: Sequence[str]) -> str:
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


class _NotGenerated(Exception):
    """A region holds lines assay did not generate."""


def _generated_block(doc: _Lines, region: Region) -> tuple[int, int]:
    """Line indexes ``[a, b)`` of what assay generated last time in ``region``.

    An empty or blank-only region gives an empty block right after the begin
    marker. Otherwise the first non-blank line must be assay's digest line,
    the lines it covers must still hash to it, and every other line must be
    blank; anything else raises :class:`_NotGenerated`.
    """
    first, last = region.start_line - 1, region.end_line - 1
    filled = [k for k in range(first + 1, last) if not _is_blank(doc.lines[k])]
    if not filled:
        return first + 1, first + 1
    head = _GENERATED.fullmatch(doc.lines[filled[0]])
    if head is not None:
        block = range(filled[0] + 1, filled[0] + 1 + int(head.group(2)))
        if block.stop <= last and all(k in block for k in filled[1:]) \
                and _digest_lines([doc.lines[k] for k in block]) == head.group(1):
            return filled[0], block.stop
    raise _NotGenerated


def _diff(doc: _Lines, region: Region, proposed: list[str]) -> dict[str, Any]:
    current = doc.lines[region.start_line:region.end_line - 1]
    diff = list(difflib.unified_diff(current, proposed, "current", "generated", lineterm="",
                                     n=1))
    return {"region_id": region.id,
            "lines": {"start": region.start_line, "end": region.end_line},
            "diff": diff[:_DIFF_LINES], "diff_truncated": len(diff) > _DIFF_LINES}


def regenerate(read: GoalRead, data: bytes,
               render: Callable[[Region], Sequence[str]]) -> bytes:
    """New file bytes with each assay region's generated block replaced by ``render(region)``.

    ``render`` returns the lines (without line endings) to place in the
    region; they follow a digest line ``<!-- assay:generated sha256=...
    lines=N -->`` and use the begin marker's line ending. Only that block
    changes: marker lines, blank lines around the block, loopx regions and
    every byte outside regions are copied unchanged. A region holding lines
    assay did not generate is ``goal_region_foreign_edit`` (a conflict whose
    details carry a diff per region), and nothing is returned. The result is
    re-read, so a rendering that would not read back is refused too.
    """
    text = data.decode("utf-8")
    doc = _Lines(text, read.path)
    parts: list[str] = []
    pos = 0
    foreign: list[dict[str, Any]] = []
    for region in read.regions:
        if region.syntax != "assay":
            continue
        rendered = list(render(region))
        try:
            a, b = _generated_block(doc, region)
        except _NotGenerated:
            foreign.append(_diff(doc, region, rendered))
            continue
        block = ""
        if rendered:
            head = f"<!-- assay:generated sha256={_digest_lines(rendered)} lines={len(rendered)} -->"
            block = "".join(line + region.newline for line in [head, *rendered])
        parts.append(text[pos:doc.starts[a]])
        parts.append(block)
        pos = doc.starts[b]
    if foreign:
        first = foreign[0]
        raise ConflictError(
            f"region {first['region_id']!r} (lines {first['lines']['start']}-"
            f"{first['lines']['end']}) holds lines assay did not generate; writing it would "
            "lose them", code="goal_region_foreign_edit",
            details={"path": read.path, "regions": foreign},
            action="Move hand-written lines out of the region (into the goal text, or into "
                   "todos with assay todo add), then read and write again.")
    parts.append(text[pos:])
    out = "".join(parts).encode("utf-8")
    again = read_goal_bytes(out, goal_id=read.goal_id, path=read.path)
    if [(r.id, r.role) for r in again.regions] != [(r.id, r.role) for r in read.regions] \
            or again.text != read.text:
        raise AssayError("the regenerated regions do not read back as the same regions",
                         code="goal_render_invalid")
    return out


def _revision_conflict(read: GoalRead, expected: str) -> ConflictError:
    return ConflictError(
        f"goal {read.goal_id!r} changed: expected revision {expected[:12]}..., "
        f"found {read.revision[:12]}...",
        code="goal_revision_conflict",
        pointer="/expect_revision",
        details={"goal_id": read.goal_id, "path": read.path,
                 "expected_revision": expected, "current_revision": read.revision},
        action="Read the goal again (assay goal read), then write with its current revision.",
    )


def write_goal(root: Path, goal_id: str, relative: str, *, expect_revision: str,
               render: Callable[[Region], Sequence[str]]) -> dict[str, Any]:
    """Regenerate the assay regions of a goal file, guarded by its revision.

    The file must be at ``expect_revision`` (``goal_revision_conflict``
    otherwise, and nothing is written). The read, the temporary file and the
    rename all go through one directory descriptor
    (:mod:`assay.context.project_file`); the revision is checked again just
    before the rename, so a concurrent edit made before that check is never
    overwritten. An edit landing between that check and the rename (a window
    of one system call) is not detected: editors do not lock files. When the
    regenerated bytes equal the current ones the file is not touched. loopx
    regions are never written; they are listed in ``untouched_regions``.
    """
    with _open(root, goal_id, relative) as handle:
        data, mode = handle.read()
        read = read_goal_bytes(data, goal_id=goal_id, path=relative)
        if read.revision != expect_revision:
            raise _revision_conflict(read, expect_revision)
        new = regenerate(read, data, render)
        after = read_goal_bytes(new, goal_id=goal_id, path=relative)
        changed = new != data

        def guard(current: bytes) -> None:
            if hashlib.sha256(current).hexdigest() != expect_revision:
                raise _revision_conflict(
                    read_goal_bytes(current, goal_id=goal_id, path=relative), expect_revision)

        if changed:
            handle.replace(new, mode, guard)
    return {
        "goal_id": goal_id,
        "path": relative,
        "previous_revision": read.revision,
        "revision": after.revision,
        "changed": changed,
        "regions": [
            {**r.to_dict(), "previous_sha256": p.sha256,
             "previous_lines": {"start": p.start_line, "end": p.end_line}}
            for r, p in zip(after.regions, read.regions, strict=True) if r.syntax == "assay"
        ],
        "untouched_regions": [
            {**r.to_dict(), "owner": "loopx", "marked": r.marked}
            for r in after.regions if r.syntax != "assay"
        ],
    }
