"""Per-test results of an evidence run: the results file, its mapping to requirements, rollups.

A command that declares ``results = {format = "junit", path = ...}`` writes
a test results file; after the runner ran it, :func:`collect_results` reads
that file safely, parses it (:mod:`assay.evidence.junit`), maps each test to
requirement ids and returns the ``results`` field of the evidence record
together with the mapped outcomes (kept in memory for a discriminating run).
Nothing here raises for a bad file: every refusal is recorded as
``status: "refused"`` with a stable ``code``.

Reading the file (path relative to the command's ``cwd``, inside the project):

- every directory on the way is opened with ``O_NOFOLLOW | O_DIRECTORY``
  relative to the one before, and the file through
  :func:`assay.inputs.read_regular_file` (no symlink, regular file only,
  size from ``fstat`` before any read, at most :data:`MAX_RESULTS_BYTES`);
  codes ``results_missing``, ``results_symlink``, ``results_not_regular``,
  ``results_too_large``, ``results_unreadable``;
- a file the run did not write is ``results_not_written``: the file's
  identity (inode, size, modification and change times) is taken before the
  command starts, and a file that still has it afterwards is a leftover of
  an earlier run, never evidence of this one;
- the XML codes of :mod:`assay.evidence.junit`;
- ``results_no_tests``: a well-formed file that holds no test case proves
  nothing, so it is refused like an unreadable one.

Mapping: a test's requirements are those its own ``requirement``
properties name (assay's pytest plugin writes them) plus those of every
``[evidence.commands.NAME.requirements]`` glob that matches its id
(:func:`fnmatch.fnmatchcase`: ``*`` matches any run of characters,
``::`` and ``/`` included). A requirement's rollup is ``failed`` when any
of its tests failed or errored, ``passed`` only when it has tests, all
passed, and every glob that names it matched a test; ``unverified``
otherwise (none ran, some were skipped, or a glob matched nothing).

Attribution (:class:`Attribution`): a mark or mapping may name its intent
(``knowledge:login#R1``, *scoped*) or not (``R1``). An unscoped one belongs
to ``[gate] default_intent`` when the project names one, else to the one
intent the run was recorded ``--for`` (when every target names the same
intent), else to no intent at all: such evidence cannot be accepted by any
intent. Tests and rollups carry the attributed *label*
(``INTENT#REQ``, or the bare id when unattributed); each rollup also says
its ``intent`` (null when unattributed) and bare ``requirement_id``.

Sources: every mapped test's source is located and digested
(:mod:`assay.evidence.sources`) and stored with the test (``source``); the
kept texts are in ``source_texts`` by digest.

Size: the record keeps at most :data:`MAX_STORED_TESTS` tests (mapped
tests first, then the ones that did not pass, each group in id order) and
counts the rest in ``omitted``; each rollup lists at most
:data:`MAX_LISTED_TESTS` failed and skipped test ids and counts them all.
Failure messages are redacted like command output.

Imports the base modules, :mod:`assay.inputs`, :mod:`assay.redaction`,
:mod:`assay.config` and its sibling :mod:`assay.evidence.junit`.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from fnmatch import fnmatchcase
from itertools import pairwise
from pathlib import Path
from typing import Any

from assay.config import EvidenceCommand
from assay.evidence.junit import ResultsRefused, TestOutcome, parse_junit, reader_version
from assay.evidence.sources import SourceReader
from assay.inputs import InputRefused, descend, read_regular_file
from assay.redaction import Redactor

__all__ = [
    "MAX_LISTED_TESTS",
    "MAX_RESULTS_BYTES",
    "MAX_STORED_TESTS",
    "Attribution",
    "FileIdentity",
    "collect_results",
    "compare_at_ref",
    "file_identity",
    "map_requirements",
    "project_path",
    "rollups",
    "split_label",
]

MAX_RESULTS_BYTES = 16 * 1024 * 1024
MAX_STORED_TESTS = 2000
MAX_LISTED_TESTS = 50
_REFUSED_CODES = {
    "missing": "results_missing",
    "symlink": "results_symlink",
    "not_regular": "results_not_regular",
    "too_large": "results_too_large",
    "unreadable": "results_unreadable",
}

# (device, inode, size, mtime_ns, ctime_ns) of a file, or None when there is none.
FileIdentity = tuple[int, int, int, int, int] | None


def split_label(label: str) -> tuple[str | None, str]:
    """``(intent, requirement)`` of a mark or mapping id: ``knowledge:x#R1`` or ``(None, "R1")``.

    The intent part must look like a record id (``KIND:NAME``); a ``#``
    anywhere else is part of a bare requirement id.
    """
    intent, sep, requirement = label.rpartition("#")
    if sep and requirement and ":" in intent and not intent.startswith(":"):
        return intent, requirement
    return None, label


class Attribution:
    """Which intent each requirement mark or mapping of one run belongs to (module docstring).

    ``default_intent`` is ``[gate] default_intent``; ``targets`` the
    ``(intent, requirement)`` pairs the run was recorded ``--for``.
    """

    __slots__ = ("default_intent", "owner_of_unscoped", "targets")

    def __init__(self, default_intent: str | None = None,
                 targets: Sequence[tuple[str, str]] = ()) -> None:
        self.default_intent = default_intent
        self.targets = tuple(targets)
        named = {intent for intent, _ in self.targets}
        self.owner_of_unscoped = default_intent or (named.pop() if len(named) == 1 else None)

    def label(self, given: str) -> str:
        """The attributed label of a mark or mapping id (unchanged when it stays unattributed)."""
        intent, requirement = split_label(given)
        if intent is None and self.owner_of_unscoped is not None:
            return f"{self.owner_of_unscoped}#{requirement}"
        return given

    def to_dict(self) -> dict[str, Any]:
        return {"default_intent": self.default_intent, "unscoped_to": self.owner_of_unscoped}


def project_path(decl: EvidenceCommand) -> str:
    """The results file's path relative to the project root (the command's cwd joined)."""
    assert decl.results is not None
    return os.path.normpath(os.path.join(decl.cwd, decl.results.path)).replace(os.sep, "/")


def _identity(info: os.stat_result) -> FileIdentity:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def file_identity(root: Path, decl: EvidenceCommand) -> FileIdentity:
    """The identity of the results file before a run (None when there is no such file)."""
    try:
        return _identity(os.lstat(root / project_path(decl)))
    except (OSError, ValueError):
        return None


def _read(root: Path, relative: str) -> tuple[bytes, os.stat_result]:
    """The file's bytes, reached without following any link (see the module docstring)."""
    parts = relative.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise ResultsRefused("results_missing", f"{relative} is not a path inside the project")
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise ResultsRefused("results_unreadable",
                             f"cannot open the project root: {exc.strerror}") from None
    try:
        try:
            inner = descend(fd, parts[:-1])
        except InputRefused as exc:
            raise ResultsRefused(_REFUSED_CODES[exc.reason],
                                 f"on the way to {relative}: {exc.message}") from None
        try:
            return read_regular_file(parts[-1], dir_fd=inner, limit=MAX_RESULTS_BYTES,
                                     label=relative)
        except InputRefused as exc:
            raise ResultsRefused(_REFUSED_CODES[exc.reason], exc.message) from None
        finally:
            os.close(inner)
    finally:
        os.close(fd)


