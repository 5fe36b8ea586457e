"""Rendering ``packet.md`` from a ValidatedRun, and nothing else.

:func:`render_markdown` is pure: the same run gives the same text. It reads
only the :class:`~assay.packet.model.ValidatedRun`, never the raw files.
:func:`publish` writes it for a publishable run only: to a temporary
sibling, fsynced, renamed over ``packet.md``, then read back and its digest
verified. Imports the base modules and the packet modules.
"""

from __future__ import annotations

import os
from typing import Any

from assay.errors import AssayError
from assay.packet.layout import RENDER_FILE, PacketRoot, file_digest
from assay.packet.model import CLAIM_STATES, ValidatedRun

__all__ = ["publish", "render_markdown"]


def _line(text: str) -> str:
    return " ".join(text.split())


def render_markdown(run: ValidatedRun) -> str:
    """The packet view: header, claims by state, contradictions, gaps, assurance."""
    evidence = {e.evidence_id: e for e in run.evidence}
    out: list[str] = [
        f"# Research packet: {_line(run.objective)}",
        "",
        f"- Run: `{run.run_id}`; ledger revision {run.ledger_revision}",
        f"- Identity: `{run.identity}`",
        f"- Publication: **{run.publication or 'not publishable'}** (status `{run.status}`)",
        f"- Profile: requested `{run.requested}`, achieved `{run.achieved or 'none'}`",
    ]
    if run.approved_at:
        out.append(f"- Execution approved at {run.approved_at} "
                   f"(`{run.execution_fingerprint}`)")
    out.append("")
    if run.questions:
        out += ["## Questions", ""] + [f"- {_line(q)}" for q in run.questions] + [""]
    if run.synthesis:
        out += ["## Synthesis", "", run.synthesis.strip(), ""]

    out += ["## Claims by state", ""]
    for state in CLAIM_STATES:
        claims = [c for c in run.claims if c.state == state]
        if not claims:
            continue
        out += [f"### {state.capitalize()} ({len(claims)})", ""]
        for claim in claims:
            out.append(f"- **{claim.claim_id}**: {_line(claim.statement)} "
                       f"_(assurance: {claim.assurance})_")
            for link in claim.links:
                record = evidence.get(link.evidence_id)
                where = f"{record.source_id}, {record.state}" if record else "unknown"
                excerpt = _line(record.excerpt)[:200] if record else ""
                out.append(f"  - {link.relation} `{link.evidence_id}` ({where}): \"{excerpt}\"")
        out.append("")

    out += ["## Contradictions and Qualifications", ""]
    noted = False
    for claim in run.claims:
        against = [x.evidence_id for x in claim.links if x.relation == "contradicts"]
        qualifying = [x.evidence_id for x in claim.links if x.relation == "qualifies"]
        if claim.state != "contested" and not against and not qualifying \
                and not claim.qualifications:
            continue
        noted = True
        out.append(f"- **{claim.claim_id}** ({claim.state}): {_line(claim.statement)}")
        if against:
            out.append(f"  - contradicted by {', '.join(f'`{e}`' for e in against)}")
        if qualifying:
            out.append(f"  - qualified by {', '.join(f'`{e}`' for e in qualifying)}")
        for text in claim.qualifications:
            out.append(f"  - qualification: {_line(text)}")
    if not noted:
        out.append("None recorded.")
    out.append("")

    out += ["## Gaps", ""]
    if run.gaps:
        for gap in sorted(run.gaps, key=lambda g: (not g.material, g.gap_id)):
            label = "material" if gap.material else "not material"
            mode = f" `{gap.mode}`" if gap.mode else ""
            out.append(f"- **{gap.gap_id}** {gap.kind}{mode}, {label}: {_line(gap.description)}")
    else:
        out.append("None recorded.")
    if run.unresolved_questions:
        out += ["", "Unresolved questions:", ""]
        out += [f"- {_line(q)}" for q in run.unresolved_questions]
    out.append("")

    out += ["## Assurance", "", "| pass | complete | artifacts | gaps |", "|---|---|---|---|"]
    for outcome in run.passes:
        out.append(f"| {outcome.mode} | {'yes' if outcome.complete else 'no'} | "
                   f"{len(outcome.artifacts)} | {', '.join(outcome.gap_ids) or '-'} |")
    states: dict[str, int] = {}
    for record in run.evidence:
        states[record.state] = states.get(record.state, 0) + 1
    shown = ", ".join(f"{k} {v}" for k, v in sorted(states.items())) or "none"
    note = (f"Evidence by locator state: {shown}. Only exact and redacted-exact "
            "evidence counts toward assurance.")
    out += ["", note, ""]
    if run.sources:
        out += ["Sources:", ""]
        out += [f"- `{s.source_id}` {s.type} ({s.state}): {_line(s.title)}" for s in run.sources]
        out.append("")
    return "\n".join(out)


def publish(directory: str | os.PathLike[str], run: ValidatedRun) -> dict[str, Any]:
    """Write ``packet.md`` for a publishable run; return its path and digest.

    Refuses (``packet_not_publishable``) a run that is not complete or
    partial. The text goes to a temporary sibling, is fsynced and renamed,
    then read back; a digest that does not match is ``render_verify_failed``.
    """
    if not run.publishable:
        raise AssayError(f"run status {run.status!r} is not publishable",
                         code="packet_not_publishable",
                         action="Only complete or honest partial packets are rendered.")
    root = PacketRoot(directory)
    data = render_markdown(run).encode("utf-8")
    root.write(RENDER_FILE, data)
    back = root.read(RENDER_FILE)
    expected = file_digest(data)
    if not isinstance(back, bytes) or file_digest(back) != expected:
        root.remove(RENDER_FILE)
        raise AssayError("packet.md changed while it was being published",
                         code="render_verify_failed", retryable=True)
    return {"path": RENDER_FILE, "digest": expected, "bytes": len(data)}
