"""Workspace observation through git plumbing, and before/after comparison.

:func:`observe` answers: at this moment, what is HEAD, which branch, which
paths are dirty, and what is the content fingerprint of every tracked and
non-ignored untracked file (coverage ``tracked_and_non_ignored_untracked``)?
:func:`compare` turns a before/after pair into the changed path set and a
progress state (``changed``, ``unchanged``, ``unknown``, ``not_applicable``).

Cost contract: a clean repository takes three git processes (``rev-parse``,
``status --porcelain=v2 -z``, ``ls-files -s -z``) and no file reads; a file
git reports clean is fingerprinted by its index blob id (git has just
verified that the work tree matches the index). Only dirty and untracked
files are hashed, by ``git hash-object --stdin-paths`` (so git's own clean
filters apply and the ids agree with the index). ``content_sha256=True``
instead reads every file and fingerprints it with SHA-256.

Fingerprints are ``"<mode> <kind>:<hex>"``: ``100644 blob:<oid>``,
``120000 blob:<oid>`` (a symlink: the id of its target text, never followed),
``160000 commit:<oid>`` (a submodule: the commit checked out in it, with
``+modified`` / ``+untracked`` when git reports those; files inside a
submodule are not fingerprinted), ``040000 repository:<oid|none>`` (an
untracked nested repository), or ``<mode> sha256:<hex>`` in SHA-256 mode.

Nothing here writes: git runs with ``GIT_OPTIONAL_LOCKS=0`` so ``status``
does not refresh the index. The project's own state directory (``.assay/``)
is excluded even when it is not ignored, because the ledger lives there.
Paths matching the project's ``[evidence] ignore`` patterns (tool caches
such as ``__pycache__``, see :mod:`assay.config`) are left out too, tracked
or not: a test run that writes its cache is not a change to the work. The
summary names the patterns it honoured.

Imports the base modules and :mod:`assay.config` only.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import re
import stat
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assay.canonical import digest_bytes
from assay.config import STATE_DIR

__all__ = [
    "COVERAGE",
    "GIT_STATUSES",
    "MAX_LISTED_PATHS",
    "PROGRESS_STATES",
    "PROVIDER_VERSION",
    "Comparison",
    "DirtyEntry",
    "GitObservation",
    "compare",
    "ignore_matcher",
    "observe",
    "workspace_digest",
]

COVERAGE = "tracked_and_non_ignored_untracked"
PROVIDER_VERSION = 1
GIT_STATUSES = ("observed", "unavailable", "error", "not_applicable")
PROGRESS_STATES = ("changed", "unchanged", "unknown", "not_applicable")
# Paths listed in a summary (dirty paths, changed paths); the rest are counted.
MAX_LISTED_PATHS = 500
_GIT_TIMEOUT_S = 120
# One `git ls-files -s -z` entry: mode, object id, stage, TAB, path, NUL.
_LS_ENTRY = re.compile(r"([0-7]{6}) ([0-9a-f]+) [0-3]\t([^\0]*)\0")


@dataclass(frozen=True, slots=True)
class DirtyEntry:
    """A path git reports as not clean: ``state`` is a word, ``xy`` git's code."""

    path: str
    state: str
    xy: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "state": self.state, "xy": self.xy}


