"""The pure readiness report over plain Record values (no database)."""

from __future__ import annotations

import pytest
from intent_builders import Ledger, data, intent, passed, ref

from assay.canonical import canonical_bytes
from assay.errors import AssayError
from assay.intent.check import ISSUE_CODES, REPORT_KEYS, work_check
from assay.intent.snapshot import ProjectBinding

BINDING = ProjectBinding(root="/srv/project", scope="project:demo",
                         admitted_scopes=("project:old",), principal="agent")


def check(ledger: Ledger, record_id: str = "knowledge:login") -> dict:
    return work_check(ledger.snapshot(), BINDING, record_id)


def codes(report: dict) -> list[str]:
    return [i["code"] for i in report["issues"]]


def ready_ledger(origin: str = "machine") -> tuple[Ledger, dict]:
    ledger = Ledger()
    a = ledger.put("evidence:a", {"ok": 1}, origin=origin)
    b = ledger.put("evidence:b", {"ok": 2}, origin=origin)
    it = intent()
    ledger.put("knowledge:login", data(it, [passed("R1", ref(a)), passed("R2", ref(b))]))
    return ledger, it


def test_check_report_has_exactly_the_reference_keys() -> None:
    """The report's top-level keys are exactly the documented report keys."""
    ledger, _ = ready_ledger()
    assert set(check(ledger)) == set(REPORT_KEYS)


def test_check_ready_with_current_machine_evidence() -> None:
    """Every requirement passed with current machine evidence: ready, no issues."""
    ledger, _ = ready_ledger()
    report = check(ledger)
    assert report["ready_to_review"] is True and report["issues"] == [] and report["next"] == []


def test_check_claims_only_is_advisory() -> None:
    """Claim-only evidence adds evidence_only_claimed but stays ready."""
    ledger, _ = ready_ledger(origin="claim")
    report = check(ledger)
    assert report["ready_to_review"] is True
    assert codes(report) == ["evidence_only_claimed", "evidence_only_claimed"]
    assert all(i["advisory"] is True for i in report["issues"])


def test_check_machine_observed_marked_in_actual() -> None:
    """A cited machine-origin version is machine_observed in actual."""
    ledger, _ = ready_ledger()
    refs = check(ledger)["actual"]["results"][0]["evidence"]
    assert refs[0]["machine_observed"] is True and refs[0]["origin"] == "machine"
    assert refs[0]["current_revision"] == 1


def test_check_missing_acceptance_is_an_issue() -> None:
    """An intent without acceptance reports missing_acceptance, not an error."""
    ledger = Ledger()
    ledger.put("knowledge:login", {"intent": intent()})
    report = check(ledger)
    assert codes(report) == ["missing_acceptance"]
    assert [r["status"] for r in report["delta"]["requirements"]] == ["not_started"] * 2


def test_check_missing_result() -> None:
    """A requirement without a result is missing_result and not_started."""
    ledger = Ledger()
    a = ledger.put("evidence:a", {"ok": 1}, origin="machine")
    ledger.put("knowledge:login", data(intent(), [passed("R1", ref(a))]))
    report = check(ledger)
    assert codes(report) == ["missing_result"]
    assert report["delta"]["requirements"][1]["status"] == "not_started"


def test_check_result_for_unknown_requirement_is_an_issue() -> None:
    """A result naming a requirement the intent lacks is unknown_requirement, before the others."""
    ledger, it = ready_ledger()
    record = ledger.versions[-1]
    results = [*record.data["acceptance"]["results"], passed("R9", {"id": "evidence:a",
                                                                    "revision": 1})]
    ledger.put("knowledge:login", data(it, results))
    report = check(ledger)
    assert codes(report) == ["unknown_requirement"]
    assert report["issues"][0]["requirement_id"] == "R9" and report["ready_to_review"] is False
    assert "R9" in report["next"][0]


def test_check_global_issues_come_first() -> None:
    """Global issues precede requirement issues in the documented emission order."""
    ledger = Ledger()
    old = intent()
    new = intent()
    new["brief"] = "changed"
    ledger.put("knowledge:login", data(new, [passed("R1")], blockers=["wait"],
                                       sha=data(old, [])["acceptance"]["intent_sha256"]))
    found = codes(check(ledger))
    assert found == ["intent_hash_mismatch", "unresolved_blocker", "missing_evidence",
                     "missing_result"]
    assert sorted(found, key=ISSUE_CODES.index)[:2] == found[:2]


