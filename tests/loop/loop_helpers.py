"""Helpers for loop tests: a real git project with a real test command, and op calls."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from assay.ops import Invocation, call
from assay_testing import Project, make_project

BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
CHECK = "import sys\n\nimport calc\n\nsys.exit(0 if calc.add(2, 3) == 5 else 1)\n"
CRITERION = "add returns the sum"


def loop_project(root: Path, *, loop_toml: str = "", commands: bool = True,
                 slow: float = 0.0) -> Project:
    """A git work tree with calc.py (buggy), check.py and the `unit` evidence command."""
    toml = ""
    if commands:
        argv = [sys.executable, "-B", "check.py"]
        if slow:
            argv = [sys.executable, "-B", "-c",
                    f"import time, runpy; time.sleep({slow}); runpy.run_path('check.py')"]
        toml += f"\n[evidence.commands.unit]\nargv = {json.dumps(argv)}\ntimeout = 60\n"
        toml += f"\n[evidence.commands.lint]\nargv = {json.dumps([sys.executable, '-c', 'pass'])}\n"
        toml += "phases = [\"before\"]\n"
        toml += f"\n[evidence.commands.off]\nargv = {json.dumps([sys.executable, '-c', 'pass'])}\n"
        toml += "enabled = false\n"
    if loop_toml:
        toml += "\n[loop]\n" + loop_toml + "\n"
    project = make_project(root, name="loopdemo", git=True, extra_toml=toml)
    commit_calc(root)
    return project


def commit_calc(root: Path) -> None:
    """Write the buggy calc.py and its check.py into ``root`` and commit them."""
    (root / "calc.py").write_text(BUGGY, encoding="utf-8")
    (root / "check.py").write_text(CHECK, encoding="utf-8")
    (root / ".gitignore").write_text(".assay/\n__pycache__/\n", encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "init"], cwd=root, check=True)


def op(project: Project, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run one operation in process; return its data (errors propagate)."""
    inv = Invocation(cwd=str(project.root), surface="test")
    try:
        envelope, _ = call(name, args or {}, inv)
    finally:
        inv.close()
    return envelope["data"]


def start(project: Project, **extra: Any) -> dict[str, Any]:
    args = {"task": "Fix calc.add", "criterion": [CRITERION], "constraint": ["no new dependencies"]}
    args.update(extra)
    return op(project, "loop.start", args)


def evaluation(outcome: str = "partial", cont: bool = True, **extra: Any) -> dict[str, Any]:
    ev = {"outcome": outcome, "output_summary": f"round work ({outcome})",
          "constraint_violations": [], "should_continue": cont}
    ev.update(extra)
    return ev


def contract(*items: dict[str, Any], work_item: str = "calc.add is correct") -> dict[str, Any]:
    return {"work_item": work_item, "items": list(items) or [
        {"description": "the unit check passes", "verify_with": ["unit"]}]}


def submit(project: Project, handle: dict[str, Any], ev: dict[str, Any]) -> dict[str, Any]:
    return op(project, "loop.next", {"handle": json.dumps(handle), "evaluation": ev})


def records(project: Project, kind: str = "loop") -> dict[str, Any]:
    """Current records of a kind, by id."""
    from assay.ledger import open_store

    store = open_store(project.root / ".assay" / "ledger.db")
    try:
        with store.reader() as reader:
            return {r.id: r for r in reader.find(kind=kind, limit=1000)}
    finally:
        store.close()
