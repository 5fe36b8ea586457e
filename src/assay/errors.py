"""Errors: the one exception family every surface renders the same way.

This module imports nothing of assay, so every other module may import it.

Hierarchy (each class fixes an exit status; each instance carries a stable
snake_case ``code``)::

    AssayError                      exit 1   the input or content is invalid
    ├── UsageError                  exit 2   the call itself is malformed
    ├── ConflictError               exit 3   a precondition no longer holds
    │   ├── RevisionConflict                 ``current_revision`` attribute
    │   ├── RequestConflict
    │   ├── EpochConflict
    │   └── ReadRevisionConflict             ``current_ledger_revision``
    └── UnavailableError            exit 4   a store or source cannot be reached

A few codes carry their own status whatever class raises them
(:data:`EXIT_BY_CODE`, the one table of them): exit 5 when the project is
not set up for the call (no project, a broken ``assay.toml``, no ledger, a
feature switched off), exit 6 when a named thing is not there (a record, an
intent, a todo, a loop, a file), exit 130 when the call was interrupted. So
exit 1 keeps one meaning for a caller such as a CI step: the answer is "not
ready", or the content is invalid.

Outcomes are data, not exceptions: a failing check or an unready report is a
field of a result. An exception means the operation could not be performed,
and a rejected write has changed nothing.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar

__all__ = [
    "EXIT_ABORTED",
    "EXIT_BY_CODE",
    "EXIT_CONFLICT",
    "EXIT_INTERNAL",
    "EXIT_NEGATIVE",
    "EXIT_NOT_FOUND",
    "EXIT_OK",
    "EXIT_SETUP",
    "EXIT_UNAVAILABLE",
    "EXIT_USAGE",
    "AssayError",
    "ConflictError",
    "EpochConflict",
    "ReadRevisionConflict",
    "RequestConflict",
    "RevisionConflict",
    "UnavailableError",
    "UsageError",
    "pointer",
]

EXIT_OK = 0
EXIT_NEGATIVE = 1
EXIT_USAGE = 2
EXIT_CONFLICT = 3
EXIT_UNAVAILABLE = 4
EXIT_SETUP = 5
EXIT_NOT_FOUND = 6
EXIT_INTERNAL = 70
EXIT_ABORTED = 130

# Codes whose exit status is not their class's; every surface that has exit
# statuses reads it from here (through ``AssayError.exit_code``).
EXIT_BY_CODE: dict[str, int] = {
    # The project, its configuration or its ledger is not set up for the call.
    **dict.fromkeys((
        "project_not_found", "invalid_config", "invalid_db_url", "ledger_not_found",
        "memory_disabled", "gate_disabled", "recovery_disabled", "evidence_command_disabled",
        "discriminate_unavailable", "attest_unavailable", "roles_need_postgres",
    ), EXIT_SETUP),
    # A thing the call names is not there (or not readable by the caller).
    **dict.fromkeys((
        "record_not_found", "source_not_found", "intent_not_found", "not_an_intent_record",
        "intent_out_of_scope", "intent_not_current", "unknown_decision_event",
        "evidence_target_not_found", "unknown_evidence_command", "unknown_ref",
        "goal_not_found", "todo_not_found", "session_not_found", "state_unavailable",
        "gate_not_found", "packet_not_found", "file_not_found", "key_not_found",
        "role_not_found",
    ), EXIT_NOT_FOUND),
    "aborted": EXIT_ABORTED,
}

# Compiled (and cached by re) with the first error a call makes: most make none.
_CODE = r"^[a-z][a-z0-9_]{0,127}$|^[A-Z][A-Z0-9_]{0,127}$"
_MESSAGE_LIMIT = 2048


def pointer(*parts: str | int) -> str:
    """Build an RFC 6901 JSON pointer from path parts (``pointer("a", 0)`` is ``/a/0``)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


