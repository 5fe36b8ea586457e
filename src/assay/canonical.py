"""Canonical JSON (RFC 8785, JCS) and the digests built on it.

This module owns the one canonical form assay hashes: object keys sorted by
UTF-16 code units, numbers written as ECMAScript writes doubles, minimal
string escaping, no whitespace, UTF-8. It imports only :mod:`assay.errors`.

What JCS cannot represent is refused, never approximated: non-finite numbers,
integers an IEEE-754 double cannot hold exactly, lone surrogates, and (when
parsing text) duplicate object keys. Documents are bounded at depth 128 and
100,000 nodes (``resource_limit``). The encoder agrees byte for byte with the
``rfc8785`` reference package on every value both accept (a differential
property test holds it to that) and is several times faster.

Most documents take a fast path: one check of every value in Python, then
the standard library's C JSON encoder with sorted keys, whose output is
RFC 8785 exactly when every key is a string sorting the same in UTF-16 and
code points (no astral-plane character), every number an integer a double
holds or a float Python writes as ECMAScript does (no exponent, not
integral), and every value of an exact JSON type. A document outside that
takes the general encoder, which also reports what is wrong and where.
"""

from __future__ import annotations

import json
import math
import re
from itertools import chain
from json.encoder import encode_basestring as _json_string  # C-accelerated

from assay.errors import AssayError, pointer

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "MAX_DEPTH",
    "MAX_NODES",
    "OUTPUT_DEPTH",
    "canonical_bytes",
    "canonical_data",
    "canonical_text",
    "digest",
    "digest_bytes",
    "fingerprint",
    "output_text",
    "parse",
    "read_integer",
]

MAX_DEPTH = 128
MAX_NODES = 100_000
OUTPUT_DEPTH = MAX_DEPTH + 32
_UNBOUNDED = 2**62
_MAX_EXACT = 2**53


class _Limit(Exception):
    """Internal: the document exceeded a bound."""


class _Reject(Exception):
    """Internal: a value JCS cannot represent; carries code and path."""

    def __init__(self, code: str, message: str, path: list[str | int]) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.path = path


