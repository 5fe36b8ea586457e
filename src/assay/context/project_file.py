"""Opening a project file safely: no symlink followed, regular files only, bounded reads.

A goal file is named by a path relative to the project root. Every access
goes through directory file descriptors: the root is opened once, then each
directory component with ``O_NOFOLLOW | O_DIRECTORY`` relative to the one
before, and the file itself with ``O_NOFOLLOW | O_NONBLOCK``. So:

- a symlink anywhere in the path is refused (``goal_path_symlink``), and a
  directory swapped for a symlink after it was opened changes nothing: the
  read, the temporary file and the rename all happen in the directory that
  was opened, never through the link;
- a FIFO, socket or device never blocks the call: the open does not wait
  for a writer, and ``fstat`` refuses anything that is not a regular file
  (``goal_not_regular_file``);
- the size comes from ``fstat`` before any byte is read: a file larger than
  :data:`MAX_GOAL_BYTES` is ``resource_limit`` without being read, and the
  read itself stops one byte past the bound in case the file grows.

:func:`replace_file` writes a new version atomically: a temporary sibling
created exclusively (``O_EXCL | O_NOFOLLOW``), written and fsynced, given
the old file's permission bits, checked by the caller's guard against the
current bytes, renamed over the file within the same directory descriptor,
and the directory fsynced.

The final open, ``fstat`` and bounded read are :func:`assay.inputs.read_regular_file`,
the one safe reader every project and packet file goes through; this module
adds the directory walk, the atomic replace and the goal files' error codes.
Imports only :mod:`assay.errors` and :mod:`assay.inputs`.
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from assay.errors import AssayError, UnavailableError
from assay.inputs import InputRefused, descend, read_regular_file

__all__ = ["MAX_GOAL_BYTES", "ProjectFile", "open_project_file"]

MAX_GOAL_BYTES = 16 * 1024 * 1024


class ProjectFile:
    """One file under the project root, reached through an open directory descriptor.

    Use :func:`open_project_file`; the descriptor is closed when its ``with``
    block ends. ``relative`` and ``label`` only name the file in errors.
    """

    def __init__(self, dir_fd: int, name: str, relative: str, label: str,
                 details: dict[str, str], limit: int) -> None:
        self.dir_fd = dir_fd
        self.name = name
        self.relative = relative
        self.label = label
        self.details = details
        self.limit = limit

    def _unavailable(self, reason: str, code: str = "goal_unavailable") -> UnavailableError:
        return UnavailableError(
            f"{self.label}: cannot read {self.relative}: {reason}",
            code=code, details=dict(self.details),
            action="Restore the goal file or fix [goals.GOAL_ID] path in assay.toml.")

    def read(self) -> tuple[bytes, int]:
        """The file's bytes and permission bits; see the module docstring for what is refused."""
        try:
            data, info = read_regular_file(self.name, dir_fd=self.dir_fd, limit=self.limit,
                                           label=self.relative)
        except InputRefused as exc:
            if exc.reason == "symlink":
                raise _symlink(self.label, self.relative, self.details) from None
            if exc.reason == "too_large":
                raise _too_large(self.label, self.relative, self.limit, exc.size) from None
            if exc.reason == "not_regular":
                raise self._unavailable("it is not a regular file (a FIFO, device, socket or "
                                        "directory)", code="goal_not_regular_file") from None
            raise self._unavailable(exc.message) from None
        return data, stat.S_IMODE(info.st_mode)

    def replace(self, data: bytes, mode: int, guard: Callable[[bytes], None]) -> None:
        """Replace the file with ``data`` atomically in the opened directory.

        ``guard`` is called with the file's current bytes just before the
        rename; it raises to abandon the write (the temporary file is removed
        and the file is left as it was).
        """
        tmp = f".{self.name}.{secrets.token_hex(6)}.assay-tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                     | getattr(os, "O_CLOEXEC", 0), 0o600, dir_fd=self.dir_fd)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                os.fchmod(fd, mode)
                os.fsync(fd)
            finally:
                os.close(fd)
            current, _ = self.read()
            guard(current)
            os.replace(tmp, self.name, src_dir_fd=self.dir_fd, dst_dir_fd=self.dir_fd)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=self.dir_fd)
            except FileNotFoundError:
                pass
            raise
        os.fsync(self.dir_fd)


def _symlink(label: str, relative: str, details: dict[str, str]) -> AssayError:
    return AssayError(
        f"{label}: {relative} goes through a symlink; assay never follows links in goal paths",
        code="goal_path_symlink", details=dict(details),
        action="Register the real path of the goal file in assay.toml.")


def _too_large(label: str, relative: str, limit: int, size: int | None) -> AssayError:
    return AssayError(
        f"{label}: {relative} is larger than {limit} bytes, the goal file limit",
        code="resource_limit",
        details={"path": relative, "limit_bytes": limit,
                 **({"size_bytes": size} if size is not None else {})},
        action="Split the goal file; move long history into files it links to.")


@contextmanager
def open_project_file(root: Path, relative: str, *, label: str, details: dict[str, str],
                      limit: int = MAX_GOAL_BYTES) -> Iterator[ProjectFile]:
    """Open the directories leading to ``root/relative`` without following links.

    ``relative`` is a normalised POSIX path without ``..``, ``.`` or empty
    components (assay.toml is checked for that when loaded); anything else
    is ``goal_path_outside_project``. A missing directory is
    ``goal_unavailable``; a symlinked one ``goal_path_symlink``.
    """
    parts = relative.split("/")
    if relative.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise AssayError(f"{label}: {relative} is not a path inside the project",
                         code="goal_path_outside_project", details=dict(details),
                         action="Point [goals.GOAL_ID] path at a file inside the project.")
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise UnavailableError(f"{label}: cannot open the project root: {exc.strerror}",
                               code="goal_unavailable", details=dict(details)) from None
    try:
        try:
            inner = descend(fd, parts[:-1])
        except InputRefused as exc:
            if exc.reason == "symlink":
                raise _symlink(label, relative, details) from None
            reason = "No such file or directory" if exc.reason == "missing" else exc.message
            raise UnavailableError(
                f"{label}: cannot read {relative}: {reason}", code="goal_unavailable",
                details=dict(details),
                action="Restore the goal file or fix [goals.GOAL_ID] path in assay.toml.",
            ) from None
        try:
            yield ProjectFile(inner, parts[-1], relative, label, details, limit)
        finally:
            os.close(inner)
    finally:
        os.close(fd)
