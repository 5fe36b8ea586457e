"""The harnesses' hook settings files: install, uninstall and inspect assay's entries.

Where each harness reads its hooks, and the entries assay adds::

    claude-code  <project>/.claude/settings.json   ~/.claude/settings.json
                 hooks.Stop, hooks.SubagentStop: [{hooks: [{type: command, command, timeout}]}]
                 hooks.PostToolUse, hooks.PostToolUseFailure: [{matcher: Bash, hooks: [...]}]
    codex        <project>/.codex/hooks.json       $CODEX_HOME/hooks.json (~/.codex)
                 hooks.Stop, hooks.SubagentStop, hooks.PostToolUse (matcher Bash), same shape
    cursor       <project>/.cursor/hooks.json      ~/.cursor/hooks.json
                 {version: 1, hooks: {stop, subagentStop, afterShellExecution: [{command, timeout}]}}

The command an entry runs differs by scope. A user-scope entry runs this
assay by its absolute path (one machine, one environment). A project-scope
entry is committed with the project and must work in every clone, so it
finds ``assay`` on ``PATH`` (:data:`PORTABLE`), passes ``--scope project``
(the hook then gates the project that installed it, whatever directory the
agent stopped in), and answers by itself where no ``assay`` is installed:
the harnesses take any exit status but 0 and 2 (a shell's 127 for a missing
command included) as a failed hook and let the agent stop, so the entry
blocks the first stop of a run with the reason (exit 2; Cursor: a
``followup_message``) and lets the continuing one through with a notice to
the person, so a loop still ends. ``--executable`` names another command
for either scope.

An entry is assay's when its command is exactly one install writes: a
runner whose name starts with ``assay`` (any path) or ``python -m assay``,
then ``hook stop|tool --harness NAME`` and optionally ``--scope project``,
or the project-scope wrapper around those words. Install merges the entries
into the file in place (:mod:`assay.gate.jsontext`): every other entry, key
and byte stays where it was; installing again changes nothing, or only
assay's own entries when their command changed. Uninstall removes assay's
entries only (another tool's entry that merely mentions ``assay hook stop``
stays), and an event list or ``hooks`` table the removal leaves empty; when
nothing is left but what install itself puts in a new file, the file goes
too, and its folder when that is left empty, so install then uninstall
gives back what was there. A file that is not strict JSON is refused
(``hook_settings_invalid``) and never rewritten.

A settings file that is a symlink is edited where it points, but a
project's settings are never edited outside the project: a link (of the
file or its folder) that leads out is refused
(``hook_settings_outside_project``). The new text is written to a temporary
sibling and renamed over the target, after checking that nobody changed
the file since it was read (``hook_settings_changed`` otherwise).

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

__all__ = ["PORTABLE", "SCOPES", "SettingsFile", "default_executable", "entry_runner", "inspect",
           "install", "is_assay_command", "settings_file", "uninstall"]

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


# The wrapper a project-scope entry runs: assay from PATH, else its own answer.
# $0 is the wrapper's name, "$@" the words after it (hook stop --harness ...).
_MISSING = ("The stop gate (assay) cannot run: the assay command is not installed or not on "
            "PATH here, so nothing checked this work. Install assay in this environment, then "
            "check with: assay hook doctor.")
_RUN = 'command -v assay >/dev/null 2>&1 && exec assay "$@"; '
PORTABLE = {
    # Claude Code and Codex: exit 2 blocks with standard error; the continuing
    # stop (stop_hook_active true in the compact JSON they send) goes through.
    "stop": (_RUN + 'p=$(cat); m="' + _MISSING + '"; case $p in '
             '*\\"stop_hook_active\\":true*|*\\"stop_hook_active\\":\\ true*) '
             'echo "{\\"systemMessage\\":\\"$m\\"}"; exit 0;; esac; echo "$m" >&2; exit 2'),
    # Cursor reads a follow-up message on standard output at loop_count 0.
    "stop-cursor": (_RUN + 'p=$(cat); m="' + _MISSING + '"; case $p in '
                    '*\\"loop_count\\":0[,}]*|*\\"loop_count\\":\\ 0[,}]*) '
                    'echo "{\\"followup_message\\":\\"$m\\"}"; exit 0;; esac; '
                    'echo "$m" >&2; exit 0'),
    # A shell command not recorded is no gate decision: nothing to answer.
    "tool": _RUN + "cat >/dev/null; exit 0",
}
_WRAPPER_NAME = "assay-hook"


@dataclass(frozen=True, slots=True)
class SettingsFile:
    """One harness settings file in one scope, and the entries assay wants in it.

    ``executable`` is None for the portable project-scope command; ``root``
    is the project's directory for the project scope.
    """

    harness: str
    scope: str
    path: Path
    executable: str | None
    root: Path | None = None

    def words(self, subcommand: str) -> list[str]:
        """The words after the runner: ``hook stop --harness NAME [--scope project]``."""
        words = ["hook", subcommand, "--harness", self.harness]
        return words + ["--scope", "project"] if self.scope == "project" else words

    def command(self, subcommand: str) -> str:
        if self.executable is not None:
            return f"{self.executable} {shlex.join(self.words(subcommand))}"
        return shlex.join(["sh", "-c", _wrapper(self.harness, subcommand), _WRAPPER_NAME,
                           *self.words(subcommand)])

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


def _wrapper(harness: str, subcommand: str) -> str:
    if subcommand == "tool":
        return PORTABLE["tool"]
    return PORTABLE["stop-cursor" if harness == "cursor" else "stop"]


def settings_file(harness: str, scope: str, project_root: Path | None,
                  executable: str | None = None) -> SettingsFile:
    """Where ``harness`` reads hooks in ``scope`` (``project_root`` for the project scope).

    Without ``executable``, a project-scope entry runs the portable wrapper
    and a user-scope one this assay by its path.
    """
    folder, name = _PLACES[harness]
    if scope == "user":
        base = Path(os.environ["CODEX_HOME"]) if harness == "codex" and os.environ.get(
            "CODEX_HOME") else Path.home() / folder
        return SettingsFile(harness, scope, base / name, executable or default_executable())
    assert project_root is not None
    return SettingsFile(harness, scope, project_root / folder / name, executable, project_root)


def _runner(words: list[str]) -> int:
    """How many leading words run assay (0 when they do not)."""
    if words and os.path.basename(words[0]).startswith("assay"):
        return 1
    if len(words) >= 3 and words[1:3] == ["-m", "assay"] and \
            os.path.basename(words[0]).startswith("python"):
        return 3
    return 0


def _tail(words: list[str], harness: str | None) -> str | None:
    """The subcommand when ``words`` are exactly ``hook SUB --harness NAME [--scope project]``."""
    if len(words) not in (4, 6) or words[0] != "hook" or words[1] not in ("stop", "tool") or \
            words[2] != "--harness" or words[3] not in _PLACES or \
            (harness is not None and words[3] != harness):
        return None
    if len(words) == 6 and words[4:] != ["--scope", "project"]:
        return None
    return words[1]


def is_assay_command(command: Any, subcommand: str | None = None,
                     harness: str | None = None) -> bool:
    """Whether a hook command is one ``hook install`` writes (for ``subcommand``/``harness``).

    Only an exact command counts, so another tool's entry that merely
    mentions ``assay hook stop`` (a wrapper script, an ``echo``) is never
    taken for assay's.
    """
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if words[:2] == ["sh", "-c"] and len(words) >= 4 and words[3] == _WRAPPER_NAME:
        sub = _tail(words[4:], harness)
        found = sub is not None and words[2] == _wrapper(words[7], sub)
    else:
        skip = _runner(words)
        sub = _tail(words[skip:], harness) if skip else None
        found = sub is not None
    return found and (subcommand is None or sub == subcommand)


def entry_runner(command: Any) -> str | None:
    """The program an entry of assay's starts first: ``assay`` (found on PATH) or its path."""
    if not is_assay_command(command):
        return None
    words = shlex.split(command)
    return "assay" if words[0] == "sh" else words[0]


