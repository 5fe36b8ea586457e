"""Signed approvals: pins and approvals signed by a reviewer key, checked with that key.

The gated agent can write to the ledger as its own OS user; what it cannot
do is sign with a reviewer key it does not hold. ``verify-attestation
--reviewer-key`` and ``ci verify --reviewer-key`` hold every pin and approval
the attested readiness rests on to a reviewer signature, on both backends.
Encrypted reviewer keys ask their passphrase on a terminal only: the tests
drive a real pseudo-terminal, and a pipe, which never gets to type one.
"""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import time
from pathlib import Path

import pytest
from ci_helpers import BUNDLE, INTENT, PUBLIC, agent_repo, ci_clone, ci_verify, commit, git

from assay.attest.review import check_review
from assay.attest.signing import load_public_key
from assay_testing import ASSAY, Project, data, op, refused


def keypair(tmp_path: Path, project: Project, name: str) -> tuple[str, str]:
    """A key pair outside the repository (its files never touch the attested workspace)."""
    prefix = tmp_path / "keys" / name
    data(project, "key.generate", out=str(prefix))
    return str(prefix) + ".key", str(prefix) + ".pub.json"


def prove(project: Project) -> None:
    ran = data(project, "evidence.run", name="unit", target=[f"{INTENT}#R1", f"{INTENT}#R2"])
    data(project, "work.accept", id=INTENT,
         from_run=[f"{ran['receipt']['id']}@{ran['receipt']['revision']}"])


def attest(project: Project) -> None:
    envelope, code = op(project, "attest", intent=INTENT, out=BUNDLE)
    assert code == 0, envelope


def test_reviewer_key_refuses_a_pin_nobody_reviewed(tmp_path: Path, ledger_url: str) -> None:
    """A pin made on first use by the agent is not signed: attestation_approval_unsigned."""
    project = agent_repo(tmp_path / "agent", db=ledger_url)
    _, alice_pub = keypair(tmp_path, project, "alice")
    prove(project)
    attest(project)
    error = refused(project, "verify-attestation", file=BUNDLE, key=PUBLIC,
                    reviewer_key=[alice_pub])
    assert (error.code, error.pointer) == ("attestation_approval_unsigned", "/reviewer_key")
    assert error.details == {"id": f"gate-pin:{INTENT}"}


def test_signed_pin_verifies_with_its_reviewer_key_only(tmp_path: Path, ledger_url: str) -> None:
    """gate pin --sign: the attestation verifies with alice's key, and not with bob's."""
    project = agent_repo(tmp_path / "agent", db=ledger_url)
    alice, alice_pub = keypair(tmp_path, project, "alice")
    _, bob_pub = keypair(tmp_path, project, "bob")
    prove(project)
    pinned = data(project, "gate.pin", intent=[INTENT], principal="alice", sign=alice)
    assert pinned["signed_by"] == load_public_key(Path(alice_pub)).keyid
    attest(project)
    verified = data(project, "verify-attestation", file=BUNDLE, key=PUBLIC,
                    reviewer_key=[alice_pub])
    assert [(r["id"], r["keyid"]) for r in verified["reviews"]] == [
        (f"gate-pin:{INTENT}", pinned["signed_by"])]
    error = refused(project, "verify-attestation", file=BUNDLE, key=PUBLIC,
                    reviewer_key=[bob_pub])
    assert error.code == "attestation_approval_unsigned"


def test_signed_approval_of_a_changed_check_verifies(tmp_path: Path, ledger_url: str) -> None:
    """gate approve --sign signs the approval and the new pin; both are carried and verify."""
    project = agent_repo(tmp_path / "agent", db=ledger_url)
    alice, alice_pub = keypair(tmp_path, project, "alice")
    prove(project)
    toml = project.root / "assay.toml"
    toml.write_text(toml.read_text().replace("timeout = 120", "timeout = 300"), encoding="utf-8")
    commit(project, "a longer timeout")
    approved = data(project, "gate.approve", intent=[INTENT], principal="alice",
                    reason="the suite grew", sign=alice)
    assert approved["signed_by"] == load_public_key(Path(alice_pub)).keyid
    prove(project)
    attest(project)
    verified = data(project, "verify-attestation", file=BUNDLE, key=PUBLIC,
                    reviewer_key=[alice_pub])
    assert [r["id"] for r in verified["reviews"]] == [f"gate-pin:{INTENT}",
                                                      f"gate-approval:{INTENT}@2"]


def test_a_signature_over_another_body_does_not_verify(tmp_path: Path) -> None:
    """A reviewer signature copied onto a pin with other content is attestation_approval_unsigned."""
    project = agent_repo(tmp_path / "agent")
    alice, alice_pub = keypair(tmp_path, project, "alice")
    prove(project)
    data(project, "gate.pin", intent=[INTENT], principal="alice", sign=alice)
    pin = data(project, "get", id=f"gate-pin:{INTENT}")["record"]["data"]
    key = load_public_key(Path(alice_pub))
    assert check_review(f"gate-pin:{INTENT}", pin, [key]) == key.keyid
    forged = {**pin, "requirements": {}}
    with pytest.raises(Exception) as info:
        check_review(f"gate-pin:{INTENT}", forged, [key])
    assert getattr(info.value, "code", None) == "attestation_approval_unsigned"


