"""Builders for CI re-verification tests: an agent's repository, its attestation, a CI clone.

The agent's repository is a real git work tree with calc.py, its pytest tests
(each marked with its requirement) and the ``unit`` check writing JUnit XML;
its ledger lives in ``.assay/`` (ignored, as ``assay init`` writes it), its
attestation public key is committed. CI is a fresh ``git clone`` of it: no
ledger, only what the pull request carries.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from assay.config import STATE_IGNORE
from assay_testing import Project, data, make_project, op

# The agent's project; the CI tests import its parts from here too.
from calc_project import BROKEN, CALC, INTENT, PYTEST, TESTS  # noqa: F401

WEAKENED = TESTS.replace("assert calc.add(2, 3) == 5", "assert calc.add(2, 3) is not None")
UNIT = (f"\n[evidence.commands.unit]\nargv = {json.dumps(PYTEST)}\ntimeout = 120\n"
        'results = { format = "junit", path = "reports/unit.xml" }\n')
BUNDLE = ".assay/attestations/calc.intoto.jsonl"
PUBLIC = ".assay/keys/attestation.pub.json"


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def commit(project: Project, message: str) -> str:
    git(project.root, "add", "-A")
    git(project.root, "commit", "-q", "-m", message)
    return git(project.root, "rev-parse", "HEAD")


def agent_repo(root: Path, db: str | None = None) -> Project:
    """The agent's committed repository with its intent recorded, its key committed."""
    project = make_project(root, db=db, git=True, extra_toml=UNIT)
    ignored = ["reports/", "__pycache__/", *STATE_IGNORE]
    (root / ".gitignore").write_text("".join(f"{line}\n" for line in ignored), encoding="utf-8")
    (root / "pytest.ini").write_text("[pytest]\npythonpath = .\n", encoding="utf-8")
    (root / "calc.py").write_text(CALC, encoding="utf-8")
    (root / "tests").mkdir()
    (root / "tests" / "test_calc.py").write_text(TESTS, encoding="utf-8")
    data(project, "key.generate")
    commit(project, "calc, its tests and the attestation key")
    data(project, "work.new", id=INTENT, brief="calc adds and subtracts",
         requirement=["R1|add adds|its test passes", "R2|sub subtracts|its test passes"],
         verify_with=["R1=unit", "R2=unit"])
    return project


def prove_and_attest(project: Project) -> str:
    """Run the check, accept it, attest and commit the attestation; the attested commit."""
    ran = data(project, "evidence.run", name="unit",
               target=[f"{INTENT}#R1", f"{INTENT}#R2"])
    data(project, "work.accept", id=INTENT,
         from_run=[f"{ran['receipt']['id']}@{ran['receipt']['revision']}"])
    attested = git(project.root, "rev-parse", "HEAD")
    envelope, code = op(project, "attest", intent=INTENT, out=BUNDLE)
    assert code == 0, envelope
    commit(project, "the attestation")
    return attested


def ci_clone(project: Project, target: Path) -> Project:
    """A fresh clone of the agent's repository: what CI checks out (no ledger)."""
    subprocess.run(["git", "clone", "-q", str(project.root), str(target)], check=True,
                   capture_output=True)
    return Project(root=target)


def ci_verify(clone: Project, **args: Any) -> tuple[dict[str, Any], int]:
    args.setdefault("attestation", BUNDLE)
    args.setdefault("key", [PUBLIC])
    args.setdefault("summary", "ci-out/summary.md")
    envelope, code = op(clone, "ci.verify", **args)
    out: dict[str, Any] = envelope["data"]
    return out, code


def kinds(result: dict[str, Any]) -> list[str]:
    return [d["kind"] for d in result["disagreements"]]
