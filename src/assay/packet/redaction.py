"""Secret-safe persistence: detecting raw secrets and checking redacted excerpts.

A persisted excerpt must never hold a raw secret, whatever its evidence state
(a stale excerpt is still persisted); what counts as one is the shared rule
set of :mod:`assay.redaction`, the one the evidence runner redacts with.
Redacted excerpts replace each secret with the marker ``[REDACTED]`` and
store neither the secret nor its digest; the validator checks them against
the reopened source with each marker standing for one non-empty run of
characters. Imports :mod:`assay.redaction` only.

Many excerpts are screened together (:func:`find_secrets`): joined with a
separator no rule can start in or cross, a batch where no rule fires is
clean text by text, so only a batch that fires is scanned text by text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from assay.redaction import scan

__all__ = ["REDACTION_MARKER", "find_secret", "find_secrets", "matches_redacted"]

REDACTION_MARKER = "[REDACTED]"
# Every rule begins with a literal that holds neither character, and no rule
# matches a NUL after a line break except the private-key body, whose BEGIN
# line then fires on its own: so a match never starts in the separator or
# runs through it into the next text. Each text sees a non-word character
# before it and after it, as it sees the ends of the string when alone.
_SEPARATOR = "\n\0\n"
_BATCH = 128


def find_secret(text: str) -> str | None:
    """Which secret rules fire on ``text`` (:func:`assay.redaction.scan`), or None.

    The description names rules only, never the secret or its position.
    """
    rules = scan(text)
    return f"rules: {', '.join(rules)}" if rules else None


def find_secrets(texts: Sequence[str]) -> list[str | None]:
    """:func:`find_secret` of each of ``texts``, in order.

    Screens :data:`_BATCH` texts at a time in one scan of their join; no rule
    fires on the join of clean texts, so only a batch holding a secret (or a
    join that fires across texts) is scanned again text by text.
    """
    found: list[str | None] = []
    for at in range(0, len(texts), _BATCH):
        batch = texts[at:at + _BATCH]
        if len(batch) > 1 and not scan(_SEPARATOR.join(batch)):
            found += [None] * len(batch)
        else:
            found += [find_secret(text) for text in batch]
    return found


def matches_redacted(excerpt: str, original: str) -> bool:
    """Whether ``excerpt`` equals ``original`` with each marker covering a non-empty run."""
    parts = excerpt.split(REDACTION_MARKER)
    if len(parts) == 1:
        return False
    pattern = "(?:.+?)".join(re.escape(part) for part in parts)
    return re.fullmatch(pattern, original, re.DOTALL) is not None
