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
     intent: {report, evidence: {id: summary (see assay.report.evidence)},
              gate: gate view (see assay.report.gate)} | None,
     loop: {head, rounds: [round data], rejections: [rejection data]} | None,
     packet: {dir, valid, publishable, issues, summary, objective, claims, gaps} | None,
     publication: {line, sources, envelopes: [sha256]}}

:func:`render` is pure and deterministic: no clock, no randomness, dict
order as given. Colour is never the only signal: each status also has an
icon and a word. The requirement tree is here; a note or an issue text said
of several requirements is printed once, numbered, with the requirements it
applies to, and each of them links to it. The evidence, loop and packet
parts are :mod:`assay.report.evidence`, :mod:`assay.report.timeline` and
:mod:`assay.report.assurance`; the words the page shares with the terminal
views are :mod:`assay.report.wording`. Imports the standard library and its
sibling modules only.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping, Sequence
from string import Template
from typing import Any

from assay.report.assurance import packet_section
from assay.report.evidence import (
    ROLLUP_STYLE,
    evidence_section,
    observed_html,
    requirement_tests_html,
)
from assay.report.gate import gate_section
from assay.report.markup import ICON as _ICON
from assay.report.markup import RUN_STYLE as _RUN_STYLE
from assay.report.markup import badge as _badge
from assay.report.markup import e as _e
from assay.report.markup import short as _short
from assay.report.timeline import loop_section
from assay.report.wording import cited_revision, merge_repeated, run_outcome

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
ul.testlist{list-style:none;padding-left:14px;margin:2px 0}ul.testlist li{margin:1px 0}
ul.cited{margin:2px 0 6px;padding-left:18px}.results{margin:6px 0}.elsewhere{font-weight:600}
#shared li{margin:4px 0}.evref .observed{margin-left:14px}.evref details.tests{margin-left:14px}
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


def render(doc: Mapping[str, Any]) -> str:
    """The HTML page of ``doc`` (see the module docstring). Pure and deterministic."""
    intent = doc.get("intent")
    loop = doc.get("loop")
    packet = doc.get("packet")
    ledger = doc.get("ledger") or {}
    sections = []
    if intent:
        citations = _Citations(intent["report"], intent["evidence"])
        sections.append(_intent_section(intent["report"], citations))
        sections.append(evidence_section(intent["evidence"], citations.anchors.ids,
                                         citations.cited))
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


class _Citations:
    """What the tree and the evidence section need about each citation, computed once."""

    def __init__(self, report: Mapping[str, Any], evidence: Mapping[str, Any]) -> None:
        self.evidence = evidence
        self.intent_id = report.get("intent_record_id")
        self.anchors = _EvidenceAnchors(evidence)
        # evidence id -> each cited revision with the requirements citing it
        by_revision: dict[str, dict[Any, list[str]]] = {}
        for result in report["actual"].get("results", []):
            for ref in result.get("evidence", []):
                cites = by_revision.setdefault(str(ref.get("id", "")), {})
                rids = cites.setdefault(ref.get("revision"), [])
                if result["requirement_id"] not in rids:
                    rids.append(result["requirement_id"])
        self.cited = {rid: sorted(revs.items(), key=lambda kv: str(kv[0]).zfill(12))
                      for rid, revs in by_revision.items()}
        self._rows: dict[str, dict[str, Mapping[str, Any]]] = {}

    def tests_row(self, record_id: str, requirement_id: str) -> Mapping[str, Any] | None:
        """The requirement's rollup row in the current version of ``record_id``, if any."""
        rows = self._rows.get(record_id)
        if rows is None:
            tests = (self.evidence.get(record_id) or {}).get("tests") or {}
            # A run's rows may belong to several intents: this intent's row wins.
            ordered = sorted(tests.get("requirements") or [],
                             key=lambda r: r.get("intent") in (None, self.intent_id))
            rows = self._rows[record_id] = {str(r.get("requirement_id")): r for r in ordered}
        return rows.get(requirement_id)


