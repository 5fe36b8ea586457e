"""``[goals.GOAL_ID]`` tables in assay.toml: closed keys, paths inside the project."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.config import GoalConfig, load_project
from assay.errors import AssayError


def _load(tmp_path: Path, goals: str):
    text = goals + '[project]\nname = "demo"\n' if not goals.startswith("[") else \
        '[project]\nname = "demo"\n\n' + goals
    (tmp_path / "assay.toml").write_text(text, encoding="utf-8")
    return load_project(tmp_path)


def test_goal_config_tables_are_parsed_in_id_order(tmp_path: Path) -> None:
    """Goal tables become GoalConfig values with normalised relative paths."""
    project = _load(tmp_path, '[goals.b]\npath = "goals/./b.md"\n[goals.a]\npath = "a.md"\n'
                              'acceptance = "knowledge:a"\n')
    assert project.goals == (GoalConfig("a", "a.md", "knowledge:a"),
                             GoalConfig("b", "goals/b.md", None))


@pytest.mark.parametrize(("toml", "ptr"), [
    ('[goals.g]\npath = "g.md"\ncolour = 1\n', "/goals/g/colour"),
    ('[goals.g]\n', "/goals/g/path"),
    ('[goals.g]\npath = "../g.md"\n', "/goals/g/path"),
    ('[goals.g]\npath = "/etc/g.md"\n', "/goals/g/path"),
    ('[goals.g]\npath = "g.md"\nacceptance = "nope"\n', "/goals/g/acceptance"),
    ('[goals."bad id"]\npath = "g.md"\n', "/goals/bad id"),
    ('goals = 3\n', "/goals"),
])
def test_goal_config_invalid_entries_name_their_pointer(tmp_path: Path, toml: str, ptr: str) -> None:
    """Each malformed goal table is invalid_config with the pointer of the faulty key."""
    with pytest.raises(AssayError) as info:
        _load(tmp_path, toml)
    assert (info.value.code, info.value.pointer) == ("invalid_config", ptr)
