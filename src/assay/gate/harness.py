"""The harnesses' hook payloads and answers, mapped onto one model.

Claude Code and Codex send the same Stop and SubagentStop fields on standard
input: ``session_id``, ``cwd``, ``hook_event_name``, ``stop_hook_active``,
``last_assistant_message``, ``transcript_path``, and for a subagent
``agent_id`` (Codex adds ``turn_id``, ``model`` and ``permission_mode``).
Both read the same answer: ``{"decision": "block", "reason": ...}`` on
standard output with exit status 0 sends the agent back to work with the
reason as its next instruction; exit 0 with nothing printed lets it stop.
Any other exit status is an error each of them reports and then ignores
(the agent stops), except 2, which blocks with standard error as the reason.
So the gate always exits 0 and says what it means on standard output.

Cursor sends ``conversation_id``, ``workspace_roots``, ``status`` and
``loop_count`` (how many follow-ups this stop hook already caused) to its
``stop`` hook and continues the agent with ``{"followup_message": ...}``.

:class:`StopEvent` and :class:`ShellEvent` are the one model; the harness is
named by ``--harness`` or recognised from the payload's shape (Cursor's
``conversation_id``, Codex's ``turn_id``, else Claude Code). Unknown fields
are ignored: harnesses add fields over time, and none changes the decision.

A shell command's reported outcome is what the harness said, nothing more:
Claude Code runs ``PostToolUse`` only after a tool call that succeeded and
``PostToolUseFailure`` after one that failed (its ``error`` reads ``Exit code
N`` for a shell command that exited N); Codex passes the command's output
text as ``tool_response``, which states the exit code when it ends; Cursor's
``afterShellExecution`` reports the command and its output. Where no exit
code is stated, it is recorded as null.

Imports only the base modules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from assay.errors import AssayError, pointer

__all__ = [
    "HARNESSES",
    "ShellEvent",
    "StopEvent",
    "decode_payload",
    "detect_harness",
    "parse_shell",
    "parse_stop",
    "salvage_stop",
    "stop_answer",
]

HARNESSES = ("claude-code", "codex", "cursor")
_STOP_EVENTS = {"Stop": False, "SubagentStop": True, "stop": False, "subagentStop": True}
_SHELL_TOOLS = ("Bash",)
# A session or agent id is an opaque harness token; bound it so a record id stays short.
_MAX_ID_CHARS = 256
_EXIT_LINE = re.compile(r"(?:Process exited with code|Exit code:?|exit code:?)\s*(-?\d{1,4})\b")


@dataclass(frozen=True, slots=True)
class StopEvent:
    """An agent (or subagent) about to stop, as its harness reported it.

    ``continuing`` is true when the agent is already working again because
    a stop hook sent it back (Claude Code's and Codex's ``stop_hook_active``,
    Cursor's ``loop_count`` above 0). ``message`` is the agent's last message,
    None when the harness did not send it.
    """

    harness: str
    event: str
    session_id: str
    cwd: str | None
    continuing: bool
    message: str | None
    agent_id: str | None = None
    turn_id: str | None = None
    transcript_path: str | None = None

    @property
    def subagent(self) -> bool:
        return _STOP_EVENTS.get(self.event, False)

    def to_dict(self) -> dict[str, Any]:
        """The event as recorded (the message itself is not: see the decision's ``claim``)."""
        return {"harness": self.harness, "hook_event_name": self.event,
                "session_id": self.session_id, "agent_id": self.agent_id,
                "turn_id": self.turn_id, "cwd": self.cwd, "continuing": self.continuing,
                "transcript_path": self.transcript_path}


@dataclass(frozen=True, slots=True)
class ShellEvent:
    """A shell command the agent ran, as its harness reported it afterwards.

    ``outcome`` is ``succeeded``, ``failed``, ``interrupted`` or ``unknown``;
    ``exit_code`` is the code the harness stated, or None.
    """

    harness: str
    event: str
    session_id: str
    cwd: str | None
    command: str
    outcome: str
    exit_code: int | None
    tool_use_id: str | None = None
    agent_id: str | None = None
    duration_ms: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"harness": self.harness, "hook_event_name": self.event,
                "session_id": self.session_id, "agent_id": self.agent_id, "cwd": self.cwd,
                "tool_use_id": self.tool_use_id, "command": self.command,
                "reported": {"outcome": self.outcome, "exit_code": self.exit_code,
                             "duration_ms": self.duration_ms}}


def _invalid(message: str, where: str | None = None) -> AssayError:
    return AssayError(f"the hook payload is not one a harness sends: {message}",
                      code="hook_payload_invalid", pointer=where,
                      action="Check the hook entry: it must pass the harness's JSON payload on "
                             "standard input (see 'assay hook doctor').")


def decode_payload(raw: bytes | str | dict[str, Any]) -> dict[str, Any]:
    """The payload as a JSON object: strict JSON text (a leading byte-order mark is dropped)."""
    if isinstance(raw, dict):
        return raw
    from assay.canonical import parse

    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogatepass")
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    if not raw.strip():
        raise _invalid("standard input is empty")
    try:
        value = parse(raw)
    except AssayError as exc:
        raise _invalid(exc.message, exc.pointer) from None
    if not isinstance(value, dict):
        raise _invalid("it is not a JSON object")
    return value


def detect_harness(payload: dict[str, Any]) -> str:
    """The harness that sent ``payload``: Cursor's ids, Codex's turn id, else Claude Code."""
    if "conversation_id" in payload or "workspace_roots" in payload:
        return "cursor"
    if "turn_id" in payload:
        return "codex"
    return "claude-code"


def _text(payload: dict[str, Any], key: str, *, required: bool = False,
          limit: int | None = None) -> str | None:
    value = payload.get(key)
    if value is None:
        if required:
            raise _invalid(f"{key} is missing", pointer(key))
        return None
    if not isinstance(value, str) or (required and not value):
        raise _invalid(f"{key} must be a non-empty string", pointer(key))
    if limit is not None and len(value) > limit:
        raise _invalid(f"{key} is longer than {limit} characters", pointer(key))
    return value


def _flag(payload: dict[str, Any], key: str) -> bool:
    value = payload.get(key, False)
    if not isinstance(value, bool):
        raise _invalid(f"{key} must be true or false", pointer(key))
    return value


def _cursor_cwd(payload: dict[str, Any]) -> str | None:
    cwd = _text(payload, "cwd")
    if cwd:
        return cwd
    roots = payload.get("workspace_roots")
    if roots is None:
        return None
    if not isinstance(roots, list) or not all(isinstance(r, str) for r in roots):
        raise _invalid("workspace_roots must be a list of paths", "/workspace_roots")
    return roots[0] if roots else None


def _harness(payload: dict[str, Any], harness: str | None) -> str:
    if harness is None:
        return detect_harness(payload)
    if harness not in HARNESSES:
        raise AssayError(f"unknown harness {harness!r}; one of {', '.join(HARNESSES)}",
                         code="invalid_argument", pointer="/harness")
    return harness


def parse_stop(raw: bytes | str | dict[str, Any], harness: str | None = None) -> StopEvent:
    """The stop event in ``raw`` (``hook_payload_invalid`` when it is not one)."""
    payload = decode_payload(raw)
    name = _harness(payload, harness)
    event = _text(payload, "hook_event_name", required=True)
    if event not in _STOP_EVENTS:
        raise _invalid(f"hook_event_name {event!r} is not a stop event", "/hook_event_name")
    message = _text(payload, "last_assistant_message")
    if name == "cursor":
        loops = payload.get("loop_count", 0)
        if not isinstance(loops, int) or isinstance(loops, bool) or loops < 0:
            raise _invalid("loop_count must be a whole number", "/loop_count")
        return StopEvent(
            harness=name, event=event,
            session_id=str(_text(payload, "conversation_id", required=True,
                                 limit=_MAX_ID_CHARS)),
            cwd=_cursor_cwd(payload), continuing=loops > 0, message=message,
            agent_id=_text(payload, "agent_id", limit=_MAX_ID_CHARS)
            or _text(payload, "subagent_id", limit=_MAX_ID_CHARS),
            transcript_path=_text(payload, "transcript_path"))
    agent_id = _text(payload, "agent_id", limit=_MAX_ID_CHARS)
    if _STOP_EVENTS[event] and agent_id is None:
        raise _invalid("a SubagentStop payload names its agent_id", "/agent_id")
    return StopEvent(
        harness=name, event=event,
        session_id=str(_text(payload, "session_id", required=True, limit=_MAX_ID_CHARS)),
        cwd=_text(payload, "cwd"), continuing=_flag(payload, "stop_hook_active"),
        message=message, agent_id=agent_id, turn_id=_text(payload, "turn_id"),
        transcript_path=_text(payload, "transcript_path"))


@dataclass(frozen=True, slots=True)
class Salvage:
    """What a stop payload that cannot be read still says: each fact None when it does not."""

    harness: str | None = None
    session_id: str | None = None
    continuing: bool | None = None
    cwd: str | None = None


def _field(raw: bytes, key: str) -> str | None:
    # Outside a JSON string a quote is never escaped, so a match not preceded
    # by a backslash is a key, not text inside the agent's message.
    match = re.search(rb'(?<!\\)"' + key.encode() + rb'"\s*:\s*"((?:[^"\\]|\\.){1,1024})"', raw)
    if match is None:
        return None
    import json

    try:
        value = json.loads(b'"' + match.group(1) + b'"')
    except ValueError:
        return None
    return value if isinstance(value, str) and value else None


def salvage_stop(raw: Any, harness: str | None) -> Salvage:
    """The session, run and directory a stop payload names, read as far as it can be.

    For a payload that fails :func:`parse_stop` (too large, not strict JSON,
    a field of the wrong type): an object's own fields where they have the
    right type, else the first occurrence of each key in the bytes kept.
    Used only to count such payloads per session; never to decide.
    """
    if isinstance(raw, dict):
        text = {k: raw.get(k) for k in ("session_id", "conversation_id", "cwd", "hook_event_name",
                                        "stop_hook_active", "loop_count", "turn_id")}
        session = text["session_id"] if isinstance(text["session_id"], str) else None
        if isinstance(text["conversation_id"], str):
            session = session or text["conversation_id"]
        active = text["stop_hook_active"]
        loops = text["loop_count"]
        continuing = active if isinstance(active, bool) else (
            loops > 0 if isinstance(loops, int) and not isinstance(loops, bool) else None)
        name = harness or detect_harness(raw)
        cwd = text["cwd"] if isinstance(text["cwd"], str) else None
        return Salvage(name, session[:_MAX_ID_CHARS] if session else None, continuing, cwd)
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogatepass")
    if not isinstance(raw, bytes):
        return Salvage(harness)
    cursor = b'"conversation_id"' in raw or b'"workspace_roots"' in raw
    session = _field(raw, "conversation_id" if cursor else "session_id")
    active = re.search(rb'(?<!\\)"stop_hook_active"\s*:\s*(true|false)', raw)
    loops = re.search(rb'(?<!\\)"loop_count"\s*:\s*(\d{1,9})', raw)
    continuing = (active.group(1) == b"true") if active else (
        int(loops.group(1)) > 0 if loops else None)
    name = harness or ("cursor" if cursor else "codex" if b'"turn_id"' in raw else "claude-code")
    return Salvage(name, session[:_MAX_ID_CHARS] if session else None, continuing,
                   _field(raw, "cwd"))


def _stated_exit(text: Any) -> int | None:
    if not isinstance(text, str):
        return None
    match = _EXIT_LINE.search(text)
    return int(match.group(1)) if match else None


def _object_exit(value: Any) -> int | None:
    if isinstance(value, dict):
        for key in ("exit_code", "exitCode"):
            code = value.get(key)
            if isinstance(code, int) and not isinstance(code, bool):
                return code
    return None


def _outcome_of(code: int | None) -> str:
    return "unknown" if code is None else "succeeded" if code == 0 else "failed"


def parse_shell(raw: bytes | str | dict[str, Any], harness: str | None = None
                ) -> ShellEvent | None:
    """The shell command in a post-tool payload, or None when the tool was not a shell."""
    payload = decode_payload(raw)
    name = _harness(payload, harness)
    event = _text(payload, "hook_event_name", required=True)
    duration = payload.get("duration") if name == "cursor" else payload.get("duration_ms")
    duration_ms = duration if isinstance(duration, int) and not isinstance(duration, bool) else None
    if name == "cursor":
        if event != "afterShellExecution":
            return None
        command = _text(payload, "command", required=True)
        code = _object_exit(payload)
        if code is None:
            code = _stated_exit(payload.get("output"))
        return ShellEvent(harness=name, event=event,
                          session_id=str(_text(payload, "conversation_id", required=True,
                                               limit=_MAX_ID_CHARS)),
                          cwd=_cursor_cwd(payload), command=str(command),
                          outcome=_outcome_of(code), exit_code=code,
                          tool_use_id=_text(payload, "generation_id", limit=_MAX_ID_CHARS),
                          duration_ms=duration_ms)
    if event not in ("PostToolUse", "PostToolUseFailure"):
        return None
    if payload.get("tool_name") not in _SHELL_TOOLS:
        return None
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        raise _invalid("tool_input must be an object", "/tool_input")
    command = _text(tool_input, "command", required=True)
    response = payload.get("tool_response")
    if event == "PostToolUseFailure":
        code = _stated_exit(payload.get("error"))
        outcome = "interrupted" if payload.get("is_interrupt") is True else "failed"
    else:
        code = _object_exit(response)
        if code is None:
            code = _stated_exit(response)
        if isinstance(response, dict) and response.get("interrupted") is True:
            outcome = "interrupted"
        elif name == "claude-code" and code is None:
            outcome = "succeeded"  # Claude Code runs PostToolUse only after a success
        else:
            outcome = _outcome_of(code)
    return ShellEvent(harness=name, event=event,
                      session_id=str(_text(payload, "session_id", required=True,
                                           limit=_MAX_ID_CHARS)),
                      cwd=_text(payload, "cwd"), command=str(command), outcome=outcome,
                      exit_code=code, tool_use_id=_text(payload, "tool_use_id",
                                                        limit=_MAX_ID_CHARS),
                      agent_id=_text(payload, "agent_id", limit=_MAX_ID_CHARS),
                      duration_ms=duration_ms)


def stop_answer(harness: str, reason: str | None, notice: str | None = None
                ) -> dict[str, Any] | None:
    """What the harness reads on standard output: a block with ``reason``, or None to allow.

    ``notice`` is for the person, not the agent (the gate gave up, or could
    not record its decision): Claude Code and Codex show ``systemMessage`` to
    the user as a warning. Cursor's stop answer has no such field (only
    ``followup_message``, which the agent reads), so there the notice is left
    to the caller (the command line prints it on standard error, which Cursor
    keeps in its hooks output).
    """
    if harness == "cursor":
        return {"followup_message": reason} if reason is not None else None
    answer: dict[str, Any] = {"decision": "block", "reason": reason} if reason is not None else {}
    if notice:
        answer["systemMessage"] = notice
    return answer or None