class _Shared:
    """Notes and issue texts said of several requirements: each printed once, numbered."""

    def __init__(self, results: Mapping[str, Mapping[str, Any]],
                 issues: Mapping[str, Sequence[Mapping[str, Any]]]) -> None:
        notes = merge_repeated((str(r.get("notes")), rid) for rid, r in results.items()
                               if str(r.get("notes") or "").strip())
        said = merge_repeated(((str(i.get("code", "")), str(i.get("message", "")),
                                bool(i.get("advisory"))), rid)
                              for rid, found in issues.items() if rid for i in found)
        self.entries: list[tuple[str, Any, list[str]]] = (
            [("note", text, rids) for text, rids in notes if len(rids) > 1]
            + [("issue", key, rids) for key, rids in said if len(rids) > 1])
        self.note_number = {text: n for n, (kind, text, _) in enumerate(self.entries, start=1)
                            if kind == "note"}
        self.issue_number = {key: n for n, (kind, key, _) in enumerate(self.entries, start=1)
                             if kind == "issue"}

    def section(self) -> str:
        if not self.entries:
            return ""
        out = [("<h3>Said of several requirements</h3><p>Each text below is printed once, with "
               'the requirements it applies to.</p><ol id="shared">')]
        for n, (kind, key, rids) in enumerate(self.entries, start=1):
            links = ", ".join(f'<a href="#req-{_e(r)}">{_e(r)}</a>' for r in rids)
            if kind == "note":
                head = f'<span class="what">note</span>: {_e(key)}'
                attrs = 'data-kind="note"'
            else:
                code, message, advisory = key
                css = "advisory" if advisory else "blocking"
                head = (f'<span class="issue {css}"><span class="code">'
                        f'{"advisory" if advisory else "issue"} {_e(code)}</span></span>: '
                        f"{_e(message)}")
                attrs = f'data-kind="issue" data-code="{_e(code)}"'
            out.append(f'<li id="shared-{n}" class="shared" {attrs} '
                       f'data-applies="{_e(" ".join(rids))}">{head} '
                       f'<span class="acc">\u2014 applies to {len(rids)} requirements: {links}'
                       "</span></li>")
        out.append("</ol>")
        return "".join(out)

    def note_html(self, notes: str) -> str:
        n = self.note_number.get(notes)
        if n is None:
            return f" \u2014 {_e(notes)}"
        return (f' \u2014 <a class="shared-ref" href="#shared-{n}">note {n}</a> '
                f"(said of {len(self.entries[n - 1][2])} requirements)")

    def issue_html(self, issue: Mapping[str, Any]) -> str:
        key = (str(issue.get("code", "")), str(issue.get("message", "")),
               bool(issue.get("advisory")))
        n = self.issue_number.get(key)
        if n is None:
            return _issue_html(issue)
        text = (f'as in <a class="shared-ref" href="#shared-{n}">text {n} of "Said of several '
                f'requirements"</a>')
        return _issue_html(issue, text=text, shared=n)


def _issue_html(issue: Mapping[str, Any], *, text: str | None = None,
                shared: int | None = None) -> str:
    kind = "advisory" if issue.get("advisory") else "blocking"
    label = "advisory" if issue.get("advisory") else "issue"
    return (f'<div class="issue {kind}" data-code="{_e(issue.get("code", ""))}"'
            + (f' data-shared="{shared}"' if shared is not None else "") + ">"
            f'<span class="code">{_e(label)} {_e(issue.get("code", ""))}</span>: '
            + (text if text is not None else _e(issue.get("message", "")))
            + (f' <span class="acc">\u2192 {_e(issue["action"])}</span>'
               if issue.get("action") else "") + "</div>")