def _read(path: Path, root: Path | None = None) -> tuple[Path, str | None]:
    """The file's real path and text (None when it does not exist).

    With a project ``root``, a real path outside it (the file or a folder on
    its way is a link that leads out) is refused: a project's settings are
    edited in the project only.
    """
    from assay.inputs import InputRefused, read_regular

    real = Path(os.path.realpath(path))
    if root is not None:
        inside = Path(os.path.realpath(root))
        if real != inside and inside not in real.parents:
            raise AssayError(
                f"{path} leads out of the project, to {real}; assay does not edit it there",
                code="hook_settings_outside_project", details={"path": str(path),
                                                               "real_path": str(real)},
                action=f"Replace the link with the project's own {path.name} (or remove it), "
                       "then run the command again.")
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


def _unchanged(real: Path, before: str | None, label: Path) -> None:
    if _read(real)[1] != before:
        raise ConflictError(f"{label} changed while assay was editing it", retryable=True,
                            code="hook_settings_changed", details={"path": str(label)},
                            action="Run the command again.")


def _write(real: Path, before: str | None, text: str, label: Path) -> None:
    """Replace ``real`` with ``text`` unless it changed since it read as ``before``."""
    _unchanged(real, before, label)
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
    real, before = _read(settings.path, settings.root)
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


