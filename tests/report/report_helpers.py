"""Projects for report tests, built through the operations registry on real SQLite ledgers."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from assay.ops import Invocation, call
from assay_testing import Project, make_project

HOSTILE = '<script>window.__pwned = 1</script>'
HOSTILE_ATTR = '"><img src=x onerror="window.__pwned = 2">'


def op(project: Project, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run one operation in process; return its data (errors propagate)."""
    inv = Invocation(cwd=str(project.root), db=project.db, surface="test")
    try:
        envelope, _ = call(name, args or {}, inv)
    finally:
        inv.close()
    return envelope["data"]


def _command(name: str, code: str) -> str:
    return (f"\n[evidence.commands.{name}]\nargv = {json.dumps([sys.executable, '-c', code])}\n"
            "timeout = 60\n")


def put_intent(project: Project, record_id: str, intent: dict[str, Any],
               results: list[dict[str, Any]] | None) -> dict[str, Any]:
    """Write (or rewrite) an intent record with an acceptance mapping (None: no acceptance)."""
    from assay.intent.contract import intent_sha256

    data: dict[str, Any] = {"intent": intent}
    if results is not None:
        data["acceptance"] = {"intent_sha256": intent_sha256(intent), "results": results,
                              "blockers": []}
    return op(project, "put", {"id": record_id, "data": data})


def mixed_project(root: Path) -> Project:
    """An intent that is not ready: one requirement of each kind of status.

    R1 passed on machine evidence (ready); R2, child of R1, failed on a
    failing command; R3 claims passed with no evidence; R4 has no result.
    """
    toml = _command("green", "print('all 4 tests passed')")
    toml += _command("red", "import sys; print('1 failed: test_limit'); sys.exit(3)")
    project = make_project(root, name="mixed", extra_toml=toml)
    green = op(project, "evidence.run", {"name": "green"})
    red = op(project, "evidence.run", {"name": "red"})
    intent = {
        "version": 1, "brief": "Rate-limit the login endpoint",
        "user_reference": "ticket 42",
        "requirements": [
            {"id": "R1", "text": "limit to 5 attempts a minute", "acceptance": "the green check"},
            {"id": "R2", "text": "the limit is per account", "parent_id": "R1",
             "acceptance": "the red check"},
            {"id": "R3", "text": "document the limit", "acceptance": "a reviewer reads it"},
            {"id": "R4", "text": "log refused attempts", "acceptance": "the log check"},
        ],
        "boundaries": ["only the login module"], "non_goals": ["no captcha"],
    }
    put_intent(project, "knowledge:limit", intent, [
        {"requirement_id": "R1", "status": "passed", "evidence": [green["evidence_ref"]],
         "notes": "assay ran the green check"},
        {"requirement_id": "R2", "status": "failed", "evidence": [red["evidence_ref"]],
         "notes": "the red check fails"},
        {"requirement_id": "R3", "status": "passed", "evidence": [], "notes": "done, trust me"},
    ])
    return project


# The reviewer's project: R1's two tests pass and R2's fail (one failed, one
# skipped) in one run that fails; a test mapped to no requirement passes.
REVIEW_TESTS = (("tests.test_a", "test_one", "passed", ("R1",)),
                ("tests.test_a", "test_two", "passed", ("R1",)),
                ("tests.test_b", "test_three", "failed", ("R2",)),
                ("tests.test_b", "test_four", "skipped", ("R2",)),
                ("tests.test_c", "test_other", "passed"))
SHARED_NOTE = "assay ran the linter over the whole tree"
# Passes until the file `broken` exists.
_LINT = "import os, sys; sys.exit(1 if os.path.exists('broken') else 0)"


