"""Conformance with Lodestar's work check and continuity projection, scenario by scenario.

Each test rebuilds one scenario of Lodestar's own tests (``test/work-evidence.test.mjs``
and ``test/continuity-projection.test.mjs`` at the commits that hold ``work
check``, and the rules of ``src/work-evidence.mjs``) in assay's terms: its own
records, its own builders, its own names where assay keeps a different one
(see the table in ``docs/intent.md``). Each asserts the verdict, the issue
codes in order, ``next`` and the digests the scenario turns on.

Most scenarios run over an in-memory snapshot (:class:`Scene`); those that
need a write to be refused, or a row damaged in storage, run on a real
ledger of each backend.

Not transcribed (no counterpart in assay): the agent-decision presentation
preference, recorded source freshness (``context_source_stale``) and checkout
applicability (``context_checkout_mismatch``); a record's ``historical``
lifecycle maps to assay's ``retired``.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from assay.canonical import canonical_bytes, canonical_text, digest
from assay.errors import AssayError, RevisionConflict
from assay.intent.check import work_check
from assay.intent.continuity import MAX_BYTES, MAX_EDGES, MAX_NODES
from assay.intent.contract import intent_data_schema
from assay.intent.snapshot import ProjectBinding, RecordSnapshot
from assay.ledger.store import Link, Record, Write, WriteBasis
from assay_testing import Project

SCOPE = "project:plan"
ROOT = "/srv/plan"


def _goal(*reqs: tuple[str, str | None]) -> dict[str, Any]:
    """An intent of the given (id, parent) requirements."""
    return {
        "version": 1, "brief": "Resume the requested job with current evidence",
        "user_reference": "the requester's message of Monday",
        "requirements": [{"id": rid, "text": f"do {rid}", "acceptance": f"inspect {rid}",
                          **({"parent_id": parent} if parent else {})} for rid, parent in reqs],
        "boundaries": ["one database"], "non_goals": ["no daemon"],
    }


ONE = _goal(("R1", None))
TWO = _goal(("R1", None), ("R-last", None))


class Scene:
    """Versions written in order, read back as one snapshot.

    Records stand for recorded observations (origin ``machine``), as
    Lodestar's evidence records do: assay's advisory for claim-only evidence,
    which Lodestar does not have, stays out of the scenarios. The intent
    itself is a claim.
    """

    def __init__(self, admitted: tuple[str, ...] = ()) -> None:
        self.versions: list[Record] = []
        self.binding = ProjectBinding(root=ROOT, scope=SCOPE, admitted_scopes=admitted,
                                      principal="agent")

    def write(self, record_id: str, value: Any, *, scope: str = SCOPE, status: str = "current",
              links: tuple[tuple[str, str], ...] = (), origin: str = "machine") -> Record:
        revision = 1 + sum(1 for r in self.versions if r.id == record_id)
        record = Record(
            id=record_id, kind=record_id.partition(":")[0], scope=scope, revision=revision,
            data=copy.deepcopy(value), data_text=canonical_text(value), data_sha256=digest(value),
            status=status, superseded_by="x:y" if status == "superseded" else None,
            links=tuple(Link(rel, target) for rel, target in links), audience="project",
            sources=(), created_at="2026-01-01T00:00:00Z",
            ledger_revision=len(self.versions) + 1, origin=origin)
        self.versions.append(record)
        return record

    def damaged(self, record_id: str, text: str) -> Record:
        """A new version whose stored text no longer hashes to its recorded digest."""
        good = self.write(record_id, {"placeholder": True})
        self.versions[-1] = Record(
            id=good.id, kind=good.kind, scope=good.scope, revision=good.revision,
            data_text=text, data_sha256=good.data_sha256, status="current", superseded_by=None,
            links=(), audience="project", sources=(), created_at=good.created_at,
            ledger_revision=good.ledger_revision, origin=good.origin)
        return self.versions[-1]

    def intent(self, value: dict[str, Any], *results: dict[str, Any],
               record_id: str = "knowledge:intent", blockers: tuple[str, ...] = (),
               sha: str | None = None, **extra: Any) -> Record:
        links = extra.pop("links", ())
        wants_acceptance = extra.pop("acceptance", False)
        data: dict[str, Any] = {"intent": value}
        if results or sha or blockers or wants_acceptance:
            data["acceptance"] = {"intent_sha256": sha or digest(value), "results": list(results),
                                  "blockers": list(blockers)}
        data.update(extra)
        return self.write(record_id, data, links=links, origin="claim")

    def check(self, record_id: str = "knowledge:intent") -> dict[str, Any]:
        return work_check(RecordSnapshot(list(self.versions), epoch="e"), self.binding, record_id)


def passed(rid: str, *cited: Record, notes: str = "The recorded output supports it.",
           status: str = "passed", sha: bool = True) -> dict[str, Any]:
    refs = [{"id": r.id, "revision": r.revision, **({"data_sha256": r.data_sha256} if sha else {})}
            for r in cited]
    return {"requirement_id": rid, "status": status, "evidence": refs, "notes": notes}


def codes(report: dict[str, Any]) -> list[str]:
    return [i["code"] for i in report["issues"]]


def contract_error(scene: Scene) -> AssayError:
    with pytest.raises(AssayError) as info:
        scene.check()
    assert info.value.code == "invalid_intent_contract"
    # As Lodestar's identifiers.id: the record at fault, beside the field's pointer.
    assert info.value.details["id"] == "knowledge:intent"
    return info.value


def proof_scene(*, evidence_scope: str = SCOPE) -> tuple[Scene, Record]:
    """Lodestar's setup(): one project intent, one proof record, R1 passed on it."""
    scene = Scene()
    proof = scene.write("knowledge:proof", {"observation": "focused test output"},
                        scope=evidence_scope)
    scene.intent(ONE, passed("R1", proof))
    return scene, proof


