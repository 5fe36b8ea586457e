"""Report scenarios built on a real SQLite ledger, shared by the golden test and the benchmark.

Each scenario function takes a :class:`Scene` and returns the intent record id
to check. Scenes write through the real store, so records carry real ledger
revisions, digests and statuses.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assay.intent.contract import intent_sha256
from assay.intent.snapshot import ProjectBinding
from assay.ledger.store import Link, Receipt, Store, Write

SCOPE = "project:demo"


class Scene:
    """A project binding and a store to write scenario records into."""

    def __init__(self, store: Store, root: str) -> None:
        self.store = store
        self.binding = ProjectBinding(root=root, scope=SCOPE, admitted_scopes=("project:old",),
                                      principal="agent")

    def put(self, record_id: str, data: Any, *, scope: str = SCOPE, status: str = "current",
            superseded_by: str | None = None, links: tuple[tuple[str, str], ...] = (),
            origin: str = "claim", audience: str = "project") -> Receipt:
        return self.store.put(Write(
            id=record_id, data=data, scope=scope, status=status, superseded_by=superseded_by,
            links=tuple(Link(rel, target) for rel, target in links), origin=origin,
            audience=audience))

    def evidence(self, name: str, *, origin: str = "machine", **kw: Any) -> dict[str, Any]:
        receipt = self.put(f"evidence:{name}", {"command": name, "status": "passed",
                                                "exit_code": 0}, origin=origin, **kw)
        return {"id": receipt.id, "revision": receipt.revision}


def intent(*specs: tuple[str, str | None]) -> dict[str, Any]:
    return {
        "version": 1,
        "brief": "Make the login flow safe",
        "user_reference": "ticket LOGIN-42",
        "requirements": [
            {"id": rid, "text": f"Requirement {rid}", "acceptance": f"Run the {rid} test",
             **({"parent_id": parent} if parent else {})}
            for rid, parent in specs
        ],
        "boundaries": ["Keep the existing session store"],
        "non_goals": ["No new login page"],
    }


TWO = (("R1", None), ("R2", None))


def result(rid: str, status: str, *refs: dict[str, Any], notes: str = "The run covers it"
           ) -> dict[str, Any]:
    return {"requirement_id": rid, "status": status, "evidence": list(refs), "notes": notes}


def data(the_intent: dict[str, Any], results: list[dict[str, Any]], *,
         blockers: tuple[str, ...] = (), sha: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"intent": the_intent,
            "acceptance": {"intent_sha256": sha or intent_sha256(the_intent), "results": results,
                           "blockers": list(blockers)},
            **extra}


def ready(s: Scene) -> str:
    a, b = s.evidence("r1"), s.evidence("r2")
    s.put("knowledge:login", data(intent(*TWO), [result("R1", "passed", a),
                                                 result("R2", "passed", b)]))
    return "knowledge:login"


def ready_claims_only(s: Scene) -> str:
    a, b = s.evidence("r1"), s.evidence("r2", origin="claim")
    s.put("knowledge:login", data(intent(*TWO), [result("R1", "passed", a),
                                                 result("R2", "passed", b)],
                                  tasks=[{"runtime_task_id": "t-1", "owner": "agent-a",
                                          "requirement_ids": ["R2"], "status": "done"}]))
    return "knowledge:login"


def missing_acceptance(s: Scene) -> str:
    s.put("knowledge:login", {"intent": intent(*TWO)})
    return "knowledge:login"


def missing_evidence(s: Scene) -> str:
    s.put("knowledge:login", data(intent(*TWO), [
        result("R1", "passed"),
        result("R2", "passed", {"id": "evidence:never-recorded", "revision": 1}, notes=" "),
    ]))
    return "knowledge:login"


def stale_revision(s: Scene) -> str:
    a = s.evidence("r1")
    b = s.evidence("r2")
    s.put("evidence:r2", {"command": "r2", "status": "failed", "exit_code": 1}, origin="machine")
    s.put("knowledge:login", data(intent(*TWO), [result("R1", "passed", a),
                                                 result("R2", "passed", b)]))
    return "knowledge:login"


def hash_mismatch(s: Scene) -> str:
    a = s.evidence("r1")
    b = dict(s.evidence("r2"), data_sha256="0" * 64)
    s.put("knowledge:login", data(intent(*TWO), [result("R1", "passed", a),
                                                 result("R2", "passed", b)]))
    return "knowledge:login"


def retired_evidence(s: Scene) -> str:
    a = s.evidence("r1")
    b = s.evidence("r2")
    s.evidence("r2b")
    payload = {"command": "r1", "status": "passed", "exit_code": 0}
    s.put("evidence:r1", payload, status="retired", origin="machine")
    s.put("evidence:r2", {"command": "r2", "status": "passed", "exit_code": 0},
          status="superseded", superseded_by="evidence:r2b", origin="machine")
    s.put("knowledge:login", data(intent(*TWO), [
        result("R1", "passed", dict(a, revision=2)),
        result("R2", "passed", dict(b, revision=2)),
    ]))
    return "knowledge:login"


def out_of_scope_evidence(s: Scene) -> str:
    foreign = s.evidence("foreign", scope="project:elsewhere")
    shared = s.evidence("shared", scope="global")
    historical = s.evidence("historical", scope="project:old")
    s.put("knowledge:login", data(intent(("R1", None), ("R2", None), ("R3", None)), [
        result("R1", "passed", foreign, shared),
        result("R2", "passed", {"id": "knowledge:login", "revision": 1}),
        result("R3", "passed", historical),
    ]))
    return "knowledge:login"


def blocker(s: Scene) -> str:
    a, b = s.evidence("r1"), s.evidence("r2")
    s.put("knowledge:login", data(intent(*TWO), [result("R1", "passed", a),
                                                 result("R2", "passed", b)],
                                  blockers=("Security review has not happened",)))
    return "knowledge:login"


def stale_intent(s: Scene) -> str:
    a, b = s.evidence("r1"), s.evidence("r2")
    old = intent(*TWO)
    new = intent(*TWO)
    new["requirements"][1]["text"] = "Reject expired and forged tokens"
    s.put("knowledge:login", data(new, [result("R1", "passed", a),
                                        result("R2", "unverified", b, notes="")],
                                  sha=intent_sha256(old)))
    return "knowledge:login"


def parent_awaiting_descendants(s: Scene) -> str:
    a, b = s.evidence("r1"), s.evidence("r2")
    tree = intent(("R1", None), ("R1.1", "R1"), ("R1.2", "R1"), ("R1.2.1", "R1.2"))
    s.put("knowledge:login", data(tree, [
        result("R1", "passed", a),
        result("R1.1", "passed", b),
        result("R1.2", "passed", b),
        result("R1.2.1", "unverified", notes="Waiting for the nightly run"),
    ]))
    return "knowledge:login"


def failed_child(s: Scene) -> str:
    a, b = s.evidence("r1"), s.evidence("r2")
    tree = intent(("R1", None), ("R2", "R1"))
    s.put("knowledge:login", data(tree, [
        result("R1", "passed", a),
        result("R2", "failed", b, notes="The token test fails on expired tokens"),
    ], continuation={"active_requirement_ids": ["R2"], "next_action": "Fix expiry handling"}))
    return "knowledge:login"


def continuity_truncation(s: Scene) -> str:
    """A hub record requiring 300 leaves: the projection stops at 256 inspected nodes."""
    for i in range(300):
        s.put(f"knowledge:leaf-{i:03d}", {"n": i})
    s.put("knowledge:hub", {"about": "everything"},
          links=tuple(("requires", f"knowledge:leaf-{i:03d}") for i in range(300)))
    s.put("knowledge:login", {
        "intent": intent(*TWO),
        "continuation": {"active_requirement_ids": ["R1"], "next_action": "Read the hub",
                         "context": {"version": 1, "mission_record_ids": [],
                                     "requirements": [{"id": "R1",
                                                       "record_ids": ["knowledge:hub"]}]}},
    })
    return "knowledge:login"


def continuity_bytes(s: Scene) -> str:
    """Ten 15 KiB records: the projection stops at 128 KiB of canonical JSON."""
    big = "x" * (15 * 1024)
    for i in range(10):
        s.put(f"knowledge:big-{i}", {"text": big, "n": i})
    s.put("knowledge:login", {
        "intent": intent(*TWO),
        "continuation": {"active_requirement_ids": ["R1"], "next_action": "Read them",
                         "context": {"version": 1, "mission_record_ids": [],
                                     "requirements": [{"id": "R1", "record_ids": [
                                         f"knowledge:big-{i}" for i in range(10)]}]}},
    })
    return "knowledge:login"


def decision_conflict(s: Scene) -> str:
    first = {"version": 1, "key": "session-store", "choice": "redis", "reason": "fast",
             "supersedes": []}
    s.put("decision-event:session-store.a", first)
    s.put("decision-event:session-store.b", dict(first, choice="postgres", reason="one store"))
    s.put("knowledge:rejected-cookie-sessions", {"category": "rejection",
                                                 "text": "No client-side sessions"})
    s.put("knowledge:login", {
        "intent": intent(*TWO),
        "continuation": {"active_requirement_ids": ["R1"], "next_action": "Settle the store",
                         "context": {"version": 1,
                                     "mission_record_ids": ["knowledge:rejected-cookie-sessions"],
                                     "requirements": [{"id": "R1", "record_ids": [
                                         "decision-event:session-store.a",
                                         "knowledge:missing-note"]}]}},
    })
    return "knowledge:login"


SCENARIOS: dict[str, Callable[[Scene], str]] = {
    f.__name__: f for f in (
        ready, ready_claims_only, missing_acceptance, missing_evidence, stale_revision,
        hash_mismatch, retired_evidence, out_of_scope_evidence, blocker, stale_intent,
        parent_awaiting_descendants, failed_child, continuity_truncation, continuity_bytes,
        decision_conflict,
    )
}
