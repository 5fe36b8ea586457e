"""Terminal view of packet validation and rendering.

The contract of a view is in :mod:`assay.ops.views`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["packet_validation"]


def packet_validation(envelope: dict[str, Any], console: Any) -> None:
    """``packet validate`` / ``packet render``: the derived summary, or every issue."""
    from rich.markup import escape
    from rich.table import Table

    data = envelope["data"]
    summary = data.get("summary")
    if data["issues"]:
        console.print(f"[bold red]invalid packet[/bold red]: {len(data['issues'])} issue(s)")
        table = Table("code", "file", "pointer", "message")
        for issue in data["issues"]:
            table.add_row(issue["code"], escape(issue["path"]), escape(issue["pointer"] or "(file)"),
                          escape(issue["message"]))
        console.print(table)
    elif summary:
        verdict = summary["publication"] or "not publishable"
        console.print(f"[bold green]valid packet[/bold green] {escape(summary['run_id'])}: "
                      f"{verdict} (status {summary['status']})")
        console.print(f"profile: requested {summary['requested_profile']}, achieved "
                      f"{summary['achieved_profile'] or 'none'}")
        console.print(f"claims: {summary['claims']} ({escape(_counts(summary['claim_states']))}); "
                      f"evidence: {summary['evidence']} "
                      f"({escape(_counts(summary['evidence_states']))})")
        if summary["material_gaps"]:
            console.print(f"material gaps: {', '.join(summary['material_gaps'])}")
        console.print(f"identity: {summary['identity']}")
    if data.get("rendered"):
        console.print(f"wrote {data['rendered']['path']} ({data['rendered']['digest']})")
    if data["withdrawn"]:
        console.print("[yellow]packet.md withdrawn: this packet is not publishable[/yellow]")


def _counts(counts: Any) -> str:
    """``supported 2, refuted 1``: a count map in words, never a Python repr."""
    if not isinstance(counts, dict):
        return str(counts)
    return ", ".join(f"{k} {v}" for k, v in counts.items()) or "none"
