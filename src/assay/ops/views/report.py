"""Terminal view of a written review report.

The contract of a view is in :mod:`assay.ops.views`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["report_written"]


def report_written(envelope: dict[str, Any], console: Any) -> None:
    """``report``: the verdict in words, where the page is, and what it shows."""
    from rich.markup import escape

    data = envelope["data"]
    ready = data["ready_to_review"]
    if ready is None:
        verdict = "[bold]readiness not assessed[/bold] (no intent named)"
    elif ready:
        verdict = "[bold green]\u2714 ready to review[/bold green]"
    else:
        verdict = "[bold red]\u2718 not ready to review[/bold red]"
    console.print(f"{verdict} at ledger revision {data['ledger_revision']}")
    console.print(f"wrote {escape(data['path'])} ({data['bytes']:,} bytes; sections "
                  f"{escape(', '.join(data['sections']))})")
    publication = data["publication"]
    console.print(f"publication gate: {escape(publication['line'])} "
                  f"({publication['sources']} record versions)")
