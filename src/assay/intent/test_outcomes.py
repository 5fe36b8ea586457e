"""What one evidence run says about one requirement of one intent.

An evidence run may be recorded ``--for`` requirements (``targets``) and,
when its command declares a results file, carries per-test outcomes mapped
to requirement labels (``results.requirements`` of the record, see
:mod:`assay.evidence.results`). :func:`run_verdict` is the one reading of
those facts that ``work accept`` and ``work check`` share: for intent ``I``
and requirement ``R``, the run is

- ``rollup``: tests attributed to ``I#R`` ran; their rollup decides;
- ``whole``: the run has no per-test mapping at all (no results file, or
  one whose tests name no requirement): the run's own status decides, as
  for any command;
- ``refused``: a results file was declared but could not be used (refused,
  truncated, no test at all): nothing about ``R`` is known, so never passed;
- ``untested``: the run maps tests to ``I``, but none to ``R``;
- ``other``: the run was recorded for, or its marks name, other intents
  only: it is their evidence, never ``I``'s;
- ``unattributed``: its marks name no intent, ``[gate] default_intent`` was
  not set and the run was not recorded ``--for`` exactly one intent: it is
  nobody's evidence.

Records written before attribution existed have rollups without an
``intent`` field: they belong to the one intent the run was recorded
``--for``; untargeted, ``work check`` reads them as the checked intent's
(as it always did) while ``work accept`` refuses them as unattributed.

:func:`rollup_issues` are the per-test issues of one cited run for one
requirement: ``requirement_tests_failed``, ``requirement_tests_skipped``
and ``requirement_tests_missing``, each naming the tests or globs.

Stored data is never trusted further than its shape: a rollup that is not
what the runner writes reads as absent. Imports the ledger contract only.
"""

from __future__ import annotations

from collections.abc import Sequence

from assay.ledger.store import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["intent_requirements", "rollup_issues", "rollup_note", "run_results", "run_targets",
           "run_verdict"]

_RUN_SCHEMA = "assay.evidence.v1"
_OUTCOMES = ("passed", "failed", "unverified")
# Test ids named in one issue message or note; the issue carries up to the rollup's own list.
_NAMED = 5

