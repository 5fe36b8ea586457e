"""Goal markdown files: reading them with strict region ownership, regenerating regions.

A goal is a markdown file registered in ``assay.toml`` (``[goals.GOAL_ID]``,
``path = "..."``). Assay owns only the todo lists it writes between explicit
region markers; every other byte of the file belongs to the people and agents
who edit it and is returned verbatim, never summarised, classified or clipped.
The marker grammar is documented in ``docs/context.md``; in short::

    <!-- assay:todo-region role=agent id=agent-todo begin -->
    - [ ] Parse the manifest <!-- todo:parse-manifest status=open -->
    <!-- assay:todo-region id=agent-todo end -->

and the existing ``<!-- loopx:todo-region-v0 role=agent begin|end -->`` pair,
read with the same rules (its region id is ``loopx-<role>``).

Contracts:

- :func:`read_goal_bytes` is pure: bytes in, :class:`GoalRead` out. The
  revision is the SHA-256 of every byte, regions included. Invalid UTF-8 and
  every malformed marker raise an :class:`~assay.errors.AssayError` with a
  specific ``goal_*`` code; nothing is guessed.
- Frontmatter (a ``---`` block at the very start), fenced code blocks and HTML
  comment blocks that span lines are never scanned for markers.
- Line endings are kept exactly (LF, CRLF or none on the last line); lines are
  split at ``\\n`` only, and line numbers are 1-based.
- :func:`read_goal` reads a file and never writes. :func:`write_goal` replaces
  only the lines between marker pairs, under a revision guard, and leaves
  every other byte untouched.

Imports: errors, canonical (digests) and config (goal registration) only.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.errors import AssayError, ConflictError, UnavailableError, pointer

__all__ = [
    "ROLES",
    "GoalRead",
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
# Titles of the todo lists the existing tool writes under H2 headings. A heading
# never decides what text is delivered: an unmarked list heading only makes the
# ownership non-explicit, which widens the required read, never narrows it.
_LIST_TITLES = frozenset({"agent todo", "agent todos", "user todo", "user todos",
                          "completed work archive", "todo archive"})

# One pass finds every line that can matter outside a region; everything else
# is narrative and is copied, not looked at. The search pattern starts with a
# literal newline so the regex engine can skip ahead quickly between lines.
_LINE_BODY = (r"(?: {0,3}(?P<lead><!--|```|~~~|##[ \t])"
              r"|[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+\[[ xX]\](?:[ \t]|\r?$))")
_INTERESTING = re.compile(_LINE_BODY, re.MULTILINE)
_NEXT_INTERESTING = re.compile(r"\n(?=" + _LINE_BODY.replace("?P<lead>", "") + ")", re.MULTILINE)
_CANDIDATE = re.compile(r" {0,3}<!--\s*(?:assay|loopx):todo-region")
_MARKER = re.compile(
    r" {0,3}<!--\s*(assay:todo-region|loopx:todo-region-v0)((?:\s+[^\s]+)*?)\s*-->[ \t]*\r?\n?")
_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})([^\n]*)")
_HEADING2 = re.compile(r" {0,3}##[ \t]+([^\n]*?)[ \t]*(?:#+[ \t]*)?\r?(?:\n|\Z)")
_BLANKS = re.compile(r"(?:[ \t]*\r?\n)*")
_TASK = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+\[[ xX]\](?:[ \t][^\n]*)?\r?\n?")
_ONE_LINE_COMMENT = re.compile(r" {0,3}<!--.*-->[ \t]*\r?\n?")
_CONTINUATION = re.compile(r"(?:  |\t)[^\n]*\n?")
_BLANK = re.compile(r"[ \t]*\r?\n?")


@dataclass(frozen=True, slots=True)
class Region:
    """One marked todo region.

    ``start_line`` is the begin marker's line and ``end_line`` the end
    marker's (1-based, inclusive); ``start`` and ``end`` are the character
    offsets of the region (begin marker line through end marker line, with
    its line ending). ``content_start``/``content_end`` bound the generated
    lines between the markers. ``sha256`` hashes the region's bytes.
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "role": self.role,
            "marker": self.syntax,
            "lines": {"start": self.start_line, "end": self.end_line},
            "sha256": self.sha256,
        }


