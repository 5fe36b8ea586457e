"""Closed-object shape checks that report issues with exact JSON pointers.

A tiny combinator set (``obj``, ``array``, ``string``, ``enum``, ...) shared
by the manifest, ledger and review schemas. Each :class:`Check` has two
halves built from the same rules: ``ok(value)``, a fast yes/no that builds no
strings, and a reporting half that appends :class:`~assay.packet.model.Issue`
values with exact JSON pointers to a :class:`Sink`. :meth:`Check.check` runs
the fast half and reports only when it says no, so a valid document costs no
pointer building. Nothing raises. Codes: ``UNKNOWN_FIELD`` (closed objects),
``MISSING_FIELD``, ``INVALID_TYPE``, ``INVALID_VALUE``. Imports only
:mod:`assay.packet.model`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from assay.packet.model import Issue

__all__ = [
    "ANY_OBJECT",
    "BOOL",
    "DIGEST",
    "INSTANT",
    "Check",
    "Sink",
    "array",
    "enum",
    "forget_matches",
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


Report = Callable[[Sink, Any, str], bool]
Ok = Callable[[Any], bool]


class Check:
    """One shape: a fast ``ok`` and a ``report`` that names every violation.

    The two halves must agree (a property test holds them to it): ``ok`` is
    False exactly when ``report`` adds at least one issue.
    """

    __slots__ = ("ok", "report")

    def __init__(self, ok: Ok, report: Report) -> None:
        self.ok = ok
        self.report = report

    def __call__(self, sink: Sink, value: Any, ptr: str) -> bool:
        return self.report(sink, value, ptr)

    def check(self, sink: Sink, value: Any) -> bool:
        """Check a whole document: fast when valid, every issue reported when not."""
        if self.ok(value):
            return True
        self.report(sink, value, "")
        return False


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


_MEMO_SIZE = 65_536
_MEMOS: list[set[str]] = []


def forget_matches() -> None:
    """Empty the memories of matched strings (see :func:`string`); the validator calls this
    when it finishes, so nothing of one packet stays in memory or speeds up the next."""
    for memo in _MEMOS:
        memo.clear()


def string(*, empty: bool = False, pattern: str | None = None, max_length: int | None = None,
           what: str = "") -> Check:
    """A string; non-empty unless ``empty``; optionally matching ``pattern``.

    Ids and digests recur across a packet's files: a string that matched the
    pattern once is remembered (up to :data:`_MEMO_SIZE` of them per check),
    so a recurrence costs a set lookup instead of a regular-expression match.
    :func:`forget_matches` empties every such memory.
    """
    match = re.compile(pattern).fullmatch if pattern else None
    matched: set[str] = set()
    if match is not None:
        _MEMOS.append(matched)

    def learn(value: str) -> bool:
        if match is None or match(value) is None:
            return False
        if len(matched) < _MEMO_SIZE:
            matched.add(value)
        return True

    def ok(value: Any) -> bool:
        return (type(value) is str and (empty or value != "")
                and (max_length is None or len(value) <= max_length)
                and (match is None or value in matched or learn(value)))

    def report(sink: Sink, value: Any, ptr: str) -> bool:
        if type(value) is not str:
            sink.add("INVALID_TYPE", ptr, f"expected a string, found {_name(value)}")
            return False
        if not empty and not value:
            sink.add("INVALID_VALUE", ptr, "must not be empty")
            return False
        if max_length is not None and len(value) > max_length:
            sink.add("INVALID_VALUE", ptr, f"longer than {max_length} characters")
            return False
        if match is not None and match(value) is None:
            sink.add("INVALID_VALUE", ptr, f"{value[:60]!r} is not {what or 'well formed'}")
            return False
        return True

    return Check(ok, report)


def enum(*values: str) -> Check:
    """One of the string ``values`` exactly."""
    allowed = frozenset(values)

    def ok(value: Any) -> bool:
        return type(value) is str and value in allowed

    def report(sink: Sink, value: Any, ptr: str) -> bool:
        if not ok(value):
            sink.add("INVALID_VALUE", ptr,
                     f"{str(value)[:60]!r} is not one of: {', '.join(values)}")
            return False
        return True

    return Check(ok, report)


def integer(*, minimum: int | None = None, maximum: int = 2**53 - 1) -> Check:
    """An integer (not a boolean, not a float) within bounds."""

    def ok(value: Any) -> bool:
        return (type(value) is int and (minimum is None or value >= minimum)
                and value <= maximum)

    def report(sink: Sink, value: Any, ptr: str) -> bool:
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

    return Check(ok, report)


def _bool_ok(value: Any) -> bool:
    return type(value) is bool


def _bool_report(sink: Sink, value: Any, ptr: str) -> bool:
    if type(value) is not bool:
        sink.add("INVALID_TYPE", ptr, f"expected a boolean, found {_name(value)}")
        return False
    return True


BOOL = Check(_bool_ok, _bool_report)
DIGEST = string(pattern=r"sha256:[0-9a-f]{64}", what="a digest of the form sha256:<64 lowercase hex>")
INSTANT = string(
    pattern=r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z",
    what="a UTC RFC 3339 instant (YYYY-MM-DDTHH:MM:SS[.fff]Z)",
)


def _object_ok(value: Any) -> bool:
    return type(value) is dict


def _object_report(sink: Sink, value: Any, ptr: str) -> bool:
    if type(value) is not dict:
        sink.add("INVALID_TYPE", ptr, f"expected an object, found {_name(value)}")
        return False
    return True


# Any JSON object; its content is checked elsewhere (e.g. by recomputation).
ANY_OBJECT = Check(_object_ok, _object_report)


def nullable(inner: Check) -> Check:
    """``null`` or whatever ``inner`` accepts."""
    inner_ok, inner_report = inner.ok, inner.report

    def ok(value: Any) -> bool:
        return value is None or inner_ok(value)

    def report(sink: Sink, value: Any, ptr: str) -> bool:
        return True if value is None else inner_report(sink, value, ptr)

    return Check(ok, report)


def array(item: Check, *, min_items: int = 0, unique: bool = False) -> Check:
    """An array whose every item passes ``item``; ``unique`` (string items) refuses repeats."""
    item_ok, item_report = item.ok, item.report

    def ok(value: Any) -> bool:
        if type(value) is not list or len(value) < min_items:
            return False
        for entry in value:
            if not item_ok(entry):
                return False
        return not unique or len(set(value)) == len(value)

    def report(sink: Sink, value: Any, ptr: str) -> bool:
        if type(value) is not list:
            sink.add("INVALID_TYPE", ptr, f"expected an array, found {_name(value)}")
            return False
        good = True
        if len(value) < min_items:
            sink.add("INVALID_VALUE", ptr, f"needs at least {min_items} item(s)")
            good = False
        for index, entry in enumerate(value):
            good = item_report(sink, entry, f"{ptr}/{index}") and good
        if good and unique:
            seen: set[Any] = set()
            for index, entry in enumerate(value):
                if entry in seen:
                    sink.add("INVALID_VALUE", f"{ptr}/{index}", f"{str(entry)[:60]!r} is repeated")
                    good = False
                seen.add(entry)
        return good

    return Check(ok, report)


def obj(required: Mapping[str, Check], optional: Mapping[str, Check] | None = None) -> Check:
    """A closed object: every key known, every required key present."""
    optional = dict(optional or {})
    known = {**required, **optional}
    known_keys = known.keys()
    suffix = {key: _key(key) for key in known}
    required_ok = [(key, inner.ok) for key, inner in required.items()]
    optional_ok = [(key, inner.ok) for key, inner in optional.items()]
    required_items = [(key, suffix[key], inner.report) for key, inner in required.items()]
    optional_items = [(key, suffix[key], inner.report) for key, inner in optional.items()]

    def ok(value: Any) -> bool:
        if type(value) is not dict or not value.keys() <= known_keys:
            return False
        for key, inner_ok in required_ok:
            if key not in value or not inner_ok(value[key]):
                return False
        for key, inner_ok in optional_ok:
            if key in value and not inner_ok(value[key]):
                return False
        return True

    def report(sink: Sink, value: Any, ptr: str) -> bool:
        if type(value) is not dict:
            sink.add("INVALID_TYPE", ptr, f"expected an object, found {_name(value)}")
            return False
        good = True
        if not value.keys() <= known_keys:
            for key in value:
                if key not in known:
                    sink.add("UNKNOWN_FIELD", ptr + _key(key),
                             f"unknown field {key!r} in a closed object")
            good = False
        for key, tail, inner in required_items:
            if key not in value:
                sink.add("MISSING_FIELD", ptr + tail, f"required field {key!r} is missing")
                good = False
            elif not inner(sink, value[key], ptr + tail):
                good = False
        for key, tail, inner in optional_items:
            if key in value and not inner(sink, value[key], ptr + tail):
                good = False
        return good

    return Check(ok, report)


def union(field: str, branches: Mapping[str, Check]) -> Check:
    """A discriminated union: ``value[field]`` picks the branch that checks the rest."""

    def ok(value: Any) -> bool:
        if type(value) is not dict:
            return False
        tag = value.get(field)
        return type(tag) is str and tag in branches and branches[tag].ok(value)

    def report(sink: Sink, value: Any, ptr: str) -> bool:
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
        return branches[tag].report(sink, value, ptr)

    return Check(ok, report)
