"""``assay demo``: the whole story on a temporary project, told step by step.

The demo drives assay only through the operations registry (the same calls
the CLI and MCP make) on the embedded SQLite ledger, and prints what each
step shows. Each capability adds its chapter here.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from assay.ops import Invocation, call

__all__ = ["run_demo"]


class _Story:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.step = 0
        self.started = time.monotonic()
        # On a terminal each chapter shows the time so far; on a pipe the
        # story stays the same text run after run.
        self.tty = sys.stdout.isatty()

    def say(self, text: str) -> None:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    def chapter(self, title: str) -> None:
        self.step += 1
        clock = f"  [{time.monotonic() - self.started:.1f} s]" if self.tty else ""
        self.say(f"\n{self.step}. {title}{clock}")

    def call(self, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        # The demo's own SQLite ledger and principal, whatever ASSAY_DB or
        # ASSAY_PRINCIPAL say: the story never writes into a user's ledger.
        inv = Invocation(cwd=str(self.root), db=str(self.root / ".assay" / "ledger.db"),
                         principal="agent", surface="demo")
        try:
            envelope, _ = call(name, {**(args or {})}, inv)
        finally:
            inv.close()
        return envelope

    def show(self, label: str, value: Any) -> None:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        self.say(f"   {label}: {text}")


def _chapter_foundation(story: _Story) -> None:
    story.chapter("Create a project")
    result = story.call("init", {"cwd": str(story.root)})["data"]
    story.show("scope", result["scope"])
    story.show("config", str(story.root / "assay.toml"))

    story.chapter("Canonical JSON: one digest whatever the key order or spacing")
    a = story.call("canonical", {"text": '{"b": 1, "a": [1.0, 1e21, -0]}'})["data"]
    b = story.call("canonical", {"text": '{"a":[1,1e+21,0],"b":1}'})["data"]
    story.show("canonical", a["canonical"])
    story.show("digest", a["digest"])
    story.show("same digest for the other spelling", str(a["digest"] == b["digest"]).lower())

    story.chapter("Every operation is described once, for the CLI and MCP alike")
    ops = story.call("describe")["data"]["operations"]
    story.show("operations", ", ".join(op["name"] for op in ops))


def _chapter_ledger(story: _Story) -> None:
    from assay.errors import ConflictError

    story.chapter("The ledger: versioned records, guarded writes, idempotent retries")
    data = {"brief": "Add a login rate limit", "owner": "agent"}
    first = story.call("put", {"id": "knowledge:rate-limit", "data": data,
                               "expect_revision": 0, "request_id": "demo-put-1"})["data"]
    story.show("put", f"{first['id']} revision {first['revision']} at ledger revision "
               f"{first['ledger_revision']}")
    try:
        story.call("put", {"id": "knowledge:rate-limit", "data": {"brief": "something else"},
                           "expect_revision": 0})
    except ConflictError as err:
        story.show("a second writer expecting an absent record", f"{err.code} "
                   f"(current revision {err.details['current_revision']}); nothing written")
    again = story.call("put", {"id": "knowledge:rate-limit", "data": data,
                               "expect_revision": 0, "request_id": "demo-put-1"})["data"]
    story.show("the first writer retries with its request id",
               f"replayed={str(again['replayed']).lower()}, same receipt at ledger revision "
               f"{again['ledger_revision']}")


_BUGGY_CALC = "def add(a, b):\n    return a - b\n"
_FIXED_CALC = "def add(a, b):\n    return a + b\n"
_TEST_CALC = ("import calc\n\nresult = calc.add(2, 3)\n"
              "assert result == 5, f'add(2, 3) returned {result}, expected 5'\n"
              "print('test_calc: 1 passed')\n")


def _chapter_evidence(story: _Story) -> None:
    story.chapter("Machine evidence: assay runs the declared check itself")
    (story.root / "calc.py").write_text(_BUGGY_CALC, encoding="utf-8")
    (story.root / "test_calc.py").write_text(_TEST_CALC, encoding="utf-8")
    with open(story.root / "assay.toml", "a", encoding="utf-8") as handle:
        handle.write("\n[evidence.commands.unit]\n"
                     f"argv = {json.dumps([sys.executable, '-B', 'test_calc.py'])}\n"
                     "timeout = 60\nrequired = true\n"
                     'description = "the unit test of calc.add"\n')
    story.show("declared", "[evidence.commands.unit] in assay.toml: python test_calc.py "
               "(argv, timeout, required)")
    run = story.call("evidence.run", {"name": "unit"})["data"]
    story.show("assay evidence run -- unit",
               f"{run['status']} in {run['duration_ms']} ms (exit {run['exit_code']}), "
               f"origin {run['origin']}")
    story.show("cite it as", run["evidence_ref"])
    shown = story.call("evidence.show", {"id": "unit"})["data"]
    observation = shown["record"]["data"]["observation"]
    story.show("record", f"{shown['record']['id']} revision {shown['record']['revision']}, "
               f"machine_observed={str(shown['machine_observed']).lower()}")
    story.show("stderr tail", observation["stderr"]["tail"].strip().splitlines()[-1])
    story.show("stderr sha256", observation["stderr"]["sha256"])
    story.call("put", {"id": "evidence:unit-by-hand",
                       "data": {"observation": {"status": "passed"}}})
    claimed = story.call("evidence.show", {"id": "unit-by-hand"})["data"]
    story.show("an agent writes 'passed' with put instead",
               f"origin {claimed['record']['origin']}, "
               f"machine_observed={str(claimed['machine_observed']).lower()}: a claim stays a claim")


_DEMO_GOAL = """# Goal: ship the manifest parser

