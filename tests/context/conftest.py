"""Fixtures for the work-context tests: goal files written to real paths."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def goal_file(tmp_path: Path):
    """Write a goal file (text or bytes) under tmp_path and return its path."""

    def write(content: str | bytes, name: str = "goal.md") -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
        return path

    return write


class ContextProject:
    """A project on disk with one registered goal, driven through the operations registry."""

    def __init__(self, root: Path, db: str) -> None:
        self.root = root
        self.db = db
        self.goal = root / "goals" / "parser.md"

    def store(self):
        """Open this project's ledger (the caller closes it)."""
        from assay.ledger import open_store

        return open_store(self.db)

    def call(self, name: str, **args: object) -> dict:
        """Run an operation that must succeed; return its envelope."""
        from assay.ops import Invocation, call

        inv = Invocation(cwd=str(self.root), db=self.db)
        try:
            envelope, _ = call(name, args, inv)
        finally:
            inv.close()
        return envelope

    def data(self, name: str, **args: object) -> dict:
        return self.call(name, **args)["data"]

    def fail(self, name: str, **args: object):
        """Run an operation that must fail; return the AssayError."""
        from assay.errors import AssayError

        with pytest.raises(AssayError) as info:
            self.call(name, **args)
        return info.value

    def revision(self) -> str:
        return self.data("goal.read", goal_id="parser")["revision"]


@pytest.fixture
def ctx(tmp_path: Path, ledger_url: str) -> ContextProject:
    """A project with goal 'parser' at goals/parser.md (explicit regions), once per backend."""
    from context_docs import EXPLICIT

    from assay_testing import create_ledger

    root = tmp_path / "proj"
    (root / "goals").mkdir(parents=True)
    (root / ".assay").mkdir()
    (root / "assay.toml").write_text(
        '[project]\nname = "demo"\n\n[goals.parser]\npath = "goals/parser.md"\n',
        encoding="utf-8")
    (root / "goals" / "parser.md").write_text(EXPLICIT, encoding="utf-8")
    create_ledger(root, ledger_url)
    return ContextProject(root, ledger_url)
