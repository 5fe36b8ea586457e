"""hook install, uninstall and doctor on real settings files: foreign bytes never move."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from gate_helpers import gate_project, op, record_intent

from assay.errors import AssayError
from assay.ops import call
from assay_testing import Project

EXE = "/opt/assay/bin/assay"

CLAUDE_SETTINGS = """{
    "$schema": "https://json.schemastore.org/claude-code-settings.json",
    "permissions": {
        "allow": ["Bash(npm run lint)", "Read(~/.zshrc)"],
        "deny": ["Read(./.env)"]
    },
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [
                    {"type": "command", "command": "~/bin/check-command.sh"}
                ]
            }
        ],
        "Stop": [
            {
                "hooks": [
                    {"type": "command", "command": "notify-send 'Claude stopped'"}
                ]
            }
        ]
    },
    "env": {"FOO": "bar"}
}
"""
# The foreign parts of CLAUDE_SETTINGS, each of which must stay byte for byte, in this order.
CLAUDE_FOREIGN = [
    '"$schema": "https://json.schemastore.org/claude-code-settings.json"',
    ('"permissions": {\n        "allow": ["Bash(npm run lint)", "Read(~/.zshrc)"],\n'
    '        "deny": ["Read(./.env)"]\n    }'),
    ('"PreToolUse": [\n            {\n                "matcher": "Bash",\n                "hooks": [\n'
    '                    {"type": "command", "command": "~/bin/check-command.sh"}\n'
    '                ]\n            }\n        ]'),
    ('{\n                "hooks": [\n                    {"type": "command", "command": '
    "\"notify-send 'Claude stopped'\"}\n                ]\n            }"),
    '"env": {"FOO": "bar"}',
]
CURSOR_SETTINGS = ('{\r\n\t"version": 1,\r\n\t"hooks": {\r\n\t\t"afterFileEdit": [\r\n'
                   '\t\t\t{"command": "./hooks/format.sh"}\r\n\t\t]\r\n\t}\r\n}\r\n')


@pytest.fixture
def proj(tmp_path: Path) -> Project:
    return gate_project(tmp_path / "proj")


def _in_order(text: str, parts: list[str]) -> bool:
    at = 0
    for part in parts:
        found = text.find(part, at)
        if found < 0:
            return False
        at = found + len(part)
    return True


def _claude(proj: Project, text: str = CLAUDE_SETTINGS) -> Path:
    path = proj.root / ".claude" / "settings.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_hook_install_claude_code_keeps_foreign_entries_byte_for_byte(proj: Project) -> None:
    """Installing adds assay's entries; every foreign entry keeps its bytes and its place."""
    path = _claude(proj)
    out = op(proj, "hook.install", harness="claude-code", executable=EXE)
    assert out["changed"] == ["PostToolUse", "PostToolUseFailure", "Stop", "SubagentStop"]
    text = path.read_text(encoding="utf-8")
    assert _in_order(text, CLAUDE_FOREIGN)
    data = json.loads(text)
    assert list(data) == ["$schema", "permissions", "hooks", "env"]
    assert list(data["hooks"]) == ["PreToolUse", "Stop", "SubagentStop", "PostToolUse",
                                   "PostToolUseFailure"]
    stops = data["hooks"]["Stop"]
    assert stops[0]["hooks"][0]["command"] == "notify-send 'Claude stopped'"
    assert stops[1] == {"hooks": [{
        "type": "command", "timeout": 120,
        "command": f"{EXE} hook stop --harness claude-code --scope project"}]}
    assert data["hooks"]["PostToolUse"] == [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": f"{EXE} hook tool --harness claude-code --scope project",
         "timeout": 30}]}]


def test_hook_install_again_changes_nothing(proj: Project) -> None:
    """A second install of the same entries writes nothing: the bytes stay as they are."""
    path = _claude(proj)
    op(proj, "hook.install", harness="claude-code", executable=EXE)
    before = path.read_bytes()
    assert op(proj, "hook.install", harness="claude-code", executable=EXE)["changed"] == []
    assert path.read_bytes() == before


def test_hook_uninstall_restores_the_original_bytes(proj: Project) -> None:
    """Uninstall after install gives back the file exactly as it was."""
    path = _claude(proj)
    op(proj, "hook.install", harness="claude-code", executable=EXE)
    out = op(proj, "hook.uninstall", harness="claude-code")
    assert out["removed"] == ["PostToolUse", "PostToolUseFailure", "Stop", "SubagentStop"]
    assert path.read_text(encoding="utf-8") == CLAUDE_SETTINGS


