"""Rendering of operation results for people and for pipes.

JSON output is one canonical line per result, so the same ledger revision
and inputs print byte-identical text. Readable output (a terminal, or
``--format table``) goes through ``rich`` when available, which honours
``NO_COLOR``; rich is imported only here and only for readable output.

Two rules hold for every readable view, here in one place. Nothing a view
shows reaches the terminal as a control: :func:`readable` and
:func:`readable_error` pass the whole result or error through
:func:`assay.terminal.visible` before any view sees it. And nothing is cut:
a plain line is written whole (the terminal wraps it, a pipe keeps it one
line, so a printed command stays one line), while trees and tables wrap
their text to the width and fold a word longer than a column, never crop it
(see :func:`_console`).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable

from assay.cli import on_terminal
from assay.errors import EXIT_USAGE, AssayError
from assay.ops import Operation

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["RAW", "READABLE", "fail", "json_line", "readable", "readable_error"]


def json_line(value: Any) -> str:
    """One canonical JSON line (RFC 8785) followed by a newline.

    A result may embed many records: it is bounded by what it holds, not by
    the input bounds of one document (:func:`assay.canonical.output_text`).
    """
    from assay.canonical import output_text

    return output_text(value) + "\n"


def _canonical_raw(envelope: dict[str, Any], args: dict[str, Any]) -> str:
    data = envelope["data"]
    if args.get("digest"):
        return str(data["digest"]) + "\n"
    if args.get("fingerprint"):
        return str(data["fingerprint"]) + "\n"
    return str(data["canonical"]) + "\n"


def _get_raw(envelope: dict[str, Any], args: dict[str, Any]) -> str | None:
    if args.get("raw"):
        return str(envelope["data"]["raw"]) + "\n"
    return None


def _hook_answer(envelope: dict[str, Any], args: dict[str, Any]) -> str:
    # What the harness reads: its answer as one JSON line, or nothing at all.
    data = envelope["data"]
    if data.get("harness") == "cursor" and data.get("notice"):
        # Cursor's stop answer has no field for the person; its hooks log
        # keeps standard error.
        import sys

        sys.stderr.write(str(data["notice"]) + "\n")
    answer = data.get("answer")
    return json_line(answer) if answer is not None else ""


# Operations whose CLI output is bare text (whatever the format) when the
# function returns a string; None falls back to the normal rendering.
RAW: dict[str, Callable[[dict[str, Any], dict[str, Any]], str | None]] = {
    "canonical": _canonical_raw,
    "get": _get_raw,
    "hook.stop": _hook_answer,
    "hook.tool": _hook_answer,
}

# Operation name -> function that prints a readable view of its envelope.
READABLE: dict[str, Callable[[dict[str, Any]], None]] = {}


_CONSOLE: Any = None


def _console(stderr: bool = False) -> Any:
    """A rich console for readable output that never cuts text (see the module docstring)."""
    global _CONSOLE
    if _CONSOLE is None:
        from rich.console import Console
        from rich.errors import StyleError
        from rich.table import Table
        from rich.text import Span

        class Readable(Console):
            def print(self, *objects: Any, **kw: Any) -> None:
                if any(not isinstance(o, str) for o in objects):
                    # A tree or table: wrap to the width rather than crop, fold long words.
                    kw.setdefault("soft_wrap", False)
                    for table in (o for o in objects if isinstance(o, Table)):
                        for column in table.columns:
                            if column.overflow == "ellipsis":
                                column.overflow = "fold"
                super().print(*objects, **kw)

            def render_str(self, text: str, **kw: Any) -> Any:
                # No view makes a hyperlink, so a [link=...] tag came from data a view
                # forgot to escape: drop the link (its OSC 8 sequence), keep the text.
                rendered = super().render_str(text, **kw)
                spans = []
                for span in rendered.spans:
                    try:
                        style = self.get_style(span.style)
                    except StyleError:
                        spans.append(span)
                        continue
                    spans.append(Span(span.start, span.end, style.update_link(None))
                                 if style.link else span)
                rendered.spans = spans
                return rendered

        _CONSOLE = Readable
    return _CONSOLE(stderr=stderr, no_color=bool(os.environ.get("NO_COLOR")) or None,
                    highlight=False, soft_wrap=True)


def readable(op: Operation, envelope: dict[str, Any]) -> None:
    """Print a readable view of a successful result, every control in it made visible."""
    from rich.markup import escape

    from assay.terminal import json_view, visible, visible_data

    special = READABLE.get(op.name)
    if special is not None:
        special(visible_data(envelope))
        _omitted(visible_data(envelope["data"]))
        return
    console = _console()
    revision = envelope.get("ledger_revision")
    title = f"[bold]{op.name}[/bold]" + (f"  (ledger revision {revision})" if revision else "")
    console.print(title)
    console.print(json_view(envelope["data"]), soft_wrap=True)
    for step in envelope.get("next", []):
        console.print(f"next: {escape(visible(step))}")


def _omitted(data: Any) -> None:
    """Under a bounded answer's own view: what it left out and the reads that recover it."""
    if not isinstance(data, dict) or not data.get("truncated"):
        return
    import shlex

    from rich.markup import escape

    console = _console()
    counts = ", ".join(f"{n} {kind.replace('_', ' ')}" for kind, n in data["omitted"].items() if n)
    console.print(f"not shown: {escape(counts)}")
    for read in data.get("read_more", []):
        console.print(f"read: {escape(shlex.join(['assay', *read['read_args']]))}")


