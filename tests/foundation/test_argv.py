"""Command lines and arguments by the registry's bindings, and the calls a next step quotes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from assay.mcp.server import build_server
from assay.ops import lookup
from assay.ops.argv import argv_for, parse, quoted_calls
from assay_testing import make_project


@pytest.mark.parametrize(("name", "arguments"), [
    ("todo.list", {"goal_id": "g", "status": ["open", "blocked"], "thin": True,
                   "after": "todo:x"}),
    ("get", {"id": "--odd", "revision": 3}),
    ("evidence.run", {"name": "unit", "target": "knowledge:x#R1"}),
    ("work.accept", {"id": "knowledge:x", "from_run": ["evidence:unit@2", "evidence:lint@1"]}),
    ("pending.answer", {"id": "pending:q", "text": ["yes,", "ship", "it"]}),
])
def test_argv_parse_reads_back_what_argv_for_writes(name: str, arguments: dict[str, Any]) -> None:
    """Parsing the argument array written for some arguments gives those arguments back."""
    op = lookup(name)
    argv = argv_for(op, arguments)
    assert argv[:len(op.cli_path)] == list(op.cli_path)
    params = parse(op, argv[len(op.cli_path):])
    assert params is not None
    assert {k: list(v) if isinstance(v, tuple) else v for k, v in params.items()} == arguments


def test_argv_for_refuses_an_argument_no_command_line_carries() -> None:
    """Standard input cannot be written as an argument array."""
    with pytest.raises(ValueError, match="stdin"):
        argv_for(lookup("canonical"), {"text": "{}"})


def test_argv_quoted_command_is_a_call() -> None:
    """A command quoted whole in a step becomes its tool and arguments."""
    text = ("Record it as R1's result: 'assay work accept --from-run evidence:unit@4 -- "
            "knowledge:export', then 'assay work check -- knowledge:export'.")
    assert quoted_calls(text) == [
        {"tool": "work_accept", "arguments": {"from_run": ["evidence:unit@4"],
                                              "id": "knowledge:export"}},
        {"tool": "work_check", "arguments": {"id": "knowledge:export"}},
    ]


@pytest.mark.parametrize("text", [
    "Cite it (assay work accept --requirement REQ --evidence evidence:u@1 -- INTENT_ID).",
    "Verify it: 'assay verify-attestation a.jsonl --key PUBLIC_KEY'",
    "Then: assay loop next --handle '<submissionHandle JSON>' --evaluation FILE",
    "Run 'assay no such command' first.",
    "Run 'assay work check --colour red -- knowledge:x'.",
    "Run 'assay work check'.",
    "Print it: 'assay canonical --digest'",
    "Broken quoting: 'assay work check -- \"knowledge:x'",
])
def test_argv_template_or_unreadable_command_is_no_call(text: str) -> None:
    """Unquoted templates, placeholders, unknown commands or options, stdin and bad quoting give no call."""
    assert quoted_calls(text) == []


def _project_without_hooks(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj").root


async def _doctor_next(root: Path, profile: str) -> list[dict[str, Any]]:
    async with Client(build_server(cwd=str(root), profile=profile)) as client:
        result = await client.call_tool("hook_doctor", {"harness": "claude-code"})
    envelope = dict(result.structured_content or {})
    assert json.loads(result.content[0].text) == envelope  # type: ignore[union-attr]
    assert result.is_error is False, envelope
    return list(envelope["next"])


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_argv_mcp_next_offers_only_the_profiles_tools(tmp_path: Path,
                                                            anyio_backend: str) -> None:
    """hook_doctor's step names hook install: a call in the admin profile, text only for the agent."""
    root = _project_without_hooks(tmp_path)
    text = "Install it: 'assay hook install claude-code'."
    assert (await _doctor_next(root, "agent"))[0] == {"text": text, "calls": []}
    assert (await _doctor_next(root, "admin"))[0] == \
        {"text": text, "calls": [{"tool": "hook_install", "arguments": {"harness": "claude-code"}}]}
