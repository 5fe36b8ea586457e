"""Is a run's workspace still the workspace? Comparing what a run saw with what is there now.

An evidence run records the git workspace it ended on (``workspace.after``,
see :mod:`assay.evidence.git`). Evidence speaks only for those files: once
they change, the run no longer shows that the work holds. This module
answers, for a run and the workspace now (:class:`WorkspaceNow`, observed
once at an operation's edge), whether the two are the same and, if not,
which paths differ.

**The contract files are not part of it.** ``assay.toml`` and the harness
settings files ``hook install`` writes (:data:`CONTRACT_FILES`, in the
project's directory) say how the work is checked and gated, not what the
work is: setting the project up (installing the hook, adding ``[gate]``)
must not make the evidence stale. They are judged by the pins instead
(:mod:`assay.intent.pin`): a change to a check or to the gate is a
blocking issue of its own until a reviewer approves it. So every run also
records ``workspace.work``: the digest of its after-observation without
those files (:func:`work_facts`), and that digest is what is compared. A
run recorded before that field existed is compared by its whole-workspace
digest.

Same or not is decided by digests alone, exactly. Which paths differ is
then named for the reader (:func:`changed_paths`), from the dirty entries
both observations list and, when HEAD moved, the paths the two commits
differ in (``git diff``, immutable once both commits exist): a moved HEAD
is never itself the reason, only the paths that differ. A path that is
clean on one side and dirty on the other is named as changed. The listing
is ``complete: false`` when an observation listed only part of its dirty
paths or a commit is no longer in the repository.

A run that observed no git work tree (``not_applicable``) cannot be
compared and is left alone; a run that did observe one, compared with a
workspace that cannot be observed now (``.git`` removed, git failing), is
not the same workspace.

Imports the base modules, config and its sibling git module.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from assay.evidence.git import GitObservation, ignore_matcher, observe, workspace_digest

__all__ = [
    "CONTRACT_FILES",
    "MAX_NAMED_PATHS",
    "WorkspaceNow",
    "changed_paths",
    "contract_paths",
    "observe_now",
    "run_freshness",
    "runs_differ",
    "work_facts",
    "workspace_now",
]

# The files that say how the work is checked and gated, relative to the
# project's directory: assay.toml and the project-scope settings files of
# the harnesses (assay.gate.install writes them; a test holds the two lists
# together).
CONTRACT_FILES = ("assay.toml", ".claude/settings.json", ".codex/hooks.json",
                  ".cursor/hooks.json")
# Changed paths an issue names; the rest are counted.
MAX_NAMED_PATHS = 10
_HEAD = object()  # a fingerprint that is "whatever HEAD holds": known only by comparison

def _dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (stored data is never trusted)."""
    return value if isinstance(value, dict) else {}



def contract_paths(project_root: str | os.PathLike[str], toplevel: str | None) -> tuple[str, ...]:
    """:data:`CONTRACT_FILES` as paths relative to the repository at ``toplevel``."""
    if toplevel is None:
        return CONTRACT_FILES
    try:
        prefix = Path(project_root).resolve().relative_to(Path(toplevel).resolve()).as_posix()
    except ValueError:
        return CONTRACT_FILES
    if prefix in ("", "."):
        return CONTRACT_FILES
    return tuple(f"{prefix}/{name}" for name in CONTRACT_FILES)


def _digest_without(obs: GitObservation, excluded: Sequence[str]) -> str | None:
    if not obs.observed:
        return None
    files = {path: value for path, value in obs.files.items() if path not in set(excluded)}
    return workspace_digest(files, obs.fingerprint_kind)


def work_facts(project_root: str | os.PathLike[str], after: GitObservation
               ) -> dict[str, Any] | None:
    """``{sha256, excluded}``: the after-observation's digest without the contract files."""
    if not after.observed:
        return None
    excluded = contract_paths(project_root, after.toplevel)
    return {"sha256": _digest_without(after, excluded), "excluded": list(excluded)}