def fail(err: AssayError, as_json: bool) -> int:
    """Print ``err`` on stderr (one JSON line, or readable text); return its exit status."""
    if as_json:
        from assay.ops import error_envelope

        line = json.dumps(error_envelope(err), ensure_ascii=False, sort_keys=True,
                          separators=(",", ":")) + "\n"
        sys.stderr.write(on_terminal(line, sys.stderr))
    else:
        readable_error(err)
    return err.exit_code if err.exit_code else EXIT_USAGE


def readable_error(err: AssayError) -> None:
    """Print an error for a person: code, message, pointer, action (controls made visible)."""
    from assay.terminal import visible_data

    shown = visible_data(err.to_dict())
    try:
        console = _console(stderr=True)
    except ImportError:  # pragma: no cover - rich is a dependency
        sys.stderr.write(f"error [{err.code}]: {shown['message']}\n")
        return
    from rich.markup import escape

    console.print(f"[bold red]error[/bold red] {escape(f'[{err.code}]')}: "
                  f"{escape(shown['message'])}")
    if "pointer" in shown:
        console.print(f"  at {escape(shown['pointer'])}")
    if shown.get("action"):
        console.print(f"  next: {escape(shown['action'])}")


_STATUS_STYLE = {
    "reported_complete_with_current_evidence": ("green", "ready"),
    "awaiting_descendants": ("yellow", "awaiting descendants"),
    "reported_complete_needs_evidence": ("red", "needs evidence"),
    "stale_intent": ("red", "stale intent"),
    "failed": ("red", "failed"),
    "unverified": ("yellow", "unverified"),
    "not_started": ("dim", "not started"),
}


def evidence_label(ref: dict[str, Any]) -> str:
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


def _work_check_tree(envelope: dict[str, Any]) -> None:
    """``work check`` as a requirement tree with statuses, evidence and issues."""
    from rich.markup import escape
    from rich.tree import Tree

    report = envelope["data"]
    console = _console()
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
        style, label = _STATUS_STYLE.get(delta[rid]["status"], ("", delta[rid]["status"]))
        branch = node.add(f"[bold]{escape(rid)}[/bold] [{style}]{label}[/{style}]  "
                          f"{escape(plan[rid]['text'])}")
        for ref in results.get(rid, {}).get("evidence", []):
            branch.add(f"evidence {escape(ref['id'])}@{ref['revision']} "
                       f"({escape(evidence_label(ref))})")
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


READABLE["work.check"] = _work_check_tree


def _work_resume_text(envelope: dict[str, Any]) -> None:
    """``work resume``: the resume view itself, then whether reads are mandatory."""
    data = envelope["data"]
    sys.stdout.write(data["text"])
    if data["must_read_before_action"]:
        sys.stdout.write("must_read_before_action: true (something was shortened)\n")


