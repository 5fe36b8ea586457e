"""Every error about an input file names the option and the file, and points into the argument."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay_testing import Project


def _error(project: Project, *args: str, stdin: str | None = None) -> dict:
    result = project.run(*args, input=stdin)
    assert result.code in (1, 2), result.stderr
    return dict(result.error)


def test_input_errors_bad_json_file_names_option_and_file(project: Project) -> None:
    """`put --data-file bad.json` says which option and file are not JSON, at /data."""
    bad = project.root / "bad.json"
    bad.write_text('{"a":', encoding="utf-8")
    error = _error(project, "put", "--data-file", "bad.json", "--", "knowledge:x")
    assert (error["code"], error["pointer"]) == ("invalid_json", "/data")
    assert error["message"].startswith("--data-file bad.json: not valid JSON")
    assert error["details"]["option"] == "--data-file" and error["details"]["file"] == "bad.json"


def test_input_errors_pointer_into_the_file_is_a_pointer_into_the_argument(
        project: Project) -> None:
    """A duplicate key at /a of the --data-file document is reported at /data/a."""
    (project.root / "dup.json").write_text('{"a": 1, "a": 2}', encoding="utf-8")
    error = _error(project, "put", "--data-file", "dup.json", "--", "knowledge:x")
    assert (error["code"], error["pointer"]) == ("duplicate_key", "/data/a")
    assert "--data-file dup.json" in error["message"]


def test_input_errors_standard_input_is_named(project: Project) -> None:
    """Bad JSON on standard input (`--data-file -`) says it came from standard input."""
    error = _error(project, "put", "--data-file", "-", "--", "knowledge:x", stdin="[1,")
    assert error["message"].startswith("--data-file - (standard input): not valid JSON")
    assert error["details"]["file"] == "-"


def test_input_errors_loop_evaluation_is_named(project: Project) -> None:
    """`loop next --evaluation bad.json` says the error is about --evaluation and that file."""
    (project.root / "eval.json").write_text("not json", encoding="utf-8")
    error = _error(project, "loop", "next", "--handle", "{}", "--evaluation", "eval.json")
    assert (error["code"], error["pointer"]) == ("invalid_json", "/evaluation")
    assert error["message"].startswith("--evaluation eval.json: ")


def test_input_errors_missing_file_names_option_and_file(project: Project) -> None:
    """A --data-file that does not exist is file_unreadable naming the option and the path."""
    error = _error(project, "put", "--data-file", "nowhere.json", "--", "knowledge:x")
    assert (error["code"], error["pointer"]) == ("file_unreadable", "/data")
    assert "--data-file nowhere.json" in error["message"]
    assert error["details"]["file"] == "nowhere.json"


def test_input_errors_oversized_file_names_the_file(project: Project, tmp_path: Path) -> None:
    """A --data-file over the input limit is resource_limit naming the option and the path."""
    huge = tmp_path / "huge.json"
    with huge.open("wb") as handle:
        handle.truncate(5 * 1024 * 1024)
    error = _error(project, "put", "--data-file", str(huge), "--", "knowledge:x")
    assert (error["code"], error["pointer"]) == ("resource_limit", "/data")
    assert error["message"].startswith(f"--data-file {huge} is larger than")


@pytest.mark.parametrize(("tool", "arguments", "pointer"), [
    ("put", {"id": "knowledge:x", "data": {"a": float("nan")}}, "/data/a"),
    ("put", {"id": "knowledge:x", "data": {"a": "\ud800"}}, "/data/a"),
])
def test_input_errors_mcp_names_the_argument(project: Project, tool: str, arguments: dict,
                                             pointer: str) -> None:
    """Over MCP a bad value inside a document argument is reported at that argument."""
    from assay.mcp.server import invoke

    envelope, is_error = invoke(tool, arguments, cwd=str(project.root))
    assert is_error and envelope["error"]["pointer"] == pointer


def test_input_errors_publish_check_file_names_the_file(project: Project, tmp_path: Path) -> None:
    """publish check -- FILE with malformed JSON says which file, and points into the argument."""
    bad = tmp_path / "envelope.json"
    bad.write_text('{"version": 1,', encoding="utf-8")
    result = project.run("publish", "check", "--", str(bad))
    assert result.error["code"] == "invalid_json"
    assert result.error["message"].startswith(f"the envelope file {bad}: ")
    assert (result.error["pointer"], result.error["details"]["file"]) == ("/file", str(bad))
