"""The one shape checker of packet documents, for both layouts.

Checks (``string``, ``enum``, ``integer``, ``array``, ``obj``, ``union``, ...)
each have two halves built from the same rules: ``ok(value)``, a fast yes/no
that builds no strings, and ``report``, which names every violation through a
:class:`Sink`. :meth:`Check.check` runs the fast half and reports only when it
says no, so a valid document builds no locations. Assay's own layout
composes them into whole-document shapes; the recon layout applies them one
field at a time (:func:`member`, :func:`closed`), in its tool's own order.

What a violation is called and where it is, is the sink's :class:`Dialect`:
its codes for the kinds of violation (an unknown field, a missing one, a wrong
JSON type, a wrong value), its sentences, and its location style, a JSON
pointer (``/claims/0/state``, assay's) or a ``$``-path (``$.claims[0].status``,
the recon tool's). A check may name its own code and sentence instead (a
vocabulary with its own code). Nothing raises. Imports only
:mod:`assay.packet.model`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from assay.packet.model import Issue

__all__ = [
    "ANY",
    "ANY_OBJECT",
    "ASSAY",
    "BOOL",
    "DIGEST",
    "INSTANT",
    "Check",
    "Dialect",
    "Sink",
    "array",
    "closed",
    "enum",
    "forget_matches",
    "integer",
    "leaf",
    "member",
    "nullable",
    "obj",
    "string",
    "union",
]


class Dialect:
    """How one layout names and locates what a shape check finds.

    ``codes`` maps each kind of violation (``unknown``, ``missing``, ``type``,
    ``value``) to an issue code; ``sentence(kind, key, detail, wants)`` words
    it (``detail`` says what is wrong, ``wants`` what the field must be);
    ``member``/``item`` extend a location by a key or an index, and
    ``pointer`` turns a location into a JSON pointer. ``located`` says whether
    issues carry the location as ``where`` (the recon tool's own) besides the
    pointer.
    """

    __slots__ = ("codes", "item", "located", "member", "name", "pointer", "sentence")

    def __init__(self, name: str, *, codes: Mapping[str, str],
                 sentence: Callable[[str, str, str, str], str],
                 member: Callable[[str, str], str], item: Callable[[str, int], str],
                 pointer: Callable[[str], str], located: bool) -> None:
        self.name = name
        self.codes = dict(codes)
        self.sentence = sentence
        self.member = member
        self.item = item
        self.pointer = pointer
        self.located = located


def _escaped(key: str) -> str:
    return "/" + key.replace("~", "~0").replace("/", "~1")


def _assay_sentence(kind: str, key: str, detail: str, wants: str) -> str:
    if kind == "unknown":
        return f"unknown field {key!r} in a closed object"
    if kind == "missing":
        return f"required field {key!r} is missing"
    return detail


ASSAY = Dialect(
    "assay",
    codes={"unknown": "UNKNOWN_FIELD", "missing": "MISSING_FIELD", "type": "INVALID_TYPE",
           "value": "INVALID_VALUE"},
    sentence=_assay_sentence,
    member=lambda at, key: at + _escaped(key),
    item=lambda at, index: f"{at}/{index}",
    pointer=lambda at: at,
    located=False,
)


class Sink:
    """Collects the issues of one packet file, worded and located by a dialect.

    ``where`` prefixes the recon tool's locations (``reviews/x.json:``) for a
    dialect that has them.
    """

    __slots__ = ("dialect", "issues", "path", "where")

    def __init__(self, issues: list[Issue], path: str, dialect: Dialect = ASSAY,
                 where: str = "") -> None:
        self.issues = issues
        self.path = path
        self.dialect = dialect
        self.where = where

    def add(self, code: str, at: str, message: str) -> None:
        """One issue with an explicit code at location ``at``."""
        dialect = self.dialect
        self.issues.append(Issue(code, self.path, dialect.pointer(at), message,
                                 self.where + at if dialect.located else ""))

    def fail(self, kind: str, at: str, check: Check | None, detail: str = "",
             key: str | None = None) -> None:
        """One violation of ``check`` of ``kind``, worded by the check or the dialect."""
        dialect = self.dialect
        if key is None:
            key = _last(at)
        own = check is not None and kind != "unknown" and check.code is not None
        code = check.code if own and check is not None else dialect.codes[kind]
        message = (check.message if own and check is not None and check.message is not None
                   else dialect.sentence(kind, key, detail, check.wants if check else ""))
        self.add(str(code), at, message)


def _last(at: str) -> str:
    """The key a location ends with (``$.a.b`` and ``/a/b``: ``b``)."""
    return re.split(r"[./]", at)[-1]


Report = Callable[[Sink, Any, str], bool]
Ok = Callable[[Any], bool]


class Check:
    """One shape: a fast ``ok`` and a ``report`` that names every violation.

    The two halves must agree (a property test holds them to it): ``ok`` is
    False exactly when ``report`` adds at least one issue. ``wants`` says
    what a value must be (``a non-empty string``); ``code`` and ``message``,
    when given, replace the dialect's for this check's own violations.
    """

    __slots__ = ("code", "message", "ok", "report", "wants")

    def __init__(self, ok: Ok, report: Report, wants: str, code: str | None = None,
                 message: str | None = None) -> None:
        self.ok = ok
        self.report = report
        self.wants = wants
        self.code = code
        self.message = message

    def __call__(self, sink: Sink, value: Any, ptr: str) -> bool:
        return self.report(sink, value, ptr)

    def check(self, sink: Sink, value: Any) -> bool:
        """Check a whole document: fast when valid, every issue reported when not."""
        if self.ok(value):
            return True
        self.report(sink, value, "" if sink.dialect is ASSAY else "$")
        return False


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
           what: str = "", code: str | None = None, message: str | None = None) -> Check:
    """A string; non-empty unless ``empty``; optionally matching ``pattern``.

    Ids and digests recur across a packet's files: a string that matched the
    pattern once is remembered (up to :data:`_MEMO_SIZE` of them per check),
    so a recurrence is a set lookup instead of a regular-expression match.
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
            sink.fail("type", ptr, check, f"expected a string, found {_name(value)}")
            return False
        if not empty and not value:
            sink.fail("value", ptr, check, "must not be empty")
            return False
        if max_length is not None and len(value) > max_length:
            sink.fail("value", ptr, check, f"longer than {max_length} characters")
            return False
        if match is not None and match(value) is None:
            sink.fail("value", ptr, check, f"{value[:60]!r} is not {what or 'well formed'}")
            return False
        return True

    check = Check(ok, report, "a string" if empty else "a non-empty string", code, message)
    return check


def enum(*values: str, code: str | None = None, message: str | None = None) -> Check:
    """One of the string ``values`` exactly."""
    allowed = frozenset(values)

    def ok(value: Any) -> bool:
        return type(value) is str and value in allowed

    def report(sink: Sink, value: Any, ptr: str) -> bool:
        if not ok(value):
            sink.fail("value", ptr, check,
                      f"{str(value)[:60]!r} is not one of: {', '.join(values)}")
            return False
        return True

    check = Check(ok, report, "one of " + ", ".join(values), code, message)
    return check


def integer(*, minimum: int | None = None, maximum: int | None = 2**53 - 1,
            integral_floats: bool = False) -> Check:
    """An integer (not a boolean) within bounds; ``integral_floats`` also takes ``5.0``."""

    def is_integer(value: Any) -> bool:
        return type(value) is int or (integral_floats and type(value) is float
                                      and value.is_integer())

    def ok(value: Any) -> bool:
        return ((type(value) is int or (integral_floats and type(value) is float
                                        and value.is_integer()))
                and (minimum is None or value >= minimum)
                and (maximum is None or value <= maximum))

    def report(sink: Sink, value: Any, ptr: str) -> bool:
        if not is_integer(value):
            sink.fail("type", ptr, check, f"expected an integer, found {_name(value)}")
            return False
        if minimum is not None and value < minimum:
            sink.fail("value", ptr, check, f"must be at least {minimum}")
            return False
        if maximum is not None and value > maximum:
            sink.fail("value", ptr, check, f"must be at most {maximum}")
            return False
        return True

    check = Check(ok, report, f"an integer of at least {minimum}" if minimum is not None
                  else "an integer")
    return check


def leaf(ok: Ok, wants: str, *, kind: str = "type", code: str | None = None,
         message: str | None = None) -> Check:
    """A check of one value by a predicate: one violation of ``kind`` when ``ok`` says no."""

    def report(sink: Sink, value: Any, ptr: str) -> bool:
        if ok(value):
            return True
        sink.fail(kind, ptr, check, f"must be {wants}")
        return False

    check = Check(ok, report, wants, code, message)
    return check


def _typed(kind: type, what: str, wants: str) -> Check:
    """Any value of one JSON type (its content is checked elsewhere)."""

    def ok(value: Any) -> bool:
        return type(value) is kind

    def report(sink: Sink, value: Any, ptr: str) -> bool:
        if type(value) is not kind:
            sink.fail("type", ptr, check, f"expected {what}, found {_name(value)}")
            return False
        return True

    check = Check(ok, report, wants)
    return check


BOOL = _typed(bool, "a boolean", "a boolean")
# Any JSON object; its content is checked elsewhere (e.g. by recomputation).
ANY_OBJECT = _typed(dict, "an object", "an object")
DIGEST = string(pattern=r"sha256:[0-9a-f]{64}", what="a digest of the form sha256:<64 lowercase hex>")
INSTANT = string(
    pattern=r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z",
    what="a UTC RFC 3339 instant (YYYY-MM-DDTHH:MM:SS[.fff]Z)",
)


def _anything(value: Any) -> bool:
    return True


def _report_nothing(sink: Sink, value: Any, ptr: str) -> bool:
    return True


# Any value at all: an array member or field whose content nothing here checks.
ANY = Check(_anything, _report_nothing, "anything")


def nullable(inner: Check, *, wants: str | None = None) -> Check:
    """``null`` or whatever ``inner`` accepts."""
    inner_ok, inner_report = inner.ok, inner.report

    def ok(value: Any) -> bool:
        return value is None or inner_ok(value)

    def report(sink: Sink, value: Any, ptr: str) -> bool:
        return True if value is None else inner_report(sink, value, ptr)

    return Check(ok, report, wants or f"{inner.wants} or null", inner.code, inner.message)


def array(item: Check = ANY, *, min_items: int = 0, unique: bool = False) -> Check:
    """An array whose every item passes ``item``; ``unique`` (string items) refuses repeats."""
    item_ok, item_report = item.ok, item.report
    every = item is ANY

    def ok(value: Any) -> bool:
        if type(value) is not list or len(value) < min_items:
            return False
        if not every:
            for entry in value:
                if not item_ok(entry):
                    return False
        return not unique or len(set(value)) == len(value)

    def is_list(value: Any) -> bool:
        return type(value) is list

    def report(sink: Sink, value: Any, ptr: str) -> bool:
        if type(value) is not list:
            sink.fail("type", ptr, check, f"expected an array, found {_name(value)}")
            return False
        good = True
        if len(value) < min_items:
            sink.fail("value", ptr, check, f"needs at least {min_items} item(s)")
            good = False
        at = sink.dialect.item
        for index, entry in enumerate(value):
            good = item_report(sink, entry, at(ptr, index)) and good
        if good and unique:
            seen: set[Any] = set()
            for index, entry in enumerate(value):
                if entry in seen:
                    sink.fail("value", at(ptr, index), None, f"{str(entry)[:60]!r} is repeated")
                    good = False
                seen.add(entry)
        return good

    check = Check(is_list if every and not min_items and not unique else ok, report, "an array")
    return check


def obj(required: Mapping[str, Check], optional: Mapping[str, Check] | None = None) -> Check:
    """A closed object: every key known, every required key present."""
    optional = dict(optional or {})
    known = {**required, **optional}
    known_keys = known.keys()
    required_ok = [(key, inner.ok) for key, inner in required.items()]
    optional_ok = [(key, inner.ok) for key, inner in optional.items()]
    required_items = [(key, inner) for key, inner in required.items()]
    optional_items = [(key, inner) for key, inner in optional.items()]

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
            sink.fail("type", ptr, check, f"expected an object, found {_name(value)}")
            return False
        at = sink.dialect.member
        good = True
        if not value.keys() <= known_keys:
            for key in value:
                if key not in known:
                    sink.fail("unknown", at(ptr, key), None, key=key)
            good = False
        for key, inner in required_items:
            if key not in value:
                sink.fail("missing", at(ptr, key), inner, key=key)
                good = False
            elif not inner.report(sink, value[key], at(ptr, key)):
                good = False
        for key, inner in optional_items:
            if key in value and not inner.report(sink, value[key], at(ptr, key)):
                good = False
        return good

    check = Check(ok, report, "an object")
    return check


def union(field: str, branches: Mapping[str, Check]) -> Check:
    """A discriminated union: ``value[field]`` picks the branch that checks the rest."""
    tag_check = enum(*branches)

    def ok(value: Any) -> bool:
        if type(value) is not dict:
            return False
        tag = value.get(field)
        return type(tag) is str and tag in branches and branches[tag].ok(value)

    def report(sink: Sink, value: Any, ptr: str) -> bool:
        if type(value) is not dict:
            sink.fail("type", ptr, check, f"expected an object, found {_name(value)}")
            return False
        tag = value.get(field)
        at = sink.dialect.member(ptr, field)
        if field not in value:
            sink.fail("missing", at, tag_check, key=field)
            return False
        if not isinstance(tag, str) or tag not in branches:
            return tag_check.report(sink, tag, at)
        return branches[tag].report(sink, value, ptr)

    check = Check(ok, report, "an object")
    return check


_ABSENT: Any = object()


def member(sink: Sink, parent: Any, key: str, check: Check, at: str) -> bool:
    """Check ``parent[key]`` with ``check``; absent (or in a parent that is not an object)
    it is missing. Reports at ``key``'s location below ``at``; returns whether it holds."""
    value = parent.get(key, _ABSENT) if type(parent) is dict else _ABSENT
    if value is not _ABSENT and check.ok(value):
        return True
    # Only a violation needs its location built.
    here = sink.dialect.member(at, key)
    if value is _ABSENT:
        sink.fail("missing", here, check, key=key)
        return False
    return check.report(sink, value, here)


def closed(sink: Sink, value: Any, allowed: tuple[str, ...], at: str) -> None:
    """Report every key of ``value`` (when it is an object) that ``allowed`` does not name."""
    if type(value) is dict:
        for key in value:
            if key not in allowed:
                sink.fail("unknown", sink.dialect.member(at, key), None, key=key)