Keep every requirement; the fixtures in tests/fixtures are the contract.

## Agent Todo
<!-- assay:todo-region role=agent id=agent-todo begin -->
<!-- assay:todo-region id=agent-todo end -->

## User Todo
<!-- assay:todo-region role=user id=user-todo begin -->
<!-- assay:todo-region id=user-todo end -->

## History
- started from the old parser

Final stop: every fixture passes.
"""


def _chapter_context(story: _Story) -> None:
    story.chapter("Work context: a goal file, todos in the ledger, what to read before acting")
    goal = story.root / "goals" / "parser.md"
    goal.parent.mkdir(exist_ok=True)
    goal.write_text(_DEMO_GOAL, encoding="utf-8")
    with open(story.root / "assay.toml", "a", encoding="utf-8") as handle:
        handle.write('\n[goals.parser]\npath = "goals/parser.md"\n')
    read = story.call("goal.read", {"goal_id": "parser"})["data"]
    story.show("assay goal read --goal-id parser",
               f"ownership {read['ownership']}, revision {read['revision'][:16]}..., "
               f"{len(read['text'])} characters of goal text, regions "
               + ", ".join(f"{r['role']} lines {r['lines']['start']}-{r['lines']['end']}"
                           for r in read["excluded_todo_regions"]))
    todo = story.call("todo.add", {"goal_id": "parser", "todo_id": "parse",
                                   "text": "Parse the manifest\nKeep every error pointer exact."}
                      )["data"]["todo"]
    story.call("todo.add", {"goal_id": "parser", "todo_id": "approve-schema",
                            "owner_role": "user", "text": "Approve the manifest schema"})
    claimed = story.call("todo.claim", {"todo_id": "parse",
                                        "expect_revision": todo["authority"]["revision"]}
                         )["data"]["todo"]
    story.show("todo added and claimed", f"{claimed['id']} {claimed['status']} by "
               f"{claimed['claim']['principal']} until {claimed['claim']['lease_expires_at']}")
    listing = story.call("todo.list", {"goal_id": "parser"})["data"]
    story.show("assay todo list --goal-id parser",
               f"{len(listing['todos'])} todos; "
               f"{listing['todo_list_record_references']['replaced_view_records']} lane copies "
               f"are pointers such as {json.dumps(listing['agent_todos']['selected'][0])}")
    story.call("goal.write", {"goal_id": "parser", "expect_revision": read["revision"]})
    after = story.call("goal.read", {"goal_id": "parser"})["data"]
    story.show("assay goal write", f"regions regenerated, goal text unchanged: "
               f"{str(after['text'] == read['text']).lower()}")
    for line in goal.read_text(encoding="utf-8").splitlines()[5:9]:
        story.say(f"      {line}")
    context = story.call("work.context", {"goal_id": "parser"})["data"]["work_context"]
    story.show("assay work context",
               f"selected {context['selected_todo_ref']['$ref']}, sources "
               + ", ".join(f"{s['source']}={s['status']}" for s in context["sources"])
               + f", required reads {len(context['required_reads'])}, "
               f"complete={str(context['complete']).lower()}")
    with open(goal, "a", encoding="utf-8") as handle:
        handle.write("- [ ] a checklist someone typed outside the regions\n")
    context = story.call("work.context", {"goal_id": "parser"})["data"]["work_context"]
    story.show("after an unmarked checklist is added, goal_state is",
               context["sources"][0]["status"] + f" ({context['sources'][0]['ownership']})")
    for read_entry in context["required_reads"]:
        story.show("required read", json.dumps(read_entry["command"]))


def _chapter_packet(story: _Story) -> None:
    from assay.canonical import canonical_text, digest_bytes

    def write(path: Path, value: Any) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(canonical_text(value) + "\n", encoding="utf-8")

    story.chapter("A research packet: validated once, rendered only when honest")
    packet = story.root / "research" / "wal-packet"
    run = "run-demo-wal"
    story.call("packet.init", {"dir": str(packet), "objective": "Is SQLite WAL safe for readers?",
                               "profile": "quick", "run_id": run})
    lanes = [("map-1", "w-map", "map"), ("gather-1", "w-gather", "gather")]
    execution = {
        "provider": "local", "route": "default", "role": "researcher", "model": "any",
        "effort": "low", "reasoningMode": None, "serviceTier": None,
        "authority": "contract-enforced", "maxConcurrency": 2, "deadlineSeconds": 600,
        "retryLimit": 0,
        "waves": [{"waveId": wave, "mode": mode, "taskClass": "retrieval", "conditional": False,
                   "lanes": [{"laneId": lane, "scope": mode, "writeRoot": f"raw/dossiers/{lane}"}]}
                  for lane, wave, mode in lanes],
    }
    approved = story.call("packet.approve", {"dir": str(packet), "execution": execution})["data"]
    story.show("approved execution fingerprint", approved["fingerprint"])
    fact = "In WAL mode readers do not block writers and writers do not block readers."
    notes = story.root / "research" / "wal-notes.txt"
    notes.write_text(f"Notes on journaling.\n{fact}\n", encoding="utf-8")
    story.call("packet.source", {"dir": str(packet), "source_id": "wal-notes", "file": str(notes)})
    inputs = []
    for lane, wave, mode in lanes:
        write(packet / f"raw/drafts/{lane}.json", {
            "kind": "assay.raw-dossier", "schemaVersion": 1, "dossierId": lane, "runId": run,
            "waveId": wave, "laneId": lane, "mode": mode, "inputs": ["objective"],
            "exclusions": [], "findings": [{"findingId": f"{lane}-1", "statement": fact,
                                            "sourceIds": ["wal-notes"], "excerpt": fact}],
            "uncertainty": [], "contradictions": [], "gaps": [], "outcome": "complete"})
        admitted = story.call("packet.admit", {"dir": str(packet), "draft": f"raw/drafts/{lane}.json",
                                               "to": f"raw/dossiers/{lane}/dossier.json"})["data"]
        inputs.append({"path": admitted["path"], "digest": admitted["digest"]})
    capture = notes.read_bytes()
    start = capture.index(fact.encode())
    write(packet / "claims.json", {
        "kind": "assay.claim-ledger", "schemaVersion": 1, "runId": run, "revision": 1,
        "inputs": inputs, "synthesis": "WAL lets readers and one writer proceed together.",
        "evidence": [{"evidenceId": "ev-1", "sourceId": "wal-notes",
                      "sourceDigest": "sha256:" + digest_bytes(capture),
                      "locator": {"start": start, "end": start + len(fact)}, "excerpt": fact}],
        "claims": [{"claimId": "wal-readers", "statement": "WAL readers do not block the writer.",
                    "state": "supported", "qualifications": [],
                    "evidence": [{"evidenceId": "ev-1", "relation": "supports"}]}],
        "unresolvedQuestions": [],
        "transitions": [
            {"claimId": "wal-readers", "from": "provisional", "to": "supported",
             "reason": "exact excerpt"}],
    })
    story.call("packet.close", {"dir": str(packet), "status": "complete"})
    summary = story.call("packet.validate", {"dir": str(packet)})["data"]["summary"]
    story.show("valid", f"profile {summary['achieved_profile']} achieved of "
               f"{summary['requested_profile']}, publication {summary['publication']}, "
               f"evidence states {canonical_text(summary['evidence_states'])}")
    rendered = story.call("packet.render", {"dir": str(packet)})["data"]["rendered"]
    story.show("rendered", f"{rendered['path']} ({rendered['digest'][:19]}...)")
    dossier = packet / "raw/dossiers/gather-1/dossier.json"
    data = bytearray(dossier.read_bytes())
    data[data.index(b"readers")] = ord("R")
    dossier.write_bytes(bytes(data))
    story.say("   one byte of the gather dossier changed ('readers' -> 'Readers')")
    refused = story.call("packet.validate", {"dir": str(packet)})["data"]
    for issue in refused["issues"]:
        story.show("refused", f"{issue['code']} at {issue['path']}#{issue['pointer']}")
    story.show("packet.md withdrawn", str(refused["withdrawn"] and
                                          not (packet / "packet.md").exists()).lower())


def _chapter_intent(story: _Story) -> None:
    from assay.errors import AssayError
    from assay.intent.contract import intent_sha256

    story.chapter("Intent: is it ready for review? Not until the evidence says so")
    created = story.call("work.new", {
        "id": "knowledge:calc", "brief": "calc.add adds two numbers and is documented",
        "user_reference": "demo request: make calc.add trustworthy",
        "requirement": ["R1|add returns the sum|assay runs the unit check",
                        "R2|the doc says what add does|a reviewer reads the docstring note|R1",
                        "R3|calc.py compiles cleanly|assay runs compile"],
        "verify_with": ["R1=unit", "R3=calc-compiles"],
        "boundary": ["Change only calc.py"], "non_goal": ["No new operations"]})["data"]
    story.show("assay work new -- knowledge:calc", f"R1, R2 (child of R1), R3 in one guarded "
               f"put; intent_sha256 {created['intent_sha256'][:16]}...")

    def check(label: str) -> dict[str, Any]:
        envelope = story.call("work.check", {"id": "knowledge:calc"})
        report: dict[str, Any] = envelope["data"]
        statuses = ", ".join(f"{r['id']} {r['status']}" for r in report["delta"]["requirements"])
        story.show(label, f"ready_to_review={str(report['ready_to_review']).lower()}; {statuses}")
        for issue in report["issues"]:
            kind = "advisory" if issue.get("advisory") else "issue"
            story.show(f"  {kind}", f"{issue['code']}: {issue['message']}")
        return report

    check("work check")
    # An agent claims R1 passed by hand, citing the unit run of the evidence
    # chapter: that run failed (the bug was still there).
    current = story.call("get", {"id": "knowledge:calc"})["data"]["record"]
    intent = current["data"]["intent"]
    failed = story.call("get", {"id": "evidence:unit", "revision": 1})["data"]["record"]
    story.call("put", {"id": "knowledge:calc", "expect_revision": current["revision"], "data": {
        "intent": intent, "acceptance": {
            "intent_sha256": intent_sha256(intent), "blockers": [], "results": [
                {"requirement_id": "R1", "status": "passed", "notes": "the tests pass",
                 "evidence": [{"id": "evidence:unit", "revision": 1,
                               "data_sha256": failed["data_sha256"]}]}]}}})
    check("an agent puts R1 passed citing evidence:unit@1 by hand")
    try:
        story.call("work.accept", {"id": "knowledge:calc", "requirement": ["R1"],
                                   "evidence": ["evidence:unit@1"], "status": "passed"})
    except AssayError as exc:
        story.show("assay work accept --requirement R1 --evidence evidence:unit@1 --status passed",
                   f"refused ({exc.code}): {exc.message}")
    with open(story.root / "assay.toml", "a", encoding="utf-8") as handle:
        handle.write("\n[evidence.commands.calc-compiles]\n"
                     f"argv = {json.dumps([sys.executable, '-m', 'py_compile', 'calc.py'])}\n"
                     'timeout = 60\ndescription = "calc.py compiles"\n')
    unit = story.call("evidence.run", {"name": "unit", "target": ["knowledge:calc#R1"]})["data"]
    cite = f"{unit['receipt']['id']}@{unit['receipt']['revision']}"
    story.show("assay evidence run --for knowledge:calc#R1 -- unit",
               f"{unit['status']} now that calc.add is fixed: {cite}")
    accepted = story.call("work.accept", {"id": "knowledge:calc", "from_run": [cite]})["data"]
    story.show(f"assay work accept --from-run {cite} -- knowledge:calc",
               f"R1 {accepted['results'][0]['status']} in one guarded put (intent_sha256 and "
               "data_sha256 computed by assay)")
    note = story.call("put", {"id": "knowledge:calc-doc-note",
                              "data": {"text": "add(a, b) returns a + b; reviewed by hand"}})["data"]
    story.call("work.accept", {"id": "knowledge:calc", "requirement": ["R2"],
                               "evidence": [f"{note['id']}@{note['revision']}"],
                               "note": "the note records the reviewed docstring"})
    check("after recording R1 and R2")
    compiles = story.call("evidence.run", {"name": "calc-compiles",
                                           "target": ["knowledge:calc#R3"]})["data"]
    story.call("work.accept", {"id": "knowledge:calc", "from_run": [
        f"{compiles['receipt']['id']}@{compiles['receipt']['revision']}"]})
    story.show("assay evidence run --for knowledge:calc#R3 -- calc-compiles, then work accept",
               f"{compiles['status']}, origin {compiles['origin']}")
    report = check("after recording R3's evidence")
    for item in report["actual"]["results"]:
        for ref in item["evidence"]:
            run = ref.get("run") or {}
            story.show(f"  {item['requirement_id']} evidence",
                       f"{ref['id']}@{ref['revision']} machine_observed="
                       f"{str(ref['machine_observed']).lower()}"
                       + (f", run {run['status']}" if run else ""))
    first = story.call("work.checkpoint", {"id": "knowledge:calc"})["data"]
    again = story.call("work.checkpoint", {"id": "knowledge:calc"})["data"]
    story.show("work checkpoint", f"wrote {first['handoff_id']} revision "
               f"{first['receipt']['revision']}; unchanged again -> written="
               f"{str(again['written']).lower()}, same receipt "
               f"{str(again['receipt']['revision'] == first['receipt']['revision']).lower()}")


def _chapter_pins(story: _Story) -> None:
    from assay.errors import AssayError

    story.chapter("The checks are part of the contract: a redefined check blocks readiness")
    pin = story.call("get", {"id": "gate-pin:knowledge:calc"})["data"]["record"]["data"]
    story.show("work accept pinned the checks knowledge:calc relies on",
               f"{', '.join(pin['commands'])} by {pin['pinned_by']} "
               f"(reviewed={str(pin['reviewed']).lower()})")
    pinned = story.call("gate.pin", {"intent": ["knowledge:calc"], "principal": "reviewer"})
    story.show("assay --as reviewer gate pin -- knowledge:calc",
               f"{pinned['data']['pins'][0]['id']} revision "
               f"{pinned['data']['pins'][0]['revision']}, reviewed=true")
    config = story.root / "assay.toml"
    honest = config.read_text(encoding="utf-8")
    fake = json.dumps([sys.executable, "-c", "print('test_calc: 1 passed')"])
    config.write_text(honest.replace(
        f"argv = {json.dumps([sys.executable, '-B', 'test_calc.py'])}", f"argv = {fake}"),
        encoding="utf-8")
    story.say("   the agent points [evidence.commands.unit] argv at a print of '1 passed'")
    report = story.call("work.check", {"id": "knowledge:calc"})["data"]
    issue = next(i for i in report["issues"] if i["code"] == "check_definition_changed")
    story.show("work check", f"ready_to_review={str(report['ready_to_review']).lower()}; "
               f"{issue['code']}: {issue['command']} {', '.join(issue['fields'])}")
    try:
        story.call("gate.approve", {"intent": ["knowledge:calc"], "reason": "it is fine"})
    except AssayError as exc:
        story.show("the agent approves its own change", f"refused ({exc.code})")
    config.write_text(honest, encoding="utf-8")
    report = story.call("work.check", {"id": "knowledge:calc"})["data"]
    story.show("assay.toml restored", f"ready_to_review={str(report['ready_to_review']).lower()}")


def _chapter_loop(story: _Story) -> None:
    story.chapter("A governed loop: a claim is contradicted, the fix is verified")
    view = story.call("loop.start", {"task": "Make calc.add add", "loop": "fix-add",
                                     "criterion": ["add(2, 3) == 5"],
                                     "constraint": ["change only calc.py"],
                                     "max_rounds": 3})["data"]
    crit = view["guidance"]["criteria"][0]["id"]
    story.show("assay loop start", f"loop {view['loopId']}, {view['roundId']}, criterion {crit}, "
               f"prompt {len(view['prompt'])} characters")
    story.show("submission handle", json.dumps(view["submissionHandle"], sort_keys=True))

    def submit(handle: dict[str, Any], evaluation: dict[str, Any]) -> dict[str, Any]:
        data: dict[str, Any] = story.call("loop.next", {"handle": json.dumps(handle),
                                                        "evaluation": evaluation})["data"]
        return data

    base = {"constraint_violations": [], "output_summary": ""}
    r1 = submit(view["submissionHandle"], {
        **base, "outcome": "partial", "should_continue": True,
        "output_summary": "read calc.py; the next slice makes add add",
        "round_contract": {"work_item": "calc.add adds", "items": [
            {"description": "the unit test passes", "criterion_refs": [crit],
             "verify_with": ["unit"]}]}})
    contract = r1["guidance"]["active_contract"]
    story.show("round 1 committed", f"contract {contract['id']} with item "
               f"{contract['items'][0]['id']} becomes active for round 2")
    claim = submit(r1["submissionHandle"], {
        **base, "outcome": "success", "should_continue": False,
        "output_summary": "add is done (it is not: nothing changed)"})
    receipt = claim["receipt"]
    posture = receipt["verification"]["evidence_posture"]
    checks = receipt["rejection"]["checks"]
    story.show("round 2 claims success", f"accepted={str(claim['accepted']).lower()}, "
               f"posture {posture['status']}, rejected by "
               f"{', '.join(c['check'] for c in checks)}; now attempt {claim['attempt']}")
    ladder = checks[-1]["ladder"]
    story.show("the ladder", f"{checks[-1]['check']} {ladder['count']} in a row; the same "
               f"again is met with: {ladder['next']}")
    (story.root / "calc.py").write_text(_FIXED_CALC, encoding="utf-8")
    story.say("   the agent fixes calc.py ('a - b' -> 'a + b'); publishing the fix is a risky step")
    _gated_success(story, claim, submit)


def _gated_success(story: _Story, held: dict[str, Any],
                   submit: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]) -> None:
    """The fix wants a risky step: a gate the agent may not approve, a second principal does."""
    gate = story.call("loop.gate-check", {"handle": json.dumps(held["submissionHandle"]),
                                          "action": "publish the fix: git push origin main"}
                      )["data"]["gateDecision"]
    story.show("assay loop gate-check", f"{gate['gateId']} {gate['decision']}, risk "
               f"{gate['risk']} ({', '.join(gate['reasonCodes'])})")
    story.show("until a second principal approves it", "citing it in gate_ids is rejected "
               "(gate_unapproved)")
    from assay.errors import AssayError

    try:
        story.call("loop.approve", {"gate": gate["gateId"], "loop": "fix-add"})
    except AssayError as exc:
        story.show("the agent approves its own gate", f"refused ({exc.code})")
    approved = story.call("loop.approve", {"gate": gate["gateId"], "loop": "fix-add",
                                           "principal": "reviewer",
                                           "reason": "the fix is small and tested"}
                          )["data"]["gateDecision"]["approval"]
    story.show("assay --as reviewer loop approve", f"gate {gate['gateId']} {approved['status']} "
               f"by {approved['principal']}, a second principal")
    finished = submit(held["submissionHandle"], {
        "constraint_violations": [], "outcome": "success", "should_continue": False,
        "output_summary": "add now adds; assay ran the unit test", "gate_ids": [gate["gateId"]]})
    posture = finished["receipt"]["verification"]["evidence_posture"]
    terminal = finished["terminal"]
    story.show("round 2 after the fix", f"posture {posture['status']}, "
               f"machineBackedSuccess={str(posture['machineBackedSuccess']).lower()}")
    story.show("loop stopped", f"{terminal['stopReason']} after {terminal['committedRounds']} "
               f"committed rounds; trajectory "
               f"{json.dumps(terminal['machineBackedSuccessTrajectory'])}")


def _chapter_provenance(story: _Story) -> None:
    story.chapter("Saved context: a note is only as good as the record it was derived from")
    fact = story.call("put", {"id": "knowledge:login-limit", "expect_revision": 0,
                              "data": {"limit": 5, "window_s": 60}})["data"]
    note = story.call("note.add", {"text": "Logins are limited to 5 per 60 s window.",
                                   "source": [f"knowledge:login-limit@{fact['revision']}"]})["data"]
    story.show("note add --source knowledge:login-limit@1",
               f"{note['receipt']['id']} pinned to data sha256 {note['sources'][0]['data_sha256'][:12]}…")
    story.call("memory.add", {"text": "my hunch: the limit is too strict", "principal": "alice"})
    hidden = story.call("memory.search", {"query": "hunch", "principal": "bob"})["data"]
    story.show("alice's private memory, searched by bob", f"count {hidden['count']}, "
               f"{len(hidden['unavailable'])} unavailable lines: nothing of it is visible")
    listed = story.call("note.list")["data"]
    story.show("note list", f"{listed['count']} admitted; envelope {listed['envelope']['status']} "
               f"over {len(listed['envelope']['leaves'])} record versions")
    story.call("retire", {"id": "knowledge:login-limit", "expect_revision": fact["revision"]})
    after = story.call("note.list")["data"]
    story.show("after retiring knowledge:login-limit", after["unavailable"][0]["line"])
    verdict = story.call("publish.check", {"envelope": listed["envelope"]})["data"]
    story.show("publish check of the earlier read", f"{verdict['line']} "
               f"(attempts {verdict['attempts']})")


def _chapter_report(story: _Story) -> None:
    story.chapter("The review report: one self-contained HTML page for the person who reviews")
    dossier = story.root / "research" / "wal-packet" / "raw/dossiers/gather-1/dossier.json"
    data = bytearray(dossier.read_bytes())
    data[data.index(b"Readers")] = ord("r")
    dossier.write_bytes(bytes(data))
    packet = story.call("packet.validate", {"dir": str(dossier.parents[3])})["data"]
    story.show("the dossier's byte restored", f"valid={str(packet['valid']).lower()} again: "
               "the refusal was bound to the content, not to the packet")
    out = story.root / "assay-report.html"
    report = story.call("report", {"intent": "knowledge:calc", "loop": "fix-add",
                                   "packet": "research/wal-packet", "out": str(out)})["data"]
    story.show("assay report --intent knowledge:calc --loop fix-add --packet research/wal-packet",
               f"sections {', '.join(report['sections'])}; ready_to_review="
               f"{str(report['ready_to_review']).lower()} at ledger revision "
               f"{report['ledger_revision']}; {report['bytes']} bytes, no network needed")
    story.show("publication gate", f"{report['publication']['line']} "
               f"({report['publication']['sources']} record versions)")
    story.say(f"   report written: {report['path']}")


def _chapter_loop_replay(story: _Story) -> None:
    story.chapter("The loop's record: every prompt re-derives from committed facts")
    replayed = story.call("loop.replay", {"loop": "fix-add", "all": True})["data"]
    story.show("assay loop replay --all --loop fix-add",
               f"{len(replayed['replays'])} prompts recompiled, every promptHash matches: "
               f"{str(replayed['match']).lower()}")
    audit = story.call("loop.audit", {"loop": "fix-add"})["data"]
    story.show("assay loop audit", f"{len(audit['rounds'])} committed rounds, "
               f"{len(audit['rejections'])} rejected attempt(s), "
               f"{len(audit['directives'])} recovery directive(s); terminal "
               f"{audit['terminal']['stopReason']}, machineBackedSuccess="
               f"{str(audit['terminal']['machineBackedSuccess']).lower()}")


# The story, in order: a project and its ledger; machine evidence; a governed
# loop whose contract runs a real test; an intent that becomes ready as that
# evidence is cited; its pinned checks, which a redefinition cannot pass; the
# work context; a research packet refused after
# tampering; a note withheld once its source is retired; and the report a
# reviewer opens.
CHAPTERS: list[Callable[[_Story], None]] = [_chapter_foundation, _chapter_ledger,
                                             _chapter_evidence, _chapter_loop, _chapter_intent,
                                             _chapter_pins, _chapter_context, _chapter_packet,
                                             _chapter_provenance, _chapter_report,
                                             _chapter_loop_replay]


def run_demo(*, keep: str | None = None) -> int:
    """Run every chapter in a fresh project; return the exit status.

    With ``keep``, the project is built in that directory, which must not
    exist yet or be empty: the demo never writes into an existing project
    (its files, its assay.toml or its configured ledger).
    """
    started = time.monotonic()
    if keep:
        root = _keep_dir(Path(keep))
        return _run(root, started, kept=True)
    with tempfile.TemporaryDirectory(prefix="assay-demo-") as tmp:
        return _run(Path(tmp), started, kept=False)


def _keep_dir(path: Path) -> Path:
    """``path`` made ready for the demo: created if absent, else it must be an empty directory."""
    from assay.errors import UsageError

    try:
        if path.is_dir() and not path.is_symlink():
            if any(path.iterdir()):
                raise UsageError(
                    f"{path} is not empty; the demo builds its project only in a new or empty "
                    "directory", code="demo_dir_not_empty", pointer="/keep",
                    action="Pass a directory that does not exist yet, e.g. "
                           "'assay demo --keep ./assay-demo'.")
        elif path.exists() or path.is_symlink():
            raise UsageError(f"{path} exists and is not a directory", code="demo_dir_not_empty",
                             pointer="/keep", action="Pass a directory that does not exist yet.")
        else:
            path.mkdir(parents=True)
    except OSError as exc:
        raise UsageError(f"cannot use {path} for the demo: {exc.strerror}",
                         code="demo_dir_unusable", pointer="/keep") from None
    return path.resolve()


def _run(root: Path, started: float, *, kept: bool) -> int:
    story = _Story(root)
    story.say(f"assay demo: {'a project kept' if kept else 'a temporary project'} at {root}")
    for chapter in CHAPTERS:
        chapter(story)
    story.say(f"\nDone in {time.monotonic() - started:.1f} s.")
    if not kept:
        story.say("The temporary project is removed now; 'assay demo --keep DIR' keeps it "
                  "(and its report) to explore.")
    return 0
