"""The report's evidence part: each cited record once, and the run facts a citation shows.

The document part (built by the ``report`` operation) maps each cited record
id to a summary of its current version::

    {revision, origin, status, data_sha256, machine_observed,
     observation?: {status, exit_code, signal, reason, duration_ms, argv, cwd,
                    started_at, stdout, stderr},
     workspace?: assay.evidence.review.observed_workspace(...),
     tests?: assay.evidence.review.results_overview(...),
     data_text?, unavailable?, read?}

:func:`evidence_section` writes one entry per record: who wrote it, the
revisions the requirements cite beside its current one, the command and
its outcome, the commit and workspace digest the run observed, its tests by
requirement and the output tails behind disclosures.
:func:`observed_html` and :func:`requirement_tests_html` are the same facts
as a citation in the requirement tree shows them. Pure; imports the
standard library and its sibling modules only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from assay.report.markup import ICON, RUN_STYLE, badge, clip, e, short
from assay.report.wording import cited_revision, subjects

__all__ = ["DATA_TEXT_LIMIT", "PAGE_TAIL_BUDGET", "TAIL_SHOWN", "evidence_section",
           "observed_html", "requirement_tests_html"]

DATA_TEXT_LIMIT = 4000
# Output shown per stream: its last characters (the end of a run says most).
TAIL_SHOWN = 2000
# Output characters shown on the whole page; past it a tail is named, not
# copied, so an intent citing thousands of runs still gives a page of a few MB.
PAGE_TAIL_BUDGET = 1_500_000
# A requirement's outcome in a run's rollup -> css class.
ROLLUP_STYLE = {"passed": "ok", "failed": "bad", "unverified": "wait"}
# A single test's outcome -> (css class, icon).
TEST_STYLE = {"passed": ("ok", "\u2714"), "failed": ("bad", "\u2718"),
              "error": ("bad", "!"), "skipped": ("wait", "\u25cb")}


def _side_text(side: Mapping[str, Any] | None) -> tuple[str, str]:
    """(commit words, workspace digest words) of one observation side."""
    if not side:
        return "not recorded", "not recorded"
    if side.get("status") not in (None, "observed") or not side.get("head"):
        why = "not a git work tree" if side.get("status") == "not_applicable" else (
            f"git {side.get('status') or 'unavailable'}")
        return why, why
    commit = str(side["head"]) + (f" on {side['branch']}" if side.get("branch") else " (detached)")
    if side.get("dirty_count"):
        commit += f", {side['dirty_count']} uncommitted path(s)"
    return commit, str(side.get("workspace_sha256") or "none")


def _has_commit(workspace: Mapping[str, Any]) -> bool:
    return any((workspace.get(side) or {}).get("head") for side in ("before", "after"))


def observed_facts(workspace: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """Rows (label, words) for what a run observed: commit, workspace digest, change."""
    if not workspace:
        return []
    before = _side_text(workspace.get("before"))
    after = _side_text(workspace.get("after"))
    if not _has_commit(workspace):
        # No git side to name: one row says why, not a digest row repeating it.
        return [("commit", before[0] if before[0] == after[0] else f"{before[0]}, {after[0]}")]
    rows = [("commit", before[0] if before[0] == after[0] else
             f"{before[0]} before the command, {after[0]} after it"),
            ("workspace sha256", before[1] if before[1] == after[1] else
             f"{before[1]} before the command, {after[1]} after it")]
    progress = workspace.get("progress")
    if progress == "changed":
        rows.append(("during the run", (f"the workspace changed "
                     f"({workspace.get('changed_path_count', 0)} path(s))")))
    elif progress == "unchanged":
        rows.append(("during the run", "the workspace did not change"))
    elif progress:
        rows.append(("during the run", f"change {progress}"))
    return rows


def observed_html(workspace: Mapping[str, Any] | None) -> str:
    """One line for a citation: the commit and workspace digest the cited run observed."""
    rows = observed_facts(workspace)
    if not rows:
        return ""
    if len(rows) == 1:
        return (f'<div class="observed acc" data-commit="" data-workspace="">no git commit '
                f"observed ({e(rows[0][1])})</div>")
    commit, digest = rows[0][1], rows[1][1]
    shown_digest = digest if " " in digest else short(digest)
    return (f'<div class="observed acc" data-commit="{e(commit)}" data-workspace="{e(digest)}">'
            f"observed commit <code>{e(commit)}</code>, workspace sha256 "
            f"<code>{e(shown_digest)}</code></div>")


def _test_items(tests: Sequence[Mapping[str, Any]]) -> str:
    out = []
    for test in tests:
        css, icon = TEST_STYLE.get(str(test.get("outcome")), ("none", "?"))
        out.append(f'<li data-test="{e(test.get("id", ""))}" data-outcome="{e(test.get("outcome", ""))}">'
                   f"{badge(css, icon, str(test.get('outcome', '')))} <code>{e(test.get('id', ''))}"
                   "</code></li>")
    return "".join(out)


def _counts_text(counts: Mapping[str, Any]) -> str:
    words = [f"{counts[k]} {k}" for k in ("passed", "failed", "error", "skipped") if counts.get(k)]
    return ", ".join(words) or "no test ran"


def requirement_tests_html(row: Mapping[str, Any], cite: str) -> str:
    """A requirement's own tests in one cited run: its outcome there and each test's."""
    css = ROLLUP_STYLE.get(str(row.get("outcome")), "wait")
    rid = str(row.get("requirement_id", ""))
    missing = row.get("missing_globs") or []
    body = _test_items(row.get("listed") or [])
    if row.get("omitted"):
        body += (f"<li>{e(row['omitted'])} more: <code>assay evidence show -- "
                 f"{e(cite.partition('@')[0])}</code></li>")
    if missing:
        body += "".join(f'<li data-glob="{e(g)}">no test matched <code>{e(g)}</code></li>'
                        for g in missing)
    opened = " open" if row.get("outcome") != "passed" else ""
    return (f'<details class="tests" data-requirement="{e(rid)}" data-evidence="{e(cite)}"{opened}>'
            f"<summary>{badge(css, ICON[css], str(row.get('outcome', '')))} {e(rid)}'s "
            f"{e(row.get('tests', 0))} test(s) in {e(cite)}: {e(_counts_text(row.get('counts') or {}))}"
            f'</summary><ul class="testlist">{body}</ul></details>')


def evidence_section(evidence: Mapping[str, Mapping[str, Any]], anchors: Mapping[str, str],
                     cited: Mapping[str, Sequence[tuple[Any, list[str]]]]) -> str:
    """The "Evidence cited" section; ``cited`` maps each id to ``(revision, [requirement ids])``."""
    if not evidence:
        return '<section id="evidence"><h2>Evidence cited</h2><p>No evidence is cited.</p></section>'
    machine = sum(1 for ev in evidence.values() if ev.get("machine_observed"))
    out = ['<section id="evidence"><h2>Evidence cited</h2>',
           (f"<p>{len(evidence)} record(s) cited: {machine} observed by assay itself, "
            f"{len(evidence) - machine} only claimed.</p>")]
    budget = [PAGE_TAIL_BUDGET]
    for record_id, ev in evidence.items():
        out.append(_evidence_html(record_id, ev, anchors.get(record_id, ""), budget,
                                  cited.get(record_id, ())))
    out.append("</section>")
    return "".join(out)


def _stream_html(name: str, stream: Mapping[str, Any] | None, record_id: str,
                 budget: list[int]) -> str:
    if not stream:
        return ""
    facts = (f"{e(stream.get('bytes', 0))} bytes, sha256 <code>{e(stream.get('sha256', ''))}</code>"
             + (", truncated to the tail" if stream.get("truncated") else ""))
    tail = str(stream.get("tail") or "")
    if len(tail) > TAIL_SHOWN:
        tail = f"[... {len(tail) - TAIL_SHOWN} earlier characters in the record]\n" + tail[
            -TAIL_SHOWN:]
    if not tail:
        return (f'<div class="acc" data-stream="{e(name)}">{e(name)}: empty '
                f"({facts})</div>")
    if len(tail) > budget[0]:
        body = (f"<p>(not copied into this page, which already holds {PAGE_TAIL_BUDGET:,} "
                f"characters of output: <code>assay evidence show -- {e(record_id)}</code>)</p>")
    else:
        budget[0] -= len(tail)
        body = f"<pre>{e(tail)}</pre>"
    return (f'<details class="tail" data-stream="{e(name)}"><summary>{e(name)} tail '
            f"({facts})</summary>{body}</details>")


def _cited_html(current: Any, cited: Sequence[tuple[Any, list[str]]]) -> str:
    if not cited:
        return ""
    parts = []
    for revision, rids in cited:
        is_current, words = cited_revision(revision, current)
        parts.append(f'<li data-cited-revision="{e(revision)}" data-current="{str(is_current).lower()}"'
                     f' class="{"ok" if is_current else "bad"}">{e(subjects(rids))} '
                     f"cite{'s' if len(rids) == 1 else ''} {e(words)}</li>")
    return '<ul class="cited">' + "".join(parts) + "</ul>"


def _tests_block(tests: Mapping[str, Any], run_status: str, record_id: str) -> str:
    if tests.get("status") != "read":
        return (f'<div class="results bad" data-results="{e(tests.get("status") or "")}">results '
                f"file {e(tests.get('path') or '')} not used ({e(tests.get('code') or '')}): "
                f"{e(tests.get('message') or '')}</div>")
    summary = tests.get("summary") or {}
    out = [(f'<div class="results" data-results="read">{e(summary.get("tests", 0))} test(s) from '
           f"<code>{e(tests.get('path') or '')}</code>: {e(_counts_text(summary))}")]
    for label, key in (("failed", "failed"), ("skipped", "skipped")):
        listed = tests.get(key) or {}
        if listed.get("ids"):
            more = f" and {listed['omitted']} more" if listed.get("omitted") else ""
            out.append(f'<div class="listed" data-listed="{label}">{label}: '
                       + ", ".join(f"<code>{e(t)}</code>" for t in listed["ids"]) + e(more)
                       + "</div>")
    out.append("</div>")
    rows = tests.get("requirements") or []
    if rows:
        passed = [r["requirement_id"] for r in rows if r.get("outcome") == "passed"]
        failing = [r["requirement_id"] for r in rows if r.get("outcome") == "failed"]
        if run_status != "passed" and passed:
            where = (f"on the tests of {subjects(failing)}" if failing
                     else "on tests mapped to no requirement, or outside its tests")
            out.append(f'<p class="elsewhere">The run {e(run_status)} {e(where)}; '
                       f"{e(subjects(passed))} passed on {'its' if len(passed) == 1 else 'their'} "
                       "own tests.</p>")
        out.append('<table class="rollup"><tr><th>requirement</th><th>outcome in this run</th>'
                   "<th>its tests</th><th>not passed</th></tr>")
        for row in rows:
            css = ROLLUP_STYLE.get(str(row.get("outcome")), "wait")
            bad = [t for t in row.get("listed") or [] if t.get("outcome") != "passed"]
            missing = "".join(f"<div>no test matched <code>{e(g)}</code></div>"
                              for g in row.get("missing_globs") or [])
            out.append(f'<tr data-requirement="{e(row.get("requirement_id", ""))}" '
                       f'data-outcome="{e(row.get("outcome", ""))}"><td>'
                       f"{e(row.get('requirement_id', ''))}</td><td>"
                       f"{badge(css, ICON[css], str(row.get('outcome', '')))}</td><td>"
                       f"{e(row.get('tests', 0))}: {e(_counts_text(row.get('counts') or {}))}</td>"
                       f'<td><ul class="testlist">{_test_items(bad)}</ul>{missing}</td></tr>')
        out.append("</table>")
    return "".join(out)


def _evidence_html(record_id: str, ev: Mapping[str, Any], anchor: str, budget: list[int],
                   cited: Sequence[tuple[Any, list[str]]]) -> str:
    machine = bool(ev.get("machine_observed"))
    seen = (badge("machine", "\u2699", "machine-observed") if machine
            else badge("claim", "\u270e", "claimed"))
    obs = ev.get("observation")
    current = ev.get("revision")
    head = [(f'<div class="evidence" id="{e(anchor)}" data-id="{e(record_id)}" '
             f'data-machine="{str(machine).lower()}" data-current-revision="{e(current or "")}">'
             f"<h3>{seen} <code>{e(record_id)}</code> "
             + (f"current revision {e(current)}" if current is not None else "no current revision"))]
    if ev.get("unavailable"):
        head.append(f' <span class="bad">({e(ev["unavailable"])})</span></h3>')
        head.append(_cited_html(current, cited))
        if ev.get("read"):
            head.append(f'<p>Read the stored text: <code>{e(" ".join(ev["read"]))}</code></p>')
        head.append("</div>")
        return "".join(head)
    if obs:
        status = str(obs.get("status", ""))
        css = RUN_STYLE.get(status, "wait")
        head.append(" " + badge(css, ICON[css], status, data_run_status=status))
    head.append("</h3>")
    head.append(_cited_html(current, cited))
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
        rows += observed_facts(ev.get("workspace"))
    table = "<dl class=\"meta\">" + "".join(
        f'<dt>{e(k)}</dt><dd data-key="{e(k)}">{e(v)}</dd>' for k, v in rows) + "</dl>"
    tests = ""
    if obs and ev.get("tests"):
        tests = _tests_block(ev["tests"], str(obs.get("status", "")), record_id)
    streams = ""
    if obs:
        streams = (_stream_html("stdout", obs.get("stdout"), record_id, budget)
                   + _stream_html("stderr", obs.get("stderr"), record_id, budget))
    elif ev.get("data_text"):
        streams = (f'<details class="data"><summary>record data</summary><pre>'
                   f'{e(clip(str(ev["data_text"]), DATA_TEXT_LIMIT))}</pre></details>')
    return "".join(head) + table + tests + streams + "</div>"
