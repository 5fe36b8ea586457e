"""Builders for readiness tests on real ledgers: projects with evidence commands, intents, damage.

Operations run in process through the registry (``op``), as the CLI and MCP
would call them; a test that needs the real command line uses
``Project.run``.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from assay.intent.contract import intent_sha256
from assay_testing import Project, corrupt_version, data, make_project, op

PASS = "print('1 passed')"
FAIL = "import sys; print('1 failed'); sys.exit(1)"


def commands_toml(**commands: str) -> str:
    """``[evidence.commands.NAME]`` tables running ``python -c CODE``."""
    out = ""
    for name, code in commands.items():
        out += (f"\n[evidence.commands.{name}]\n"
                f"argv = {json.dumps([sys.executable, '-c', code])}\ntimeout = 60\n")
    return out


def evidence_project(root: Path, db: str | None, **commands: str) -> Project:
    """A project (not a git work tree) declaring the given evidence commands."""
    return make_project(root, db=db, extra_toml=commands_toml(**commands))


def put(project: Project, record_id: str, value: Any, **args: Any) -> dict[str, Any]:
    receipt: dict[str, Any] = data(project, "put", id=record_id, data=value, **args)
    return receipt


def intent(*ids: str, verify: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """An intent whose requirements have the given ids (a flat list)."""
    return {
        "version": 1, "brief": "Ship the export", "user_reference": "issue 7",
        "requirements": [{"id": rid, "text": f"requirement {rid}",
                          "acceptance": f"run the {rid} check",
                          **({"verify_with": verify[rid]} if verify and rid in verify else {})}
                         for rid in ids],
        "boundaries": [], "non_goals": [],
    }


def result(rid: str, *refs: dict[str, Any], status: str = "passed",
           notes: str = "the check covers it") -> dict[str, Any]:
    return {"requirement_id": rid, "status": status, "evidence": list(refs), "notes": notes}


def accepted(the_intent: dict[str, Any], *results: dict[str, Any],
             **extra: Any) -> dict[str, Any]:
    return {"intent": the_intent,
            "acceptance": {"intent_sha256": intent_sha256(the_intent), "results": list(results),
                           "blockers": []}, **extra}


def ref(receipt: dict[str, Any], *, sha: bool = True) -> dict[str, Any]:
    """An evidence reference to a receipt's version (with its digest unless ``sha`` is False)."""
    out = {"id": receipt["id"], "revision": receipt["revision"]}
    if sha:
        out["data_sha256"] = receipt["data_sha256"]
    return out


def check(project: Project, record_id: str = "knowledge:export") -> dict[str, Any]:
    report: dict[str, Any] = op(project, "work.check", id=record_id)[0]["data"]
    return report


def codes(report: dict[str, Any]) -> list[str]:
    return [i["code"] for i in report["issues"]]


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def damage(project: Project, record_id: str, revision: int, text: str, *,
           rehash: bool = False, audience: str = "project") -> None:
    """Overwrite a stored version's text in the database; keep its old digest unless ``rehash``."""
    corrupt_version(project, record_id, revision, text, sha(text) if rehash else None,
                    audience=audience)


# The ways a stored version is damaged in the field, each as (text, rehash):
# a value changed with the old digest kept, an integer no double holds (with a
# digest matching the damaged text, as a tool that "fixed" the digest would
# leave it), text that is not JSON, and text cut short.
DAMAGE = {
    "changed-old-digest": ('{"observation":9007199254740993}', False),
    "unsafe-integer": ('{"observation":9007199254740993}', True),
    "not-json": ("not json at all", True),
    "truncated": ('{"observation":"focused te', False),
}
