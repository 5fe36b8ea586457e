"""The packet capability stays below the surfaces, and its kernel below its two rule sets."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_packet_imports_no_surface_or_ledger() -> None:
    """Importing every packet module loads no ops, cli, mcp or ledger module, nor pydantic."""
    code = (
        "import sys\n"
        "import assay.packet.validate, assay.packet.render, assay.packet.lifecycle\n"
        "import assay.packet.quarantine, assay.packet.recon.check\n"
        "bad = [m for m in sys.modules if m.startswith(('assay.ops', 'assay.cli', 'assay.mcp',"
        " 'assay.ledger', 'pydantic'))]\n"
        "print(','.join(sorted(bad)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_packet_contract_catches_one_rule_set_importing_the_other(tmp_path: Path) -> None:
    """A recon rule importing assay's own rule set breaks the packet's import contract."""
    src = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "assay", src / "assay",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    rule = src / "assay" / "packet" / "recon" / "sources.py"
    rule.write_text(rule.read_text() + "\nimport assay.packet.assay.rules  # across\n")
    proc = subprocess.run([str(Path(sys.executable).parent / "lint-imports"), "--no-cache",
                           "--no-logo", str(tmp_path / "pyproject.toml")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(src)}, check=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "assay.packet.recon.sources -> assay.packet.assay.rules" in proc.stdout
