"""Results files in evidence runs: read safely after the command, mapped, recorded; refusals recorded."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from evidence_helpers import git, make_repo, op

from assay.config import load_project
from assay.errors import AssayError
from assay.evidence import results as results_module
from assay.evidence.commands import declaration_digest
from assay.value import replace
from assay_testing import make_project
from junit_testing import junit_xml, results_command, writer_code

PY = sys.executable
GREEN = junit_xml(("tests.test_a", "test_one", "passed", ("R1",)),
                  ("tests.test_a", "test_two", "passed", ("R1", "R2")),
                  ("tests.test_b", "test_three", "passed"))


def run(root: Path, name: str = "unit", **args: Any) -> tuple[dict[str, Any], dict[str, Any], int]:
    """Run a command; return the operation data, the stored record data and the exit status."""
    envelope, code = op(root, "evidence.run", {"name": name, **args})
    shown = op(root, "evidence.show", {"id": name})[0]["data"]["record"]["data"]
    return envelope["data"], shown, code


def project_with(tmp_path: Path, toml: str) -> Path:
    return make_project(tmp_path / "proj", extra_toml=toml).root


def test_results_recorded_with_digest_tests_and_rollups(tmp_path: Path) -> None:
    """A run reads its results file: the file digest, counts, each test and each requirement's rollup."""
    root = project_with(tmp_path, results_command("unit", GREEN))
    out, data, code = run(root)
    results = data["results"]
    assert code == 0 and out["results"]["status"] == "read"
    assert results["file"]["bytes"] == len(GREEN.encode())
    assert results["file"]["sha256"] == hashlib.sha256(GREEN.encode()).hexdigest()
    assert results["summary"] == {"tests": 3, "passed": 3, "failed": 0, "error": 0, "skipped": 0}
    assert [t["id"] for t in results["tests"]] == ["tests.test_a::test_one", "tests.test_a::test_two",
                                                   "tests.test_b::test_three"]
    assert {r["requirement_id"]: (r["outcome"], r["tests"]) for r in results["requirements"]} == {
        "R1": ("passed", 2), "R2": ("passed", 1)}
    assert out["results"]["requirements"] == {"R1": "passed", "R2": "passed"}
    assert results["reader"]["name"] == "junitparser"


def test_results_requirements_table_maps_globs(tmp_path: Path) -> None:
    """[evidence.commands.NAME.requirements] maps test-id globs; a glob matching nothing is named."""
    table = ('\n[evidence.commands.unit.requirements]\n"tests.test_b::*" = "R3"\n'
             '"tests.test_gone::*" = ["R4", "R3"]\n')
    root = project_with(tmp_path, results_command("unit", GREEN) + table)
    rows = {r["requirement_id"]: r for r in run(root)[1]["results"]["requirements"]}
    assert rows["R3"]["outcome"] == "unverified" and rows["R3"]["tests"] == 1
    assert rows["R3"]["missing_globs"] == ["tests.test_gone::*"]
    assert rows["R4"]["outcome"] == "unverified" and rows["R4"]["tests"] == 0


def test_results_mapping_is_part_of_the_declaration_digest(tmp_path: Path) -> None:
    """results and requirements enter the declaration digest; a plain declaration's digest is unchanged."""
    root = project_with(tmp_path, results_command("unit", GREEN)
                        + '\n[evidence.commands.plain]\nargv = ["true"]\n')
    decls = {d.name: d for d in load_project(root).evidence_commands}
    assert "results" in decls["unit"].to_dict() and "results" not in decls["plain"].to_dict()
    assert set(decls["plain"].to_dict()) == {"name", "argv", "cwd", "timeout", "env", "phases",
                                             "required", "enabled", "description"}
    assert declaration_digest(decls["unit"]) != declaration_digest(
        replace(decls["unit"], results=None))


def test_results_missing_file_recorded_and_exit_1(tmp_path: Path) -> None:
    """A command that writes no results file: the run is recorded, results refused results_missing."""
    toml = (f"\n[evidence.commands.unit]\nargv = {json.dumps([PY, '-c', 'pass'])}\n"
            'results = { format = "junit", path = "reports/unit.xml" }\n')
    out, data, code = run(project_with(tmp_path, toml))
    assert code == 1 and out["status"] == "passed"
    assert (data["results"]["status"], data["results"]["code"]) == ("refused", "results_missing")
    assert data["results"]["tests"] == [] and data["results"]["requirements"] == []


def test_results_file_left_from_an_earlier_run_is_not_used(tmp_path: Path) -> None:
    """A results file the run did not write is results_not_written, never this run's evidence."""
    toml = (f"\n[evidence.commands.unit]\nargv = {json.dumps([PY, '-c', 'pass'])}\n"
            'results = { format = "junit", path = "unit.xml" }\n')
    root = project_with(tmp_path, toml)
    (root / "unit.xml").write_text(GREEN, encoding="utf-8")
    data = run(root)[1]["results"]
    assert (data["status"], data["code"]) == ("refused", "results_not_written")
    assert data["file"]["bytes"] == len(GREEN.encode())


