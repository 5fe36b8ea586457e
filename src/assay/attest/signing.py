"""Ed25519 keys and DSSE envelopes, through securesystemslib.

A key pair is two files: the private key as PKCS#8 PEM, unencrypted or
encrypted with a passphrase (written with mode 0600, never overwritten) and the public key as the JSON key object
securesystemslib and in-toto read (``{keyid, keytype: "ed25519", scheme:
"ed25519", keyval: {public: HEX}}``). A public key may also be given as a
SubjectPublicKeyInfo PEM. The key id is securesystemslib's default: the
SHA-256 of the canonical key object.

:func:`sign` wraps one payload in a DSSE envelope (payload type
``application/vnd.in-toto+json``) signed over the DSSE pre-authentication
encoding; ed25519 is deterministic, so the same payload and key give the same
envelope. :func:`verify` checks an envelope's signature with a public key.

A passphrase is read from the terminal only (:func:`terminal_passphrase`):
never from the environment, an argument or a standard input that is not a
terminal, so an agent that runs assay through pipes cannot supply one
(``passphrase_unavailable``); a passphrase that does not decrypt the key is
``key_passphrase_wrong``.

securesystemslib and cryptography are imported inside the functions only.
Errors: ``key_not_found``, ``key_invalid``, ``key_exists``,
``key_unwritable``, ``passphrase_unavailable``, ``key_passphrase_wrong``,
``attestation_key_unknown`` and ``attestation_signature_invalid``.
"""

from __future__ import annotations

import binascii
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.errors import AssayError, ConflictError
from assay.inputs import InputRefused, read_regular

if TYPE_CHECKING:
    from securesystemslib.signer import CryptoSigner, SSlibKey

__all__ = [
    "KEY_FILE_BYTES",
    "PAYLOAD_TYPE",
    "KeyPair",
    "generate_keys",
    "load_public_key",
    "load_signer",
    "sign",
    "terminal_passphrase",
    "verify",
    "verify_any",
]

PAYLOAD_TYPE = "application/vnd.in-toto+json"
KEY_FILE_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class KeyPair:
    """Where a generated key pair was written, and its key id."""

    private_key: Path
    public_key: Path
    keyid: str


def _read_key(path: Path, what: str, where: str) -> bytes:
    try:
        return read_regular(path, limit=KEY_FILE_BYTES, follow_symlinks=True,
                            label=f"the {what} {path}", where=where)
    except InputRefused as exc:
        if exc.reason == "missing":
            raise AssayError(f"no {what} at {path}", code="key_not_found", pointer=where,
                             details={"path": str(path)},
                             action="Generate a key pair with 'assay key generate', or name "
                                    "the key file.") from None
        raise AssayError(f"cannot use the {what} {path}: {exc.message}", code="key_invalid",
                         pointer=where, details={"path": str(path)},
                         action="Point at a regular key file written by 'assay key generate'.") \
            from None


def _invalid(path: Path, what: str, problem: str, where: str) -> AssayError:
    return AssayError(f"{path} is not a usable {what}: {problem}", code="key_invalid",
                      pointer=where, details={"path": str(path)},
                      action="Use the files 'assay key generate' writes (an ed25519 key pair).")


def _write_new(path: Path, data: bytes, mode: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                 | getattr(os, "O_CLOEXEC", 0), mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)


def terminal_passphrase(prompt: str, *, confirm: bool = False) -> bytes:
    """A passphrase typed on the controlling terminal (``passphrase_unavailable`` without one).

    Standard input must itself be a terminal and ``/dev/tty`` must open: a
    caller that drives assay through pipes (an agent's tool call) has no way
    to give one. ``confirm`` asks twice and refuses two different answers.
    """
    import getpass
    import sys

    def unavailable(why: str) -> AssayError:
        return AssayError(f"a passphrase is read from a terminal only, and {why}",
                          code="passphrase_unavailable",
                          action="Run the command yourself in a terminal; assay never reads a "
                                 "passphrase from the environment or a pipe.")

    try:
        interactive = sys.stdin is not None and os.isatty(sys.stdin.fileno())
    except (OSError, ValueError):
        interactive = False
    if not interactive:
        raise unavailable("standard input is not a terminal")
    try:
        os.close(os.open("/dev/tty", os.O_RDWR | getattr(os, "O_NOCTTY", 0)))
    except OSError:
        raise unavailable("this process has no controlling terminal") from None
    first = getpass.getpass(prompt)
    if confirm and getpass.getpass("Repeat the passphrase: ") != first:
        raise AssayError("the two passphrases differ", code="passphrase_unavailable",
                         action="Run it again and type the same passphrase twice.")
    if not first:
        raise AssayError("an empty passphrase encrypts nothing", code="passphrase_unavailable",
                         action="Type a passphrase, or generate the key without encrypting it.")
    return first.encode("utf-8")


