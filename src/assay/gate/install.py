"""The harnesses' hook settings files: install, uninstall and inspect assay's entries.

Where each harness reads its hooks, and the entries assay adds::

    claude-code  <project>/.claude/settings.json   ~/.claude/settings.json
                 hooks.Stop, hooks.SubagentStop: [{hooks: [{type: command, command, timeout}]}]
                 hooks.PostToolUse, hooks.PostToolUseFailure: [{matcher: Bash, hooks: [...]}]
    codex        <project>/.codex/hooks.json       $CODEX_HOME/hooks.json (~/.codex)
                 hooks.Stop, hooks.SubagentStop, hooks.PostToolUse (matcher Bash), same shape
    cursor       <project>/.cursor/hooks.json      ~/.cursor/hooks.json
                 {version: 1, hooks: {stop, subagentStop, afterShellExecution: [{command, timeout}]}}

An entry is assay's when its command runs ``assay hook stop`` or ``assay
hook tool`` (any path to the executable, or ``python -m assay``). Install
merges the entries into the file in place (:mod:`assay.gate.jsontext`):
every other entry, key and byte stays where it was; installing again
changes nothing, or only assay's own entries when their command changed.
Uninstall removes assay's entries only, and an event list or ``hooks``
table the removal leaves empty. A file that is not strict JSON is refused
(``hook_settings_invalid``) and never rewritten.

A settings file that is a symlink is edited where it points. The new text
is written to a temporary sibling and renamed over the target, after
checking that nobody changed the file since it was read
(``hook_settings_changed`` otherwise).

Imports the base modules and its siblings.
"""

from __future__ import annotations

import os
import shlex
import stat
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.errors import AssayError, ConflictError, UnavailableError
from assay.gate import jsontext
from assay.gate.jsontext import Node

__all__ = ["SCOPES", "SettingsFile", "assay_entries", "default_executable", "inspect", "install",
           "settings_file", "uninstall"]

SCOPES = ("project", "user")
# Seconds each hook may run before its harness gives up on it (all three read ``timeout``).
STOP_TIMEOUT = 120
TOOL_TIMEOUT = 30
# Settings files are small; a larger one is not a settings file.
_MAX_SETTINGS_BYTES = 4 * 1024 * 1024

# harness -> (event key -> (assay subcommand, matcher or None))
_EVENTS: dict[str, dict[str, tuple[str, str | None]]] = {
    "claude-code": {"Stop": ("stop", None), "SubagentStop": ("stop", None),
                    "PostToolUse": ("tool", "Bash"), "PostToolUseFailure": ("tool", "Bash")},
    "codex": {"Stop": ("stop", None), "SubagentStop": ("stop", None),
              "PostToolUse": ("tool", "Bash")},
    "cursor": {"stop": ("stop", None), "subagentStop": ("stop", None),
               "afterShellExecution": ("tool", None)},
}
_PLACES = {"claude-code": (".claude", "settings.json"), "codex": (".codex", "hooks.json"),
           "cursor": (".cursor", "hooks.json")}


@dataclass(frozen=True, slots=True)
class SettingsFile:
    """One harness settings file in one scope, and the entries assay wants in it."""

    harness: str
    scope: str
    path: Path
    executable: str

    def command(self, subcommand: str) -> str:
        return f"{self.executable} hook {subcommand} --harness {self.harness}"

    def entry(self, event: str) -> dict[str, Any]:
        """The entry (Cursor) or matcher group (Claude Code, Codex) assay adds for ``event``."""
        subcommand, matcher = _EVENTS[self.harness][event]
        timeout = STOP_TIMEOUT if subcommand == "stop" else TOOL_TIMEOUT
        if self.harness == "cursor":
            return {"command": self.command(subcommand), "timeout": timeout}
        group: dict[str, Any] = {"matcher": matcher} if matcher else {}
        group["hooks"] = [{"type": "command", "command": self.command(subcommand),
                           "timeout": timeout}]
        return group

    def wanted(self) -> dict[str, Any]:
        """The whole file as assay would write it where there is none."""
        hooks = {event: [self.entry(event)] for event in _EVENTS[self.harness]}
        return {"version": 1, "hooks": hooks} if self.harness == "cursor" else {"hooks": hooks}


