"""Evidence runs as ledger records, and discriminating checks in a temporary worktree.

:func:`run_evidence` observes the git boundary, runs one declared command,
observes the boundary again, optionally runs the same command on the tree at
another commit (:func:`discriminate`), and returns the record ``data``.
:func:`write_evidence` writes it as a new version of ``evidence:<NAME>``
with ``origin="machine"``: only this code path writes machine evidence; a
client ``put`` is always a claim. Each run is a new revision of the command's
record, so an acceptance reference ``{id, revision, data_sha256}`` pins one
run and a later run shows up as a newer revision.

Record data (``schema: assay.evidence.v1``; integers only, no floats)::

    command      {name, declaration (argv, description redacted), declaration_sha256}
    observation  the command observation (status, exit, times, tails, digests, redaction)
    workspace    {before, after: git summaries; comparison: changed paths + progress;
                  work: {sha256, excluded} the after digest without the contract files,
                  see :mod:`assay.evidence.freshness`}
    host         {python, implementation, platform, machine, assay}
    target       {intent, requirement} | null   (the first --for INTENT#REQ)
    targets      [{intent, requirement}]         (every --for, in order)
    discriminate {ref, commit, status, exit_code, discriminates, reason, observation,
                  tests?} | null   (tests: per mapped test, see results.compare_at_ref)
    posture      the evidence posture of this one run (reference shape, round 0)
    results      per-test outcomes from the declared results file (only when one is
                 declared; see :mod:`assay.evidence.results`)

Imports the base modules, config, the ledger contract and its siblings.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.canonical import digest
from assay.config import EvidenceCommand, Project
from assay.errors import AssayError
from assay.evidence.commands import CommandObservation, Redactor, Reporter, run_command
from assay.evidence.freshness import work_facts
from assay.evidence.git import Comparison, GitObservation, compare, observe
from assay.evidence.posture import CommandFact, PostureFacts, ProviderFact, derive_posture
from assay.evidence.results import Attribution, collect_results, compare_at_ref, file_identity

if TYPE_CHECKING:
    from assay.evidence.junit import TestOutcome

__all__ = [
    "SCHEMA",
    "EvidenceRun",
    "bound_tails",
    "declaration_data",
    "discriminate",
    "evidence_id",
    "host_facts",
    "resolve_ref",
    "run_evidence",
    "write_evidence",
]

SCHEMA = "assay.evidence.v1"
_STREAMS = (("observation", "stdout"), ("observation", "stderr"),
            ("discriminate", "observation", "stdout"), ("discriminate", "observation", "stderr"))


def evidence_id(name: str) -> str:
    """The record id of a command's evidence: ``evidence:<NAME>``."""
    return f"evidence:{name}"


def host_facts() -> dict[str, str]:
    """The facts about this machine that can change a command's outcome."""
    # importlib.metadata, not `assay.__version__`: the package root may import surfaces.
    from importlib.metadata import PackageNotFoundError, version

    try:
        assay_version = version("assay")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        assay_version = "unknown"
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "assay": assay_version,
    }


def declaration_data(decl: EvidenceCommand, redactor: Redactor | None = None) -> dict[str, Any]:
    """The declaration as stored: argv words and the description redacted like output is."""
    data = decl.to_dict()
    red = redactor or Redactor()
    data["argv"] = [red.redact_text(word)[0] for word in decl.argv]
    data["description"] = red.redact_text(decl.description)[0]
    return data


@dataclass(frozen=True, slots=True)
class EvidenceRun:
    """One evidence run: the record data plus the in-memory observations."""

    data: dict[str, Any]
    observation: CommandObservation
    before: GitObservation
    after: GitObservation
    comparison: Comparison

    @property
    def status(self) -> str:
        return self.observation.status


def _git_text(args: list[str], cwd: Path) -> str | None:
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(name, None)
    try:
        done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def resolve_ref(root: str | os.PathLike[str], ref: str) -> str:
    """The commit id ``ref`` names in the repository around ``root``.

    Raises ``discriminate_unavailable`` outside a git work tree and
    ``unknown_ref`` when the ref names no commit (pointer ``/discriminate``).
    """
    base = Path(root)
    if _git_text(["rev-parse", "--is-inside-work-tree"], base) != "true":
        raise AssayError("--discriminate needs a git work tree", code="discriminate_unavailable",
                         pointer="/discriminate",
                         action="Run it inside a git repository, or drop --discriminate.")
    if not ref or ref.startswith("-"):
        raise AssayError(f"{ref!r} is not a git ref", code="unknown_ref", pointer="/discriminate")
    commit = _git_text(["rev-parse", "--verify", "--quiet", "--end-of-options", ref + "^{commit}"],
                       base)
    if not commit:
        raise AssayError(f"{ref!r} names no commit in this repository", code="unknown_ref",
                         pointer="/discriminate",
                         action="Pass a commit, tag or branch that exists (see 'git log').")
    return commit


