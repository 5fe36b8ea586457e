"""`assay ci verify`: a fresh clone re-runs what an attestation rests on and agrees or not.

Each case plays the pull request for real: an agent's git repository with a
real pytest suite, a real attestation committed with it, and a ``git clone``
standing for CI's checkout (no ledger there).
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from ci_helpers import (
    BROKEN,
    BUNDLE,
    PUBLIC,
    WEAKENED,
    agent_repo,
    ci_clone,
    ci_verify,
    commit,
    kinds,
    prove_and_attest,
)

from assay_testing import ASSAY, Project, data


@pytest.fixture(scope="module")
def attested_once(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The attested repository, built once per module (a run of the check, a key, an attestation)."""
    project = agent_repo(tmp_path_factory.mktemp("attested") / "agent")
    return project.root, prove_and_attest(project)


@pytest.fixture
def attested(attested_once: tuple[Path, str], tmp_path: Path) -> tuple[Project, str]:
    """An agent's repository whose attestation says ready and is committed, and its commit:
    each test gets its own copy (work tree, git history and ledger)."""
    built, at = attested_once
    shutil.copytree(built, tmp_path / "agent", symlinks=True)
    return Project(root=tmp_path / "agent"), at


def test_ci_verify_agrees_when_the_attested_work_really_passes(
        attested: tuple[Project, str], tmp_path: Path) -> None:
    """Ready and passing: agrees (exit 0), each requirement passed, the commits since listed."""
    project, at = attested
    clone = ci_clone(project, tmp_path / "ci")
    result, code = ci_verify(clone)
    assert (result["verdict"], code) == ("agrees", 0), result["disagreements"]
    assert [(r["id"], r["attested"], r["now"]) for r in result["requirements"]] == [
        ("R1", "passed", "passed"), ("R2", "passed", "passed")]
    assert result["attestation"]["commit"] == at
    assert result["commits"] == [result["head"]] and result["commit_count"] == 1
    assert [c["name"] for c in result["checks"]] == ["unit"]
    summary = (clone.root / "ci-out" / "summary.md").read_text()
    assert summary.startswith("## assay ci verify: agrees.")
    assert "| R1 | passed | passed | - |" in summary


def test_ci_verify_disagrees_naming_the_test_when_code_breaks_after_attesting(
        attested: tuple[Project, str], tmp_path: Path) -> None:
    """Code broken after the attestation: disagrees, naming the failing test and requirement."""
    project, _ = attested
    (project.root / "calc.py").write_text(BROKEN, encoding="utf-8")
    commit(project, "a later change breaks add")
    result, code = ci_verify(ci_clone(project, tmp_path / "ci"))
    assert (result["verdict"], code) == ("disagrees", 1)
    differs = [d for d in result["disagreements"] if d["kind"] == "test_differs"]
    assert [(d["requirement"], d["test"]) for d in differs] == [
        ("R1", "tests.test_calc::test_add")]
    assert [(r["id"], r["now"]) for r in result["requirements"]] == [
        ("R1", "failed"), ("R2", "passed")]
    assert result["commit_count"] == 2


def test_ci_verify_disagrees_naming_the_check_redefined_in_assay_toml(
        attested: tuple[Project, str], tmp_path: Path) -> None:
    """A check redefined in the pull request's assay.toml: disagrees naming it; the pinned one ran."""
    project, _ = attested
    toml = project.root / "assay.toml"
    toml.write_text(toml.read_text().replace('"tests"]', '"tests", "-k", "not add"]'),
                    encoding="utf-8")
    (project.root / "calc.py").write_text(BROKEN, encoding="utf-8")
    commit(project, "skip the failing test by redefining the check")
    result, code = ci_verify(ci_clone(project, tmp_path / "ci"))
    assert (result["verdict"], code) == ("disagrees", 1)
    changed = [d for d in result["disagreements"] if d["kind"] == "check_changed"]
    assert [(d["check"], d["fields"]) for d in changed] == [("unit", ["argv"])]
    # The pinned declaration ran, so the broken test is seen all the same.
    assert "test_differs" in kinds(result)


