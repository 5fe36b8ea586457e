"""The gate and pins: the gate's configuration as pinned, a stop on unpinned checks, the config key."""

from __future__ import annotations

from pathlib import Path

import pytest
from gate_helpers import gate_project, op, payload, record_intent, stop

from assay.config import load_project
from assay.errors import AssayError
from assay.gate.settings import gate_configuration
from assay.intent.contract import intent_sha256


def test_gate_configuration_reads_gate_ignore_and_hook_entries(tmp_path: Path) -> None:
    """[gate], the gated principal, [evidence] ignore and assay's hook entries per harness."""
    project = gate_project(tmp_path / "proj", extra='retry_cap = 3\n\n[evidence]\nignore = ["b", "a"]\n')
    op(project, "hook.install", harness="claude-code")
    config = gate_configuration(load_project(project.root))
    assert {k: config[k] for k in ("intents", "on_error", "retry_cap", "principal",
                                   "default_intent", "evidence_ignore")} == {
        "intents": ["knowledge:export"], "on_error": "block", "retry_cap": 3,
        "principal": "agent", "default_intent": None, "evidence_ignore": ["a", "b"]}
    stop_entries = config["hooks"]["claude-code"]["Stop"]
    assert len(stop_entries) == 1 and "hook stop --harness claude-code" in \
        stop_entries[0]["hooks"][0]["command"]
    assert (config["hooks"]["codex"], config["hooks"]["cursor"]) == (None, None)


def test_gate_configuration_unreadable_settings_file_is_recorded(tmp_path: Path) -> None:
    """A settings file that is not strict JSON is that harness's error code, not a crash."""
    project = gate_project(tmp_path / "proj")
    (project.root / ".codex").mkdir()
    (project.root / ".codex" / "hooks.json").write_text("{,}", encoding="utf-8")
    config = gate_configuration(load_project(project.root))
    assert config["hooks"]["codex"] == {"error": "hook_settings_invalid"}


def test_hook_stop_unpinned_checks_block(tmp_path: Path) -> None:
    """Results written by hand on a real run (no accept, so no pin): the stop is blocked."""
    project = gate_project(tmp_path / "proj")
    record_intent(project)
    run = op(project, "evidence.run", name="unit", target=["knowledge:export#R1"])
    record = op(project, "get", id="knowledge:export")["record"]
    data = {**record["data"], "acceptance": {
        "intent_sha256": intent_sha256(record["data"]["intent"]), "blockers": [],
        "results": [{"requirement_id": "R1", "status": "passed", "notes": "ran it",
                     "evidence": [{"id": "evidence:unit", "revision": run["receipt"]["revision"]}]}]}}
    op(project, "put", id="knowledge:export", data=data, expect_revision=record["revision"])
    assert op(project, "work.check", id="knowledge:export")["ready_to_review"] is True
    reason = stop(project, payload("claude-code", "stop", project))["answer"]["reason"]
    assert "the checks knowledge:export rests on were never pinned" in reason
    assert "'assay work accept --from-run evidence:unit@1 -- knowledge:export'" in reason


@pytest.mark.parametrize("value", ['"export"', "7"])
def test_gate_config_default_intent_must_be_a_record_id(tmp_path: Path, value: str) -> None:
    """[gate] default_intent that is not a record id: invalid_config at /gate/default_intent."""
    project = gate_project(tmp_path / "proj", gate=f"default_intent = {value}")
    with pytest.raises(AssayError) as info:
        load_project(project.root)
    assert (info.value.code, info.value.pointer) == ("invalid_config", "/gate/default_intent")
