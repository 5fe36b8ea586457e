"""A stored run record as a reviewer reads it: what it observed, and its tests by requirement.

The report page, ``evidence run`` and ``evidence show`` all show the same
facts of an evidence run, so they are read here once, from the record's
stored ``data`` (``assay.evidence.v1``, see :mod:`assay.evidence.record`):

- :func:`observed_workspace`: the commit (HEAD and branch) and the workspace
  digest the run observed before and after its command, and whether the
  workspace changed in between;
- :func:`results_overview`: the per-test summary of a run with a results
  file, the failed and skipped test ids, and per requirement its rollup
  with the ids and outcomes of its own tests.

Stored data is never trusted further than its shape: a field that is not
what the runner writes reads as absent, and nothing here raises. Lists are
bounded by the caller's ``limit`` and count what they leave out. Pure;
imports the standard library only, so a terminal view can use it cheaply.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["OUTCOME_ORDER", "observed_workspace", "results_overview"]

# Worst first: what a reviewer must see before what went well.
OUTCOME_ORDER = ("failed", "error", "skipped", "passed")
_COUNTED = ("passed", "failed", "error", "skipped")
_ROLLUP_OUTCOMES = ("passed", "failed", "unverified")


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _side(summary: Any) -> dict[str, Any] | None:
    if not isinstance(summary, Mapping):
        return None
    return {"status": _text(summary.get("status")), "head": _text(summary.get("head")),
            "branch": _text(summary.get("branch")),
            "workspace_sha256": _text(summary.get("workspace_sha256")),
            "dirty_count": _count(summary.get("dirty_count"))}


def observed_workspace(data: Any) -> dict[str, Any] | None:
    """The commit and workspace digest a run observed, or None for a record that is no run.

    ``{before, after, progress, changed_path_count, head_changed}``; each side
    is ``{status, head, branch, workspace_sha256, dirty_count}`` or None when
    the record lacks it. ``head`` and ``workspace_sha256`` are None where git
    did not take part (not a work tree, or git failed).
    """
    if not isinstance(data, Mapping):
        return None
    workspace = data.get("workspace")
    if not isinstance(workspace, Mapping):
        return None
    comparison = workspace.get("comparison")
    comparison = comparison if isinstance(comparison, Mapping) else {}
    head_changed = comparison.get("head_changed")
    return {"before": _side(workspace.get("before")), "after": _side(workspace.get("after")),
            "progress": _text(comparison.get("progress")),
            "changed_path_count": _count(comparison.get("changed_path_count")),
            "head_changed": head_changed if isinstance(head_changed, bool) else None}


def _rank(test: Mapping[str, Any]) -> tuple[int, str]:
    return (OUTCOME_ORDER.index(test["outcome"]), test["id"])


def _bounded(ids: list[str], total: int, limit: int) -> dict[str, Any]:
    shown = ids[:limit]
    return {"ids": shown, "omitted": max(total - len(shown), 0)}


def results_overview(data: Any, *, limit: int) -> dict[str, Any] | None:
    """The per-test part of a run record for a reviewer, or None when it has no results field.

    ``{status, code, message, path, summary, failed, skipped, omitted_tests,
    requirements}``: ``summary`` counts the run's tests by outcome; ``failed``
    (failed or errored) and ``skipped`` are ``{ids, omitted}`` with at most
    ``limit`` ids each; ``requirements`` holds one row per requirement the
    run's tests were mapped to, in the record's order: ``{requirement_id,
    intent (the intent the tests are attributed to, or None), outcome, tests, counts, listed, omitted, missing_globs}``, where
    ``listed`` are up to ``limit`` of its tests as ``{id, outcome}`` (failed,
    errored, skipped, then passed; each group by id) and ``omitted`` counts
    the rest (tests the record did not keep included). A refused results
    file has ``status`` refused, its ``code`` and ``message``, and no rows.
    """
    if not isinstance(data, Mapping):
        return None
    results = data.get("results")
    if not isinstance(results, Mapping):
        return None
    out: dict[str, Any] = {
        "status": _text(results.get("status")), "code": _text(results.get("code")),
        "message": _text(results.get("message")), "path": _text(results.get("path")),
        "summary": None, "failed": {"ids": [], "omitted": 0},
        "skipped": {"ids": [], "omitted": 0}, "omitted_tests": 0, "requirements": []}
    if out["status"] != "read":
        return out
    summary = results.get("summary")
    summary = summary if isinstance(summary, Mapping) else {}
    out["summary"] = {"tests": _count(summary.get("tests")),
                      **{k: _count(summary.get(k)) for k in _COUNTED}}
    omitted = results.get("omitted")
    out["omitted_tests"] = _count(omitted.get("tests")) if isinstance(omitted, Mapping) else 0
    stored = results.get("tests")
    tests = [{"id": t["id"], "outcome": t["outcome"], "requirements": _strings(t.get("requirements"))}
             for t in (stored if isinstance(stored, list) else ())
             if isinstance(t, Mapping) and isinstance(t.get("id"), str)
             and t.get("outcome") in OUTCOME_ORDER]
    tests.sort(key=_rank)
    failed = [t["id"] for t in tests if t["outcome"] in ("failed", "error")]
    skipped = [t["id"] for t in tests if t["outcome"] == "skipped"]
    out["failed"] = _bounded(failed, out["summary"]["failed"] + out["summary"]["error"], limit)
    out["skipped"] = _bounded(skipped, out["summary"]["skipped"], limit)
    by_requirement: dict[str, list[dict[str, str]]] = {}
    for test in tests:
        for rid in dict.fromkeys(test["requirements"]):
            by_requirement.setdefault(rid, []).append({"id": test["id"],
                                                       "outcome": test["outcome"]})
    rows = results.get("requirements")
    for row in rows if isinstance(rows, list) else ():
        if not (isinstance(row, Mapping) and isinstance(row.get("requirement_id"), str)
                and row.get("outcome") in _ROLLUP_OUTCOMES):
            continue
        rid = row["requirement_id"]
        # Tests name the requirement by its attributed label (intent#id) where it has one.
        label = row["label"] if isinstance(row.get("label"), str) else rid
        mine = by_requirement.get(label) or by_requirement.get(rid, [])
        counts = row.get("counts")
        counts = counts if isinstance(counts, Mapping) else {}
        total = max(_count(row.get("tests")), len(mine))
        out["requirements"].append({
            "requirement_id": rid,
            "intent": row["intent"] if isinstance(row.get("intent"), str) else None,
            "outcome": row["outcome"], "tests": total,
            "counts": {k: _count(counts.get(k)) for k in _COUNTED},
            "listed": mine[:limit], "omitted": total - len(mine[:limit]),
            "missing_globs": _strings(row.get("missing_globs"))})
    return out