# --- test/work-evidence.test.mjs ----------------------------------------------------------


@pytest.mark.parametrize(("lifecycle", "status"), [("current", "current"),
                                                   ("historical", "retired"),
                                                   ("superseded", "superseded")])
def test_conformance_lifecycle_of_cited_evidence(lifecycle: str, status: str) -> None:
    """work evidence excludes superseded facts at their current revision while preserving historical inspection."""
    scene = Scene()
    proof = scene.write("knowledge:lifecycle-proof", {"observation": "Scoped evidence"},
                        status=status)
    scene.intent(ONE, passed("R1", proof))
    report = scene.check()
    assert report["complete"] is True  # readability is separate from readiness
    assert report["ready_to_review"] is (lifecycle == "current")
    assert report["delta"]["requirements"][0]["own_ready_to_review"] is (lifecycle == "current")
    if lifecycle != "current":
        assert codes(report) == ["evidence_retired"]
        assert report["issues"][0]["evidence_id"] == "knowledge:lifecycle-proof"
        assert "replaces knowledge:lifecycle-proof" in report["next"][0]


def test_conformance_stable_complete_mapping() -> None:
    """work check reads a stable complete mapping without writing and exposes its contract."""
    scene, proof = proof_scene()
    report = scene.check()
    assert (report["ready_to_review"], report["complete"], report["issues"]) == (True, True, [])
    assert report["next"] == [] and report["continuation"] is None
    assert report["plan"]["root_ids"] == ["R1"] and report["plan"]["requirements"][0][
        "parent_id"] is None
    assert report["delta"]["requirements"][0]["status"] == "reported_complete_with_current_evidence"
    assert "recorded" in report["notice"]
    assert report["intent_sha256"] == digest(ONE)
    assert report["write_basis"]["records"] == {"knowledge:intent": 1, "knowledge:proof": 1}
    assert report["write_basis"]["project"] == {"scope": SCOPE, "admitted_scopes": []}
    assert report["actual"]["results"][0]["evidence"][0]["data_sha256"] == proof.data_sha256
    assert canonical_bytes(scene.check()) == canonical_bytes(report)


def test_conformance_missing_result_names_the_requirement() -> None:
    """work check reports missing and stale supplied results with next actions (missing_result)."""
    scene = Scene()
    scene.intent(ONE, acceptance=True)
    report = scene.check()
    assert (report["ready_to_review"], codes(report)) == (False, ["missing_result"])
    assert "R1" in report["next"][0]


def test_conformance_intent_hash_mismatch_is_stale_intent() -> None:
    """work check reports missing and stale supplied results with next actions (intent_hash_mismatch)."""
    scene = Scene()
    proof = scene.write("knowledge:proof", {"observation": "focused test output"})
    scene.intent(ONE, passed("R1", proof), sha="0" * 64)
    report = scene.check()
    assert (report["ready_to_review"], codes(report)) == (False, ["intent_hash_mismatch"])
    row = report["delta"]["requirements"][0]
    assert (row["status"], row["subtree_ready_to_review"]) == ("stale_intent", False)
    assert report["issues"][0]["recorded_intent_sha256"] == "0" * 64
    assert report["intent_sha256"] == digest(ONE)


def test_conformance_stale_cited_revision_needs_evidence() -> None:
    """work check reports missing and stale supplied results with next actions (evidence_revision_stale)."""
    scene = Scene()
    first = scene.write("knowledge:proof", {"observation": "focused test output"})
    scene.write("knowledge:proof", {"observation": "a later result"})
    scene.intent(ONE, passed("R1", first))
    report = scene.check()
    assert (report["ready_to_review"], codes(report)) == (False, ["evidence_revision_stale"])
    assert report["delta"]["requirements"][0]["status"] == "reported_complete_needs_evidence"
    assert report["issues"][0]["current_revision"] == 2
    assert "knowledge:proof at revision 2" in report["next"][0] and "R1" in report["next"][0]


def test_conformance_wrong_evidence_digest() -> None:
    """work check reports missing and stale supplied results with next actions (evidence_hash_mismatch)."""
    scene = Scene()
    proof = scene.write("knowledge:proof", {"observation": "focused test output"})
    result = passed("R1", proof)
    result["evidence"][0]["data_sha256"] = "0" * 64
    scene.intent(ONE, result)
    report = scene.check()
    assert (report["ready_to_review"], codes(report)) == (False, ["evidence_hash_mismatch"])
    assert proof.data_sha256 == digest({"observation": "focused test output"})


def test_conformance_unverified_result_is_not_passed() -> None:
    """work check reports missing and stale supplied results with next actions (result_not_passed)."""
    scene = Scene()
    proof = scene.write("knowledge:proof", {"observation": "focused test output"})
    scene.intent(ONE, passed("R1", proof, status="unverified"))
    report = scene.check()
    assert (report["ready_to_review"], codes(report)) == (False, ["result_not_passed"])
    assert report["delta"]["requirements"][0]["status"] == "unverified"
    assert "keep it unverified" in report["next"][0]


