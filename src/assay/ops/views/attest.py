"""Terminal views of the attestation operations: the verdict of ``ci verify``.

The contract of a view is in :mod:`assay.ops.views`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ci_verify"]

_STYLE = {"agrees": "green", "disagrees": "red", "unverifiable": "yellow"}


def ci_verify(envelope: dict[str, Any], console: Any) -> None:
    """``ci verify``: the verdict, one line per requirement, then each disagreement."""
    from rich.markup import escape

    data = envelope["data"]
    colour = _STYLE[data["verdict"]]
    console.print(f"[bold {colour}]{escape(data['verdict'])}[/bold {colour}]")
    reason = data.get("reason")
    if reason:
        console.print(f"{escape(reason['code'])}: {escape(reason['message'])}")
    attestation = data.get("attestation") or {}
    if attestation:
        intent = attestation.get("intent") or {}
        console.print(f"{escape(str(intent.get('id')))} attested "
                      f"{escape(str(attestation.get('verdict')))} at "
                      f"{escape(str(attestation.get('commit')))[:12]}; "
                      f"{data['commit_count']} commit(s) since")
    for check in data.get("checks") or ():
        console.print(f"check {escape(check['name'])}: attested {escape(check['attested'])}, "
                      f"re-run {escape(check['now'])}")
    for row in data.get("requirements") or ():
        style = "green" if row["attested"] == row["now"] else "red"
        console.print(f"  [{style}]{escape(row['id'])}[/{style}]: attested "
                      f"{escape(row['attested'])}, re-run {escape(row['now'])}")
    for finding in data.get("disagreements") or ():
        console.print(f"[red]{escape(finding['kind'])}[/red]: {escape(finding['message'])}")
    console.print(f"summary: {escape(data['summary'])}")
    if data.get("junit"):
        console.print(f"junit: {escape(data['junit'])}")
    for step in envelope.get("next", []):
        console.print(f"next: {escape(step)}")
