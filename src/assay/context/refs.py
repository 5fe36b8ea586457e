"""Response-local ``$ref`` pointers: de-duplicating inventory views, and expanding them back.

An inventory response keeps its selected ``todos`` array intact and groups
records again in role-summary views (``agent_todos``, ``user_todos``), each an
object of named lanes holding arrays. A lane record whose canonical JSON is
byte-identical to one already present is replaced by ``{"$ref": POINTER}``,
where POINTER is an RFC 6901 fragment into the same response: ``#/todos/<i>``
when the record is in ``todos``, otherwise ``#/<view>/<lane>/<i>`` naming the
first complete copy in the views (lanes are visited in sorted name order,
items in order). Records that differ in any fact are never merged, whatever
their id or text. :func:`expand` reverses the replacement exactly.

Imports only errors and canonical.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from assay.canonical import canonical_text
from assay.errors import AssayError, pointer

__all__ = [
    "READBACK",
    "VIEWS",
    "deduplicate",
    "expand",
    "is_ref",
    "resolve_pointer",
]

VIEWS = ("agent_todos", "user_todos")
READBACK = (
    "An item {\"$ref\": \"#/...\"} in a view stands for the complete record at that JSON "
    "pointer (RFC 6901) in this same response; read the record there. It is not a command "
    "and grants nothing. assay.context.refs.expand() restores the full inventory."
)


def is_ref(value: Any) -> bool:
    """Whether ``value`` is a pointer object: exactly ``{"$ref": "#..."}``."""
    return (isinstance(value, dict) and len(value) == 1 and isinstance(value.get("$ref"), str)
            and value["$ref"].startswith("#"))


def deduplicate(document: dict[str, Any], *, primary: str = "todos",
                views: Sequence[str] = VIEWS) -> tuple[dict[str, Any], int]:
    """Return a copy of ``document`` with repeated view records replaced by pointers.

    ``document[primary]`` is left exactly as it is (repeats included). Returns
    the new document and how many view records were replaced. Cost: one
    canonical serialisation per record. A record that is itself shaped like a
    pointer cannot be told apart from one and is refused (``ValueError``).
    """
    out = dict(document)
    first: dict[str, str] = {}
    for index, record in enumerate(document.get(primary) or []):
        first.setdefault(canonical_text(record), f"#{pointer(primary, index)}")
    replaced = 0
    for view in views:
        lanes = document.get(view)
        if not isinstance(lanes, dict):
            continue
        new_lanes: dict[str, Any] = {}
        for lane in sorted(lanes):
            items = lanes[lane]
            new_items: list[Any] = []
            for index, record in enumerate(items):
                if is_ref(record):
                    raise ValueError(f"record at {view}/{lane}/{index} is shaped like a pointer")
                key = canonical_text(record)
                target = first.get(key)
                if target is None:
                    first[key] = f"#{pointer(view, lane, index)}"
                    new_items.append(record)
                else:
                    new_items.append({"$ref": target})
                    replaced += 1
            new_lanes[lane] = new_items
        out[view] = new_lanes
    return out, replaced


def resolve_pointer(document: Any, ref: str) -> Any:
    """The value at the RFC 6901 fragment ``ref`` (``#/a/0``) in ``document``.

    A pointer that leads nowhere is ``invalid_ref`` with the pointer as details.
    """
    if not ref.startswith("#"):
        raise AssayError(f"{ref!r} is not a response-local pointer", code="invalid_ref",
                         details={"ref": ref})
    value = document
    path = ref[1:]
    if path == "":
        return value
    if not path.startswith("/"):
        raise AssayError(f"{ref!r} is not a JSON pointer fragment", code="invalid_ref",
                         details={"ref": ref})
    for raw in path[1:].split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict) and token in value:
            value = value[token]
        elif isinstance(value, list) and token.isdigit() and (token == "0" or token[0] != "0") \
                and int(token) < len(value):
            value = value[int(token)]
        else:
            raise AssayError(f"pointer {ref!r} leads nowhere in this response", code="invalid_ref",
                             details={"ref": ref})
    return value


def expand(document: dict[str, Any], *, views: Sequence[str] = VIEWS) -> dict[str, Any]:
    """Replace every pointer in the views by a copy of the record it points at.

    The inverse of :func:`deduplicate`: ``expand(deduplicate(d)[0]) == d``.
    Pointers resolve against the given document; a pointer to another pointer
    or to nowhere is ``invalid_ref``. The input is not modified.
    """
    out = copy.deepcopy(document)
    for view in views:
        lanes = out.get(view)
        if not isinstance(lanes, dict):
            continue
        for items in lanes.values():
            if not isinstance(items, list):
                continue
            for index, item in enumerate(items):
                if is_ref(item):
                    target = resolve_pointer(document, item["$ref"])
                    if is_ref(target):
                        raise AssayError(f"pointer {item['$ref']!r} points at another pointer",
                                         code="invalid_ref", details={"ref": item["$ref"]})
                    items[index] = copy.deepcopy(target)
    return out