def test_ci_verify_disagrees_naming_the_test_set_weakened_after_pinning(
        attested: tuple[Project, str], tmp_path: Path) -> None:
    """A test weakened after pinning (it still passes): disagrees naming the requirement's set."""
    project, _ = attested
    (project.root / "tests" / "test_calc.py").write_text(WEAKENED, encoding="utf-8")
    commit(project, "weaken the add test")
    result, code = ci_verify(ci_clone(project, tmp_path / "ci"))
    assert (result["verdict"], code) == ("disagrees", 1)
    assert kinds(result) == ["test_set_changed"]
    finding = result["disagreements"][0]
    assert (finding["requirement"], finding["tests"]) == ("R1", ["tests.test_calc::test_add"])


def test_ci_verify_is_unverifiable_without_an_attestation(tmp_path: Path) -> None:
    """No attestation at the path named: unverifiable (exit 5), attestation_missing."""
    project = agent_repo(tmp_path / "agent")
    result, code = ci_verify(ci_clone(project, tmp_path / "ci"))
    assert (result["verdict"], code, result["reason"]["code"]) == (
        "unverifiable", 5, "attestation_missing")


def test_ci_verify_is_unverifiable_with_an_unknown_key(
        attested: tuple[Project, str], tmp_path: Path) -> None:
    """A key that did not sign it: unverifiable, attestation_key_unknown."""
    project, _ = attested
    data(project, "key.generate", out="other/key")
    clone = ci_clone(project, tmp_path / "ci")
    result, code = ci_verify(clone, key=[str(project.root / "other/key.pub.json")])
    assert (result["verdict"], code, result["reason"]["code"]) == (
        "unverifiable", 5, "attestation_key_unknown")


def test_ci_verify_accepts_any_of_several_keys(
        attested: tuple[Project, str], tmp_path: Path) -> None:
    """With several --key, the one that signed is used."""
    project, _ = attested
    data(project, "key.generate", out="other/key")
    clone = ci_clone(project, tmp_path / "ci")
    result, code = ci_verify(clone, key=[str(project.root / "other/key.pub.json"), PUBLIC])
    assert (result["verdict"], code) == ("agrees", 0)