@dataclass(frozen=True, slots=True)
class GitObservation:
    """One workspace observation. ``files`` maps repository-relative paths to fingerprints."""

    status: str
    reason: str | None = None
    toplevel: str | None = None
    head: str | None = None
    branch: str | None = None
    object_format: str | None = None
    fingerprint_kind: str = "git-blob"
    files: Mapping[str, str] = field(default_factory=dict)
    dirty: tuple[DirtyEntry, ...] = ()
    submodules: tuple[str, ...] = ()
    workspace_sha256: str | None = None
    observed_at: str = ""
    duration_ms: int = 0
    ignore: tuple[str, ...] = ()

    @property
    def observed(self) -> bool:
        return self.status == "observed"

    def summary(self, *, limit: int = MAX_LISTED_PATHS) -> dict[str, Any]:
        """Compact JSON for a record: no per-file map, dirty paths capped.

        With ``head`` the dirty entries describe the whole workspace (clean
        files are HEAD's); ``dirty_files`` gives the fingerprints of the
        listed dirty paths, so a later reader can compare them.
        """
        listed = self.dirty[:limit]
        out = {
            "kind": "git",
            "status": self.status,
            "reason": self.reason,
            "coverage": COVERAGE,
            "version": PROVIDER_VERSION,
            "head": self.head,
            "branch": self.branch,
            "object_format": self.object_format,
            "fingerprint_kind": self.fingerprint_kind,
            "file_count": len(self.files),
            "workspace_sha256": self.workspace_sha256,
            "dirty": [d.to_dict() for d in listed],
            "dirty_files": {d.path: self.files[d.path] for d in listed if d.path in self.files},
            "dirty_count": len(self.dirty),
            "omitted": {"dirty": len(self.dirty) - len(listed)},
            "submodules": list(self.submodules),
            "observed_at": self.observed_at,
            "duration_ms": self.duration_ms,
        }
        if self.ignore:
            out["ignore"] = list(self.ignore)
        return out


def ignore_matcher(patterns: Sequence[str]) -> Callable[[str], bool] | None:
    """A predicate: does a repository-relative path fall under one of ``patterns``?

    A pattern is a run of ``/``-separated names (``*`` and ``?`` match within
    a name) that may occur at any depth; a path matches when it contains the
    run, so a file in a matching directory matches too. None for no pattern
    (nothing to filter: the hot path of a large repository stays a plain list).
    """
    def name_test(name: str) -> Callable[[str], bool]:
        if any(c in name for c in "*?["):
            return lambda value: fnmatch.fnmatchcase(value, name)
        return name.__eq__

    runs = [[name_test(n) for n in p.strip("/").split("/")] for p in patterns if p.strip("/")]
    if not runs:
        return None

    def matches(path: str) -> bool:
        names = path.split("/")
        for run in runs:
            width = len(run)
            for start in range(len(names) - width + 1):
                if all(run[i](names[start + i]) for i in range(width)):
                    return True
        return False

    return matches


@dataclass(frozen=True, slots=True)
class Comparison:
    """A before/after pair: the changed paths (sorted) and the progress state."""

    progress: str
    changed_paths: tuple[str, ...] = ()
    head_changed: bool = False
    reason: str | None = None

    def to_dict(self, *, limit: int = MAX_LISTED_PATHS) -> dict[str, Any]:
        listed = self.changed_paths[:limit]
        return {
            "progress": self.progress,
            "changed_paths": list(listed),
            "changed_path_count": len(self.changed_paths),
            "head_changed": self.head_changed,
            "reason": self.reason,
            "omitted": {"changed_paths": len(self.changed_paths) - len(listed)},
        }


class _GitFailed(Exception):
    pass


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["GIT_OPTIONAL_LOCKS"] = "0"
    env["LC_ALL"] = "C"
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(name, None)
    return env


def _git(args: list[str], cwd: Path | str, env: Mapping[str, str], *,
         stdin: bytes | None = None) -> bytes:
    try:
        done = subprocess.run(
            ["git", "-c", "core.quotepath=off", "-c", "status.relativePaths=false", *args],
            cwd=cwd, env=env, input=stdin, capture_output=True, timeout=_GIT_TIMEOUT_S,
            check=False,
        )
    except FileNotFoundError:
        raise
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise _GitFailed(f"git {args[0]} failed: {exc}") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise _GitFailed(f"git {args[0]}: {message[-1] if message else done.returncode}")
    return done.stdout


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _name(raw: bytes) -> str:
    # Non-UTF-8 path bytes become \\xNN escapes: JSON holds only valid text.
    return raw.decode("utf-8", "backslashreplace")


_STATE = {"M": "modified", "T": "type_changed", "A": "added", "D": "deleted", "R": "renamed",
          "C": "copied", "U": "unmerged"}


