"""Project configuration (``assay.toml``) and project discovery.

A project is the nearest directory at or above ``--cwd`` holding an
``assay.toml``. This module owns that file's closed schema: an unknown key is
an ``invalid_config`` error whose pointer names it. It imports only
:mod:`assay.errors`, :mod:`assay.ids` (the principal grammar),
:mod:`assay.tomltext` (reading and writing TOML) and :mod:`assay.value`.

Sections::

    [project]   name, admitted_scopes, principal
    [ledger]    url (sqlite path or postgresql:// URL)
    [evidence]  ignore (workspace paths an observation leaves out: tool caches)
    [evidence.commands.NAME]
                argv, cwd, timeout, env, phases, required, enabled, description,
                results ({format = "junit", path}: a test results file the command writes)
    [evidence.commands.NAME.requirements]
                "TEST-ID GLOB" = "REQ_ID" or ["REQ_ID", ...]
    [goals.GOAL_ID]
                path (a markdown file inside the project), acceptance (record id)
    [loop]      max_rounds, stall_rounds, max_rejections, max_active_constraints,
                lease_seconds, renew_seconds, gate, recovery, backtrack_after,
                ladder_terminate, violation_rounds
    [memory]    enabled (false: memory commands perform no reads)
    [gate]      intents (record ids that gate every agent stop here), on_error
                ("block" or "allow"), retry_cap (blocks in one run of stops),
                principal (the gated principal), deadline_seconds (the hook's own
                bound), default_intent (the intent that unscoped requirement marks of
                evidence runs belong to)
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from assay.errors import AssayError, ConflictError, UnavailableError, UsageError, pointer
from assay.ids import validate_principal
from assay.tomltext import read_toml, toml_string
from assay.value import field, frozen_value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "CONFIG_NAME",
    "DEFAULT_EVIDENCE_IGNORE",
    "STATE_DIR",
    "STATE_IGNORE",
    "EvidenceCommand",
    "GateSettings",
    "GoalConfig",
    "LoopSettings",
    "Project",
    "ResultsFile",
    "find_project",
    "init_project",
    "load_project",
    "validate_scope",
]

CONFIG_NAME = "assay.toml"
STATE_DIR = ".assay"
_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_NAME = _ALNUM + "._-"
# What `assay init` writes as [evidence] ignore: caches that test and lint
# tools write during a run, which are not changes anyone made to the work.
# What `assay init` adds to .gitignore: the state directory stays out of git, except the
# attestations and the public keys, which travel with a pull request (docs/ci.md);
# private keys (*.key) stay ignored.
STATE_IGNORE = (".assay/*", "!.assay/attestations/", "!.assay/keys/", ".assay/keys/*",
                "!.assay/keys/*.pub.json")
DEFAULT_EVIDENCE_IGNORE = (".pytest_cache", "__pycache__", ".mypy_cache", ".ruff_cache",
                           "node_modules/.cache")


@frozen_value
class ResultsFile:
    """A test results file a command writes: its ``format`` and ``path``.

    ``path`` is relative to the command's ``cwd``, normalised, and stays
    inside the project root (symlinks are refused again when it is read).
    """

    format: str
    path: str

    def to_dict(self) -> dict[str, str]:
        return {"format": self.format, "path": self.path}


@frozen_value
class EvidenceCommand:
    """One ``[evidence.commands.NAME]`` declaration, validated.

    ``argv`` runs without a shell (unless argv itself names one); ``cwd`` is
    relative to the project root and stays inside it; ``timeout`` is whole
    seconds; ``env`` names the variables allowed through to the command
    besides the runner's documented minimal set.
    """

    name: str
    argv: tuple[str, ...]
    cwd: str = "."
    timeout: int = 120
    env: tuple[str, ...] = ()
    phases: tuple[str, ...] = ("after",)
    required: bool = False
    enabled: bool = True
    description: str = ""
    results: ResultsFile | None = None
    requirements: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The declaration as JSON data (what its digest is computed over).

        ``results`` and ``requirements`` appear only when declared, so the
        digest of a declaration without them is what it always was.
        """
        out: dict[str, Any] = {
            "name": self.name,
            "argv": list(self.argv),
            "cwd": self.cwd,
            "timeout": self.timeout,
            "env": list(self.env),
            "phases": list(self.phases),
            "required": self.required,
            "enabled": self.enabled,
            "description": self.description,
        }
        if self.results is not None:
            out["results"] = self.results.to_dict()
        if self.requirements:
            out["requirements"] = {glob: list(ids) for glob, ids in self.requirements}
        return out