@dataclass(frozen=True, slots=True)
class GoalRead:
    """What reading a goal file found. See :meth:`to_dict` for the wire form."""

    goal_id: str
    path: str
    revision: str
    size_bytes: int
    line_count: int
    ownership: str
    regions: tuple[Region, ...]
    text: str | None
    first_unmarked_line: int | None

    @property
    def is_explicit(self) -> bool:
        return self.ownership == "explicit"

    def to_dict(self, *, full_text: str | None = None) -> dict[str, Any]:
        """The read as JSON data.

        Explicit ownership carries the complete non-generated ``text`` and
        ``excluded_todo_regions``; unmarked or mixed ownership carries only the
        path and revision plus the progressive read that remains required.
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


@dataclass(slots=True)
class _Open:
    id: str
    role: str
    syntax: str
    line: int
    start: int
    content_start: int
    newline: str


def _parse_marker(match: re.Match[str], path: str, line: int) -> tuple[str, str, str | None, str]:
    """Return ``(syntax, edge, role, id)`` of a well-formed marker line."""
    family, rest = match.group(1), match.group(2).split()
    syntax = "assay" if family.startswith("assay") else "loopx"
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
    if syntax == "loopx":
        if "id" in attrs or role is None:
            raise _fail("goal_marker_malformed",
                        "a loopx:todo-region-v0 marker carries role=... and no id", path, line)
        return syntax, edge, role, f"loopx-{role}"
    region_id = attrs.get("id")
    if region_id is None or not _REGION_ID.fullmatch(region_id):
        raise _fail("goal_marker_malformed",
                    "an assay:todo-region marker carries id=<[a-z0-9][a-z0-9._-]*>", path, line)
    if edge == "begin" and role is None:
        raise _fail("goal_marker_malformed", "a begin marker carries role=user|agent|archive",
                    path, line)
    return syntax, edge, role, region_id


def _line_end(text: str, pos: int) -> int:
    """Offset just past the line that starts at ``pos`` (its newline included)."""
    nl = text.find("\n", pos)
    return len(text) if nl < 0 else nl + 1


class _Scanner:
    """Walks a decoded goal once, tracking line numbers lazily."""

    def __init__(self, text: str, path: str, original: str) -> None:
        self.text = text
        self.original = original
        self.path = path
        self._line_pos = 0
        self._line_no = 1

    def line_of(self, pos: int) -> int:
        # Positions are visited in increasing order, so counting newlines from
        # the last visited position keeps the whole scan linear.
        if pos < self._line_pos:
            self._line_pos, self._line_no = 0, 1
        self._line_no += self.text.count("\n", self._line_pos, pos)
        self._line_pos = pos
        return self._line_no

    def skip_frontmatter(self) -> int:
        text = self.text
        start = 1 if self.original.startswith("\ufeff") else 0
        first_end = _line_end(text, start)
        if text[start:first_end].rstrip("\r\n").rstrip(" \t") != "---":
            return 0
        pos = first_end
        while pos < len(text):
            end = _line_end(text, pos)
            if text[pos:end].rstrip("\r\n").rstrip(" \t") in ("---", "..."):
                return end
            pos = end
        raise _fail("goal_frontmatter_unterminated",
                    "frontmatter opened by '---' on line 1 is never closed", self.path, 1)

    def skip_fence(self, pos: int, match: re.Match[str]) -> int:
        fence, info = match.group(1), match.group(2)
        if fence[0] == "`" and "`" in info:
            return _line_end(self.text, pos)  # not a fence (CommonMark): plain text
        closing = re.compile(r"^ {0,3}" + re.escape(fence[0]) + "{" + str(len(fence)) +
                             r",}[ \t]*\r?$", re.MULTILINE)
        found = closing.search(self.text, _line_end(self.text, pos))
        # An unclosed fence runs to the end of the document, as CommonMark renders it.
        return len(self.text) if found is None else _line_end(self.text, found.start())

    def skip_comment(self, pos: int) -> int:
        line_end = _line_end(self.text, pos)
        close = self.text.find("-->", self.text.find("<!--", pos) + 4)
        if close < 0:
            # A comment block never closed runs to the end, as CommonMark renders it.
            return len(self.text)
        return line_end if close < line_end else _line_end(self.text, close)


def read_goal_bytes(data: bytes, *, goal_id: str, path: str) -> GoalRead:
    """Read a goal from its bytes; pure. See the module docstring for the rules.

    Cost: one SHA-256 over the bytes, one UTF-8 decode, one regex pass over
    the text plus a line check inside each region; the non-generated text is
    one join of slices. Nothing is clipped, whatever the size.
    """
    revision = hashlib.sha256(data).hexdigest()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise _fail("goal_invalid_utf8", f"not valid UTF-8 at byte {exc.start}", path, line,
                    offset=exc.start) from None
    # A byte-order mark is one character; scanning a copy where it is a space
    # keeps every offset and lets a marker on line 1 be seen, not skipped.
    scan = _Scanner(" " + text[1:] if text.startswith("\ufeff") else text, path, text)
    regions: list[Region] = []
    seen_ids: dict[str, int] = {}
    first_unmarked: int | None = None
    pos = scan.skip_frontmatter()
    stext = scan.text
    n = len(stext)
    while pos < n:
        match = _INTERESTING.match(stext, pos)
        if match is None:
            found = _NEXT_INTERESTING.search(stext, pos)
            if found is None:
                break
            match = _INTERESTING.match(stext, found.start() + 1)
            assert match is not None
        at = match.start()
        head = match.group("lead") or ""
        fence = _FENCE_OPEN.match(stext, at) if head[:1] in ("`", "~") else None
        if fence is not None:
            pos = scan.skip_fence(at, fence)
            continue
        if head.startswith("<!--"):
            if _CANDIDATE.match(stext, at):
                region = _read_region(scan, at, seen_ids)
                regions.append(region)
                seen_ids[region.id] = region.start_line
                pos = region.end
            else:
                pos = scan.skip_comment(at)
            continue
        if head.startswith("##"):
            heading = _HEADING2.match(stext, at)
            pos = _line_end(stext, at)
            if heading is not None and " ".join(heading.group(1).lower().split()) in _LIST_TITLES:
                blanks = _BLANKS.match(stext, pos)
                after = blanks.end() if blanks is not None else pos
                if not _CANDIDATE.match(stext, after) and first_unmarked is None:
                    first_unmarked = scan.line_of(at)
            continue
        # A task-list item outside every marked region is an unmarked todo list.
        if first_unmarked is None:
            first_unmarked = scan.line_of(at)
        pos = _line_end(stext, at)
    if first_unmarked is None:
        ownership = "explicit"
    else:
        ownership = "mixed" if regions else "unmarked"
    body: str | None = None
    if ownership == "explicit":
        parts: list[str] = []
        last = 0
        for region in regions:
            parts.append(text[last:region.start])
            last = region.end
        parts.append(text[last:])
        body = "".join(parts)
    line_count = text.count("\n") + (0 if not text or text.endswith("\n") else 1)
    return GoalRead(
        goal_id=goal_id,
        path=path,
        revision=revision,
        size_bytes=len(data),
        line_count=line_count,
        ownership=ownership,
        regions=tuple(regions),
        text=body,
        first_unmarked_line=first_unmarked,
    )


def _read_region(scan: _Scanner, at: int, seen_ids: Mapping[str, int]) -> Region:
    text, path = scan.text, scan.path
    line = scan.line_of(at)
    marker = _MARKER.match(text, at)
    if marker is None or marker.end() != _line_end(text, at):
        raise _fail("goal_marker_malformed",
                    "a region marker is one whole line '<!-- ... begin|end -->'", path, line)
    syntax, edge, role, region_id = _parse_marker(marker, path, line)
    if edge == "end":
        raise _fail("goal_marker_unbalanced", f"end marker of region {region_id!r} has no begin",
                    path, line, region_id=region_id)
    assert role is not None
    if region_id in seen_ids:
        raise _fail("goal_region_duplicate_id",
                    f"region id {region_id!r} is already used on line {seen_ids[region_id]}",
                    path, line, region_id=region_id, first_line=seen_ids[region_id])
    newline = "\r\n" if marker.group(0).endswith("\r\n") else "\n"
    opened = _Open(region_id, role, syntax, line, at, marker.end(), newline)
    pos = marker.end()
    current = line
    seen_task = False
    n = len(text)
    while pos < n:
        end = _line_end(text, pos)
        current += 1
        if _CANDIDATE.match(text, pos):
            inner = _MARKER.match(text, pos)
            if inner is None or inner.end() != end:
                raise _fail("goal_marker_malformed",
                            "a region marker is one whole line '<!-- ... begin|end -->'",
                            path, current)
            i_syntax, i_edge, i_role, i_id = _parse_marker(inner, path, current)
            if i_edge == "begin":
                raise _fail("goal_marker_nested",
                            f"region {i_id!r} begins inside region {region_id!r} "
                            f"(opened on line {line})", path, current,
                            region_id=i_id, enclosing_region_id=region_id)
            if i_syntax != syntax or i_id != region_id or (i_role is not None and i_role != role):
                raise _fail("goal_marker_mismatched",
                            f"end marker does not match region {region_id!r} opened on line "
                            f"{line}", path, current, region_id=region_id)
            scan.line_of(end)
            return _finish(scan.original, opened, pos, end, current)
        if _BLANK.fullmatch(text, pos, end) or _TASK.fullmatch(text, pos, end) or \
                _ONE_LINE_COMMENT.fullmatch(text, pos, end):
            seen_task = seen_task or bool(_TASK.fullmatch(text, pos, end))
        elif seen_task and _CONTINUATION.fullmatch(text, pos, end):
            pass
        else:
            raise _fail("goal_region_foreign_content",
                        f"region {region_id!r} holds a line that is not a task, an indented "
                        "task detail, a one-line comment or blank", path, current,
                        region_id=region_id)
        pos = end
    raise _fail("goal_marker_unbalanced", f"region {region_id!r} is never closed", path, line,
                region_id=region_id)


def _finish(text: str, opened: _Open, end_start: int, end: int, end_line: int) -> Region:
    return Region(
        id=opened.id,
        role=opened.role,
        syntax=opened.syntax,
        start_line=opened.line,
        end_line=end_line,
        start=opened.start,
        end=end,
        content_start=opened.content_start,
        content_end=end_start,
        sha256=hashlib.sha256(text[opened.start:end].encode("utf-8")).hexdigest(),
        newline=opened.newline,
    )


def goal_path(root: Path, goal_id: str, relative: str) -> Path:
    """The goal's file under ``root``; ``goal_path_outside_project`` if it escapes.

    Symlinks are resolved before the containment check, so a link pointing out
    of the project is refused rather than followed.
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


