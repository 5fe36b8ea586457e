"""The loop part of the report: an inline SVG timeline and a table of rounds.

One column per committed round or rejected attempt, in (round, attempt)
order: the outcome the agent claimed above, the evidence posture assay
observed below, a ``≠`` where a success claim was not verified, rejected
attempts framed in a dashed line, and the stop reason at the end. Imports
the standard library and :mod:`assay.report.markup` only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from assay.report.markup import DASH as _DASH
from assay.report.markup import ICON as _ICON
from assay.report.markup import OUTCOME_STYLE as _OUTCOME_STYLE
from assay.report.markup import POSTURE_STYLE as _POSTURE_STYLE
from assay.report.markup import RUN_STYLE as _RUN_STYLE
from assay.report.markup import badge as _badge
from assay.report.markup import e as _e

__all__ = ["loop_section"]


def _attempts(loop: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Committed rounds and rejected attempts in (round, attempt) order."""
    entries = [*loop.get("rounds", []), *loop.get("rejections", [])]
    return sorted(entries, key=lambda e: (int(e.get("round") or 0), int(e.get("attempt") or 0),
                                          e.get("type") == "round"))


def loop_section(loop: Mapping[str, Any]) -> str:
    head = loop["head"]
    rounds = loop.get("rounds", [])
    attempts = _attempts(loop)
    acceptance = head.get("operatorAcceptance") or {}
    status = str(head.get("status", ""))
    stop = head.get("stopReason")
    out = [(f'<section id="loop" data-status="{_e(status)}" data-stop-reason="{_e(stop or "")}">'
           f'<h2>Loop {_e(head.get("loopId", ""))}</h2>'),
           f'<p>Task: <strong>{_e(acceptance.get("task", ""))}</strong></p>']
    if acceptance.get("success_criteria"):
        out.append("<h3>Success criteria (operator acceptance)</h3><ul>" + "".join(
            f"<li>{_e(c)}</li>" for c in acceptance["success_criteria"]) + "</ul>")
    if acceptance.get("hard_constraints"):
        out.append("<h3>Hard constraints</h3><ul>" + "".join(
            f"<li>{_e(c)}</li>" for c in acceptance["hard_constraints"]) + "</ul>")
    stop_text = (f"stopped: {stop}" if status == "stopped" else
                 f"active (round {head.get('round', '')} held)")
    rejected = len(attempts) - len(rounds)
    out.append(f'<p id="loop-state">{len(rounds)} committed round(s), {rejected} rejected '
               f'attempt(s); <strong>{_e(stop_text)}</strong></p>')
    out.append('<div class="timeline">' + _timeline_svg(attempts, status, stop) + "</div>")
    out.append('<table id="rounds"><tr><th>round</th><th>claimed by the agent</th>'
               "<th>observed by assay</th><th>contract items</th><th>commands</th>"
               "<th>summary</th></tr>")
    for entry in attempts:
        out.append(_round_row(entry) if entry.get("type") == "round" else _rejection_row(entry))
    out.append("</table></section>")
    return "".join(out)


def _claimed(rnd: Mapping[str, Any]) -> str:
    if rnd.get("type") == "rejection":
        return str((rnd.get("evaluation") or {}).get("outcome") or "unknown")
    receipt = rnd.get("receipt") or {}
    return str(receipt.get("agent_outcome") or "unknown")


def _label(entry: Mapping[str, Any]) -> str:
    if entry.get("type") == "rejection":
        return f"round {entry.get('round', '')}.{entry.get('attempt', '')} rejected"
    return f"round {entry.get('round', '')}"


def _rejection_row(rej: Mapping[str, Any]) -> str:
    claimed, observed = _claimed(rej), _observed(rej)
    c_css = _OUTCOME_STYLE.get(claimed, "none")
    o_css = _POSTURE_STYLE.get(observed, "none")
    checks = [str(c.get("check", "")) if isinstance(c, Mapping) else str(c)
              for c in rej.get("checks", [])]
    summary = str((rej.get("evaluation") or {}).get("output_summary", ""))
    return (f'<tr class="rejection" data-round="{_e(rej.get("round", ""))}" '
            f'data-attempt="{_e(rej.get("attempt", ""))}" data-claimed="{_e(claimed)}" '
            f'data-observed="{_e(observed)}"><td>{_e(rej.get("round", ""))} '
            f'(attempt {_e(rej.get("attempt", ""))})<div>{_badge("bad", _ICON["bad"], "rejected")}'
            f"</div></td><td>{_badge(c_css, _ICON[c_css], claimed)}</td>"
            f"<td>{_badge(o_css, _ICON[o_css], observed)}</td>"
            f'<td colspan="2">not committed: {_e(", ".join(checks) or "enforcement")}</td>'
            f"<td>{_e(summary)}</td></tr>")


def _observed(rnd: Mapping[str, Any]) -> str:
    return str((rnd.get("evidencePosture") or {}).get("status") or "unknown")


