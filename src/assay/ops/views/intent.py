"""Terminal views of the intent operations: the readiness tree, the resume view, the status table.

The contract of a view is in :mod:`assay.ops.views`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["work_check", "work_resume", "work_status"]


STATUS_STYLE = {
    "reported_complete_with_current_evidence": ("green", "ready"),
    "awaiting_descendants": ("yellow", "awaiting descendants"),
    "reported_complete_needs_evidence": ("red", "needs evidence"),
    "stale_intent": ("red", "stale intent"),
    "failed": ("red", "failed"),
    "unverified": ("yellow", "unverified"),
    "not_started": ("dim", "not started"),
}


def _evidence_label(ref: dict[str, Any]) -> str:
    """Who wrote a cited version and, for a run of assay's runner, how it ended.

    ``machine: unit passed``, ``machine: unit failed, exit 1``, ``claim``, or
    ``unreadable`` when the cited version could not be read.
    """
    if ref.get("origin") is None:
        return "unreadable or missing"
    if not ref.get("machine_observed"):
        return str(ref["origin"])
    run = ref.get("run")
    if not run:
        return "machine-observed"
    exit_text = f", exit {run['exit_code']}" if run.get("exit_code") not in (None, 0) else ""
    return f"machine: {run.get('command') or 'run'} {run['status']}{exit_text}"


def work_check(envelope: dict[str, Any], console: Any) -> None:
    """``work check`` as a requirement tree with statuses, evidence and issues."""
    from rich.markup import escape
    from rich.tree import Tree

    report = envelope["data"]
    verdict = ("[bold green]ready for review[/bold green]" if report["ready_to_review"]
               else "[bold red]not ready for review[/bold red]")
    root = Tree(f"{escape(report['intent_record_id'])} (revision {report['intent_revision']}): "
                f"{verdict}")
    if report["plan"]["brief"]:
        root.add(f"[italic]{escape(report['plan']['brief'])}[/italic]")
    delta = {row["id"]: row for row in report["delta"]["requirements"]}
    results = {r["requirement_id"]: r for r in report["actual"]["results"]}
    plan = {r["id"]: r for r in report["plan"]["requirements"]}
    by_requirement: dict[str, list[dict[str, Any]]] = {}
    for issue in report["issues"]:
        key = issue.get("requirement_id") or ""
        by_requirement.setdefault(key if key in plan else "", []).append(issue)
    for issue in by_requirement.get("", []):
        root.add(f"[red]{escape(issue['code'])}[/red]: {escape(issue['message'])}")
    for error in report.get("record_errors", []):
        if error.get("read"):
            root.add(f"[red]{escape(error['id'])}[/red] unreadable: read it with assay "
                     + escape(" ".join(error["read"])))

    # Iterative: an intent may nest up to its requirement bound, past Python's recursion limit.
    stack = [(root, rid) for rid in reversed(report["plan"]["root_ids"])]
    while stack:
        node, rid = stack.pop()
        style, label = STATUS_STYLE.get(delta[rid]["status"], ("", delta[rid]["status"]))
        branch = node.add(f"[bold]{escape(rid)}[/bold] [{style}]{label}[/{style}]  "
                          f"{escape(plan[rid]['text'])}")
        for ref in results.get(rid, {}).get("evidence", []):
            branch.add(f"evidence {escape(ref['id'])}@{ref['revision']} "
                       f"({escape(_evidence_label(ref))})")
        for issue in by_requirement.get(rid, []):
            colour = "yellow" if issue.get("advisory") else "red"
            branch.add(f"[{colour}]{escape(issue['code'])}[/{colour}]: {escape(issue['message'])}")
        stack.extend((branch, child) for child in reversed(plan[rid]["child_ids"]))
    continuity = report.get("continuity") or {}
    if continuity:
        state = ("complete" if continuity.get("complete") else
                 "truncated" if continuity.get("truncated") else "incomplete")
        cont = root.add(f"continuity: {state}, {len(continuity.get('records', []))} records, "
                        f"{len(continuity.get('decisions', []))} decisions")
        for read in continuity.get("read_required", [])[:10]:
            cont.add("read: assay " + escape(" ".join(read["read_args"])))
    console.print(root)
    for step in report["next"]:
        console.print(f"next: {escape(step)}")


def work_resume(envelope: dict[str, Any], console: Any) -> None:
    """``work resume``: the resume view itself, then whether reads are mandatory."""
    data = envelope["data"]
    console.file.write(data["text"])
    if data["must_read_before_action"]:
        console.file.write("must_read_before_action: true (something was shortened)\n")


def work_status(envelope: dict[str, Any], console: Any) -> None:
    """``work status``: one row per intent with its readiness."""
    from rich.markup import escape
    from rich.table import Table

    data = envelope["data"]
    table = Table("intent", "ready", "requirements", "issues", "next")
    for row in data["intents"]:
        if "error" in row:
            table.add_row(escape(row["id"]), "[red]invalid[/red]", "", "",
                          escape(row["error"]["code"]))
            continue
        ready = "[green]yes[/green]" if row["ready_to_review"] else "[red]no[/red]"
        table.add_row(escape(row["id"]), ready, str(row["requirements"]),
                      str(row["issue_count"]), escape((row["next"] or [""])[0]))
    console.print(table)