def generate_keys(private_path: Path, public_path: Path, *,
                  passphrase: bytes | None = None) -> KeyPair:
    """Write a new ed25519 key pair; refuse (``key_exists``) when either file exists.

    With ``passphrase`` the private key is written encrypted (PKCS#8, the best
    encryption cryptography offers).
    """
    from securesystemslib.signer import CryptoSigner

    for path in (private_path, public_path):
        if os.path.lexists(path):
            raise ConflictError(f"{path} already exists; assay never overwrites a key",
                                code="key_exists", pointer="/out", details={"path": str(path)},
                                action="Use the existing key, or name new files with out.")
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import (
        BestAvailableEncryption,
        Encoding,
        NoEncryption,
        PrivateFormat,
    )

    generated = Ed25519PrivateKey.generate()
    signer = CryptoSigner(generated)
    public = signer.public_key
    private = generated.private_bytes(
        Encoding.PEM, PrivateFormat.PKCS8,
        NoEncryption() if passphrase is None else BestAvailableEncryption(passphrase))
    try:
        private_path.parent.mkdir(parents=True, exist_ok=True)
        public_path.parent.mkdir(parents=True, exist_ok=True)
        _write_new(private_path, private, 0o600)
        try:
            _write_new(public_path, (json.dumps({"keyid": public.keyid, **public.to_dict()},
                                                sort_keys=True, indent=2) + "\n").encode(), 0o644)
        except BaseException:
            private_path.unlink(missing_ok=True)
            raise
    except FileExistsError:
        raise ConflictError("a key file appeared while the pair was written; nothing was kept",
                            code="key_exists", pointer="/out",
                            action="Run it again with new file names.") from None
    except OSError as exc:
        raise AssayError(f"cannot write the key pair: {exc.strerror or exc}",
                         code="key_unwritable", pointer="/out",
                         action="Name a writable directory with out.") from None
    return KeyPair(private_path, public_path, public.keyid)


def is_encrypted(path: Path, *, where: str = "/key") -> bool:
    """Whether the private key file at ``path`` is encrypted with a passphrase."""
    return b"-----BEGIN ENCRYPTED PRIVATE KEY-----" in _read_key(path, "private key", where)


def load_signer(path: Path, *, where: str = "/key",
                passphrase: Callable[[], bytes] | None = None) -> CryptoSigner:
    """The signer of the ed25519 private key at ``path`` (PKCS#8 PEM).

    An encrypted key asks ``passphrase`` (default: :func:`terminal_passphrase`)
    once; an unencrypted key never asks.
    """
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import load_pem_private_key
    from securesystemslib.signer import CryptoSigner

    data = _read_key(path, "private key", where)
    secret: bytes | None = None
    if b"-----BEGIN ENCRYPTED PRIVATE KEY-----" in data:
        secret = (passphrase or (lambda: terminal_passphrase(f"Passphrase for {path}: ")))()
    try:
        key = load_pem_private_key(data, password=secret)
    except (ValueError, TypeError) as exc:
        if secret is not None and any(w in str(exc).lower() for w in ("password", "decrypt")):
            raise AssayError(f"the passphrase does not decrypt {path}",
                             code="key_passphrase_wrong", pointer=where,
                             details={"path": str(path)},
                             action="Run it again and type the key's passphrase.") from None
        raise _invalid(path, "private key", str(exc).splitlines()[0] if str(exc) else
                       "not a PEM private key", where) from None
    if not isinstance(key, Ed25519PrivateKey):
        raise _invalid(path, "private key", "it is not an ed25519 key", where)
    return CryptoSigner(key)


def load_public_key(path: Path, *, where: str = "/key") -> SSlibKey:
    """The ed25519 public key at ``path``: the JSON key object, or a SubjectPublicKeyInfo PEM."""
    from securesystemslib.signer import SSlibKey

    data = _read_key(path, "public key", where)
    if data.lstrip().startswith(b"-----BEGIN"):
        from cryptography.hazmat.primitives.serialization import load_pem_public_key

        try:
            key = SSlibKey.from_crypto(load_pem_public_key(data))
        except (ValueError, TypeError) as exc:
            raise _invalid(path, "public key", str(exc).splitlines()[0] if str(exc) else
                           "not a public key PEM", where) from None
    else:
        from assay.canonical import parse

        try:
            document = parse(data)
        except AssayError as exc:
            raise _invalid(path, "public key", exc.message, where) from None
        if not isinstance(document, dict) or not isinstance(document.get("keyid"), str):
            raise _invalid(path, "public key", "a key object with a keyid is expected", where)
        body = {k: v for k, v in document.items() if k != "keyid"}
        try:
            key = SSlibKey.from_dict(document["keyid"], body)
        except (KeyError, TypeError, ValueError) as exc:
            raise _invalid(path, "public key", f"missing or malformed field {exc}", where) \
                from None
    if key.keytype != "ed25519" or key.scheme != "ed25519":
        raise _invalid(path, "public key", f"it is a {key.keytype}/{key.scheme} key, not ed25519",
                       where)
    try:
        raw = bytes.fromhex(str(key.keyval.get("public", "")))
    except ValueError:
        raw = b""
    if len(raw) != 32:
        raise _invalid(path, "public key", "keyval.public is not 32 bytes of hex", where)
    return key