def _attributed(globs: Sequence[tuple[str, tuple[str, ...]]], attribution: Attribution | None
                ) -> list[tuple[str, tuple[str, ...]]]:
    if attribution is None:
        return list(globs)
    return [(glob, tuple(dict.fromkeys(attribution.label(rid) for rid in ids)))
            for glob, ids in globs]


def map_requirements(tests: Iterable[TestOutcome],
                     globs: Sequence[tuple[str, tuple[str, ...]]],
                     attribution: Attribution | None = None) -> list[TestOutcome]:
    """Each test with its requirement labels: its own properties, then every matching glob's ids.

    A test id reported more than once becomes one test (the worse outcome).
    With ``attribution`` every id becomes its attributed label. Returned in
    id order.
    """
    merged: dict[str, TestOutcome] = {}
    for test in tests:
        found = merged.get(test.id)
        merged[test.id] = test if found is None else found.merged(test)
    out = []
    for test_id in sorted(merged):
        test = merged[test_id]
        extra = [rid for glob, ids in globs if fnmatchcase(test_id, glob) for rid in ids]
        labels = (*test.requirements, *extra)
        if attribution is not None:
            labels = tuple(attribution.label(rid) for rid in labels)
        out.append(TestOutcome(test.id, test.outcome, tuple(dict.fromkeys(labels)), test.message,
                               test.location))
    return out


