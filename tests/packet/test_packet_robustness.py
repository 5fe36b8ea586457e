"""Robustness: any structurally altered packet yields issues or a run, never a crash."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from packet_fixtures import boundary_files, json_locations, validated_packet

from assay.canonical import canonical_text, parse
from assay.packet.layout import file_digest
from assay.packet.validate import validate
from assay_testing import examples
from packet_testing import example_packet

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(
        ["", "x", "supports", "verified", "map", "claim-0", "ev-0", "src-0", "gather-1",
         "raw/dossiers/gather-1/dossier.json", "sha256:" + "0" * 64]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["claimId", "evidenceId", "path", "digest", "state", "mode", "x"]),
        inner, max_size=3),
    max_leaves=6,
)


@pytest.fixture(scope="module")
def packet() -> Iterator[tuple[Path, list[str]]]:
    """A valid thorough packet and the JSON files the boundary reads."""
    with validated_packet(lambda root: example_packet(root, "thorough", claims=2),
                          "packet-robust-") as (root, run):
        yield root, boundary_files(run)


def replace_one_value(root: Path, files: list[str], data: st.DataObject,
                      values: st.SearchStrategy[Any]) -> Any:
    """Replace one drawn value of one drawn JSON file, re-pin its digest, validate, restore.

    Returns the validation outcome; the packet's bytes are restored afterwards.
    """
    name = data.draw(st.sampled_from(files), label="file")
    originals = {n: (root / n).read_bytes() for n in ("manifest.json", name)}
    doc = parse(originals[name])
    where = data.draw(st.sampled_from(json_locations(doc)[1:]), label="where")
    target = doc
    for part in where[:-1]:
        target = target[part]
    target[where[-1]] = data.draw(values, label="value")
    changed = (canonical_text(doc) + "\n").encode()
    try:
        (root / name).write_bytes(changed)
        if name != "manifest.json":
            manifest = parse(originals["manifest.json"])
            for ref in manifest["artifacts"]:
                if ref["path"] == name:
                    ref["digest"] = file_digest(changed)
            (root / "manifest.json").write_bytes((canonical_text(manifest) + "\n").encode())
        return validate(root)
    finally:
        for n, raw in originals.items():
            (root / n).write_bytes(raw)



@settings(max_examples=examples(300), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_packet_robustness_replaced_value_never_crashes(
        packet: tuple[Path, list[str]], data: st.DataObject) -> None:
    """Replacing any one value of any JSON file (digests kept consistent) never raises."""
    root, files = packet
    outcome = replace_one_value(root, files, data, JSON)
    assert outcome.run is not None or outcome.issues
