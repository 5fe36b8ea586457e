"""The stop gate's ledger records, and the views that show them beside a readiness report.

Records (all in the project's scope)::

    gate-binding:<session>        intents bound to one harness session (gate bind);
                                  links relates-to each intent
    gate-session:<session>        one version per stop decision of that session
                                  (or of one subagent: <session>/agent/<id>);
                                  links relates-to every intent it gated
    shell-claim:<session>/<call>  one shell command the agent ran, as the harness
                                  reported it; links relates-to its gate-session

A ``gate-session`` version is one decision event: ``decision.event`` is
``gate_blocked``, ``gate_allowed``, ``gate_gave_up`` or ``gate_error``, with
the reason answered, each gated intent's report digest and the claim facts.
``run`` counts the blocks of the current run of stops (the stops that follow
one another because a stop hook sent the agent back); ``gave_up`` holds the
latest run the gate gave up on, until a later stop of the session is allowed
on proof. Versions are written compare-and-set on the record's revision, so
two hooks of one session never count past each other.

``shell-claim`` records are claims (origin ``claim``) with ``observed_by:
harness`` and ``counts_as_evidence: false``: what the agent's harness said
was run, never machine evidence, even when an acceptance result cites one.

Imports the base modules, config and the ledger contract.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from assay.canonical import digest
from assay.errors import AssayError
from assay.ids import validate_record_id
from assay.ledger.store import Link, Reader, Record, Write

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "BINDING_KIND",
    "BINDING_SCHEMA",
    "SESSION_KIND",
    "SESSION_SCHEMA",
    "SHELL_KIND",
    "SHELL_SCHEMA",
    "binding_id",
    "binding_write",
    "bound_intents",
    "gate_view",
    "gave_up_counts",
    "gave_up_issue",
    "session_key",
    "session_record_id",
    "session_write",
    "shell_write",
    "with_gate_issues",
]

BINDING_KIND = "gate-binding"
SESSION_KIND = "gate-session"
SHELL_KIND = "shell-claim"
BINDING_SCHEMA = "assay.gate.binding.v1"
SESSION_SCHEMA = "assay.gate.session.v1"
SHELL_SCHEMA = "assay.gate.shell.v1"
# Sessions and shell commands a view lists per intent; the rest are counted.
MAX_LISTED = 50
# A session count no project reaches; the find that lists them is bounded by it.
_SCAN_LIMIT = 10_000
# Characters of a shell command kept (its digest covers all of it).
MAX_COMMAND_CHARS = 4000


def _name(*parts: str) -> str:
    """A record name from harness tokens: as given when it is a valid id, else their digest."""
    name = "/".join(parts)
    try:
        validate_record_id(f"{SHELL_KIND}:{name}/x")
    except AssayError:
        return "sha256-" + digest(list(parts))[:40]
    return name


def session_key(session_id: str, agent_id: str | None = None) -> str:
    """The name shared by a session's records (a subagent has its own)."""
    return _name(session_id) if agent_id is None else _name(session_id, "agent", agent_id)


def binding_id(session_id: str) -> str:
    return f"{BINDING_KIND}:{_name(session_id)}"


def session_record_id(session_id: str, agent_id: str | None = None) -> str:
    return f"{SESSION_KIND}:{session_key(session_id, agent_id)}"


def _intact(record: Record | None, schema: str) -> dict[str, Any] | None:
    if record is None or record.damage is not None or record.status != "current":
        return None
    data = record.data
    return data if isinstance(data, dict) and data.get("schema") == schema else None


def bound_intents(reader: Reader, configured: Sequence[str], session_id: str
                  ) -> list[tuple[str, str]]:
    """``(intent id, source)`` gating ``session_id``: ``[gate] intents``, then its binding.

    A damaged binding record gates nothing by itself; it is named as a source
    (``binding_unreadable``) so the decision shows it.
    """
    out = [(intent_id, "config") for intent_id in configured]
    record = reader.get(binding_id(session_id))
    if record is not None and record.damage is not None:
        out.append((record.id, "binding_unreadable"))
        return out
    data = _intact(record, BINDING_SCHEMA)
    for intent_id in (data or {}).get("intents", []):
        if isinstance(intent_id, str) and intent_id not in configured:
            out.append((intent_id, "binding"))
    return out


