"""Eight agent processes against one ledger, then an invariant checker (``-m soak``).

Run: ``python -m pytest tests/soak -m soak --seconds 60`` (PostgreSQL too with
``ASSAY_TEST_POSTGRES_URL``). Each run prints its throughput and conflict rates.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from assay.canonical import digest
from assay.intent.check import work_check
from assay.intent.snapshot import ProjectBinding, RecordSnapshot
from assay.ledger import Write, open_store
from assay_testing import make_project

pytestmark = pytest.mark.soak
AGENTS = 8
AGENT = str(Path(__file__).with_name("soak_agent.py"))
SCOPE = "project:demo"
INTENT = json.loads((Path(__file__).parents[1] / "fixtures" / "intent" /
                     "02_valid_intent_only.json").read_text(encoding="utf-8"))["data"]
REPLAYED_CHECKS = 150
LOOPS = 3


def _run_agents(url: str, root: Path, seconds: float, logs: Path) -> list[dict[str, Any]]:
    procs = [subprocess.Popen([sys.executable, AGENT, url, str(root), str(i), str(seconds),
                               str(logs / f"agent-{i}.jsonl")], stderr=subprocess.PIPE, text=True)
             for i in range(AGENTS)]
    for proc in procs:
        _, err = proc.communicate(timeout=seconds + 300)
        assert proc.returncode == 0, err
    entries = []
    for i in range(AGENTS):
        for line in (logs / f"agent-{i}.jsonl").read_text(encoding="utf-8").splitlines():
            entries.append({**json.loads(line), "agent": i})
    return entries


def _op(root: Path, url: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    from assay.ops import Invocation, call

    inv = Invocation(cwd=str(root), db=url, surface="api")
    try:
        return call(name, args, inv)[0]["data"]
    finally:
        inv.close()


def _all_versions(url: str) -> tuple[str, int, list[Any]]:
    store = open_store(url)
    try:
        with store.reader() as r:
            ids = [rec.id for rec in r.find(limit=10_000_000)]
            return r.epoch, r.ledger_revision, [v for i in ids for v in r.history(i)]
    finally:
        store.close()


def _committed(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every receipt of a write that committed (not replays, which commit nothing)."""
    writes = [e for e in entries if e["op"] in ("cas", "put", "intent")
              or (e["op"] == "checkpoint" and e.get("receipt"))]
    return [e["receipt"] for e in writes if not e["receipt"].get("replayed")]


