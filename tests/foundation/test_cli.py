"""CLI conventions, through real subprocesses of the venv's `assay` console script."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from foundation_cli import ASSAY, Runner, cli_in

import assay
from assay.canonical import canonical_text
from assay_testing import run_on_tty


@pytest.fixture
def assay_cli(tmp_path: Path) -> Runner:
    """The console script, run in this test's tmp_path."""
    return cli_in(tmp_path)


def _tty(*args: str, cwd: Path) -> tuple[int, str]:
    """Run assay with stdout and stderr on a pseudo-terminal; return (status, merged output)."""
    status, raw = run_on_tty(*args, cwd=cwd, columns=200, env={"NO_COLOR": "1"})
    out = raw.decode("utf-8").replace("\r\n", "\n")
    # NO_COLOR drops colours but keeps bold; the tests read the words.
    return status, re.sub(r"\x1b\[[0-9;]*m", "", out)


# Registers an operation with a bug in it, then runs the real CLI entry point.
_CRASH = """
import sys
from assay.ops import Bound, Result, operation

@operation("crash.now", summary="Fail with a bug.", writes=False, project=False,
           bounds=Bound("answer", items=1, max_items=1, whole=True, recover="One answer."))
def crash(inv, args):
    raise ZeroDivisionError("planted bug")

from assay.cli import main
main(sys.argv[1:])
"""


def _crash(*args: str, env: dict[str, str] | None = None,
           before: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-c", _CRASH, *before, "crash", "now", *args],
                          capture_output=True, text=True, timeout=60, env=full_env, check=False)


def test_cli_version(assay_cli: Runner) -> None:
    """`assay --version` prints the package version and exits 0."""
    ran = assay_cli("--version")
    assert (ran.code, ran.stdout, ran.stderr) == (0, f"assay {assay.__version__}\n", "")


def test_cli_python_m_assay(tmp_path: Path) -> None:
    """`python -m assay` is the same CLI."""
    proc = subprocess.run([sys.executable, "-m", "assay", "--version"], capture_output=True,
                          text=True, cwd=tmp_path, timeout=60, check=True)
    assert proc.stdout == f"assay {assay.__version__}\n"


def test_cli_help_lists_commands(assay_cli: Runner) -> None:
    """`assay --help` exits 0 and lists the registry's commands and the launchers."""
    ran = assay_cli("--help")
    assert ran.code == 0
    for word in ("canonical", "describe", "init", "mcp", "demo"):
        assert word in ran.stdout


def test_cli_canonical_digest(assay_cli: Runner) -> None:
    """`assay canonical --digest` prints only the lowercase hex digest of the canonical form."""
    ran = assay_cli("canonical", "--digest", stdin='{ "b": 1, "a": 2 }')
    assert ran.code == 0
    assert ran.stdout == assay.digest({"a": 2, "b": 1}) + "\n"


def test_cli_canonical_fingerprint(assay_cli: Runner) -> None:
    """`assay canonical --fingerprint` prints only sha256:<hex>."""
    ran = assay_cli("canonical", "--fingerprint", stdin="[1.0]")
    assert ran.code == 0
    assert ran.stdout == assay.fingerprint([1]) + "\n"


def test_cli_canonical_text_ignores_format_json(assay_cli: Runner) -> None:
    """`assay canonical` prints bare canonical text, not an envelope, even with --format json."""
    ran = assay_cli("canonical", "--format", "json", stdin='{"z":[],"a":{}}')
    assert ran.stdout == '{"a":{},"z":[]}\n'