def parse(text: str | bytes) -> Any:
    """Parse one JSON document strictly.

    Rejects invalid UTF-8 (``invalid_utf8``), syntax errors and non-finite
    numbers (``invalid_json``), duplicate keys (``duplicate_key``) and
    documents deeper than ``MAX_DEPTH`` (``resource_limit``); the duplicate's
    pointer is exact. The result is plain Python data; canonicalise it to
    check the remaining JCS rules. An integer literal beyond 2**53 that is how
    JCS writes a double (``123456789012345680000``) reads as that double's
    exact value, so canonical text always parses back to itself; any other
    large literal is kept exact, and canonicalising it is ``unsafe_integer``.
    """
    if isinstance(text, (bytes, bytearray, memoryview)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise AssayError(
                f"the document is not valid UTF-8 (byte {exc.start})",
                code="invalid_utf8",
                details={"offset": exc.start},
            ) from None
    try:
        value = json.loads(
            text,
            object_pairs_hook=_unique_pairs,
            parse_constant=_reject_constant,
            parse_float=_finite_float,
            parse_int=read_integer,
        )
    except _Reject as exc:
        raise AssayError(
            exc.message,
            code=exc.code,
            pointer=_duplicate_pointer(text) if exc.code == "duplicate_key" else None,
            details=_key_details(exc),
        ) from None
    except json.JSONDecodeError as exc:
        raise AssayError(
            f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
            code="invalid_json",
            details={"line": exc.lineno, "column": exc.colno},
        ) from None
    except RecursionError:
        raise _limit_error("depth") from None
    if isinstance(value, (dict, list)):
        _check_depth(text, value)
    return value


def _key_details(exc: _Reject) -> dict[str, Any]:
    return {"key": exc.path[0]} if exc.code == "duplicate_key" else {}


def _check_depth(text: str, value: Any) -> None:
    # The C parser guards its own recursion (hostile nesting ends in a
    # RecursionError, reported as resource_limit), so the bound is checked on
    # the parsed value, and only when the text holds enough brackets to break
    # it: counting them runs at C speed. The walk goes one level at a time,
    # each level gathered by one comprehension over the containers of the
    # level above (the root is level 1; any container past MAX_DEPTH fails).
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return
    level: list[Any] = [value]
    depth = 1
    while True:
        level = [child for node in level
                 for child in (node.values() if type(node) is dict else node)
                 if type(child) is dict or type(child) is list]
        if not level:
            return
        depth += 1
        if depth > MAX_DEPTH:
            raise _limit_error("depth")


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Reject("duplicate_key", f"duplicate object key {key!r}", [key])
            seen.add(key)
    return out


class _Duplicate:
    """Stands in for the first object holding a duplicate key (second parse only)."""

    __slots__ = ("key",)

    def __init__(self, key: str) -> None:
        self.key = key


class _Pairs(list):  # type: ignore[type-arg]
    """An object's members in document order (second parse only)."""

    __slots__ = ()


def _duplicate_pointer(text: str) -> str | None:
    # json.loads's hooks do not know where they are, so the pointer of a
    # duplicate key is found by a second parse (only ever on this error path):
    # the first object with a duplicate, in the order the first parse met it,
    # is replaced by a marker, and the marker's path is the pointer.
    # Objects stay pair lists here, so a later duplicate cannot hide the marker.
    found: list[_Duplicate] = []

    def mark(pairs: list[tuple[str, Any]]) -> Any:
        if not found and len({key for key, _ in pairs}) != len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    found.append(_Duplicate(key))
                    return found[0]
                seen.add(key)
        return _Pairs(pairs)

    def locate(value: Any, path: tuple[str | int, ...]) -> str | None:
        if isinstance(value, _Duplicate):
            return pointer(*path, value.key)
        items: Any = (
            value if isinstance(value, _Pairs)
            else enumerate(value) if isinstance(value, list) else ()
        )
        for key, item in items:
            hit = locate(item, (*path, key))
            if hit is not None:
                return hit
        return None

    try:
        tree = json.loads(text, object_pairs_hook=mark, parse_constant=float)
    except (ValueError, RecursionError):
        return None
    return locate(tree, ())


_SHORT_INT = 16  # digits: every integer this short is within 2**53


def read_integer(text: str) -> int:
    """Read a JSON integer literal the way canonical text means it (a ``parse_int`` hook)."""
    # A JSON number is a double (RFC 8785). An integer literal beyond 2**53
    # names a double exactly when it is how JCS writes that double
    # ("123456789012345680000" is 1.2345678901234568e20): read it as that
    # double's exact value, so canonical text always parses back to itself.
    # Any other literal stays as written and the encoder refuses it
    # (unsafe_integer, with its pointer) rather than silently rounding it.
    value = int(text)
    if len(text) <= _SHORT_INT or abs(value) >= 2**1024:
        return value
    as_float = float(value)
    if as_float != value and _number(as_float) == text.lstrip("+"):
        return int(as_float)
    return value


def _reject_constant(name: str) -> Any:
    raise _Reject("invalid_json", f"{name} is not a JSON number", [])


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Reject("invalid_json", f"number {text} is out of the range of a double", [])
    return value


def _limit_error(what: str) -> AssayError:
    if what == "depth":
        message = f"the document is nested deeper than {MAX_DEPTH} levels"
    else:
        message = f"the document has more than {MAX_NODES} values"
    return AssayError(
        message,
        code="resource_limit",
        details={"limit": what, "max_depth": MAX_DEPTH, "max_nodes": MAX_NODES},
        action="Split the document or store large content as a file referenced by digest.",
    )


def _number(value: float) -> str:
    """Format a number exactly as ECMAScript's Number.prototype.toString does."""
    if type(value) is int:
        if -_MAX_EXACT <= value <= _MAX_EXACT:
            return str(value)
        as_float = float(value) if abs(value) < 2**1024 else math.inf
        if as_float != value:
            raise _Reject(
                "unsafe_integer",
                f"integer {value} cannot be held exactly by an IEEE-754 double",
                [],
            )
        value = as_float
    if not math.isfinite(value):
        raise _Reject("invalid_json", f"{value!r} is not a JSON number", [])
    if value == 0:
        return "0"
    if value.is_integer() and abs(value) <= _MAX_EXACT:
        # Beyond 2**53 ECMAScript writes only the shortest round-trip digits
        # (2**60 is "1152921504606847000"), so those take the general path.
        return str(int(value))
    text = repr(value)
    sign = ""
    if text[0] == "-":
        sign, text = "-", text[1:]
    mantissa, _, exp_text = text.partition("e")
    exponent = int(exp_text) if exp_text else 0
    whole, _, frac = mantissa.partition(".")
    raw = whole + frac
    stripped = raw.lstrip("0")
    point = len(whole) + exponent - (len(raw) - len(stripped))
    digits = stripped.rstrip("0")
    k = len(digits)
    if k <= point <= 21:
        out = digits + "0" * (point - k)
    elif 0 < point <= 21:
        out = digits[:point] + "." + digits[point:]
    elif -6 < point <= 0:
        out = "0." + "0" * (-point) + digits
    else:
        e = point - 1
        out = digits[0] + ("." + digits[1:] if k > 1 else "") + ("e+" if e >= 0 else "e-") + str(abs(e))
    return sign + out


def _utf16_key(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")


class _Slow(Exception):
    """Internal: the fast path cannot vouch for this document."""


# Compiled (and cached by re) when first met: most keys are ASCII.
_ASTRAL = "[\U00010000-\U0010ffff]"
_NONE = type(None)


# The most containers the fast path walks: a value holding more (or one
# that holds itself many times over) takes the general encoder.
_WALK_LIMIT = 10 * MAX_NODES


def _check_plain(value: Any, max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES) -> None:
    """Raise ``_Slow`` unless the C encoder writes the container ``value`` as RFC 8785 does.

    A ``TypeError`` means an object key that is not a string. The value is
    walked one level of nesting at a time (the root is level 1; a container
    past ``max_depth`` levels fails), and the keys of every object met are
    checked together at the end: this loop runs once per value and is most
    of the fast path's cost, so it makes no call per container. The node
    bound is checked on the output (see :func:`_fast_text`); here only the
    containers are counted, so that a value that holds itself ends the walk.
    """
    str_, dict_, list_, int_, bool_, none, tuple_ = str, dict, list, int, bool, _NONE, tuple
    top, bottom = _MAX_EXACT, -_MAX_EXACT
    level: list[Any] = [value]
    objects: list[dict[Any, Any]] = []
    depth = 0
    budget = min(max_nodes, _WALK_LIMIT)
    while level:
        if depth >= max_depth:
            raise _Slow
        depth += 1
        budget -= len(level)
        if budget < 0:
            raise _Slow
        below: list[Any] = []
        for node in level:
            if type(node) is dict_:
                objects.append(node)
                node = node.values()
            for child in node:
                kind = type(child)
                if kind is str_:
                    continue
                if kind is dict_ or kind is list_:
                    below.append(child)
                elif kind is int_:
                    if child > top or child < bottom:
                        raise _Slow
                elif kind is bool_ or kind is none:
                    continue
                elif kind is tuple_:
                    below.append(child)
                elif kind is float:
                    # repr and ECMAScript agree on finite doubles written without an
                    # exponent, except integral ones (1.0 against 1).
                    text = repr(child)
                    if "e" in text or "n" in text or text.endswith(".0"):
                        raise _Slow
                else:
                    raise _Slow
        level = below
    keys = "".join(chain.from_iterable(objects))
    if not keys.isascii() and re.search(_ASTRAL, keys):
        raise _Slow  # UTF-16 order may differ from code point order


def _unexpected(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__} is not a JSON value")  # _check_plain let it pass


try:
    # The C encoder behind json.dumps, made once: json.dumps would build it on every call.
    from _json import make_encoder

    _sorted_json = make_encoder(None, _unexpected, _json_string, None, ":", ",", True, False,
                                False)

    def _c_text(value: Any) -> str:
        return "".join(_sorted_json(value, 0))
except ImportError:  # pragma: no cover - CPython always has it
    _json_encoder = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"),
                                     check_circular=False, allow_nan=False, default=_unexpected)

    def _c_text(value: Any) -> str:
        return _json_encoder.encode(value)


def _fast_text(value: Any, max_nodes: int = MAX_NODES, max_depth: int = MAX_DEPTH) -> str | None:
    """The canonical text by the C encoder, or None when ``value`` needs the general encoder."""
    kind = type(value)
    if kind is not dict and kind is not list and kind is not tuple:
        return None
    try:
        _check_plain(value, max_depth, max_nodes)
    except (_Slow, TypeError):
        return None
    text = _c_text(value)
    # Every value takes at least one character of the text, so a text this
    # short holds at most max_nodes values; a longer one is counted by the
    # general encoder.
    return text if len(text) <= max_nodes else None


class _Encoder:
    __slots__ = ("max_depth", "max_nodes", "nodes", "out")

    def __init__(self, max_nodes: int = MAX_NODES, max_depth: int = MAX_DEPTH) -> None:
        self.nodes = 0
        self.out: list[str] = []
        self.max_nodes = max_nodes
        self.max_depth = max_depth

    def encode(self, value: Any, depth: int) -> None:
        self.nodes += 1
        if self.nodes > self.max_nodes:
            raise _Limit("nodes")
        out = self.out
        kind = type(value)
        if kind is str:
            out.append(_json_string(value))
        elif kind is dict:
            if depth >= self.max_depth:
                raise _Limit("depth")
            if not value:
                out.append("{}")
                return
            try:
                keys = sorted(value)
                ascii_keys = "".join(keys).isascii()
            except TypeError:
                raise _Reject("invalid_json", "object keys must be strings", []) from None
            if not ascii_keys:
                # Code point order differs from UTF-16 order only beyond the BMP.
                keys.sort(key=_utf16_key)
            sep = "{"
            for key in keys:
                out.append(sep)
                out.append(_json_string(key))
                out.append(":")
                try:
                    self.encode(value[key], depth + 1)
                except _Reject as exc:
                    exc.path.insert(0, key)
                    raise
                sep = ","
            out.append("}")
        elif kind is list or kind is tuple:
            if depth >= self.max_depth:
                raise _Limit("depth")
            if not value:
                out.append("[]")
                return
            sep = "["
            for index, item in enumerate(value):
                out.append(sep)
                try:
                    self.encode(item, depth + 1)
                except _Reject as exc:
                    exc.path.insert(0, index)
                    raise
                sep = ","
            out.append("]")
        elif value is None:
            out.append("null")
        elif value is True:
            out.append("true")
        elif value is False:
            out.append("false")
        elif kind is int or kind is float:
            out.append(_number(value))
        else:
            raise _Reject("invalid_json", f"{kind.__name__} is not a JSON value", [])


def canonical_text(value: Any) -> str:
    """Return the RFC 8785 canonical text of ``value`` (plain JSON data).

    Refuses what JCS cannot represent: non-finite numbers and other non-JSON
    values (``invalid_json``), integers a double cannot hold exactly
    (``unsafe_integer``), lone surrogates (``lone_surrogate``), each with the
    pointer of the value at fault; and documents past the bounds
    (``resource_limit``). Cost is linear in the size of the document.
    """
    text = _text(value)
    if not text.isascii():
        _utf8(text, value)
    return text


def _utf8(text: str, value: Any) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise AssayError(
            "a string holds a lone surrogate, which UTF-8 cannot encode",
            code="lone_surrogate",
            pointer=_surrogate_pointer(value),
        ) from None


def _text(value: Any) -> str:
    fast = _fast_text(value)
    return fast if fast is not None else _general_text(value)


def output_text(value: Any) -> str:
    """The canonical text of a result that assay itself assembled, for printing.

    The same encoding as :func:`canonical_text` and the same refusals of what
    JCS cannot represent, but not the input bounds: a result embeds many
    records, each within :data:`MAX_NODES`, so together they may hold more
    values, and an envelope adds a few levels around record data (itself at
    most 100 levels deep). Only :data:`OUTPUT_DEPTH` still bounds the nesting.
    """
    fast = _fast_text(value, _UNBOUNDED, OUTPUT_DEPTH)
    text = fast if fast is not None else _general_text(value, _UNBOUNDED, OUTPUT_DEPTH)
    if not text.isascii():
        _utf8(text, value)
    return text


def _general_text(value: Any, max_nodes: int = MAX_NODES, max_depth: int = MAX_DEPTH) -> str:
    encoder = _Encoder(max_nodes, max_depth)
    try:
        encoder.encode(value, 0)
    except _Limit as exc:
        raise _limit_error(str(exc)) from None
    except _Reject as exc:
        raise AssayError(exc.message, code=exc.code, pointer=pointer(*exc.path)) from None
    except RecursionError:
        raise _limit_error("depth") from None
    return "".join(encoder.out)


def canonical_bytes(value: Any) -> bytes:
    """Return the UTF-8 bytes of the canonical text; lone surrogates are refused."""
    return _utf8(_text(value), value)


def canonical_data(value: Any, max_depth: int) -> tuple[str, bytes, bool]:
    """The canonical text of ``value``, its UTF-8 bytes, and whether it nests at most ``max_depth`` levels.

    The text and the refusals are those of :func:`canonical_bytes`; the text
    comes too, so a caller that keeps it need not decode the bytes again. The
    fast path's walk of the value checks the nesting on the way: True means
    it vouched for at most ``max_depth`` (itself at most :data:`MAX_DEPTH`)
    levels of containers, the root being the first; False means it did not
    (a deeper value, or one the general encoder wrote), and a caller that
    must know walks the value itself.
    """
    fast = _fast_text(value, MAX_NODES, max_depth)
    text = fast if fast is not None else _general_text(value)
    return text, _utf8(text, value), fast is not None


def _surrogate_pointer(value: Any, path: tuple[str | int, ...] = ()) -> str | None:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return pointer(*path)
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            # A key that UTF-8 cannot encode cannot be spelled in a pointer
            # either: point at the object holding it.
            found = _surrogate_pointer(key, path) if isinstance(key, str) else None
            if found is None:
                found = _surrogate_pointer(item, (*path, key))
            if found is not None:
                return found
    if isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            found = _surrogate_pointer(item, (*path, index))
            if found is not None:
                return found
    return None


# SHA-256 comes from the interpreter's own module at first: importing
# hashlib loads OpenSSL, which takes a short CLI call more CPU than all its
# hashing (bench_cli_start, "assay get -- ID with hashlib imported first"). OpenSSL's SHA-256 is several times faster on large inputs, so
# once a process has hashed more than the budget, or one large input, it
# switches to hashlib for good.
_builtin_budget = 262_144  # bytes
try:
    from _sha2 import sha256 as _builtin_sha256  # type: ignore[import-not-found]  # 3.12+
except ImportError:
    try:
        from _sha256 import sha256 as _builtin_sha256  # type: ignore[import-not-found]
    except ImportError:  # pragma: no cover - an interpreter without it
        _builtin_budget = 0


def digest_bytes(data: bytes) -> str:
    """Lowercase hex SHA-256 of raw bytes."""
    global _builtin_budget
    if len(data) < _builtin_budget:
        _builtin_budget -= len(data)
        return str(_builtin_sha256(data).hexdigest())
    _builtin_budget = 0
    import hashlib

    return hashlib.sha256(data).hexdigest()


def digest(value: Any) -> str:
    """Lowercase hex SHA-256 of the canonical bytes of ``value``."""
    return digest_bytes(canonical_bytes(value))


def fingerprint(value: Any) -> str:
    """``sha256:`` followed by :func:`digest` (the packet form)."""
    return "sha256:" + digest(value)
