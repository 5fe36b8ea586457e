"""Goal files are opened safely: no link followed, no FIFO waited on, no unbounded read."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from context_docs import EXPLICIT, sha

from assay.context.goal import read_goal, write_goal
from assay.context.project_file import MAX_GOAL_BYTES
from assay.errors import AssayError


def _render(region: Any) -> list[str]:
    return [f"- [ ] new {region.role} task"]


@pytest.mark.timeout(60)
def test_goal_read_fifo_is_refused_without_blocking(ctx) -> None:
    """A FIFO in place of the goal file is goal_not_regular_file at once, not a hang."""
    ctx.goal.unlink()
    os.mkfifo(ctx.goal)
    err = ctx.fail("goal.read", goal_id="parser")
    assert (err.code, err.exit_code) == ("goal_not_regular_file", 4)
    assert err.details == {"goal_id": "parser", "path": "goals/parser.md"}


@pytest.mark.timeout(60)
def test_work_context_fifo_goal_is_a_failed_source(ctx) -> None:
    """work context over a FIFO goal reports the goal source failed and is not complete."""
    ctx.goal.unlink()
    os.mkfifo(ctx.goal)
    from assay.ops import Invocation, call

    inv = Invocation(cwd=str(ctx.root), db=ctx.db)
    try:
        envelope, code = call("work.context", {}, inv)
    finally:
        inv.close()
    wc = envelope["data"]["work_context"]
    assert code == 1 and wc["complete"] is False
    assert wc["failures"][0]["cause"]["code"] == "goal_not_regular_file"


@pytest.mark.timeout(60)
def test_goal_write_fifo_is_refused_without_blocking(ctx) -> None:
    """goal write on a FIFO is refused before anything is read or written."""
    revision = ctx.revision()
    ctx.goal.unlink()
    os.mkfifo(ctx.goal)
    err = ctx.fail("goal.write", goal_id="parser", expect_revision=revision)
    assert err.code == "goal_not_regular_file"
    assert sorted(p.name for p in ctx.goal.parent.iterdir()) == ["parser.md"]


@pytest.fixture
def anyio_backend() -> str:
    """The MCP server runs on asyncio."""
    return "asyncio"


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_goal_read_fifo_over_mcp_returns_an_error(ctx) -> None:
    """Over MCP, goal_read on a FIFO returns an error envelope instead of never answering."""
    from mcp import Client

    from assay.mcp.server import build_server

    ctx.goal.unlink()
    os.mkfifo(ctx.goal)
    async with Client(build_server(cwd=str(ctx.root), db=ctx.db)) as client:
        result = await client.call_tool("goal_read", {"goal_id": "parser"})
    assert result.is_error is True
    envelope = json.loads(result.content[0].text)
    assert envelope["error"]["code"] == "goal_not_regular_file"


def test_goal_read_sparse_gigabyte_is_refused_from_its_size(tmp_path: Path) -> None:
    """A 1 GiB sparse goal file is resource_limit from fstat, before any byte is read."""
    path = tmp_path / "goal.md"
    with open(path, "wb") as handle:
        handle.truncate(1 << 30)
    with pytest.raises(AssayError) as info:
        read_goal(tmp_path, "g", "goal.md")
    assert info.value.code == "resource_limit"
    assert info.value.details == {"path": "goal.md", "limit_bytes": MAX_GOAL_BYTES,
                                  "size_bytes": 1 << 30}


def test_goal_read_directory_is_not_a_regular_file(tmp_path: Path) -> None:
    """A directory registered as the goal is goal_not_regular_file."""
    (tmp_path / "goal.md").mkdir()
    with pytest.raises(AssayError) as info:
        read_goal(tmp_path, "g", "goal.md")
    assert info.value.code == "goal_not_regular_file"


@pytest.mark.parametrize("linked", ["file", "directory"])
def test_goal_read_link_inside_the_project_is_refused(tmp_path: Path, linked: str) -> None:
    """A symlink in the goal path is goal_path_symlink even when it points inside the project."""
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "goal.md").write_text(EXPLICIT)
    if linked == "file":
        (tmp_path / "goal.md").symlink_to(tmp_path / "real" / "goal.md")
        relative = "goal.md"
    else:
        (tmp_path / "goals").symlink_to(tmp_path / "real", target_is_directory=True)
        relative = "goals/goal.md"
    with pytest.raises(AssayError) as info:
        read_goal(tmp_path, "g", relative)
    assert info.value.code == "goal_path_symlink"


def _swap(project: Path, outside: Path) -> None:
    """Move the goal's directory aside and put a symlink to ``outside`` in its place."""
    os.rename(project / "goals", project / "goals.moved")
    os.symlink(outside, project / "goals", target_is_directory=True)


@pytest.mark.parametrize("moment", ["before the temporary file", "before the rename"])
def test_goal_write_directory_swapped_for_a_link_never_writes_outside(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, moment: str) -> None:
    """Swapping the goal's directory for a symlink mid-write cannot land the file outside the project."""
    project, outside = tmp_path / "project", tmp_path / "outside"
    (project / "goals").mkdir(parents=True)
    outside.mkdir()
    (outside / "goal.md").write_text("outside, untouched\n")
    (project / "goals" / "goal.md").write_text(EXPLICIT)
    real_open, real_replace = os.open, os.replace
    swapped: list[bool] = []

    def open_then_swap(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & os.O_CREAT and not swapped:
            swapped.append(True)
            _swap(project, outside)
        return real_open(path, flags, *args, **kwargs)

    def replace_then_swap(src: Any, dst: Any, **kwargs: Any) -> None:
        if not swapped:
            swapped.append(True)
            _swap(project, outside)
        real_replace(src, dst, **kwargs)

    if moment == "before the temporary file":
        monkeypatch.setattr(os, "open", open_then_swap)
    else:
        monkeypatch.setattr(os, "replace", replace_then_swap)
    out = write_goal(project, "g", "goals/goal.md", expect_revision=sha(EXPLICIT),
                     render=_render)
    monkeypatch.undo()
    assert swapped and out["changed"] is True
    assert sorted(p.name for p in outside.iterdir()) == ["goal.md"]
    assert (outside / "goal.md").read_text() == "outside, untouched\n"
    written = (project / "goals.moved" / "goal.md").read_text()
    assert "new agent task" in written
    assert sorted(p.name for p in (project / "goals.moved").iterdir()) == ["goal.md"]


def test_goal_write_goal_replaced_by_a_link_before_the_rename_is_a_conflict(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A goal file swapped for a link during the write is refused; the link's target is untouched."""
    (tmp_path / "goal.md").write_text(EXPLICIT)
    target = tmp_path / "elsewhere.md"
    target.write_text("elsewhere\n")

    def never(src: Any, dst: Any, **kwargs: Any) -> None:
        raise AssertionError("the rename must not be reached")

    real_fsync = os.fsync
    calls: list[int] = []

    def fsync_then_relink(fd: int) -> None:
        real_fsync(fd)
        if not calls:
            calls.append(fd)
            os.unlink(tmp_path / "goal.md")
            os.symlink(target, tmp_path / "goal.md")

    monkeypatch.setattr(os, "fsync", fsync_then_relink)
    monkeypatch.setattr(os, "replace", never)
    with pytest.raises(AssayError) as info:
        write_goal(tmp_path, "g", "goal.md", expect_revision=sha(EXPLICIT), render=_render)
    monkeypatch.undo()
    assert info.value.code == "goal_path_symlink"
    assert target.read_text() == "elsewhere\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere.md", "goal.md"]
