"""Assay: an evidence ledger and work governor for AI coding agents.

The public Python API is deliberately small: canonical JSON and digests,
the error types, and :func:`call`, which runs any registered operation
exactly as the CLI and the MCP server do.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__version__ = "0.1.0"

__all__ = [
    "AssayError",
    "__version__",
    "call",
    "canonical_text",
    "digest",
    "fingerprint",
]


def __getattr__(name: str) -> Any:
    # Lazy re-exports keep `import assay` (and so `assay --version`) cheap.
    if name == "AssayError":
        from assay.errors import AssayError

        return AssayError
    if name in ("canonical_text", "digest", "fingerprint"):
        from assay import canonical

        return getattr(canonical, name)
    if name == "call":
        from assay.ops import call

        return call
    raise AttributeError(f"module 'assay' has no attribute {name!r}")
