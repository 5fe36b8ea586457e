"""Terminal views of notes, memory, the publication gate and pending answers.

The contract of a view is in :mod:`assay.ops.views`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["pending_answer", "publish_verdict", "saved_entries"]


def saved_entries(envelope: dict[str, Any], console: Any) -> None:
    """``note list`` / ``memory list|search``: admitted entries, then each unavailable line."""
    from rich.markup import escape

    data = envelope["data"]
    if data.get("enabled") is False:
        console.print("[dim]memory is switched off ([memory] enabled = false); nothing was read[/dim]")
        return
    for item in data["items"]:
        private = "" if item["audience"] == "project" else f"  [yellow]{item['audience']}[/yellow]"
        console.print(f"[bold]{escape(item['id'])}[/bold]@{item['revision']}  "
                      f"[dim]by {escape(item['author'])}[/dim]{private}")
        console.print("  " + escape(item["text"]))
        for src in item["sources"]:
            console.print(f"  [dim]from {escape(src['id'])}@{src['revision']}[/dim]")
    for line in data["unavailable"]:
        console.print(f"[red]{escape(line['line'])}[/red]")
    env = data["envelope"]
    console.print(f"[dim]{data['count']} admitted; envelope {env['status']}, "
                  f"{len(env['leaves'])} leaves, audience {env['audience']}[/dim]")


def publish_verdict(envelope: dict[str, Any], console: Any) -> None:
    """``publish check``: published or withheld, why, and every failing source."""
    from rich.markup import escape

    data = envelope["data"]
    colour = "green" if data["published"] else "red"
    console.print(f"[{colour}]{escape(data['line'])}[/{colour}]  "
                  f"[dim](attempts {data['attempts']})[/dim]")
    for failure in data["failures"]:
        console.print(f"  {escape(failure['id'])}@{failure['revision']}: {failure['reason']}")


def pending_answer(envelope: dict[str, Any], console: Any) -> None:
    """``pending answer``: bound, or why the answer could not bind."""
    from rich.markup import escape

    data = envelope["data"]
    colour = "green" if data["bound"] else "red"
    console.print(f"[{colour}]{escape(data['line'])}[/{colour}]")
