"""Terminal views of the evidence operations: a run, the list of runs, one run's record.

The contract of a view is in :mod:`assay.ops.views`.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["evidence_list", "evidence_run", "evidence_show"]


EVIDENCE_STYLE = {"passed": "green", "failed": "red"}
ROLLUP_STYLE = {"passed": "green", "failed": "red", "unverified": "yellow"}
TEST_MARK = {"passed": "\u2714", "failed": "\u2718", "error": "!", "skipped": "\u25cb"}
# Test ids a terminal line names before it counts the rest.
_LISTED = 10


def _listed(names: list[str], omitted: int) -> list[str]:
    """The first names, then how many more there are (``omitted`` were never listed)."""
    more = max(len(names) - _LISTED, 0) + omitted
    return names[:_LISTED] + ([f"and {more} more"] if more else [])


def _counts(counts: dict[str, Any]) -> str:
    return ", ".join(f"{counts[k]} {k}" for k in ("passed", "failed", "error", "skipped")
                     if counts.get(k)) or "no test ran"


def _observed(workspace: dict[str, Any] | None, console: Any) -> None:
    """The commit and workspace digest the run observed (both sides when they differ)."""
    from rich.markup import escape

    if not workspace:
        return
    sides = []
    for side in (workspace.get("before"), workspace.get("after")):
        if not side or not side.get("head"):
            sides.append("no git commit observed" if not side or side.get("status") in (
                None, "not_applicable") else f"git {side.get('status')}")
            continue
        branch = f" on {side['branch']}" if side.get("branch") else " (detached)"
        sides.append(f"commit {side['head']}{branch}, workspace sha256 "
                     f"{side.get('workspace_sha256') or 'not recorded'}")
    text = sides[0] if sides[0] == sides[1] else f"before: {sides[0]}; after: {sides[1]}"
    console.print(f"observed {escape(text)}")


def _tests(overview: dict[str, Any], run_status: str, console: Any) -> None:
    """A run's per-test summary and, per requirement, its outcome and its own tests."""
    from rich.markup import escape
    from rich.table import Column, Table

    if overview.get("status") != "read":
        console.print(f"[red]results file {escape(overview.get('path') or '')} not used "
                      f"({escape(overview.get('code') or 'unknown')})[/red]: "
                      f"{escape(overview.get('message') or '')}")
        return
    summary = overview.get("summary") or {}
    console.print(f"tests: {summary.get('tests', 0)} in {escape(overview.get('path') or '')}: "
                  f"{_counts(summary)}")
    for label, colour in (("failed", "red"), ("skipped", "yellow")):
        listed = overview.get(label) or {}
        if listed.get("ids"):
            console.print(f"[{colour}]{label}[/{colour}]: "
                          + escape(", ".join(_listed(listed["ids"], listed.get("omitted", 0)))))
    rows = overview.get("requirements") or []
    if not rows:
        return
    # The test ids need the room: they are the longest words and fold rather than wrap.
    table = Table(Column("requirement", no_wrap=True), Column("outcome", ratio=2),
                  Column("tests", ratio=2), Column("its tests", ratio=5, overflow="fold"),
                  expand=True)
    for row in rows:
        outcome = str(row.get("outcome"))
        colour = ROLLUP_STYLE.get(outcome, "yellow")
        said = f"[{colour}]{escape(outcome)}[/{colour}]"
        if outcome == "passed" and run_status != "passed":
            # Its own tests passed: the run's failure is not this requirement's.
            said += f" on its own tests; the run {escape(run_status)} elsewhere"
        names = [f"{TEST_MARK.get(t['outcome'], '?')} {t['id']}" for t in row.get("listed") or []]
        names = _listed(names, row.get("omitted", 0))
        names += [f"no test matched {g}" for g in row.get("missing_globs") or []]
        table.add_row(escape(str(row.get("requirement_id"))), said,
                      _counts(row.get("counts") or {}), escape("\n".join(names)))
    console.print(table)


