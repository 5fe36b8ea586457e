"""How a harness reads a stop hook's exit status and output: the oracle the CLI is held to.

Restated from Codex's stop-hook handling (``codex-rs/hooks/src/events/stop.rs``
and its output parser), which Claude Code's documented semantics match: exit
0 with nothing printed lets the agent stop; exit 0 with a JSON object answers
(``continue: false`` stops the session, ``decision: block`` needs a non-blank
``reason``, unknown keys make the output invalid); exit 2 blocks with standard
error, which must not be blank; anything else is a failed hook, reported and
ignored, so the agent stops.
"""

from __future__ import annotations

import json

__all__ = ["reads"]

_KEYS = {"continue", "decision", "reason", "stopReason", "suppressOutput", "systemMessage"}


def reads(code: int, stdout: str, stderr: str) -> tuple[str, str | None]:
    """``(verdict, text)``: ``allow``, ``block`` (its reason), ``stop`` or ``failed`` (why)."""
    if code == 2:
        return ("block", stderr.strip()) if stderr.strip() else (
            "failed", "exit 2 without a reason on standard error")
    if code != 0:
        return "failed", f"hook exited with code {code}"
    if not stdout.strip():
        return "allow", None
    try:
        value = json.loads(stdout.strip())
    except ValueError:
        return "failed", "invalid JSON output"
    if not isinstance(value, dict) or set(value) - _KEYS:
        return "failed", "invalid JSON output"
    if value.get("continue") is False:
        return "stop", value.get("stopReason")
    if value.get("decision") == "block":
        reason = value.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            return "failed", "decision block without a non-empty reason"
        return "block", reason.strip()
    return "allow", None
