"""Validating a packet in the recon tool's layout against validating its assay twin.

Two generated standard packets of the same size (2,000 claims, one exact
evidence line each, one captured command output, three briefs and reviews,
one reconciliation; quick mode: 200 claims): one written as the recon tool
writes it (:func:`recon_testing.recon_packet` of the test suite, manifest
version 2), one in assay's layout (:func:`packet_testing.example_packet`). Both
go through the one boundary in interleaved rounds. The ratio is what the
recon tool's rules cost: its contract check of every file, reopening every
evidence line, the brief bindings and the reconciliation continuity.
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from assay.packet.validate import validate
from bench.harness import row

# The packet writers are the test suite's (tests/packet_testing.py, recon_testing.py).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from packet_testing import example_packet
from recon_testing import recon_packet


def run(quick: bool) -> list[dict[str, Any]]:
    claims = 200 if quick else 2000
    tmp = Path(tempfile.mkdtemp(prefix="bench-packet-recon-"))
    try:
        recon, twin = tmp / "recon", tmp / "twin"
        recon_packet(recon, profile="standard", claims=claims, source_kind="command-output")
        example_packet(twin, "standard", claims=claims)
        for root in (recon, twin):
            outcome = validate(root)
            assert outcome.run is not None and outcome.run.achieved == "standard", \
                outcome.issues[:3]
        runs = 5
        samples: dict[Path, list[float]] = {recon: [], twin: []}
        for _ in range(runs):
            for root in (recon, twin):
                start = time.perf_counter()
                validate(root)
                samples[root].append(time.perf_counter() - start)
        recon_s = statistics.median(samples[recon])
        twin_s = statistics.median(samples[twin])
        spread = max(samples[recon]) - min(samples[recon])
        return [
            row(f"validate recon-layout packet (standard, {claims} claims)",
                assay=recon_s * 1000, baseline=twin_s * 1000,
                baseline_name="validate the same packet in assay's layout", unit="ms",
                spread=spread * 1000, runs=runs, goal="<= 2x",
                note="the recon tool's rules, with its codes, on the recon layout"),
        ]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
