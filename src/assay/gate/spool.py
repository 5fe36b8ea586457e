"""Stop decisions the ledger could not take: a small local file that holds no authority.

When ``hook stop`` cannot write its decision (the ledger stayed locked past
its bound, cannot be reached, or the hook's deadline came first), it appends
the decision to ``<project>/.assay/gate-spool.jsonl``, one JSON object a
line: ``{record, spooled_at, why, continuing, decision}``. The file serves
two purposes, and nothing else:

- Counting. While the ledger cannot count a run of stops, the spooled
  decisions of a session are folded onto the last state the ledger holds
  (:func:`fold`), so the gate keeps blocking, counts each block, and still
  gives up at the retry cap: a locked ledger never lets a stop through
  silently, and never loops for good.
- Replay. The next hook that can write takes the file (:func:`take`) and
  writes each decision as a version of its session record, marked
  ``spooled``.

It holds no authority: the agent runs as the same OS user and can edit it.
So what it holds is read as a claim about blocks and give-ups only: a
folded or replayed decision can add a block or end a run sooner (the person
is told, and the record shows it), never clear a give-up, never count as
proof, and its run is recomputed from the ledger's state, not read from the
file. The file is a regular file opened without following a link, locked
(``flock``) while read or written, and bounded to :data:`MAX_SPOOL_BYTES`; a
decision that does not fit is not spooled.

Imports only the standard library and the base modules.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from assay.errors import UnavailableError

__all__ = ["MAX_SPOOL_BYTES", "SPOOL_NAME", "append", "fold", "pending", "spool_path", "take"]

SPOOL_NAME = "gate-spool.jsonl"
# About a hundred decisions (a reason is at most 2,000 characters): far more
# than one locked spell of a few runs needs.
MAX_SPOOL_BYTES = 256 * 1024
_EVENTS = ("gate_blocked", "gate_allowed", "gate_gave_up", "gate_error")
_FLAGS = os.O_RDWR | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0) | \
    getattr(os, "O_NONBLOCK", 0)


def spool_path(root: Path) -> Path:
    """Where the project at ``root`` spools the decisions its ledger could not take."""
    return root / ".assay" / SPOOL_NAME


def _refused(path: Path, why: str) -> UnavailableError:
    return UnavailableError(f"the gate's spool {path} {why}", code="gate_spool_unusable",
                            retryable=False,
                            action=f"Remove {path} (it holds no authority; the ledger has the "
                                   "decisions it could take).")


def _open(path: Path, *, create: bool) -> int | None:
    """The spool, open and locked for this process (None when absent and not ``create``)."""
    import fcntl

    try:
        fd = os.open(path, _FLAGS | (os.O_CREAT if create else 0), 0o600)
    except FileNotFoundError:
        if create:
            raise _refused(path, "cannot be created (no .assay directory)") from None
        return None
    except OSError as exc:
        raise _refused(path, f"cannot be opened ({exc.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
            raise _refused(path, "is not a regular file of its own")
        fcntl.flock(fd, fcntl.LOCK_EX)  # held by a hook for a read or one append only
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read(fd: int) -> bytes:
    size = os.fstat(fd).st_size
    return os.pread(fd, min(size, MAX_SPOOL_BYTES), 0)


def _entries(raw: bytes) -> list[dict[str, Any]]:
    """The well-formed entries of the file (a damaged line is skipped: it counts nothing)."""
    out = []
    for line in raw.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("record"), str) and \
                isinstance(value.get("decision"), dict):
            out.append(value)
    return out


def append(path: Path, entry: Mapping[str, Any]) -> None:
    """Add one decision to the spool (``gate_spool_unusable`` when it cannot be kept)."""
    line = (json.dumps(entry, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")
    fd = _open(path, create=True)
    assert fd is not None
    try:
        size = os.fstat(fd).st_size
        if size + len(line) > MAX_SPOOL_BYTES:
            raise _refused(path, f"is full ({size} bytes)")
        os.pwrite(fd, line, size)
    except OSError as exc:
        raise _refused(path, f"cannot be written ({exc.strerror})") from None
    finally:
        os.close(fd)


def pending(path: Path) -> list[dict[str, Any]]:
    """The decisions spooled and not replayed yet, oldest first ([] without a spool)."""
    try:
        fd = _open(path, create=False)
    except UnavailableError:
        return []
    if fd is None:
        return []
    try:
        return _entries(_read(fd))
    finally:
        os.close(fd)


def take(path: Path) -> list[dict[str, Any]]:
    """Empty the spool and return what it held (the caller writes it, or appends it back)."""
    fd = _open(path, create=False)
    if fd is None:
        return []
    try:
        entries = _entries(_read(fd))
        os.ftruncate(fd, 0)
        return entries
    finally:
        os.close(fd)


def fold(state: Mapping[str, Any] | None, decision: Mapping[str, Any], *, continuing: bool,
         sequence: int) -> dict[str, Any]:
    """A session's ``run`` and ``gave_up`` after a decision that was answered but not recorded.

    Only what makes the gate stricter is taken from ``decision``: a block
    adds one to the run, a give-up ends it. A give-up already recorded
    stays; nothing here clears one or counts as proof.
    """
    state = state or {}
    run = dict(state.get("run") or {"blocks": 0, "gave_up": False}) if continuing \
        else {"blocks": 0, "gave_up": False}
    gave_up = state.get("gave_up")
    if decision.get("answer") == "block":
        run["blocks"] = int(run.get("blocks") or 0) + 1
    if decision.get("event") == "gate_gave_up":
        run["gave_up"] = True
        gave_up = {"sequence": sequence, "blocks": run.get("blocks"),
                   "intents": intent_ids(decision.get("intents")),
                   "reason": decision.get("reason") if isinstance(decision.get("reason"), str)
                   else None}
    return {"run": run, "gave_up": gave_up}


def intent_ids(items: Any) -> list[str]:
    """The intent ids a decision names (anything else in the list is dropped)."""
    if not isinstance(items, Sequence) or isinstance(items, str):
        return []
    return [str(i["id"]) for i in items if isinstance(i, Mapping) and isinstance(i.get("id"), str)]


def clean_decision(decision: Mapping[str, Any]) -> dict[str, Any] | None:
    """A spooled decision as it may be replayed, or None when it is no decision the gate makes."""
    if decision.get("event") not in _EVENTS or decision.get("answer") not in ("block", "allow"):
        return None
    out = dict(decision)
    out["intents"] = [{"id": i} for i in intent_ids(decision.get("intents"))]
    return out
