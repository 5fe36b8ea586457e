"""The operations registry: every operation assay offers, declared once.

An operation has a dotted name (``work.check``), a summary, arguments with
their CLI bindings, input and output JSON Schemas, whether it writes and, for
a read, its bound (:class:`~assay.ops.bounds.Bound`). The
CLI (``assay work check``), the MCP tool (``work_check``) and ``assay
describe`` are all generated from this registry, so adding an operation is one
declaration in one ``assay.ops.<group>`` module.

Operation modules must stay light to import: they declare arguments as plain
dicts and import the capability they call inside the handler, so that
``assay --version`` and ``assay canonical`` never load a database driver, the
MCP SDK or pydantic. This package may import capabilities, the ledger, config
and the base modules; it never imports a surface.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable, Iterator, Mapping

from assay.errors import AssayError, UsageError, pointer
from assay.ids import is_word
from assay.ops.bounds import Bound
from assay.value import field, frozen_value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    from assay.config import Project
    from assay.ledger.access import Access
    from assay.ledger.store import Store

__all__ = [
    "Argument",
    "Bound",
    "Invocation",
    "Operation",
    "Result",
    "call",
    "command_operations",
    "describe",
    "lookup",
    "operation",
    "operation_for",
    "operations",
]

if TYPE_CHECKING:
    Binding = Literal["option", "flag", "literal", "literals", "stdin", "json_file"]
    Surface = Literal["cli", "mcp"]

# Which module declares which operations, in registry order (the order of
# `assay describe`, `assay --help` and the MCP tool list). The CLI reads it to
# import only the module of the operation it runs. It is generated from what
# the modules register (`.venv/bin/python tests/registry_tables.py`), and a
# test fails when it is stale. An operation missing here still works, at the
# cost of importing every module to find it.
# BEGIN generated: DECLARED (tests/registry_tables.py)
DECLARED: dict[str, tuple[str, ...]] = {
    "assay.ops.core": ("canonical", "describe", "init"),
    "assay.ops.ledger": ("put", "get", "find", "retire", "supersede", "ledger.info",
                         "ledger.verify", "ledger.roles", "ledger.grant"),
    "assay.ops.intent": ("work.check", "work.status", "work.history", "work.attention",
                         "work.prepare-capture", "work.new", "work.accept", "work.checkpoint",
                         "work.resume", "decision.record", "decision.show"),
    "assay.ops.evidence": ("evidence.run", "evidence.list", "evidence.show", "evidence.observe"),
    "assay.ops.context": ("goal.read", "goal.write", "todo.add", "todo.claim", "todo.update",
                          "todo.complete", "todo.list", "work.context"),
    "assay.ops.packet": ("packet.init", "packet.approve", "packet.source", "packet.validate",
                         "packet.render", "packet.brief", "packet.admit", "packet.close"),
    "assay.ops.provenance": ("note.add", "note.list", "memory.add", "memory.search", "memory.list",
                             "publish.check", "pending.ask", "pending.answer", "pending.list",
                             "note.adopt", "memory.adopt"),
    "assay.ops.loop": ("loop.start", "loop.next", "loop.status", "loop.stop", "loop.resume",
                       "loop.pause", "loop.gate-check", "loop.approve", "loop.deny",
                       "loop.questions", "loop.schema", "loop.checkpoint", "loop.recover",
                       "loop.explain", "loop.replay", "loop.audit"),
    "assay.ops.report": ("report",),
    "assay.ops.attest": ("attest", "key.generate", "verify-attestation", "ci.verify"),
    "assay.ops.hook": ("hook.stop", "hook.tool", "hook.install", "hook.uninstall", "hook.doctor",
                       "gate.bind"),
    "assay.ops.gate": ("gate.pin", "gate.approve"),
}
# END generated: DECLARED

# What each command group is for, in one line of `assay --help` (keep it short:
# click cuts a line at about 60 characters).
GROUPS: dict[str, str] = {
    "work": "Intents: readiness for review, status, checkpoints.",
    "decision": "Record decisions as immutable events; show them.",
    "ledger": "Inspect the ledger: backend, revision, counts.",
    "evidence": "Run declared checks; observe the git workspace.",
    "goal": "Read goal files; regenerate their todo regions.",
    "todo": "A goal's todos: add, claim, update, complete, list.",
    "packet": "Research packets: create, validate, render, close.",
    "note": "Notes derived from records, sources pinned.",
    "memory": "Memories kept across sessions, private by default.",
    "publish": "Check that derived content may still be published.",
    "pending": "Decisions waiting for a person's answer.",
    "loop": "Governed rounds of agent work under a contract.",
    "key": "Signing keys for attestations.",
    "ci": "Re-verify an attestation in CI by re-running it.",
    "hook": "Harness hooks: gate the agent's stop on proof.",
    "gate": "Bind, pin and approve what gates an agent's stop.",
}

_HOME: dict[str, str] = {name: module for module, names in DECLARED.items() for name in names}
_ORDER: dict[str, int] = {name: index for index, name in enumerate(_HOME)}


def _tool_name(name: str) -> str:
    return name.replace(".", "_").replace("-", "_")


_TOOL_HOME: dict[str, str] = {_tool_name(name): name for name in _HOME}


@frozen_value
class Argument:
    """One argument of an operation.

    ``binding`` says how the CLI supplies it: ``option`` (``--name VALUE``,
    repeatable when the schema is an array), ``flag`` (``--name``),
    ``literal`` / ``literals`` (after ``--``, taken verbatim), ``stdin`` (raw
    text read from standard input) or ``json_file`` (``--name FILE|-``, parsed
    as strict JSON). Over MCP every argument is a property of the tool input
    under ``name``.
    """

    name: str
    schema: Mapping[str, Any]
    help: str
    binding: Binding = "option"
    cli: str | None = None
    required: bool = False
    # What only the command line's help adds (a file, standard input); see
    # Operation.argument_help.
    cli_help: str = ""

    @property
    def cli_name(self) -> str | None:
        """The option spelling on the command line, or None for positional bindings."""
        if self.binding in ("literal", "literals", "stdin"):
            return None
        return self.cli or "--" + self.name.replace("_", "-")

    @property
    def cli_reference(self) -> str:
        """How the command line's help names this argument: its option, NAME after --, or stdin."""
        if self.binding == "stdin":
            return "standard input"
        return self.cli_name or self.name.upper()

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "binding": self.binding,
            "help": self.help,
            "required": self.required,
            "schema": dict(self.schema),
        }
        if self.cli_name:
            out["cli"] = self.cli_name
        if self.cli_help:
            out["cli_help"] = self.cli_help
        return out


