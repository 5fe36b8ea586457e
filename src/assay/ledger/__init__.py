"""The ledger: assay's one authority store, with SQLite and PostgreSQL backends.

:func:`open_store` picks the backend from a URL. The contract every backend
keeps is in :mod:`assay.ledger.store`. Database drivers are imported only
when their backend is opened.
"""

from __future__ import annotations

import os
from pathlib import Path

from assay.ids import validate_principal
from assay.ledger.store import (
    LedgerInfo,
    Link,
    Reader,
    Receipt,
    Record,
    SourceRef,
    Store,
    Write,
    WriteBasis,
)

__all__ = [
    "LedgerInfo",
    "Link",
    "Reader",
    "Receipt",
    "Record",
    "SourceRef",
    "Store",
    "Write",
    "WriteBasis",
    "open_store",
]


def open_store(url: str | os.PathLike[str], *, base: str | os.PathLike[str] | None = None,
               principal: str | None = None) -> Store:
    """Open (creating if needed) the ledger at ``url``, for ``principal``.

    The handle reads and writes as ``principal`` (see
    :mod:`assay.ledger.store` on private partitions); without one it reads
    only project records.

    ``postgresql://...`` (or ``postgres://``) opens the PostgreSQL backend; an
    optional ``assay_schema=NAME`` query parameter selects the schema (default
    ``assay``). ``sqlite:///path``, ``sqlite:relative`` or a plain path opens
    SQLite; relative paths are taken from ``base`` (the project root).
    """
    text = os.fspath(url)
    if principal is not None:
        validate_principal(principal)
    if text.startswith(("postgresql://", "postgres://")):
        from assay.ledger.postgres import PostgresStore

        return PostgresStore(text, principal=principal)
    if text.startswith("sqlite:"):
        text = text[len("sqlite:"):]
        if text.startswith("///"):
            text = text[2:]
    path = Path(text)
    if not path.is_absolute() and base is not None:
        path = Path(base) / path
    from assay.ledger.sqlite import SqliteStore

    return SqliteStore(path, principal=principal)
