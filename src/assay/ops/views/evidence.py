"""Terminal views of the evidence operations: a run, the list of runs, one run's record.

The contract of a view is in :mod:`assay.ops.views`.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["evidence_list", "evidence_run", "evidence_show"]


EVIDENCE_STYLE = {"passed": "green", "failed": "red"}


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
    if data.get("redacted"):
        console.print("[yellow]secrets were redacted from the stored output[/yellow]")
    if data.get("discriminates") is not None:
        verdict = ("[green]discriminates[/green]" if data["discriminates"]
                   else "[red]does not discriminate[/red]")
        console.print(f"against the ref: {verdict}")
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
        for name in ("stdout", "stderr"):
            stream = observation.get(name) or {}
            if stream.get("tail"):
                console.print(f"[dim]{name} tail (sha256 {stream.get('sha256')}):[/dim]")
                console.print(stream["tail"].rstrip(), markup=False, highlight=False)
    else:
        console.print_json(json.dumps(body, ensure_ascii=False))
