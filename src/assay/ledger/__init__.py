"""The ledger: assay's one authority store, with SQLite and PostgreSQL backends.

:func:`open_store` picks the backend from a URL. The contract every backend
keeps is in :mod:`assay.ledger.store`. Database drivers are imported only
when their backend is opened.
"""

from __future__ import annotations

import os
from pathlib import Path

from assay.errors import AssayError, UsageError
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
    "ledger_not_found",
    "open_store",
]

# A URL scheme (RFC 3986), [A-Za-z][A-Za-z0-9+.-]*, followed by "//": what
# names another store, never a file.
_SCHEME = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+.-"


def open_store(url: str | os.PathLike[str], *, base: str | os.PathLike[str] | None = None,
               principal: str | None = None, create: bool = True) -> Store:
    """Open the ledger at ``url``, for ``principal``; create it first only when ``create``.

    The handle reads and writes as ``principal`` (see
    :mod:`assay.ledger.store` on private partitions); without one it reads
    only project records.

    ``postgresql://...`` (or ``postgres://``) opens the PostgreSQL backend; an
    optional ``assay_schema=NAME`` query parameter selects the schema (default
    ``assay``). ``sqlite:///path``, ``sqlite:relative`` or a plain path opens
    SQLite; relative paths are taken from ``base`` (the project root). Any
    other ``scheme://`` is ``invalid_argument`` at ``/db``. Without
    ``create``, a ledger that does not exist yet (no SQLite file, no
    PostgreSQL schema with a ledger in it) is :func:`ledger_not_found` and
    nothing is created: no file, directory, schema or table.
    """
    text = os.fspath(url)
    if principal is not None:
        validate_principal(principal)
    if text.startswith(("postgresql://", "postgres://")):
        from assay.ledger.postgres import PostgresStore

        return PostgresStore(text, principal=principal, create=create)
    scheme, slashes, _ = text.partition("://")
    if (slashes and scheme[:1].isascii() and scheme[:1].isalpha() and not scheme.strip(_SCHEME)
            and scheme.lower() != "sqlite"):
        raise UsageError(
            f"unknown ledger URL scheme {scheme!r} in {text!r}",
            code="invalid_argument", pointer="/db",
            action="Use postgresql://HOST/DB, sqlite:///PATH or a file path.")
    if text.startswith("sqlite:"):
        text = text[len("sqlite:"):]
        if text.startswith("///"):
            text = text[2:]
    path = Path(text)
    if not path.is_absolute() and base is not None:
        path = Path(base) / path
    from assay.ledger.sqlite import SqliteStore

    return SqliteStore(path, principal=principal, create=create)


def ledger_not_found(location: str) -> AssayError:
    """The error for a read of a ledger that was never created (nothing is created by it)."""
    return AssayError(f"no ledger at {location}", code="ledger_not_found",
                      details={"location": location},
                      action="Run 'assay init' in the project root (or write a record) to "
                             "create the ledger, or check --db, ASSAY_DB and [ledger] url.")
