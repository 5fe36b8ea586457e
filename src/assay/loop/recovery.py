"""Checkpoints in the loop, and rollback: a recovery directive, a verified restore, the redo.

Records (all in the project's scope):

- ``loop-checkpoint:<loopId>:<ck-id>`` (``origin="machine"``): a
  checkpoint manifest (:mod:`assay.loop.checkpoint`), owned by one round of
  one branch. Its :func:`ref` (the reference's CheckpointRef) is held by the
  round's attempt and committed with the round; a checkpoint is *visible*
  (restorable) only through such a reference on the current branch.
- ``blob:<sha256>`` (``origin="machine"``): captured content.
- ``loop-recovery:<loopId>:<rv-id>`` (``origin="derived"``): a recovery
  directive. It is an event, not a round: it names the target checkpoint,
  the abandoned rounds, the machine-observed and the reported skipped files,
  preserved discoveries, wrong assumptions and the approaches tried, and the
  restore's outcome. Its id also names the child branch.

:func:`recover`, in order (each step's writes):

1. check the request (``recovery_invalid``, ``checkpoint_unavailable``,
   ``restore_pending``): nothing written;
2. take the lease; capture the current workspace (the abandoned boundary,
   so nothing is lost) and commit it with the directive (``pending``) and
   the head (``recovery.status = pending``) in one batch;
3. restore the target and re-observe;
4. verified: commit the directive (``verified``) and the head on the child
   branch (round = the redo round, facts as they were at the checkpoint plus
   the recovery brief, the redo prompt ``fresh_invocation``/``recovery_redo``).
   Otherwise put the abandoned boundary back (verified the same way), commit
   the directive as ``restore_failed`` and the head as it was before step 2,
   and raise ``restore_failed``. If even that cannot be verified the head
   stays ``pending``: every submission is then ``restore_pending`` until
   ``recover`` is retried with the same checkpoint.

Imports the base modules, config, the ledger contract, evidence and siblings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from assay.config import Project
from assay.errors import AssayError, ConflictError, RevisionConflict
from assay.evidence.posture import PostureFacts, derive_posture
from assay.ids import content_id
from assay.ledger.store import Store, Write
from assay.loop import identity
from assay.loop.checkpoint import (
    capture,
    checkpoint_record_id,
    load_blobs,
    manifest_problems,
    manifest_write,
    ref,
    restore,
    store_capture,
)
from assay.loop.session import (
    Lease,
    handle_of,
    limits_of,
    load_head,
    mismatch_error,
    now_text,
    prepare_held,
    prepared_view,
    refuse_paused,
)

__all__ = [
    "REASON_LIMIT",
    "backtrack_target",
    "checkpoint",
    "lineage",
    "recover",
    "restore_pending_error",
    "visible_checkpoints",
]

REASON_LIMIT = 1000
_FILES = 200


def lineage(head: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The current branch's ancestry: ``[{branchId, fromRound, parent, directive}]``."""
    return list(head.get("lineage") or [{"branchId": head.get("branchId", "main"),
                                         "fromRound": 1, "parent": None, "directive": None}])


def restore_pending_error(head: Mapping[str, Any]) -> AssayError:
    pending = head.get("recovery") or {}
    return ConflictError(
        f"a restore to checkpoint {pending.get('checkpointId')} is pending: the workspace is not "
        "at a verified boundary", code="restore_pending",
        details={"loopId": head["loopId"], "directiveId": pending.get("directiveId"),
                 "checkpointId": pending.get("checkpointId")},
        action=("Retry it: 'assay loop recover --handle H --checkpoint "
                f"{pending.get('checkpointId')} --reason R', or stop the loop."))


def _is_pending(head: Mapping[str, Any]) -> bool:
    return bool(head.get("recovery") and head["recovery"].get("status") == "pending")


