"""The command runner with real subprocesses: statuses, groups, streams, redaction."""

from __future__ import annotations

import hashlib
import os
import signal
import stat
import threading
import time
from pathlib import Path

from evidence_helpers import PYTHON

from assay.canonical import canonical_text
from assay.config import EvidenceCommand
from assay.evidence.commands import TAIL_BYTES, Redactor, child_environment, run_command
from assay_testing import sigint_as_on_a_terminal

BASE_ENV = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp")}


def py(code: str, **kw: object) -> EvidenceCommand:
    """A declaration running ``python -c code``."""
    return EvidenceCommand(name=str(kw.pop("name", "check")), argv=(PYTHON, "-c", code), **kw)  # type: ignore[arg-type]


def gone(pid: int, within: float = 5.0) -> bool:
    """Whether process ``pid`` no longer exists (zombies get a moment to be reaped)."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_run_command_passed(tmp_path: Path) -> None:
    """A command exiting 0 is passed with its exit code, times and output tail."""
    obs = run_command(py("print('ok')"), root=tmp_path, environ=BASE_ENV)
    assert obs.status == "passed"
    assert obs.exit_code == 0
    assert obs.stdout.tail == "ok\n"
    assert obs.started_at.endswith("Z") and obs.ended_at >= obs.started_at
    assert isinstance(obs.duration_ms, int)


def test_run_command_failed_with_exit_code(tmp_path: Path) -> None:
    """A non-zero exit is failed and keeps the exit code and stderr."""
    obs = run_command(py("import sys; sys.stderr.write('boom\\n'); sys.exit(3)"), root=tmp_path,
                      environ=BASE_ENV)
    assert obs.status == "failed"
    assert obs.exit_code == 3
    assert obs.stderr.tail == "boom\n"


def test_run_command_killed_by_signal_is_failed(tmp_path: Path) -> None:
    """A command that dies from a signal is failed with the signal number and no exit code."""
    obs = run_command(py("import os, signal; os.kill(os.getpid(), signal.SIGTERM)"),
                      root=tmp_path, environ=BASE_ENV)
    assert obs.status == "failed"
    assert obs.signal == signal.SIGTERM and obs.exit_code is None


def test_run_command_timeout_kills_grandchild(tmp_path: Path) -> None:
    """A timeout kills the whole process group: the grandchild holding the pipe does not survive."""
    pidfile = tmp_path / "grandchild.pid"
    code = (
        "import subprocess, sys, time\n"
        f"p = subprocess.Popen([{PYTHON!r}, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(p.pid))\n"
        "print('spawned', flush=True)\n"
        "time.sleep(60)\n"
    )
    obs = run_command(py(code), root=tmp_path, environ=BASE_ENV, timeout_s=1.0)
    assert obs.status == "timeout"  # how soon after the timeout it returns: bench_limits
    assert obs.stdout.tail == "spawned\n"
    assert gone(int(pidfile.read_text()))


def test_run_command_leftover_descendant_is_killed(tmp_path: Path) -> None:
    """A background process left in the group after the leader exits is killed, not orphaned."""
    pidfile = tmp_path / "bg.pid"
    code = (
        "import subprocess\n"
        f"p = subprocess.Popen([{PYTHON!r}, '-c', 'import time; time.sleep(60)'],"
        " stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        f"open({str(pidfile)!r}, 'w').write(str(p.pid))\n"
    )
    obs = run_command(py(code), root=tmp_path, environ=BASE_ENV)
    assert obs.status == "passed"
    assert gone(int(pidfile.read_text()))


def test_run_command_not_found_is_unavailable(tmp_path: Path) -> None:
    """An argv[0] that is not on PATH is unavailable and nothing is started."""
    decl = EvidenceCommand(name="missing", argv=("assay-no-such-command-xyz", "--flag"))
    obs = run_command(decl, root=tmp_path, environ=BASE_ENV)
    assert obs.status == "unavailable"
    assert obs.exit_code is None and "not an executable" in (obs.reason or "")


def test_run_command_not_executable_is_unavailable(tmp_path: Path) -> None:
    """A relative argv[0] without the execute bit is unavailable."""
    script = tmp_path / "check.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(stat.S_IRUSR | stat.S_IWUSR)
    obs = run_command(EvidenceCommand(name="x", argv=("./check.sh",)), root=tmp_path,
                      environ=BASE_ENV)
    assert obs.status == "unavailable"


def test_run_command_exec_format_error_is_error(tmp_path: Path) -> None:
    """An executable file the kernel cannot start is error (could not start)."""
    script = tmp_path / "bad"
    script.write_bytes(b"\x00\x01\x02 not a program")
    script.chmod(0o755)
    obs = run_command(EvidenceCommand(name="x", argv=("./bad",)), root=tmp_path, environ=BASE_ENV)
    assert obs.status == "error"
    assert "could not start" in (obs.reason or "")


def test_run_command_missing_cwd_is_error(tmp_path: Path) -> None:
    """A declared cwd that does not exist is error, not a crash."""
    obs = run_command(py("pass", cwd="nowhere"), root=tmp_path, environ=BASE_ENV)
    assert obs.status == "error"
    assert "not a directory" in (obs.reason or "")


def test_run_command_cwd_symlink_outside_root_is_error(tmp_path: Path) -> None:
    """A cwd that resolves outside the project root through a symlink is refused."""
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "out").symlink_to(tmp_path)
    obs = run_command(py("pass", cwd="out"), root=tmp_path / "project", environ=BASE_ENV)
    assert obs.status == "error"
    assert "outside the project root" in (obs.reason or "")


def test_run_command_huge_output_bounded_with_full_digest(tmp_path: Path) -> None:
    """Megabytes of output keep a bounded tail while the count and digest cover the whole stream."""
    line = b"0123456789abcdef" * 6 + b"\n"
    count = 60_000
    obs = run_command(py(f"import sys\nfor _ in range({count}): sys.stdout.buffer.write({line!r})"),
                      root=tmp_path, environ=BASE_ENV)
    expected = line * count
    assert obs.status == "passed"
    assert obs.stdout.bytes == len(expected)
    assert obs.stdout.sha256 == hashlib.sha256(expected).hexdigest()
    assert obs.stdout.truncated
    assert len(obs.stdout.tail.encode()) <= TAIL_BYTES
    assert obs.stdout.tail.endswith(line.decode())


def test_run_command_both_streams_chatty_do_not_deadlock(tmp_path: Path) -> None:
    """A child filling stdout and stderr alternately completes (pipes are read concurrently)."""
    code = ("import sys\nfor i in range(2000):\n"
            "    sys.stdout.write('o' * 1000 + '\\n'); sys.stderr.write('e' * 1000 + '\\n')\n")
    obs = run_command(py(code), root=tmp_path, environ=BASE_ENV, timeout_s=30)
    assert obs.status == "passed"
    assert obs.stdout.bytes == obs.stderr.bytes == 2000 * 1001


def test_run_command_redacts_secret_env_values(tmp_path: Path) -> None:
    """Values of *TOKEN* variables are redacted; neither the value nor its digest is stored."""
    secret = "s3cr3t-value-42"
    env = {**BASE_ENV, "DEPLOY_TOKEN": secret}
    decl = py("import os; print('token is', os.environ['DEPLOY_TOKEN'])", env=("DEPLOY_TOKEN",))
    obs = run_command(decl, root=tmp_path, environ=env)
    stored = canonical_text(obs.to_dict())
    assert secret not in stored
    assert hashlib.sha256(secret.encode()).hexdigest() not in stored
    assert hashlib.sha256(f"token is {secret}\n".encode()).hexdigest() not in stored
    assert obs.stdout.tail == "token is [REDACTED:env:DEPLOY_TOKEN]\n"
    assert obs.to_dict()["redaction"] == {"applied": True, "count": 1,
                                          "rules": ["env:DEPLOY_TOKEN"]}


def test_run_command_redacts_a_secret_printed_without_its_last_characters(
        tmp_path: Path) -> None:
    """A real command printing a secret value without its last 8 characters stores neither part."""
    secret = "tk-4f9Qz7LmW2xR8vB3nK6pY1sD"
    env = {**BASE_ENV, "DEPLOY_TOKEN": secret}
    decl = py("import os; print('token is', os.environ['DEPLOY_TOKEN'][:-8] + '...')",
              env=("DEPLOY_TOKEN",))
    obs = run_command(decl, root=tmp_path, environ=env)
    assert secret[:-8] not in canonical_text(obs.to_dict())
    assert obs.stdout.tail == "token is [REDACTED:env:DEPLOY_TOKEN]...\n"


def test_run_command_redacts_secret_named_key_password_secret(tmp_path: Path) -> None:
    """Variables named like *KEY*, *PASSWORD* and *SECRET* are secrets even when not passed through."""
    env = {**BASE_ENV, "API_KEY": "key-123456", "DB_PASSWORD": "hunter2hunter2",
           "CLIENT_SECRET": "shh-shh-shh"}
    code = "print('key-123456 hunter2hunter2 shh-shh-shh')"
    obs = run_command(py(code), root=tmp_path, environ=env)
    for value in env.values():
        if value not in BASE_ENV.values():
            assert value not in obs.stdout.tail
    assert obs.stdout.redactions == 3


def test_run_command_redacts_token_shapes(tmp_path: Path) -> None:
    """GitHub, AWS, sk- and Bearer token shapes are redacted with their rule names."""
    tokens = {
        "github_token": "ghp_" + "A1b2" * 9,
        "aws_access_key_id": "AKIA" + "ABCDEFGHIJKLMNOP",
        "api_key": "sk-" + "x" * 32,
        "bearer": "Bearer " + "eyJhbGciOi.abc.def123",
    }
    code = "import sys; sys.stderr.write(" + repr("\n".join(tokens.values()) + "\n") + ")"
    obs = run_command(py(code), root=tmp_path, environ=BASE_ENV)
    for value in tokens.values():
        assert value not in obs.stderr.tail
    assert "Bearer [REDACTED:bearer]" in obs.stderr.tail
    assert set(obs.redaction_rules) == set(tokens)


def test_run_command_redacts_secret_in_argv(tmp_path: Path) -> None:
    """A secret written into argv itself is redacted in the stored argv."""
    secret = "ghp_" + "Z" * 36
    decl = EvidenceCommand(name="x", argv=(PYTHON, "-c", "pass", secret))
    obs = run_command(decl, root=tmp_path, environ=BASE_ENV)
    assert secret not in canonical_text(obs.to_dict())
    assert obs.argv[-1] == "[REDACTED:github_token]"


def test_run_command_unredacted_digest_is_raw_digest(tmp_path: Path) -> None:
    """Without redaction the stream digest is exactly the raw stream's SHA-256."""
    obs = run_command(py("print('plain output')"), root=tmp_path, environ=BASE_ENV)
    assert obs.stdout.sha256 == hashlib.sha256(b"plain output\n").hexdigest()
    assert obs.to_dict()["redaction"]["applied"] is False


