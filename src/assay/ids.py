"""Identifiers: record ids (``kind:name``) and content-derived ids (``cr-1a2b3c4d``).

Imports only :mod:`assay.errors` and :mod:`assay.canonical`.
"""

from __future__ import annotations

import re

from assay.canonical import digest
from assay.errors import AssayError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "MAX_ID_BYTES",
    "MAX_PRINCIPAL_CHARS",
    "RESERVED_KINDS",
    "content_id",
    "invisible_character",
    "is_plain_record_id",
    "is_word",
    "record_kind",
    "split_record_id",
    "validate_principal",
    "validate_record_id",
]

MAX_ID_BYTES = 512
MAX_PRINCIPAL_CHARS = 128
# Kinds that only assay's own operations write (the stop gate's state, the
# checks and tests an intent relies on, and the approvals of their changes):
# a plain put, retire or supersede of one is refused.
RESERVED_KINDS = frozenset({"gate-session", "gate-binding", "gate-pin", "gate-approval"})
# Patterns are compiled (and cached by re) when first used: most calls meet
# only plain ids, which is_word and str methods check without them.
_PREFIX = r"[a-z][a-z0-9]*"
_CONTROL = r"[\x00-\x1f\x7f-\x9f\u2028\u2029]"
# Characters that change how text looks without being seen: bidirectional
# controls (U+202E makes "txt.exe" read "exe.txt") and zero-width ones (two
# ids that print the same but differ). Names a person reads must not hold them.
_INVISIBLE = (
    "[\u061c\u115f\u1160\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f"
    "\u3164\ufeff\uffa0]"
)
_LOWER = "abcdefghijklmnopqrstuvwxyz"
_WORD = _LOWER + "0123456789-"


def is_word(text: str) -> bool:
    """Whether ``text`` is ``[a-z][a-z0-9-]*``: a record kind, or a part of an operation name."""
    return text != "" and text[0] in _LOWER and not text.strip(_WORD)


def invisible_character(text: str) -> str | None:
    """The first bidirectional-control or zero-width character in ``text`` (as U+XXXX), or None."""
    match = re.search(_INVISIBLE, text)
    return None if match is None else f"U+{ord(match.group(0)):04X}"


def is_plain_record_id(text: str) -> bool:
    """Whether the string ``text`` is a valid record id of printable ASCII (the common id).

    A True answer needs no further check; False means only that
    :func:`split_record_id` must judge it (it may still be valid).
    """
    kind, sep, name = text.partition(":")
    # A valid kind, then printable ASCII only: no control, invisible or
    # surrogate character can be in it, and its bytes are its length.
    return (len(text) <= MAX_ID_BYTES and sep != "" and name != "" and name.isascii()
            and name.isprintable() and is_word(kind))


def split_record_id(record_id: Any, *, field: str = "") -> tuple[str, str]:
    """Validate a record id and return ``(kind, name)``.

    The kind is ``[a-z][a-z0-9-]*``; the name is non-empty; neither holds a
    control character; the whole id is at most 512 UTF-8 bytes. A bad id is an
    ``invalid_id`` error whose pointer is ``field`` when one is given.
    """
    if not isinstance(record_id, str):
        raise AssayError("a record id must be a string", code="invalid_id", pointer=field or None)
    kind, sep, name = record_id.partition(":")
    if is_plain_record_id(record_id):
        return kind, name
    problem = None
    if not sep:
        problem = "it has no ':' between kind and name"
    elif not is_word(kind):
        problem = "the kind must match [a-z][a-z0-9-]*"
    elif not name:
        problem = "the name after ':' is empty"
    elif re.search(_CONTROL, record_id):
        problem = "it holds a control character"
    elif not record_id.isascii() and invisible_character(record_id):
        problem = (f"it holds the invisible character {invisible_character(record_id)} "
                   "(bidirectional control or zero-width)")
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


def validate_principal(value: Any, *, field: str = "/principal") -> str:
    """Return ``value`` if it is a valid principal name, else raise ``invalid_principal``.

    One grammar for every entry point (``--as``, ``ASSAY_PRINCIPAL``,
    assay.toml, MCP, ``private:<principal>`` audiences): 1 to 128 printable
    characters, no whitespace, no bidirectional-control or zero-width
    characters, and not starting with ``-``. A principal is rendered into
    terminals, reports and goal files, so nothing in it may move or hide text.
    """
    problem = None
    if not isinstance(value, str) or not value:
        problem = "it is empty"
    elif len(value) > MAX_PRINCIPAL_CHARS:
        problem = f"it is longer than {MAX_PRINCIPAL_CHARS} characters"
    elif not value.isprintable() or any(ch.isspace() for ch in value):
        problem = "it holds a control or whitespace character"
    elif not value.isascii() and invisible_character(value):
        problem = f"it holds the invisible character {invisible_character(value)}"
    elif value.startswith("-"):
        problem = "it starts with '-'"
    # (isprintable() is False for a lone surrogate, so UTF-8 can encode any accepted name.)
    if problem:
        shown = value[:80] if isinstance(value, str) else value
        raise AssayError(
            f"invalid principal {shown!r}: {problem}",
            code="invalid_principal",
            pointer=field or None,
            action="Use a short printable name without spaces, e.g. alice or ci-bot.",
        )
    return str(value)


def record_kind(record_id: str) -> str:
    """The kind part of an already valid record id."""
    return record_id.partition(":")[0]


def content_id(prefix: str, content: Any) -> str:
    """``prefix-`` plus the first 8 hex digits of the digest of ``content``.

    The same canonical content always gives the same id, whatever its key
    order or whitespace.
    """
    if not re.fullmatch(_PREFIX, prefix):
        raise ValueError(f"malformed id prefix {prefix!r}")
    return f"{prefix}-{digest(content)[:8]}"