def test_sign_with_a_key_not_in_reviewer_keys_is_refused(tmp_path: Path) -> None:
    """[gate] reviewer_keys set: signing with another key is reviewer_key_not_allowed, no write."""
    project = agent_repo(tmp_path / "agent")
    _, alice_pub = keypair(tmp_path, project, "alice")
    bob, _ = keypair(tmp_path, project, "bob")
    (project.root / "alice.pub.json").write_text(Path(alice_pub).read_text())
    toml = project.root / "assay.toml"
    toml.write_text(toml.read_text() + '\n[gate]\nreviewer_keys = ["alice.pub.json"]\n')
    prove(project)
    before = data(project, "get", id=f"gate-pin:{INTENT}")["record"]["revision"]
    error = refused(project, "gate.pin", intent=[INTENT], principal="alice", sign=bob)
    assert (error.code, error.pointer) == ("reviewer_key_not_allowed", "/sign")
    assert data(project, "get", id=f"gate-pin:{INTENT}")["record"]["revision"] == before


def test_ci_verify_with_reviewer_keys(tmp_path: Path) -> None:
    """ci verify --reviewer-key: approval_unsigned for a first-use pin, agrees once alice signed."""
    project = agent_repo(tmp_path / "agent")
    alice, alice_pub = keypair(tmp_path, project, "alice")
    prove(project)
    attest(project)
    commit(project, "attestation, pins unsigned")
    result, code = ci_verify(ci_clone(project, tmp_path / "ci1"), reviewer_key=[alice_pub])
    assert (result["verdict"], code) == ("disagrees", 1)
    assert [d["kind"] for d in result["disagreements"]] == ["approval_unsigned"]
    data(project, "gate.pin", intent=[INTENT], principal="alice", sign=alice)
    git(project.root, "rm", "-q", BUNDLE)
    commit(project, "drop the unsigned attestation")
    attest(project)
    commit(project, "attestation, pins signed by alice")
    result, code = ci_verify(ci_clone(project, tmp_path / "ci2"), reviewer_key=[alice_pub])
    assert (result["verdict"], code) == ("agrees", 0), result["disagreements"]


# --- passphrases ----------------------------------------------------------------------------


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}


def on_tty(cwd: Path, args: list[str], answers: list[tuple[bytes, bytes]]) -> tuple[int, bytes]:
    """Run assay with a real controlling terminal, typing each answer when its prompt shows."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: its controlling terminal is the pty
        os.chdir(cwd)
        os.execve(ASSAY, [ASSAY, *args], _env())
    seen = b""
    pending = list(answers)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 1)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        if pending and pending[0][0] in seen:
            prompt, answer = pending.pop(0)
            seen = seen.replace(prompt, b"<asked>", 1)
            os.write(fd, answer + b"\n")
    os.close(fd)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), seen


def test_encrypted_key_needs_a_terminal(tmp_path: Path) -> None:
    """key generate --encrypt through a pipe is passphrase_unavailable and writes no key."""
    project = agent_repo(tmp_path / "agent")
    done = subprocess.run([ASSAY, "key", "generate", "--encrypt", "--out", "enc/alice",
                           "--format", "json"], cwd=project.root, input=b"s3cret\ns3cret\n",
                          capture_output=True, env=_env(), timeout=120, check=False,
                          start_new_session=True)
    assert done.returncode == 1
    assert json.loads(done.stderr)["error"]["code"] == "passphrase_unavailable"
    assert not (project.root / "enc").exists() or not any((project.root / "enc").iterdir())


def test_encrypted_key_signs_with_the_right_passphrase_only(tmp_path: Path) -> None:
    """On a terminal: the key is written encrypted; a wrong passphrase is key_passphrase_wrong."""
    project = agent_repo(tmp_path / "agent")
    prove(project)
    code, _ = on_tty(project.root, ["key", "generate", "--encrypt", "--out", str(tmp_path / "a")],
                     [(b"Passphrase for", b"s3cret"), (b"Repeat the passphrase", b"s3cret")])
    assert code == 0
    assert (tmp_path / "a.key").read_bytes().startswith(b"-----BEGIN ENCRYPTED PRIVATE KEY")
    sign = ["gate", "pin", "--as", "alice", "--sign", str(tmp_path / "a.key"), "--format",
            "json", "--", INTENT]
    code, seen = on_tty(project.root, sign, [(b"Passphrase for", b"wrong")])
    assert code == 1 and b"key_passphrase_wrong" in seen
    code, seen = on_tty(project.root, sign, [(b"Passphrase for", b"s3cret")])
    assert code == 0, seen
    pin = data(project, "get", id=f"gate-pin:{INTENT}")["record"]["data"]
    assert pin["signature"]["signatures"][0]["keyid"] == json.loads(
        (tmp_path / "a.pub.json").read_text())["keyid"]
    # Signing with it from a pipe never asks: passphrase_unavailable, nothing written.
    done = subprocess.run([ASSAY, *sign], cwd=project.root, capture_output=True, env=_env(),
                          stdin=subprocess.DEVNULL, timeout=120, check=False,
                          start_new_session=True)
    assert done.returncode == 1
    assert json.loads(done.stderr)["error"]["code"] == "passphrase_unavailable"


def test_verify_attestation_checks_the_carried_pin_against_the_ledger(tmp_path: Path) -> None:
    """A carried pin whose stored version was altered since: attestation_pin_mismatch."""
    from assay_testing import corrupt_version

    project = agent_repo(tmp_path / "agent")
    prove(project)
    attest(project)
    pin = data(project, "get", id=f"gate-pin:{INTENT}")["record"]
    corrupt_version(project, f"gate-pin:{INTENT}", pin["revision"], None,
                    data_sha256="0" * 64)
    error = refused(project, "verify-attestation", file=BUNDLE, key=PUBLIC)
    assert (error.code, error.details) == (
        "attestation_pin_mismatch", {"id": f"gate-pin:{INTENT}", "revision": pin["revision"]})