def _round_row(rnd: Mapping[str, Any]) -> str:
    claimed, observed = _claimed(rnd), _observed(rnd)
    c_css = _OUTCOME_STYLE.get(claimed, "none")
    o_css = _POSTURE_STYLE.get(observed, "none")
    contract = ((rnd.get("factsBefore") or {}).get("contract") or {})
    described = {i.get("id"): i for i in contract.get("items", []) if isinstance(i, Mapping)}
    items = []
    for item_id, item_status in (rnd.get("itemStatuses") or {}).items():
        css = _POSTURE_STYLE.get(str(item_status), "none")
        desc = described.get(item_id, {})
        items.append(f'<div class="item" data-item="{_e(item_id)}">{_badge(css, _ICON[css], item_status)} '
                     f'<code>{_e(item_id)}</code> {_e(desc.get("description", ""))}'
                     + (f' <span class="acc">(verify with {_e(", ".join(desc["verify_with"]))})</span>'
                        if desc.get("verify_with") else "") + "</div>")
    decision = rnd.get("contractDecision") or {}
    if decision.get("activated") and decision.get("after_id"):
        items.append(f'<div class="declared">declares contract <code>{_e(decision["after_id"])}'
                     "</code> for the next round</div>")
    commands = []
    for cmd in (rnd.get("evidencePosture") or {}).get("commands", []):
        css = _RUN_STYLE.get(str(cmd.get("status")), "wait")
        commands.append(f"<div><code>{_e(cmd.get('commandId', ''))}</code> "
                        f"{_badge(css, _ICON[css], str(cmd.get('status', '')))}</div>")
    summary = ""
    for report in (rnd.get("compiled") or {}).get("reports", []):
        if report.get("round") == rnd.get("round"):
            summary = str(report.get("summary", ""))
    stop = rnd.get("stopReason")
    return (f'<tr class="round" data-round="{_e(rnd.get("round", ""))}" data-claimed="{_e(claimed)}" '
            f'data-observed="{_e(observed)}"><td>{_e(rnd.get("round", ""))}'
            + (f'<div><strong>stop: {_e(stop)}</strong></div>' if stop else "") + "</td>"
            f"<td>{_badge(c_css, _ICON[c_css], claimed)}</td>"
            f"<td>{_badge(o_css, _ICON[o_css], observed)}"
            + (" <span class=\"badge machine\">machine-backed</span>"
               if rnd.get("machineBackedSuccess") else "") + "</td>"
            f"<td>{''.join(items) or _DASH}</td><td>{''.join(commands) or _DASH}</td>"
            f"<td>{_e(summary)}</td></tr>")


_FILL = {"ok": "#1a7f37", "wait": "#bf8700", "bad": "#cf222e", "none": "#8c959f"}


def _timeline_svg(rounds: Sequence[Mapping[str, Any]], status: str, stop: Any) -> str:
    step, left = 128, 170
    width = left + step * max(len(rounds), 1) + 260
    height = 170
    parts = [(f'<svg id="loop-timeline" xmlns="http://www.w3.org/2000/svg" width="{width}" '
             f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
             f'aria-label="Loop rounds: outcome claimed by the agent versus posture observed by assay">'),
             '<text x="8" y="52" font-size="12" fill="#1f2328">claimed by the agent</text>',
             '<text x="8" y="112" font-size="12" fill="#1f2328">observed by assay</text>',
             (f'<line x1="{left - 10}" y1="80" x2="{left + step * len(rounds) - 4}" y2="80" '
             'stroke="#d0d7de"/>')]
    for n, rnd in enumerate(rounds):
        x = left + step * n
        claimed, observed = _claimed(rnd), _observed(rnd)
        c_css = _OUTCOME_STYLE.get(claimed, "none")
        o_css = _POSTURE_STYLE.get(observed, "none")
        mismatch = claimed == "success" and observed != "verified"
        kind = "rejection-mark" if rnd.get("type") == "rejection" else "round-mark"
        parts.append(
            f'<g class="{kind}" data-round="{_e(rnd.get("round", n + 1))}" '
            f'data-claimed="{_e(claimed)}" data-observed="{_e(observed)}">'
            f'<title>{_e(_label(rnd))}: claimed {_e(claimed)}, observed '
            f'{_e(observed)}</title>'
            + (f'<rect x="{x - 4}" y="28" width="{step - 4}" height="100" rx="8" fill="none" '
               'stroke="#cf222e" stroke-dasharray="5 4"/>' if kind == "rejection-mark" else "")
            + f'<rect x="{x}" y="34" width="{step - 12}" height="28" rx="6" fill="{_FILL[c_css]}"/>'
            f'<text x="{x + (step - 12) // 2}" y="53" font-size="12" text-anchor="middle" '
            f'fill="#fff">{_e(_ICON[c_css])} {_e(claimed)}</text>'
            f'<rect x="{x}" y="94" width="{step - 12}" height="28" rx="6" fill="{_FILL[o_css]}"/>'
            f'<text x="{x + (step - 12) // 2}" y="113" font-size="12" text-anchor="middle" '
            f'fill="#fff">{_e(_ICON[o_css])} {_e(observed)}</text>'
            f'<text x="{x + (step - 12) // 2}" y="146" font-size="12" text-anchor="middle" '
            f'fill="#1f2328">{_e(_label(rnd))}</text>'
            + (f'<text x="{x + (step - 12) // 2}" y="84" font-size="14" text-anchor="middle" '
               f'fill="#cf222e" font-weight="700">\u2260</text>' if mismatch else "")
            + "</g>")
    x_end = left + step * len(rounds)
    label = f"stopped: {stop}" if status == "stopped" else "active"
    parts.append(f'<text id="stop-reason" x="{x_end + 4}" y="84" font-size="13" '
                 f'font-weight="700" fill="#1f2328">\u25a0 {_e(label)}</text>')
    parts.append("</svg>")
    return "".join(parts)
