"""Workspace checkpoints: a content-addressed manifest of the git boundary, and its verified restore.

A checkpoint answers "what exactly was the workspace at this moment?" in a
form that can be put back. :func:`capture` observes the workspace through
:func:`assay.evidence.git.observe` (the same boundary the verification gate
compares) and reads the bytes of every dirty regular file and symlink. The
manifest holds HEAD, the branch, the dirty paths, the fingerprint of every
tracked and non-ignored untracked file, and for each captured path its mode,
size, SHA-256 and the digests of its content chunks. A clean file needs no
copy: its fingerprint names a blob already in git's object database.

Content lives in the ledger, beside the manifest: each chunk of at most
:data:`CHUNK_BYTES` is one ``blob:<sha256>`` record (base64 text, addressed
by the SHA-256 of its bytes, so identical content is stored once and a blob
can never disagree with its address). The manifest is the record
``loop-checkpoint:<loopId>:<ck-id>``; a blob that no manifest references
holds no authority (blobs are written before the manifest that names them,
so a crash between the two leaves an unreferenced blob, never a manifest
with a missing one).

:func:`restore` puts a manifest back: HEAD (``git reset`` to the manifest's
commit, index to its tree, when HEAD moved), then deletes every observed
path the manifest does not have, then writes every path whose fingerprint
differs (captured bytes from the ledger, clean files from git's objects),
then observes again. The restore is *verified* only when the new
observation's HEAD and fingerprints equal the manifest's exactly. Ignored
untracked files are outside the boundary and never touched; a directory
that still holds such files where the manifest has a file is a failure, not
a deletion.

Limits (``checkpoint_limit``): :data:`MAX_FILES` fingerprinted files,
:data:`MAX_CONTENT_FILES` captured files and :data:`MAX_CONTENT_BYTES`
captured bytes. Submodules and nested repositories are compared by their
fingerprint only; their content is never captured or restored.

A round holds checkpoints by :func:`ref` (a CheckpointRef); :func:`store_capture`
stores a capture's blobs and returns its manifest write, and
:func:`auto_checkpoint` takes a round's automatic ``before`` checkpoint (a
workspace that cannot be checkpointed gives a warning, never an error).

Imports the base modules, config, the ledger contract, evidence and
:mod:`assay.loop.identity`.
"""

from __future__ import annotations

import base64
import hashlib
import os
import stat
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.canonical import digest
from assay.config import Project
from assay.errors import AssayError
from assay.evidence.git import COVERAGE, GitObservation
from assay.evidence.git import observe as observe_git
from assay.ids import content_id
from assay.ledger.store import Store, Write
from assay.loop import identity

__all__ = [
    "CHECKPOINT_SCHEMA_VERSION",
    "CHUNK_BYTES",
    "MAX_CONTENT_BYTES",
    "MAX_CONTENT_FILES",
    "MAX_FILES",
    "Capture",
    "RestoreOutcome",
    "auto_checkpoint",
    "blob_id",
    "capture",
    "checkpoint_record_id",
    "load_blobs",
    "manifest_problems",
    "manifest_write",
    "ref",
    "restore",
    "store_blobs",
    "store_capture",
]

CHECKPOINT_SCHEMA_VERSION = 1
CHUNK_BYTES = 1024 * 1024
MAX_FILES = 20_000
MAX_CONTENT_FILES = 5_000
MAX_CONTENT_BYTES = 256 * 1024 * 1024
# Blob writes per ledger batch (the ledger takes at most 1,000 writes a batch).
_BATCH = 500
_RESTORABLE = ("100644", "100755", "120000")
_GIT_TIMEOUT_S = 300


def blob_id(sha256: str) -> str:
    return f"blob:{sha256}"


def checkpoint_record_id(loop_id: str, checkpoint_id: str) -> str:
    return f"loop-checkpoint:{loop_id}:{checkpoint_id}"


def _error(code: str, message: str, action: str, **details: Any) -> AssayError:
    return AssayError(message, code=code, action=action, details=details or None)