def _work_status_table(envelope: dict[str, Any]) -> None:
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
    console = _console()
    console.print(table)


READABLE["work.resume"] = _work_resume_text
READABLE["work.status"] = _work_status_table


_EVIDENCE_STYLE = {"passed": "green", "failed": "red"}


def _evidence_run(envelope: dict[str, Any]) -> None:
    """``evidence run``: the outcome, the workspace boundary and the reference to cite."""
    from rich.markup import escape

    from assay.canonical import canonical_text

    data = envelope["data"]
    console = _console()
    colour = _EVIDENCE_STYLE.get(data["status"], "yellow")
    exit_text = f", exit {data['exit_code']}" if data.get("exit_code") is not None else ""
    console.print(f"[bold {colour}]{escape(data['status'])}[/bold {colour}] "
                  f"{escape(data['receipt']['id'])} revision {data['receipt']['revision']} "
                  f"({data['duration_ms']} ms{exit_text}), origin {escape(data['origin'])}")
    console.print(f"workspace: {escape(data['progress'])}, "
                  f"{data['changed_path_count']} changed paths; posture {escape(data['posture'])}")
    if data.get("redacted"):
        console.print("[yellow]secrets were redacted from the stored output[/yellow]")
    if data.get("discriminates") is not None:
        verdict = ("[green]discriminates[/green]" if data["discriminates"]
                   else "[red]does not discriminate[/red]")
        console.print(f"against the ref: {verdict}")
    console.print("cite: " + escape(canonical_text(data["evidence_ref"])))
    for step in envelope.get("next", []):
        console.print(f"next: {escape(step)}")


def _evidence_list(envelope: dict[str, Any]) -> None:
    """``evidence list`` as a table: id, revision, status, origin, when, target."""
    from rich.table import Table

    table = Table("evidence", "rev", "status", "origin", "started", "ms", "for")
    for row in envelope["data"]["evidence"]:
        status = row["status"] or ("unreadable" if row.get("unreadable") else "unknown")
        colour = _EVIDENCE_STYLE.get(status, "yellow")
        target = row.get("target") or {}
        table.add_row(row["id"], str(row["revision"]),
                      f"[{colour}]{status}[/{colour}]", row["origin"],
                      row.get("started_at") or "", str(row.get("duration_ms") or ""),
                      f"{target['intent']}#{target['requirement']}" if target else "")
    _console().print(table)


READABLE["evidence.run"] = _evidence_run
READABLE["evidence.list"] = _evidence_list


def _packet_validation(envelope: dict[str, Any]) -> None:
    """``packet validate`` / ``packet render``: the derived summary, or every issue."""
    from rich.markup import escape
    from rich.table import Table

    data = envelope["data"]
    console = _console()
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


READABLE["packet.validate"] = _packet_validation
READABLE["packet.render"] = _packet_validation


_SOURCE_STYLE = {"delivered": "green", "pending": "yellow", "failed": "red", "blocked": "red"}


def _work_context(envelope: dict[str, Any]) -> None:
    """``work context``: the selected todo, each source's status, the reads still required."""
    from rich.markup import escape

    from assay.context.refs import resolve_pointer

    data = envelope["data"]
    wc = data["work_context"]
    console = _console()
    state = ("[green]complete[/green]" if wc["complete"]
             else "[red]incomplete: a source failed[/red]")
    console.print(f"[bold]work context[/bold] for goal {escape(wc['goal_id'])}: {state}")
    todo = None
    if wc.get("selected_todo_ref"):
        todo = resolve_pointer(data, wc["selected_todo_ref"]["$ref"])
    elif wc.get("selected_todo"):
        todo = wc["selected_todo"]
    if todo is not None:
        console.print(f"selected ({escape(wc['selection'])}): {escape(todo['id'])} "
                      + escape(f"[{todo['status']}]"))
        console.print(escape(todo["text"]))
    else:
        console.print(f"selected: none ({escape(wc['selection'])})")
    for source in wc["sources"]:
        colour = _SOURCE_STYLE.get(source["status"], "yellow")
        revision = source.get("revision")
        label = source.get("id") or source.get("path") or source.get("goal_id", "")
        console.print(f"  {escape(source['source'])} {escape(str(label))}: "
                      f"[{colour}]{escape(source['status'])}[/{colour}]"
                      + (f" (revision {escape(str(revision))[:16]})" if revision else ""))
    for read in wc["required_reads"]:
        console.print("read before work: " + escape(" ".join(read["command"])))
    for obligation in wc["user_obligations"]:
        console.print(f"user obligation: {escape(obligation['id'])} "
                      f"{escape(obligation['text'].splitlines()[0] if obligation['text'] else '')}")


