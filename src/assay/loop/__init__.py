"""The loop governor: rounds under a contract, judged by what the machine saw.

Cut like a resolver (engine, caller policy, reporter):

- :mod:`assay.loop.engine`: the :class:`~assay.loop.engine.Governor`, which
  accepts one submission at a time and commits one round transaction.
- :mod:`assay.loop.policy`: the stop policy the caller supplies
  (:class:`~assay.loop.policy.StopPolicy`, default
  :class:`~assay.loop.policy.DefaultStopPolicy`) and the reporter of no-op
  progress hooks (:class:`~assay.loop.policy.Reporter`).
- Pure parts: :mod:`~assay.loop.models` (wire documents),
  :mod:`~assay.loop.identity` (content ids), :mod:`~assay.loop.submission`
  (normalisation), :mod:`~assay.loop.contract` (round contracts),
  :mod:`~assay.loop.state` (compiled facts and their transitions),
  :mod:`~assay.loop.gate` (item statuses, findings, posture),
  :mod:`~assay.loop.prompt` (the prompt, one swappable function),
  :mod:`~assay.loop.guidance` (submission guidance and receipts).
- Ledger I/O: :mod:`~assay.loop.session` (records, leases, start, resume,
  stop, status).

This package imports the base modules, config, the ledger contract and the
evidence capability; never ops, cli or mcp. Submodules are imported
explicitly; importing the package is free.
"""
