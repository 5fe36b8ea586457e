"""Symlink tricks around checkpoints: the local journal must stay inside the project.

``work checkpoint`` keeps its attempt journal in ``.assay/checkpoints/``. A
repository can carry a symlink there; following it would write outside the
project, so the checkpoint refuses with ``checkpoint_journal_unsafe``.
"""

from __future__ import annotations

import json
from pathlib import Path

from assay_testing import make_project

INTENT = json.loads((Path(__file__).parents[1] / "fixtures" / "intent" /
                     "02_valid_intent_only.json").read_text(encoding="utf-8"))["data"]


def test_hostile_checkpoints_symlinked_journal_directory_is_not_followed(tmp_path: Path) -> None:
    """With .assay/checkpoints a symlink out of the project, checkpoint writes nothing outside."""
    outside = tmp_path / "outside"
    outside.mkdir()
    project = make_project(tmp_path / "proj")
    (project.root / ".assay" / "checkpoints").symlink_to(outside, target_is_directory=True)
    project.ok("put", "--data-file", "-", "--", "knowledge:intent", input=json.dumps(INTENT))
    result = project.run("work", "checkpoint", "--", "knowledge:intent")
    assert "Traceback" not in result.stderr
    assert (result.code, result.error["code"]) == (1, "checkpoint_journal_unsafe")
    assert list(outside.iterdir()) == []


def test_hostile_checkpoints_journal_names_come_from_digests(tmp_path: Path) -> None:
    """An intent id full of path syntax never shapes the journal's file name."""
    project = make_project(tmp_path / "proj")
    project.ok("put", "--data-file", "-", "--", "knowledge:../../x", input=json.dumps(INTENT))
    project.ok("work", "checkpoint", "--", "knowledge:../../x")
    journals = list((project.root / ".assay" / "checkpoints").iterdir())
    assert [p.name.startswith("j-") and p.suffix == ".json" for p in journals] == [True]
    assert not (tmp_path / "x").exists()
