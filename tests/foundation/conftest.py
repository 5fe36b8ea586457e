"""Fixtures for the foundation tests: the installed console script, run for real."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

VENV_BIN = Path(sys.executable).parent
ASSAY = VENV_BIN / "assay"


class Ran:
    """The outcome of one ``assay`` subprocess."""

    def __init__(self, proc: subprocess.CompletedProcess[bytes]) -> None:
        self.code = proc.returncode
        self.stdout = proc.stdout.decode("utf-8")
        self.stderr = proc.stderr.decode("utf-8")

    def json(self) -> Any:
        return json.loads(self.stdout)

    def error(self) -> dict[str, Any]:
        """The error object printed on stderr (exactly one JSON line)."""
        lines = self.stderr.strip().splitlines()
        assert len(lines) == 1, self.stderr
        envelope = json.loads(lines[0])
        assert envelope["ok"] is False
        return envelope["error"]


@pytest.fixture
def assay_cli(tmp_path: Path) -> Callable[..., Ran]:
    """Run the venv's ``assay`` console script with pipes (never a TTY) in ``tmp_path``."""

    def run(*args: str, stdin: bytes | str = b"", cwd: Path | None = None,
            env: dict[str, str] | None = None) -> Ran:
        data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
        full_env.update(env or {})
        proc = subprocess.run([str(ASSAY), *args], input=data, capture_output=True,
                              cwd=cwd or tmp_path, env=full_env, timeout=60, check=False)
        return Ran(proc)

    return run


@pytest.fixture
def anyio_backend() -> str:
    """MCP tests run on asyncio, the backend the server uses."""
    return "asyncio"