def visible_checkpoints(store: Store, head: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every checkpoint the current branch may restore, oldest first."""
    refs: list[dict[str, Any]] = []
    last = int(head.get("lastCommittedRound") or 0)
    with store.reader() as reader:
        rounds = reader.get_many([identity.round_id(head["loopId"], n) for n in range(1, last + 1)])
    for n in range(1, last + 1):
        record = rounds.get(identity.round_id(head["loopId"], n))
        if record is not None and isinstance(record.data, dict):
            refs += record.data.get("checkpoints", [])
    if head.get("held"):
        refs += head["held"].get("checkpoints", [])
    return refs


def _trust(record: Any, target: Mapping[str, Any]) -> None:
    """Refuse a manifest that is not exactly the one the round's reference names.

    The reference held by the round is the authority: the stored version must
    be assay's own (``origin: machine``), carry the referenced id and content
    hash, and its content must still hash to it (``checkpoint_invalid``).
    """
    data = record.data
    problems = manifest_problems(data)
    if record.origin != "machine":
        problems.insert(0, "the stored version was not written by assay")
    if isinstance(data, dict) and (data.get("checkpointId") != target["checkpointId"]
                                   or data.get("contentHash") != target["contentHash"]):
        problems.append("it is not the content the round's reference names")
    if problems:
        raise AssayError(f"checkpoint {target['checkpointId']} cannot be trusted: "
                         + "; ".join(problems), code="checkpoint_invalid",
                         pointer="/checkpoint",
                         details={"checkpointId": target["checkpointId"], "problems": problems,
                                  "revision": record.revision},
                         action="Choose another checkpoint; this one's record was altered.")


def _invalid(message: str, where: str, **details: Any) -> AssayError:
    return AssayError(message, code="recovery_invalid", pointer=where,
                      details=details or None,
                      action="List restorable checkpoints with 'assay loop explain'.")


def checkpoint(store: Store, project: Project, handle: Mapping[str, str]) -> dict[str, Any]:
    """A ``mid`` checkpoint of the held round, held by its attempt (and committed with it)."""
    loop_id = (identity.parse_round_id(handle["roundId"]) or ("", 0))[0]
    record = load_head(store, loop_id, scope=project.scope)
    head = dict(record.data)
    refuse_paused(head)
    if handle_of(head) != dict(handle):
        raise mismatch_error(head)
    if _is_pending(head):
        raise restore_pending_error(head)
    lease = Lease(store, loop_id=loop_id, scope=project.scope, session_id=head["sessionId"],
                  limits=limits_of(head)).acquire()
    try:
        cap = capture(project.root)
        held = dict(head["held"])
        manifest, write = store_capture(store, project, cap, loop_id=loop_id,
                                        round_number=head["round"], role="mid",
                                        branch_id=head["branchId"],
                                        transaction_id=held["transactionId"],
                                        created_at=now_text())
        known = [r for r in held.get("checkpoints", [])
                 if r["checkpointId"] == manifest["checkpointId"]]
        if known:
            lease.release()
            return {"checkpoint": known[0], "recorded": False, "loopId": loop_id}
        held["checkpoints"] = [*held.get("checkpoints", []), ref(manifest)]
        head["held"] = held
        store.put_many([write, Write(id=record.id, data=head, scope=project.scope,
                                     origin="derived", expect_revision=record.revision),
                        lease.release_write()])
    except RevisionConflict:
        lease.release()
        raise ConflictError("the loop moved while the checkpoint was taken", code="lease_conflict",
                            retryable=True, action="Read 'assay loop status' and retry.") from None
    except BaseException:
        lease.release()
        raise
    return {"checkpoint": ref(manifest), "recorded": True, "loopId": loop_id,
            "files": len(manifest["fingerprints"]), "captured": len(manifest["contents"])}


def backtrack_target(store: Store, head: Mapping[str, Any], contradicted_rounds: int
                     ) -> dict[str, Any] | None:
    """The ``before`` checkpoint of the first of the last ``contradicted_rounds`` rounds."""
    first = int(head["round"]) - contradicted_rounds
    for r in visible_checkpoints(store, head):
        if r["role"] == "before" and r["round"] == first:
            return r
    return None


def _evaluations(store: Store, loop_id: str, rounds: Sequence[int]) -> list[dict[str, Any]]:
    ids = [identity.round_part_id(loop_id, n, "evaluation") for n in rounds]
    rids = [identity.round_id(loop_id, n) for n in rounds]
    with store.reader() as reader:
        evals = reader.get_many(ids)
        committed = reader.get_many(rids)
    out = []
    for n, eid, rid in zip(rounds, ids, rids):
        ev = evals.get(eid)
        rd = committed.get(rid)
        out.append({"round": n, "evaluation": ev.data.get("evaluation", {}) if ev else {},
                    "posture": ((rd.data.get("evidencePosture") or {}).get("status")
                                if rd else None)})
    return out


def _changed(a: Mapping[str, str], b: Mapping[str, str]) -> list[str]:
    return sorted({p for p, v in a.items() if b.get(p) != v} | {p for p in b if p not in a})


def recover(store: Store, project: Project, handle: Mapping[str, str], *, checkpoint_id: Any,
            reason: Any, origin: str = "agent", trigger_rule: str | None = None,
            trigger_findings: Sequence[Mapping[str, Any]] = (), enabled: bool = True,
            open_store: Callable[[], Store] | None = None,
            instruction: str | None = None,
            on_restore: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Abandon the current branch and restore a checkpoint. See the module docstring.

    ``on_restore(directive_id)`` is called once the pending directive is
    committed, just before the workspace is touched (a progress hook; a
    process that dies after it leaves the loop ``restore_pending``).
    """
    if not enabled:
        raise AssayError("recovery is disabled for this project", code="recovery_disabled",
                         action="Set [loop] recovery = true in assay.toml to use recover.")
    if not isinstance(reason, str) or not reason.strip() or len(reason.strip()) > REASON_LIMIT:
        raise _invalid(f"the reason is a non-blank text of at most {REASON_LIMIT} characters",
                       "/reason")
    if not isinstance(checkpoint_id, str) or not checkpoint_id.startswith("ck-"):
        raise _invalid("the checkpoint is a ck- id", "/checkpoint")
    reason = reason.strip()
    loop_id = (identity.parse_round_id(handle["roundId"]) or ("", 0))[0]
    record = load_head(store, loop_id, scope=project.scope)
    head = dict(record.data)
    refuse_paused(head)
    if handle_of(head) != dict(handle):
        return {"stale": True}
    pending = head.get("recovery") if _is_pending(head) else None
    if pending is not None and pending["checkpointId"] != checkpoint_id:
        raise restore_pending_error(head)
    target = next((r for r in visible_checkpoints(store, head)
                   if r["checkpointId"] == checkpoint_id), None)
    with store.reader() as reader:
        stored = reader.get(checkpoint_record_id(loop_id, checkpoint_id))
    if stored is None:
        raise AssayError(f"no checkpoint {checkpoint_id} in loop {loop_id}",
                         code="checkpoint_unavailable", pointer="/checkpoint",
                         action="List restorable checkpoints with 'assay loop explain'.")
    if target is None:
        raise _invalid(f"checkpoint {checkpoint_id} is not on the current branch (it belongs to "
                       "an abandoned round or another loop)", "/checkpoint",
                       checkpointId=checkpoint_id)
    manifest = stored.data
    _trust(stored, target)
    captured = load_blobs(store, manifest)
    redo = int(target["redoRound"])
    limits = limits_of(head)
    lease = Lease(store, loop_id=loop_id, scope=project.scope, session_id=head["sessionId"],
                  limits=limits, open_store=open_store).acquire()
    try:
        return _execute(store, project, record, head, lease, target=target, manifest=manifest,
                        captured=captured, redo=redo, reason=reason, origin=origin,
                        trigger_rule=trigger_rule, trigger_findings=trigger_findings,
                        pending=pending, instruction=instruction, on_restore=on_restore)
    except RevisionConflict:
        lease.release()
        raise ConflictError("the loop moved while the recovery ran", code="lease_conflict",
                            retryable=True, action="Read 'assay loop status'.") from None
    except BaseException:
        lease.release()
        raise


def _execute(store: Store, project: Project, record: Any, head: dict[str, Any], lease: Lease, *,
             target: Mapping[str, Any], manifest: Mapping[str, Any],
             captured: Mapping[str, bytes], redo: int, reason: str, origin: str,
             trigger_rule: str | None, trigger_findings: Sequence[Mapping[str, Any]],
             pending: Mapping[str, Any] | None, instruction: str | None,
             on_restore: Callable[[str], None] | None) -> dict[str, Any]:
    loop_id = head["loopId"]
    scope = project.scope
    last = int(head.get("lastCommittedRound") or 0)
    abandoned = list(range(redo, last + 1))
    revision = record.revision
    if pending is None:
        # Step 2: keep what is being abandoned, then commit the pending directive.
        current = capture(project.root)
        safety, safety_write = store_capture(store, project, current, loop_id=loop_id,
                                             round_number=head["round"], role="abandoned",
                                             branch_id=head["branchId"],
                                             transaction_id=head["held"]["transactionId"],
                                             created_at=now_text())
        count = int(head.get("recoveryCount", 0)) + 1
        directive_id = content_id("rv", {"loop": loop_id, "count": count,
                                         "checkpoint": target["checkpointId"],
                                         "transaction": head["held"]["transactionId"]})
        history = _evaluations(store, loop_id, abandoned)
        reported = sorted({f for h in history
                           for f in h["evaluation"].get("execution_report", {}).get(
                               "files_changed", [])})
        observed = _changed(manifest["fingerprints"], current.content["fingerprints"])
        directive = {
            "type": "recovery", "schema": "assay.loop.recovery.v1", "loopId": loop_id,
            "directiveId": directive_id, "origin": origin, "reason": reason,
            **({"trigger_rule": trigger_rule} if trigger_rule else {}),
            "target": {"checkpoint_id": target["checkpointId"],
                       "content_hash": target["contentHash"], "role": target["role"],
                       "round": target["round"], "round_id": target["roundId"],
                       "transaction_id": target.get("transactionId"), "redo_round": redo},
            "skipped_files": sorted(set(observed) | set(reported))[:_FILES],
            "observed_skipped_files": observed[:_FILES],
            "reported_skipped_files": reported[:_FILES],
            "abandoned_rounds": abandoned,
            "skipped_discoveries": [t for h in history for t in
                                    [*h["evaluation"].get("discovered_constraints", []),
                                     *h["evaluation"].get("emerged_subtasks", [])]][:20],
            "failed_rounds": [h["round"] for h in history
                              if h["posture"] == "contradicted"
                              or h["evaluation"].get("outcome") == "failed"],
            "trigger_findings": [dict(f) for f in trigger_findings][:10],
            "approaches": [h["evaluation"].get("output_summary", "")[:500] for h in history
                           if h["evaluation"].get("output_summary")][:10],
            "wrong_assumptions": [t for h in history
                                  for t in h["evaluation"].get("wrong_assumptions", [])][:20],
            "transaction_id": directive_id,
            "parentBranchId": head["branchId"],
            "heldRound": head["round"], "heldAttempt": head["attempt"],
            "abandonedBoundary": {"checkpointId": safety["checkpointId"],
                                  "contentHash": safety["contentHash"]},
            "evidencePosture": derive_posture(PostureFacts(round=head["round"], kind="rollback",
                                                           machine_backed_success=False)),
            "status": "pending", "restore": None, "attempts": 1, "createdAt": now_text(),
        }
        head.update({"recoveryCount": count,
                     "recovery": {"status": "pending", "directiveId": directive_id,
                                  "checkpointId": target["checkpointId"], "redoRound": redo,
                                  "origin": origin, "reason": reason,
                                  "safety": safety["checkpointId"]}})
        did = identity.recovery_id(loop_id, directive_id)
        receipts = store.put_many([
            safety_write,
            Write(id=did, data=directive, scope=scope, origin="derived", expect_revision=0),
            Write(id=record.id, data=head, scope=scope, origin="derived",
                  expect_revision=revision)])
        revision = receipts[-1].revision
        directive_revision = 1
    else:
        did = identity.recovery_id(loop_id, pending["directiveId"])
        with store.reader() as reader:
            found = reader.get(did)
            safety_record = reader.get(checkpoint_record_id(loop_id, pending["safety"]))
        assert found is not None and safety_record is not None
        if safety_record.origin != "machine" or manifest_problems(safety_record.data):
            raise AssayError("the abandoned boundary of the pending recovery cannot be trusted",
                             code="checkpoint_invalid", pointer="/checkpoint",
                             action="Stop the loop; its recovery records were altered.")
        directive = dict(found.data)
        directive["attempts"] = int(directive.get("attempts", 1)) + 1
        directive_revision = found.revision
        safety = safety_record.data

    # Step 3: restore and verify.
    if on_restore is not None:
        on_restore(directive["directiveId"])
    outcome = restore(project.root, manifest, captured)
    if outcome.verified:
        return _verified(store, project, head, revision, lease, directive, did,
                         directive_revision, outcome, manifest, target, instruction)

    # Step 4 (failure): put the abandoned boundary back, verified the same way.
    back = restore(project.root, safety, load_blobs(store, safety))
    directive.update({"status": "restore_failed",
                      "restore": {**outcome.to_dict(), "rolledBack": back.verified,
                                  "rollback": back.to_dict(), "at": now_text()}})
    if back.verified:
        head["recovery"] = None
    store.put_many([
        Write(id=did, data=directive, scope=scope, origin="derived",
              expect_revision=directive_revision),
        Write(id=record.id, data=head, scope=scope, origin="derived", expect_revision=revision),
        lease.release_write()])
    raise AssayError(
        f"the restore to {target['checkpointId']} could not be verified: {outcome.error}"
        + (f" ({outcome.error_path})" if outcome.error_path else ""), code="restore_failed",
        details={"loopId": loop_id, "directiveId": directive["directiveId"],
                 "checkpointId": target["checkpointId"], "restore": outcome.to_dict(),
                 "workspaceReturned": back.verified,
                 "restorePending": not back.verified},
        action=("The workspace is back where it was and the loop continues on its branch; fix "
                "the cause (a read-only file, a directory in the way) and recover again."
                if back.verified else
                "The workspace is at no verified boundary: fix the cause and retry the same "
                "recover, or stop the loop."))


def _verified(store: Store, project: Project, head: dict[str, Any], revision: int, lease: Lease,
              directive: dict[str, Any], did: str, directive_revision: int, outcome: Any,
              manifest: Mapping[str, Any], target: Mapping[str, Any],
              instruction: str | None) -> dict[str, Any]:
    loop_id = head["loopId"]
    scope = project.scope
    redo = int(target["redoRound"])
    branch = directive["directiveId"]
    if redo == head["round"]:
        base = dict(head["facts"])
    else:
        with store.reader() as reader:
            rd = reader.get(identity.round_id(loop_id, redo))
        assert rd is not None
        base = dict(rd.data["factsBefore"])
    brief = {"id": directive["directiveId"], "origin": directive["origin"],
             "reason": directive["reason"], "checkpointId": target["checkpointId"],
             "redoRound": redo, "abandonedRounds": directive["abandoned_rounds"],
             "observedSkippedFiles": directive["observed_skipped_files"],
             "reportedSkippedFiles": directive["reported_skipped_files"],
             "preservedDiscoveries": directive["skipped_discoveries"],
             "wrongAssumptions": directive["wrong_assumptions"],
             "approaches": directive["approaches"],
             "triggerFindings": [{"id": f.get("id"), "check": f.get("check"),
                                  "ref": f.get("ref"), "detail": f.get("detail", "")}
                                 for f in directive["trigger_findings"]]}
    base["recovery"] = brief
    # The redo round starts from the restored boundary: its before checkpoint
    # is the same content under the child branch's ownership.
    redo_manifest = {**dict(manifest), "round": redo, "role": "before", "branchId": branch,
                     "transactionId": None, "createdAt": now_text()}
    redo_manifest["checkpointId"] = content_id("ck", {
        "loop": loop_id, "round": redo, "role": "before", "branch": branch,
        "content": manifest["contentHash"], "transaction": None})
    from assay.loop.gate import git_to_dict

    restored = git_to_dict(outcome.observation)
    directive.update({"status": "verified",
                      "restore": {**outcome.to_dict(), "at": now_text()},
                      "restoredBoundary": restored})
    limits = limits_of(head)
    line = [b for b in lineage(head) if b["fromRound"] < redo]
    line.append({"branchId": branch, "fromRound": redo, "parent": head["branchId"],
                 "directive": directive["directiveId"]})
    held = prepare_held(
        loop_id=loop_id, session_id=head["sessionId"], branch_id=branch, round_number=redo,
        attempt=1, facts=base, limits=limits, commands=project.evidence_commands,
        context_mode="fresh_invocation", context_reason="recovery_redo",
        before={"id": did, "field": "restoredBoundary"}, plan=head.get("plan"),
        checkpoints=[ref(redo_manifest)], instruction=instruction)
    head.update({"branchId": branch, "lineage": line, "round": redo, "attempt": 1,
                 "lastCommittedRound": redo - 1 if redo > 1 else None, "facts": base,
                 "held": held, "consecutiveRejections": 0, "rejectionChecks": [],
                 "rejectionNotice": "", "recovery": None})
    store.put_many([
        manifest_write(project, redo_manifest),
        Write(id=did, data=directive, scope=scope, origin="derived",
              expect_revision=directive_revision),
        Write(id=identity.head_id(loop_id), data=head, scope=scope, origin="derived",
              expect_revision=revision),
        lease.release_write()])
    summary = {"directiveId": directive["directiveId"], "origin": directive["origin"],
               "reason": directive["reason"], "checkpoint_id": target["checkpointId"],
               "redo_round": redo, "restore_verified": True,
               "abandoned_rounds": directive["abandoned_rounds"],
               "observed_skipped_files": directive["observed_skipped_files"],
               "reported_skipped_files": directive["reported_skipped_files"],
               "preserved_discoveries": directive["skipped_discoveries"],
               "wrong_assumptions": directive["wrong_assumptions"],
               "trigger_finding_ids": [f.get("id") for f in directive["trigger_findings"]],
               "branchId": branch}
    return prepared_view(head) | {"recovery": summary}