PROJECT_ARGUMENTS = (
    Argument("cwd", {"type": "string"}, "Directory inside the project (default: current directory)."),
    Argument("db", {"type": "string"},
             "Ledger URL or SQLite path; overrides ASSAY_DB and assay.toml."),
    Argument("principal", {"type": "string"},
             "Act as this principal (default: ASSAY_PRINCIPAL, then assay.toml).", cli="--as"),
)


@frozen_value
class Result:
    """What an operation returns: data plus the envelope facts around it.

    ``exit_code`` is 0 for a positive answer and 1 for a negative one (for
    example a report that is not ready); errors are exceptions instead.
    """

    data: Any
    ledger_revision: int | None = None
    next: tuple[str, ...] = ()
    exit_code: int = 0


if TYPE_CHECKING:
    Handler = Callable[["Invocation", dict[str, Any]], Result]
    RawText = Callable[[dict[str, Any], dict[str, Any]], "str | None"]


# Compiled (and cached by re) when a description is first shown.
_REFERENCE = r"`([a-z][a-z0-9_.-]*)`"


@frozen_value
class Operation:
    """A registered operation. See the module docstring.

    Its texts (``summary``, ``description``, ``effect``) speak to every
    surface: they name an argument in backticks as MCP and the Python API
    spell it (`` `at_revision` ``) and another operation by its dotted name
    (`` `loop.recover` ``); each surface spells those its own way (see
    :meth:`text`). What only the command line has, such as exit statuses,
    files and standard input, goes in ``cli_note``, which only the CLI's help
    shows.
    """

    name: str
    summary: str
    writes: bool
    handler: Handler
    arguments: tuple[Argument, ...] = ()
    output_schema: Mapping[str, Any] | Callable[[], Mapping[str, Any]] = field(
        default_factory=lambda: {"type": "object"}
    )
    description: str = ""
    project: bool = True
    effect: str = ""
    cli_note: str = ""
    writes_ledger: bool | None = None
    # A person's operation (set-up, keys, pins, approvals, bindings, retiring
    # records): offered over MCP only in the admin profile, never to the agent.
    admin: bool = False
    # What a write does to its environment, as the MCP tool annotations say it
    # (see `hints`): it may overwrite or remove what was there, a repeated call
    # with the same arguments changes nothing more, it runs commands that may
    # reach anything outside assay.
    destructive: bool = False
    idempotent: bool = False
    open_world: bool = False
    # How the CLI shows a result, declared here so that a renamed operation
    # keeps it. `view` names the readable view, "MODULE:FUNCTION" in
    # assay.ops.views (loaded only when a person reads the result). `raw`, a
    # small function of the operation's own module (it runs on every call),
    # returns bare text the CLI prints whatever the format, or None for the
    # normal rendering. `busy` is what a spinner says while a long call runs.
    view: str = ""
    raw: RawText | None = None
    busy: str = ""

    @property
    def hints(self) -> dict[str, bool]:
        """What a call does to its environment, as MCP tool annotations state it.

        Every operation says whether it is read-only and whether it reaches an
        open world; a write also says whether it may be destructive (overwrite
        or remove) and whether repeating it is idempotent. The ledger keeps
        every version, so a ledger write on its own is never destructive.
        """
        out = {"read_only": not self.writes}
        if self.writes:
            out["destructive"] = self.destructive
            out["idempotent"] = self.idempotent
        out["open_world"] = self.open_world
        return out

    @property
    def creates_ledger(self) -> bool:
        """Whether a call may create a missing ledger: only one that writes records does.

        ``writes_ledger`` says so when ``writes`` is about files only (the report).
        """
        return self.writes if self.writes_ledger is None else self.writes_ledger

    def text(self, text: str, surface: Surface) -> str:
        """One of this operation's texts as ``surface`` words it.

        An argument in backticks stays so over MCP and becomes its option
        on the CLI (`` `at_revision` `` is ``--at-revision``); an operation
        becomes its MCP tool (`` `loop_recover` ``) or its command (``assay
        loop recover``). Other backticked words are left as they are.
        """
        def spell(match: re.Match[str]) -> str:
            word = match.group(1)
            arg = next((a for a in self.all_arguments if a.name == word), None)
            if arg is not None:
                return match.group(0) if surface == "mcp" else arg.cli_reference
            if word in _HOME:
                return f"`{_tool_name(word)}`" if surface == "mcp" else \
                    "assay " + word.replace(".", " ")
            return match.group(0)

        return re.sub(_REFERENCE, spell, text)

    def argument_help(self, arg: Argument, surface: Surface) -> str:
        """An argument's help as ``surface`` words it (see :meth:`text`).

        The command line adds the argument's ``cli_help``, and for a JSON file
        argument says how to give the file.
        """
        body = self.text(arg.help, surface)
        if surface == "cli":
            extra = arg.cli_help or ("A JSON file, or - for standard input."
                                     if arg.binding == "json_file" else "")
            if extra:
                body = f"{body} {self.text(extra, surface)}"
        return body

    def help(self, surface: Surface) -> str:
        """The description ``surface`` shows: the declared one, plus ``cli_note`` on the CLI."""
        body = self.text(self.description or self.summary, surface)
        if surface == "cli" and self.cli_note:
            body = f"{body} {self.text(self.cli_note, surface)}"
        return body
    bounds: Bound | None = None

    @property
    def effect_line(self) -> str:
        """What a call writes, in one sentence (the end of every MCP tool description).

        ``effect`` when the operation declares one; otherwise derived: nothing
        for a read, files only for a write outside a project (packets), the
        ledger for any other write.
        """
        if self.effect:
            return self.effect
        if not self.writes:
            return "Read-only: writes nothing."
        if not self.project:
            return "Writes files in the directory it names; nothing to the ledger."
        return "Writes to the ledger."

    @property
    def all_arguments(self) -> tuple[Argument, ...]:
        return self.arguments + (PROJECT_ARGUMENTS if self.project else ())

    @property
    def cli_path(self) -> tuple[str, ...]:
        return tuple(self.name.split("."))

    @property
    def tool_name(self) -> str:
        return _tool_name(self.name)

    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema of the input object (the MCP tool input schema).

        Each property's description is its argument's help as MCP words it.
        """
        props: dict[str, Any] = {}
        required: list[str] = []
        for arg in self.all_arguments:
            props[arg.name] = {**_resolve(arg.schema),
                               "description": self.argument_help(arg, "mcp")}
            if arg.required:
                required.append(arg.name)
        schema: dict[str, Any] = {
            "type": "object",
            "properties": props,
            "additionalProperties": False,
        }
        if required:
            schema["required"] = required
        return schema

    def describe(self) -> dict[str, Any]:
        """This operation's registry entry as JSON data."""
        return {
            "name": self.name,
            "summary": self.summary,
            "description": self.description or self.summary,
            "writes": self.writes,
            "effect": self.effect_line,
            "cli": "assay " + " ".join(self.cli_path),
            "cli_note": self.cli_note,
            "mcp_tool": self.tool_name,
            "admin": self.admin,
            "hints": self.hints,
            "arguments": [a.describe() for a in self.all_arguments],
            "input_schema": self.input_schema(),
            "output_schema": dict(_resolve(self.output_schema)),
            "bounds": self.bounds.describe() if self.bounds is not None else None,
        }