@frozen_value
class GoalConfig:
    """One ``[goals.GOAL_ID]`` registration: a goal markdown file in the project.

    ``path`` is relative to the project root, normalised, and never leaves it
    (symlinks are checked again when the file is read). ``acceptance`` names
    the intent record whose acceptance applies to the goal's work, if any.
    """

    id: str
    path: str
    acceptance: str | None = None


@frozen_value
class LoopSettings:
    """``[loop]``: the loop governor's budgets (the reference defaults) and the high-risk gate."""

    max_rounds: int = 20
    stall_rounds: int = 3
    max_rejections: int = 3
    max_active_constraints: int = 15
    lease_seconds: int = 30
    renew_seconds: int = 10
    gate: bool = True
    recovery: bool = True
    backtrack_after: int = 0
    ladder_terminate: int = 3
    violation_rounds: int = 3


@frozen_value
class GateSettings:
    """``[gate]``: which intents gate an agent's stop here, and how the stop gate fails.

    ``intents`` gate every session in the project (besides bindings recorded
    with ``gate bind`` and an active loop); ``on_error`` is what the gate
    answers when it cannot decide (``block``, the default, or ``allow``);
    ``retry_cap`` is how many times in one run of stops the gate may send the
    agent back before it gives up and lets it stop. ``principal`` is the
    gated principal: the one the hook acts as, whose work the gate judges
    (None: the project's ``principal``); what gates it (bindings, pins,
    approvals) must come from another principal. ``deadline_seconds`` is how
    long ``hook stop`` may take, from its start, before it answers
    ``on_error`` whatever is still running (well below the harness timeout
    ``hook install`` writes). ``default_intent`` owns every requirement mark
    or mapping of an evidence run that names no intent (``R1`` rather than
    ``knowledge:login#R1``); None leaves such marks to the one intent a run
    was recorded ``--for``, or to none. ``reviewer_keys`` are the public key
    files (relative to the project root) whose holders may sign pins and
    approvals (``gate pin --sign``, ``gate approve --sign``).
    """

    intents: tuple[str, ...] = ()
    on_error: str = "block"
    retry_cap: int = 5
    principal: str | None = None
    deadline_seconds: int = 60
    default_intent: str | None = None
    reviewer_keys: tuple[str, ...] = ()


@frozen_value
class Project:
    """A discovered project: its root, its scope and its settings."""

    root: Path
    name: str
    admitted_scopes: tuple[str, ...] = ()
    principal: str = "agent"
    ledger_url: str | None = None
    sections: dict[str, Any] = field(default_factory=dict)
    evidence_commands: tuple[EvidenceCommand, ...] = ()
    evidence_ignore: tuple[str, ...] = ()
    goals: tuple[GoalConfig, ...] = ()
    loop: LoopSettings = LoopSettings()
    memory_enabled: bool = True
    gate: GateSettings = GateSettings()

    @property
    def scope(self) -> str:
        """The project's own scope, ``project:<name>``."""
        return f"project:{self.name}"

    @property
    def readable_scopes(self) -> tuple[str, ...]:
        """The scopes this project may read: its own, admitted historical ones, global."""
        return (self.scope, *self.admitted_scopes, "global")

    @property
    def gated_principal(self) -> str:
        """The principal the stop gate judges and acts as (``[gate] principal``, else the project's)."""
        return self.gate.principal or self.principal

    @property
    def default_ledger_path(self) -> Path:
        """Where the embedded SQLite ledger lives unless configured otherwise."""
        return self.root / STATE_DIR / "ledger.db"


def _is_name(text: str) -> bool:
    """Whether ``text`` is a name, ``[A-Za-z0-9][A-Za-z0-9._-]{0,127}`` (a project, goal, command)."""
    return 0 < len(text) <= 128 and text[0] in _ALNUM and not text.strip(_NAME)


