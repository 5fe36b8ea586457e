"""Terminal views of the ledger operations: a write's receipt and the ledger summary.

The contract of a view is in :mod:`assay.ops.views`.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["ledger_info", "receipt"]




def receipt(envelope: dict[str, Any], console: Any) -> None:
    """``put`` / ``retire`` / ``supersede``: the receipt in one line."""
    from rich.markup import escape

    data = envelope["data"]
    replayed = " [yellow](replayed)[/yellow]" if data.get("replayed") else ""
    console.print(f"{escape(str(data['id']))} revision {data['revision']} at ledger revision "
                     f"{data['ledger_revision']}{replayed}  sha256 {data.get('data_sha256', '')}")


def ledger_info(envelope: dict[str, Any], console: Any) -> None:
    """``ledger info`` as a two-column table."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(show_header=False)
    for key, value in envelope["data"].items():
        table.add_row(escape(key), escape(value if isinstance(value, str) else json.dumps(value)))
    console.print(table)