def discriminate(project_root: Path, decl: EvidenceCommand, ref: str, commit: str, *,
                 passed_now: bool, environ: Mapping[str, str] | None = None,
                 reporter: Reporter | None = None, timeout_s: float | None = None,
                 tests_now: list[TestOutcome] | None = None,
                 attribution: Attribution | None = None) -> dict[str, Any]:
    """Run ``decl`` on the tree at ``commit`` in a temporary worktree; always remove it.

    ``discriminates`` is true only when the check passes now and ``failed``
    at the ref (a timeout or error there proves nothing). The worktree holds
    only committed files: no untracked files, no initialised submodules.
    With a results file declared and ``tests_now`` (the mapped tests of the
    run now), ``tests`` says per mapped test whether it failed at the ref.
    """
    top_text = _git_text(["rev-parse", "--show-toplevel"], project_root)
    if top_text is None:
        raise AssayError("--discriminate needs a git work tree", code="discriminate_unavailable",
                         pointer="/discriminate")
    top = Path(top_text).resolve()
    relative = project_root.resolve().relative_to(top)
    holder = Path(tempfile.mkdtemp(prefix="assay-discriminate-"))
    tree = holder / "tree"
    observation: CommandObservation | None = None
    reason: str | None = None
    results_there: tuple[dict[str, Any], list[TestOutcome] | None] | None = None
    try:
        added = subprocess.run(
            ["git", "worktree", "add", "--detach", "--quiet", str(tree), commit],
            cwd=top, capture_output=True, text=True, timeout=600, check=False)
        if added.returncode != 0:
            reason = "could not create a worktree: " + (added.stderr.strip()[-300:] or "git failed")
        else:
            there = tree / relative
            identity = file_identity(there, decl) if decl.results is not None else None
            observation = run_command(decl, root=there, environ=environ,
                                      reporter=reporter, timeout_s=timeout_s)
            if decl.results is not None and tests_now is not None and there.is_dir():
                results_there = collect_results(there, decl, identity, environ=environ,
                                                attribution=attribution)
    finally:
        removed = subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=top,
                                 capture_output=True, timeout=600, check=False)
        if removed.returncode != 0:
            shutil.rmtree(tree, ignore_errors=True)
            subprocess.run(["git", "worktree", "prune"], cwd=top, capture_output=True,
                           timeout=600, check=False)
        shutil.rmtree(holder, ignore_errors=True)
    status = observation.status if observation else "error"
    discriminates = passed_now and status == "failed"
    if reason is None:
        if not passed_now:
            reason = "the check does not pass now, so it cannot discriminate"
        elif status == "passed":
            reason = "the check also passes at the ref: it does not detect the change"
        elif status == "failed":
            reason = "the check passes now and fails at the ref: it detects the change"
        else:
            reason = f"the check ended {status} at the ref, which proves nothing"
    out = {
        "ref": ref,
        "commit": commit,
        "status": status,
        "exit_code": observation.exit_code if observation else None,
        "discriminates": discriminates,
        "reason": reason,
        "observation": observation.to_dict() if observation else None,
    }
    if tests_now is not None:
        field, tests_there = results_there if results_there is not None else (None, None)
        out["tests"] = compare_at_ref(tests_now, tests_there, field)
    return out


def _workspace_status(comparison: Comparison) -> str:
    if comparison.progress in ("changed", "unchanged"):
        return "observed"
    return comparison.progress


