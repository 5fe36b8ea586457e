"""Property: no single-byte change to a valid packet is silently accepted."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from packet_fixtures import boundary_files, validated_packet

from assay.packet.validate import validate
from assay_testing import examples
from packet_testing import example_packet


@pytest.fixture(scope="module")
def packet() -> Iterator[tuple[Path, str, list[str]]]:
    """A valid standard packet, its identity, and every file the boundary reads."""
    with validated_packet(lambda root: example_packet(root, "standard", claims=3,
                                                      evidence_per_claim=2),
                          "packet-property-") as (root, run):
        yield root, run.identity, [*boundary_files(run), "raw/sources/src-0.txt"]


def flip_one_byte(root: Path, files: list[str], data: st.DataObject) -> Any:
    """Change one drawn byte of one drawn file, validate, restore the file; the outcome."""
    path = root / data.draw(st.sampled_from(files), label="file")
    original = path.read_bytes()
    offset = data.draw(st.integers(0, len(original) - 1), label="offset")
    new = data.draw(st.integers(0, 255).filter(lambda b: b != original[offset]), label="byte")
    changed = bytearray(original)
    changed[offset] = new
    path.write_bytes(bytes(changed))
    try:
        return validate(root)
    finally:
        path.write_bytes(original)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_packet_single_byte_change_is_never_silent(
        packet: tuple[Path, str, list[str]], data: st.DataObject) -> None:
    """Changing any one byte of any packet file invalidates it or changes its identity."""
    root, identity, files = packet
    outcome = flip_one_byte(root, files, data)
    assert outcome.run is None or outcome.run.identity != identity
