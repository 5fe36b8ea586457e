"""The one validation boundary: persisted packet files -> ValidatedRun or issues.

:func:`validate` detects the layout from ``manifest.json`` and runs that
layout's rule set over the packet kernel (:mod:`assay.packet.kernel`): assay's
own (:func:`assay.packet.assay.check.check_assay`) or the recon tool's
(:func:`assay.packet.recon.check.validate_recon`). Either way every file is
read once and hashed once, and the answer is one
:class:`~assay.packet.model.Validation`: a run, or every issue (and, for a
recon-layout packet, the advisories of assay's stricter rules). Nothing here
writes except :func:`check_and_withdraw`, which removes ``packet.md`` from an
assay-layout packet that is not publishable. Imports the base modules and the
packet modules.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

from assay.packet.assay.check import check_assay
from assay.packet.kernel import one_validation
from assay.packet.layout import MANIFEST_FILE, RENDER_FILE, PacketRoot
from assay.packet.model import Validation
from assay.packet.recon.contract import is_recon_layout

__all__ = ["check_and_withdraw", "validate"]


def _recon_manifest(root: PacketRoot) -> bytes | None:
    """The bytes of ``manifest.json`` when it is in the recon tool's layout, else None."""
    raw = root.read(MANIFEST_FILE)
    if not isinstance(raw, bytes) or b"recon.packet-manifest" not in raw:
        return None
    try:
        doc = json.loads(raw.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return None
    return raw if is_recon_layout(doc) else None


def validate(directory: str | os.PathLike[str], *,
             source_roots: Sequence[str] = ()) -> Validation:
    """Compile the packet at ``directory`` once: a ValidatedRun, or every issue.

    A packet in the recon tool's layout is validated by that tool's rules
    (:func:`assay.packet.recon.check.validate_recon`), its ``file`` and
    ``repository`` sources reopened only inside ``source_roots``. Raises only
    for operational failures (``packet_not_found``, ``packet_unreadable``,
    ``packet_root_symlink``); an invalid packet is a :class:`Validation`
    with issues, sorted by file, pointer and code. Reads each referenced
    file once and hashes it once; writes nothing.
    """
    root = PacketRoot(directory)
    root.open_check()
    raw = _recon_manifest(root)
    # The parsed files are gone when a rule set returns, so the collector's
    # next pass walks what the result holds, not every file that was parsed.
    with one_validation():
        if raw is not None:
            from assay.packet.recon.check import validate_recon

            return validate_recon(root, raw, source_roots)
        return check_assay(root)


def check_and_withdraw(directory: str | os.PathLike[str], *,
                       source_roots: Sequence[str] = ()) -> tuple[Validation, bool]:
    """Validate, then withdraw ``packet.md`` unless the packet is publishable.

    Returns the validation and whether a ``packet.md`` was removed, so no
    consumer entry point from another generation survives a rejected one.
    A recon-layout packet is read in place and never written to: nothing is
    withdrawn from it.
    """
    outcome = validate(directory, source_roots=source_roots)
    withdrawn = False
    if outcome.layout == "assay" and not (outcome.valid and outcome.run is not None
                                          and outcome.run.publishable):
        withdrawn = PacketRoot(directory).remove(RENDER_FILE)
    return outcome, withdrawn
