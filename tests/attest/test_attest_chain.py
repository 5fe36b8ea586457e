"""Attestations record the ledger's chain head; verification finds a rewritten past, on both backends."""

from __future__ import annotations

from pathlib import Path

import pytest
from attest_helpers import BUNDLE, PUBLIC, accepted_project, attest, lines, verify

from assay.errors import AssayError
from assay_testing import Project, data, ledger_sql, op, reseal_from


@pytest.fixture
def project(tmp_path: Path, ledger_url: str) -> Project:
    """An accepted, committed project with a key, on each backend in turn."""
    return accepted_project(tmp_path / "proj", db=ledger_url)


def _readiness(project: Project) -> dict[str, object]:
    import base64
    import json

    payload = json.loads(base64.b64decode(lines(project)[0]["payload"]))
    predicate: dict[str, object] = payload["predicate"]
    return predicate


def _refused(project: Project) -> AssayError:
    with pytest.raises(AssayError) as info:
        op(project, "verify-attestation", file=BUNDLE, key=PUBLIC)
    return info.value


def test_attest_records_the_chain_head_ledger_verify_gives(project: Project) -> None:
    """The readiness statement holds the ledger revision and the chain value there, as ledger verify computes it; verification checks it."""
    walked = data(project, "ledger.verify")
    attest(project)
    ledger = _readiness(project)["ledger"]
    assert isinstance(ledger, dict)
    assert (ledger["revision"], ledger["chain_sha256"]) == (walked["ledger_revision"],
                                                            walked["chain_sha256"])
    assert verify(project)["chain_verified"] is True


def test_verify_attestation_finds_an_edited_version_in_the_middle(project: Project) -> None:
    """A version before the attested head edited in place is attestation_ledger_rewritten, naming its ledger revision."""
    attest(project)
    ledger_sql(project, "UPDATE record_versions SET status = 'retired' WHERE ledger_revision = 1")
    error = _refused(project)
    assert (error.code, error.details["ledger_revision"], error.details["reason"]) == (
        "attestation_ledger_rewritten", 1, "version_digest_mismatch")


def test_verify_attestation_finds_a_resealed_rewrite_ledger_verify_cannot(
        project: Project) -> None:
    """A version rewritten and the whole chain resealed after it passes ledger verify, but not the attestation."""
    attest(project)
    attested = _readiness(project)["ledger"]
    assert isinstance(attested, dict)
    ledger_sql(project, "UPDATE record_versions SET origin = 'machine' WHERE ledger_revision = 1")
    reseal_from(project, 1)
    assert data(project, "ledger.verify")["ok"] is True
    error = _refused(project)
    assert (error.code, error.details["reason"], error.details["attested_revision"]) == (
        "attestation_ledger_rewritten", "chain_differs", attested["revision"])


def test_verify_attestation_ignores_versions_written_after_the_attested_head(
        project: Project) -> None:
    """Later writes leave the attested history alone: the chain still verifies."""
    attest(project)
    data(project, "put", id="knowledge:later", data={"x": 1})
    assert verify(project)["chain_verified"] is True


def test_attest_refuses_a_ledger_whose_chain_is_broken(project: Project) -> None:
    """attest on a ledger with a broken history is ledger_chain_broken: it never vouches for it."""
    ledger_sql(project, "UPDATE record_versions SET scope = 'project:other' "
                        "WHERE ledger_revision = 1")
    with pytest.raises(AssayError) as info:
        op(project, "attest", intent="knowledge:export")
    assert (info.value.code, info.value.details["ledger_revision"]) == ("ledger_chain_broken", 1)
