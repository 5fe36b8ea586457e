"""Robustness of the recon layout: a packet with any one value replaced validates, never crashes.

Every location of every JSON file of a recon-layout packet (the manifest,
the claim ledger, its prior draft, the review results) gets, in turn, an
object, an array, null and an array holding an object: the values that
cannot key a dict or a set, which a rule comparing ids most easily trips
on. A changed listed file is listed again with its new digest, so the
packet keeps the recon tool's contract wherever the value itself allows
and the cross-file rules run on it. Each packet must come back as issues or
a validated run, never as an exception. The default run gives each location
one of the four values in turn; ``HYPOTHESIS_PROFILE=thorough`` gives it all four.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from packet_fixtures import json_locations

from assay.packet.layout import file_digest
from assay.packet.validate import validate
from assay_testing import THOROUGH
from recon_testing import recon_packet

HOSTILE: tuple[Any, ...] = ({}, [], None, [{}])


def _replaced(doc: Any, where: tuple[Any, ...], value: Any) -> Any:
    target = doc
    for part in where[:-1]:
        target = target[part]
    target[where[-1]] = value
    return doc


@pytest.mark.parametrize(("version", "profile"), [(1, "quick"), (2, "quick"), (2, "standard")],
                         ids=["v1-quick", "v2-quick", "v2-standard"])
def test_recon_any_value_replaced_never_crashes(tmp_path: Path, version: int, profile: str) -> None:
    """Each location of each file, each unkeyable value: issues or a run, never an exception."""
    packet = recon_packet(tmp_path / "packet", version=version, profile=profile,
                          source_root=tmp_path / "sources")
    root, roots = packet.root, [str(tmp_path / "sources")]
    assert validate(root, source_roots=roots).valid
    names = sorted(str(p.relative_to(root)) for p in root.rglob("*.json"))
    original = {name: (root / name).read_bytes() for name in names}
    failures = []
    cases = 0
    for name in names:
        for place, where in enumerate(json_locations(json.loads(original[name]))[1:]):
            for value in HOSTILE if THOROUGH else (HOSTILE[place % len(HOSTILE)],):
                changed = json.dumps(_replaced(json.loads(original[name]), where, value)).encode()
                (root / name).write_bytes(changed)
                if name != "manifest.json":
                    manifest = json.loads(original["manifest.json"])
                    for ref in manifest["artifacts"]:
                        if ref["path"] == name:
                            ref["digest"] = file_digest(changed) if ref["digest"].startswith(
                                "sha256:") else file_digest(changed).removeprefix("sha256:")
                    (root / "manifest.json").write_text(json.dumps(manifest))
                cases += 1
                try:
                    outcome = validate(root, source_roots=roots)
                    if not (outcome.issues or outcome.run is not None):
                        failures.append((name, where, value, "neither issues nor a run"))
                except Exception as exc:  # noqa: BLE001 - every failure is collected and shown
                    failures.append((name, where, value, f"{type(exc).__name__}: {exc}"))
                (root / name).write_bytes(original[name])
                (root / "manifest.json").write_bytes(original["manifest.json"])
    assert cases > (500 if THOROUGH else 125)
    assert not failures, failures[:10]


@pytest.mark.parametrize(("version", "profile"), [(1, "quick"), (2, "standard")],
                         ids=["v1-quick", "v2-standard"])
def test_recon_lone_surrogate_anywhere_never_crashes(tmp_path: Path, version: int,
                                                     profile: str) -> None:
    """A lone surrogate escape in any string of any file: issues or a run, never an exception."""
    packet = recon_packet(tmp_path / "packet", version=version, profile=profile,
                          source_root=tmp_path / "sources")
    root, roots = packet.root, [str(tmp_path / "sources")]
    names = sorted(str(p.relative_to(root)) for p in root.rglob("*.json"))
    original = {name: (root / name).read_bytes() for name in names}
    failures = []
    for name in names:
        doc = json.loads(original[name])
        for where in json_locations(doc)[1:]:
            value = doc
            for part in where:
                value = value[part]
            if not isinstance(value, str):
                continue
            changed = json.dumps(_replaced(json.loads(original[name]), where,
                                           value + "\ud800")).encode()
            (root / name).write_bytes(changed)
            try:
                outcome = validate(root, source_roots=roots)
                if not (outcome.issues or outcome.run is not None):
                    failures.append((name, where, "neither issues nor a run"))
            except Exception as exc:  # noqa: BLE001 - every failure is collected and shown
                failures.append((name, where, f"{type(exc).__name__}: {exc}"))
            (root / name).write_bytes(original[name])
    assert not failures, failures[:10]


def test_recon_lone_surrogate_is_an_advisory(tmp_path: Path) -> None:
    """A lone surrogate in a recon packet's text reads as U+FFFD, with assay's INVALID_JSON advisory."""
    packet = recon_packet(tmp_path / "packet", version=2, profile="quick")
    packet.manifest["request"]["objective"] += "\ud800"
    (packet.root / "manifest.json").write_text(json.dumps(packet.manifest))
    outcome = validate(packet.root, source_roots=[str(packet.source_root)])
    assert outcome.valid, outcome.issues
    assert outcome.run is not None and outcome.run.objective.endswith("\ufffd")
    assert ("INVALID_JSON", "manifest.json") in {(a.code, a.where) for a in outcome.advisories}


def test_recon_nesting_past_the_parser_is_not_json(tmp_path: Path) -> None:
    """A ledger nested deeper than the JSON parser goes is reported as not JSON, not a crash."""
    packet = recon_packet(tmp_path / "packet", version=2, profile="quick")
    (packet.root / "claims.json").write_text("[" * 100_000 + "]" * 100_000)
    outcome = validate(packet.root, source_roots=[str(packet.source_root)])
    assert "INVALID_LEDGER_JSON" in {issue.code for issue in outcome.issues}
