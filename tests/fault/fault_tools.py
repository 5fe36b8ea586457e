"""Helpers for the fault-injection tests: ledger invariants and error-object checks.

A uniquely named module (not a conftest) so test files can import it by name.
"""

from __future__ import annotations

import json
from typing import Any

from assay.canonical import digest
from assay.ledger import open_store


def assert_clean_error(result: Any, code: str, exit_code: int) -> dict[str, Any]:
    """The CLI failed with one JSON error object of ``code`` on stderr and no traceback."""
    assert result.code == exit_code, (result.code, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    envelope = json.loads(result.stderr)
    assert envelope["ok"] is False
    assert envelope["error"]["code"] == code, envelope
    assert envelope["error"].get("action")
    return dict(envelope["error"])


def ledger_versions(url: str) -> tuple[int, list[Any]]:
    """(ledger revision, every version of every record) read from a fresh connection."""
    store = open_store(url)
    try:
        with store.reader() as r:
            ids = [rec.id for rec in r.find(limit=1_000_000)]
            versions = [v for i in ids for v in r.history(i)]
            return r.ledger_revision, versions
    finally:
        store.close()


def assert_ledger_whole(url: str, receipts: list[dict[str, Any]]) -> int:
    """Revisions are gap-free, every version's digest holds, every receipt is readable as issued.

    Returns the ledger revision.
    """
    head, versions = ledger_versions(url)
    assert sorted(v.ledger_revision for v in versions) == list(range(1, head + 1))
    by_key = {(v.id, v.revision): v for v in versions}
    for v in versions:
        assert v.data_sha256 == digest(v.data)
    for receipt in receipts:
        version = by_key.get((receipt["id"], receipt["revision"]))
        assert version is not None, f"acknowledged write lost: {receipt}"
        assert version.data_sha256 == receipt["data_sha256"]
        assert version.ledger_revision == receipt["ledger_revision"]
    return head
