"""Answering a harness: the stop hook and the shell-command hook, whatever goes wrong.

:func:`answer_stop` always returns an answer the harness reads as meant, a
block with its reason or nothing (the agent may stop), before the hook's own
deadline (:mod:`assay.gate.watch`). It never raises.

- Where it gates. A user-scope hook gates the project around the session's
  directory; with no ``assay.toml`` there nothing gates the session, and the
  agent may stop unrecorded (so a user-scope install is harmless
  elsewhere). A project-scope hook (``anchor``: the project that installed
  it, as its harness names it) gates that project whatever directory the
  stop comes from: a stop from outside it, or from a nested project inside
  it (a directory with an ``assay.toml`` of its own), is blocked with the way
  back and recorded in the installing project's ledger.
- What it reads: what the reviewer sees, the project partition of the
  ledger only. A private version of a gating intent, of the evidence it
  cites or of the session's binding, written by the gated principal, is
  never read for the decision; it is named in the decision and the reason.
- The payload, the configuration or the decision itself fails: the answer
  is ``[gate] on_error`` (``block`` unless the project says ``allow``, and
  ``block`` when the configuration cannot be read), with a reason that names
  the error; the decision is recorded as ``gate_error``.
- A payload that cannot be read is counted per session it still names
  (:func:`assay.gate.harness.salvage_stop`) on
  ``gate-session:unreadable-payload/<session>``, at most
  :data:`MAX_UNREADABLE_SESSIONS` such records per project (past them, and
  for a payload that names no session, on the shared
  ``gate-session:unreadable-payload``).
- The ledger cannot take the decision (locked past its bound, unreachable,
  or the deadline came first): the answer is ``[gate] on_error``, and the
  decision goes to the spool (:mod:`assay.gate.spool`), which counts the run
  so it still ends at the retry cap, and is written to the ledger by the
  next hook that can write. Only with nowhere to count it at all (no project
  found, no usable spool) is a continuing stop let through unrecorded, so a
  loop still ends: as a give-up the person is told about.
- A give-up is told to the person: Claude Code's and Codex's
  ``systemMessage`` (``notice`` in the result; see
  :func:`assay.gate.harness.stop_answer` for Cursor).

:func:`record_shell` records a shell command the harness reported; it never
fails the harness either (a command that cannot be recorded is reported in
the result, and nothing is printed).

Imports the base modules, config, the ledger contract and its siblings.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from assay.config import Project
from assay.errors import AssayError, RevisionConflict
from assay.gate import spool
from assay.gate.decide import (
    Gating,
    Verdict,
    compose_reason,
    error_verdict,
    evaluate,
    record_stop,
    settle,
)
from assay.gate.harness import (
    StopEvent,
    parse_shell,
    parse_stop,
    salvage_stop,
    stop_answer,
)
from assay.gate.records import (
    SESSION_KIND,
    SESSION_SCHEMA,
    binding_id,
    bound_intents,
    session_key,
    session_record_id,
    session_state,
    session_write,
)
from assay.gate.watch import Watch
from assay.ledger.store import Reader, Store

__all__ = ["MAX_UNREADABLE_SESSIONS", "UNREADABLE_SESSION", "Site", "answer_stop",
           "preview_stop", "record_shell"]

UNREADABLE_SESSION = "unreadable-payload"
# Records of unreadable payloads one project keeps apart, one per session they name.
MAX_UNREADABLE_SESSIONS = 100
# What a write leaves of the deadline for the answer after it, in seconds.
_ANSWER_MARGIN = 0.5


class Site(Protocol):
    """Where a hook runs: the project, its ledger as the reviewer sees it, and the principal."""

    def project(self) -> Project: ...

    def store(self) -> Store:
        """The ledger, project partition only (a handle opened without a principal)."""

    def store_as(self, principal: str) -> Store:
        """The ledger as ``principal`` sees it (only to find what it keeps private)."""

    @property
    def principal(self) -> str: ...


SiteFor = Callable[[str | None], AbstractContextManager[Site]]


def _internal(exc: BaseException) -> AssayError:
    if isinstance(exc, AssayError):
        return exc
    return AssayError(f"internal error: {type(exc).__name__}: {exc}", code="internal_error",
                      action="Report this with the payload (rerun it through 'assay hook stop "
                             "--debug').")


def _fallback_event(raw: Any, harness: str | None) -> StopEvent:
    """A stand-in for a payload that cannot be read, keyed by the session it still names."""
    if isinstance(raw, AssayError):
        raw = getattr(raw, "head", b"")
    try:
        found = salvage_stop(raw, harness)
    except Exception:  # noqa: BLE001 - salvaging is best effort; nothing is decided on it
        found = salvage_stop(b"", harness)
    session = UNREADABLE_SESSION
    if found.session_id:
        session = f"{UNREADABLE_SESSION}/{session_key(found.session_id)}"
    # A run that cannot be told apart from a new one is taken as continuing:
    # the cap then ends it.
    return StopEvent(harness=found.harness or "claude-code", event="Stop", session_id=session,
                     cwd=found.cwd, continuing=found.continuing is not False, message=None)


def _notice(event: StopEvent, data: Mapping[str, Any], recorded: bool) -> str | None:
    """What the person must hear of this decision (None: nothing beyond the answer)."""
    decision = data["decision"]
    record = session_record_id(event.session_id, event.agent_id)
    if decision["event"] == "gate_gave_up":
        blocks = (data.get("run") or {}).get("blocks")
        counted = f"{blocks} block" + ("" if blocks == 1 else "s")
        return (f"The stop gate (assay) gave up after {counted}: the agent is stopping "
                "while its work is not shown ready for review. Check the work before trusting "
                f"it; what the gate answered each time: 'assay get --history -- {record}'.")
    if decision["answer"] == "allow" and decision.get("error"):
        kept = "" if recorded else " It was not recorded in the ledger."
        return (f"The stop gate (assay) could not decide ({decision['error'].get('code')}) and "
                f"[gate] on_error let the agent stop.{kept}")
    return None


def _outcome(event: StopEvent, data: Mapping[str, Any], receipt: Any, *,
             recorded: bool) -> dict[str, Any]:
    decision = data["decision"]
    reason = decision["reason"] if decision["answer"] == "block" else None
    notice = _notice(event, data, recorded)
    return {"harness": event.harness, "answer": stop_answer(event.harness, reason, notice),
            "decision": {k: decision[k] for k in ("event", "answer", "reason")},
            "run": data["run"], "session_record": session_record_id(event.session_id,
                                                                    event.agent_id),
            "receipt": receipt.to_dict() if receipt is not None else None,
            "recorded": recorded, "notice": notice}


def answer_stop(raw: Any, harness: str | None, site_for: SiteFor, *, anchor: str | None = None,
                watch: Watch | None = None) -> dict[str, Any]:
    """The harness's answer to one stop payload, and the decision behind it (never raises).

    ``raw`` may be the error that kept the payload from being read at all.
    ``anchor``: the directory of the project whose project-scope hook this
    is (None for a user-scope hook: the payload's directory decides).
    """
    watch = watch or Watch()
    try:
        return watch.run(lambda: _answer(raw, harness, site_for, anchor, watch),
                         lambda notes: _late(notes, harness, watch))
    except Exception as exc:  # noqa: BLE001 - the harness must get an answer whatever happened
        event = _fallback_event(raw, harness)
        return _unrecorded(event, error_verdict(_internal(exc), "block"))


def _answer(raw: Any, harness: str | None, site_for: SiteFor, anchor: str | None,
            watch: Watch) -> dict[str, Any]:
    failure: AssayError | None = None
    try:
        if isinstance(raw, AssayError):
            raise raw
        event = parse_stop(raw, harness)
    except AssayError as exc:
        event, failure = _fallback_event(raw, harness), exc
    watch.note(event=event)
    try:
        with site_for(anchor if anchor is not None else event.cwd) as site:
            return _decide(site, event, failure, watch, pinned=anchor is not None)
    except AssayError as exc:
        if exc.code == "project_not_found" and anchor is None:
            return {"harness": event.harness, "answer": None,
                    "decision": {"event": None, "answer": "allow",
                                 "reason": "No assay project here: nothing gates this stop."},
                    "run": None, "session_record": None, "receipt": None, "recorded": False,
                    "notice": None}
        return _counted(event, error_verdict(exc, "block"), exc, watch, anchor)
    except Exception as exc:  # noqa: BLE001 - the harness must get an answer whatever happened
        error = _internal(exc)
        return _counted(event, error_verdict(error, "block"), error, watch, anchor)


def _counted(event: StopEvent, verdict: Verdict, error: AssayError, watch: Watch,
             anchor: str | None) -> dict[str, Any]:
    """The answer when no project could be opened: spooled where the hook's project keeps one."""
    project: Project | None = watch.notes.get("project")
    root = project.root if project is not None else Path(anchor) if anchor else None
    if root is None or not (root / ".assay").is_dir():
        return _unrecorded(event, verdict)
    return _spooled(spool.spool_path(root), project, event, verdict, error,
                    watch.notes.get("state"))


def _late(notes: Mapping[str, Any], harness: str | None, watch: Watch) -> dict[str, Any]:
    """The answer when the deadline came first: ``on_error``, spooled (runs on the waiting thread)."""
    event = notes.get("event") or _fallback_event(b"", harness)
    project: Project | None = notes.get("project")
    seconds = round(watch.seconds)
    doing = notes.get("doing", "starting")
    error = AssayError(
        f"the stop gate did not decide within its deadline ({seconds} s from the hook's start; "
        f"it was {doing})", code="gate_deadline", retryable=True,
        action="Stop again to retry. If it keeps happening, see what is slow with 'assay hook "
               "doctor' (a ledger lock held by another process, a very large workspace), or "
               "raise [gate] deadline_seconds (at most 90).")
    if project is None:
        return _unrecorded(event, error_verdict(error, "block"))
    base: Verdict = notes.get("verdict") or Verdict(True, None)
    return _spooled(spool.spool_path(project.root), project, event, base, error,
                    notes.get("state"))


def _unrecorded(event: StopEvent, verdict: Verdict) -> dict[str, Any]:
    """The answer when nothing can count the run: a continuing stop ends the loop (a give-up)."""
    data = settle(verdict, None, event, cap=0 if event.continuing else 1, sequence=0)
    return _outcome(event, data, None, recorded=False)


def _failed_write(verdict: Verdict, error: AssayError, on_error: str) -> Verdict:
    """The verdict on a stop whose decision the ledger could not take: ``on_error``."""
    cause = AssayError(f"the ledger could not take the stop gate's decision: {error.message}",
                       code=error.code,
                       action=error.action or "Stop again once the ledger can be written.")
    base = error_verdict(cause, on_error)
    return replace(base, gatings=verdict.gatings, claim=verdict.claim,
                   workspace=verdict.workspace, ledger_revision=verdict.ledger_revision,
                   ignored=verdict.ignored)


def _spooled(path: Path, project: Project | None, event: StopEvent, verdict: Verdict,
             error: AssayError, state: Mapping[str, Any] | None) -> dict[str, Any]:
    """``on_error`` for a stop the ledger did not take, counted in the spool and kept there."""
    on_error = project.gate.on_error if project is not None else "block"
    cap = project.gate.retry_cap if project is not None else 5
    failed = _failed_write(verdict, error, on_error)
    record_id = session_record_id(event.session_id, event.agent_id)
    for entry in spool.pending(path):
        decision = spool.clean_decision(entry["decision"])
        if entry["record"] == record_id and decision is not None:
            state = session_state_of(state, spool.fold(
                state, decision, continuing=entry.get("continuing") is not False, sequence=0))
    data = settle(failed, state, event, cap, sequence=0)
    entry = {"record": record_id, "spooled_at": _now(), "why": error.code,
             "continuing": event.continuing, "harness": event.harness,
             "session_id": event.session_id, "agent_id": event.agent_id,
             "decision": data["decision"]}
    try:
        spool.append(path, entry)
    except AssayError:
        return _unrecorded(event, failed)
    return _outcome(event, data, None, recorded=False) | {"spooled": str(path)}


def session_state_of(state: Mapping[str, Any] | None, folded: Mapping[str, Any]
                     ) -> dict[str, Any]:
    """A session's state with its run and give-up replaced by ``folded``'s."""
    return {**(state or {}), "run": folded["run"], "gave_up": folded["gave_up"]}


def _now() -> str:
    from assay.ledger.sql import now_rfc3339

    return now_rfc3339()


def _decide(site: Site, event: StopEvent, failure: AssayError | None, watch: Watch, *,
            pinned: bool) -> dict[str, Any]:
    project = site.project()  # project_not_found and invalid_config propagate
    watch.limit(project.gate.deadline_seconds)
    watch.note(project=project, doing="reading the ledger")
    store: Store | None = None
    try:
        store = site.store()
        with store.reader() as reader:
            if failure is not None:
                event = _unreadable_key(reader, project, event)
                watch.note(event=event)
            watch.note(state=session_state(
                reader.get(session_record_id(event.session_id, event.agent_id))))
            if failure is not None:
                verdict = replace(error_verdict(failure, project.gate.on_error),
                                  gatings=_named(reader, project, event, failure.code))
            else:
                verdict = _verdict(site, reader, project, event, pinned, watch)
    except Exception as exc:  # noqa: BLE001 - a failure to decide is on_error's answer
        verdict = error_verdict(_internal(failure or exc), project.gate.on_error)
    watch.note(verdict=verdict, doing="writing the decision")
    if watch.abandoned:
        return {}  # the deadline's answer went out; this one is dropped unwritten
    try:
        if store is None:
            store = site.store()
        _bound_writes(store, watch)
        _replay(store, project)
        data, receipt = record_stop(store, project, event, verdict)
    except Exception as exc:  # noqa: BLE001 - the ledger cannot take it: spool it
        if watch.abandoned:
            return {}  # the deadline's answer went out and was spooled already
        return _spooled(spool.spool_path(project.root), project, event, verdict, _internal(exc),
                        watch.notes.get("state"))
    return _outcome(event, data, receipt, recorded=True)


def _verdict(site: Site, reader: Reader, project: Project, event: StopEvent, pinned: bool,
             watch: Watch | None = None) -> Verdict:
    """The verdict from the project's partition, with the place check and private versions named."""
    if pinned:
        misplaced = _misplaced(project, event.cwd)
        if misplaced is not None:
            gatings = (misplaced, *_named(reader, project, event, "stop_outside_project"))
            return Verdict(True, compose_reason(list(misplaced.lines), []), gatings,
                           ledger_revision=reader.ledger_revision)
    if watch is not None:
        watch.note(doing="checking the intents and the workspace")
    verdict = evaluate(reader, project, site.principal, event)
    return _with_ignored(verdict, _private_versions(site, reader, project, event, verdict))


def _named(reader: Reader, project: Project, event: StopEvent, why: str) -> tuple[Gating, ...]:
    """The intents that gate the session, named but not checked (``why`` says why not)."""
    named = []
    for intent_id, source in bound_intents(reader, project.gate.intents, event.session_id):
        if source != "binding_unreadable":
            named.append(Gating("intent", intent_id, False, (),
                                {"source": source, "not_checked": why}))
    return tuple(named)


def _unreadable_key(reader: Reader, project: Project, event: StopEvent) -> StopEvent:
    """The shared record instead of a session's own, once the project keeps too many of them."""
    if event.session_id == UNREADABLE_SESSION:
        return event
    if reader.get(session_record_id(event.session_id)) is not None:
        return event
    prefix = f"{SESSION_KIND}:{UNREADABLE_SESSION}/"
    kept = reader.find(scopes=[project.scope], kind=SESSION_KIND, after=prefix,
                       limit=MAX_UNREADABLE_SESSIONS)
    if sum(1 for r in kept if r.id.startswith(prefix)) >= MAX_UNREADABLE_SESSIONS:
        return replace(event, session_id=UNREADABLE_SESSION)
    return event


def _misplaced(project: Project, cwd: str | None) -> Gating | None:
    """Why a stop from ``cwd`` is not one of the project's (None when it is, or names no directory)."""
    from assay.config import find_project

    if not cwd:
        return None
    root = Path(os.path.realpath(project.root))
    here = Path(os.path.realpath(cwd))
    facts: dict[str, Any] = {"cwd": cwd, "project_root": str(root)}
    back = f"Go back to it ('cd {root}') and stop from there."
    if here != root and root not in here.parents:
        line = (f"This stop comes from {cwd}, outside the project {root} whose hook gates this "
                f"session; the gate judges that project's work only. {back}")
        return Gating("place", cwd, False, (line,), facts | {"problem": "outside"})
    try:
        nearest = find_project(here)
    except AssayError:
        nearest = None
    if nearest is not None and Path(os.path.realpath(nearest)) != root:
        line = (f"This stop comes from {cwd}, inside {nearest}: a project of its own (it has an "
                f"assay.toml) nested in {root}, whose hook gates this session. Nothing recorded "
                f"there counts for {root}. {back} Remove {nearest}/assay.toml if it is not meant "
                "to be a project.")
        return Gating("place", cwd, False, (line,),
                      facts | {"problem": "nested", "nested_root": str(nearest)})
    return None


def _cited(reader: Reader, intent_ids: Sequence[str]) -> set[str]:
    """The records the project versions of ``intent_ids`` cite as evidence."""
    cited: set[str] = set()
    for intent_id in intent_ids:
        record = reader.get(intent_id)
        if record is None or record.damage is not None or not isinstance(record.data, dict):
            continue
        acceptance = record.data.get("acceptance")
        results = acceptance.get("results") if isinstance(acceptance, dict) else None
        for result in results if isinstance(results, list) else []:
            refs = result.get("evidence") if isinstance(result, dict) else None
            for ref in refs if isinstance(refs, list) else []:
                if isinstance(ref, dict) and isinstance(ref.get("id"), str):
                    cited.add(ref["id"])
    return cited


def _private_versions(site: Site, reader: Reader, project: Project, event: StopEvent,
                      verdict: Verdict) -> list[dict[str, Any]]:
    """The gated principal's private versions of what gates this stop (never read for it)."""
    intents = [g.id for g in verdict.gatings if g.kind == "intent"]
    ids = sorted({*intents, *_cited(reader, intents), binding_id(event.session_id)})
    principal = project.gated_principal
    audience = f"private:{principal}"
    try:
        store = site.store_as(principal)
        with store.reader() as view:
            found = view.get_many(ids)
    except AssayError:
        return []  # nothing private can be named; the decision itself never read any
    return [{"id": rid, "audience": audience, "revision": record.revision}
            for rid, record in sorted(found.items()) if record.audience == audience]


def _with_ignored(verdict: Verdict, ignored: Sequence[Mapping[str, Any]]) -> Verdict:
    """``verdict`` naming the private versions it did not read, in its facts and reason."""
    if not ignored:
        return verdict
    named = ", ".join(f"{i['id']} (revision {i['revision']})" for i in ignored[:5])
    more = f" and {len(ignored) - 5} more" if len(ignored) > 5 else ""
    note = (f"Ignored: private versions by {ignored[0]['audience'][len('private:'):]} of "
            f"{named}{more}. The gate judges what the reviewer sees, the project's versions: "
            "record the work there (without --audience).")
    reason: str | None = verdict.reason
    if verdict.block and not verdict.error:
        waiting = [g for g in verdict.gatings if not g.ready]
        reason = compose_reason([*(line for g in waiting for line in g.lines), note],
                                [g.id for g in waiting if g.kind == "intent"])
    elif not verdict.block:
        reason = ("Every intent and loop that gates this session is shown ready in the "
                  f"project's versions. {note}")
    return replace(verdict, reason=reason, ignored=tuple(ignored))


def _bound_writes(store: Store, watch: Watch) -> None:
    """Keep a SQLite write's wait (queue and lock) within what is left of the deadline."""
    default = getattr(type(store), "busy_timeout_ms", None)
    if isinstance(default, int):
        left = int((watch.remaining() - _ANSWER_MARGIN) * 1000)
        store.busy_timeout_ms = max(50, min(default, left))  # type: ignore[attr-defined]


def _replay(store: Store, project: Project) -> None:
    """Write the decisions spooled while the ledger could not take them, then forget them.

    Each becomes the next version of its session record, marked
    ``spooled``; its run is recomputed from the record's state
    (:func:`assay.gate.spool.fold`). A decision the ledger refuses is
    dropped; when the ledger fails, the rest goes back to the spool.
    """
    path = spool.spool_path(project.root)
    if not path.exists():
        return
    entries = spool.take(path)
    for index, entry in enumerate(entries):
        decision = spool.clean_decision(entry["decision"])
        record_id = entry["record"]
        if decision is None or not record_id.startswith(f"{SESSION_KIND}:"):
            continue
        try:
            with store.reader() as reader:
                record = reader.get(record_id)
            sequence = (record.revision if record is not None else 0) + 1
            state = session_state(record)
            decision["spooled"] = {"at": entry.get("spooled_at"), "why": entry.get("why")}
            data = {"schema": SESSION_SCHEMA, "harness": entry.get("harness"),
                    "session_id": entry.get("session_id"), "agent_id": entry.get("agent_id"),
                    "sequence": sequence, "decision": decision,
                    **spool.fold(state, decision, continuing=entry.get("continuing") is not False,
                                 sequence=sequence)}
            store.put(session_write(project.scope, record_id, record, data))
        except AssayError as exc:
            if exc.retryable:
                for rest in entries[index:]:
                    spool.append(path, rest)
                raise
            continue


def preview_stop(site: Site, event: StopEvent, *, pinned: bool = False) -> dict[str, Any]:
    """What :func:`answer_stop` would answer to ``event`` now, without writing anything."""
    project = site.project()
    with site.store().reader() as reader:
        verdict = _verdict(site, reader, project, event, pinned)
        record = reader.get(session_record_id(event.session_id, event.agent_id))
    sequence = (record.revision if record is not None else 0) + 1
    data = settle(verdict, session_state(record), event, project.gate.retry_cap, sequence)
    out = _outcome(event, data, None, recorded=False)
    out.pop("recorded")
    return out


def record_shell(raw: Any, harness: str | None, site_for: SiteFor, *,
                 anchor: str | None = None) -> dict[str, Any]:
    """Record the shell command of one post-tool payload as a harness-observed claim.

    ``anchor`` as for :func:`answer_stop`: a project-scope hook records in
    the project that installed it.
    """
    from assay.canonical import digest
    from assay.gate.records import MAX_COMMAND_CHARS, shell_write
    from assay.redaction import Redactor

    try:
        event = parse_shell(raw, harness)
        if event is None:
            return {"recorded": False, "reason": "not a shell command"}
        with site_for(anchor if anchor is not None else event.cwd) as site:
            project = site.project()
            command, redactions = Redactor(os.environ).redact_text(event.command)
            facts = event.to_dict()
            facts["command"] = command[:MAX_COMMAND_CHARS]
            facts["command_sha256"] = digest(command)
            facts["command_truncated"] = len(command) > MAX_COMMAND_CHARS
            facts["redacted"] = dict(sorted(redactions.items()))
            write = shell_write(project.scope, facts, session_id=event.session_id,
                                agent_id=event.agent_id,
                                call_id=event.tool_use_id or digest(facts)[:32])
            try:
                receipt = site.store().put(write)
            except RevisionConflict:  # the harness reported this call before
                return {"recorded": False, "reason": "already recorded", "id": write.id}
            return {"recorded": True, "id": write.id, "receipt": receipt.to_dict()}
    except AssayError as exc:
        return {"recorded": False, "error": exc.to_dict()}
    except Exception as exc:  # noqa: BLE001 - a tool hook never fails the harness
        return {"recorded": False, "error": _internal(exc).to_dict()}
