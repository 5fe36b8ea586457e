"""Packets in the recon tool's layout validate with the same rules as assay's own."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from packet_fixtures import CASES, boundary_files, validated_packet
from recon_fixtures import RECON_CASES, RECON_INVALID, RECON_VALID, TWINS
from test_packet_property import flip_one_byte
from test_packet_robustness import replace_one_value

from assay.packet.recon import line_range
from assay.packet.recon_build import recon_packet
from assay.packet.render import publish, render_markdown
from assay.packet.validate import check_and_withdraw, validate
from assay_testing import Project


def build(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    RECON_CASES[name].build(root)
    return root


@pytest.mark.parametrize("name", RECON_VALID)
def test_packet_recon_valid_packet_validates(name: str, tmp_path: Path) -> None:
    """A valid recon-layout packet compiles with no issue and the expected publication."""
    outcome = validate(build(tmp_path, name))
    assert outcome.issues == ()
    assert outcome.run is not None
    assert outcome.run.publication == RECON_CASES[name].publication


@pytest.mark.parametrize("name", RECON_INVALID)
def test_packet_recon_invalid_packet_reports_its_code(name: str, tmp_path: Path) -> None:
    """An invalid recon-layout packet yields no run and names its code, file and recon pointer."""
    outcome = validate(build(tmp_path, name))
    assert outcome.run is None
    found = [(i.code, i.path, i.pointer) for i in outcome.issues]
    assert RECON_CASES[name].expect in found, found


@pytest.mark.parametrize("name", sorted(TWINS))
def test_packet_recon_twin_agrees_with_assay_layout(name: str, tmp_path: Path) -> None:
    """A recon packet and its assay-layout twin get the same profile, publication and states."""
    recon = validate(build(tmp_path, name)).run
    twin_root = tmp_path / "twin"
    CASES[TWINS[name]].build(twin_root)
    twin = validate(twin_root).run
    assert recon is not None and twin is not None
    assert (recon.requested, recon.achieved, recon.publication) == \
        (twin.requested, twin.achieved, twin.publication)
    assert recon.summary()["claim_states"] == twin.summary()["claim_states"]
    assert [(p.mode, p.complete) for p in recon.passes] == [(p.mode, p.complete)
                                                             for p in twin.passes]


def test_packet_recon_validated_run_renders(tmp_path: Path) -> None:
    """A valid recon packet is rendered from its validated run like any other."""
    root = build(tmp_path, "recon-valid-standard")
    run = validate(root).run
    assert run is not None
    text = render_markdown(run)
    assert "Claim number 0 is supported by its sources." in text
    assert publish(root, run)["path"] == "packet.md"


def test_packet_recon_invalid_packet_withdraws_render(tmp_path: Path) -> None:
    """A recon packet that fails validation loses any packet.md it had."""
    root = build(tmp_path, "recon-achieved-profile-mismatch")
    (root / "packet.md").write_text("stale view\n")
    outcome, withdrawn = check_and_withdraw(root)
    assert outcome.run is None and withdrawn
    assert not (root / "packet.md").exists()


def test_packet_recon_artifact_pointer_counts_the_listed_ledger(tmp_path: Path) -> None:
    """An artifact issue points at the recon index, with claims.json listed before it."""
    root = tmp_path / "p"
    b = recon_packet(root, status=None)
    b.manifest["artifacts"].append({"path": "../outside.json", "digest": "sha256:" + "0" * 64})
    b.finish()
    manifest = json.loads((root / "manifest.json").read_bytes())
    manifest["artifacts"].insert(0, manifest["artifacts"].pop())  # claims.json first
    (root / "manifest.json").write_text(json.dumps(manifest))
    listed = [a["path"] for a in manifest["artifacts"]]
    assert listed == ["claims.json", "raw/dossiers/map-1/dossier.json",
                      "raw/dossiers/gather-1/dossier.json", "../outside.json"]
    found = [(i.code, i.pointer) for i in validate(root).issues]
    assert ("PATH_ESCAPE", "/artifacts/3/path") in found


def test_packet_recon_assay_layout_with_recon_kinds_still_validates(tmp_path: Path) -> None:
    """Assay's own layout written with recon. kind names is not mistaken for the recon layout."""
    root = tmp_path / "p"
    CASES["valid-recon-thorough"].build(root)
    assert validate(root).valid


def test_packet_recon_line_range_covers_whole_lines() -> None:
    """A line locator maps to the bytes of exactly those lines, without the newline."""
    data = b"one\ntwo\nthree\n"
    assert data[slice(*line_range(data, 2, 3))] == b"two\nthree"
    assert data[slice(*line_range(data, 1, 1))] == b"one"


def test_packet_recon_line_range_drops_carriage_return() -> None:
    """A line ending in CRLF ends before its carriage return, as the recon tool reads lines."""
    data = b"one\r\ntwo\r\n"
    assert data[slice(*line_range(data, 1, 1))] == b"one"


