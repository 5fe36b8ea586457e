"""Evidence operations: run a declared command as machine evidence, list, show, observe."""

from __future__ import annotations

from typing import Any

from assay.errors import AssayError, UsageError
from assay.ops import Argument, Bound, Invocation, Result, operation
from assay.ops.bounds import PAGE_FACTS_SCHEMA, recovering_read
from assay.paging import page_facts

_NAME = {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._-]*$"}
_REF = {
    "type": "object",
    "properties": {"id": {"type": "string"}, "revision": {"type": "integer"},
                   "data_sha256": {"type": "string"}},
    "required": ["id", "revision", "data_sha256"],
}
_RECEIPT = {"type": "object", "properties": {
    "id": {"type": "string"}, "revision": {"type": "integer"},
    "ledger_revision": {"type": "integer"}, "data_sha256": {"type": "string"}}}


def _declaration(inv: Invocation, name: str) -> Any:
    project = inv.project()
    for decl in project.evidence_commands:
        if decl.name == name:
            if not decl.enabled:
                raise AssayError(f"evidence command {name!r} is disabled in assay.toml",
                                 code="evidence_command_disabled", pointer="/name",
                                 action=f"Set enabled = true in [evidence.commands.{name}].")
            return decl
    declared = ", ".join(d.name for d in project.evidence_commands) or "none"
    raise AssayError(
        f"no evidence command {name!r} is declared (declared: {declared})",
        code="unknown_evidence_command", pointer="/name",
        action=f"Declare it in assay.toml as [evidence.commands.{name}] with an argv list.",
    )


def _target(inv: Invocation, value: str) -> tuple[str, str]:
    """Check ``INTENT_ID#REQ_ID`` names a readable intent record and one of its requirements."""
    from assay.ids import validate_record_id

    intent_id, sep, requirement = value.partition("#")
    if not sep or not requirement:
        raise UsageError(f"--for takes INTENT_ID#REQ_ID, not {value!r}", code="invalid_argument",
                         pointer="/target")
    validate_record_id(intent_id, field="/target")
    access = inv.access()
    with inv.store().reader() as reader:
        record = access.visible(reader.get(intent_id))
    if record is None or not access.in_scope(record):
        raise AssayError(f"no readable intent record {intent_id}", code="evidence_target_not_found",
                         pointer="/target",
                         action="Record the intent first, or check the id with 'assay find'.")
    from assay.intent.contract import parse_intent_data

    known = parse_intent_data(record.data, record_id=intent_id).requirement_ids
    if requirement not in known:
        raise AssayError(f"{intent_id} has no requirement {requirement!r}",
                         code="evidence_target_not_found", pointer="/target",
                         details={"requirements": list(known)},
                         action="Use one of the requirement ids of that intent.")
    return intent_id, requirement


