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
- :mod:`assay.intent.snapshot` holds the project binding (with the project's
  state now: workspace, checks, gate) and in-memory readers (a given set of
  versions, or the ledger as of a past revision).
- :mod:`assay.intent.acceptance` merges results into acceptance;
  :mod:`assay.intent.test_outcomes` reads what one run says of one
  requirement of one intent; :mod:`assay.intent.pin` pins the checks and
  tests an intent relies on and the gate's configuration, and compares.

This package imports the base modules, config, the ledger contract and
evidence (and, for handoffs, provenance); it never imports the operations
registry or a surface.
Submodules are imported explicitly; nothing is re-exported here.
"""
