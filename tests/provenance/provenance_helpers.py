"""Helpers for the provenance tests: write records straight into a real ledger, build access."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from assay.errors import UnavailableError
from assay.ledger.access import Access
from assay.ledger.store import Record, SourceRef, Store, Write

SCOPE = "project:demo"


def access(principal: str = "alice", *, admitted: Sequence[str] = ()) -> Access:
    """The read rights of ``principal`` in the demo project."""
    return Access.for_project(SCOPE, tuple(admitted), principal)


@contextmanager
def as_principal(store: Store, principal: str | None) -> Iterator[Store]:
    """Another handle on the same ledger, reading and writing as ``principal``."""
    handle = store.as_principal(principal)
    try:
        yield handle
    finally:
        handle.close()


def current(store: Store, record_id: str, *, audience: str = "project") -> Record:
    """The current version in ``audience``'s partition (read as that principal)."""
    principal = audience.removeprefix("private:") if audience != "project" else None
    with as_principal(store, principal) as handle, handle.reader() as reader:
        record = reader.get(record_id)
    assert record is not None, record_id
    return record


def put(store: Store, record_id: str, data: Any, *, audience: str = "project", scope: str = SCOPE,
        sources: Sequence[Record | SourceRef] = (), status: str = "current",
        superseded_by: str | None = None, origin: str = "claim") -> Record:
    """Write one version (sources given as records are pinned to their exact version).

    ``origin="derived"`` stands for a version assay's saved-context code wrote;
    the default is what a client ``put`` writes.
    """
    refs = tuple(s if isinstance(s, SourceRef) else SourceRef(s.id, s.revision, s.data_sha256)
                 for s in sources)
    store.put(Write(id=record_id, data=data, scope=scope, audience=audience, sources=refs,
                    status=status, superseded_by=superseded_by, origin=origin))
    return current(store, record_id, audience=audience)


def retire(store: Store, record_id: str) -> Record:
    """A new version of the record with status retired and the same data."""
    record = current(store, record_id)
    return put(store, record_id, record.data, audience=record.audience, scope=record.scope,
               sources=record.sources, status="retired", origin=record.origin)


def typed(text: str, author: str = "alice") -> dict[str, Any]:
    """Saved-context data as assay writes it."""
    return {"version": 1, "text": text, "author": author}


class UnreachableAfter:
    """A store (seam fake) whose readers fail as unavailable after ``n`` have been opened."""

    def __init__(self, store: Store, n: int) -> None:
        self._store = store
        self._left = n
        self.backend = store.backend
        self.location = store.location

    @contextmanager
    def reader(self) -> Iterator[Any]:
        if self._left <= 0:
            raise UnavailableError("the ledger went away", code="ledger_unavailable")
        self._left -= 1
        with self._store.reader() as reader:
            yield reader

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)
