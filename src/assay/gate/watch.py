"""The stop hook's own deadline: an answer before the harness gives up on the hook.

A harness that waits past its timeout for a hook treats it as failed and
lets the agent stop, so anything that can hang the hook (a ledger lock held
for good, git on a huge repository, a stuck file system) would let the agent
through. :meth:`Watch.run` therefore runs the decision on a worker thread and
waits for it until the deadline; past it, the caller's fallback answers
instead (``[gate] on_error``, spooled), and the worker's result, when it
comes at all, is dropped.

The deadline counts from the hook's start: ``[gate] deadline_seconds``
(default 60, at most 90, well below the 120 s timeout ``hook install``
writes) once the worker has read it, the default until then. The worker
leaves notes (the project, the event, the verdict, the session's state) for
the fallback, and asks :attr:`Watch.abandoned` before it writes anything,
so a decision answered by the fallback is not written again by it.

The worker is a daemon thread with stores of its own: a hook process exits
once it has answered, and nothing the answering thread closes is in use by
the worker. Imports only the standard library.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["DEFAULT_DEADLINE_SECONDS", "Watch"]

DEFAULT_DEADLINE_SECONDS = 60.0
T = TypeVar("T")


class Watch:
    """One hook call's deadline, and what its worker has found out so far."""

    def __init__(self, seconds: float = DEFAULT_DEADLINE_SECONDS) -> None:
        self.started = time.monotonic()
        self._deadline = self.started + seconds
        self._lock = threading.Lock()
        self._changed = threading.Event()
        self._abandoned = False
        self.notes: dict[str, Any] = {}

    def limit(self, seconds: float) -> None:
        """Set the deadline to ``seconds`` after the start (the project's setting, once read)."""
        with self._lock:
            self._deadline = self.started + seconds
        self._changed.set()

    def note(self, **facts: Any) -> None:
        """Leave facts for the fallback (the latest value of each wins)."""
        with self._lock:
            self.notes.update(facts)

    @property
    def seconds(self) -> float:
        """The deadline, in seconds from the start."""
        return self._deadline - self.started

    def remaining(self) -> float:
        """Seconds left before the deadline (never below zero)."""
        return max(0.0, self._deadline - time.monotonic())

    @property
    def abandoned(self) -> bool:
        """Whether the fallback has answered: the worker must write nothing more."""
        with self._lock:
            return self._abandoned

    def run(self, work: Callable[[], T], late: Callable[[dict[str, Any]], T]) -> T:
        """``work()``'s value if it returns before the deadline, else ``late(notes)``'s.

        An exception ``work`` raises is re-raised here when it comes in time.
        """
        box: list[Any] = []
        done = threading.Event()

        def worker() -> None:
            try:
                value: Any = ("value", work())
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
                value = ("error", exc)
            with self._lock:
                if not self._abandoned:
                    box.append(value)
            done.set()
            self._changed.set()

        threading.Thread(target=worker, name="assay-hook-decision", daemon=True).start()
        while True:
            self._changed.wait(self.remaining())
            self._changed.clear()
            with self._lock:
                if box:
                    kind, value = box[0]
                    if kind == "error":
                        raise value
                    return value  # type: ignore[no-any-return]
                if done.is_set() or time.monotonic() >= self._deadline:
                    self._abandoned = True
                    notes = dict(self.notes)
                    break
        return late(notes)
