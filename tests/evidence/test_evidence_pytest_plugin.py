"""The pytest plugin shipped with assay: requirement marks written into real pytest JUnit XML."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from assay.evidence.junit import parse_junit

SUITE = '''
import pytest

pytestmark = pytest.mark.requirement("R0")


@pytest.mark.requirement("R1a", "R1b")
def test_two_requirements():
    assert True


@pytest.mark.requirement("R2")
@pytest.mark.skip(reason="not yet")
def test_skipped_keeps_its_mark():
    pass


@pytest.mark.requirement("R3")
class TestGroup:
    @pytest.mark.requirement("R1a")
    def test_inherits_and_dedups(self):
        assert False
'''


def pytest_run(tmp_path: Path, source: str, *extra: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_suite.py").write_text(source, encoding="utf-8")
    return subprocess.run([sys.executable, "-B", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "--strict-markers", "--junitxml=out.xml", *extra, "test_suite.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)


def test_pytest_plugin_writes_marks_as_requirement_properties(tmp_path: Path) -> None:
    """Every mark's ids (function, class, module; closest first, once each) become properties."""
    done = pytest_run(tmp_path, SUITE)
    assert done.returncode == 1, done.stdout + done.stderr  # one test fails on purpose
    tests = {t.id: t for t in parse_junit((tmp_path / "out.xml").read_bytes())}
    assert tests["test_suite::test_two_requirements"].requirements == ("R1a", "R1b", "R0")
    assert tests["test_suite::test_skipped_keeps_its_mark"].requirements == ("R2", "R0")
    assert tests["test_suite::test_skipped_keeps_its_mark"].outcome == "skipped"
    assert tests["test_suite.TestGroup::test_inherits_and_dedups"].requirements == (
        "R1a", "R3", "R0")


def test_pytest_plugin_marks_survive_the_legacy_junit_family(tmp_path: Path) -> None:
    """The properties are written under junit_family=xunit1 as under the default family."""
    done = pytest_run(tmp_path, SUITE, "-o", "junit_family=xunit1")
    assert done.returncode == 1
    tests = {t.id: t for t in parse_junit((tmp_path / "out.xml").read_bytes())}
    assert tests["test_suite::test_two_requirements"].requirements == ("R1a", "R1b", "R0")


def test_pytest_plugin_refuses_a_mark_without_ids(tmp_path: Path) -> None:
    """A requirement mark without ids stops the run with a usage error naming the test."""
    done = pytest_run(tmp_path, "import pytest\n\n@pytest.mark.requirement\ndef test_x():\n"
                                "    pass\n")
    assert done.returncode == 4
    assert "test_suite.py::test_x" in done.stderr and "requirement ids" in done.stderr


def test_pytest_plugin_refuses_a_blank_id(tmp_path: Path) -> None:
    """A blank or non-string requirement id is a usage error."""
    done = pytest_run(tmp_path, "import pytest\n\n@pytest.mark.requirement('R1', 7)\n"
                                "def test_x():\n    pass\n")
    assert done.returncode == 4 and "not 7" in done.stderr


def test_pytest_plugin_can_be_turned_off(tmp_path: Path) -> None:
    """With -p no:assay the marker is unknown to --strict-markers (the plugin is the entry point)."""
    done = pytest_run(tmp_path, SUITE, "-p", "no:assay")
    assert done.returncode != 0 and "'requirement' not found in `markers`" in done.stdout


def test_pytest_plugin_writes_the_location_of_each_marked_test(tmp_path: Path) -> None:
    """A marked test carries PATH::QUALNAME (its class, no parameters); an unmarked one none."""
    done = pytest_run(tmp_path, SUITE)
    assert done.returncode == 1
    tests = {t.id: t for t in parse_junit((tmp_path / "out.xml").read_bytes())}
    assert tests["test_suite::test_two_requirements"].location == \
        "test_suite.py::test_two_requirements"
    assert tests["test_suite.TestGroup::test_inherits_and_dedups"].location == \
        "test_suite.py::TestGroup.test_inherits_and_dedups"
    pytest_run(tmp_path, "import pytest\n\n@pytest.mark.parametrize('n', [1, 2])\n"
                         "@pytest.mark.requirement('R1')\ndef test_p(n):\n    pass\n\n\n"
                         "def test_unmarked():\n    pass\n")
    tests = {t.id: t for t in parse_junit((tmp_path / "out.xml").read_bytes())}
    assert tests["test_suite::test_p[1]"].location == "test_suite.py::test_p"
    assert tests["test_suite::test_unmarked"].location == ""


def test_pytest_plugin_keeps_an_id_that_names_its_intent(tmp_path: Path) -> None:
    """knowledge:login#R1 is written as it is: the mark names the intent the test verifies."""
    done = pytest_run(tmp_path, "import pytest\n\n"
                                "@pytest.mark.requirement('knowledge:login#R1')\n"
                                "def test_x():\n    pass\n")
    assert done.returncode == 0, done.stdout
    (test,) = parse_junit((tmp_path / "out.xml").read_bytes())
    assert test.requirements == ("knowledge:login#R1",)


def test_pytest_plugin_refuses_an_intent_part_that_is_no_record_id(tmp_path: Path) -> None:
    """login#R1 (no KIND:) is a usage error: the intent is named as INTENT_ID#REQ_ID."""
    done = pytest_run(tmp_path, "import pytest\n\n@pytest.mark.requirement('knowledge:x#')\n"
                                "def test_x():\n    pass\n")
    assert done.returncode == 4 and "INTENT_ID#REQ_ID" in done.stderr