def default_executable() -> str:
    """The command that runs this assay: its console script beside the interpreter, or ``-m``."""
    script = Path(sys.executable).with_name("assay")
    if script.is_file() and os.access(script, os.X_OK):
        return shlex.quote(str(script))
    return f"{shlex.quote(sys.executable)} -m assay"


def settings_file(harness: str, scope: str, project_root: Path | None,
                  executable: str | None = None) -> SettingsFile:
    """Where ``harness`` reads hooks in ``scope`` (``project_root`` for the project scope)."""
    folder, name = _PLACES[harness]
    if scope == "user":
        base = Path(os.environ["CODEX_HOME"]) if harness == "codex" and os.environ.get(
            "CODEX_HOME") else Path.home() / folder
    else:
        assert project_root is not None
        base = project_root / folder
    return SettingsFile(harness, scope, base / name, executable or default_executable())


def is_assay_command(command: Any, subcommand: str | None = None) -> bool:
    """Whether a hook command runs ``assay hook stop|tool`` (``subcommand`` when given)."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    wanted = (subcommand,) if subcommand else ("stop", "tool")
    for index in range(1, len(words) - 1):
        if words[index] != "hook" or words[index + 1] not in wanted:
            continue
        runner = words[index - 1]
        if os.path.basename(runner).startswith("assay") or (
                runner == "assay" and index >= 2 and words[index - 2] == "-m"):
            return True
    return False


def _read(path: Path) -> tuple[Path, str | None]:
    """The file's real path and text (None when it does not exist)."""
    from assay.inputs import InputRefused, read_regular

    real = Path(os.path.realpath(path))
    try:
        raw = read_regular(real, limit=_MAX_SETTINGS_BYTES, label=str(path))
    except InputRefused as exc:
        if exc.reason == "missing":
            return real, None
        raise UnavailableError(
            exc.message, code="hook_settings_unreadable", details={"path": str(path)},
            action=f"Make {path} a readable regular file, or move it aside.") from None
    try:
        return real, raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _invalid(str(path), "it is not UTF-8 text") from None


def _invalid(label: str, problem: str, where: str | None = None) -> AssayError:
    return AssayError(f"{label}: {problem}", code="hook_settings_invalid", pointer=where,
                      details={"path": label},
                      action=f"Fix {label} (or move it aside), then run the command again.")