class AssayError(Exception):
    """An operation could not be performed.

    Args:
        code: stable snake_case identifier callers may branch on.
        message: one human sentence; bounded to 2,048 bytes when rendered.
        pointer: RFC 6901 pointer of the field at fault, when one is.
        retryable: whether the same call may succeed later unchanged.
        action: what to do next, for a person or an agent.
        details: extra structured data (JSON values only).
    """

    # The class's status; an instance's is EXIT_BY_CODE's for its code, if listed.
    exit_code: int = EXIT_NEGATIVE
    default_code: ClassVar[str] = "invalid_input"
    default_retryable: ClassVar[bool] = False

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        pointer: str | None = None,
        retryable: bool | None = None,
        action: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code or self.default_code
        if not re.match(_CODE, self.code):
            raise ValueError(f"malformed error code {self.code!r}")
        self.exit_code = EXIT_BY_CODE.get(self.code, type(self).exit_code)
        self.message = message
        self.pointer = pointer
        self.retryable = self.default_retryable if retryable is None else retryable
        self.action = action
        self.details = dict(details or {})

    def to_dict(self) -> dict[str, Any]:
        """Return the error object every surface prints."""
        # Messages quote user input, and argv or JSON escapes can carry lone
        # surrogates, which UTF-8 cannot encode: they are spelled as \udcff
        # escapes so every surface can print the error object.
        message = _printable(self.message)
        raw = message.encode("utf-8")
        if len(raw) > _MESSAGE_LIMIT:
            message = raw[: _MESSAGE_LIMIT - 3].decode("utf-8", "ignore") + "..."
        out: dict[str, Any] = {"code": self.code, "message": message, "retryable": self.retryable}
        if self.pointer is not None:
            out["pointer"] = _printable(self.pointer)
        if self.action is not None:
            out["action"] = _printable(self.action)
        if self.details:
            out["details"] = _printable(self.details)
        return out

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r})"


def _printable(value: Any) -> Any:
    """``value`` with every string made UTF-8-encodable (lone surrogates escaped)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
        return value
    if isinstance(value, dict):
        return {_printable(k): _printable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_printable(v) for v in value]
    return value


class UsageError(AssayError):
    """The call is malformed: unknown option, missing argument, bad combination."""

    exit_code = EXIT_USAGE
    default_code = "usage_error"


class ConflictError(AssayError):
    """A precondition of the call no longer holds; re-read and decide again."""

    exit_code = EXIT_CONFLICT
    default_code = "conflict"


class RevisionConflict(ConflictError):
    """The record is not at the expected revision."""

    default_code = "revision_conflict"

    def __init__(self, message: str, *, record_id: str, current_revision: int, **kw: Any) -> None:
        details = {"id": record_id, "current_revision": current_revision, **kw.pop("details", {})}
        kw.setdefault("action", "Read the record again, then retry with its current revision.")
        super().__init__(message, details=details, **kw)
        self.record_id = record_id
        self.current_revision = current_revision


class RequestConflict(ConflictError):
    """The request id was already used with a different body."""

    default_code = "request_conflict"


class EpochConflict(ConflictError):
    """The write basis came from another ledger."""

    default_code = "epoch_conflict"


class ReadRevisionConflict(ConflictError):
    """The ledger moved past the revision the caller pinned the read to."""

    default_code = "read_revision_conflict"
    default_retryable = True

    def __init__(self, message: str, *, current_ledger_revision: int, **kw: Any) -> None:
        details = {"current_ledger_revision": current_ledger_revision, **kw.pop("details", {})}
        kw.setdefault("action", "Read again without --at-revision, or at the current revision.")
        super().__init__(message, details=details, **kw)
        self.current_ledger_revision = current_ledger_revision


class UnavailableError(AssayError):
    """A store, file or command the operation needs cannot be reached."""

    exit_code = EXIT_UNAVAILABLE
    default_code = "unavailable"
    default_retryable = True
