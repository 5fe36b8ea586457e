"""Success claims in an agent's message: a fixed list of phrases, no model.

:func:`success_claims` finds the phrases by which an agent says its work is
finished and proven: tests pass, done, complete, verified, fixed, works,
ready for review, implemented. A phrase does not count when the sentence
around it negates it before it ("not yet verified", "tests are still
failing, nothing is fixed") or asks it ("is it fixed?"). The result is the
same for the same text, always. The stop gate never decides on it: the
phrases found only shape the wording of a block's reason ("Your last
message says ..., but ..."), so a false positive or a missed phrase changes
words, never the decision.

Imports nothing of assay.
"""

from __future__ import annotations

import re

__all__ = ["MAX_MESSAGE_CHARS", "success_claims"]

# Only the end of a very long message is read: an agent sums up last.
MAX_MESSAGE_CHARS = 20_000

_CLAIMS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (label, re.compile(pattern, re.IGNORECASE)) for label, pattern in (
        ("tests pass", (r"\b(?:tests?|specs?|suites?|checks?|builds?|ci)\b(?:\s+(?:are|is|now|"
                        r"all|still|have|has|were|was))*\s+(?:pass(?:es|ed|ing)?|green|"
                        r"succeed(?:s|ed)?)\b")),
        ("tests pass", r"\ball\s+(?:\w+\s+){0,2}(?:tests?|checks?)\s+(?:\w+\s+){0,2}pass\w*"),
        ("tests pass", r"\b(?:passing|green)\s+(?:tests?|suite|build|ci)\b"),
        ("done", (r"\b(?:i\s+am|i'm|i've|it's|it\s+is|we're|we\s+are|everything(?:'s|\s+is)|"
                  r"all|work\s+is|task\s+is|that's|this\s+is|now|am)\s+(?:all\s+)?done\b")),
        ("done", r"(?:^|[\n.!]\s*)done\b"),
        ("complete", r"\b(?:is|are|now|fully|all)\s+(?:\w+\s+)?complete(?:d)?\b"),
        ("complete", r"\b(?:i|we)(?:'ve|\s+have)?\s+completed\b"),
        ("verified", r"\b(?:verified|confirmed)\b"),
        ("fixed", r"\b(?:fixed|resolved)\b"),
        ("works", r"\b(?:it|everything|this|that|the\s+\w+)\s+(?:now\s+)?works\b"),
        ("works", r"\bworks\s+(?:now|correctly|as\s+expected)\b"),
        ("ready for review", r"\bready\s+(?:for|to)\s+(?:review|merge|ship)\w*\b"),
        ("implemented", r"\b(?:successfully|fully)\s+implemented\b"),
        ("implemented", r"\b(?:i|we)(?:'ve|\s+have)\s+implemented\b"),
    ))
_NEGATOR = re.compile(
    r"\b(?:not|never|no|nothing|none|cannot|unable|yet|without|fail\w*|broken|"
    r"still)\b|n't\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?\n]")
_CLAUSE_START = re.compile(r"[.!?\n;:,]")
# How far before a phrase a negating word still belongs to it (within its clause).
_NEGATION_WINDOW = 40


def _negated(text: str, start: int, phrase: str) -> bool:
    window = text[max(0, start - _NEGATION_WINDOW):start]
    clause = _CLAUSE_START.split(window)[-1]
    return bool(_NEGATOR.search(clause) or _NEGATOR.search(phrase))


def _asked(text: str, end: int) -> bool:
    after = _SENTENCE_END.search(text, end)
    return after is not None and after.group(0) == "?"


def success_claims(message: str | None) -> list[dict[str, str]]:
    """The success claims in ``message``, in order: ``[{claim, phrase}]`` (empty: none).

    ``claim`` is one of the labels above; ``phrase`` the words that made it.
    Deterministic; reads at most the last :data:`MAX_MESSAGE_CHARS` characters.
    """
    if not message:
        return []
    text = message[-MAX_MESSAGE_CHARS:]
    found: list[tuple[int, int, str, str]] = []
    for label, pattern in _CLAIMS:
        for match in pattern.finditer(text):
            start, end = match.span()
            if _asked(text, end) or _negated(text, start, match.group(0)):
                continue
            found.append((start, -end, label, match.group(0).strip(" \n.!")))
    found.sort()
    reach: dict[str, int] = {}  # per claim, where its last phrase ended: overlaps say it once
    out = []
    for start, neg_end, label, phrase in found:
        if start < reach.get(label, -1):
            continue
        reach[label] = -neg_end
        out.append({"claim": label, "phrase": phrase})
    return out