def test_conformance_tree_awaits_its_unverified_child() -> None:
    """work check projects a requirement tree and recorded continuation without claiming fresh verification."""
    tree = _goal(("R1", None), ("R2", "R1"))
    scene = Scene()
    proof = scene.write("knowledge:proof", {"observation": "focused test output"})
    continuation = {"active_requirement_ids": ["R2"], "next_action": "Review R2 evidence"}
    scene.intent(tree, passed("R1", proof), passed("R2", status="unverified",
                                                    notes="Awaiting review"),
                 continuation=continuation)
    report = scene.check()
    assert report["ready_to_review"] is False
    assert codes(report) == ["result_not_passed", "missing_evidence"]
    assert [i["requirement_id"] for i in report["issues"]] == ["R2", "R2"]
    assert [(r["id"], r["parent_id"], r["child_ids"]) for r in report["plan"]["requirements"]] \
        == [("R1", None, ["R2"]), ("R2", "R1", [])]
    assert report["continuation"] == continuation
    rows = report["delta"]["requirements"]
    assert [(r["status"], r["own_ready_to_review"], r["subtree_ready_to_review"]) for r in rows] \
        == [("awaiting_descendants", True, False), ("unverified", False, False)]
    assert report["plan"]["intent_sha256"] == digest(tree)


def test_conformance_tree_completes_with_its_child() -> None:
    """work check projects a requirement tree and recorded continuation without claiming fresh verification (completed)."""
    tree = _goal(("R1", None), ("R2", "R1"))
    scene = Scene()
    proof = scene.write("knowledge:proof", {"observation": "focused test output"})
    scene.intent(tree, passed("R1", proof), passed("R2", proof),
                 continuation={"active_requirement_ids": ["R2"], "next_action": "Review"})
    report = scene.check()
    assert (report["ready_to_review"], codes(report), report["next"]) == (True, [], [])
    row = report["delta"]["requirements"][0]
    assert (row["status"], row["subtree_ready_to_review"]) == (
        "reported_complete_with_current_evidence", True)


@pytest.mark.parametrize(("reqs", "index"), [
    ([{"id": "R1", "text": "t", "acceptance": "a", "parent_id": "missing"}], 0),
    ([{"id": "R1", "text": "t", "acceptance": "a", "parent_id": "R1"}], 0),
    ([{"id": "R1", "text": "t", "acceptance": "a", "parent_id": "R2"},
      {"id": "R2", "text": "t", "acceptance": "a", "parent_id": "R1"}], 0),
], ids=["missing", "self", "cycle"])
def test_conformance_invalid_parents(reqs: list[dict[str, Any]], index: int) -> None:
    """work check rejects missing, self-referential and cyclic parents and unknown active IDs (parents)."""
    scene = Scene()
    scene.intent(dict(ONE, requirements=reqs), acceptance=True)
    error = contract_error(scene)
    assert error.pointer == f"/data/intent/requirements/{index}/parent_id"


@pytest.mark.parametrize(("continuation", "pointer"), [
    ({"active_requirement_ids": ["missing"], "next_action": "Inspect"},
     "/data/continuation/active_requirement_ids/0"),
    ({"active_requirement_ids": ["R1", "R1"], "next_action": "Inspect"},
     "/data/continuation/active_requirement_ids/1"),
    ({"active_requirement_ids": ["R1"], "next_action": " "}, "/data/continuation/next_action"),
], ids=["unknown", "duplicate", "blank-action"])
def test_conformance_invalid_continuation(continuation: dict[str, Any], pointer: str) -> None:
    """work check rejects missing, self-referential and cyclic parents and unknown active IDs (continuation)."""
    scene = Scene()
    scene.intent(ONE, acceptance=True, continuation=continuation)
    assert contract_error(scene).pointer == pointer


def test_conformance_evidence_changed_after_citation() -> None:
    """work check blocks stale, missing, retired, and out-of-scope evidence (a later revision)."""
    scene, _proof = proof_scene()
    scene.write("knowledge:proof", {"observation": "later result contradicts the earlier one"})
    report = scene.check()
    assert (report["ready_to_review"], codes(report)) == (False, ["evidence_revision_stale"])


def test_conformance_retired_evidence() -> None:
    """work check blocks stale, missing, retired, and out-of-scope evidence (retired)."""
    scene, _proof = proof_scene()
    scene.write("knowledge:proof", {"observation": "focused test output"}, status="retired")
    assert codes(scene.check()) == ["evidence_retired"]


def test_conformance_missing_evidence_record() -> None:
    """work check blocks stale, missing, retired, and out-of-scope evidence (missing)."""
    scene = Scene()
    scene.intent(ONE, {"requirement_id": "R1", "status": "passed", "notes": "it ran",
                       "evidence": [{"id": "knowledge:missing", "revision": 99}]})
    report = scene.check()
    assert (report["ready_to_review"], report["complete"]) == (False, False)
    assert codes(report) == ["evidence_missing"]
    assert report["write_basis"]["records"]["knowledge:missing"] == 0
    assert report["record_errors"][0]["id"] == "knowledge:missing"


def test_conformance_evidence_outside_the_project() -> None:
    """work check blocks stale, missing, retired, and out-of-scope evidence (global scope)."""
    scene, _ = proof_scene(evidence_scope="global")
    report = scene.check()
    assert (report["ready_to_review"], codes(report)) == (False, ["evidence_out_of_scope"])


