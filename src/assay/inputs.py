"""Bounded reading of the inputs a call names, and of the files assay reads itself.

Every document assay reads from outside is read at most one byte past
:data:`MAX_INPUT_BYTES` (the ledger's data limit), so a hostile input (a huge
file, ``/dev/zero``, an endless pipe) is refused with ``resource_limit``
instead of filling memory. A regular file is refused from its size alone.

:func:`read_regular` is the one safe way to read a file of a project or a
packet: it opens without blocking (a FIFO with no writer cannot hang the
call), without following a final-component symlink unless asked, checks
with ``fstat`` that it is a regular file and that its size is within the
bound *before* reading, and reads at most one byte past the bound (a file
that grows meanwhile is still refused). Every refusal is an
:class:`InputRefused` whose ``reason`` a caller can map to its own codes.
Imports only :mod:`assay.errors`.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Callable, Sequence

from assay.errors import AssayError, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import ClassVar

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_INPUT_BYTES",
    "InputRefused",
    "InputTooLarge",
    "descend",
    "file_kind",
    "in_input",
    "read_bounded",
    "read_regular",
    "read_regular_file",
    "read_stdin_bounded",
]

MAX_INPUT_BYTES = 4 * 1024 * 1024
# The default bound of read_regular: a project or packet file larger than this
# is refused from its fstat size, never read.
MAX_FILE_BYTES = 64 * 1024 * 1024


class InputTooLarge(AssayError):
    """An input past its bound (``resource_limit``); ``head`` keeps the first bytes read.

    Whoever must still answer something about the input (the stop hook, for
    a harness payload grown past the bound) can salvage what it names from
    ``head``; nothing else reads it.
    """

    def __init__(self, label: str, where: str, size: int | None, limit: int = MAX_INPUT_BYTES,
                 head: bytes = b"") -> None:
        super().__init__(
            f"{label} is larger than {limit} bytes, the input limit",
            code="resource_limit", pointer=where,
            details={"limit_bytes": limit, **({"size_bytes": size} if size is not None else {})},
            action="Store large content as files and record their digests.",
        )
        self.head = head


def _too_large(label: str, where: str, size: int | None, limit: int = MAX_INPUT_BYTES) -> AssayError:
    return InputTooLarge(label, where, size, limit)


# What an oversized standard input keeps of itself for a salvaging reader.
_HEAD_BYTES = 64 * 1024


def read_stdin_bounded(read: Callable[[int], bytes] | None = None, *, label: str = "standard input",
                       where: str | None = None) -> bytes:
    """Standard input, at most :data:`MAX_INPUT_BYTES` (else :class:`InputTooLarge`)."""
    raw = (read or sys.stdin.buffer.read)(MAX_INPUT_BYTES + 1)
    if len(raw) > MAX_INPUT_BYTES:
        raise InputTooLarge(label, where or "", None, head=raw[:_HEAD_BYTES])
    return raw


def read_bounded(path: str, *, where: str, label: str,
                 stdin: Callable[[int], bytes] | None = None,
                 limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of ``path`` (``-`` is standard input), at most ``limit`` bytes.

    A named file is read through :func:`read_regular` (links followed: the
    caller named it): a FIFO, device or directory is refused without
    blocking (``file_not_regular``), an oversized file from its size
    (``resource_limit``), a path that cannot be read is ``file_unreadable``
    (a usage error); ``where`` is the pointer of each, and each message names
    ``label`` (the option) and the file.
    """
    if path == "-":
        return read_stdin_bounded(stdin, label=f"{label} - (standard input)", where=where)
    try:
        return read_regular(path, limit=limit, follow_symlinks=True, label=f"{label} {path}",
                            where=where)
    except InputRefused as exc:
        if exc.reason == "too_large":
            raise _too_large(f"{label} {path}", where, exc.size, limit) from None
        if exc.reason == "not_regular":
            raise UsageError(f"{exc.message}; pass a regular file, or - for standard input",
                             code="file_not_regular", pointer=where, details={"file": path},
                             action="Write the document to a file first, or pipe it to -.") \
                from None
        raise UsageError(exc.message.replace("cannot open ", "cannot read "),
                         code="file_unreadable", pointer=where, details={"file": path}) from None


def in_input(err: AssayError, *, label: str, path: str, where: str) -> AssayError:
    """``err``, found in the content of the input ``path`` given as ``label``, saying so.

    The message starts with the option and the file (``--data-file bad.json:
    not valid JSON ...``), ``details`` gains ``option`` and ``file``, and a
    pointer into the document becomes one into the argument: ``/a`` in the
    document of ``--data-file`` is ``/data/a``. Returns ``err`` itself.
    """
    source = "- (standard input)" if path == "-" else path
    err.message = f"{label} {source}: {err.message}"
    err.pointer = where + (err.pointer or "")
    err.details = {**err.details, "option": label, "file": path}
    return err


