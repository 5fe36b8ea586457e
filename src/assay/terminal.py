"""Text bound for a terminal: every control character made visible.

Record text, command output, principals and error messages can hold
terminal controls (ESC and the CSI and OSC sequences it starts, C1 controls
such as the one-byte CSI U+009B, a carriage return that overwrites a line,
bidirectional overrides that reorder what is shown). A terminal obeys them:
``ESC[2J`` clears the screen, OSC 8 plants a link, U+202E reverses the rest of
a line. Every readable view passes its text through :func:`visible` (the CLI
does it once for each result and error, see :mod:`assay.cli.render`), which
writes each such character as the JSON escape ``\\u001b`` that ``--format
json`` shows for it, so nothing is dropped and nothing is obeyed. Newlines and
tabs are kept; a CR LF pair is a line break.

Imports nothing of assay.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["visible", "visible_data"]

# C0 controls but tab and newline, DEL, C1 controls, and the characters that
# reorder or hide text: bidirectional marks, embeddings, overrides, isolates.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group(0)):04x}"


def visible(text: str) -> str:
    """``text`` with every control character written as a visible ``\\uXXXX`` escape.

    Cost: one regular-expression pass; text without controls comes back as it is.
    """
    return _CONTROL.sub(_escape, text.replace("\r\n", "\n"))


def visible_data(value: Any) -> Any:
    """``value`` (JSON data) with :func:`visible` applied to every string, keys included."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, dict):
        return {visible(k) if isinstance(k, str) else k: visible_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [visible_data(v) for v in value]
    return value
