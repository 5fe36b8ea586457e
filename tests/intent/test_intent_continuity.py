"""The continuity projection: selection, bounds, read_required and decisions."""

from __future__ import annotations

from intent_builders import Ledger, data, intent, passed, ref

from assay.canonical import canonical_bytes
from assay.intent import continuity as cont
from assay.intent.check import work_check
from assay.intent.snapshot import ProjectBinding

BINDING = ProjectBinding(root="/srv/project", scope="project:demo", principal="agent")


def project(ledger: Ledger) -> dict:
    return work_check(ledger.snapshot(), BINDING, "knowledge:login")["continuity"]


def with_context(ledger: Ledger, records: list[str], mission: tuple[str, ...] = (),
                 active: tuple[str, ...] = ("R1",), **kw: object) -> None:
    ledger.put("knowledge:login", {"intent": intent(), "continuation": {
        "active_requirement_ids": list(active), "next_action": "go",
        "context": {"version": 1, "mission_record_ids": list(mission),
                    "requirements": [{"id": "R1", "record_ids": records}]}}}, **kw)


def test_continuity_legacy_defaults_use_unfinished_requirements() -> None:
    """Without a continuation every unfinished requirement is active."""
    ledger = Ledger()
    ledger.put("knowledge:login", {"intent": intent()})
    out = project(ledger)
    assert out["association_mode"] == "legacy_defaults"
    assert out["active_requirement_ids"] == ["R1", "R2"]


def test_continuity_explicit_empty_active_stays_empty() -> None:
    """An explicitly empty active list selects no requirement."""
    ledger = Ledger()
    ledger.put("knowledge:login", {"intent": intent(), "continuation": {
        "active_requirement_ids": [], "next_action": "wait"}})
    assert project(ledger)["active_requirement_ids"] == []


def test_continuity_active_includes_ancestors_and_unfinished_descendants() -> None:
    """Records of an active requirement's ancestors and unfinished descendants are selected branch."""
    ledger = Ledger()
    tree = intent([{"id": "A", "text": "t", "acceptance": "a"},
                   {"id": "B", "text": "t", "acceptance": "a", "parent_id": "A"},
                   {"id": "C", "text": "t", "acceptance": "a", "parent_id": "B"},
                   {"id": "D", "text": "t", "acceptance": "a"}])
    for name in "abcd":
        ledger.put(f"knowledge:{name}", {"n": name})
    ledger.put("knowledge:login", {"intent": tree, "continuation": {
        "active_requirement_ids": ["B"], "next_action": "go", "context": {
            "version": 1, "mission_record_ids": [], "requirements": [
                {"id": rid, "record_ids": [f"knowledge:{rid.lower()}"]} for rid in "ABCD"]}}})
    out = project(ledger)
    assert out["active_requirement_ids"] == ["B"]
    assert [(r["id"], r["selection"]["reason"]) for r in out["records"]] == [
        ("knowledge:b", "active_requirement"), ("knowledge:a", "selected_branch"),
        ("knowledge:c", "selected_branch")]


def test_continuity_follows_requires_links() -> None:
    """An associated record's requires/depends-on closure is selected as dependency."""
    ledger = Ledger()
    ledger.put("knowledge:c", {"n": 3})
    ledger.put("knowledge:b", {"n": 2}, links=(("depends-on", "knowledge:c"),))
    ledger.put("knowledge:a", {"n": 1}, links=(("requires", "knowledge:b"),
                                                ("relates-to", "knowledge:x")))
    with_context(ledger, ["knowledge:a"])
    out = project(ledger)
    assert [r["id"] for r in out["records"]] == ["knowledge:a", "knowledge:b", "knowledge:c"]
    assert out["records"][1]["selection"]["reason"] == "active_requirement_dependency"
    assert out["records"][1]["selection"]["reasons"] == ["dependency:knowledge:a"]
    assert out["complete"] is True and out["limits"]["edges"] == 2


def test_continuity_missing_record_gets_literal_read() -> None:
    """A missing associated record is an issue with read_args get -- ID."""
    ledger = Ledger()
    with_context(ledger, ["knowledge:nowhere"])
    out = project(ledger)
    assert out["read_required"][0]["read_args"] == ["get", "--", "knowledge:nowhere"]
    assert out["complete"] is False


def test_continuity_retired_record_gets_a_read() -> None:
    """A retired associated record stays unresolved with a literal get read."""
    ledger = Ledger()
    ledger.put("knowledge:old", {"n": 1}, status="retired")
    with_context(ledger, ["knowledge:old"])
    out = project(ledger)
    assert out["issues"][0]["code"] == "context_record_retired"
    assert out["read_required"][0]["read_args"] == ["get", "--", "knowledge:old"]
    assert out["records"] == []


def test_continuity_foreign_scope_is_unresolved() -> None:
    """A record of a non-admitted project scope stays unresolved."""
    ledger = Ledger()
    ledger.put("knowledge:theirs", {"n": 1}, scope="project:elsewhere")
    with_context(ledger, ["knowledge:theirs"])
    assert project(ledger)["issues"][0]["code"] == "context_scope_mismatch"


def test_continuity_global_records_are_admitted() -> None:
    """Global records are selectable context."""
    ledger = Ledger()
    ledger.put("knowledge:house-rule", {"n": 1}, scope="global")
    with_context(ledger, ["knowledge:house-rule"])
    out = project(ledger)
    assert out["complete"] is True and out["records"][0]["scope"] == "global"