def check_invariants(url: str, root: Path, seed: list[dict[str, Any]],
                     entries: list[dict[str, Any]]) -> dict[str, Any]:
    """Assert the soak invariants; return the figures for the report."""
    epoch, head, versions = _all_versions(url)
    by_key = {(v.id, v.revision): v for v in versions}
    # Ledger revisions are gap-free: one per committed write, none skipped or doubled.
    assert sorted(v.ledger_revision for v in versions) == list(range(1, head + 1))
    # Every stored version's digest holds.
    for v in versions:
        assert v.data_sha256 == digest(v.data), v.id
    # Every acknowledged receipt is readable as issued, and nothing unacknowledged exists.
    committed = seed + _committed(entries)
    keys = [(r["id"], r["revision"]) for r in committed]
    assert len(set(keys)) == len(keys), "two receipts for one version"
    for receipt in committed:
        version = by_key.get((receipt["id"], receipt["revision"]))
        assert version is not None, f"acknowledged write lost: {receipt}"
        assert version.data_sha256 == receipt["data_sha256"]
        assert version.ledger_revision == receipt["ledger_revision"]
    # Loop rounds commit several records (and lease moves) per submission, so
    # their versions are counted apart; every other version has its receipt.
    loop_versions = [v for v in versions if v.kind in ("loop", "loop-lease")]
    assert len(committed) + len(loop_versions) == head, "the ledger holds writes nobody was told about"
    for e in entries:
        if e["op"] == "put":
            assert e["receipt"]["data_sha256"] == e["data_sha256"]
    # Idempotent replays return the original receipt; request-id reuse is always refused.
    for e in entries:
        if e["op"] == "replay":
            assert e["receipt"] == {**e["original"], "replayed": True}
    assert not [e for e in entries if e["op"] == "reuse_accepted"]
    assert not [e for e in entries if e["op"] == "error"], [e for e in entries if e["op"] == "error"][:3]
    # No lost update: each counter's value is its revision and equals its increments.
    increments = Counter(e["receipt"]["id"] for e in entries if e["op"] == "cas")
    for counter, count in increments.items():
        history = [v for v in versions if v.id == counter]
        assert [v.data["n"] for v in sorted(history, key=lambda v: v.revision)] == list(
            range(1, count + 1))
    # At most one committed transaction per (loop, round, attempt); each round record
    # was written once; each loop head counts exactly the commits its agents saw.
    commits = [e for e in entries if e["op"] == "loop_commit"]
    slots = Counter((e["loop"], e["round"], e["attempt"]) for e in commits)
    assert all(n == 1 for n in slots.values()), [s for s, n in slots.items() if n > 1]
    assert len({e["transaction"] for e in commits}) == len(commits)
    for v in versions:
        if v.kind == "loop" and v.id.count(":") == 3 and v.id.split(":")[2] == "round":
            assert v.revision == 1, f"{v.id} committed twice"
    for i in range(LOOPS):
        head_record = max((v for v in versions if v.id == f"loop:soak-{i}"),
                          key=lambda v: v.revision)
        seen = sum(1 for e in commits if e["loop"] == f"soak-{i}")
        assert head_record.data["facts"]["committed_rounds"] == seen, (i, seen)
    # Every work check report is reproducible at the revision it was computed at.
    checks = [e for e in entries if e["op"] == "check"]
    sample = random.Random(1).sample(checks, min(REPLAYED_CHECKS, len(checks)))
    for e in sample:
        snapshot = RecordSnapshot(versions, ledger_revision=e["ledger_revision"], epoch=epoch)
        binding = ProjectBinding(root=str(root), scope=SCOPE, principal=e["principal"])
        assert digest(work_check(snapshot, binding, "knowledge:intent")) == e["digest"], e
    ops = Counter(e["op"] for e in entries)
    cas_tries = ops["cas"] + ops["cas_conflict"]
    return {"ledger_revision": head, "operations": sum(ops.values()), "ops": dict(ops),
            "cas_conflict_rate": ops["cas_conflict"] / cas_tries if cas_tries else 0.0,
            "intent_conflict_rate": ops["intent_conflict"] / max(1, ops["intent"] + ops["intent_conflict"]),
            "checks_replayed": len(sample), "loop_commits": len(commits)}


def test_soak_eight_agents_keep_every_invariant(tmp_path: Path, ledger_url: str,
                                                soak_seconds: float) -> None:
    """Eight agents mixing puts, compare-and-set, replays, intent updates, work checks, checkpoints and loop rounds break no invariant."""
    project = make_project(tmp_path / "proj", db=ledger_url,
                           extra_toml="[loop]\nstall_rounds = 0\nmax_rounds = 1000\n")
    store = open_store(ledger_url)
    try:
        seed = [store.put(Write(id="knowledge:intent", data=INTENT, scope=SCOPE)).to_dict()]
    finally:
        store.close()
    for i in range(LOOPS):
        _op(project.root, ledger_url, "loop.start",
            {"task": f"soak loop {i}", "criterion": ["rounds commit once"], "loop": f"soak-{i}"})
    logs = tmp_path / "logs"
    logs.mkdir()
    started = time.monotonic()
    entries = _run_agents(ledger_url, project.root, soak_seconds, logs)
    elapsed = time.monotonic() - started
    figures = check_invariants(ledger_url, project.root, seed, entries)
    backend = "postgresql" if ledger_url.startswith("postgres") else "sqlite"
    print(f"\nsoak {backend}: {AGENTS} agents, {elapsed:.1f} s, "
          f"{figures['operations'] / elapsed:.0f} ops/s, "
          f"{figures['ledger_revision'] / elapsed:.0f} committed writes/s, "
          f"CAS conflict rate {figures['cas_conflict_rate']:.1%}, "
          f"intent conflict rate {figures['intent_conflict_rate']:.1%}, "
          f"{figures['loop_commits']} loop rounds committed, "
          f"{figures['checks_replayed']} reports reproduced; ops {figures['ops']}")
    assert figures["ops"].get("cas", 0) > 0 and figures["ops"].get("check", 0) > 0
    assert figures["loop_commits"] > 0
