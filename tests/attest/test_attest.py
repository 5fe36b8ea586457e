"""Attestations: keys, the bundle assay writes, the in-toto libraries' reading of it, and verification."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from attest_helpers import (
    BUNDLE,
    PUBLIC,
    accepted_project,
    attest,
    data,
    git,
    lines,
    op,
    payload,
    verify,
    write_lines,
)
from google.protobuf import json_format
from in_toto.models.metadata import Metadata
from in_toto_attestation.predicates.test_result.v0 import test_result_pb2
from in_toto_attestation.v1 import statement_pb2
from in_toto_attestation.v1.statement import Statement

from assay.attest.statement import READINESS_TYPE, TEST_RESULT_TYPE
from assay.errors import AssayError
from assay_testing import Project, corrupt_version, make_project


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return accepted_project(tmp_path / "proj")


def refused(project: Project, operation: str = "verify-attestation", **args: Any) -> AssayError:
    args = args or {"file": BUNDLE, "key": PUBLIC}
    with pytest.raises(AssayError) as info:
        op(project, operation, **args)
    return info.value


# --- keys -----------------------------------------------------------------------------------


def test_key_generate_writes_a_private_pem_and_a_public_key_object(project: Project) -> None:
    """The private key is PKCS#8 PEM readable by its owner only; the public file is a key object."""
    private = project.root / ".assay/keys/attestation.key"
    assert private.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    public = json.loads((project.root / PUBLIC).read_text())
    assert (public["keytype"], public["scheme"]) == ("ed25519", "ed25519")
    assert len(bytes.fromhex(public["keyval"]["public"])) == 32


def test_key_generate_never_overwrites(project: Project) -> None:
    """A second key generate is key_exists and leaves the first pair as it was."""
    before = (project.root / ".assay/keys/attestation.key").read_bytes()
    error = refused(project, "key.generate", out=".assay/keys/attestation")
    assert (error.code, error.exit_code) == ("key_exists", 3)
    assert (project.root / ".assay/keys/attestation.key").read_bytes() == before


def test_attest_without_a_key_is_key_not_found(tmp_path: Path) -> None:
    """attest with no key at the default path is key_not_found (exit 6), nothing written."""
    project = make_project(tmp_path / "proj")
    error = refused(project, "attest", intent="knowledge:export")
    assert (error.code, error.exit_code, error.pointer) == ("key_not_found", 6, "/key")


@pytest.mark.parametrize("content", [b"not a key", (b"-----BEGIN PRIVATE KEY-----\nAAAA\n"
                                     b"-----END PRIVATE KEY-----\n")])
def test_attest_with_a_garbage_key_is_key_invalid(project: Project, content: bytes) -> None:
    """A private key file that is not an ed25519 PEM key is key_invalid."""
    (project.root / "bad.key").write_bytes(content)
    assert refused(project, "attest", intent="knowledge:export", key="bad.key").code == \
        "key_invalid"


def test_verify_with_a_malformed_public_key_is_key_invalid(project: Project) -> None:
    """A public key object without keyid, or with a short keyval, is key_invalid."""
    attest(project)
    public = json.loads((project.root / PUBLIC).read_text())
    (project.root / "nokeyid.json").write_text(json.dumps({k: v for k, v in public.items()
                                                           if k != "keyid"}))
    (project.root / "short.json").write_text(json.dumps({**public, "keyval": {"public": "abcd"}}))
    for name in ("nokeyid.json", "short.json"):
        assert refused(project, file=BUNDLE, key=name).code == "key_invalid"


# --- the bundle -----------------------------------------------------------------------------


def test_attest_writes_readiness_then_one_test_result_per_run(project: Project) -> None:
    """The bundle: a readiness statement, then a test-result per cited run, about the commit."""
    out = attest(project)
    statements = [payload(e) for e in lines(project)]
    assert [s["predicateType"] for s in statements] == [READINESS_TYPE, TEST_RESULT_TYPE]
    head = git(project.root, "rev-parse", "HEAD")
    assert out["subject"] == [{"name": "demo", "digest": {"gitCommit": head}}]
    assert all(s["subject"] == out["subject"] for s in statements)
    readiness = statements[0]["predicate"]
    assert (readiness["verdict"], readiness["ready_to_review"]) == ("ready", True)
    assert [(r["id"], r["revision"], r["status"]) for r in readiness["runs"]] == [
        ("evidence:unit", 1, "passed")]
    result = statements[1]["predicate"]
    assert result["result"] == "PASSED" and result["url"] == "assay:evidence:unit@1"
    assert result["passedTests"] == ["tests.test_csv::test_header", "tests.test_csv::test_rows"]
    assert result["failedTests"] == []
    assert [c["name"] for c in result["configuration"]] == [
        "assay.toml#/evidence/commands/unit", "reports/unit.xml"]


