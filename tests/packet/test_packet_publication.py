"""Publication: render only publishable packets, withdraw packet.md otherwise."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from assay.errors import AssayError
from assay.packet.layout import file_digest
from assay.packet.render import publish, render_markdown
from assay.packet.validate import check_and_withdraw, validate


def _run(root: Path):  # type: ignore[no-untyped-def]
    outcome = validate(root)
    assert outcome.run is not None, outcome.issues
    return outcome.run


def test_publication_render_has_every_section(build_case: Callable[[str], Path]) -> None:
    """packet.md shows claims by state, contradictions and qualifications, gaps and assurance."""
    text = render_markdown(_run(build_case("valid-contested")))
    for heading in ("## Claims by state", "## Contradictions and Qualifications", "## Gaps",
                    "## Assurance", "### Contested (1)", "### Supported (3)"):
        assert heading in text
    assert "contradicted by `ev-against`" in text and "only for small inputs" in text


def test_publication_render_is_deterministic(build_case: Callable[[str], Path]) -> None:
    """Rendering the same packet twice gives the same bytes."""
    root = build_case("valid-thorough")
    assert render_markdown(_run(root)) == render_markdown(_run(root))


def test_publication_publish_writes_verified_file(build_case: Callable[[str], Path]) -> None:
    """publish writes packet.md whose digest it reports, leaving no temporary sibling."""
    root = build_case("valid-standard")
    written = publish(root, _run(root))
    assert written["digest"] == file_digest((root / "packet.md").read_bytes())
    assert [p.name for p in root.iterdir() if p.name.startswith(".")] == []


def test_publication_partial_is_rendered_as_partial(build_case: Callable[[str], Path]) -> None:
    """An honest partial packet is publishable and says so."""
    root = build_case("valid-partial-lower-profile")
    publish(root, _run(root))
    text = (root / "packet.md").read_text()
    assert "**partial**" in text and "achieved `quick`" in text


def test_publication_running_packet_is_refused(build_case: Callable[[str], Path]) -> None:
    """A valid but still running packet is not publishable."""
    root = build_case("valid-running")
    with pytest.raises(AssayError) as err:
        publish(root, _run(root))
    assert err.value.code == "packet_not_publishable"


def test_publication_invalid_packet_withdraws_render(build_case: Callable[[str], Path]) -> None:
    """Validating an invalid packet removes a packet.md left from an earlier generation."""
    root = build_case("digest-mismatch-one-byte")
    (root / "packet.md").write_text("# an older generation\n")
    outcome, withdrawn = check_and_withdraw(root)
    assert not outcome.valid and withdrawn
    assert not (root / "packet.md").exists()


def test_publication_unpublishable_packet_withdraws_render(
        build_case: Callable[[str], Path]) -> None:
    """A valid packet that is not publishable also loses its packet.md."""
    root = build_case("valid-running")
    (root / "packet.md").write_text("# stale\n")
    outcome, withdrawn = check_and_withdraw(root)
    assert outcome.valid and withdrawn


def test_publication_valid_packet_keeps_render(build_case: Callable[[str], Path]) -> None:
    """Validating a publishable packet leaves its packet.md alone."""
    root = build_case("valid-quick")
    publish(root, _run(root))
    outcome, withdrawn = check_and_withdraw(root)
    assert outcome.valid and not withdrawn and (root / "packet.md").exists()


def test_publication_achieved_profile_is_derived(build_case: Callable[[str], Path]) -> None:
    """The achieved profile comes from the pass table, not from the manifest."""
    run = _run(build_case("valid-partial-lower-profile"))
    assert (run.requested, run.achieved) == ("standard", "quick")
    assert [p.mode for p in run.passes if not p.complete] == [
        "semantic-verification", "adversarial", "coverage", "reconciliation"]


def test_publication_redacted_evidence_is_eligible(build_case: Callable[[str], Path]) -> None:
    """Redacted-exact evidence is recognised against the reopened source."""
    run = _run(build_case("valid-redacted-exact"))
    states = {e.evidence_id: e.state for e in run.evidence}
    assert states["ev-red"] == "redacted-exact" and states["ev-0"] == "exact"


def test_publication_withdraw_removes_planted_link_not_target(
        build_case: Callable[[str], Path], tmp_path: Path) -> None:
    """A packet.md planted as a symlink is withdrawn as a link; its target survives."""
    root = build_case("digest-mismatch-one-byte")
    target = tmp_path / "elsewhere.md"
    target.write_text("someone else's file\n")
    (root / "packet.md").symlink_to(target)
    _, withdrawn = check_and_withdraw(root)
    assert withdrawn and not (root / "packet.md").is_symlink()
    assert target.read_text() == "someone else's file\n"
