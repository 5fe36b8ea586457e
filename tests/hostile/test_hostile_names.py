"""Over-long path names given as places to create: a coded error, never exit 70.

Each is refused with its own code before anything is created.
"""

from __future__ import annotations

from assay_testing import Project

LONG = "x" * 300  # longer than NAME_MAX (255) on Linux file systems


def test_hostile_names_packet_init_with_an_over_long_name_is_a_coded_error(project: Project) -> None:
    """packet init of a directory whose name is too long fails with a coded error, not exit 70."""
    result = project.run("packet", "init", "--objective", "o", "--", LONG)
    assert result.code == 1 and "Traceback" not in result.stderr
    assert (result.error["code"], result.error["pointer"]) == ("packet_unwritable", "/directory")


def test_hostile_names_init_with_an_over_long_cwd_is_a_coded_error(project: Project) -> None:
    """init --cwd naming a directory whose name is too long fails with a coded error, not exit 70."""
    result = project.run("init", "--cwd", LONG)
    assert result.code in (1, 2, 4) and "Traceback" not in result.stderr
    assert result.error["code"] != "internal_error"


def test_hostile_names_validate_of_an_over_long_name_is_a_coded_error(project: Project) -> None:
    """packet validate of a name that is too long is packet_unreadable (exit 4)."""
    result = project.run("packet", "validate", "--", LONG)
    assert result.code == 4 and result.error["code"] == "packet_unreadable"
