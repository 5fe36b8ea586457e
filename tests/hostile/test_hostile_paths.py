"""Path traversal and symlink tricks: packets, evidence command cwd, goal files, --db.

The packet path rules (syntax, ancestors, final components, root aliases) have
unit tests in tests/packet/test_packet_layout.py; these drive whole packets
through the CLI and check that nothing outside is read as evidence or written.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from assay_testing import Project, make_project
from packet_testing import example_packet


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            stat = (Path(dirpath) / name).lstat()
            out[str(Path(dirpath) / name)] = (stat.st_size, stat.st_mtime_ns)
    return out


def _packet(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    root = tmp_path / "packets" / "p"
    example_packet(root, "quick")
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    return root, manifest


def _issues(project: Project, packet: Path) -> set[str]:
    result = project.run("packet", "validate", "--", str(packet))
    assert result.code == 1, (result.code, result.stdout, result.stderr)
    data = result.json["data"]
    assert data["valid"] is False and data["publishable"] is False
    return {issue["code"] for issue in data["issues"]}


@pytest.mark.parametrize("evil", ["../../outside.json", "/etc/passwd", "raw/../../outside.json",
                                  "raw/dossiers/../../../outside.json"])
def test_hostile_paths_packet_artifact_escaping_the_packet_is_refused(
        project: Project, tmp_path: Path, evil: str) -> None:
    """An artifact path leaving the packet is PATH_ESCAPE; the file outside is never read as evidence."""
    packet, manifest = _packet(tmp_path)
    (tmp_path / "outside.json").write_text("{}", encoding="utf-8")
    manifest["artifacts"][0]["path"] = evil
    (packet / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert "PATH_ESCAPE" in _issues(project, packet)


def test_hostile_paths_packet_artifact_symlinked_outside_is_refused(project: Project,
                                                                    tmp_path: Path) -> None:
    """An artifact that is a symlink to a file outside the packet is SYMLINK_PATH, never followed."""
    packet, manifest = _packet(tmp_path)
    target = packet / manifest["artifacts"][0]["path"]
    outside = tmp_path / "outside.json"
    outside.write_bytes(target.read_bytes())
    target.unlink()
    target.symlink_to(outside)
    assert "SYMLINK_PATH" in _issues(project, packet)


def test_hostile_paths_packet_layout_directory_symlink_is_a_root_alias(project: Project,
                                                                       tmp_path: Path) -> None:
    """A layout directory (raw/) replaced by a symlink elsewhere is refused as a root alias."""
    packet, _ = _packet(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    (packet / "raw").rename(elsewhere)
    (packet / "raw").symlink_to(elsewhere, target_is_directory=True)
    assert "SYMLINK_ROOT_ALIAS" in _issues(project, packet)


def test_hostile_paths_packet_commands_write_only_inside_the_packet(project: Project,
                                                                    tmp_path: Path) -> None:
    """validate and render of a hostile packet write nothing outside the packet and the project."""
    packet, manifest = _packet(tmp_path)
    manifest["artifacts"][0]["path"] = "../../outside.json"
    (packet / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    (packet / "packet.md").symlink_to(tmp_path / "victim.md")
    before = _tree(tmp_path)
    for command in (("packet", "validate"), ("packet", "render")):
        result = project.run(*command, "--", str(packet))
        assert result.code in (0, 1, 2, 3, 4) and "Traceback" not in result.stderr
    assert not (tmp_path / "victim.md").exists()
    for path, stat in _tree(tmp_path).items():
        if before.get(path) != stat:
            assert path.startswith((str(packet), str(project.root))), path


def test_hostile_paths_evidence_cwd_leaving_the_project_is_refused(tmp_path: Path) -> None:
    """A command declared with cwd '../x' or an absolute cwd is invalid_config at its pointer."""
    for cwd in ("../x", "/tmp", "sub/../../x"):
        project = make_project(tmp_path / f"p{abs(hash(cwd))}", extra_toml=(
            f'\n[evidence.commands.escape]\nargv = ["pwd"]\ncwd = {json.dumps(cwd)}\n'))
        result = project.run("evidence", "run", "--", "escape")
        assert result.code == 5
        assert (result.error["code"], result.error["pointer"]) == (
            "invalid_config", "/evidence/commands/escape/cwd")


def test_hostile_paths_evidence_cwd_symlinked_outside_never_runs(tmp_path: Path) -> None:
    """A cwd that is a symlink out of the project is recorded as an error and the command never runs."""
    marker = tmp_path / "ran"
    project = make_project(tmp_path / "proj", extra_toml=(
        f'\n[evidence.commands.escape]\nargv = ["touch", {json.dumps(str(marker))}]\ncwd = "out"\n'))
    (project.root / "out").symlink_to(tmp_path, target_is_directory=True)
    result = project.run("evidence", "run", "--", "escape")
    assert result.code == 1  # a negative outcome, recorded as evidence
    assert result.json["data"]["status"] == "error"
    assert not marker.exists()
    shown = project.ok("evidence", "show", "--", "evidence:escape")["data"]
    assert "outside the project" in shown["record"]["data"]["observation"]["reason"]


def test_hostile_paths_goal_file_outside_the_project_is_refused(tmp_path: Path) -> None:
    """A goal registered at ../secret.md (or through a symlink) is goal_path_outside_project."""
    (tmp_path / "secret.md").write_text("# secret\n", encoding="utf-8")
    project = make_project(tmp_path / "proj", extra_toml='\n[goals.main]\npath = "../secret.md"\n')
    (project.root / "link.md").symlink_to(tmp_path / "secret.md")
    result = project.run("goal", "read", "--goal-id", "main")
    assert result.code in (1, 2, 5) and result.error["code"] in ("goal_path_outside_project",
                                                               "invalid_config")
    linked = make_project(tmp_path / "proj2", extra_toml='\n[goals.main]\npath = "link.md"\n')
    (linked.root / "link.md").symlink_to(tmp_path / "secret.md")
    result = linked.run("goal", "read", "--goal-id", "main")
    assert result.code == 1 and result.error["code"] == "goal_path_outside_project"
    assert "secret" not in result.stdout


def test_hostile_paths_db_pointing_at_a_foreign_file_leaves_it_untouched(project: Project,
                                                                         tmp_path: Path) -> None:
    """--db naming a file that is not a ledger is ledger_corrupt, and the file and its directory stay as they were."""
    foreign = tmp_path / "notes" / "readme.md"
    foreign.parent.mkdir()
    foreign.write_text("# not a ledger\n" * 50, encoding="utf-8")
    before = _tree(foreign.parent)
    for command in (("ledger", "info", "--db", str(foreign)),
                    ("get", "--db", str(foreign), "--", "knowledge:x")):
        result = project.run(*command)
        assert result.code == 4 and result.error["code"] == "ledger_corrupt"
    result = project.run("put", "--db", str(foreign), "--data-file", "-", "--", "knowledge:x",
                         input="{}")
    assert result.code == 4 and result.error["code"] == "ledger_corrupt"
    assert _tree(foreign.parent) == before