def validate_scope(scope: Any, *, field_pointer: str = "") -> str:
    """Return ``scope`` if it is ``global`` or ``project:<name>``, else ``invalid_scope``."""
    if scope == "global":
        return "global"
    if isinstance(scope, str) and scope.startswith("project:") and _is_name(scope[8:]):
        return scope
    raise AssayError(
        f"invalid scope {scope!r}: use 'global' or 'project:<name>'",
        code="invalid_scope",
        pointer=field_pointer or None,
    )


def _directory(cwd: str | os.PathLike[str]) -> Path:
    """``cwd`` resolved, if it names a directory; else ``invalid_cwd`` (a usage error).

    A path the operating system refuses outright (a name longer than
    NAME_MAX, an embedded NUL) is the caller's mistake too, never a crash.
    """
    try:
        path = Path(cwd).resolve()
        if path.is_dir():
            return path
        problem = "is not a directory"
    except (OSError, ValueError) as exc:
        problem = f"cannot be used: {getattr(exc, 'strerror', None) or exc}"
    raise UsageError(f"--cwd {str(cwd)[:200]!r} {problem}", code="invalid_cwd", pointer="/cwd",
                     action="Pass an existing directory inside the project.")


def find_project(cwd: str | os.PathLike[str] | None = None) -> Path | None:
    """Walk up from ``cwd`` to the nearest directory holding ``assay.toml``.

    A ``cwd`` that is not a usable directory is ``invalid_cwd``.
    """
    start = _directory(cwd) if cwd is not None else Path(os.getcwd()).resolve()
    for candidate in (start, *start.parents):
        if (candidate / CONFIG_NAME).is_file():
            return candidate
    return None


def load_project(cwd: str | os.PathLike[str] | None = None) -> Project:
    """Find and load the project around ``cwd``.

    Raises ``project_not_found`` (with the ``assay init`` action) when no
    ``assay.toml`` is found, and ``invalid_config`` for a malformed one.
    """
    root = find_project(cwd)
    if root is None:
        raise AssayError(
            f"no {CONFIG_NAME} found in {Path(cwd or os.getcwd()).resolve()} or above",
            code="project_not_found",
            action="Run 'assay init' in the project root, or pass --cwd.",
        )
    path = root / CONFIG_NAME
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise _config_error(path, "", "the file is not valid UTF-8") from None
    except OSError as exc:
        raise UnavailableError(
            f"cannot read {path}: {exc.strerror}", code="config_unavailable",
            action="Check the file's permissions.",
        ) from None
    try:
        raw = read_toml(text)
    except ValueError as exc:
        raise _config_error(path, "", f"not valid TOML: {exc}") from None
    return _parse(root, path, raw)


_TOP = {"project", "ledger", "evidence", "goals", "memory", "loop", "gate"}
_PROJECT_KEYS = {"name", "admitted_scopes", "principal"}
_LEDGER_KEYS = {"url"}


def _parse(root: Path, path: Path, raw: dict[str, Any]) -> Project:
    for key in raw:
        if key not in _TOP:
            raise _config_error(path, pointer(key), f"unknown section or key {key!r}")
    project = _table(path, raw, "project")
    ledger = _table(path, raw, "ledger")
    _closed(path, project, _PROJECT_KEYS, "project")
    _closed(path, ledger, _LEDGER_KEYS, "ledger")

    name = project["name"] if "name" in project else _default_name(root)
    if not isinstance(name, str) or not _is_name(name):
        raise _config_error(path, "/project/name", "name must match [A-Za-z0-9][A-Za-z0-9._-]*")
    admitted = project.get("admitted_scopes", [])
    if not isinstance(admitted, list):
        raise _config_error(path, "/project/admitted_scopes", "must be a list of scopes")
    scopes: list[str] = []
    for index, scope in enumerate(admitted):
        ptr = pointer("project", "admitted_scopes", index)
        if not isinstance(scope, str) or not scope.startswith("project:"):
            raise _config_error(path, ptr, "admitted scopes are 'project:<name>' strings")
        try:
            validate_scope(scope)
        except AssayError:
            raise _config_error(path, ptr, f"invalid scope {scope!r}") from None
        if scope != f"project:{name}" and scope not in scopes:
            scopes.append(scope)
    principal = project.get("principal", "agent")
    try:
        validate_principal(principal)
    except AssayError as exc:
        raise _config_error(path, "/project/principal", exc.message) from None
    url = ledger.get("url")
    if url is not None and (not isinstance(url, str) or not url.strip()):
        raise _config_error(path, "/ledger/url", "url must be a non-empty string")
    return Project(
        root=root,
        name=name,
        admitted_scopes=tuple(scopes),
        principal=principal,
        ledger_url=url,
        sections={k: v for k, v in raw.items() if k not in {"project", "ledger"}},
        evidence_commands=_evidence_commands(path, raw),
        evidence_ignore=_evidence_ignore(path, raw),
        goals=_goals(path, raw),
        loop=_loop_settings(path, raw),
        memory_enabled=_memory_enabled(path, raw),
        gate=_gate_settings(path, raw),
    )