def test_check_private_evidence_reads_as_missing() -> None:
    """Evidence private to another principal is indistinguishable from absent."""
    ledger = Ledger()
    a = ledger.put("evidence:a", {"ok": 1}, audience="private:someone-else")
    ledger.put("knowledge:login", data(intent(), [passed("R1", ref(a)), passed("R2", ref(a))]))
    report = check(ledger)
    assert codes(report)[0] == "evidence_missing"
    assert report["write_basis"]["records"]["evidence:a"] == 0


def test_check_admitted_historical_scope_is_allowed() -> None:
    """Evidence from an admitted historical project scope supports readiness."""
    ledger = Ledger()
    a = ledger.put("evidence:a", {"ok": 1}, scope="project:old", origin="machine")
    ledger.put("knowledge:login", data(intent(), [passed("R1", ref(a)), passed("R2", ref(a))]))
    assert check(ledger)["ready_to_review"] is True


def test_check_stale_revision_with_digest_checks_cited_version() -> None:
    """A stale citation whose digest does not match its cited version reports both."""
    ledger = Ledger()
    a = ledger.put("evidence:a", {"ok": 1}, origin="machine")
    ledger.put("evidence:a", {"ok": 2}, origin="machine")
    ledger.put("knowledge:login", data(intent(), [
        passed("R1", ref(a, sha="1" * 64)), passed("R2", ref(a, sha=a.data_sha256))]))
    assert codes(check(ledger)) == ["evidence_revision_stale", "evidence_hash_mismatch",
                                    "evidence_revision_stale"]


def test_check_matching_digest_passes() -> None:
    """A citation whose data_sha256 matches the current version is accepted."""
    ledger = Ledger()
    a = ledger.put("evidence:a", {"ok": 1}, origin="machine")
    ledger.put("knowledge:login", data(intent(), [passed("R1", ref(a, sha=a.data_sha256)),
                                                  passed("R2", ref(a))]))
    assert check(ledger)["ready_to_review"] is True


def test_check_next_deduplicates_actions() -> None:
    """next holds each distinct action once, in issue order."""
    ledger, it = ready_ledger()
    results = ledger.versions[-1].data["acceptance"]["results"]
    ledger.put("knowledge:login", data(it, results, blockers=["wait", "wait"]))
    report = check(ledger)
    assert len(report["issues"]) == 2 and len(report["next"]) == 1


def test_check_next_actions_name_the_requirement() -> None:
    """Each requirement's next action names that requirement."""
    ledger = Ledger()
    ledger.put("knowledge:login", data(intent(), [passed("R1"), passed("R2")]))
    report = check(ledger)
    assert ["R1" in report["next"][0], "R2" in report["next"][1]] == [True, True]


def test_check_intent_not_found() -> None:
    """A missing intent record is the intent_not_found error."""
    with pytest.raises(AssayError) as info:
        check(Ledger())
    assert info.value.code == "intent_not_found"


def test_check_intent_must_be_knowledge() -> None:
    """A non-knowledge record is not_an_intent_record."""
    ledger = Ledger()
    ledger.put("evidence:login", {"intent": intent()})
    with pytest.raises(AssayError) as info:
        check(ledger, "evidence:login")
    assert info.value.code == "not_an_intent_record"


def test_check_intent_out_of_scope() -> None:
    """An intent in a foreign project scope is intent_out_of_scope."""
    ledger = Ledger()
    ledger.put("knowledge:login", {"intent": intent()}, scope="project:elsewhere")
    with pytest.raises(AssayError) as info:
        check(ledger)
    assert info.value.code == "intent_out_of_scope"


def test_check_retired_intent_is_not_current() -> None:
    """A retired intent record is intent_not_current."""
    ledger = Ledger()
    ledger.put("knowledge:login", {"intent": intent()}, status="retired")
    with pytest.raises(AssayError) as info:
        check(ledger)
    assert info.value.code == "intent_not_current"


def test_check_invalid_contract_raises_with_pointer() -> None:
    """Invalid intent data is invalid_intent_contract with its pointer."""
    ledger = Ledger()
    ledger.put("knowledge:login", {"intent": dict(intent(), requirements=[])})
    with pytest.raises(AssayError) as info:
        check(ledger)
    assert (info.value.code, info.value.pointer) == ("invalid_intent_contract",
                                                     "/data/intent/requirements")


