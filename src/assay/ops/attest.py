"""Attestation operations: attest, key generate, verify-attestation.

Handlers import :mod:`assay.attest` (and through it securesystemslib) lazily.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from assay.errors import AssayError
from assay.ops import Argument, Bound, Invocation, Result, operation
from assay.ops.outfile import OutFile, named_path

KEYS_DIR = Path(".assay") / "keys"
DEFAULT_KEY = "attestation"
ATTESTATIONS_DIR = Path(".assay") / "attestations"

_SUBJECT = {"type": "array", "items": {"type": "object", "properties": {
    "name": {"type": "string"}, "digest": {"type": "object"}}}}


def _path(inv: Invocation, value: str | None, default: Path | None) -> Path:
    """``value`` relative to the call's directory, or ``default`` inside the project."""
    if not value:
        assert default is not None
        return inv.project().root / default
    return named_path(value, inv.cwd)


def _verify_step(key: Path, out: Path) -> str:
    """How to verify a bundle: with the public key `key.generate` wrote beside ``key``, if there."""
    import shlex

    public = key.with_name(key.name.removesuffix(".key") + ".pub.json")
    if public.is_file():
        return (f"Verify it: 'assay verify-attestation --key {shlex.quote(str(public))} -- "
                f"{shlex.quote(str(out))}'")
    return (f"Verify it with the public key of {key} (assay verify-attestation --key "
            f"PUBLIC_KEY -- {shlex.quote(str(out))}).")


def _observe(inv: Invocation) -> Any:
    from assay.evidence.git import observe

    project = inv.project()
    return observe(project.root, ignore=project.evidence_ignore)