@pytest.mark.parametrize(
    ("body", "code", "where"),
    [
        (b'{"a":', "invalid_json", None),
        (b"", "invalid_json", None),
        (b"NaN", "invalid_json", None),
        (b'{"a":1,"a":2}', "duplicate_key", "/a"),
        (b'{"n":[9007199254740993]}', "unsafe_integer", "/n/0"),
        (b'{"s":"\\ud800"}', "lone_surrogate", "/s"),
        (b'"\xff"', "invalid_utf8", None),
        (b"[" * 129 + b"]" * 129, "resource_limit", None),
    ],
)
def test_cli_canonical_rejects_with_exit_1(assay_cli: Runner, body: bytes, code: str,
                                           where: str | None) -> None:
    """A document canonical JSON cannot take exits 1, prints nothing on stdout and the error on stderr."""
    ran = assay_cli("canonical", "--digest", stdin=body)
    assert ran.code == 1
    assert ran.stdout == ""
    error = ran.error()
    assert error["code"] == code
    assert error.get("pointer") == where
    assert error["retryable"] is False


def test_cli_pipe_prints_one_json_envelope(assay_cli: Runner) -> None:
    """On a pipe an operation prints one canonical JSON line: {ok, operation, data, next}."""
    ran = assay_cli("describe", "--", "init")
    assert ran.code == 0
    assert ran.stdout.endswith("\n") and ran.stdout.count("\n") == 1
    envelope = json.loads(ran.stdout)
    assert set(envelope) == {"ok", "operation", "data", "next"}
    assert (envelope["ok"], envelope["operation"]) == (True, "describe")
    assert ran.stdout == canonical_text(envelope) + "\n"


def test_cli_format_json_matches_pipe_output(assay_cli: Runner) -> None:
    """`--format json` prints the same bytes as the pipe default."""
    assert assay_cli("describe", "--format", "json").stdout == assay_cli("describe").stdout


def test_cli_output_is_deterministic(assay_cli: Runner) -> None:
    """The same call prints byte-identical output."""
    assert assay_cli("describe").stdout == assay_cli("describe").stdout


def test_cli_error_goes_to_stderr_as_envelope(assay_cli: Runner) -> None:
    """An error prints {ok: false, error: {code, message, retryable, ...}} on stderr and nothing on stdout."""
    ran = assay_cli("describe", "--", "no.such-op")
    assert ran.code == 2
    assert ran.stdout == ""
    line = ran.stderr.strip()
    envelope = json.loads(line)
    assert envelope == {"ok": False, "error": envelope["error"]}
    assert {"code", "message", "retryable"} <= set(envelope["error"])
    assert envelope["error"]["code"] == "unknown_operation"
    assert envelope["error"]["action"]


def test_cli_unknown_option_exits_2(assay_cli: Runner) -> None:
    """An unknown option is unknown_option, exit 2."""
    ran = assay_cli("describe", "--bogus")
    assert ran.code == 2
    assert ran.error()["code"] == "unknown_option"


def test_cli_unknown_command_exits_2(assay_cli: Runner) -> None:
    """An unknown command is usage_error, exit 2."""
    ran = assay_cli("no-such-command")
    assert (ran.code, ran.error()["code"]) == (2, "usage_error")


def test_cli_missing_option_value_exits_2(assay_cli: Runner) -> None:
    """An option without its value is usage_error, exit 2."""
    ran = assay_cli("init", "--scope")
    assert (ran.code, ran.error()["code"]) == (2, "usage_error")


def test_cli_argument_outside_schema_exits_2(assay_cli: Runner, tmp_path: Path) -> None:
    """A value outside the argument's schema is invalid_argument at its pointer, exit 2, writing nothing."""
    ran = assay_cli("init", "--scope", "global")
    assert ran.code == 2
    assert (ran.error()["code"], ran.error()["pointer"]) == ("invalid_argument", "/scope")
    assert not (tmp_path / "assay.toml").exists()


def test_cli_help_after_double_dash_is_a_literal(assay_cli: Runner) -> None:
    """`assay describe -- --help` looks up an operation named --help: unknown_operation, never help."""
    ran = assay_cli("describe", "--", "--help")
    assert ran.code == 2
    assert ran.stdout == ""
    error = ran.error()
    assert error["code"] == "unknown_operation"
    assert "'--help'" in error["message"]
    assert "Usage" not in ran.stderr


