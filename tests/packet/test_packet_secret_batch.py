"""Batch secret screening agrees with scanning each excerpt on its own."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from assay.packet.redaction import find_secret, find_secrets
from assay_testing import examples

# Pieces that make rules fire, nearly fire, or fire only next to each other:
# assignments cut off before their value, word-boundary rules after a word
# character, lookbehind rules after hex or digits, an unterminated key.
PIECES = [
    "token", "token:", "token =", "password=", "secret: ", "api_key=hunter2", "x", "a1", "_",
    " ", "\n", "\r\n", "\t", "\0", ",", "'", '"', ":", "=", "@", "/", "sk-", "sk_live_",
    "abcd1234wxyz", "4eC39HqLyjWDarjtT1zdp7dc", "ghp_", "0123456789abcdef" * 2, "-us1",
    "12345678", ":AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "postgres://app", ":s3cret@",
    "Bearer ", "abcdefgh12", "Authorization: Basic ", "dXNlcjpwYXNzd29yZA==", "aws_secret_key=",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----", "Private-Lines: 2", "AAAAAAAAAAAAAAAAAAAAAAAA",
    "eyJhbGciOiJIUzI1NiJ9", ".", "eyJzdWIiOiIxMjM0NTY3ODkwIn0", "[REDACTED]", "é", "\U0001f600",
]
TEXTS = st.lists(st.sampled_from(PIECES), max_size=8).map("".join)


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(TEXTS, max_size=40))
def test_find_secrets_matches_one_by_one(texts: list[str]) -> None:
    """Every excerpt gets the same finding screened in a batch as scanned alone."""
    assert find_secrets(texts) == [find_secret(text) for text in texts]


def test_find_secrets_clean_batch_around_a_dirty_one() -> None:
    """A secret among many clean excerpts is found at its own index, and only there."""
    texts = [f"plain text number {i}" for i in range(300)]
    texts[200] = "the password=hunter2 leaked"
    found = find_secrets(texts)
    assert [i for i, f in enumerate(found) if f is not None] == [200]
    assert found[200] == find_secret(texts[200])
