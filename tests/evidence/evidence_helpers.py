"""Helpers for evidence tests: real git repositories in tmp_path (imported by the tests)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from assay.ops import Invocation, call

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str) -> str:
    """Run git in ``cwd`` with a fixed identity; return stdout."""
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(["git", "-c", "protocol.file.allow=always", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, check=True)
    return done.stdout


def make_repo(root: Path, files: dict[str, str] | None = None) -> Path:
    """Create a git repository at ``root`` with ``files`` committed on branch main."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    for name, text in (files or {"README.md": "hello\n"}).items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


PYTHON = sys.executable



def op(root: Path, name: str, args: dict[str, Any] | None = None) -> tuple[dict[str, Any], int]:
    """Call one operation in the project at ``root``."""
    inv = Invocation(cwd=str(root))
    try:
        return call(name, args or {}, inv)
    finally:
        inv.close()
