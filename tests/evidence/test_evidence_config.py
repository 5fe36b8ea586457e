"""The [evidence.commands.NAME] section of assay.toml: defaults and exact error pointers."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.config import EvidenceCommand, load_project
from assay.errors import AssayError


def load(tmp_path: Path, body: str) -> tuple[EvidenceCommand, ...]:
    """Write an assay.toml with ``body`` after a [project] table and load it."""
    (tmp_path / "assay.toml").write_text('[project]\nname = "p"\n\n' + body, encoding="utf-8")
    return load_project(tmp_path).evidence_commands


def test_evidence_config_defaults(tmp_path: Path) -> None:
    """A declaration with only argv gets the documented defaults."""
    (decl,) = load(tmp_path, '[evidence.commands.unit]\nargv = ["pytest", "-q"]\n')
    assert decl == EvidenceCommand(name="unit", argv=("pytest", "-q"), cwd=".", timeout=120,
                                   env=(), phases=("after",), required=False, enabled=True)


def test_evidence_config_all_keys(tmp_path: Path) -> None:
    """Every key is read; env is sorted and phases keep the before/after order."""
    (decl,) = load(tmp_path, """
[evidence.commands.unit]
argv = ["make", "test"]
cwd = "./sub/../tests"
timeout = 30
env = ["PYTHONPATH", "CI"]
phases = ["after", "before"]
required = true
enabled = false
description = "unit tests"
""")
    assert decl.cwd == "tests" and decl.timeout == 30
    assert decl.env == ("CI", "PYTHONPATH")
    assert decl.phases == ("before", "after")
    assert decl.required is True and decl.enabled is False
    assert decl.description == "unit tests"


def test_evidence_config_commands_sorted_by_name(tmp_path: Path) -> None:
    """Several declarations come back in name order."""
    decls = load(tmp_path, '[evidence.commands.z]\nargv = ["a"]\n[evidence.commands.a]\nargv = ["b"]\n')
    assert [d.name for d in decls] == ["a", "z"]


@pytest.mark.parametrize(("body", "ptr"), [
    ('[evidence.commands.unit]\nargv = ["x"]\nshell = true\n', "/evidence/commands/unit/shell"),
    ('[evidence.commands.unit]\ncwd = "."\n', "/evidence/commands/unit/argv"),
    ('[evidence.commands.unit]\nargv = []\n', "/evidence/commands/unit/argv"),
    ('[evidence.commands.unit]\nargv = "pytest -q"\n', "/evidence/commands/unit/argv"),
    ('[evidence.commands.unit]\nargv = ["pytest", 3]\n', "/evidence/commands/unit/argv/1"),
    ('[evidence.commands.unit]\nargv = [""]\n', "/evidence/commands/unit/argv/0"),
    ('[evidence.commands.unit]\nargv = ["x"]\ncwd = "/abs"\n', "/evidence/commands/unit/cwd"),
    ('[evidence.commands.unit]\nargv = ["x"]\ncwd = "a/../../x"\n', "/evidence/commands/unit/cwd"),
    ('[evidence.commands.unit]\nargv = ["x"]\ntimeout = 0\n', "/evidence/commands/unit/timeout"),
    ('[evidence.commands.unit]\nargv = ["x"]\ntimeout = 1.5\n', "/evidence/commands/unit/timeout"),
    ('[evidence.commands.unit]\nargv = ["x"]\ntimeout = true\n', "/evidence/commands/unit/timeout"),
    ('[evidence.commands.unit]\nargv = ["x"]\nenv = "CI"\n', "/evidence/commands/unit/env"),
    ('[evidence.commands.unit]\nargv = ["x"]\nenv = ["CI", "A-B"]\n', "/evidence/commands/unit/env/1"),
    ('[evidence.commands.unit]\nargv = ["x"]\nphases = ["during"]\n',
     "/evidence/commands/unit/phases/0"),
    ('[evidence.commands.unit]\nargv = ["x"]\nphases = ["after", "after"]\n',
     "/evidence/commands/unit/phases/1"),
    ('[evidence.commands.unit]\nargv = ["x"]\nphases = []\n', "/evidence/commands/unit/phases"),
    ('[evidence.commands.unit]\nargv = ["x"]\nrequired = "yes"\n',
     "/evidence/commands/unit/required"),
    ('[evidence.commands.unit]\nargv = ["x"]\nenabled = 1\n', "/evidence/commands/unit/enabled"),
    ('[evidence.commands.unit]\nargv = ["x"]\ndescription = 5\n',
     "/evidence/commands/unit/description"),
    ('[evidence.commands."bad name"]\nargv = ["x"]\n', "/evidence/commands/bad name"),
    ('[evidence.commands]\nunit = "pytest"\n', "/evidence/commands/unit"),
    ('[evidence]\ncommands = 3\n', "/evidence/commands"),
    ('[evidence]\nrunner = "x"\n', "/evidence/runner"),
])
def test_evidence_config_rejects_with_pointer(tmp_path: Path, body: str, ptr: str) -> None:
    """Each invalid declaration is invalid_config naming the exact key at fault."""
    with pytest.raises(AssayError) as caught:
        load(tmp_path, body)
    assert caught.value.code == "invalid_config"
    assert caught.value.pointer == ptr
