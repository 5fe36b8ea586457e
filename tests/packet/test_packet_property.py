"""Property: no single-byte change to a valid packet is silently accepted."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay.packet.build import example_packet
from assay.packet.validate import validate


@pytest.fixture(scope="module")
def packet() -> Iterator[tuple[Path, str, list[str]]]:
    """A valid standard packet, its identity, and every file the boundary reads."""
    root = Path(tempfile.mkdtemp(prefix="packet-property-")) / "p"
    example_packet(root, "standard", claims=3, evidence_per_claim=2)
    outcome = validate(root)
    assert outcome.run is not None
    files = ["manifest.json", "claims.json", *(a.path for a in outcome.run.artifacts),
             "raw/sources/src-0.txt"]
    yield root, outcome.run.identity, files
    shutil.rmtree(root.parent)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_packet_single_byte_change_is_never_silent(
        packet: tuple[Path, str, list[str]], data: st.DataObject) -> None:
    """Changing any one byte of any packet file invalidates it or changes its identity."""
    root, identity, files = packet
    name = data.draw(st.sampled_from(files), label="file")
    path = root / name
    original = path.read_bytes()
    offset = data.draw(st.integers(0, len(original) - 1), label="offset")
    new = data.draw(st.integers(0, 255).filter(lambda b: b != original[offset]), label="byte")
    changed = bytearray(original)
    changed[offset] = new
    path.write_bytes(bytes(changed))
    try:
        outcome = validate(root)
    finally:
        path.write_bytes(original)
    assert outcome.run is None or outcome.run.identity != identity
