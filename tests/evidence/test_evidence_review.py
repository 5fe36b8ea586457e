"""A stored run record as a reviewer reads it: observed workspace and tests by requirement."""

from __future__ import annotations

from typing import Any

from assay.evidence.review import observed_workspace, results_overview


def _results(tests: list[dict[str, Any]], rollups: list[dict[str, Any]],
             **extra: Any) -> dict[str, Any]:
    counts = {k: sum(1 for t in tests if t["outcome"] == k)
              for k in ("passed", "failed", "error", "skipped")}
    return {"results": {"status": "read", "code": None, "message": None, "path": "unit.xml",
                        "summary": {"tests": len(tests), **counts}, "tests": tests,
                        "omitted": {"tests": 0}, "requirements": rollups, **extra}}


def _test(test_id: str, outcome: str, *reqs: str) -> dict[str, Any]:
    return {"id": test_id, "outcome": outcome, "requirements": list(reqs)}


def _rollup(rid: str, outcome: str, tests: int) -> dict[str, Any]:
    return {"requirement_id": rid, "outcome": outcome, "tests": tests, "counts": {},
            "failed_tests": [], "skipped_tests": [], "missing_globs": []}


def test_review_overview_lists_a_requirements_tests_worst_first() -> None:
    """A requirement's tests are listed failed, errored, skipped, then passed, each by id."""
    data = _results([_test("t::b", "passed", "R1"), _test("t::a", "passed", "R1"),
                     _test("t::c", "skipped", "R1"), _test("t::d", "error", "R1"),
                     _test("t::e", "failed", "R1")], [_rollup("R1", "failed", 5)])
    row = results_overview(data, limit=50)["requirements"][0]  # type: ignore[index]
    assert [(t["id"], t["outcome"]) for t in row["listed"]] == [
        ("t::e", "failed"), ("t::d", "error"), ("t::c", "skipped"), ("t::a", "passed"),
        ("t::b", "passed")]
    assert row["omitted"] == 0


def test_review_overview_bounds_each_list_and_counts_the_rest() -> None:
    """Past the limit, the failed ids and a requirement's tests are cut and the rest counted."""
    tests = [_test(f"t::f{n:02}", "failed", "R1") for n in range(12)]
    overview = results_overview(_results(tests, [_rollup("R1", "failed", 12)]), limit=5)
    assert overview is not None
    assert overview["failed"] == {"ids": [f"t::f{n:02}" for n in range(5)], "omitted": 7}
    assert len(overview["requirements"][0]["listed"]) == 5
    assert overview["requirements"][0]["omitted"] == 7


def test_review_overview_counts_tests_the_record_did_not_keep() -> None:
    """A rollup counting more tests than the record kept says how many are not listed."""
    overview = results_overview(_results([_test("t::a", "passed", "R1")],
                                       [_rollup("R1", "passed", 4)]), limit=50)
    assert overview is not None
    assert overview["requirements"][0]["tests"] == 4
    assert overview["requirements"][0]["omitted"] == 3


def test_review_overview_of_a_refused_file_has_its_code_and_no_rows() -> None:
    """A refused results file reads as refused with its code and message, and lists nothing."""
    data = {"results": {"status": "refused", "code": "results_missing", "message": "no file",
                        "path": "unit.xml", "tests": [], "requirements": []}}
    overview = results_overview(data, limit=50)
    assert overview is not None
    assert (overview["status"], overview["code"], overview["message"]) == (
        "refused", "results_missing", "no file")
    assert overview["summary"] is None and overview["requirements"] == []


def test_review_overview_reads_malformed_rows_as_absent() -> None:
    """Rows and tests that are not what the runner writes are skipped, never raised on."""
    data = _results([_test("t::a", "passed", "R1")], [_rollup("R1", "passed", 1)])
    data["results"]["tests"] += [{"id": 3, "outcome": "passed"},
                                 {"id": "t::x", "outcome": "exploded"}, "junk"]
    data["results"]["requirements"] += [{"requirement_id": "R2", "outcome": "maybe"}, "junk"]
    overview = results_overview(data, limit=50)
    assert overview is not None
    assert [r["requirement_id"] for r in overview["requirements"]] == ["R1"]
    assert overview["requirements"][0]["listed"] == [{"id": "t::a", "outcome": "passed"}]
    assert results_overview({"observation": {}}, limit=50) is None
    assert results_overview("not a record", limit=50) is None


def test_review_observed_workspace_reads_both_sides() -> None:
    """The commit, branch and workspace digest of each side, and the change between them."""
    side = {"status": "observed", "head": "a" * 40, "branch": "main",
            "workspace_sha256": "b" * 64, "dirty_count": 2, "dirty": []}
    data = {"workspace": {"before": side, "after": {**side, "workspace_sha256": "c" * 64},
                          "comparison": {"progress": "changed", "changed_path_count": 1,
                                         "head_changed": False}}}
    seen = observed_workspace(data)
    assert seen == {
        "before": {"status": "observed", "head": "a" * 40, "branch": "main",
                   "workspace_sha256": "b" * 64, "dirty_count": 2},
        "after": {"status": "observed", "head": "a" * 40, "branch": "main",
                  "workspace_sha256": "c" * 64, "dirty_count": 2},
        "progress": "changed", "changed_path_count": 1, "head_changed": False}


def test_review_observed_workspace_of_no_run_is_none() -> None:
    """A record without a workspace observation, or with a malformed one, has none."""
    assert observed_workspace({"text": "a claim"}) is None
    assert observed_workspace({"workspace": "junk"}) is None
    seen = observed_workspace({"workspace": {"before": "junk", "comparison": None}})
    assert seen is not None and seen["before"] is None and seen["progress"] is None