@pytest.mark.parametrize(("requirements", "pointer"), [
    ([], "/data/intent/requirements"),
    ([ONE["requirements"][0], ONE["requirements"][0]], "/data/intent/requirements/1/id"),
    ([{"id": "R1", "text": "", "acceptance": "test"}], "/data/intent/requirements/0/text"),
], ids=["none", "duplicate", "blank-text"])
def test_conformance_malformed_requirements(requirements: list[Any], pointer: str) -> None:
    """work check rejects malformed requirements and mappings, and surfaces blockers (requirements)."""
    scene = Scene()
    scene.intent(dict(ONE, requirements=requirements), acceptance=True)
    assert contract_error(scene).pointer == pointer


def test_conformance_malformed_mappings() -> None:
    """work check rejects malformed requirements and mappings, and surfaces blockers (mappings)."""
    scene, proof = proof_scene()
    scene.intent(ONE, passed("R1", proof), passed("R1", proof))
    assert contract_error(scene).pointer == "/data/acceptance/results/1/requirement_id"
    broken = passed("R1")
    broken["evidence"] = [{}]
    scene.intent(ONE, broken)
    assert contract_error(scene).pointer == "/data/acceptance/results/0/evidence/0/id"


def test_conformance_blocker_surfaces() -> None:
    """work check rejects malformed requirements and mappings, and surfaces blockers (blocker)."""
    scene, proof = proof_scene()
    scene.intent(ONE, passed("R1", proof), blockers=("Need operator review",))
    report = scene.check()
    assert (report["ready_to_review"], codes(report)) == (False, ["unresolved_blocker"])
    assert report["delta"]["global_issue_codes"] == ["unresolved_blocker"]
    assert "Need operator review" in report["next"][0]


def test_conformance_unreadable_evidence_is_incomplete() -> None:
    """work check keeps unreadable evidence visible as incomplete."""
    scene = Scene()
    proof = scene.damaged("knowledge:proof", '{"observation":9007199254740993}')
    scene.intent(ONE, passed("R1", proof, sha=False))
    report = scene.check()
    assert (report["ready_to_review"], report["complete"]) == (False, False)
    assert report["record_errors"][0]["id"] == "knowledge:proof"
    assert codes(report) == ["evidence_unreadable"]
    assert any("knowledge:proof" in step for step in report["next"])


# --- src/work-evidence.mjs rules ----------------------------------------------------------


def test_conformance_result_for_an_unknown_requirement_is_an_issue() -> None:
    """src/work-evidence.mjs checkWorkEvidence: a result naming a requirement absent from the intent is unknown_requirement."""
    scene, proof = proof_scene()
    scene.intent(ONE, passed("R1", proof), passed("R9", proof))
    report = scene.check()
    assert (report["ready_to_review"], codes(report)) == (False, ["unknown_requirement"])
    assert report["issues"][0]["requirement_id"] == "R9" and "R9" in report["next"][0]


def test_conformance_task_naming_an_unknown_requirement_is_invalid() -> None:
    """src/work-evidence.mjs validateTasks: task references need known requirement IDs."""
    scene, proof = proof_scene()
    scene.intent(ONE, passed("R1", proof), tasks=[
        {"runtime_task_id": "t-1", "owner": "agent", "requirement_ids": ["R9"], "status": "done"}])
    assert contract_error(scene).pointer == "/data/tasks/0/requirement_ids/0"


def test_conformance_blank_notes_need_a_claim_note() -> None:
    """src/work-evidence.mjs checkWorkEvidence: a result whose notes are blank is missing_claim_note."""
    scene = Scene()
    proof = scene.write("knowledge:proof", {"observation": "focused test output"})
    scene.intent(ONE, passed("R1", proof, notes=" "))
    report = scene.check()
    assert (report["ready_to_review"], codes(report)) == (False, ["missing_claim_note"])


def test_conformance_unverified_without_evidence_is_also_missing_evidence() -> None:
    """src/work-evidence.mjs checkWorkEvidence: a result with no evidence is missing_evidence whatever its status."""
    scene = Scene()
    scene.intent(ONE, passed("R1", status="unverified", notes="not run yet"))
    report = scene.check()
    assert codes(report) == ["result_not_passed", "missing_evidence"]
    assert report["next"][1] == "Cite at least one evidence record version for R1."


def test_conformance_the_intent_cannot_be_its_own_evidence() -> None:
    """src/work-evidence.mjs checkWorkEvidence: the reference is the intent itself (evidence_out_of_scope)."""
    scene = Scene()
    scene.intent(ONE, acceptance=True)
    scene.intent(ONE, {"requirement_id": "R1", "status": "passed", "notes": "see above",
                       "evidence": [{"id": "knowledge:intent", "revision": 2}]})
    report = scene.check()
    assert (report["ready_to_review"], codes(report)) == (False, ["evidence_out_of_scope"])
    assert report["next"] == ["Cite a separate evidence record for R1."]


# --- test/continuity-projection.test.mjs ---------------------------------------------------


def continuity_scene(**kw: Any) -> tuple[Scene, Record]:
    """The continuity setup(): R1 and R-last both passed on one proof record."""
    scene = Scene(**kw)
    proof = scene.write("knowledge:proof", {"observation": "Recorded acceptance output"})
    return scene, proof


def select(scene: Scene, proof: Record, references: list[dict[str, Any]],
           active: tuple[str, ...] = ("R-last",), mission: tuple[str, ...] = (),
           value: dict[str, Any] = TWO, **extra: Any) -> dict[str, Any]:
    scene.intent(value, *(passed(r["id"], proof) for r in value["requirements"]),
                 continuation={"active_requirement_ids": list(active),
                               "next_action": "Read the selected evidence before acting.",
                               "context": {"version": 1, "mission_record_ids": list(mission),
                                           "requirements": references}}, **extra)
    continuity: dict[str, Any] = scene.check()["continuity"]
    return continuity