def test_run_command_non_utf8_output(tmp_path: Path) -> None:
    """Invalid UTF-8 is digested as raw bytes and stored as a replaced, valid text tail."""
    raw = b"caf\xe9 \xff\xfe ok\n"
    obs = run_command(py(f"import sys; sys.stdout.buffer.write({raw!r})"), root=tmp_path,
                      environ=BASE_ENV)
    assert obs.stdout.sha256 == hashlib.sha256(raw).hexdigest()
    assert obs.stdout.bytes == len(raw)
    assert obs.stdout.utf8 is False
    assert "\ufffd" in obs.stdout.tail
    canonical_text(obs.to_dict())  # stores as valid JSON text


def test_run_command_env_allow_list(tmp_path: Path) -> None:
    """Only the minimal set and the declared names reach the command."""
    env = {**BASE_ENV, "ALLOWED_ONE": "1", "DROPPED_ONE": "2"}
    decl = py("import os; print(sorted(k for k in os.environ if k.endswith('_ONE')))",
              env=("ALLOWED_ONE",))
    obs = run_command(decl, root=tmp_path, environ=env)
    assert obs.stdout.tail == "['ALLOWED_ONE']\n"
    assert "PATH" in obs.env_names and "DROPPED_ONE" not in obs.env_names
    assert child_environment(decl, env) == {"ALLOWED_ONE": "1", **BASE_ENV}