def _read_bytes(file: Path, relative: str, goal_id: str) -> bytes:
    try:
        return file.read_bytes()
    except OSError as exc:
        raise UnavailableError(
            f"goal {goal_id!r}: cannot read {relative}: {exc.strerror or exc}",
            code="goal_unavailable",
            details={"goal_id": goal_id, "path": relative},
            action="Restore the goal file or fix [goals.GOAL_ID] path in assay.toml.",
        ) from None


def read_goal(root: Path, goal_id: str, relative: str) -> tuple[GoalRead, bytes]:
    """Read the registered goal file; return the read and the bytes it was computed from.

    Never writes. ``goal_unavailable`` (exit 4) when the file cannot be read.
    """
    file = goal_path(root, goal_id, relative)
    data = _read_bytes(file, relative, goal_id)
    return read_goal_bytes(data, goal_id=goal_id, path=relative), data


def regenerate(read: GoalRead, data: bytes,
               render: Callable[[Region], Sequence[str]]) -> bytes:
    """New file bytes with each region's generated lines replaced by ``render(region)``.

    ``render`` returns the lines (without line endings) to place between the
    markers; they are joined with the begin marker's own line ending. Marker
    lines and every byte outside regions are copied unchanged. The result is
    re-read, so a rendering that would not read back (say, a line that is not
    allowed inside a region) is refused before anything is written.
    """
    text = data.decode("utf-8")
    parts: list[str] = []
    last = 0
    for region in read.regions:
        parts.append(text[last:region.content_start])
        parts.extend(line + region.newline for line in render(region))
        last = region.content_end
    parts.append(text[last:])
    out = "".join(parts).encode("utf-8")
    again = read_goal_bytes(out, goal_id=read.goal_id, path=read.path)
    if [(r.id, r.role) for r in again.regions] != [(r.id, r.role) for r in read.regions]:
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
    """Regenerate the marked regions of a goal file, guarded by its revision.

    The file must be at ``expect_revision`` (``goal_revision_conflict``
    otherwise, and nothing is written). The new bytes go to a temporary file
    in the same directory which replaces the goal atomically after a second
    revision check, so a concurrent edit made before that check is never
    overwritten. An edit landing between that check and the rename (a window
    of one system call) is not detected: editors do not lock files. When the
    regenerated bytes equal the current ones the file is not touched.
    """
    file = goal_path(root, goal_id, relative)
    data = _read_bytes(file, relative, goal_id)
    read = read_goal_bytes(data, goal_id=goal_id, path=relative)
    if read.revision != expect_revision:
        raise _revision_conflict(read, expect_revision)
    new = regenerate(read, data, render)
    after = read_goal_bytes(new, goal_id=goal_id, path=relative)
    changed = new != data
    if changed:
        fd, tmp = tempfile.mkstemp(prefix=f".{file.name}.", suffix=".assay-tmp", dir=file.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(new)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, file.stat().st_mode & 0o7777)
            current = read_goal_bytes(_read_bytes(file, relative, goal_id), goal_id=goal_id,
                                      path=relative)
            if current.revision != expect_revision:
                raise _revision_conflict(current, expect_revision)
            os.replace(tmp, file)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    return {
        "goal_id": goal_id,
        "path": relative,
        "previous_revision": read.revision,
        "revision": after.revision,
        "changed": changed,
        "regions": [
            {**r.to_dict(), "previous_sha256": p.sha256,
             "previous_lines": {"start": p.start_line, "end": p.end_line}}
            for r, p in zip(after.regions, read.regions, strict=True)
        ],
    }