def _state(xy: str) -> str:
    worktree, index = xy[1:2], xy[0:1]
    code = worktree if worktree != "." else index
    return _STATE.get(code, "modified")


def observe(root: str | os.PathLike[str], *, content_sha256: bool = False,
            ignore: Sequence[str] = ()) -> GitObservation:
    """Observe the git workspace containing ``root``, leaving out paths under ``ignore``.

    Outside a repository the status is ``not_applicable``; without a usable
    git it is ``unavailable``; a git failure is ``error`` with the reason.
    ``ignore`` patterns are relative to the repository (see :func:`ignore_matcher`).
    """
    started = time.monotonic()
    observed_at = _now()
    base = Path(root).resolve()
    env = _env()

    def done(obs: GitObservation) -> GitObservation:
        return GitObservation(**{
            **{f: getattr(obs, f) for f in GitObservation.__dataclass_fields__},
            "observed_at": observed_at,
            "duration_ms": round((time.monotonic() - started) * 1000),
            "ignore": tuple(ignore),
        })

    try:
        head_info = subprocess.run(
            ["git", "rev-parse", "--is-inside-work-tree", "--show-toplevel",
             "--show-object-format"],
            cwd=base, env=env, capture_output=True, timeout=_GIT_TIMEOUT_S, check=False,
        )
    except FileNotFoundError:
        return done(GitObservation(status="unavailable", reason="git is not installed"))
    except (OSError, subprocess.TimeoutExpired) as exc:
        return done(GitObservation(status="unavailable", reason=f"git could not run: {exc}"))
    if head_info.returncode != 0:
        text = head_info.stderr.decode("utf-8", "replace")
        if "not a git repository" in text:
            return done(GitObservation(status="not_applicable", reason="not inside a git work tree"))
        return done(GitObservation(status="error", reason=text.strip()[-300:] or "git rev-parse failed"))
    lines = head_info.stdout.decode("utf-8", "surrogateescape").splitlines()
    if not lines or lines[0] != "true" or len(lines) < 3:
        return done(GitObservation(status="not_applicable", reason="not inside a git work tree"))
    toplevel = Path(os.fsdecode(os.fsencode(lines[1])))
    object_format = lines[2]
    try:
        obs = _observe(base, toplevel, object_format, env, content_sha256,
                       ignore_matcher(ignore))
    except _GitFailed as exc:
        return done(GitObservation(status="error", reason=str(exc), toplevel=str(toplevel)))
    except FileNotFoundError:
        return done(GitObservation(status="unavailable", reason="git is not installed"))
    return done(obs)


