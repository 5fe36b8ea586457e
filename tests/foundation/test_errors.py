"""The error family: one object shape, exit statuses by class, bounded messages, code pattern."""

from __future__ import annotations

import json

import pytest

from assay import errors
from assay.errors import (
    AssayError,
    ConflictError,
    EpochConflict,
    ReadRevisionConflict,
    RequestConflict,
    RevisionConflict,
    UnavailableError,
    UsageError,
    pointer,
)


def test_error_to_dict_minimal_shape() -> None:
    """A bare error renders code, message and retryable, and nothing else."""
    assert AssayError("bad thing", code="bad_thing").to_dict() == {
        "code": "bad_thing", "message": "bad thing", "retryable": False,
    }


def test_error_to_dict_full_shape() -> None:
    """Pointer, action and details appear when given, and the object is plain JSON."""
    err = AssayError("bad", code="bad_field", pointer="/a/0", action="Fix it.",
                     details={"limit": 3}, retryable=True)
    out = err.to_dict()
    assert out == {"code": "bad_field", "message": "bad", "retryable": True, "pointer": "/a/0",
                   "action": "Fix it.", "details": {"limit": 3}}
    assert json.loads(json.dumps(out)) == out


def test_error_default_codes_per_class() -> None:
    """Each class has a default snake_case code."""
    assert AssayError("x").code == "invalid_input"
    assert UsageError("x").code == "usage_error"
    assert ConflictError("x").code == "conflict"
    assert RequestConflict("x").code == "request_conflict"
    assert EpochConflict("x").code == "epoch_conflict"
    assert UnavailableError("x").code == "unavailable"


@pytest.mark.parametrize(
    ("err", "status"),
    [
        (AssayError("x"), 1),
        (UsageError("x"), 2),
        (ConflictError("x"), 3),
        (RevisionConflict("x", record_id="k:a", current_revision=2), 3),
        (RequestConflict("x"), 3),
        (EpochConflict("x"), 3),
        (ReadRevisionConflict("x", current_ledger_revision=9), 3),
        (UnavailableError("x"), 4),
    ],
)
def test_error_exit_status_by_class(err: AssayError, status: int) -> None:
    """Invalid content exits 1, usage 2, conflicts 3, unavailable 4."""
    assert err.exit_code == status


def test_error_exit_constants() -> None:
    """The exit status constants are the documented numbers."""
    assert (errors.EXIT_OK, errors.EXIT_NEGATIVE, errors.EXIT_USAGE, errors.EXIT_CONFLICT,
            errors.EXIT_UNAVAILABLE, errors.EXIT_INTERNAL) == (0, 1, 2, 3, 4, 70)


def test_error_retryable_defaults() -> None:
    """Unavailable and read-revision conflicts are retryable by default; others are not."""
    assert UnavailableError("x").retryable is True
    assert ReadRevisionConflict("x", current_ledger_revision=1).retryable is True
    assert RevisionConflict("x", record_id="k:a", current_revision=1).retryable is False
    assert UnavailableError("x", retryable=False).retryable is False


def test_revision_conflict_carries_data() -> None:
    """A revision conflict carries the record id and current revision as attributes and details."""
    err = RevisionConflict("moved", record_id="knowledge:a", current_revision=4)
    assert (err.record_id, err.current_revision) == ("knowledge:a", 4)
    assert err.to_dict()["details"] == {"id": "knowledge:a", "current_revision": 4}
    assert err.action


def test_read_revision_conflict_carries_data() -> None:
    """A read-revision conflict carries the current ledger revision."""
    err = ReadRevisionConflict("moved on", current_ledger_revision=12)
    assert err.current_ledger_revision == 12
    assert err.to_dict()["details"] == {"current_ledger_revision": 12}


def test_error_message_bounded_to_2048_bytes() -> None:
    """A long message renders in at most 2,048 UTF-8 bytes, cut on a character boundary."""
    err = AssayError("€" * 5000, code="long")
    message = err.to_dict()["message"]
    assert len(message.encode("utf-8")) <= 2048
    assert message.endswith("...")
    assert err.message == "€" * 5000


def test_error_short_message_unchanged() -> None:
    """A message within the bound is rendered unchanged."""
    assert AssayError("a" * 2048, code="ok_length").to_dict()["message"] == "a" * 2048


@pytest.mark.parametrize("code", ["invalid_id", "a", "x9_y", "APPROVAL_FINGERPRINT_MISMATCH"])
def test_error_accepts_well_formed_codes(code: str) -> None:
    """Codes are snake_case (or the packet validator's UPPER_SNAKE)."""
    assert AssayError("x", code=code).code == code


@pytest.mark.parametrize("code", ["Invalid", "9lives", "has-dash", "has space", "mixed_Case",
                                  "a" * 129])
def test_error_rejects_malformed_codes(code: str) -> None:
    """A malformed code is a programming error, caught at construction."""
    with pytest.raises(ValueError):
        AssayError("x", code=code)


@pytest.mark.parametrize(
    ("parts", "expected"),
    [((), ""), (("a", 0), "/a/0"), (("a/b", "m~n"), "/a~1b/m~0n"), (("",), "/")],
)
def test_pointer_builds_rfc6901(parts: tuple[str | int, ...], expected: str) -> None:
    """pointer() escapes ~ and / as RFC 6901 requires."""
    assert pointer(*parts) == expected


def test_errors_module_imports_nothing_of_assay() -> None:
    """assay.errors is the base of the import graph: it imports no other assay module."""
    import ast
    from pathlib import Path

    tree = ast.parse(Path(errors.__file__).read_text(encoding="utf-8"))
    imported = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)] + [
        a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not [m for m in imported if m and m.startswith("assay")]