_MAX_RETRY_CAP = 100
# The longest hook deadline: well below the 120 s harness timeout hook install writes.
MAX_GATE_DEADLINE_SECONDS = 90


def _gate_settings(path: Path, raw: dict[str, Any]) -> GateSettings:
    """Parse ``[gate]``: ``intents`` record ids, ``on_error`` block|allow, ``retry_cap`` 0..100,
    ``principal``, ``default_intent`` (a record id)."""
    table = _table(path, raw, "gate")
    _closed(path, table, {"intents", "on_error", "retry_cap", "principal", "deadline_seconds",
                          "default_intent", "reviewer_keys"},
            "gate")
    intents = table.get("intents", [])
    if not isinstance(intents, list):
        raise _config_error(path, "/gate/intents", "intents must be a list of record ids")
    seen: list[str] = []
    for index, record_id in enumerate(intents):
        if not isinstance(record_id, str) or not re.fullmatch(_RECORD_ID, record_id):
            raise _config_error(path, pointer("gate", "intents", index),
                                "intents are record ids such as knowledge:NAME")
        if record_id not in seen:
            seen.append(record_id)
    on_error = table.get("on_error", "block")
    if on_error not in ("block", "allow"):
        raise _config_error(path, "/gate/on_error", 'on_error must be "block" or "allow"')
    cap = table.get("retry_cap", 5)
    if not isinstance(cap, int) or isinstance(cap, bool) or not 0 <= cap <= _MAX_RETRY_CAP:
        raise _config_error(path, "/gate/retry_cap",
                            f"retry_cap must be a whole number from 0 to {_MAX_RETRY_CAP}")
    principal = table.get("principal")
    if principal is not None:
        try:
            validate_principal(principal)
        except AssayError as exc:
            raise _config_error(path, "/gate/principal", exc.message) from None
    deadline = table.get("deadline_seconds", 60)
    if not isinstance(deadline, int) or isinstance(deadline, bool) or \
            not 1 <= deadline <= MAX_GATE_DEADLINE_SECONDS:
        raise _config_error(path, "/gate/deadline_seconds",
                            "deadline_seconds must be a whole number from 1 to "
                            f"{MAX_GATE_DEADLINE_SECONDS}")
    default = table.get("default_intent")
    if default is not None and (not isinstance(default, str)
                                or not re.fullmatch(_RECORD_ID, default)):
        raise _config_error(path, "/gate/default_intent",
                            "default_intent is a record id such as knowledge:NAME")
    keys = table.get("reviewer_keys", [])
    if not isinstance(keys, list):
        raise _config_error(path, "/gate/reviewer_keys",
                            "reviewer_keys must be a list of public key file paths")
    for index, item in enumerate(keys):
        if not isinstance(item, str) or not item or "\x00" in item or os.path.isabs(item):
            raise _config_error(path, pointer("gate", "reviewer_keys", index),
                                "reviewer_keys are public key files relative to the project "
                                "root, such as .assay/keys/alice.pub.json")
    return GateSettings(intents=tuple(seen), on_error=on_error, retry_cap=cap,
                        principal=principal, deadline_seconds=deadline, default_intent=default,
                        reviewer_keys=tuple(dict.fromkeys(keys)))


