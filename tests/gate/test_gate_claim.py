"""Success claims: a fixed phrase list, negations and questions left out, same text same answer."""

from __future__ import annotations

import pytest

from assay.gate.claim import MAX_MESSAGE_CHARS, success_claims


@pytest.mark.parametrize("message, claims", [
    ("I fixed the export and all tests pass.", ["fixed", "tests pass"]),
    ("Done.", ["done"]),
    ("I'm done! Everything works now.", ["done", "works"]),
    ("The work is complete and verified.", ["complete", "verified"]),
    ("No regressions: all tests pass", ["tests pass"]),
    ("The build is green and it is ready for review.", ["tests pass", "ready for review"]),
    ("I've implemented the header row.", ["implemented"]),
    ("The tests passed locally.", ["tests pass"]),
])
def test_success_claims_found(message: str, claims: list[str]) -> None:
    """Each message is read as claiming exactly these successes, in order."""
    assert [c["claim"] for c in success_claims(message)] == claims


@pytest.mark.parametrize("message", [
    "Not done yet.",
    "Is it fixed?",
    "Tests are still failing, nothing is fixed.",
    "I have not verified this.",
    "I haven't fixed it",
    "I could not run the tests.",
    "Here is the plan for the change.",
    "Which separator do you want?",
    "",
    None,
])
def test_success_claims_none(message: str | None) -> None:
    """Negated, asked or absent: no success claim."""
    assert success_claims(message) == []


def test_success_claims_phrase_is_quoted_from_the_message() -> None:
    """The phrase recorded is the message's own words (overlapping patterns named once)."""
    assert success_claims("OK: all tests pass now") == [{"claim": "tests pass",
                                                         "phrase": "all tests pass"}]


def test_success_claims_read_the_end_of_a_long_message() -> None:
    """Only the last MAX_MESSAGE_CHARS characters are read: a summary at the end counts."""
    assert success_claims("Done. " + "x" * MAX_MESSAGE_CHARS) == []
    assert [c["claim"] for c in success_claims("x" * MAX_MESSAGE_CHARS + ". Done.")] == ["done"]