def reviewer_project(root: Path, db: str | None = None) -> Project:
    """A git project whose intent a reviewer reads: per-test results, a stale run, a shared note.

    R1 and R2 rest on one run of ``unit`` (exit 1): R1's own tests passed,
    R2's did not. R3 and its child R4 cite ``lint@1`` with the same note;
    ``lint`` then ran again and failed, so both citations are stale, with
    the same issue text.
    """
    import subprocess

    from junit_testing import junit_xml, results_command

    toml = results_command("unit", junit_xml(*REVIEW_TESTS), 1) + _command("lint", _LINT)
    project = make_project(root, name="review", db=db, git=True, extra_toml=toml)
    (root / ".gitignore").write_text(".assay/\nreports/\nbroken\n", encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "init"], cwd=root, check=True)
    op(project, "work.new", {"id": "knowledge:review", "brief": "Export the ledger",
                             "requirement": ["R1|rows export|its tests pass",
                                             "R2|headers export|its tests pass",
                                             "R3|lint clean|the linter passes",
                                             "R4|docs lint clean|the linter passes|R3"]})
    unit = op(project, "evidence.run", {"name": "unit", "target": [
        "knowledge:review#R1", "knowledge:review#R2"]})["receipt"]
    lint = op(project, "evidence.run", {"name": "lint", "target": [
        "knowledge:review#R3", "knowledge:review#R4"]})["receipt"]
    op(project, "work.accept", {"id": "knowledge:review",
                                "from_run": [f"{unit['id']}@{unit['revision']}"]})
    op(project, "work.accept", {"id": "knowledge:review", "requirement": ["R3", "R4"],
                                "evidence": [f"{lint['id']}@{lint['revision']}"] * 2,
                                "note": SHARED_NOTE})
    (root / "broken").write_text("", encoding="utf-8")
    op(project, "evidence.run", {"name": "lint"})
    return project


def hostile_project(root: Path) -> Project:
    """An intent whose every text field, and a command's output, holds markup."""
    toml = _command("noisy", f"print({HOSTILE!r}); print({HOSTILE_ATTR!r})")
    project = make_project(root, name="hostile", extra_toml=toml)
    run = op(project, "evidence.run", {"name": "noisy"})
    intent = {
        "version": 1, "brief": HOSTILE, "user_reference": HOSTILE_ATTR,
        "requirements": [{"id": "R1", "text": HOSTILE, "acceptance": HOSTILE_ATTR}],
        "boundaries": [HOSTILE], "non_goals": [HOSTILE_ATTR],
    }
    put_intent(project, "knowledge:hostile", intent, [
        {"requirement_id": "R1", "status": "passed", "evidence": [run["evidence_ref"]],
         "notes": HOSTILE}])
    return project


def large_project(root: Path, count: int = 1000) -> Project:
    """An intent of ``count`` requirements (trees ten deep), each citing machine evidence."""
    toml = "".join(_command(f"check-{n}", f"print('check {n} passed')") for n in range(4))
    project = make_project(root, name="large", extra_toml=toml)
    refs = [op(project, "evidence.run", {"name": f"check-{n}"})["evidence_ref"] for n in range(4)]
    requirements = []
    results = []
    for n in range(count):
        rid = f"R{n + 1}"
        req = {"id": rid, "text": f"requirement {n + 1}: the parser keeps error pointer {n} exact",
               "acceptance": f"check-{n % 4} passes on fixture {n}"}
        if n % 10:
            req["parent_id"] = f"R{n}"
        requirements.append(req)
        results.append({"requirement_id": rid, "status": "passed", "evidence": [refs[n % 4]],
                        "notes": f"assay ran check-{n % 4}"})
    intent = {"version": 1, "brief": f"{count} requirements", "user_reference": "scale",
              "requirements": requirements, "boundaries": [], "non_goals": []}
    put_intent(project, "knowledge:large", intent, results)
    return project


