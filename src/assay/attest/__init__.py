"""Attestations: signed in-toto statements of what assay observed, verifiable by others.

- :mod:`assay.attest.statement` builds the in-toto Statement v1 documents
  (pure): the subject (git commit, and the workspace digest when dirty), one
  ``test-result/v0.1`` predicate per cited machine run, and assay's readiness
  predicate.
- :mod:`assay.attest.signing` generates and loads ed25519 keys and signs and
  verifies DSSE envelopes through securesystemslib (imported lazily).
- :mod:`assay.attest.bundle` assembles a bundle from one ledger snapshot and
  the workspace, and verifies a bundle against the repository and the ledger.

The format is documented in docs/attestations.md. This package imports the
base modules, the ledger contract, evidence and intent; never the
operations registry or a surface. Submodules are imported explicitly.
"""
