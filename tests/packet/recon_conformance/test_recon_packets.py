"""Recon-layout packets beyond the recon tool's own tests: sources, files, secrets, surfaces."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from recon_cases import VERSIONS, check, fixture

from assay.errors import AssayError
from assay.mcp.server import build_server
from assay.packet import lifecycle, quarantine
from assay.packet.render import publish
from assay.packet.validate import check_and_withdraw, validate
from assay_testing import Project, examples
from recon_testing import recon_packet


@VERSIONS
@pytest.mark.parametrize("kind", ["file", "repository", "url", "command-output",
                                  "connected-resource"])
def test_recon_every_source_kind_reopens(tmp_path: Path, version: int, kind: str) -> None:
    """A standard packet validates with its evidence reopened from each kind of source."""
    verdict = check(fixture(tmp_path, version, source_kind=kind))
    assert verdict.valid, verdict.outcome.issues
    assert verdict.outcome.layout == "recon"


@pytest.mark.parametrize("kind", ["file", "repository"])
def test_recon_local_source_outside_roots_is_unavailable(tmp_path: Path, kind: str) -> None:
    """A local source is only read inside a configured source root."""
    packet = fixture(tmp_path, 2, "quick", source_kind=kind)
    outcome = validate(packet.root)
    assert ("SOURCE_UNAVAILABLE", "evidence-1") in {(i.code, i.where) for i in outcome.issues}


def test_recon_symlink_below_source_root_escapes(tmp_path: Path) -> None:
    """A symlinked directory between the source root and the file is SYMLINK_ESCAPE."""
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "roots").mkdir()
    (tmp_path / "roots" / "docs").symlink_to(real)
    packet = recon_packet(tmp_path / "packet", version=2, profile="quick",
                          source_root=tmp_path / "roots" / "docs")
    source = packet.manifest["sources"][0]
    linked = str(tmp_path / "roots" / "docs" / "source.txt")
    source["path"] = packet.ledger["evidence"][0]["locator"]["path"] = linked
    packet.persist()
    outcome = validate(packet.root, source_roots=[str(tmp_path / "roots")])
    assert ("SYMLINK_ESCAPE", "evidence-1") in {(i.code, i.where) for i in outcome.issues}


def test_recon_repository_locator_leaving_its_root(tmp_path: Path) -> None:
    """A repository locator that climbs out of the repository is PATH_ESCAPE."""
    packet = fixture(tmp_path, 2, "quick", source_kind="repository")
    packet.ledger["evidence"][0]["locator"]["path"] = "../outside.txt"
    packet.persist()
    outcome = validate(packet.root, source_roots=[str(tmp_path)])
    assert ("PATH_ESCAPE", "evidence-1") in {(i.code, i.where) for i in outcome.issues}


@pytest.mark.timeout(30)
def test_recon_fifo_capture_never_hangs(tmp_path: Path) -> None:
    """A FIFO in place of a command-output capture is NOT_REGULAR_FILE, at once."""
    packet = fixture(tmp_path, 2, "quick", source_kind="command-output")
    capture = packet.root / "raw/captures/command.txt"
    capture.unlink()
    os.mkfifo(capture)
    assert "NOT_REGULAR_FILE" in check(packet).codes


@pytest.mark.timeout(30)
def test_recon_fifo_ledger_never_hangs(tmp_path: Path) -> None:
    """A FIFO in place of a recon claims.json is NOT_REGULAR_FILE, at once."""
    packet = fixture(tmp_path, 2, "quick")
    (packet.root / "claims.json").unlink()
    os.mkfifo(packet.root / "claims.json")
    assert "NOT_REGULAR_FILE" in check(packet).codes


def test_recon_validation_never_writes(tmp_path: Path) -> None:
    """Validating an invalid recon packet withdraws nothing: every byte stays."""
    packet = fixture(tmp_path, 2)
    (packet.root / "packet.md").write_text("# an older rendering\n")
    packet.manifest["run"]["achievedProfile"] = "thorough"
    packet.write("manifest.json", packet.manifest)
    before = {p: p.read_bytes() for p in sorted(packet.root.rglob("*")) if p.is_file()}
    outcome, withdrawn = check_and_withdraw(packet.root, source_roots=[str(packet.source_root)])
    assert not outcome.valid and not withdrawn
    assert {p: p.read_bytes() for p in sorted(packet.root.rglob("*")) if p.is_file()} == before


@pytest.mark.parametrize("step", ["approve", "source", "admit", "brief", "close"])
def test_recon_write_steps_refuse_recon_layout(step: str, tmp_path: Path) -> None:
    """Assay's writing steps refuse a recon-layout packet and leave it byte for byte."""
    root = fixture(tmp_path, 2, "quick").root
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


