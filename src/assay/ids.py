"""Identifiers: record ids (``kind:name``) and content-derived ids (``cr-1a2b3c4d``).

Imports only :mod:`assay.errors` and :mod:`assay.canonical`.
"""

from __future__ import annotations

import re
from typing import Any

from assay.canonical import digest
from assay.errors import AssayError

__all__ = ["MAX_ID_BYTES", "content_id", "record_kind", "split_record_id", "validate_record_id"]

MAX_ID_BYTES = 512
_KIND = re.compile(r"[a-z][a-z0-9-]*")
_PREFIX = re.compile(r"[a-z][a-z0-9]*")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def split_record_id(record_id: Any, *, field: str = "") -> tuple[str, str]:
    """Validate a record id and return ``(kind, name)``.

    The kind is ``[a-z][a-z0-9-]*``; the name is non-empty; neither holds a
    control character; the whole id is at most 512 UTF-8 bytes. A bad id is an
    ``invalid_id`` error whose pointer is ``field`` when one is given.
    """
    if not isinstance(record_id, str):
        raise AssayError("a record id must be a string", code="invalid_id", pointer=field or None)
    kind, sep, name = record_id.partition(":")
    problem = None
    if not sep:
        problem = "it has no ':' between kind and name"
    elif not _KIND.fullmatch(kind):
        problem = "the kind must match [a-z][a-z0-9-]*"
    elif not name:
        problem = "the name after ':' is empty"
    elif _CONTROL.search(record_id):
        problem = "it holds a control character"
    elif len(record_id.encode("utf-8", "surrogatepass")) > MAX_ID_BYTES:
        problem = f"it is longer than {MAX_ID_BYTES} bytes"
    else:
        try:
            record_id.encode("utf-8")
        except UnicodeEncodeError:
            problem = "it holds a lone surrogate"
    if problem:
        raise AssayError(
            f"invalid record id {record_id[:80]!r}: {problem}",
            code="invalid_id",
            pointer=field or None,
            action="Use an id of the form kind:name, e.g. knowledge:login-flow.",
        )
    return kind, name


def validate_record_id(record_id: Any, *, field: str = "") -> str:
    """Return ``record_id`` unchanged if valid, else raise ``invalid_id``."""
    split_record_id(record_id, field=field)
    return str(record_id)


def record_kind(record_id: str) -> str:
    """The kind part of an already valid record id."""
    return record_id.partition(":")[0]


def content_id(prefix: str, content: Any) -> str:
    """``prefix-`` plus the first 8 hex digits of the digest of ``content``.

    The same canonical content always gives the same id, whatever its key
    order or whitespace.
    """
    if not _PREFIX.fullmatch(prefix):
        raise ValueError(f"malformed id prefix {prefix!r}")
    return f"{prefix}-{digest(content)[:8]}"
