"""JUnit XML test results: a hardened XML read, then junitparser's model of suites and cases.

:func:`parse_junit` turns the bytes of a JUnit XML file into one
:class:`TestOutcome` per test case. It is pure (no I/O) and never raises
anything but :class:`ResultsRefused`, whose ``code`` the caller records.

Hostile input is expected. The XML is parsed by expat with every
declaration refused before it takes effect: a document type declaration
(and so every internal or external entity, the billion-laughs family and
external fetches) is ``results_xml_forbidden``; malformed XML is
``results_xml_invalid``; more than :data:`MAX_ELEMENTS` elements or nesting
deeper than :data:`MAX_DEPTH` is ``results_xml_limit``. No JUnit producer
writes a DTD, so refusing one refuses nothing real. The parsed tree is then
read with junitparser (imported lazily, here only), as its owner reads
it: a root other than ``testsuites`` or ``testsuite`` is
``results_not_junit``.

What a case becomes:

- ``id`` is ``CLASSNAME::NAME`` (just ``NAME`` when the case has no
  classname); the mapping globs of ``[evidence.commands.NAME.requirements]``
  match it;
- ``outcome`` is ``error``, ``failed``, ``skipped`` or ``passed`` (the first
  that applies): junitparser's ``is_error``, ``is_failure``, ``is_skipped``.
  A flaky case that passed on a retry (nextest's ``flakyFailure``) passed;
- ``requirements`` are the values of the case's ``requirement`` properties
  (what assay's pytest plugin writes for ``@pytest.mark.requirement``);
- ``location`` is where the test's source is: the ``assay_location``
  property assay's pytest plugin writes (``PATH::QUALNAME``, the path
  relative to the directory pytest ran in), else the case's ``file``
  attribute (pytest's xunit1 family and other producers: ``PATH::NAME``),
  else empty;
- ``message`` is the first line of the failure, error or skip message,
  at most :data:`MESSAGE_CHARS` characters.

Suites nested inside suites are read at every depth. Imports nothing of
assay but the base modules.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any
from xml.etree.ElementTree import Element, TreeBuilder
from xml.parsers import expat

__all__ = [
    "LOCATION_PROPERTY",
    "MAX_DEPTH",
    "MAX_ELEMENTS",
    "MESSAGE_CHARS",
    "REQUIREMENT_PROPERTY",
    "ResultsRefused",
    "TestOutcome",
    "parse_junit",
    "reader_version",
]

# Elements a results file may hold (a suite of 100,000 tests with a few
# elements each fits); past this the file is refused, not half-read.
MAX_ELEMENTS = 1_000_000
MAX_DEPTH = 64
MESSAGE_CHARS = 200
# The testcase property assay's pytest plugin writes, one per requirement id.
REQUIREMENT_PROPERTY = "requirement"
# The testcase property assay's pytest plugin writes with the test's source location.
LOCATION_PROPERTY = "assay_location"
_OUTCOME_ORDER = ("error", "failed", "skipped", "passed")


class ResultsRefused(Exception):
    """A results file assay will not use: ``code`` says why, ``message`` in words."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class TestOutcome:
    """One test case as the results file reports it."""

    __test__ = False  # not a pytest test class

    id: str
    outcome: str
    requirements: tuple[str, ...] = ()
    message: str = ""
    location: str = ""

    def merged(self, other: TestOutcome) -> TestOutcome:
        """The same test reported twice: the worse outcome, both requirement sets."""
        worse = min(self, other, key=lambda t: _OUTCOME_ORDER.index(t.outcome))
        return TestOutcome(self.id, worse.outcome,
                           tuple(dict.fromkeys((*self.requirements, *other.requirements))),
                           worse.message, self.location or other.location)


class _Refuse(Exception):
    """Raised inside an expat handler to stop the parse."""


