"""The fixture library: every valid packet validates, every invalid one names its rule."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from packet_fixtures import CASES, INVALID, VALID

from assay.packet.validate import validate

# Every rejection rule the packet issue lists, mapped to the case that shows it.
ISSUE_RULES = {
    "fingerprint drift": "fingerprint-drift",
    "unknown execution field": "unknown-execution-field",
    "artifact from an unapproved lane": "unapproved-lane",
    "write outside the lane root": "write-outside-lane-root",
    "missing lane outcome": "missing-lane-outcome",
    "missing pass outcome": "missing-pass-outcome",
    "duplicate reconciliation": "duplicate-reconciliation",
    "symlink root alias": "symlink-root-alias",
    "path escape with ..": "path-escape",
    "digest mismatch after editing one byte": "digest-mismatch-one-byte",
    "evidence link to an unknown id": "unknown-evidence-link",
    "duplicate link": "duplicate-evidence-link",
    "illegal transition": "illegal-transition",
    "verified claim in a quick packet": "verified-in-quick",
    "secret in an excerpt": "secret-in-excerpt",
    "downgraded gap materiality": "downgraded-gap-materiality",
}


def test_packet_fixtures_library_has_thirty_packets() -> None:
    """The library holds at least 30 packets, valid quick, standard and thorough among them."""
    assert len(CASES) >= 30
    assert {"valid-quick", "valid-standard", "valid-thorough"} <= set(VALID)


def test_packet_fixtures_cover_every_issue_rule() -> None:
    """Each rejection rule of the issue has an invalid case in the library."""
    for rule, name in ISSUE_RULES.items():
        assert CASES[name].expect is not None, rule


def test_packet_fixtures_one_case_per_code() -> None:
    """Every UPPER_SNAKE code assay's own layout emits is expected by an invalid case."""
    package = Path(__file__).parents[2] / "src/assay/packet"
    source = "".join(path.read_text() for path in sorted([*package.glob("*.py"),
                                                          *package.glob("assay/*.py")]))

    emitted = set(re.findall(r'(?:add\(|PathProblem\(|code = )\s*"([A-Z][A-Z0-9_]+)"', source))
    assert len(emitted) > 40
    expected = {CASES[n].expect[0] for n in INVALID if CASES[n].expect}
    assert emitted - expected == set()


@pytest.mark.parametrize("name", VALID)
def test_packet_fixtures_valid_packet_validates(name: str,
                                                build_case: Callable[[str], Path]) -> None:
    """A valid fixture compiles with no issue and the expected publication."""
    outcome = validate(build_case(name))
    assert outcome.issues == ()
    assert outcome.run is not None
    assert outcome.run.publication == CASES[name].publication


@pytest.mark.parametrize("name", INVALID)
def test_packet_fixtures_invalid_packet_reports_its_code(
        name: str, build_case: Callable[[str], Path]) -> None:
    """An invalid fixture yields no run and reports its exact code, file and pointer."""
    outcome = validate(build_case(name))
    assert outcome.run is None
    found = [(i.code, i.path, i.pointer) for i in outcome.issues]
    assert CASES[name].expect in found, found
