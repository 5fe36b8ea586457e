"""Research packets: a directory of typed artifacts with one validation boundary.

A packet is ``manifest.json`` and ``claims.json`` (the two canonical files),
review briefs and results under ``reviews/``, worker dossiers under
``raw/dossiers/``, unreviewed worker output under ``raw/drafts/`` and
rejected output under ``raw/quarantine/``. :func:`assay.packet.validate.validate`
compiles the persisted files exactly once into an immutable
:class:`~assay.packet.model.ValidatedRun` or a list of coded issues;
rendering reads only that value.

This package imports the base modules (errors, canonical, ids) only; it never
imports the ledger, operations or a surface. See ``docs/packet.md``.
"""

from __future__ import annotations

__all__: list[str] = []
