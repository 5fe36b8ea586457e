"""Secret detection and redaction: one rule set for command output and packets.

Every text assay persists that may carry a credential goes through here:
the output, argv and description of an evidence command
(:mod:`assay.evidence`), and every string of a research packet
(:mod:`assay.packet`), where a raw secret is ``UNREDACTED_SECRET``.

The rules (:data:`RULES`) follow the plugin set of the ``detect-secrets``
scanner (private keys, AWS keys, URL and Basic credentials, JWTs, GitHub,
GitLab, Slack, Stripe, Google, SendGrid, npm, PyPI, Square, Azure, Mailchimp
and Telegram token shapes, and secret-named assignments), plus the recon
tool's own two patterns, so a packet that tool would flag is flagged here
too. Left out: Twilio and Discord shapes (identifiers, or no literal to
anchor a fast scan), high-entropy strings and public IP addresses (too many
false positives in command output). A test holds the set to
``detect-secrets`` on a corpus.
A :class:`Redactor` adds the values of the process environment's
secret-named variables, each also in its base64 forms, and any fragment of
one of them at least :data:`MIN_SECRET_FRAGMENT` bytes long that is its
start or its end (a value printed without its last characters, or cut at
the front): within one text such a run is followed across a line break, so
a value wrapped onto two lines is redacted whole. A value that names a file
(``/``, ``~/``, ``./``, ``../`` or a drive letter first) is matched whole
only: every path in its directory shares its start.

What a caller learns is which rules fired and how often, never a value:
a redacted span becomes ``[REDACTED:<rule>]`` (a keyword, a ``Bearer`` or
``Basic`` scheme or a URL user name before it is kept), and :func:`scan`
returns rule names only. A private key's body is redacted up to its END
line, or to the end of the text when the key is cut off. Imports nothing of
assay.
"""

from __future__ import annotations

import base64
import os
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "ENV_SECRET_NAME",
    "MIN_ENV_SECRET_LEN",
    "MIN_SECRET_FRAGMENT",
    "RULES",
    "Redactor",
    "Rule",
    "StreamRedactor",
    "scan",
]

# Variables whose name contains one of these hold secrets; values shorter than
# MIN_ENV_SECRET_LEN would redact ordinary words and numbers everywhere.
ENV_SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|KEY|CREDENTIAL", re.IGNORECASE)
MIN_ENV_SECRET_LEN = 6
# The shortest start or end of a secret value redacted on its own. Twelve
# bytes of a random token are about 72 bits, never matched by chance; they
# are more than every fixed vendor prefix (github_pat_ is 11), so a fragment
# always carries secret characters; and a 20-byte secret printed without its
# last 8 still shows 12. Shorter runs say less than they leave unknown of
# most secrets and would start to match ordinary words.
MIN_SECRET_FRAGMENT = 12
# Values that name a file: their start is every sibling path's start.
_PATH_LIKE = re.compile(rb"(?:/|~/|\./|\.\./|[A-Za-z]:[\\/])")
# The shortest base64 core searched for (a 6-byte value's cores are 6 to 8
# characters): it only ever stands for a secret-named variable's value.
_MIN_B64_CORE = 6


@dataclass(frozen=True, slots=True)
class Rule:
    """One secret shape: a name, an ASCII pattern, and how to apply it.

    ``value`` says the group ``v`` holds the secret (what precedes it is
    kept); otherwise the whole match, widened by ``before`` bytes to its
    left, is the secret. ``fold`` rules are written in lower case and
    matched case-insensitively. ``word`` rules must start at a word
    boundary. A rule with ``starts`` is only tried where one of those
    literals begins; the others scan with their pattern, which begins with
    a literal where it can so the scan skips quickly to candidates.
    """

    name: str
    pattern: str
    value: bool = False
    fold: bool = False
    word: bool = False
    before: int = 0
    starts: tuple[str, ...] = ()


_SECRET_WORD = (r"(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|access[_-]?key"
                r"|private[_-]?key|client[_-]?secret|auth|credentials?)")
_SECRET_STARTS = ("pass", "pwd", "secret", "token", "api", "access", "private", "client", "auth",
                  "credential")
_PEM_LABEL = r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
_PEM_END = r"-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
_END = r"(?![A-Za-z0-9_])"

