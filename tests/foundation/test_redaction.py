"""The shared secret rules: one test per secret shape, streams, reporting, and the oracle."""

from __future__ import annotations

import base64

import pytest

from assay.config import EvidenceCommand
from assay.evidence.record import declaration_data
from assay.redaction import MIN_SECRET_FRAGMENT, RULES, Redactor, scan

AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0"
       ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U")
GOOGLE = "AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe"
STRIPE = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
PEM_BODY = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun"


def redact(text: str, environ: dict[str, str] | None = None) -> tuple[str, dict[str, int]]:
    out, counts = Redactor(environ or {}).redact_text(text)
    return out, dict(counts)


def test_redactor_password_assignment() -> None:
    """A password assignment keeps its name and loses its value."""
    out, counts = redact("db password=hunter2 ok")
    assert out == "db password=[REDACTED:secret_assignment] ok"
    assert counts == {"secret_assignment": 1}


def test_redactor_aws_secret_access_key() -> None:
    """An AWS secret access key named as such is redacted."""
    out, counts = redact(f"aws_secret_access_key = {AWS_SECRET}")
    assert AWS_SECRET not in out and counts == {"aws_secret_access_key": 1}


def test_redactor_url_password() -> None:
    """The password of a postgres://user:pass@ URL is redacted; user and host stay."""
    out, counts = redact("ASSAY_DB=postgres://app:s3cret-pass@db.internal:5432/ledger")
    assert out == "ASSAY_DB=postgres://app:[REDACTED:url_password]@db.internal:5432/ledger"
    assert counts == {"url_password": 1}


def test_redactor_authorization_basic() -> None:
    """An Authorization: Basic credential keeps the scheme and loses the value."""
    out, _ = redact("Authorization: Basic dXNlcjpwYXNzd29yZA==")
    assert out == "Authorization: Basic [REDACTED:basic_auth]"


def test_redactor_bare_jwt() -> None:
    """A bare JSON Web Token is redacted whole."""
    out, counts = redact(f"session {JWT} expired")
    assert out == "session [REDACTED:jwt] expired" and counts == {"jwt": 1}


def test_redactor_google_api_key_bare() -> None:
    """A Google AIza key on its own is named by its own rule."""
    assert redact(f"using {GOOGLE} now") == ("using [REDACTED:google_api_key] now",
                                             {"google_api_key": 1})


def test_redactor_stripe_live_key() -> None:
    """A Stripe sk_live_ key is redacted by its own rule."""
    assert redact(f"charge with {STRIPE}") == ("charge with [REDACTED:stripe_key]",
                                              {"stripe_key": 1})


def test_redactor_unterminated_private_key_body() -> None:
    """A private key cut off before its END line is redacted to the end of the text."""
    text = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n{PEM_BODY[::-1]}\n"
    out, counts = redact(text)
    assert out == "[REDACTED:private_key]" and counts == {"private_key": 1}


def test_stream_redactor_private_key_spanning_blocks() -> None:
    """A key opened in one block is redacted in the next blocks up to its END line."""
    stream = Redactor({}).stream()
    first, _ = stream.feed(b"before\n-----BEGIN PRIVATE KEY-----\n")
    middle, _ = stream.feed(PEM_BODY.encode() + b"\n")
    last, _ = stream.feed(b"tail-of-key\n-----END PRIVATE KEY-----\nafter\n")
    joined = first + middle + last
    assert PEM_BODY.encode() not in joined and b"tail-of-key" not in joined
    assert joined.startswith(b"before\n") and joined.endswith(b"\nafter\n")


def test_stream_redactor_unterminated_key_to_end_of_stream() -> None:
    """A key never closed keeps every following block redacted."""
    stream = Redactor({}).stream()
    stream.feed(b"-----BEGIN OPENSSH PRIVATE KEY-----\n")
    assert stream.feed(PEM_BODY.encode() + b"\n") == (b"", {})


def test_redactor_env_value_and_its_base64() -> None:
    """A secret environment value is redacted raw and in its base64 forms."""
    env = {"DEPLOY_TOKEN": "s3cr3t-value-42"}
    encoded = base64.b64encode(b"s3cr3t-value-42").decode()
    out, counts = redact(f"raw s3cr3t-value-42 b64 {encoded}", env)
    assert "s3cr3t-value-42" not in out and encoded.rstrip("=") not in out
    assert counts == {"env:DEPLOY_TOKEN": 2}


TOKEN = "tk-4f9Qz7LmW2xR8vB3nK6pY1sD"  # 27 bytes


@pytest.mark.parametrize(("shown", "where"), [
    (TOKEN[:-8], "its start (without the last 8 characters)"),
    (TOKEN[8:], "its end (without the first 8 characters)"),
    (TOKEN[:MIN_SECRET_FRAGMENT], "its shortest start that counts"),
    (TOKEN[:14] + "\n" + TOKEN[14:], "the whole value wrapped onto two lines"),
    (TOKEN[:5] + "\r\n" + TOKEN[5:], "the whole value broken by CR LF near its start"),
])
def test_redactor_env_value_fragment_is_redacted(shown: str, where: str) -> None:
    """A start or end of a secret value, 12 bytes or more, is redacted like the whole value."""
    out, counts = redact(f"log: {shown} done", {"DEPLOY_TOKEN": TOKEN})
    assert out == "log: [REDACTED:env:DEPLOY_TOKEN] done", where
    assert counts == {"env:DEPLOY_TOKEN": 1}


def test_redactor_env_value_fragment_shorter_than_the_minimum_stays() -> None:
    """A start of 11 bytes is below the minimum and is left as printed."""
    shown = TOKEN[:MIN_SECRET_FRAGMENT - 1]
    assert redact(f"log: {shown}", {"DEPLOY_TOKEN": TOKEN}) == (f"log: {shown}", {})