def _resolve(schema: Mapping[str, Any] | Callable[[], Mapping[str, Any]]) -> Mapping[str, Any]:
    return schema() if callable(schema) else schema


_REGISTRY: dict[str, Operation] = {}
_LOADED = False


def operation(
    name: str,
    *,
    summary: str,
    writes: bool,
    arguments: tuple[Argument, ...] | list[Argument] = (),
    output_schema: Mapping[str, Any] | Callable[[], Mapping[str, Any]] | None = None,
    description: str = "",
    project: bool = True,
    effect: str = "",
    cli_note: str = "",
    writes_ledger: bool | None = None,
    bounds: Bound | None = None,
    admin: bool = False,
    destructive: bool = False,
    idempotent: bool = False,
    open_world: bool = False,
    view: str = "",
    raw: RawText | None = None,
    busy: str = "",
) -> Callable[[Handler], Handler]:
    """Decorator that registers a handler as the operation ``name``.

    A read (``writes=False``) must declare its ``bounds`` (docs/agents.md)
    and neither ``destructive`` nor ``idempotent`` (hints of a write).
    """
    if not all(is_word(part) for part in name.split(".")):
        raise ValueError(f"malformed operation name {name!r}")
    if not writes and bounds is None:
        raise ValueError(f"read operation {name!r} declares no bounds")
    if not writes and (destructive or idempotent):
        raise ValueError(f"read operation {name!r} declares a hint of a write")
    if view and (view.count(":") != 1 or not all(part.isidentifier() for part in view.split(":"))):
        raise ValueError(f"{name}: a view is MODULE:FUNCTION in assay.ops.views, not {view!r}")
    if bounds is not None:
        names = {a.name for a in arguments}
        missing = [a for a in (*bounds.arguments, bounds.unbounded or "") if a and a not in names]
        if missing:
            raise ValueError(f"{name}: the bound names unknown argument {missing[0]!r}")

    def register(handler: Handler) -> Handler:
        if name in _REGISTRY:
            raise ValueError(f"operation {name!r} registered twice")
        _REGISTRY[name] = Operation(
            name=name,
            summary=summary,
            writes=writes,
            handler=handler,
            arguments=tuple(arguments),
            output_schema=output_schema or {"type": "object"},
            description=description,
            project=project,
            effect=effect,
            cli_note=cli_note,
            writes_ledger=writes_ledger,
            bounds=bounds,
            admin=admin,
            destructive=destructive,
            idempotent=idempotent,
            open_world=open_world,
            view=view,
            raw=raw,
            busy=busy,
        )
        return handler

    return register