def _observe(base: Path, top: Path, object_format: str, env: Mapping[str, str],
             content_sha256: bool, ignored: Callable[[str], bool] | None) -> GitObservation:
    status_args = ["status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all",
                   "--ignore-submodules=none"]
    common = ["git", "-c", "core.quotepath=off", "-c", "status.relativePaths=false"]
    # status and ls-files are independent: run them side by side.
    listing = subprocess.Popen([*common, "ls-files", "-s", "-z"], cwd=top, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        status_raw = _git(status_args, top, env)
    finally:
        ls_out, ls_err = listing.communicate(timeout=_GIT_TIMEOUT_S)
    if listing.returncode != 0:
        raise _GitFailed("git ls-files: " + ls_err.decode("utf-8", "replace").strip()[-300:])

    excluded = _excluded_prefix(base, top)
    # One decode and one C-level scan of the whole listing: this is the hot
    # path on large clean repositories.
    listing_text = ls_out.decode("utf-8", "backslashreplace")
    listed = _LS_ENTRY.findall(listing_text)

    head: str | None = None
    branch: str | None = None
    dirty: list[tuple[bytes, str]] = []
    submodule_flags: dict[bytes, str] = {}
    tokens = status_raw.split(b"\0")
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if not token:
            continue
        tag = token[:1]
        if tag == b"#":
            header, _, header_value = token[2:].partition(b" ")
            if header == b"branch.oid":
                head = None if header_value == b"(initial)" else header_value.decode()
            elif header == b"branch.head":
                branch = None if header_value == b"(detached)" else _name(header_value)
        elif tag == b"1":
            parts = token.split(b" ", 8)
            dirty.append((parts[8], parts[1].decode()))
            if parts[2].startswith(b"S"):
                submodule_flags[parts[8]] = parts[2].decode()
        elif tag == b"2":
            parts = token.split(b" ", 9)
            dirty.append((parts[9], parts[1].decode()))
            orig = tokens[i]
            i += 1
            # A staged rename removed the original path from the index.
            dirty.append((orig, "D."))
            if parts[2].startswith(b"S"):
                submodule_flags[parts[9]] = parts[2].decode()
        elif tag == b"u":
            parts = token.split(b" ", 10)
            dirty.append((parts[10], parts[1].decode()))
        elif tag == b"?":
            dirty.append((token[2:], "??"))
        # "!" (ignored) entries are not requested and never counted.

    if excluded is not None:
        if "\t" + excluded in listing_text:  # tracked state files are rare: scan only then
            listed = [e for e in listed if not e[2].startswith(excluded)]
        dirty = [(p, xy) for p, xy in dirty if not _name(p).startswith(excluded)]
    if ignored is not None:
        listed = [e for e in listed if not ignored(e[2])]
        dirty = [(p, xy) for p, xy in dirty if not ignored(_name(p.rstrip(b"/")))]

    fingerprints: dict[str, str] = {
        path: f"{mode} {'commit' if mode == '160000' else 'blob'}:{oid}"
        for mode, oid, path in listed
    }
    gitlinks = sorted(path for mode, _, path in listed if mode == "160000")

    to_hash: list[tuple[bytes, str]] = []
    entries: list[DirtyEntry] = []
    for path, xy in dirty:
        key = _name(path.rstrip(b"/"))
        state = "untracked" if xy == "??" else _state(xy)
        entries.append(DirtyEntry(path=key, state=state, xy=xy))
        full = top / os.fsdecode(path)
        try:
            info = os.lstat(full)
        except FileNotFoundError:
            fingerprints.pop(key, None)
            continue
        except OSError as exc:
            raise _GitFailed(f"cannot stat {key}: {exc.strerror}") from None
        if path.endswith(b"/") or stat.S_ISDIR(info.st_mode):
            fingerprints[key] = _directory_fingerprint(
                full, env, submodule_flags.get(path), xy == "??")
            continue
        if stat.S_ISLNK(info.st_mode):
            target = os.fsencode(os.readlink(full))
            fingerprints[key] = "120000 blob:" + _blob_id(target, object_format)
            continue
        fingerprints[key] = "100755" if info.st_mode & stat.S_IXUSR else "100644"
        to_hash.append((path, key))

    if content_sha256:
        for key, value in list(fingerprints.items()):
            mode = value.split(" ", 1)[0]
            if mode == "160000" or " repository:" in value:
                continue
            fingerprints[key] = f"{mode} sha256:" + _sha256_file(top / key)
    elif to_hash:
        simple = [(p, k) for p, k in to_hash if b"\n" not in p]
        if simple:
            out = _git(["hash-object", "--stdin-paths"], top, env,
                       stdin=b"".join(p + b"\n" for p, _ in simple))
            oids = out.decode().split()
            if len(oids) != len(simple):
                raise _GitFailed("git hash-object returned an unexpected number of ids")
            for (_, key), oid in zip(simple, oids):
                fingerprints[key] = f"{fingerprints[key]} blob:{oid}"
        for path, key in to_hash:
            if b"\n" in path:  # cannot travel through --stdin-paths; git's filters do not apply
                data = (top / os.fsdecode(path)).read_bytes()
                fingerprints[key] = f"{fingerprints[key]} blob:" + _blob_id(data, object_format)

    ordered = dict(sorted(fingerprints.items()))
    submodules = tuple(gitlinks)
    return GitObservation(
        status="observed",
        toplevel=str(top),
        head=head,
        branch=branch,
        object_format=object_format,
        fingerprint_kind="sha256" if content_sha256 else "git-blob",
        files=ordered,
        dirty=tuple(sorted(entries, key=lambda e: e.path)),
        submodules=submodules,
        workspace_sha256=workspace_digest(ordered, "sha256" if content_sha256 else "git-blob"),
    )


def _excluded_prefix(base: Path, top: Path) -> str | None:
    try:
        rel = (base / STATE_DIR).relative_to(top)
    except ValueError:
        return None
    return rel.as_posix() + "/"


def _blob_id(data: bytes, object_format: str) -> str:
    algo = hashlib.sha256 if object_format == "sha256" else hashlib.sha1
    return algo(b"blob %d\0" % len(data) + data).hexdigest()


def _sha256_file(path: Path) -> str:
    if path.is_symlink():
        return hashlib.sha256(os.fsencode(os.readlink(path))).hexdigest()
    h = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _directory_fingerprint(path: Path, env: Mapping[str, str], flags: str | None,
                           untracked: bool) -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--verify", "-q", "HEAD"], cwd=path, env=env,
                             capture_output=True, timeout=_GIT_TIMEOUT_S, check=False)
        commit = out.stdout.decode().strip() if out.returncode == 0 else "none"
    except (OSError, subprocess.TimeoutExpired):
        commit = "unknown"
    if untracked:
        return f"040000 repository:{commit}"
    value = f"160000 commit:{commit}"
    if flags and flags[2:3] == "M":
        value += "+modified"
    if flags and flags[3:4] == "U":
        value += "+untracked"
    return value


