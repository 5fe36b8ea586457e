"""The report's stop-gate section: what the gate answered, and what the harness says ran.

The document part (built by the ``report`` operation from
:func:`assay.gate.records.gate_view`) is::

    {sessions: [{id, harness, session_id, agent_id, last_event, last_answer, run, gave_up}],
     omitted_sessions, gave_up: [...],
     commands: [{id, command, outcome, exit_code, harness, session}], omitted_commands}

Commands the harness reported are claims: they are shown with a claim badge,
beside (never among) the evidence assay ran itself. A session the gate gave
up on shows red, its later stops too (they were let through without proof),
until a stop of it is allowed on proof. Pure; imports the standard library
and its sibling modules only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assay.report.markup import badge, e

__all__ = ["gate_section"]

_EVENT_STYLE = {"gate_blocked": ("bad", "\u2718", "blocked"),
                "gate_allowed": ("ok", "\u2714", "allowed"),
                "gate_gave_up": ("bad", "\u2718", "gave up"),
                "gate_error": ("bad", "!", "error")}
_CLAIM = badge("claim", "\u270e", "reported by the harness")
_OUTCOME_STYLE = {"succeeded": ("ok", "\u2714"), "failed": ("bad", "\u2718"),
                  "interrupted": ("wait", "\u25d0"), "unknown": ("none", "?")}


def _session_row(session: Mapping[str, Any]) -> str:
    css, icon, label = _EVENT_STYLE.get(str(session.get("last_event")), ("none", "\u25cb", "none"))
    if session.get("gave_up"):
        # Stops after a give-up are allowed without proof: never a green "allowed".
        css, icon = "bad", "\u2718"
        if session.get("last_event") != "gate_gave_up":
            label = f"{label} after the gate gave up"
    run = session.get("run") or {}
    who = str(session.get("session_id", ""))
    if session.get("agent_id"):
        who += f" (subagent {session['agent_id']})"
    return (f'<tr data-session="{e(session.get("id", ""))}" '
            f'data-event="{e(session.get("last_event") or "")}"><td>{e(session.get("harness", ""))}'
            f"</td><td><code>{e(who)}</code></td><td>{badge(css, icon, label)}</td>"
            f'<td class="count">{e(run.get("blocks", 0))}</td></tr>')


def _command_row(command: Mapping[str, Any]) -> str:
    outcome = str(command.get("outcome") or "unknown")
    css, icon = _OUTCOME_STYLE.get(outcome, ("none", "?"))
    code = command.get("exit_code")
    reported = outcome + (f" (exit {code})" if code is not None else "")
    return (f'<tr data-claim="{e(command.get("id", ""))}" data-outcome="{e(outcome)}">'
            f"<td>{_CLAIM}</td>"
            f"<td><code>{e(command.get('command', ''))}</code></td>"
            f"<td>{badge(css, icon, reported)}</td></tr>")


def gate_section(gate: Mapping[str, Any] | None) -> str:
    """The section, or "" when no gate session ever gated the intent."""
    if not gate or not gate.get("sessions"):
        return ""
    out = ['<section id="gate"><h2>Stop gate</h2>']
    for session in gate.get("gave_up", []):
        gave_up = session.get("gave_up") or {}
        out.append(f'<div class="issue advisory" data-code="gate_gave_up"><span class="code">'
                   f"advisory gate_gave_up</span>: the gate gave up on "
                   f"<code>{e(session.get('session_id', ''))}</code> after "
                   f"{e(gave_up.get('blocks', ''))} blocks; the agent stopped while it was told:"
                   f"<pre>{e(gave_up.get('reason') or '')}</pre></div>")
    out.append('<table id="gate-sessions"><tr><th>harness</th><th>session</th>'
               "<th>last decision</th><th>blocks in its run</th></tr>")
    out.extend(_session_row(s) for s in gate["sessions"])
    out.append("</table>")
    if gate.get("omitted_sessions"):
        out.append(f"<p>{e(gate['omitted_sessions'])} earlier sessions not shown.</p>")
    commands = gate.get("commands") or []
    out.append("<h3>Shell commands the agent's harness reported</h3>")
    if not commands:
        out.append("<p>None reported.</p>")
    else:
        out.append("<p>What the harness said ran: claims, never evidence. What assay ran itself "
                   'is under <a href="#evidence">Evidence cited</a>.</p>'
                   '<table id="gate-commands"><tr><th>source</th><th>command</th>'
                   "<th>reported outcome</th></tr>")
        out.extend(_command_row(c) for c in commands)
        out.append("</table>")
        if gate.get("omitted_commands"):
            out.append(f"<p>{e(gate['omitted_commands'])} earlier commands not shown.</p>")
    out.append("</section>")
    return "".join(out)
