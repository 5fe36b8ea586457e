"""Helpers for the foundation tests: the installed console script, run for real.

A plain module with a unique name (not a conftest.py): several test
directories import modules by bare name, and a second ``conftest`` module
would shadow another directory's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


def run_assay(*args: str, cwd: Path, stdin: bytes | str = b"",
              env: dict[str, str] | None = None) -> Ran:
    """Run the venv's ``assay`` console script with pipes (never a TTY) in ``cwd``.

    ``ASSAY_*`` variables of the calling environment are dropped so that a
    developer's settings cannot leak into a test.
    """
    data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
    full_env.update(env or {})
    proc = subprocess.run([str(ASSAY), *args], input=data, capture_output=True,
                          cwd=cwd, env=full_env, timeout=60, check=False)
    return Ran(proc)


def cli_in(cwd: Path) -> Callable[..., Ran]:
    """``run_assay`` with ``cwd`` defaulting to ``cwd``; each test module makes it a fixture."""

    def run(*args: str, cwd: Path | None = None, **kw: Any) -> Ran:
        return run_assay(*args, cwd=cwd or default, **kw)

    default = cwd
    return run


Runner = Callable[..., Ran]

