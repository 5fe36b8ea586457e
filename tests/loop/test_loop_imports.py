"""The loop's modules import one another in one direction only."""

from __future__ import annotations

import grimp


def test_loop_modules_form_no_import_circle() -> None:
    """No loop module imports, at top level or inside a function, one that imports it back."""
    graph = grimp.build_graph("assay")
    modules = sorted(m for m in graph.modules if m.startswith("assay.loop."))
    circles = [(a, b) for a in modules for b in graph.find_modules_directly_imported_by(a)
               if b.startswith("assay.loop.") and graph.chain_exists(importer=b, imported=a)]
    assert circles == []