def run_evidence(
    project: Project,
    decl: EvidenceCommand,
    *,
    targets: tuple[tuple[str, str], ...] = (),
    discriminate_ref: tuple[str, str] | None = None,
    environ: Mapping[str, str] | None = None,
    reporter: Reporter | None = None,
    timeout_s: float | None = None,
    cancel: threading.Event | None = None,
) -> EvidenceRun:
    """Observe the boundary, run ``decl``, observe again; build the record data.

    ``targets`` are the ``(intent, requirement)`` pairs of ``--for``; with
    ``[gate] default_intent`` they decide which intent the results file's
    unscoped marks belong to (:class:`~assay.evidence.results.Attribution`).
    ``discriminate_ref`` is ``(ref, commit)`` from :func:`resolve_ref`. The
    discriminating run happens only when the check passes now. Nothing is
    written here.
    """
    before = observe(project.root, ignore=project.evidence_ignore)
    identity = file_identity(project.root, decl) if decl.results is not None else None
    observation = run_command(decl, root=project.root, environ=environ, reporter=reporter,
                              timeout_s=timeout_s, cancel=cancel)
    results: dict[str, Any] | None = None
    tests: list[TestOutcome] | None = None
    attribution = Attribution(project.gate.default_intent, targets)
    if decl.results is not None:
        results, tests = collect_results(project.root, decl, identity, environ=environ,
                                         attribution=attribution)
    after = observe(project.root, ignore=project.evidence_ignore)
    comparison = compare(before, after)
    contrast: dict[str, Any] | None = None
    if discriminate_ref is not None:
        ref, commit = discriminate_ref
        if observation.passed:
            contrast = discriminate(project.root, decl, ref, commit, passed_now=True,
                                    environ=environ, reporter=reporter, timeout_s=timeout_s,
                                    tests_now=tests, attribution=attribution)
        else:
            contrast = {"ref": ref, "commit": commit, "status": None, "exit_code": None,
                        "discriminates": False,
                        "reason": "the check does not pass now, so it was not run at the ref",
                        "observation": None}
    declaration = declaration_data(decl, Redactor(os.environ if environ is None else environ))
    git_participates = before.status != "not_applicable" or after.status != "not_applicable"
    providers: tuple[ProviderFact, ...] = ()
    if git_participates:
        worst = after if after.status != "observed" else before
        providers = (ProviderFact("git", "git", "observed" if worst.observed else worst.status),)
    posture = derive_posture(PostureFacts(
        round=0,
        kind="evaluation",
        machine_backed_success=observation.passed and (contrast is None or contrast["discriminates"]),
        verification_configured=True,
        workspace_status=_workspace_status(comparison),
        changed_paths=comparison.changed_paths,
        providers=providers,
        commands=(CommandFact(decl.name, observation.status, required=True),),
    ))
    data = {
        "schema": SCHEMA,
        "command": {
            "name": decl.name,
            "declaration": declaration,
            "declaration_sha256": digest(declaration),
        },
        "observation": observation.to_dict(),
        "workspace": {
            "before": before.summary(),
            "after": after.summary(),
            "comparison": comparison.to_dict(),
            "work": work_facts(project.root, after),
        },
        "host": host_facts(),
        "target": {"intent": targets[0][0], "requirement": targets[0][1]} if targets else None,
        "targets": [{"intent": intent, "requirement": rid} for intent, rid in targets],
        "discriminate": contrast,
        "posture": posture,
    }
    if results is not None:
        data["results"] = results
    return EvidenceRun(data=data, observation=observation, before=before, after=after,
                       comparison=comparison)


def write_evidence(store: Any, project: Project, run: EvidenceRun, *,
                   request_id: str | None = None) -> Any:
    """Write the run as the next version of ``evidence:<NAME>`` (origin machine); return the receipt."""
    from assay.ledger.store import Link, Write

    intents = dict.fromkeys(t["intent"] for t in run.data.get("targets") or ())
    links = tuple(Link("supports", intent) for intent in intents)
    return store.put(Write(
        id=evidence_id(run.data["command"]["name"]),
        data=run.data,
        scope=project.scope,
        links=links,
        origin="machine",
        request_id=request_id,
    ))


def bound_tails(data: Any, tail_bytes: int) -> tuple[Any, list[dict[str, Any]]]:
    """A copy of evidence record ``data`` whose output tails show at most ``tail_bytes`` bytes.

    Each stored tail (the command's and the discriminating run's stdout and
    stderr) longer than ``tail_bytes`` UTF-8 bytes keeps its last bytes,
    starting on a character (:func:`assay.paging.utf8_tail`); everything
    else is unchanged, including each stream's ``bytes`` and ``sha256`` over
    the whole stream. Returns the copy and one entry per shortened tail:
    ``{pointer, stored_bytes, shown_bytes}`` (pointer into the data).
    Anything that is not a well-formed evidence record is returned as is.
    """
    import copy

    from assay.errors import pointer
    from assay.paging import utf8_tail

    out = copy.deepcopy(data)
    cuts: list[dict[str, Any]] = []
    for path in _STREAMS:
        stream: Any = out
        for key in path:
            stream = stream.get(key) if isinstance(stream, dict) else None
        if not isinstance(stream, dict) or not isinstance(stream.get("tail"), str):
            continue
        shown, dropped = utf8_tail(stream["tail"], tail_bytes)
        if dropped:
            cuts.append({"pointer": pointer(*path, "tail"),
                         "stored_bytes": len(stream["tail"].encode("utf-8", "surrogatepass")),
                         "shown_bytes": len(shown.encode("utf-8", "surrogatepass"))})
            stream["tail"] = shown
    return out, cuts
