"""Packet validation against just reading and hashing the same files.

One generated thorough packet (2,000 claims, 5,000 evidence records, 200
listed artifacts, 50 source captures; quick mode: 200 / 500 / 20 / 5) is
validated by the one boundary. Baselines measured in the same run over the
exact files the validator opens: reading and SHA-256 hashing them, and
reading them plus strict JSON parsing (``assay.canonical.parse``) of the
JSON ones. Goal: validation within 4x of read+hash.
"""

from __future__ import annotations

import hashlib
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from assay.canonical import parse
from assay.packet.validate import validate
from bench.harness import row

# The packet writer is the test suite's (tests/packet_testing.py).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from packet_testing import example_packet


def _files(root: Path, run: Any) -> list[Path]:
    names = ["manifest.json", "claims.json", *(a.path for a in run.artifacts)]
    names += [f"raw/sources/{s.source_id}.txt" for s in run.sources]
    return [root / n for n in names]


def run(quick: bool) -> list[dict[str, Any]]:
    claims, evidence, sources, per_lane = (200, 500, 5, 1) if quick else (2000, 5000, 50, 31)
    tmp = Path(tempfile.mkdtemp(prefix="bench-packet-"))
    try:
        root = tmp / "packet"
        example_packet(root, "thorough", claims=claims, evidence=evidence, sources=sources,
                       extra_gather_lanes=5, dossiers_per_gather_lane=per_lane)
        outcome = validate(root)
        assert outcome.run is not None, outcome.issues[:3]
        files = _files(root, outcome.run)
        artifacts = len(outcome.run.artifacts)

        def read_hash() -> None:
            for path in files:
                hashlib.sha256(path.read_bytes()).hexdigest()

        def read_parse() -> None:
            for path in files:
                data = path.read_bytes()
                if path.suffix == ".json":
                    parse(data)

        runs = 5
        # Interleaved rounds: on a shared machine, load then hits all three alike.
        samples: dict[str, list[float]] = {"validate": [], "hash": [], "parse": []}
        jobs = {"validate": lambda: validate(root), "hash": read_hash, "parse": read_parse}
        for job in jobs.values():
            job()
        for _ in range(runs):
            for name, job in jobs.items():
                start = time.perf_counter()
                job()
                samples[name].append(time.perf_counter() - start)
        assay_s = statistics.median(samples["validate"])
        spread = max(samples["validate"]) - min(samples["validate"])
        base_s = statistics.median(samples["hash"])
        parse_s = statistics.median(samples["parse"])
        size = f"{claims} claims, {evidence} evidence, {artifacts} artifacts"
        return [
            row(f"validate packet ({size})", assay=assay_s * 1000, baseline=base_s * 1000,
                baseline_name="read + sha256 of the same files", unit="ms", spread=spread * 1000,
                runs=runs, goal="<= 4x"),
            row(f"validate packet vs strict parse ({size})", assay=assay_s * 1000,
                baseline=parse_s * 1000, baseline_name="read + canonical.parse of the same files",
                unit="ms", spread=spread * 1000, runs=runs,
                note="what the boundary adds beyond strict JSON parsing"),
        ]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