def rollups(tests: Sequence[TestOutcome],
            globs: Sequence[tuple[str, tuple[str, ...]]],
            attribution: Attribution | None = None) -> list[dict[str, Any]]:
    """Per requirement label: its outcome, counts and the failed and skipped test ids (bounded).

    ``tests`` carry labels already (:func:`map_requirements`); the globs'
    ids are attributed here the same way.
    """
    by_requirement: dict[str, list[TestOutcome]] = {}
    for test in tests:
        for rid in test.requirements:
            by_requirement.setdefault(rid, []).append(test)
    missing: dict[str, list[str]] = {}
    for glob, ids in _attributed(globs, attribution):
        if not any(fnmatchcase(t.id, glob) for t in tests):
            for rid in ids:
                missing.setdefault(rid, []).append(glob)
                by_requirement.setdefault(rid, [])
    out = []
    for rid in sorted(by_requirement):
        mapped = by_requirement[rid]
        counts = {k: sum(1 for t in mapped if t.outcome == k)
                  for k in ("passed", "failed", "error", "skipped")}
        failed = [t.id for t in mapped if t.outcome in ("failed", "error")]
        skipped = [t.id for t in mapped if t.outcome == "skipped"]
        if failed:
            outcome = "failed"
        elif mapped and counts["passed"] == len(mapped) and rid not in missing:
            outcome = "passed"
        else:
            outcome = "unverified"
        intent, bare = split_label(rid)
        out.append({
            "label": rid,
            "intent": intent,
            "requirement_id": bare,
            "outcome": outcome,
            "tests": len(mapped),
            "counts": counts,
            "failed_tests": failed[:MAX_LISTED_TESTS],
            "skipped_tests": skipped[:MAX_LISTED_TESTS],
            "missing_globs": missing.get(rid, []),
        })
    return out


def _stored(tests: Sequence[TestOutcome], redactor: Redactor, sources: SourceReader | None
            ) -> tuple[list[dict[str, Any]], int]:
    """The tests kept in the record (see the module docstring) and how many were left out."""
    def rank(t: TestOutcome) -> tuple[int, str]:
        return (0 if t.requirements else 1 if t.outcome != "passed" else 2, t.id)

    kept = sorted(sorted(tests, key=rank)[:MAX_STORED_TESTS], key=lambda t: t.id)
    rows = []
    for test in kept:
        row: dict[str, Any] = {"id": test.id, "outcome": test.outcome,
                               "requirements": list(test.requirements)}
        if test.message:
            row["message"] = redactor.redact_text(test.message)[0]
        if test.requirements and sources is not None:
            row["source"] = sources.source(test)
        rows.append(row)
    return rows, len(tests) - len(kept)


def _summary(tests: Sequence[TestOutcome]) -> dict[str, int]:
    return {"tests": len(tests), **{k: sum(1 for t in tests if t.outcome == k)
                                    for k in ("passed", "failed", "error", "skipped")}}


