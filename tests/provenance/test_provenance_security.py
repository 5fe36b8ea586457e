"""Security: what is private to one principal never shows in another's reads, in any form."""

from __future__ import annotations

import json
import re
from typing import Any

from assay_testing import make_project

TOKEN = "zebraquartz7741"
GOAL = "# Parser goal\n\nMake the parser strict.\n"
INTENT = {"intent": {
    "version": 1, "brief": "Make the parser strict", "user_reference": "ticket 7",
    "requirements": [{"id": "R1", "text": "Reject bad input", "acceptance": "Run the test"}],
    "boundaries": ["Keep the API"], "non_goals": ["No new parser"]}}
# "query" is bob's own words echoed back.
_VOLATILE = {"ledger_revision", "envelope_sha256", "checked_revision", "created_at", "epoch", "query"}


def _normal(value: Any) -> Any:
    """Drop what moves with every write anyone makes (revision counters, epoch, times).

    The ledger revision is one global counter every write raises, whoever
    makes it; it says nothing about what was written.
    """
    if isinstance(value, dict):
        is_envelope = "leaves" in value and "origins" in value
        return {k: _normal(v) for k, v in value.items()
                if k not in _VOLATILE and not (is_envelope and k == "revision")}
    if isinstance(value, list):
        return [_normal(v) for v in value]
    if isinstance(value, str):
        return re.sub(r"ledger revision \d+", "ledger revision N", value)
    return value


def _reads(proj: Any) -> dict[str, Any]:
    """Bob's reads over every context surface, and the HTML report, normalised."""
    reads = {
        "note list": ("note", "list"),
        "memory search": ("memory", "search", "--", TOKEN),
        "memory search (all words)": ("memory", "search", "--", "plan"),
        "memory list": ("memory", "list"),
        "find": ("find", "--", TOKEN),
        "find memory": ("find", "--kind", "memory"),
        "find note": ("find", "--kind", "note"),
        "find pending": ("find", "--kind", "pending"),
        "pending list": ("pending", "list", "--state", "any"),
        "work status": ("work", "status"),
        "work attention": ("work", "attention"),
        "work check (continuity)": ("work", "check", "--", "knowledge:parser"),
        "work resume": ("work", "resume", "--", "knowledge:parser"),
        "work context": ("work", "context", "--goal-id", "parser"),
        "todo list": ("todo", "list", "--goal-id", "parser"),
    }
    out: dict[str, Any] = {}
    page = proj.root / "report.html"
    made = proj.run("report", "--as", "bob", "--intent", "knowledge:parser", "--out", str(page))
    assert made.code == 0, made.stderr
    # The page names the global ledger revision and the hash of an envelope
    # taken at it; both move with anyone's write.
    out["html report"] = re.sub(
        r'(ledger revision"?>?|ledger-revision">|envelope )[0-9a-f]+', r"\1N",
        page.read_text(encoding="utf-8"))
    for name, args in reads.items():
        result = proj.run(*args, "--as", "bob") if "--" not in args else \
            proj.run(*args[:args.index("--")], "--as", "bob", *args[args.index("--"):])
        assert result.code in (0, 1), (name, result.stderr)
        out[name] = _normal(json.loads(result.stdout)) if result.stdout else result.stderr
    return out


def test_private_memory_never_appears_in_another_principals_reads(tmp_path: Any) -> None:
    """Alice's private memory, and a note and a question derived from it, leave bob's reads unchanged."""
    proj = make_project(tmp_path / "p", extra_toml='\n[goals.parser]\npath = "goal.md"\n'
                                                   'acceptance = "knowledge:parser"\n')
    (proj.root / "goal.md").write_text(GOAL, encoding="utf-8")
    proj.ok("put", "--data-file", "-", "--", "knowledge:parser", input=json.dumps(INTENT))
    proj.ok("note", "add", "--as", "bob", "--", "bob's own plan note")
    before = _reads(proj)

    added = proj.ok("memory", "add", "--as", "alice", "--", f"secret plan {TOKEN}")["data"]
    memory_id, memory_sha = added["receipt"]["id"], added["receipt"]["data_sha256"]
    note = proj.ok("note", "add", "--as", "alice", "--source", f"{memory_id}@1", "--",
                   f"summary of the {TOKEN} plan")["data"]
    assert note["audience"] == "private:alice"
    question = proj.ok("pending", "ask", "--as", "alice", "--source", f"{memory_id}@1", "--",
                       f"go with {TOKEN}?")["data"]
    assert question["audience"] == "private:alice"
    # A private memory written straight to the ledger and linked to the intent,
    # where continuity and the report look for related context.
    linked = proj.ok("put", "--as", "alice", "--audience", "private:alice", "--link",
                     "relates-to:knowledge:parser", "--data-file", "-", "--", "memory:linked",
                     input=json.dumps({"version": 1, "text": f"linked {TOKEN}",
                                       "author": "alice"}))["data"]
    after = _reads(proj)

    text = json.dumps(after)
    for secret in (TOKEN, memory_id, memory_sha, note["receipt"]["id"],
                   note["receipt"]["data_sha256"], question["receipt"]["id"], "memory:linked",
                   linked["data_sha256"]):
        assert secret not in text
    assert after == before
    # Alice herself sees her memory; the one written with put is not saved context.
    mine = proj.ok("memory", "search", "--as", "alice", "--", TOKEN)["data"]
    assert {i["id"] for i in mine["items"]} == {memory_id}
    assert [(u["id"], u["reason"]) for u in mine["unavailable"]] == [("memory:linked",
                                                                      "provenance_legacy")]


def test_private_memory_read_by_id_is_indistinguishable_from_absent(tmp_path: Any) -> None:
    """Bob asking for alice's private memory by id gets exactly the answer for a missing id."""
    proj = make_project(tmp_path / "p")
    memory_id = proj.ok("memory", "add", "--as", "alice", "--", "x")["data"]["receipt"]["id"]
    hidden = proj.run("get", "--as", "bob", "--", memory_id)
    absent = proj.run("get", "--as", "bob", "--", "memory:m-00000000")
    assert hidden.code == absent.code == 6
    assert hidden.error["code"] == absent.error["code"] == "record_not_found"
    assert hidden.stderr.replace(memory_id, "ID") == absent.stderr.replace("memory:m-00000000", "ID")


def test_revoked_source_withholds_a_note_admitted_a_moment_earlier(tmp_path: Any) -> None:
    """A note admitted by one read is omitted by the next once its source is retired."""
    proj = make_project(tmp_path / "p")
    proj.ok("put", "--data-file", "-", "--", "knowledge:k", input='{"v":1}')
    note_id = proj.ok("note", "add", "--source", "knowledge:k@1", "--",
                      "derived")["data"]["receipt"]["id"]
    admitted = proj.ok("note", "list")["data"]
    assert [i["id"] for i in admitted["items"]] == [note_id]
    proj.ok("retire", "--expect-revision", "1", "--", "knowledge:k")
    withheld = proj.ok("note", "list")["data"]
    assert withheld["items"] == []
    assert [(u["id"], u["reason"]) for u in withheld["unavailable"]] == [(note_id, "source_retired")]
    assert withheld["envelope"]["status"] == "known" and withheld["envelope"]["leaves"] == []
