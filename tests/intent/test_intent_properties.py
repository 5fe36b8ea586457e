"""Properties of the report over generated intents, evidence and results."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st
from intent_builders import Ledger, data, intent

from assay.canonical import canonical_bytes
from assay.intent.check import ISSUE_CODES, work_check
from assay.intent.snapshot import ProjectBinding, RecordSnapshot
from assay_testing import examples

BINDING = ProjectBinding(root="/srv/project", scope="project:demo")


@st.composite
def scenarios(draw: st.DrawFn) -> Ledger:
    count = draw(st.integers(1, 12))
    reqs = []
    for i in range(count):
        req = {"id": f"R{i}", "text": "t", "acceptance": "a"}
        parent = draw(st.integers(-1, i - 1))
        if parent >= 0:
            req["parent_id"] = f"R{parent}"
        reqs.append(req)
    ledger = Ledger()
    evidence = []
    for j in range(draw(st.integers(0, 5))):
        record = ledger.put(f"evidence:e{j}", {"n": j},
                            origin=draw(st.sampled_from(["claim", "machine"])),
                            scope=draw(st.sampled_from(["project:demo", "project:demo",
                                                        "global"])))
        if draw(st.booleans()):
            record = ledger.put(f"evidence:e{j}", {"n": j, "again": True}, origin=record.origin,
                                scope=record.scope,
                                status=draw(st.sampled_from(["current", "retired"])))
        evidence.append(record)
    results = []
    for req in reqs:
        if draw(st.booleans()):
            continue
        refs = []
        for record in draw(st.lists(st.sampled_from(evidence), unique_by=lambda r: r.id,
                                    max_size=2)) if evidence else []:
            refs.append({"id": record.id,
                         "revision": draw(st.integers(1, max(1, record.revision)))})
        results.append({"requirement_id": req["id"],
                        "status": draw(st.sampled_from(["passed", "passed", "failed",
                                                        "unverified"])),
                        "evidence": refs, "notes": draw(st.sampled_from(["why", ""]))})
    the_intent = intent(reqs)
    blockers = draw(st.lists(st.just("wait"), max_size=1))
    ledger.put("knowledge:login", data(the_intent, results, blockers=blockers))
    return ledger


@settings(max_examples=examples(150), deadline=None)
@given(scenarios(), st.randoms(use_true_random=False))
def test_properties_report_is_consistent(ledger: Ledger, rnd: random.Random) -> None:
    """Ready iff no blocking issue; issue order is the documented one; order of versions is irrelevant."""
    report = work_check(ledger.snapshot(), BINDING, "knowledge:login")
    blocking = [i for i in report["issues"] if not i.get("advisory")]
    assert report["ready_to_review"] is (not blocking)
    globals_ = [i["code"] for i in report["issues"] if i["code"] in ISSUE_CODES[:4]]
    assert [i["code"] for i in report["issues"][:len(globals_)]] == globals_
    rows = {r["id"]: r for r in report["delta"]["requirements"]}
    for row in rows.values():
        if row["subtree_ready_to_review"]:
            assert row["own_ready_to_review"]
            assert row["status"] == "reported_complete_with_current_evidence"
        if row["parent_id"] is not None and row["subtree_ready_to_review"] is False:
            assert rows[row["parent_id"]]["subtree_ready_to_review"] is False
    if report["ready_to_review"]:
        assert all(r["subtree_ready_to_review"] for r in rows.values())
    assert set(report["next"]) == {i["action"] for i in report["issues"]}
    shuffled = list(ledger.versions)
    rnd.shuffle(shuffled)
    again = work_check(RecordSnapshot(shuffled, epoch="test-epoch"), BINDING, "knowledge:login")
    assert canonical_bytes(again) == canonical_bytes(report)