def test_run_command_cancel_is_aborted(tmp_path: Path) -> None:
    """Setting the cancel event stops the group and records aborted."""
    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    obs = run_command(py("import time; time.sleep(60)"), root=tmp_path, environ=BASE_ENV,
                      cancel=cancel)
    assert obs.status == "aborted"  # not passed: the 60 s sleep was cut short


def test_redactor_ignores_short_secret_values() -> None:
    """Secret-named variables with values under 6 characters are not treated as secrets."""
    data, counts = Redactor({"KEY": "1", "TOKEN": "abc"}).redact(b"1 abc 1")
    assert data == b"1 abc 1" and not counts


def test_run_command_interrupt_is_aborted_and_kills_group(tmp_path: Path) -> None:
    """Ctrl-C in the process running assay records aborted and leaves no command process behind."""
    import subprocess
    import sys

    pidfile = tmp_path / "cmd.pid"
    script = f"""
import os, sys
from assay.config import EvidenceCommand
from assay.evidence.commands import run_command

class Announce:
    seen = said = False
    def started(self, name, argv): pass
    def output(self, stream, line): self.seen = True
    def tick(self, elapsed):
        if self.seen and not self.said:
            self.said = True
            print("ready", flush=True)
    def finished(self, obs): pass

code = "import os, time; open({str(pidfile)!r}, 'w').write(str(os.getpid())); print('up', flush=True); time.sleep(60)"
obs = run_command(EvidenceCommand(name="slow", argv=({PYTHON!r}, "-c", code)), root={str(tmp_path)!r},
                  environ={{"PATH": os.environ["PATH"]}}, reporter=Announce())
print(obs.status, flush=True)
"""
    with sigint_as_on_a_terminal():
        proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=300)  # a hang guard only
    assert out.strip() == "aborted"
    assert gone(int(pidfile.read_text()))
