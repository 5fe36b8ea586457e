"""Who may read what: scopes and audiences, checked on every read.

A project reads its own scope, its admitted historical scopes and ``global``.
A record whose audience is ``private:<principal>`` exists only for that
principal: for anyone else it is indistinguishable from an absent record
(not even its id, count or digest leaks). Capabilities filter through
:class:`Access` before they render anything.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from assay.ledger.store import Record
from assay.value import frozen_value

__all__ = ["Access"]


@frozen_value
class Access:
    """The read rights of one call: readable scopes and the acting principal."""

    scopes: tuple[str, ...]
    principal: str
    own_scope: str

    @classmethod
    def for_project(cls, scope: str, admitted: Sequence[str], principal: str) -> Access:
        return cls(scopes=(scope, *admitted, "global"), principal=principal, own_scope=scope)

    @property
    def audiences(self) -> tuple[str, ...]:
        """The audiences this caller may read, for filtering inside a query."""
        return ("project", f"private:{self.principal}")

    def in_scope(self, record: Record) -> bool:
        return record.scope in self.scopes

    def audience_allows(self, record: Record) -> bool:
        return record.audience == "project" or record.audience == f"private:{self.principal}"

    def can_read(self, record: Record | None) -> bool:
        """Whether the record exists for this caller: in scope and in its audience."""
        return record is not None and self.in_scope(record) and self.audience_allows(record)

    def visible(self, record: Record | None) -> Record | None:
        """The record if the caller may see that it exists, else None."""
        return record if record is not None and self.audience_allows(record) else None

    def filter(self, records: Iterable[Record]) -> list[Record]:
        return [r for r in records if self.can_read(r)]
