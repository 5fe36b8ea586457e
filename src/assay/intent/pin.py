"""Pins: the checks and tests an intent relies on, and the gate's own configuration, held still.

An agent that can edit ``assay.toml`` and the tests can make any check pass
by changing what the check is. So what a requirement is checked with is part
of its contract, recorded in a *pin* when it is first relied on, and any
later difference is a blocking issue of ``work check`` until a principal
other than the gated one approves it.

Records (project audience; only assay's own operations write these kinds,
see :data:`assay.ids.RESERVED_KINDS`)::

    gate-pin:<intent id>     the intent's checks and tests (e.g. gate-pin:knowledge:login)
    gate-pin:gate            the stop gate's own configuration
    gate-approval:<target>@<pin revision>
                             one approved change: what changed, who approved it, why

An intent's pin holds, per evidence command it relies on (its requirements'
``verify_with`` and the commands of the runs its results cite), the
*contract* of the declaration (:data:`CONTRACT_FIELDS`: argv, cwd, timeout,
env names, results file, requirement map; not the description or the
phases) and its digest; and per requirement, the commands that verify it and
the tests mapped to it in the cited runs, each with its source location and
digest (:mod:`assay.evidence.sources`) and its outcome, with the pinned
source texts (bounded) so a later change can be shown as lines added and
removed. The gate's pin holds ``[gate]`` (intents, on_error, retry_cap,
default_intent), the gated principal, ``[evidence] ignore`` and the hook
entries ``hook install`` writes in the project's harness settings files.

Who pins, and when:

- **Trust on first use.** ``work accept`` pins what the intent relies on
  the first time it does: a new command, a requirement recorded for the
  first time, a requirement's first per-test run (:func:`first_use_writes`).
  An entry, once pinned, is never changed by an accept. The gate's
  configuration is pinned at the first accept in the project, and each
  later accept records it again when it is only *stronger* than pinned
  (more intents, a higher retry cap, fewer ignore patterns, newly installed
  hooks), so tightening the gate is never a change to approve and can never
  be quietly undone either.
- **A reviewer.** ``gate pin`` (a person's operation) pins the current
  state as reviewed; ``gate approve`` adopts a changed state and records
  the approval. Both are refused to the gated principal
  (``gated_principal_cannot_review``). Each pin says who pinned it
  (``pinned_by``) and whether that was someone other than the gated
  principal (``reviewed``).

What is compared (:func:`global_issues`, :func:`tests_issue`):

- ``check_definition_changed``: a pinned command's contract in
  ``assay.toml`` now, or in a cited run, differs from the pin (the fields
  are named), the command is no longer declared, or a requirement rests on
  a run of a command it was not pinned to;
- ``requirement_tests_changed``: a cited run in which a pinned test of the
  requirement is missing (renamed away: its source may reappear under
  another id), newly skipped (or xfailed), has another source digest, or
  runs under a changed ``conftest.py``. New tests beside the pinned ones
  never count;
- ``gate_config_changed``: the gate's configuration is weaker than pinned in
  some field;
- ``gate_pin_unreadable``: a pin record that fails its integrity check, is
  not current, or is not a pin: nothing can be compared with it.

Imports the base modules, config, the ledger contract, evidence and its
sibling intent modules.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence

from assay.canonical import digest
from assay.intent.snapshot import ProjectState
from assay.intent.test_outcomes import run_results, run_targets
from assay.ledger.store import Reader, Record, Write

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "APPROVAL_KIND",
    "APPROVAL_SCHEMA",
    "CONTRACT_FIELDS",
    "GATE_TARGET",
    "PIN_KIND",
    "PIN_SCHEMA",
    "approval_id",
    "approval_write",
    "compare_tests",
    "contract",
    "current_checks",
    "first_use_writes",
    "gate_changes",
    "global_issues",
    "pin_facts",
    "pin_id",
    "project_state",
    "read_pin",
    "reviewed_gate_pin",
    "reviewed_intent_pin",
    "run_contract",
    "run_tests",
    "tests_issue",
    "usable_pin",
]

PIN_KIND = "gate-pin"
APPROVAL_KIND = "gate-approval"
PIN_SCHEMA = "assay.gate-pin.v1"
APPROVAL_SCHEMA = "assay.gate-approval.v1"
GATE_TARGET = "gate"
CONTRACT_FIELDS = ("argv", "cwd", "timeout", "env", "results", "requirements")
_RUN_SCHEMA = "assay.evidence.v1"
# Changed tests an issue names in its message; `changes` lists up to _LISTED.
_NAMED = 5
_LISTED = 50
# Pinned source text kept per pin (the tests' own texts are bounded per test already).
_MAX_PIN_TEXT = 1024 * 1024

def _dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (stored data is never trusted)."""
    return value if isinstance(value, dict) else {}


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) else None