def binding_write(reader: Reader, scope: str, session_id: str, intents: Sequence[str], *,
                  replace: bool, by: str | None = None) -> Write:
    """The guarded write that binds ``intents`` to the session (added, or ``replace``).

    ``by`` is the principal that binds (kept in ``bound_by``).
    """
    record = reader.get(binding_id(session_id))
    current = [] if replace else list((_intact(record, BINDING_SCHEMA) or {}).get("intents", []))
    for intent_id in intents:
        if intent_id not in current:
            current.append(intent_id)
    data: dict[str, Any] = {"schema": BINDING_SCHEMA, "session_id": session_id,
                            "intents": current}
    if by is not None:
        data["bound_by"] = by
    return Write(id=binding_id(session_id),
                 data=data,
                 scope=scope, links=tuple(Link("relates-to", i) for i in current),
                 expect_revision=record.revision if record is not None else 0)


def session_state(record: Record | None) -> dict[str, Any] | None:
    """The data of a session record's current version (None when absent or unusable)."""
    return _intact(record, SESSION_SCHEMA)


def session_write(scope: str, record_id: str, record: Record | None,
                  data: Mapping[str, Any]) -> Write:
    """The next version of a session record, compare-and-set on the version read."""
    linked = dict.fromkeys([*(item["id"] for item in data["decision"]["intents"]),
                            *(data.get("gave_up") or {}).get("intents", [])])
    return Write(id=record_id, data=dict(data), scope=scope,
                 links=tuple(Link("relates-to", i) for i in linked), origin="derived",
                 expect_revision=record.revision if record is not None else 0)


def shell_write(scope: str, event: Mapping[str, Any], *, session_id: str,
                agent_id: str | None, call_id: str) -> Write:
    """The claim record of one shell command the harness reported (written once)."""
    session = session_record_id(session_id, agent_id)
    name = _name(session_key(session_id, agent_id), call_id)
    return Write(id=f"{SHELL_KIND}:{name}",
                 data={"schema": SHELL_SCHEMA, "observed_by": "harness",
                       "counts_as_evidence": False, "session": session, **event},
                 scope=scope, links=(Link("relates-to", session),), origin="claim",
                 expect_revision=0)


def _session_summary(record: Record, data: Mapping[str, Any]) -> dict[str, Any]:
    decision = data.get("decision") or {}
    return {"id": record.id, "revision": record.revision, "harness": data.get("harness"),
            "session_id": data.get("session_id"), "agent_id": data.get("agent_id"),
            "last_event": decision.get("event"), "last_answer": decision.get("answer"),
            "run": data.get("run"), "gave_up": data.get("gave_up"),
            "ledger_revision": record.ledger_revision}


def _shell_summary(record: Record, data: Mapping[str, Any]) -> dict[str, Any]:
    value = data.get("reported")
    reported: Mapping[str, Any] = value if isinstance(value, dict) else {}
    return {"id": record.id, "revision": record.revision, "session": data.get("session"),
            "command": data.get("command"), "outcome": reported.get("outcome"),
            "exit_code": reported.get("exit_code"), "harness": data.get("harness"),
            "ledger_revision": record.ledger_revision, "data_sha256": record.data_sha256}


