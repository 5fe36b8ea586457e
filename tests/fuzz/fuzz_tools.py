"""Shared pieces of the fuzzers: the example budget, the seed corpora, byte mutations.

The budget follows the Hypothesis profile (150 examples per fuzzer under
``HYPOTHESIS_PROFILE=thorough``, a fifth by default); set
``ASSAY_FUZZ_EXAMPLES`` (for example 5000) for a longer hunt. Every fuzzer starts from the seed files
in ``tests/fuzz/corpus/`` and mutates them, besides drawing fresh inputs.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from assay_testing import examples

CORPUS = Path(__file__).with_name("corpus")
EXAMPLES = int(os.environ.get("ASSAY_FUZZ_EXAMPLES") or examples(150))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=False,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow, HealthCheck.filter_too_much,
                                       HealthCheck.data_too_large])
# Stable error codes: snake_case, or the packet validator's UPPER_SNAKE issue codes.
CODE = re.compile(r"^[a-z][a-z0-9_]{0,127}$|^[A-Z][A-Z0-9_]{0,127}$")


def corpus_bytes(area: str) -> list[bytes]:
    """Every seed file of ``area`` as bytes, in name order."""
    return [p.read_bytes() for p in sorted((CORPUS / area).iterdir()) if p.is_file()]


def corpus_lines(area: str, name: str) -> list[Any]:
    """The JSON lines of a seed file."""
    text = (CORPUS / area / name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@st.composite
def mutated(draw: st.DrawFn, seeds: list[bytes]) -> bytes:
    """A seed with a few random byte insertions, deletions and replacements."""
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(("insert", "delete", "replace", "splice")))
        at = draw(st.integers(0, len(data)))
        if kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "delete" and data:
            del data[at : at + draw(st.integers(1, 8))]
        elif kind == "replace" and at < len(data):
            data[at] = draw(st.integers(0, 255))
        elif kind == "splice":
            other = draw(st.sampled_from(seeds))
            data[at:at] = other[: draw(st.integers(0, len(other)))]
    return bytes(data)


def inputs(seeds: list[bytes]) -> st.SearchStrategy[bytes]:
    """Mutated seeds, fresh bytes and fresh text, in one strategy."""
    return st.one_of(mutated(seeds), st.binary(max_size=200),
                     st.text(max_size=200).map(lambda s: s.encode("utf-8", "surrogatepass")))


def json_values(max_leaves: int = 30) -> st.SearchStrategy[Any]:
    """Python values shaped like JSON, including what JSON cannot hold (NaN, huge ints, surrogates)."""
    leaves = st.one_of(
        st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=20), st.sampled_from(["\ud800", "\x00", "\u2028", "a" * 300, 2**53 + 1]),
    )
    return st.recursive(leaves, lambda kids: st.one_of(
        st.lists(kids, max_size=5), st.dictionaries(st.text(max_size=8), kids, max_size=5)),
        max_leaves=max_leaves)


def pointer_parts(doc: Any) -> list[tuple[Any, ...]]:
    """Every path into a JSON document (objects and arrays), root first."""
    out: list[tuple[Any, ...]] = [()]
    stack: list[tuple[tuple[Any, ...], Any]] = [((), doc)]
    while stack:
        path, value = stack.pop()
        items = value.items() if isinstance(value, dict) else (
            enumerate(value) if isinstance(value, list) else ())
        for key, item in items:
            out.append((*path, key))
            stack.append(((*path, key), item))
    return out


@st.composite
def mutated_document(draw: st.DrawFn, seeds: list[Any]) -> Any:
    """A seed document with a few structural mutations: drop, replace, retype, add unknown keys."""
    import copy

    doc = copy.deepcopy(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 4))):
        paths = pointer_parts(doc)
        path = draw(st.sampled_from(paths))
        if not path:
            if draw(st.integers(0, 9)) == 0:
                doc = draw(json_values(5))
            continue
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        last = path[-1]
        kind = draw(st.sampled_from(("drop", "replace", "unknown", "duplicate")))
        if kind == "drop":
            del parent[last]
        elif kind == "replace":
            parent[last] = draw(json_values(6))
        elif kind == "unknown" and isinstance(parent, dict):
            parent[draw(st.text(max_size=10))] = draw(json_values(3))
        elif kind == "duplicate" and isinstance(parent, list):
            parent.append(copy.deepcopy(parent[last]))
    return doc
