"""``assay demo``: the whole story on a temporary project, told step by step.

The demo drives assay only through the operations registry (the same calls
the CLI and MCP make) on the embedded SQLite ledger, and prints what each
step shows. Each capability adds its chapter here.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from assay.ops import Invocation, call

__all__ = ["run_demo"]


class _Story:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.step = 0

    def say(self, text: str) -> None:
        sys.stdout.write(text + "\n")

    def chapter(self, title: str) -> None:
        self.step += 1
        self.say(f"\n{self.step}. {title}")

    def call(self, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        inv = Invocation(cwd=str(self.root), surface="demo")
        try:
            envelope, _ = call(name, {**(args or {})}, inv)
        finally:
            inv.close()
        return envelope

    def show(self, label: str, value: Any) -> None:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        self.say(f"   {label}: {text}")


def _chapter_foundation(story: _Story) -> None:
    story.chapter("Create a project")
    result = story.call("init", {"cwd": str(story.root)})["data"]
    story.show("scope", result["scope"])
    story.show("config", str(story.root / "assay.toml"))

    story.chapter("Canonical JSON: one digest whatever the key order or spacing")
    a = story.call("canonical", {"text": '{"b": 1, "a": [1.0, 1e21, -0]}'})["data"]
    b = story.call("canonical", {"text": '{"a":[1,1e+21,0],"b":1}'})["data"]
    story.show("canonical", a["canonical"])
    story.show("digest", a["digest"])
    story.show("same digest for the other spelling", str(a["digest"] == b["digest"]).lower())

    story.chapter("Every operation is described once, for the CLI and MCP alike")
    ops = story.call("describe")["data"]["operations"]
    story.show("operations", ", ".join(op["name"] for op in ops))


def _chapter_ledger(story: _Story) -> None:
    from assay.errors import ConflictError

    story.chapter("The ledger: versioned records, guarded writes, idempotent retries")
    data = {"brief": "Add a login rate limit", "owner": "agent"}
    first = story.call("put", {"id": "knowledge:rate-limit", "data": data,
                               "expect_revision": 0, "request_id": "demo-put-1"})["data"]
    story.show("put", f"{first['id']} revision {first['revision']} at ledger revision "
               f"{first['ledger_revision']}")
    try:
        story.call("put", {"id": "knowledge:rate-limit", "data": {"brief": "something else"},
                           "expect_revision": 0})
    except ConflictError as err:
        story.show("a second writer expecting an absent record", f"{err.code} "
                   f"(current revision {err.details['current_revision']}); nothing written")
    again = story.call("put", {"id": "knowledge:rate-limit", "data": data,
                               "expect_revision": 0, "request_id": "demo-put-1"})["data"]
    story.show("the first writer retries with its request id",
               f"replayed={str(again['replayed']).lower()}, same receipt at ledger revision "
               f"{again['ledger_revision']}")


def _chapter_evidence(story: _Story) -> None:
    story.chapter("Machine evidence: assay runs the declared check itself")
    (story.root / "calc.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    test = "import calc; assert calc.add(2, 2) == 4; print('1 passed')"
    with open(story.root / "assay.toml", "a", encoding="utf-8") as handle:
        handle.write("\n[evidence.commands.unit]\n"
                     f"argv = {json.dumps([sys.executable, '-c', test])}\n"
                     "timeout = 60\nrequired = true\n"
                     'description = "the unit test of calc.add"\n')
    story.show("declared", "[evidence.commands.unit] in assay.toml (argv, timeout, required)")
    run = story.call("evidence.run", {"name": "unit"})["data"]
    story.show("assay evidence run -- unit",
               f"{run['status']} in {run['duration_ms']} ms, origin {run['origin']}")
    story.show("cite it as", run["evidence_ref"])
    shown = story.call("evidence.show", {"id": "unit"})["data"]
    observation = shown["record"]["data"]["observation"]
    story.show("record", f"{shown['record']['id']} revision {shown['record']['revision']}, "
               f"machine_observed={str(shown['machine_observed']).lower()}")
    story.show("stdout tail", observation["stdout"]["tail"].strip())
    story.show("stdout sha256", observation["stdout"]["sha256"])
    story.call("put", {"id": "evidence:unit-by-hand",
                       "data": {"observation": {"status": "passed"}}})
    claimed = story.call("evidence.show", {"id": "unit-by-hand"})["data"]
    story.show("the same claim written with put",
               f"origin {claimed['record']['origin']}, "
               f"machine_observed={str(claimed['machine_observed']).lower()}")


CHAPTERS: list[Callable[[_Story], None]] = [_chapter_foundation, _chapter_ledger,
                                             _chapter_evidence]


def run_demo(*, keep: str | None = None) -> int:
    """Run every chapter in a fresh project; return the exit status."""
    started = time.monotonic()
    if keep:
        root = Path(keep).resolve()
        root.mkdir(parents=True, exist_ok=True)
        return _run(root, started)
    with tempfile.TemporaryDirectory(prefix="assay-demo-") as tmp:
        return _run(Path(tmp), started)


def _run(root: Path, started: float) -> int:
    story = _Story(root)
    story.say(f"assay demo: a temporary project at {root}")
    for chapter in CHAPTERS:
        chapter(story)
    story.say(f"\nDone in {time.monotonic() - started:.1f} s.")
    return 0
