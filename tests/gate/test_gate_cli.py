"""The hooks as harnesses run them: the real `assay` process, payload on stdin, exit status 0."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from gate_helpers import gate_project, payload, ready_project, record_intent
from harness_reader import reads

from assay_testing import ASSAY, Project


@pytest.fixture
def gated(tmp_path: Path) -> Project:
    project = gate_project(tmp_path / "proj")
    record_intent(project)
    return project


def hook(project: Project, cwd: Path, *args: str, stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    """Run ``assay hook ...`` in ``cwd`` as a harness does: stdin piped, nothing else given."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(project.root.parent / "home")}
    return subprocess.run([ASSAY, "hook", *args], cwd=cwd, input=stdin, capture_output=True,
                          env=env, timeout=120, check=False)


def _json(data: Any) -> bytes:
    return json.dumps(data).encode()


def test_cli_hook_stop_prints_the_block_exactly(gated: Project) -> None:
    """A not-ready intent: one JSON line {decision, reason} on stdout, nothing else, exit 0."""
    proc = hook(gated, gated.root, "stop", stdin=_json(payload("claude-code", "stop", gated)))
    assert proc.returncode == 0 and proc.stderr == b""
    assert proc.stdout.endswith(b"\n") and proc.stdout.count(b"\n") == 1
    answer = json.loads(proc.stdout)
    assert set(answer) == {"decision", "reason"} and answer["decision"] == "block"
    assert len(answer["reason"]) <= 2000


def test_cli_hook_stop_prints_nothing_to_allow(tmp_path: Path) -> None:
    """A ready intent and no claim: empty stdout, exit 0 (the harness lets the agent stop)."""
    project = ready_project(tmp_path / "proj")
    data = payload("codex", "stop", project, last_assistant_message="Anything else?")
    proc = hook(project, project.root, "stop", "--harness", "codex", stdin=_json(data))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")


def test_cli_hook_stop_unreadable_stdin_blocks_with_exit_zero(gated: Project) -> None:
    """Bytes that are no payload: still exit 0, with a block naming the problem."""
    proc = hook(gated, gated.root, "stop", stdin=b"\xff\xfe not json")
    assert proc.returncode == 0
    assert "the hook payload is not one a harness sends" in json.loads(proc.stdout)["reason"]


def test_cli_hook_stop_outside_a_project_prints_nothing(tmp_path: Path, gated: Project) -> None:
    """Run outside any project (a user-scope hook elsewhere): nothing printed, exit 0."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    data = payload("claude-code", "stop", None, cwd=str(elsewhere))
    proc = hook(gated, elsewhere, "stop", stdin=_json(data))
    assert (proc.returncode, proc.stdout) == (0, b"")


def test_cli_hook_stop_cursor_followup(gated: Project) -> None:
    """Cursor's stop hook gets {followup_message} to continue the agent."""
    proc = hook(gated, gated.root, "stop", "--harness", "cursor",
                stdin=_json(payload("cursor", "stop", gated)))
    assert proc.returncode == 0 and set(json.loads(proc.stdout)) == {"followup_message"}


def test_cli_hook_tool_prints_nothing(gated: Project) -> None:
    """hook tool records the command and prints nothing, exit 0."""
    proc = hook(gated, gated.root, "tool",
                stdin=_json(payload("claude-code", "post-tool-use-failure-bash", gated)))
    assert (proc.returncode, proc.stdout) == (0, b"")
    assert gated.ok("find", "--kind", "shell-claim")["data"]["count"] == 1


