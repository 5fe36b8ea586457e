"""The inputs every intent report is computed from: a project binding and a read view.

:class:`ProjectBinding` is what the project contributes (its root, its scope,
the historical scopes it admits, the principal reading) and, when the caller
observed it, :class:`ProjectState`: the workspace and the checks as they are
now, observed once at the operation's edge, so the report stays a pure
function of the ledger snapshot and these values. :class:`IntentRead`
is one intent and the records it cites, read from one snapshot (shared by the
report and the continuity projection). :class:`RecordSnapshot`
is an in-memory :class:`~assay.ledger.store.Reader` over plain
:class:`~assay.ledger.store.Record` values: the reports use it to look at the
ledger "as of" an earlier ledger revision (``work history``), and unit tests
use it to compute reports without a database. It is a faithful reader, not a
mock: it answers exactly what a backend would for the same versions.

Imports only the base modules, the intent contract and the ledger contract.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from assay.intent.contract import IntentDocument
from assay.ledger.store import Record, view_audiences
from assay.value import field, frozen_value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["AsOfReader", "IntentRead", "ProjectBinding", "ProjectState", "RecordSnapshot",
           "is_readable", "raw_read"]


_UNSET: Any = object()


class ProjectState:
    """What the project looks like now, observed at most once by the operation reporting on it.

    ``workspace`` is the git workspace now (an
    :class:`assay.evidence.freshness.WorkspaceNow`; None: not observed, so no
    run is compared with it); ``checks`` the contract of each evidence
    command ``assay.toml`` declares now, by name
    (:func:`assay.intent.pin.contract`); ``gate`` the gate's configuration
    now (:mod:`assay.gate.settings`; None: not read); ``gated_principal`` the
    principal the stop gate judges. Each of the first three may be given as
    a function of no arguments: it is called when the value is first needed
    and never again, so a report that compares nothing observes nothing (a
    plain ``work check`` starts no git process).
    """

    __slots__ = ("_given", "_values", "gated_principal")

    def __init__(self, *, workspace: Any = None, checks: Any = None, gate: Any = None,
                 gated_principal: str = "agent") -> None:
        self._given = {"workspace": workspace, "checks": checks, "gate": gate}
        self._values: dict[str, Any] = {}
        self.gated_principal = gated_principal

    def _value(self, name: str) -> Any:
        value = self._values.get(name, _UNSET)
        if value is _UNSET:
            given = self._given[name]
            value = self._values[name] = given() if callable(given) else given
        return value

    def resolved(self, name: str) -> bool:
        """Whether ``name`` (workspace, checks, gate) has been read yet."""
        return name in self._values

    @property
    def workspace(self) -> Any:
        return self._value("workspace")

    @property
    def checks(self) -> Mapping[str, Any]:
        return self._value("checks") or {}

    @property
    def gate(self) -> Mapping[str, Any] | None:
        value: Mapping[str, Any] | None = self._value("gate")
        return value


@frozen_value
class ProjectBinding:
    """The project a report is computed for (``state``: see :class:`ProjectState`)."""

    root: str
    scope: str
    admitted_scopes: tuple[str, ...] = ()
    principal: str = "agent"
    state: ProjectState | None = None

    @property
    def evidence_scopes(self) -> tuple[str, ...]:
        """Scopes whose records may support readiness: the project and admitted history."""
        return (self.scope, *self.admitted_scopes)

    @property
    def context_scopes(self) -> tuple[str, ...]:
        """Scopes continuity may select from: the evidence scopes plus ``global``."""
        return (*self.evidence_scopes, "global")

    def to_dict(self) -> dict[str, Any]:
        """The binding targets a later write is checked against (the root is local, not bound)."""
        return {"scope": self.scope, "admitted_scopes": list(self.admitted_scopes)}


@frozen_value
class IntentRead:
    """Everything one report needs, read from one snapshot.

    ``evidence`` maps each cited id to its current visible version (None when
    absent or private to someone else); ``failures`` holds ids that could not
    be read at all; ``cited_versions`` the exact cited versions that are not
    the current one; ``later`` per cited id whose current version is newer
    than a citation, the versions after the oldest citation and before the
    current one (None when there are too many to read); ``pins`` the
    project-audience pin records the report compares with (``checks``:
    the intent's, ``gate``: the gate's; None when absent).
    """

    record: Record
    document: IntentDocument
    evidence: Mapping[str, Record | None]
    failures: Mapping[str, tuple[str, str]]
    cited_versions: Mapping[tuple[str, int], Record | None]
    epoch: str
    ledger_revision: int
    later: Mapping[str, tuple[Record, ...] | None] = field(default_factory=dict)
    pins: Mapping[str, Record | None] = field(default_factory=dict)


def raw_read(record_id: str, revision: int) -> list[str]:
    """The literal CLI arguments that print one version's stored text (damaged or not)."""
    return ["get", "--raw", "--revision", str(revision), "--", record_id]


def is_readable(record: Record, principal: str) -> bool:
    """Whether ``principal`` may read ``record`` under its audience."""
    return record.audience == "project" or record.audience == f"private:{principal}"