class WorkspaceNow:
    """The git workspace as observed once at an operation's edge, and a way to diff commits.

    ``excluded`` are the contract files' repository paths; ``diff(a, b)``
    gives the paths that differ between two commits (None when either is
    not in the repository); it is memoised, and commits do not change, so
    it answers the same for the same arguments always.
    """

    __slots__ = ("_digests", "diff", "excluded", "observation")

    def __init__(self, observation: GitObservation, excluded: tuple[str, ...] = (),
                 diff: Callable[[str, str], tuple[str, ...] | None] | None = None) -> None:
        self.observation = observation
        self.excluded = excluded
        self.diff = diff
        self._digests: dict[tuple[str, ...], str | None] = {}

    @property
    def status(self) -> str:
        return self.observation.status

    def digest_without(self, excluded: Sequence[str]) -> str | None:
        """The workspace digest now, leaving out ``excluded`` paths (memoised)."""
        key = tuple(excluded)
        if key not in self._digests:
            self._digests[key] = _digest_without(self.observation, key)
        return self._digests[key]

    def summary(self) -> dict[str, Any]:
        """What a report says of the workspace it compared with (no times: reports are pure)."""
        obs = self.observation
        return {
            "status": obs.status,
            "reason": obs.reason,
            "head": obs.head,
            "workspace_sha256": obs.workspace_sha256,
            "work_sha256": self.digest_without(self.excluded),
            "excluded": list(self.excluded),
            "dirty_count": len(obs.dirty),
            "ignore": list(obs.ignore),
        }


def _commit_diff(toplevel: str) -> Callable[[str, str], tuple[str, ...] | None]:
    memo: dict[tuple[str, str], tuple[str, ...] | None] = {}
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(name, None)

    def diff(a: str, b: str) -> tuple[str, ...] | None:
        if (a, b) not in memo:
            try:
                done = subprocess.run(
                    ["git", "-c", "core.quotepath=off", "diff", "--name-only", "-z",
                     "--no-renames", "--end-of-options", a, b],
                    cwd=toplevel, env=env, capture_output=True, timeout=120, check=False)
                memo[(a, b)] = (tuple(sorted(p.decode("utf-8", "backslashreplace")
                                             for p in done.stdout.split(b"\0") if p))
                                if done.returncode == 0 else None)
            except (OSError, subprocess.TimeoutExpired):
                memo[(a, b)] = None
        return memo[(a, b)]

    return diff


def workspace_now(project_root: str | os.PathLike[str], obs: GitObservation) -> WorkspaceNow:
    """The workspace of the project at ``project_root`` as ``obs`` observed it."""
    diff = _commit_diff(obs.toplevel) if obs.observed and obs.toplevel else None
    return WorkspaceNow(obs, contract_paths(project_root, obs.toplevel), diff)


def observe_now(project_root: str | os.PathLike[str], ignore: Sequence[str] = ()) -> WorkspaceNow:
    """Observe the workspace of the project at ``project_root`` now (three git processes)."""
    return workspace_now(project_root, observe(project_root, ignore=ignore))


def _side(summary: Mapping[str, Any]) -> tuple[Any, dict[str, Any], bool]:
    """``(head, {dirty path: fingerprint or None}, complete)`` of a recorded summary."""
    files = _dict(summary.get("dirty_files"))
    dirty: dict[str, Any] = {}
    for entry in summary.get("dirty") or ():
        if isinstance(entry, dict) and isinstance(entry.get("path"), str):
            dirty[entry["path"]] = files.get(entry["path"])
    omitted = _dict(summary.get("omitted"))
    return summary.get("head"), dirty, not omitted.get("dirty")


