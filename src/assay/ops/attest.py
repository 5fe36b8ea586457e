"""Attestation operations: attest, key generate, verify-attestation, ci verify.

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
        Argument("encrypt", {"type": "boolean"},
                 "Encrypt the private key with a passphrase typed on the terminal.",
                 binding="flag"),
    ),
    output_schema={"type": "object", "properties": {
        "private_key": {"type": "string"}, "public_key": {"type": "string"},
        "keyid": {"type": "string"}, "encrypted": {"type": "boolean"}}},
)
def key_generate(inv: Invocation, args: dict[str, Any]) -> Result:
    import os

    from assay.attest.signing import generate_keys, terminal_passphrase

    prefix = _path(inv, args.get("out"), KEYS_DIR / DEFAULT_KEY)
    private = prefix.with_name(prefix.name + ".key")
    public = prefix.with_name(prefix.name + ".pub.json")
    passphrase = None
    if args.get("encrypt"):
        if os.path.lexists(private) or os.path.lexists(public):
            generate_keys(private, public)  # refuses with key_exists before anything is asked
        passphrase = terminal_passphrase(f"Passphrase for {private}: ", confirm=True)
    pair = generate_keys(private, public, passphrase=passphrase)
    return Result({"private_key": str(pair.private_key), "public_key": str(pair.public_key),
                   "keyid": pair.keyid, "encrypted": passphrase is not None},
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
        "attestation_ledger_rewritten), and that no statement was added or removed; with "
        "`reviewer_key`, that every pin and approval the readiness rests on is signed by one "
        "of those keys (attestation_approval_unsigned). Every failure is a coded error; "
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
        Argument("reviewer_key", {"type": "array", "items": {"type": "string", "minLength": 1}},
                 "A reviewer's public key (repeatable): every pin and approval the readiness "
                 "rests on must carry a signature by one of them."),
    ),
    output_schema={"type": "object", "properties": {
        "verified": {"const": True}, "reviews": {"type": "array"}, "keyid": {"type": "string"}, "subject": _SUBJECT,
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
    reviewers = [load_public_key(_path(inv, value, None), where=f"/reviewer_key/{index}")
                 for index, value in enumerate(args.get("reviewer_key") or ())]
    text = inv.read_input(args["file"], where="/file", label="the attestation")
    observation = _observe(inv)
    with inv.reviewer_store().reader() as reader:
        data = verify_bundle(text, key, reader, principal=inv.principal,
                             observation=observation, reviewer_keys=reviewers,
                             walk=reader.walk_chain)
        revision = reader.ledger_revision
    steps: tuple[str, ...] = ()
    if data["stale"]:
        intent_id = data["intent"].get("id")
        step = (f"The ledger has moved on since this was attested: 'assay work check -- "
                f"{intent_id}' gives the current verdict; attest again to carry it.")
        steps = (step,)
    return Result(data, ledger_revision=revision, next=steps)


_VERDICTS = {"agrees": 0, "disagrees": 1, "unverifiable": 5}
_SUMMARY = Path(".assay") / "ci" / "summary.md"


@operation(
    "ci.verify",
    admin=True,
    open_world=True,
    busy="Re-running the attested checks",
    view="attest:ci_verify",
    summary="Re-run, in CI, the checks an attestation rests on and say whether it agrees.",
    description=(
        "Run at the root of a clean checkout of a pull request's head. Verifies every envelope "
        "of the `attestation` with one of the public `key`s, re-runs each check the attested "
        "runs used from the pinned declaration the attestation carries (never from an "
        "assay.toml the pull request changed), reads its results file as `evidence.run` does, "
        "and compares per requirement and per mapped test. The verdict is `agrees`, "
        "`disagrees` (each finding named: a test or requirement whose outcome differs, a check "
        "declared otherwise than pinned, a pinned test set that changed, an approval not "
        "signed by a `reviewer_key`, an attestation that does not say ready) or "
        "`unverifiable` (no attestation, no envelope signed by a key given, a signature that "
        "does not verify, a malformed bundle). Lists the commits between the attested commit "
        "and HEAD. Writes a Markdown summary (`summary`, default $GITHUB_STEP_SUMMARY when set, "
        "else .assay/ci/summary.md) and, with `junit`, a JUnit XML file of the re-run. Needs "
        "no ledger and writes none."),
    cli_note=("Exit status 0 agrees, 1 disagrees, 5 unverifiable (the verdict is also in the "
              "JSON envelope). Under GitHub Actions (GITHUB_ACTIONS=true) each disagreement is "
              "also printed on standard error as an ::error workflow command."),
    writes=True,
    writes_ledger=False,
    effect="Runs the pinned checks; writes the summary and JUnit files; nothing to the ledger.",
    arguments=(
        Argument("attestation", {"type": "string", "minLength": 1},
                 "The attestation bundle (e.g. .assay/attestations/NAME.intoto.jsonl).",
                 required=True),
        Argument("key", {"type": "array", "items": {"type": "string", "minLength": 1},
                         "minItems": 1},
                 "A public key allowed to sign the attestation (repeatable).", required=True),
        Argument("reviewer_key", {"type": "array", "items": {"type": "string", "minLength": 1}},
                 "A reviewer's public key (repeatable): every pin and approval the readiness "
                 "rests on must be signed by one of them."),
        Argument("summary", {"type": "string", "minLength": 1},
                 "Where to append the Markdown summary (default: $GITHUB_STEP_SUMMARY, else "
                 ".assay/ci/summary.md)."),
        Argument("junit", {"type": "string", "minLength": 1},
                 "Where to write a JUnit XML file of the re-run."),
    ),
    output_schema={"type": "object", "properties": {
        "verdict": {"enum": ["agrees", "disagrees", "unverifiable"]},
        "reason": {"type": ["object", "null"]},
        "attestation": {"type": ["object", "null"]},
        "head": {"type": ["string", "null"]},
        "commits": {"type": ["array", "null"], "items": {"type": "string"}},
        "commit_count": {"type": "integer"},
        "checks": {"type": "array"}, "requirements": {"type": "array"},
        "disagreements": {"type": "array", "items": {"type": "object", "properties": {
            "kind": {"enum": ["attested_not_ready", "approval_unsigned", "check_changed",
                              "check_differs", "test_differs", "requirement_differs",
                              "test_set_changed"]},
            "message": {"type": "string"}}}},
        "annotations": {"type": "array", "items": {"type": "string"}},
        "summary": {"type": "string"}, "junit": {"type": ["string", "null"]}}},
)
def ci_verify(inv: Invocation, args: dict[str, Any]) -> Result:
    import os
    import sys

    from assay.attest.ci import junit, markdown, reverify, workflow_commands
    from assay.attest.signing import load_public_key
    from assay.errors import AssayError

    project = inv.project()
    text: bytes | None = None
    keys: list[Any] = []
    reviewers: list[Any] = []
    early = None
    try:
        keys = [load_public_key(_path(inv, value, None), where=f"/key/{index}")
                for index, value in enumerate(args["key"])]
        reviewers = [load_public_key(_path(inv, value, None), where=f"/reviewer_key/{index}")
                     for index, value in enumerate(args.get("reviewer_key") or ())]
        path = _path(inv, args["attestation"], None)
        if path.exists():
            text = inv.read_input(str(path), where="/attestation", label="the attestation")
    except AssayError as exc:
        early = {"code": exc.code, "message": exc.message}
    if early is None:
        data = reverify(project, text, keys, reviewer_keys=reviewers, reporter=inv.progress())
    else:
        data = reverify(project, None, keys)
        data["reason"] = early
    notes = workflow_commands(data)
    summary = _summary_path(inv, args.get("summary"))
    _append(summary, markdown(data))
    out = named_path(args["junit"], inv.cwd) if args.get("junit") else None
    if out is not None:
        OutFile(out, "ci_output_unwritable", "the JUnit file", ".junit-").write(junit(data))
    if os.environ.get("GITHUB_ACTIONS") == "true" and notes:
        sys.stderr.write("".join(line + "\n" for line in notes))
        sys.stderr.flush()
    verdict = data["verdict"]
    steps = {
        "agrees": (),
        "disagrees": (("Read the disagreements: each names the requirement, test or check; fix "
                       "the work or have a reviewer approve the change, then attest again."),),
        "unverifiable": (("Commit the attestation ('assay attest --intent ID --out "
                          ".assay/attestations/NAME.intoto.jsonl') and pass the public key "
                          "that signed it."),)
        if (data.get("reason") or {}).get("code") == "attestation_missing" else
        (("Do not merge on it: pass the public key that signed it, or attest again with "
          "this assay and commit the attestation."),),
    }[verdict]
    return Result({**data, "annotations": notes, "summary": str(summary),
                   "junit": str(out) if out is not None else None},
                  next=steps, exit_code=_VERDICTS[verdict])


def _summary_path(inv: Invocation, value: str | None) -> Path:
    import os

    if value:
        return named_path(value, inv.cwd)
    step = os.environ.get("GITHUB_STEP_SUMMARY")
    if step:
        return Path(step)
    return inv.project().root / _SUMMARY


def _append(path: Path, text: str) -> None:
    """Append ``text`` to the summary file (GitHub's step summary is appended to by each step)."""
    from assay.errors import AssayError

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(text + "\n")
    except OSError as exc:
        raise AssayError(f"cannot write the summary to {path}: {exc.strerror or exc}",
                         code="ci_output_unwritable", pointer="/summary",
                         action="Pass --summary a writable file path.") from None
