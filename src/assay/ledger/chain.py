"""Walking the ledger's hash chain: every stored version checked against its seal and its place.

Each version is sealed when it is appended (``version_sha256``, see
:func:`assay.ledger.record.version_digest`) and chained to the version stored
before it (``chain_sha256``, :func:`assay.ledger.record.chain_digest`). A read
checks one version's seal; this module checks the whole order: that the
ledger revisions run from 1 without a gap, that each version's data hashes to
its data digest, its fields to its seal, and that each chain value follows
from the one before, recomputed here rather than trusted. The walk stops at
the first break. It is a pure function of the stored rows, so both backends
share it (they only page the rows to it). This module imports only the record
module and the base modules.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from assay.canonical import digest_bytes
from assay.ledger.record import (
    CHAIN_GENESIS,
    SEALED_FIELDS,
    VERSION_FIELDS,
    chain_digest,
    version_digest,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["BREAK_REASONS", "CHAIN_COLUMNS", "ChainBreak", "ChainWalk", "walk_chain"]

# What the walk reads of each version: its stored fields, its seal, its chain value.
CHAIN_COLUMNS = (*("data" if name == "data_text" else name for name in VERSION_FIELDS),
                 "version_sha256", "chain_sha256")
_INDEX = {name: i for i, name in enumerate((*VERSION_FIELDS, "version_sha256", "chain_sha256"))}
BREAK_REASONS = ("version_missing", "data_digest_mismatch", "version_digest_mismatch",
                 "chain_mismatch")


@dataclass(frozen=True, slots=True)
class ChainBreak:
    """The first place the stored history differs from what was written."""

    ledger_revision: int
    reason: str  # one of BREAK_REASONS
    message: str
    id: str | None = None
    audience: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"ledger_revision": self.ledger_revision, "reason": self.reason,
                "message": self.message}


@dataclass(frozen=True, slots=True)
class ChainWalk:
    """What a walk found: how far it went, the chain value it recomputed there, the first break."""

    ledger_revision: int  # the last version walked (0: none)
    versions: int
    chain_sha256: str  # the recomputed chain value at ledger_revision
    broken: ChainBreak | None = None


def walk_chain(rows: Iterable[Sequence[Any]]) -> ChainWalk:
    """Check versions in ledger revision order (rows of :data:`CHAIN_COLUMNS`); stop at the first break.

    The chain value carried forward is the recomputed one, never the stored
    one: a version rewritten and resealed, with every later chain value
    recomputed to match, still gives a different chain value at every later
    revision than the one an attestation recorded. Cost: per version, one
    SHA-256 of its data, its seal's text and the chain text.
    """
    chain = CHAIN_GENESIS
    last = 0
    count = 0
    for row in rows:
        revision = int(row[_INDEX["ledger_revision"]])
        problem = _problem(row, revision, last)
        sealed = "" if problem else _seal(row)
        if problem is None and sealed != row[_INDEX["version_sha256"]]:
            problem = ("version_digest_mismatch", (f"the fields of ledger revision {revision} do "
                       "not hash to its version_sha256"))
        expected = "" if problem else chain_digest(chain, sealed)
        if problem is None and expected != row[_INDEX["chain_sha256"]]:
            problem = ("chain_mismatch", (f"the chain_sha256 of ledger revision {revision} does "
                       "not follow from the versions before it"))
        if problem is not None:
            if problem[0] == "version_missing":  # nothing is stored there to name
                return ChainWalk(last, count, chain, ChainBreak(last + 1, *problem))
            return ChainWalk(last, count, chain, ChainBreak(
                revision, *problem, row[_INDEX["id"]], row[_INDEX["audience"]]))
        chain, last, count = expected, revision, count + 1
    return ChainWalk(last, count, chain)


def _seal(row: Sequence[Any]) -> str:
    """The seal the row's fields hash to ("" when a field is not of a type assay stores)."""
    try:
        return version_digest({name: row[_INDEX[name]] for name in SEALED_FIELDS})
    except (TypeError, ValueError):
        return ""


def _problem(row: Sequence[Any], revision: int, last: int) -> tuple[str, str] | None:
    """A gap before the version, or data that does not hash to its digest (None: neither)."""
    if revision != last + 1:
        return ("version_missing", (f"ledger revision {last + 1} is missing (the next stored "
                f"one is {revision})"))
    text = row[_INDEX["data_text"]]
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    if digest_bytes(raw) != row[_INDEX["data_sha256"]]:
        return ("data_digest_mismatch", (f"the data of ledger revision {revision} does not hash "
                "to its data_sha256"))
    return None
