"""Getting an intent in: the intent object from flags or a file, and the capture draft.

:func:`intent_from_flags` and :func:`intent_from_file` build the ``intent``
object that ``work new`` writes in one guarded put (and that ``work
prepare-capture`` drafts). A file is JSON (the intent object, or record
data holding one) or Markdown in this shape::

    # The brief, in the requester's terms
    Reference: ticket 42            (optional; the brief otherwise)

    ## Requirements
    - R1 | Keep sessions | Run the session test
    - R2 | Reject bad tokens | Run the token test | R1

    ## Boundaries
    - Keep the existing database

    ## Non-goals
    - No new login UI

``work prepare-capture`` is a read-only draft of up to two ordinary
``put`` calls, each guarded by the revision the draft was prepared against:

1. save the intent itself (``expect_revision`` 0 for a new record, or the
   current revision, keeping any recorded acceptance, tasks and continuation);
2. associate requirements with existing records (``continuation.context``),
   guarded by the revision step 1 creates (only when something is associated).

Each save carries ``put_args``, the literal arguments of the put, which
read the data from standard input, and ``stdin``, that data as canonical
JSON: running the one with the other is the save. Both drafts are validated
against the intent contract before they are returned; a draft that would be
rejected is an ``invalid_intent_contract`` error naming the field, and
nothing is suggested. Imports the ledger contract, the base modules and its
sibling modules.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from typing import Any

from assay.canonical import canonical_text
from assay.errors import AssayError, UsageError, pointer
from assay.ids import validate_record_id
from assay.intent.contract import parse_intent_data
from assay.intent.snapshot import ProjectBinding, is_readable
from assay.ledger.store import Reader

__all__ = [
    "intent_from_file",
    "intent_from_flags",
    "parse_requirement_spec",
    "prepare_capture",
    "validate_intent_id",
]


def parse_requirement_spec(spec: str, index: int) -> dict[str, Any]:
    """``ID|TEXT|ACCEPTANCE`` or ``ID|TEXT|ACCEPTANCE|PARENT_ID`` as a requirement object."""
    parts = [p.strip() for p in spec.split("|")]
    if len(parts) not in (3, 4) or not all(parts):
        raise UsageError(
            f"--requirement takes ID|TEXT|ACCEPTANCE[|PARENT_ID], not {spec!r}",
            code="invalid_argument", pointer=pointer("requirement", index))
    out = {"id": parts[0], "text": parts[1], "acceptance": parts[2]}
    if len(parts) == 4:
        out["parent_id"] = parts[3]
    return out


def intent_from_flags(*, brief: str, user_reference: str | None, requirements: Sequence[str],
                      boundaries: Sequence[str] = (), non_goals: Sequence[str] = (),
                      verify_with: Sequence[str] = ()) -> dict[str, Any]:
    """The intent object from command-line values (the reference defaults to the brief).

    ``verify_with`` items are ``REQUIREMENT_ID=COMMAND`` (repeatable per
    requirement). The result is not validated here; the caller validates the
    record data it goes into.
    """
    reqs = [parse_requirement_spec(spec, i) for i, spec in enumerate(requirements)]
    by_id = {r["id"]: r for r in reqs}
    for index, value in enumerate(verify_with):
        rid, sep, command = value.partition("=")
        if not sep or rid.strip() not in by_id or not command.strip():
            raise UsageError(f"--verify-with takes REQUIREMENT_ID=COMMAND naming a requirement "
                             f"given with --requirement, not {value!r}",
                             code="invalid_argument", pointer=pointer("verify_with", index))
        by_id[rid.strip()].setdefault("verify_with", []).append(command.strip())
    return {"version": 1, "brief": brief, "user_reference": user_reference or brief,
            "requirements": reqs, "boundaries": list(boundaries), "non_goals": list(non_goals)}


_HEADING = re.compile(r"^(#{1,2})\s+(.*?)\s*$")
_SECTIONS = {"requirements": "requirements", "boundaries": "boundaries",
             "non-goals": "non_goals", "non goals": "non_goals"}


def intent_from_file(raw: bytes, name: str, *, where: str = "/from_file") -> dict[str, Any]:
    """The intent object of a JSON or Markdown file (see the module docstring).

    JSON may hold the intent object or record data ``{"intent": ...}``. An
    unreadable shape is ``invalid_argument`` naming the file and the line.
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{name} is not UTF-8 (byte {exc.start})", code="invalid_utf8",
                         pointer=where) from None
    if name.endswith(".json") or text.lstrip().startswith("{"):
        from assay.canonical import parse

        try:
            value = parse(raw)
        except AssayError as exc:
            raise UsageError(f"{name}: {exc.message}", code=exc.code, pointer=where) from None
        if isinstance(value, dict) and "intent" in value:
            value = value["intent"]
        if not isinstance(value, dict):
            raise UsageError(f"{name} holds no intent object", code="invalid_argument",
                             pointer=where)
        return value
    return _intent_from_markdown(text, name, where)


