"""Secret-safe persistence: detecting raw secrets and checking redacted excerpts.

A persisted excerpt must never hold a raw secret, whatever its evidence state
(a stale excerpt is still persisted). Redacted excerpts replace each secret
with the marker ``[REDACTED]`` and store neither the secret nor its digest;
the validator checks them against the reopened source with each marker
standing for one non-empty run of characters. Imports nothing of assay.
"""

from __future__ import annotations

import re

__all__ = ["REDACTION_MARKER", "find_secret", "matches_redacted"]

REDACTION_MARKER = "[REDACTED]"

# Credential shapes with a very low false-positive rate, plus assignments of a
# long opaque value to a secret-sounding name.
_SECRET = re.compile(
    r"AKIA[0-9A-Z]{16}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----"
    r"|gh[pousr]_[A-Za-z0-9]{36,}"
    r"|github_pat_[A-Za-z0-9_]{40,}"
    r"|xox[abposr]-[A-Za-z0-9-]{10,}"
    r"|sk-[A-Za-z0-9_-]{20,}"
    r"|AIza[0-9A-Za-z_-]{35}"
    r"|(?i:(?:password|passwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token)"
    r"\s*[:=]\s*['\"]?(?!\[REDACTED\])[^\s'\"]{8,})"
)


def find_secret(text: str) -> str | None:
    """A short description of the first secret-shaped run in ``text``, or None."""
    match = _SECRET.search(text)
    if match is None:
        return None
    found = match.group(0)
    return f"{found[:4]}... ({len(found)} characters) at offset {match.start()}"


def matches_redacted(excerpt: str, original: str) -> bool:
    """Whether ``excerpt`` equals ``original`` with each marker covering a non-empty run."""
    parts = excerpt.split(REDACTION_MARKER)
    if len(parts) == 1:
        return False
    pattern = "(?:.+?)".join(re.escape(part) for part in parts)
    return re.fullmatch(pattern, original, re.DOTALL) is not None