def evidence_run(envelope: dict[str, Any], console: Any) -> None:
    """``evidence run``: the outcome, the workspace boundary and the reference to cite."""
    from rich.markup import escape

    from assay.canonical import canonical_text

    data = envelope["data"]
    colour = EVIDENCE_STYLE.get(data["status"], "yellow")
    exit_text = f", exit {data['exit_code']}" if data.get("exit_code") is not None else ""
    console.print(f"[bold {colour}]{escape(data['status'])}[/bold {colour}] "
                  f"{escape(data['receipt']['id'])} revision {data['receipt']['revision']} "
                  f"({data['duration_ms']} ms{exit_text}), origin {escape(data['origin'])}")
    console.print(f"workspace: {escape(data['progress'])}, "
                  f"{data['changed_path_count']} changed paths; posture {escape(data['posture'])}")
    _observed(data.get("workspace"), console)
    if data.get("redacted"):
        console.print("[yellow]secrets were redacted from the stored output[/yellow]")
    if data.get("discriminates") is not None:
        verdict = ("[green]discriminates[/green]" if data["discriminates"]
                   else "[red]does not discriminate[/red]")
        console.print(f"against the ref: {verdict}")
    results = data.get("results")
    if results:
        _tests(dict(results, requirements=results.get("rollups") or []), data["status"], console)
    console.print("cite: " + escape(canonical_text(data["evidence_ref"])))
    for step in envelope.get("next", []):
        console.print(f"next: {escape(step)}")


def evidence_list(envelope: dict[str, Any], console: Any) -> None:
    """``evidence list`` as a table: id, revision, status, origin, when, target."""
    from rich.table import Table

    table = Table("evidence", "rev", "status", "origin", "started", "ms", "for")
    for row in envelope["data"]["evidence"]:
        status = row["status"] or ("unreadable" if row.get("unreadable") else "unknown")
        colour = EVIDENCE_STYLE.get(status, "yellow")
        target = row.get("target") or {}
        table.add_row(row["id"], str(row["revision"]),
                      f"[{colour}]{status}[/{colour}]", row["origin"],
                      row.get("started_at") or "", str(row.get("duration_ms") or ""),
                      f"{target['intent']}#{target['requirement']}" if target else "")
    console.print(table)


def evidence_show(envelope: dict[str, Any], console: Any) -> None:
    """``evidence show``: who observed it, the command's outcome and the output tails."""
    from rich.markup import escape

    data = envelope["data"]
    record = data["record"]
    seen = ("[blue]machine-observed[/blue]" if data.get("machine_observed")
            else "[yellow]claimed[/yellow]")
    console.print(f"[bold]{escape(record['id'])}[/bold] revision {record['revision']} {seen} "
                  f"(origin {escape(str(record.get('origin')))})")
    body = record.get("data")
    observation = body.get("observation") if isinstance(body, dict) else None
    if isinstance(observation, dict):
        colour = EVIDENCE_STYLE.get(str(observation.get("status")), "yellow")
        console.print(f"[{colour}]{escape(str(observation.get('status')))}[/{colour}] exit "
                      f"{observation.get('exit_code')} in {observation.get('duration_ms')} ms: "
                      + escape(" ".join(str(a) for a in observation.get("argv") or [])))
        from assay.evidence.review import observed_workspace, results_overview

        _observed(observed_workspace(body), console)
        overview = results_overview(body, limit=_LISTED)
        if overview is not None:
            _tests(overview, str(observation.get("status")), console)
        for name in ("stdout", "stderr"):
            stream = observation.get(name) or {}
            if stream.get("tail"):
                console.print(f"[dim]{name} tail (sha256 {stream.get('sha256')}):[/dim]")
                console.print(stream["tail"].rstrip(), markup=False, highlight=False)
    else:
        console.print_json(json.dumps(body, ensure_ascii=False))
