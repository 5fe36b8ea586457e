"""Intent: what was asked, how it is accepted, and whether it is ready for review.

- :mod:`assay.intent.contract` validates intent record data exactly (closed
  objects, JSON pointers, ``invalid_intent_contract``) and publishes its
  JSON Schema.
- :mod:`assay.intent.check` computes the ``work check`` report from one
  reader snapshot and the project binding (a pure function of both).
- :mod:`assay.intent.continuity` selects what to read before continuing,
  within 256 nodes, 1,024 edges and 128 KiB.
- :mod:`assay.intent.decisions` replays ``decision-event:`` streams.
- :mod:`assay.intent.views` holds ``work status``, ``work history`` and
  ``work attention``; :mod:`assay.intent.capture` the read-only capture
  draft; :mod:`assay.intent.checkpoint` handoff records and the resume view.
- :mod:`assay.intent.snapshot` holds the project binding and in-memory
  readers (a given set of versions, or the ledger as of a past revision).

This package imports the base modules and the ledger contract (and, for
handoffs, provenance); it never imports the operations registry or a surface.
Submodules are imported explicitly; nothing is re-exported here.
"""