def changed_paths(then: Mapping[str, Any], now: Mapping[str, Any] | WorkspaceNow,
                  diff: Callable[[str, str], tuple[str, ...] | None] | None,
                  excluded: Sequence[str] = (), ignore: Sequence[str] = ()
                  ) -> tuple[list[str], bool]:
    """The paths that differ from the summary ``then`` to ``now``, and whether that is all of them.

    ``now`` is another recorded summary or the workspace observed now (whose
    every file's fingerprint is known). ``excluded`` and paths matching
    ``ignore`` are never named. See the module docstring for what is exact.
    """
    a_head, a_dirty, complete = _side(then)
    files: Mapping[str, str] | None
    if isinstance(now, WorkspaceNow):
        b_head, files = now.observation.head, now.observation.files
        b_dirty: dict[str, Any] = {d.path: files.get(d.path) for d in now.observation.dirty}
    else:
        b_head, b_dirty, b_complete = _side(now)
        files = None
        complete = complete and b_complete
    commits: set[str] = set()
    if a_head != b_head:
        got = diff(a_head, b_head) if diff is not None and a_head and b_head else None
        if got is None:
            complete = False
        else:
            commits = set(got)

    def fingerprint(path: str, dirty: Mapping[str, Any], every: Mapping[str, str] | None) -> Any:
        if path in dirty:
            return dirty[path]
        return every.get(path) if every is not None else _HEAD

    skip = set(excluded)
    matcher = ignore_matcher(ignore) if ignore else None
    out = []
    for path in sorted(set(a_dirty) | set(b_dirty) | commits):
        if path in skip or (matcher is not None and matcher(path)):
            continue
        a, b = fingerprint(path, a_dirty, None), fingerprint(path, b_dirty, files)
        if a is _HEAD and b is _HEAD:
            changed = path in commits
        elif a is _HEAD or b is _HEAD:
            changed = True  # dirty on one side only: named, though rarely its content matches
        else:
            changed = a != b
        if changed:
            out.append(path)
    return out, complete


def run_freshness(data: Mapping[str, Any], now: WorkspaceNow) -> dict[str, Any] | None:
    """Whether the run ``data`` (an evidence record's data) ended on the workspace as it is now.

    None when the run observed no git work tree (nothing to compare). Else
    ``{same, paths, count, complete, reason}``: ``paths`` names at most
    :data:`MAX_NAMED_PATHS` changed paths, ``count`` counts every one found.
    """
    workspace = _dict(data.get("workspace"))
    after = _dict(workspace.get("after"))
    if after.get("status") != "observed":
        return None
    if not now.observation.observed:
        reason = (f"the workspace cannot be observed now ({now.status}: "
                  f"{now.observation.reason or 'no reason given'})")
        return {"same": False, "paths": [], "count": 0, "complete": False, "reason": reason}
    work = _dict(workspace.get("work"))
    if isinstance(work.get("sha256"), str):
        excluded = [p for p in work.get("excluded") or () if isinstance(p, str)]
        same = work["sha256"] == now.digest_without(excluded)
    else:
        excluded = []
        same = after.get("workspace_sha256") == now.observation.workspace_sha256
    if after.get("fingerprint_kind") != now.observation.fingerprint_kind:
        same = False
    if same:
        return {"same": True, "paths": [], "count": 0, "complete": True, "reason": None}
    paths, complete = changed_paths(after, now, now.diff, excluded or now.excluded,
                                    now.observation.ignore)
    return {"same": False, "paths": paths[:MAX_NAMED_PATHS], "count": len(paths),
            "complete": complete, "reason": None}


def runs_differ(earlier: Mapping[str, Any], later: Mapping[str, Any],
                diff: Callable[[str, str], tuple[str, ...] | None] | None
                ) -> dict[str, Any] | None:
    """How the workspace a later run of a command ended on differs from an earlier one's.

    None when they ended on the same workspace (or either saw no git work
    tree: nothing to compare); else ``{paths, count, complete}``.
    """
    def parts(data: Mapping[str, Any]) -> tuple[Any, Any]:
        workspace = _dict(data.get("workspace"))
        return _dict(workspace.get("after")), _dict(workspace.get("work"))

    (a_after, a_work), (b_after, b_work) = parts(earlier), parts(later)
    if a_after.get("status") != "observed" or b_after.get("status") != "observed":
        return None
    if a_work.get("sha256") is not None and b_work.get("sha256") is not None \
            and a_work.get("excluded") == b_work.get("excluded"):
        if a_work["sha256"] == b_work["sha256"]:
            return None
    elif a_after.get("workspace_sha256") == b_after.get("workspace_sha256"):
        return None
    excluded = [p for p in a_work.get("excluded") or () if isinstance(p, str)]
    paths, complete = changed_paths(a_after, b_after, diff, excluded,
                                    [p for p in b_after.get("ignore") or () if isinstance(p, str)])
    return {"paths": paths[:MAX_NAMED_PATHS], "count": len(paths), "complete": complete}
