"""Property: a derived item is admitted iff every version in its closure is readable now."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from provenance_helpers import SCOPE, access, typed

from assay.ledger import open_store
from assay.ledger.store import SourceRef, Write
from assay.provenance import saved
from assay_testing import examples

AUDIENCES = ["project", "private:alice", "private:bob"]


@st.composite
def graphs(draw: Any) -> dict[str, Any]:
    """Records with audiences and sources among earlier ones, then retire/modify/re-audience steps."""
    n = draw(st.integers(min_value=1, max_value=8))
    nodes = []
    for i in range(n):
        sources = draw(st.lists(st.integers(min_value=0, max_value=i - 1), unique=True,
                                max_size=3)) if i else []
        nodes.append({"audience": draw(st.sampled_from(AUDIENCES)), "sources": sources})
    changes = draw(st.lists(st.tuples(st.integers(min_value=0, max_value=n - 1),
                                      st.sampled_from(["retire", "modify", "audience"]),
                                      st.sampled_from(AUDIENCES)), max_size=4))
    principal = draw(st.sampled_from(["alice", "bob"]))
    return {"nodes": nodes, "changes": changes, "principal": principal}


def _allows(audience: str, principal: str) -> bool:
    return audience in ("project", f"private:{principal}")


def _handle(store: Any, audience: str) -> Any:
    """A handle that reads ``audience``'s partition first (unbound for project)."""
    return store.as_principal(audience.removeprefix("private:") if audience != "project" else None)


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graph=graphs())
def test_provenance_admission_iff_whole_closure_readable(graph: dict[str, Any]) -> None:
    """For random graphs, audiences and revocations, admission equals the closure model.

    Records are keyed by id and audience: a change of audience writes the
    record into another partition, which the reader then sees in place of
    the project record when the partition is its own.
    """
    principal = graph["principal"]
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(Path(tmp) / "ledger.db")
        handles = {a: _handle(store, a) for a in AUDIENCES}
        try:
            pins: dict[int, SourceRef] = {}
            for i, node in enumerate(graph["nodes"]):
                refs = tuple(pins[s] for s in node["sources"])
                store.put(Write(id=f"note:n{i}", data=typed(f"n{i}"), scope=SCOPE,
                                audience=node["audience"], sources=refs, origin="derived"))
                with handles[node["audience"]].reader() as reader:
                    r = reader.get(f"note:n{i}")
                pins[i] = SourceRef(r.id, r.revision, r.data_sha256)
            for index, change, audience in graph["changes"]:
                with handles[audience].reader() as reader:
                    r = reader.get(f"note:n{index}")
                if r is None or r.status != "current":
                    continue
                data, status = r.data, "current"
                if change == "retire":
                    status = "retired"
                elif change == "modify":
                    data = typed(f"n{index} changed {r.revision}")
                # "audience" writes the record (as this partition sees it) into that partition.
                store.put(Write(id=r.id, data=data, scope=SCOPE, audience=audience,
                                sources=r.sources, status=status, origin="derived"))
            with handles[f"private:{principal}"].reader() as reader:
                out = saved.list_entries(reader, access(principal), kind="note")
                expected_admitted, expected_omitted = set(), set()

                def ok(record_id: str, revision: int, sha: str) -> bool:
                    now = reader.get(record_id)
                    pinned = reader.get(record_id, revision)
                    return (now is not None and now.status == "current" and now.data_sha256 == sha
                            and pinned is not None and pinned.data_sha256 == sha
                            and all(ok(s.id, s.revision, s.data_sha256) for s in pinned.sources))

                for i in range(len(graph["nodes"])):
                    now = reader.get(f"note:n{i}")
                    if now is None or now.status != "current":
                        continue  # not visible at all: neither admitted nor mentioned
                    target = expected_admitted if ok(now.id, now.revision, now.data_sha256) \
                        else expected_omitted
                    target.add(now.id)
            assert {item["id"] for item in out["items"]} == expected_admitted
            assert {u["id"] for u in out["unavailable"]} == expected_omitted
            admitted_leaves = {leaf["id"] for leaf in out["envelope"]["leaves"]}
            assert expected_admitted <= admitted_leaves
            assert all(_allows(leaf["audience"], principal) for leaf in out["envelope"]["leaves"])
        finally:
            for handle in handles.values():
                handle.close()
            store.close()
