"""The ``report`` operation: gather one snapshot, pass the publication gate, write HTML.

The handler reads everything the page shows from one ledger reader (the
intent's readiness report, the current version of every evidence record it
cites, the loop head and its committed rounds), validates the packet
directory if one is named, and builds a plain report document. Before the
page is written, the exact record versions whose content it shows go
through the publication gate (:mod:`assay.provenance.publish`); a withheld
source means no page (``publication_withheld``). The rendering itself is
:func:`assay.report.html.render`, a pure function of the document.

Handlers import capabilities lazily so the registry stays cheap to load.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from assay.errors import AssayError, UsageError
from assay.ops import Argument, Invocation, Result, operation
from assay.ops.outfile import OutFile, named_path

# Bytes of a non-evidence record's data shown in the page (its digest covers all of it).
_DATA_LIMIT = 4000
# Rejected attempts read per round at most (a loop stops long before: max_rejections).
_MAX_ATTEMPTS = 1000


@operation(
    "report",
    destructive=True,
    idempotent=True,
    view="report:report_written",
    busy="reading the ledger snapshot and writing the report",
    summary="Write a self-contained HTML review report: requirements, evidence, loop, packet.",
    description=(
        "Reads one ledger snapshot and writes one HTML file (no network, inline CSS and SVG): "
        "the intent's requirement tree with delta statuses, acceptance, cited evidence "
        "(machine-observed or claimed, revision, digest, command, exit, duration, output "
        "tails), issues and next actions; the loop's rounds (outcome claimed versus posture "
        "observed, contract items, stop reason) as an SVG timeline; the packet's requested "
        "versus achieved profile, claims by state and material gaps; the ledger revision and "
        "a ready_to_review banner. The record versions shown pass the publication gate first "
        "(publication_withheld otherwise, nothing written). Writes the HTML file only "
        "(default .assay/report.html), nothing to the ledger. Same ledger revision and "
        "arguments: byte-identical HTML."
    ),
    writes=True,
    writes_ledger=False,
    effect="Writes one HTML file (`out`, default .assay/report.html); nothing to the ledger.",
    arguments=(
        Argument("intent", {"type": "string", "minLength": 1},
                 "The intent record id (knowledge:NAME) whose readiness the page shows."),
        Argument("loop", {"type": "string", "minLength": 1},
                 "A loop id whose rounds the page shows."),
        Argument("packet", {"type": "string", "minLength": 1},
                 "A research packet directory whose assurance the page shows."),
        Argument("out", {"type": "string", "minLength": 1},
                 "Where to write the HTML (default: .assay/report.html in the project, or "
                 "report.html in the current directory for a packet outside any project)."),
    ),
    output_schema={
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "bytes": {"type": "integer"},
            "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
            "ledger_revision": {"type": ["integer", "null"]},
            "ready_to_review": {"type": ["boolean", "null"]},
            "sections": {"type": "array", "items": {"enum": ["intent", "loop", "packet"]}},
            "publication": {"type": "object"},
        },
        "required": ["path", "bytes", "sha256", "ledger_revision", "ready_to_review", "sections",
                     "publication"],
    },
)
def report(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay import __version__
    from assay.canonical import digest_bytes
    from assay.report.html import render

    if not any(args.get(k) for k in ("intent", "loop", "packet")):
        raise UsageError("name what the report shows: --intent, --loop and/or --packet",
                         code="missing_argument", pointer="/intent",
                         action="Run 'assay work status' or 'assay find --kind loop' for ids.")
    in_project = _in_project(inv, needed=bool(args.get("intent") or args.get("loop")))
    path = _out_path(inv, args.get("out"), in_project)
    _out_file(path).refuse_non_regular()
    loop_id = None
    if args.get("loop"):
        from assay.loop.session import resolve_loop

        loop_id = resolve_loop(inv.store(), inv.project().scope, args["loop"])
    packet = _packet(args["packet"], inv.cwd) if args.get("packet") else None
    if in_project:
        doc, batches = _snapshot(inv, args.get("intent"), loop_id)
    else:  # a packet outside any project: nothing from a ledger to show or to gate
        doc, batches = {"project": {}, "ledger": {}, "intent": None, "loop": None}, []
    doc["packet"] = packet
    doc["assay_version"] = __version__
    doc["publication"] = _publish(inv, batches)
    text = render(doc).encode("utf-8")
    _out_file(path).write(text)
    intent = doc.get("intent")
    data = {
        "path": str(path),
        "bytes": len(text),
        "sha256": digest_bytes(text),
        "ledger_revision": doc["ledger"].get("revision"),
        "ready_to_review": intent["report"]["ready_to_review"] if intent else None,
        "sections": [k for k in ("intent", "loop", "packet") if doc.get(k)],
        "publication": doc["publication"],
    }
    return Result(data, ledger_revision=doc["ledger"].get("revision"),
                  next=(f"Open {path} in a browser.",))


def _snapshot(inv: Invocation, intent_id: str | None, loop_id: str | None
              ) -> tuple[dict[str, Any], list[Any]]:
    """The report document's ledger part and the gate batches, from one reader."""
    from assay.provenance.admission import envelope_of_versions

    project = inv.project()
    versions: dict[str, int] = {}
    doc: dict[str, Any] = {"project": {"scope": project.scope}, "intent": None, "loop": None}
    with inv.store().reader() as reader:
        doc["ledger"] = {"revision": reader.ledger_revision, "epoch": reader.epoch}
        if intent_id:
            doc["intent"] = _intent(inv, reader, intent_id, versions)
        if loop_id:
            doc["loop"] = _loop(reader, loop_id, versions)
        envelopes = [envelope_of_versions(reader, {rid: rev}) for rid, rev in sorted(versions.items())]
        batches = _batches(reader, envelopes)
    return doc, batches


