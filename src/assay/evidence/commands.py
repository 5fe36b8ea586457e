"""Verification commands: declarations and the runner that observes them.

A command is declared in ``assay.toml`` as ``[evidence.commands.NAME]`` (parsed
and validated by :mod:`assay.config`). :func:`run_command` executes one
declaration and returns a :class:`CommandObservation`, the factual record of
what happened. Outcomes are data: a failing, timed-out or missing command is
an observation with that status, never an exception.

Contracts of the runner (POSIX):

- No shell: ``argv`` is executed directly (a shell runs only if argv names one).
- Own process group (``start_new_session=True``). On timeout or interruption
  the whole group gets SIGTERM, then SIGKILL after a short grace. When the
  leader exits on its own, whatever it left in its group is killed too, before
  the leader is reaped (so the group id cannot be reused meanwhile): no
  descendant that stayed in the group survives a run.
- Environment: only :data:`MINIMAL_ENV` plus the declaration's ``env`` names
  are passed through; everything else is dropped.
- Output: stdout and stderr are read concurrently (one thread each), so a
  chatty child never blocks on a full pipe. Each stream keeps a bounded tail
  (:data:`TAIL_BYTES`), its byte count, and the SHA-256 of the whole stream.
  Secrets are redacted (:mod:`assay.redaction`, the rule set packets use
  too, plus the values of secret-named environment variables) before
  anything is kept: the digest is computed over the redacted stream, so
  neither a secret nor a digest that depends on it is ever stored (when
  nothing is redacted it equals the raw stream's digest).
- Non-UTF-8 output: digests and counts are over raw bytes; tails are decoded
  with replacement characters and the observation says whether the stream was
  valid UTF-8.

Imports the base modules, :mod:`assay.redaction` and :mod:`assay.config` only.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import shutil
import signal
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from assay.canonical import digest
from assay.config import EvidenceCommand
from assay.redaction import Redactor

__all__ = [
    "COMMAND_STATUSES",
    "KILL_GRACE_S",
    "MINIMAL_ENV",
    "TAIL_BYTES",
    "CommandObservation",
    "Redactor",
    "Reporter",
    "StreamCapture",
    "child_environment",
    "declaration_digest",
    "run_command",
    "unavailable_observation",
]

# Every status a command observation can carry (a subset of the reference's
# ObservationStatus: `observed` belongs to non-command providers).
COMMAND_STATUSES = ("passed", "failed", "timeout", "error", "aborted", "unavailable")
# Bytes of each stream kept as its tail (after redaction).
TAIL_BYTES = 16 * 1024
# Seconds between SIGTERM and SIGKILL when a run is stopped.
KILL_GRACE_S = 2.0
# Seconds to wait for the pipes to close once the process group is gone. Only
# a descendant that left the group (setsid) can hold them longer; the stream
# is then marked incomplete.
PIPE_GRACE_S = 5.0
# Variables passed through to every command whatever its allow-list: what a
# POSIX program needs to find executables, a home and a locale.
MINIMAL_ENV = ("HOME", "LANG", "LC_ALL", "LC_CTYPE", "LOGNAME", "PATH", "TMPDIR", "TZ", "USER")

_READ_CHUNK = 64 * 1024
# A line longer than this is processed in pieces; a secret straddling a piece
# boundary of such a line may escape the token-shape patterns (documented).
_MAX_PENDING = 256 * 1024
_KEEP_PENDING = 1024

@dataclass(frozen=True, slots=True)
class StreamCapture:
    """What was kept of one output stream.

    ``bytes`` counts the raw stream; ``sha256`` is over the whole stream after
    redaction; ``tail`` is its last :data:`TAIL_BYTES` bytes decoded with
    replacement; ``incomplete`` means the pipe was still held open when
    capture stopped.
    """

    tail: str = ""
    bytes: int = 0
    sha256: str = hashlib.sha256(b"").hexdigest()
    truncated: bool = False
    utf8: bool = True
    redactions: int = 0
    incomplete: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "tail": self.tail,
            "bytes": self.bytes,
            "sha256": self.sha256,
            "truncated": self.truncated,
            "utf8": self.utf8,
            "redactions": self.redactions,
            "incomplete": self.incomplete,
        }


@dataclass(frozen=True, slots=True)
class CommandObservation:
    """The factual record of one command run (status is data, not an error)."""

    command_id: str
    status: str
    argv: tuple[str, ...]
    cwd: str
    timeout_s: int
    started_at: str
    ended_at: str
    duration_ms: int
    exit_code: int | None = None
    signal: int | None = None
    reason: str | None = None
    stdout: StreamCapture = field(default_factory=StreamCapture)
    stderr: StreamCapture = field(default_factory=StreamCapture)
    redaction_rules: tuple[str, ...] = ()
    redaction_count: int = 0
    env_names: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def to_dict(self) -> dict[str, Any]:
        """JSON data in the record's ``observation`` field (no floats)."""
        return {
            "kind": "command",
            "command_id": self.command_id,
            "status": self.status,
            "argv": list(self.argv),
            "cwd": self.cwd,
            "timeout_s": self.timeout_s,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "duration_ms": self.duration_ms,
            "exit_code": self.exit_code,
            "signal": self.signal,
            "reason": self.reason,
            "stdout": self.stdout.to_dict(),
            "stderr": self.stderr.to_dict(),
            "redaction": {
                "applied": self.redaction_count > 0,
                "count": self.redaction_count,
                "rules": list(self.redaction_rules),
            },
            "env_names": list(self.env_names),
        }


