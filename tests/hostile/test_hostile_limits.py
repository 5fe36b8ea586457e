"""Gigantic and deeply nested documents: refused with resource_limit before they cost much.

Limits (docs/reliability.md): a JSON input file or standard input is at most
MAX_DATA_BYTES (4 MiB) and is refused by size before it is read; JSON is at
most 128 levels deep (checked before the recursive parser runs) and 100,000
values; record data is at most 4 MiB canonical.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.canonical import MAX_DEPTH, MAX_NODES
from assay.ledger.store import MAX_DATA_BYTES, MAX_DATA_DEPTH
from assay_testing import Project


def _refused(project: Project, result: object, pointer: str = "/data") -> dict:
    assert result.code == 1, (result.code, result.stderr)  # type: ignore[attr-defined]
    error = result.error  # type: ignore[attr-defined]
    assert (error["code"], error.get("pointer")) == ("resource_limit", pointer)
    assert project.ok("ledger", "info")["data"]["ledger_revision"] == 0
    return dict(error)


def test_hostile_limits_sparse_huge_file_is_refused_by_its_size(project: Project,
                                                                tmp_path: Path) -> None:
    """An 8 GiB (sparse) data file is refused from its size at once, never read into memory."""
    huge = tmp_path / "huge.json"
    with huge.open("wb") as f:
        f.truncate(8 * 1024**3)
    result = project.run("put", "--data-file", str(huge), "--", "knowledge:x")
    error = _refused(project, result)
    # The size in details comes from fstat alone; how fast the refusal is, is bench_limits'.
    assert error["details"] == {"limit_bytes": MAX_DATA_BYTES, "size_bytes": 8 * 1024**3}


@pytest.mark.parametrize("kind", ["device", "fifo", "directory"])
def test_hostile_limits_named_input_that_is_not_a_regular_file_is_refused(
        project: Project, tmp_path: Path, kind: str) -> None:
    """/dev/zero, a FIFO with no writer or a directory as --data-file is file_not_regular at once, never read or waited on."""
    import os

    path = {"device": "/dev/zero", "fifo": str(tmp_path / "fifo"), "directory": str(tmp_path)}[kind]
    if kind == "fifo":
        os.mkfifo(path)
    result = project.run("put", "--data-file", path, "--", "knowledge:x", timeout=30)
    assert (result.code, result.error["code"], result.error["pointer"]) == (
        2, "file_not_regular", "/data")
    assert project.ok("ledger", "info")["data"]["ledger_revision"] == 0


def test_hostile_limits_oversized_stdin_is_refused(project: Project) -> None:
    """More than 4 MiB on standard input for --data-file - is refused with resource_limit."""
    body = b'{"pad":"' + b"x" * MAX_DATA_BYTES + b'"}'
    _refused(project, project.run("put", "--data-file", "-", "--", "knowledge:x", input=body))


def test_hostile_limits_oversized_write_basis_file_names_its_argument(project: Project,
                                                                      tmp_path: Path) -> None:
    """The limit applies to every JSON file argument, with that argument's pointer."""
    basis = tmp_path / "basis.json"
    with basis.open("wb") as f:
        f.truncate(MAX_DATA_BYTES + 1)
    result = project.run("put", "--data-file", "-", "--write-basis", str(basis), "--",
                         "knowledge:x", input="{}")
    _refused(project, result, "/write_basis")


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 100_000])
def test_hostile_limits_deep_nesting_is_refused_before_parsing(project: Project,
                                                              depth: int) -> None:
    """Arrays nested past 128 levels (up to 100,000) are resource_limit, never a recursion crash."""
    body = "[" * depth + "]" * depth
    result = project.run("put", "--data-file", "-", "--", "knowledge:x", input=body)
    assert result.code == 1 and "Traceback" not in result.stderr
    assert result.error["code"] == "resource_limit"
    assert result.error["details"]["limit"] == "depth"