def _load() -> None:
    global _LOADED
    if not _LOADED:
        for module in DECLARED:
            importlib.import_module(module)
        _LOADED = True


def operations() -> Iterator[Operation]:
    """Every registered operation, in registry order (imports every operation module)."""
    _load()
    return iter(sorted(_REGISTRY.values(), key=_position))


def _position(op: Operation) -> int:
    # Operations missing from DECLARED (registered by a caller) come last, as registered.
    return _ORDER.get(op.name, len(_ORDER))


def _registered(name: str) -> Operation | None:
    """The operation ``name`` (dotted), importing only the module that declares it."""
    if name not in _REGISTRY and name in _HOME:
        importlib.import_module(_HOME[name])
    return _REGISTRY.get(name)


def lookup(name: str) -> Operation:
    """The operation called ``name`` (dotted or MCP tool spelling), or ``unknown_operation``.

    Imports only the module that declares it, unless ``name`` is not in
    :data:`DECLARED`; then every module.
    """
    op = _registered(name) or _registered(_TOOL_HOME.get(name, name))
    if op is not None:
        return op
    _load()
    for op in _REGISTRY.values():
        if name in (op.name, op.tool_name):
            return op
    raise UsageError(f"unknown operation {name!r}", code="unknown_operation",
                     action="Run 'assay describe' to list operations.")