def pin_id(target: str) -> str:
    """``gate-pin:<intent id>``, or ``gate-pin:gate`` for the gate's configuration."""
    return f"{PIN_KIND}:{target}"


def approval_id(target: str, pin_revision: int) -> str:
    """The record id of the approval that made ``pin_revision`` of ``target``'s pin."""
    return f"{APPROVAL_KIND}:{target}@{pin_revision}"


def contract(declaration: Mapping[str, Any]) -> dict[str, Any]:
    """The pinned fields of a declaration as stored (``declaration_data``), absent ones null."""
    return {name: declaration.get(name) for name in CONTRACT_FIELDS}


def current_checks(project: Any) -> dict[str, dict[str, Any]]:
    """The contract of every command ``assay.toml`` declares now, by name."""
    from assay.evidence.record import declaration_data
    from assay.redaction import Redactor

    redactor = Redactor(os.environ)
    return {decl.name: contract(declaration_data(decl, redactor))
            for decl in project.evidence_commands}


def project_state(project: Any, *, gate: Any = None, workspace: bool = True,
                  observation: Any = None) -> ProjectState:
    """The project now: its workspace (when asked), checks and ``gate``, each read on first use.

    ``gate`` is the gate's configuration or a function of no arguments that
    reads it (:func:`assay.gate.settings.gate_configuration`);
    ``observation`` a git observation the caller already made (then the
    workspace is not observed again).
    """
    def now() -> Any:
        from assay.evidence.freshness import observe_now, workspace_now

        if observation is not None:
            return workspace_now(project.root, observation)
        return observe_now(project.root, project.evidence_ignore)

    return ProjectState(workspace=now if workspace else None,
                        checks=lambda: current_checks(project), gate=gate,
                        gated_principal=project.gated_principal)


def read_pin(reader: Reader, target: str) -> Record | None:
    """The project-audience pin of ``target`` (a private record of the same id never counts)."""
    record_id = pin_id(target)
    record = reader.get(record_id)
    if record is None or record.audience == "project":
        return record
    versions = reader.history(record_id, audience="project")
    return versions[-1] if versions else None


def usable_pin(record: Record | None) -> dict[str, Any] | None:
    """The data of an intact, current pin record, else None."""
    if record is None or record.damage is not None or record.status != "current":
        return None
    data = record.data
    if not isinstance(data, dict) or data.get("schema") != PIN_SCHEMA:
        return None
    return data


def pin_facts(record: Record | None) -> dict[str, Any] | None:
    """What a report says of a pin: its identity, who pinned it, whether it is usable."""
    if record is None:
        return None
    data = usable_pin(record)
    if data is None:
        return {"id": record.id, "revision": record.revision, "usable": False}
    return {"id": record.id, "revision": record.revision, "usable": True,
            "pinned_by": data.get("pinned_by"), "reviewed": data.get("reviewed") is True,
            "how": data.get("how"), "approval": data.get("approval")}


def _run_data(record: Record | None) -> dict[str, Any] | None:
    if record is None or record.origin != "machine" or record.damage is not None:
        return None
    data = record.data
    return data if isinstance(data, dict) and data.get("schema") == _RUN_SCHEMA else None


def run_contract(record: Record | None) -> tuple[str, dict[str, Any]] | None:
    """``(command name, contract)`` of a run of assay's runner, else None."""
    data = _run_data(record)
    command = data.get("command") if data is not None else None
    if not isinstance(command, dict) or not isinstance(command.get("name"), str) \
            or not isinstance(command.get("declaration"), dict):
        return None
    return command["name"], contract(command["declaration"])


