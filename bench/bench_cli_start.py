"""Whole CLI calls against a bare interpreter: what an agent pays for every `assay` command.

Each row runs a fresh `assay` process and, in turn, a fresh `python -c pass`
of the same interpreter (the venv's, which pays the same interpreter and
site start-up as the console script), interleaved so that machine noise hits
both alike. The figure is the process's CPU time (user + system, from
``os.wait4``), not wall time: on a shared machine wall time measures the
neighbours as much as the command.

Both sides run with cached bytecode (``PYTHONDONTWRITEBYTECODE`` is
dropped from the environment, so the warm-up runs write it), as an installed
assay has.

The `get`, `put` and `work check` rows run in one project whose SQLite
ledger holds 10,000 records plus an intent of 8 requirements, each citing
one machine-observed evidence record.

The `python -c 'import MODULE'` rows price the modules the short calls
leave out (click, dataclasses, typing, hashlib), each against `python -c pass`.
The last row prices how `assay.canonical` hashes on short calls: SHA-256
from the interpreter's own module until a process has hashed 256 KB, instead
of `hashlib`, which loads OpenSSL. It runs the same `get` through the same
launcher twice, once with `hashlib` imported first, and compares the two.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.harness import row
from bench.payloads import value_rich

ASSAY = str(Path(sys.executable).parent / "assay")
SMALL = b'{"id":"knowledge:login-flow","data":{"brief":"Let users sign in","tags":["auth",1.0]}}'
LEDGER_RECORDS = 10_000
REQUIREMENTS = 8


def cpu_seconds(argv: list[str], *, stdin: bytes = b"", cwd: str | None = None,
                env: dict[str, str] | None = None) -> float:
    """Run ``argv`` to completion; return its CPU time (user + system) in seconds."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, cwd=cwd, env=env)
    assert proc.stdin is not None and proc.stderr is not None
    proc.stdin.write(stdin)
    proc.stdin.close()
    errors = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):  # 1 is a negative answer, e.g. "not ready"
        raise RuntimeError(f"{argv} exited {proc.returncode}: {errors.decode()[-400:]}")
    return usage.ru_utime + usage.ru_stime


def _project(root: Path) -> None:
    """A project with a 10,000-record ledger and an 8-requirement intent with evidence."""
    from assay.intent.contract import intent_sha256
    from assay.ledger import Write, open_store
    from assay.ops import Invocation, call

    call("init", {"cwd": str(root)}, Invocation(cwd=str(root)))
    scope = f"project:{root.name}"
    store = open_store(root / ".assay" / "ledger.db")
    try:
        for start in range(0, LEDGER_RECORDS, 1000):
            store.put_many([Write(id=f"knowledge:r{i}", data={"i": i, "text": f"record {i}"},
                                  scope=scope) for i in range(start, start + 1000)])
        reqs = [{"id": f"R{i}", "text": f"requirement {i}", "acceptance": f"check {i} passes"}
                for i in range(REQUIREMENTS)]
        store.put_many([Write(id=f"evidence:e{i}", data={"exit_code": 0, "status": "passed"},
                              scope=scope, origin="machine") for i in range(REQUIREMENTS)])
        intent = {"version": 1, "brief": "bench", "user_reference": "bench",
                  "requirements": reqs, "boundaries": [], "non_goals": []}
        results = [{"requirement_id": r["id"], "status": "passed",
                    "evidence": [{"id": f"evidence:e{i}", "revision": 1}], "notes": "n"}
                   for i, r in enumerate(reqs)]
        store.put(Write(id="knowledge:intent", scope=scope, data={
            "intent": intent,
            "acceptance": {"intent_sha256": intent_sha256(intent), "results": results,
                           "blockers": []}}))
    finally:
        store.close()