def operation_for(words: list[str] | tuple[str, ...]) -> tuple[Operation, int] | None:
    """The operation a command line's leading words name, and how many words name it.

    ``["work", "check", "knowledge:x"]`` gives ``(work.check, 2)``, importing
    only the module that declares it; words that name no operation give None.
    Each word is one part of the name (``work.check`` is not a command).
    """
    parts = next((i for i, word in enumerate(words) if "." in word), len(words))
    for length in range(parts, 0, -1):
        op = _registered(".".join(words[:length]))
        if op is not None:
            return op, length
    return None


def command_operations(words: list[str] | tuple[str, ...]) -> list[Operation]:
    """The operations a command line's leading words can mean, importing only their modules.

    ``["work", "check", ...]`` gives ``[work.check]``; ``["work"]`` (or
    ``["work", "nope"]``) every ``work.*`` operation; words that name
    nothing give every operation. Registry order.
    """
    found = operation_for(words)
    if found is not None:
        return [found[0]]
    for length in range(len(words), 0, -1):
        path = tuple(words[:length])
        for name in _HOME:
            if tuple(name.split("."))[:length] == path:
                _registered(name)
        group = [op for op in _REGISTRY.values() if op.cli_path[:length] == path]
        if group:
            return sorted(group, key=_position)
    return list(operations())


def describe() -> list[dict[str, Any]]:
    """The whole registry as JSON data, in registry order."""
    return [op.describe() for op in operations()]