def _memory_enabled(path: Path, raw: dict[str, Any]) -> bool:
    """Parse ``[memory]``: ``enabled`` (default true). Off, memory performs no reads."""
    memory = _table(path, raw, "memory")
    _closed(path, memory, {"enabled"}, "memory")
    enabled = memory.get("enabled", True)
    if not isinstance(enabled, bool):
        raise _config_error(path, "/memory/enabled", "enabled must be true or false")
    return enabled


_LOOP_BOUNDS = {"max_rounds": (1, 1000), "stall_rounds": (0, 1000), "max_rejections": (1, 100),
                "max_active_constraints": (1, 15), "lease_seconds": (5, 3600),
                "renew_seconds": (1, 3600), "backtrack_after": (0, 100),
                "ladder_terminate": (1, 100), "violation_rounds": (0, 20)}


def _loop_settings(path: Path, raw: dict[str, Any]) -> LoopSettings:
    """Parse ``[loop]``: whole-number budgets within bounds, ``gate`` a boolean."""
    table = _table(path, raw, "loop")
    _closed(path, table, {*_LOOP_BOUNDS, "gate", "recovery"}, "loop")
    values: dict[str, Any] = {}
    for key, (low, high) in _LOOP_BOUNDS.items():
        if key in table:
            value = table[key]
            if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
                raise _config_error(path, pointer("loop", key),
                                    f"{key} must be a whole number from {low} to {high}")
            values[key] = value
    if "gate" in table:
        if not isinstance(table["gate"], bool):
            raise _config_error(path, "/loop/gate", "gate must be true or false")
        values["gate"] = table["gate"]
    if "recovery" in table:
        if not isinstance(table["recovery"], bool):
            raise _config_error(path, "/loop/recovery", "recovery must be true or false")
        values["recovery"] = table["recovery"]
    settings = LoopSettings(**values)
    if settings.renew_seconds >= settings.lease_seconds:
        raise _config_error(path, "/loop/renew_seconds",
                            "renew_seconds must be shorter than lease_seconds")
    return settings


_GOAL_KEYS = {"path", "acceptance"}
# Patterns of the optional sections, compiled (and cached by re) when a section has them.
_RECORD_ID = r"[a-z][a-z0-9-]*:[^\x00-\x1f\x7f]{1,500}"


def _goals(path: Path, raw: dict[str, Any]) -> tuple[GoalConfig, ...]:
    """Parse ``[goals.GOAL_ID]`` tables, in goal id order."""
    goals = _table(path, raw, "goals")
    out: list[GoalConfig] = []
    for goal_id in sorted(goals):
        table = goals[goal_id]
        base = ("goals", goal_id)
        if not _is_name(goal_id):
            raise _config_error(path, pointer(*base),
                                "a goal id must match [A-Za-z0-9][A-Za-z0-9._-]*")
        if not isinstance(table, dict):
            raise _config_error(path, pointer(*base), f"[goals.{goal_id}] must be a table")
        for key in table:
            if key not in _GOAL_KEYS:
                raise _config_error(path, pointer(*base, key),
                                    f"unknown key {key!r} in [goals.{goal_id}]")
        rel = table.get("path")
        if not isinstance(rel, str) or not rel or "\x00" in rel:
            raise _config_error(path, pointer(*base, "path"),
                                "path is required: a markdown file relative to the project root")
        normal = os.path.normpath(rel.replace("\\", "/"))
        if os.path.isabs(rel) or normal in (".", "..") or normal.startswith("../"):
            raise _config_error(path, pointer(*base, "path"),
                                "path must be relative and stay inside the project root")
        acceptance = table.get("acceptance")
        if acceptance is not None and (not isinstance(acceptance, str)
                                       or not re.fullmatch(_RECORD_ID, acceptance)):
            raise _config_error(path, pointer(*base, "acceptance"),
                                "acceptance is a record id such as knowledge:NAME")
        out.append(GoalConfig(id=goal_id, path=Path(normal).as_posix(), acceptance=acceptance))
    return tuple(out)


