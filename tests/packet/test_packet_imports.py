"""The packet capability stays below the surfaces and needs no ledger."""

from __future__ import annotations

import subprocess
import sys


def test_packet_imports_no_surface_or_ledger() -> None:
    """Importing every packet module loads no ops, cli, mcp or ledger module, nor pydantic."""
    code = (
        "import sys\n"
        "import assay.packet.validate, assay.packet.render, assay.packet.lifecycle\n"
        "import assay.packet.quarantine, assay.packet.recon_check\n"
        "bad = [m for m in sys.modules if m.startswith(('assay.ops', 'assay.cli', 'assay.mcp',"
        " 'assay.ledger', 'pydantic'))]\n"
        "print(','.join(sorted(bad)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