@operation(
    "attest",
    admin=True,
    destructive=True,
    idempotent=True,
    summary="Write a signed in-toto attestation of an intent's readiness and its machine runs.",
    description=(
        "Reads the intent's readiness report and every machine run its acceptance cites from "
        "one ledger snapshot, observes the git workspace, and writes an in-toto bundle (JSON "
        "lines of DSSE envelopes signed with an ed25519 key): a readiness statement (assay's "
        "predicate: verdict, report digest, intent version, cited runs with their digests) and "
        "one test-result/v0.1 statement per cited run (result, configuration digests, per-test "
        "names where known), each about the git commit (and the workspace digest when it has "
        "uncommitted changes). Refused when a cited run observed other file contents than the "
        "workspace has now. Same ledger revision, workspace and key: the same bytes. The key "
        "defaults to the project's key from `key.generate`."
    ),
    cli_note="Exit status 1 when the attested verdict is not ready (the file is written).",
    writes=True,
    writes_ledger=False,
    effect="Writes one attestation file (`out`, default .assay/attestations/NAME.intoto.jsonl); "
           "nothing to the ledger.",
    arguments=(
        Argument("intent", {"type": "string", "minLength": 1},
                 "The intent record id (knowledge:NAME) to attest.", required=True),
        Argument("key", {"type": "string", "minLength": 1},
                 "The ed25519 private key file (default: .assay/keys/attestation.key)."),
        Argument("out", {"type": "string", "minLength": 1},
                 "Where to write the bundle (default: .assay/attestations/NAME.intoto.jsonl)."),
    ),
    output_schema={"type": "object", "properties": {
        "out": {"type": "string"}, "statements": {"type": "integer"},
        "subject": _SUBJECT, "verdict": {"enum": ["ready", "not_ready"]},
        "keyid": {"type": "string"}, "bundle_sha256": {"type": "string"},
        "runs": {"type": "array"}}},
)
def attest(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.attest.bundle import build_bundle
    from assay.attest.signing import load_signer
    from assay.canonical import digest_bytes
    from assay.ids import validate_record_id
    from assay.ops.intent import live_binding

    intent_id = args["intent"]
    validate_record_id(intent_id, field="/intent")
    project = inv.project()
    key = _path(inv, args.get("key"), KEYS_DIR / f"{DEFAULT_KEY}.key")
    signer = load_signer(key)
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", intent_id.partition(":")[2]).strip("-.") or "intent"
    out = _path(inv, args.get("out"), ATTESTATIONS_DIR / f"{name}.intoto.jsonl")
    observation = _observe(inv)
    # The report attested compares its runs with the workspace the bundle's subject names.
    binding = live_binding(inv, observation=observation)
    # Attested is what the reviewer sees: the project's versions, never a private copy.
    with inv.reviewer_store().reader() as reader:
        # The chain head at the revision attested: a later verification
        # recomputes it, so a rewritten past cannot pass unseen.
        walk = reader.walk_chain()
        if walk.broken is not None or walk.ledger_revision != reader.ledger_revision:
            raise AssayError(
                "the ledger's history is broken; an attestation would vouch for it",
                code="ledger_chain_broken",
                details={} if walk.broken is None else walk.broken.to_dict(),
                action="Run 'assay ledger verify' to find the broken version.")
        bundle = build_bundle(reader, binding, intent_id, project=project.name,
                              observation=observation, signer=signer,
                              chain_sha256=walk.chain_sha256)
        revision = reader.ledger_revision
    data = bundle.text.encode("utf-8")
    OutFile(out, "attestation_unwritable", "the attestation", ".attestation-").write(data)
    ready = bundle.readiness["ready_to_review"]
    steps = [_verify_step(key, out)]
    if not ready:
        steps.insert(0, f"The attested verdict is not ready: 'assay work check -- {intent_id}' "
                        "says why.")
    return Result({
        "out": str(out),
        "statements": bundle.statements,
        "subject": bundle.subject,
        "verdict": bundle.readiness["verdict"],
        "keyid": signer.public_key.keyid,
        "bundle_sha256": digest_bytes(data),
        "runs": bundle.readiness["runs"],
    }, ledger_revision=revision, next=tuple(steps), exit_code=0 if ready else 1)


@operation(
    "key.generate",
    admin=True,
    summary="Generate an ed25519 key pair for signing attestations.",
    description=(
        "Writes PREFIX.key (the private key, PKCS#8 PEM, readable by its owner only) and "
        "PREFIX.pub.json (the public key object securesystemslib and in-toto read, with its "
        "keyid). PREFIX defaults to the project's .assay/keys/attestation, which `attest` "
        "uses by default. An existing key file is never overwritten."
    ),
    writes=True,
    writes_ledger=False,
    effect="Writes the two key files; nothing to the ledger.",
    arguments=(
        Argument("out", {"type": "string", "minLength": 1},
                 "Path prefix of the two files (default: .assay/keys/attestation)."),
    ),
    output_schema={"type": "object", "properties": {
        "private_key": {"type": "string"}, "public_key": {"type": "string"},
        "keyid": {"type": "string"}}},
)
def key_generate(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.attest.signing import generate_keys

    prefix = _path(inv, args.get("out"), KEYS_DIR / DEFAULT_KEY)
    pair = generate_keys(prefix.with_name(prefix.name + ".key"),
                         prefix.with_name(prefix.name + ".pub.json"))
    return Result({"private_key": str(pair.private_key), "public_key": str(pair.public_key),
                   "keyid": pair.keyid},
                  next=((f"Share the public key {pair.public_key} with whoever verifies; keep "
                         f"{pair.private_key} private."),))


@operation(
    "verify-attestation",
    summary="Verify an attestation bundle: signatures, subject, and the ledger runs it cites.",
    description=(
        "Reads the bundle `file` and checks that every envelope's signature verifies with the "
        "public `key`, that its subject is this repository now (HEAD is the attested commit, "
        "and the workspace is clean or has the attested digest), that the attested intent "
        "version and every cited run exist in this ledger with the attested digests and "
        "results, that the ledger's history up to the attested revision is the attested one "
        "(its hash chain recomputed there has the attested value, else "
        "attestation_ledger_rewritten), and that no statement was added or removed. Every failure is a coded error; "
        "success returns what the attestation says, including its verdict, and whether the "
        "ledger has moved on since (`stale`: the intent or a record its acceptance cites has a "
        "newer revision, was retired or superseded; `moved_on` lists each)."
    ),
    writes=False,
    bounds=Bound("verification", items=1, max_items=1, whole=True, recover=(
        "One verdict on one bundle (the bundle read is at most 4 MiB): its subject, intent "
        "version and one row per attested run.")),
    arguments=(
        Argument("file", {"type": "string", "minLength": 1}, "The attestation bundle file.",
                 binding="literal", required=True),
        Argument("key", {"type": "string", "minLength": 1},
                 "The public key file (the .pub.json key object, or a public key PEM).",
                 required=True),
    ),
    output_schema={"type": "object", "properties": {
        "verified": {"const": True}, "keyid": {"type": "string"}, "subject": _SUBJECT,
        "intent": {"type": "object"}, "verdict": {"enum": ["ready", "not_ready"]},
        "ready_to_review": {"type": "boolean"}, "report_sha256": {"type": "string"},
        "runs": {"type": "array"}, "statements": {"type": "integer"},
        "chain_verified": {"type": "boolean"}, "stale": {"type": "boolean"},
        "moved_on": {"type": "array", "items": {"type": "object", "properties": {
            "id": {"type": "string"}, "role": {"enum": ["intent", "evidence"]},
            "attested_revision": {"type": "integer"},
            "current_revision": {"type": ["integer", "null"]},
            "status": {"type": ["string", "null"]},
            "change": {"enum": ["newer", "retired", "superseded", "missing"]},
            "intent_changed": {"type": ["boolean", "null"]}}}}}},
)
def verify_attestation(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.attest.bundle import verify_bundle
    from assay.attest.signing import load_public_key

    key = load_public_key(_path(inv, args["key"], None))
    text = inv.read_input(args["file"], where="/file", label="the attestation")
    observation = _observe(inv)
    with inv.reviewer_store().reader() as reader:
        data = verify_bundle(text, key, reader, principal=inv.principal,
                             observation=observation, walk=reader.walk_chain)
        revision = reader.ledger_revision
    steps: tuple[str, ...] = ()
    if data["stale"]:
        intent_id = data["intent"].get("id")
        step = (f"The ledger has moved on since this was attested: 'assay work check -- "
                f"{intent_id}' gives the current verdict; attest again to carry it.")
        steps = (step,)
    return Result(data, ledger_revision=revision, next=steps)