def workspace_digest(files: Mapping[str, str], kind: str) -> str:
    """SHA-256 over ``coverage/version/kind`` then ``path NUL fingerprint LF`` lines in path order."""
    head = f"{COVERAGE}\n{PROVIDER_VERSION}\n{kind}\n"
    body = "".join([f"{p}\0{v}\n" for p, v in files.items()])
    return digest_bytes((head + body).encode("utf-8"))


def compare(before: GitObservation | None, after: GitObservation | None, *,
            ignore: Sequence[str] = ()) -> Comparison:
    """The changed paths and progress state between two observations.

    Paths matching ``ignore`` (the project's ``[evidence] ignore``) never count
    as changes, whether or not either observation left them out.

    ``not_applicable`` when git did not participate (neither observation is
    from a work tree); ``unknown`` when git participated but the pair cannot be
    compared (a side missing, unavailable or failed, another repository, or a
    different fingerprint kind). Otherwise ``changed`` when any path's
    fingerprint, presence or HEAD differs, else ``unchanged``.
    """
    sides = [o for o in (before, after) if o is not None]
    if not sides or all(o.status == "not_applicable" for o in sides):
        return Comparison("not_applicable", reason="git did not participate")
    if before is None or after is None:
        return Comparison("unknown", reason="only one side of the boundary was observed")
    if not (before.observed and after.observed):
        bad = before if not before.observed else after
        return Comparison("unknown", reason=f"git observation {bad.status}: {bad.reason}")
    if before.toplevel != after.toplevel:
        return Comparison("unknown", reason="the observations are of different work trees")
    if before.fingerprint_kind != after.fingerprint_kind:
        return Comparison("unknown", reason="the observations use different fingerprint kinds")
    changed = sorted(_changed(before.files, after.files))
    matcher = ignore_matcher(ignore) if ignore else None
    if matcher is not None:
        changed = [path for path in changed if not matcher(path)]
    head_changed = before.head != after.head
    progress = "changed" if changed or head_changed else "unchanged"
    return Comparison(progress, tuple(changed), head_changed)


def _changed(a: Mapping[str, str], b: Mapping[str, str]) -> Iterable[str]:
    if a is b:
        return
    for path, value in a.items():
        if b.get(path) != value:
            yield path
    for path in b:
        if path not in a:
            yield path