_EVIDENCE_KEYS = {"commands", "ignore"}
_COMMAND_KEYS = {"argv", "cwd", "timeout", "env", "phases", "required", "enabled", "description",
                 "results", "requirements"}
_RESULTS_FORMATS = ("junit",)
# A requirement id as the mapping names it: what an intent's requirement id may be, bounded.
_REQUIREMENT_ID = r"[^\x00-\x1f\x7f]{1,200}"
_MAX_MAPPINGS = 1000
_PHASES = ("before", "after")
_ENV_NAME = r"[A-Za-z_][A-Za-z0-9_]{0,127}"
_MAX_TIMEOUT = 86_400


def _evidence_commands(path: Path, raw: dict[str, Any]) -> tuple[EvidenceCommand, ...]:
    """Parse ``[evidence.commands.NAME]`` tables, in name order."""
    evidence = _table(path, raw, "evidence")
    _closed(path, evidence, _EVIDENCE_KEYS, "evidence")
    commands = evidence.get("commands", {})
    if not isinstance(commands, dict):
        raise _config_error(path, "/evidence/commands", "[evidence.commands] must be a table")
    return tuple(_evidence_command(path, name, commands[name]) for name in sorted(commands))


def _evidence_ignore(path: Path, raw: dict[str, Any]) -> tuple[str, ...]:
    """``[evidence] ignore``: relative path patterns (``*`` and ``?`` within one name).

    A pattern without ``/`` matches a file or directory name at any depth;
    one with ``/`` matches that run of names at any depth. Everything under
    a matching directory is left out of workspace observations.
    """
    value = _table(path, raw, "evidence").get("ignore", [])
    if not isinstance(value, list):
        raise _config_error(path, "/evidence/ignore", "ignore must be a list of path patterns")
    out: list[str] = []
    for index, item in enumerate(value):
        parts = item.strip("/").split("/") if isinstance(item, str) else []
        if not parts or any(p in ("", ".", "..") for p in parts) or "\x00" in item:
            raise _config_error(path, pointer("evidence", "ignore", index),
                                "ignore entries are relative path patterns such as "
                                "__pycache__ or node_modules/.cache")
        if item.strip("/") not in out:
            out.append(item.strip("/"))
    return tuple(out)


def _evidence_command(path: Path, name: str, table: Any) -> EvidenceCommand:
    base = ("evidence", "commands", name)
    if not _is_name(name):
        raise _config_error(path, pointer(*base),
                            "a command name must match [A-Za-z0-9][A-Za-z0-9._-]*")
    if not isinstance(table, dict):
        raise _config_error(path, pointer(*base), f"[evidence.commands.{name}] must be a table")
    for key in table:
        if key not in _COMMAND_KEYS:
            raise _config_error(path, pointer(*base, key),
                                f"unknown key {key!r} in [evidence.commands.{name}]")
    argv = table.get("argv")
    if argv is None:
        raise _config_error(path, pointer(*base, "argv"), "argv is required")
    if not isinstance(argv, list) or not argv:
        raise _config_error(path, pointer(*base, "argv"), "argv must be a non-empty list of strings")
    for index, word in enumerate(argv):
        if not isinstance(word, str) or (index == 0 and not word) or "\x00" in word:
            raise _config_error(path, pointer(*base, "argv", index),
                                "argv entries are strings without NUL (the first non-empty)")
    cwd = table.get("cwd", ".")
    if not isinstance(cwd, str) or not cwd or "\x00" in cwd:
        raise _config_error(path, pointer(*base, "cwd"), "cwd must be a non-empty relative path")
    normal = os.path.normpath(cwd.replace("\\", "/"))
    if os.path.isabs(cwd) or normal == ".." or normal.startswith("../"):
        raise _config_error(path, pointer(*base, "cwd"),
                            "cwd must be relative and stay inside the project root")
    timeout = table.get("timeout", 120)
    if not isinstance(timeout, int) or isinstance(timeout, bool) or not 0 < timeout <= _MAX_TIMEOUT:
        raise _config_error(path, pointer(*base, "timeout"),
                            f"timeout must be whole seconds from 1 to {_MAX_TIMEOUT}")
    env = table.get("env", [])
    if not isinstance(env, list):
        raise _config_error(path, pointer(*base, "env"), "env must be a list of variable names")
    for index, var in enumerate(env):
        if not isinstance(var, str) or not re.fullmatch(_ENV_NAME, var):
            raise _config_error(path, pointer(*base, "env", index),
                                "env entries are variable names like CI or PYTHONPATH")
    phases = table.get("phases", ["after"])
    if not isinstance(phases, list) or not phases:
        raise _config_error(path, pointer(*base, "phases"),
                            "phases must be a non-empty list of 'before' and 'after'")
    for index, phase in enumerate(phases):
        if phase not in _PHASES or phases.index(phase) != index:
            raise _config_error(path, pointer(*base, "phases", index),
                                "phases are 'before' and 'after', each at most once")
    flags: dict[str, bool] = {}
    for key, default in (("required", False), ("enabled", True)):
        value = table.get(key, default)
        if not isinstance(value, bool):
            raise _config_error(path, pointer(*base, key), f"{key} must be true or false")
        flags[key] = value
    description = table.get("description", "")
    if not isinstance(description, str) or len(description) > 1000:
        raise _config_error(path, pointer(*base, "description"),
                            "description must be a string of at most 1,000 characters")
    return EvidenceCommand(
        name=name,
        argv=tuple(argv),
        cwd=normal,
        timeout=timeout,
        env=tuple(sorted(set(env))),
        phases=tuple(p for p in _PHASES if p in phases),
        required=flags["required"],
        enabled=flags["enabled"],
        description=description,
        results=_results_file(path, base, table.get("results"), normal),
        requirements=_requirement_map(path, base, table.get("requirements")),
    )