def test_attest_next_names_the_public_key_key_generate_wrote(project: Project) -> None:
    """attest's next step is the verify command with the .pub.json beside the key, ready to run."""
    envelope, _code = op(project, "attest", intent="knowledge:export")
    public = project.root.resolve() / PUBLIC
    bundle = project.root.resolve() / BUNDLE
    assert envelope["next"] == [
        f"Verify it: 'assay verify-attestation --key {public} -- {bundle}'"]


def test_attest_next_with_a_key_without_its_public_file_is_a_template(project: Project) -> None:
    """A key with no .pub.json beside it leaves PUBLIC_KEY for a person to fill in, unquoted."""
    moved = project.root.parent / "signing.key"  # outside the workspace the runs observed
    (project.root / ".assay/keys/attestation.key").rename(moved)
    envelope, _code = op(project, "attest", intent="knowledge:export", key=str(moved))
    bundle = project.root.resolve() / BUNDLE
    step = (f"Verify it with the public key of {moved.resolve()} (assay verify-attestation "
            f"--key PUBLIC_KEY -- {bundle}).")
    assert envelope["next"] == [step]


def test_attest_is_byte_identical_for_the_same_ledger_workspace_and_key(project: Project) -> None:
    """Attesting twice gives the same bytes (canonical payloads, deterministic ed25519)."""
    first = attest(project)["bundle_sha256"]
    assert attest(project)["bundle_sha256"] == first


def test_attest_dirty_workspace_adds_the_workspace_digest(project: Project) -> None:
    """With uncommitted changes (the ones the run saw) the subject also names the workspace digest."""
    (project.root / "app.py").write_text("ROWS = 4\n")
    data(project, "evidence.run", name="unit")
    data(project, "work.accept", id="knowledge:export", from_run=["evidence:unit@2"])
    out = attest(project)
    assert [s["name"] for s in out["subject"]] == ["demo", "demo workspace"]
    workspace = data(project, "evidence.observe")["workspace_sha256"]
    assert out["subject"][1]["digest"] == {"assayWorkspace": workspace}
    assert verify(project)["verified"] is True


def test_attest_refuses_runs_that_saw_other_files(project: Project) -> None:
    """A change after the cited run makes attest attestation_run_stale; nothing is written."""
    (project.root / "app.py").write_text("ROWS = 5\n")
    error = refused(project, "attest", intent="knowledge:export")
    assert (error.code, error.details["runs"]) == ("attestation_run_stale", ["evidence:unit@1"])
    assert not (project.root / BUNDLE).exists()


def test_attest_not_ready_writes_the_verdict_and_exits_1(project: Project) -> None:
    """An intent that is not ready is attested as not_ready, with exit status 1."""
    data(project, "work.new", id="knowledge:export", brief="Ship the export", expect_revision=2,
         requirement=["R1|CSV rows|its tests pass", "R2|Header|its tests pass",
                      "R3|Docs|read"])
    envelope, code = op(project, "attest", intent="knowledge:export")
    assert code == 1 and envelope["data"]["verdict"] == "not_ready"
    assert verify(project)["verdict"] == "not_ready"


def test_attest_outside_git_is_attest_unavailable(tmp_path: Path) -> None:
    """attest in a project that is not a git work tree is attest_unavailable (exit 5)."""
    project = make_project(tmp_path / "proj")
    data(project, "key.generate")
    error = refused(project, "attest", intent="knowledge:export")
    assert (error.code, error.exit_code) == ("attest_unavailable", 5)


def test_attest_out_onto_a_directory_is_refused(project: Project) -> None:
    """--out naming a directory is attestation_unwritable and the directory is left alone."""
    (project.root / "there").mkdir()
    error = refused(project, "attest", intent="knowledge:export", out="there")
    assert (error.code, error.pointer) == ("attestation_unwritable", "/out")


# --- cross-checked with the in-toto libraries ------------------------------------------------


def test_bundle_verifies_with_the_in_toto_library(project: Project) -> None:
    """in-toto reads each line as a DSSE envelope and verifies its signature with the public key."""
    attest(project)
    key = json.loads((project.root / PUBLIC).read_text())
    for envelope in lines(project):
        metadata = Metadata.from_dict(envelope)
        metadata.verify_signature(key)