class Invocation:
    """The context one operation call runs in: where, as whom, on which ledger.

    ``reporter`` receives the progress of the commands a call runs (the
    evidence runner's ``Reporter`` hooks); see :meth:`progress`.

    The project and the store are opened lazily and at most once, so an
    operation that needs neither never touches the disk.
    """

    def __init__(
        self,
        *,
        cwd: str | None = None,
        db: str | None = None,
        principal: str | None = None,
        surface: str = "api",
        interactive: bool = False,
        stdin: Callable[[int], bytes] | None = None,
        reporter: Any = None,
    ) -> None:
        self.cwd = cwd
        self.db = db
        self._principal = principal
        self.surface = surface
        self.interactive = interactive
        self._stdin = stdin
        self._reporter = reporter
        self._project: Project | None = None
        self._store: Store | None = None
        self._reviewer: Store | None = None
        # Whether store() may create a missing ledger; call() sets it per operation.
        self.creates_ledger = True

    def with_args(self, args: Mapping[str, Any]) -> Invocation:
        """A copy whose cwd/db/principal are overridden by the call's own arguments."""
        if not any(args.get(k) is not None for k in ("cwd", "db", "principal")):
            return self
        return Invocation(
            cwd=args.get("cwd") or self.cwd,
            db=args.get("db") or self.db,
            principal=args.get("principal") or self._principal,
            surface=self.surface,
            interactive=self.interactive,
            stdin=self._stdin,
            reporter=self._reporter,
        )

    def fresh(self, cwd: str | None = None) -> Invocation:
        """A new invocation like this one (in ``cwd`` unless the call named its own), with its
        own project and store handles: for work on another thread that this one never touches.
        """
        inv = Invocation(cwd=self.cwd or cwd, db=self.db, principal=self._principal,
                         surface=self.surface, interactive=self.interactive, stdin=self._stdin)
        inv.creates_ledger = self.creates_ledger
        return inv
    def progress(self) -> Any:
        """Where the commands this call runs report their progress, or None for nowhere.

        The surface's own reporter when it gave one (MCP progress
        notifications), else the live display on a terminal
        (:func:`assay.evidence.progress.reporter_for`), else None.
        """
        if self._reporter is not None:
            return self._reporter
        if not self.interactive:
            return None
        from assay.evidence.progress import reporter_for

        return reporter_for(self.interactive)

    def read_stdin(self) -> bytes:
        """Standard input, bounded by :data:`assay.inputs.MAX_INPUT_BYTES`."""
        from assay.inputs import read_stdin_bounded

        if self._stdin is None:
            raise UsageError("this call has no standard input", code="stdin_unavailable")
        return read_stdin_bounded(self._stdin)

    def read_input(self, path: str, *, where: str, label: str) -> bytes:
        """A file named by the call (``-``: standard input), bounded like :meth:`read_stdin`."""
        from assay.inputs import read_bounded

        if path == "-":
            return self.read_stdin()
        if self.cwd and not os.path.isabs(path):
            path = os.path.join(self.cwd, path)
        return read_bounded(path, where=where, label=label)

    def project(self) -> Project:
        """The project around ``cwd`` (``project_not_found`` when there is none)."""
        if self._project is None:
            from assay.config import load_project

            self._project = load_project(self.cwd)
        return self._project

    @property
    def principal(self) -> str:
        """Who the call acts as: ``--as``, then ``ASSAY_PRINCIPAL``, then assay.toml.

        Every source is held to the one principal grammar
        (:func:`assay.ids.validate_principal`); assay.toml checks its own. On a
        PostgreSQL ledger reached as a role other than its owner, the
        principal is that role (:mod:`assay.ledger.roles`): ``--as`` and
        ``ASSAY_PRINCIPAL`` may only name it (else ``principal_not_role``), and
        assay.toml's is not used. The ledger is opened to learn so.
        """
        if self._store is None and self._on_postgres():
            try:
                self.store()
            except AssayError as exc:
                if exc.code != "ledger_not_found":
                    raise
        if self._store is not None and getattr(self._store, "role_bound", False):
            return str(self._store.principal)
        return self._claimed_principal()[0]

    def _claimed_principal(self) -> tuple[str, bool]:
        """The principal the call names, and whether it was only assay.toml's default."""
        from assay.ids import validate_principal

        for value, where, label in ((self._principal, "/principal", ""),
                                    (os.environ.get("ASSAY_PRINCIPAL"), None, "ASSAY_PRINCIPAL: ")):
            if value:
                try:
                    return validate_principal(value, field=where or ""), False
                except AssayError as exc:
                    raise UsageError(label + exc.message, code="invalid_principal",
                                     pointer=where, action=exc.action) from None
        return self.project().principal, True

    def _on_postgres(self) -> bool:
        """Whether the call's ledger is a PostgreSQL one (False when there is no project)."""
        try:
            url = self.ledger_url()
        except AssayError:
            return False
        return url.startswith(("postgresql://", "postgres://"))

    def ledger_url(self) -> str:
        """The ledger to open: ``--db``, then ``ASSAY_DB``, then assay.toml, then the default."""
        project = self.project()
        url = self.db or os.environ.get("ASSAY_DB") or project.ledger_url
        if not url:
            return str(project.default_ledger_path)
        return url

    def store(self) -> Store:
        """The opened ledger of this project (opened once per invocation).

        ``ledger_not_found`` when it does not exist and ``creates_ledger`` is false.
        """
        if self._store is None:
            from assay.ledger import open_store

            principal, default = self._claimed_principal()
            self._store = open_store(self.ledger_url(), base=self.project().root,
                                     principal=principal, create=self.creates_ledger,
                                     default_principal=default)
        return self._store

    def reviewer_store(self) -> Store:
        """The ledger as a reviewer sees it: the project partition only, whoever the call acts as.

        A handle opened without a principal (see :mod:`assay.ledger.store`):
        no principal's private version is ever read through it. What judges
        an agent's work (the stop gate, ``attest``) reads through it, so a
        private copy of an intent or its evidence never counts.
        """
        if self._reviewer is None:
            from assay.ledger import open_store

            self._reviewer = open_store(self.ledger_url(), base=self.project().root,
                                        principal=None, create=self.creates_ledger)
        return self._reviewer

    def access(self) -> Access:
        """The read rights of this call: the project's readable scopes and the principal."""
        from assay.ledger.access import Access

        project = self.project()
        return Access.for_project(project.scope, project.admitted_scopes, self.principal)

    def close(self) -> None:
        for store in (self._store, self._reviewer):
            if store is not None:
                store.close()
        self._store = self._reviewer = None


_MAX_INTEGER = 2**53

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "boolean": (bool,),
    "array": (list, tuple),
    "object": (dict,),
    "number": (int, float),
}


