"""``assay report`` on a large intent, against ``work check`` on the same intent.

The intent has N requirements (1,000; quick mode 200), each citing its own
machine-observed run whose stdout tail is the runner's largest (16 KiB). The
report reads the same snapshot as ``work check`` plus every cited record,
passes the publication gate over all of them and renders the page; the
baseline, measured in the same run on the same SQLite ledger, is the
``work.check`` operation itself. The time ratio is what the page costs on top
of the readiness answer it shows. The size row compares the HTML with the
canonical JSON of the work check report (what an agent reads over MCP).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from assay.canonical import canonical_bytes, digest
from assay.intent.contract import intent_sha256
from assay.ledger import Write, open_store
from assay.ops import Invocation, call
from bench.harness import row

SCOPE = "project:bench"
TAIL = 16 * 1024


def _run(n: int) -> dict[str, Any]:
    lines = "".join(f"tests/test_{n}.py::case_{i} PASSED\n" for i in range(TAIL // 30 + 1))
    return {"schema": "assay.evidence.v1", "observation": {
        "status": "passed", "exit_code": 0, "duration_ms": 1000, "cwd": ".",
        "argv": ["python", "-m", "pytest", "-q", f"tests/test_{n}.py"],
        "started_at": "2026-01-01T00:00:00.000Z",
        "stdout": {"bytes": len(lines), "sha256": digest(lines), "tail": lines[-TAIL:],
                   "truncated": True},
        "stderr": {"bytes": 0, "sha256": digest(""), "tail": "", "truncated": False}}}


def _project(root: Path, count: int, runs: int | None = None) -> None:
    """A project whose intent has ``count`` requirements citing ``runs`` runs (default: one each)."""
    runs = count if runs is None else runs
    root.mkdir(parents=True)
    (root / "assay.toml").write_text('[project]\nname = "bench"\n', encoding="utf-8")
    (root / ".assay").mkdir()
    store = open_store(root / ".assay" / "ledger.db")
    try:
        refs = []
        for start in range(0, runs, 100):
            receipts = store.put_many([Write(id=f"evidence:run-{n}", data=_run(n), scope=SCOPE,
                                             origin="machine")
                                       for n in range(start, min(start + 100, runs))])
            refs += [{"id": r.id, "revision": r.revision, "data_sha256": r.data_sha256}
                     for r in receipts]
        intent = {"version": 1, "brief": "bench", "user_reference": "bench", "boundaries": [],
                  "non_goals": [], "requirements": [
                      {"id": f"R{n}", "text": f"requirement {n}", "acceptance": "its test"}
                      for n in range(count)]}
        results = [{"requirement_id": f"R{n}", "status": "passed", "evidence": [refs[n % runs]],
                    "notes": "ran"} for n in range(count)]
        store.put(Write(id="knowledge:bench", scope=SCOPE, data={"intent": intent, "acceptance": {
            "intent_sha256": intent_sha256(intent), "results": results, "blockers": []}}))
    finally:
        store.close()


def _op(root: Path, name: str, args: dict[str, Any]) -> dict[str, Any]:
    inv = Invocation(cwd=str(root), surface="bench")
    try:
        envelope, _ = call(name, args, inv)
    finally:
        inv.close()
    return envelope


def run(quick: bool) -> list[dict[str, Any]]:
    count = 200 if quick else 1000
    runs = 3 if quick else 5
    with tempfile.TemporaryDirectory(prefix="bench-report-") as tmp:
        root = Path(tmp) / "project"
        _project(root, count)
        out = str(Path(tmp) / "report.html")
        jobs = {"report": lambda: _op(root, "report", {"intent": "knowledge:bench", "out": out}),
                "check": lambda: _op(root, "work.check", {"id": "knowledge:bench"})}
        samples: dict[str, list[float]] = {name: [] for name in jobs}
        for job in jobs.values():
            job()
        # Interleaved rounds: on a shared machine, load then hits both alike.
        for _ in range(runs):
            for name, job in jobs.items():
                start = time.perf_counter()
                job()
                samples[name].append(time.perf_counter() - start)
        report = jobs["report"]()["data"]
        check = jobs["check"]()
        json_bytes = len(canonical_bytes(check))

    def median(values: list[float]) -> float:
        return sorted(values)[len(values) // 2]

    t_report, t_check = median(samples["report"]), median(samples["check"])
    return [
        row(f"report, {count} requirements each citing its own run (16 KiB tails)",
            assay=t_report * 1000, baseline=t_check * 1000, baseline_name="work.check, same intent",
            unit="ms", runs=runs,
            spread=(max(samples["report"]) - min(samples["report"])) * 1000,
            goal="a few times the readiness check it renders",
            note="reads every cited record, gates every version shown, renders the page"),
        row(f"report size, {count} requirements", assay=report["bytes"] / 1e6,
            baseline=json_bytes / 1e6, baseline_name="work.check JSON (canonical)", unit="MB",
            goal="under 5 MB at 1,000 requirements",
            note="output tails capped per stream and per page"),
    ]