def test_cli_hook_install_then_doctor(gated: Project) -> None:
    """hook install claude-code writes .claude/settings.json; doctor sees it and previews a block."""
    out = gated.ok("hook", "install", "claude-code", env={"HOME": str(gated.root.parent / "home")})
    assert out["data"]["path"] == str(gated.root / ".claude" / "settings.json")
    doctor = gated.run("hook", "doctor", "--", "claude-code",
                       env={"HOME": str(gated.root.parent / "home")})
    assert doctor.code == 0 and doctor.json["data"]["installed"] is True
    assert doctor.json["data"]["would_answer"]["decision"]["event"] == "gate_blocked"
    settings = json.loads((gated.root / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["Stop"][0]["hooks"][0]["command"]
    assert str(gated.root) not in command and ASSAY not in command  # the same in every clone
    with_assay = {"PATH": f"{Path(ASSAY).parent}:/usr/bin:/bin",
                  "HOME": str(gated.root.parent / "home")}
    proc = subprocess.run(command, shell=True, cwd=gated.root, capture_output=True, timeout=120,
                          input=_json(payload("claude-code", "stop", gated)), env=with_assay,
                          check=False)
    assert reads(proc.returncode, proc.stdout.decode(), proc.stderr.decode())[0] == "block"
    assert "not ready for review" in json.loads(proc.stdout)["reason"]


@pytest.mark.parametrize("harness", ["claude-code", "codex", "cursor"])
def test_cli_project_hook_without_assay_blocks_once_then_tells_the_person(
        gated: Project, harness: str) -> None:
    """Where no assay is installed the project's entry answers by itself: the first stop of a run
    is blocked with why, the continuing one is let through with a notice (no exit 127)."""
    home = {"HOME": str(gated.root.parent / "home")}
    path = gated.ok("hook", "install", harness, env=home)["data"]["path"]
    settings = json.loads(Path(path).read_text())
    event = {"claude-code": "Stop", "codex": "Stop", "cursor": "stop"}[harness]
    entry = settings["hooks"][event][0]
    command = entry["command"] if harness == "cursor" else entry["hooks"][0]["command"]
    bare = {"PATH": "/usr/bin:/bin", **home}
    first, again = (
        subprocess.run(command, shell=True, cwd=gated.root, capture_output=True, timeout=60,
                       input=_json(payload(harness, name, gated, **extra)), env=bare,
                       check=False)
        for name, extra in (("stop", {}), ("stop-continuing" if harness != "cursor" else "stop",
                                           {"loop_count": 1} if harness == "cursor" else {})))
    if harness == "cursor":
        assert first.returncode == 0 and "assay command is not installed" in \
            json.loads(first.stdout)["followup_message"]
        assert again.returncode == 0 and again.stdout == b""
        return
    assert reads(first.returncode, first.stdout.decode(), first.stderr.decode()) == (
        "block", first.stderr.decode().strip())
    assert "assay command is not installed" in first.stderr.decode()
    assert reads(again.returncode, again.stdout.decode(), again.stderr.decode())[0] == "allow"
    assert "assay command is not installed" in json.loads(again.stdout)["systemMessage"]


# The reader itself, on the cases Codex's own stop-hook tests pin (restated, not copied).

def test_reader_block_with_reason_continues_the_agent() -> None:
    """As Codex's block_decision_with_reason_sets_continuation_prompt: the reason is the prompt."""
    assert reads(0, '{"decision":"block","reason":"retry with tests"}', "") == (
        "block", "retry with tests")


@pytest.mark.parametrize("stdout", ['{"decision":"block"}', '{"decision":"block","reason":"  "}',
                                    "not json", '{"decision":"block","reason":"x","extra":1}'])
def test_reader_malformed_block_is_a_failed_hook(stdout: str) -> None:
    """As block_decision_without_reason_is_invalid, ..._with_blank_reason_fails_instead_of_blocking
    and invalid_stdout_fails_instead_of_silently_nooping: no block, a failed hook."""
    assert reads(0, stdout, "")[0] == "failed"


def test_reader_exit_two_blocks_with_stderr_only() -> None:
    """As exit_code_two_uses_stderr_feedback_only and ..._without_stderr_does_not_block."""
    assert reads(2, "ignored stdout", "retry with tests") == ("block", "retry with tests")
    assert reads(2, "", "   ")[0] == "failed"


def test_reader_continue_false_stops_the_session() -> None:
    """As continue_false_overrides_block_decision: continue false wins over a block."""
    assert reads(0, '{"continue":false,"stopReason":"done","decision":"block","reason":"k"}',
                 "") == ("stop", "done")


def test_reader_other_exit_status_is_ignored() -> None:
    """Any other exit status is a failed hook the harness reports and ignores."""
    assert reads(1, "", "boom") == ("failed", "hook exited with code 1")


# assay's real process, read as the harness reads it: never a failed hook.

@pytest.mark.parametrize("case", ["not_ready", "ready", "garbage", "outside", "broken_config"])
def test_cli_hook_stop_is_always_read_as_meant(tmp_path: Path, case: str) -> None:
    """Whatever the case, the harness reads a block with a reason or a plain allow."""
    project = (ready_project(tmp_path / "proj") if case == "ready"
               else gate_project(tmp_path / "proj",
                                 extra='retry_cap = "x"\n' if case == "broken_config" else ""))
    cwd = project.root
    data = _json(payload("claude-code", "stop", project, last_assistant_message="Bye."))
    if case == "garbage":
        data = b"\x00\x01"
    if case == "outside":
        cwd = tmp_path / "elsewhere"
        cwd.mkdir()
        data = _json(payload("claude-code", "stop", None, cwd=str(cwd)))
    proc = hook(project, cwd, "stop", stdin=data)
    verdict, text = reads(proc.returncode, proc.stdout.decode(), proc.stderr.decode())
    expected = "allow" if case in ("ready", "outside") else "block"
    assert verdict == expected, text
    if verdict == "block":
        assert text and len(text) <= 2000
