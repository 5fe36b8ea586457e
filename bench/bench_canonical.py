"""Canonical JSON speed: assay's encoder against the rfc8785 reference package and json.dumps.

The record is a typical ~2 KB ledger record (strings, integers, a float,
non-ASCII text, nested objects and arrays); the value-rich document is an
intent-like 2 KB of 129 short values (:func:`bench.payloads.value_rich`).
Every row is the time per document, as a ratio to a baseline measured in the
same run; the outputs are checked to be identical before anything is timed.
"""

from __future__ import annotations

import hashlib
import json
import statistics
import time
from typing import Any

from bench.harness import row
from bench.payloads import count_values, value_rich


def record() -> dict[str, Any]:
    """A representative ~2 KB evidence record."""
    return {
        "id": "evidence:unit-7",
        "kind": "evidence",
        "scope": "project:demo",
        "revision": 3,
        "status": "current",
        "audience": "project",
        "data": {
            "command": {"name": "unit", "argv": ["pytest", "-q", "tests/unit"], "cwd": "."},
            "status": "passed",
            "exit_code": 0,
            "duration_ms": 1834,
            "stdout_tail": "collected 412 items\n" + "." * 400 + "\n412 passed in 1.80s\n",
            "stderr_tail": "",
            "stdout_sha256": "9f" * 32,
            "stderr_sha256": "e3" * 32,
            "git": {
                "head": "4b1e" * 10,
                "dirty": ["src/assay/canonical.py", "tests/foundation/test_canonical.py"],
                "fingerprint": "sha256:" + "d7" * 32,
            },
            "coverage": 0.8731,
            "tags": ["unit", "fast", "ci"],
            "notes": "Grüße, naïve café: 検証済み €",
        },
        "links": [{"rel": "supports", "id": "knowledge:login-flow", "revision": 2}],
        "sources": [{"id": f"knowledge:source-{i}", "revision": i + 1} for i in range(12)],
    }


def _pair(ours: Any, theirs: Any, value: Any, *, calls: int,
          runs: int) -> tuple[float, float, float]:
    """Per-call microseconds of ``ours`` and ``theirs`` on ``value``, timed in alternation.

    Returns (ours median, ours spread, theirs median). Alternating the two
    loops run by run lets machine noise hit both sides alike.
    """
    def loop(fn: Any) -> float:
        start = time.perf_counter()
        for _ in range(calls):
            fn(value)
        return (time.perf_counter() - start) / calls * 1e6

    loop(ours), loop(theirs)  # warm-up
    a, b = [], []
    for _ in range(runs):
        a.append(loop(ours))
        b.append(loop(theirs))
    return statistics.median(a), max(a) - min(a), statistics.median(b)


def run(quick: bool) -> list[dict[str, Any]]:
    import rfc8785

    from assay.canonical import canonical_bytes, digest, parse

    value = record()
    size = len(canonical_bytes(value))
    assert canonical_bytes(value) == rfc8785.dumps(value), "encoders disagree; fix before timing"
    calls, runs = (500, 5) if quick else (3000, 9)
    text = json.dumps(value, indent=2, ensure_ascii=False)

    def rfc8785_digest(v: Any) -> str:
        return hashlib.sha256(rfc8785.dumps(v)).hexdigest()

    def json_sorted(v: Any) -> bytes:
        return json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()

    def strict_then_canonical(t: str) -> bytes:
        return canonical_bytes(parse(t))

    def loads_then_rfc8785(t: str) -> bytes:
        return rfc8785.dumps(json.loads(t))

    ours, spread, ref = _pair(canonical_bytes, rfc8785.dumps, value, calls=calls, runs=runs)
    ours_digest, digest_spread, ref_digest = _pair(digest, rfc8785_digest, value, calls=calls,
                                                   runs=runs)
    parsed, parsed_spread, ref_parsed = _pair(strict_then_canonical, loads_then_rfc8785, text,
                                              calls=calls, runs=runs)
    floor, floor_spread, plain = _pair(canonical_bytes, json_sorted, value, calls=calls, runs=runs)
    rich = value_rich()
    assert canonical_bytes(rich) == rfc8785.dumps(rich), "encoders disagree; fix before timing"
    rich_ours, rich_spread, rich_plain = _pair(
        canonical_bytes, lambda v: json.dumps(v, sort_keys=True), rich, calls=calls, runs=runs)
    note = f"{size}-byte canonical record; {calls} calls x {runs} runs"
    return [
        row("canonical_bytes, 2 KB record", assay=ours, baseline=ref,
            baseline_name="rfc8785.dumps", unit="us", spread=spread, runs=runs,
            goal="<= 1x", note=note),
        row("digest, 2 KB record", assay=ours_digest, baseline=ref_digest,
            baseline_name="sha256(rfc8785.dumps)", unit="us", spread=digest_spread, runs=runs,
            goal="<= 1x", note=note),
        row("strict parse + canonical, 2 KB text", assay=parsed, baseline=ref_parsed,
            baseline_name="json.loads + rfc8785.dumps", unit="us", spread=parsed_spread,
            runs=runs, goal="<= 1x",
            note="assay also rejects duplicate keys, NaN and over-deep documents"),
        row("canonical_bytes vs non-canonical json.dumps", assay=floor, baseline=plain,
            baseline_name="json.dumps(sort_keys=True)", unit="us", spread=floor_spread, runs=runs,
            goal="reference only",
            note="json.dumps is not RFC 8785 (floats, -0, astral key order); a floor, not a target"),
        row(f"canonical_bytes, value-rich 2 KB document ({count_values(rich)} values)",
            assay=rich_ours, baseline=rich_plain, baseline_name="json.dumps(sort_keys=True)",
            unit="us", spread=rich_spread, runs=runs, goal="<= 1.5x",
            note=f"{len(canonical_bytes(rich))}-byte canonical document; {calls} calls x {runs} runs"),
    ]
