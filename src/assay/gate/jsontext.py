"""JSON text edited in place: every byte outside an edit stays as it was.

:func:`parse` reads strict JSON (no duplicate keys, no trailing commas, no
comments) into :class:`Node` values that remember where each value, key and
member sits in the text. The edit functions return new text in which one
member or item was inserted or removed, copying the surrounding layout (the
separator and indentation the container already uses; two spaces and the
file's line ending in an empty container of a pretty-printed file). Removing
exactly what an insertion added gives back the original bytes.

Imports only :mod:`assay.errors`.
"""

from __future__ import annotations

import json
import json.decoder
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from assay.errors import AssayError, pointer

__all__ = ["Node", "append_item", "insert_member", "parse", "remove_item", "remove_member"]

_WS = " \t\n\r"
# The standard library's JSON string scanner (C-accelerated): strict, the exact end offset.
_scanstring: Any = json.decoder.scanstring  # type: ignore[attr-defined]
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_LITERALS = {"true": True, "false": False, "null": None}


@dataclass(slots=True)
class Node:
    """One JSON value: its kind, its span ``[start, end)`` and its parts.

    An object keeps ``members`` as ``(key, key_start, value)`` in text order;
    an array keeps ``items``; a scalar keeps its Python ``value``.
    """

    kind: str
    start: int
    end: int
    members: list[tuple[str, int, Node]] = field(default_factory=list)
    items: list[Node] = field(default_factory=list)
    value: Any = None

    def get(self, key: str) -> Node | None:
        for name, _, node in self.members:
            if name == key:
                return node
        return None

    def data(self) -> Any:
        """The Python value of this node."""
        if self.kind == "object":
            return {name: node.data() for name, _, node in self.members}
        if self.kind == "array":
            return [node.data() for node in self.items]
        return self.value


class _Parser:
    def __init__(self, text: str, label: str) -> None:
        self.text = text
        self.label = label
        self.pos = 0

    def fail(self, problem: str, where: tuple[str | int, ...] = ()) -> AssayError:
        line = self.text.count("\n", 0, self.pos) + 1
        return AssayError(f"{self.label} is not valid JSON: {problem} (line {line})",
                          code="hook_settings_invalid", pointer=pointer(*where) or None,
                          details={"path": self.label, "line": line},
                          action=f"Fix {self.label} (or move it aside), then run the command again.")

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in _WS:
            self.pos += 1

    def value(self, where: tuple[str | int, ...]) -> Node:
        self.skip()
        if self.pos >= len(self.text):
            raise self.fail("unexpected end of text", where)
        char = self.text[self.pos]
        if char == "{":
            return self.object(where)
        if char == "[":
            return self.array(where)
        if char == '"':
            start = self.pos
            value = self.string(where)
            return Node("string", start, self.pos, value=value)
        match = _NUMBER.match(self.text, self.pos)
        if match:
            self.pos = match.end()
            return Node("number", match.start(), match.end(), value=json.loads(match.group(0)))
        for word, literal in _LITERALS.items():
            if self.text.startswith(word, self.pos):
                start = self.pos
                self.pos += len(word)
                return Node("literal", start, self.pos, value=literal)
        raise self.fail(f"unexpected {char!r}", where)

    def string(self, where: tuple[str | int, ...]) -> str:
        try:
            value, end = _scanstring(self.text, self.pos + 1, True)
        except json.JSONDecodeError as exc:
            raise self.fail(exc.msg, where) from None
        self.pos = end
        return str(value)

    def container(self, kind: str, close: str, where: tuple[str | int, ...],
                  element: Callable[[Node], None]) -> Node:
        """An object or array: ``element`` reads each member or item after the opening bracket."""
        node = Node(kind, self.pos, self.pos)
        self.pos += 1
        self.skip()
        if not self.text.startswith(close, self.pos):
            while True:
                self.skip()
                element(node)
                self.skip()
                if self.text.startswith(",", self.pos):
                    self.pos += 1
                    continue
                if self.text.startswith(close, self.pos):
                    break
                raise self.fail(f"expected ',' or '{close}'", where)
        self.pos += 1
        node.end = self.pos
        return node

    def object(self, where: tuple[str | int, ...]) -> Node:
        def member(node: Node) -> None:
            if not self.text.startswith('"', self.pos):
                raise self.fail("expected a key", where)
            key_start = self.pos
            key = self.string(where)
            if node.get(key) is not None:
                raise self.fail(f"the key {key!r} appears twice", (*where, key))
            self.skip()
            if not self.text.startswith(":", self.pos):
                raise self.fail("expected ':'", (*where, key))
            self.pos += 1
            node.members.append((key, key_start, self.value((*where, key))))

        return self.container("object", "}", where, member)

    def array(self, where: tuple[str | int, ...]) -> Node:
        return self.container("array", "]", where,
                              lambda node: node.items.append(self.value((*where, len(node.items)))))