class Reporter(Protocol):
    """Progress hooks the runner calls; every hook must return quickly."""

    def started(self, name: str, argv: tuple[str, ...]) -> None: ...

    def output(self, stream: str, line: str) -> None: ...

    def tick(self, elapsed_s: float) -> None: ...

    def finished(self, observation: CommandObservation) -> None: ...


class _QuietReporter:
    """The default reporter: does nothing."""

    def started(self, name: str, argv: tuple[str, ...]) -> None:
        pass

    def output(self, stream: str, line: str) -> None:
        pass

    def tick(self, elapsed_s: float) -> None:
        pass

    def finished(self, observation: CommandObservation) -> None:
        pass


def declaration_digest(decl: EvidenceCommand) -> str:
    """SHA-256 of the declaration's canonical JSON (what the record cites)."""
    return digest(decl.to_dict())


def child_environment(decl: EvidenceCommand, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a command runs with: :data:`MINIMAL_ENV` plus ``decl.env``."""
    source = os.environ if environ is None else environ
    allowed = set(MINIMAL_ENV) | set(decl.env)
    return {name: source[name] for name in sorted(allowed) if name in source}


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def unavailable_observation(decl: EvidenceCommand | None, name: str, reason: str,
                            *, status: str = "unavailable") -> CommandObservation:
    """An observation for a command that could not be started at all."""
    now = _now()
    return CommandObservation(
        command_id=name,
        status=status,
        argv=decl.argv if decl else (),
        cwd=decl.cwd if decl else ".",
        timeout_s=decl.timeout if decl else 0,
        started_at=now,
        ended_at=now,
        duration_ms=0,
        reason=reason,
        env_names=tuple(sorted(set(MINIMAL_ENV) | set(decl.env))) if decl else (),
    )


class _Capture:
    """Consumes one pipe: redacts complete lines, hashes, keeps a tail."""

    def __init__(self, stream: str, redactor: Redactor, tail_bytes: int,
                 reporter: Reporter) -> None:
        self.stream = stream
        self.redactor = redactor.stream()
        self.tail_bytes = tail_bytes
        self.reporter = reporter
        self.hasher = hashlib.sha256()
        self.raw_bytes = 0
        self.stored_bytes = 0
        self.tail = bytearray()
        self.pending = bytearray()
        self.counts: Counter[str] = Counter()
        self.decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self.utf8 = True
        self.done = threading.Event()

    def pump(self, fd: int) -> None:
        try:
            while True:
                try:
                    chunk = os.read(fd, _READ_CHUNK)
                except InterruptedError:  # pragma: no cover - PEP 475 retries
                    continue
                except OSError:
                    break
                if not chunk:
                    break
                self.feed(chunk)
            self.flush()
        finally:
            self.done.set()

    def feed(self, chunk: bytes) -> None:
        self.raw_bytes += len(chunk)
        if self.utf8:
            try:
                self.decoder.decode(chunk)
            except UnicodeDecodeError:
                self.utf8 = False
        self.pending += chunk
        cut = self.pending.rfind(b"\n")
        if cut >= 0:
            self._emit(bytes(self.pending[: cut + 1]))
            del self.pending[: cut + 1]
        elif len(self.pending) > _MAX_PENDING:
            split = len(self.pending) - _KEEP_PENDING
            self._emit(bytes(self.pending[:split]))
            del self.pending[:split]

    def flush(self) -> None:
        if self.utf8:
            try:
                self.decoder.decode(b"", final=True)
            except UnicodeDecodeError:
                self.utf8 = False
        if self.pending:
            self._emit(bytes(self.pending))
            self.pending.clear()

    def _emit(self, block: bytes) -> None:
        block, counts = self.redactor.feed(block)
        self.counts.update(counts)
        self.hasher.update(block)
        self.stored_bytes += len(block)
        self.tail += block
        if len(self.tail) > 2 * self.tail_bytes:
            del self.tail[: len(self.tail) - self.tail_bytes]
        last = block.rstrip(b"\r\n").rsplit(b"\n", 1)[-1][-400:]
        if last.strip():
            self.reporter.output(self.stream, last.decode("utf-8", "replace"))

    def result(self) -> StreamCapture:
        tail = bytes(self.tail[-self.tail_bytes:]) if self.tail_bytes else b""
        truncated = self.stored_bytes > len(tail)
        if truncated:
            # Do not start the tail in the middle of a UTF-8 sequence.
            skip = 0
            while skip < 3 and skip < len(tail) and 0x80 <= tail[skip] <= 0xBF:
                skip += 1
            tail = tail[skip:]
        return StreamCapture(
            tail=tail.decode("utf-8", "replace"),
            bytes=self.raw_bytes,
            sha256=self.hasher.hexdigest(),
            truncated=truncated,
            utf8=self.utf8,
            redactions=sum(self.counts.values()),
            incomplete=not self.done.is_set(),
        )


def _resolve_executable(word: str, cwd: Path, env: Mapping[str, str]) -> str | None:
    if os.sep in word or (os.altsep and os.altsep in word):
        candidate = Path(word) if os.path.isabs(word) else cwd / word
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
        return None
    return shutil.which(word, path=env.get("PATH", os.defpath))


def _killpg(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _leader_exited(pid: int) -> bool:
    """Whether the leader has exited, without reaping it (its pgid stays reserved)."""
    try:
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return info is not None


def run_command(
    decl: EvidenceCommand,
    *,
    root: str | os.PathLike[str],
    environ: Mapping[str, str] | None = None,
    reporter: Reporter | None = None,
    tail_bytes: int = TAIL_BYTES,
    cancel: threading.Event | None = None,
    timeout_s: float | None = None,
) -> CommandObservation:
    """Run ``decl`` from ``root`` (the project root) and observe it.

    ``environ`` is the environment the allow-list draws from and the secrets
    are taken from (default ``os.environ``). ``timeout_s`` overrides the
    declared timeout (tests use fractions of a second). Setting ``cancel``, or
    a KeyboardInterrupt while waiting, stops the group: status ``aborted``.
    Blocks until the command's group is gone; never raises for an outcome.
    """
    report: Reporter = reporter or _QuietReporter()
    source = os.environ if environ is None else environ
    redactor = Redactor(source)
    env = child_environment(decl, source)
    env_names = tuple(sorted(env))
    limit = float(decl.timeout if timeout_s is None else timeout_s)
    base = Path(root).resolve()
    workdir = (base / decl.cwd).resolve()
    argv_counts: Counter[str] = Counter()
    shown_argv: list[str] = []
    for word in decl.argv:
        text, counts = redactor.redact_text(word)
        shown_argv.append(text)
        argv_counts.update(counts)

    def early(status: str, reason: str) -> CommandObservation:
        now = _now()
        obs = CommandObservation(
            command_id=decl.name, status=status, argv=tuple(shown_argv), cwd=decl.cwd,
            timeout_s=decl.timeout, started_at=now, ended_at=now, duration_ms=0, reason=reason,
            redaction_rules=tuple(sorted(argv_counts)),
            redaction_count=sum(argv_counts.values()), env_names=env_names,
        )
        report.finished(obs)
        return obs

    if workdir != base and base not in workdir.parents:
        return early("error", f"cwd {decl.cwd!r} resolves outside the project root")
    if not workdir.is_dir():
        return early("error", f"cwd {decl.cwd!r} is not a directory")
    executable = _resolve_executable(decl.argv[0], workdir, env)
    if executable is None:
        return early("unavailable", f"{shown_argv[0]!r} is not an executable file on PATH "
                                    "or relative to cwd")

    report.started(decl.name, tuple(shown_argv))
    started_at = _now()
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(
            list(decl.argv),
            executable=executable,
            cwd=workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as exc:
        return early("error", f"could not start: {exc.strerror or exc}")

    assert proc.stdout is not None and proc.stderr is not None
    captures = {
        "stdout": _Capture("stdout", redactor, tail_bytes, report),
        "stderr": _Capture("stderr", redactor, tail_bytes, report),
    }
    threads = [
        threading.Thread(target=captures["stdout"].pump, args=(proc.stdout.fileno(),),
                         name=f"assay-{decl.name}-stdout", daemon=True),
        threading.Thread(target=captures["stderr"].pump, args=(proc.stderr.fileno(),),
                         name=f"assay-{decl.name}-stderr", daemon=True),
    ]
    pgid = proc.pid  # start_new_session makes the child its group leader
    stopped: str | None = None
    deadline = t0 + limit
    pause = 0.002
    # From here on an interrupt (Ctrl-C) at any point still stops the group.
    try:
        for thread in threads:
            thread.start()
        while not _leader_exited(proc.pid):
            now = time.monotonic()
            if cancel is not None and cancel.is_set():
                stopped = "aborted"
                break
            if now >= deadline:
                stopped = "timeout"
                break
            report.tick(now - t0)
            time.sleep(min(pause, max(0.0, deadline - now)))
            pause = min(pause * 2, 0.05)
    except KeyboardInterrupt:
        stopped = "aborted"
    try:
        if stopped is not None:
            _killpg(pgid, signal.SIGTERM)
            grace_end = time.monotonic() + KILL_GRACE_S
            while not _leader_exited(proc.pid) and time.monotonic() < grace_end:
                time.sleep(0.02)
    except KeyboardInterrupt:
        stopped = "aborted"
    finally:
        # Whatever is left in the group (the leader if it ignored SIGTERM, or
        # the descendants it left behind) is killed while the leader is still
        # a zombie, so its process group id cannot have been reused.
        _killpg(pgid, signal.SIGKILL)
    for thread in threads:
        # Interrupted while starting the readers: a thread that was launched
        # sets its ident within moments; one that never was must still drain
        # its pipe.
        patience = time.monotonic() + 0.05
        while thread.ident is None and time.monotonic() < patience:
            time.sleep(0.001)
        if thread.ident is None:
            thread.start()
    returncode = proc.wait()
    ended = time.monotonic()
    for thread in threads:
        thread.join(max(0.0, PIPE_GRACE_S - (time.monotonic() - ended)))
    if not any(t.is_alive() for t in threads):
        proc.stdout.close()
        proc.stderr.close()

    stdout = captures["stdout"].result()
    stderr = captures["stderr"].result()
    counts = argv_counts + captures["stdout"].counts + captures["stderr"].counts
    if stopped is not None:
        status = stopped
        reason = (f"exceeded the {limit:g} s timeout; the process group was killed"
                  if stopped == "timeout" else "interrupted; the process group was killed")
    elif returncode == 0:
        status, reason = "passed", None
    else:
        status = "failed"
        reason = (f"killed by signal {-returncode}" if returncode < 0
                  else f"exited with status {returncode}")
    observation = CommandObservation(
        command_id=decl.name,
        status=status,
        argv=tuple(shown_argv),
        cwd=decl.cwd,
        timeout_s=decl.timeout,
        started_at=started_at,
        ended_at=_now(),
        duration_ms=round((ended - t0) * 1000),
        exit_code=returncode if returncode >= 0 else None,
        signal=-returncode if returncode < 0 else None,
        reason=reason,
        stdout=stdout,
        stderr=stderr,
        redaction_rules=tuple(sorted(counts)),
        redaction_count=sum(counts.values()),
        env_names=env_names,
    )
    report.finished(observation)
    return observation

