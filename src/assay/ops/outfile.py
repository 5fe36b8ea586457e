"""Writing an output file an operation names (``out``): atomically, never over someone else's file.

The report and the attestation write one file each. Both go through
:class:`OutFile`: an existing path that is not a regular file (a device node
such as ``/dev/null``, a FIFO, a socket, a directory or a symlink) is never
replaced; the bytes go to a temporary sibling that is renamed over the
target, the target is checked again just before the rename, and nothing is
left behind when the write is refused. Every failure is the caller's
``code`` at pointer ``/out``.

Imports only the base modules.
"""

from __future__ import annotations

import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from assay.errors import AssayError

__all__ = ["OutFile", "named_path"]


def named_path(value: str, cwd: str | None) -> Path:
    """The file a call names, as an absolute path with its directory resolved.

    Relative to the call's directory; ``..`` and symbolic links in the
    directory are resolved as the system resolves them when it opens the
    file, so the path an answer prints is the one written, and a path given
    as ``../x.html`` prints without the ``..``. The last component is left as
    named: a symbolic link there is the file's own concern (see
    :meth:`OutFile.refuse_non_regular`).
    """
    path = Path(value)
    if not path.is_absolute():
        path = Path(cwd or os.getcwd()) / path
    if path.name in ("", ".", ".."):
        return path.resolve()
    return path.parent.resolve() / path.name


@dataclass(frozen=True, slots=True)
class OutFile:
    """A file to write: its ``path``, the error ``code``, what it is (``the report``).

    ``prefix`` starts the name of the temporary sibling.
    """

    path: Path
    code: str
    what: str
    prefix: str = ".out-"

    def unwritable(self, reason: str) -> AssayError:
        return AssayError(f"cannot write {self.what} to {self.path}: {reason}", code=self.code,
                          pointer="/out", action="Pass --out a writable file path.")

    def refuse_non_regular(self) -> None:
        """Refuse a path that exists and is not a regular file: it is never replaced."""
        from assay.inputs import file_kind

        try:
            mode = os.lstat(self.path).st_mode
        except FileNotFoundError:
            return
        except OSError as exc:
            raise self.unwritable(exc.strerror or str(exc)) from None
        if not stat.S_ISREG(mode):
            kind = "a symlink" if stat.S_ISLNK(mode) else file_kind(mode)
            raise AssayError(f"cannot write {self.what} to {self.path}: it is {kind}, not a "
                             "regular file, and is never replaced", code=self.code,
                             pointer="/out", details={"path": str(self.path), "kind": kind},
                             action="Pass --out a new file name or an existing regular file.")

    def write(self, data: bytes) -> None:
        """Write ``data`` through a temporary sibling and a rename (see the module docstring)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=self.prefix, suffix=".tmp", dir=self.path.parent)
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
                self.refuse_non_regular()
                os.replace(tmp, self.path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            raise self.unwritable(exc.strerror or str(exc)) from None
