"""Terminal view of setting a project up.

The contract of a view is in :mod:`assay.ops.views`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["init"]


def init(envelope: dict[str, Any], console: Any) -> None:
    """``init``: the scope and the files created."""
    from rich.markup import escape

    data = envelope["data"]
    console.print(f"[bold]{escape(str(data.get('scope', '')))}[/bold] "
                  + ("created" if data.get("created") else "already initialised")
                  + f" at {escape(str(data.get('root', '')))}")
    ledger = data.get("ledger") or {}
    if ledger:
        console.print(f"  ledger: {escape(str(ledger.get('backend')))} "
                      f"{escape(str(ledger.get('location')))}, revision "
                      f"{ledger.get('ledger_revision')}")
    for step in envelope.get("next", []):
        console.print(f"next: {escape(step)}")
