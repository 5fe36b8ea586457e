"""The README's two fresh-machine commands, and CI running the same test command."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from foundation_cli import VENV_BIN

ROOT = Path(__file__).resolve().parents[2]
INSTALL_AND_DEMO = "python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/assay demo"
INSTALL_AND_TEST = ("python3 -m venv .venv && .venv/bin/pip install -q --no-compile -e '.[test]' && "
                    ".venv/bin/python -m pytest -q")


def _blocks(text: str) -> list[str]:
    return re.findall(r"```[a-z]*\n(.*?)```", text, re.DOTALL)


def test_readme_first_block_is_the_two_commands() -> None:
    """The README's first code block holds exactly the install-and-demo and install-and-test commands."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    first = _blocks(text)[0]
    assert first.strip().splitlines() == [INSTALL_AND_DEMO, INSTALL_AND_TEST]
    assert text.index("```") < 1500, "the commands belong near the top"


def test_ci_runs_the_readme_test_command() -> None:
    """.ci/run runs the README's test command, with the PostgreSQL URL and no standard input."""
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert INSTALL_AND_TEST in script
    assert "ASSAY_TEST_POSTGRES_URL" in script
    assert f"{INSTALL_AND_TEST} </dev/null" in script
    assert (ROOT / ".ci" / "run").stat().st_mode & 0o111


def test_readme_canonical_example_holds(tmp_path: Path) -> None:
    """The README's canonical example prints what the README says it prints."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = next(b for b in _blocks(text) if "| assay canonical" in b)
    command, expected = block.strip().splitlines()
    proc = subprocess.run(["bash", "-c", command], capture_output=True, cwd=tmp_path, timeout=60,
                          env={"PATH": f"{VENV_BIN}:/usr/bin:/bin"}, check=True)
    assert proc.stdout.decode("utf-8") == expected.removeprefix("# ") + "\n"
