"""The pytest plugin assay ships: ``@pytest.mark.requirement`` written into JUnit XML.

Installed with assay as the ``pytest11`` entry point ``assay`` (``-p
no:assay`` turns it off). It registers the marker and, for every collected
test, appends one ``requirement`` user property per requirement id its
``requirement`` marks name (closest mark first, each id once), and one
``assay_location`` property saying where the test's source is::

    @pytest.mark.requirement("knowledge:login#R1a", "R1b")
    def test_login_locks_after_three_failures(): ...

An id may name its intent (``INTENT_ID#REQ_ID``, scoped: only that intent's
requirement) or not (``R1b``, unscoped: it belongs to ``[gate]
default_intent``, else to the one intent the run was recorded ``--for``,
else to none; see docs/evidence.md). pytest writes user properties into
``--junitxml`` as ``<properties><property name="requirement" value="R1a"/>...``
under the test case (in every junit family), and assay's results reader maps
the test to those requirements. The location is
``PATH::QUALNAME``: the test file relative to the directory pytest was
started in, and the test function's name (``TestLogin.test_lock`` in a
class, without parameters); assay digests that function's source. The
properties are added at collection, so a skipped test carries them too. A
mark without ids, with keyword arguments, or with an id that is not a
non-blank string (or whose intent part is not ``KIND:NAME``) stops the run
with a usage error.

Imports pytest and :mod:`assay.evidence.junit` (for the property names) only.
"""

from __future__ import annotations

import os

import pytest

from assay.evidence.junit import LOCATION_PROPERTY, REQUIREMENT_PROPERTY

MARK = "requirement"


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker (so ``--strict-markers`` accepts it)."""
    config.addinivalue_line(
        "markers", f"{MARK}(*ids): the requirement ids this test verifies (R1, or "
                   "knowledge:NAME#R1 to name the intent); assay reads them from the JUnit XML "
                   "properties")


def _checked(item: pytest.Item, rid: object) -> str:
    if not isinstance(rid, str) or not rid.strip():
        raise pytest.UsageError(
            f"{item.nodeid}: @pytest.mark.{MARK} ids are non-blank strings, not {rid!r}")
    text = rid.strip()
    intent, sep, requirement = text.rpartition("#")
    if sep and (not requirement or ":" not in intent or intent.startswith(":")):
        raise pytest.UsageError(
            f"{item.nodeid}: @pytest.mark.{MARK} id {text!r} names its intent as "
            "INTENT_ID#REQ_ID, e.g. \"knowledge:login#R1\"")
    return text


def requirement_ids(item: pytest.Item) -> list[str]:
    """The requirement ids ``item``'s marks name, closest mark first, each once."""
    ids: list[str] = []
    for mark in item.iter_markers(name=MARK):
        if not mark.args or mark.kwargs:
            raise pytest.UsageError(
                f"{item.nodeid}: @pytest.mark.{MARK} takes one or more requirement ids as "
                "positional strings, e.g. @pytest.mark.requirement(\"R1a\")")
        ids.extend(_checked(item, rid) for rid in mark.args)
    return list(dict.fromkeys(ids))


def location(item: pytest.Item) -> str | None:
    """``PATH::QUALNAME`` of a test function, the path relative to where pytest was started."""
    path = getattr(item, "path", None)
    function = getattr(item, "originalname", None) or item.name.partition("[")[0]
    if path is None or not function:
        return None
    cls = getattr(item, "cls", None)
    qualname = f"{cls.__qualname__}.{function}" if cls is not None else function
    try:
        relative = os.path.relpath(path, item.config.invocation_params.dir)
    except ValueError:  # another drive: no relative path
        return None
    return f"{relative.replace(os.sep, '/')}::{qualname}"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Record each test's requirement ids and location as user properties (JUnit ``property``)."""
    for item in items:
        ids = requirement_ids(item)
        for rid in ids:
            item.user_properties.append((REQUIREMENT_PROPERTY, rid))
        where = location(item) if ids else None
        if where is not None:
            item.user_properties.append((LOCATION_PROPERTY, where))
