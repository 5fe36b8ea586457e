"""Core operations: canonical JSON, the registry description, project init."""

from __future__ import annotations

from typing import Any

from assay.ops import Argument, Bound, Invocation, Result, describe, lookup, operation

_DIGEST = {"type": "string", "pattern": "^[0-9a-f]{64}$"}


def _canonical_text(envelope: dict[str, Any], args: dict[str, Any]) -> str:
    # The CLI prints the canonical text (or its digest) bare, whatever the format.
    data = envelope["data"]
    if args.get("digest"):
        return str(data["digest"]) + "\n"
    if args.get("fingerprint"):
        return str(data["fingerprint"]) + "\n"
    return str(data["canonical"]) + "\n"


@operation(
    "canonical",
    raw=_canonical_text,
    summary="The RFC 8785 canonical form (and digest) of one JSON document.",
    description=(
        "Reads one JSON document (`text`) and returns its canonical text, digest and "
        "fingerprint."
    ),
    cli_note="Prints the bare canonical text, or only the digest with `digest` or `fingerprint`.",
    writes=False,
    bounds=Bound("document", items=1, max_items=1, whole=True, recover=(
        "The canonical form of the document given, which is bounded by the input limit "
        "(4 MiB).")),
    project=False,
    arguments=(
        Argument("text", {"type": "string"}, "The JSON document as text.", binding="stdin",
                 required=True),
        Argument("digest", {"type": "boolean"}, "Only the lowercase hex SHA-256 is wanted (the answer holds it either way).",
                 binding="flag"),
        Argument("fingerprint", {"type": "boolean"}, "Only sha256:<hex> is wanted (the answer holds it either way).", binding="flag"),
    ),
    output_schema={
        "type": "object",
        "properties": {
            "canonical": {"type": "string"},
            "digest": _DIGEST,
            "fingerprint": {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"},
        },
        "required": ["canonical", "digest", "fingerprint"],
    },
)
def canonical(inv: Invocation, args: dict[str, Any]) -> Result:
    from assay import canonical as jcs

    text = args["text"]
    value = jcs.parse(text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text)
    raw = jcs.canonical_bytes(value)
    hexdigest = jcs.digest_bytes(raw)
    return Result({
        "canonical": raw.decode("utf-8"),
        "digest": hexdigest,
        "fingerprint": "sha256:" + hexdigest,
    })


@operation(
    "describe",
    summary="Describe every operation (or one): arguments, CLI bindings, JSON Schemas, writes.",
    description="Returns the operations registry as JSON.",
    writes=False,
    bounds=Bound("registry", items=1, max_items=1, whole=True, recover=(
        "The registry as declared; its size does not depend on any ledger or project data.")),
    project=False,
    arguments=(
        Argument("operation", {"type": "string"},
                 "One operation name (work.check or work_check).", binding="literal"),
    ),
    output_schema={"type": "object", "properties": {"operations": {"type": "array"}}},
)
def describe_operations(inv: Invocation, args: dict[str, Any]) -> Result:
    if args.get("operation"):
        return Result({"operations": [lookup(args["operation"]).describe()]})
    return Result({"operations": describe()})


@operation(
    "init",
    admin=True,
    idempotent=True,
    view="core:init",
    summary="Create assay.toml and the .assay/ state directory in a project.",
    description=(
        "Writes assay.toml (never overwrites one) and creates .assay/, adding it to "
        ".gitignore in a git work tree, then creates the ledger."
    ),
    writes=True,
    project=False,
    effect="Writes assay.toml (never overwriting one) and .assay/, and creates the ledger.",
    arguments=(
        Argument("cwd", {"type": "string"}, "The project root (default: current directory)."),
        Argument("scope", {"type": "string", "pattern": "^project:"},
                 "The project's scope, project:NAME (default: the directory name)."),
        Argument("db", {"type": "string"}, "Ledger URL to record in assay.toml."),
    ),
    output_schema={
        "type": "object",
        "properties": {
            "root": {"type": "string"},
            "scope": {"type": "string"},
            "created": {"type": "boolean"},
            "ledger": {"type": "object"},
        },
    },
)
def init(inv: Invocation, args: dict[str, Any]) -> Result:
    import os

    from assay.config import init_project

    # cwd and db arrive on the invocation, like every operation's.
    project, created = init_project(inv.cwd or os.getcwd(), scope=args.get("scope"), db=inv.db)
    inv.cwd = str(project.root)
    info = inv.store().info()
    return Result(
        {"root": str(project.root), "scope": project.scope, "created": created,
         "ledger": {"backend": info.backend, "location": info.location, "epoch": info.epoch,
                    "ledger_revision": info.ledger_revision}},
        ledger_revision=info.ledger_revision,
        next=(("Record what was asked (one requirement per --requirement ID|TEXT|ACCEPTANCE): "
              "'assay work new --brief \"What was asked\" --requirement \"R1|What must hold|How it "
              "is checked\" -- knowledge:intent'"),),
    )