def sign(payload: bytes, signer: CryptoSigner) -> dict[str, Any]:
    """A DSSE envelope of ``payload`` signed by ``signer`` (the JSON object)."""
    from securesystemslib.dsse import Envelope

    envelope = Envelope(payload=payload, payload_type=PAYLOAD_TYPE, signatures={})
    envelope.sign(signer)
    return envelope.to_dict()


def _bad_signature(problem: str, where: str, line: int) -> AssayError:
    return AssayError(f"line {line} of the attestation: {problem}",
                      code="attestation_signature_invalid", pointer=where,
                      details={"line": line},
                      action="Obtain the attestation and the public key from their source again; "
                             "an envelope that does not verify was altered or signed by "
                             "another key.")


def verify(envelope: Any, key: SSlibKey, *, line: int, where: str = "/file") -> bytes:
    """The payload of ``envelope`` once its signature verifies with ``key``.

    Raises ``attestation_malformed`` for an object that is not a DSSE
    envelope of an in-toto statement, and ``attestation_signature_invalid``
    when no signature verifies with ``key``.
    """
    from securesystemslib.dsse import Envelope
    from securesystemslib.exceptions import VerificationError

    if not isinstance(envelope, dict) or set(envelope) != {"payload", "payloadType",
                                                          "signatures"}:
        raise malformed("a DSSE envelope {payload, payloadType, signatures} is expected",
                        where, line)
    if envelope["payloadType"] != PAYLOAD_TYPE:
        raise malformed(f"payloadType is {envelope['payloadType']!r}, not {PAYLOAD_TYPE}",
                        where, line)
    signatures = envelope["signatures"]
    if not isinstance(signatures, list) or not signatures or not all(
            isinstance(s, dict) and isinstance(s.get("sig"), str) and isinstance(s.get("keyid"),
                                                                                  str)
            for s in signatures) or not isinstance(envelope["payload"], str):
        raise malformed("the envelope's payload or signatures are malformed", where, line)
    try:
        parsed = Envelope.from_dict({**envelope,
                                     "signatures": [dict(s) for s in signatures]})
    except (binascii.Error, ValueError, KeyError, TypeError) as exc:
        raise malformed(f"the envelope cannot be decoded: {exc}", where, line) from None
    if key.keyid not in parsed.signatures:
        raise _bad_signature(f"no signature by key {key.keyid}", where, line)
    try:
        parsed.verify([key], 1)
    except VerificationError:
        raise _bad_signature(f"the signature by key {key.keyid} does not verify", where,
                             line) from None
    return parsed.payload


def verify_any(envelope: Any, keys: Sequence[SSlibKey], *, line: int, where: str = "/file"
               ) -> tuple[bytes, SSlibKey]:
    """The payload of ``envelope`` and the key of ``keys`` whose signature on it verifies.

    ``attestation_key_unknown`` when no signature is by one of ``keys``;
    otherwise as :func:`verify` with that key.
    """
    signatures = envelope.get("signatures") if isinstance(envelope, dict) else None
    ids = {s.get("keyid") for s in signatures if isinstance(s, dict)} \
        if isinstance(signatures, list) else set()
    for key in keys:
        if key.keyid in ids:
            return verify(envelope, key, line=line, where=where), key
    if not ids:
        verify(envelope, keys[0], line=line, where=where)  # raises: malformed or unsigned
    raise AssayError(f"line {line} of the attestation is signed by {', '.join(sorted(map(str, ids)))}"
                     ", none of the keys given", code="attestation_key_unknown", pointer=where,
                     details={"line": line, "keyids": sorted(map(str, ids))},
                     action="Pass the public key that signed it, if you trust it.")


def malformed(problem: str, where: str, line: int) -> AssayError:
    """The ``attestation_malformed`` error of line ``line``."""
    return AssayError(f"line {line} of the attestation: {problem}", code="attestation_malformed",
                      pointer=where, details={"line": line},
                      action="Pass an attestation bundle written by 'assay attest' (JSON lines of "
                             "DSSE envelopes).")
