"""Review briefs: preflight, prior-ledger snapshot, selective blindness, immutability."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.canonical import parse
from assay.errors import AssayError
from assay.packet.lifecycle import add_source, create_brief
from assay.packet.validate import validate
from packet_testing import default_execution, example_packet


@pytest.fixture
def compiled(tmp_path: Path) -> Path:
    """A running standard packet right after compile: no brief yet."""
    b = example_packet(tmp_path / "p", "quick", status=None)
    b.manifest["profile"] = "standard"
    b.approve(default_execution("standard"))
    b.finish("running")
    return tmp_path / "p"


def test_brief_writes_brief_and_prior_snapshot(compiled: Path) -> None:
    """A brief and the prior-ledger snapshot are written, listed, and the packet stays valid."""
    out = create_brief(compiled, mode="semantic")
    assert out["created"] and out["path"] == "reviews/briefs/semantic.json"
    assert (compiled / "raw/drafts/claims-r1.json").read_bytes() == \
        (compiled / "claims.json").read_bytes()
    assert validate(compiled).valid


def test_brief_semantic_projection_hides_states(compiled: Path) -> None:
    """A semantic brief shows statements, excerpts, locators and cited sources, never states."""
    create_brief(compiled, mode="semantic")
    projection = parse((compiled / "reviews/briefs/semantic.json").read_bytes())["projection"]
    assert set(projection) == {"claims", "sources"}
    claim = projection["claims"][0]
    assert set(claim) == {"claimId", "statement", "evidence"}
    assert set(claim["evidence"][0]) == {"evidenceId", "relation", "sourceId", "locator", "excerpt"}
    assert [s["sourceId"] for s in projection["sources"]] == ["src-0"]


def test_brief_adversarial_projection_hides_evidence(compiled: Path) -> None:
    """An adversarial brief shows only scope, questions and claim statements."""
    create_brief(compiled, mode="adversarial")
    projection = parse((compiled / "reviews/briefs/adversarial.json").read_bytes())["projection"]
    assert set(projection) == {"scope", "claims"}
    assert set(projection["scope"]) == {"questions", "includedScope", "excludedScope"}
    assert set(projection["claims"][0]) == {"claimId", "statement"}


def test_brief_is_idempotent(compiled: Path) -> None:
    """Asking for the same brief again returns it unchanged."""
    first = create_brief(compiled, mode="coverage")
    second = create_brief(compiled, mode="coverage")
    assert not second["created"] and second["digest"] == first["digest"]


def test_brief_refuses_other_projection_under_same_id(compiled: Path) -> None:
    """A brief id is bound to one projection; a different mode under it is refused."""
    create_brief(compiled, mode="semantic", brief_id="one")
    with pytest.raises(AssayError) as err:
        create_brief(compiled, mode="adversarial", brief_id="one")
    assert err.value.code == "artifact_exists"


def test_brief_preflight_refuses_broken_source(compiled: Path) -> None:
    """A changed source capture fails preflight and no brief is written."""
    (compiled / "raw/sources/src-0.txt").write_text("rewritten\n")
    with pytest.raises(AssayError) as err:
        create_brief(compiled, mode="semantic")
    assert err.value.code == "packet_preflight_failed"
    assert err.value.details["issues"][0]["code"] == "DIGEST_MISMATCH"
    assert not (compiled / "reviews/briefs/semantic.json").exists()


def test_brief_freezes_sources(compiled: Path, tmp_path: Path) -> None:
    """Once a brief exists, adding a source is refused."""
    create_brief(compiled, mode="semantic")
    (tmp_path / "more.txt").write_text("more\n")
    with pytest.raises(AssayError) as err:
        add_source(compiled, source_id="more", file=str(tmp_path / "more.txt"))
    assert err.value.code == "sources_frozen"


def test_brief_ledger_change_without_reconciliation_is_invalid(compiled: Path) -> None:
    """Editing claims.json after briefs without reconciling is PRIOR_LEDGER_MISMATCH."""
    create_brief(compiled, mode="semantic")
    ledger = compiled / "claims.json"
    ledger.write_bytes(ledger.read_bytes().replace(b"Claim number 0", b"Claim number 9"))
    found = {(i.code, i.path, i.pointer) for i in validate(compiled).issues}
    assert ("PRIOR_LEDGER_MISMATCH", "claims.json", "") in found
