"""The governor engine: one submission in, one round transaction (or one rejection) out.

:meth:`Governor.submit` in order, each step's cost and writes:

1. parse the handle (``submission_handle_required``) and precheck the
   evaluation's own defects (``evaluation_invalid``,
   ``protocol_version_mismatch``): a payload defect is reported before
   anything about the loop;
2. read the head (``session_not_found`` names the loops that exist;
   ``loop_paused``); a handle that is not the held attempt writes nothing
   and returns the held prompt with ``ok`` and a
   ``submission_handle_mismatch`` warning (plus the committed receipt when
   the handle's own transaction committed), or the error when no prompt is
   held; then normalise the evaluation against the loop (pure;
   ``evaluation_invalid`` / ``contract_invalid`` write nothing and keep the
   handle valid);
3. take the loop's lease (one compare-and-set; ``lease_conflict``);
4. run the gate: the active contract's commands and the git observation
   (the expensive step: the commands' own run time);
5. judge, apply the enforcement checks, ask the stop policy;
6. commit ONE ``put_many``: the evaluation (``origin="claim"``), the
   observations (``origin="machine"``), the round transaction
   (``origin="derived"``), the head (compare-and-set on the revision read in
   step 1) and the lease release. Of two processes submitting the same
   handle, exactly one commits; the other gets ``lease_conflict`` or, once
   the winner committed, the held result.

The machine's verdict wins: the enforcement checks (:data:`ENFORCEMENT_CHECKS`)
refuse a completion the gate's commands contradict or an open contract
does not back, a continuation without a contract, a constraint violation
reported round after round, and a cited gate that is unknown, unapproved or
denied. A rejection commits a rejection record and the head instead (same
round, attempt + 1); each check code climbs its own ladder
(:func:`assay.loop.policy.ladder`: reject, reject, terminate), and every
rejected check states its count and the next consequence. The stop policy
may end the loop with ``enforcement_terminated``; the terminal event's
``stopDetail`` says which check, and which command, ended it.

:meth:`Governor.gate_check` records a high-risk gate decision for the held
round before the action is taken (:mod:`assay.loop.approval`).

Imports the base modules, config, ledger contract, evidence and siblings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from assay.canonical import digest
from assay.config import Project
from assay.errors import AssayError, ConflictError, RevisionConflict, UsageError
from assay.evidence.commands import run_command
from assay.ledger.store import Record, SourceRef, Store, Write
from assay.loop import identity
from assay.loop.approval import cited as cited_gates
from assay.loop.checkpoint import auto_checkpoint
from assay.loop.contract import ContractDecision, capable_commands, successor
from assay.loop.gate import GateResult, commands_to_run, git_from_dict, git_to_dict, judge
from assay.loop.gate import observe as gate_observe
from assay.loop.models import SubmissionHandle, validate
from assay.loop.policy import (
    DefaultStopPolicy,
    NullReporter,
    Reporter,
    StopPolicy,
    agent_stop_reason,
    ladder,
)
from assay.loop.recovery import backtrack_target, recover, restore_pending_error
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
    terminal_event,
    terminal_write,
)
from assay.loop.state import apply_round, next_criteria, recurring_violations, submission_context
from assay.loop.submission import normalise, precheck

__all__ = ["ENFORCEMENT_CHECKS", "Governor", "mismatch_error", "parse_handle"]

ENFORCEMENT_CHECKS = ("completion_contract_open", "completion_contradicted", "contract_required",
                      "recurring_violation", "gate_unknown", "gate_unapproved", "gate_denied")


def parse_handle(value: Any) -> dict[str, str]:
    """A handle given as an object or as its JSON text; ``submission_handle_required`` otherwise."""
    from assay.canonical import parse

    action = ("Pass the submissionHandle object exactly as the last response printed it; "
              "'assay loop status' shows the current one.")
    if value is None:
        raise UsageError("a submission handle is required", code="submission_handle_required",
                         pointer="/handle", action=action)
    if isinstance(value, str):
        try:
            value = parse(value.encode("utf-8", "surrogatepass"))
        except AssayError as exc:
            raise UsageError(f"the handle is not JSON: {exc.message}",
                             code="submission_handle_required", pointer="/handle",
                             action=action) from None
    handle: SubmissionHandle = validate(SubmissionHandle, value, code="submission_handle_required",
                                        base=("handle",), message="the submission handle is "
                                        "malformed", action=action)
    if identity.parse_round_id(handle.roundId) is None:
        raise UsageError(f"{handle.roundId!r} is not a round id (loop:<loopId>:round:<n>)",
                         code="submission_handle_required", pointer="/handle/roundId",
                         action=action)
    return {"sessionId": handle.sessionId, "roundId": handle.roundId,
            "transactionId": handle.transactionId}


class Governor:
    """The loop engine for one project and ledger. See the module docstring.

    Args:
        store: the opened ledger.
        project: the project (root, scope, evidence command declarations).
        policy: the caller's stop policy (default: the loop's own limits).
        reporter: progress hooks (default: none).
        open_store: opens a second connection for the lease renewal thread.
        runner: runs one evidence command (default
            :func:`assay.evidence.commands.run_command`).
    """

    def __init__(self, store: Store, project: Project, *, policy: StopPolicy | None = None,
                 reporter: Reporter | None = None, open_store: Callable[[], Store] | None = None,
                 runner: Callable[..., Any] = run_command) -> None:
        self.store = store
        self.project = project
        self.policy = policy
        self.reporter: Reporter = reporter or NullReporter()
        self.open_store = open_store
        self.runner = runner
        self._instruction: str | None = None

    # ------------------------------------------------------------ submit

    def submit(self, handle_value: Any, evaluation_value: Any, *,
               instruction: str | None = None) -> dict[str, Any]:
        """Accept one self-evaluation for the held attempt. See the module docstring.

        ``instruction`` is the host's current user instruction for the NEXT
        prompt (an audit fact of that prompt, never governance).
        """
        handle = parse_handle(handle_value)
        precheck(evaluation_value)
        loop_id, _ = identity.parse_round_id(handle["roundId"]) or ("", 0)
        record = load_head(self.store, loop_id, scope=self.project.scope)
        head = record.data
        refuse_paused(head)
        if handle_of(head) != handle:
            return self._stale(head, handle)
        if (head.get("recovery") or {}).get("status") == "pending":
            raise restore_pending_error(head)
        self._instruction = instruction
        facts = head["facts"]
        round_number = head["round"]
        limits = limits_of(head)
        policy = self.policy or DefaultStopPolicy(limits)
        commands = self.project.evidence_commands
        evaluation, diagnostics, submitted = normalise(
            evaluation_value, submission_context(facts, round_number, commands))
        self.reporter.submission_received(handle["roundId"])
        lease = Lease(self.store, loop_id=loop_id, scope=self.project.scope,
                      session_id=head["sessionId"], limits=limits,
                      open_store=self.open_store).acquire()
        done = False
        try:
            latest = load_head(self.store, loop_id)
            if latest.revision != record.revision:
                return self._stale(latest.data, handle)
            contract = facts["contract"]
            observations = gate_observe(self.project.root, self._before(head["held"]["before"]),
                                        commands_to_run(contract, commands),
                                        reporter=self.reporter, runner=self.runner,
                                        ignore=self.project.evidence_ignore)
            proposal = evaluation.get("round_contract")
            result = judge(
                round_number=round_number, evaluation=evaluation, contract=contract,
                command_statuses=observations.statuses(), required=observations.required,
                git_status=observations.after.status, comparison=observations.comparison,
                verification_configured=bool(capable_commands(commands)),
                superseded=bool(proposal and proposal.get("supersedes")))
            decision = successor(contract, result.closure, proposal, round_number)
            checks = self._enforcement(head, evaluation, result, decision)
            parts = {"evaluation": evaluation, "diagnostics": diagnostics, "submitted": submitted,
                     "raw": evaluation_value, "observations": observations.to_dict(),
                     "after": git_to_dict(observations.after),
                     "after_observation": observations.after}
            if checks:
                out = self._reject(record, lease, policy, checks, result, parts)
            else:
                out = self._commit(record, lease, policy, result, decision, parts)
            done = True
            return out
        except RevisionConflict:
            # Nothing of the batch was written (the lease release neither):
            # release it now, best effort, so the loop is not locked out.
            done = True
            lease.release()
            latest = load_head(self.store, loop_id)
            if handle_of(latest.data) != handle:
                return self._stale(latest.data, handle)
            raise ConflictError("the loop moved while this submission was judged",
                                code="lease_conflict", retryable=True,
                                details={"loopId": loop_id},
                                action="Read 'assay loop status' and submit again.") from None
        finally:
            if not done:
                lease.release()

    def _before(self, ref: Mapping[str, str] | None) -> Any:
        """The stored git boundary a round started from (None: compare as unknown)."""
        if ref is None:
            return None
        with self.store.reader() as reader:
            record = reader.get(ref["id"])
        return git_from_dict(record.data.get(ref["field"]) if record is not None else None)

    def stale_view(self, head: Mapping[str, Any], handle: Mapping[str, str]) -> dict[str, Any]:
        """What ``next`` and ``recover`` answer to a stale handle (see :meth:`_stale`)."""
        return self._stale(head, handle)

    def _stale(self, head: Mapping[str, Any], handle: Mapping[str, str]) -> dict[str, Any]:
        """The held prompt with a warning, or ``submission_handle_mismatch`` with none held."""
        committed = self._committed_receipt(head["loopId"], handle)
        if head["status"] != "active" or head.get("held") is None:
            if committed is not None:
                view = prepared_view(head, warnings=[self._warning(head)])
                return view | {"accepted": False, "stale": True, "receipt": None,
                               "committedReceipt": committed}
            raise mismatch_error(head, handle)
        view = prepared_view(head, warnings=[self._warning(head)])
        return view | {"accepted": False, "stale": True, "receipt": None,
                       "committedReceipt": committed}

    @staticmethod
    def _warning(head: Mapping[str, Any]) -> dict[str, Any]:
        return {"code": "submission_handle_mismatch",
                "message": "the handle no longer names the held attempt; nothing was submitted. "
                           "This is the held round: use its submissionHandle.",
                "submissionHandle": handle_of(head)}

    def _committed_receipt(self, loop_id: str, handle: Mapping[str, str]) -> dict[str, Any] | None:
        parsed = identity.parse_round_id(handle["roundId"])
        if parsed is None:
            return None
        with self.store.reader() as reader:
            record = reader.get(handle["roundId"])
        if record is None or record.data.get("transactionId") != handle["transactionId"]:
            return None
        return dict(record.data["receipt"])

    def _enforcement(self, head: Mapping[str, Any], evaluation: Mapping[str, Any],
                     result: GateResult, decision: ContractDecision) -> list[dict[str, Any]]:
        """The enforcement checks this submission fails, in :data:`ENFORCEMENT_CHECKS` order."""
        checks: list[dict[str, Any]] = []
        contract = head["facts"]["contract"]
        limits = limits_of(head)
        completing = evaluation["outcome"] == "success" and not evaluation["should_continue"]
        if completing and contract is not None and result.closure != "verified":
            open_items = [i for i, s in result.item_statuses.items() if s != "verified"]
            checks.append({"check": "completion_contract_open", "ref": contract["id"],
                           "detail": f"success was declared, but the active contract "
                                     f"{contract['id']} is not verified (items "
                                     f"{', '.join(open_items)}: "
                                     f"{', '.join(result.item_statuses[i] for i in open_items)})"})
        if completing and result.blocking:
            said = ", ".join(f"{name} {status}" for name, status in result.blocking)
            checks.append({"check": "completion_contradicted", "ref": result.blocking[0][0],
                           "detail": f"success was declared, but the machine says otherwise: "
                                     f"{said} in this submission's run; a claim never outweighs "
                                     "a check"})
        if (evaluation["should_continue"] and capable_commands(self.project.evidence_commands)
                and head["round"] < limits.max_rounds and decision.after is None
                and not (decision.before_id and decision.closed)):
            checks.append({"check": "contract_required", "ref": decision.before_id,
                           "detail": "continuing needs an active contract for the next round: "
                                     "propose round_contract"})
        for text in recurring_violations(head["facts"], head["round"],
                                         evaluation["constraint_violations"],
                                         limits.violation_rounds):
            checks.append({"check": "recurring_violation", "ref": text[:200],
                           "detail": f"the violation {text[:200]!r} is reported in "
                                     f"{limits.violation_rounds} rounds in a row: explain why it "
                                     "keeps happening and take a different approach"})
        return checks + cited_gates(self.store, head, evaluation.get("gate_ids", []))

    def _reject(self, record: Record, lease: Lease, policy: StopPolicy,
                checks: list[dict[str, Any]], result: GateResult,
                parts: Mapping[str, Any]) -> dict[str, Any]:
        head = dict(record.data)
        loop_id, round_number, attempt = head["loopId"], head["round"], head["attempt"]
        limits = limits_of(head)
        consecutive = head["consecutiveRejections"] + 1
        codes = list(dict.fromkeys(c["check"] for c in checks))
        earlier = head.get("ladder", {})
        counts = {code: int(earlier.get(code, 0)) + 1 for code in codes}
        stop = policy.after_rejection(round_number=round_number, consecutive=consecutive,
                                      counts=counts)
        for check in checks:
            step = ladder(counts[check["check"]], limits.ladder_terminate)
            following = ("terminate" if step.next == "terminate"
                         or consecutive + 1 >= limits.max_rejections else "reject")
            check["ladder"] = {**step.to_dict(),
                               "consequence": "terminate" if stop else "reject",
                               "next": None if stop else following}
        names = sorted(codes)
        notice = "\n".join(
            f"- {c['check']} ({c['ladder']['count']} in a row; "
            + (f"next time: {c['ladder']['next']}" if c["ladder"]["next"] else "the loop ends")
            + f"): {c['detail']}" for c in checks)
        detail = None
        if stop is not None:
            detail = (f"{consecutive} rejection(s) in a row; "
                      + "; ".join(f"{c['check']} x{c['ladder']['count']}: {c['detail']}"
                                  for c in checks))[:2000]
        criteria = self._criteria(head["facts"], round_number, parts["evaluation"], result)
        rejection = {
            "type": "rejection", "loopId": loop_id, "roundId": identity.round_id(loop_id, round_number),
            "round": round_number, "attempt": attempt,
            "transactionId": head["held"]["transactionId"], "sessionId": head["sessionId"],
            "checks": checks, "consecutive": consecutive, "evaluation": parts["evaluation"],
            "diagnostics": parts["diagnostics"], "evidencePosture": result.posture,
            "findings": result.findings, "observations": parts["observations"],
            "criteria": criteria, "itemStatuses": result.item_statuses,
            "prompt": head["held"]["prompt"], "promptInputs": head["held"]["promptInputs"],
            "factsBefore": head["facts"], "branchId": head["branchId"],
            "checkpoints": head["held"].get("checkpoints", []),
            "rejectedAt": now_text(), "stopReason": stop, "stopDetail": detail,
        }
        old_held = head["held"]
        escalate = names == sorted(head.get("rejectionChecks", []))
        head.update({"attempt": attempt + 1, "consecutiveRejections": consecutive,
                     "rejectionChecks": names, "rejectionNotice": notice, "ladder": counts})
        if stop is not None:
            head.update({"status": "stopped", "stopReason": stop, "stopDetail": detail,
                         "held": None})
            head["terminal"] = terminal_event(head, stop, detail)
        else:
            head["held"] = prepare_held(
                loop_id=loop_id, session_id=head["sessionId"], branch_id=head["branchId"],
                round_number=round_number, attempt=attempt + 1, facts=head["facts"],
                limits=limits, commands=self.project.evidence_commands,
                context_mode="fresh_invocation" if escalate else "same_round_retry",
                context_reason="rejection_escalation" if escalate else "enforcement_retry",
                before=old_held["before"], rejection_notice=notice, plan=head.get("plan"),
                checkpoints=old_held.get("checkpoints", []),
                instruction=(self._instruction if self._instruction is not None
                             else old_held["prompt"].get("currentUserInstruction")),
                checkpoint_warning=old_held.get("checkpointWarning"))
        rid = identity.rejection_id(loop_id, round_number, attempt)
        terminal = [terminal_write(self.project.scope, head)] if stop is not None else []
        self.store.put_many([
            *terminal,
            Write(id=rid, data=rejection, scope=self.project.scope, origin="derived",
                  expect_revision=self._revision(rid)),
            Write(id=record.id, data=head, scope=self.project.scope, origin="derived",
                  expect_revision=record.revision),
            lease.release_write(),
        ])
        self.reporter.submission_rejected(rejection["roundId"], names)
        if stop is not None:
            self.reporter.loop_stopped(loop_id, stop)
        receipt = {
            "roundId": rejection["roundId"], "round": round_number, "attempt": attempt,
            "transactionId": rejection["transactionId"], "accepted": False, "record": "none",
            "entered_history": False,
            "agent_success_claim": parts["evaluation"]["outcome"] == "success",
            "agent_outcome": parts["evaluation"]["outcome"],
            "objective_refinement": parts["evaluation"].get("objective_refinement"),
            "loop_stop_reason": stop,
            "rejection": {"checks": checks, "consecutive": consecutive, "record": rid},
            "verification": self._verification(result, criteria),
            "diagnostics": parts["diagnostics"],
        }
        return prepared_view(head) | {"accepted": False, "stale": False, "receipt": receipt}

    @staticmethod
    def _criteria(facts: Mapping[str, Any], round_number: int, evaluation: Mapping[str, Any],
                  result: GateResult) -> list[dict[str, Any]]:
        """Criterion statuses as this submission's machine facts and claims leave them."""
        return next_criteria(facts["criteria"], facts["contract"], result.item_statuses,
                             evaluation.get("criterion_claims", []), round_number,
                             result.command_verdict)

    def _verification(self, result: GateResult,
                      criteria: list[dict[str, Any]]) -> dict[str, Any]:
        return {"evidence_posture": result.posture, "checks": self._checks(result),
                "contract_items": self._items(result),
                "criteria": [{"id": c["id"], "status": c["status"],
                              "source": c.get("status_source")} for c in criteria]}

    @staticmethod
    def _checks(result: GateResult) -> list[dict[str, Any]]:
        return [{"field": "verification", "check": f["check"], "severity": f["severity"],
                 "detail": f["detail"], **({"ref": f["ref"]} if f.get("ref") else {})}
                for f in result.findings]

    @staticmethod
    def _items(result: GateResult) -> list[dict[str, Any]]:
        return [{"item_id": i, "status": s} for i, s in sorted(result.item_statuses.items())]

    def _commit(self, record: Record, lease: Lease, policy: StopPolicy, result: GateResult,
                decision: ContractDecision, parts: Mapping[str, Any]) -> dict[str, Any]:
        head = dict(record.data)
        loop_id, round_number = head["loopId"], head["round"]
        evaluation = parts["evaluation"]
        limits = limits_of(head)
        applied = apply_round(head["facts"], round_number=round_number, evaluation=evaluation,
                              decision=decision, item_statuses=result.item_statuses,
                              gated_contract=head["facts"]["contract"], progress=result.progress,
                              findings=result.findings, posture=result.posture,
                              max_active=limits.max_active_constraints,
                              command_verdict=result.command_verdict)
        stop = agent_stop_reason(evaluation["outcome"], evaluation["should_continue"])
        if stop is None:
            stop = policy.after_commit(round_number=round_number,
                                       progress=applied.facts["progress"])
        diagnostics = list(parts["diagnostics"]) + applied.diagnostics
        rid = identity.round_id(loop_id, round_number)
        transaction = head["held"]["transactionId"]
        old_held = head["held"]
        head.update({"facts": applied.facts, "lastCommittedRound": round_number,
                     "consecutiveRejections": 0, "rejectionChecks": [], "rejectionNotice": "",
                     "ladder": {}})
        if stop is not None:
            head.update({"status": "stopped", "stopReason": stop, "held": None})
            head["terminal"] = terminal_event(head, stop)
        checkpoint_writes: list[Write] = []
        if stop is None:
            refs, checkpoint_writes, warning = auto_checkpoint(
                self.store, self.project, loop_id=loop_id, round_number=round_number + 1,
                branch_id=head["branchId"], observation=parts["after_observation"],
                created_at=now_text())
            head.update({"round": round_number + 1, "attempt": 1})
            head["held"] = prepare_held(
                loop_id=loop_id, session_id=head["sessionId"], branch_id=head["branchId"],
                round_number=round_number + 1, attempt=1, facts=applied.facts, limits=limits,
                commands=self.project.evidence_commands, context_mode="fresh_invocation",
                context_reason="next_round",
                before={"id": identity.round_part_id(loop_id, round_number, "observation"),
                        "field": "after"}, plan=head.get("plan"), checkpoints=refs,
                instruction=self._instruction, checkpoint_warning=warning)
        changes = dict(applied.changes)
        observed = stop is None
        changes.update({
            "contract": {"before_id": decision.before_id, "after_id": decision.after_id,
                         "activated": decision.activated, "closed": decision.closed,
                         **({"superseded": True, "redirect_reason": decision.redirect_reason}
                            if decision.superseded else {}),
                         "closure": result.closure},
            "constraints_retraction": "observed" if observed else "not_observed",
            "constraints_activation": "observed" if observed else "not_observed",
            "constraints_active_after": ([c["text"] for c in applied.facts["constraints_active"]]
                                         if observed else None),
            "subtask_boundary": ({"label": evaluation.get("subtask_boundary_label") or
                                  f"Round {round_number}", "round": round_number}
                                 if evaluation.get("subtask_boundary") else None),
            "rollback": None,
        })
        next_artifact = head["held"]["prompt"] if head.get("held") else None
        receipt = {
            "roundId": rid, "round": round_number, "attempt": old_held["prompt"]["attempt"],
            "transactionId": transaction, "accepted": True, "record": "committed",
            "entered_history": True,
            "agent_success_claim": evaluation["outcome"] == "success",
            "agent_outcome": evaluation["outcome"],
            "objective_refinement": evaluation.get("objective_refinement"),
            "loop_stop_reason": stop,
            "reports": [{"path": "/" + f, "handling": self._handling(f, diagnostics)}
                        for f in parts["submitted"]],
            "changes": changes,
            "verification": self._verification(result, applied.facts["criteria"]),
            "prompt": (None if next_artifact is None else {
                "level": next_artifact["level"],
                "dropped_sections": list(next_artifact.get("droppedSections", [])),
                "context_mode": next_artifact["contextMode"],
                "context_reason": next_artifact["contextReason"],
                "current_user_instruction": next_artifact.get("currentUserInstruction")}),
            "diagnostics": diagnostics,
        }
        brief = record.data["facts"].get("recovery")
        if brief:
            receipt["recovery_checkpoint"] = {
                "checkpoint_id": brief["checkpointId"], "redo_round": brief["redoRound"],
                "origin": brief["origin"], "reason": brief["reason"], "restore_verified": True}
        eid = identity.round_part_id(loop_id, round_number, "evaluation")
        oid = identity.round_part_id(loop_id, round_number, "observation")
        evaluation_data = {"type": "evaluation", "loopId": loop_id, "roundId": rid,
                           "transactionId": transaction, "evaluation": evaluation,
                           "submitted": parts["raw"], "diagnostics": diagnostics}
        observation_data = {"type": "observation", "loopId": loop_id, "roundId": rid,
                            "transactionId": transaction, **parts["observations"],
                            "before": old_held["before"], "after": parts["after"]}
        round_data = {
            "type": "round", "schema": "assay.loop.round.v1", "loopId": loop_id, "roundId": rid,
            "round": round_number, "attempt": old_held["prompt"]["attempt"],
            "branchId": head["branchId"], "sessionId": head["sessionId"],
            "transactionId": transaction, "prompt": old_held["prompt"],
            "promptInputs": old_held["promptInputs"],
            "factsBefore": record.data["facts"], "compiled": applied.facts,
            "itemStatuses": result.item_statuses, "findings": result.findings,
            "evidencePosture": result.posture, "machineBackedSuccess": result.machine_backed_success,
            "contractDecision": changes["contract"], "stopReason": stop, "receipt": receipt,
            "proposal": evaluation.get("round_contract"),
            "evaluationRecord": eid, "observationRecord": oid, "committedAt": now_text(),
            "checkpoints": old_held.get("checkpoints", []),
        }
        scope = self.project.scope
        # On a child branch these ids already hold the abandoned round: the
        # new version supersedes it in place (history keeps the old one).
        expected = self._revisions([eid, oid, rid])
        terminal = [terminal_write(scope, head)] if stop is not None else []
        self.store.put_many([
            *checkpoint_writes,
            *terminal,
            Write(id=eid, data=evaluation_data, scope=scope, origin="claim",
                  expect_revision=expected[eid]),
            Write(id=oid, data=observation_data, scope=scope, origin="machine",
                  expect_revision=expected[oid]),
            Write(id=rid, data=round_data, scope=scope, origin="derived",
                  expect_revision=expected[rid],
                  sources=(SourceRef(eid, expected[eid] + 1, digest(evaluation_data)),
                           SourceRef(oid, expected[oid] + 1, digest(observation_data)))),
            Write(id=record.id, data=head, scope=scope, origin="derived",
                  expect_revision=record.revision),
            lease.release_write(),
        ])
        self.reporter.round_committed(rid, result.posture["status"])
        if stop is not None:
            self.reporter.loop_stopped(loop_id, stop)
        view = prepared_view(head) | {"accepted": True, "stale": False, "receipt": receipt}
        if stop is None and limits.backtrack_after > 0:
            return self._backtrack(head, view, result, limits.backtrack_after)
        return view

    def _revision(self, record_id: str) -> int:
        return self._revisions([record_id])[record_id]

    def _revisions(self, ids: list[str]) -> dict[str, int]:
        with self.store.reader() as reader:
            found = reader.get_many(ids)
        return {i: found[i].revision if i in found else 0 for i in ids}

    def _backtrack(self, head: Mapping[str, Any], view: dict[str, Any], result: GateResult,
                   after: int) -> dict[str, Any]:
        """Machine-triggered rollback after ``after`` contradicted rounds in a row.

        Runs after the round committed (the commit stands on its own). The
        target is the ``before`` checkpoint of the first contradicted round;
        without one, or when the restore fails, the loop simply continues and
        the response says why.
        """
        history = head["facts"].get("posture_history", [])
        if len(history) < after or any(s != "contradicted" for s in history[-after:]):
            return view
        target = backtrack_target(self.store, head, after)
        if target is None:
            return view | {"warnings": [*view["warnings"], {
                "code": "checkpoint_unavailable",
                "message": f"{after} contradicted rounds in a row, but no checkpoint to back "
                           "track to"}]}
        findings = [f for f in result.findings if f["check"] in ("claim_contradicted",
                                                                 "command_failed")]
        try:
            out = recover(self.store, self.project, handle_of(head) or {},
                          checkpoint_id=target["checkpointId"],
                          reason=f"{after} consecutive rounds had a contradicted evidence "
                                 "posture", origin="machine",
                          trigger_rule="repeated_contradiction", trigger_findings=findings,
                          open_store=self.open_store, instruction=self._instruction)
        except AssayError as exc:
            return view | {"warnings": [*view["warnings"], {
                "code": exc.code, "message": "machine backtrack failed: " + exc.message}]}
        receipt = dict(view["receipt"])
        rec = out["recovery"]
        receipt["changes"] = {**receipt["changes"], "rollback": {
            "redo_round": rec["redo_round"], "target_checkpoint_id": rec["checkpoint_id"],
            "preserved_discoveries": rec["preserved_discoveries"],
            "wrong_assumptions": rec["wrong_assumptions"],
            "observed_skipped_files": rec["observed_skipped_files"],
            "reported_skipped_files": rec["reported_skipped_files"],
            "abandoned_rounds": rec["abandoned_rounds"],
            "trigger_finding_ids": rec["trigger_finding_ids"], "origin": "machine",
            "reason": rec["reason"]}}
        return out | {"accepted": True, "stale": False, "receipt": receipt}

    @staticmethod
    def _handling(field: str, diagnostics: list[dict[str, str]]) -> str:
        touched = [d for d in diagnostics if d["pointer"] == "/" + field
                   or d["pointer"].startswith("/" + field + "/")]
        if any(d["code"] in ("unknown_field_dropped", "wrong_type_dropped", "blocker_dropped")
               and d["pointer"] == "/" + field for d in touched):
            return "dropped"
        return "normalized" if touched else "accepted"

    # ------------------------------------------------------------ gate check

    def gate_check(self, handle_value: Any, action: Any, *, descriptor: Any = None,
                   principal: str = "agent", enabled: bool = True) -> dict[str, Any]:
        """Record a gate decision for a risky action in the held round, before it is taken.

        See :func:`assay.loop.approval.check`: a ``risk`` with its
        ``reasonCodes``; ``ask_user`` gates wait for another principal.
        """
        from assay.loop.approval import check

        return check(self.store, self.project, parse_handle(handle_value), action,
                     descriptor=descriptor, principal=principal, enabled=enabled)
