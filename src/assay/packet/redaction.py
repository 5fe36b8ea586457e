"""Secret-safe persistence: screening packet text for raw secrets, checking redacted excerpts.

A persisted string must never hold a raw secret, whatever its evidence state
(a stale excerpt is still persisted); what counts as one is the shared rule
set of :mod:`assay.redaction`, the one the evidence runner redacts with, plus
whatever rule a layout adds (the recon tool's own patterns). :func:`screen`
finds the rules that fire on each of many groups of texts (one excerpt, or
every string of one document). Redacted excerpts replace each secret with
the marker ``[REDACTED]`` and store neither the secret nor its digest; the
validator checks them against the reopened source with each marker standing
for one non-empty run of characters (:func:`matches_redacted`). Imports
:mod:`assay.redaction` only.

Screening is cheap on clean text: the distinct texts of all groups are joined
with a separator (a line break, ``;``, a line break) that every rule reads as
the end of one text and the start of the next (no word character, nothing an
assignment takes as its value), so a secret in any text fires on the join;
only a join that fires is split in halves and screened again, down to the
groups that fire. Each group's answer is its own texts scanned as one
(:func:`rules`), and a property test holds the screen to it. ``sha256:``
digests match no rule and are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from itertools import chain

from assay.redaction import scan

__all__ = ["REDACTION_MARKER", "find_secret", "find_secrets", "matches_redacted", "rules",
           "screen"]

REDACTION_MARKER = "[REDACTED]"
SEPARATOR = "\n;\n"
_DIGEST = re.compile(r"sha256:[a-f0-9]{64}")

# A layout's own rule: the name it fires under for a text, or None.
Extra = Callable[[str], "str | None"]


def rules(texts: Iterable[str], extra: Extra | None = None) -> tuple[str, ...]:
    """The rules (sorted, distinct) that fire on ``texts`` scanned as one text."""
    text = SEPARATOR.join([t for t in dict.fromkeys(texts)
                           if not t.startswith("sha256:") or _DIGEST.fullmatch(t) is None])
    found = set(scan(text))
    if extra is not None:
        name = extra(text)
        if name is not None:
            found.add(name)
    return tuple(sorted(found))


def screen(groups: Sequence[Sequence[str]], extra: Extra | None = None) -> list[tuple[str, ...]]:
    """:func:`rules` of each of ``groups``, in order, in as few scans as the secrets allow."""
    found: list[tuple[str, ...]] = [()] * len(groups)
    pending = [(0, len(groups))]
    while pending:
        low, high = pending.pop()
        fired = rules(chain.from_iterable(groups[low:high]), extra)
        if not fired:
            continue
        if high - low == 1:
            found[low] = fired
        else:
            middle = (low + high) // 2
            pending += [(low, middle), (middle, high)]
    return found


def find_secret(text: str) -> str | None:
    """Which secret rules fire on ``text``, as ``rules: a, b``, or None.

    The description names rules only, never the secret or its position.
    """
    return find_secrets((text,))[0]


def find_secrets(texts: Sequence[str]) -> list[str | None]:
    """:func:`find_secret` of each of ``texts``, in order (screened together)."""
    return [f"rules: {', '.join(fired)}" if fired else None
            for fired in screen([(text,) for text in texts])]


def matches_redacted(excerpt: str, original: str) -> bool:
    """Whether ``excerpt`` equals ``original`` with each marker covering a non-empty run."""
    parts = excerpt.split(REDACTION_MARKER)
    if len(parts) == 1:
        return False
    pattern = "(?:.+?)".join(re.escape(part) for part in parts)
    return re.fullmatch(pattern, original, re.DOTALL) is not None
