"""Options and fixtures of the multi-agent soak (``-m soak``; not in the default run).

``--seconds N`` bounds each soak run (default 60; ``ASSAY_SOAK_SECONDS`` works
too). The option is registered here, so name this directory on the command
line: ``python -m pytest tests/soak -m soak --seconds 60``.
"""

from __future__ import annotations

import os

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--seconds", type=float, default=None,
                     help="how long each soak run lasts (default 60, or ASSAY_SOAK_SECONDS)")


@pytest.fixture
def soak_seconds(request: pytest.FixtureRequest) -> float:
    """The soak duration in seconds."""
    value = request.config.getoption("--seconds", default=None)
    if value is None:
        value = float(os.environ.get("ASSAY_SOAK_SECONDS", "60"))
    return float(value)