def test_results_rewritten_same_bytes_is_this_runs(tmp_path: Path) -> None:
    """A command that rewrites the file with identical bytes has written it: it is read."""
    root = project_with(tmp_path, results_command("unit", GREEN))
    run(root)
    assert run(root)[1]["results"]["status"] == "read"


def test_results_symlinked_file_refused(tmp_path: Path) -> None:
    """A results file that is a symlink (to a file outside) is results_symlink; it is not read."""
    outside = tmp_path / "outside.xml"
    outside.write_text(GREEN, encoding="utf-8")
    code = (f"import os; os.makedirs('reports', exist_ok=True); "
            f"os.symlink({str(outside)!r}, 'reports/unit.xml')")
    toml = (f"\n[evidence.commands.unit]\nargv = {json.dumps([PY, '-c', code])}\n"
            'results = { format = "junit", path = "reports/unit.xml" }\n')
    data = run(project_with(tmp_path, toml))[1]["results"]
    assert (data["status"], data["code"], data["file"]) == ("refused", "results_symlink", None)


def test_results_symlinked_directory_refused(tmp_path: Path) -> None:
    """A directory on the way that is a symlink is results_symlink: nothing behind it is read."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "unit.xml").write_text(GREEN, encoding="utf-8")
    code = f"import os; os.symlink({str(elsewhere)!r}, 'reports')"
    toml = (f"\n[evidence.commands.unit]\nargv = {json.dumps([PY, '-c', code])}\n"
            'results = { format = "junit", path = "reports/unit.xml" }\n')
    data = run(project_with(tmp_path, toml))[1]["results"]
    assert (data["status"], data["code"]) == ("refused", "results_symlink")


def test_results_fifo_refused_without_blocking(tmp_path: Path) -> None:
    """A FIFO at the results path is results_not_regular; reading never waits for a writer."""
    code = "import os; os.mkfifo('unit.xml')"
    toml = (f"\n[evidence.commands.unit]\nargv = {json.dumps([PY, '-c', code])}\n"
            'results = { format = "junit", path = "unit.xml" }\n')
    data = run(project_with(tmp_path, toml))[1]["results"]
    assert (data["status"], data["code"]) == ("refused", "results_not_regular")


def test_results_oversized_file_refused_from_its_size(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A results file over the size bound is results_too_large."""
    monkeypatch.setattr(results_module, "MAX_RESULTS_BYTES", 100)
    root = project_with(tmp_path, results_command("unit", GREEN))
    data = run(root)[1]["results"]
    assert (data["status"], data["code"]) == ("refused", "results_too_large")


def test_results_hostile_xml_recorded_not_raised(tmp_path: Path) -> None:
    """A command writing an entity bomb: the run is recorded with results_xml_forbidden."""
    bomb = ('<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa">'
            '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><testsuites>&b;</testsuites>')
    out, data, code = run(project_with(tmp_path, results_command("unit", bomb)))
    assert code == 1 and out["results"]["code"] == "results_xml_forbidden"
    assert data["results"]["message"].startswith("the results file contains a document type")


def test_results_failure_messages_are_redacted(tmp_path: Path) -> None:
    """A secret in a failure message is redacted before it is stored."""
    doc = ('<testsuite><testcase classname="t" name="leak"><failure message="token '
           'ghp_abcdefghijklmnopqrstuvwxyz0123456789AB leaked"/></testcase></testsuite>')
    data = run(project_with(tmp_path, results_command("unit", doc)))[1]["results"]
    message = data["tests"][0]["message"]
    assert "ghp_abcdefghijklmnopqrstuvwxyz0123456789AB" not in message and "REDACTED" in message


