"""Text bound for a terminal: every control and invisible character made visible.

Record text, command output, principals and error messages can hold
terminal controls (ESC and the CSI and OSC sequences it starts, C1 controls
such as the one-byte CSI U+009B, a carriage return that overwrites a line,
bidirectional overrides that reorder what is shown) and characters that show
nothing at all (zero-width spaces and joiners, tag characters and variation
selectors that can carry hidden text, line and paragraph separators). A
terminal obeys the first kind: ``ESC[2J`` clears the screen, OSC 8 plants a
link, U+202E reverses the rest of a line; the second kind hides text from
the person reading. Every readable view passes its text through
:func:`visible` (the CLI does it once for each result and error, see
:mod:`assay.cli.render`), which writes each such character as the JSON
escape ``\\u001b`` that ``--format json`` shows for it, so nothing is
dropped, hidden or obeyed. Newlines and tabs are kept; a CR LF pair is a
line break.

What is escaped (:data:`UNSAFE`): every control (Unicode category Cc) but
tab and newline, every format character (Cf: bidirectional controls, zero
width characters, the soft hyphen, the byte order mark, tag characters),
line and paragraph separators (Zl, Zp), lone surrogates (Cs), the variation
selectors, and the fillers that render blank (U+034F, the Hangul fillers,
U+17B4 and U+17B5). A test holds the set to the interpreter's Unicode data.

JSON shown to a person is never re-parsed after it was made visible:
``\\u009b`` in JSON text is the control again once parsed (rich's
``print_json`` does that), so :func:`json_view` prints the text as it is.

Imports nothing of assay; rich only inside :func:`json_view`.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["UNSAFE", "json_view", "visible", "visible_data", "visible_json"]

UNSAFE = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891"
    "\u08e2\u115f-\u1160\u17b4-\u17b5\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064"
    "\u2066-\u206f\u3164\ud800-\udfff\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f\U000e0100-\U000e01ef"
)
# Compiled at import: this module is loaded only to show something on a terminal.
_UNSAFE = re.compile(f"[{UNSAFE}]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    if code > 0xFFFF:  # as JSON writes it: a surrogate pair
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with every unsafe character written as a visible ``\\uXXXX`` escape.

    Cost: one regular-expression pass; text without such characters comes back as it is.
    """
    return _UNSAFE.sub(_escape, text.replace("\r\n", "\n"))


def visible_data(value: Any) -> Any:
    """``value`` (JSON data) with :func:`visible` applied to every string, keys included."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, dict):
        return {visible(k) if isinstance(k, str) else k: visible_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [visible_data(v) for v in value]
    return value


def visible_json(value: Any) -> str:
    """``value`` as indented JSON text whose unsafe characters are ``\\uXXXX`` escapes.

    The text denotes the same value (an escape is JSON for its character);
    print it as it is, never parse it again.
    """
    return visible(json.dumps(value, ensure_ascii=False, indent=2))


def json_view(value: Any) -> Any:
    """A rich renderable of ``value``: :func:`visible_json`, highlighted, never re-parsed."""
    from rich.highlighter import JSONHighlighter

    text = JSONHighlighter()(visible_json(value))
    text.no_wrap = True
    return text
