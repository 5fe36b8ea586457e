"""Packet operations: init, approve, source, admit, brief, close, validate, render.

Each handler imports :mod:`assay.packet` lazily and calls one function. None
of them needs a project or the ledger: a packet is a self-contained
directory. An invalid packet is an answer (exit 1 with every issue), not an
error; a missing or unreadable directory is an error.
"""

from __future__ import annotations

from typing import Any

from assay.ops import Argument, Invocation, Result, operation

_DIR = Argument("dir", {"type": "string", "minLength": 1}, "The packet directory.",
                binding="literal", required=True)
_ISSUE = {
    "type": "object",
    "properties": {"code": {"type": "string"}, "path": {"type": "string"},
                   "pointer": {"type": "string"}, "message": {"type": "string"},
                   "where": {"type": "string"}},
    "required": ["code", "path", "pointer", "message"],
}
_VALIDATION: dict[str, Any] = {
    "type": "object",
    "properties": {
        "valid": {"type": "boolean"},
        "publishable": {"type": "boolean"},
        "withdrawn": {"type": "boolean"},
        "issues": {"type": "array", "items": _ISSUE},
        "advisories": {"type": "array", "items": _ISSUE},
        "layout": {"type": "string", "enum": ["assay", "recon"]},
        "achieved_profile": {"type": ["string", "null"]},
        "summary": {"type": ["object", "null"]},
    },
    "required": ["valid", "publishable", "withdrawn", "issues", "advisories", "layout",
                 "summary"],
}
_SOURCE_ROOT = Argument(
    "source_root", {"type": "array", "items": {"type": "string", "minLength": 1}},
    "A directory whose files a recon-layout packet's file and repository sources may be "
    "reopened from (repeatable); sources elsewhere are not read.")
_PROFILES = ["quick", "standard", "thorough"]
_BRIEF_MODES = ["semantic", "adversarial", "coverage", "redundant-verification",
                "contradiction-resolution"]


def _validation_data(outcome: Any, withdrawn: bool) -> dict[str, Any]:
    run = outcome.run
    return {
        "valid": outcome.valid,
        "publishable": bool(outcome.valid and run is not None and run.publishable),
        "withdrawn": withdrawn,
        "issues": [i.to_dict() for i in outcome.issues],
        "advisories": [i.to_dict() for i in outcome.advisories],
        "layout": outcome.layout,
        "achieved_profile": run.achieved if run is not None else outcome.achieved_profile,
        "summary": run.summary() if run is not None else None,
    }


