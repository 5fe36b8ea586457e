"""Bounded reading of the inputs a call names: a file path, or ``-`` for standard input.

Every document assay reads from outside is read at most one byte past
:data:`MAX_INPUT_BYTES` (the ledger's data limit), so a hostile input (a huge
file, ``/dev/zero``, an endless pipe) is refused with ``resource_limit``
instead of filling memory. A regular file is refused from its size alone.
Imports only :mod:`assay.errors`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from assay.errors import AssayError, UsageError

__all__ = ["MAX_INPUT_BYTES", "read_bounded", "read_stdin_bounded"]

MAX_INPUT_BYTES = 4 * 1024 * 1024


def _too_large(label: str, where: str, size: int | None, limit: int = MAX_INPUT_BYTES) -> AssayError:
    return AssayError(
        f"{label} is larger than {limit} bytes, the input limit",
        code="resource_limit", pointer=where,
        details={"limit_bytes": limit, **({"size_bytes": size} if size is not None else {})},
        action="Store large content as files and record their digests.",
    )


def read_stdin_bounded(read: Callable[[int], bytes] | None = None, *, label: str = "standard input",
                       where: str | None = None) -> bytes:
    """Standard input, at most :data:`MAX_INPUT_BYTES` (else ``resource_limit``)."""
    raw = (read or sys.stdin.buffer.read)(MAX_INPUT_BYTES + 1)
    if len(raw) > MAX_INPUT_BYTES:
        raise _too_large(label, where or "", None)
    return raw


def read_bounded(path: str, *, where: str, label: str,
                 stdin: Callable[[int], bytes] | None = None,
                 limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of ``path`` (``-`` is standard input), at most ``limit`` bytes.

    An unreadable path is ``file_unreadable`` (a usage error) with ``where``
    as its pointer; an oversized input is ``resource_limit``.
    """
    if path == "-":
        return read_stdin_bounded(stdin, label=label, where=where)
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > limit:
                raise _too_large(label, where, size, limit)
            raw = handle.read(limit + 1)
    except OSError as exc:
        raise UsageError(f"cannot read {label} {path}: {exc.strerror}",
                         code="file_unreadable", pointer=where) from None
    except ValueError as exc:  # a NUL in the path
        raise UsageError(f"cannot read {label}: {exc}", code="file_unreadable",
                         pointer=where) from None
    if len(raw) > limit:
        raise _too_large(label, where, None, limit)
    return raw
