"""The packet workflow through the real ``assay`` CLI, one subprocess per step."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.canonical import canonical_text, parse
from assay.packet.layout import file_digest
from assay_testing import Project
from packet_testing import default_execution

FACT = "SQLite in WAL mode lets readers proceed while one writer commits."


def _dossier(run_id: str, lane: str, wave: str, mode: str) -> dict[str, Any]:
    return {"kind": "assay.raw-dossier", "schemaVersion": 1, "dossierId": f"{lane}-d",
            "runId": run_id, "waveId": wave, "laneId": lane, "mode": mode,
            "inputs": ["request"], "exclusions": [],
            "findings": [{"findingId": f"{lane}-f", "statement": "WAL allows concurrent readers",
                          "sourceIds": ["wal-doc"], "excerpt": FACT}],
            "uncertainty": [], "contradictions": [], "gaps": [], "outcome": "complete"}


def _write(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(canonical_text(value) + "\n", encoding="utf-8")


@pytest.fixture
def quick_packet(tmp_path: Path) -> tuple[Project, Path]:
    """A quick packet built only through CLI steps (plus the compile worker's claims.json)."""
    cli = Project(root=tmp_path)
    packet = tmp_path / "pk"
    cli.ok("packet", "init", str(packet), "--objective", "Is WAL safe for readers?",
           "--profile", "quick", "--run-id", "run-cli")
    _write(tmp_path / "execution.json", default_execution("quick"))
    cli.ok("packet", "approve", str(packet), "--execution", str(tmp_path / "execution.json"))
    (tmp_path / "wal.txt").write_text(f"Notes.\n{FACT}\n", encoding="utf-8")
    cli.ok("packet", "source", str(packet), "--id", "wal-doc", "--file", str(tmp_path / "wal.txt"))
    inputs = []
    for lane, wave, mode in (("map-1", "w-map", "map"), ("gather-1", "w-gather", "gather")):
        _write(packet / f"raw/drafts/{lane}.json", _dossier("run-cli", lane, wave, mode))
        admitted = cli.ok("packet", "admit", str(packet), "--draft", f"raw/drafts/{lane}.json",
                          "--to", f"raw/dossiers/{lane}/dossier.json")["data"]
        inputs.append({"path": admitted["path"], "digest": admitted["digest"]})
    capture = (tmp_path / "wal.txt").read_bytes()
    start = capture.index(FACT.encode())
    ledger = {
        "kind": "assay.claim-ledger", "schemaVersion": 1, "runId": "run-cli", "revision": 1,
        "inputs": inputs, "synthesis": "WAL suits concurrent readers.",
        "evidence": [{"evidenceId": "ev-wal", "sourceId": "wal-doc",
                      "sourceDigest": file_digest(capture),
                      "locator": {"start": start, "end": start + len(FACT)}, "excerpt": FACT}],
        "claims": [{"claimId": "wal-readers", "statement": "WAL lets readers run during writes.",
                    "state": "supported",
                    "evidence": [{"evidenceId": "ev-wal", "relation": "supports"}],
                    "qualifications": []}],
        "unresolvedQuestions": [],
        "transitions": [
            {"claimId": "wal-readers", "from": "provisional", "to": "supported",
             "reason": "exact evidence"}],
    }
    _write(packet / "claims.json", ledger)
    cli.ok("packet", "close", str(packet), "--status", "complete")
    return cli, packet


def test_cli_packet_quick_workflow_validates(quick_packet: tuple[Project, Path]) -> None:
    """A quick packet assembled through the CLI validates as complete at the quick profile."""
    cli, packet = quick_packet
    data = cli.ok("packet", "validate", str(packet))["data"]
    assert data["valid"] and data["publishable"]
    assert data["summary"]["achieved_profile"] == "quick"
    assert data["summary"]["evidence_states"] == {"exact": 1}


def test_cli_packet_render_writes_packet_md(quick_packet: tuple[Project, Path]) -> None:
    """render writes packet.md for the publishable packet."""
    cli, packet = quick_packet
    data = cli.ok("packet", "render", str(packet))["data"]
    assert data["rendered"]["path"] == "packet.md"
    assert "WAL lets readers run during writes." in (packet / "packet.md").read_text()


def test_cli_packet_validate_exits_1_with_every_issue(quick_packet: tuple[Project, Path]) -> None:
    """One changed byte makes validate exit 1, print each issue, and withdraw packet.md."""
    cli, packet = quick_packet
    cli.ok("packet", "render", str(packet))
    dossier = packet / "raw/dossiers/map-1/dossier.json"
    dossier.write_bytes(dossier.read_bytes().replace(b"WAL allows", b"WAL Allows"))
    (packet / "claims.json").write_bytes(
        (packet / "claims.json").read_bytes().replace(b'"revision":1', b'"revision":0'))
    result = cli.run("packet", "validate", str(packet))
    assert result.code == 1
    data = result.json["data"]
    found = {(i["code"], i["path"], i["pointer"]) for i in data["issues"]}
    assert ("DIGEST_MISMATCH", "manifest.json", "/artifacts/0/digest") in found
    assert ("INVALID_VALUE", "claims.json", "/revision") in found
    assert data["withdrawn"] and not (packet / "packet.md").exists()


def test_cli_packet_render_refuses_invalid_packet(quick_packet: tuple[Project, Path]) -> None:
    """render writes nothing for an invalid packet and exits 1."""
    cli, packet = quick_packet
    (packet / "raw/sources/wal-doc.txt").write_text("edited\n")
    result = cli.run("packet", "render", str(packet))
    assert result.code == 1 and result.json["data"]["rendered"] is None
    assert not (packet / "packet.md").exists()


def test_cli_packet_admit_quarantines_invalid_output(quick_packet: tuple[Project, Path]) -> None:
    """Worker output from an unapproved lane is quarantined with a record, never promoted."""
    cli, packet = quick_packet
    _write(packet / "raw/drafts/rogue.json", _dossier("run-cli", "rogue", "w-gather", "gather"))
    result = cli.run("packet", "admit", str(packet), "--draft", "raw/drafts/rogue.json",
                     "--to", "raw/dossiers/gather-1/rogue.json")
    assert result.code == 1
    data = result.json["data"]
    assert not data["admitted"] and data["issues"][0]["code"] == "UNAPPROVED_LANE"
    record = parse((packet / data["record"]).read_bytes())
    assert record["originalPath"] == "raw/drafts/rogue.json"
    assert (packet / "raw/quarantine/rogue.json").exists()
    assert not (packet / "raw/dossiers/gather-1/rogue.json").exists()
    assert cli.ok("packet", "validate", str(packet))["data"]["valid"]


def test_cli_packet_close_refuses_dishonest_status(tmp_path: Path) -> None:
    """Closing as complete with a required pass missing is refused and changes nothing."""
    cli = Project(root=tmp_path)
    packet = tmp_path / "pk"
    cli.ok("packet", "init", str(packet), "--objective", "Q", "--run-id", "run-x")
    _write(tmp_path / "execution.json", default_execution("quick"))
    cli.ok("packet", "approve", str(packet), "--execution", str(tmp_path / "execution.json"))
    before = (packet / "manifest.json").read_bytes()
    result = cli.run("packet", "close", str(packet), "--status", "complete")
    assert result.code == 1 and result.error["code"] == "packet_close_refused"
    assert (packet / "manifest.json").read_bytes() == before


def test_cli_packet_approve_binds_fingerprint(tmp_path: Path) -> None:
    """approve stores the canonical fingerprint of the envelope without approval."""
    from assay.packet.assay.manifest import approval_fingerprint

    cli = Project(root=tmp_path)
    packet = tmp_path / "pk"
    cli.ok("packet", "init", str(packet), "--objective", "Q")
    execution = default_execution("standard")
    _write(tmp_path / "execution.json", execution)
    data = cli.ok("packet", "approve", str(packet), "--execution",
                  str(tmp_path / "execution.json"))["data"]
    assert data["fingerprint"] == approval_fingerprint(execution)
    stored = parse((packet / "manifest.json").read_bytes())["execution"]["approval"]
    assert stored["type"] == "explicit-user-approval"


def test_cli_packet_approve_rejects_unknown_field(tmp_path: Path) -> None:
    """An envelope with an unknown field is refused with its pointer; nothing is approved."""
    cli = Project(root=tmp_path)
    packet = tmp_path / "pk"
    cli.ok("packet", "init", str(packet), "--objective", "Q")
    _write(tmp_path / "execution.json", {**default_execution("quick"), "budget": 5})
    result = cli.run("packet", "approve", str(packet), "--execution",
                     str(tmp_path / "execution.json"))
    assert result.code == 1
    assert (result.error["code"], result.error["pointer"]) == ("invalid_execution", "/budget")
    assert parse((packet / "manifest.json").read_bytes())["execution"] is None


def test_cli_packet_validate_missing_dir_is_error(tmp_path: Path) -> None:
    """A missing packet directory is an operational error, not an invalid packet."""
    result = Project(root=tmp_path).run("packet", "validate", str(tmp_path / "none"))
    assert result.code == 6 and result.error["code"] == "packet_not_found"
    assert json.loads(result.stderr)["ok"] is False


def test_cli_packet_validate_table_lists_issues(quick_packet: tuple[Project, Path]) -> None:
    """The readable view of an invalid packet names each issue's code, file and pointer."""
    cli, packet = quick_packet
    (packet / "raw/sources/wal-doc.txt").write_text("edited\n")
    result = cli.run("packet", "validate", str(packet), "--format", "table",
                     env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert result.code == 1
    assert "DIGEST_MISMATCH" in result.stdout and "/sources/0/capture/digest" in result.stdout


def test_cli_packet_operations_are_registered_for_mcp() -> None:
    """Every packet command is a registered operation, so MCP exposes it as a tool."""
    from assay.ops import operations

    tools = {op.tool_name for op in operations() if op.name.startswith("packet.")}
    assert tools == {"packet_init", "packet_approve", "packet_source", "packet_admit",
                     "packet_brief", "packet_close", "packet_validate", "packet_render"}
