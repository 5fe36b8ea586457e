"""TOML text: plain TOML read without tomllib, everything else read by tomllib, strings written.

``assay.toml`` is read on every command, and nearly always holds only what
``assay init`` writes, or what people add in the same style. :func:`plain_toml`
reads that plain subset directly; anything else it declines, and
:func:`read_toml` hands it to :mod:`tomllib`, which is imported only then
(its parser and regular expressions cost a call more than the call itself).
The contract, held by a differential property test against tomllib: the plain
reader returns exactly what ``tomllib.loads`` returns, in the same order, or
nothing. :func:`toml_string` writes a TOML basic string. Imports nothing of
assay.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["plain_toml", "read_toml", "toml_string"]


def read_toml(text: str) -> dict[str, Any]:
    """``text`` parsed as TOML: by :func:`plain_toml` when it can, else by tomllib.

    Raises :class:`ValueError` (tomllib's ``TOMLDecodeError``) for a document
    that is not TOML, with tomllib's description of what is wrong.
    """
    raw = plain_toml(text)
    if raw is None:
        import tomllib

        raw = tomllib.loads(text)
    return raw


def toml_string(value: str) -> str:
    """``value`` as a TOML basic string (quoted, escaped)."""
    # JSON string syntax is a subset of TOML basic strings.
    return json.dumps(value, ensure_ascii=False)


# Controls other than tab and newline: TOML allows none of them, and CR only in CRLF.
_TOML_CONTROL = frozenset(map(chr, (*range(9), *range(11, 32), 127)))
_BARE_KEY = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def plain_toml(text: str) -> dict[str, Any] | None:
    """``text`` parsed as TOML when it keeps to plain TOML, else None (then tomllib parses it).

    Plain is what ``assay init`` writes and what most projects add: ``[a.b]``
    headers of bare keys, ``key = value`` lines of bare or quoted keys, and as
    values strings without escapes, decimal integers, booleans and one-line
    arrays of those, with comments. Anything else (escapes, literal or
    multi-line strings, floats, dates, inline tables, dotted keys, arrays of
    tables, a key or table declared twice, CR) is None. The contract, held by
    a differential test: the result is always exactly what ``tomllib.loads``
    returns, in the same order; tomllib alone reports what is wrong with a
    document.
    """
    if not _TOML_CONTROL.isdisjoint(text):
        return None
    root: dict[str, Any] = {}
    table = root
    headers: set[tuple[str, ...]] = set()
    for raw_line in text.split("\n"):
        line = raw_line.strip(" \t")
        if not line or line[0] == "#":
            continue
        if line[0] == "[":
            end = line.find("]")
            parts = tuple(line[1:end].split("."))
            if end < 0 or not _is_rest(line[end + 1:]) or parts in headers or not all(
                    part and _BARE_KEY.issuperset(part) for part in parts):
                return None
            headers.add(parts)
            table = root
            for part in parts:
                table = table.setdefault(part, {})
                if not isinstance(table, dict):
                    return None
            continue
        if line[0] == '"':
            end = line.find('"', 1)
            key, rest = line[1:end], line[end + 1:]
            if end < 0 or "\\" in key:
                return None
        else:
            end = 0
            while end < len(line) and line[end] in _BARE_KEY:
                end += 1
            key, rest = line[:end], line[end:]
            if not key:
                return None
        rest = rest.lstrip(" \t")
        if rest[:1] != "=" or key in table:
            return None
        got = _toml_value(rest[1:].lstrip(" \t"), array=True)
        if got is None or not _is_rest(got[1]):
            return None
        table[key] = got[0]
    return root


def _is_rest(text: str) -> bool:
    """Whether ``text`` may end a TOML line: blanks, then a comment or nothing."""
    text = text.lstrip(" \t")
    return not text or text[0] == "#"


def _toml_value(text: str, *, array: bool) -> tuple[Any, str] | None:
    """The plain value ``text`` starts with and the text after it, or None."""
    if text[:1] == '"':
        end = text.find('"', 1)
        if end < 0 or text[:3] == '"""' or "\\" in text[1:end]:
            return None
        return text[1:end], text[end + 1:]
    if text[:1] == "[":
        if not array:
            return None
        items: list[Any] = []
        rest = text[1:].lstrip(" \t")
        while rest[:1] != "]":
            got = _toml_value(rest, array=False)
            if got is None:
                return None
            items.append(got[0])
            rest = got[1].lstrip(" \t")
            if rest[:1] == ",":
                rest = rest[1:].lstrip(" \t")
            elif rest[:1] != "]":
                return None
        return items, rest[1:]
    end = 0
    while end < len(text) and text[end] not in " \t,]#":
        end += 1
    word, rest = text[:end], text[end:]
    if word in ("true", "false"):
        return word == "true", rest
    digits = word[1:] if word[:1] in ("+", "-") else word
    if (digits.isascii() and digits.isdigit() and len(digits) < 19
            and (digits == "0" or digits[0] != "0")):
        return int(word), rest
    return None
