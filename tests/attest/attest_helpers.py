"""Builders for attestation tests: an accepted intent in a committed git project, keys, bundles."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path
from typing import Any

from assay_testing import Project, data, make_project, op
from junit_testing import junit_xml, results_command

GREEN = junit_xml(("tests.test_csv", "test_rows", "passed", ("R1",)),
                  ("tests.test_csv", "test_header", "passed", ("R2",)))
INTENT = {"id": "knowledge:export", "brief": "Ship the export",
          "requirement": ["R1|CSV rows|its tests pass", "R2|Header|its tests pass"]}


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def accepted_project(root: Path, db: str | None = None) -> Project:
    """A committed git project: an intent whose two requirements rest on one green run, a key."""
    project = make_project(root, db=db, git=True, extra_toml=results_command("unit", GREEN))
    (root / ".gitignore").write_text(".assay/\nreports/\n", encoding="utf-8")
    (root / "app.py").write_text("ROWS = 3\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    data(project, "work.new", **INTENT)
    receipt = data(project, "evidence.run", name="unit",
                   target=["knowledge:export#R1", "knowledge:export#R2"])["receipt"]
    data(project, "work.accept", id="knowledge:export",
         from_run=[f"{receipt['id']}@{receipt['revision']}"])
    data(project, "key.generate")
    return project


PUBLIC = ".assay/keys/attestation.pub.json"
BUNDLE = ".assay/attestations/export.intoto.jsonl"


def attest(project: Project, **args: Any) -> dict[str, Any]:
    envelope, code = op(project, "attest", intent="knowledge:export", **args)
    assert code == 0, envelope
    out: dict[str, Any] = envelope["data"]
    return out


def verify(project: Project, file: str = BUNDLE, key: str = PUBLIC) -> dict[str, Any]:
    out: dict[str, Any] = data(project, "verify-attestation", file=file, key=key)
    return out


def lines(project: Project, file: str = BUNDLE) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (project.root / file).read_text().splitlines()]


def payload(envelope: dict[str, Any]) -> dict[str, Any]:
    decoded: dict[str, Any] = json.loads(base64.b64decode(envelope["payload"]))
    return decoded


def write_lines(project: Project, envelopes: list[dict[str, Any]],
                file: str = BUNDLE) -> None:
    (project.root / file).write_text("".join(json.dumps(e) + "\n" for e in envelopes))
