"""Per-test evidence: requirement outcomes from the tests an evidence run mapped to them.

An evidence run whose command declares a results file carries, for each
requirement its tests were mapped to, a rollup (``results.requirements`` of
the record, see :mod:`assay.evidence.results`). This module reads those
rollups and turns them into acceptance proposals and readiness issues:

- :func:`run_results` and :func:`mapped_ids` feed
  :class:`assay.intent.acceptance.TestResults`, the result source of ``work
  accept --from-run`` for such runs.
- :func:`requirement_rollup` is what ``work check`` and the merge read: the
  rollup of one requirement in one cited run, or None when the run has none
  for it (it then counts as a whole-run result, as before).
- :func:`rollup_issues` are the per-test issues of one cited run for one
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

__all__ = ["mapped_ids", "requirement_rollup", "rollup_issues", "rollup_note", "run_results"]

_RUN_SCHEMA = "assay.evidence.v1"
_OUTCOMES = ("passed", "failed", "unverified")
# Test ids named in one issue message or note; the issue carries up to the rollup's own list.
_NAMED = 5


def run_results(record: Record | None) -> dict[str, Any] | None:
    """The ``results`` field of an intact machine run record, else None. Never raises."""
    if record is None or record.origin != "machine" or record.damage is not None:
        return None
    data = record.data
    if not isinstance(data, dict) or data.get("schema") != _RUN_SCHEMA:
        return None
    results = data.get("results")
    return results if isinstance(results, dict) else None


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def requirement_rollup(record: Record | None, requirement_id: str) -> dict[str, Any] | None:
    """The rollup of ``requirement_id`` in the run ``record``, or None when it has none.

    ``{requirement_id, outcome, tests, failed_tests, skipped_tests,
    missing_globs}`` as the runner wrote it (lists of strings only).
    """
    results = run_results(record)
    if results is None or results.get("status") != "read":
        return None
    rows = results.get("requirements")
    for row in rows if isinstance(rows, list) else ():
        if isinstance(row, dict) and row.get("requirement_id") == requirement_id \
                and row.get("outcome") in _OUTCOMES:
            tests = row.get("tests")
            return {
                "requirement_id": requirement_id,
                "outcome": row["outcome"],
                "tests": tests if isinstance(tests, int) and not isinstance(tests, bool) else 0,
                "failed_tests": _strings(row.get("failed_tests")),
                "skipped_tests": _strings(row.get("skipped_tests")),
                "missing_globs": _strings(row.get("missing_globs")),
            }
    return None


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


def mapped_ids(results: dict[str, Any]) -> list[str]:
    """The requirement ids a run's ``results`` field has rollups for, in its order."""
    rows = results.get("requirements")
    return [row["requirement_id"] for row in (rows if isinstance(rows, list) else ())
            if isinstance(row, dict) and isinstance(row.get("requirement_id"), str)
            and row.get("outcome") in _OUTCOMES]