def _dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (stored data is never trusted)."""
    return value if isinstance(value, dict) else {}



def _run_data(record: Record | None) -> dict[str, Any] | None:
    if record is None or record.origin != "machine" or record.damage is not None:
        return None
    data = record.data
    return data if isinstance(data, dict) and data.get("schema") == _RUN_SCHEMA else None


def run_results(record: Record | None) -> dict[str, Any] | None:
    """The ``results`` field of an intact machine run record, else None. Never raises."""
    data = _run_data(record)
    results = data.get("results") if data is not None else None
    return results if isinstance(results, dict) else None


def run_targets(record: Record | None) -> list[tuple[str, str]]:
    """The ``(intent, requirement)`` pairs a run was recorded ``--for``, in order."""
    data = _run_data(record)
    if data is None:
        return []
    given = data.get("targets")
    items = given if isinstance(given, list) else [data.get("target")]
    return [(t["intent"], t["requirement"]) for t in items
            if isinstance(t, dict) and isinstance(t.get("intent"), str)
            and isinstance(t.get("requirement"), str)]


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _rows(results: dict[str, Any], legacy_owner: str | None) -> list[dict[str, Any]]:
    """The intact rollup rows, each with its owning ``intent`` (None: unattributed)."""
    out = []
    rows = results.get("requirements")
    for row in rows if isinstance(rows, list) else ():
        if not isinstance(row, dict) or not isinstance(row.get("requirement_id"), str) \
                or row.get("outcome") not in _OUTCOMES:
            continue
        owner = row.get("intent") if "intent" in row else legacy_owner
        tests = row.get("tests")
        out.append({
            "intent": owner if isinstance(owner, str) else None,
            "label": row.get("label") if isinstance(row.get("label"), str)
            else row["requirement_id"],
            "requirement_id": row["requirement_id"],
            "outcome": row["outcome"],
            "tests": tests if isinstance(tests, int) and not isinstance(tests, bool) else 0,
            "failed_tests": _strings(row.get("failed_tests")),
            "skipped_tests": _strings(row.get("skipped_tests")),
            "missing_globs": _strings(row.get("missing_globs")),
        })
    return out


def run_verdict(record: Record | None, intent_id: str, requirement_id: str, *,
                legacy: bool = True) -> dict[str, Any] | None:
    """What the run ``record`` says of ``intent_id#requirement_id`` (the module docstring).

    None for anything that is not an intact run of assay's runner. Else a
    dict with ``kind`` and what that kind needs: ``rollup`` (the rollup,
    with ``requirement_id`` the bare id), ``status`` (the run's), ``reason``
    (refused, untested), ``intents`` (other), ``labels`` (unattributed).
    ``legacy`` says how a pre-attribution rollup of an untargeted run reads:
    as the checked intent's (True, ``work check``) or as nobody's.
    """
    data = _run_data(record)
    if data is None:
        return None
    observation = _dict(data.get("observation"))
    status = observation["status"] if isinstance(observation.get("status"), str) else "unknown"
    targets = run_targets(record)
    target_intents = list(dict.fromkeys(i for i, _ in targets))
    elsewhere = bool(targets) and intent_id not in target_intents
    other = {"kind": "other", "intents": target_intents, "why": "it was recorded --for"}
    results = data.get("results")
    if not isinstance(results, dict):
        return other if elsewhere else {"kind": "whole", "status": status}
    if results.get("status") != "read":
        return other if elsewhere else {
            "kind": "refused", "status": status,
            "reason": f"its results file was not used ({results.get('code')}: "
                      f"{results.get('message')})", "results_code": results.get("code")}
    legacy_owner = (target_intents[0] if len(target_intents) == 1
                    else intent_id if legacy else None)
    rows = _rows(results, legacy_owner)
    for row in rows:
        if row["intent"] == intent_id and row["requirement_id"] == requirement_id:
            return {"kind": "rollup", "status": status, "rollup": row}
    if any(row["intent"] == intent_id for row in rows):
        return {"kind": "untested", "status": status,
                "reason": f"no test mapped to {requirement_id} ran in it"}
    if elsewhere:
        return other
    if not rows:
        return {"kind": "whole", "status": status}
    owners = list(dict.fromkeys(row["intent"] for row in rows if row["intent"] is not None))
    if owners:
        return {"kind": "other", "intents": owners, "why": "its tests are marked for"}
    return {"kind": "unattributed", "labels": list(dict.fromkeys(r["label"] for r in rows))[:20]}


def intent_requirements(record: Record | None, intent_id: str, *, legacy: bool = False
                        ) -> list[str]:
    """The requirement ids the run speaks for in ``intent_id``: its targets, then its rollups."""
    out = [rid for intent, rid in run_targets(record) if intent == intent_id]
    results = run_results(record)
    if results is not None and results.get("status") == "read":
        intents = list(dict.fromkeys(i for i, _ in run_targets(record)))
        owner = intents[0] if len(intents) == 1 else intent_id if legacy else None
        out.extend(row["requirement_id"] for row in _rows(results, owner)
                   if row["intent"] == intent_id)
    return list(dict.fromkeys(out))


def _named(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:_NAMED])
    return shown + (f" and {len(ids) - _NAMED} more" if len(ids) > _NAMED else "")


def rollup_note(command: str, rollup: dict[str, Any]) -> str:
    """The result note of a per-test proposal: what ran, and the tests that did not pass."""
    rid = rollup["requirement_id"]
    parts = [(f"assay ran {command}: {rollup['tests']} test(s) mapped to {rid}, "
              f"{rollup['outcome']}")]
    if rollup["failed_tests"]:
        parts.append(f"failed: {_named(rollup['failed_tests'])}")
    if rollup["skipped_tests"]:
        parts.append(f"skipped: {_named(rollup['skipped_tests'])}")
    if rollup["missing_globs"]:
        parts.append(f"no test matched: {_named(rollup['missing_globs'])}")
    return "; ".join(parts)


def rollup_issues(rollup: dict[str, Any], where: dict[str, Any], rerun: str
                  ) -> list[dict[str, Any]]:
    """The per-test issues of one cited run for one requirement, in emission order.

    ``where`` holds the issue's requirement and evidence fields; ``rerun`` is
    the quoted command that reruns the check.
    """
    rid = rollup["requirement_id"]
    evidence = f"{where['evidence_id']} revision {where['recorded_revision']}"
    out = []
    if rollup["failed_tests"]:
        out.append({
            "code": "requirement_tests_failed",
            "message": f"{rid}: tests mapped to it failed in {evidence}: "
                       f"{_named(rollup['failed_tests'])}",
            "action": f"Fix {rid} until its tests pass ({_named(rollup['failed_tests'])}), "
                      f"rerun {rerun} and record the new run.",
            "tests": list(rollup["failed_tests"]), **where})
    if rollup["skipped_tests"]:
        out.append({
            "code": "requirement_tests_skipped",
            "message": f"{rid}: tests mapped to it were skipped in {evidence}: "
                       f"{_named(rollup['skipped_tests'])}",
            "action": f"Make {rid}'s skipped tests run ({_named(rollup['skipped_tests'])}), "
                      f"rerun {rerun} and record the new run.",
            "tests": list(rollup["skipped_tests"]), **where})
    if rollup["missing_globs"] or rollup["tests"] == 0:
        globs = rollup["missing_globs"]
        what = (f"no test matched {_named(globs)}" if globs
                else "no test mapped to it ran")
        out.append({
            "code": "requirement_tests_missing",
            "message": f"{rid}: {what} in {evidence}",
            "action": f"Add or restore the tests that verify {rid} (or correct the mapping), "
                      f"rerun {rerun} and record the new run.",
            "globs": list(globs), **where})
    return out
