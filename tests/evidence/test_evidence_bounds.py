"""Bounded evidence reads: evidence list pages, evidence show bounds its output tails.

Both on each backend: on data larger than the default bound, the answer stays
within it, ``omitted`` counts exactly what it left out, and following
``read_more`` returns everything exactly once.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from evidence_helpers import PYTHON

from assay.ledger import open_store
from assay.ledger.store import Write
from assay_testing import Project, make_project
from paging_testing import follow, runner

# Prints 6,000 two-byte characters per line, twice, on stdout and a shorter run on stderr.
_CHATTY = ("import sys; sys.stdout.write(('é' * 6000 + chr(10)) * 2 + 'end' + chr(10)); "
           "sys.stderr.write('ß' * 3000)")


@pytest.fixture
def proj(tmp_path: Path, ledger_url: str) -> Project:
    """A git project with a chatty declared command, on each backend."""
    toml = f"\n[evidence.commands.chatty]\nargv = {json.dumps([PYTHON, '-c', _CHATTY])}\n"
    return make_project(tmp_path / "proj", db=ledger_url, git=True, extra_toml=toml)


@pytest.fixture
def run(proj: Project) -> Any:
    """Run an operation in the project in process; return its data."""
    return runner(proj.root, proj.db)


def test_evidence_show_bounds_each_tail_on_a_character(proj, run) -> None:
    """Stored tails of 16 KiB show their last 4,096 bytes, starting on a character; the
    omitted bytes are exact and the recovering read shows the stored tails whole."""
    run("evidence.run", {"name": "chatty"})
    store = open_store(proj.db)
    try:
        with store.reader() as reader:
            stored = reader.get("evidence:chatty").data["observation"]
    finally:
        store.close()
    out = run("evidence.show", {"id": "chatty"})
    shown = out["record"]["data"]["observation"]
    for stream in ("stdout", "stderr"):
        tail = shown[stream]["tail"]
        assert len(tail.encode("utf-8")) <= 4096 and stored[stream]["tail"].endswith(tail)
        assert shown[stream]["sha256"] == stored[stream]["sha256"]
    assert len(shown["stdout"]["tail"].encode("utf-8")) == 4095  # never half of an 'é'
    lost = sum(len(stored[s]["tail"].encode("utf-8")) - len(shown[s]["tail"].encode("utf-8"))
               for s in ("stdout", "stderr"))
    assert out["omitted"] == {"tail_bytes": lost}
    assert [c["pointer"] for c in out["tails"]] == ["/record/data/observation/stdout/tail",
                                                   "/record/data/observation/stderr/tail"]
    pages = follow(run, out)
    whole = pages[-1]["record"]["data"]["observation"]
    assert whole["stdout"]["tail"] == stored["stdout"]["tail"]
    assert whole["stderr"]["tail"] == stored["stderr"]["tail"]
    assert pages[-1]["complete"] is True


def test_evidence_show_short_tails_are_complete(proj, run) -> None:
    """Tails within the bound come back as stored: complete, nothing omitted."""
    store = open_store(proj.db)
    try:
        store.put(Write(id="evidence:quiet", data={"observation": {
            "stdout": {"tail": "ok\n"}, "stderr": {"tail": ""}}}, scope="project:demo"))
    finally:
        store.close()
    shown = run("evidence.show", {"id": "quiet"})
    assert shown["complete"] is True and shown["tails"] == [] and shown["read_more"] == []
    assert shown["record"]["data"]["observation"]["stdout"]["tail"] == "ok\n"


def test_evidence_list_pages_by_id_and_recovers_every_record(proj, run) -> None:
    """130 evidence records: the default page lists 100; the next page (after) the rest."""
    store = open_store(proj.db)
    try:
        store.put_many([Write(id=f"evidence:e{i:03d}", data={"observation": {"status": "passed"}},
                              scope="project:demo") for i in range(130)])
    finally:
        store.close()
    first = run("evidence.list", {})
    assert first["count"] == 100 and first["omitted"] == {"evidence": 30}
    pages = follow(run, first)
    assert [r["id"] for page in pages for r in page["evidence"]] == \
        [f"evidence:e{i:03d}" for i in range(130)]