def _differing(pinned: Mapping[str, Any], other: Mapping[str, Any]) -> list[str]:
    return [name for name in CONTRACT_FIELDS if pinned.get(name) != other.get(name)]


# -- tests ---------------------------------------------------------------------------------


def _labelled(label: str, intent_id: str, requirement_id: str, legacy_owner: str | None) -> bool:
    if label == f"{intent_id}#{requirement_id}":
        return True
    return label == requirement_id and legacy_owner == intent_id


def run_tests(record: Record | None, intent_id: str, requirement_id: str
              ) -> tuple[dict[str, dict[str, Any]], dict[str, str]] | None:
    """The tests a run mapped to ``intent_id#requirement_id``, and the source texts it kept.

    None when the run has no read per-test results. Each test is ``{path,
    function, kind, sha256, outcome}`` (path and digest null when unknown).
    """
    results = run_results(record)
    if results is None or results.get("status") != "read":
        return None
    intents = list(dict.fromkeys(i for i, _ in run_targets(record)))
    legacy = "attribution" not in results
    owner = (intents[0] if len(intents) == 1 else intent_id) if legacy else None
    out: dict[str, dict[str, Any]] = {}
    for row in results.get("tests") or ():
        if not isinstance(row, dict) or not isinstance(row.get("id"), str):
            continue
        labels = [x for x in row.get("requirements") or () if isinstance(x, str)]
        if not any(_labelled(x, intent_id, requirement_id, owner) for x in labels):
            continue
        source = _dict(row.get("source"))
        out[row["id"]] = {
            "path": _string(source.get("path")),
            "function": _string(source.get("function")),
            "kind": source["kind"] if source.get("kind") in ("function", "file", "none")
            else "none",
            "sha256": _string(source.get("sha256")),
            "outcome": _string(row.get("outcome")) or "unknown",
        }
        if isinstance(source.get("conftest"), dict):
            out[row["id"]]["conftest"] = {k: v for k, v in source["conftest"].items()
                                          if isinstance(k, str) and isinstance(v, str)}
    texts = _dict(results.get("source_texts"))
    return out, {k: v for k, v in texts.items() if isinstance(k, str) and isinstance(v, str)}


def _diff_stat(before: str | None, after: str | None) -> tuple[int, int] | None:
    if before is None or after is None:
        return None
    import difflib

    added = removed = 0
    for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed


def compare_tests(pinned: Mapping[str, Any], pinned_texts: Mapping[str, str],
                 now: Mapping[str, Mapping[str, Any]], texts: Mapping[str, str]
                 ) -> list[dict[str, Any]]:
    """How the tests ``now`` differ from the ``pinned`` ones (new tests never count), by test id."""
    by_source = {t["sha256"]: tid for tid, t in now.items()
                 if t.get("sha256") and tid not in pinned}
    out = []
    for tid in sorted(pinned):
        was = pinned[tid] if isinstance(pinned[tid], dict) else {}
        path = was.get("path")
        if tid not in now:
            change: dict[str, Any] = {"test": tid, "change": "missing", "path": path}
            moved = by_source.get(was.get("sha256")) if was.get("sha256") else None
            if moved is not None:
                change.update(change="renamed", renamed_to=moved)
            out.append(change)
            continue
        test = now[tid]
        if test.get("outcome") == "skipped" and was.get("outcome") != "skipped":
            out.append({"test": tid, "change": "skipped", "path": test.get("path") or path})
            continue
        if was.get("sha256") and test.get("sha256") != was.get("sha256"):
            change = {"test": tid, "change": "changed", "path": test.get("path") or path}
            stat = _diff_stat(pinned_texts.get(was["sha256"]),
                              texts.get(test["sha256"]) if test.get("sha256") else None)
            if stat is not None:
                change.update(added=stat[0], removed=stat[1])
            out.append(change)
            continue
        harness, harness_now = _dict(was.get("conftest")), _dict(test.get("conftest"))
        if "conftest" in was and harness != harness_now:
            touched = sorted(k for k in {*harness, *harness_now}
                             if harness.get(k) != harness_now.get(k))
            out.append({"test": tid, "change": "conftest", "path": test.get("path") or path,
                        "conftest": touched})
    return out


