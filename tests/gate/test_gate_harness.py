"""The harnesses' payloads and answers: each sample maps onto one model, or is refused by field."""

from __future__ import annotations

import json

import pytest
from gate_helpers import FIXTURES, payload

from assay.errors import AssayError
from assay.gate.harness import detect_harness, parse_shell, parse_stop, stop_answer

# The fields each Codex input schema requires (and allows: it refuses any other).
CODEX_FIELDS = {
    "stop": {"cwd", "hook_event_name", "last_assistant_message", "model", "permission_mode",
             "session_id", "stop_hook_active", "transcript_path", "turn_id"},
    "post-tool-use-bash": {"cwd", "hook_event_name", "model", "permission_mode", "session_id",
                           "tool_input", "tool_name", "tool_response", "tool_use_id",
                           "transcript_path", "turn_id"},
}
CODEX_FIELDS["stop-continuing"] = CODEX_FIELDS["stop"]
CODEX_FIELDS["subagent-stop"] = CODEX_FIELDS["stop"] | {"agent_id", "agent_type",
                                                       "agent_transcript_path"}


@pytest.mark.parametrize("name", sorted(CODEX_FIELDS))
def test_codex_samples_hold_exactly_the_schema_fields(name: str) -> None:
    """Each Codex sample has every field its input schema requires and no other."""
    assert set(payload("codex", name, None)) == CODEX_FIELDS[name]


@pytest.mark.parametrize("harness, name, event, continuing, agent", [
    ("claude-code", "stop", "Stop", False, None),
    ("claude-code", "stop-continuing", "Stop", True, None),
    ("claude-code", "subagent-stop", "SubagentStop", False, "a7e3b1c9d2f04e68"),
    ("codex", "stop", "Stop", False, None),
    ("codex", "stop-continuing", "Stop", True, None),
    ("codex", "subagent-stop", "SubagentStop", False, "019a4c2f-0c5e-7a13-8d4f-1b2c3d4e5f67"),
    ("cursor", "stop", "stop", False, None),
])
def test_parse_stop_maps_every_sample(harness: str, name: str, event: str, continuing: bool,
                                      agent: str | None) -> None:
    """Every stop sample is recognised as its harness's and read into one StopEvent."""
    raw = payload(harness, name, None)
    parsed = parse_stop(json.dumps(raw).encode())
    assert (parsed.harness, parsed.event, parsed.continuing, parsed.agent_id) == (
        harness, event, continuing, agent)
    assert parsed.cwd == "/home/dev/shop" and parsed.session_id
    assert parsed.message == raw.get("last_assistant_message")
    assert parsed.subagent is (agent is not None)


def test_parse_stop_cursor_loop_count_is_continuing() -> None:
    """Cursor's loop_count above 0 means the agent is already continuing for a stop hook."""
    assert parse_stop(payload("cursor", "stop", None, loop_count=2)).continuing is True


def test_parse_stop_drops_a_byte_order_mark() -> None:
    """A payload that starts with a UTF-8 byte-order mark is read like one without."""
    raw = b"\xef\xbb\xbf" + (FIXTURES / "cursor" / "stop.json").read_bytes()
    assert parse_stop(raw).harness == "cursor"


@pytest.mark.parametrize("change, pointer", [
    ({"hook_event_name": "PreToolUse"}, "/hook_event_name"),
    ({"stop_hook_active": "yes"}, "/stop_hook_active"),
    ({"session_id": ""}, "/session_id"),
    ({"session_id": None}, "/session_id"),
    ({"last_assistant_message": 7}, "/last_assistant_message"),
    ({"session_id": "s" * 257}, "/session_id"),
])
def test_parse_stop_refuses_a_bad_field(change: dict, pointer: str) -> None:
    """A field no harness sends that way is hook_payload_invalid pointing at it."""
    with pytest.raises(AssayError) as info:
        parse_stop({**payload("claude-code", "stop", None), **change})
    assert (info.value.code, info.value.pointer) == ("hook_payload_invalid", pointer)


def test_parse_stop_subagent_needs_its_agent_id() -> None:
    """A SubagentStop without agent_id is refused at /agent_id."""
    raw = payload("claude-code", "subagent-stop", None)
    del raw["agent_id"]
    with pytest.raises(AssayError) as info:
        parse_stop(raw)
    assert (info.value.code, info.value.pointer) == ("hook_payload_invalid", "/agent_id")


@pytest.mark.parametrize("raw", [b"", b"  \n", b"[1, 2]", b"{", b'{"a": 1, "a": 2}'])
def test_parse_stop_refuses_what_is_no_json_object(raw: bytes) -> None:
    """Empty input, a non-object, broken or duplicate-key JSON are hook_payload_invalid."""
    with pytest.raises(AssayError) as info:
        parse_stop(raw)
    assert info.value.code == "hook_payload_invalid"


def test_detect_harness_by_shape() -> None:
    """Cursor by its conversation id, Codex by its turn id, otherwise Claude Code."""
    assert [detect_harness(payload(h, "stop", None)) for h in ("claude-code", "codex", "cursor")] \
        == ["claude-code", "codex", "cursor"]


@pytest.mark.parametrize("harness, name, outcome, code", [
    ("claude-code", "post-tool-use-bash", "succeeded", None),
    ("claude-code", "post-tool-use-failure-bash", "failed", 1),
    ("codex", "post-tool-use-bash", "failed", 1),
    ("cursor", "after-shell-execution", "unknown", None),
])
def test_parse_shell_reads_the_reported_outcome(harness: str, name: str, outcome: str,
                                                code: int | None) -> None:
    """Each harness's shell report gives the command and the outcome and exit code it stated."""
    event = parse_shell(payload(harness, name, None))
    assert event is not None and event.harness == harness
    assert (event.outcome, event.exit_code) == (outcome, code)
    assert event.command in ("python -m pytest -q tests/test_export.py", "python -m pytest -q",
                             "npm test")


def test_parse_shell_ignores_other_tools() -> None:
    """An Edit tool's PostToolUse is no shell command: nothing to record."""
    assert parse_shell(payload("claude-code", "post-tool-use-edit", None)) is None


def test_parse_shell_interrupted_command() -> None:
    """A Claude Code shell call reported interrupted is recorded as interrupted."""
    raw = payload("claude-code", "post-tool-use-bash", None)
    raw["tool_response"]["interrupted"] = True
    event = parse_shell(raw)
    assert event is not None and event.outcome == "interrupted"


@pytest.mark.parametrize("harness, answer", [
    ("claude-code", {"decision": "block", "reason": "why"}),
    ("codex", {"decision": "block", "reason": "why"}),
    ("cursor", {"followup_message": "why"}),
])
def test_stop_answer_in_each_harness_format(harness: str, answer: dict) -> None:
    """A block is each harness's own shape; allowing is no answer at all."""
    assert stop_answer(harness, "why") == answer
    assert stop_answer(harness, None) is None
