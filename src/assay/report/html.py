"""Render a report document as one self-contained HTML page.

The page has no external reference at all: the CSS and the one small script
are inline, the loop timeline is inline SVG, and a Content-Security-Policy
``default-src 'none'`` forbids every fetch; the script is allowed by its
SHA-256 only, so even markup that slipped through escaping could not run.
Every string that came from a record goes through
:func:`assay.report.markup.e` (HTML escaping of ``& < > " '``), in text and in
attributes alike.

The document (built by the ``report`` operation) is a dict::

    {assay_version, ledger: {revision, epoch}, project: {scope},
     intent: {report, evidence: {id: summary}, gate: gate view (see assay.report.gate)} | None,
     loop: {head, rounds: [round data], rejections: [rejection data]} | None,
     packet: {dir, valid, publishable, issues, summary, objective, claims, gaps} | None,
     publication: {line, sources, envelopes: [sha256]}}

:func:`render` is pure and deterministic: no clock, no randomness, dict
order as given. Colour is never the only signal: each status also has an
icon and a word. The loop and packet parts are :mod:`assay.report.timeline`
and :mod:`assay.report.assurance`. Imports the standard library and its
sibling modules only.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping, Sequence
from string import Template
from typing import Any

from assay.report.assurance import packet_section
from assay.report.gate import gate_section
from assay.report.markup import ICON as _ICON
from assay.report.markup import RUN_STYLE as _RUN_STYLE
from assay.report.markup import badge as _badge
from assay.report.markup import clip
from assay.report.markup import e as _e
from assay.report.markup import short as _short
from assay.report.timeline import loop_section

__all__ = ["DELTA_STYLE", "render"]

# delta status -> (css class, icon, label)
DELTA_STYLE: dict[str, tuple[str, str, str]] = {
    "reported_complete_with_current_evidence": ("ok", "\u2714", "ready"),
    "awaiting_descendants": ("wait", "\u25d0", "awaiting descendants"),
    "reported_complete_needs_evidence": ("bad", "\u2718", "needs evidence"),
    "stale_intent": ("bad", "\u21bb", "stale intent"),
    "failed": ("bad", "\u2718", "failed"),
    "unverified": ("wait", "?", "unverified"),
    "not_started": ("none", "\u25cb", "not started"),
}
_DETAIL_TEXT_LIMIT = 4000
# Output shown per stream: its last characters (the end of a run says most).
_TAIL_SHOWN = 2000
# Output characters shown on the whole page; past it a tail is named, not
# copied, so an intent citing thousands of runs still gives a page of a few MB.
_PAGE_TAIL_BUDGET = 1_500_000

_SCRIPT = (
    "document.querySelectorAll('button[data-open]').forEach(function(b){"
    "b.addEventListener('click',function(){var o=b.getAttribute('data-open')==='1';"
    "document.querySelectorAll('details').forEach(function(d){d.open=o;});});});"
)
_SCRIPT_HASH = base64.b64encode(hashlib.sha256(_SCRIPT.encode("utf-8")).digest()).decode("ascii")

_CSS = """
:root{--ok:#1a7f37;--ok-bg:#dafbe1;--bad:#b3261e;--bad-bg:#ffebe9;--wait:#8a5a00;
--wait-bg:#fff4d6;--none:#57606a;--none-bg:#eef1f4;--line:#d0d7de;--fg:#1f2328;--muted:#57606a}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);
background:#fff}
main{max-width:1100px;margin:0 auto;padding:16px 24px 48px}
h1{font-size:22px;margin:8px 0}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid var(--line);
padding-bottom:4px}h3{font-size:15px;margin:16px 0 6px}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
pre{background:#f6f8fa;border:1px solid var(--line);border-radius:6px;padding:8px;overflow:auto;
white-space:pre-wrap;word-break:break-word;max-height:420px}
.banner{display:flex;align-items:center;gap:16px;border:3px solid;border-radius:10px;padding:14px 18px;
margin:12px 0 16px}
.banner .icon{font-size:40px;line-height:1;font-weight:700}
.banner .word{font-size:26px;font-weight:800;letter-spacing:.04em;text-transform:uppercase}
.banner.ok{border-color:var(--ok);background:var(--ok-bg);color:var(--ok)}
.banner.bad{border-color:var(--bad);background:var(--bad-bg);color:var(--bad)}
.banner.none{border-color:var(--none);background:var(--none-bg);color:var(--none)}
.banner .sub{color:var(--fg);font-size:14px}
.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:0}
.meta dt{color:var(--muted)}.meta dd{margin:0;word-break:break-all}
.badge{display:inline-block;border-radius:999px;padding:0 8px;font-size:12px;font-weight:600;
border:1px solid;white-space:nowrap}
.ok{color:var(--ok)}.bad{color:var(--bad)}.wait{color:var(--wait)}.none{color:var(--none)}
.badge.ok{background:var(--ok-bg)}.badge.bad{background:var(--bad-bg)}
.badge.wait{background:var(--wait-bg)}.badge.none{background:var(--none-bg)}
.badge.machine{color:#0550ae;background:#ddf4ff}.badge.claim{color:#6e4f00;background:#fff8c5}
table{border-collapse:collapse;margin:6px 0}th,td{border:1px solid var(--line);padding:3px 8px;
text-align:left;vertical-align:top}th{background:#f6f8fa}
ul.tree{list-style:none;padding-left:0;margin:0}ul.tree ul{list-style:none;padding-left:22px;
border-left:2px solid var(--line);margin-left:8px}
li.req{margin:6px 0}.req>.head{display:flex;gap:8px;align-items:baseline;flex-wrap:wrap}
.req .rid{font-weight:700}.req .body{margin:2px 0 0 4px;padding-left:10px}
.req .acc{color:var(--muted)}.issue{margin:2px 0}.issue .code{font-weight:600}
.advisory .code{color:var(--wait)}.blocking .code{color:var(--bad)}
details{margin:2px 0}summary{cursor:pointer}
.evref{margin:2px 0}.evidence{content-visibility:auto;contain-intrinsic-size:auto 240px}
#requirements>li.req{content-visibility:auto;contain-intrinsic-size:auto 120px}.timeline{overflow-x:auto;border:1px solid var(--line);border-radius:6px}
.controls{float:right}.controls button{font:inherit;font-size:12px;margin-left:4px}
footer{margin-top:36px;color:var(--muted);font-size:12px;border-top:1px solid var(--line);
padding-top:8px}
@media print{.controls{display:none}details{display:block}}
"""

_PAGE = Template("""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; \
script-src 'sha256-$script_hash'; img-src data:">
<meta name="generator" content="assay $version">
<title>$title</title>
<style>$css</style>
</head>
<body>
<main>
<div class="controls"><button type="button" data-open="1">expand all</button>\
<button type="button" data-open="0">collapse all</button></div>
<h1>$title</h1>
$banner
$meta
$sections
<footer id="publication">$footer</footer>
</main>
<script>$script</script>
</body>
</html>
""")


def _clip(text: str, limit: int = _DETAIL_TEXT_LIMIT) -> str:
    return clip(text, limit)


def render(doc: Mapping[str, Any]) -> str:
    """The HTML page of ``doc`` (see the module docstring). Pure and deterministic."""
    intent = doc.get("intent")
    loop = doc.get("loop")
    packet = doc.get("packet")
    ledger = doc.get("ledger") or {}
    anchors = _EvidenceAnchors(intent["evidence"] if intent else {})
    sections = []
    if intent:
        sections.append(_intent_section(intent["report"], intent["evidence"], anchors))
        sections.append(_evidence_section(intent["evidence"], anchors))
        sections.append(gate_section(intent.get("gate")))
    if loop:
        sections.append(loop_section(loop))
    if packet:
        sections.append(packet_section(packet))
    title = "assay report"
    if intent:
        title += " \u2014 " + str(intent["report"]["intent_record_id"])
    elif loop:
        title += " \u2014 loop " + str(loop["head"].get("loopId", ""))
    elif packet:
        title += " \u2014 packet " + str(packet.get("dir", ""))
    meta = [("project", doc.get("project", {}).get("scope", "")),
            ("ledger revision", ledger.get("revision", "")),
            ("ledger epoch", ledger.get("epoch", ""))]
    if intent:
        rep = intent["report"]
        meta += [("intent", f"{rep['intent_record_id']} revision {rep['intent_revision']}"),
                 ("intent sha256", rep.get("intent_sha256", ""))]
    meta_html = ('<dl class="meta" id="meta">' + "".join(
        f'<dt>{_e(k)}</dt><dd data-key="{_e(k)}">{_e(v)}</dd>' for k, v in meta if v != "")
        + "</dl>")
    publication = doc.get("publication") or {}
    source = (f"ledger revision <span id=\"ledger-revision\">{_e(ledger['revision'])}</span>"
              if "revision" in ledger else "no ledger (a packet outside any project)")
    footer = (f"Rendered by assay {_e(doc.get('assay_version', ''))} from {source}. "
              f"Publication gate: <span id=\"gate\">{_e(publication.get('line', 'not run'))}"
              f"</span> ({_e(publication.get('sources', 0))} source versions revalidated"
              + "".join(f", envelope {_e(_short(s))}" for s in publication.get("envelopes", []))
              + "). The page is a pure rendering of that snapshot; it fetches nothing.")
    return _PAGE.substitute(
        title=_e(title), css=_CSS, script=_SCRIPT, script_hash=_SCRIPT_HASH,
        version=_e(doc.get("assay_version", "")), banner=_banner(intent),
        meta=meta_html, sections="\n".join(sections), footer=footer)


def _banner(intent: Mapping[str, Any] | None) -> str:
    if not intent:
        return ('<section id="verdict" class="banner none" role="status" data-ready="unknown">'
                '<span class="icon">\u25cb</span><div><div class="word">readiness not assessed'
                '</div><div class="sub">This report names no intent, so ready_to_review '
                'is not answered here.</div></div></section>')
    report = intent["report"]
    ready = bool(report["ready_to_review"])
    rows = report["delta"]["requirements"]
    done = sum(1 for r in rows if r["status"] == "reported_complete_with_current_evidence")
    blocking = sum(1 for i in report["issues"] if not i.get("advisory"))
    advisory = len(report["issues"]) - blocking
    css, icon = ("ok", "\u2714") if ready else ("bad", "\u2718")
    word = "ready to review" if ready else "not ready to review"
    sub = (f"ready_to_review = {str(ready).lower()}: {done} of {len(rows)} requirements reported "
           f"complete with current evidence; {blocking} blocking issue(s), {advisory} advisory.")
    return (f'<section id="verdict" class="banner {css}" role="status" '
            f'data-ready="{str(ready).lower()}"><span class="icon" aria-hidden="true">{icon}</span>'
            f'<div><div class="word">{word}</div><div class="sub">{_e(sub)}</div></div>'
            "</section>")


class _EvidenceAnchors:
    """Stable anchor ids for evidence records, in first-citation order."""

    def __init__(self, evidence: Mapping[str, Any]) -> None:
        self.ids = {record_id: f"ev-{n}" for n, record_id in enumerate(evidence, start=1)}

    def href(self, record_id: str) -> str | None:
        anchor = self.ids.get(record_id)
        return f"#{anchor}" if anchor else None


def _issue_html(issue: Mapping[str, Any]) -> str:
    kind = "advisory" if issue.get("advisory") else "blocking"
    label = "advisory" if issue.get("advisory") else "issue"
    return (f'<div class="issue {kind}" data-code="{_e(issue.get("code", ""))}">'
            f'<span class="code">{_e(label)} {_e(issue.get("code", ""))}</span>: '
            f'{_e(issue.get("message", ""))}'
            + (f' <span class="acc">\u2192 {_e(issue["action"])}</span>'
               if issue.get("action") else "") + "</div>")


def _intent_section(report: Mapping[str, Any], evidence: Mapping[str, Any],
                    anchors: _EvidenceAnchors) -> str:
    plan = report["plan"]
    delta = {row["id"]: row for row in report["delta"]["requirements"]}
    results = {r["requirement_id"]: r for r in report["actual"].get("results", [])}
    reqs = {r["id"]: r for r in plan["requirements"]}
    issues: dict[str, list[Mapping[str, Any]]] = {}
    for issue in report["issues"]:
        issues.setdefault(issue.get("requirement_id") or "", []).append(issue)
    out = ['<section id="intent"><h2>Intent and requirements</h2>',
           f'<p class="brief"><strong>{_e(plan.get("brief", ""))}</strong></p>']
    if plan.get("user_reference"):
        out.append(f'<p>Asked: {_e(plan["user_reference"])}</p>')
    for label, key in (("Boundaries", "boundaries"), ("Non-goals", "non_goals")):
        if plan.get(key):
            out.append(f"<h3>{label}</h3><ul>" + "".join(
                f"<li>{_e(x)}</li>" for x in plan[key]) + "</ul>")
    counts: dict[str, int] = {}
    for row in delta.values():
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    out.append('<h3>Requirements by status</h3><table id="status-counts"><tr><th>status</th>'
               "<th>requirements</th></tr>")
    for status, (css, icon, label) in DELTA_STYLE.items():
        if counts.get(status):
            out.append(f'<tr data-status="{_e(status)}"><td>{_badge(css, icon, label)} '
                       f'<code>{_e(status)}</code></td><td class="count">{counts[status]}</td></tr>')
    out.append("</table>")
    general = issues.get("", [])
    for error in report.get("record_errors", []):
        read = error.get("read")
        general.append({"code": error.get("code", "record_error"),
                        "message": f"{error.get('id', '')}: {error.get('message', '')}",
                        "action": ("read the stored text: assay " + " ".join(read)) if read
                        else ""})
    if general:
        out.append('<h3>Issues of the whole intent</h3><div id="global-issues">'
                   + "".join(_issue_html(i) for i in general) + "</div>")
    out.append('<h3>Requirement tree</h3><ul class="tree" id="requirements">')
    # Iterative depth-first walk: an intent may nest deeply, and recursion
    # depth must not depend on the record.
    stack: list[tuple[str, str]] = [("open", rid) for rid in reversed(plan["root_ids"])]
    while stack:
        action, rid = stack.pop()
        if action == "close":
            out.append("</ul></li>" if reqs.get(rid, {}).get("child_ids") else "</li>")
            continue
        req = reqs.get(rid, {"id": rid, "text": "", "acceptance": "", "child_ids": []})
        out.append(_requirement_html(req, delta.get(rid, {}), results.get(rid), issues.get(rid, []),
                                     anchors, evidence))
        children = req.get("child_ids") or []
        stack.append(("close", rid))
        if children:
            out.append("<ul>")
            stack.extend(("open", child) for child in reversed(children))
    out.append("</ul>")
    if report.get("next"):
        out.append('<h3>Next</h3><ol id="next">' + "".join(
            f"<li>{_e(step)}</li>" for step in report["next"]) + "</ol>")
    continuation = report.get("continuation") or {}
    if isinstance(continuation, Mapping) and continuation.get("next_action"):
        active = ", ".join(str(r) for r in continuation.get("active_requirement_ids") or [])
        out.append('<h3>Continuation (recorded by the agent)</h3><p id="continuation">'
                   f'{_e(continuation["next_action"])}'
                   + (f' <span class="acc">(active: {_e(active)})</span>' if active else "")
                   + "</p>")
    out.append("</section>")
    return "".join(out)


def _requirement_html(req: Mapping[str, Any], row: Mapping[str, Any],
                      result: Mapping[str, Any] | None, issues: Sequence[Mapping[str, Any]],
                      anchors: _EvidenceAnchors, evidence: Mapping[str, Any]) -> str:
    status = str(row.get("status", "not_started"))
    css, icon, label = DELTA_STYLE.get(status, ("none", "\u25cb", status))
    parts = [(f'<li class="req" id="req-{_e(req["id"])}" data-id="{_e(req["id"])}" '
             f'data-status="{_e(status)}"><div class="head">{_badge(css, icon, label)}'
             f'<span class="rid">{_e(req["id"])}</span><span class="text">{_e(req.get("text", ""))}'
             "</span></div><div class=\"body\">")]
    if req.get("acceptance"):
        parts.append(f'<div class="acc">acceptance: {_e(req["acceptance"])}</div>')
    if result is not None:
        parts.append(f'<div class="result">claimed result: <strong>{_e(result.get("status", ""))}'
                     "</strong>" + (f" \u2014 {_e(result['notes'])}" if result.get("notes") else "")
                     + "</div>")
        for ref in result.get("evidence", []):
            parts.append(_evidence_ref_html(ref, anchors, evidence))
    parts.extend(_issue_html(i) for i in issues)
    parts.append("</div>")
    return "".join(parts)


def _origin_badge(ref: Mapping[str, Any]) -> str:
    """Who wrote the cited version: assay's runner, a claim, or unknown (unreadable)."""
    if ref.get("machine_observed"):
        return _badge("machine", "\u2699", "machine-observed")
    if ref.get("origin") is None:
        return _badge("bad", "\u2718", "unreadable or missing")
    return _badge("claim", "\u270e", "claimed")


def _evidence_ref_html(ref: Mapping[str, Any], anchors: _EvidenceAnchors,
                       evidence: Mapping[str, Any]) -> str:
    machine = bool(ref.get("machine_observed"))
    seen = _origin_badge(ref)
    current = ref.get("current_revision")
    name = f"{ref.get('id', '')}@{ref.get('revision', '')}"
    href = anchors.href(str(ref.get("id", "")))
    link = f'<a href="{_e(href)}">{_e(name)}</a>' if href else f"<code>{_e(name)}</code>"
    stale = ""
    if current not in (None, ref.get("revision")):
        stale = f' <span class="bad">(current revision {_e(current)})</span>'
    facts = ""
    run = ref.get("run")
    if run:
        # The outcome of the cited run itself, not of a later one.
        status = str(run.get("status", ""))
        css = _RUN_STYLE.get(status, "wait")
        words = [f"{run['command']}" if run.get("command") else ""]
        if run.get("exit_code") is not None:
            words.append(f"exit {run['exit_code']}")
        facts = (f" {_badge(css, _ICON[css], status)} "
                 f'<span class="acc">{_e(", ".join(w for w in words if w))}</span>')
    digest = ref.get("data_sha256") or (evidence.get(str(ref.get("id", ""))) or {}).get(
        "data_sha256")
    if digest:
        facts += f' <span class="acc mono">sha256 {_e(_short(digest))}</span>'
    return (f'<div class="evref" data-evidence="{_e(ref.get("id", ""))}" '
            f'data-machine="{str(machine).lower()}" data-origin="{_e(ref.get("origin") or "")}" '
            f'data-cited-run-status="{_e((run or {}).get("status", ""))}">'
            f"evidence {seen} {link}{stale}{facts}</div>")


def _evidence_section(evidence: Mapping[str, Mapping[str, Any]], anchors: _EvidenceAnchors) -> str:
    if not evidence:
        return '<section id="evidence"><h2>Evidence cited</h2><p>No evidence is cited.</p></section>'
    machine = sum(1 for e in evidence.values() if e.get("machine_observed"))
    out = ['<section id="evidence"><h2>Evidence cited</h2>',
           (f"<p>{len(evidence)} record(s) cited: {machine} observed by assay itself, "
           f"{len(evidence) - machine} only claimed.</p>")]
    budget = [_PAGE_TAIL_BUDGET]
    for record_id, ev in evidence.items():
        out.append(_evidence_html(record_id, ev, anchors.ids.get(record_id, ""), budget))
    out.append("</section>")
    return "".join(out)


def _stream_html(name: str, stream: Mapping[str, Any] | None, record_id: str,
                 budget: list[int]) -> str:
    if not stream:
        return ""
    facts = (f"{_e(stream.get('bytes', 0))} bytes, sha256 <code>{_e(stream.get('sha256', ''))}</code>"
             + (", truncated to the tail" if stream.get("truncated") else ""))
    tail = str(stream.get("tail") or "")
    if len(tail) > _TAIL_SHOWN:
        tail = f"[... {len(tail) - _TAIL_SHOWN} earlier characters in the record]\n" + tail[
            -_TAIL_SHOWN:]
    if not tail:
        return (f'<div class="acc" data-stream="{_e(name)}">{_e(name)}: empty '
                f"({facts})</div>")
    if len(tail) > budget[0]:
        body = (f"<p>(not copied into this page, which already holds {_PAGE_TAIL_BUDGET:,} "
                f"characters of output: <code>assay evidence show -- {_e(record_id)}</code>)</p>")
    else:
        budget[0] -= len(tail)
        body = f"<pre>{_e(tail)}</pre>"
    return (f'<details class="tail" data-stream="{_e(name)}"><summary>{_e(name)} tail '
            f"({facts})</summary>{body}</details>")


def _evidence_html(record_id: str, ev: Mapping[str, Any], anchor: str,
                   budget: list[int]) -> str:
    machine = bool(ev.get("machine_observed"))
    seen = (_badge("machine", "\u2699", "machine-observed") if machine
            else _badge("claim", "\u270e", "claimed"))
    obs = ev.get("observation")
    head = [(f'<div class="evidence" id="{_e(anchor)}" data-id="{_e(record_id)}" '
            f'data-machine="{str(machine).lower()}"><h3>{seen} <code>{_e(record_id)}</code> revision '
            f'{_e(ev.get("revision", ""))}')]
    if ev.get("unavailable"):
        head.append(f' <span class="bad">({_e(ev["unavailable"])})</span></h3>')
        if ev.get("read"):
            head.append(f'<p>Read the stored text: <code>{_e(" ".join(ev["read"]))}</code></p>')
        head.append("</div>")
        return "".join(head)
    if obs:
        status = str(obs.get("status", ""))
        css = _RUN_STYLE.get(status, "wait")
        head.append(" " + _badge(css, _ICON[css], status, data_run_status=status))
    head.append("</h3>")
    rows = [("origin", ev.get("origin", "")), ("record status", ev.get("status", "")),
            ("data sha256", ev.get("data_sha256", ""))]
    if obs:
        argv = obs.get("argv")
        rows += [("command", " ".join(str(a) for a in argv) if isinstance(argv, list) else ""),
                 ("cwd", obs.get("cwd", "")),
                 ("exit status", obs.get("exit_code") if obs.get("exit_code") is not None
                  else (obs.get("signal") or obs.get("reason") or "none")),
                 ("duration", f"{obs.get('duration_ms', '')} ms"),
                 ("started", obs.get("started_at", ""))]
        if ev.get("workspace"):
            rows.append(("workspace", ev["workspace"]))
    table = "<dl class=\"meta\">" + "".join(
        f'<dt>{_e(k)}</dt><dd data-key="{_e(k)}">{_e(v)}</dd>' for k, v in rows) + "</dl>"
    streams = ""
    if obs:
        streams = (_stream_html("stdout", obs.get("stdout"), record_id, budget)
                   + _stream_html("stderr", obs.get("stderr"), record_id, budget))
    elif ev.get("data_text"):
        streams = (f'<details class="data"><summary>record data</summary><pre>'
                   f'{_e(_clip(str(ev["data_text"])))}</pre></details>')
    return "".join(head) + table + streams + "</div>"
