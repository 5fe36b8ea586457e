"""Packet layout and the one safe way to touch a packet's files.

Owns the directory layout, the packet-relative path syntax, and
:class:`PacketRoot`, which checks containment and symlinks (``os.lstat`` on
every component under the root, ancestors and the final component alike)
before any read, hash, write or removal, and reads only bounded regular
files (:func:`assay.inputs.read_regular`). Imports only the base modules.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from assay.canonical import canonical_text, digest_bytes
from assay.errors import AssayError, UnavailableError
from assay.inputs import MAX_FILE_BYTES, InputRefused, read_regular

__all__ = [
    "CANONICAL_FILES",
    "FAILURE_FILE",
    "LEDGER_FILE",
    "MANAGED_DIRS",
    "MANIFEST_FILE",
    "MAX_PACKET_FILE_BYTES",
    "RENDER_FILE",
    "REVIEW_DIRS",
    "PacketRoot",
    "PathProblem",
    "check_relative_path",
    "file_digest",
    "is_under",
    "json_file_bytes",
]

MANIFEST_FILE = "manifest.json"
LEDGER_FILE = "claims.json"
RENDER_FILE = "packet.md"
FAILURE_FILE = "raw/failure.json"
CANONICAL_FILES = (MANIFEST_FILE, LEDGER_FILE)
REVIEW_DIRS = (
    "reviews/briefs",
    "reviews/semantic",
    "reviews/adversarial",
    "reviews/coverage",
    "reviews/reconciliation",
    "reviews/redundant-verification",
    "reviews/contradiction-resolution",
)
# Every directory the layout creates; a symlink at any of them is a root alias.
MANAGED_DIRS = ("reviews", *REVIEW_DIRS, "raw", "raw/dossiers", "raw/drafts", "raw/quarantine")
# Directories whose every file must be listed in the manifest (no shadow artifacts).
LISTED_DIRS = (*REVIEW_DIRS, "raw/dossiers")
# Every packet file (JSON artifact or source capture) is refused from its
# fstat size above this bound, before a byte of it is read.
MAX_PACKET_FILE_BYTES = MAX_FILE_BYTES
# How a refused read is reported, by InputRefused.reason.
_REFUSALS = {"missing": "MISSING_FILE", "symlink": "SYMLINK_PATH",
             "not_regular": "NOT_REGULAR_FILE", "too_large": "FILE_TOO_LARGE",
             "unreadable": "MISSING_FILE"}


def file_digest(data: bytes) -> str:
    """The artifact digest of exact bytes: ``sha256:<64 lowercase hex>``."""
    return "sha256:" + digest_bytes(data)


def json_file_bytes(value: object) -> bytes:
    """The bytes assay writes for a JSON artifact: canonical text plus a newline."""
    return (canonical_text(value) + "\n").encode("utf-8")


@dataclass(frozen=True, slots=True)
class PathProblem:
    """Why a path was refused: an issue code and a sentence."""

    code: str
    message: str


def check_relative_path(path: object) -> PathProblem | None:
    """Check packet-relative path syntax; None when it is acceptable.

    A packet path is a non-empty POSIX relative path of UTF-8 text without
    ``.``, ``..`` or empty components, backslashes, NUL or control characters. ``..`` and
    absolute paths are ``PATH_ESCAPE``; anything else malformed is
    ``INVALID_PATH``.
    """
    if not isinstance(path, str) or not path:
        return PathProblem("INVALID_PATH", "a packet path must be a non-empty string")
    if path.startswith("/") or (len(path) > 1 and path[1] == ":"):
        return PathProblem("PATH_ESCAPE", f"{path!r} is absolute; packet paths are relative")
    parts = path.split("/")
    if ".." in parts:
        return PathProblem("PATH_ESCAPE", f"{path!r} leaves the packet through '..'")
    if "\\" in path or any(ord(ch) < 32 or ord(ch) == 127 for ch in path):
        return PathProblem("INVALID_PATH", f"{path!r} holds a backslash or control character")
    if not path.isascii():
        try:
            path.encode("utf-8")
        except UnicodeEncodeError:
            return PathProblem("INVALID_PATH", f"{path!r} is not UTF-8 text (a lone surrogate)")
    if any(part in ("", ".") for part in parts):
        return PathProblem("INVALID_PATH", f"{path!r} has an empty or '.' component")
    return None


def is_under(path: str, root: str) -> bool:
    """Whether packet path ``path`` equals ``root`` or sits below it."""
    return path == root or path.startswith(root.rstrip("/") + "/")


class PacketRoot:
    """A packet directory, accessed only through symlink- and containment-checked paths.

    Component checks are cached per instance, so validating many files in few
    directories makes one ``lstat`` per distinct directory. Create a fresh
    instance for each operation; the cache is not a snapshot guarantee.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.root = Path(os.path.abspath(directory))
        self._checked: dict[str, PathProblem | None] = {}

    def open_check(self) -> None:
        """Raise an operational error unless the root is a real, readable directory."""
        try:
            info = os.lstat(self.root)
        except FileNotFoundError:
            raise AssayError(f"no packet directory at {self.root}", code="packet_not_found",
                             action="Create one with 'assay packet init DIR'.") from None
        except OSError as exc:
            raise UnavailableError(f"cannot read {self.root}: {exc.strerror}",
                                   code="packet_unreadable") from None
        if stat.S_ISLNK(info.st_mode):
            raise AssayError(f"{self.root} is a symlink; a packet root must be a real directory",
                             code="packet_root_symlink",
                             action="Pass the real directory, not a link to it.")
        if not stat.S_ISDIR(info.st_mode):
            raise AssayError(f"{self.root} is not a directory", code="packet_not_found")

    def check(self, path: str) -> PathProblem | None:
        """Check syntax, then ``lstat`` every existing component; refuse symlinks.

        A symlink at a layout directory is ``SYMLINK_ROOT_ALIAS``; anywhere
        else ``SYMLINK_PATH``. Missing components are not a problem here
        (reading reports ``MISSING_FILE``).
        """
        problem = check_relative_path(path)
        if problem is not None:
            return problem
        parts = path.split("/")
        for end in range(1, len(parts) + 1):
            prefix = "/".join(parts[:end])
            if prefix in self._checked:
                cached = self._checked[prefix]
                if cached is not None:
                    return cached
                continue
            try:
                info = os.lstat(self.root / prefix)
            except FileNotFoundError:
                return None
            except NotADirectoryError:
                return PathProblem("INVALID_PATH", f"{prefix!r} is not a directory")
            except OSError as exc:
                # A name longer than the filesystem allows, or a directory
                # that cannot be searched: the path cannot name a readable file.
                code = "INVALID_PATH" if exc.errno == errno.ENAMETOOLONG else "MISSING_FILE"
                return PathProblem(code, f"{prefix[:80]!r} cannot be looked up: {exc.strerror}")
            found = None
            if stat.S_ISLNK(info.st_mode):
                if prefix in MANAGED_DIRS:
                    found = PathProblem("SYMLINK_ROOT_ALIAS",
                                        f"layout directory {prefix!r} is a symlink")
                else:
                    found = PathProblem("SYMLINK_PATH", f"{prefix!r} is a symlink")
            elif end < len(parts) and not stat.S_ISDIR(info.st_mode):
                found = PathProblem("INVALID_PATH", f"{prefix!r} is not a directory")
            self._checked[prefix] = found
            if found is not None:
                return found
        return None

    def read(self, path: str) -> bytes | PathProblem:
        """The exact bytes of a checked regular file, or the problem that stopped the read.

        Opened without blocking and without following a final symlink, and
        refused from its ``fstat`` before any read when it is not a regular
        file (``NOT_REGULAR_FILE``: a FIFO never hangs validation) or larger
        than :data:`MAX_PACKET_FILE_BYTES` (``FILE_TOO_LARGE``).
        """
        problem = self.check(path)
        if problem is not None:
            return problem
        try:
            return read_regular(self.root / path, limit=MAX_PACKET_FILE_BYTES, label=repr(path))
        except InputRefused as refused:
            return PathProblem(_REFUSALS[refused.reason], refused.message)

    def exists(self, path: str) -> bool:
        """Whether a checked path exists (symlinks count as existing)."""
        return os.path.lexists(self.root / path)

    def _require(self, path: str) -> None:
        problem = self.check(path)
        if problem is not None:
            raise AssayError(f"refusing to touch {path!r}: {problem.message}",
                             code="unsafe_packet_path", details={"issue": problem.code},
                             action="Remove the symlink or fix the path; assay never follows links.")

    def write(self, path: str, data: bytes, *, exclusive: bool = False) -> None:
        """Write ``data`` atomically (temporary sibling, fsync, rename) after checks.

        With ``exclusive`` an existing file is ``artifact_exists``.
        """
        self._require(path)
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if exclusive and os.path.lexists(target):
            raise AssayError(f"{path!r} already exists and is immutable", code="artifact_exists",
                             action="Choose another name; published artifacts are never rewritten.")
        tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)

    def remove(self, path: str) -> bool:
        """Remove one file after checking its ancestors; return whether it existed.

        A final-component symlink is removed itself (``unlink`` never follows
        it), so withdrawing a ``packet.md`` planted as a link is safe.
        """
        problem = check_relative_path(path)
        if problem is None and "/" in path:
            problem = self.check(path.rsplit("/", 1)[0])
        if problem is not None:
            raise AssayError(f"refusing to touch {path!r}: {problem.message}",
                             code="unsafe_packet_path", details={"issue": problem.code})
        try:
            os.unlink(self.root / path)
        except FileNotFoundError:
            return False
        return True

    def move(self, source: str, target: str) -> None:
        """Rename one checked file to another checked path (never overwrites)."""
        self._require(source)
        self._require(target)
        (self.root / target).parent.mkdir(parents=True, exist_ok=True)
        if os.path.lexists(self.root / target):
            raise AssayError(f"{target!r} already exists", code="artifact_exists")
        os.rename(self.root / source, self.root / target)

    def listing(self, directory: str) -> list[str]:
        """Packet paths of every regular file at or below ``directory`` (sorted).

        Never descends into a symlinked directory; a symlink entry is listed
        like a file so that the caller reports it.
        """
        if self.check(directory) is not None:
            return []
        out: list[str] = []
        pending = [directory]
        while pending:
            current = pending.pop()
            try:
                entries = list(os.scandir(self.root / current))
            except (FileNotFoundError, NotADirectoryError):
                continue
            except OSError as exc:
                # An unlisted file could hide in a directory that cannot be read.
                raise UnavailableError(f"cannot list {current!r} of the packet: {exc.strerror}",
                                       code="packet_unreadable") from None
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                path = f"{current}/{entry.name}"
                if entry.is_dir(follow_symlinks=False):
                    pending.append(path)
                else:
                    out.append(path)
        return sorted(out)

    def make_layout(self) -> None:
        """Create every layout directory (idempotent), refusing symlinked ones."""
        for directory in MANAGED_DIRS:
            self._require(directory)
            (self.root / directory).mkdir(parents=True, exist_ok=True)
