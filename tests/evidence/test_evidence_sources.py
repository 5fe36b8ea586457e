"""Test sources: where a mapped test's source is, and a digest that ignores formatting only."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assay.evidence.junit import TestOutcome
from assay.evidence.sources import MAX_TEXT_CHARS, SourceReader, bare_name

SOURCE = '''import pytest


class TestLock:
    @pytest.mark.requirement("R1")
    def test_three(self):
        assert 1 + 2 == 3


def test_free():
    assert True
'''


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_lock.py").write_text(SOURCE, encoding="utf-8")
    return tmp_path


def source(root: Path, test_id: str, location: str = "", cwd: str = ".") -> dict[str, object]:
    return SourceReader(root, cwd).source(TestOutcome(test_id, "passed", ("R1",), "", location))


def test_sources_location_names_the_function_in_its_class(root: Path) -> None:
    """PATH::Class.function is found in the file's syntax tree and digested."""
    found = source(root, "x", "tests/test_lock.py::TestLock.test_three")
    assert (found["path"], found["function"], found["kind"]) == (
        "tests/test_lock.py", "TestLock.test_three", "function")


def test_sources_pytest_id_without_location_is_resolved_from_the_classname(root: Path) -> None:
    """tests.test_lock.TestLock::test_three[1] reaches tests/test_lock.py, without parameters."""
    found = source(root, "tests.test_lock.TestLock::test_three[1]")
    assert (found["path"], found["function"], found["kind"]) == (
        "tests/test_lock.py", "TestLock.test_three", "function")
    assert found["sha256"] == source(root, "x", "tests/test_lock.py::TestLock.test_three")["sha256"]


def test_sources_digest_ignores_formatting_and_comments(root: Path) -> None:
    """Reformatting the function or commenting it leaves the digest as it was."""
    before = source(root, "tests.test_lock::test_free")["sha256"]
    (root / "tests" / "test_lock.py").write_text(SOURCE.replace(
        "def test_free():\n    assert True\n", "def test_free( ):\n    # still true\n"
                                                 "    assert (True)\n"), encoding="utf-8")
    assert source(root, "tests.test_lock::test_free")["sha256"] == before


def test_sources_digest_counts_an_added_decorator(root: Path) -> None:
    """An added skip decorator is a change of the test."""
    before = source(root, "tests.test_lock::test_free")["sha256"]
    (root / "tests" / "test_lock.py").write_text(SOURCE.replace(
        "def test_free():", "@pytest.mark.skip\ndef test_free():"), encoding="utf-8")
    assert source(root, "tests.test_lock::test_free")["sha256"] != before


def test_sources_function_not_found_digests_the_file(root: Path) -> None:
    """A file without that function (another language, a generated name): the file's digest."""
    found = source(root, "x", "tests/test_lock.py::test_gone")
    assert (found["kind"], found["function"]) == ("file", "test_gone")


def test_sources_no_location_is_none(root: Path) -> None:
    """A Go-style id with no file anywhere: kind none, no digest."""
    assert source(root, "example.com/shop::TestRound") == {
        "path": None, "function": None, "kind": "none", "sha256": None}


def test_sources_path_leaving_the_project_is_not_read(root: Path) -> None:
    """A location with .. past the root is never followed."""
    assert source(root, "x", "../outside.py::test_x")["kind"] == "none"


def test_sources_symlinked_file_is_not_followed(root: Path) -> None:
    """A symlink to a test file is refused like any untrusted input, with the reason."""
    os.symlink(root / "tests" / "test_lock.py", root / "tests" / "test_link.py")
    found = source(root, "x", "tests/test_link.py::test_free")
    assert found["kind"] == "none" and "symlink" in str(found["reason"])


def test_sources_texts_kept_by_digest_within_the_bound(root: Path) -> None:
    """The function's text is kept under its digest; a text past the bound is not kept."""
    reader = SourceReader(root)
    found = reader.source(TestOutcome("tests.test_lock::test_free", "passed", ("R1",)))
    assert reader.texts == {found["sha256"]: "def test_free():\n    assert True"}
    long = "def test_long():\n" + "".join(f"    x{i} = {i}\n" for i in range(MAX_TEXT_CHARS // 8))
    (root / "tests" / "test_long.py").write_text(long, encoding="utf-8")
    reader.source(TestOutcome("tests.test_long::test_long", "passed", ("R1",)))
    assert len(reader.texts) == 1


def test_sources_bare_name_drops_parameters() -> None:
    """test_x[1-2] is test_x."""
    assert bare_name("test_x[1-2]") == "test_x"


def test_sources_conftest_on_the_way_up_is_digested(root: Path) -> None:
    """Each conftest.py from the test's directory up to the cwd is digested, comments aside."""
    (root / "conftest.py").write_text("import pytest  # top\n", encoding="utf-8")
    (root / "tests" / "conftest.py").write_text("X = 1\n", encoding="utf-8")
    first = source(root, "tests.test_lock::test_free")["conftest"]
    assert sorted(first) == ["conftest.py", "tests/conftest.py"]  # type: ignore[arg-type]
    (root / "conftest.py").write_text("import pytest\n", encoding="utf-8")
    assert source(root, "tests.test_lock::test_free")["conftest"] == first
    (root / "tests" / "conftest.py").write_text("X = 2\n", encoding="utf-8")
    assert source(root, "tests.test_lock::test_free")["conftest"] != first
