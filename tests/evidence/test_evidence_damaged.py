"""Evidence listings and views survive a version damaged in the database, on both backends."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from assay_testing import Project, corrupt_version, make_project


def _project(root: Path, db: str) -> Project:
    return make_project(root, db=db, extra_toml=(
        f"\n[evidence.commands.unit]\nargv = {json.dumps([sys.executable, '-c', 'pass'])}\n"))


def test_evidence_list_names_a_damaged_run_and_lists_the_rest(tmp_path: Path,
                                                               ledger_url: str) -> None:
    """evidence list keeps every row; a damaged run is listed with its damage, not its data."""
    project = _project(tmp_path / "proj", ledger_url)
    project.ok("evidence", "run", "--", "unit")
    project.ok("put", "--data-file", "-", "--", "evidence:other", input='{"ok":1}')
    corrupt_version(project, "evidence:unit", 1, '{"observation":"changed"}', None)
    rows = project.ok("evidence", "list")["data"]["evidence"]
    assert [(r["id"], r["status"], r.get("unreadable", {}).get("reason")) for r in rows] == [
        ("evidence:other", None, None), ("evidence:unit", None, "digest_mismatch")]
    table = project.run("evidence", "list", "--format", "table", env={"NO_COLOR": "1"})
    assert table.code == 0 and "unreadable" in table.stdout and "None" not in table.stdout
