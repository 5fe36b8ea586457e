"""Secret-safe persistence: detecting raw secrets and checking redacted excerpts.

A persisted excerpt must never hold a raw secret, whatever its evidence state
(a stale excerpt is still persisted); what counts as one is the shared rule
set of :mod:`assay.redaction`, the one the evidence runner redacts with.
Redacted excerpts replace each secret with the marker ``[REDACTED]`` and
store neither the secret nor its digest; the validator checks them against
the reopened source with each marker standing for one non-empty run of
characters. Imports :mod:`assay.redaction` only.
"""

from __future__ import annotations

import re

from assay.redaction import scan

__all__ = ["REDACTION_MARKER", "find_secret", "matches_redacted"]

REDACTION_MARKER = "[REDACTED]"


def find_secret(text: str) -> str | None:
    """Which secret rules fire on ``text`` (:func:`assay.redaction.scan`), or None.

    The description names rules only, never the secret or its position.
    """
    rules = scan(text)
    return f"rules: {', '.join(rules)}" if rules else None


def matches_redacted(excerpt: str, original: str) -> bool:
    """Whether ``excerpt`` equals ``original`` with each marker covering a non-empty run."""
    parts = excerpt.split(REDACTION_MARKER)
    if len(parts) == 1:
        return False
    pattern = "(?:.+?)".join(re.escape(part) for part in parts)
    return re.fullmatch(pattern, original, re.DOTALL) is not None
