"""One agent of the multi-agent soak (run as a script by tests/soak/test_soak_agents.py).

``soak_agent.py URL ROOT AGENT SECONDS LOG`` works against the ledger at URL
until SECONDS have passed, mixing: compare-and-set increments of shared
counters, new puts with request ids, idempotent replays of its own earlier
requests, request-id reuse with another body (must be refused), updates of the
shared intent by compare-and-set, work checks of that intent, and checkpoints
of it (each agent keeps its own checkpoint journal, as separate machines
would). Every outcome is one JSON line in LOG, written before the next
operation starts, so the checker sees everything that was acknowledged.
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path
from typing import Any

from assay.canonical import digest
from assay.errors import AssayError, ConflictError, RequestConflict, RevisionConflict
from assay.intent.check import work_check
from assay.intent.checkpoint import checkpoint
from assay.intent.snapshot import ProjectBinding
from assay.ledger import Write, open_store

SCOPE = "project:demo"
COUNTERS = 4
INTENT_ID = "knowledge:intent"
LOOPS = 3
OPS = ("cas", "put", "replay", "reuse", "intent", "check", "checkpoint", "loop")
WEIGHTS = (30, 30, 12, 4, 5, 14, 5, 10)
EVALUATION = {"outcome": "partial", "output_summary": "soak round", "constraint_violations": [],
              "should_continue": True}


def main(url: str, root: str, agent: int, seconds: float, log_path: str) -> None:
    rng = random.Random(agent * 7919 + int(time.time()))
    store = open_store(url)
    binding = ProjectBinding(root=root, scope=SCOPE, principal=f"agent-{agent}")
    journal = Path(root) / ".assay" / f"journal-agent-{agent}.json"
    sent: list[tuple[str, dict[str, Any], dict[str, Any]]] = []  # (request id, data, receipt)
    log = open(log_path, "w", encoding="utf-8")  # noqa: SIM115 - closed below

    def emit(entry: dict[str, Any]) -> None:
        log.write(json.dumps(entry, sort_keys=True) + "\n")
        log.flush()

    deadline = time.monotonic() + seconds
    n = 0
    while time.monotonic() < deadline:
        op = rng.choices(OPS, WEIGHTS)[0]
        n += 1
        try:
            if op == "cas":
                counter = f"counter:c{rng.randrange(COUNTERS)}"
                with store.reader() as r:
                    current = r.get(counter)
                revision = current.revision if current else 0
                try:
                    receipt = store.put(Write(id=counter, data={"n": revision + 1, "by": agent},
                                              scope=SCOPE, expect_revision=revision))
                    emit({"op": "cas", "receipt": receipt.to_dict(), "value": revision + 1})
                except RevisionConflict:
                    emit({"op": "cas_conflict"})
            elif op == "put":
                request_id = f"a{agent}-{n}"
                data = {"agent": agent, "n": n, "pad": "z" * rng.randrange(0, 2000)}
                receipt = store.put(Write(id=f"knowledge:a{agent}-{n}", data=data, scope=SCOPE,
                                          request_id=request_id))
                sent.append((request_id, data, receipt.to_dict()))
                emit({"op": "put", "receipt": receipt.to_dict(), "data_sha256": digest(data)})
            elif op == "replay" and sent:
                request_id, data, original = rng.choice(sent)
                receipt = store.put(Write(id=original["id"], data=data, scope=SCOPE,
                                          request_id=request_id))
                emit({"op": "replay", "receipt": receipt.to_dict(), "original": original})
            elif op == "reuse" and sent:
                request_id, data, original = rng.choice(sent)
                try:
                    store.put(Write(id=original["id"], data={**data, "changed": True}, scope=SCOPE,
                                    request_id=request_id))
                    emit({"op": "reuse_accepted", "request_id": request_id})
                except RequestConflict:
                    emit({"op": "reuse_refused"})
            elif op == "intent":
                with store.reader() as r:
                    current = r.get(INTENT_ID)
                assert current is not None
                data = json.loads(current.data_text)
                data["intent"]["brief"] = f"Brief {n} from agent {agent}"
                try:
                    receipt = store.put(Write(id=INTENT_ID, data=data, scope=SCOPE,
                                              expect_revision=current.revision))
                    emit({"op": "intent", "receipt": receipt.to_dict()})
                except RevisionConflict:
                    emit({"op": "intent_conflict"})
            elif op == "check":
                with store.reader() as r:
                    report = work_check(r, binding, INTENT_ID)
                    emit({"op": "check", "ledger_revision": r.ledger_revision,
                          "principal": binding.principal, "digest": digest(report)})
            elif op == "checkpoint":
                try:
                    out = checkpoint(store, binding, INTENT_ID, journal=journal)
                    entry = {"op": "checkpoint", "written": out["written"]}
                    if out["written"]:
                        entry["receipt"] = out["receipt"]
                    emit(entry)
                except ConflictError as exc:
                    emit({"op": "checkpoint_conflict", "code": exc.code})
                except AssayError as exc:
                    # Another agent moved the intent between the read and the
                    # publication gate: the handoff is withheld, as it should be.
                    if exc.code != "publication_withheld":
                        raise
                    emit({"op": "checkpoint_withheld"})
            elif op == "loop":
                loop_round(url, root, f"soak-{rng.randrange(LOOPS)}", emit)
        except AssayError as exc:
            emit({"op": "error", "during": op, "error": exc.to_dict()})
    store.close()
    log.close()


def loop_round(url: str, root: str, loop_id: str, emit: Any) -> None:
    """Read the loop's handle, then submit one round with it through the operations layer."""
    from assay.ops import Invocation, call

    def run(name: str, args: dict[str, Any]) -> dict[str, Any]:
        inv = Invocation(cwd=root, db=url, surface="api")
        try:
            return call(name, args, inv)[0]["data"]
        finally:
            inv.close()

    status = run("loop.status", {"loop": loop_id})
    if status["status"] != "active":
        emit({"op": "loop_stopped", "loop": loop_id})
        return
    try:
        out = run("loop.next", {"handle": json.dumps(status["submissionHandle"]),
                                "evaluation": EVALUATION})
    except ConflictError as exc:
        emit({"op": "loop_conflict", "code": exc.code})
        return
    receipt = out.get("receipt")
    if out.get("stale") or not receipt:
        emit({"op": "loop_stale", "loop": loop_id})
        return
    emit({"op": "loop_commit", "loop": loop_id, "round": receipt["round"],
          "attempt": receipt["attempt"], "transaction": receipt["transactionId"],
          "record": receipt["record"]})


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5])
