"""The report in a real headless Chromium: screenshot, DOM, escaping, scale."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from report_helpers import (
    HOSTILE,
    dominant_colour,
    hostile_project,
    large_project,
    mixed_project,
    op,
    wide_project,
)

from assay_testing import ASSAY

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report `assay demo --keep` writes: an intent, a two-round loop and a packet."""
    root = tmp_path_factory.mktemp("demo") / "project"
    proc = subprocess.run([ASSAY, "demo", "--keep", str(root)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    return root / "assay-report.html"


def _open(page: Any, path: Path) -> None:
    page.goto(path.as_uri(), wait_until="load")


def _png_is_not_blank(path: Path) -> bool:
    data = path.read_bytes()
    return data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000


def test_report_browser_demo_page_screenshot_and_dom(page: Any, demo_report: Path,
                                                     tmp_path: Path) -> None:
    """The demo's report renders: ready banner, three ready requirements, two rounds, the packet."""
    _open(page, demo_report)
    shot = tmp_path / "demo-report.png"
    page.screenshot(path=str(shot), full_page=True)
    assert _png_is_not_blank(shot)
    banner = page.locator("#verdict")
    assert dominant_colour(banner.screenshot()) == (0xDA, 0xFB, 0xE1)  # the green banner
    assert banner.get_attribute("data-ready") == "true"
    assert "READY TO REVIEW" in banner.inner_text()
    assert "NOT" not in banner.inner_text()
    statuses = page.locator("li.req").evaluate_all("els => els.map(e => e.dataset.status)")
    assert statuses == ["reported_complete_with_current_evidence"] * 3
    counts = page.locator("#status-counts tr[data-status] td.count").all_inner_texts()
    assert counts == ["3"]
    machine = page.locator(".evref[data-machine=true]").count()
    claimed = page.locator(".evref[data-machine=false]").count()
    assert (machine, claimed) == (2, 1)
    rounds = page.locator("#rounds tr.round").evaluate_all(
        "els => els.map(e => [e.dataset.round, e.dataset.claimed, e.dataset.observed])")
    assert rounds == [["1", "partial", "contradicted"], ["2", "success", "verified"]]
    rejected = page.locator("#rounds tr.rejection").evaluate_all(
        "els => els.map(e => [e.dataset.round, e.dataset.attempt, e.dataset.claimed])")
    assert rejected == [["2", "1", "success"]]
    assert page.locator("#loop-timeline g.round-mark").count() == 2
    assert page.locator("#loop-timeline g.rejection-mark").count() == 1
    assert page.locator("#stop-reason").text_content() == "\u25a0 stopped: completed"
    packet = page.locator("#packet")
    assert packet.get_attribute("data-valid") == "true"
    assert (packet.get_attribute("data-requested"), packet.get_attribute("data-achieved")) == (
        "quick", "quick")
    assert page.locator("#claim-states tr[data-state=supported] td.count").inner_text() == "1"
    assert page.locator("#ledger-revision").inner_text() == page.locator(
        "dd[data-key='ledger revision']").inner_text()
    assert page.errors == [] and [u for u in page.requests if not u.startswith("file:")] == []


def test_report_browser_not_ready_page(page: Any, tmp_path: Path) -> None:
    """A mixed intent shows NOT READY, each requirement's status, its issues and next steps."""
    project = mixed_project(tmp_path / "p")
    out = tmp_path / "r.html"
    op(project, "report", {"intent": "knowledge:limit", "out": str(out)})
    _open(page, out)
    page.screenshot(path=str(tmp_path / "not-ready.png"), full_page=True)
    assert _png_is_not_blank(tmp_path / "not-ready.png")
    banner = page.locator("#verdict")
    assert dominant_colour(banner.screenshot()) == (0xFF, 0xEB, 0xE9)  # the red banner
    assert banner.get_attribute("data-ready") == "false"
    assert "NOT READY TO REVIEW" in banner.inner_text()
    statuses = dict(page.locator("li.req").evaluate_all(
        "els => els.map(e => [e.dataset.id, e.dataset.status])"))
    assert statuses == {"R1": "awaiting_descendants", "R2": "failed",
                        "R3": "reported_complete_needs_evidence", "R4": "not_started"}
    assert page.locator("#req-R2 .badge.bad").first.inner_text().endswith("failed")
    codes = page.locator(".issue.blocking").evaluate_all("els => els.map(e => e.dataset.code)")
    assert codes == ["result_not_passed", "missing_evidence", "missing_result"]
    assert page.locator("#next li").count() == 3
    assert page.locator("[data-run-status=failed]").count() == 1


def test_report_browser_output_tail_behind_a_disclosure(page: Any, tmp_path: Path) -> None:
    """A command's output tail is hidden until its <details> is opened."""
    project = mixed_project(tmp_path / "p")
    out = tmp_path / "r.html"
    op(project, "report", {"intent": "knowledge:limit", "out": str(out)})
    _open(page, out)
    tail = page.locator(".evidence[data-id='evidence:red'] details[data-stream=stdout]")
    assert not tail.locator("pre").is_visible()
    tail.locator("summary").click()
    assert tail.locator("pre").inner_text().strip() == "1 failed: test_limit"


def test_report_browser_record_markup_renders_as_text(page: Any, tmp_path: Path) -> None:
    """A record holding <script> and an onerror attribute shows as text and runs nothing."""
    project = hostile_project(tmp_path / "p")
    out = tmp_path / "r.html"
    op(project, "report", {"intent": "knowledge:hostile", "out": str(out)})
    _open(page, out)
    page.locator("button[data-open='1']").click()  # the page's own script still runs
    assert page.evaluate("() => window.__pwned === undefined")
    assert page.locator("img").count() == 0
    assert page.locator("li.req .text").inner_text() == HOSTILE
    assert HOSTILE in page.locator(".brief").inner_text()
    assert HOSTILE in page.locator("details[data-stream=stdout] pre").inner_text()
    assert page.locator("details[open]").count() == page.locator("details").count() >= 1
    assert page.errors == []


def test_report_browser_thousand_requirements_small_and_whole(page: Any, tmp_path: Path) -> None:
    """An intent of 1,000 requirements makes a page under 5 MB that shows every requirement.

    How long the browser takes to render it is a benchmark row (bench_report_browser), not
    an assertion here.
    """
    project = large_project(tmp_path / "p")
    out = tmp_path / "r.html"
    data = op(project, "report", {"intent": "knowledge:large", "out": str(out)})
    assert data["bytes"] < 5 * 1024 * 1024
    _open(page, out)
    assert page.locator("li.req").count() == 1000
    assert page.locator("#verdict").get_attribute("data-ready") == "true"


def test_report_browser_thousand_distinct_runs_stay_under_bounds(page: Any, tmp_path: Path) -> None:
    """1,000 requirements each citing its own run with a 16 KiB output tail: < 5 MB, all shown.

    The render time is a benchmark row (bench_report_browser), not an assertion here.
    """
    project = wide_project(tmp_path / "p")
    out = tmp_path / "r.html"
    data = op(project, "report", {"intent": "knowledge:wide", "out": str(out)})
    assert data["bytes"] < 5 * 1024 * 1024
    assert data["publication"]["sources"] == 1001
    _open(page, out)
    assert page.locator("div.evidence").count() == 1000
    assert page.locator("li.req").count() == 1000
    first = page.locator(".evidence[data-id='evidence:run-0'] details[data-stream=stdout] pre")
    assert first.text_content().startswith("[... ")  # the shown tail is the end of the output
    assert first.text_content().endswith("PASSED\n")