def test_bundle_statements_validate_with_in_toto_attestation(project: Project) -> None:
    """in-toto-attestation parses each Statement v1 and the test-result/v0.1 predicate strictly."""
    attest(project)
    for envelope in lines(project):
        raw = base64.b64decode(envelope["payload"])
        Statement.copy_from_pb(json_format.Parse(raw, statement_pb2.Statement())).validate()
        document = json.loads(raw)
        if document["predicateType"] == TEST_RESULT_TYPE:
            result = json_format.ParseDict(document["predicate"], test_result_pb2.TestResult())
            assert result.result == "PASSED" and len(result.passed_tests) == 2


def test_in_toto_rejects_a_tampered_envelope(project: Project) -> None:
    """The in-toto library refuses a payload changed after signing (the oracle agrees with assay)."""
    from in_toto.exceptions import SignatureVerificationError

    attest(project)
    envelope = lines(project)[0]
    document = payload(envelope)
    document["predicate"]["verdict"] = "ready!"
    envelope["payload"] = base64.b64encode(json.dumps(document).encode()).decode()
    key = json.loads((project.root / PUBLIC).read_text())
    with pytest.raises(SignatureVerificationError):
        Metadata.from_dict(copy.deepcopy(envelope)).verify_signature(key)  # it edits its input
    write_lines(project, [envelope, *lines(project)[1:]])
    assert refused(project).code == "attestation_signature_invalid"


# --- verification failures --------------------------------------------------------------------


def test_verify_returns_what_the_bundle_attests(project: Project) -> None:
    """A good bundle verifies: the subject, intent version, verdict and each run's result."""
    attest(project)
    out = verify(project)
    assert out["verified"] is True and out["verdict"] == "ready" and out["statements"] == 2
    assert out["runs"] == [{"id": "evidence:unit", "revision": 1, "result": "PASSED"}]
    assert out["intent"]["id"] == "knowledge:export"


def test_verify_of_a_fresh_bundle_is_not_stale(project: Project) -> None:
    """Verified against the ledger it was made from, a bundle is not stale and nothing moved on."""
    attest(project)
    out = verify(project)
    assert (out["stale"], out["moved_on"]) == (False, [])


def _add_requirement(project: Project) -> None:
    record = data(project, "get", id="knowledge:export")["record"]
    grown = copy.deepcopy(record["data"])
    grown["intent"]["requirements"].append(
        {"id": "R3", "text": "Footer", "acceptance": "its tests pass"})
    data(project, "put", id="knowledge:export", data=grown,
         expect_revision=record["revision"])


def test_verify_after_the_intent_grew_and_the_run_was_retired_is_stale(project: Project) -> None:
    """A ready bundle whose intent gained a requirement and whose run was retired says stale and what moved on."""
    attest(project)
    _add_requirement(project)
    data(project, "retire", id="evidence:unit", expect_revision=1)
    envelope, code = op(project, "verify-attestation", file=BUNDLE, key=PUBLIC)
    out = envelope["data"]
    assert (code, out["verified"], out["verdict"], out["stale"]) == (0, True, "ready", True)
    assert out["moved_on"] == [
        {"id": "knowledge:export", "role": "intent", "attested_revision": 2,
         "current_revision": 3, "status": "current", "change": "newer", "intent_changed": True},
        {"id": "evidence:unit", "role": "evidence", "attested_revision": 1,
         "current_revision": 2, "status": "retired", "change": "retired"},
    ]
    assert "assay work check -- knowledge:export" in envelope["next"][0]


def test_verify_after_a_newer_run_names_it_and_an_unchanged_intent_body(project: Project) -> None:
    """A newer run of the cited command and an acceptance-only edit: stale, intent_changed false."""
    attest(project)
    receipt = data(project, "evidence.run", name="unit")["receipt"]
    data(project, "work.accept", id="knowledge:export",
         from_run=[f"{receipt['id']}@{receipt['revision']}"])
    out = verify(project)
    assert out["stale"] is True
    assert [(m["id"], m["change"], m["current_revision"]) for m in out["moved_on"]] == [
        ("knowledge:export", "newer", 3), ("evidence:unit", "newer", 2)]
    assert out["moved_on"][0]["intent_changed"] is False


def test_verify_with_another_key_fails(project: Project) -> None:
    """A public key of another pair: attestation_signature_invalid naming line 1."""
    attest(project)
    data(project, "key.generate", out="other")
    error = refused(project, file=BUNDLE, key="other.pub.json")
    assert (error.code, error.details["line"]) == ("attestation_signature_invalid", 1)


