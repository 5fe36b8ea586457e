"""The report page in headless Chromium: how long a large page takes to load and render.

Two pages of 1,000 requirements (quick mode: 200): every requirement citing
one shared run, and every requirement citing its own run with a 16 KiB
output tail (the project ``bench_report`` builds). Each row times loading
the page (``wait_until="load"``) and counting its requirement items, in a
fresh tab, against the baseline of the same number of bytes as one
escaped ``pre`` block: what the browser pays for the bytes alone. The
goal is the bound the browser tests once asserted (3 s); the tests now check
only what the page shows.

Needs ``/usr/bin/chromium`` (Debian's; the browser tests install it) and
Playwright; without them the module returns no rows and says why.
"""

from __future__ import annotations

import html
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from assay.ops import Invocation, call
from bench.bench_report import _project
from bench.harness import row

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def _report(root: Path, out: Path) -> int:
    inv = Invocation(cwd=str(root), surface="bench")
    try:
        envelope, _ = call("report", {"intent": "knowledge:bench", "out": str(out)}, inv)
    finally:
        inv.close()
    return int(envelope["data"]["bytes"])


def _load(browser: Any, path: Path, selector: str) -> float:
    """Seconds to load ``path`` in a new page and count ``selector`` once."""
    page = browser.new_page()
    try:
        start = time.perf_counter()
        page.goto(path.as_uri(), wait_until="load")
        page.locator(selector).count()
        return time.perf_counter() - start
    finally:
        page.close()


def run(quick: bool) -> list[dict[str, Any]]:
    if not os.path.exists(CHROMIUM):
        print(f"bench_report_browser: {CHROMIUM} is missing; no rows", file=sys.stderr)
        return []
    from playwright.sync_api import sync_playwright

    count = 200 if quick else 1000
    runs = 3 if quick else 5
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-browser-") as tmp, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            for label, distinct in (("one shared run", 1), ("each its own run", count)):
                root = Path(tmp) / f"p{distinct}"
                _project(root, count, distinct)
                page = Path(tmp) / f"report{distinct}.html"
                size = _report(root, page)
                plain = Path(tmp) / f"plain{distinct}.html"
                plain.write_text("<!DOCTYPE html><pre>" + html.escape("x" * (size - 30))
                                 + "</pre>", encoding="utf-8")
                samples: dict[str, list[float]] = {"report": [], "plain": []}
                _load(browser, page, "li.req")
                _load(browser, plain, "pre")
                for _ in range(runs):  # interleaved, so load hits both alike
                    samples["report"].append(_load(browser, page, "li.req"))
                    samples["plain"].append(_load(browser, plain, "pre"))
                rows.append(row(
                    f"report page load and render, {count} requirements citing {label}",
                    assay=statistics.median(samples["report"]) * 1000,
                    baseline=statistics.median(samples["plain"]) * 1000,
                    baseline_name="the same bytes as one pre block", unit="ms", runs=runs,
                    spread=(max(samples["report"]) - min(samples["report"])) * 1000,
                    goal="< 3000 ms", note=f"{size:,} bytes of HTML"))
        finally:
            browser.close()
    return rows
