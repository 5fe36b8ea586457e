"""Shared pieces of the report's markup: escaping, badges and the status vocabularies.

Every string that came from a record reaches the page through :func:`e`.
Imports the standard library only.
"""

from __future__ import annotations

import html
from typing import Any

__all__ = ["DASH", "ICON", "OUTCOME_STYLE", "POSTURE_STYLE", "RUN_STYLE", "badge", "clip", "e",
           "short"]

# css class by the agent's claimed outcome, the observed evidence posture, a run's status
OUTCOME_STYLE = {"success": "ok", "partial": "wait", "failed": "bad", "blocked": "none"}
POSTURE_STYLE = {"verified": "ok", "insufficient": "wait", "contradicted": "bad",
                 "unknown": "none", "not_applicable": "none"}
RUN_STYLE = {"passed": "ok", "failed": "bad", "timeout": "bad", "error": "bad",
             "aborted": "bad", "unavailable": "wait"}
# The icon that goes with each css class, so colour is never the only signal.
ICON = {"ok": "\u2714", "wait": "\u25d0", "bad": "\u2718", "none": "\u25cb"}
DASH = "\u2014"


def e(value: Any) -> str:
    """Escape any value for HTML text or a quoted attribute."""
    return html.escape(value if isinstance(value, str) else str(value), quote=True)


def badge(css: str, icon: str, label: str, **attrs: str) -> str:
    """A pill with an icon and a word; ``attrs`` become data attributes (``data_x`` -> data-x)."""
    extra = "".join(f' {k.replace("_", "-")}="{e(v)}"' for k, v in attrs.items())
    return f'<span class="badge {css}"{extra}>{e(icon)} {e(label)}</span>'


def clip(text: str, limit: int) -> str:
    """``text`` cut to its first ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[... {len(text) - limit} more characters]"


def short(digest: Any) -> str:
    """The first 12 characters of a long digest, with an ellipsis."""
    text = str(digest or "")
    return text[:12] + "\u2026" if len(text) > 16 else text