def _check(value: Any, schema: Mapping[str, Any], where: str) -> None:
    """Validate an argument against the small JSON Schema subset arguments use."""
    kind = schema.get("type")
    if kind is not None:
        kinds = kind if isinstance(kind, list) else [kind]
        ok = any(
            isinstance(value, _JSON_TYPES[k]) and not (k in ("integer", "number") and isinstance(value, bool))
            for k in kinds if k in _JSON_TYPES
        ) or ("null" in kinds and value is None)
        if not ok:
            raise UsageError(f"{where or 'argument'} must be of type {kind}",
                             code="invalid_argument", pointer=where)
    if "enum" in schema and value not in schema["enum"]:
        raise UsageError(f"{where} must be one of {', '.join(map(str, schema['enum']))}",
                         code="invalid_argument", pointer=where)
    if isinstance(value, int) and not isinstance(value, bool):
        # No integer argument means anything beyond what a JSON double holds
        # exactly; a bigger one would overflow the ledger's 64-bit columns.
        if not -_MAX_INTEGER <= value <= _MAX_INTEGER:
            raise UsageError(f"{where or 'argument'} must be between -2^53 and 2^53",
                             code="invalid_argument", pointer=where)
        if "minimum" in schema and value < schema["minimum"]:
            raise UsageError(f"{where} must be at least {schema['minimum']}",
                             code="invalid_argument", pointer=where)
        if "maximum" in schema and value > schema["maximum"]:
            raise UsageError(f"{where} must be at most {schema['maximum']}",
                             code="invalid_argument", pointer=where)
    if isinstance(value, str):
        if "\x00" in value:
            # No argument means a NUL: paths, ids and names all refuse it downstream.
            raise UsageError(f"{where or 'argument'} must not contain a NUL character",
                             code="invalid_argument", pointer=where)
        if "minLength" in schema and len(value) < schema["minLength"]:
            raise UsageError(f"{where} must not be empty", code="invalid_argument", pointer=where)
        if "pattern" in schema and not re.search(schema["pattern"], value):
            raise UsageError(f"{where} does not match {schema['pattern']}",
                             code="invalid_argument", pointer=where)
    if isinstance(value, (list, tuple)) and "items" in schema:
        for index, item in enumerate(value):
            _check(item, schema["items"], f"{where}/{index}")


def validate_arguments(op: Operation, args: Mapping[str, Any]) -> dict[str, Any]:
    """Check ``args`` against the operation's arguments; return a clean copy.

    Unknown names are ``unknown_argument``; a missing required one is
    ``missing_argument``; a wrong type is ``invalid_argument``. The pointer
    names the argument (``/expect_revision``).
    """
    known = {a.name: a for a in op.all_arguments}
    clean: dict[str, Any] = {}
    for name, value in args.items():
        if name not in known:
            raise UsageError(f"{op.name} takes no argument {name!r}", code="unknown_argument",
                             pointer=pointer(name))
        if value is None:
            continue
        if known[name].binding != "json_file":
            _check(value, known[name].schema, pointer(name))
        clean[name] = value
    for arg in op.all_arguments:
        if arg.required and arg.name not in clean:
            raise UsageError(f"{op.name} needs the argument {arg.cli_name or arg.name}",
                             code="missing_argument", pointer=pointer(arg.name))
    return clean


def call(name: str, args: Mapping[str, Any] | None = None,
         invocation: Invocation | None = None) -> tuple[dict[str, Any], int]:
    """Run one operation and return ``(envelope, exit_code)``.

    The envelope is ``{ok, operation, ledger_revision?, data, next}`` on
    success. Errors propagate as :class:`AssayError`; each surface renders
    them in one place.
    """
    op = lookup(name)
    clean = validate_arguments(op, args or {})
    inv = (invocation or Invocation()).with_args(clean)
    inv.creates_ledger = op.creates_ledger  # a read never creates a ledger
    owned = inv is not invocation
    try:
        handler_args = {k: v for k, v in clean.items() if k not in ("cwd", "db", "principal")}
        result = op.handler(inv, handler_args)
    finally:
        if owned:
            inv.close()
    envelope: dict[str, Any] = {"ok": True, "operation": op.name}
    if result.ledger_revision is not None:
        envelope["ledger_revision"] = result.ledger_revision
    envelope["data"] = result.data
    envelope["next"] = list(result.next)
    return envelope, result.exit_code


def error_envelope(error: AssayError) -> dict[str, Any]:
    """The failure envelope every surface prints: ``{ok: false, error: {...}}``."""
    return {"ok": False, "error": error.to_dict()}