def _intent(inv: Invocation, reader: Any, intent_id: str, versions: dict[str, int]
            ) -> dict[str, Any]:
    from assay.canonical import canonical_text
    from assay.gate.records import with_gate_issues
    from assay.intent.check import fetch_visible, raw_read, work_check
    from assay.intent.snapshot import ProjectBinding

    project = inv.project()
    binding = ProjectBinding(root=str(project.root), scope=project.scope,
                             admitted_scopes=tuple(project.admitted_scopes),
                             principal=inv.principal)
    checked = with_gate_issues(reader, binding.evidence_scopes,
                               work_check(reader, binding, intent_id))
    if checked["intent_sha256"] is not None:
        # A damaged intent shows nothing of its content (only its id and the
        # read of its stored text), so it is no source of the page.
        versions[checked["intent_record_id"]] = checked["intent_revision"]
    cited: list[str] = []
    for result in checked["actual"].get("results", []):
        for ref in result.get("evidence", []):
            if ref["id"] not in cited:
                cited.append(ref["id"])
    found, failures = fetch_visible(reader, cited, binding.principal) if cited else ({}, {})
    scopes = set(binding.evidence_scopes)
    evidence: dict[str, Any] = {}
    for record_id in cited:
        record = found.get(record_id)
        if record is None:
            why = failures.get(record_id, ("evidence_missing", "not found or not readable"))[1]
            evidence[record_id] = {"unavailable": why, "machine_observed": False}
            continue
        if record.damage is not None:
            # Never shown, never gated: the page names the damage and the read.
            evidence[record_id] = {
                "revision": record.revision, "machine_observed": False,
                "unavailable": f"unreadable: {record.damage.message}",
                "read": ["assay", *raw_read(record.id, record.revision)]}
            continue
        if record.status != "current" or record.scope not in scopes:
            why = (f"the record is {record.status}" if record.status != "current"
                   else f"the record is in {record.scope}, outside this project")
            evidence[record_id] = {"revision": record.revision, "unavailable": why,
                                   "machine_observed": record.is_machine_observed}
            continue
        versions[record.id] = record.revision
        data = record.data if isinstance(record.data, dict) else {}
        summary: dict[str, Any] = {
            "revision": record.revision, "origin": record.origin, "status": record.status,
            "data_sha256": record.data_sha256, "machine_observed": record.is_machine_observed,
        }
        observation = data.get("observation")
        if isinstance(observation, dict) and record.kind == "evidence":
            summary["observation"] = {k: observation.get(k) for k in (
                "status", "exit_code", "signal", "reason", "duration_ms", "argv", "cwd",
                "started_at", "stdout", "stderr")}
        else:
            text = canonical_text(record.data)
            summary["data_text"] = text[:_DATA_LIMIT] + ("..." if len(text) > _DATA_LIMIT else "")
        evidence[record_id] = summary
    return {"report": checked, "evidence": evidence, "gate": _gate(reader, binding, checked,
                                                                   versions)}


