"""The GitHub Action (action.yml) and the example workflow of docs/ci.md: linted and run locally.

actionlint lints workflows; it reads an action's metadata when a workflow
uses it as a local action (``uses: ./``), so action.yml is checked through
such a workflow. The Action's steps then run here as a runner runs them:
the same bash invocation, the same environment variables, the inputs
substituted where the Action substitutes them.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest
import yaml
from ci_helpers import BROKEN, BUNDLE, PUBLIC, agent_repo, ci_clone, commit, prove_and_attest

from assay_testing import Project

ROOT = Path(__file__).resolve().parents[2]
ACTION = ROOT / "action.yml"
CI_DOC = ROOT / "docs" / "ci.md"
ACTIONLINT = shutil.which("actionlint", path=os.pathsep.join(
    [str(Path(sys.executable).parent), os.environ.get("PATH", "")]))

needs_actionlint = pytest.mark.skipif(ACTIONLINT is None, reason="actionlint is not installed")


def example_workflow() -> str:
    text = CI_DOC.read_text(encoding="utf-8")
    found = re.search(r"<!-- BEGIN example: github-workflow -->\n```yaml\n(.*?)```\n"
                      r"<!-- END example: github-workflow -->", text, re.DOTALL)
    assert found is not None
    return found.group(1)


def actionlint(repo: Path) -> subprocess.CompletedProcess[str]:
    assert ACTIONLINT is not None
    return subprocess.run([ACTIONLINT, "-no-color"], cwd=repo, capture_output=True, text=True,
                          timeout=120, check=False)


def lint_repo(tmp_path: Path, workflow: str) -> Path:
    """A git repository holding action.yml at its root and ``workflow``."""
    repo = tmp_path / "lint"
    (repo / ".github" / "workflows").mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    shutil.copy(ACTION, repo / "action.yml")
    (repo / ".github" / "workflows" / "assay.yml").write_text(workflow, encoding="utf-8")
    return repo


@needs_actionlint
def test_actionlint_passes_the_example_workflow(tmp_path: Path) -> None:
    """The workflow docs/ci.md shows passes actionlint."""
    done = actionlint(lint_repo(tmp_path, example_workflow()))
    assert done.returncode == 0, done.stdout + done.stderr


@needs_actionlint
def test_actionlint_passes_action_yml_used_as_a_local_action(tmp_path: Path) -> None:
    """action.yml, used as ./ by the example workflow, passes actionlint."""
    local = example_workflow().replace("uses: OWNER/assay@main", "uses: ./")
    assert "uses: ./" in local
    done = actionlint(lint_repo(tmp_path, local))
    assert done.returncode == 0, done.stdout + done.stderr


@needs_actionlint
def test_actionlint_reads_action_yml_through_the_local_workflow(tmp_path: Path) -> None:
    """An input action.yml does not declare is reported: actionlint really read the metadata."""
    local = example_workflow().replace("uses: OWNER/assay@main", "uses: ./").replace(
        "          attestation: ", "          no-such-input: x\n          attestation: ")
    done = actionlint(lint_repo(tmp_path, local))
    assert done.returncode == 1
    assert 'input "no-such-input" is not defined in action "assay ci verify"' in done.stdout


# --- running the Action's steps -------------------------------------------------------------

_INPUT = re.compile(r"\$\{\{\s*inputs\.([A-Za-z0-9_-]+)\s*\}\}")


def _venv(tmp_path: Path) -> Path:
    """A fresh virtual environment that sees this one's dependencies but not its assay."""
    venv = tmp_path / "runner-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    purelib = subprocess.run([str(venv / "bin" / "python"), "-c",
                              "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    # Dependencies come from this environment; pip itself too (the venv has none of its own).
    ours = sysconfig.get_paths()["purelib"]
    (Path(purelib) / "deps.pth").write_text(ours + "\n", encoding="utf-8")
    return venv


def _source(tmp_path: Path) -> Path:
    """A copy of this repository's package source, so that pip builds it outside the tree."""
    copy = tmp_path / "assay-source"
    shutil.copytree(ROOT / "src", copy / "src",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, copy / name)
    return copy


def run_step(step: dict[str, Any], inputs: dict[str, str], cwd: Path, env: dict[str, str]
             ) -> subprocess.CompletedProcess[str]:
    """One composite step as the runner runs a bash step: ``bash --noprofile --norc -eo pipefail``."""
    assert step["shell"] == "bash"
    step_env = {k: _INPUT.sub(lambda m: inputs[m.group(1)], str(v))
                for k, v in (step.get("env") or {}).items()}
    script = cwd.parent / "step.sh"
    script.write_text(step["run"], encoding="utf-8")
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                          cwd=cwd, env={**env, **step_env}, capture_output=True, text=True,
                          timeout=600, check=False)


def test_action_steps_run_locally_agree_then_disagree(tmp_path: Path) -> None:
    """The Action installs assay and verifies: agrees on the attested work, disagrees once broken."""
    action = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    install, verify = action["runs"]["steps"]
    project: Project = agent_repo(tmp_path / "agent")
    prove_and_attest(project)
    venv = _venv(tmp_path)
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
    base_env.update({"PATH": f"{venv / 'bin'}{os.pathsep}{base_env.get('PATH', '')}",
                     "GITHUB_ACTIONS": "true", "RUNNER_TEMP": str(runner_temp),
                     "VIRTUAL_ENV": str(venv)})
    inputs = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    inputs.update({"attestation": BUNDLE, "key": PUBLIC, "package": str(_source(tmp_path))})

    def verified(clone: Project) -> tuple[int, str, str, str]:
        output = tmp_path / f"output-{clone.root.name}"
        summary = tmp_path / f"summary-{clone.root.name}"
        env = {**base_env, "GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary)}
        done = run_step(verify, inputs, clone.root, env)
        return done.returncode, output.read_text(), summary.read_text(), done.stderr

    first = ci_clone(project, tmp_path / "ci-agrees")
    installed = run_step(install, inputs, first.root, base_env)
    assert installed.returncode == 0, installed.stderr
    assert (venv / "bin" / "assay").exists()
    code, output, summary, _ = verified(first)
    assert (code, output) == (0, "verdict=agrees\n"), summary
    assert summary.startswith("## assay ci verify: agrees.")
    assert (first.root / "assay-ci-verify.xml").is_file()

    (project.root / "calc.py").write_text(BROKEN, encoding="utf-8")
    commit(project, "a later change breaks add")
    code, output, summary, stderr = verified(ci_clone(project, tmp_path / "ci-disagrees"))
    assert (code, output) == (1, "verdict=disagrees\n")
    assert "::error file=tests/test_calc.py,title=assay%3A test_differs::" in stderr
