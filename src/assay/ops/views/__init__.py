"""Terminal views of operation results, one module per operation group.

An operation names its readable view in its declaration
(``operation(..., view="intent:work_check")``): the function ``work_check``
of :mod:`assay.ops.views.intent`. The CLI resolves it with :func:`resolve`
only when it prints a readable result, so a plain call on a pipe never loads
a view, and a renamed operation keeps its view because the view is part of
its declaration. A test holds every declared view to a function here and
every function a view module exports to an operation that declares it.

A view is ``view(envelope, console)``: it prints one successful result on
the rich console it is given. Views may import capabilities' pure helpers
and rich (lazily); they never import a surface.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["resolve"]


def resolve(ref: str) -> Callable[..., Any]:
    """The function a declaration's ``MODULE:FUNCTION`` names in this package."""
    module, _, name = ref.partition(":")
    function: Callable[..., Any] = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    return function
