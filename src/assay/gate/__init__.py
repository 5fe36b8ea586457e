"""The stop gate: an agent may stop only when the ledger shows proof.

A coding agent's harness (Claude Code, Codex, Cursor) runs a hook when the
agent is about to stop. ``assay hook stop`` answers it from the ledger: the
intents bound to the session (``[gate] intents``, ``gate bind``) and an
active loop decide whether the agent may stop, a deterministic check holds a
success claim in the agent's last message against machine evidence taken on
the current workspace, and every decision is a ledger record.

Modules:

- :mod:`assay.gate.harness`: the harnesses' payloads and answers (adapters
  at the edge: each foreign format maps onto :class:`StopEvent` and
  :class:`ShellEvent`, and back).
- :mod:`assay.gate.claim`: the success-claim phrases of a message.
- :mod:`assay.gate.records`: the gate's ledger records (bindings, session
  decisions, shell commands the harness reported) and the views that show
  them beside a readiness report.
- :mod:`assay.gate.decide`: the decision itself (readiness, the claim check,
  the retry cap).
- :mod:`assay.gate.stop`: answering a harness whatever goes wrong (where a
  hook gates, what it reads, failures), :mod:`assay.gate.watch` its own
  deadline, and :mod:`assay.gate.spool` the decisions the ledger could not
  take (counted and replayed; no authority).
- :mod:`assay.gate.jsontext` and :mod:`assay.gate.install`: the harnesses'
  hook settings files, edited in place without touching a foreign byte.

Sits above the capabilities (it reads intents, loops and the workspace) and
below the operations; nothing below it imports it.
"""
