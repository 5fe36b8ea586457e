"""Goal documents and helpers shared by the work-context tests."""

from __future__ import annotations

import hashlib


def generated(*lines: str) -> str:
    """A block as goal write leaves it: the digest line, then the lines (LF endings)."""
    digest = hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()
    return "".join(f"{line}\n" for line in
                   (f"<!-- assay:generated sha256={digest} lines={len(lines)} -->", *lines))


EXPLICIT = (
    "---\n"
    "title: Ship the parser\n"
    "---\n"
    "# Goal: ship the parser\n"
    "\n"
    "Keep every requirement; stop when the fixtures pass.\n"
    "\n"
    "## Agent Todo\n"
    "<!-- assay:todo-region role=agent id=agent-todo begin -->\n"
    + generated("- [ ] Parse the manifest <!-- todo:parse status=open -->",
                "    keep the error pointers exact") +
    "<!-- assay:todo-region id=agent-todo end -->\n"
    "\n"
    "## History\n"
    "- 2026-11-01 started\n"
    "\n"
    "## User Todo\n"
    "<!-- assay:todo-region role=user id=user-todo begin -->\n"
    + generated("- [ ] Approve the schema") +
    "<!-- assay:todo-region id=user-todo end -->\n"
    "\n"
    "Final stop: the fixtures pass.\n"
)


def sha(data: bytes | str) -> str:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return hashlib.sha256(raw).hexdigest()