def _results_file(path: Path, base: tuple[str, ...], value: Any, cwd: str) -> ResultsFile | None:
    """``results = {format = "junit", path = "reports/unit.xml"}``, or None when absent."""
    if value is None:
        return None
    where = (*base, "results")
    if not isinstance(value, dict):
        raise _config_error(path, pointer(*where),
                            'results must be a table: {format = "junit", path = "..."}')
    for key in value:
        if key not in ("format", "path"):
            raise _config_error(path, pointer(*where, key), f"unknown key {key!r} in results")
    fmt = value.get("format")
    if fmt not in _RESULTS_FORMATS:
        raise _config_error(path, pointer(*where, "format"),
                            f"format must be one of {', '.join(_RESULTS_FORMATS)}")
    rel = value.get("path")
    if not isinstance(rel, str) or not rel or "\x00" in rel:
        raise _config_error(path, pointer(*where, "path"),
                            "path is required: the file the command writes, relative to its cwd")
    normal = os.path.normpath(os.path.join(cwd, rel.replace("\\", "/")))
    if os.path.isabs(rel) or normal in (".", "..") or normal.startswith("../"):
        raise _config_error(path, pointer(*where, "path"),
                            "path must be relative and stay inside the project root")
    return ResultsFile(format=fmt, path=os.path.relpath(normal, cwd).replace(os.sep, "/"))