def _todo_list(envelope: dict[str, Any]) -> None:
    """``todo list``: one full todo for an exact read, else a table of the selected todos."""
    from rich.markup import escape
    from rich.table import Table

    data = envelope["data"]
    console = _console()
    if "matched" in data:
        if not data["matched"]:
            console.print(f"{escape(data['todo_id'])}: not found in goal {escape(data['goal_id'])}")
            return
        todo = data["todo"]
        claim = todo.get("claim") or {}
        console.print(f"[bold]{escape(todo['id'])}[/bold] {escape(todo['owner_role'])} "
                      + escape(f"[{todo['status']}]")
                      + f" revision {todo['authority']['revision']}"
                      + (f", claimed by {escape(claim['principal'])}" if claim else ""))
        console.print(escape(todo["text"]))
        return
    table = Table("todo", "owner", "status", "title")
    for todo in data["todos"]:
        title = todo.get("title")
        if title is None:
            title = (todo["text"].splitlines() or [""])[0]
        table.add_row(escape(todo["id"]), escape(todo["owner_role"]), escape(todo["status"]),
                      escape(title))
    console.print(table)


READABLE["work.context"] = _work_context
READABLE["todo.list"] = _todo_list


# ---------------------------------------------------------------- loop

_POSTURE_STYLE = {"verified": "green", "contradicted": "red", "insufficient": "yellow",
                  "unknown": "yellow"}


def _loop_view(envelope: dict[str, Any]) -> None:
    """``loop start|next|resume|stop``: the receipt, the stop or the held prompt and its handle."""
    from rich.markup import escape

    from assay.canonical import canonical_text

    data = envelope["data"]
    console = _console()
    for warning in data.get("warnings", []):
        console.print(f"[yellow]warning {escape(warning['code'])}[/yellow]: "
                      f"{escape(warning['message'])}")
    receipt = data.get("receipt")
    if receipt:
        posture = receipt["verification"]["evidence_posture"]
        colour = _POSTURE_STYLE.get(posture["status"], "white")
        verdict = "committed" if receipt["accepted"] else "[red]rejected[/red]"
        console.print(f"{escape(receipt['roundId'])} attempt {receipt['attempt']}: {verdict}; "
                      f"posture [{colour}]{escape(posture['status'])}[/{colour}], "
                      f"machineBackedSuccess={str(posture['machineBackedSuccess']).lower()}")
        for item in receipt["verification"]["contract_items"]:
            console.print(f"  {escape(item['item_id'])}: {escape(item['status'])}")
        for check in (receipt.get("rejection") or {}).get("checks", []):
            console.print(f"  [red]{escape(check['check'])}[/red]: {escape(check['detail'])}")
        for diag in receipt["diagnostics"]:
            console.print(f"  diagnostic {escape(diag['code'])} at {escape(diag['pointer'])}")
    if data["status"] == "paused":
        console.print(f"[bold]loop {escape(data['loopId'])} paused[/bold]: resume it with "
                      f"'assay loop resume --loop {escape(data['loopId'])}'")
        return
    if data["status"] != "active":
        terminal = data.get("terminal") or {}
        console.print(f"[bold]loop {escape(data['loopId'])} stopped[/bold]: "
                      f"{escape(str(data.get('stopReason')))}; machineBackedSuccess="
                      f"{escape(str(terminal.get('machineBackedSuccess')).lower())}")
        return
    console.print(data["prompt"] or "", markup=False, highlight=False)
    console.print("[bold]submission handle[/bold] "
                  + escape(canonical_text(data["submissionHandle"])))


