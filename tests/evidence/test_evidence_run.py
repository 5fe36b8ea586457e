"""Evidence runs end to end: real project, real git, real SQLite ledger, real subprocesses."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from evidence_helpers import PYTHON, git, make_repo, op

from assay.canonical import digest
from assay.errors import AssayError

COMMANDS = f"""
[evidence.commands.unit]
argv = [{PYTHON!r}, "-c", "print('unit ok')"]
required = true

[evidence.commands.broken]
argv = [{PYTHON!r}, "-c", "import sys; print('bad'); sys.exit(2)"]

[evidence.commands.writer]
argv = [{PYTHON!r}, "-c", "open('made.txt', 'w').write('x')"]

[evidence.commands.value]
argv = [{PYTHON!r}, "-c", "import sys; sys.exit(0 if open('value.txt').read() == 'new' else 1)"]

[evidence.commands.leaky]
argv = [{PYTHON!r}, "-c", "import os; print('tok', os.environ['ASSAY_TEST_TOKEN'])"]
env = ["ASSAY_TEST_TOKEN"]

[evidence.commands.off]
argv = ["true"]
enabled = false
"""


def ledger_revision(root: Path) -> int:
    return op(root, "evidence.list")[0]["ledger_revision"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git repository with assay initialised, evidence commands declared, all committed."""
    root = make_repo(tmp_path / "proj", {"value.txt": "old"})
    op(root, "init", {"cwd": str(root)})
    with open(root / "assay.toml", "a", encoding="utf-8") as handle:
        handle.write(COMMANDS)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "assay")
    (root / "value.txt").write_text("new")
    git(root, "commit", "-q", "-am", "new value")
    return root


def test_evidence_run_writes_machine_record(project: Path) -> None:
    """A run writes evidence:NAME with origin machine, the observation, the boundary and host facts."""
    envelope, code = op(project, "evidence.run", {"name": "unit"})
    assert code == 0
    out = envelope["data"]
    assert out["status"] == "passed" and out["origin"] == "machine"
    shown = op(project, "evidence.show", {"id": "unit"})[0]["data"]
    record = shown["record"]
    assert record["origin"] == "machine" and shown["machine_observed"] is True
    data = record["data"]
    assert data["schema"] == "assay.evidence.v1"
    assert data["observation"]["stdout"]["tail"] == "unit ok\n"
    assert data["command"]["declaration_sha256"] == digest(data["command"]["declaration"])
    assert data["workspace"]["before"]["head"] == git(project, "rev-parse", "HEAD").strip()
    assert data["workspace"]["comparison"]["progress"] == "unchanged"
    assert data["host"]["python"] == ".".join(map(str, sys.version_info[:3]))
    assert data["posture"]["status"] == "verified"


def test_evidence_run_reference_pins_the_record(project: Path) -> None:
    """The printed evidence reference is the record's id, revision and data digest."""
    out = op(project, "evidence.run", {"name": "unit"})[0]["data"]
    record = op(project, "evidence.show", {"id": "evidence:unit"})[0]["data"]["record"]
    assert out["evidence_ref"] == {"id": "evidence:unit", "revision": record["revision"],
                                   "data_sha256": record["data_sha256"]}


def test_evidence_run_failure_is_recorded_with_exit_1(project: Path) -> None:
    """A failing command is recorded as failed and the operation answers exit status 1."""
    envelope, code = op(project, "evidence.run", {"name": "broken"})
    assert code == 1
    assert envelope["data"]["status"] == "failed" and envelope["data"]["exit_code"] == 2
    record = op(project, "evidence.show", {"id": "broken"})[0]["data"]["record"]
    assert record["data"]["posture"]["status"] == "contradicted"


def test_evidence_run_again_is_a_new_revision(project: Path) -> None:
    """Each run of a command is the next revision of the same record."""
    first = op(project, "evidence.run", {"name": "unit"})[0]["data"]["receipt"]
    second = op(project, "evidence.run", {"name": "unit"})[0]["data"]["receipt"]
    assert (first["revision"], second["revision"]) == (1, 2)
    old = op(project, "evidence.show", {"id": "unit", "revision": 1})[0]["data"]["record"]
    assert old["data_sha256"] == first["data_sha256"]


def test_evidence_run_changed_workspace(project: Path) -> None:
    """A command that writes a file shows it in the changed paths with progress changed."""
    op(project, "evidence.run", {"name": "writer"})
    data = op(project, "evidence.show", {"id": "writer"})[0]["data"]["record"]["data"]
    comparison = data["workspace"]["comparison"]
    assert comparison["progress"] == "changed"
    assert comparison["changed_paths"] == ["made.txt"]
    assert data["workspace"]["after"]["dirty"] == [
        {"path": "made.txt", "state": "untracked", "xy": "??"}]


