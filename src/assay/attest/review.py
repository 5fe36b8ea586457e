"""Signed reviews: a reviewer key's DSSE signature on a pin or an approval record.

``gate pin --sign KEY`` and ``gate approve --sign KEY`` store, in the data of
each record they write, a ``signature``: a DSSE envelope (signed with
:func:`assay.attest.signing.sign`) of an in-toto Statement whose subject is
the record id with the SHA-256 of its *reviewed body* (:func:`review_body`:
the record's data without ``signature`` and without a pin's ``texts``, which
only keep source texts for showing a diff; every test's source digest stays
in the body). Its predicate (:data:`REVIEW_TYPE`) names the record and the
principal who signed.

Whoever holds the reviewer's public key can check a body against its
signature without the ledger (:func:`check_review`): the attestation
carries each pin and approval its readiness rests on as body plus signature,
so CI checks them with the reviewer keys it trusts. On SQLite, where an
agent runs as the same OS user as the ledger, this signature is the
boundary: the agent can write a pin or an approval record, but not one that
verifies with a key it does not hold.

Errors: ``attestation_approval_unsigned`` (no signature, another key's, one
that does not verify, or one over another body). Imports the base modules
and :mod:`assay.attest.signing`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from assay.attest.signing import sign, verify_any
from assay.canonical import canonical_bytes, digest, parse
from assay.errors import AssayError

if TYPE_CHECKING:
    from securesystemslib.signer import CryptoSigner, SSlibKey

__all__ = ["REVIEW_TYPE", "check_review", "review_body", "sign_review"]

REVIEW_TYPE = "https://assay.dev/attestation/review/v0.1"
_STATEMENT = "https://in-toto.io/Statement/v1"


def review_body(data: Mapping[str, Any]) -> dict[str, Any]:
    """What a review signature covers: ``data`` without ``signature`` and ``texts``."""
    return {k: v for k, v in data.items() if k not in ("signature", "texts")}


def _statement(record_id: str, body: Mapping[str, Any], by: str) -> dict[str, Any]:
    return {"_type": _STATEMENT,
            "subject": [{"name": record_id, "digest": {"sha256": digest(dict(body))}}],
            "predicateType": REVIEW_TYPE,
            "predicate": {"record": record_id, "signed_by": by}}


def sign_review(record_id: str, data: Mapping[str, Any], signer: CryptoSigner, by: str
                ) -> dict[str, Any]:
    """The ``signature`` envelope of ``record_id``'s ``data`` by ``signer`` (principal ``by``)."""
    return sign(canonical_bytes(_statement(record_id, review_body(data), by)), signer)


def _unsigned(record_id: str, problem: str, where: str) -> AssayError:
    return AssayError(f"{record_id}: {problem}", code="attestation_approval_unsigned",
                      pointer=where, details={"id": record_id},
                      action="A reviewer signs it with a key you trust: 'assay gate approve "
                             "--sign KEY' (or 'assay gate pin --sign KEY'), then attest again.")


def check_review(record_id: str, data: Mapping[str, Any], keys: Sequence[SSlibKey], *,
                 where: str = "/reviewer_key") -> str:
    """The key id of the reviewer key in ``keys`` whose signature covers ``data``, or raise."""
    envelope = data.get("signature")
    if not isinstance(envelope, dict):
        raise _unsigned(record_id, "it carries no reviewer signature", where)
    try:
        payload, key = verify_any(envelope, keys, line=1, where=where)
    except AssayError as exc:
        raise _unsigned(record_id, f"its signature is not by a reviewer key given "
                                   f"({exc.code})", where) from None
    try:
        statement = parse(payload)
    except AssayError:
        raise _unsigned(record_id, "its signed payload is not JSON", where) from None
    expected = _statement(record_id, review_body(data), "")
    subject = statement.get("subject") if isinstance(statement, dict) else None
    if not isinstance(statement, dict) or statement.get("predicateType") != REVIEW_TYPE \
            or subject != expected["subject"]:
        raise _unsigned(record_id, "its signature covers another record or other content",
                        where)
    return str(key.keyid)