def parse(text: str, *, label: str = "the file") -> Node:
    """The top value of ``text`` (``hook_settings_invalid`` when it is not strict JSON)."""
    parser = _Parser(text, label)
    node = parser.value(())
    parser.skip()
    if parser.pos != len(text):
        raise parser.fail("text after the value")
    return node


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _line_indent(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    end = start
    while end < len(text) and text[end] in " \t":
        end += 1
    return text[start:end]


def _render(value: Any, indent: str, unit: str | None, newline: str) -> str:
    """``value`` as JSON laid out like its neighbours (``unit`` None: on one line)."""
    if unit is None:
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, ensure_ascii=False, indent=unit).replace("\n", newline + indent)


def _layout(text: str, container: Node, parts: list[int], ends: list[int]
            ) -> tuple[str, str | None]:
    """The separator before each part of ``container`` and the indent unit (None: compact).

    The separator is the one between the last two parts (after the comma), or
    the one before the only part.
    """
    if parts:
        sep = (text[text.index(",", ends[-2]) + 1:parts[-1]] if len(parts) > 1
               else text[container.start + 1:parts[0]])
        if "\n" not in sep:
            return sep, None
        outer = _line_indent(text, container.start)
        inner = sep.rsplit("\n", 1)[1]
        unit = inner[len(outer):] if inner.startswith(outer) and len(inner) > len(outer) else "  "
        return sep, unit
    if "\n" not in text:
        return "", None
    outer = _line_indent(text, container.start)
    return _newline(text) + outer + "  ", "  "


def _insert(text: str, container: Node, parts: list[int], ends: list[int], rendered: str) -> str:
    sep, _ = _layout(text, container, parts, ends)
    if parts:
        at = ends[-1]
        return text[:at] + "," + sep + rendered + text[at:]
    closing = container.end - 1
    tail = ""
    if "\n" in sep:
        tail = _newline(text) + _line_indent(text, container.start)
    return text[:container.start + 1] + sep + rendered + tail + text[closing:]


def insert_member(text: str, obj: Node, key: str, value: Any) -> str:
    """``text`` with ``"key": value`` added as the last member of ``obj``."""
    starts = [key_start for _, key_start, _ in obj.members]
    ends = [node.end for _, _, node in obj.members]
    sep, unit = _layout(text, obj, starts, ends)
    indent = sep.rsplit("\n", 1)[-1] if "\n" in sep else ""
    piece = json.dumps(key, ensure_ascii=False) + ": " + _render(value, indent, unit,
                                                                  _newline(text))
    return _insert(text, obj, starts, ends, piece)


def append_item(text: str, array: Node, value: Any) -> str:
    """``text`` with ``value`` added as the last item of ``array``."""
    starts = [node.start for node in array.items]
    ends = [node.end for node in array.items]
    sep, unit = _layout(text, array, starts, ends)
    indent = sep.rsplit("\n", 1)[-1] if "\n" in sep else ""
    return _insert(text, array, starts, ends, _render(value, indent, unit, _newline(text)))


def _remove(text: str, container: Node, starts: list[int], ends: list[int], index: int) -> str:
    if len(starts) == 1:
        return text[:container.start + 1] + text[container.end - 1:]
    if index == len(starts) - 1:
        return text[:ends[index - 1]] + text[ends[index]:]
    return text[:starts[index]] + text[starts[index + 1]:]


def remove_item(text: str, array: Node, index: int) -> str:
    """``text`` without item ``index`` of ``array`` (and the separator that came with it)."""
    return _remove(text, array, [n.start for n in array.items], [n.end for n in array.items],
                   index)


def remove_member(text: str, obj: Node, key: str) -> str:
    """``text`` without the member ``key`` of ``obj``."""
    names = [name for name, _, _ in obj.members]
    return _remove(text, obj, [s for _, s, _ in obj.members], [n.end for _, _, n in obj.members],
                   names.index(key))