def gate_view(reader: Reader, scopes: Sequence[str], intent_id: str, *,
              commands: bool = False) -> dict[str, Any]:
    """The gate sessions that gated ``intent_id``, those it gave up on, and (``commands``) what
    their harnesses reported running, oldest first, the last :data:`MAX_LISTED` of each (the
    rest counted in ``omitted_*``).

    ``versions`` maps every record version shown to its revision (for a
    write basis or the publication gate).
    """
    found = reader.find(scopes=list(scopes), kind=SESSION_KIND, link=("relates-to", intent_id),
                        limit=_SCAN_LIMIT)
    sessions = []
    for record in sorted(found, key=lambda r: r.ledger_revision):
        data = session_state(record)
        if data is not None:
            sessions.append(_session_summary(record, data))
    gave_up = [s for s in sessions
               if s["gave_up"] and intent_id in (s["gave_up"].get("intents") or [])]
    shown = sessions[-MAX_LISTED:]
    view: dict[str, Any] = {"sessions": shown, "omitted_sessions": len(sessions) - len(shown),
                            "gave_up": gave_up[-MAX_LISTED:],
                            "omitted_gave_up": max(0, len(gave_up) - MAX_LISTED)}
    versions = {s["id"]: s["revision"] for s in (*shown, *view["gave_up"])}
    if commands:
        listed: list[dict[str, Any]] = []
        for s in shown:
            for record in reader.find(scopes=list(scopes), kind=SHELL_KIND,
                                      link=("relates-to", s["id"]), limit=_SCAN_LIMIT):
                data = _intact(record, SHELL_SCHEMA)
                if data is not None:
                    listed.append(_shell_summary(record, data))
        listed.sort(key=lambda c: (c["ledger_revision"], c["id"]))
        view["commands"] = listed[-MAX_LISTED:]
        view["omitted_commands"] = len(listed) - len(view["commands"])
        versions.update({c["id"]: c["revision"] for c in view["commands"]})
    view["versions"] = dict(sorted(versions.items()))
    return view


def gave_up_counts(reader: Reader, scopes: Sequence[str]) -> dict[str, int]:
    """Per intent, how many sessions the stop gate gave up on with nothing proven since."""
    counts: dict[str, int] = {}
    for record in reader.find(scopes=list(scopes), kind=SESSION_KIND, data_field=("gave_up", None),
                              limit=_SCAN_LIMIT):
        data = session_state(record)
        for intent_id in ((data or {}).get("gave_up") or {}).get("intents", []):
            counts[intent_id] = counts.get(intent_id, 0) + 1
    return counts


def gave_up_issue(intent_id: str, session: Mapping[str, Any]) -> dict[str, Any]:
    """The advisory ``gate_gave_up`` issue of one session the gate gave up on."""
    gave_up = session["gave_up"]
    who = f"{session['harness']} session {session['session_id']}"
    if session.get("agent_id"):
        who += f" (subagent {session['agent_id']})"
    return {
        "code": "gate_gave_up",
        "message": (f"the stop gate gave up on {who} after {gave_up.get('blocks')} blocks: the "
                    f"agent stopped while {intent_id} was not shown ready, and no later stop "
                    "of that session was allowed on proof"),
        "action": (f"Read what the gate answered each time with 'assay get --history -- "
                   f"{session['id']}', and check the work before trusting it."),
        "session_record_id": session["id"],
        "advisory": True,
    }


def with_gate_issues(reader: Reader, scopes: Sequence[str], report: dict[str, Any]
                     ) -> dict[str, Any]:
    """``report`` with an advisory ``gate_gave_up`` issue per session the gate gave up on.

    The sessions shown join the write basis: a later decision of theirs
    changes the report. A report of an unreadable intent is returned as it is.
    """
    if report["intent_sha256"] is None:
        return report
    intent_id = report["intent_record_id"]
    view = gate_view(reader, scopes, intent_id)
    if not view["gave_up"]:
        return report
    added = [gave_up_issue(intent_id, session) for session in view["gave_up"]]
    if view["omitted_gave_up"]:
        added[0]["message"] += (f" ({view['omitted_gave_up']} earlier sessions the gate gave up "
                                "on are not listed)")
    steps = [*report["next"], *(i["action"] for i in added if i["action"] not in report["next"])]
    basis = dict(report["write_basis"])
    basis["records"] = dict(sorted({**basis["records"], **{
        s["id"]: s["revision"] for s in view["gave_up"]}}.items()))
    delta = {**report["delta"], "global_issue_codes": [
        *report["delta"]["global_issue_codes"], *(i["code"] for i in added)]}
    return {**report, "issues": [*report["issues"], *added], "next": steps, "delta": delta,
            "write_basis": basis}
