"""Where the tests an evidence run mapped to requirements are, and a digest of each one's source.

A test that verifies a requirement is part of the contract: when it is
deleted, renamed, skipped or rewritten, the requirement's evidence changes
meaning. So the runner records, for every mapped test of a run, what its
source was (:class:`SourceReader`); a pin copies those facts
(:mod:`assay.intent.pin`) and later runs are compared with them.

Where the source is, in order:

1. the test's ``location`` from the results file (``PATH::QUALNAME`` as
   assay's pytest plugin writes it, or ``PATH::NAME`` from a ``file``
   attribute), the path relative to the command's ``cwd``;
2. for a pytest-shaped id (``tests.test_login.TestLock::test_three``) the
   first ``.py`` file the dotted class name reaches (``tests/test_login.py``),
   the rest naming the class and function;
3. nowhere: the runner reported no location assay can find (a Go or
   JavaScript test without a ``file`` attribute). Only its presence and
   outcome are compared then.

What is digested:

- ``kind: "function"``: a Python test function found in its file's syntax
  tree (the last definition of that name, as Python binds it). The digest is
  the SHA-256 of :func:`ast.unparse` of the definition, decorators included,
  so reformatting the function or editing its comments changes nothing,
  while an added ``@pytest.mark.skip`` or a changed assertion does. The
  parameters of a parametrised test (``test_x[1-2]``) are not part of the
  name. The text itself is kept (at most :data:`MAX_TEXT_CHARS` characters
  per test, :data:`MAX_TEXT_TOTAL` for a run) so a change can later be
  shown as lines added and removed.
- ``kind: "file"``: the file was found but not the function in it (another
  language, or a name the syntax tree does not hold): the digest of the
  whole file's bytes.
- ``kind: "none"``: no file (``sha256`` null).

A Python test also records its ``conftest``: the digest (of ``ast.unparse``
of the module, so again formatting and comments do not count) of every
``conftest.py`` from the test's directory up to the command's ``cwd``. A
conftest can rewrite what a test reports (a ``pytest_runtest_makereport``
hook turning failures into passes) without touching the test, so it is part
of what the test means.

Files are read as untrusted input: inside the project only, without
following a symbolic link, regular files of at most :data:`MAX_SOURCE_BYTES`;
one that cannot be read is ``kind: "none"`` with the ``reason``. Helpers a
test imports from other modules are not part of its digest. The digest of
``ast.unparse`` text can differ between Python minor versions; the run
records the version (``host.python``).

Imports the base modules, :mod:`assay.inputs` and its sibling junit module.
"""

from __future__ import annotations

import ast
import hashlib
import os
from typing import Any

from assay.evidence.junit import TestOutcome
from assay.inputs import InputRefused, descend, read_regular_file

__all__ = ["MAX_SOURCE_BYTES", "MAX_TEXT_CHARS", "MAX_TEXT_TOTAL", "SourceReader", "bare_name"]

MAX_SOURCE_BYTES = 2 * 1024 * 1024
# Source text kept per test and per run: enough for any test function worth
# reading, while a run of thousands of mapped tests stays far below the
# ledger's 4 MiB record bound.
MAX_TEXT_CHARS = 8 * 1024
MAX_TEXT_TOTAL = 512 * 1024


def bare_name(name: str) -> str:
    """A test's function name without its parameters: ``test_x[1-2]`` is ``test_x``."""
    return name.partition("[")[0].strip()


def _inside(*parts: str) -> str | None:
    """The normalised relative path of ``parts`` joined, or None when it leaves the project."""
    joined = os.path.normpath(os.path.join(*parts)).replace(os.sep, "/")
    if joined in (".", "..") or joined.startswith("../") or os.path.isabs(joined):
        return None
    return joined