def test_results_stored_tests_bounded_mapped_first(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the bound the record keeps mapped tests first, then failures, and counts the rest."""
    monkeypatch.setattr(results_module, "MAX_STORED_TESTS", 2)
    doc = junit_xml(("t", "a", "passed"), ("t", "b", "failed"), ("t", "c", "passed"),
                    ("t", "z", "passed", ("R1",)))
    data = run(project_with(tmp_path, results_command("unit", doc, 1)))[1]["results"]
    assert [t["id"] for t in data["tests"]] == ["t::b", "t::z"]
    assert data["omitted"] == {"tests": 2} and data["summary"]["tests"] == 4


def test_results_path_relative_to_the_command_cwd(tmp_path: Path) -> None:
    """The results path is relative to the command's cwd, like the command writes it."""
    toml = (f"\n[evidence.commands.unit]\nargv = {json.dumps([PY, '-c', writer_code('out/u.xml', GREEN)])}\n"
            'cwd = "sub"\nresults = { format = "junit", path = "out/u.xml" }\n')
    root = project_with(tmp_path, toml)
    (root / "sub").mkdir()
    assert run(root)[1]["results"]["status"] == "read"


@pytest.mark.parametrize(("table", "where"), [
    ('results = { format = "tap", path = "r.xml" }', "/evidence/commands/unit/results/format"),
    ('results = { format = "junit" }', "/evidence/commands/unit/results/path"),
    ('results = { format = "junit", path = "../r.xml" }', "/evidence/commands/unit/results/path"),
    ('results = { format = "junit", path = "/tmp/r.xml" }', "/evidence/commands/unit/results/path"),
    ('results = { format = "junit", path = "r.xml", kind = "x" }',
     "/evidence/commands/unit/results/kind"),
    ('results = "r.xml"', "/evidence/commands/unit/results"),
    ('requirements = { "t::*" = 3 }', "/evidence/commands/unit/requirements/t::*"),
    ('requirements = { "t::*" = ["R1", " "] }', "/evidence/commands/unit/requirements/t::*/1"),
    ('requirements = { "t::*" = [] }', "/evidence/commands/unit/requirements/t::*"),
    ('requirements = ["R1"]', "/evidence/commands/unit/requirements"),
])
def test_results_config_mistakes_are_invalid_config(tmp_path: Path, table: str, where: str) -> None:
    """Each malformed results or requirements entry is invalid_config at its exact pointer."""
    root = make_project(tmp_path / "proj", ledger=False,
                        extra_toml=f'\n[evidence.commands.unit]\nargv = ["true"]\n{table}\n').root
    with pytest.raises(AssayError) as info:
        load_project(root)
    assert (info.value.code, info.value.pointer) == ("invalid_config", where)


# --- discriminating per test ---------------------------------------------------------------

TEST_FILE = """
import pytest

@pytest.mark.requirement("R1")
def test_lock():
    from app import LIMIT
    assert LIMIT == 3

@pytest.mark.requirement("R2")
def test_stable():
    assert True
"""


@pytest.fixture
def pytest_repo(tmp_path: Path) -> Path:
    """A repository whose test of R1 fails at the first commit and passes at the second."""
    root = make_repo(tmp_path / "repo", {
        "app.py": "LIMIT = 4\n", "tests/test_app.py": TEST_FILE, ".gitignore": "reports/\n"})
    op(root, "init", {"cwd": str(root)})
    argv = [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml=reports/unit.xml",
            "tests"]
    with open(root / "assay.toml", "a", encoding="utf-8") as handle:
        handle.write(f"\n[evidence.commands.unit]\nargv = {json.dumps(argv)}\nenv = "
                     '["PYTHONPATH"]\nresults = { format = "junit", path = "reports/unit.xml" }\n')
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "assay")
    (root / "app.py").write_text("LIMIT = 3\n")
    git(root, "commit", "-q", "-am", "fix the limit")
    return root


def test_results_discriminate_per_mapped_test(pytest_repo: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """--discriminate says per mapped test whether it failed at the ref (proves) or passed there too."""
    monkeypatch.setenv("PYTHONPATH", ".")
    out, data, code = run(pytest_repo, discriminate="HEAD~1")
    tests = {t["id"]: t for t in out["discriminated_tests"]["tests"]}
    assert code == 0 and out["discriminates"] is True
    assert tests["tests.test_app::test_lock"] == {
        "id": "tests.test_app::test_lock", "requirements": ["R1"], "now": "passed",
        "at_ref": "failed", "proves": True}
    assert tests["tests.test_app::test_stable"]["proves"] is False
    assert tests["tests.test_app::test_stable"]["at_ref"] == "passed"
    assert data["discriminate"]["tests"]["proving"] == 1
    assert data["discriminate"]["tests"]["results_at_ref"] == {"status": "read", "code": None}


def test_results_discriminate_new_test_is_absent_at_the_ref(pytest_repo: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A test that does not exist at the ref is absent there and proves nothing."""
    monkeypatch.setenv("PYTHONPATH", ".")
    (pytest_repo / "tests" / "test_new.py").write_text(
        'import pytest\n\n@pytest.mark.requirement("R3")\ndef test_new():\n    assert True\n')
    git(pytest_repo, "add", "-A")
    git(pytest_repo, "commit", "-q", "-m", "a new test")
    out = run(pytest_repo, discriminate="HEAD~1")[0]
    tests = {t["id"]: t for t in out["discriminated_tests"]["tests"]}
    assert (tests["tests.test_new::test_new"]["at_ref"],
            tests["tests.test_new::test_new"]["proves"]) == ("absent", False)
    assert os.path.exists(pytest_repo / "reports" / "unit.xml")