@operation(
    "packet.init",
    summary="Lay out a new research packet: directories, a preparing manifest, an empty ledger.",
    description=(
        "Creates DIR (if needed) with manifest.json (status preparing, the requested profile "
        "and objective), claims.json (revision 1, empty), reviews/{briefs,semantic,adversarial,"
        "coverage,reconciliation,redundant-verification,contradiction-resolution}/ and "
        "raw/{dossiers,drafts,quarantine}/. Refuses a directory that already holds a packet."
    ),
    writes=True,
    project=False,
    arguments=(
        _DIR,
        Argument("objective", {"type": "string", "minLength": 1}, "What the research must answer.",
                 required=True),
        Argument("profile", {"type": "string", "enum": _PROFILES},
                 "Requested rigor: quick, standard or thorough (default quick)."),
        Argument("question", {"type": "array", "items": {"type": "string"}},
                 "A question the packet must answer (repeatable)."),
        Argument("run_id", {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$"},
                 "The run id (default: derived from the directory, time and objective)."),
    ),
    output_schema={"type": "object", "properties": {
        "directory": {"type": "string"}, "run_id": {"type": "string"},
        "profile": {"type": "string"}, "status": {"type": "string"}}},
)
def packet_init(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.packet.lifecycle import init_packet

    data = init_packet(args["dir"], objective=args["objective"],
                       profile=args.get("profile", "quick"), questions=args.get("question"),
                       run_id=args.get("run_id"))
    step = f"Approve an execution envelope: assay packet approve {args['dir']} --execution FILE"
    return Result(data, next=(step,))


@operation(
    "packet.approve",
    admin=True,
    summary="Record the explicit user approval of an execution envelope (fingerprint).",
    description=(
        "Checks the envelope as a closed object, computes its canonical SHA-256 fingerprint "
        "(without `approval`), stores it with {type: explicit-user-approval, approvedAt, "
        "fingerprint} in manifest.json and moves the run to running. Any later change to the "
        "envelope fails validation with APPROVAL_FINGERPRINT_MISMATCH."
    ),
    writes=True,
    project=False,
    arguments=(
        _DIR,
        Argument("execution", {"type": "object"}, "The execution envelope.",
                 binding="json_file", required=True),
        Argument("approved_at", {"type": "string"}, "Approval instant (default: now, UTC)."),
    ),
    output_schema={"type": "object", "properties": {
        "fingerprint": {"type": "string"}, "approved_at": {"type": "string"},
        "status": {"type": "string"}}},
)
def packet_approve(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.packet.lifecycle import approve

    return Result(approve(args["dir"], args["execution"], approved_at=args.get("approved_at")))


@operation(
    "packet.source",
    summary="Capture a file as a document source of the packet (raw/sources/ID.txt).",
    description=(
        "Copies the file byte for byte into raw/sources/, records {sourceId, type: document, "
        "title, capture: {path, digest}} in manifest.json. Evidence locators into it are "
        "reopened and checked on every validation. Refused once a review brief exists."
    ),
    writes=True,
    project=False,
    arguments=(
        _DIR,
        Argument("source_id", {"type": "string", "minLength": 1}, "The source id.",
                 required=True, cli="--id"),
        Argument("file", {"type": "string", "minLength": 1}, "The file to capture.",
                 required=True),
        Argument("title", {"type": "string"}, "A human title (default: the id)."),
    ),
    output_schema={"type": "object", "properties": {"source": {"type": "object"}}},
)
def packet_source(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.packet.lifecycle import add_source

    return Result(add_source(args["dir"], source_id=args["source_id"], file=args["file"],
                             title=args.get("title")))


@operation(
    "packet.validate",
    destructive=True,
    idempotent=True,
    view="packet:packet_validation",
    busy="validating the packet",
    summary="Validate a packet once: the derived summary, or every issue (code, path, pointer).",
    description=(
        "Compiles manifest.json, claims.json and every listed artifact exactly once. Returns "
        "the validated summary (requested and achieved profile, publication, claim and evidence "
        "states) or every issue. A packet that is invalid or not publishable has its "
        "packet.md withdrawn. A packet the recon tool wrote (manifest version 1 or 2) is "
        "validated in place by that tool's rules, with its codes and locations, and never "
        "written to; assay's own stricter findings come back as advisories."
    ),
    cli_note="Exit status 1 when the packet is invalid.",
    writes=True,
    project=False,
    arguments=(_DIR, _SOURCE_ROOT),
    output_schema=_VALIDATION,
)
def packet_validate(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.packet.validate import check_and_withdraw

    outcome, withdrawn = check_and_withdraw(args["dir"],
                                            source_roots=args.get("source_root") or ())
    data = _validation_data(outcome, withdrawn)
    return Result(data, exit_code=0 if outcome.valid else 1,
                  next=() if outcome.valid else ("Fix every issue, then validate again.",))


@operation(
    "packet.render",
    destructive=True,
    idempotent=True,
    view="packet:packet_validation",
    busy="validating and rendering the packet",
    summary="Write packet.md for a publishable (complete or honest partial) packet.",
    description=(
        "Validates first. A publishable packet gets packet.md (claims by state, contradictions "
        "and qualifications, gaps, assurance), written to a temporary sibling, renamed and "
        "digest-verified. Anything else writes nothing and withdraws an existing packet.md."
    ),
    cli_note="Exit status 1 when packet.md was not written.",
    writes=True,
    project=False,
    arguments=(_DIR, _SOURCE_ROOT),
    output_schema={"type": "object", "properties": {
        **_VALIDATION["properties"], "rendered": {"type": ["object", "null"]}}},
)
def packet_render(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.packet.render import publish
    from assay.packet.validate import check_and_withdraw

    outcome, withdrawn = check_and_withdraw(args["dir"],
                                            source_roots=args.get("source_root") or ())
    data = _validation_data(outcome, withdrawn)
    if not data["publishable"] or outcome.run is None:
        data["rendered"] = None
        return Result(data, exit_code=1)
    data["rendered"] = publish(args["dir"], outcome.run)
    return Result(data)


@operation(
    "packet.brief",
    summary="Write an immutable, selective-blind review brief for one review mode.",
    description=(
        "Runs the full validation as a preflight, snapshots claims.json as the prior ledger "
        "(raw/drafts/claims-r<revision>.json) and writes reviews/briefs/<id>.json holding only "
        "what that mode may see; both are listed in the manifest with their digests."
    ),
    writes=True,
    project=False,
    arguments=(
        _DIR,
        Argument("mode", {"type": "string", "enum": _BRIEF_MODES}, "The review mode.",
                 required=True),
        Argument("brief_id", {"type": "string", "pattern": "^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$"},
                 "The brief id, a lowercase slug (default: the mode)."),
    ),
    output_schema={"type": "object", "properties": {
        "path": {"type": "string"}, "digest": {"type": "string"}, "mode": {"type": "string"},
        "prior_ledger": {"type": "object"}, "created": {"type": "boolean"}}},
)
def packet_brief(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.packet.lifecycle import create_brief

    return Result(create_brief(args["dir"], mode=args["mode"], brief_id=args.get("brief_id")))


@operation(
    "packet.admit",
    summary="Admit one worker output from raw/drafts/, or quarantine it with the reasons.",
    description=(
        "Checks a dossier or review result on its own (strict JSON, kind, closed shape, run, "
        "approved lane of the matching mode, target inside the lane's write root, no raw "
        "secrets). Valid output moves to `to` and is listed in the manifest; invalid output "
        "moves to raw/quarantine/ with a .quarantine.json record."
    ),
    cli_note="Exit status 1 when the output was quarantined.",
    writes=True,
    project=False,
    arguments=(
        _DIR,
        Argument("draft", {"type": "string", "minLength": 1},
                 "The worker output, a path under raw/drafts/.", required=True),
        Argument("to", {"type": "string", "minLength": 1},
                 "Where the artifact belongs (inside its lane's write root).", required=True),
    ),
    output_schema={"type": "object", "properties": {
        "admitted": {"type": "boolean"}, "issues": {"type": "array", "items": _ISSUE}}},
)
def packet_admit(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.packet.quarantine import admit

    data = admit(args["dir"], args["draft"], args["to"])
    return Result(data, exit_code=0 if data["admitted"] else 1)


@operation(
    "packet.close",
    summary="End a running run as complete, partial or failed (refused unless honest).",
    description=(
        "Sets the run status. complete and partial are validated first: a status the "
        "validator does not derive as honest (complete needs the requested profile and no "
        "material gap) is refused and nothing changes. failed writes raw/failure.json with "
        "`reason`."
    ),
    writes=True,
    project=False,
    arguments=(
        _DIR,
        Argument("status", {"type": "string", "enum": ["complete", "partial", "failed"]},
                 "The terminal status.", required=True),
        Argument("reason", {"type": "string"}, "Why the run failed (with `status` failed)."),
        Argument("mode", {"type": "string"}, "The wave mode that failed, if one did."),
    ),
    output_schema={"type": "object", "properties": {
        "status": {"type": "string"}, "valid": {"type": "boolean"},
        "issues": {"type": "array", "items": _ISSUE}}},
)
def packet_close(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.packet.lifecycle import close

    return Result(close(args["dir"], status=args["status"], reason=args.get("reason"),
                        mode=args.get("mode")))
