"""The packet kernel: one validation's files, read once, and its findings, in one list.

A :class:`Context` is what both rule sets (:mod:`assay.packet.assay.rules` for
assay's own layout, :mod:`assay.packet.recon.check` for the recon tool's)
work over: every file is read through the packet root's checked, bounded,
no-follow reading (:class:`~assay.packet.layout.PacketRoot`) at most once and
hashed once; every finding is one :class:`~assay.packet.model.Issue`, an
advisory or not; :meth:`Context.outcome` turns them into the
:class:`~assay.packet.model.Validation` the boundary returns. Parsing belongs
to each rule set (assay's strict, the recon tool's as it reads), so does the
meaning of every finding. :func:`one_validation` runs a validation with the
cyclic collector paused. Imports the base modules and the packet kernel.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from assay.packet.layout import PacketRoot, PathProblem, file_digest
from assay.packet.model import Issue, ValidatedRun, Validation
from assay.packet.shape import forget_matches

__all__ = ["Context", "one_validation"]


class Context:
    """One validation of one packet directory: its bytes, their digests, its findings.

    Create one per validation; nothing is cached between validations.
    """

    __slots__ = ("digests", "issues", "layout", "raw", "root")

    def __init__(self, root: PacketRoot, layout: str) -> None:
        self.root = root
        self.layout = layout
        self.issues: list[Issue] = []
        self.raw: dict[str, bytes] = {}
        self.digests: dict[str, str] = {}

    def read(self, path: str) -> bytes | PathProblem:
        """The bytes of packet file ``path`` (read and hashed on the first call only)."""
        data = self.raw.get(path)
        if data is not None:
            return data
        got = self.root.read(path)
        if isinstance(got, bytes):
            self.raw[path] = got
            self.digests[path] = file_digest(got)
        return got

    def add(self, code: str, path: str, pointer: str, message: str, where: str = "") -> None:
        """A finding that makes the packet invalid."""
        self.issues.append(Issue(code, path, pointer, message, where))

    def advise(self, code: str, path: str, pointer: str, message: str, where: str = "") -> None:
        """A finding that does not (an advisory)."""
        self.issues.append(Issue(code, path, pointer, message, where, advisory=True))

    @property
    def failed(self) -> bool:
        """Whether any finding so far makes the packet invalid."""
        return any(not issue.advisory for issue in self.issues)

    def outcome(self, run: ValidatedRun | None, *, achieved: str | None = None) -> Validation:
        """The validation: findings de-duplicated and sorted by file, pointer, code,
        location and sentence; the run only when no finding makes the packet invalid."""
        def order(issue: Issue) -> tuple[str, str, str, str, str]:
            return issue.path, issue.pointer, issue.code, issue.where, issue.message

        issues = tuple(sorted({i for i in self.issues if not i.advisory}, key=order))
        advisories = tuple(sorted({i for i in self.issues if i.advisory}, key=order))
        return Validation(issues=issues, run=None if issues else run, advisories=advisories,
                          achieved_profile=achieved, layout=self.layout)


@contextmanager
def one_validation() -> Iterator[None]:
    """Run one validation with the cyclic collector paused; forget its matched ids after.

    Parsed documents are trees of fresh containers that hold no cycles, and
    a large packet allocates hundreds of thousands of them: each collection
    would walk all that survived and free none of it (bench_packet,
    "validate packet", measures the validation this way). The collector is resumed (if it ran before) whatever happens;
    reference counting frees everything as usual meanwhile. The shape
    checks' memories of matched ids (:func:`~assay.packet.shape.string`)
    are emptied, so one packet neither stays in memory nor warms the next.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        forget_matches()
        if was_enabled:
            gc.enable()