def _change_words(change: Mapping[str, Any]) -> str:
    kind = change["change"]
    if kind == "changed" and "added" in change:
        return f"{change['test']} changed (+{change['added']} -{change['removed']} lines)"
    if kind == "renamed":
        return f"{change['test']} renamed to {change['renamed_to']}"
    if kind == "conftest":
        return f"{change['test']} under a changed {', '.join(change['conftest'])}"
    return f"{change['test']} {kind}"


# -- the gate's configuration ---------------------------------------------------------------


def gate_changes(pinned: Mapping[str, Any], now: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The fields in which the gate ``now`` is weaker than ``pinned`` (stronger never counts).

    Weaker: an intent no longer gates, ``on_error`` turned to allow, a lower
    retry cap (the gate gives up sooner), another gated principal, another
    default intent for unscoped marks, an ignore pattern added (fewer files
    are compared), a reviewer key added or its file changed (one more key may
    sign approvals), a pinned hook entry removed or altered.
    """
    out: list[dict[str, Any]] = []

    def changed(name: str, was: Any, is_now: Any) -> None:
        out.append({"field": name, "pinned": was, "now": is_now})

    removed = [i for i in pinned.get("intents") or () if i not in (now.get("intents") or ())]
    if removed:
        changed("intents", removed, None)
    if pinned.get("on_error") == "block" and now.get("on_error") != "block":
        changed("on_error", "block", now.get("on_error"))
    cap, cap_now = pinned.get("retry_cap"), now.get("retry_cap")
    if isinstance(cap, int) and (not isinstance(cap_now, int) or cap_now < cap):
        changed("retry_cap", cap, cap_now)
    if pinned.get("principal") != now.get("principal"):
        changed("principal", pinned.get("principal"), now.get("principal"))
    if pinned.get("default_intent") is not None \
            and pinned.get("default_intent") != now.get("default_intent"):
        changed("default_intent", pinned.get("default_intent"), now.get("default_intent"))
    added = [p for p in now.get("evidence_ignore") or ()
             if p not in (pinned.get("evidence_ignore") or ())]
    if added:
        changed("evidence_ignore", None, added)
    keys, keys_now = _dict(pinned.get("reviewer_keys")), _dict(now.get("reviewer_keys"))
    trusted = sorted(p for p in keys_now if p not in keys or keys_now[p] != keys[p])
    if trusted:
        changed("reviewer_keys", None, trusted)
    hooks, hooks_now = _dict(pinned.get("hooks")), _dict(now.get("hooks"))
    for harness in sorted(hooks):
        events, events_now = _dict(hooks[harness]), _dict(hooks_now.get(harness))
        for event in sorted(events):
            if events[event] and events_now.get(event) != events[event]:
                changed(f"hooks.{harness}.{event}", events[event], events_now.get(event))
    return out


def _gate_words(change: Mapping[str, Any]) -> str:
    name, was, now = change["field"], change["pinned"], change["now"]
    if name == "intents":
        return f"intents no longer gated: {', '.join(was)}"
    if name == "evidence_ignore":
        return f"[evidence] ignore added {', '.join(now)}"
    if name == "reviewer_keys":
        return f"[gate] reviewer_keys added or changed {', '.join(now)}"
    if name.startswith("hooks."):
        return f"the {name[6:].replace('.', ' ')} hook entry " + (
            "was removed" if not now else "was altered")
    return f"{name} {was!r} -> {now!r}"


# -- issues ---------------------------------------------------------------------------------


def _issue(code: str, message: str, action: str, **where: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"code": code, "message": message, "action": action}
    out.update({k: v for k, v in where.items() if v is not None})
    return out


def _by(data: Mapping[str, Any]) -> str:
    who = data.get("pinned_by") or "unknown"
    return f"{who}, reviewed" if data.get("reviewed") is True else f"{who}, not reviewed"


def _tests_pinner(entry: Mapping[str, Any]) -> dict[str, Any]:
    if "tests_pinned_by" in entry:
        return {"pinned_by": entry["tests_pinned_by"], "reviewed": entry.get("tests_reviewed")}
    return dict(entry)


def _approve(intent_id: str | None, gated: str) -> str:
    target = "--gate" if intent_id is None else f"-- {intent_id}"
    return (f"a principal other than {gated} approves the change: "
            f"'assay gate approve --as REVIEWER --reason WHY {target}'")


def _unreadable_issue(record: Record, gated: str, intent_id: str | None) -> dict[str, Any]:
    what = "damaged" if record.damage is not None else (
        record.status if record.status != "current" else "not a pin")
    target = intent_id or "--gate"
    return _issue(
        "gate_pin_unreadable",
        f"the pin {record.id} revision {record.revision} is {what}: what it pinned cannot be "
        "compared",
        f"A principal other than {gated} pins it again after review: 'assay gate pin --as "
        f"REVIEWER {'-- ' + target if intent_id else ''}'".rstrip(),
        pin_id=record.id, pin_revision=record.revision)


def global_issues(intent_id: str, pins: Mapping[str, Record | None], state: ProjectState | None,
                  runs: Sequence[tuple[Record, list[str]]],
                  requirement_runs: Mapping[str, list[Record]],
                  verify_with: Mapping[str, Sequence[str]]) -> list[dict[str, Any]]:
    """The report's pin issues that belong to no one requirement, in emission order.

    ``runs`` are the distinct cited run versions with the requirements citing
    each; ``requirement_runs`` each requirement's cited runs; ``verify_with``
    each requirement's commands as the intent names them now (a run of
    another command is ``evidence_command_mismatch`` already). ``state``
    None compares only what the ledger holds (cited runs with the pin).
    """
    gated = state.gated_principal if state is not None else "the gated principal"
    out: list[dict[str, Any]] = []
    checks_record, gate_record = pins.get("checks"), pins.get("gate")
    for record, target in ((checks_record, intent_id), (gate_record, None)):
        if record is not None and usable_pin(record) is None:
            out.append(_unreadable_issue(record, gated, target))
    gate_pin = usable_pin(gate_record)
    if gate_pin is not None and gate_record is not None and state is not None \
            and state.gate is not None:
        changes = gate_changes(gate_pin.get("gate") or {}, state.gate)
        if changes:
            words = "; ".join(_gate_words(c) for c in changes[:_NAMED])
            more = f" and {len(changes) - _NAMED} more" if len(changes) > _NAMED else ""
            out.append(_issue(
                "gate_config_changed",
                f"the stop gate is configured weaker than pinned ({gate_record.id} revision "
                f"{gate_record.revision}, pinned by {_by(gate_pin)}): {words}{more}",
                "Restore the gate's configuration ([gate] and [evidence] ignore in assay.toml, "
                f"'assay hook install HARNESS'), or {_approve(None, gated)}.",
                fields=[c["field"] for c in changes], changes=changes[:_LISTED],
                pin_id=gate_record.id, pin_revision=gate_record.revision))
    pin = usable_pin(checks_record)
    if pin is None:
        return out
    assert checks_record is not None
    commands = _dict(pin.get("commands"))
    where = {"pin_id": checks_record.id, "pin_revision": checks_record.revision}
    rerun = "Rerun the pinned check and record that run"
    for name in sorted(commands):
        entry = _dict(commands[name])
        pinned = _dict(entry.get("contract"))
        if state is not None:
            now = state.checks.get(name)
            fields = ["declared"] if now is None else _differing(pinned, now)
            if fields:
                how = ("is no longer declared in assay.toml" if now is None
                       else f"differs in assay.toml: {', '.join(fields)}")
                out.append(_issue(
                    "check_definition_changed",
                    f"the check {name} {how} (pinned in {checks_record.id} revision "
                    f"{checks_record.revision} by {_by(entry)})",
                    f"Restore [evidence.commands.{name}] in assay.toml as pinned, or "
                    f"{_approve(intent_id, gated)}.",
                    command=name, fields=fields, source="assay.toml", **where))
        for record, rids in runs:
            found = run_contract(record)
            if found is None or found[0] != name:
                continue
            fields = _differing(pinned, found[1])
            if fields:
                out.append(_issue(
                    "check_definition_changed",
                    f"{record.id} revision {record.revision} ran {name} not as pinned: "
                    f"{', '.join(fields)} differ (pinned in {checks_record.id} revision "
                    f"{checks_record.revision} by {_by(entry)})",
                    f"{rerun} for {', '.join(rids)}, or {_approve(intent_id, gated)}.",
                    command=name, fields=fields, source="run", evidence_id=record.id,
                    recorded_revision=record.revision, requirement_ids=rids, **where))
    requirements = _dict(pin.get("requirements"))
    for rid, cited in requirement_runs.items():
        entry = _dict(requirements.get(rid))
        allowed = [c for c in entry.get("commands") or () if isinstance(c, str)]
        if not allowed:
            continue
        named = verify_with.get(rid) or ()
        for record in cited:
            found = run_contract(record)
            if found is not None and found[0] not in allowed \
                    and (not named or found[0] in named):
                out.append(_issue(
                    "check_definition_changed",
                    f"{rid} rests on {record.id} revision {record.revision}, a run of "
                    f"{found[0]}; it was pinned to {', '.join(allowed)} (in {checks_record.id} "
                    f"revision {checks_record.revision} by {_by(entry)})",
                    f"Cite a run of {allowed[0]} for {rid}, or {_approve(intent_id, gated)}.",
                    command=found[0], fields=["command"], source="run",
                    evidence_id=record.id, recorded_revision=record.revision,
                    requirement_ids=[rid], **where))
    return out


def tests_issue(intent_id: str, requirement_id: str, pin_record: Record | None,
                cited: Record | None, where: Mapping[str, Any], gated: str
                ) -> dict[str, Any] | None:
    """``requirement_tests_changed`` for one cited run of one requirement, or None."""
    pin = usable_pin(pin_record)
    if pin is None or pin_record is None:
        return None
    entry = _dict(_dict(pin.get("requirements")).get(requirement_id))
    pinned = _dict(entry.get("tests"))
    if not pinned:
        return None
    found = run_tests(cited, intent_id, requirement_id)
    if found is None:
        return None
    now, texts = found
    pinned_texts = _dict(pin.get("texts"))
    changes = compare_tests(pinned, pinned_texts, now, texts)
    if not changes:
        return None
    files = sorted({c["path"] for c in changes if c.get("path")}
                   | {f for c in changes for f in c.get("conftest", ())})
    words = ", ".join(_change_words(c) for c in changes[:_NAMED])
    more = f" and {len(changes) - _NAMED} more" if len(changes) > _NAMED else ""
    return _issue(
        "requirement_tests_changed",
        f"{requirement_id}: the tests pinned for it changed in {where['evidence_id']} revision "
        f"{where['recorded_revision']}: {words}{more} (pinned in {pin_record.id} revision "
        f"{pin_record.revision} by {_by(_tests_pinner(entry))})",
        f"Restore {requirement_id}'s pinned tests"
        + (f" in {', '.join(files[:_NAMED])}" if files else "")
        + f" and rerun them, or {_approve(intent_id, gated)}.",
        tests=[c["test"] for c in changes[:_LISTED]], files=files[:_LISTED],
        changes=changes[:_LISTED], pin_id=pin_record.id, pin_revision=pin_record.revision,
        **where)


# -- writing pins ---------------------------------------------------------------------------


def _cited_runs(reader: Reader, acceptance: Mapping[str, Any]) -> dict[str, list[Record]]:
    """Each requirement's cited runs of assay's runner, in citation order."""
    out: dict[str, list[Record]] = {}
    for result in acceptance.get("results") or ():
        runs: list[Record] = []
        for ref in result.get("evidence") or ():
            version = reader.get(ref["id"], ref["revision"])
            if version is not None and _run_data(version) is not None:
                runs.append(version)
        out[result["requirement_id"]] = runs
    return out


def _tests_from(runs: Iterable[Record], intent_id: str, rid: str
                ) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    tests: dict[str, dict[str, Any]] = {}
    texts: dict[str, str] = {}
    for record in runs:
        found = run_tests(record, intent_id, rid)
        if found is None:
            continue
        now, kept = found
        for tid, test in now.items():
            tests.setdefault(tid, test)
            sha = test.get("sha256")
            if sha and sha in kept:
                texts[sha] = kept[sha]
    return tests, texts


def _who(principal: str, state: ProjectState) -> dict[str, Any]:
    return {"pinned_by": principal, "reviewed": principal != state.gated_principal}


def _command_entry(name: str, state: ProjectState, runs: Iterable[Record], principal: str
                   ) -> dict[str, Any] | None:
    pinned = state.checks.get(name)
    if pinned is None:
        for record in runs:
            found = run_contract(record)
            if found is not None and found[0] == name:
                pinned = found[1]
    if pinned is None:
        return None
    return {"contract": pinned, "sha256": digest(pinned), **_who(principal, state)}


def _bounded_texts(texts: Mapping[str, str], tests: Iterable[Mapping[str, Any]]
                   ) -> dict[str, str]:
    used = {t.get("sha256") for t in tests}
    out: dict[str, str] = {}
    total = 0
    for sha in sorted(texts):
        if sha in used and total + len(texts[sha]) <= _MAX_PIN_TEXT:
            out[sha] = texts[sha]
            total += len(texts[sha])
    return out


def _intent_pin(reader: Reader, intent_id: str, document: Any, acceptance: Mapping[str, Any],
                state: ProjectState, principal: str, base: Mapping[str, Any] | None,
                *, reviewed: bool) -> dict[str, Any]:
    """The intent's pin: ``base`` extended with what it lacks, or (``reviewed``) the state now."""
    cited = _cited_runs(reader, acceptance)
    all_runs = [r for runs in cited.values() for r in runs]
    base_commands = dict((base or {}).get("commands") or {})
    base_requirements = dict((base or {}).get("requirements") or {})
    texts: dict[str, str] = dict((base or {}).get("texts") or {})
    relied = [c for r in document.requirements for c in r.verify_with]
    relied += [found[0] for found in map(run_contract, all_runs) if found is not None]
    if reviewed:
        relied += [n for n in base_commands if n in state.checks]
    commands: dict[str, Any] = {} if reviewed else dict(base_commands)
    for name in dict.fromkeys(relied):
        if name in commands:
            continue
        entry = _command_entry(name, state, all_runs, principal)
        if entry is not None:
            commands[name] = entry
    requirements: dict[str, Any] = dict(base_requirements)
    for req in document.requirements:
        rid = req.id
        runs = cited.get(rid)
        entry = dict(base_requirements.get(rid) or {})
        if runs is None and not req.verify_with and not entry:
            continue
        ran = [found[0] for found in map(run_contract, runs or ()) if found is not None]
        tests, kept = _tests_from(runs or (), intent_id, rid)
        # The intent's own verify_with names the check when it has one; else the runs do.
        checks = sorted(set(req.verify_with) or set(ran))
        if reviewed:
            entry = {"commands": checks or sorted(entry.get("commands") or ()),
                     "tests": tests or entry.get("tests") or {}, **_who(principal, state)}
        else:
            if not entry:
                entry = {"commands": checks, "tests": {}, **_who(principal, state)}
            if not entry.get("commands") and checks:
                entry["commands"] = checks
            if not entry.get("tests") and tests:
                entry["tests"] = tests
                if entry.get("pinned_by") != principal:
                    # The entry's pinner did not see these tests: say who pinned them.
                    entry["tests_pinned_by"] = principal
                    entry["tests_reviewed"] = principal != state.gated_principal
        texts.update(kept)
        requirements[rid] = entry
    every_test = [t for e in requirements.values() for t in (e.get("tests") or {}).values()]
    return {"commands": dict(sorted(commands.items())),
            "requirements": dict(sorted(requirements.items())),
            "texts": _bounded_texts(texts, every_test)}