@dataclass(frozen=True, slots=True)
class Capture:
    """A captured boundary: the manifest content (without ownership) and the chunk bytes."""

    content: dict[str, Any]
    chunks: dict[str, bytes]
    observation: GitObservation

    @property
    def content_hash(self) -> str:
        return str(self.content["contentHash"])

    def manifest(self, *, loop_id: str, round_number: int, role: str, branch_id: str,
                 created_at: str, transaction_id: str | None) -> dict[str, Any]:
        """The manifest record data: the content plus who owns it (the id covers both)."""
        checkpoint_id = content_id("ck", {"loop": loop_id, "round": round_number, "role": role,
                                          "branch": branch_id, "content": self.content_hash,
                                          "transaction": transaction_id})
        return {"type": "checkpoint", "schemaVersion": CHECKPOINT_SCHEMA_VERSION,
                "checkpointId": checkpoint_id, "loopId": loop_id, "round": round_number,
                "role": role, "branchId": branch_id, "transactionId": transaction_id,
                "createdAt": created_at, **self.content}


def ref(manifest: Mapping[str, Any], *, redo_round: int | None = None) -> dict[str, Any]:
    """The CheckpointRef of a manifest (what a round holds and commits)."""
    return {"checkpointId": manifest["checkpointId"], "contentHash": manifest["contentHash"],
            "role": manifest["role"], "round": manifest["round"],
            "roundId": identity.round_id(manifest["loopId"], manifest["round"]),
            "transactionId": manifest.get("transactionId"), "branchId": manifest["branchId"],
            "redoRound": redo_round if redo_round is not None else manifest["round"],
            "createdAt": manifest["createdAt"]}


def manifest_write(project: Project, manifest: Mapping[str, Any]) -> Write:
    """The ledger write of a checkpoint manifest (``origin="machine"``)."""
    return Write(id=checkpoint_record_id(manifest["loopId"], manifest["checkpointId"]),
                 data=dict(manifest), scope=project.scope, origin="machine")


def store_capture(store: Store, project: Project, cap: Capture, *, loop_id: str,
                  round_number: int, role: str, branch_id: str, transaction_id: str | None,
                  created_at: str) -> tuple[dict[str, Any], Write]:
    """Store the capture's blobs now; return its manifest and the manifest's (pending) write."""
    store_blobs(store, project.scope, cap.chunks)
    manifest = cap.manifest(loop_id=loop_id, round_number=round_number, role=role,
                            branch_id=branch_id, created_at=created_at,
                            transaction_id=transaction_id)
    return manifest, manifest_write(project, manifest)


def auto_checkpoint(store: Store, project: Project, *, loop_id: str, round_number: int,
                    branch_id: str, observation: GitObservation | None, created_at: str
                    ) -> tuple[list[dict[str, Any]], list[Write], dict[str, Any] | None]:
    """The automatic ``before`` checkpoint of a round: (refs, writes, warning).

    A workspace that cannot be checkpointed (not git, over a limit, changing)
    never stops the loop: the round then holds no checkpoint and the warning
    says why.
    """
    try:
        cap = capture(project.root, observation)
        manifest, write = store_capture(store, project, cap, loop_id=loop_id,
                                        round_number=round_number, role="before",
                                        branch_id=branch_id, transaction_id=None,
                                        created_at=created_at)
    except AssayError as exc:
        return [], [], {"code": exc.code, "message": exc.message}
    return [ref(manifest)], [write], None


def _git_blob_oid(data: bytes, object_format: str | None) -> str:
    algo = hashlib.sha256 if object_format == "sha256" else hashlib.sha1
    return algo(b"blob %d\0" % len(data) + data).hexdigest()