def test_conformance_c0_legacy_intent_stays_readable() -> None:
    """C0 control: legacy intent remains readable and a work check writes nothing."""
    scene, proof = continuity_scene()
    scene.intent(TWO, passed("R1", proof), passed("R-last", proof))
    report = scene.check()
    assert (report["intent_sha256"], report["ready_to_review"]) == (digest(TWO), True)
    assert report["continuity"]["association_mode"] == "legacy_defaults"


def test_conformance_c1_orientation_rejection_survives_without_association() -> None:
    """C1: current orientation rejection survives without new association metadata."""
    scene, proof = continuity_scene()
    scene.write("rejection:daemon", {"reason": "An idle daemon adds system impact",
                                     "context_role": "orientation"})
    scene.intent(TWO, passed("R1", proof), passed("R-last", proof))
    records = scene.check()["continuity"]["records"]
    row = next(r for r in records if r["id"] == "rejection:daemon")
    assert "system impact" in row["data"]["reason"]
    assert row["selection"]["reasons"] == ["orientation"]


def test_conformance_c2_associations_keep_the_intent_and_acceptance() -> None:
    """C2: adding retrieval associations does not invalidate the approved intent or acceptance."""
    scene, proof = continuity_scene()
    scene.write("research:next", {"finding": "Use the existing owner"})
    continuity = select(scene, proof, [{"id": "R-last", "record_ids": ["research:next"]}])
    report = scene.check()
    assert (report["intent_sha256"], report["ready_to_review"]) == (digest(TWO), True)
    assert "research:next" in [r["id"] for r in continuity["records"]]


def test_conformance_c3_active_id_selects_its_branch_only() -> None:
    """C3: stable active ID selects the last requirement and excludes unrelated branch references."""
    scene, proof = continuity_scene()
    scene.write("research:other", {"finding": "Unrelated first branch"})
    scene.write("research:active", {"finding": "Needed by the active last branch"})
    continuity = select(scene, proof, [{"id": "R1", "record_ids": ["research:other"]},
                                       {"id": "R-last", "record_ids": ["research:active"]}])
    ids = [r["id"] for r in continuity["records"]]
    assert continuity["active_requirement_ids"] == ["R-last"]
    assert "research:active" in ids and "research:other" not in ids


def test_conformance_c4_missing_and_foreign_stay_unresolved_with_reads() -> None:
    """C4: missing and foreign records remain unresolved with exact public follow-up reads."""
    scene, proof = continuity_scene()
    scene.write("research:foreign", {"finding": "Another project"}, scope="project:other")
    continuity = select(scene, proof, [{"id": "R-last", "record_ids": [
        "research:missing", "research:foreign"]}])
    assert continuity["complete"] is False
    assert "research:foreign" not in [r["id"] for r in continuity["records"]]
    reads = {r["target_id"]: r for r in continuity["read_required"]}
    for target, code in (("research:missing", "context_record_missing"),
                         ("research:foreign", "context_scope_mismatch")):
        assert reads[target]["read_args"] == ["get", "--", target]
        assert reads[target]["code"] == code and reads[target]["action"]


def test_conformance_c5_closure_includes_each_dependency_once(store: Any) -> None:
    """C5: explicit dependency closure includes a late dependency once and terminates a cycle."""
    def put(record_id: str, value: Any, links: tuple[tuple[str, str], ...] = ()) -> None:
        store.put(Write(id=record_id, data=value, scope=SCOPE,
                        links=tuple(Link(rel, t) for rel, t in links)))

    binding = ProjectBinding(root=ROOT, scope=SCOPE, principal="agent")
    put("research:a", {"finding": "a"}, (("requires", "research:b"),))
    put("research:b", {"finding": "b"}, (("depends-on", "research:c"),))
    put("research:c", {"finding": "c"}, (("requires", "research:a"),))
    put("knowledge:intent", {"intent": TWO, "continuation": {
        "active_requirement_ids": ["R-last"], "next_action": "go", "context": {
            "version": 1, "mission_record_ids": [],
            "requirements": [{"id": "R-last", "record_ids": ["research:a"]}]}}})
    with store.reader() as reader:
        report = work_check(reader, binding, "knowledge:intent")
    continuity = report["continuity"]
    assert [r["id"] for r in continuity["records"]] == ["research:a", "research:b", "research:c"]
    assert continuity["complete"] is True
    put("research:c", {"finding": "Changed dependency evidence"})

    with pytest.raises(RevisionConflict):
        store.put(Write(id="knowledge:intent", data={"intent": TWO}, scope=SCOPE),
                  basis=WriteBasis.from_dict(report["write_basis"]))


def test_conformance_c6_unrelated_writes_leave_the_projection() -> None:
    """C6: unrelated record writes do not change the semantic continuity projection."""
    scene, proof = continuity_scene()
    scene.write("research:active", {"finding": "Useful stable evidence"})
    before = select(scene, proof, [{"id": "R-last", "record_ids": ["research:active"]}])
    scene.write("knowledge:noise", {"note": "Unrelated activity"}, scope="global")
    assert scene.check()["continuity"] == before


