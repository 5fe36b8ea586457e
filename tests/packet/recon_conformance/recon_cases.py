"""Helpers for the recon conformance cases: build, edit the way the recon tool's tests do, check.

Every packet comes from :func:`recon_testing.recon_packet`, which
writes the recon tool's test fixture in the manifest version asked for; the
edits below are the ones the recon tool's own tests make before they ask its
validator for a verdict. ``VERSIONS`` runs each case on both manifest
versions the recon tool has written (1: approval with a fingerprint; 2: its
current form).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from assay.packet.model import Validation
from assay.packet.validate import validate
from recon_testing import ReconPacket, recon_packet

VERSIONS = pytest.mark.parametrize("version", [1, 2], ids=["v1", "v2"])
V1 = pytest.mark.parametrize("version", [1], ids=["v1"])
V2 = pytest.mark.parametrize("version", [2], ids=["v2"])
PRIOR = "raw/drafts/claims-v1.json"


@dataclass(frozen=True)
class Verdict:
    """What the boundary said, in the terms the recon tool's tests assert on."""

    outcome: Validation

    @property
    def valid(self) -> bool:
        return self.outcome.valid

    @property
    def codes(self) -> set[str]:
        return {issue.code for issue in self.outcome.issues}

    def at(self, code: str, where: str) -> bool:
        """Whether ``code`` is reported at the recon tool's location ``where``."""
        return any(i.code == code and i.where == where for i in self.outcome.issues)

    def count(self, code: str) -> int:
        return sum(1 for i in self.outcome.issues if i.code == code)

    @property
    def status(self) -> str | None:
        run = self.outcome.run
        return run.publication if run is not None else None

    def claim_state(self, claim_id: str) -> str:
        run = self.outcome.run
        assert run is not None, self.outcome.issues
        return next(c.state for c in run.claims if c.claim_id == claim_id)


def fixture(tmp: Path, version: int, profile: str = "standard", **kw: Any) -> ReconPacket:
    """The recon tool's fixture packet (``createPacketFixture``) in ``tmp/packet``."""
    return recon_packet(tmp / "packet", version=version, profile=profile, **kw)


def check(packet: ReconPacket) -> Verdict:
    """Validate in place, reopening local sources under the fixture's source root."""
    return Verdict(validate(packet.root, source_roots=[str(packet.source_root)]))


def core_results(packet: ReconPacket) -> list[dict[str, Any]]:
    """The three core review results, each carrying its listed artifact reference."""
    out = []
    for kind in ("semantic", "adversarial", "coverage"):
        path = f"reviews/{kind}.json"
        out.append({**packet.read(path), "artifactReference": packet.listed(path)})
    return out


def prior(packet: ReconPacket) -> tuple[dict[str, Any], dict[str, str]]:
    """The prior ledger the reconciliation binds, and its listed reference."""
    return packet.read(PRIOR), packet.listed(PRIOR)


def reconcile_into(packet: ReconPacket, prior_ledger: dict[str, Any],
                   prior_ref: dict[str, str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Reconcile the core results as the recon tool does and persist both outputs."""
    ledger, reconciliation = packet.reconcile(prior_ledger, core_results(packet), prior_ref)
    packet.ledger = ledger
    packet.replace("claims.json", ledger)
    packet.replace("reviews/reconciliation.json", reconciliation)
    return ledger, reconciliation


def provisional_prior(packet: ReconPacket) -> tuple[dict[str, Any], dict[str, str]]:
    """The prior ledger with claim-1 still provisional (no transition), re-listed."""
    ledger, _ref = prior(packet)
    ledger["claims"][0]["status"] = "provisional"
    ledger["transitions"] = [t for t in ledger["transitions"] if t["claimId"] != "claim-1"]
    return ledger, packet.replace(PRIOR, ledger)


def gap(gap_id: str, code: str, message: str, *, claims: list[str] | None = None,
        sources: list[str] | None = None, findings: list[str] | None = None,
        material: bool = True, **extra: Any) -> dict[str, Any]:
    return {"id": gap_id, "code": code, "message": message, "material": material, **extra,
            "sourceIds": sources or [], "claimIds": claims or [],
            "coverageFindingIds": findings or []}


def edit(packet: ReconPacket, path: str, change: Any) -> dict[str, str]:
    """Change one listed artifact and re-list its digest (``replaceArtifact``)."""
    value = packet.read(path)
    change(value)
    return packet.replace(path, value)