def _is_pytest(decl: EvidenceCommand) -> bool:
    """Whether the command runs pytest (``pytest ...`` or ``python -m pytest ...``)."""
    words = [os.path.basename(word) for word in decl.argv]
    return any(w in ("pytest", "py.test") or w.startswith("pytest-") for w in words[:1]) or \
        any(a == "-m" and b == "pytest" for a, b in pairwise(words))


def collect_results(root: Path, decl: EvidenceCommand, before: FileIdentity, *,
                    environ: Mapping[str, str] | None = None,
                    attribution: Attribution | None = None,
                    ) -> tuple[dict[str, Any], list[TestOutcome] | None]:
    """The record's ``results`` field after ``decl`` ran in ``root``, and the mapped tests.

    ``before`` is :func:`file_identity` taken before the command started;
    ``attribution`` says which intent unscoped marks belong to (None: they
    stay unscoped, as in records written before attribution existed).
    The tests are None when the file was refused (the field says why).
    Never raises for a bad file.
    """
    assert decl.results is not None
    relative = project_path(decl)
    field: dict[str, Any] = {
        "format": decl.results.format,
        "path": decl.results.path,
        "status": "refused",
        "code": None,
        "message": None,
        "file": None,
        "reader": {"name": "junitparser", "version": reader_version()},
        "summary": None,
        "tests": [],
        "omitted": {"tests": 0},
        "requirements": [],
    }
    if attribution is not None:
        field["attribution"] = attribution.to_dict()
    try:
        data, info = _read(root, relative)
        field["file"] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
        if before is not None and _identity(info) == before:
            raise ResultsRefused("results_not_written",
                                 f"{relative} is unchanged since before the run: the command did "
                                 "not write it, so it describes an earlier run")
        parsed = parse_junit(data)
        if not parsed:
            raise ResultsRefused("results_no_tests",
                                 f"{relative} holds no test case: a run of no test proves nothing")
        tests = map_requirements(parsed, decl.requirements, attribution)
    except ResultsRefused as exc:
        message = exc.message
        if exc.code == "results_missing" and _is_pytest(decl):
            message += (f"; pytest writes no results file unless asked: add "
                        f"--junitxml={decl.results.path} to argv")
        field["code"], field["message"] = exc.code, message
        return field, None
    redactor = Redactor(os.environ if environ is None else environ)
    sources = SourceReader(root, decl.cwd) if attribution is not None else None
    rows, omitted = _stored(tests, redactor, sources)
    field.update({
        "status": "read",
        "summary": _summary(tests),
        "tests": rows,
        "omitted": {"tests": omitted},
        "requirements": rollups(tests, decl.requirements, attribution),
    })
    if sources is not None:
        field["source_texts"] = sources.texts
    return field, tests


def compare_at_ref(now: Sequence[TestOutcome], at_ref: Sequence[TestOutcome] | None,
                   ref_results: Mapping[str, Any] | None) -> dict[str, Any]:
    """Per mapped test: its outcome now and at the ref, and whether it proves the change.

    A test proves the change when it passes now and failed or errored at the
    ref; one that passed there too does not, and one absent there (a new
    test) or skipped proves nothing. Tests are listed in id order, at most
    :data:`MAX_STORED_TESTS`.
    """
    there = {t.id: t.outcome for t in at_ref} if at_ref is not None else None
    rows = []
    for test in now:
        if not test.requirements:
            continue
        outcome = None if there is None else there.get(test.id, "absent")
        rows.append({"id": test.id, "requirements": list(test.requirements),
                     "now": test.outcome, "at_ref": outcome,
                     "proves": test.outcome == "passed" and outcome in ("failed", "error")})
    shown = rows[:MAX_STORED_TESTS]
    return {
        "results_at_ref": ({"status": ref_results.get("status"), "code": ref_results.get("code")}
                           if ref_results is not None else None),
        "mapped": len(rows),
        "proving": sum(1 for r in rows if r["proves"]),
        "tests": shown,
        "omitted": {"tests": len(rows) - len(shown)},
    }
