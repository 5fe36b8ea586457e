"""The context commands through the real console script: JSON envelopes and exit statuses."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from context_docs import EXPLICIT

ASSAY = os.path.join(os.path.dirname(sys.executable), "assay")


def _run(ctx, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ASSAY_DB": ctx.db}
    return subprocess.run([ASSAY, *args], cwd=ctx.root, capture_output=True, text=True,
                          timeout=60, check=False, env=env)


def test_context_cli_goal_read_prints_canonical_envelope(ctx) -> None:
    """assay goal read prints one JSON envelope with the verbatim text, exit 0."""
    proc = _run(ctx, "goal", "read", "--goal-id", "parser")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)["data"]
    assert data["ownership"] == "explicit" and "Final stop" in data["text"]


def test_context_cli_malformed_goal_exits_1_with_code(ctx) -> None:
    """A malformed marker is exit 1 with the goal_marker_* code on stderr."""
    ctx.goal.write_text(EXPLICIT.replace(
        "<!-- assay:todo-region role=user id=user-todo begin -->\n", ""))
    proc = _run(ctx, "goal", "read", "--goal-id", "parser")
    assert proc.returncode == 1
    error = json.loads(proc.stderr)["error"]
    assert (error["code"], error["details"]["line"]) == ("goal_marker_unbalanced", 21)


def test_context_cli_thin_with_todo_id_is_usage_exit_2(ctx) -> None:
    """--thin with --todo-id is a usage error, exit 2."""
    proc = _run(ctx, "todo", "list", "--goal-id", "parser", "--todo-id", "x", "--thin")
    assert proc.returncode == 2
    assert json.loads(proc.stderr)["error"]["code"] == "list_option_with_exact_read"


def test_context_cli_goal_write_stale_revision_exits_3(ctx) -> None:
    """goal write with a stale --expect-revision is a conflict, exit 3, file untouched."""
    proc = _run(ctx, "goal", "write", "--goal-id", "parser", "--expect-revision", "0" * 64)
    assert proc.returncode == 3
    assert json.loads(proc.stderr)["error"]["code"] == "goal_revision_conflict"
    assert ctx.goal.read_text() == EXPLICIT


def test_context_cli_work_context_with_failed_source_exits_1(ctx) -> None:
    """work context exits 1 when a source failed, still printing the context."""
    ctx.goal.unlink()
    proc = _run(ctx, "work", "context")
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["data"]["work_context"]["complete"] is False


def test_context_cli_readable_work_context_names_sources_and_reads(ctx) -> None:
    """--format table prints the selected todo, each source's status and the required reads."""
    ctx.data("todo.add", goal_id="parser", text="Parse the manifest", todo_id="parse")
    ctx.goal.write_text(EXPLICIT + "- [ ] stray\n")
    proc = _run(ctx, "work", "context", "--format", "table")
    assert proc.returncode == 0, proc.stderr
    assert "selected (heartbeat): todo:parse [open]" in proc.stdout
    assert "goal_state goals/parser.md: pending" in proc.stdout
    assert "read before work: assay goal read --goal-id parser --full" in proc.stdout
