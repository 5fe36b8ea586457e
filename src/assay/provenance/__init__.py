"""Provenance: dependency envelopes, audience rules and the publication gate.

- :mod:`assay.provenance.envelope`: the envelope value (merge, limits, hash,
  contains, effective audience); pure.
- :mod:`assay.provenance.admission`: closures read from the ledger and the
  current check of each leaf, with unavailable lines.
- :mod:`assay.provenance.publish`: the gate every writer of derived content
  calls before persisting or handing it out.
- :mod:`assay.provenance.saved`: ``note:`` and ``memory:`` records.
- :mod:`assay.provenance.pending`: pending questions and proposals.

This package imports the base modules, config and the ledger only; it never
imports an operation or a surface.
"""