class SourceReader:
    """Finds and digests test sources under one project root; each file is read once.

    ``cwd`` is the command's working directory relative to ``root``: the
    directory the test runner reports paths and class names from.
    """

    __slots__ = ("_conftests", "_cwd", "_files", "_root", "_texts", "_total")

    def __init__(self, root: str | os.PathLike[str], cwd: str = ".") -> None:
        self._root = os.fspath(root)
        self._cwd = cwd
        self._files: dict[str, tuple[bytes | None, str | None]] = {}
        self._conftests: dict[str, dict[str, str]] = {}
        self._texts: dict[str, str] = {}
        self._total = 0

    @property
    def texts(self) -> dict[str, str]:
        """The kept source texts by digest, in digest order."""
        return dict(sorted(self._texts.items()))

    def _bytes(self, relative: str) -> tuple[bytes | None, str | None]:
        """The file's bytes (None and the reason when it cannot be read)."""
        if relative in self._files:
            return self._files[relative]
        parts = relative.split("/")
        found: tuple[bytes | None, str | None]
        try:
            fd = os.open(self._root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            found = (None, f"cannot open the project root: {exc.strerror}")
        else:
            try:
                inner = descend(fd, parts[:-1])
                try:
                    data, _ = read_regular_file(parts[-1], dir_fd=inner, limit=MAX_SOURCE_BYTES,
                                                label=relative)
                    found = (data, None)
                finally:
                    os.close(inner)
            except InputRefused as exc:
                found = (None, exc.message)
            finally:
                os.close(fd)
        self._files[relative] = found
        return found

    def _exists(self, relative: str) -> bool:
        return self._bytes(relative)[0] is not None

    def _where(self, test: TestOutcome) -> tuple[str | None, str | None]:
        """``(path relative to the root, qualified function name or None)`` of ``test``."""
        if test.location:
            path, _, qualname = test.location.partition("::")
            relative = _inside(self._cwd, path) if path else None
            return relative, (bare_name(qualname) or None) if relative else None
        classname, sep, name = test.id.rpartition("::")
        if not sep or not classname:
            return None, None
        parts = classname.split(".")
        for cut in range(len(parts), 0, -1):
            relative = _inside(self._cwd, "/".join(parts[:cut]) + ".py")
            if relative is not None and self._exists(relative):
                return relative, ".".join([*parts[cut:], bare_name(name)])
        return None, None

    def source(self, test: TestOutcome) -> dict[str, Any]:
        """``{path, function, kind, sha256}`` of ``test`` (and ``reason`` when it is not found).

        Keeps the text of a found function for :attr:`texts` while the
        per-run budget lasts.
        """
        path, qualname = self._where(test)
        if path is None:
            return {"path": None, "function": None, "kind": "none", "sha256": None}
        data, reason = self._bytes(path)
        if data is None:
            return {"path": path, "function": qualname, "kind": "none", "sha256": None,
                    "reason": reason}
        text = _function_text(data, qualname) if qualname else None
        harness = {"conftest": self._conftest(path)} if path.endswith(".py") else {}
        if text is None:
            return {"path": path, "function": qualname, "kind": "file",
                    "sha256": hashlib.sha256(data).hexdigest(), **harness}
        sha = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        if sha not in self._texts and len(text) <= MAX_TEXT_CHARS \
                and self._total + len(text) <= MAX_TEXT_TOTAL:
            self._texts[sha] = text
            self._total += len(text)
        return {"path": path, "function": qualname, "kind": "function", "sha256": sha,
                **harness}

    def _conftest(self, path: str) -> dict[str, str]:
        """``{conftest path: digest}`` from ``path``'s directory up to the command's cwd."""
        folder = os.path.dirname(path)
        if folder in self._conftests:
            return self._conftests[folder]
        top = os.path.normpath(self._cwd).replace(os.sep, "/")
        found: dict[str, str] = {}
        here = folder
        while True:
            candidate = f"{here}/conftest.py" if here else "conftest.py"
            data = self._bytes(candidate)[0]
            if data is not None:
                found[candidate] = hashlib.sha256(_normal(data)).hexdigest()
            if here in ("", ".", top) or not here:
                break
            here = os.path.dirname(here)
        self._conftests[folder] = dict(sorted(found.items()))
        return self._conftests[folder]


_TREES: dict[bytes, ast.Module | None] = {}


def _tree(data: bytes) -> ast.Module | None:
    digest = hashlib.sha256(data).digest()
    if digest not in _TREES:
        try:
            _TREES[digest] = ast.parse(data)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            _TREES[digest] = None
        if len(_TREES) > 256:  # a cache for one run's files, not for the process
            _TREES.pop(next(iter(_TREES)))
    return _TREES[digest]


def _normal(data: bytes) -> bytes:
    """A module as its syntax tree gives it back (its bytes when it does not parse)."""
    tree = _tree(data)
    if tree is None:
        return data
    try:
        return ast.unparse(tree).encode("utf-8", "surrogatepass")
    except (ValueError, RecursionError):
        return data


def _function_text(data: bytes, qualname: str) -> str | None:
    """``ast.unparse`` of the definition ``qualname`` names in the module ``data``, or None."""
    tree = _tree(data)
    if tree is None:
        return None
    body: list[ast.stmt] = tree.body
    node: ast.stmt | None = None
    for part in qualname.split("."):
        node = None
        for candidate in body:
            if isinstance(candidate, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                    and candidate.name == part:
                node = candidate  # the last definition of a name is the one Python binds
        if node is None:
            return None
        body = node.body if isinstance(node, ast.ClassDef) else []
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    try:
        return ast.unparse(node)
    except (ValueError, RecursionError):
        return None