@pytest.mark.parametrize("version", [3, "2"])
def test_recon_unknown_manifest_version(tmp_path: Path, version: Any) -> None:
    """A manifest version the recon tool never wrote is UNSUPPORTED_SCHEMA_VERSION."""
    packet = fixture(tmp_path, 2, "quick")
    packet.manifest["schemaVersion"] = version
    packet.write("manifest.json", packet.manifest)
    assert check(packet).at("UNSUPPORTED_SCHEMA_VERSION", "$.schemaVersion")


@pytest.mark.parametrize("excerpt", ["token=abc123", "password=hunter2", "sk-abcd1234wxyz",
                                     "ghp_abcd1234wxyz"])
def test_recon_secret_excerpts_the_recon_tool_flags(tmp_path: Path, excerpt: str) -> None:
    """Exact excerpts the recon tool's own patterns flag are UNREDACTED_SECRET here too."""
    packet = _exact_excerpt(tmp_path, excerpt)
    verdict = check(packet)
    assert "UNREDACTED_SECRET" in verdict.codes and not verdict.valid


ASSAY_ONLY = ["aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
              "postgres://app:s3cret-pass@db.internal/ledger",
              "Authorization: Basic dXNlcjpwYXNzd29yZA==",
              "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl",
              "AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe", "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
              "-----BEGIN RSA PRIVATE KEY----- MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0t"]


@pytest.mark.parametrize("excerpt", ASSAY_ONLY)
def test_recon_secret_excerpts_assay_flags(tmp_path: Path, excerpt: str) -> None:
    """Secrets the recon tool's two patterns miss are UNREDACTED_SECRET by the shared rules."""
    verdict = check(_exact_excerpt(tmp_path, excerpt))
    assert "UNREDACTED_SECRET" in verdict.codes
    told = json.dumps([i.to_dict() for i in verdict.outcome.issues])
    assert excerpt.split()[-1][-12:] not in told


def _exact_excerpt(tmp_path: Path, excerpt: str) -> Any:
    """A quick packet whose one evidence record is exactly ``excerpt`` on line 1 of its source."""
    packet = fixture(tmp_path, 2, "quick", source_kind="command-output")
    data = (excerpt + "\nbeta context\n").encode()
    ref = packet.write("raw/captures/command.txt", data)
    packet.manifest["sources"][0]["outputDigest"] = ref["digest"]
    packet.ledger["evidence"][0]["displayExcerpt"] = excerpt
    packet.ledger["evidence"][0].pop("contentHash")
    packet.persist()
    return packet


def test_recon_contained_excerpt_is_an_advisory(tmp_path: Path) -> None:
    """An excerpt that is part of its located line is valid, with assay's finding advised."""
    packet = fixture(tmp_path, 2, "quick", source_kind="command-output")
    packet.ledger["evidence"][0]["displayExcerpt"] = "alpha"
    packet.ledger["evidence"][0].pop("contentHash")
    packet.persist()
    verdict = check(packet)
    assert verdict.valid, verdict.outcome.issues
    advised = {(a.code, a.where) for a in verdict.outcome.advisories}
    assert ("LOCATOR_STATE_MISMATCH", "evidence-1") in advised
    assert ("INVALID_PATH", "lane:lane-compile") in advised
    assert ("INVALID_VALUE", "$.gaps[0].code") in advised


def test_recon_packet_renders(tmp_path: Path) -> None:
    """A publishable recon packet renders packet.md from its validated run, on request."""
    packet = fixture(tmp_path, 1, "thorough")
    outcome = validate(packet.root, source_roots=[str(packet.source_root)])
    assert outcome.run is not None
    written = publish(packet.root, outcome.run)
    text = (packet.root / "packet.md").read_text()
    assert written["path"] == "packet.md" and "achieved `thorough`" in text