def _intent_section(report: Mapping[str, Any], citations: _Citations) -> str:
    plan = report["plan"]
    delta = {row["id"]: row for row in report["delta"]["requirements"]}
    results = {r["requirement_id"]: r for r in report["actual"].get("results", [])}
    reqs = {r["id"]: r for r in plan["requirements"]}
    issues: dict[str, list[Mapping[str, Any]]] = {}
    for issue in report["issues"]:
        # An issue about a requirement the intent no longer has belongs to the whole intent.
        rid = issue.get("requirement_id") or ""
        issues.setdefault(rid if rid in reqs else "", []).append(issue)
    shared = _Shared({rid: r for rid, r in results.items() if rid in reqs}, issues)
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
    out.append(shared.section())
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
        out.append(_requirement_html(req, delta.get(rid, {}), results.get(rid),
                                     issues.get(rid, []), citations, shared))
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
                      citations: _Citations, shared: _Shared) -> str:
    status = str(row.get("status", "not_started"))
    css, icon, label = DELTA_STYLE.get(status, ("none", "\u25cb", status))
    parts = [(f'<li class="req" id="req-{_e(req["id"])}" data-id="{_e(req["id"])}" '
             f'data-status="{_e(status)}"><div class="head">{_badge(css, icon, label)}'
             f'<span class="rid">{_e(req["id"])}</span><span class="text">{_e(req.get("text", ""))}'
             "</span></div><div class=\"body\">")]
    if req.get("acceptance"):
        parts.append(f'<div class="acc">acceptance: {_e(req["acceptance"])}</div>')
    if result is not None:
        notes = str(result.get("notes") or "")
        parts.append(f'<div class="result">claimed result: <strong>{_e(result.get("status", ""))}'
                     "</strong>" + (shared.note_html(notes) if notes.strip() else "")
                     + "</div>")
        for ref in result.get("evidence", []):
            parts.append(_evidence_ref_html(ref, str(req["id"]), citations))
    parts.extend(shared.issue_html(i) for i in issues)
    parts.append("</div>")
    return "".join(parts)


def _origin_badge(ref: Mapping[str, Any]) -> str:
    """Who wrote the cited version: assay's runner, a claim, or unknown (unreadable)."""
    if ref.get("machine_observed"):
        return _badge("machine", "\u2699", "machine-observed")
    if ref.get("origin") is None:
        return _badge("bad", "\u2718", "unreadable or missing")
    return _badge("claim", "\u270e", "claimed")


def _evidence_ref_html(ref: Mapping[str, Any], requirement_id: str, citations: _Citations) -> str:
    machine = bool(ref.get("machine_observed"))
    record_id = str(ref.get("id", ""))
    revision = ref.get("revision")
    current = ref.get("current_revision")
    name = f"{record_id}@{revision}"
    href = citations.anchors.href(record_id)
    link = f'<a href="{_e(href)}">{_e(name)}</a>' if href else f"<code>{_e(name)}</code>"
    is_current, words = cited_revision(revision, current)
    facts = f' <span class="rev {"acc" if is_current else "bad"}">({_e(words)})</span>'
    run = ref.get("run")
    outcome = ""
    if run:
        # The outcome of the cited run itself, not of a later one; with per-test
        # results, the outcome of this requirement's own tests in it.
        outcome, said = run_outcome(run)
        css = (ROLLUP_STYLE.get(outcome, "wait") if run.get("requirement")
               else _RUN_STYLE.get(outcome, "wait"))
        facts += (f" {_badge(css, _ICON[css], outcome)} "
                  f'<span class="acc said">{_e(said)}</span>')
    summary = citations.evidence.get(record_id) or {}
    digest = ref.get("data_sha256") or summary.get("data_sha256")
    if digest:
        facts += f' <span class="acc mono">sha256 {_e(_short(digest))}</span>'
    detail = ""
    if summary.get("unavailable"):
        pass  # the evidence section names why the record is not shown
    elif summary.get("revision") == revision:
        detail = observed_html(summary.get("workspace"))
        tests = citations.tests_row(record_id, requirement_id)
        if tests is not None:
            detail += requirement_tests_html(tests, name)
    elif run:
        # Only current versions are sources of this page (they pass the
        # publication gate); a stale citation names the read instead.
        detail = (f'<div class="acc not-shown">what {_e(name)} observed and its tests are not '
                  f"shown: the page shows current revisions only (<code>assay evidence show "
                  f"--revision {_e(revision)} -- {_e(record_id)}</code>)</div>")
    return (f'<div class="evref" data-evidence="{_e(record_id)}" '
            f'data-machine="{str(machine).lower()}" data-origin="{_e(ref.get("origin") or "")}" '
            f'data-cited-revision="{_e(revision)}" data-current-revision="{_e(current or "")}" '
            f'data-cited-run-status="{_e((run or {}).get("status", ""))}" '
            f'data-outcome="{_e(outcome)}">'
            f"evidence {_origin_badge(ref)} {link}{facts}{detail}</div>")
