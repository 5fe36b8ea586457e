"""Provenance costs against plain ledger reads of the same records, measured in the same run.

- Publication gate on a 32-leaf envelope (the limit): validation on one
  snapshot plus the confirming head read, against reading the same 32
  current records once with ``Reader.get``.
- ``note list`` admission of 100 notes, each derived from its own source
  (closure walk, per-leaf checks, union envelope; the read's envelope fills
  after 16 notes), against a plain ``Reader.find`` of the same 100 notes.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from assay.ledger import open_store
from assay.ledger.access import Access
from assay.ledger.store import SourceRef, Write
from assay.provenance import publish, saved
from assay.provenance.envelope import Envelope, Leaf
from bench.harness import median_time, row

SCOPE = "project:bench"


def run(quick: bool) -> list[dict[str, Any]]:
    runs = 5 if quick else 15
    access = Access.for_project(SCOPE, (), "agent")
    rows = []
    with tempfile.TemporaryDirectory(prefix="assay-bench-") as tmp:
        store = open_store(Path(tmp) / "ledger.db")
        try:
            writes = [Write(id=f"knowledge:s{i:03}", data={"i": i, "text": "x" * 200}, scope=SCOPE)
                      for i in range(100)]
            store.put_many(writes)
            with store.reader() as reader:
                records = [reader.get(w.id) for w in writes]
                epoch, revision = reader.epoch, reader.ledger_revision
            leaves = tuple(Leaf(r.id, r.revision, r.data_sha256, r.audience) for r in records[:32])
            envelope = Envelope("known", epoch, revision, (), leaves)

            def gate() -> None:
                assert publish.check(store, access, envelope).published

            def plain_gets() -> None:
                with store.reader() as reader:
                    for leaf in leaves:
                        reader.get(leaf.id)

            t_gate, spread = median_time(gate, runs=runs)
            t_base, _ = median_time(plain_gets, runs=runs)
            rows.append(row("publication gate, 32-leaf envelope", assay=t_gate * 1000,
                            baseline=t_base * 1000, baseline_name="32 Reader.get on one snapshot",
                            unit="ms", spread=spread * 1000, runs=runs,
                            note="two snapshots (validate, confirm heads) and the pinned-digest "
                                 "checks"))

            store.put_many([Write(id=f"note:n{i:03}", data={"version": 1, "text": f"note {i}",
                                                            "author": "agent"}, scope=SCOPE,
                                  sources=(SourceRef(r.id, r.revision, r.data_sha256),))
                            for i, r in enumerate(records)])

            def listed() -> None:
                with store.reader() as reader:
                    out = saved.list_entries(reader, access, kind="note", limit=100)
                assert out["count"] + len(out["unavailable"]) == 100

            def plain_find() -> None:
                with store.reader() as reader:
                    assert len(reader.find(scopes=[SCOPE], kind="note", limit=100)) == 100

            t_list, spread = median_time(listed, runs=runs)
            t_find, _ = median_time(plain_find, runs=runs)
            rows.append(row("note list, 100 derived notes", assay=t_list * 1000,
                            baseline=t_find * 1000, baseline_name="Reader.find of the same notes",
                            unit="ms", spread=spread * 1000, runs=runs,
                            note="16 admitted (the read's 32-leaf envelope is then full), "
                                 "84 envelope_full without per-leaf checks"))
        finally:
            store.close()
    return rows