def _write(target: str, record: Record | None, scope: str, data: dict[str, Any],
           links: tuple[Any, ...] = ()) -> Write:
    from assay.ledger.store import Link

    link = (Link("relates-to", target),) if target != GATE_TARGET else ()
    return Write(id=pin_id(target), data=data, scope=scope, links=link + tuple(links),
                 origin="derived", expect_revision=record.revision if record is not None else 0)


def first_use_writes(reader: Reader, state: ProjectState, intent_id: str, document: Any,
                     acceptance: Mapping[str, Any], principal: str, scope: str, *,
                     over_reviewed_gate: bool = True) -> list[Write]:
    """The pin writes a ``work accept`` makes (trust on first use; see the module docstring).

    Nothing when there is nothing new to pin, or when a pin record exists
    but cannot be used (``work check`` reports it; only a reviewer re-pins).
    Without ``over_reviewed_gate`` (a PostgreSQL role whose server refuses
    it a changed reviewed pin), a stronger gate is not recorded over a
    reviewer's gate pin: it stays as the reviewer pinned it, which a
    stronger gate never fails.
    """
    out = []
    record = read_pin(reader, intent_id)
    base = usable_pin(record)
    if record is None or base is not None:
        body = _intent_pin(reader, intent_id, document, acceptance, state, principal, base,
                           reviewed=False)
        if base is None or any(body[k] != base.get(k) for k in body):
            data = {"schema": PIN_SCHEMA, "target": intent_id,
                    "gated_principal": state.gated_principal,
                    **(_who(principal, state) if base is None else
                       {"pinned_by": base.get("pinned_by"), "reviewed": base.get("reviewed")}),
                    "how": "first_accept" if base is None else "extended",
                    "approval": None if base is None else base.get("approval"),
                    **body}
            out.append(_write(intent_id, record, scope, data))
    if state.gate is not None:
        gate_record = read_pin(reader, GATE_TARGET)
        gate_base = usable_pin(gate_record)
        if gate_record is None:
            out.append(_write(GATE_TARGET, None, scope, _gate_pin_data(
                state, principal, "first_accept", None)))
        elif gate_base is not None and gate_base.get("gate") != state.gate \
                and (over_reviewed_gate or gate_base.get("reviewed") is False) \
                and not gate_changes(gate_base.get("gate") or {}, state.gate):
            # A reviewer's signature covered the pin as it was: it does not carry over.
            data = {**{k: v for k, v in gate_base.items() if k != "signature"},
                    "gate": state.gate, "how": "strengthened", "strengthened_by": principal}
            out.append(_write(GATE_TARGET, gate_record, scope, data))
    return out


