"""Decision streams replayed to the current choice."""

from __future__ import annotations

import pytest
from intent_builders import Ledger

from assay.errors import AssayError
from assay.intent.decisions import event_record_id, replay, validate_event_data


def event(choice: str, *supersedes: str, key: str = "k") -> dict:
    return {"version": 1, "key": key, "choice": choice, "reason": "why",
            "supersedes": list(supersedes)}


def test_decisions_single_event_resolves() -> None:
    """One event is the current choice."""
    ledger = Ledger()
    ledger.put("decision-event:k.1", event("a"))
    out = replay("k", ledger.versions)
    assert (out["status"], out["choice"]) == ("resolved", "a")


def test_decisions_superseded_choice_cannot_revive() -> None:
    """Superseding the successor does not bring back the first choice."""
    ledger = Ledger()
    ledger.put("decision-event:k.1", event("a"))
    ledger.put("decision-event:k.2", event("b", "decision-event:k.1"))
    ledger.put("decision-event:k.3", event("c", "decision-event:k.2"))
    out = replay("k", ledger.versions)
    assert out["choice"] == "c" and out["head_event_ids"] == ["decision-event:k.3"]


def test_decisions_unrelated_heads_conflict() -> None:
    """Two heads with different choices are a named conflict."""
    ledger = Ledger()
    ledger.put("decision-event:k.1", event("a"))
    ledger.put("decision-event:k.2", event("b"))
    out = replay("k", ledger.versions)
    assert out["status"] == "conflict" and out["conflict"]["choices"] == ["a", "b"]


def test_decisions_agreeing_heads_resolve() -> None:
    """Two heads with the same choice resolve to it."""
    ledger = Ledger()
    ledger.put("decision-event:k.1", event("a"))
    ledger.put("decision-event:k.2", event("a"))
    assert replay("k", ledger.versions)["status"] == "resolved"


def test_decisions_retired_head_is_not_current() -> None:
    """A retired event is no head and its predecessor stays superseded: no current choice."""
    ledger = Ledger()
    ledger.put("decision-event:k.1", event("a"))
    ledger.put("decision-event:k.2", event("b", "decision-event:k.1"), status="retired")
    out = replay("k", ledger.versions)
    assert out["status"] == "unavailable" and out["head_event_ids"] == []
    assert out["choice"] is None and out["conflict"] is None


def test_decisions_no_events_unavailable() -> None:
    """A key without events is unavailable."""
    assert replay("k", [])["status"] == "unavailable"


def test_decisions_order_independent() -> None:
    """Replay does not depend on the order records arrive in."""
    ledger = Ledger()
    ledger.put("decision-event:k.1", event("a"))
    ledger.put("decision-event:k.2", event("b", "decision-event:k.1"))
    assert replay("k", ledger.versions) == replay("k", list(reversed(ledger.versions)))


def test_decisions_invalid_event_named() -> None:
    """An event record with malformed data is listed, not used."""
    ledger = Ledger()
    ledger.put("decision-event:k.1", {"key": "k", "choice": "a"})
    out = replay("k", ledger.versions)
    assert out["invalid_event_ids"] == ["decision-event:k.1"] and out["status"] == "unavailable"


def test_decisions_event_data_closed() -> None:
    """Unknown keys in decision-event data are invalid_decision_event with a pointer."""
    with pytest.raises(AssayError) as info:
        validate_event_data(dict(event("a"), extra=1))
    assert (info.value.code, info.value.pointer) == ("invalid_decision_event", "/data/extra")


def test_decisions_event_id_is_content_derived() -> None:
    """The same content always gives the same event id."""
    assert event_record_id("Store Choice", "a", "r", ["x"]) == event_record_id(
        "Store Choice", "a", "r", ["x"])
    assert event_record_id("Store Choice", "a", "r", []).startswith("decision-event:store-choice.")
