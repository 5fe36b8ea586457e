"""Admitting worker output, and quarantining whatever fails, never promoting it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from packet_fixtures import AWS_KEY

from assay.canonical import canonical_text, parse
from assay.errors import AssayError
from assay.packet.quarantine import admit
from assay.packet.validate import validate
from packet_testing import PacketBuilder, example_packet


@pytest.fixture
def running(tmp_path: Path) -> PacketBuilder:
    """A valid running quick packet."""
    b = example_packet(tmp_path / "p", "quick", status=None)
    b.finish("running")
    return b


def _draft(b: PacketBuilder, name: str, **changes: Any) -> str:
    doc = {"kind": "assay.raw-dossier", "schemaVersion": 1, "dossierId": name,
           "runId": b.run_id, "waveId": "w-gather", "laneId": "gather-1", "mode": "gather",
           "inputs": [], "exclusions": [],
           "findings": [{"findingId": "f", "statement": "s", "sourceIds": ["src-0"],
                         "excerpt": ""}],
           "uncertainty": [], "contradictions": [], "gaps": [], "outcome": "complete"}
    doc.update(changes)
    path = f"raw/drafts/{name}.json"
    b.root.write(path, (canonical_text(doc) + "\n").encode())
    return path


def _issue_codes(result: dict[str, Any]) -> list[tuple[str, str]]:
    return [(i["code"], i["pointer"]) for i in result["issues"]]


def test_quarantine_valid_output_is_admitted_and_listed(running: PacketBuilder) -> None:
    """Valid output moves to its target, is listed with its digest, and the packet stays valid."""
    draft = _draft(running, "extra")
    out = admit(running.root.root, draft, "raw/dossiers/gather-1/extra.json")
    assert out["admitted"] and not (running.root.root / draft).exists()
    manifest = parse((running.root.root / "manifest.json").read_bytes())
    assert {"path": out["path"], "digest": out["digest"]} in manifest["artifacts"]
    assert validate(running.root.root).valid


def test_quarantine_wrong_lane_root_is_quarantined(running: PacketBuilder) -> None:
    """Output aimed outside its lane's write root is quarantined, not moved."""
    draft = _draft(running, "stray")
    out = admit(running.root.root, draft, "raw/dossiers/map-1/stray.json")
    assert not out["admitted"] and out["issues"][0]["code"] == "LANE_WRITE_PATH_VIOLATION"
    assert not (running.root.root / "raw/dossiers/map-1/stray.json").exists()
    assert validate(running.root.root).valid


def test_quarantine_secret_is_quarantined(running: PacketBuilder) -> None:
    """A raw secret in a finding excerpt sends the output to quarantine."""
    finding = {"findingId": "f", "statement": "s", "sourceIds": [], "excerpt": f"key {AWS_KEY}"}
    draft = _draft(running, "leaky", findings=[finding])
    out = admit(running.root.root, draft, "raw/dossiers/gather-1/leaky.json")
    assert _issue_codes(out) == [("SECRET_IN_EXCERPT", "/findings/0/excerpt")]


def test_quarantine_record_explains_why(running: PacketBuilder) -> None:
    """The quarantine record keeps the original path, digest and every issue."""
    draft = _draft(running, "open", extra="field")
    out = admit(running.root.root, draft, "raw/dossiers/gather-1/open.json")
    record = parse((running.root.root / out["record"]).read_bytes())
    assert record["kind"] == "assay.quarantine-record"
    assert record["originalPath"] == draft and record["digest"] == out["digest"]
    assert [(i["code"], i["pointer"]) for i in record["issues"]] == [("UNKNOWN_FIELD", "/extra")]


def test_quarantine_invalid_json_is_quarantined(running: PacketBuilder) -> None:
    """Output that is not strict JSON is quarantined with INVALID_JSON."""
    running.root.write("raw/drafts/broken.json", b'{"a": 1, "a": 2}')
    out = admit(running.root.root, "raw/drafts/broken.json", "raw/dossiers/gather-1/b.json")
    assert _issue_codes(out) == [("INVALID_JSON", "")]


def test_quarantine_same_name_twice_keeps_both(running: PacketBuilder) -> None:
    """A second rejected output of the same name gets its own quarantine slot."""
    first = admit(running.root.root, _draft(running, "dup", runId="other"),
                  "raw/dossiers/gather-1/dup.json")
    second = admit(running.root.root, _draft(running, "dup", runId="other"),
                   "raw/dossiers/gather-1/dup.json")
    assert first["quarantined"] != second["quarantined"]


def test_quarantine_admit_refuses_non_draft(running: PacketBuilder) -> None:
    """Only files under raw/drafts/ can be admitted; nothing moves otherwise."""
    with pytest.raises(AssayError) as err:
        admit(running.root.root, running.dossiers[0]["path"], "raw/dossiers/gather-1/x.json")
    assert (err.value.code, err.value.pointer) == ("invalid_argument", "/draft")


def test_quarantine_admit_refuses_existing_target(running: PacketBuilder) -> None:
    """An existing target is never overwritten."""
    draft = _draft(running, "again")
    with pytest.raises(AssayError) as err:
        admit(running.root.root, draft, running.dossiers[1]["path"])
    assert err.value.code == "artifact_exists"
    assert (running.root.root / draft).exists()