def _loop_status(envelope: dict[str, Any]) -> None:
    """``loop status``: state, round, handle and the last posture."""
    from rich.markup import escape

    from assay.canonical import canonical_text

    data = envelope["data"]
    console = _console()
    console.print(f"[bold]loop {escape(data['loopId'])}[/bold] {escape(data['status'])}"
                  + (f" ({escape(str(data['stopReason']))})" if data.get("stopReason") else "")
                  + f"; round {data['round']} attempt {data['attempt']}, "
                  f"{data['committedRounds']} committed")
    posture = data.get("lastPosture")
    if posture:
        colour = _POSTURE_STYLE.get(posture["status"], "white")
        console.print(f"last posture [{colour}]{escape(posture['status'])}[/{colour}]")
    if data.get("pendingRecovery"):
        console.print("[red]restore pending[/red] to "
                      + escape(str(data["pendingRecovery"].get("checkpointId")))
                      + ": retry 'assay loop recover' with that checkpoint")
    if data.get("submissionHandle"):
        console.print("submission handle " + escape(canonical_text(data["submissionHandle"])))


def _loop_recovered(envelope: dict[str, Any]) -> None:
    """``loop recover``: the directive's summary, then the redo prompt and its handle."""
    from rich.markup import escape

    rec = envelope["data"].get("recovery")
    if rec:
        console = _console()
        console.print(f"[bold]recovery {escape(rec['directiveId'])}[/bold] to "
                      f"{escape(rec['checkpoint_id'])}: restore verified; redo round "
                      f"{rec['redo_round']}, abandoned rounds "
                      f"{', '.join(str(r) for r in rec['abandoned_rounds']) or 'none'}")
        if rec["observed_skipped_files"]:
            console.print("  put back: " + escape(", ".join(rec["observed_skipped_files"][:20])))
    _loop_view(envelope)


def _loop_checkpoint(envelope: dict[str, Any]) -> None:
    """``loop checkpoint``: the checkpoint id and what it holds."""
    from rich.markup import escape

    data = envelope["data"]
    ck = data["checkpoint"]
    _console().print(f"checkpoint [bold]{escape(ck['checkpointId'])}[/bold] ({ck['role']}, "
                     f"round {ck['round']})" + ("" if data["recorded"] else " already recorded")
                     + (f": {data['files']} files, {data['captured']} captured"
                        if "files" in data else ""))


def _loop_explain(envelope: dict[str, Any]) -> None:
    """``loop explain``: level and why, context, budget, coverage, memory, checkpoints."""
    from rich.markup import escape

    d = envelope["data"]
    console = _console()
    console.print(f"[bold]loop {escape(d['loopId'])}[/bold] round {d['round']} attempt "
                  f"{d['attempt']} ({escape(d['source'])}, branch {escape(str(d['branchId']))})")
    console.print(f"level {d['level']}: {escape(str(d['levelReason']))}; freshness "
                  + escape(", ".join((d.get("freshness") or {}).get("reasons", []))))
    console.print(f"context {d['context']['mode']} ({d['context']['reason']}): "
                  f"{escape(d['context']['meaning'])}")
    console.print(f"budget {d['renderedChars']}/{d['budget']} characters"
                  + (f"; dropped {', '.join(d['droppedSections'])}" if d["droppedSections"] else "")
                  + ("; [red]protected overflow[/red]" if d["protectedOverflow"] else ""))
    cov = d["coverage"]
    console.print(f"coverage {'complete' if cov['complete'] else '[red]incomplete[/red]'}: "
                  f"{cov['rendered']} rendered / {cov['active']} active ("
                  + ", ".join(f"{k} {v}" for k, v in sorted(cov["byKind"].items())) + ")")
    memory = d.get("workingMemory")
    if memory:
        console.print("working memory: " + ", ".join(
            f"{k} {memory['counts'][k]}/{memory['sourceCounts'][k]}"
            for k in ("reports", "assumptions", "recoveries", "redirects")))
    if d.get("pendingRecovery"):
        console.print(f"[red]restore pending[/red] to {escape(d['pendingRecovery']['checkpointId'])}")
    for ck in d["checkpoints"]:
        console.print(f"  checkpoint {escape(ck['checkpointId'])} ({ck['role']}, round "
                      f"{ck['round']}, redo round {ck['redoRound']})")