def test_verify_with_a_pem_public_key(project: Project) -> None:
    """The public key may be given as a SubjectPublicKeyInfo PEM."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    attest(project)
    private = load_pem_private_key((project.root / ".assay/keys/attestation.key").read_bytes(),
                                   None)
    (project.root / ".assay/pub.pem").write_bytes(private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    assert verify(project, key=".assay/pub.pem")["verified"] is True


def test_verify_after_head_moved_fails(project: Project) -> None:
    """A new commit after attesting: attestation_subject_mismatch with both commits."""
    attest(project)
    (project.root / "NOTES.md").write_text("later\n")
    git(project.root, "add", "-A")
    git(project.root, "commit", "-q", "-m", "later")
    error = refused(project)
    assert error.code == "attestation_subject_mismatch"
    assert error.details["now"]["head"] == git(project.root, "rev-parse", "HEAD")


def test_verify_with_uncommitted_changes_fails(project: Project) -> None:
    """A clean-commit attestation does not verify over a workspace with changes."""
    attest(project)
    (project.root / "app.py").write_text("ROWS = 9\n")
    assert refused(project).code == "attestation_subject_mismatch"


def test_verify_after_the_run_was_edited_in_the_ledger_fails(project: Project) -> None:
    """A run edited in the ledger (digest recomputed) no longer has the attested digest."""
    attest(project)
    text = '{"schema":"assay.evidence.v1","observation":{"status":"passed"}}'
    corrupt_version(project, "evidence:unit", 1, text, hashlib.sha256(text.encode()).hexdigest())
    error = refused(project)
    assert (error.code, error.details["id"]) == ("attestation_run_mismatch", "evidence:unit")


def test_verify_after_the_run_was_damaged_in_the_ledger_fails(project: Project) -> None:
    """A run whose stored text no longer hashes to its digest is attestation_run_mismatch."""
    attest(project)
    corrupt_version(project, "evidence:unit", 1, '{"edited":true}', None)
    assert refused(project).code == "attestation_run_mismatch"


def test_verify_against_another_ledger_fails(project: Project, tmp_path: Path) -> None:
    """Verified against a ledger that never held the intent: attestation_intent_mismatch."""
    attest(project)
    other = tmp_path / "other.db"
    inv_args = {"file": BUNDLE, "key": PUBLIC, "db": str(other)}
    data(project, "put", id="knowledge:unrelated", data={"x": 1}, db=str(other))
    with pytest.raises(AssayError) as info:
        op(project, "verify-attestation", **inv_args)
    assert info.value.code == "attestation_intent_mismatch"


def test_verify_with_a_statement_removed_fails(project: Project) -> None:
    """Dropping the test-result line is attestation_incomplete: the readiness lists the run."""
    attest(project)
    write_lines(project, lines(project)[:1])
    assert refused(project).code == "attestation_incomplete"


def test_verify_with_a_statement_repeated_fails(project: Project) -> None:
    """A test-result line given twice is attestation_incomplete."""
    attest(project)
    envelopes = lines(project)
    write_lines(project, [*envelopes, envelopes[1]])
    assert refused(project).code == "attestation_incomplete"


@pytest.mark.parametrize(("text", "line"), [
    ("not json\n", 1),
    ('{"payload": "", "payloadType": "application/json", "signatures": []}\n', 1),
    ("", 1),
])
def test_verify_malformed_bundle_fails(project: Project, text: str, line: int) -> None:
    """A line that is not a signed in-toto envelope, or an empty file: attestation_malformed."""
    attest(project)
    (project.root / BUNDLE).write_text(text)
    error = refused(project)
    assert (error.code, error.details["line"]) == ("attestation_malformed", line)


def test_verify_a_bundle_without_readiness_fails(project: Project) -> None:
    """A bundle of test-result statements only is attestation_malformed."""
    attest(project)
    write_lines(project, lines(project)[1:])
    assert refused(project).code == "attestation_malformed"


def test_verify_missing_file_is_a_usage_error(project: Project) -> None:
    """A bundle path that does not exist is file_unreadable at /file."""
    error = refused(project, file="nope.jsonl", key=PUBLIC)
    assert (error.code, error.pointer) == ("file_unreadable", "/file")


def test_attest_and_verify_on_postgres(tmp_path: Path, pg_url: str) -> None:
    """The same bundle round trip on the PostgreSQL ledger."""
    project = accepted_project(tmp_path / "proj", db=pg_url)
    attest(project)
    assert verify(project)["verified"] is True
    assert os.path.exists(project.root / BUNDLE)