def test_conformance_c7_unsupported_context_version() -> None:
    """C7: unsupported association version names the exact field and safe correction."""
    scene = Scene()
    scene.intent(TWO, continuation={"active_requirement_ids": ["R-last"], "next_action": "fix",
                                    "context": {"version": 99, "mission_record_ids": [],
                                                "requirements": []}})
    error = contract_error(scene)
    assert error.pointer == "/data/continuation/context/version"
    assert "put" in (error.action or "")


def test_conformance_c8_schema_exposes_the_continuation_context() -> None:
    """C8: typed help exposes the optional continuation context schema."""
    schema = intent_data_schema()["properties"]
    assert schema["intent"]["properties"]["version"]["const"] == 1
    continuation = schema["continuation"]
    assert continuation["properties"]["context"]["properties"]["version"]["const"] == 1
    assert continuation["required"] == ["active_requirement_ids", "next_action"]


@pytest.mark.parametrize(("context", "pointer"), [
    (None, "/data/continuation/context"),
    ({"extra": True}, "/data/continuation/context/extra"),
    ({"mission_record_ids": ["x:a", "x:a"]}, "/data/continuation/context/mission_record_ids/1"),
    ({"mission_record_ids": ["bad\nrecord"]}, "/data/continuation/context/mission_record_ids/0"),
    ({"requirements": [{"id": "missing", "record_ids": []}]},
     "/data/continuation/context/requirements/0/id"),
    ({"requirements": [{"id": "R1", "record_ids": []}, {"id": "R1", "record_ids": []}]},
     "/data/continuation/context/requirements/1/id"),
    ({"requirements": [{"id": "R1", "record_ids": None}]},
     "/data/continuation/context/requirements/0/record_ids"),
], ids=["null", "extra", "duplicate-mission", "bad-id", "unknown-requirement",
        "duplicate-requirement", "null-records"])
def test_conformance_malformed_association_shapes(context: Any, pointer: str) -> None:
    """context rejects malformed association shapes with exact correction pointers and no writes."""
    valid = {"version": 1, "mission_record_ids": [], "requirements": []}
    scene = Scene()
    scene.intent(TWO, continuation={"active_requirement_ids": [], "next_action": "Inspect",
                                    "context": None if context is None else {**valid, **context}})
    error = contract_error(scene)
    assert (error.pointer, error.details["id"]) == (pointer, "knowledge:intent")
    assert error.message.startswith("knowledge:intent: ")
    assert "knowledge:intent" in (error.action or "")


def test_conformance_malformed_association_on_a_ledger_names_the_record(
        any_project: Project) -> None:
    """context rejects malformed association shapes with exact correction pointers and no writes (through the CLI, on a ledger)."""
    context = {"version": 1, "mission_record_ids": ["x:a", "x:a"], "requirements": []}
    data = {"intent": TWO, "continuation": {"active_requirement_ids": [],
                                            "next_action": "Inspect", "context": context}}
    any_project.ok("put", "--data-file", "-", "--", "knowledge:intent", input=canonical_text(data))
    before = any_project.ok("ledger", "info")["data"]["ledger_revision"]
    result = any_project.run("work", "check", "--", "knowledge:intent")
    assert result.code == 1, result.stderr
    error = result.error
    assert (error["code"], error["pointer"], error["details"]["id"]) == (
        "invalid_intent_contract", "/data/continuation/context/mission_record_ids/1",
        "knowledge:intent")
    assert any_project.ok("ledger", "info")["data"]["ledger_revision"] == before


def test_conformance_attention_names_each_malformed_candidate() -> None:
    """attention offers only owner-admissible intents and preserves malformed candidate gaps (test/project-attention-admission.test.mjs)."""
    from assay.intent.views import work_attention

    scene = Scene()
    scene.intent(ONE, acceptance=True, record_id="knowledge:current")
    scene.write("knowledge:bad-data", {"intent": ONE, "unrelated": True}, origin="claim")
    scene.write("knowledge:bad-intent", {"intent": {"version": 99}}, origin="claim")
    rows = work_attention(RecordSnapshot(list(scene.versions), epoch="e"), scene.binding)["intents"]
    assert [(r["id"], r["sections"]["intent"]) for r in rows] == [
        ("knowledge:bad-data", "invalid"), ("knowledge:bad-intent", "invalid"),
        ("knowledge:current", "valid")]
    assert [r["error"]["details"]["id"] for r in rows[:2]] == [
        "knowledge:bad-data", "knowledge:bad-intent"]


def test_conformance_explicit_empty_active_keeps_only_the_mission() -> None:
    """explicit empty active branch preserves mission references and excludes requirement references."""
    scene, proof = continuity_scene()
    scene.write("research:mission", {"finding": "mission"})
    scene.write("research:branch", {"finding": "branch"})
    continuity = select(scene, proof, [{"id": "R1", "record_ids": ["research:branch"]}],
                        active=(), mission=("research:mission",))
    assert continuity["active_requirement_ids"] == []
    assert [r["id"] for r in continuity["records"]] == ["research:mission"]
    assert continuity["complete"] is True


def test_conformance_scope_admission_on_dependencies() -> None:
    """scope and checkout admission applies on dependencies while scoped global records remain useful."""
    scene, proof = continuity_scene()
    scene.write("research:global", {"finding": "Shared applicable evidence"}, scope="global")
    scene.write("research:foreign", {"finding": "Foreign"}, scope="project:other")
    scene.write("research:root", {"finding": "Root"}, links=(
        ("requires", "research:global"), ("requires", "research:foreign")))
    continuity = select(scene, proof, [{"id": "R-last", "record_ids": ["research:root"]}])
    ids = [r["id"] for r in continuity["records"]]
    assert "research:global" in ids and "research:foreign" not in ids
    assert [i["code"] for i in continuity["issues"]] == ["context_scope_mismatch"]


