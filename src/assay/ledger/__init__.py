"""The ledger: assay's one authority store, with SQLite and PostgreSQL backends.

:func:`open_store` picks the backend from a URL. The contract every backend
keeps is in :mod:`assay.ledger.store`. Database drivers are imported only
when their backend is opened.
"""

from __future__ import annotations

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
    ledger_not_found,
    open_store,
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
    "ledger_not_found",
    "open_store",
]