def _stripped(settings: SettingsFile, text: str, label: str) -> tuple[str, list[str]]:
    """``text`` without assay's entries (and a ``hooks`` table left empty); the events they were."""
    removed = []
    for event, state in _present(settings, text, label).items():
        if state != "absent":
            removed.append(event)
            text = _strip_event(settings, text, event, label)
    top, hooks = _hooks(text, label)
    if removed and hooks is not None and not hooks.members:
        text = jsontext.remove_member(text, top, "hooks")
    return text, sorted(removed)


def uninstall(settings: SettingsFile) -> dict[str, Any]:
    """Remove assay's entries from the file (an absent file is left absent).

    A file left holding only what install puts in a new one is removed, and
    its folder when that is then empty: what install created goes.
    """
    label = str(settings.path)
    real, before = _read(settings.path, settings.root)
    if before is None:
        return {"path": label, "exists": False, "removed": []}
    text, removed = _stripped(settings, before, label)
    if removed and text == _stripped(settings, _dump(settings.wanted()), label)[0]:
        _unchanged(real, before, settings.path)
        try:
            real.unlink()
        except OSError as exc:
            raise UnavailableError(
                f"cannot remove {label}: {exc.strerror}", code="hook_settings_unwritable",
                details={"path": label}, action="Check the directory's permissions.") from None
        try:
            real.parent.rmdir()  # only when empty: a folder install made, or one left bare
        except OSError:
            pass
        return {"path": label, "exists": False, "removed": removed}
    if text != before:
        _write(real, before, text, settings.path)
    return {"path": label, "exists": True, "removed": removed}


def _runs(settings: SettingsFile, text: str, label: str) -> dict[str, Any]:
    """Whether the commands of assay's entries can start here, and whether every clone can run them."""
    import shutil

    _, hooks = _hooks(text, label)
    runners: set[str] = set()
    for event in _EVENTS[settings.harness]:
        array = hooks.get(event) if hooks is not None else None
        for item in array.items if array is not None and array.kind == "array" else []:
            value = item.data()
            entries = [value] if settings.harness == "cursor" else (
                value.get("hooks") if isinstance(value, dict) else None) or []
            for entry in entries:
                runner = entry_runner(entry.get("command")) if isinstance(entry, dict) else None
                if runner is not None:
                    runners.add(runner)
    found = {r: shutil.which(r) for r in sorted(runners)}
    out: dict[str, Any] = {"commands": [{"runs": r, "found": path} for r, path in found.items()],
                           "ok": bool(found) and all(found.values())}
    if settings.scope == "project":
        # A path into one machine's environment exists in no teammate's clone.
        out["portable"] = bool(found) and all(r == "assay" for r in found)
    return out


def inspect(settings: SettingsFile) -> dict[str, Any]:
    """Whether the file holds assay's entries, per event, and whether they can run, writing nothing."""
    label = str(settings.path)
    try:
        _, text = _read(settings.path, settings.root)
        events = _present(settings, text, label) if text is not None else None
        runs = _runs(settings, text, label) if text is not None else None
    except AssayError as exc:
        return {"harness": settings.harness, "scope": settings.scope, "path": label,
                "exists": True, "installed": False, "error": exc.to_dict()}
    installed = events is not None and all(state == "current" for state in events.values())
    out = {"harness": settings.harness, "scope": settings.scope, "path": label,
           "exists": text is not None, "installed": installed, "events": events}
    if runs is not None and runs["commands"]:
        out["command"] = runs
    return out


def _dump(value: Mapping[str, Any]) -> str:
    import json

    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"