def test_packet_recon_line_range_outside_capture_is_past_its_end() -> None:
    """A line range beyond the capture maps past its end, so the boundary derives invalid."""
    data = b"one\ntwo"
    _, end = line_range(data, 2, 5)
    assert end > len(data)
    assert line_range(data, None, None) == (0, len(data))


@pytest.fixture(scope="module")
def recon_standard() -> Iterator[tuple[Path, str, list[str]]]:
    """A valid standard recon packet, its identity, and every file the boundary reads."""
    with validated_packet(lambda root: recon_packet(root, "standard"),
                          "recon-property-") as (root, run):
        yield root, run.identity, [*boundary_files(run), "raw/sources/src-0.txt"]


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_packet_recon_single_byte_change_is_never_silent(
        recon_standard: tuple[Path, str, list[str]], data: st.DataObject) -> None:
    """Changing any one byte of any file of a recon packet invalidates it or changes its identity."""
    root, identity, files = recon_standard
    outcome = flip_one_byte(root, files, data)
    assert outcome.run is None or outcome.run.identity != identity


# Values that steer the recon reader into its branches (kinds, modes, verdicts,
# source and locator kinds, ids the packet uses).
RECON_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(
        ["", "x", "supports", "verified", "map", "gather", "claim-0", "ev-0", "src-0",
         "gather-1", "review-semantic", "recon.run-failure", "recon.packet-manifest",
         "recon.review-brief", "verify", "adversary", "coverage", "affirmed", "gap",
         "accepted-gap", "resolved", "reconciliation", "command-output", "url", "file",
         "repository", "connected-resource", "pinned", "stale", "exact", "PASS_FAILED",
         "raw/dossiers/gather-1/dossier.json", "raw/drafts/claims-r1.json",
         "sha256:" + "0" * 64]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["id", "claimId", "evidenceId", "path", "digest", "status", "kind",
                         "mode", "lineStart", "lineEnd", "material", "x"]),
        inner, max_size=3),
    max_leaves=6,
)


@pytest.fixture(scope="module")
def recon_thorough() -> Iterator[tuple[Path, list[str]]]:
    """A valid thorough recon packet and the JSON files the boundary reads."""
    with validated_packet(lambda root: recon_packet(root, "thorough", claims=2),
                          "recon-robust-") as (root, run):
        yield root, boundary_files(run)


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_packet_recon_replaced_value_never_crashes(
        recon_thorough: tuple[Path, list[str]], data: st.DataObject) -> None:
    """Replacing any one value of any recon JSON file (digests kept consistent) never raises."""
    root, files = recon_thorough
    outcome = replace_one_value(root, files, data, RECON_JSON)
    assert outcome.run is not None or outcome.issues


@pytest.mark.parametrize("step", ["approve", "source", "admit", "brief", "close"])
def test_packet_recon_write_steps_refuse_recon_layout(step: str, tmp_path: Path) -> None:
    """Assay's writing steps refuse a recon-layout packet and leave it byte for byte."""
    from assay.errors import AssayError
    from assay.packet import lifecycle, quarantine

    root = build(tmp_path, "recon-valid-quick")
    before = {p: p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
    (tmp_path / "x.txt").write_text("text\n")
    calls: dict[str, Callable[[], object]] = {
        "approve": lambda: lifecycle.approve(root, {}),
        "source": lambda: lifecycle.add_source(root, source_id="s", file=str(tmp_path / "x.txt")),
        "admit": lambda: quarantine.admit(root, "raw/drafts/x.json", "raw/dossiers/x.json"),
        "brief": lambda: lifecycle.create_brief(root, mode="semantic"),
        "close": lambda: lifecycle.close(root, status="complete"),
    }
    with pytest.raises(AssayError) as caught:
        calls[step]()
    assert caught.value.code == "packet_recon_layout"
    assert {p: p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()} == before


def test_packet_recon_cli_validates_renders_and_refuses(tmp_path: Path) -> None:
    """Through the real CLI a recon packet validates, renders, and a drifted one is refused."""
    cli = Project(root=tmp_path)
    root = build(tmp_path, "recon-valid-standard")
    data = cli.ok("packet", "validate", str(root))["data"]
    assert data["valid"] and data["summary"]["achieved_profile"] == "standard"
    assert cli.ok("packet", "render", str(root))["data"]["rendered"]["path"] == "packet.md"
    manifest = json.loads((root / "manifest.json").read_bytes())
    manifest["execution"]["retryLimit"] = 5
    (root / "manifest.json").write_text(json.dumps(manifest, indent=2))
    result = cli.run("packet", "validate", str(root))
    assert result.code == 1
    found = {(i["code"], i["path"], i["pointer"]) for i in result.json["data"]["issues"]}
    assert ("APPROVAL_FINGERPRINT_MISMATCH", "manifest.json",
            "/execution/approval/fingerprint") in found
    assert not (root / "packet.md").exists()