def test_conformance_retired_context_keeps_readiness() -> None:
    """retirement and stale availability stay unresolved without changing acceptance readiness."""
    scene, proof = continuity_scene()
    scene.write("rejection:retired", {"reason": "Old route"}, status="superseded")
    continuity = select(scene, proof, [{"id": "R-last", "record_ids": ["rejection:retired"]}])
    assert scene.check()["ready_to_review"] is True
    assert [i["code"] for i in continuity["issues"]] == ["context_record_retired"]


def _event(choice: str, *supersedes: str, key: str = "route; unicode \u97f3") -> dict[str, Any]:
    return {"version": 1, "key": key, "choice": choice, "reason": f"chose {choice}",
            "supersedes": list(supersedes)}


def test_conformance_obsolete_selected_decision_resolves_to_the_current_head() -> None:
    """selected obsolete decision resolves through replay and guards current heads with literal reads."""
    scene, proof = continuity_scene()
    old = scene.write("decision-event:route.1", _event("old"))
    latest = scene.write("decision-event:route.2", _event("new", old.id))
    continuity = select(scene, proof, [{"id": "R-last", "record_ids": [old.id]}])
    assert not any(r["kind"] == "decision-event" for r in continuity["records"])
    row = continuity["decisions"][0]
    assert (row["status"], row["choice"], row["head_event_ids"]) == ("resolved", "new",
                                                                    [latest.id])
    read = next(r for r in continuity["read_required"] if r["code"] == "context_decision_superseded")
    assert read["read_args"] == ["decision", "show", "--cwd", ROOT, "--", "route; unicode \u97f3"]
    assert scene.check()["write_basis"]["records"][latest.id] == 1


def test_conformance_oversized_record_is_omitted_whole_with_its_read() -> None:
    """oversized non-ASCII records keep whole IDs and truthful bounded follow-up reads."""
    scene, proof = continuity_scene()
    big = "research:\u5de8\u5927;literal"
    scene.write(big, {"finding": "\u97f3" * 50000})
    continuity = select(scene, proof, [{"id": "R-last", "record_ids": [big]}])
    assert (continuity["truncated"], continuity["complete"]) == (True, False)
    size = len(canonical_bytes(continuity))
    assert size <= MAX_BYTES and continuity["limits"]["bytes"] == size
    read = next(r for r in continuity["read_required"] if r["target_id"] == big)
    assert read["read_args"][2] == big and read["requirement_ids"] == ["R-last"]


def test_conformance_wide_missing_associations_stop_at_the_node_bound() -> None:
    """wide unresolved associations inspect no more than the node bound and disclose unknown coverage."""
    scene, proof = continuity_scene()
    ids = [f"research:missing-{i}" for i in range(300)]
    continuity = select(scene, proof, [{"id": "R-last", "record_ids": ids}])
    assert continuity["limits"]["nodes"] == MAX_NODES
    assert continuity["limits"]["edges"] <= MAX_EDGES
    assert continuity["omitted"]["deeper_count_unknown"] is True and continuity["truncated"] is True
    assert any(r["target_id"] == "knowledge:intent" for r in continuity["read_required"])
    assert len(canonical_bytes(continuity)) <= MAX_BYTES


def test_conformance_historical_scope_and_descendant_reasons() -> None:
    """historical scope is admitted explicitly and active descendants carry deduplicated selection reasons."""
    scene = Scene(admitted=("project:previous",))
    scene.write("research:historical-scope", {"finding": "Still current"},
                scope="project:previous")
    tree = _goal(("parent", None), ("child", "parent"))
    scene.intent(tree, continuation={
        "active_requirement_ids": ["parent"], "next_action": "go", "context": {
            "version": 1, "mission_record_ids": ["research:historical-scope"],
            "requirements": [{"id": "child", "record_ids": ["research:historical-scope"]}]}})
    continuity = scene.check()["continuity"]
    assert continuity["complete"] is True
    assert continuity["records"][0]["selection"] == {
        "reasons": ["mission", "requirement"], "requirement_ids": ["child"], "order": 0,
        "reason": "selected_branch"}


def test_conformance_wide_edges_are_bounded() -> None:
    """wide edges remain bounded independently of node limit and repeated reads create no mutation."""
    scene, proof = continuity_scene()
    for i in range(1030):
        scene.write(f"research:edge-{i}", {"finding": "wide"})
    scene.write("research:wide", {"finding": "Wide dependencies"},
                links=tuple(("requires", f"research:edge-{i}") for i in range(1030)))
    continuity = select(scene, proof, [{"id": "R-last", "record_ids": ["research:wide"]}])
    assert continuity["limits"]["edges"] == MAX_EDGES
    assert continuity["limits"]["nodes"] <= MAX_NODES
    assert "continuity_edge_limit" in [i["code"] for i in continuity["issues"]]
    assert continuity["truncated"] is True
    assert scene.check()["continuity"] == continuity
    links = tuple(("requires", f"research:edge-{i}") for i in range(1030))
    scene.write("knowledge:intent", {"intent": TWO, "continuation": {
        "active_requirement_ids": [], "next_action": "go"}}, links=links, origin="claim")
    through_intent = scene.check()["continuity"]
    assert through_intent["limits"]["edges"] == MAX_EDGES
    assert "continuity_edge_limit" in [i["code"] for i in through_intent["issues"]]