def _tree(data: bytes) -> Element:
    """The XML document as an element tree, with every declaration refused (see the module)."""
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    builder = TreeBuilder()
    state = {"elements": 0, "depth": 0}

    def refuse(what: str) -> Any:
        def handler(*_: Any) -> None:
            raise _Refuse(what)
        return handler

    def start(tag: str, attrs: dict[str, str]) -> None:
        state["elements"] += 1
        state["depth"] += 1
        if state["elements"] > MAX_ELEMENTS:
            raise ResultsRefused("results_xml_limit",
                                 f"the results file has more than {MAX_ELEMENTS:,} elements")
        if state["depth"] > MAX_DEPTH:
            raise ResultsRefused("results_xml_limit",
                                 f"the results file nests elements deeper than {MAX_DEPTH}")
        builder.start(tag, attrs)

    def end(tag: str) -> None:
        state["depth"] -= 1
        builder.end(tag)

    parser.StartDoctypeDeclHandler = refuse("a document type declaration")
    parser.EntityDeclHandler = refuse("an entity declaration")
    parser.UnparsedEntityDeclHandler = refuse("an unparsed entity declaration")
    parser.ExternalEntityRefHandler = refuse("an external entity reference")
    parser.NotationDeclHandler = refuse("a notation declaration")
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = builder.data
    parser.buffer_text = True
    try:
        parser.Parse(data, True)
    except _Refuse as exc:
        raise ResultsRefused("results_xml_forbidden",
                             f"the results file contains {exc}; assay reads no DTD or entity "
                             "declarations") from None
    except expat.ExpatError as exc:
        raise ResultsRefused("results_xml_invalid",
                             f"the results file is not well-formed XML: {exc}") from None
    except (ValueError, LookupError, UnicodeError) as exc:
        raise ResultsRefused("results_xml_invalid",
                             f"the results file cannot be decoded: {exc}") from None
    return builder.close()


def _junitparser() -> Any:
    # Imported here only: the runner loads it once a results file is declared.
    return importlib.import_module("junitparser")


def reader_version() -> str:
    """The version of junitparser reading the files (recorded with every result)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("junitparser")
    except PackageNotFoundError:  # pragma: no cover - a dependency of assay
        return "unknown"


def _first_line(text: str | None) -> str:
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()[:MESSAGE_CHARS]
    return ""


def _case(junit: Any, case: Any, elem: Element) -> TestOutcome:
    classname = (case.classname or "").strip()
    name = (case.name or "").strip()
    test_id = f"{classname}::{name}" if classname else name
    if case.is_error:
        outcome = "error"
    elif case.is_failure:
        outcome = "failed"
    elif case.is_skipped:
        outcome = "skipped"
    else:
        outcome = "passed"
    message = ""
    for result in case.result:
        message = _first_line(result.message) or _first_line(result.text)
        if message:
            break
    requirements: list[str] = []
    location = ""
    properties = elem.find("properties")
    if properties is not None:
        for prop in junit.Properties.fromelem(properties):
            if prop.name == REQUIREMENT_PROPERTY and (prop.value or "").strip():
                requirements.append(prop.value.strip())
            elif prop.name == LOCATION_PROPERTY and (prop.value or "").strip() and not location:
                location = prop.value.strip()
    if not location and (elem.get("file") or "").strip():
        location = f"{elem.get('file', '').strip()}::{name}"
    return TestOutcome(test_id, outcome, tuple(dict.fromkeys(requirements)), message, location)


def parse_junit(data: bytes) -> list[TestOutcome]:
    """Every test case of the JUnit XML ``data``, in document order (see the module docstring)."""
    root = _tree(data)
    junit = _junitparser()
    try:
        junit.JUnitXml.fromroot(root)  # junitparser's own check of the root element
    except junit.JUnitXmlError:
        raise ResultsRefused("results_not_junit",
                             f"the results file's root element is <{root.tag}>, not <testsuites> "
                             "or <testsuite>") from None
    out: list[TestOutcome] = []
    for suite_elem in root.iter("testsuite"):  # the root itself when it is one; nested suites too
        for case_elem in suite_elem.findall("testcase"):
            case = junit.TestCase.fromelem(case_elem)
            out.append(_case(junit, case, case_elem))
    return out
