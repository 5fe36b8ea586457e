"""Bounded reads: fitting whole items into a page, and cutting text at character boundaries.

Every agent-facing read returns at most its declared bound (``docs/agents.md``,
section "Bounded reads"). A bound drops whole items and counts them; it never
shortens the text of an item it returns. This module holds the two pieces of
that policy the capabilities share:

- :func:`fit`: walks candidate items in order and keeps the longest run
  that fits an item count and a byte budget on the canonical JSON of the
  whole answer. An item that could not fit even alone is kept aside for an
  exact read of its own, so one oversized item never blocks a listing.
- :func:`utf8_tail`: the last bytes of a text, starting on a character
  boundary (output tails, which are excerpts of a stream by nature).

Sizes are bytes of RFC 8785 canonical JSON, the form every surface prints.
Imports only :mod:`assay.canonical`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from assay.canonical import canonical_bytes
from assay.value import frozen_value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Generic, TypeVar

    T = TypeVar("T")
else:
    T = None

    class Generic:
        """``typing.Generic`` for type checkers (see assay.value): a base that takes any parameter."""

        __slots__ = ()

        def __class_getitem__(cls, _parameters: object) -> type:
            return cls

__all__ = [
    "DEFAULT_PAGE_BYTES",
    "MAX_PAGE_BYTES",
    "MIN_PAGE_BYTES",
    "Fitted",
    "encoded_size",
    "fit",
    "page_facts",
    "utf8_tail",
]

# The byte budget of a listing page unless a read declares its own, the most a
# caller may ask for, and the least (enough for the page's counts and reads).
DEFAULT_PAGE_BYTES = 64 * 1024
MAX_PAGE_BYTES = 16 * 1024 * 1024
MIN_PAGE_BYTES = 4096

# What one exact read of an oversized item adds to an answer, at most (its
# argument array, arguments object and reason); the final size check corrects
# any error in this estimate.
_EXACT_READ_BYTES = 512


def encoded_size(value: Any) -> int:
    """Bytes of ``value`` as canonical JSON."""
    return len(canonical_bytes(value))


@frozen_value
class Fitted(Generic[T]):
    """What :func:`fit` chose, in candidate order.

    ``shown`` are the items the answer holds; ``oversized`` the items that
    exceed the byte budget on their own (each needs an exact read);
    ``last`` is the last candidate walked (the cursor of the next page), or
    None when nothing was walked; ``rest`` counts the candidates after it.
    """

    document: dict[str, Any]
    shown: tuple[T, ...]
    oversized: tuple[T, ...]
    last: T | None
    rest: int


def fit(candidates: Sequence[T], build: Callable[[Sequence[T], Sequence[T], int], dict[str, Any]],
        *, limit: int | None, max_bytes: int | None,
        size: Callable[[T], int]) -> Fitted[T]:
    """The longest run of ``candidates`` that fits ``limit`` items and ``max_bytes`` bytes.

    ``build(shown, oversized, rest)`` assembles the whole answer for a
    choice (``rest``: candidates not walked); ``size(item)`` estimates what
    one item adds to it. Candidates are walked in order; at most ``limit`` are
    walked (shown or oversized), and the walk stops at the first item that
    would overflow the budget. The answer is then measured, and the last
    walked items are given back until it fits; the first one is never given
    back but turned into an exact read, so every page with candidates walks
    at least one (following the pages always ends). The result exceeds
    ``max_bytes`` only when a page holding one exact read does. None means
    unbounded.
    Cost: one ``size`` per walked item and usually one ``build``.
    """
    base = encoded_size(build((), (), len(candidates)))
    walked: list[tuple[T, bool]] = []
    used = base
    for item in candidates:
        if limit is not None and len(walked) >= limit:
            break
        if max_bytes is None:
            walked.append((item, True))
            continue
        cost = size(item)
        if base + cost > max_bytes:
            walked.append((item, False))
            used += _EXACT_READ_BYTES
            continue
        if used + cost > max_bytes:
            break
        walked.append((item, True))
        used += cost

    def assemble() -> dict[str, Any]:
        return build([i for i, fits in walked if fits], [i for i, fits in walked if not fits],
                     len(candidates) - len(walked))

    document = assemble()
    while max_bytes is not None and walked and encoded_size(document) > max_bytes:
        if len(walked) > 1:
            walked.pop()
        elif walked[0][1]:
            # The one item left does not fit after all (the estimate was
            # short): it becomes an exact read, so the page still moves the
            # walk on. An empty page would name itself as the next one.
            walked[0] = (walked[0][0], False)
        else:
            break
        document = assemble()
    return Fitted(document=document,
                  shown=tuple(i for i, fits in walked if fits),
                  oversized=tuple(i for i, fits in walked if not fits),
                  last=walked[-1][0] if walked else None,
                  rest=len(candidates) - len(walked))


def page_facts(omitted: dict[str, int], reads: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The fields every bounded read carries: ``complete``, ``truncated``, ``omitted``, ``read_more``.

    ``omitted`` counts, by kind, what the read was asked for and left out
    (zero counts included, so the shape is stable); ``read_more`` holds the
    reads that recover exactly those items. ``complete`` is true when every
    count is zero.
    """
    complete = not any(omitted.values())
    return {"complete": complete, "truncated": not complete, "omitted": dict(omitted),
            "read_more": list(reads)}


def utf8_tail(text: str, max_bytes: int) -> tuple[str, int]:
    """The last at most ``max_bytes`` bytes of ``text`` (as UTF-8), starting on a character.

    Returns the tail and how many bytes were left out before it. Never splits
    a UTF-8 sequence: a cut that would land inside one moves forward to the
    next character.
    """
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text, 0
    start = len(data) - max_bytes
    while start < len(data) and 0x80 <= data[start] <= 0xBF:
        start += 1
    return data[start:].decode("utf-8", "surrogatepass"), start