def _run_data(n: int, tail_bytes: int) -> dict[str, Any]:
    """Evidence data shaped like a command run whose stdout tail is ``tail_bytes`` long."""
    from assay.canonical import digest

    lines = "".join(f"tests/test_{n}.py::case_{i} PASSED\n" for i in range(tail_bytes // 30 + 1))
    tail = lines[-tail_bytes:]
    return {"schema": "assay.evidence.v1", "observation": {
        "status": "passed", "exit_code": 0, "signal": None, "reason": None, "duration_ms": 1000 + n,
        "argv": ["python", "-m", "pytest", "-q", f"tests/test_{n}.py"], "cwd": ".",
        "started_at": "2026-01-01T00:00:00.000Z",
        "stdout": {"bytes": len(lines), "sha256": digest(lines), "tail": tail,
                   "truncated": len(lines) > tail_bytes, "utf8": True},
        "stderr": {"bytes": 0, "sha256": digest(""), "tail": "", "truncated": False,
                   "utf8": True}}}


def wide_project(root: Path, count: int = 1000, tail_bytes: int = 16 * 1024) -> Project:
    """``count`` requirements, each citing its own machine run with a full-size output tail.

    The evidence records are written straight to the ledger with origin
    ``machine`` (as the runner writes them), so the worst case for the page's
    size (one distinct run per requirement, each with the runner's largest
    tail) takes seconds to build instead of ``count`` command runs.
    """
    from assay.intent.contract import intent_sha256
    from assay.ledger import open_store
    from assay.ledger.store import Write

    project = make_project(root, name="wide")
    scope = "project:wide"
    store = open_store(root / ".assay" / "ledger.db")
    try:
        refs = []
        for start in range(0, count, 100):
            receipts = store.put_many([
                Write(id=f"evidence:run-{n}", data=_run_data(n, tail_bytes), scope=scope,
                      origin="machine") for n in range(start, min(start + 100, count))])
            refs += [{"id": r.id, "revision": r.revision, "data_sha256": r.data_sha256}
                     for r in receipts]
        requirements = [{"id": f"R{n}", "text": f"requirement {n} holds on its fixture",
                         "acceptance": f"tests/test_{n}.py passes"} for n in range(count)]
        intent = {"version": 1, "brief": f"{count} requirements, {count} runs",
                  "user_reference": "scale", "requirements": requirements, "boundaries": [],
                  "non_goals": []}
        results = [{"requirement_id": f"R{n}", "status": "passed", "evidence": [refs[n]],
                    "notes": "assay ran it"} for n in range(count)]
        store.put(Write(id="knowledge:wide", scope=scope, data={"intent": intent, "acceptance": {
            "intent_sha256": intent_sha256(intent), "results": results, "blockers": []}}))
    finally:
        store.close()
    return project


def png_pixels(data: bytes) -> tuple[int, int, list[tuple[int, int, int]]]:
    """Decode an 8-bit, non-interlaced RGB or RGBA PNG (what Chromium writes): (w, h, pixels)."""
    import struct
    import zlib

    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    width = height = channels = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and interlace == 0 and colour in (2, 6), (depth, colour, interlace)
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows: list[bytearray] = []
    prev = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = prev[i]
            corner = prev[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else (up if pb <= pc else corner)
                line[i] = (line[i] + pred) & 0xFF
        rows.append(line)
        prev = line
    pixels = [(row[x], row[x + 1], row[x + 2]) for row in rows
              for x in range(0, stride, channels)]
    return width, height, pixels


def dominant_colour(data: bytes) -> tuple[int, int, int]:
    """The most frequent colour of a PNG's pixels."""
    from collections import Counter

    return Counter(png_pixels(data)[2]).most_common(1)[0][0]


def loop_project(root: Path) -> Project:
    """A git work tree with a buggy calc.py and its real test declared as the `unit` check."""
    import subprocess

    toml = (f"\n[evidence.commands.unit]\nargv = {json.dumps([sys.executable, '-B', 'test_calc.py'])}"
            "\ntimeout = 60\n")
    project = make_project(root, name="loops", git=True, extra_toml=toml)
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    (root / "test_calc.py").write_text("import calc\nassert calc.add(2, 3) == 5\n",
                                       encoding="utf-8")
    (root / ".gitignore").write_text(".assay/\n", encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "init"], cwd=root, check=True)
    return project


def evaluation(outcome: str, cont: bool, **extra: Any) -> dict[str, Any]:
    """A self-evaluation with the four required fields."""
    return {"outcome": outcome, "output_summary": f"round work ({outcome})",
            "constraint_violations": [], "should_continue": cont, **extra}