def _gate(reader: Any, binding: Any, checked: dict[str, Any], versions: dict[str, int]
          ) -> dict[str, Any] | None:
    """What the stop gate answered for the intent, and the shell commands harnesses reported."""
    from assay.gate.records import gate_view

    if checked["intent_sha256"] is None:
        return None
    view = gate_view(reader, binding.evidence_scopes, checked["intent_record_id"], commands=True)
    versions.update(view.pop("versions"))
    return view


def _loop(reader: Any, loop_id: str, versions: dict[str, int]) -> dict[str, Any]:
    from assay.loop.identity import head_id, rejection_id, round_id
    from assay.loop.session import HEAD_SCHEMA, session_not_found

    head = reader.get(head_id(loop_id))
    if head is None or not isinstance(head.data, dict) or head.data.get("schema") != HEAD_SCHEMA:
        raise session_not_found(loop_id)
    versions[head.id] = head.revision
    rounds = []
    rejections = []
    last = int(head.data.get("lastCommittedRound") or 0)
    held_round = int(head.data.get("round") or 0)
    for n in range(1, max(last, held_round) + 1):
        # The attempts before the committed (or held) one were rejected. Bounding
        # them so keeps out records of a branch abandoned by a recovery, which
        # stay in the ledger under the same ids.
        upto = 0
        if n <= last:
            record = reader.get(round_id(loop_id, n))
            if record is not None and isinstance(record.data, dict):
                versions[record.id] = record.revision
                rounds.append(record.data)
                upto = int(record.data.get("attempt") or 1)
        elif n == held_round:
            # A rejection moves the head to the next attempt, even when it stops the loop.
            upto = int(head.data.get("attempt") or 1)
        for attempt in range(1, min(upto, _MAX_ATTEMPTS + 1)):
            rejected = reader.get(rejection_id(loop_id, n, attempt))
            if rejected is None or not isinstance(rejected.data, dict):
                break
            versions[rejected.id] = rejected.revision
            rejections.append(rejected.data)
    return {"head": head.data, "rounds": rounds, "rejections": rejections}


def _batches(reader: Any, envelopes: list[Any]) -> list[Any]:
    """Merge per-record envelopes into as few known envelopes as the size limits allow."""
    from assay.provenance.envelope import pack

    return pack(envelopes, epoch=reader.epoch, revision=reader.ledger_revision)


def _publish(inv: Invocation, batches: list[Any]) -> dict[str, Any]:
    from assay.provenance.publish import require

    verdicts = [require(inv.store(), inv.access(), env, what="the report") for env in batches]
    line = verdicts[0].line if verdicts else "published: the page shows no ledger record"
    return {"line": line, "sources": sum(len(env.leaves) for env in batches),
            "envelopes": [env.hash() for env in batches]}


def _packet(directory: str, cwd: str | None) -> dict[str, Any]:
    from assay.packet.validate import validate

    path = Path(directory)
    if not path.is_absolute():
        path = Path(cwd or os.getcwd()) / path
    outcome = validate(path)
    run = outcome.run
    out: dict[str, Any] = {
        "dir": directory, "valid": outcome.valid,
        "publishable": bool(outcome.valid and run is not None and run.publishable),
        "issues": [i.to_dict() for i in outcome.issues],
        "summary": run.summary() if run is not None else None,
        "objective": run.objective if run is not None else None,
        "claims": [], "gaps": [],
    }
    if run is not None:
        out["claims"] = [{"claim_id": c.claim_id, "state": c.state, "assurance": c.assurance,
                          "statement": c.statement} for c in run.claims]
        out["gaps"] = [{"gap_id": g.gap_id, "kind": g.kind, "material": g.material,
                        "description": g.description} for g in run.gaps]
    return out


def _in_project(inv: Invocation, *, needed: bool) -> bool:
    """Whether the call runs in a project; only a packet-only report may run outside one."""
    try:
        inv.project()
    except AssayError as err:
        if needed or err.code != "project_not_found":
            raise
        return False
    return True


def _out_path(inv: Invocation, out: str | None, in_project: bool) -> Path:
    if not out:
        if not in_project:
            return Path(inv.cwd or os.getcwd()) / "report.html"
        return inv.project().root / ".assay" / "report.html"
    return named_path(out, inv.cwd)


def _out_file(path: Path) -> OutFile:
    return OutFile(path, "report_unwritable", "the report", ".report-")