class RecordSnapshot:
    """A read view over given record versions, at one ledger revision.

    ``versions`` may hold every version of each record in any order; versions
    committed after ``ledger_revision`` are invisible, as they are to a
    backend reader opened at that revision.
    """

    __slots__ = ("_history", "epoch", "ledger_revision")

    def __init__(self, versions: Iterable[Record], ledger_revision: int = -1,
                 epoch: str = "snapshot") -> None:
        items = list(versions)
        if ledger_revision < 0:
            ledger_revision = max((r.ledger_revision for r in items), default=0)
        self.ledger_revision = ledger_revision
        self.epoch = epoch
        self._history: dict[str, list[Record]] = {}
        for record in sorted(items, key=lambda r: (r.id, r.revision)):
            if record.ledger_revision <= ledger_revision:
                self._history.setdefault(record.id, []).append(record)

    def get(self, record_id: str, revision: int | None = None) -> Record | None:
        versions = self._history.get(record_id)
        if not versions:
            return None
        if revision is None:
            return versions[-1]
        for record in versions:
            if record.revision == revision:
                return record
        return None

    def get_many(self, record_ids: Sequence[str]) -> dict[str, Record]:
        out = {}
        for record_id in record_ids:
            record = self.get(record_id)
            if record is not None:
                out[record_id] = record
        return out

    def history(self, record_id: str) -> list[Record]:
        return list(self._history.get(record_id, ()))

    def find(
        self,
        *,
        scopes: Sequence[str] | None = None,
        kind: str | None = None,
        status: str | None = None,
        link: tuple[str | None, str] | None = None,
        query: str | None = None,
        limit: int = 100,
        audiences: Sequence[str] | None = None,
        after: str | None = None,
        data_field: tuple[str, str | None] | None = None,
        prefix: str | None = None,
    ) -> list[Record]:
        out = []
        # Code point order is UTF-8 byte order: the backends' order.
        for record_id in sorted(self._history):
            record = self._history[record_id][-1]
            if after is not None and record_id <= after:
                continue
            if scopes is not None and record.scope not in scopes:
                continue
            if audiences is not None and record.audience not in audiences:
                continue
            if kind is not None and record.kind != kind:
                continue
            if prefix is not None and not record_id.startswith(prefix):
                continue
            if data_field is not None and not _holds(record, *data_field):
                continue
            if status is not None and record.status != status:
                continue
            if link is not None and not any(
                (link[0] is None or edge.rel == link[0]) and edge.target == link[1]
                for edge in record.links
            ):
                continue
            if query is not None:
                from assay.canonical import canonical_text

                # Like the backends, match the stored text (a damaged version included).
                needle = query.lower()
                text = record.data_text or canonical_text(record.data)
                if needle not in record.id.lower() and needle not in text.lower():
                    continue
            out.append(record)
            if len(out) >= limit:
                break
        return out

    def find_count(self, *, after: str | None = None, at_most: int | None = None,
                   **filters: Any) -> int:
        limit = len(self._history) + 1 if at_most is None else at_most
        return len(self.find(after=after, limit=limit, **filters))


def _holds(record: Record, name: str, value: str | None) -> bool:
    """Whether ``record`` holds the indexed data field as the backends' key index says it does.

    A damaged version is judged by its stored text (the index was written
    from its data before the damage).
    """
    from assay.ledger.record import data_keys, key_value

    if record.damage is not None:
        return f'"{name}":' in (record.data_text or "")
    return any(k == name and (value is None or v == key_value(value))
               for k, v in data_keys(record.data))


class AsOfReader:
    """A view of ``reader`` as the ledger stood at an earlier ledger revision.

    Built from record histories, so it answers ``get``/``get_many``/``history``
    exactly as a reader opened at ``ledger_revision`` would have. ``find`` is
    not offered: a past search would need every record's history.
    """

    def __init__(self, reader: Any, ledger_revision: int) -> None:
        self._reader = reader
        self.ledger_revision = ledger_revision
        self.epoch = reader.epoch
        self.principal = reader.principal
        self.text_index: bool = reader.text_index

    def history(self, record_id: str, *, audience: str | None = None) -> list[Record]:
        # The reader's own partition overlays the project's only from the
        # moment it held a version: as of an earlier revision, the project
        # record is the one that was seen.
        partitions = (audience,) if audience is not None else view_audiences(self.principal)[::-1]
        for partition in partitions:
            versions = [r for r in self._reader.history(record_id, audience=partition)
                        if r.ledger_revision <= self.ledger_revision]
            if versions:
                return versions
        return []

    def walk_chain(self, upto: int | None = None) -> Any:
        """The hash chain walked as far as this earlier revision (see :meth:`Reader.walk_chain`)."""
        bound = self.ledger_revision if upto is None else min(upto, self.ledger_revision)
        return self._reader.walk_chain(bound)

    def get(self, record_id: str, revision: int | None = None) -> Record | None:
        versions = self.history(record_id)
        if revision is not None:
            versions = [r for r in versions if r.revision == revision]
        return versions[-1] if versions else None

    def get_many(self, record_ids: Sequence[str]) -> dict[str, Record]:
        out = {}
        for record_id in record_ids:
            record = self.get(record_id)
            if record is not None:
                out[record_id] = record
        return out

    def find(self, **filters: Any) -> list[Record]:
        """Not offered as of a past revision (see the class docstring)."""
        from assay.errors import UnavailableError

        raise UnavailableError("searching the ledger as of a past revision is not supported",
                               code="as_of_search_unavailable")

    def find_count(self, **filters: Any) -> int:
        """Not offered as of a past revision (see the class docstring)."""
        return len(self.find(**filters))