def test_ci_verify_is_unverifiable_with_a_bad_signature(
        attested: tuple[Project, str], tmp_path: Path) -> None:
    """An altered payload: unverifiable, attestation_signature_invalid."""
    project, _ = attested
    clone = ci_clone(project, tmp_path / "ci")
    path = clone.root / BUNDLE
    lines = path.read_text().splitlines()
    envelope = json.loads(lines[0])
    statement = json.loads(base64.b64decode(envelope["payload"]))
    statement["predicate"]["verdict"] = "ready"
    statement["predicate"]["requirements"] = []
    envelope["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()
    path.write_text("\n".join([json.dumps(envelope), *lines[1:]]) + "\n")
    result, code = ci_verify(clone)
    assert (result["verdict"], code, result["reason"]["code"]) == (
        "unverifiable", 5, "attestation_signature_invalid")


def test_ci_verify_cli_writes_summary_annotations_and_junit(
        attested: tuple[Project, str], tmp_path: Path) -> None:
    """Under GitHub Actions the CLI appends the step summary, prints ::error lines, writes JUnit."""
    project, _ = attested
    (project.root / "calc.py").write_text(BROKEN, encoding="utf-8")
    commit(project, "a later change breaks add")
    clone = ci_clone(project, tmp_path / "ci")
    summary = tmp_path / "step-summary.md"
    summary.write_text("earlier step\n")
    env = {**os.environ, "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    env.pop("ASSAY_DB", None)
    done = subprocess.run([ASSAY, "ci", "verify", "--attestation", BUNDLE, "--key", PUBLIC,
                           "--junit", "ci-out/junit.xml", "--format", "json"],
                          cwd=clone.root, env=env, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["data"]["verdict"] == "disagrees"
    errors = [line for line in done.stderr.splitlines() if line.startswith("::error")]
    assert ("::error file=tests/test_calc.py,title=assay%3A test_differs::R1: the test "
            "tests.test_calc::test_add failed on the re-run; the attestation says passed") in errors
    text = summary.read_text()
    assert text.startswith("earlier step\n## assay ci verify: disagrees.")
    import xml.etree.ElementTree as ET

    suite = ET.parse(clone.root / "ci-out" / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    failing = [(c.get("classname"), c.get("name")) for c in suite.iter("testcase")
               if c.find("failure") is not None]
    assert ("assay.R1", "tests.test_calc::test_add") in failing
    assert ("assay.R2", "tests.test_calc::test_sub") not in failing


def test_ci_verify_disagrees_when_the_attestation_says_not_ready(tmp_path: Path) -> None:
    """An attestation that does not say ready never agrees: attested_not_ready."""
    project = agent_repo(tmp_path / "agent")
    from assay_testing import op

    envelope, code = op(project, "attest", intent="knowledge:calc", out=BUNDLE)
    assert code == 1, envelope
    commit(project, "an unready attestation")
    result, code = ci_verify(ci_clone(project, tmp_path / "ci"))
    assert (result["verdict"], code) == ("disagrees", 1)
    assert kinds(result) == ["attested_not_ready"]


def test_ci_verify_is_unverifiable_when_the_key_file_is_missing(
        attested: tuple[Project, str], tmp_path: Path) -> None:
    """A key file that is not there: unverifiable with key_not_found, nothing re-run."""
    project, _ = attested
    result, code = ci_verify(ci_clone(project, tmp_path / "ci"), key=["no/such.pub.json"])
    assert (result["verdict"], code, result["reason"]["code"]) == (
        "unverifiable", 5, "key_not_found")
    assert result["checks"] == []


def test_ci_verify_is_unverifiable_for_a_file_that_is_no_bundle(
        attested: tuple[Project, str], tmp_path: Path) -> None:
    """A line that is not a DSSE envelope: unverifiable, attestation_malformed."""
    project, _ = attested
    clone = ci_clone(project, tmp_path / "ci")
    (clone.root / BUNDLE).write_text("not json\n")
    result, code = ci_verify(clone)
    assert (result["verdict"], code, result["reason"]["code"]) == (
        "unverifiable", 5, "attestation_malformed")


def test_ci_verify_is_unverifiable_for_a_bundle_without_what_a_rerun_needs(
        attested: tuple[Project, str], tmp_path: Path) -> None:
    """A signed bundle whose runs carry no declaration (an older assay's): not reverifiable."""
    from assay.attest.signing import load_signer, sign
    from assay.canonical import canonical_bytes, canonical_text

    project, _ = attested
    clone = ci_clone(project, tmp_path / "ci")
    path = clone.root / BUNDLE
    lines = path.read_text().splitlines()
    statement = json.loads(base64.b64decode(json.loads(lines[0])["payload"]))
    for run in statement["predicate"]["runs"]:
        del run["contract"]
    signer = load_signer(project.root / ".assay/keys/attestation.key")
    resigned = canonical_text(sign(canonical_bytes(statement), signer))
    path.write_text("\n".join([resigned, *lines[1:]]) + "\n")
    result, code = ci_verify(clone)
    assert (result["verdict"], code, result["reason"]["code"]) == (
        "unverifiable", 5, "attestation_not_reverifiable")


def test_ci_verify_reads_on_a_terminal(attested: tuple[Project, str], tmp_path: Path) -> None:
    """On a terminal: the verdict first, a line per requirement, then each disagreement."""
    from assay_testing import run_on_tty

    project, _ = attested
    (project.root / "calc.py").write_text(BROKEN, encoding="utf-8")
    commit(project, "a later change breaks add")
    clone = ci_clone(project, tmp_path / "ci")
    code, raw = run_on_tty("ci", "verify", "--attestation", BUNDLE, "--key", PUBLIC,
                           cwd=clone.root, columns=200, env={"NO_COLOR": "1"})
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", raw.decode())
    assert code == 1
    lines = [line.strip() for line in text.replace("\r", "").splitlines()]
    # The verdict is the first line after the spinner, before the attestation's line.
    assert text[:text.index("knowledge:calc attested")].rstrip().endswith("disagrees")
    assert "R1: attested passed, re-run failed" in lines
    assert ("test_differs: R1: the test tests.test_calc::test_add failed on the re-run; the "
            "attestation says passed") in lines