class InputRefused(AssayError):
    """A file :func:`read_regular` will not read; ``reason`` says why.

    Reasons and codes: ``missing`` (``file_not_found``), ``symlink``
    (``file_is_symlink``: the final component is a link and links are not
    followed), ``not_regular`` (``file_not_regular``: a FIFO, device, socket
    or directory), ``too_large`` (``resource_limit``, with ``size`` when
    known) and ``unreadable`` (``file_not_readable``: any other failure).
    """

    CODES: ClassVar[dict[str, str]] = {
        "missing": "file_not_found",
        "symlink": "file_is_symlink",
        "not_regular": "file_not_regular",
        "too_large": "resource_limit",
        "unreadable": "file_not_readable",
    }

    def __init__(self, reason: str, message: str, *, where: str | None = None,
                 size: int | None = None, limit: int | None = None) -> None:
        details = {k: v for k, v in (("size_bytes", size), ("limit_bytes", limit)) if v is not None}
        super().__init__(message, code=self.CODES[reason], pointer=where, details=details,
                         action="Point assay at a regular file within the size bound.")
        self.reason = reason
        self.size = size


def file_kind(mode: int) -> str:
    """What a file that is not regular is, in words (``a FIFO``), from its ``st_mode``."""
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "not a regular file"


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def descend(dir_fd: int, parts: Sequence[str]) -> int:
    """A new descriptor of the directory ``parts`` below ``dir_fd``, reached without a link.

    Each component is opened with ``O_NOFOLLOW | O_DIRECTORY`` relative to
    the one before, so a directory swapped for a symlink is never followed.
    Raises :class:`InputRefused`: ``symlink`` (a component is a symbolic
    link; the message names it), ``missing`` (absent, or not a directory) or
    ``unreadable`` (the message is the system's reason). Never closes
    ``dir_fd``; the caller closes the returned descriptor.
    """
    fd = os.dup(dir_fd)
    try:
        for part in parts:
            try:
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(fd, part):
                    raise InputRefused("symlink", f"{part} is a symlink") from None
                if exc.errno in (errno.ENOENT, errno.ENOTDIR):
                    raise InputRefused("missing", f"{part} does not exist") from None
                raise InputRefused("unreadable", exc.strerror or str(exc)) from None
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def _is_link(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def read_regular(path: str | os.PathLike[str], *, limit: int = MAX_FILE_BYTES,
                 dir_fd: int | None = None, follow_symlinks: bool = False,
                 label: str = "the file", where: str | None = None) -> bytes:
    """The bytes of the regular file at ``path``; see :func:`read_regular_file`."""
    return read_regular_file(path, limit=limit, dir_fd=dir_fd, follow_symlinks=follow_symlinks,
                             label=label, where=where)[0]


def read_regular_file(path: str | os.PathLike[str], *, limit: int = MAX_FILE_BYTES,
                      dir_fd: int | None = None, follow_symlinks: bool = False,
                      label: str = "the file", where: str | None = None,
                      ) -> tuple[bytes, os.stat_result]:
    """The bytes of the regular file at ``path``, at most ``limit`` bytes, and its ``fstat``.

    Opens with ``O_NONBLOCK`` (and ``O_NOFOLLOW`` unless ``follow_symlinks``),
    relative to ``dir_fd`` when given; checks the open descriptor with
    ``fstat`` (a regular file, ``st_size <= limit``) before reading anything;
    reads at most ``limit + 1`` bytes. Raises :class:`InputRefused`
    otherwise; nothing is read from a refused file. Cost: one ``open``, one
    ``fstat`` and ``size / 1 MiB + 1`` reads.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if not follow_symlinks:
        flags |= os.O_NOFOLLOW
    try:
        fd = os.open(path, flags, dir_fd=dir_fd)
    except FileNotFoundError:
        raise InputRefused("missing", f"{label} does not exist", where=where) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow_symlinks:
            raise InputRefused("symlink", f"{label} is a symlink; it is not followed",
                               where=where) from None
        if exc.errno == errno.ENOTDIR:
            raise InputRefused("missing", f"{label} does not exist", where=where) from None
        raise InputRefused("unreadable", f"cannot open {label}: {exc.strerror}",
                           where=where) from None
    except ValueError as exc:  # a NUL in the path
        raise InputRefused("unreadable", f"cannot open {label}: {exc}", where=where) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputRefused("not_regular", f"{label} is {file_kind(info.st_mode)}, not a regular "
                               "file", where=where)
        if info.st_size > limit:
            raise InputRefused("too_large", f"{label} is larger than {limit} bytes",
                               where=where, size=info.st_size, limit=limit)
        chunks: list[bytes] = []
        total = 0
        while total <= limit:
            try:
                chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            except OSError as exc:
                raise InputRefused("unreadable", f"cannot read {label}: {exc.strerror}",
                                   where=where) from None
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:
            raise InputRefused("too_large", f"{label} grew past {limit} bytes while read",
                               where=where, limit=limit)
        return b"".join(chunks), info
    finally:
        os.close(fd)
