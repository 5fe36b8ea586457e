"""Work context: goal files with generated todo regions, todos, exact reads, heartbeat context.

- :mod:`assay.context.goal`: reading goal markdown with strict region ownership,
  and regenerating only the marked regions.
- :mod:`assay.context.todo`: todos as ``todo:`` ledger records, their writes
  and their exact and inventory read projections.
- :mod:`assay.context.refs`: response-local ``$ref`` de-duplication and
  :func:`~assay.context.refs.expand`.
- :mod:`assay.context.work_context`: the heartbeat work context.

This package imports errors, canonical, ids, config and the ledger; never a
surface or the operations registry.
"""