def test_cli_option_after_double_dash_is_a_literal(assay_cli: Runner) -> None:
    """`--format json` after `--` is a literal, not an option."""
    ran = assay_cli("describe", "--", "--format")
    assert (ran.code, ran.error()["code"]) == (2, "unknown_operation")


def test_cli_extra_literal_is_usage_error(assay_cli: Runner) -> None:
    """A literal after `--` for a command that takes none is usage_error."""
    ran = assay_cli("canonical", "--", "--digest", stdin="{}")
    assert (ran.code, ran.error()["code"]) == (2, "usage_error")
    assert ran.stdout == ""


def test_cli_help_before_double_dash(assay_cli: Runner) -> None:
    """`--help` before `--` prints the command's help and exits 0."""
    ran = assay_cli("describe", "--help")
    assert ran.code == 0
    assert "Usage: assay describe" in ran.stdout


def test_cli_unavailable_ledger_exits_4(assay_cli: Runner, tmp_path: Path) -> None:
    """A ledger that cannot be created or opened for a write exits 4 with a retryable error."""
    assert assay_cli("init").code == 0
    (tmp_path / "plain-file").write_text("")
    ran = assay_cli("put", "--db", str(tmp_path / "plain-file" / "x.db"), "--data-file", "-",
                    "--", "knowledge:x", stdin="{}")
    assert ran.code == 4
    assert ran.error()["retryable"] is True


def test_cli_internal_error_exits_70() -> None:
    """A bug (a non-assay exception) exits 70 with internal_error and no traceback."""
    proc = _crash()
    assert proc.returncode == 70
    assert proc.stdout == ""
    envelope = json.loads(proc.stderr.strip())
    assert envelope["error"]["code"] == "internal_error"
    assert "ZeroDivisionError" in envelope["error"]["message"]
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(("args", "env"), [(("--debug",), {}), ((), {"ASSAY_DEBUG": "1"})])
def test_cli_internal_error_debug_shows_traceback(args: tuple[str, ...], env: dict[str, str]) -> None:
    """With --debug or ASSAY_DEBUG=1 an internal error also prints the traceback."""
    proc = _crash(*args, env=env)
    assert proc.returncode == 70
    assert "Traceback" in proc.stderr and "planted bug" in proc.stderr


def test_cli_debug_before_the_command_shows_traceback() -> None:
    """`assay --debug COMMAND ...` works as `assay COMMAND --debug ...` does."""
    proc = _crash(before=("--debug",))
    assert proc.returncode == 70
    assert "Traceback" in proc.stderr and "planted bug" in proc.stderr


def test_cli_internal_error_action_puts_debug_after_assay() -> None:
    """The internal error's action tells to rerun with --debug right after `assay`."""
    envelope = json.loads(_crash("--format", "json").stderr.strip().splitlines()[-1])
    assert envelope["error"]["action"] == (
        "Rerun it as 'assay --debug crash now ...' to see the traceback, and report it.")


def test_cli_debug_before_a_plain_command_runs_it(assay_cli: Runner) -> None:
    """A plain command with --debug first answers as without it."""
    ran = assay_cli("--debug", "describe", "--", "canonical")
    assert ran.code == 0, ran.stderr
    assert ran.json()["data"]["operations"][0]["name"] == "canonical"


def test_cli_debug_alone_or_before_a_launcher_is_accepted(assay_cli: Runner) -> None:
    """The top-level command takes --debug too: `assay --debug --help` prints the help."""
    ran = assay_cli("--debug", "--help")
    assert ran.code == 0 and "Usage: assay" in ran.stdout
    assert assay_cli("--debug", "demo", "--help").code == 0


def test_cli_missing_literal_names_it_in_the_action(assay_cli: Runner) -> None:
    """`assay work check` without an id says where the id goes, like every refused command line."""
    ran = assay_cli("work", "check")
    error = ran.error()
    assert (ran.code, error["code"]) == (2, "usage_error")
    assert error["action"] == ("Give ID after --: 'assay work check [OPTIONS] -- ID' "
                               "(see 'assay work check --help').")


