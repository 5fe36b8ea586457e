"""Frozen value classes for the modules on every call's path, without the dataclasses module.

Which to use: an internal value is ``@dataclass(frozen=True, slots=True)``,
except in a module that a plain ``get``, ``put`` or ``work check`` imports
(the calls agents and their harness hooks make all day): there it is
:func:`frozen_value`. Nowhere else: off that path the import saves
nothing, and a dataclass has every feature. Both directions are tested
(``tests/foundation/test_layers.py``): ``dataclasses`` is never loaded on that
path, and every module that declares a :func:`frozen_value` class is. A
wire document whose JSON Schema is published is a strict pydantic model
instead (see ``CONTRIBUTING.md``).

``@dataclass(frozen=True, slots=True)`` takes a short CLI call more CPU than
its own work (bench_cli_start, "python -c 'import dataclasses'"): importing :mod:`dataclasses` imports :mod:`inspect` (with ``ast``,
``dis`` and ``tokenize``), and each class then compiles about eight generated
methods and is built twice. :func:`frozen_value` gives the same class (slots,
an ``__init__`` with the fields in order and their defaults, ``__repr__``,
``__eq__``, ``__hash__``, ``__match_args__``, assignment refused, copy and
pickle) from one small generated ``__init__`` (compiled when the class
makes its first value) and methods shared by every such class. Type
checkers read it as a frozen dataclass (PEP 681).

Only what those classes use is supported: fields declared by annotation in
the class itself (no inheritance of fields), plain defaults, ``field(
default_factory=...)``, and ``__post_init__``. Imports nothing from assay.
"""

from __future__ import annotations

from collections.abc import Callable

# Importing typing takes a short call about as much CPU as dataclasses would
# (bench_cli_start, "python -c 'import typing'"), and the modules on every
# call's path use it only in annotations: they import it for type checkers
# alone (`TYPE_CHECKING = False`, which they read as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar, dataclass_transform

    T = TypeVar("T")
else:
    def dataclass_transform(**_options: object) -> Callable[[object], object]:
        """``typing.dataclass_transform`` speaks to type checkers: at run time it does nothing."""
        return lambda function: function

__all__ = ["FrozenInstanceError", "field", "frozen_value", "ordered_frozen_value", "replace"]

_MISSING: Any = object()


class FrozenInstanceError(AttributeError):
    """An assignment to a field of a frozen value."""


class _Field:
    __slots__ = ("default_factory",)

    def __init__(self, default_factory: Callable[[], Any]) -> None:
        self.default_factory = default_factory


def field(*, default_factory: Callable[[], T]) -> T:
    """A field whose default is made anew for each value (``default_factory()``)."""
    return _Field(default_factory)  # type: ignore[return-value]


def _setattr(self: Any, name: str, value: Any) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _delattr(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _values(self: Any) -> tuple[Any, ...]:
    return tuple(getattr(self, name) for name in self.__match_args__)


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is not self.__class__:
        return NotImplemented
    return _values(self) == _values(other)


def _hash(self: Any) -> int:
    return hash(_values(self))


def _compare(op: str) -> Callable[[Any, Any], Any]:
    def compare(self: Any, other: Any) -> Any:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return getattr(_values(self), op)(_values(other))
    compare.__name__ = op
    return compare


_ORDER = {op: _compare(op) for op in ("__lt__", "__le__", "__gt__", "__ge__")}


def _repr(self: Any) -> str:
    fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__match_args__)
    return f"{self.__class__.__qualname__}({fields})"


def _getstate(self: Any) -> tuple[Any, ...]:
    return _values(self)


def _setstate(self: Any, state: tuple[Any, ...]) -> None:
    for name, value in zip(self.__match_args__, state, strict=True):
        object.__setattr__(self, name, value)


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def frozen_value(cls: type[T]) -> type[T]:
    """Make ``cls`` a frozen, slotted value class of its annotated fields."""
    return _make(cls, order=False)


@dataclass_transform(frozen_default=True, order_default=True, field_specifiers=(field,))
def ordered_frozen_value(cls: type[T]) -> type[T]:
    """:func:`frozen_value`, ordered by its fields in turn (as ``order=True`` dataclasses)."""
    return _make(cls, order=True)


def _make(cls: type[T], *, order: bool) -> type[T]:
    # The class's own annotations, read without inspect (importing it is the cost avoided).
    names = tuple(cls.__dict__.get("__annotations__", {}))  # noqa: RUF063
    namespace = {key: value for key, value in cls.__dict__.items()
                 if key not in names and key not in ("__dict__", "__weakref__")}
    params, body, env = [], [], {"_set": object.__setattr__, "_MISSING": _MISSING}
    for name in names:
        default = cls.__dict__.get(name, _MISSING)
        if isinstance(default, _Field):
            env[f"_f_{name}"] = default.default_factory
            params.append(f"{name}=_MISSING")
            body.append(f" _set(self, {name!r}, _f_{name}() if {name} is _MISSING else {name})")
        elif default is not _MISSING:
            env[f"_d_{name}"] = default
            params.append(f"{name}=_d_{name}")
            body.append(f" _set(self, {name!r}, {name})")
        else:
            if any("=" in p for p in params):
                raise TypeError(f"{cls.__qualname__}: field {name!r} without a default "
                                "follows one with a default")
            params.append(name)
            body.append(f" _set(self, {name!r}, {name})")
    if "__post_init__" in namespace:
        body.append(" self.__post_init__()")
    source = f"def __init__(self, {', '.join(params)}):\n" + "\n".join(body or [" pass"])
    qualname = f"{cls.__qualname__}.__init__"

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        # Compiled when the first value is made: a call makes values of few
        # of the classes it imports, so most are never compiled.
        exec(source, env)  # noqa: S102 - the text is built from the class's own field names
        init = env["__init__"]
        init.__qualname__ = qualname
        type.__setattr__(made, "__init__", init)
        init(self, *args, **kwargs)

    __init__.__qualname__ = qualname
    namespace.update({
        "__slots__": names, "__match_args__": names, "__init__": __init__,
        "__setattr__": _setattr, "__delattr__": _delattr,
        "__getstate__": _getstate, "__setstate__": _setstate,
    })
    # As with dataclasses, a class's own __repr__, __eq__ or __hash__ is kept.
    for name, method in (("__repr__", _repr), ("__eq__", _eq), ("__hash__", _hash)):
        namespace.setdefault(name, method)
    if order:
        namespace.update(_ORDER)
    meta: Any = type(cls)
    made: type[T] = meta(cls.__name__, cls.__bases__, namespace)
    made.__qualname__ = cls.__qualname__
    return made


def replace(value: T, **changes: Any) -> T:
    """A copy of the frozen value ``value`` with ``changes`` to its fields."""
    kind: Any = type(value)
    made: T = kind(**{name: changes.pop(name, getattr(value, name))
                      for name in kind.__match_args__}, **changes)
    return made