def test_conformance_byte_accounting_and_wide_active_lists() -> None:
    """byte accounting includes its own final metadata and omits oversized active lists explicitly."""
    scene, proof = continuity_scene()
    scene.write("research:near-bound", {"finding": ""})
    initial = select(scene, proof, [{"id": "R-last", "record_ids": ["research:near-bound"]}])
    scene.write("research:near-bound", {"finding": "x" * (
        MAX_BYTES - initial["limits"]["bytes"] - 1)})
    fitted = scene.check()["continuity"]
    assert len(canonical_bytes(fitted)) <= MAX_BYTES
    assert fitted["limits"]["bytes"] == len(canonical_bytes(fitted))
    ids = [f"R{i}-{'a' * 60}" for i in range(1000)]
    wide = Scene()
    wide.intent(dict(TWO, requirements=[{"id": rid, "text": "t", "acceptance": "a"}
                                        for rid in ids]),
                continuation={"active_requirement_ids": ids, "next_action": "all of them"})
    continuity = wide.check()["continuity"]
    assert len(canonical_bytes(continuity)) <= MAX_BYTES
    assert (continuity["omitted"]["active_requirement_ids_omitted"]
            + len(continuity["active_requirement_ids"])) == len(ids)
    assert continuity["truncated"] is True or continuity["active_requirement_ids"] == ids[:256]


def test_conformance_shared_decision_relevance_keeps_requirement_ids() -> None:
    """late shared-decision relevance and byte-omission reads retain all requirement IDs."""
    scene, proof = continuity_scene()
    event = scene.write("decision-event:shared.1", _event("chosen", key="shared"))
    scene.write("research:chain", {"finding": "Later branch"}, links=(("requires", event.id),))
    continuity = select(scene, proof, [{"id": "R1", "record_ids": [event.id]},
                                       {"id": "R-last", "record_ids": ["research:chain"]}],
                        active=("R1", "R-last"))
    assert continuity["decisions"][0]["selection"]["requirement_ids"] == ["R-last", "R1"]
    scene.write("research:large", {"finding": "\u97f3" * 50000})
    again = select(scene, proof, [{"id": "R-last", "record_ids": ["research:large"]}])
    read = next(r for r in again["read_required"] if r["target_id"] == "research:large")
    assert read["requirement_ids"] == ["R-last"]


def test_conformance_damaged_context_reads_like_the_record_itself() -> None:
    """malformed context preserves the source-correction guidance instead of generic restoration advice."""
    scene, proof = continuity_scene()
    damaged = scene.damaged("research:damaged", '{"finding":9007199254740993}')
    continuity = select(scene, proof, [{"id": "R-last", "record_ids": [damaged.id]}])
    issue = next(i for i in continuity["issues"] if i["id"] == damaged.id)
    with pytest.raises(AssayError) as info:
        _ = damaged.data
    assert (issue["message"], issue["action"]) == (info.value.message, info.value.action)
    assert issue["read_args"] == ["get", "--raw", "--revision", "1", "--", damaged.id]


def test_conformance_dropped_decision_resurrects_nothing() -> None:
    """selected decisions track status and drop without resurrecting historical values."""
    scene, proof = continuity_scene()
    event = scene.write("decision-event:lifecycle.1", _event("chosen", key="lifecycle"))
    continuity = select(scene, proof, [{"id": "R-last", "record_ids": [event.id]}])
    assert continuity["decisions"][0]["status"] == "resolved"
    scene.write(event.id, _event("chosen", key="lifecycle"), status="retired")
    row = scene.check()["continuity"]["decisions"][0]
    assert (row["status"], row["choice"]) == ("unavailable", None)


def test_conformance_corrupt_later_event_blocks_the_replayed_choice() -> None:
    """corrupt later decision event blocks a confident replayed current choice."""
    scene, proof = continuity_scene()
    prior = scene.write("decision-event:corrupt.1", _event("old", key="corrupt-stream"))
    latest = scene.damaged("decision-event:corrupt.2",
                           '{"key":"corrupt-stream","reason":9007199254740993}')
    continuity = select(scene, proof, [{"id": "R-last", "record_ids": [prior.id]}])
    row = continuity["decisions"][0]
    assert (row["status"], row["choice"]) == ("unavailable", None)
    issue = next(i for i in continuity["issues"] if i["code"] == "context_decision_unreadable")
    assert "original content" in issue["action"]
    assert any(r["target_id"] == latest.id and r["read_args"][1] == "--raw"
               for r in continuity["read_required"])


def test_conformance_historical_decisions_are_guarded_and_can_conflict() -> None:
    """selected historical decisions guard every admitted head, including previously absent choices."""
    scene, proof = continuity_scene(admitted=("project:previous-decision",))
    prior = scene.write("decision-event:history.1", _event("old", key="history-selected"),
                        scope="project:previous-decision")
    continuity = select(scene, proof, [], mission=(prior.id,))
    assert continuity["decisions"][0]["status"] == "resolved"
    assert scene.check()["write_basis"]["records"][prior.id] == 1
    scene.write("decision-event:history.2", _event("new conflict", key="history-selected"))
    row = scene.check()["continuity"]["decisions"][0]
    assert (row["status"], row["choice"]) == ("conflict", None)
    assert len(row["conflict"]["event_ids"]) == 2
    assert any(r["code"] == "context_decision_conflict"
               for r in scene.check()["continuity"]["read_required"])