def _loop_replay(envelope: dict[str, Any]) -> None:
    """``loop replay``: one line per replayed prompt."""
    d = envelope["data"]
    console = _console()
    for r in d["replays"]:
        verdict = "[green]match[/green]" if r["match"] else "[red]MISMATCH[/red]"
        console.print(f"round {r['round']} attempt {r['attempt']} ({r['source']}): {verdict} "
                      f"{r['stored']['promptHash'][:16]}")
        if r.get("reason"):
            console.print(f"  {r['reason']}")
        if r.get("firstDifference"):
            console.print(f"  first difference at line {r['firstDifference']['line']}")
    console.print(f"loop {d['loopId']}: " + ("every replay matches" if d["match"]
                                             else "[red]a replay differs[/red]"))


def _loop_audit(envelope: dict[str, Any]) -> None:
    """``loop audit``: branches, rounds (current and abandoned), directives, gates, terminal."""
    from rich.markup import escape

    d = envelope["data"]
    console = _console()
    console.print(f"[bold]loop {escape(d['loopId'])}[/bold] {escape(d['status'])}"
                  + (f" ({escape(str(d['stopReason']))})" if d.get("stopReason") else "")
                  + f"; branch {escape(str(d['branchId']))}, {d['committedRounds']} committed")
    for b in d["lineage"]:
        console.print(f"  branch {escape(b['branchId'])} from round {b['fromRound']}")
    for r in d["rounds"]:
        colour = _POSTURE_STYLE.get(str(r["evidencePosture"]), "white")
        mark = "" if r["currentBranch"] else " [dim](abandoned)[/dim]"
        console.print(f"round {r['round']} attempt {r['attempt']} {escape(str(r['outcome']))}: "
                      f"[{colour}]{escape(str(r['evidencePosture']))}[/{colour}] "
                      f"prompt {r['prompt']['level']}{mark}")
    for rej in d["rejections"]:
        console.print(f"  rejected round {rej['round']} attempt {rej['attempt']}: "
                      + escape(", ".join(rej["checks"])))
    for x in d["directives"]:
        console.print(f"recovery {escape(x['directiveId'])} ({x['origin']}) to "
                      f"{escape(x['target']['checkpoint_id'])}: {escape(x['status'])}; "
                      f"abandoned {x['abandonedRounds']}")
    for g in d["gateDecisions"]:
        console.print(f"gate {escape(g['gateId'])} round {g['round']}: {escape(g['decision'])}")
    if d.get("terminal"):
        t = d["terminal"]
        console.print(f"terminal: {t['stopReason']}, machineBackedSuccess="
                      f"{str(t['machineBackedSuccess']).lower()}, trajectory "
                      f"{json.dumps(t['machineBackedSuccessTrajectory'])}")


for _name in ("loop.start", "loop.next", "loop.resume", "loop.stop", "loop.pause"):
    READABLE[_name] = _loop_view
READABLE["loop.status"] = _loop_status
READABLE["loop.recover"] = _loop_recovered
READABLE["loop.checkpoint"] = _loop_checkpoint
READABLE["loop.explain"] = _loop_explain
READABLE["loop.replay"] = _loop_replay
READABLE["loop.audit"] = _loop_audit


# --- provenance: notes, memory, the publication gate --------------------------------


def _saved_entries(envelope: dict[str, Any]) -> None:
    """``note list`` / ``memory list|search``: admitted entries, then each unavailable line."""
    from rich.markup import escape

    data = envelope["data"]
    console = _console()
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


def _publish_verdict(envelope: dict[str, Any]) -> None:
    """``publish check``: published or withheld, why, and every failing source."""
    from rich.markup import escape

    data = envelope["data"]
    console = _console()
    colour = "green" if data["published"] else "red"
    console.print(f"[{colour}]{escape(data['line'])}[/{colour}]  "
                  f"[dim](attempts {data['attempts']})[/dim]")
    for failure in data["failures"]:
        console.print(f"  {escape(failure['id'])}@{failure['revision']}: {failure['reason']}")


