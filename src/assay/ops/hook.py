"""Harness hook operations: hook stop/tool/install/uninstall/doctor, gate bind.

Handlers import :mod:`assay.gate` lazily so the registry stays cheap to load.
``hook install``, ``hook uninstall`` and ``gate bind`` are a person's
operations (``admin``): the agent the gate judges is never offered them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from assay.errors import AssayError
from assay.ops import Argument, Bound, Invocation, Result, operation

TYPE_CHECKING = False
if TYPE_CHECKING:
    from assay.config import Project
    from assay.ledger.store import Store

_HARNESSES = ["claude-code", "codex", "cursor"]
_HARNESS = Argument("harness", {"enum": _HARNESSES},
                    "The harness that runs the hook (default: recognised from the payload).")
_PAYLOAD = Argument("payload", {"type": ["object", "string"]},
                    "The hook payload the harness sends.")
_SCOPE = Argument("scope", {"enum": ["project", "user"]},
                  "Whose settings: the project's (default) or the user's.")
_HOOK_SCOPE = Argument(
    "scope", {"enum": ["project", "user"]},
    "Where the entry that runs the hook sits. project: gate the project that installed it (its "
    "harness's project directory: CLAUDE_PROJECT_DIR, CURSOR_PROJECT_DIR, else the directory the "
    "hook runs in), whatever directory the stop comes from. user (default): gate the project "
    "around the stop's directory.")
_EXECUTABLE = Argument("executable", {"type": "string", "minLength": 1},
                       "The command the entries run for assay (default: for the project scope, "
                       "assay found on PATH in any clone; for the user scope, this assay).")
_DECISION = {"type": "object", "properties": {
    "event": {"enum": ["gate_blocked", "gate_allowed", "gate_gave_up", "gate_error", None]},
    "answer": {"enum": ["block", "allow"]}, "reason": {"type": ["string", "null"]}}}
_STOP_NOTE = ("On the command line the payload is read from standard input and the answer is "
              "printed exactly as the harness reads it (one JSON line to block, or to tell the "
              "person something; nothing to allow); the exit status is always 0.")
# The harness's own name for the project a project-scope hook belongs to.
_PROJECT_DIR = {"claude-code": "CLAUDE_PROJECT_DIR", "cursor": "CURSOR_PROJECT_DIR"}


class _HookSite:
    """A hook's project and ledger handles (the project's view, and a principal's to compare)."""

    def __init__(self, inv: Invocation, *, owned: bool) -> None:
        self.inv = inv
        self._owned = owned
        self._views: dict[str, Store] = {}

    def project(self) -> Project:
        return self.inv.project()

    @property
    def principal(self) -> str:
        return self.inv.principal

    def store(self) -> Store:
        return self.inv.reviewer_store()

    def store_as(self, principal: str) -> Store:
        if principal not in self._views:
            from assay.ledger import open_store

            self._views[principal] = open_store(
                self.inv.ledger_url(), base=self.project().root, principal=principal,
                create=False)
        return self._views[principal]

    def close(self) -> None:
        for store in self._views.values():
            store.close()
        self._views.clear()
        if self._owned:
            self.inv.close()


@contextmanager
def _site(inv: Invocation, cwd: str | None) -> Iterator[_HookSite]:
    """A site of its own in the session's directory (the call's own cwd wins when it gave one)."""
    site = _HookSite(inv.fresh(cwd or None), owned=True)
    try:
        yield site
    finally:
        site.close()


def _anchor(inv: Invocation, args: dict[str, Any]) -> str | None:
    """The installing project's directory for a project-scope hook (None for a user-scope one)."""
    if args.get("scope") != "project":
        return None
    variable = _PROJECT_DIR.get(args.get("harness") or "")
    named = os.environ.get(variable) if variable else None
    return named or inv.cwd or os.getcwd()


def _payload(inv: Invocation, args: dict[str, Any]) -> Any:
    if "payload" in args:
        return args["payload"]
    try:
        return inv.read_stdin()
    except AssayError as exc:
        return exc  # the gate answers an unreadable payload like any other


def _harness_answer(envelope: dict[str, Any], args: dict[str, Any]) -> str:
    # What the harness reads: its answer as one canonical JSON line, or nothing at all.
    from assay.canonical import output_text

    data = envelope["data"]
    if data.get("harness") == "cursor" and data.get("notice"):
        # Cursor's stop answer has no field for the person; its hooks log keeps standard error.
        import sys

        sys.stderr.write(str(data["notice"]) + "\n")
    answer = data.get("answer")
    return output_text(answer) + "\n" if answer is not None else ""