def _gate_pin_data(state: ProjectState, principal: str, how: str, approval: str | None
                   ) -> dict[str, Any]:
    return {"schema": PIN_SCHEMA, "target": GATE_TARGET, "gated_principal": state.gated_principal,
            **_who(principal, state), "how": how, "approval": approval, "gate": state.gate}


def reviewed_intent_pin(reader: Reader, state: ProjectState, intent_id: str, document: Any,
                        acceptance: Mapping[str, Any] | None, principal: str, scope: str,
                        how: str, approval: str | None) -> Write:
    """The reviewed pin of the intent's current state (``gate pin``, ``gate approve``)."""
    record = read_pin(reader, intent_id)
    base = usable_pin(record)
    body = _intent_pin(reader, intent_id, document, acceptance or {}, state, principal, base,
                       reviewed=True)
    data = {"schema": PIN_SCHEMA, "target": intent_id, "gated_principal": state.gated_principal,
            **_who(principal, state), "how": how, "approval": approval, **body}
    return _write(intent_id, record, scope, data)


def reviewed_gate_pin(reader: Reader, state: ProjectState, principal: str, scope: str, how: str,
                      approval: str | None) -> Write:
    """The reviewed pin of the gate's configuration now."""
    return _write(GATE_TARGET, read_pin(reader, GATE_TARGET), scope,
                  _gate_pin_data(state, principal, how, approval))


def approval_write(target: str, pin_revision: int, scope: str, principal: str,
                   state: ProjectState, reason: str, changes: Sequence[Mapping[str, Any]],
                   facts: Mapping[str, Any]) -> Write:
    """The ``gate-approval`` record of one approved change (never rewritten)."""
    from assay.ledger.store import Link

    data = {"schema": APPROVAL_SCHEMA, "target": target, "pin_id": pin_id(target),
            "pin_revision": pin_revision, "approved_by": principal,
            "gated_principal": state.gated_principal, "reason": reason,
            "changes": [dict(c) for c in changes[:_LISTED]],
            "omitted": {"changes": max(0, len(changes) - _LISTED)}, **facts}
    links = (Link("relates-to", pin_id(target)),) + (
        (Link("relates-to", target),) if target != GATE_TARGET else ())
    return Write(id=approval_id(target, pin_revision), data=data, scope=scope, links=links,
                 origin="derived", expect_revision=0)
