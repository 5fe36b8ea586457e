"""`assay demo --keep DIR` builds its project only in a new or empty directory, on its own ledger."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from assay_testing import ASSAY


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _demo(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run([ASSAY, "demo", *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})}, check=False)


@pytest.mark.parametrize("what", ["project", "file", "non-empty"])
def test_demo_keep_refuses_an_existing_target_and_changes_nothing(tmp_path: Path,
                                                                  what: str) -> None:
    """--keep on an existing project, a regular file or any non-empty directory is demo_dir_not_empty (exit 2); nothing changes."""
    target = tmp_path / "target"
    if what == "file":
        target.write_text("mine\n", encoding="utf-8")
    else:
        target.mkdir()
        (target / "src.py").write_text("print('uncommitted work')\n", encoding="utf-8")
        if what == "project":
            (target / "assay.toml").write_text('[project]\nname = "mine"\n', encoding="utf-8")
    before = _tree(tmp_path)
    result = _demo("--keep", str(target))
    assert result.returncode == 2 and '"code":"demo_dir_not_empty"' in result.stderr
    assert '"pointer":"/keep"' in result.stderr
    assert _tree(tmp_path) == before


def test_demo_keep_uses_its_own_ledger_whatever_the_environment_says(tmp_path: Path) -> None:
    """With ASSAY_DB and ASSAY_PRINCIPAL set, the kept demo still writes only its own SQLite ledger."""
    foreign = tmp_path / "foreign.db"
    result = _demo("--keep", str(tmp_path / "new"),
                   env={"ASSAY_DB": str(foreign), "ASSAY_PRINCIPAL": "mallory"})
    assert result.returncode == 0, result.stderr
    assert not foreign.exists()
    assert (tmp_path / "new" / ".assay" / "ledger.db").is_file()
