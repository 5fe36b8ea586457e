"""Terminal views of the loop operations: rounds, state, recovery, explanation, replay, audit.

The contract of a view is in :mod:`assay.ops.views`.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["loop_audit", "loop_checkpoint", "loop_explain", "loop_recovered", "loop_replay",
           "loop_round", "loop_status"]


POSTURE_STYLE = {"verified": "green", "contradicted": "red", "insufficient": "yellow",
                  "unknown": "yellow"}


def loop_round(envelope: dict[str, Any], console: Any) -> None:
    """``loop start|next|resume|stop``: the receipt, the stop or the held prompt and its handle."""
    from rich.markup import escape

    from assay.canonical import canonical_text

    data = envelope["data"]
    for warning in data.get("warnings", []):
        console.print(f"[yellow]warning {escape(warning['code'])}[/yellow]: "
                      f"{escape(warning['message'])}")
    receipt = data.get("receipt")
    if receipt:
        posture = receipt["verification"]["evidence_posture"]
        colour = POSTURE_STYLE.get(posture["status"], "white")
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


def loop_status(envelope: dict[str, Any], console: Any) -> None:
    """``loop status``: state, round, handle and the last posture."""
    from rich.markup import escape

    from assay.canonical import canonical_text

    data = envelope["data"]
    console.print(f"[bold]loop {escape(data['loopId'])}[/bold] {escape(data['status'])}"
                  + (f" ({escape(str(data['stopReason']))})" if data.get("stopReason") else "")
                  + f"; round {data['round']} attempt {data['attempt']}, "
                  f"{data['committedRounds']} committed")
    posture = data.get("lastPosture")
    if posture:
        colour = POSTURE_STYLE.get(posture["status"], "white")
        console.print(f"last posture [{colour}]{escape(posture['status'])}[/{colour}]")
    if data.get("pendingRecovery"):
        console.print("[red]restore pending[/red] to "
                      + escape(str(data["pendingRecovery"].get("checkpointId")))
                      + ": retry 'assay loop recover' with that checkpoint")
    if data.get("submissionHandle"):
        console.print("submission handle " + escape(canonical_text(data["submissionHandle"])))


def loop_recovered(envelope: dict[str, Any], console: Any) -> None:
    """``loop recover``: the directive's summary, then the redo prompt and its handle."""
    from rich.markup import escape

    rec = envelope["data"].get("recovery")
    if rec:
        console.print(f"[bold]recovery {escape(rec['directiveId'])}[/bold] to "
                      f"{escape(rec['checkpoint_id'])}: restore verified; redo round "
                      f"{rec['redo_round']}, abandoned rounds "
                      f"{', '.join(str(r) for r in rec['abandoned_rounds']) or 'none'}")
        if rec["observed_skipped_files"]:
            console.print("  put back: " + escape(", ".join(rec["observed_skipped_files"][:20])))
    loop_round(envelope, console)


def loop_checkpoint(envelope: dict[str, Any], console: Any) -> None:
    """``loop checkpoint``: the checkpoint id and what it holds."""
    from rich.markup import escape

    data = envelope["data"]
    ck = data["checkpoint"]
    console.print(f"checkpoint [bold]{escape(ck['checkpointId'])}[/bold] ({ck['role']}, "
                     f"round {ck['round']})" + ("" if data["recorded"] else " already recorded")
                     + (f": {data['files']} files, {data['captured']} captured"
                        if "files" in data else ""))


def loop_explain(envelope: dict[str, Any], console: Any) -> None:
    """``loop explain``: level and why, context, budget, coverage, memory, checkpoints."""
    from rich.markup import escape

    d = envelope["data"]
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


def loop_replay(envelope: dict[str, Any], console: Any) -> None:
    """``loop replay``: one line per replayed prompt."""
    d = envelope["data"]
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


def loop_audit(envelope: dict[str, Any], console: Any) -> None:
    """``loop audit``: branches, rounds (current and abandoned), directives, gates, terminal."""
    from rich.markup import escape

    d = envelope["data"]
    console.print(f"[bold]loop {escape(d['loopId'])}[/bold] {escape(d['status'])}"
                  + (f" ({escape(str(d['stopReason']))})" if d.get("stopReason") else "")
                  + f"; branch {escape(str(d['branchId']))}, {d['committedRounds']} committed")
    for b in d["lineage"]:
        console.print(f"  branch {escape(b['branchId'])} from round {b['fromRound']}")
    for r in d["rounds"]:
        colour = POSTURE_STYLE.get(str(r["evidencePosture"]), "white")
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
