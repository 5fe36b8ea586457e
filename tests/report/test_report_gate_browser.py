"""The report's stop-gate section in a real headless Chromium: a give-up is red, never green."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from report_helpers import op

from assay.ops import Invocation, call
from assay_testing import make_project

pytestmark = pytest.mark.browser

SESSION = "9f1c2a4e-5b7d-4e3a-8c21-0d6f3b2a1e90"


def _stop(root: Path, continuing: bool) -> dict[str, Any]:
    data = {"session_id": SESSION, "transcript_path": "/tmp/t.jsonl", "cwd": str(root),
            "hook_event_name": "Stop", "stop_hook_active": continuing,
            "last_assistant_message": "Done."}
    inv = Invocation(surface="test")
    try:
        out: dict[str, Any] = call("hook.stop", {"payload": data}, inv)[0]["data"]
        return out
    finally:
        inv.close()


def test_report_gate_session_given_up_on_shows_red(page: Any, tmp_path: Path) -> None:
    """A session the gate gave up on, and let stop again after that, is a red badge that says
    so, in the colour of a failure, not a green "allowed"."""
    project = make_project(tmp_path / "proj", extra_toml=(
        '\n[gate]\nintents = ["knowledge:export"]\nretry_cap = 1\n'))
    op(project, "work.new", {"id": "knowledge:export", "brief": "Ship the CSV export",
                             "requirement": ["R1|requirement 1|a check passes"]})
    events = [_stop(project.root, continuing)["decision"]["event"]
              for continuing in (False, True, True)]
    assert events == ["gate_blocked", "gate_gave_up", "gate_allowed"]
    out = op(project, "report", {"intent": "knowledge:export"})
    page.goto(Path(out["path"]).as_uri(), wait_until="load")
    row = page.locator(f'#gate-sessions tr[data-session="gate-session:{SESSION}"]')
    badge = row.locator(".badge")
    assert "bad" in (badge.get_attribute("class") or "").split()
    assert badge.inner_text().endswith("allowed after the gate gave up")
    colour = badge.evaluate("el => getComputedStyle(el).color")
    bad, ok = page.evaluate("""() => {
        const probe = document.body.appendChild(document.createElement('span'));
        probe.style.color = 'var(--bad)';
        const bad = getComputedStyle(probe).color;
        probe.style.color = 'var(--ok)';
        const ok = getComputedStyle(probe).color;
        probe.remove();
        return [bad, ok];
    }""")
    assert colour == bad and colour != ok
    assert page.locator('#gate [data-code="gate_gave_up"]').count() == 1
