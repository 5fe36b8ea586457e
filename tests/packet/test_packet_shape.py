"""Shape checks: the fast answer and the full report always agree."""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from packet_fixtures import json_locations

from assay.canonical import parse
from assay.packet.assay.ledger_file import LEDGER_SHAPE
from assay.packet.assay.manifest import MANIFEST_SHAPE
from assay.packet.assay.reviews import BRIEF_SHAPE, DOSSIER_SHAPE, RESULT_SHAPE
from assay.packet.model import Issue
from assay.packet.shape import Check, Sink
from assay_testing import examples
from packet_testing import example_packet

_ROOT = Path(tempfile.mkdtemp(prefix="packet-shape-")) / "p"
example_packet(_ROOT, "thorough", claims=2)


def _doc(path: str) -> dict[str, Any]:
    return parse((_ROOT / path).read_bytes())


SAMPLES: list[tuple[Check, dict[str, Any]]] = [
    (MANIFEST_SHAPE, _doc("manifest.json")),
    (LEDGER_SHAPE, _doc("claims.json")),
    (DOSSIER_SHAPE, _doc("raw/dossiers/map-1/dossier.json")),
    (BRIEF_SHAPE, _doc("reviews/briefs/semantic.json")),
    (RESULT_SHAPE, _doc("reviews/semantic/semantic-1/result.json")),
    (RESULT_SHAPE, _doc("reviews/reconciliation/reconciliation.json")),
]
LEAF = st.none() | st.booleans() | st.integers(-2, 3) | st.floats(allow_nan=False) | st.sampled_from(
    ["", "x", "a/b", "supports", "sha256:" + "a" * 64, "2026-01-01T00:00:00Z", "x" * 200])
JSON = st.recursive(LEAF, lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.sampled_from(["x", "path", "claimId", "mode"]), inner,
                                      max_size=3), max_leaves=5)


def test_shape_valid_samples_pass() -> None:
    """Every sample document of a valid packet passes both halves of its shape."""
    for shape, doc in SAMPLES:
        issues: list[Issue] = []
        assert shape.ok(doc) and shape.report(Sink(issues, "x"), doc, "") and not issues


@settings(max_examples=examples(400), deadline=None)
@given(data=st.data())
def test_shape_fast_and_report_agree(data: st.DataObject) -> None:
    """For any one-value change (or removal) of a sample, ok is False exactly when issues appear."""
    shape, original = data.draw(st.sampled_from(SAMPLES), label="sample")
    doc = copy.deepcopy(original)
    where = data.draw(st.sampled_from(json_locations(doc)[1:]), label="where")
    target = doc
    for part in where[:-1]:
        target = target[part]
    if isinstance(target, dict) and data.draw(st.booleans(), label="remove"):
        del target[where[-1]]
    else:
        target[where[-1]] = data.draw(JSON, label="value")
    issues: list[Issue] = []
    reported = shape.report(Sink(issues, "x"), doc, "")
    assert shape.ok(doc) == reported == (not issues)


def test_validation_forgets_matched_ids() -> None:
    """After a validation no shape check still holds the ids it matched."""
    from assay.packet import shape
    from assay.packet.validate import validate

    assert validate(_ROOT).valid
    assert not any(shape._MEMOS)


@settings(max_examples=examples(400), deadline=None)
@given(value=JSON | st.sampled_from(["2026-08-31T00:00:00.000Z", "2026-13-01T00:00:00Z", 5.0, -0.0]),
       name=st.sampled_from(["TEXT", "NULLABLE_TEXT", "LIST", "TIMESTAMP"]) | st.just("INT"))
def test_shape_recon_leaves_fast_and_report_agree(value: Any, name: str) -> None:
    """The leaves the recon contract checks fields with agree too, in the recon dialect."""
    from assay.packet.recon import contract

    check = contract.INTEGER_FROM[1] if name == "INT" else getattr(contract, name)
    issues: list[Issue] = []
    reported = check.report(Sink(issues, "x", contract.RECON), value, "$.field")
    assert check.ok(value) == reported == (not issues)
    assert all(i.where == "$.field" and i.pointer == "/field" for i in issues)
