"""Read bounds: what each read operation declares, and the reads that recover what a page omits.

Every read operation declares a :class:`Bound` when it registers (the
registry refuses a read without one): what one item is, its default and
maximum item count and byte size, the arguments that page or widen it, and
how the omitted rest is read. ``assay describe`` and the MCP tool list show
the declaration. The policy itself is stated in ``docs/agents.md``.

:func:`recovering_read` turns an operation name and its arguments into one
entry of a bounded answer's ``read_more``: the MCP tool, the arguments
object and the literal CLI argument array, all three naming the same read.
The argument array is built from the registry's own bindings
(:func:`assay.ops.argv.argv_for`), so it cannot drift from the CLI.
:func:`check_at_revision` refuses a read pinned at a revision the ledger has
moved past (the next page of a paged read names the revision it pins).

Imports nothing of assay at module level but assay.value (the registry imports this
module).
"""

from __future__ import annotations

from collections.abc import Mapping

from assay.value import frozen_value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["PAGE_FACTS_SCHEMA", "Bound", "check_at_revision", "max_bytes_argument",
           "recovering_read"]


@frozen_value
class Bound:
    """How much one read returns by default and at most, and how the rest is read.

    ``unit`` names one item (``todo``, ``version``, ``round``). ``items`` and
    ``max_items`` bound the count of items, ``bytes`` and ``max_bytes`` the
    canonical JSON bytes of the answer's ``data`` (None: not bounded that way).
    ``arguments`` are the arguments that page or widen the read; ``unbounded``
    names the flag that explicitly asks for everything, if there is one.
    ``whole`` marks a read that returns one item whole (a record, a report, a
    fixed document): it is never paged, and its size is bounded by
    construction, as ``recover`` says. ``recover`` is one sentence on how the
    reads in ``read_more`` recover what a page leaves out. Every read that is
    not ``whole`` carries the page facts (``complete``, ``truncated``,
    ``omitted``, ``read_more``; :data:`PAGE_FACTS_SCHEMA`).
    """

    unit: str
    recover: str
    items: int | None = None
    max_items: int | None = None
    bytes: int | None = None
    max_bytes: int | None = None
    arguments: tuple[str, ...] = ()
    unbounded: str | None = None
    whole: bool = False

    def __post_init__(self) -> None:
        for default, maximum in ((self.items, self.max_items), (self.bytes, self.max_bytes)):
            if (default is None) != (maximum is None) or (
                    default is not None and maximum is not None and not 0 < default <= maximum):
                raise ValueError(f"a bound needs 0 < default <= maximum, not {default}/{maximum}")
        if self.items is None and self.bytes is None:
            raise ValueError("a bound counts items, bytes or both")

    def describe(self) -> dict[str, Any]:
        """The declaration as JSON data (``bounds`` in ``assay describe``)."""
        return {
            "unit": self.unit,
            "items": None if self.items is None else {"default": self.items,
                                                      "maximum": self.max_items},
            "bytes": None if self.bytes is None else {"default": self.bytes,
                                                      "maximum": self.max_bytes},
            "arguments": list(self.arguments),
            "unbounded": self.unbounded,
            "whole": self.whole,
            "recover": self.recover,
        }

    @property
    def sentence(self) -> str:
        """The bound in one paragraph, for tool descriptions (argument names, no CLI spellings)."""
        everything = (f" The {self.unbounded} argument explicitly asks for everything, unbounded."
                      if self.unbounded else "")
        if self.whole:
            what = (f"one {self.unit}" if self.items == 1
                    else f"at most {_amounts(self.unit, self.items, None)[0]}")
            return f"Bounded read: {what}, returned whole. {self.recover}{everything}"
        default = " and ".join(_amounts(self.unit, self.items, self.bytes))
        most = " and ".join(_amounts(self.unit, self.max_items, self.max_bytes))
        wider = f" by default, {most} on request" if most != default else ""
        return (f"Bounded read: at most {default}{wider}; what it leaves out is counted in "
                f"omitted, with the reads that recover it in read_more. "
                f"{self.recover}{everything}")


def _amounts(unit: str, items: int | None, size: int | None) -> list[str]:
    plural = unit[:-1] + "ies" if unit.endswith("y") and not unit.endswith("ey") else unit + "s"
    return ([f"{items:,} {plural}"] if items is not None else []) + \
        ([_size(size)] if size is not None else [])


def _size(n: int) -> str:
    if n % (1024 * 1024) == 0:
        return f"{n // (1024 * 1024)} MiB"
    if n % 1024 == 0:
        return f"{n // 1024} KiB"
    return f"{n:,} bytes"


def recovering_read(operation: str, arguments: Mapping[str, Any], reason: str,
                    **facts: Any) -> dict[str, Any]:
    """One ``read_more`` entry: ``{reason, tool, arguments, read_args, ...facts}``.

    ``read_args`` is the CLI argument array after ``assay`` (options first,
    literals after ``--``), generated from the operation's argument bindings.
    ``facts`` (for example the ``id`` an exact read recovers) are added as is.
    """
    from assay.ops import lookup
    from assay.ops.argv import argv_for

    op = lookup(operation)
    argv = argv_for(op, arguments)
    clean = {k: (list(v) if isinstance(v, tuple) else v) for k, v in arguments.items()
             if v is not None}
    return {"reason": reason, "tool": op.tool_name, "arguments": clean, "read_args": argv,
            **facts}


def max_bytes_argument(default: int) -> Any:
    """The ``max_bytes`` argument of a byte-bounded read (default ``default``)."""
    from assay.ops import Argument
    from assay.paging import MAX_PAGE_BYTES, MIN_PAGE_BYTES

    return Argument("max_bytes", {"type": "integer", "minimum": MIN_PAGE_BYTES,
                                  "maximum": MAX_PAGE_BYTES},
                    f"At most this many bytes of canonical JSON in the answer (default {default}).")


# The output schema of the page facts every bounded read carries (see the policy).
PAGE_FACTS_SCHEMA: dict[str, Any] = {
    "complete": {"type": "boolean", "description": "Every item asked for is in the answer."},
    "truncated": {"type": "boolean", "description": "The bound left something out."},
    "omitted": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0},
                "description": "How many of each kind of item the bound left out."},
    "read_more": {"type": "array", "description": "The reads that recover what was left out.",
                  "items": {"type": "object", "required": ["reason", "tool", "arguments",
                                                           "read_args"],
                            "properties": {"reason": {"type": "string"},
                                           "tool": {"type": "string"},
                                           "arguments": {"type": "object"},
                                           "read_args": {"type": "array",
                                                         "items": {"type": "string"}}}}},
}


def check_at_revision(reader: Any, at_revision: int | None) -> None:
    """Refuse to answer when the ledger moved past a pinned revision (``--at-revision``)."""
    if at_revision is not None and reader.ledger_revision != at_revision:
        from assay.errors import ReadRevisionConflict

        raise ReadRevisionConflict(
            f"the ledger is at revision {reader.ledger_revision}, not {at_revision}",
            current_ledger_revision=reader.ledger_revision,
            pointer="/at_revision",
        )
