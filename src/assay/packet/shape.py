"""Closed-object shape checks that report issues with exact JSON pointers.

A tiny combinator set (``obj``, ``array``, ``string``, ``enum``, ...) shared
by the manifest, ledger and review schemas. Every check appends
:class:`~assay.packet.model.Issue` values to a :class:`Sink` and returns
whether the value was acceptable; nothing raises. Codes: ``UNKNOWN_FIELD``
(closed objects), ``MISSING_FIELD``, ``INVALID_TYPE``, ``INVALID_VALUE``.
Imports only :mod:`assay.packet.model`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from assay.packet.model import Issue

__all__ = [
    "BOOL",
    "DIGEST",
    "INSTANT",
    "Check",
    "Sink",
    "array",
    "enum",
    "integer",
    "nullable",
    "obj",
    "string",
    "union",
]


class Sink:
    """Collects issues for one packet file."""

    __slots__ = ("issues", "path")

    def __init__(self, issues: list[Issue], path: str) -> None:
        self.issues = issues
        self.path = path

    def add(self, code: str, pointer: str, message: str) -> None:
        self.issues.append(Issue(code, self.path, pointer, message))


Check = Callable[[Sink, Any, str], bool]


def _key(key: str) -> str:
    return "/" + key.replace("~", "~0").replace("/", "~1")


def _name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def string(*, empty: bool = False, pattern: str | None = None, max_length: int | None = None,
           what: str = "") -> Check:
    """A string; non-empty unless ``empty``; optionally matching ``pattern``."""
    regex = re.compile(pattern) if pattern else None

    def check(sink: Sink, value: Any, ptr: str) -> bool:
        if type(value) is not str:
            sink.add("INVALID_TYPE", ptr, f"expected a string, found {_name(value)}")
            return False
        if not empty and not value:
            sink.add("INVALID_VALUE", ptr, "must not be empty")
            return False
        if max_length is not None and len(value) > max_length:
            sink.add("INVALID_VALUE", ptr, f"longer than {max_length} characters")
            return False
        if regex is not None and not regex.fullmatch(value):
            sink.add("INVALID_VALUE", ptr, f"{value[:60]!r} is not {what or 'well formed'}")
            return False
        return True

    return check


def enum(*values: str) -> Check:
    """One of the string ``values`` exactly."""
    allowed = frozenset(values)

    def check(sink: Sink, value: Any, ptr: str) -> bool:
        if type(value) is not str or value not in allowed:
            sink.add("INVALID_VALUE", ptr,
                     f"{str(value)[:60]!r} is not one of: {', '.join(values)}")
            return False
        return True

    return check


def integer(*, minimum: int | None = None, maximum: int = 2**53 - 1) -> Check:
    """An integer (not a boolean, not a float) within bounds."""

    def check(sink: Sink, value: Any, ptr: str) -> bool:
        if type(value) is not int:
            sink.add("INVALID_TYPE", ptr, f"expected an integer, found {_name(value)}")
            return False
        if minimum is not None and value < minimum:
            sink.add("INVALID_VALUE", ptr, f"must be at least {minimum}")
            return False
        if value > maximum:
            sink.add("INVALID_VALUE", ptr, f"must be at most {maximum}")
            return False
        return True

    return check


def _bool(sink: Sink, value: Any, ptr: str) -> bool:
    if type(value) is not bool:
        sink.add("INVALID_TYPE", ptr, f"expected a boolean, found {_name(value)}")
        return False
    return True


BOOL: Check = _bool
DIGEST = string(pattern=r"sha256:[0-9a-f]{64}", what="a digest of the form sha256:<64 lowercase hex>")
INSTANT = string(
    pattern=r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z",
    what="a UTC RFC 3339 instant (YYYY-MM-DDTHH:MM:SS[.fff]Z)",
)


def nullable(inner: Check) -> Check:
    """``null`` or whatever ``inner`` accepts."""

    def check(sink: Sink, value: Any, ptr: str) -> bool:
        return True if value is None else inner(sink, value, ptr)

    return check


def array(item: Check, *, min_items: int = 0, unique: bool = False) -> Check:
    """An array whose every item passes ``item``; ``unique`` refuses repeated scalars."""

    def check(sink: Sink, value: Any, ptr: str) -> bool:
        if type(value) is not list:
            sink.add("INVALID_TYPE", ptr, f"expected an array, found {_name(value)}")
            return False
        ok = True
        if len(value) < min_items:
            sink.add("INVALID_VALUE", ptr, f"needs at least {min_items} item(s)")
            ok = False
        for index, entry in enumerate(value):
            ok = item(sink, entry, f"{ptr}/{index}") and ok
        if ok and unique:
            seen: set[Any] = set()
            for index, entry in enumerate(value):
                if entry in seen:
                    sink.add("INVALID_VALUE", f"{ptr}/{index}", f"{str(entry)[:60]!r} is repeated")
                    ok = False
                seen.add(entry)
        return ok

    return check


def obj(required: Mapping[str, Check], optional: Mapping[str, Check] | None = None) -> Check:
    """A closed object: every key known, every required key present."""
    optional = dict(optional or {})
    known = {**required, **optional}
    suffix = {key: _key(key) for key in known}
    required_items = [(key, suffix[key], inner) for key, inner in required.items()]
    optional_items = [(key, suffix[key], inner) for key, inner in optional.items()]

    def check(sink: Sink, value: Any, ptr: str) -> bool:
        if type(value) is not dict:
            sink.add("INVALID_TYPE", ptr, f"expected an object, found {_name(value)}")
            return False
        ok = True
        if not value.keys() <= known.keys():
            for key in value:
                if key not in known:
                    sink.add("UNKNOWN_FIELD", ptr + _key(key),
                             f"unknown field {key!r} in a closed object")
            ok = False
        for key, tail, inner in required_items:
            if key not in value:
                sink.add("MISSING_FIELD", ptr + tail, f"required field {key!r} is missing")
                ok = False
            elif not inner(sink, value[key], ptr + tail):
                ok = False
        for key, tail, inner in optional_items:
            if key in value and not inner(sink, value[key], ptr + tail):
                ok = False
        return ok

    return check


def union(field: str, branches: Mapping[str, Check]) -> Check:
    """A discriminated union: ``value[field]`` picks the branch that checks the rest."""

    def check(sink: Sink, value: Any, ptr: str) -> bool:
        if type(value) is not dict:
            sink.add("INVALID_TYPE", ptr, f"expected an object, found {_name(value)}")
            return False
        tag = value.get(field)
        if field not in value:
            sink.add("MISSING_FIELD", ptr + _key(field), f"required field {field!r} is missing")
            return False
        if not isinstance(tag, str) or tag not in branches:
            sink.add("INVALID_VALUE", ptr + _key(field),
                     f"{str(tag)[:60]!r} is not one of: {', '.join(branches)}")
            return False
        return branches[tag](sink, value, ptr)

    return check