def _read(top: Path, path: str, mode: str) -> bytes:
    full = top / path
    if mode == "120000":
        return os.fsencode(os.readlink(full))
    fd = os.open(full, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def capture(root: str | os.PathLike[str], observation: GitObservation | None = None) -> Capture:
    """Observe the workspace (or take ``observation``) and read every dirty file's bytes.

    Raises ``checkpoint_unavailable`` outside an observed git work tree,
    ``checkpoint_limit`` beyond the documented limits and
    ``checkpoint_failed`` when the workspace changed while it was read.
    Writes nothing.
    """
    obs = observation if observation is not None else observe_git(root)
    if obs.status != "observed" or obs.toplevel is None:
        raise _error("checkpoint_unavailable", f"the workspace cannot be checkpointed: git "
                     f"observation {obs.status} ({obs.reason})",
                     "Checkpoints need a git work tree and a working git.", status=obs.status)
    if obs.fingerprint_kind != "git-blob":
        raise _error("checkpoint_unavailable", "checkpoints use git blob fingerprints",
                     "Observe without content_sha256.")
    if len(obs.files) > MAX_FILES:
        raise _error("checkpoint_limit", f"the workspace has {len(obs.files)} files; a "
                     f"checkpoint holds at most {MAX_FILES}", "Checkpoint a smaller work tree.",
                     limit=MAX_FILES, files=len(obs.files))
    top = Path(obs.toplevel)
    wanted = [(d.path, obs.files[d.path].split(" ", 1)[0]) for d in obs.dirty
              if d.path in obs.files and obs.files[d.path].split(" ", 1)[0] in _RESTORABLE]
    if len(wanted) > MAX_CONTENT_FILES:
        raise _error("checkpoint_limit", f"{len(wanted)} dirty files; a checkpoint captures at "
                     f"most {MAX_CONTENT_FILES}", "Commit or discard some changes first.",
                     limit=MAX_CONTENT_FILES, files=len(wanted))
    data: dict[str, bytes] = {}
    total = 0
    mismatched: list[str] = []
    for path, mode in wanted:
        try:
            raw = _read(top, path, mode)
        except OSError as exc:
            raise _error("checkpoint_failed", f"cannot read {path}: {exc.strerror}",
                         "Make the file readable (or let the workspace settle) and retry.",
                         path=path) from None
        total += len(raw)
        if total > MAX_CONTENT_BYTES:
            raise _error("checkpoint_limit", f"dirty files exceed {MAX_CONTENT_BYTES} bytes",
                         "Commit or discard some changes first.", limit_bytes=MAX_CONTENT_BYTES)
        data[path] = raw
        oid = obs.files[path].rsplit(":", 1)[1]
        if _git_blob_oid(raw, obs.object_format) != oid:
            mismatched.append(path)
    if mismatched:
        # A clean/smudge filter, or a file that changed after the observation:
        # the bytes are trusted only if a second observation agrees.
        again = observe_git(root)
        if again.head != obs.head or dict(again.files) != dict(obs.files):
            raise _error("checkpoint_failed", "the workspace changed while it was captured",
                         "Let the work settle, then checkpoint again.", paths=mismatched[:20])
    chunks: dict[str, bytes] = {}
    contents: dict[str, Any] = {}
    for path, mode in wanted:
        raw = data[path]
        parts = []
        for start in range(0, max(len(raw), 1), CHUNK_BYTES):
            piece = raw[start:start + CHUNK_BYTES]
            key = hashlib.sha256(piece).hexdigest()
            chunks[key] = piece
            parts.append(key)
        contents[path] = {"mode": mode, "size": len(raw),
                          "sha256": hashlib.sha256(raw).hexdigest(), "chunks": parts}
    content: dict[str, Any] = {
        "head": obs.head,
        "branch": obs.branch,
        "objectFormat": obs.object_format,
        "dirty": [d.path for d in obs.dirty],
        "fingerprints": dict(obs.files),
        "contents": sorted(contents),
        "blobs": dict(sorted(contents.items())),
        "coverage": COVERAGE,
        "workspaceSha256": obs.workspace_sha256,
    }
    content["contentHash"] = digest(content)
    return Capture(content, chunks, obs)


_CONTENT_KEYS = ("head", "branch", "objectFormat", "dirty", "fingerprints", "contents", "blobs",
                 "coverage", "workspaceSha256")


def manifest_problems(manifest: Any) -> list[str]:
    """Why a stored manifest cannot be trusted (empty when it can).

    The content must still hash to its ``contentHash``, every path must stay
    inside the work tree (no absolute path, no ``..``, nothing in ``.git``),
    and every captured path must have a fingerprint. Pure; cost linear in
    the manifest.
    """
    if not isinstance(manifest, dict) or not all(k in manifest for k in _CONTENT_KEYS):
        return ["it is not a checkpoint manifest"]
    problems = []
    if digest({k: manifest[k] for k in _CONTENT_KEYS}) != manifest.get("contentHash"):
        problems.append("its content does not match its contentHash")
    paths = [*manifest["fingerprints"], *manifest["blobs"]]
    bad = [p for p in paths if not isinstance(p, str) or not p or Path(p).is_absolute()
           or ".." in Path(p).parts or ".git" in Path(p).parts]
    if bad:
        problems.append(f"it names paths outside the work tree: {', '.join(map(str, bad[:5]))}")
    if set(manifest["blobs"]) - set(manifest["fingerprints"]):
        problems.append("it captures paths it does not fingerprint")
    return problems


def store_blobs(store: Store, scope: str, chunks: Mapping[str, bytes]) -> int:
    """Write the chunks the ledger does not hold yet (``blob:<sha256>``); return how many.

    Content-addressed and idempotent: a blob already present is skipped, a
    concurrent writer of the same blob is harmless.
    """
    from assay.errors import RevisionConflict

    keys = sorted(chunks)
    written = 0
    for start in range(0, len(keys), _BATCH):
        batch = keys[start:start + _BATCH]
        for attempt in range(4):
            with store.reader() as reader:
                present = reader.get_many([blob_id(k) for k in batch])
            missing = [k for k in batch if blob_id(k) not in present]
            if not missing:
                break
            if attempt == 3:
                raise _error("checkpoint_failed", "the checkpoint's content could not be stored "
                             "(concurrent writers kept conflicting)", "Retry the checkpoint.")
            try:
                store.put_many([Write(
                    id=blob_id(k), scope=scope, origin="machine", expect_revision=0,
                    data={"type": "blob", "sha256": k, "size": len(chunks[k]),
                          "encoding": "base64",
                          "data": base64.b64encode(chunks[k]).decode("ascii")})
                    for k in missing])
                written += len(missing)
                break
            except RevisionConflict:
                continue
    return written


def load_blobs(store: Store, manifest: Mapping[str, Any]) -> dict[str, bytes]:
    """The captured bytes of every path of ``manifest``, checked against their digests.

    ``checkpoint_unavailable`` when a blob is missing or does not match its
    address (the manifest then cannot be restored; nothing was touched).
    """
    wanted = sorted({c for entry in manifest["blobs"].values() for c in entry["chunks"]})
    pieces: dict[str, bytes] = {}
    for start in range(0, len(wanted), _BATCH):
        batch = wanted[start:start + _BATCH]
        with store.reader() as reader:
            found = reader.get_many([blob_id(k) for k in batch])
        for key in batch:
            record = found.get(blob_id(key))
            raw = None
            if record is not None and isinstance(record.data, dict):
                try:
                    raw = base64.b64decode(record.data.get("data", ""), validate=True)
                except ValueError:
                    raw = None
            if raw is None or hashlib.sha256(raw).hexdigest() != key:
                raise _error("checkpoint_unavailable", f"checkpoint content {key[:12]} is "
                             "missing or damaged in the ledger",
                             "Choose another checkpoint.", blob=blob_id(key))
            pieces[key] = raw
    out: dict[str, bytes] = {}
    for path, entry in manifest["blobs"].items():
        raw = b"".join(pieces[c] for c in entry["chunks"])
        if hashlib.sha256(raw).hexdigest() != entry["sha256"]:
            raise _error("checkpoint_unavailable", f"the captured content of {path} does not "
                         "match its digest", "Choose another checkpoint.", path=path)
        out[path] = raw
    return out


# ------------------------------------------------------------------ restore

@dataclass(frozen=True, slots=True)
class RestoreOutcome:
    """What a restore did and whether the re-observed boundary equals the manifest."""

    verified: bool
    observation: GitObservation | None
    differing: tuple[str, ...] = ()
    error: str | None = None
    error_path: str | None = None
    deleted: tuple[str, ...] = ()
    written: tuple[str, ...] = ()
    head_moved: bool = False
    touched: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"verified": self.verified, "error": self.error, "errorPath": self.error_path,
                "differing": list(self.differing[:200]), "differingCount": len(self.differing),
                "deleted": len(self.deleted), "written": len(self.written),
                "headMoved": self.head_moved}


