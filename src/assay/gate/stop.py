"""Answering a harness: the stop hook and the shell-command hook, whatever goes wrong.

:func:`answer_stop` always returns an answer the harness reads as meant:
a block with its reason, or nothing (the agent may stop). It never raises.

- No ``assay.toml`` at or above the session's directory: nothing gates the
  session there, so the agent may stop and nothing is recorded.
- The payload, the configuration, the ledger or the decision itself fails:
  the answer is ``[gate] on_error`` (``block`` unless the project says
  ``allow``, and ``block`` when the configuration cannot be read), with a
  reason that names the error and what to do; the decision is recorded as
  ``gate_error`` when the ledger can take it, and counts toward the retry
  cap like any block.
- A payload that cannot be read is counted on the project's
  ``gate-session:unreadable-payload`` record as one continuing run, so a
  harness that keeps sending it gets at most ``retry_cap`` blocks.
- When the ledger cannot count the run (it cannot be read or written) and
  the harness says the agent is already continuing because of a stop hook,
  the gate gives up at once: without a count, blocking again could loop.

:func:`record_shell` records a shell command the harness reported; it never
fails the harness either (a command that cannot be recorded is reported in
the result, and nothing is printed).

Imports the base modules, config, the ledger contract and its siblings.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol

from assay.config import Project
from assay.errors import AssayError, RevisionConflict
from assay.gate.decide import Verdict, error_verdict, evaluate, record_stop, settle
from assay.gate.harness import (
    StopEvent,
    decode_payload,
    detect_harness,
    parse_shell,
    parse_stop,
    stop_answer,
)
from assay.gate.records import session_record_id, session_state
from assay.ledger.store import Store

__all__ = ["UNREADABLE_SESSION", "Site", "answer_stop", "preview_stop", "record_shell"]

UNREADABLE_SESSION = "unreadable-payload"


class Site(Protocol):
    """Where a hook runs: the project around a directory, its ledger and principal."""

    def project(self) -> Project: ...

    def store(self) -> Store: ...

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
    """A stand-in for a payload that cannot be read: one continuing run on its own record."""
    try:
        payload = decode_payload(raw if not isinstance(raw, AssayError) else b"")
        name = harness or detect_harness(payload)
        cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
    except AssayError:
        name, cwd = harness or "claude-code", None
    return StopEvent(harness=name, event="Stop", session_id=UNREADABLE_SESSION, cwd=cwd,
                     continuing=True, message=None)


def _outcome(event: StopEvent, data: dict[str, Any], recorded: Any) -> dict[str, Any]:
    decision = data["decision"]
    reason = decision["reason"] if decision["answer"] == "block" else None
    return {"harness": event.harness, "answer": stop_answer(event.harness, reason),
            "decision": {k: decision[k] for k in ("event", "answer", "reason")},
            "run": data["run"], "session_record": session_record_id(event.session_id,
                                                                    event.agent_id),
            "receipt": recorded.to_dict() if recorded is not None else None}


def answer_stop(raw: Any, harness: str | None, site_for: SiteFor) -> dict[str, Any]:
    """The harness's answer to one stop payload, and the decision behind it (never raises).

    ``raw`` may be the error that kept the payload from being read at all.
    """
    failure: AssayError | None = None
    try:
        if isinstance(raw, AssayError):
            raise raw
        event = parse_stop(raw, harness)
    except AssayError as exc:
        event, failure = _fallback_event(raw, harness), exc
    try:
        with site_for(event.cwd) as site:
            return _decide(site, event, failure)
    except AssayError as exc:
        if exc.code == "project_not_found":
            return {"harness": event.harness, "answer": None,
                    "decision": {"event": None, "answer": "allow",
                                 "reason": "No assay project here: nothing gates this stop."},
                    "run": None, "session_record": None, "receipt": None, "recorded": False}
        return _unrecorded(event, error_verdict(exc, "block"))
    except Exception as exc:  # noqa: BLE001 - the harness must get an answer whatever happened
        return _unrecorded(event, error_verdict(_internal(exc), "block"))


def _unrecorded(event: StopEvent, verdict: Verdict) -> dict[str, Any]:
    """The answer when the ledger cannot take the decision (so it cannot count the run)."""
    data = settle(verdict, None, event, cap=0 if event.continuing else 1, sequence=0)
    return _outcome(event, data, None) | {"recorded": False}


def _decide(site: Site, event: StopEvent, failure: AssayError | None) -> dict[str, Any]:
    project = site.project()  # project_not_found and invalid_config propagate
    try:
        if failure is not None:
            raise failure
        store = site.store()
        with store.reader() as reader:
            verdict = evaluate(reader, project, site.principal, event)
    except Exception as exc:  # noqa: BLE001 - a failure to decide is on_error's answer
        verdict = error_verdict(_internal(exc), project.gate.on_error)
    try:
        data, receipt = record_stop(site.store(), project, event, verdict)
    except Exception:  # noqa: BLE001 - the ledger cannot count this run (module docstring)
        return _unrecorded(event, verdict)
    return _outcome(event, data, receipt) | {"recorded": True}


def preview_stop(site: Site, event: StopEvent) -> dict[str, Any]:
    """What :func:`answer_stop` would answer to ``event`` now, without writing anything."""
    project = site.project()
    with site.store().reader() as reader:
        verdict = evaluate(reader, project, site.principal, event)
        record = reader.get(session_record_id(event.session_id, event.agent_id))
    sequence = (record.revision if record is not None else 0) + 1
    data = settle(verdict, session_state(record), event, project.gate.retry_cap, sequence)
    return _outcome(event, data, None)


def record_shell(raw: Any, harness: str | None, site_for: SiteFor) -> dict[str, Any]:
    """Record the shell command of one post-tool payload as a harness-observed claim."""
    from assay.canonical import digest
    from assay.gate.records import MAX_COMMAND_CHARS, shell_write
    from assay.redaction import Redactor

    try:
        event = parse_shell(raw, harness)
        if event is None:
            return {"recorded": False, "reason": "not a shell command"}
        with site_for(event.cwd) as site:
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
