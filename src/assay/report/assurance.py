"""The packet part of the report: validity, profiles, claims by state, material gaps.

Imports the standard library and :mod:`assay.report.markup` only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from assay.report.markup import ICON as _ICON
from assay.report.markup import badge as _badge
from assay.report.markup import e as _e

__all__ = ["packet_section"]


def packet_section(packet: Mapping[str, Any]) -> str:
    summary = packet.get("summary") or {}
    valid = bool(packet.get("valid"))
    css, icon = ("ok", "\u2714") if valid else ("bad", "\u2718")
    verdict = ("valid" if valid else "refused") + (
        f", publication {summary.get('publication') or 'none'}" if valid else "")
    out = [(f'<section id="packet" data-valid="{str(valid).lower()}" '
           f'data-requested="{_e(summary.get("requested_profile", ""))}" '
           f'data-achieved="{_e(summary.get("achieved_profile") or "")}">'
           f'<h2>Research packet {_badge(css, icon, verdict)}</h2>'),
           f'<p>Directory: <code>{_e(packet.get("dir", ""))}</code></p>']
    if packet.get("objective"):
        out.append(f"<p>Objective: <strong>{_e(packet['objective'])}</strong></p>")
    if summary:
        achieved = summary.get("achieved_profile") or "none"
        a_css = "ok" if achieved == summary.get("requested_profile") else "wait"
        out.append('<table id="profile"><tr><th>requested profile</th><th>achieved profile</th>'
                   "<th>status</th><th>publication</th></tr>"
                   f"<tr><td>{_e(summary.get('requested_profile', ''))}</td>"
                   f"<td>{_badge(a_css, _ICON[a_css], achieved)}</td>"
                   f"<td>{_e(summary.get('status', ''))}</td>"
                   f"<td>{_e(summary.get('publication') or 'not publishable')}</td></tr></table>")
        out.append('<h3>Claims by state</h3><table id="claim-states"><tr><th>state</th>'
                   "<th>claims</th></tr>" + "".join(
                       f'<tr data-state="{_e(k)}"><td>{_e(k)}</td><td class="count">{_e(v)}</td></tr>'
                       for k, v in (summary.get("claim_states") or {}).items()) + "</table>")
        gaps = [g for g in packet.get("gaps", []) if g.get("material")]
        out.append('<h3>Material gaps</h3><ul id="material-gaps">' + ("".join(
            f'<li data-gap="{_e(g.get("gap_id", ""))}"><code>{_e(g.get("gap_id", ""))}</code> '
            f'{_e(g.get("kind", ""))}: {_e(g.get("description", ""))}</li>' for g in gaps)
            or "<li>none</li>") + "</ul>")
        claims = packet.get("claims") or []
        if claims:
            out.append('<details id="claims"><summary>Claims</summary><table><tr><th>claim</th>'
                       "<th>state</th><th>assurance</th><th>statement</th></tr>" + "".join(
                           f"<tr><td><code>{_e(c.get('claim_id', ''))}</code></td>"
                           f"<td>{_e(c.get('state', ''))}</td><td>{_e(c.get('assurance', ''))}</td>"
                           f"<td>{_e(c.get('statement', ''))}</td></tr>" for c in claims)
                       + "</table></details>")
    issues: Iterable[Mapping[str, Any]] = packet.get("issues") or []
    rows = "".join(f'<tr data-code="{_e(i.get("code", ""))}"><td><code>{_e(i.get("code", ""))}</code>'
                   f"</td><td>{_e(i.get('path', ''))}</td><td><code>{_e(i.get('pointer', ''))}</code>"
                   f"</td><td>{_e(i.get('message', ''))}</td></tr>" for i in issues)
    if rows:
        out.append('<h3>Why it is refused</h3><table id="packet-issues"><tr><th>code</th>'
                   f"<th>file</th><th>pointer</th><th>message</th></tr>{rows}</table>")
    out.append("</section>")
    return "".join(out)
