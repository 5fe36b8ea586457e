"""Fuzzing the document boundaries: intent contracts, self-evaluations, goal markdown, packets, ledger writes.

Each boundary either accepts a document or refuses it with an AssayError that
carries a stable code (and a pointer where a field is at fault); nothing else
ever escapes, and refused ledger writes change nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fuzz_tools import (
    CODE,
    FUZZ,
    corpus_bytes,
    inputs,
    json_values,
    mutated,
    mutated_document,
)
from hypothesis import given
from hypothesis import strategies as st

from assay.errors import AssayError

FIXTURES = Path(__file__).parents[1] / "fixtures" / "intent"
CORPUS = Path(__file__).with_name("corpus")
INTENT_SEEDS = [json.loads(p.read_text(encoding="utf-8"))["data"]
                for p in sorted(FIXTURES.glob("*.json"))]
EVALUATION_SEEDS = [json.loads(p.read_text(encoding="utf-8"))
                    for p in sorted((CORPUS / "evaluation").glob("*.json"))]


@FUZZ
@given(doc=mutated_document(INTENT_SEEDS))
def test_fuzz_intent_contract_accepts_or_refuses_with_a_pointer(doc: Any) -> None:
    """A mutated intent contract parses, or is refused with a stable code and a pointer under /data."""
    from assay.intent.contract import parse_intent_data

    try:
        parse_intent_data(doc)
    except AssayError as exc:
        assert CODE.match(exc.code)
        assert exc.pointer is not None and (exc.pointer == "/data" or exc.pointer.startswith("/data/"))


def _submission_context() -> Any:
    from assay.config import EvidenceCommand
    from assay.loop import identity
    from assay.loop.submission import SubmissionContext

    criterion = identity.criterion_id("add returns the sum")
    return SubmissionContext(round=2, criteria=(criterion,),
                             commands=(EvidenceCommand("unit", ("true",)),), active_contract=None,
                             subgoals={"sg-11111111": "pending", "sg-22222222": "done"})


@FUZZ
@given(doc=mutated_document(EVALUATION_SEEDS))
def test_fuzz_self_evaluation_normalises_or_refuses_with_a_pointer(doc: Any) -> None:
    """A mutated self-evaluation normalises with coded diagnostics, or is refused with a code and pointer."""
    from assay.loop.submission import DIAGNOSTIC_CODES, normalise

    try:
        _, diagnostics, _ = normalise(doc, _submission_context())
    except AssayError as exc:
        # Strict fields, or what canonical JSON cannot hold (NaN, huge integers, surrogates).
        assert exc.code in ("evaluation_invalid", "contract_invalid", "lone_surrogate",
                            "unsafe_integer", "invalid_json", "resource_limit"), exc
        assert exc.pointer is not None
        return
    for d in diagnostics:
        assert d["code"] in DIAGNOSTIC_CODES and d["pointer"].startswith("/")


GOAL_SEEDS = corpus_bytes("goal")


@FUZZ
@given(data=st.one_of(mutated(GOAL_SEEDS), inputs(GOAL_SEEDS)))
def test_fuzz_goal_markdown_reads_or_refuses_with_a_goal_code(data: bytes) -> None:
    """Any bytes as a goal file read back, or fail closed with a goal_* code."""
    from assay.context.goal import read_goal_bytes

    try:
        read = read_goal_bytes(data, goal_id="main", path="GOAL.md")
    except AssayError as exc:
        assert exc.code.startswith("goal_"), exc
        return
    assert read is not None


@pytest.fixture(scope="module")
def packet_template() -> Iterator[Path]:
    """A valid quick packet to copy and mutate."""
    from packet_testing import example_packet

    root = Path(tempfile.mkdtemp(prefix="fuzz-packet-")) / "p"
    example_packet(root, "quick")
    yield root
    shutil.rmtree(root.parent)


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            stat = (Path(dirpath) / name).lstat()
            out[str(Path(dirpath) / name)] = (stat.st_size, stat.st_mtime_ns)
    return out


@FUZZ
@given(data=st.data())
def test_fuzz_packet_manifest_validates_to_coded_issues(packet_template: Path,
                                                        data: st.DataObject) -> None:
    """A mutated manifest or claims file yields coded issues (or a valid run) and writes nothing."""
    from assay.packet.validate import validate

    name = data.draw(st.sampled_from(["manifest.json", "claims.json"]), label="file")
    original = json.loads((packet_template / name).read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="fuzz-packet-run-") as tmp:
        packet = Path(tmp) / "p"
        shutil.copytree(packet_template, packet)
        if data.draw(st.booleans(), label="bytes"):
            raw = json.dumps(original).encode("utf-8")
            (packet / name).write_bytes(data.draw(mutated([raw]), label="raw"))
        else:
            doc = data.draw(mutated_document([original]), label="doc")
            (packet / name).write_text(json.dumps(doc), encoding="utf-8")
        before = _tree(Path(tmp))
        try:
            outcome = validate(packet)
        except AssayError as exc:
            assert exc.code in ("packet_not_found", "packet_unreadable", "packet_root_symlink"), exc
            return
        finally:
            assert _tree(Path(tmp)) == before, "validation wrote something"
        for issue in outcome.issues:
            assert CODE.match(issue.code), issue


_ID_TEXT = st.one_of(st.sampled_from(["knowledge:a", "knowledge:b", "note:x", "Knowledge:x", "x",
                                      "knowledge:", "k:\x00", "knowledge:\ud800", "a-b:c d"]),
                     st.text(max_size=20))
_SCOPES = st.one_of(st.sampled_from(["project:demo", "global", "project:", "project:a\x00",
                                     "other"]), st.text(max_size=12))


@FUZZ
@given(fields=st.fixed_dictionaries({
    "id": _ID_TEXT,
    "data": json_values(12),
    "scope": _SCOPES,
    "status": st.sampled_from(["current", "retired", "superseded", "gone", ""]),
    "superseded_by": st.one_of(st.none(), _ID_TEXT),
    "audience": st.sampled_from(["project", "private:me", "private:", "public", "private:a\x00"]),
    "expect_revision": st.one_of(st.none(), st.integers(-2, 3)),
    "request_id": st.one_of(st.none(), st.sampled_from(["r1", "r2", ""]), st.text(max_size=8)),
    "origin": st.sampled_from(["claim", "machine", "derived", "robot"]),
}))
def test_fuzz_ledger_write_commits_or_changes_nothing(ledger_url: str, fields: dict[str, Any]) -> None:
    """A random write commits (and reads back exactly) or is refused with a code and changes nothing."""
    from assay.ledger import Write, open_store

    store = open_store(ledger_url)
    try:
        before = store.info().ledger_revision
        try:
            receipt = store.put(Write(**fields))
        except AssayError as exc:
            assert CODE.match(exc.code) and exc.code != "internal_error", exc
            assert store.info().ledger_revision == before
            return
        # Read back as "me", who sees the project's partition and its own.
        me = store.as_principal("me")
        try:
            with me.reader() as r:
                record = next((v for audience in ("project", "private:me")
                               for v in r.history(receipt.id, audience=audience)
                               if v.ledger_revision == receipt.ledger_revision), None)
        finally:
            me.close()
        assert record is not None and record.data_sha256 == receipt.data_sha256
        assert record.revision == receipt.revision
        from assay.canonical import canonical_text

        assert canonical_text(record.data) == canonical_text(fields["data"])
        assert receipt.replayed or receipt.ledger_revision == before + 1
    finally:
        store.close()