def test_hook_install_new_executable_replaces_only_assay_entries(proj: Project) -> None:
    """Installing with another executable swaps assay's commands; foreign entries stay put."""
    path = _claude(proj)
    op(proj, "hook.install", harness="claude-code", executable=EXE)
    out = op(proj, "hook.install", harness="claude-code", executable="/usr/local/bin/assay")
    assert out["changed"] == ["PostToolUse", "PostToolUseFailure", "Stop", "SubagentStop"]
    text = path.read_text(encoding="utf-8")
    assert _in_order(text, CLAUDE_FOREIGN) and EXE not in text
    assert json.loads(text)["hooks"]["Stop"][1]["hooks"][0]["command"].startswith(
        "/usr/local/bin/assay hook stop")
    op(proj, "hook.uninstall", harness="claude-code")
    assert path.read_text(encoding="utf-8") == CLAUDE_SETTINGS


def test_hook_uninstall_leaves_a_foreign_hook_in_a_shared_group(proj: Project) -> None:
    """When assay's hook shares a matcher group with a foreign one, only assay's is removed."""
    shared = {"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": "say done"},
        {"type": "command", "command": f"{EXE} hook stop --harness claude-code"}]}]}}
    path = _claude(proj, json.dumps(shared, indent=2) + "\n")
    op(proj, "hook.uninstall", harness="claude-code")
    assert json.loads(path.read_text()) == {"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": "say done"}]}]}}


def test_hook_install_codex_user_scope_creates_hooks_json(proj: Project, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Codex's user hooks.json (under CODEX_HOME) is created with only the hooks table."""
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    out = op(proj, "hook.install", harness="codex", scope="user", executable=EXE)
    path = tmp_path / "codex-home" / "hooks.json"
    assert out == {"path": str(path), "created": True,
                   "changed": ["PostToolUse", "Stop", "SubagentStop"], "warnings": []}
    data = json.loads(path.read_text())
    assert list(data) == ["hooks"]
    assert data["hooks"]["SubagentStop"] == [{"hooks": [
        {"type": "command", "command": f"{EXE} hook stop --harness codex", "timeout": 120}]}]
    op(proj, "hook.uninstall", harness="codex", scope="user")
    assert not path.exists()  # install created it: uninstall takes it away


def test_hook_install_cursor_keeps_tabs_and_crlf(proj: Project, user_home: Path) -> None:
    """Cursor's user hooks.json, tab-indented with CRLF endings, keeps both; uninstall restores it."""
    path = user_home / ".cursor" / "hooks.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(CURSOR_SETTINGS.encode())
    op(proj, "hook.install", harness="cursor", scope="user", executable=EXE)
    text = path.read_bytes().decode()
    assert "\n" not in text.replace("\r\n", "") and "  " not in text
    data = json.loads(text)
    assert data["hooks"]["afterFileEdit"] == [{"command": "./hooks/format.sh"}]
    assert data["hooks"]["stop"] == [{"command": f"{EXE} hook stop --harness cursor",
                                      "timeout": 120}]
    op(proj, "hook.uninstall", harness="cursor", scope="user")
    assert path.read_bytes() == CURSOR_SETTINGS.encode()


def test_hook_install_refuses_a_file_that_is_not_json(proj: Project) -> None:
    """A settings file with a trailing comma is hook_settings_invalid and left untouched."""
    path = _claude(proj, '{"env": {"A": "1"},}\n')
    with pytest.raises(AssayError) as info:
        op(proj, "hook.install", harness="claude-code", executable=EXE)
    assert info.value.code == "hook_settings_invalid"
    assert path.read_text() == '{"env": {"A": "1"},}\n'


def test_hook_install_refuses_hooks_that_are_not_an_object(proj: Project) -> None:
    """A hooks value that is not an object is hook_settings_invalid at /hooks."""
    _claude(proj, '{"hooks": []}\n')
    with pytest.raises(AssayError) as info:
        op(proj, "hook.install", harness="claude-code", executable=EXE)
    assert (info.value.code, info.value.pointer) == ("hook_settings_invalid", "/hooks")


def test_hook_install_edits_a_symlinked_user_file_where_it_points(proj: Project, tmp_path: Path,
                                                                   user_home: Path) -> None:
    """A user settings file that is a symlink is edited at its target; the link stays a link."""
    target = tmp_path / "dotfiles" / "settings.json"
    target.parent.mkdir()
    target.write_text(CLAUDE_SETTINGS, encoding="utf-8")
    link = user_home / ".claude" / "settings.json"
    link.parent.mkdir()
    os.symlink(target, link)
    op(proj, "hook.install", harness="claude-code", scope="user", executable=EXE)
    assert link.is_symlink() and "hook stop" in target.read_text()


@pytest.mark.parametrize("linked", ["file", "folder"])
def test_hook_install_refuses_a_project_file_that_leads_out(proj: Project, tmp_path: Path,
                                                            linked: str) -> None:
    """A project's settings file (or its folder) linked out of the project is refused, untouched."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "settings.json").write_text(CLAUDE_SETTINGS, encoding="utf-8")
    if linked == "file":
        (proj.root / ".claude").mkdir()
        os.symlink(outside / "settings.json", proj.root / ".claude" / "settings.json")
    else:
        os.symlink(outside, proj.root / ".claude")
    for operation in ("hook.install", "hook.uninstall"):
        with pytest.raises(AssayError) as info:
            op(proj, operation, harness="claude-code")
        assert info.value.code == "hook_settings_outside_project"
        assert info.value.details["path"] == str(proj.root / ".claude" / "settings.json")
    assert (outside / "settings.json").read_text(encoding="utf-8") == CLAUDE_SETTINGS


def test_hook_doctor_reports_install_and_the_answer_now(proj: Project) -> None:
    """doctor: not installed, then installed per event, and what a stop would get now."""
    record_intent(proj)
    before = op(proj, "hook.doctor", harness="claude-code", executable=EXE)
    assert before["installed"] is False
    op(proj, "hook.install", harness="claude-code", executable=EXE)
    after = op(proj, "hook.doctor", harness="claude-code", executable=EXE)
    project_file = next(f for f in after["files"] if f["scope"] == "project")
    assert project_file["installed"] is True
    assert set(project_file["events"].values()) == {"current"}
    assert after["would_answer"]["answer"]["decision"] == "block"
    assert "knowledge:export is not ready" in after["would_answer"]["answer"]["reason"]
    assert op(proj, "find", kind="gate-session")["count"] == 0  # doctor records nothing


def test_hook_uninstall_keeps_another_tools_entry_that_mentions_assay(proj: Project) -> None:
    """An entry of another tool that merely runs `assay hook stop` inside its own command is not
    assay's: uninstall leaves it, byte for byte."""
    foreign = {"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": "mytool wrap -- assay hook stop --harness claude-code"},
        {"type": "command", "command": "echo 'assay hook stop --harness claude-code'"}]}]}}
    text = json.dumps(foreign, indent=2) + "\n"
    path = _claude(proj, text)
    op(proj, "hook.install", harness="claude-code")
    op(proj, "hook.uninstall", harness="claude-code")
    assert path.read_text(encoding="utf-8") == text


