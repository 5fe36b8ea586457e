"""Fixtures for report tests: Debian's Chromium driven headless through Playwright.

The browser tests need ``/usr/bin/chromium``. When it is missing and the
tests run as root, the session installs it (``apt-get install -y chromium``,
after ``apt-get update`` if needed), as ``.ci/run`` does. When it cannot be
installed the tests skip with the reason, except under ``CI`` (set and not
``0``/``false``), where a missing browser fails them. Playwright's own browser
download (``playwright install``) is never used. Parallel test workers install
it one at a time (a lock file in the temporary directory); each browser keeps
its profile in a temporary directory of its own.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


def _install() -> str:
    """Install Debian's chromium; return '' on success, else why it failed."""
    if os.geteuid() != 0:
        return "not root, so apt-get cannot install chromium"
    if shutil.which("apt-get") is None:
        return "apt-get is not available"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    attempts = (["apt-get", "install", "-y", "-qq", "chromium"],
                ["apt-get", "update", "-qq"],
                ["apt-get", "install", "-y", "-qq", "chromium"])
    last = ""
    for argv in attempts:
        proc = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=900, check=False)
        if argv[1] == "install" and proc.returncode == 0 and os.path.exists(CHROMIUM):
            return ""
        last = proc.stderr.strip()[-400:]
    return f"apt-get install chromium failed: {last}"


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """The Chromium executable, installed if missing (skips outside CI when impossible)."""
    if not os.path.exists(CHROMIUM):
        with open(Path(tempfile.gettempdir()) / "assay-tests-chromium.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # another worker may be installing it right now
            why = "" if os.path.exists(CHROMIUM) else _install()
        if why:
            if _in_ci():
                pytest.fail(f"CI needs {CHROMIUM} for the browser tests: {why}")
            pytest.skip(f"{CHROMIUM} is missing and {why}; run 'apt-get install -y chromium' "
                        "as root to run the browser tests")
    return CHROMIUM


@pytest.fixture(scope="module")
def browser(chromium_path: str) -> Iterator[Any]:
    """One headless Chromium per test module.

    Playwright's sync API keeps an event loop on the main thread while it
    runs; stopping it with the module leaves later asyncio tests a clean
    thread.
    """
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=chromium_path, args=ARGS)
        try:
            yield instance
        finally:
            instance.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh page that records console errors and any network request."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    page.errors = []  # type: ignore[attr-defined]
    page.requests = []  # type: ignore[attr-defined]
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    page.on("request", lambda request: page.requests.append(request.url))
    try:
        yield page
    finally:
        context.close()


def open_report(page: Any, path: Path) -> None:
    """Load a report file into ``page`` and wait until it has rendered."""
    page.goto(path.as_uri(), wait_until="load")