def test_recon_cli_validates_with_source_roots(tmp_path: Path) -> None:
    """Through the real CLI a v2 packet validates with --source-root and names recon locations."""
    packet = fixture(tmp_path, 2)
    cli = Project(root=tmp_path)
    data = cli.ok("packet", "validate", str(packet.root), "--source-root",
                  str(packet.source_root))["data"]
    assert data["valid"] and data["layout"] == "recon"
    assert data["summary"]["achieved_profile"] == "standard" and data["advisories"]
    result = cli.run("packet", "validate", str(packet.root))
    assert result.code == 1
    assert {"code": "SOURCE_UNAVAILABLE", "where": "evidence-1"}.items() <= \
        next(i for i in result.json["data"]["issues"] if i["code"] == "SOURCE_UNAVAILABLE").items()


@pytest.mark.anyio
async def test_recon_mcp_validates_with_source_roots(tmp_path: Path) -> None:
    """Over MCP packet_validate takes the source roots and answers as the CLI does."""
    packet = fixture(tmp_path, 1)
    async with Client(build_server()) as client:
        result = await client.call_tool("packet_validate", {
            "dir": str(packet.root), "source_root": [str(packet.source_root)]})
    envelope = result.structured_content
    assert envelope is not None and envelope["data"]["valid"] is True
    assert envelope["data"]["layout"] == "recon"


@pytest.fixture
def anyio_backend() -> str:
    """The MCP server runs on asyncio."""
    return "asyncio"


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(
        ["", "x", "supports", "verified", "map", "claim-1", "evidence-1", "source-1", "{}",
         "raw/dossiers/gather.json", "sha256:" + "0" * 64, "../x", "/etc/passwd"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["id", "claimId", "evidenceId", "path", "digest", "status", "x"]),
        inner, max_size=3),
    max_leaves=6,
)


@pytest.fixture(scope="module")
def standard(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A valid standard v2 packet, shared by the robustness property."""
    return fixture(tmp_path_factory.mktemp("recon-robust"), 2)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_recon_replaced_value_never_crashes(standard: Any, data: st.DataObject) -> None:
    """Replacing any one value of any recon JSON file never raises: issues or a run."""
    path = data.draw(st.sampled_from(["manifest.json", "claims.json", "reviews/semantic.json",
                                      "reviews/reconciliation.json", "reviews/briefs/verify.json",
                                      "raw/drafts/claims-v1.json", "raw/dossiers/gather.json"]))
    original = (standard.root / path).read_bytes()
    doc = json.loads(original)
    pointer = doc
    while True:
        keys = list(pointer) if isinstance(pointer, dict) else list(range(len(pointer)))
        if not keys:
            break
        key = data.draw(st.sampled_from(keys))
        if isinstance(pointer[key], dict | list) and pointer[key] and data.draw(st.booleans()):
            pointer = pointer[key]
            continue
        pointer[key] = data.draw(JSON)
        break
    try:
        (standard.root / path).write_text(json.dumps(doc))
        outcome = validate(standard.root, source_roots=[str(standard.source_root)])
        assert outcome.run is not None or outcome.issues
    finally:
        (standard.root / path).write_bytes(original)


def test_recon_kind_alone_chooses_the_recon_rules(tmp_path: Path) -> None:
    """A recon.packet-manifest without its run object is read by the recon tool's rules."""
    packet = fixture(tmp_path, 2, "quick")
    del packet.manifest["run"]
    packet.write("manifest.json", packet.manifest)
    outcome = validate(packet.root, source_roots=[str(packet.source_root)])
    assert outcome.layout == "recon" and outcome.run is None
    assert ("MISSING_REQUIRED_FIELD", "$.run") in {(i.code, i.where) for i in outcome.issues}


def test_recon_kind_in_assays_layout_is_unknown(tmp_path: Path) -> None:
    """Assay's own layout reads only assay. kinds: a recon.-kind artifact in it is UNKNOWN_KIND."""
    from packet_testing import example_packet

    builder = example_packet(tmp_path / "p", "quick")
    builder.write_artifact("raw/dossiers/gather-1/recon.json",
                           {"kind": "recon.raw-dossier", "schemaVersion": 1})
    builder.finish()
    found = {(i.code, i.path, i.pointer) for i in validate(tmp_path / "p").issues}
    assert found == {("UNKNOWN_KIND", "raw/dossiers/gather-1/recon.json", "/kind")}
