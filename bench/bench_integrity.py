"""What the integrity check on read costs: ``get`` by id and ``work check``, with and without it.

Every stored version assay hands out is checked first: its text must hash to
its ``data_sha256`` and parse strictly (no duplicate keys, no integer a
double cannot hold, bounded nesting). The baseline, measured in the same run
on the same ledger, is the same read decoding the stored text as the ledger
did before the check (``json.loads`` reading large integer literals the
canonical way, no digest, no strict parse): everything else (the query,
building the record, the report) is identical, so the ratio is the check's
own cost.

Three rows:

- the ``get`` operation by id (as the CLI and MCP call it, in process, one
  invocation) of 2 KB records, 200 per sample, many samples;
- the same reads at the ledger's reader (``reader.get`` and the record's
  data), where the check's own cost shows most;
- ``work check`` of an intent of 1,000 requirements citing 5,000 machine
  evidence records (the report decodes and checks every cited record).

Before and after alternate sample by sample so both meet the same load.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from assay.canonical import read_integer
from assay.intent.check import work_check
from assay.ledger import Write
from assay.ledger import record as store_module
from bench.bench_intent import _build
from bench.harness import row

SCOPE = "project:bench"
PAYLOAD = {"text": "x" * 1800, "tags": ["a", "b", "c"], "n": 42}  # about 2 KB canonical
GETS = 200  # per sample; many samples, alternating


def _decode_before(text: str, data_sha256: str) -> Any:
    """How stored data was decoded before the integrity check."""
    return json.loads(text, parse_int=read_integer)


@contextmanager
def _unchecked() -> Iterator[None]:
    """Reads decode stored text as before the check: no digest, no strict parse."""
    checked = store_module.decode_stored
    store_module.decode_stored = _decode_before
    try:
        yield
    finally:
        store_module.decode_stored = checked


def _alternate(fn: Callable[[], Any], runs: int) -> tuple[float, float, float]:
    """Best seconds of ``fn`` with the check (after) and without (before).

    The two alternate run by run, each pair in alternating order, so both
    meet the same moment-to-moment load; the fastest run of each is the one
    least disturbed by other work on the machine (a shared machine's noise
    is far larger than the difference measured). Returns (after, before,
    spread of after).
    """
    after: list[float] = []
    before: list[float] = []
    fn()
    with _unchecked():
        fn()
    for index in range(runs):
        for unchecked in ((False, True) if index % 2 == 0 else (True, False)):
            start = time.perf_counter()
            if unchecked:
                with _unchecked():
                    fn()
            else:
                fn()
            (before if unchecked else after).append(time.perf_counter() - start)
    return min(after), min(before), statistics.median(after) - min(after)


def _get_times(runs: int) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    """(operation, reader) timings of reading GETS records by id."""
    from assay.ops import Invocation, call

    with tempfile.TemporaryDirectory(prefix="assay-bench-integrity-") as tmp:
        root = Path(tmp)
        (root / "assay.toml").write_text('[project]\nname = "bench"\n', encoding="utf-8")
        (root / ".assay").mkdir()
        inv = Invocation(cwd=tmp, surface="bench")
        try:
            store = inv.store()
            ids = [f"knowledge:g{i}" for i in range(GETS)]
            store.put_many([Write(id=i, data=PAYLOAD, scope=SCOPE) for i in ids])

            def operation() -> None:
                for record_id in ids:
                    envelope, _ = call("get", {"id": record_id}, inv)
                    assert envelope["data"]["record"]["data"]["n"] == 42

            def reads() -> None:
                with store.reader() as reader:
                    for record_id in ids:
                        record = reader.get(record_id)
                        assert record is not None and record.data["n"] == 42

            return _alternate(operation, runs), _alternate(reads, runs)
        finally:
            inv.close()


def _check_times(runs: int) -> tuple[float, float, float]:
    with tempfile.TemporaryDirectory(prefix="assay-bench-integrity-") as tmp:
        store, binding, _, raw = _build(Path(tmp) / "ledger.db", 1000)
        raw.close()  # the intent bench's raw baseline, not used here
        try:
            def check() -> None:
                with store.reader() as reader:
                    work_check(reader, binding, "knowledge:bench")

            return _alternate(check, runs)
        finally:
            store.close()


def run(quick: bool) -> list[dict[str, Any]]:
    runs = 21 if quick else 101
    (op_after, op_before, op_spread), (get_after, get_before, get_spread) = _get_times(runs)
    check_runs = 3 if quick else 7
    check_after, check_before, check_spread = _check_times(check_runs)
    return [
        row(f"get by id (the operation) with the integrity check: {GETS} reads of 2 KB records",
            assay=op_after, baseline=op_before,
            baseline_name="the same calls decoded as before the check", unit="s",
            spread=op_spread, runs=runs, goal="<= 1.10x",
            note="digest and strict parse of every version read"),
        row(f"reader.get with the integrity check: {GETS} reads of 2 KB records, SQLite",
            assay=get_after, baseline=get_before,
            baseline_name="the same reads decoded as before the check", unit="s",
            spread=get_spread, runs=runs,
            note="the check's own cost: a SHA-256 and a strict parse per version"),
        row("work check with the integrity check: 1,000 requirements, 5,000 evidence records",
            assay=check_after, baseline=check_before,
            baseline_name="the same check decoded as before the check", unit="s",
            spread=check_spread, runs=check_runs, goal="<= 1.10x",
            note="every cited version is checked before the report uses it"),
    ]