def test_redactor_path_valued_secret_is_matched_whole_only() -> None:
    """A secret-named variable naming a file redacts that path, not its siblings' shared start."""
    env = {"GOOGLE_APPLICATION_CREDENTIALS": "/srv/ci/work/_temp/key.json"}
    out, _ = redact("read /srv/ci/work/_temp/key.json and /srv/ci/work/repo/a.py", env)
    assert out == ("read [REDACTED:env:GOOGLE_APPLICATION_CREDENTIALS] and "
                   "/srv/ci/work/repo/a.py")


def test_redactor_env_value_start_in_a_stream_is_redacted() -> None:
    """Fed line by line, the start of a value on one line and its end on the next are both redacted."""
    stream = Redactor({"DEPLOY_TOKEN": TOKEN}).stream()
    first, _ = stream.feed(f"a {TOKEN[:14]}\n".encode())
    second, _ = stream.feed(f"{TOKEN[14:]} b\n".encode())
    assert first + second == b"a [REDACTED:env:DEPLOY_TOKEN]\n[REDACTED:env:DEPLOY_TOKEN] b\n"


def test_redactor_env_value_base64_inside_basic_credentials() -> None:
    """The value is found inside the base64 of user:value at any alignment."""
    env = {"DB_PASSWORD": "correct-horse-battery"}
    for user in ("a", "ab", "abc"):
        blob = base64.b64encode(f"{user}:correct-horse-battery".encode()).decode()
        out, counts = redact(blob, env)
        assert counts == {"env:DB_PASSWORD": 1}, user
        assert base64.b64encode(b"correct-horse-battery")[:8].decode() not in out


def test_declaration_description_token_is_redacted() -> None:
    """A token written into an evidence command's description is stored redacted."""
    decl = EvidenceCommand(name="deploy", argv=("true",),
                           description="deploys with ghp_" + "Z" * 36)
    stored = declaration_data(decl, Redactor({}))
    assert stored["description"] == "deploys with [REDACTED:github_token]"


@pytest.mark.parametrize("text", ["token=abc123", "password=hunter2", "sk-abcd1234wxyz",
                                  "ghp_abcd1234wxyz"])
def test_scan_flags_the_recon_tool_patterns(text: str) -> None:
    """Every span the recon tool's own redaction rewrites is a secret here too."""
    assert scan(f"see {text} here")


def test_scan_reports_rule_names_never_values() -> None:
    """What scanning returns is rule names only."""
    found = scan(f"{STRIPE} and {JWT}")
    assert found == ("jwt", "stripe_key")
    assert all(STRIPE not in name and JWT not in name for name in found)


def test_redactor_leaves_markers_alone() -> None:
    """Redacting already redacted text changes nothing."""
    once, _ = redact("password=hunter2 token: abc123")
    assert redact(once) == (once, {})


def test_redactor_leaves_plain_text_alone() -> None:
    """Ordinary output, hashes and paths are not secrets."""
    text = ("commit 3f2a9c0e1b7d4a6f8e2c5b9a1d3e7f0c2b4a6d8e\nPASSED tests/test_key.py::test_token_count"
            "\n/usr/lib/python3/site-packages\n")
    assert redact(text) == (text, {})


def test_rules_have_distinct_patterns() -> None:
    """No rule is listed twice."""
    patterns = [rule.pattern for rule in RULES]
    assert len(patterns) == len(set(patterns))


# Lines that detect-secrets flags with one of the plugins assay follows; the
# high-entropy, IP address and vendor plugins assay leaves out are not used.
ORACLE_LINES = [
    'password = "hunter2hunter"', f'aws_secret_access_key = "{AWS_SECRET}"',
    "DATABASE_URL=postgres://user:pass@db.example.com/app", JWT, STRIPE, "AKIAIOSFODNN7EXAMPLE",
    "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", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOp",
    "-----BEGIN RSA PRIVATE KEY-----", "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",
    "AccountKey=lJzRc1YdHaAA2KCNJJ1tkYwF/+mKK6Ygw0NGe170Xu592euJv2wYUtBlV8z+qnlcNQSnIYVTkLWntUO1F8j8rQ==",
    "sq0csp-0p9h7g6f4s3s3s3-4a3ardgwa6ADRDJDDKUFYDYDYDY",
    "pypi-AgEIcHlwaS5vcmcCJDA4ZjVkMTI0LTFhMzEtNDY1Zi1hZjQ4LTY5N2Y1NzQ1YjJiYgACJXsicGVybWlzc2lvbnMi",
    "glpat-abcdefghij0123456789", "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXX",
    "0123456789abcdef0123456789abcdef-us12", "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw_",
    'api_key: "abcd1234efgh"', "secret_token = 'x9f8e7d6c5b4'",
]
_LEFT_OUT = ("High Entropy", "Public IP", "Twilio", "Discord", "IBM", "SoftLayer", "Cloudant",
             "Artifactory")


def test_scan_finds_what_detect_secrets_finds() -> None:
    """Every line detect-secrets flags with a followed plugin is flagged by assay too."""
    from detect_secrets import settings
    from detect_secrets.core import scan as core_scan

    checked = 0
    with settings.default_settings():
        for line in ORACLE_LINES:
            kinds = {s.type for s in core_scan.scan_line(line)
                     if not any(word in s.type for word in _LEFT_OUT)}
            if kinds:
                checked += 1
                assert scan(line), (line, kinds)
    assert checked >= len(ORACLE_LINES) - 2
