"""The pytest plugin assay ships: ``@pytest.mark.requirement`` written into JUnit XML.

Installed with assay as the ``pytest11`` entry point ``assay`` (``-p
no:assay`` turns it off). It registers the marker and, for every collected
test, appends one ``requirement`` user property per requirement id its
``requirement`` marks name (closest mark first, each id once)::

    @pytest.mark.requirement("R1a", "R1b")
    def test_login_locks_after_three_failures(): ...

pytest writes user properties into ``--junitxml`` as
``<properties><property name="requirement" value="R1a"/>...`` under the
test case (in every junit family), and assay's results reader maps the test
to those requirements. The properties are added at collection, so a skipped
test carries them too. A mark without ids, with keyword arguments, or with
an id that is not a non-blank string stops the run with a usage error.

Imports pytest and :mod:`assay.evidence.junit` (for the property name) only.
"""

from __future__ import annotations

import pytest

from assay.evidence.junit import REQUIREMENT_PROPERTY

MARK = "requirement"


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker (so ``--strict-markers`` accepts it)."""
    config.addinivalue_line(
        "markers", f"{MARK}(*ids): the requirement ids this test verifies; assay reads them "
                   "from the JUnit XML properties")


def requirement_ids(item: pytest.Item) -> list[str]:
    """The requirement ids ``item``'s marks name, closest mark first, each once."""
    ids: list[str] = []
    for mark in item.iter_markers(name=MARK):
        if not mark.args or mark.kwargs:
            raise pytest.UsageError(
                f"{item.nodeid}: @pytest.mark.{MARK} takes one or more requirement ids as "
                "positional strings, e.g. @pytest.mark.requirement(\"R1a\")")
        for rid in mark.args:
            if not isinstance(rid, str) or not rid.strip():
                raise pytest.UsageError(
                    f"{item.nodeid}: @pytest.mark.{MARK} ids are non-blank strings, "
                    f"not {rid!r}")
            ids.append(rid.strip())
    return list(dict.fromkeys(ids))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Record each test's requirement ids as user properties (JUnit XML ``property`` elements)."""
    for item in items:
        for rid in requirement_ids(item):
            item.user_properties.append((REQUIREMENT_PROPERTY, rid))