def test_evidence_run_unknown_command_writes_nothing(project: Path) -> None:
    """An undeclared NAME is unknown_evidence_command at /name and nothing is written."""
    before = ledger_revision(project)
    with pytest.raises(AssayError) as caught:
        op(project, "evidence.run", {"name": "nope"})
    assert (caught.value.code, caught.value.pointer) == ("unknown_evidence_command", "/name")
    assert ledger_revision(project) == before


def test_evidence_run_disabled_command_refused(project: Path) -> None:
    """A disabled declaration is evidence_command_disabled at /name."""
    with pytest.raises(AssayError) as caught:
        op(project, "evidence.run", {"name": "off"})
    assert (caught.value.code, caught.value.pointer) == ("evidence_command_disabled", "/name")


def test_evidence_run_secret_never_reaches_the_ledger(project: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A secret the command prints is redacted before the write: not in any ledger file."""
    secret = "very-secret-token-value-123"
    monkeypatch.setenv("ASSAY_TEST_TOKEN", secret)
    out = op(project, "evidence.run", {"name": "leaky"})[0]["data"]
    assert out["redacted"] is True
    for path in (project / ".assay").iterdir():
        assert secret.encode() not in path.read_bytes(), path
    data = op(project, "evidence.show", {"id": "leaky"})[0]["data"]["record"]["data"]
    assert data["observation"]["redaction"]["rules"] == ["env:ASSAY_TEST_TOKEN"]


def intent_record(root: Path) -> None:
    """Write a minimal intent record knowledge:login with requirements R1 and R2."""
    data = {"intent": {
        "version": 1, "brief": "b", "user_reference": "u",
        "requirements": [{"id": "R1", "text": "t1", "acceptance": "a1"},
                         {"id": "R2", "text": "t2", "acceptance": "a2"}],
        "boundaries": [], "non_goals": []}}
    op(root, "put", {"id": "knowledge:login", "data": data})


def test_evidence_run_for_requirement_links_the_intent(project: Path) -> None:
    """--for INTENT#REQ records the target and a supports link to the intent."""
    intent_record(project)
    op(project, "evidence.run", {"name": "unit", "target": ["knowledge:login#R1"]})
    record = op(project, "evidence.show", {"id": "unit"})[0]["data"]["record"]
    assert record["data"]["target"] == {"intent": "knowledge:login", "requirement": "R1"}
    assert record["data"]["targets"] == [{"intent": "knowledge:login", "requirement": "R1"}]
    assert record["links"] == [{"rel": "supports", "target": "knowledge:login"}]


@pytest.mark.parametrize("target", ["knowledge:login#R9", "knowledge:absent#R1"])
def test_evidence_run_for_unknown_target_writes_nothing(project: Path, target: str) -> None:
    """An unknown intent or requirement is evidence_target_not_found at /target/0, before running."""
    intent_record(project)
    before = ledger_revision(project)
    with pytest.raises(AssayError) as caught:
        op(project, "evidence.run", {"name": "writer", "target": [target]})
    assert (caught.value.code, caught.value.pointer) == ("evidence_target_not_found",
                                                         "/target/0")
    assert ledger_revision(project) == before
    assert not (project / "made.txt").exists()


def test_evidence_run_for_malformed_target(project: Path) -> None:
    """--for without '#REQ' is invalid_argument at its pointer (/target/N)."""
    with pytest.raises(AssayError) as caught:
        op(project, "evidence.run", {"name": "unit", "target": ["knowledge:login"]})
    assert (caught.value.code, caught.value.pointer) == ("invalid_argument", "/target/0")


def worktrees(root: Path) -> list[str]:
    return [line for line in git(root, "worktree", "list", "--porcelain").splitlines()
            if line.startswith("worktree ")]


def test_evidence_run_discriminate_true(project: Path) -> None:
    """A check that passes now and fails at the older commit discriminates; the worktree is removed."""
    temp_before = set(os.listdir(tempfile.gettempdir()))
    envelope, code = op(project, "evidence.run", {"name": "value", "discriminate": "HEAD~1"})
    assert code == 0 and envelope["data"]["discriminates"] is True
    contrast = op(project, "evidence.show", {"id": "value"})[0]["data"]["record"]["data"][
        "discriminate"]
    assert contrast["status"] == "failed" and contrast["exit_code"] == 1
    assert contrast["commit"] == git(project, "rev-parse", "HEAD~1").strip()
    assert len(worktrees(project)) == 1
    leftovers = {n for n in set(os.listdir(tempfile.gettempdir())) - temp_before
                 if n.startswith("assay-discriminate-")}
    assert not leftovers


def test_evidence_run_discriminate_false(project: Path) -> None:
    """A check green at both commits does not discriminate: recorded, exit status 1."""
    envelope, code = op(project, "evidence.run", {"name": "unit", "discriminate": "HEAD~1"})
    assert code == 1 and envelope["data"]["discriminates"] is False
    contrast = op(project, "evidence.show", {"id": "unit"})[0]["data"]["record"]["data"][
        "discriminate"]
    assert contrast["status"] == "passed"
    assert "does not detect" in contrast["reason"]
    assert len(worktrees(project)) == 1


def test_evidence_run_discriminate_unknown_ref_writes_nothing(project: Path) -> None:
    """A ref naming no commit is unknown_ref at /discriminate and nothing runs or is written."""
    before = ledger_revision(project)
    with pytest.raises(AssayError) as caught:
        op(project, "evidence.run", {"name": "writer", "discriminate": "no-such-branch"})
    assert (caught.value.code, caught.value.pointer) == ("unknown_ref", "/discriminate")
    assert ledger_revision(project) == before and not (project / "made.txt").exists()


def test_evidence_run_outside_git_not_applicable(tmp_path: Path) -> None:
    """Outside git the run is still recorded, with the workspace not_applicable."""
    root = tmp_path / "plain"
    root.mkdir()
    op(root, "init", {"cwd": str(root)})
    with open(root / "assay.toml", "a", encoding="utf-8") as handle:
        handle.write(COMMANDS)
    out = op(root, "evidence.run", {"name": "unit"})[0]["data"]
    assert out["progress"] == "not_applicable" and out["status"] == "passed"


def test_evidence_show_claim_is_not_machine_observed(project: Path) -> None:
    """An evidence record written through put is a claim, never machine observed."""
    op(project, "put", {"id": "evidence:handmade", "data": {"observation": {"status": "passed"}}})
    shown = op(project, "evidence.show", {"id": "handmade"})[0]["data"]
    assert shown["record"]["origin"] == "claim" and shown["machine_observed"] is False


def test_evidence_show_missing_record(project: Path) -> None:
    """Showing an evidence record that does not exist is record_not_found at /id."""
    with pytest.raises(AssayError) as caught:
        op(project, "evidence.show", {"id": "never"})
    assert (caught.value.code, caught.value.pointer) == ("record_not_found", "/id")


def test_evidence_list_rows(project: Path) -> None:
    """The list has one row per evidence record with its origin and status."""
    op(project, "evidence.run", {"name": "unit"})
    op(project, "evidence.run", {"name": "broken"})
    rows = op(project, "evidence.list")[0]["data"]["evidence"]
    assert [(r["id"], r["status"], r["machine_observed"]) for r in rows] == [
        ("evidence:broken", "failed", True), ("evidence:unit", "passed", True)]


def test_evidence_observe_writes_nothing(project: Path) -> None:
    """evidence observe reports HEAD and the fingerprint and leaves the ledger unchanged."""
    before = ledger_revision(project)
    data = op(project, "evidence.observe", {"files": True})[0]["data"]
    assert data["status"] == "observed" and "value.txt" in data["files"]
    assert ledger_revision(project) == before


def test_evidence_cli_run_prints_reference_and_no_progress_on_pipe(project: Path) -> None:
    """On pipes the CLI prints one JSON line with the reference and nothing on stderr."""
    assay = Path(sys.executable).parent / "assay"
    done = subprocess.run([str(assay), "evidence", "run", "--", "unit"], cwd=project,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert '"evidence_ref":{"data_sha256":"' in done.stdout


def test_evidence_cli_readable_run_and_list(project: Path) -> None:
    """--format table prints the outcome with the reference to cite, and a list table."""
    assay = Path(sys.executable).parent / "assay"
    run = subprocess.run([str(assay), "evidence", "run", "--format", "table", "--", "broken"],
                         cwd=project, capture_output=True, text=True, check=False,
                         env={**os.environ, "NO_COLOR": "1"})
    assert run.returncode == 1
    assert "failed evidence:broken revision 1" in run.stdout
    assert 'cite: {"data_sha256":"' in run.stdout
    listed = subprocess.run([str(assay), "evidence", "list", "--format", "table"], cwd=project,
                            capture_output=True, text=True, check=False,
                            env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"})
    assert "evidence:broken" in listed.stdout and "machine" in listed.stdout