def _write(real: Path, before: str | None, text: str, label: Path) -> None:
    """Replace ``real`` with ``text`` unless it changed since it read as ``before``."""
    if _read(real)[1] != before:
        raise ConflictError(f"{label} changed while assay was editing it", retryable=True,
                            code="hook_settings_changed", details={"path": str(label)},
                            action="Run the command again.")
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
        mode = stat.S_IMODE(os.stat(real).st_mode) if before is not None else 0o644
        fd, tmp = tempfile.mkstemp(prefix=".assay-hooks-", suffix=".tmp", dir=real.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
                handle.write(text)
            os.chmod(tmp, mode)
            os.replace(tmp, real)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise UnavailableError(
            f"cannot write {label}: {exc.strerror}", code="hook_settings_unwritable",
            details={"path": str(label)}, action="Check the directory's permissions.") from None


def _object(node: Node | None, label: str, where: str) -> Node | None:
    if node is not None and node.kind != "object":
        raise _invalid(label, f"{where or 'the top level'} is not a JSON object", where or None)
    return node


def _hooks(text: str, label: str) -> tuple[Node, Node | None]:
    top = _object(jsontext.parse(text, label=label), label, "")
    assert top is not None
    return top, _object(top.get("hooks"), label, "/hooks")


def _ours(settings: SettingsFile, item: Node) -> list[int]:
    """Indexes of assay's hooks in a matcher group (Claude Code, Codex) or [0] for a Cursor entry."""
    value = item.data()
    if not isinstance(value, dict):
        return []
    if settings.harness == "cursor":
        return [0] if is_assay_command(value.get("command")) else []
    hooks = value.get("hooks")
    if not isinstance(hooks, list):
        return []
    return [i for i, h in enumerate(hooks) if isinstance(h, dict)
            and is_assay_command(h.get("command"))]


def _strip_event(settings: SettingsFile, text: str, event: str, label: str) -> str:
    """``text`` without assay's entries for ``event`` (an emptied list goes too)."""
    while True:
        _, hooks = _hooks(text, label)
        array = hooks.get(event) if hooks is not None else None
        if array is None or array.kind != "array":
            return text
        for index in reversed(range(len(array.items))):
            item = array.items[index]
            ours = _ours(settings, item)
            if not ours:
                continue
            inner = item.get("hooks") if settings.harness != "cursor" else None
            if inner is not None and len(ours) < len(inner.items):
                text = jsontext.remove_item(text, inner, ours[-1])
            else:
                text = jsontext.remove_item(text, array, index)
            break
        else:
            if not array.items:
                assert hooks is not None
                text = jsontext.remove_member(text, hooks, event)
            return text


def _present(settings: SettingsFile, text: str, label: str) -> dict[str, str]:
    """Per event: ``current`` (assay's entry as wanted), ``different``, or ``absent``."""
    _, hooks = _hooks(text, label)
    out = {}
    for event in _EVENTS[settings.harness]:
        array = hooks.get(event) if hooks is not None else None
        items = array.items if array is not None and array.kind == "array" else []
        mine = [item.data() for item in items if _ours(settings, item)]
        out[event] = ("current" if settings.entry(event) in mine else
                      "different" if mine else "absent")
    return out


def install(settings: SettingsFile) -> dict[str, Any]:
    """Merge assay's entries into the file (idempotent); report what changed."""
    label = str(settings.path)
    real, before = _read(settings.path)
    if before is None:
        text = _dump(settings.wanted())
        _write(real, None, text, settings.path)
        return {"path": label, "created": True, "changed": sorted(_EVENTS[settings.harness])}
    text = before
    changed = []
    for event, state in _present(settings, text, label).items():
        if state == "current":
            continue
        changed.append(event)
        if state == "different":
            text = _strip_event(settings, text, event, label)
        top, hooks = _hooks(text, label)
        if hooks is None:
            text = jsontext.insert_member(text, top, "hooks", {event: [settings.entry(event)]})
            continue
        array = hooks.get(event)
        if array is None:
            text = jsontext.insert_member(text, hooks, event, [settings.entry(event)])
        elif array.kind != "array":
            raise _invalid(label, f"hooks.{event} is not a list", f"/hooks/{event}")
        else:
            text = jsontext.append_item(text, array, settings.entry(event))
    if text != before:
        _write(real, before, text, settings.path)
    return {"path": label, "created": False, "changed": sorted(changed)}


def uninstall(settings: SettingsFile) -> dict[str, Any]:
    """Remove assay's entries from the file (an absent file is left absent)."""
    label = str(settings.path)
    real, before = _read(settings.path)
    if before is None:
        return {"path": label, "exists": False, "removed": []}
    text = before
    removed = []
    for event, state in _present(settings, text, label).items():
        if state != "absent":
            removed.append(event)
            text = _strip_event(settings, text, event, label)
    top, hooks = _hooks(text, label)
    if removed and hooks is not None and not hooks.members:
        text = jsontext.remove_member(text, top, "hooks")
    if text != before:
        _write(real, before, text, settings.path)
    return {"path": label, "exists": True, "removed": sorted(removed)}


def inspect(settings: SettingsFile) -> dict[str, Any]:
    """Whether the file holds assay's entries, per event, without writing anything."""
    label = str(settings.path)
    try:
        _, text = _read(settings.path)
        events = _present(settings, text, label) if text is not None else None
    except AssayError as exc:
        return {"harness": settings.harness, "scope": settings.scope, "path": label,
                "exists": True, "installed": False, "error": exc.to_dict()}
    installed = events is not None and all(state == "current" for state in events.values())
    return {"harness": settings.harness, "scope": settings.scope, "path": label,
            "exists": text is not None, "installed": installed, "events": events}


def _dump(value: Mapping[str, Any]) -> str:
    import json

    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def assay_entries(settings: SettingsFile) -> dict[str, list[Any]] | None:
    """Per event, assay's entries as they are in the file (None: no file). Writes nothing.

    Raises what reading the file raises (``hook_settings_invalid``,
    ``hook_settings_unreadable``).
    """
    label = str(settings.path)
    _, text = _read(settings.path)
    if text is None:
        return None
    _, hooks = _hooks(text, label)
    out: dict[str, list[Any]] = {}
    for event in _EVENTS[settings.harness]:
        array = hooks.get(event) if hooks is not None else None
        items = array.items if array is not None and array.kind == "array" else []
        out[event] = [item.data() for item in items if _ours(settings, item)]
    return out