def _pending_answer(envelope: dict[str, Any]) -> None:
    """``pending answer``: bound, or why the answer could not bind."""
    from rich.markup import escape

    data = envelope["data"]
    colour = "green" if data["bound"] else "red"
    _console().print(f"[{colour}]{escape(data['line'])}[/{colour}]")


READABLE["note.list"] = _saved_entries
READABLE["memory.list"] = _saved_entries
READABLE["memory.search"] = _saved_entries
READABLE["publish.check"] = _publish_verdict
READABLE["pending.answer"] = _pending_answer


# --- long work, the report and a few more readable views -------------------------------

# Operations that can take long without a progress display of their own
# (evidence runs and loop gates show their commands live already).
LONG_WORK = {
    "packet.validate": "validating the packet",
    "packet.render": "validating and rendering the packet",
    "report": "reading the ledger snapshot and writing the report",
    "work.attention": "checking the project's intents",
}


def working(op: Operation, interactive: bool) -> Any:
    """A context manager showing a spinner on stderr while ``op`` runs, on a terminal only."""
    import contextlib

    if not interactive or op.name not in LONG_WORK:
        return contextlib.nullcontext()
    return _console(stderr=True).status(LONG_WORK[op.name] + "\u2026", spinner="dots")


def _report_written(envelope: dict[str, Any]) -> None:
    """``report``: the verdict in words, where the page is, and what it shows."""
    from rich.markup import escape

    data = envelope["data"]
    console = _console()
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


def _init_view(envelope: dict[str, Any]) -> None:
    """``init``: the scope and the files created."""
    from rich.markup import escape

    data = envelope["data"]
    console = _console()
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


def _put_receipt(envelope: dict[str, Any]) -> None:
    """``put`` / ``retire`` / ``supersede``: the receipt in one line."""
    from rich.markup import escape

    data = envelope["data"]
    replayed = " [yellow](replayed)[/yellow]" if data.get("replayed") else ""
    _console().print(f"{escape(str(data['id']))} revision {data['revision']} at ledger revision "
                     f"{data['ledger_revision']}{replayed}  sha256 {data.get('data_sha256', '')}")


def _ledger_info(envelope: dict[str, Any]) -> None:
    """``ledger info`` as a two-column table."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(show_header=False)
    for key, value in envelope["data"].items():
        table.add_row(escape(key), escape(value if isinstance(value, str) else json.dumps(value)))
    _console().print(table)


def _evidence_show(envelope: dict[str, Any]) -> None:
    """``evidence show``: who observed it, the command's outcome and the output tails."""
    from rich.markup import escape

    data = envelope["data"]
    record = data["record"]
    console = _console()
    seen = ("[blue]machine-observed[/blue]" if data.get("machine_observed")
            else "[yellow]claimed[/yellow]")
    console.print(f"[bold]{escape(record['id'])}[/bold] revision {record['revision']} {seen} "
                  f"(origin {escape(str(record.get('origin')))})")
    body = record.get("data")
    observation = body.get("observation") if isinstance(body, dict) else None
    if isinstance(observation, dict):
        colour = _EVIDENCE_STYLE.get(str(observation.get("status")), "yellow")
        console.print(f"[{colour}]{escape(str(observation.get('status')))}[/{colour}] exit "
                      f"{observation.get('exit_code')} in {observation.get('duration_ms')} ms: "
                      + escape(" ".join(str(a) for a in observation.get("argv") or [])))
        for name in ("stdout", "stderr"):
            stream = observation.get(name) or {}
            if stream.get("tail"):
                console.print(f"[dim]{name} tail (sha256 {stream.get('sha256')}):[/dim]")
                console.print(stream["tail"].rstrip(), markup=False, highlight=False)
    else:
        console.print_json(json.dumps(body, ensure_ascii=False))


READABLE["report"] = _report_written
READABLE["init"] = _init_view
READABLE["put"] = _put_receipt
READABLE["retire"] = _put_receipt
READABLE["supersede"] = _put_receipt
READABLE["ledger.info"] = _ledger_info
READABLE["evidence.show"] = _evidence_show
