"""Builders for stop-gate tests: git projects with an intent and a check, harness payloads.

Payloads come from the sample files in ``tests/fixtures/hooks`` with the
project directory put in; operations run in process through the registry
(``op``), a test of the command line itself uses ``Project.run``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from assay.ops import Invocation, call
from assay_testing import Project, make_project

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hooks"
PASS = "print('3 passed')"
CLAUDE_SESSION = "9f1c2a4e-5b7d-4e3a-8c21-0d6f3b2a1e90"


def payload(harness: str, name: str, project: Project | None, **fields: Any) -> dict[str, Any]:
    """The sample payload ``harness/name.json`` pointed at ``project`` (``fields`` override)."""
    data: dict[str, Any] = json.loads((FIXTURES / harness / f"{name}.json").read_text("utf-8"))
    if project is not None:
        if "cwd" in data:
            data["cwd"] = str(project.root)
        if "workspace_roots" in data:
            data["workspace_roots"] = [str(project.root)]
    data.update(fields)
    return data


def op(project: Project, operation: str, /, **args: Any) -> dict[str, Any]:
    """The data of one operation called in process against the project's ledger."""
    inv = Invocation(cwd=args.pop("cwd", str(project.root)), db=project.db, surface="test")
    try:
        return call(operation, args, inv)[0]["data"]  # type: ignore[no-any-return]
    finally:
        inv.close()


def stop(project: Project, data: dict[str, Any], **args: Any) -> dict[str, Any]:
    """``hook stop`` as a harness runs it: the directory comes from the payload."""
    inv = Invocation(db=project.db, surface="test")
    try:
        return call("hook.stop", {"payload": data, **args}, inv)[0]["data"]  # type: ignore[no-any-return]
    finally:
        inv.close()


def gate_project(root: Path, db: str | None = None, *, gate: str = 'intents = ["knowledge:export"]',
                 extra: str = "") -> Project:
    """A git project whose ``unit`` check passes, gated on ``knowledge:export`` (not recorded yet)."""
    toml = (f"\n[evidence.commands.unit]\nargv = {json.dumps([sys.executable, '-c', PASS])}\n"
            f"timeout = 60\n\n[gate]\n{gate}\n{extra}")
    project = make_project(root, db=db, git=True, extra_toml=toml)
    (root / ".gitignore").write_text(".assay/\n", encoding="utf-8")
    (root / "export.py").write_text("SEP = ','\n", encoding="utf-8")
    commit(project, "start")
    return project


def commit(project: Project, message: str) -> None:
    subprocess.run(["git", "add", "-A"], cwd=project.root, check=True)
    subprocess.run(["git", "commit", "-q", "-m", message], cwd=project.root, check=True)


def record_intent(project: Project, record_id: str = "knowledge:export", *,
                  requirements: int = 1) -> None:
    specs = [f"R{n}|requirement {n}|run the unit check" for n in range(1, requirements + 1)]
    op(project, "work.new", id=record_id, brief="Ship the CSV export", requirement=specs,
       verify_with=[f"R{n}=unit" for n in range(1, requirements + 1)])


def prove(project: Project, record_id: str = "knowledge:export", requirement: str = "R1") -> str:
    """Run the unit check for ``requirement`` and record its result; return the run's ref."""
    run = op(project, "evidence.run", name="unit", target=f"{record_id}#{requirement}")
    ref = f"{run['evidence_ref']['id']}@{run['evidence_ref']['revision']}"
    op(project, "work.accept", id=record_id, from_run=[ref])
    return ref


def ready_project(root: Path, db: str | None = None) -> Project:
    """A gated project whose intent is ready for review on a machine run of the current files."""
    project = gate_project(root, db)
    record_intent(project)
    prove(project)
    return project


def give_up(project: Project) -> None:
    """Stop until the gate gives up on the session (a new stop, then five continuing ones)."""
    stop(project, payload("claude-code", "stop", project))
    for _ in range(5):
        stop(project, payload("claude-code", "stop-continuing", project))


def session(project: Project, session_id: str = CLAUDE_SESSION,
            agent_id: str | None = None) -> dict[str, Any]:
    """The current data of the session's gate-session record."""
    name = session_id if agent_id is None else f"{session_id}/agent/{agent_id}"
    record: dict[str, Any] = op(project, "get", id=f"gate-session:{name}")["record"]
    return record
