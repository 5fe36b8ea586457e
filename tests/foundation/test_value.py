"""Frozen value classes (assay.value) behave as the frozen slotted dataclasses they replace."""

from __future__ import annotations

import copy
import pickle
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any

import pytest

from assay.value import FrozenInstanceError, field, frozen_value, replace


@frozen_value
class Point:
    """A value of three fields, two with defaults."""

    x: int
    y: int = 0
    tags: dict[str, Any] = field(default_factory=dict)

    def norm(self) -> int:
        return abs(self.x) + abs(self.y)


@dataclass(frozen=True, slots=True)
class DataclassPoint:
    x: int
    y: int = 0
    tags: dict[str, Any] = dc_field(default_factory=dict)


def test_value_init_defaults_and_factories_as_a_dataclass() -> None:
    """Positional and keyword arguments, defaults and fresh factory values match a dataclass."""
    p, q = Point(1), Point(x=1, y=2, tags={"a": 1})
    assert (p.x, p.y, p.tags, q.y, q.tags) == (1, 0, {}, 2, {"a": 1})
    assert Point(1).tags is not Point(1).tags
    assert p.norm() == 1
    with pytest.raises(TypeError):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Point(1, z=3)  # type: ignore[call-arg]


def test_value_is_frozen_and_slotted() -> None:
    """Assigning or deleting a field is refused, and values carry no __dict__."""
    p = Point(1)
    with pytest.raises(FrozenInstanceError):
        p.x = 2  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del p.y  # type: ignore[misc]
    with pytest.raises(AttributeError):
        p.other = 1  # type: ignore[attr-defined]
    assert not hasattr(p, "__dict__") and Point.__slots__ == ("x", "y", "tags")


def test_value_repr_eq_hash_and_match_args_as_a_dataclass() -> None:
    """repr, equality, hashing and pattern matching read as the dataclass's do."""
    assert repr(Point(1, 2)) == repr(DataclassPoint(1, 2)).replace("DataclassPoint", "Point")
    assert Point(1, 2) == Point(1, 2) and Point(1, 2) != Point(2, 1)
    assert Point(1) != DataclassPoint(1)
    assert Point.__match_args__ == DataclassPoint.__match_args__

    @frozen_value
    class Pair:
        a: int
        b: str = "b"

    assert hash(Pair(1)) == hash(Pair(1)) and len({Pair(1), Pair(1), Pair(2)}) == 2
    match Pair(3, "c"):
        case Pair(a, b):
            assert (a, b) == (3, "c")


def test_value_copies_pickles_and_replaces() -> None:
    """copy, deepcopy, pickle and replace give equal values; replace changes only what it names."""
    p = Point(1, 2, {"k": [1]})
    assert copy.copy(p) == p and copy.deepcopy(p) == p and pickle.loads(pickle.dumps(p)) == p
    assert replace(p, y=5) == Point(1, 5, {"k": [1]})
    with pytest.raises(TypeError):
        replace(p, z=1)


def test_value_runs_post_init() -> None:
    """__post_init__ runs after the fields are set and may refuse the value."""

    @frozen_value
    class Positive:
        n: int

        def __post_init__(self) -> None:
            if self.n <= 0:
                raise ValueError("n must be positive")

    assert Positive(1).n == 1
    with pytest.raises(ValueError):
        Positive(0)


def test_value_refuses_a_required_field_after_a_default() -> None:
    """A field without a default after one with a default is refused, as dataclasses do."""
    with pytest.raises(TypeError):
        @frozen_value
        class Bad:
            a: int = 0
            b: int


def test_value_ordered_compares_field_by_field_as_a_dataclass() -> None:
    """An ordered value sorts by its fields in turn, and refuses to compare with another class."""
    from assay.value import ordered_frozen_value

    @ordered_frozen_value
    class Version:
        id: str
        revision: int

    @dataclass(frozen=True, slots=True, order=True)
    class DataclassVersion:
        id: str
        revision: int

    pairs = [("b", 1), ("a", 2), ("a", 1), ("b", 0)]
    assert [(v.id, v.revision) for v in sorted(Version(*p) for p in pairs)] == [
        (v.id, v.revision) for v in sorted(DataclassVersion(*p) for p in pairs)]
    assert Version("a", 1) <= Version("a", 1) < Version("a", 2) and Version("b", 0) > Version("a", 9)
    with pytest.raises(TypeError):
        assert Version("a", 1) < DataclassVersion("a", 1)  # type: ignore[operator]


def test_value_compiles_its_init_with_its_first_value() -> None:
    """A class's __init__ is generated when it makes its first value, with the dataclass's signature."""
    import inspect

    @frozen_value
    class Pair:
        a: int
        b: int = 2

    assert "a" not in inspect.signature(Pair).parameters  # not generated yet
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'a'"):
        Pair()  # type: ignore[call-arg]
    assert str(inspect.signature(Pair)) == "(a, b=2)"
    assert (Pair(1), Pair(1, b=3).b) == (Pair(a=1, b=2), 3)


def test_value_subclass_makes_the_first_value() -> None:
    """A subclass making the first value compiles its base's __init__ for both."""

    @frozen_value
    class Base:
        a: int

    class Child(Base):
        __slots__ = ()

    assert (Child(1).a, Base(2).a) == (1, 2)
    assert Child.__init__ is Base.__init__
