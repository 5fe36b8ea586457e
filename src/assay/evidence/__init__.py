"""Evidence: what the machine saw, gathered by assay itself.

- :mod:`assay.evidence.commands` runs declared verification commands (own
  process group, timeout kills the group, bounded redacted tails, digests of
  the full streams).
- :mod:`assay.evidence.git` observes the workspace with git plumbing and
  compares two observations (changed paths, progress state).
- :mod:`assay.evidence.posture` derives the evidence posture, a pure function
  shared with the loop governor.
- :mod:`assay.evidence.record` turns a run into an ``evidence:`` ledger record
  and runs discriminating checks in a temporary worktree.
- :mod:`assay.evidence.results` reads a run's test results file, attributes
  its requirement marks to intents and rolls them up;
  :mod:`assay.evidence.junit` parses JUnit XML; :mod:`assay.evidence.sources`
  locates and digests each mapped test's source.
- :mod:`assay.evidence.freshness` compares the workspace a run ended on with
  the workspace now.
- :mod:`assay.evidence.progress` shows a live display on a terminal.

This package imports the base modules, config and the ledger contract; it
never imports a capability above it or a surface. Submodules are imported
explicitly (nothing is re-exported here) so importing the package is free.
"""
