"""The review report: one self-contained HTML page rendered from plain data.

:func:`assay.report.html.render` turns a report document (a JSON-like dict
that the ``report`` operation gathers from one ledger snapshot, see
:mod:`assay.ops.report`) into HTML text. It is a pure function: the same
document gives byte-identical HTML, and nothing in it reads a clock, the
disk, the network or the ledger.

This package sits between the capabilities and the operations registry: the
``report`` operation calls it, and it imports only the base modules (it never
imports ``assay.ops``, a capability or a surface).
"""

from __future__ import annotations

__all__ = ["render"]


def __getattr__(name: str) -> object:
    if name == "render":
        from assay.report.html import render

        return render
    raise AttributeError(name)