def test_hook_uninstall_removes_the_file_and_folder_install_created(proj: Project) -> None:
    """Install into a project without .claude, then uninstall: no file and no folder are left."""
    out = op(proj, "hook.install", harness="claude-code")
    assert out["created"] is True
    assert op(proj, "hook.uninstall", harness="claude-code")["exists"] is False
    assert not (proj.root / ".claude").exists()


def test_hook_install_project_command_is_the_same_in_every_clone(proj: Project,
                                                                 tmp_path: Path) -> None:
    """The project entry names no path of this machine: two clones get the same bytes."""
    other = gate_project(tmp_path / "clone")
    first = Path(op(proj, "hook.install", harness="codex")["path"]).read_text()
    second = Path(op(other, "hook.install", harness="codex")["path"]).read_text()
    assert first == second and str(proj.root) not in first
    command = json.loads(first)["hooks"]["Stop"][0]["hooks"][0]["command"]
    assert command.startswith("sh -c 'command -v assay") and command.endswith(
        "assay-hook hook stop --harness codex --scope project")


def test_hook_install_warns_of_a_local_ledger_and_names_what_gates(tmp_path: Path) -> None:
    """On a SQLite ledger a project install warns that teammates' clones gate on their own
    ledgers; with nothing in [gate] intents, next names them and gate bind."""
    project = gate_project(tmp_path / "proj", gate="")
    inv_out = call(
        "hook.install", {"harness": "claude-code", "cwd": str(project.root)})[0]
    assert "stays on this machine" in inv_out["data"]["warnings"][0]
    assert "[gate] intents" in inv_out["next"][0] and "assay gate bind" in inv_out["next"][0]


def test_hook_doctor_warns_of_a_command_that_cannot_start(proj: Project) -> None:
    """An entry whose command is missing here, or a machine path in a project file, is named."""
    op(proj, "hook.install", harness="claude-code", executable="/nowhere/bin/assay")
    out = op(proj, "hook.doctor", harness="claude-code", executable="/nowhere/bin/assay")
    project_file = next(f for f in out["files"] if f["scope"] == "project")
    assert project_file["command"] == {"commands": [{"runs": "/nowhere/bin/assay", "found": None}],
                                       "ok": False, "portable": False}
    warnings = "\n".join(out["warnings"])
    assert "/nowhere/bin/assay is not found here" in warnings
    assert "a teammate's clone does not have" in warnings


def test_hook_doctor_with_nothing_bound_names_gate_intents_and_bind(tmp_path: Path) -> None:
    """doctor's preview of a session nothing gates points at [gate] intents and gate bind."""
    project = gate_project(tmp_path / "proj", gate="")
    out = call(
        "hook.doctor", {"harness": "claude-code", "cwd": str(project.root)})[0]
    assert any("[gate] intents" in step and "assay gate bind" in step for step in out["next"])