def test_hostile_limits_nesting_at_the_bound_is_accepted_and_reads_back(project: Project) -> None:
    """Data nested exactly as deep as a record allows is stored, and get and history return it."""
    body = "[" * MAX_DATA_DEPTH + "]" * MAX_DATA_DEPTH
    assert project.ok("put", "--data-file", "-", "--", "knowledge:x", input=body)["ok"] is True
    assert project.ok("put", "--data-file", "-", "--", "knowledge:x", input=body)["ok"] is True
    assert project.ok("get", "--", "knowledge:x")["data"]["record"]["revision"] == 2
    assert len(project.ok("get", "--history", "--", "knowledge:x")["data"]["versions"]) == 2
    assert project.ok("find", "--kind", "knowledge")["data"]["count"] == 1


@pytest.mark.parametrize("depth", [MAX_DATA_DEPTH + 1, MAX_DEPTH - 2, MAX_DEPTH - 1, MAX_DEPTH])
def test_hostile_limits_data_a_read_could_not_return_is_refused(project: Project,
                                                                depth: int) -> None:
    """Data nested past what a read's envelope can carry (101 to 128 levels) is refused, nothing written."""
    body = "[" * depth + "]" * depth
    result = project.run("put", "--data-file", "-", "--", "knowledge:x", input=body)
    assert result.code == 1
    assert (result.error["code"], result.error["pointer"], result.error["details"]["limit"]) == (
        "resource_limit", "/data", "depth")
    assert project.ok("ledger", "info")["data"]["ledger_revision"] == 0


def test_hostile_limits_too_many_values_is_refused(project: Project) -> None:
    """A flat array of more than 100,000 values is resource_limit with the nodes limit."""
    body = "[" + ",".join(["0"] * (MAX_NODES + 1)) + "]"
    result = project.run("put", "--data-file", "-", "--", "knowledge:x", input=body)
    assert result.code == 1
    assert (result.error["code"], result.error["details"]["limit"]) == ("resource_limit", "nodes")


def test_hostile_limits_publish_check_file_over_the_limit_is_refused(project: Project,
                                                                     tmp_path: Path) -> None:
    """publish check of an envelope file over 4 MiB is resource_limit before it is read (as --data-file is)."""
    huge = tmp_path / "envelope.json"
    with huge.open("wb") as f:
        f.truncate(MAX_DATA_BYTES + 1)
    result = project.run("publish", "check", "--", str(huge))
    assert result.code == 1 and result.error["code"] == "resource_limit"


def test_hostile_limits_endless_inputs_end_in_resource_limit(project: Project) -> None:
    """/dev/zero as a plan is refused as not a regular file; as canonical's stdin it ends in resource_limit; never a hang."""
    plan = project.run("loop", "start", "--task", "t", "--criterion", "c", "--plan", "/dev/zero",
                       timeout=60)
    assert (plan.code, plan.error["code"]) == (2, "file_not_regular")
    with open("/dev/zero", "rb") as zero:
        import subprocess

        from assay_testing import ASSAY

        proc = subprocess.run([ASSAY, "canonical"], stdin=zero, capture_output=True, timeout=60,
                              cwd=project.root, check=False)
    assert proc.returncode == 1 and b"resource_limit" in proc.stderr


def test_hostile_limits_listing_past_one_documents_value_bound_prints(project: Project) -> None:
    """A find whose records together hold more than 100,000 values prints them all (each record is within its own bound)."""
    from assay.ledger import Write, open_store

    store = open_store(project.root / ".assay" / "ledger.db")
    try:
        store.put_many([Write(id=f"knowledge:r{i:02d}", data={"v": list(range(1_500))},
                              scope="project:demo") for i in range(80)])
    finally:
        store.close()
    found = project.ok("find", "--kind", "knowledge", "--limit", "100")["data"]
    assert found["count"] == 80 and all(len(r["data"]["v"]) == 1_500 for r in found["records"])
