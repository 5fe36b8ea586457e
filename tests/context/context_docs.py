"""Goal documents and helpers shared by the work-context tests."""

from __future__ import annotations

import hashlib

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
    "- [ ] Parse the manifest <!-- todo:parse status=open -->\n"
    "    keep the error pointers exact\n"
    "<!-- assay:todo-region id=agent-todo end -->\n"
    "\n"
    "## History\n"
    "- 2026-11-01 started\n"
    "\n"
    "## User Todo\n"
    "<!-- assay:todo-region role=user id=user-todo begin -->\n"
    "- [ ] Approve the schema\n"
    "<!-- assay:todo-region id=user-todo end -->\n"
    "\n"
    "Final stop: the fixtures pass.\n"
)


def sha(data: bytes | str) -> str:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return hashlib.sha256(raw).hexdigest()