# Ordered: where two rules match at the same place the earlier one wins, so
# specific token shapes come before the generic rules that would also match.
RULES: tuple[Rule, ...] = (
    Rule("private_key", _PEM_LABEL + r"[\s\S]*?(?:" + _PEM_END + r"|\Z)"),
    Rule("private_key", r"PuTTY-User-Key-File-[0-9]+:[^\r\n]*"),
    Rule("private_key", r"Private-(?:Lines|MAC):[^\r\n]*(?:\r?\n[A-Za-z0-9+/=]{16,})*"),
    Rule("aws_access_key_id", r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}" + _END,
         word=True),
    Rule("aws_secret_access_key",
         r"aws[a-z0-9_.-]{0,30}?(?:secret|key|token|pass)[a-z0-9_.-]{0,20}[\"']?\s*(?:=|:|=>)"
         r"\s*[\"']?(?P<v>[a-z0-9/+]{40})(?![a-z0-9/+])", value=True, fold=True, starts=("aws",)),
    Rule("github_token", r"gh[pousr]_[A-Za-z0-9_]{36,255}" + _END, word=True),
    Rule("github_token", r"github_pat_[A-Za-z0-9_]{22,255}" + _END, word=True),
    Rule("gitlab_token", r"gl(?:pat|dt|ft|soat|rt|ptt|imt|cbt|oas)-[A-Za-z0-9_-]{20,80}",
         word=True),
    Rule("slack_token", r"xox[abposr]-[A-Za-z0-9-]{10,}", word=True),
    Rule("slack_webhook", r"https://hooks\.slack\.com/services/T[A-Za-z0-9_]+/B[A-Za-z0-9_]+"
                          r"/[A-Za-z0-9_]+"),
    Rule("stripe_key", r"(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}", word=True,
         starts=("sk_", "rk_")),
    Rule("google_api_key", r"AIza[0-9A-Za-z_-]{35}", word=True),
    Rule("sendgrid_key", r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}", word=True),
    Rule("npm_token", r"npm_[A-Za-z0-9]{36}" + _END, word=True),
    Rule("npm_token", r"//[^\s]{1,300}?/:_authToken=\s*(?P<v>[^\s\"']+)", value=True),
    Rule("pypi_token", r"pypi-AgE[A-Za-z0-9_-]{50,}", word=True),
    Rule("square_oauth", r"sq0csp-[0-9A-Za-z_-]{43}", word=True),
    Rule("azure_storage_key", r"AccountKey=(?P<v>[A-Za-z0-9+/=]{88})", value=True),
    Rule("mailchimp_key", r"-us(?<=[0-9a-f]{32}-us)(?<![0-9A-Za-z_][0-9a-f]{32}-us)[0-9]{1,2}" + _END, before=32),
    Rule("telegram_token", r":(?<=[0-9]{8}:)(?P<v>[0-9A-Za-z_-]{35})" + _END, value=True),
    Rule("api_key", r"sk-[A-Za-z0-9_-]{20,}", word=True),
    # The recon tool's prefix rule: shorter sk-/ghp_/xox* tokens.
    Rule("token_prefix", r"(?:sk|ghp|xox[baprs])[-_][A-Za-z0-9_-]{8,}" + _END, word=True,
         starts=("sk-", "sk_", "ghp-", "ghp_", "xox")),
    Rule("jwt", r"eyJ[A-Za-z0-9_-]{4,}={0,2}\.[A-Za-z0-9_-]{4,}={0,2}"
                r"(?:\.[A-Za-z0-9_+/-]*={0,2})?", word=True),
    Rule("url_password", r"://[^\s/:@\"']+:(?P<v>[^\s/@\"']+)@", value=True),
    Rule("basic_auth", r"authorization[\"']?\s*[:=]\s*[\"']?basic[ \t]+"
                       r"(?P<v>[a-z0-9+/._~-]{4,}={0,2})", value=True, fold=True,
         starts=("authorization",)),
    Rule("bearer", r"bearer[ \t]+(?P<v>[a-z0-9._~+/=-]{8,})", value=True, fold=True, word=True),
    # Bounded name tails keep the scan linear on long unbroken runs.
    Rule("secret_assignment",
         _SECRET_WORD + r"[a-z0-9_.-]{0,30}[\"']?[ \t]*(?:=|:|=>)[ \t]*[\"']?"
         r"(?P<v>(?!\[redacted)[^\s\"',;]+)", value=True, fold=True, starts=_SECRET_STARTS),
    # The recon tool's own assignment rule, in effect: any value at all.
    Rule("secret_assignment", r"(?:token|password|secret|api[_-]?key)[ \t\n\r\f\v]*[:=]"
                              r"[ \t\n\r\f\v]*(?P<v>(?!\[redacted)[^\s,;]+)",
         value=True, fold=True, word=True, starts=_SECRET_STARTS),
)

_MARK = "[REDACTED:{}]"