def test_continuity_node_limit_truncates() -> None:
    """More than 256 reachable records stop at 256 inspected nodes with the frontier named."""
    ledger = Ledger()
    for i in range(260):
        ledger.put(f"knowledge:l{i}", {"i": i})
    ledger.put("knowledge:hub", {}, links=tuple(("requires", f"knowledge:l{i}") for i in range(260)))
    with_context(ledger, ["knowledge:hub"])
    out = project(ledger)
    assert out["limits"]["nodes"] == cont.MAX_NODES == 256
    assert out["truncated"] is True and out["omitted"]["deeper_count_unknown"] is True
    assert out["omitted"]["known_ids"][0] == "knowledge:l255"
    assert [(i["code"], i["id"]) for i in out["issues"]] == [
        ("continuity_node_limit", "knowledge:login")]
    assert out["read_required"][0]["read_args"] == ["get", "--", "knowledge:login"]


def test_continuity_edge_limit_truncates() -> None:
    """More than 1,024 followed links stop at 1,024 inspected edges."""
    ledger = Ledger()
    ledger.put("knowledge:hub", {}, links=tuple(("requires", f"knowledge:x{i}")
                                                for i in range(1100)))
    with_context(ledger, ["knowledge:hub"])
    out = project(ledger)
    assert out["limits"]["edges"] == cont.MAX_EDGES == 1024 and out["truncated"] is True
    assert "continuity_edge_limit" in [i["code"] for i in out["issues"]]


def test_continuity_byte_limit_holds() -> None:
    """The canonical continuity JSON never exceeds 128 KiB."""
    ledger = Ledger()
    for i in range(12):
        ledger.put(f"knowledge:big{i}", {"text": "y" * 15000})
    with_context(ledger, [f"knowledge:big{i}" for i in range(12)])
    out = project(ledger)
    assert len(canonical_bytes(out)) <= cont.MAX_BYTES == 128 * 1024
    assert out["limits"]["bytes"] == len(canonical_bytes(out))
    # Rows rank by id, so the last one (big9) is the first left out.
    assert out["truncated"] is True and "knowledge:big9" in out["omitted"]["known_ids"]
    assert out["issues"][0]["code"] == "continuity_byte_limit"


def test_continuity_oversized_record_is_truncated_with_a_read() -> None:
    """A record too large for the byte bound is omitted whole: truncated, with a get read."""
    ledger = Ledger()
    ledger.put("knowledge:huge", {"text": "z" * 140_000})
    ledger.put("knowledge:small", {"text": "fits"})
    with_context(ledger, ["knowledge:huge", "knowledge:small"])
    out = project(ledger)
    assert [r["id"] for r in out["records"]] == ["knowledge:small"]
    assert out["truncated"] is True and out["complete"] is False
    assert {"target_id": "knowledge:huge", "read_args": ["get", "--", "knowledge:huge"]}.items() \
        <= out["read_required"][-1].items()


def test_continuity_decision_conflict_named() -> None:
    """Two unrelated heads of one key are a named conflict with a decision show read."""
    ledger = Ledger()
    event = {"version": 1, "key": "k", "choice": "a", "reason": "r", "supersedes": []}
    ledger.put("decision-event:k.1", event)
    ledger.put("decision-event:k.2", dict(event, choice="b"))
    with_context(ledger, ["decision-event:k.1"])
    out = project(ledger)
    assert out["decisions"][0]["status"] == "conflict"
    assert out["read_required"][0]["read_args"] == ["decision", "show", "--cwd",
                                                    "/srv/project", "--", "k"]


def test_continuity_superseded_event_needs_current_stream() -> None:
    """Selecting a superseded event resolves to the current head and asks to read the stream."""
    ledger = Ledger()
    event = {"version": 1, "key": "k", "choice": "a", "reason": "r", "supersedes": []}
    ledger.put("decision-event:k.1", event)
    ledger.put("decision-event:k.2", dict(event, choice="b", supersedes=["decision-event:k.1"]))
    with_context(ledger, ["decision-event:k.1"])
    out = project(ledger)
    assert out["decisions"][0]["choice"] == "b"
    assert out["issues"][0]["code"] == "context_decision_superseded"


def test_continuity_order_puts_decisions_and_constraints_first() -> None:
    """Within a band decisions and constraints precede other records, then by id."""
    ledger = Ledger()
    ledger.put("knowledge:plain", {"n": 1})
    ledger.put("knowledge:rule", {"category": "constraint"})
    ledger.put("decision-event:k.1", {"version": 1, "key": "k", "choice": "a", "reason": "r",
                                      "supersedes": []})
    with_context(ledger, ["knowledge:plain", "knowledge:rule", "decision-event:k.1"])
    out = project(ledger)
    assert out["decisions"][0]["selection"]["order"] == 0
    assert [(r["id"], r["selection"]["order"]) for r in out["records"]] == [
        ("knowledge:rule", 1), ("knowledge:plain", 2)]


def test_continuity_cited_evidence_of_active_requirement_selected() -> None:
    """The evidence an active requirement's result cites is selected."""
    ledger = Ledger()
    a = ledger.put("evidence:a", {"ok": 1})
    unfinished = dict(passed("R1", ref(a)), status="unverified")
    ledger.put("knowledge:login", data(intent(), [unfinished]))
    out = project(ledger)
    assert out["records"][0]["selection"]["reasons"] == ["current_evidence"]


def test_continuity_active_overflow_counted() -> None:
    """More than 256 active requirements are cut, and the omission is counted."""
    ledger = Ledger()
    reqs = [{"id": f"R{i}", "text": "t", "acceptance": "a"} for i in range(300)]
    ledger.put("knowledge:login", {"intent": intent(reqs)})
    out = project(ledger)
    assert len(out["active_requirement_ids"]) == 256
    assert out["omitted"]["active_requirement_ids_omitted"] == 44
