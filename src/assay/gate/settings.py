"""The stop gate's own configuration, as its pin holds it (:mod:`assay.intent.pin`).

:func:`gate_configuration` reads what decides how the gate judges an agent:
``[gate]`` in ``assay.toml`` (the intents that gate every session,
``on_error``, ``retry_cap``, ``default_intent``, and each of
``reviewer_keys`` with the SHA-256 of its file, null when unreadable), the gated principal
(``[gate] principal``, else ``[project] principal``), ``[evidence]
ignore`` (the paths no freshness check compares) and the entries ``hook
install`` wrote in the project's settings file of each harness (the hook
itself: without it the harness never asks). User-scope settings files live
outside the project and are not part of it.

A settings file that cannot be read is recorded as ``{"error": CODE}`` for
that harness: a pinned entry it held then reads as altered. Reads files
only; writes nothing.

Imports the base modules, config and its sibling install module.
"""

from __future__ import annotations

from typing import Any

from assay.config import Project
from assay.errors import AssayError
from assay.gate.install import assay_entries, settings_file

__all__ = ["HARNESSES", "gate_configuration"]

HARNESSES = ("claude-code", "codex", "cursor")


def gate_configuration(project: Project) -> dict[str, Any]:
    """The gate's configuration now (see the module docstring); plain JSON data."""
    hooks: dict[str, Any] = {}
    for harness in HARNESSES:
        try:
            hooks[harness] = assay_entries(settings_file(harness, "project", project.root))
        except AssayError as exc:
            hooks[harness] = {"error": exc.code}
    gate = project.gate
    return {
        "intents": sorted(gate.intents),
        "on_error": gate.on_error,
        "retry_cap": gate.retry_cap,
        "principal": project.gated_principal,
        "default_intent": gate.default_intent,
        "evidence_ignore": sorted(project.evidence_ignore),
        "hooks": hooks,
        "reviewer_keys": {p: _file_sha256(project.root / p) for p in gate.reviewer_keys},
    }


def _file_sha256(path: Any) -> str | None:
    from assay.canonical import digest_bytes
    from assay.inputs import InputRefused, read_regular

    try:
        return digest_bytes(read_regular(path, limit=64 * 1024, follow_symlinks=True,
                                         label=f"the reviewer key {path}", where="/gate"))
    except InputRefused:
        return None
