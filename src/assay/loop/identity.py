"""Identities of the loop protocol: round ids, record ids and content-derived ids.

Content ids (``prefix-`` + 8 hex of the canonical digest, through
:func:`assay.ids.content_id`):

- ``cr-`` from the criterion text (trimmed);
- ``rc-`` from a contract's ``work_item`` and items; ``rci-`` from one item
  (description, criterion refs, verify_with). Scope and ``supersedes`` never
  enter: restating a contract is the same contract;
- ``sg-`` from the sub-goal text AND its declaration round;
- ``oq-`` from the normalised question text (lower case, single spaces);
- ``f-`` from a finding's check and subject, so the same finding keeps its
  id from round to round;
- ``cn-`` from a constraint's text (used by the prompt's coverage proof).

Record ids: the loop head ``loop:<loopId>``, a round transaction
``loop:<loopId>:round:<n>`` (the reference's round id, verbatim), its claim
and observation parts, rejections, gate decisions, checkpoints, recovery
directives, the terminal event and the lease.

Imports only the base modules.
"""

from __future__ import annotations

import re
from typing import Any

from assay.ids import content_id

__all__ = [
    "LOOP_ID",
    "SUBGOAL_ID",
    "constraint_id",
    "contract_id",
    "criterion_id",
    "finding_id",
    "gate_id",
    "gate_record_id",
    "head_id",
    "item_id",
    "lease_id",
    "normal_question",
    "normal_text",
    "parse_round_id",
    "question_id",
    "recovery_id",
    "rejection_id",
    "round_id",
    "round_part_id",
    "subgoal_id",
    "terminal_id",
    "transaction_id",
]

LOOP_ID = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
_ROUND_ID = re.compile(r"loop:([a-z0-9][a-z0-9._-]{0,63}):round:([1-9][0-9]{0,5})")
_SPACE = re.compile(r"\s+")
SUBGOAL_ID = re.compile(r"sg-[0-9a-f]{8}")


def criterion_id(text: str) -> str:
    return content_id("cr", text.strip())


def constraint_id(text: str) -> str:
    return content_id("cn", text.strip())


def item_content(description: str, criterion_refs: list[str] | tuple[str, ...],
                 verify_with: list[str] | tuple[str, ...]) -> dict[str, Any]:
    return {"description": description.strip(), "criterion_refs": sorted(set(criterion_refs)),
            "verify_with": sorted(set(verify_with))}


def item_id(description: str, criterion_refs: list[str] | tuple[str, ...],
            verify_with: list[str] | tuple[str, ...]) -> str:
    return content_id("rci", item_content(description, criterion_refs, verify_with))


def contract_id(work_item: str | None, items: list[dict[str, Any]]) -> str:
    """``rc-`` over the work item and the items' content (their order does not matter)."""
    content = sorted((item_content(i["description"], i.get("criterion_refs", ()),
                                   i["verify_with"]) for i in items),
                     key=lambda c: (c["description"], c["criterion_refs"], c["verify_with"]))
    return content_id("rc", {"work_item": (work_item or "").strip(), "items": content})


def subgoal_id(text: str, round_number: int) -> str:
    return content_id("sg", {"text": text.strip(), "round": round_number})


def normal_text(text: str) -> str:
    """Lower case, single spaces: how question and violation texts are compared."""
    return _SPACE.sub(" ", text.strip().lower())


def normal_question(text: str) -> str:
    return normal_text(text)


def question_id(text: str) -> str:
    return content_id("oq", normal_question(text))


def finding_id(check: str, ref: str | None) -> str:
    return content_id("f", {"check": check, "ref": ref or ""})


def gate_id(round_id_text: str, action_hash: str, branch_id: str = "main") -> str:
    """``g-`` over the round, the action and (off the main branch) the branch."""
    content = {"round_id": round_id_text, "action_sha256": action_hash}
    if branch_id != "main":
        content["branch"] = branch_id
    return content_id("g", content)


def gate_record_id(loop_id: str, gate: str) -> str:
    """A gate decision (and its approval, a later version of the same record)."""
    return f"loop:{loop_id}:gate:{gate}"


def transaction_id(loop_id: str, round_number: int, attempt: int, session_id: str,
                   branch_id: str) -> str:
    """One id per held attempt: a new session, round, attempt or branch gives a new one."""
    return content_id("tx", {"loop": loop_id, "round": round_number, "attempt": attempt,
                             "session": session_id, "branch": branch_id})


def head_id(loop_id: str) -> str:
    return f"loop:{loop_id}"


def round_id(loop_id: str, round_number: int) -> str:
    return f"loop:{loop_id}:round:{round_number}"


def round_part_id(loop_id: str, round_number: int, part: str) -> str:
    """The claim (``evaluation``) or machine (``observation``) part of a round."""
    return f"loop:{loop_id}:round:{round_number}:{part}"


def rejection_id(loop_id: str, round_number: int, attempt: int) -> str:
    return f"loop:{loop_id}:round:{round_number}:rejection:{attempt}"


def recovery_id(loop_id: str, directive_id: str) -> str:
    """A recovery directive (an event, not a round); its ``rv-`` id names the child branch."""
    return f"loop-recovery:{loop_id}:{directive_id}"


def terminal_id(loop_id: str) -> str:
    """The terminal event, written once when the loop stops."""
    return f"loop:{loop_id}:terminal"


def lease_id(loop_id: str) -> str:
    return f"loop-lease:{loop_id}"


def parse_round_id(text: str) -> tuple[str, int] | None:
    """``(loopId, n)`` of a round id, or None when it is not one."""
    match = _ROUND_ID.fullmatch(text)
    if match is None:
        return None
    return match.group(1), int(match.group(2))