@operation(
    "evidence.run",
    open_world=True,
    view="evidence:evidence_run",
    summary="Run a declared verification command and record what the machine saw.",
    description=(
        "Runs [evidence.commands.NAME] from assay.toml in its own process group (timeout kills "
        "the group), observes the git workspace before and after, and writes the observation as "
        "the next version of evidence:NAME with origin 'machine'. A command that declares a "
        "results file (JUnit XML) also gets its per-test outcomes recorded, each test mapped to "
        "the requirements it names or that the declaration's globs map it to. `target` "
        "INTENT_ID#REQ_ID links it to a requirement; `discriminate` REF also runs the command on "
        "the tree at REF in a temporary worktree and records whether it fails there (and, per "
        "mapped test, whether that test failed there). Returns the receipt and a ready-to-paste "
        "acceptance evidence reference. Every outcome (failed, timeout, unavailable, a results "
        "file that could not be read) is recorded."
    ),
    cli_note=("Exit status 1 when the command did not pass, did not discriminate, or its "
              "declared results file could not be read."),
    writes=True,
    arguments=(
        Argument("name", _NAME, "The declared command's NAME.", binding="literal", required=True),
        Argument("target", {"type": "string", "minLength": 3},
                 "The requirement this evidence is for, INTENT_ID#REQ_ID.", cli="--for"),
        Argument("discriminate", {"type": "string", "minLength": 1},
                 "Also run the command at this git ref; record whether it fails there."),
        Argument("request_id", {"type": "string", "minLength": 1},
                 "Idempotency key for the record write."),
    ),
    output_schema={"type": "object", "properties": {
        "receipt": _RECEIPT, "evidence_ref": _REF,
        "status": {"enum": ["passed", "failed", "timeout", "error", "aborted", "unavailable"]},
        "exit_code": {"type": ["integer", "null"]}, "duration_ms": {"type": "integer"},
        "progress": {"enum": ["changed", "unchanged", "unknown", "not_applicable"]},
        "changed_path_count": {"type": "integer"},
        "redacted": {"type": "boolean"},
        "discriminates": {"type": ["boolean", "null"]},
        "posture": {"type": "string"},
        "discriminated_tests": {"type": ["object", "null"], "description": (
            "With `discriminate` and a results file: per mapped test, its outcome now and at "
            "the ref and whether it proves the change (passes now, failed there).")},
        "results": {"type": ["object", "null"], "description": (
            "With a declared results file: status (read or refused), code, the test counts "
            "and each mapped requirement's outcome.")}}},
)
def evidence_run(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.evidence.record import evidence_id, resolve_ref, run_evidence, write_evidence

    project = inv.project()
    decl = _declaration(inv, args["name"])
    target = _target(inv, args["target"]) if args.get("target") else None
    ref = None
    if args.get("discriminate"):
        ref = (args["discriminate"], resolve_ref(project.root, args["discriminate"]))
    store = inv.store()
    run = run_evidence(project, decl, target=target, discriminate_ref=ref,
                       reporter=inv.progress())
    receipt = write_evidence(store, project, run, request_id=args.get("request_id"))
    contrast = run.data["discriminate"]
    results = run.data.get("results")
    ok = (run.observation.passed and (contrast is None or contrast["discriminates"])
          and (results is None or results["status"] == "read"))
    reference = {"id": receipt.id, "revision": receipt.revision,
                 "data_sha256": receipt.data_sha256}
    from assay.canonical import canonical_text

    cite = f"{receipt.id}@{receipt.revision}"
    if target is not None:
        steps = [(f"Record it as {target[1]}'s result: 'assay work accept --from-run {cite} -- "
                  f"{target[0]}'")]
    elif results is not None and results["requirements"]:
        steps = [(f"Record the outcome of each mapped requirement: 'assay work accept --from-run "
                  f"{cite} -- INTENT_ID'")]
    else:
        steps = [(f"Cite it as {cite} (assay work accept --requirement REQ --evidence {cite} "
                  f"-- INTENT_ID), or in acceptance evidence as {canonical_text(reference)}")]
    if not run.observation.passed:
        steps.insert(0, f"Read the output: 'assay evidence show -- {evidence_id(decl.name)}'")
    if results is not None and results["status"] != "read":
        steps.insert(0, f"The results file was not used ({results['code']}): "
                        f"{results['message']}")
    return Result(
        {
            "receipt": receipt.to_dict(),
            "evidence_ref": reference,
            "status": run.status,
            "exit_code": run.observation.exit_code,
            "duration_ms": run.observation.duration_ms,
            "progress": run.comparison.progress,
            "changed_path_count": len(run.comparison.changed_paths),
            "redacted": run.observation.redaction_count > 0,
            "discriminates": contrast["discriminates"] if contrast is not None else None,
            "posture": run.data["posture"]["status"],
            "origin": "machine",
            "results": _results_summary(results),
            "discriminated_tests": contrast.get("tests") if contrast is not None else None,
        },
        ledger_revision=receipt.ledger_revision,
        next=tuple(steps),
        exit_code=0 if ok else 1,
    )


def _results_summary(results: dict[str, Any] | None) -> dict[str, Any] | None:
    if results is None:
        return None
    return {"status": results["status"], "code": results["code"],
            "summary": results["summary"],
            "requirements": {r["requirement_id"]: r["outcome"] for r in results["requirements"]}}


def _summary(record: Any) -> dict[str, Any]:
    # A damaged version is listed by its identity and damage, never read as data.
    data = {} if record.damage is not None or not isinstance(record.data, dict) else record.data
    observation = data.get("observation") or {}
    target = data.get("target")
    contrast = data.get("discriminate")
    return {
        "id": record.id,
        "revision": record.revision,
        "data_sha256": record.data_sha256,
        "origin": record.origin,
        "machine_observed": record.origin == "machine",
        "status": observation.get("status"),
        "exit_code": observation.get("exit_code"),
        "started_at": observation.get("started_at"),
        "duration_ms": observation.get("duration_ms"),
        "target": target,
        "discriminates": contrast.get("discriminates") if isinstance(contrast, dict) else None,
        "ledger_revision": record.ledger_revision,
        **({"unreadable": record.to_dict()["unreadable"]} if record.damage is not None else {}),
    }


LIST_LIMIT = 100
MAX_LIST_LIMIT = 1000
# What `evidence show` shows of each stored output tail by default, and at most.
# A stored tail is the last 16 KiB of a stream decoded with replacement
# characters (up to three bytes each), so the maximum always shows all of it.
_TAIL_BYTES, _MAX_TAIL_BYTES = 4096, 65536


@operation(
    "evidence.list",
    view="evidence:evidence_list",
    summary="List evidence records: the latest run of each declared command, by id.",
    description=("One row per evidence record (its current version), in id order "
                 "after the id named by after, at most limit rows; read_more holds the next "
                 "page's read."),
    writes=False,
    bounds=Bound("evidence record", items=LIST_LIMIT, max_items=MAX_LIST_LIMIT,
                 arguments=("limit", "after"), recover=(
                     "Rows are summaries of bounded size; the next page starts after the last "
                     "row shown (after).")),
    arguments=(
        Argument("limit", {"type": "integer", "minimum": 1, "maximum": MAX_LIST_LIMIT},
                 f"At most this many records (default {LIST_LIMIT})."),
        Argument("after", {"type": "string", "minLength": 1},
                 "Only records whose id sorts after this id (the next page's cursor)."),
    ),
    output_schema={"type": "object", "properties": {
        "evidence": {"type": "array"}, "count": {"type": "integer"}, "more": {"type": "boolean"},
        **PAGE_FACTS_SCHEMA}},
)
def evidence_list(inv: Invocation, args: dict[str, Any]) -> Result:
    access = inv.access()
    limit = args.get("limit", LIST_LIMIT)
    after = args.get("after")
    with inv.store().reader() as reader:
        # Every row is read to count what the page leaves out (rows are small).
        found = [r for r in reader.find(scopes=access.scopes, kind="evidence", limit=10_000_000,
                                        audiences=access.audiences)
                 if after is None or r.id > after]
        shown = found[:limit]
        reads = []
        if len(found) > limit:
            reads.append(recovering_read("evidence.list", {
                **{k: args[k] for k in ("limit",) if k in args}, "after": shown[-1].id},
                "next_page"))
        facts = page_facts({"evidence": len(found) - len(shown)}, reads)
        return Result({"evidence": [_summary(r) for r in shown], "count": len(shown),
                       "more": facts["truncated"], **facts},
                      ledger_revision=reader.ledger_revision)


@operation(
    "evidence.show",
    view="evidence:evidence_show",
    summary="Show one evidence record (a command NAME or evidence:NAME), or one revision of it.",
    description=(
        "The record as stored, with machine_observed from its origin, except that "
        "each output tail shows at most its last tail_bytes bytes (starting on a character). "
        "Each stream keeps its byte count and the SHA-256 of the whole stream; tails lists "
        "every shortened tail, and read_more the read that shows them whole."
    ),
    writes=False,
    bounds=Bound("output tail byte", bytes=_TAIL_BYTES, max_bytes=_MAX_TAIL_BYTES,
                 arguments=("tail_bytes",), recover=(
                     "Bytes count per stored output tail; the record is otherwise whole. The "
                     "recovering read shows every stored tail whole; the stored text stays "
                     "readable with get, and each full stream is named by its SHA-256.")),
    arguments=(
        Argument("id", {"type": "string", "minLength": 1}, "evidence:NAME or NAME.",
                 binding="literal", required=True),
        Argument("revision", {"type": "integer", "minimum": 1}, "Show this revision."),
        Argument("tail_bytes", {"type": "integer", "minimum": 256, "maximum": _MAX_TAIL_BYTES},
                 f"Show at most this many bytes of each output tail (default {_TAIL_BYTES})."),
    ),
    output_schema={"type": "object", "properties": {
        "record": {"type": "object"}, "machine_observed": {"type": "boolean"},
        "tails": {"type": "array"}, **PAGE_FACTS_SCHEMA}},
)
def evidence_show(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.evidence.record import bound_tails
    from assay.ids import validate_record_id

    record_id = args["id"] if ":" in args["id"] else f"evidence:{args['id']}"
    validate_record_id(record_id, field="/id")
    if not record_id.startswith("evidence:"):
        raise UsageError(f"{record_id} is not an evidence record", code="invalid_argument",
                         pointer="/id", action="Use 'assay get' for other records.")
    access = inv.access()
    with inv.store().reader() as reader:
        record = access.visible(reader.get(record_id, args.get("revision")))
        if record is None or not access.in_scope(record):
            what = f"{record_id} revision {args['revision']}" if args.get("revision") else record_id
            raise AssayError(f"no evidence record {what}", code="record_not_found", pointer="/id",
                             action="List evidence with 'assay evidence list'.")
        shown = record.to_dict()
        cuts: list[dict[str, Any]] = []
        if record.is_intact:
            shown["data"], cuts = bound_tails(record.data, args.get("tail_bytes", _TAIL_BYTES))
        for cut in cuts:
            cut["pointer"] = "/record/data" + cut["pointer"]
        reads = []
        if cuts:
            reads.append(recovering_read("evidence.show", {
                "id": record.id, "revision": record.revision,
                "tail_bytes": max(c["stored_bytes"] for c in cuts)}, "tails_shortened"))
        omitted = sum(c["stored_bytes"] - c["shown_bytes"] for c in cuts)
        return Result({"record": shown, "machine_observed": record.origin == "machine",
                       "tails": cuts, **page_facts({"tail_bytes": omitted}, reads)},
                      ledger_revision=reader.ledger_revision)


@operation(
    "evidence.observe",
    summary="Observe the git workspace now (HEAD, branch, dirty paths, fingerprint); run nothing.",
    description=(
        "The same observation an evidence run records before and "
        "after its command. `content_sha256` reads and hashes every file instead of using git's "
        "index blob ids for clean files; `files` includes the per-file fingerprints."
    ),
    writes=False,
    bounds=Bound("observation", items=1, max_items=1, whole=True, unbounded="files", recover=(
        "The summary lists at most 500 dirty paths and counts the rest in omitted; the files "
        "flag explicitly asks for every file's fingerprint, unbounded.")),
    arguments=(
        Argument("content_sha256", {"type": "boolean"}, "Fingerprint every file with SHA-256.",
                 binding="flag"),
        Argument("files", {"type": "boolean"}, "Include the per-file fingerprint map.",
                 binding="flag"),
    ),
    output_schema={"type": "object", "properties": {
        "status": {"enum": ["observed", "unavailable", "error", "not_applicable"]},
        "head": {"type": ["string", "null"]}, "workspace_sha256": {"type": ["string", "null"]}}},
)
def evidence_observe(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay.evidence.git import observe

    project = inv.project()
    obs = observe(project.root, content_sha256=bool(args.get("content_sha256")),
                  ignore=project.evidence_ignore)
    data = obs.summary()
    if args.get("files"):
        data["files"] = dict(obs.files)
    return Result(data)
