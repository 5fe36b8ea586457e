"""JUnit XML results: real-shaped files of four producers, and hostile XML refused with a code."""

from __future__ import annotations

import pytest

from assay.evidence import junit
from assay.evidence.junit import ResultsRefused, TestOutcome, parse_junit
from assay.evidence.results import map_requirements, rollups
from junit_testing import FIXTURES, junit_xml


def outcomes(name: str) -> dict[str, str]:
    return {t.id: t.outcome for t in parse_junit((FIXTURES / name).read_bytes())}


def refused(data: bytes) -> str:
    with pytest.raises(ResultsRefused) as info:
        parse_junit(data)
    return info.value.code


def test_junit_pytest_file_outcomes_and_requirement_properties() -> None:
    """pytest's file: ids are CLASSNAME::NAME, error/failure/skip/xfail outcomes, marks as requirements."""
    tests = parse_junit((FIXTURES / "pytest.xml").read_bytes())
    by_id = {t.id: t for t in tests}
    assert [t.outcome for t in tests] == ["passed", "failed", "passed", "skipped", "skipped",
                                          "error"]
    assert by_id["tests.test_login::test_lock_after_three_failures"].requirements == ("R1a", "R1b")
    assert by_id["tests.test_login::test_unlock_by_admin"].message == "AssertionError: still locked"
    assert "tests.test_login.TestAudit::test_audit_line[de]" in by_id
    assert by_id["tests.test_export::test_csv_header"].requirements == ("R2",)


def test_junit_jest_junit_file_reads() -> None:
    """jest-junit's file (failure text without a message attribute, an empty skipped element) reads."""
    assert outcomes("jest_junit.xml") == {
        "cart totals adds tax::cart totals adds tax": "passed",
        "cart totals rounds to cents::cart totals rounds to cents": "failed",
        "cart totals keeps the currency::cart totals keeps the currency": "skipped",
        "cart › discounts applies a coupon::cart › discounts applies a coupon": "passed",
    }


def test_junit_go_junit_report_file_reads() -> None:
    """go-junit-report's file (suite properties, subtests, CDATA failure and skip) reads."""
    assert outcomes("go_junit_report.xml") == {
        "example.com/shop/cart::TestTotal": "passed",
        "example.com/shop/cart::TestTotal/with_tax": "passed",
        "example.com/shop/cart::TestRound": "failed",
        "example.com/shop/cart::TestCurrency": "skipped",
    }


def test_junit_nextest_file_reads_retries_and_flaky_passes() -> None:
    """cargo-nextest's file: a failure with reruns failed, a flaky test that passed on retry passed."""
    assert outcomes("nextest.xml") == {
        "shop::cart::totals::adds_tax": "passed",
        "shop::cart::totals::rounds_to_cents": "failed",
        "shop::cart::totals::keeps_currency": "passed",
        "shop::bin/shop::cli::prints_help": "passed",
    }


def test_junit_single_testsuite_root_and_nested_suites_read() -> None:
    """A <testsuite> root and suites nested in suites are read at every depth."""
    data = (b'<testsuite name="outer"><testcase classname="a" name="one"/>'
            b'<testsuite name="inner"><testcase classname="b" name="two"><skipped/></testcase>'
            b"</testsuite></testsuite>")
    assert [(t.id, t.outcome) for t in parse_junit(data)] == [("a::one", "passed"),
                                                              ("b::two", "skipped")]


def test_junit_utf16_document_reads() -> None:
    """A document in UTF-16 with its declaration reads like its UTF-8 form."""
    text = junit_xml(("t", "ünïcode", "passed")).replace('encoding="utf-8"', 'encoding="utf-16"')
    assert [t.id for t in parse_junit(text.encode("utf-16"))] == ["t::ünïcode"]


BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<testsuites><testsuite><testcase classname="x" name="&lol3;"/></testsuite></testsuites>"""

HOSTILE = {
    "billion-laughs": (BILLION_LAUGHS, "results_xml_forbidden"),
    "external-entity": ((b'<?xml version="1.0"?><!DOCTYPE t [<!ENTITY x SYSTEM '
                         b'"file:///etc/passwd">]><testsuites><testsuite><testcase name="&x;"/>'
                         b"</testsuite></testsuites>"), "results_xml_forbidden"),
    "parameter-entity": ((b'<!DOCTYPE t [<!ENTITY % p SYSTEM "http://127.0.0.1:9/x.dtd"> %p;]>'
                          b"<testsuites/>"), "results_xml_forbidden"),
    "bare-doctype": (b"<!DOCTYPE testsuites><testsuites/>", "results_xml_forbidden"),
    "undefined-entity": (b"<testsuites>&nope;</testsuites>", "results_xml_invalid"),
    "unclosed": (b"<testsuites><testsuite>", "results_xml_invalid"),
    "empty": (b"", "results_xml_invalid"),
    "invalid-utf8": (b'<testsuites><testsuite><testcase name="\xff\xfe"/></testsuite></testsuites>',
                     "results_xml_invalid"),
    "unknown-encoding": (b'<?xml version="1.0" encoding="x-nope"?><testsuites/>',
                         "results_xml_invalid"),
    "html": (b"<html><body>tests passed</body></html>", "results_not_junit"),
    "too-deep": (b"<testsuites>" + b"<a>" * 100 + b"</a>" * 100 + b"</testsuites>",
                 "results_xml_limit"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_junit_hostile_document_refused_with_code(name: str) -> None:
    """Entities, DTDs, malformed or foreign XML and deep nesting are refused with a stable code."""
    data, code = HOSTILE[name]
    assert refused(data) == code


def test_junit_element_count_bound_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    """A document with more elements than the bound is refused, not half-read."""
    monkeypatch.setattr(junit, "MAX_ELEMENTS", 50)
    many = junit_xml(*[("t", f"case{i}", "passed") for i in range(60)]).encode()
    assert refused(many) == "results_xml_limit"


def test_junit_message_is_first_line_and_bounded() -> None:
    """A failure message keeps its first non-blank line, at most 200 characters."""
    data = (b'<testsuite><testcase name="t"><failure message="">\n\n' + b"x" * 500
            + b"\nsecond line</failure></testcase></testsuite>")
    assert parse_junit(data)[0].message == "x" * junit.MESSAGE_CHARS


def test_junit_repeated_test_id_keeps_the_worse_outcome() -> None:
    """A test id reported twice (a rerun) is one test with the worse outcome and both mappings."""
    tests = [TestOutcome("t::a", "passed", ("R1",)), TestOutcome("t::a", "failed", ("R2",))]
    assert map_requirements(tests, ()) == [TestOutcome("t::a", "failed", ("R1", "R2"))]


def test_junit_globs_map_tests_to_requirements() -> None:
    """A glob maps every test whose id it matches; a test keeps the ids its properties name."""
    tests = [TestOutcome("go/cart::TestTotal", "passed"),
             TestOutcome("go/cart::TestTotal/with_tax", "passed"),
             TestOutcome("go/cart::TestRound", "passed", ("R9",))]
    mapped = map_requirements(tests, (("go/cart::TestTotal*", ("R1",)),))
    assert [t.requirements for t in mapped] == [("R9",), ("R1",), ("R1",)]


@pytest.mark.parametrize(("outcomes_", "expected"), [
    (("passed", "passed"), "passed"),
    (("passed", "failed"), "failed"),
    (("passed", "error"), "failed"),
    (("passed", "skipped"), "unverified"),
    (("skipped",), "unverified"),
])
def test_junit_rollup_outcome_rule(outcomes_: tuple[str, ...], expected: str) -> None:
    """A requirement passes only when all its tests passed; any failure fails it; else unverified."""
    tests = [TestOutcome(f"t::{i}", o, ("R1",)) for i, o in enumerate(outcomes_)]
    assert rollups(tests, ())[0]["outcome"] == expected


def test_junit_rollup_glob_matching_nothing_is_unverified() -> None:
    """A glob that matches no test leaves its requirement unverified and names the glob."""
    tests = [TestOutcome("t::a", "passed", ("R1",))]
    row = rollups(tests, (("t::gone*", ("R1",)), ("t::also*", ("R2",))))
    assert [(r["requirement_id"], r["outcome"], r["missing_globs"]) for r in row] == [
        ("R1", "unverified", ["t::gone*"]), ("R2", "unverified", ["t::also*"])]