def _intent_from_markdown(text: str, name: str, where: str) -> dict[str, Any]:
    brief: str | None = None
    reference: str | None = None
    section: str | None = None
    lists: dict[str, list[str]] = {"requirements": [], "boundaries": [], "non_goals": []}
    lines: dict[str, list[int]] = {"requirements": []}
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        heading = _HEADING.match(stripped)
        if heading and len(heading.group(1)) == 1 and brief is None:
            brief = heading.group(2)
            continue
        if heading:
            section = _SECTIONS.get(heading.group(2).lower())
            if section is None:
                raise UsageError(f"{name} line {number}: unknown section {heading.group(2)!r} "
                                 "(Requirements, Boundaries or Non-goals)",
                                 code="invalid_argument", pointer=where)
            continue
        if stripped.lower().startswith("reference:") and section is None:
            reference = stripped.split(":", 1)[1].strip()
            continue
        if stripped.startswith(("- ", "* ")) and section is not None:
            lists[section].append(stripped[2:].strip())
            lines.setdefault(section, []).append(number)
        elif stripped and section is not None:
            raise UsageError(f"{name} line {number}: a section holds '- ' list items only",
                             code="invalid_argument", pointer=where)
    if not brief:
        raise UsageError(f"{name} has no '# brief' heading", code="invalid_argument",
                         pointer=where)
    requirements = []
    for spec, number in zip(lists["requirements"], lines["requirements"]):
        try:
            requirements.append(parse_requirement_spec(spec, 0))
        except UsageError:
            raise UsageError(f"{name} line {number}: a requirement is ID | TEXT | ACCEPTANCE "
                             f"[| PARENT_ID], not {spec!r}", code="invalid_argument",
                             pointer=where) from None
    return {"version": 1, "brief": brief, "user_reference": reference or brief,
            "requirements": requirements, "boundaries": lists["boundaries"],
            "non_goals": lists["non_goals"]}


def validate_intent_id(record_id: str) -> str:
    """An intent lives in a knowledge record: ``knowledge:NAME``."""
    validate_record_id(record_id, field="/id")
    if not record_id.startswith("knowledge:"):
        raise UsageError("an intent lives in a knowledge record (knowledge:NAME)",
                         code="invalid_argument", pointer="/id")
    return record_id


def _put_args(record_id: str, expect: int) -> list[str]:
    return ["put", "--expect-revision", str(expect), "--data-file", "-", "--", record_id]


def _associations(values: Sequence[str]) -> list[tuple[str, str]]:
    out = []
    for index, value in enumerate(values):
        rid, sep, target = value.partition("=")
        if not sep or not rid.strip():
            raise UsageError(f"--associate takes REQUIREMENT_ID=RECORD_ID, not {value!r}",
                             code="invalid_argument", pointer=pointer("associate", index))
        validate_record_id(target, field=pointer("associate", index))
        out.append((rid.strip(), target))
    return out


def prepare_capture(
    reader: Reader,
    binding: ProjectBinding,
    record_id: str,
    *,
    intent: dict[str, Any],
    associate: Sequence[str] = (),
    mission: Sequence[str] = (),
    next_action: str | None = None,
) -> dict[str, Any]:
    """The two-save draft for ``record_id`` (see the module docstring)."""
    validate_intent_id(record_id)
    current = reader.get(record_id)
    if current is not None and not is_readable(current, binding.principal):
        current = None
    base: dict[str, Any] = {}
    if current is not None and current.status == "current" and isinstance(current.data, dict):
        base = copy.deepcopy(current.data)
    expect = current.revision if current is not None else 0
    first = {**base, "intent": intent}
    doc = parse_intent_data(first, record_id=record_id)
    links = []
    for rid, target in _associations(associate):
        links.append((rid, target))
    for index, target in enumerate(mission):
        validate_record_id(target, field=pointer("mission", index))
    saves = [{
        "step": 1,
        "purpose": "save the intent" if current is None else "update the intent",
        "id": record_id,
        "expect_revision": expect,
        "data": first,
        "intent_sha256": doc.intent_sha256,
        "put_args": _put_args(record_id, expect),
        "stdin": canonical_text(first),
    }]
    if links or mission or next_action:
        second = copy.deepcopy(first)
        by_requirement: dict[str, list[str]] = {}
        for rid, target in links:
            by_requirement.setdefault(rid, [])
            if target not in by_requirement[rid]:
                by_requirement[rid].append(target)
        previous = second.get("continuation") or {}
        active = previous.get("active_requirement_ids") or [
            r.id for r in doc.requirements if r.id in by_requirement
        ] or [doc.requirements[0].id]
        second["continuation"] = {
            "active_requirement_ids": active,
            "next_action": next_action or previous.get("next_action")
            or f"Work on {', '.join(active)}",
            "context": {
                "version": 1,
                "mission_record_ids": list(dict.fromkeys(mission)),
                "requirements": [{"id": rid, "record_ids": ids}
                                 for rid, ids in by_requirement.items()],
            },
        }
        parse_intent_data(second, record_id=record_id)
        saves.append({
            "step": 2,
            "purpose": "associate requirements with records",
            "id": record_id,
            "expect_revision": expect + 1,
            "data": second,
            "intent_sha256": doc.intent_sha256,
            "put_args": _put_args(record_id, expect + 1),
            "stdin": canonical_text(second),
        })
    missing = []
    targets = [t for _, t in links] + list(mission)
    found = reader.get_many(list(dict.fromkeys(targets))) if targets else {}
    for target in dict.fromkeys(targets):
        record = found.get(target)
        if record is None or not is_readable(record, binding.principal):
            missing.append(target)
    return {
        "id": record_id,
        "current_revision": expect,
        "ledger_revision": reader.ledger_revision,
        "saves": saves,
        "missing_record_ids": missing,
        "write_basis": {"epoch": reader.epoch, "ledger_revision": reader.ledger_revision,
                        "records": {record_id: expect}},
        "notice": ("A draft only: nothing was written. "
                   + ("Save step 1, then step 2 (guarded by the revision step 1 creates)"
                      if len(saves) == 2 else "Save step 1")
                   + ": run each save's put_args with its stdin as standard input; a conflict "
                     "means someone else wrote first."),
    }