def _b64_cores(secret: bytes) -> list[bytes]:
    """The base64 characters that only ``secret``'s bytes decide, at each alignment.

    Embedded in a longer encoded stream the secret starts at byte offset 0, 1
    or 2 of a 3-byte group; characters that mix in neighbouring bytes are
    left out, so each core matches wherever the secret was encoded.
    """
    cores = []
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + secret).rstrip(b"=")
        start = -(-8 * shift // 6)
        end = 8 * (shift + len(secret)) // 6
        core = encoded[start:end]
        if len(core) >= _MIN_B64_CORE:
            cores.append(core)
            urlsafe = core.replace(b"+", b"-").replace(b"/", b"_")
            if urlsafe != core:
                cores.append(urlsafe)
    return cores


def _env_secrets(environ: Mapping[str, str]) -> tuple[dict[bytes, str], frozenset[bytes]]:
    """Each secret-named variable's value (and its base64 forms) -> ``env:NAME``.

    Also the literals whose fragments count (see :data:`MIN_SECRET_FRAGMENT`):
    all but the forms of a value that names a file.
    """
    found: dict[bytes, str] = {}
    fragments: set[bytes] = set()
    for name in sorted(environ):
        value = environ[name]
        if ENV_SECRET_NAME.search(name) and len(value) >= MIN_ENV_SECRET_LEN:
            raw = os.fsencode(value)
            label = "env:" + name
            forms = [raw, *_b64_cores(raw)]
            for form in forms:
                found.setdefault(form, label)
            if not _PATH_LIKE.match(raw):
                fragments.update(forms)
    return found, frozenset(fragments)


def _line_break(data: bytes, at: int) -> int:
    """The length of the line break starting at ``at`` (LF or CR LF), else 0."""
    if data[at:at + 1] == b"\n":
        return 1
    return 2 if data[at:at + 2] == b"\r\n" else 0


def _reach_right(data: bytes, at: int, secret: bytes, done: int) -> int:
    """Where the run of ``secret`` whose first ``done`` bytes end at ``at`` ends in ``data``.

    One line break may stand between two bytes of the secret (it was wrapped).
    """
    end = at
    while done < len(secret) and at < len(data):
        if data[at] == secret[done]:
            at, done, end = at + 1, done + 1, at + 1
            continue
        width = _line_break(data, at)
        if width and at == end and data[at + width:at + width + 1] == secret[done:done + 1]:
            at += width
            continue
        break
    return end


def _reach_left(data: bytes, at: int, secret: bytes, left: int) -> int:
    """Where the run of ``secret`` whose bytes from ``left`` start at ``at`` starts in ``data``."""
    start = at
    while left > 0 and at > 0:
        if data[at - 1] == secret[left - 1]:
            at, left, start = at - 1, left - 1, at - 1
            continue
        width = 2 if data[max(0, at - 2):at] == b"\r\n" else 1 if data[at - 1:at] == b"\n" else 0
        if (width and at == start and at > width
                and data[at - width - 1:at - width] == secret[left - 1:left]):
            at -= width
            continue
        break
    return start


def _literal_spans(data: bytes, secret: bytes, fragments: bool) -> list[tuple[int, int]]:
    """Every run of ``data`` that is ``secret``, or (with ``fragments``) its start or end.

    A start or end counts from :data:`MIN_SECRET_FRAGMENT` bytes; each run
    is followed as far as the secret goes (across one line break between
    two of its bytes), and overlapping runs are joined. Cost: one C-speed
    search per form, then a byte walk per run found.
    """
    if not fragments or len(secret) <= MIN_SECRET_FRAGMENT:
        runs = []
        at = data.find(secret)
        while at >= 0:
            runs.append((at, at + len(secret)))
            at = data.find(secret, at + len(secret))
        return runs
    runs = []
    head, tail = secret[:MIN_SECRET_FRAGMENT], secret[-MIN_SECRET_FRAGMENT:]
    at = data.find(head)
    while at >= 0:
        end = _reach_right(data, at + MIN_SECRET_FRAGMENT, secret, MIN_SECRET_FRAGMENT)
        runs.append((at, end))
        at = data.find(head, end)
    at = data.find(tail)
    while at >= 0:
        runs.append((_reach_left(data, at, secret, len(secret) - MIN_SECRET_FRAGMENT),
                     at + MIN_SECRET_FRAGMENT))
        at = data.find(tail, at + MIN_SECRET_FRAGMENT)
    joined: list[tuple[int, int]] = []
    for start, end in sorted(runs):
        if joined and start <= joined[-1][1]:
            joined[-1] = (joined[-1][0], max(end, joined[-1][1]))
        else:
            joined.append((start, end))
    return joined


_WORD = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_COMPILED = tuple(re.compile(os.fsencode(rule.pattern)) for rule in RULES)
_STARTS = tuple(tuple(start.encode() for start in rule.starts) for rule in RULES)


def _candidates(text: bytes, starts: tuple[bytes, ...]) -> list[int]:
    """Every offset where one of ``starts`` begins, ascending (a C-speed scan each)."""
    found: list[int] = []
    for literal in starts:
        at = text.find(literal)
        while at >= 0:
            found.append(at)
            at = text.find(literal, at + 1)
    return sorted(set(found))


def _spans(data: bytes, literals: dict[bytes, str], fragments: frozenset[bytes] = frozenset(),
           ) -> list[tuple[int, int, int, str]]:
    """Every secret span in ``data`` as ``(start, end, keep, label)``, left to right.

    ``keep`` is how many leading bytes of the span stay (a keyword, a scheme).
    Each rule scans on its own (a literal-led pattern skips fast); overlapping
    finds are resolved by position, then by rule order, literals first. A
    literal's span that starts inside an earlier span but runs past it is
    redacted to its end, so no byte of a secret value stays.
    """
    folded: bytes | None = None
    found: list[tuple[int, int, int, int, str]] = []
    for order, (secret, label) in enumerate(sorted(literals.items(),
                                                   key=lambda kv: (-len(kv[0]), kv[0]))):
        for start, end in _literal_spans(data, secret, secret in fragments):
            found.append((start, -len(RULES) - len(literals) + order, end, 0, label))
    for order, (rule, pattern, starts) in enumerate(zip(RULES, _COMPILED, _STARTS, strict=True)):
        text = data
        if rule.fold:
            folded = data.lower() if folded is None else folded
            text = folded
        matches = (pattern.finditer(text) if not starts else
                   (m for m in (pattern.match(text, at) for at in _candidates(text, starts))
                    if m is not None))
        for match in matches:
            start, end = match.span()
            if rule.word and start > 0 and text[start - 1] in _WORD:
                continue
            start = max(0, start - rule.before)
            keep = 0
            if rule.value:
                end = match.end("v")
                keep = match.start("v") - start
            found.append((start, order, end, keep, rule.name))
    found.sort()
    spans: list[tuple[int, int, int, str]] = []
    reach = 0
    for start, order, end, keep, label in found:
        if start >= reach and end > start:
            spans.append((start, end, keep, label))
            reach = end
        elif order < 0 and end > reach:
            spans.append((reach, end, 0, label))
            reach = end
    return spans


class Redactor:
    """Replaces secrets in byte strings and text with ``[REDACTED:<rule>]`` markers.

    Secrets are every :data:`RULES` shape plus the values (at least
    :data:`MIN_ENV_SECRET_LEN` long) of ``environ``'s variables whose name
    matches :data:`ENV_SECRET_NAME`, the base64 forms of those values, and
    their starts and ends of at least :data:`MIN_SECRET_FRAGMENT` bytes
    (see the module docstring); such a value is redacted as ``env:NAME``.
    Rule names, never values, are reported. Cost: one regular-expression
    pass over the data.
    """

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self._literals, self._fragments = _env_secrets(
            os.environ if environ is None else environ)

    def redact(self, data: bytes) -> tuple[bytes, Counter[str]]:
        """Return ``(redacted data, count per rule)`` for one whole text."""
        counts: Counter[str] = Counter()
        out: list[bytes] = []
        done = 0
        for start, end, keep, label in _spans(data, self._literals, self._fragments):
            counts[label] += 1
            out += [data[done:start + keep], _MARK.format(label).encode()]
            done = end
        if not out:
            return data, counts
        out.append(data[done:])
        return b"".join(out), counts

    def redact_text(self, text: str) -> tuple[str, Counter[str]]:
        """Redact a string (argv words, descriptions, excerpts) the same way."""
        data, counts = self.redact(os.fsencode(text))
        return os.fsdecode(data), counts

    def stream(self) -> StreamRedactor:
        """A redactor for one stream fed block by block (see :class:`StreamRedactor`)."""
        return StreamRedactor(self)


_PEM_BEGIN_B = re.compile(os.fsencode(_PEM_LABEL))
_PEM_END_B = re.compile(os.fsencode(_PEM_END))


class StreamRedactor:
    """Redacts one output stream fed in blocks (whole lines, in order).

    A private key can span many blocks: once a block opens one without
    closing it, every following byte is redacted up to the END line, and to
    the end of the stream when the key was cut off.
    """

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._in_key = False

    def feed(self, block: bytes) -> tuple[bytes, Counter[str]]:
        counts: Counter[str] = Counter()
        head = b""
        if self._in_key:
            end = _PEM_END_B.search(block)
            if end is None:
                return b"", counts
            self._in_key = False
            block = block[end.end():]
            head = _MARK.format("private_key").encode()
            counts["private_key"] += 1
        out, found = self._redactor.redact(block)
        counts.update(found)
        # An unterminated key in this block runs on into the next ones.
        begins = list(_PEM_BEGIN_B.finditer(block))
        if begins and _PEM_END_B.search(block, begins[-1].end()) is None:
            self._in_key = True
        return head + out, counts


def scan(text: str) -> tuple[str, ...]:
    """The names of the :data:`RULES` that fire on ``text`` (sorted, distinct); no values."""
    return tuple(sorted({label for *_, label in _spans(text.encode("utf-8", "surrogatepass"),
                                                        {})}))