def _compare(argv: list[str], stdin: bytes, runs: int, cwd: str,
             env: dict[str, str], *, baseline: list[str] | None = None
             ) -> tuple[list[float], list[float]]:
    """CPU seconds of ``argv`` and of ``baseline`` (``python -c pass``), interleaved."""
    baseline = baseline or [sys.executable, "-c", "pass"]
    for _ in range(2):  # warm the page cache and write the .pyc files
        cpu_seconds(argv, stdin=stdin, cwd=cwd, env=env)
        cpu_seconds(baseline, cwd=cwd, env=env)
    ours, base = [], []
    for i in range(runs):
        pair = [(ours, argv, stdin), (base, baseline, b"")]
        for samples, args, data in pair if i % 2 == 0 else reversed(pair):
            samples.append(cpu_seconds(args, stdin=data, cwd=cwd, env=env))
    return ours, base


def run(quick: bool) -> list[dict[str, Any]]:
    runs = 5 if quick else 41
    # Cached bytecode, as an installed assay has: the warm-up runs write it.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("ASSAY_") and k != "PYTHONDONTWRITEBYTECODE"}
    # The commands run in the bench project: a relative PYTHONPATH (src:.) must
    # still name this checkout's code there, not whatever assay is installed.
    if env.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) if p else p
                                            for p in env["PYTHONPATH"].split(os.pathsep))
    put_body = __import__("json").dumps(value_rich()).encode()
    commands = [
        ("assay --version", ["--version"], b"", "< 3x"),
        ("assay canonical --digest (small document)", ["canonical", "--digest"], SMALL,
         "< 3x, without click or the registry"),
        (f"assay get -- ID ({LEDGER_RECORDS:,}-record ledger)", ["get", "--", "knowledge:r4321"],
         b"", "<= 4x"),
        ("assay put (value-rich 2 KB document)",
         ["put", "--data-file", "-", "--", "knowledge:cli-put"], put_body, "<= 4x"),
        (f"assay work check ({REQUIREMENTS} requirements)",
         ["work", "check", "--", "knowledge:intent"], b"", "<= 5x"),
    ]
    rows = []
    get = ["get", "--", "knowledge:r4321"]
    with tempfile.TemporaryDirectory(prefix="assay-bench-cli-") as tmp:
        root = Path(tmp) / "proj"
        root.mkdir()
        _project(root)
        for name, args, stdin, goal in commands:
            ours, base = _compare([ASSAY, *args], stdin, runs, str(root), env)
            rows.append(_cpu_row(name, ours, base, goal=goal))
        for module in ("click", "dataclasses", "typing", "hashlib"):
            ours, base = _compare([sys.executable, "-c", f"import {module}"], b"", runs,
                                  str(root), env)
            rows.append(_cpu_row(f"python -c 'import {module}'", ours, base,
                                 note="a module the short calls leave out"))
        ours, base = _compare([*_launcher("import hashlib"), *get], b"", runs, str(root), env,
                              baseline=[*_launcher(), *get])
        rows.append(_cpu_row(
            f"assay get -- ID with hashlib imported first ({LEDGER_RECORDS:,}-record ledger)",
            ours, base, baseline_name="the same get, SHA-256 from the interpreter's own module",
            note="what hashing without hashlib saves a short call (assay.canonical.digest_bytes)"))
    return rows


def _cpu_row(name: str, ours: list[float], base: list[float], *, goal: str = "",
             baseline_name: str = "python -c pass",
             note: str = "median CPU time (user + system) of a fresh process, same "
                         "interpreter, same run") -> dict[str, Any]:
    """A row of CPU medians in ms from :func:`_compare`'s seconds."""
    return row(name, assay=statistics.median(ours) * 1e3, baseline=statistics.median(base) * 1e3,
               baseline_name=baseline_name, unit="ms CPU", spread=(max(ours) - min(ours)) * 1e3,
               runs=len(ours), goal=goal, note=note)


def _launcher(first: str = "") -> list[str]:
    """``python -c`` running the CLI's entry point, after the statement ``first``."""
    return [sys.executable, "-c",
            f"{first}\nimport sys\nfrom assay.cli import main\nmain()"]