@pytest.mark.parametrize(("args", "action"), [
    (("todo", "add"), "See 'assay todo add --help' for its options and arguments."),
    (("get", "--colour", "red", "--", "knowledge:x"),
     "See 'assay get --help' for its options and arguments."),
    (("no-such-command",), "Run 'assay --help' for the commands."),
])
def test_cli_usage_error_has_an_action(assay_cli: Runner, args: tuple[str, ...],
                                       action: str) -> None:
    """Every command line click refuses carries an action naming the help to read."""
    ran = assay_cli(*args)
    assert ran.code == 2 and ran.error()["action"] == action


def test_cli_tty_output_is_readable(tmp_path: Path) -> None:
    """On a terminal a result is readable text, not a JSON envelope."""
    status, out = _tty("describe", "--", "canonical", cwd=tmp_path)
    assert status == 0
    assert out.startswith("describe")
    assert '"ok"' not in out
    assert "canonical" in out


def test_cli_tty_format_json_forces_json(tmp_path: Path) -> None:
    """`--format json` prints the JSON envelope even on a terminal."""
    status, out = _tty("describe", "--format", "json", "--", "canonical", cwd=tmp_path)
    assert status == 0
    assert json.loads(out)["ok"] is True


def test_cli_tty_error_is_readable(tmp_path: Path) -> None:
    """On a terminal an error shows its code, message and next action as text."""
    status, out = _tty("describe", "--", "nope", cwd=tmp_path)
    assert status == 2
    assert "error [unknown_operation]: unknown operation 'nope'" in out
    assert "next: Run 'assay describe'" in out


def test_cli_tty_error_with_format_json_is_json(tmp_path: Path) -> None:
    """With `--format json` an error is the JSON error object even on a terminal."""
    status, out = _tty("describe", "--format", "json", "--", "nope", cwd=tmp_path)
    assert status == 2
    assert json.loads(out)["error"]["code"] == "unknown_operation"


_CLICK_PATH = "import sys\nfrom assay.cli.app import run\nsys.exit(run(sys.argv[1:]))"


@pytest.mark.parametrize("flags", [(), ("--digest",), ("--fingerprint",),
                                   ("--fingerprint", "--digest")])
@pytest.mark.parametrize("body", [b'{"b":[1.0,-0,1e21],"a":"\\u20ac"}', b"[NaN]",
                                  b'{"a":1,"a":2}', b'"\xff"', b""])
def test_cli_canonical_short_path_matches_click_path(flags: tuple[str, ...], body: bytes,
                                                     tmp_path: Path) -> None:
    """`assay canonical` without click prints exactly what the click-built command prints."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")}
    short = subprocess.run([str(ASSAY), "canonical", *flags], input=body, capture_output=True,
                           cwd=tmp_path, env=env, timeout=60, check=False)
    full = subprocess.run([sys.executable, "-c", _CLICK_PATH, "canonical", *flags], input=body,
                          capture_output=True, cwd=tmp_path, env=env, timeout=60, check=False)
    assert (short.returncode, short.stdout, short.stderr) == (
        full.returncode, full.stdout, full.stderr)


# Runs the real entry point, then reports what the cyclic collector still watches.
_FROZEN = """
import gc, sys
from assay.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    sys.stderr.write(f"{exc.code} {gc.get_freeze_count()} {gc.isenabled()}")
"""


def test_cli_entry_point_freezes_the_collector_after_answering(tmp_path: Path) -> None:
    """Once a command has answered, its live objects are frozen (skipped at exit) and its status kept."""
    proc = subprocess.run([sys.executable, "-c", _FROZEN, "--version"], capture_output=True,
                          text=True, cwd=tmp_path, timeout=60, check=False)
    code, frozen, enabled = proc.stderr.split()
    assert proc.stdout == f"assay {assay.__version__}\n"
    assert (code, enabled) == ("0", "True") and int(frozen) > 1000