def _requirement_map(path: Path, base: tuple[str, ...], value: Any
                     ) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``[evidence.commands.NAME.requirements]``: test-id glob to requirement id(s), in glob order."""
    if value is None:
        return ()
    where = (*base, "requirements")
    if not isinstance(value, dict):
        raise _config_error(path, pointer(*where),
                            "requirements must be a table of test-id globs to requirement ids")
    if len(value) > _MAX_MAPPINGS:
        raise _config_error(path, pointer(*where),
                            f"requirements maps at most {_MAX_MAPPINGS:,} globs")
    out: list[tuple[str, tuple[str, ...]]] = []
    for glob in sorted(value):
        given = value[glob]
        ids = [given] if isinstance(given, str) else given
        if not glob or len(glob) > 1000 or "\x00" in glob:
            raise _config_error(path, pointer(*where, glob),
                                "a test-id glob is a non-empty string of at most 1,000 characters")
        if not isinstance(ids, list) or not ids:
            raise _config_error(path, pointer(*where, glob),
                                "map a glob to a requirement id or a non-empty list of them")
        for index, rid in enumerate(ids):
            if not isinstance(rid, str) or not re.fullmatch(_REQUIREMENT_ID, rid) or not rid.strip():
                at = pointer(*where, glob) if isinstance(given, str) else \
                    pointer(*where, glob, index)
                raise _config_error(path, at, "a requirement id is a non-blank string of at "
                                    "most 200 characters without control characters")
        out.append((glob, tuple(dict.fromkeys(ids))))
    return tuple(out)


def _table(path: Path, raw: dict[str, Any], key: str) -> dict[str, Any]:
    value = raw.get(key, {})
    if not isinstance(value, dict):
        raise _config_error(path, pointer(key), f"[{key}] must be a table")
    return value


def _closed(path: Path, table: dict[str, Any], allowed: set[str], section: str) -> None:
    for key in table:
        if key not in allowed:
            raise _config_error(path, pointer(section, key), f"unknown key {key!r} in [{section}]")


def _config_error(path: Path, ptr: str, problem: str) -> AssayError:
    return AssayError(
        f"{path.name}: {problem}",
        code="invalid_config",
        pointer=ptr or None,
        details={"path": str(path)},
        action=f"Fix {path} and run the command again.",
    )


def _default_name(root: Path) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", root.name).strip("-._") or "project"
    return cleaned[:128]


def init_project(
    root: str | os.PathLike[str],
    *,
    scope: str | None = None,
    db: str | None = None,
) -> tuple[Project, bool]:
    """Create ``assay.toml`` and ``.assay/`` in ``root``; return ``(project, created)``.

    An existing ``assay.toml`` is never overwritten: it is loaded and returned
    with ``created=False`` unless the requested scope or db differ from it,
    which is ``project_exists``. In a git work tree :data:`STATE_IGNORE` is
    added to ``.gitignore`` once: ``.assay/`` is ignored except its
    attestations and public keys.
    """
    base = _directory(root)
    if scope is not None:
        scope = validate_scope(scope, field_pointer="/scope")
        if not scope.startswith("project:"):
            raise AssayError("a project's scope must be 'project:<name>'", code="invalid_scope",
                             pointer="/scope")
    config = base / CONFIG_NAME
    if config.exists():
        existing = load_project(base)
        if (scope and scope != existing.scope) or (db and db != existing.ledger_url):
            raise ConflictError(
                f"{config} already exists with other settings",
                code="project_exists",
                action="Edit assay.toml by hand to change the scope or the ledger.",
            )
        (base / STATE_DIR).mkdir(exist_ok=True)
        return existing, False
    name = scope[8:] if scope else _default_name(base)
    lines = ["[project]", f"name = {toml_string(name)}", "admitted_scopes = []", ""]
    if db:
        lines += ["[ledger]", f"url = {toml_string(db)}", ""]
    lines += ["[evidence]",
              "# Left out of workspace observations: caches tools write while they run.",
              "ignore = [" + ", ".join(toml_string(p) for p in DEFAULT_EVIDENCE_IGNORE) + "]",
              ""]
    config.write_text("\n".join(lines), encoding="utf-8")
    (base / STATE_DIR).mkdir(exist_ok=True)
    _ignore_state_dir(base)
    return load_project(base), True


def _ignore_state_dir(root: Path) -> None:
    import subprocess  # only `assay init` runs git here; every other command skips the import

    try:
        inside = subprocess.run(
            ["git", "rev-parse", "--is-inside-work-tree"],
            cwd=root, capture_output=True, text=True, timeout=10, check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return
    if inside.returncode != 0 or inside.stdout.strip() != "true":
        return
    ignore = root / ".gitignore"
    text = ignore.read_text(encoding="utf-8") if ignore.exists() else ""
    if any(line.strip() in {".assay", ".assay/", "/.assay", "/.assay/", STATE_IGNORE[0]}
           for line in text.splitlines()):
        return
    if text and not text.endswith("\n"):
        text += "\n"
    ignore.write_text(text + "".join(line + "\n" for line in STATE_IGNORE), encoding="utf-8")