@operation(
    "hook.stop",
    admin=True,
    raw=_harness_answer,
    summary="Answer a harness's Stop or SubagentStop hook: may the agent stop now?",
    description=(
        "Reads the harness's stop payload (Claude Code and Codex Stop and SubagentStop, Cursor "
        "stop) and answers as the harness expects: a block with the reason the agent reads next, "
        "or nothing to let it stop. The intents that gate the session (the project's [gate] "
        "intents and `gate.bind` bindings) must be ready for review, as the reviewer sees them "
        "(private versions are ignored and named), an active loop must be finished, and a "
        "success claim in the agent's last message must be backed by machine runs taken on the "
        "current workspace. The reason is the next actions of `work.check`, at most 2,000 "
        "characters. At most [gate] retry_cap blocks per run of stops, then the gate gives up "
        "(gate_gave_up) and tells the person; an error answers [gate] on_error (block by "
        "default), within [gate] deadline_seconds. Every decision is a version of the session's "
        "gate-session record (spooled while the ledger cannot take it)."),
    cli_note=_STOP_NOTE,
    writes=True,
    arguments=(_PAYLOAD, _HARNESS, _HOOK_SCOPE),
    output_schema={"type": "object", "properties": {
        "harness": {"enum": _HARNESSES}, "answer": {"type": ["object", "null"]},
        "decision": _DECISION, "run": {"type": ["object", "null"]},
        "session_record": {"type": ["string", "null"]}, "recorded": {"type": "boolean"},
        "notice": {"type": ["string", "null"]}, "spooled": {"type": "string"}}},
)
def hook_stop(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.gate.stop import answer_stop

    data = answer_stop(_payload(inv, args), args.get("harness"), lambda cwd: _site(inv, cwd),
                       anchor=_anchor(inv, args))
    return Result(data)


@operation(
    "hook.tool",
    admin=True,
    raw=_harness_answer,
    summary="Record a shell command the agent ran, as its harness reported it (a claim).",
    description=(
        "Reads a harness's post-tool payload (Claude Code PostToolUse and PostToolUseFailure, "
        "Codex PostToolUse, Cursor afterShellExecution); for a shell command, records the "
        "command (secrets redacted) and the outcome and exit code the harness reported as a "
        "shell-claim record linked to the session. It is what the harness said, never machine "
        "evidence. Other tools are not recorded. Never fails the harness: a command that cannot "
        "be recorded is reported in the result."),
    cli_note="On the command line the payload is read from standard input; nothing is printed "
             "and the exit status is always 0.",
    writes=True,
    arguments=(_PAYLOAD, _HARNESS, _HOOK_SCOPE),
    output_schema={"type": "object", "properties": {
        "recorded": {"type": "boolean"}, "id": {"type": "string"}, "error": {"type": "object"}}},
)
def hook_tool(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.gate.stop import record_shell

    raw = _payload(inv, args)
    if isinstance(raw, AssayError):
        return Result({"recorded": False, "error": raw.to_dict()})
    return Result(record_shell(raw, args.get("harness"), lambda cwd: _site(inv, cwd),
                               anchor=_anchor(inv, args)))


def _settings(inv: Invocation, args: dict[str, Any]) -> Any:
    from assay.gate.install import settings_file

    scope = args.get("scope", "project")
    root = inv.project().root if scope == "project" else None
    return settings_file(args["harness"], scope, root, args.get("executable"))


_TARGET = Argument("harness", {"enum": _HARNESSES}, "The harness: claude-code, codex or cursor.",
                   binding="literal", required=True)


def _unshared(inv: Invocation) -> str | None:
    """Why a project-scope gate on this ledger gates no teammate's agent (None: it may)."""
    url = inv.ledger_url()
    if url.startswith(("postgresql://", "postgres://")):
        return None
    return (f"This project's ledger is a SQLite file ({url}), which stays on this machine: the "
            "settings file is committed, but in a teammate's clone the gate reads that clone's "
            "own ledger, without your intents or bindings. For a team, share one ledger "
            "([ledger] url = \"postgresql://...\" in assay.toml, or ASSAY_DB).")


def _nothing_gates(project: Project) -> str | None:
    if project.gate.intents:
        return None
    return ("Nothing gates this project's sessions yet: name the intents every session must "
            "finish in assay.toml ([gate] intents = [\"knowledge:NAME\"]), or have a person bind "
            "them to one session: 'assay gate bind --as NAME --session ID -- knowledge:NAME'.")


@operation(
    "hook.install",
    admin=True,
    idempotent=True,
    summary="Add assay's stop and shell-command hooks to a harness's settings file.",
    description=(
        "Merges the entries into .claude/settings.json, .codex/hooks.json or .cursor/hooks.json "
        "(the project's, or the user's with `scope` user): Stop and SubagentStop run "
        "`hook.stop`, the shell-command events run `hook.tool`. A project's entries run the "
        "assay found on PATH (so they work in every clone), answer by themselves where assay is "
        "missing (the first stop of a run is blocked), and gate the project that installed "
        "them. Every other entry, key and byte of the file stays as it was; installing again "
        "changes nothing (or only assay's own entries, when their command changed). A file that "
        "is not strict JSON, or a project file that leads out of the project, is refused and "
        "left alone. A person's operation."),
    writes=True,
    writes_ledger=False,
    effect="Writes the harness's settings file; nothing to the ledger.",
    arguments=(_TARGET, _SCOPE, _EXECUTABLE),
    output_schema={"type": "object", "properties": {
        "path": {"type": "string"}, "created": {"type": "boolean"},
        "changed": {"type": "array", "items": {"type": "string"}},
        "warnings": {"type": "array", "items": {"type": "string"}}}},
)
def hook_install(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.gate.install import install

    data = install(_settings(inv, args))
    warnings = []
    if args.get("scope", "project") == "project":
        unshared = _unshared(inv)
        if unshared:
            warnings.append(unshared)
    data["warnings"] = warnings
    steps = ["Check it: 'assay hook doctor'."]
    nothing = _nothing_gates(inv.project())
    if nothing:
        steps.insert(0, nothing)
    if args["harness"] == "codex":
        steps.append("Codex runs a new hook only after you review and trust it in Codex.")
    return Result(data, next=tuple(steps))


@operation(
    "hook.uninstall",
    admin=True,
    destructive=True,
    idempotent=True,
    summary="Remove assay's hook entries from a harness's settings file, and nothing else.",
    description=(
        "Removes only the entries that run assay's hooks as `hook.install` writes them (and an "
        "event list or hooks table the removal leaves empty); every other byte of the file "
        "stays as it was. A file left holding only what install puts in a new one is removed, "
        "with its folder when that is then empty. A person's operation."),
    writes=True,
    writes_ledger=False,
    effect="Writes (or removes) the harness's settings file; nothing to the ledger.",
    arguments=(_TARGET, _SCOPE),
    output_schema={"type": "object", "properties": {
        "path": {"type": "string"}, "exists": {"type": "boolean"},
        "removed": {"type": "array", "items": {"type": "string"}}}},
)
def hook_uninstall(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.gate.install import uninstall

    return Result(uninstall(_settings(inv, args)))


def _doctor_warnings(inv: Invocation, files: list[dict[str, Any]]) -> list[str]:
    """What would make an installed hook let an agent through, file by file."""
    out = []
    for f in files:
        if not f.get("installed"):
            continue
        command = f.get("command") or {}
        for runner in command.get("commands", []):
            if not runner["found"]:
                out.append(f"{f['path']}: its hook command {runner['runs']} is not found here; "
                           "the harness would take the hook as failed and let the agent stop. "
                           "Install assay, or run 'assay hook install' again.")
        if f["scope"] == "project" and command.get("portable") is False:
            out.append(f"{f['path']}: its entries run assay by a path on this machine, which a "
                       "teammate's clone does not have. Run 'assay hook install "
                       f"{f['harness']}' again to write the command that finds assay on PATH.")
    if any(f.get("installed") and f["scope"] == "project" for f in files):
        unshared = _unshared(inv)
        if unshared:
            out.append(unshared)
    return out


@operation(
    "hook.doctor",
    summary="Is the hook installed, and what would it answer if the agent stopped now?",
    description=(
        "For each harness (or the one named) and scope: the settings file, whether "
        "assay's entries are there as `hook.install` writes them, per event, and whether their "
        "command can start here (and, in a project's file, in any clone). Then the answer "
        "`hook.stop` would give now to a new stop of `session` (default: a session with no "
        "binding, gated by the project's [gate] intents and loops), with `message` as the "
        "agent's last message; nothing is recorded. `warnings` names what would let an agent "
        "through."),
    writes=False,
    bounds=Bound("diagnosis", items=1, max_items=1, whole=True, recover=(
        "At most six settings files (three harnesses, two scopes) and one preview answer, whose "
        "reason is at most 2,000 characters.")),
    arguments=(
        Argument("harness", {"enum": _HARNESSES}, "Only this harness (default: all three).",
                 binding="literal"),
        Argument("session", {"type": "string", "minLength": 1},
                 "The session whose stop to preview (its bindings count)."),
        Argument("message", {"type": "string"},
                 "The agent's last message for the preview (its success claims are checked)."),
        _EXECUTABLE,
    ),
    output_schema={"type": "object", "properties": {
        "files": {"type": "array"}, "installed": {"type": "boolean"},
        "would_answer": {"type": "object"}, "warnings": {"type": "array"}}},
)
def hook_doctor(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.gate.harness import StopEvent, stop_answer
    from assay.gate.install import SCOPES, inspect, settings_file
    from assay.gate.stop import preview_stop

    try:
        root = inv.project().root
    except AssayError as exc:
        if exc.code != "project_not_found":
            raise
        root = None
    harnesses = [args["harness"]] if args.get("harness") else _HARNESSES
    files = [inspect(settings_file(h, s, root, args.get("executable")))
             for h in harnesses for s in SCOPES if s == "user" or root is not None]
    harness = next((f["harness"] for f in files if f["installed"]), harnesses[0])
    event = StopEvent(harness=harness, event="Stop", session_id=args.get("session", "doctor"),
                      cwd=str(root) if root else None, continuing=False,
                      message=args.get("message"))
    steps: list[str] = []
    if root is None:
        would: dict[str, Any] = {"answer": None, "decision": {
            "event": None, "answer": "allow",
            "reason": "No assay project here: nothing gates a stop."}}
    else:
        site = _HookSite(inv, owned=False)
        try:
            would = preview_stop(site, event)
        except AssayError as exc:
            would = {"answer": stop_answer(harness, exc.message), "error": exc.to_dict()}
        finally:
            site.close()
        nothing = would.get("decision", {}).get("reason", "") or ""
        if nothing.startswith("Nothing gates this session"):
            steps.append(_nothing_gates(inv.project()) or
                         "Nothing gates this session: bind intents to it with 'assay gate bind "
                         "--as NAME --session ID -- knowledge:NAME' (or name them in [gate] "
                         "intents).")
    installed = any(f["installed"] for f in files)
    if not installed:
        steps.insert(0, f"Install it: 'assay hook install {harnesses[0]}'.")
    warnings = _doctor_warnings(inv, files) if root is not None else []
    return Result({"files": files, "installed": installed, "would_answer": would,
                   "warnings": warnings}, next=tuple(steps))


def _refuse_gated(project: Project, principal: str) -> None:
    """A session's bindings come from a person, never from the principal they gate."""
    if principal == project.gated_principal:
        raise AssayError(
            f"{principal} is the gated principal (the agent the stop gate judges: [gate] "
            "principal, else [project] principal), and a binding decides what gates its own "
            "stops, so it cannot bind them", code="binding_by_gated_principal",
            pointer="/principal", details={"principal": principal},
            action="A person binds the session, as themselves: 'assay gate bind --as NAME "
                   "--session ID -- INTENT' (or with ASSAY_PRINCIPAL=NAME).")


@operation(
    "gate.bind",
    admin=True,
    summary="Bind intents to a harness session: its agent may stop only when they are ready.",
    description=(
        "Adds the intents to the session's gate-binding record (or, with `replace`, makes them "
        "its only intents); `hook.stop` then gates that session's stops on them, besides the "
        "project's [gate] intents. Each must be a readable intent record of this project, in "
        "the project's own version (a private one does not count). A person's operation: the "
        "gated principal is refused (binding_by_gated_principal)."),
    writes=True,
    arguments=(
        Argument("session", {"type": "string", "minLength": 1, "maxLength": 256},
                 "The harness session id (the session_id its hooks receive).", required=True),
        Argument("intent", {"type": "array", "items": {"type": "string", "minLength": 1}},
                 "The intent record ids (knowledge:NAME).", binding="literals", required=True),
        Argument("replace", {"type": "boolean"}, "Replace the session's intents instead of "
                 "adding to them.", binding="flag"),
    ),
    output_schema={"type": "object", "properties": {
        "id": {"type": "string"}, "intents": {"type": "array"}, "receipt": {"type": "object"}}},
)
def gate_bind(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.gate.records import binding_write
    from assay.intent.check import read_intent
    from assay.intent.snapshot import ProjectBinding

    project = inv.project()
    principal = inv.principal
    _refuse_gated(project, principal)
    binding = ProjectBinding(root=str(project.root), scope=project.scope,
                             admitted_scopes=tuple(project.admitted_scopes),
                             principal=principal)
    with inv.reviewer_store().reader() as reader:
        for index, intent_id in enumerate(args["intent"]):
            try:
                read_intent(reader, binding, intent_id)
            except AssayError as exc:
                exc.pointer = f"/intent/{index}"
                raise
        write = binding_write(reader, project.scope, args["session"], args["intent"],
                              replace=bool(args.get("replace")), by=principal)
    receipt = inv.store().put(write)
    return Result({"id": write.id, "intents": write.data["intents"], "receipt": receipt.to_dict()},
                  ledger_revision=receipt.ledger_revision,
                  next=(f"Preview the gate: 'assay hook doctor --session {args['session']}'.",))