def _git(top: Path, args: Sequence[str], *, stdin: bytes | None = None) -> bytes:
    env = {k: v for k, v in os.environ.items()
           if k not in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE")}
    done = subprocess.run(["git", *args], cwd=top, input=stdin, capture_output=True, env=env,
                          timeout=_GIT_TIMEOUT_S, check=False)
    if done.returncode != 0:
        text = done.stderr.decode("utf-8", "replace").strip()
        raise OSError(f"git {args[0]}: {text.splitlines()[-1] if text else done.returncode}")
    return done.stdout


def git_objects(top: Path, oids: Iterable[str]) -> dict[str, bytes]:
    """The contents of git blobs by object id (one ``git cat-file --batch``)."""
    wanted = sorted(set(oids))
    if not wanted:
        return {}
    out = _git(top, ["cat-file", "--batch"], stdin="".join(o + "\n" for o in wanted).encode())
    objects: dict[str, bytes] = {}
    pos = 0
    for oid in wanted:
        end = out.index(b"\n", pos)
        header = out[pos:end].decode()
        pos = end + 1
        if header.endswith("missing"):
            continue
        size = int(header.rsplit(" ", 1)[1])
        objects[oid] = out[pos:pos + size]
        pos += size + 1
    return objects


def has_commit(top: Path, head: str) -> bool:
    try:
        _git(top, ["cat-file", "-e", f"{head}^{{commit}}"])
    except OSError:
        return False
    return True


@dataclass
class _Plan:
    deletes: list[str] = field(default_factory=list)
    writes: list[tuple[str, str, bytes]] = field(default_factory=list)
    unrestorable: list[str] = field(default_factory=list)


def plan(manifest: Mapping[str, Any], current: GitObservation, captured: Mapping[str, bytes],
         objects: Callable[[Iterable[str]], dict[str, bytes]]) -> _Plan:
    """What to delete and write to turn ``current`` into ``manifest`` (no I/O but ``objects``)."""
    target: Mapping[str, str] = manifest["fingerprints"]
    out = _Plan()
    out.deletes = sorted(p for p in current.files if p not in target)
    need: list[tuple[str, str]] = []
    for path, value in sorted(target.items()):
        if current.files.get(path) == value:
            continue
        mode, kind_oid = value.split(" ", 1)
        if path in captured:
            out.writes.append((path, mode, captured[path]))
        elif mode in _RESTORABLE and kind_oid.startswith("blob:"):
            need.append((path, kind_oid[5:]))
        else:
            out.unrestorable.append(path)
    found = objects(oid for _, oid in need)
    for path, oid in need:
        if oid in found:
            mode = target[path].split(" ", 1)[0]
            out.writes.append((path, mode, found[oid]))
        else:
            out.unrestorable.append(path)
    out.writes.sort()
    return out


def _prune(top: Path, path: str) -> None:
    parent = (top / path).parent
    while parent != top and top in parent.parents:
        try:
            parent.rmdir()
        except OSError:
            return
        parent = parent.parent


def _inside(top: Path, path: str) -> Path:
    """``top / path``, refusing a path that leaves the work tree or crosses a symlink."""
    parts = Path(path).parts
    if not parts or Path(path).is_absolute() or ".." in parts or ".git" in parts:
        raise OSError(f"refusing the path {path!r}")
    here = top
    for part in parts[:-1]:
        here = here / part
        if here.is_symlink():
            # Writing through it would land outside the boundary (or the repository).
            raise OSError(f"{here.relative_to(top).as_posix()} is a symlink; a restore never "
                          "writes through one")
    return top / path


def _write(top: Path, path: str, mode: str, raw: bytes) -> None:
    """Replace one path with the given content.

    An existing regular file is overwritten in place and cut to the new
    length; anything else is removed and created anew. Neither a rename
    over the file nor a truncate to zero is used: on ext4 both force a
    flush of the file's data, which made a restore ten times slower than a
    copy. A crash midway is covered one level up: the restore is then not
    verified and the recovery stays pending until it is retried.
    """
    full = _inside(top, path)
    parent = full.parent
    if parent != top:
        parent.mkdir(parents=True, exist_ok=True)
    perm = 0o755 if mode == "100755" else 0o644
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    try:
        info = os.lstat(full)
    except FileNotFoundError:
        info = None
    if info is not None and stat.S_ISREG(info.st_mode) and mode != "120000":
        fd = os.open(full, os.O_WRONLY | nofollow)
        try:
            view = memoryview(raw)
            while view:
                view = view[os.write(fd, view):]
            os.ftruncate(fd, len(raw))
            os.fchmod(fd, perm)
        finally:
            os.close(fd)
        return
    if info is not None:
        if stat.S_ISDIR(info.st_mode):
            # Only an empty directory may give way: anything left in it is
            # outside the boundary (ignored files) and is never deleted.
            full.rmdir()
        else:
            full.unlink()
    if mode == "120000":
        os.symlink(os.fsdecode(raw), full)
        return
    fd = os.open(full, os.O_WRONLY | os.O_CREAT | os.O_EXCL | nofollow, perm)
    with os.fdopen(fd, "wb") as handle:
        handle.write(raw)
    os.chmod(full, perm)


def restore(root: str | os.PathLike[str], manifest: Mapping[str, Any],
            captured: Mapping[str, bytes]) -> RestoreOutcome:
    """Put the workspace back to ``manifest`` and verify it by observing again.

    ``captured`` is :func:`load_blobs` of the manifest. Never raises for an
    outcome: a failed step stops the restore and the outcome says where
    (``touched`` says whether anything was changed before it).
    """
    current = observe_git(root)
    if current.status != "observed" or current.toplevel is None:
        return RestoreOutcome(False, current, error=f"git observation {current.status}: "
                              f"{current.reason}")
    top = Path(current.toplevel)
    head = manifest.get("head")
    if head is not None and not has_commit(top, head):
        return RestoreOutcome(False, current, error=f"the checkpoint's commit {head} is not in "
                              "this repository")
    try:
        steps = plan(manifest, current, captured, lambda oids: git_objects(top, oids))
    except OSError as exc:
        return RestoreOutcome(False, current, error=str(exc))
    if steps.unrestorable:
        return RestoreOutcome(False, current, differing=tuple(steps.unrestorable),
                              error="paths whose content the checkpoint cannot provide "
                                    "(submodules, nested repositories, missing objects)",
                              error_path=steps.unrestorable[0])
    deleted: list[str] = []
    written: list[str] = []
    head_moved = False
    touched = False
    try:
        if head is not None and (current.head != head or current.branch != manifest.get("branch")):
            if manifest.get("branch") and current.branch != manifest["branch"]:
                _git(top, ["symbolic-ref", "HEAD", f"refs/heads/{manifest['branch']}"])
            touched = True
            _git(top, ["reset", "-q", head])
            head_moved = True
        for path in steps.deletes:
            full = _inside(top, path)
            if full.is_dir() and not full.is_symlink():
                continue  # a nested repository: never deleted; verification reports it
            touched = True
            try:
                full.unlink()
            except FileNotFoundError:
                pass
            deleted.append(path)
            _prune(top, path)
        for path, mode, raw in steps.writes:
            touched = True
            _write(top, path, mode, raw)
            written.append(path)
    except OSError as exc:
        failed = getattr(exc, "filename", None)
        where = None
        if failed is not None:
            try:
                where = Path(os.fsdecode(failed)).relative_to(top).as_posix()
            except ValueError:
                where = os.fsdecode(failed)
        after = observe_git(root)
        return RestoreOutcome(False, after, differing=tuple(_differing(manifest, after)),
                              error=f"{exc.strerror or exc}", error_path=where,
                              deleted=tuple(deleted), written=tuple(written),
                              head_moved=head_moved, touched=touched)
    after = observe_git(root)
    differing = _differing(manifest, after)
    verified = (after.status == "observed" and after.head == head and not differing)
    return RestoreOutcome(verified, after, differing=tuple(differing),
                          error=None if verified else "the restored workspace differs from the "
                          "checkpoint", deleted=tuple(deleted), written=tuple(written),
                          head_moved=head_moved, touched=touched)


def _differing(manifest: Mapping[str, Any], obs: GitObservation) -> list[str]:
    target: Mapping[str, str] = manifest["fingerprints"]
    if obs.status != "observed":
        return sorted(target)
    paths = {p for p, v in target.items() if obs.files.get(p) != v}
    paths |= {p for p in obs.files if p not in target}
    return sorted(paths)