def test_check_same_snapshot_is_byte_identical() -> None:
    """Two checks of the same snapshot give byte-identical canonical output."""
    ledger, _ = ready_ledger(origin="claim")
    assert canonical_bytes(check(ledger)) == canonical_bytes(check(ledger))


def test_check_plan_tree_fields() -> None:
    """plan carries root_ids, parent_id and child_ids in recorded order."""
    ledger = Ledger()
    tree = intent([{"id": "A", "text": "t", "acceptance": "a"},
                   {"id": "B", "text": "t", "acceptance": "a", "parent_id": "A"},
                   {"id": "C", "text": "t", "acceptance": "a", "parent_id": "A"}])
    ledger.put("knowledge:login", {"intent": tree})
    plan = check(ledger)["plan"]
    assert plan["root_ids"] == ["A"]
    assert plan["requirements"][0]["child_ids"] == ["B", "C"]
    assert plan["requirements"][2]["parent_id"] == "A"


def test_check_deep_tree_resolves_parents_after_children() -> None:
    """A 2,000-deep chain resolves without recursion limits, parents after children."""
    ledger = Ledger()
    a = ledger.put("evidence:a", {"ok": 1}, origin="machine")
    reqs = [{"id": f"R{i}", "text": "t", "acceptance": "a",
             **({"parent_id": f"R{i - 1}"} if i else {})} for i in range(2000)]
    results = [passed(f"R{i}", ref(a)) for i in range(2000)]
    results[-1]["status"] = "unverified"
    ledger.put("knowledge:login", data(intent(reqs), results))
    rows = check(ledger)["delta"]["requirements"]
    assert rows[0]["status"] == "awaiting_descendants"
    assert rows[-1]["status"] == "unverified"


def test_check_write_basis_names_every_reference() -> None:
    """write_basis holds the intent, every cited id (absent ones as 0) and the binding."""
    ledger = Ledger()
    a = ledger.put("evidence:a", {"ok": 1})
    ledger.put("knowledge:login", data(intent(), [
        passed("R1", ref(a), {"id": "evidence:gone", "revision": 3})]))
    basis = check(ledger)["write_basis"]
    assert basis["records"] == {"evidence:a": 1, "evidence:gone": 0, "knowledge:login": 1}
    assert basis["project"] == {"scope": "project:demo", "admitted_scopes": ["project:old"]}
    assert basis["epoch"] == "test-epoch"


def test_check_continuation_is_exact_or_null() -> None:
    """The top-level continuation is the recorded object, or null."""
    ledger = Ledger()
    cont = {"active_requirement_ids": ["R2"], "next_action": "Do R2"}
    ledger.put("knowledge:login", {"intent": intent(), "continuation": cont})
    assert check(ledger)["continuation"] == cont
    ledger.put("knowledge:login", {"intent": intent()})
    assert check(ledger)["continuation"] is None


def test_check_unavailable_and_unreadable_evidence_are_record_errors() -> None:
    """Evidence the store cannot reach or decode is an issue and a record error, not a crash."""
    from intent_builders import FailingSnapshot

    from assay.errors import UnavailableError

    ledger = Ledger()
    a = ledger.put("evidence:a", {"ok": 1}, origin="machine")
    b = ledger.put("evidence:b", {"ok": 2}, origin="machine")
    ledger.put("knowledge:login", data(intent(), [passed("R1", ref(a)), passed("R2", ref(b))]))
    ledger.put_damaged("evidence:b", '{"ok":')
    reader = FailingSnapshot(ledger, {"evidence:a": UnavailableError("the ledger went away")})
    report = work_check(reader, BINDING, "knowledge:login")
    assert codes(report) == ["evidence_unavailable", "evidence_unreadable"]
    assert report["complete"] is False and report["ready_to_review"] is False
    assert [e["code"] for e in report["record_errors"]] == ["evidence_unavailable",
                                                            "evidence_unreadable"]
    assert report["record_errors"][1]["read"] == ["get", "--raw", "--revision", "2", "--",
                                                  "evidence:b"]
    assert "'assay get --raw --revision 2 -- evidence:b'" in report["next"][1]
