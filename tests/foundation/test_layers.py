"""Import layering (import-linter), cheap start-up imports, and the pinned public API."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import assay

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"

# Runs the CLI entry point in-process and reports which heavy top-level packages it loaded.
_PROBE = """
import json, sys
from assay.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
sys.stderr.write(json.dumps(sorted(sys.modules)))
"""


def _loaded(*args: str, stdin: bytes = b"", full: bool = False,
            cwd: Path | None = None) -> set[str]:
    """The modules (top-level packages unless ``full``) the CLI loaded for ``args``."""
    proc = subprocess.run([sys.executable, "-c", _PROBE, *args], input=stdin, cwd=cwd,
                          capture_output=True, timeout=60, check=True)
    modules = json.loads(proc.stderr.decode().strip().splitlines()[-1])
    return set(modules) if full else {m.split(".")[0] for m in modules}


def _lint(root: Path, *, pythonpath: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = None
    if pythonpath is not None:
        import os

        env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    return subprocess.run([str(LINT_IMPORTS), "--no-cache", "--no-logo", str(root / "pyproject.toml")],
                          cwd=root, capture_output=True, text=True, timeout=120, env=env,
                          check=False)


def test_layers_contract_kept() -> None:
    """The import-linter layers contract in pyproject.toml holds for the whole package."""
    proc = _lint(ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Layers point down only KEPT" in proc.stdout


@pytest.mark.parametrize("package", ["assay.loop", "assay.packet"])
def test_layers_package_forms_no_import_circle(package: str) -> None:
    """No module of the package imports, at top level or in a function, one that imports it back."""
    import grimp

    graph = grimp.build_graph("assay")
    inside = sorted(m for m in graph.modules if m.startswith(package + "."))
    circles = [(a, b) for a in inside for b in graph.find_modules_directly_imported_by(a)
               if b.startswith(package + ".") and graph.chain_exists(importer=b, imported=a)]
    assert circles == []


def test_layers_contract_catches_an_upward_import(tmp_path: Path) -> None:
    """A base module importing a surface breaks the contract (so the check above can fail)."""
    src = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "assay", src / "assay",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    canonical = src / "assay" / "canonical.py"
    canonical.write_text(canonical.read_text() + "\nimport assay.cli  # upward\n")
    proc = _lint(tmp_path, pythonpath=src)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "assay.canonical -> assay.cli" in proc.stdout


@pytest.mark.parametrize("heavy", ["click", "pydantic", "mcp", "psycopg", "rich"])
def test_version_imports_nothing_heavy(heavy: str) -> None:
    """`assay --version` loads neither click nor pydantic, the MCP SDK, psycopg or rich."""
    assert heavy not in _loaded("--version")


@pytest.mark.parametrize("heavy", ["click", "pydantic", "mcp", "psycopg", "rich"])
def test_canonical_digest_imports_nothing_heavy(heavy: str) -> None:
    """`assay canonical --digest` on a pipe loads no click, pydantic, MCP SDK, psycopg or rich."""
    assert heavy not in _loaded("canonical", "--digest", stdin=b'{"a":[1,2]}')


def test_canonical_digest_loads_no_operation_module() -> None:
    """`assay canonical --digest` answers without loading the registry or any capability."""
    modules = _loaded("canonical", "--digest", stdin=b"{}", full=True)
    assert "assay.canonical" in modules
    assert [m for m in modules if m == "assay.ops" or m.startswith("assay.ops.")] == []


@pytest.mark.parametrize("heavy", ["mcp", "psycopg", "rich"])
def test_describe_imports_nothing_heavy(heavy: str) -> None:
    """Loading every operation module (`assay describe`) loads no MCP SDK, psycopg or rich."""
    assert heavy not in _loaded("describe")


# What a plain `assay get` may load besides the ledger package (the ledger's own
# modules are its business): the entry point, the click-free call path, the
# registry with the one module declaring `get` and the registry's reading of
# a command line (argv), the base modules and config (with its TOML reader).
GET_MODULES = {"assay", "assay.canonical", "assay.cli", "assay.cli.direct", "assay.cli.render",
               "assay.config", "assay.errors", "assay.ids", "assay.ops", "assay.ops.argv",
               "assay.ops.bounds", "assay.ops.ledger", "assay.paging", "assay.tomltext",
               "assay.value"}
# Never on the path of a plain operation call: click (help and usage errors
# only), the other surfaces' libraries, and standard modules only some
# commands need (git and commands run in subprocesses; platform and uuid come
# with click; secrets and random mint a new ledger's epoch; importlib.resources
# with tempfile, shutil and the compressors reads a new ledger's DDL; threading
# serves only a writer that waits in the writers' queue; hashlib and OpenSSL only
# a process that hashes much, see assay.canonical.digest_bytes).
NEVER_ON_A_CALL = {"click", "pydantic", "mcp", "psycopg", "rich", "anyio", "subprocess",
                   "platform", "uuid", "secrets", "random", "tempfile", "shutil", "bz2", "lzma",
                   "threading", "hashlib"}
# Standard modules a plain `get`, `put` or `work check` does without: the value classes on
# their path are assay.value's, not dataclasses (which imports inspect, ast,
# dis and tokenize); the assay.toml `assay init` writes is plain TOML, read
# without tomllib (which imports string and compiles regular expressions); the
# modules on their path import typing for type checkers only.
NEVER_ON_GET_OR_PUT = {"dataclasses", "inspect", "ast", "dis", "tokenize", "tomllib", "string",
                       "typing"}


@pytest.fixture
def ledger_project(tmp_path: Path) -> Path:
    """A project whose SQLite ledger holds one intent, knowledge:x."""
    from assay.ops import Invocation, call

    root = tmp_path / "proj"
    root.mkdir()
    call("init", {"cwd": str(root)}, Invocation(cwd=str(root)))
    intent = {"version": 1, "brief": "b", "user_reference": "u", "boundaries": [],
              "non_goals": [], "requirements": [{"id": "R1", "text": "t", "acceptance": "a"}]}
    call("put", {"id": "knowledge:x", "data": {"intent": intent}}, Invocation(cwd=str(root)))
    return root


def test_get_loads_only_its_operation_module(ledger_project: Path) -> None:
    """A plain `assay get` loads exactly GET_MODULES outside assay.ledger: no click, one operation module."""
    modules = _loaded("get", "--", "knowledge:x", full=True, cwd=ledger_project)
    ours = {m for m in modules if m == "assay" or m.startswith("assay.")}
    assert {m for m in ours if not m.startswith("assay.ledger")} == GET_MODULES
    assert "assay.ledger.postgres" not in ours
    assert {m.split(".")[0] for m in modules} & NEVER_ON_A_CALL == set()
    assert modules & NEVER_ON_GET_OR_PUT == set()


def test_put_loads_only_its_operation_module(ledger_project: Path) -> None:
    """A plain `assay put` from standard input loads no click and no other operation module."""
    modules = _loaded("put", "--data-file", "-", "--", "knowledge:y", stdin=b'{"b":2}',
                      full=True, cwd=ledger_project)
    assert {m for m in modules if m.startswith("assay.ops.")} == {"assay.ops.argv",
                                                                  "assay.ops.bounds",
                                                                  "assay.ops.ledger"}
    assert [m for m in modules if m.startswith("assay.intent")] == []  # data holds no intent
    assert {m.split(".")[0] for m in modules} & NEVER_ON_A_CALL == set()
    assert modules & NEVER_ON_GET_OR_PUT == set()


def test_work_check_loads_no_other_operation_group(ledger_project: Path) -> None:
    """A plain `assay work check` loads no click and, of the operation modules, intent's and its helpers."""
    modules = _loaded("work", "check", "--", "knowledge:x", full=True, cwd=ledger_project)
    assert {m for m in modules if m.startswith("assay.ops.")} <= {"assay.ops.argv",
                                                                  "assay.ops.bounds",
                                                                  "assay.ops.intent"}
    assert {m.split(".")[0] for m in modules} & NEVER_ON_A_CALL == set()
    assert modules & NEVER_ON_GET_OR_PUT == set()


def test_frozen_value_only_on_the_start_up_path(ledger_project: Path) -> None:
    """Every module declaring a frozen_value class is one a plain get, put or work check loads."""
    import re

    declaring = {".".join(path.relative_to(ROOT / "src").with_suffix("").parts).removesuffix(
                     ".__init__")
                 for path in (ROOT / "src/assay").rglob("*.py")
                 if re.search(r"^@(ordered_)?frozen_value\b", path.read_text(), re.MULTILINE)
                 and path.name != "value.py"}
    loaded = (_loaded("get", "--", "knowledge:x", full=True, cwd=ledger_project)
              | _loaded("put", "--data-file", "-", "--", "knowledge:y", stdin=b'{"b":2}',
                        full=True, cwd=ledger_project)
              | _loaded("work", "check", "--", "knowledge:x", full=True, cwd=ledger_project))
    assert len(declaring) > 5
    assert declaring - loaded == set()


def test_help_still_loads_click() -> None:
    """`assay get --help` goes through click, so the probe above would notice a pin gone stale."""
    assert "click" in _loaded("get", "--help")


def test_public_api_pinned() -> None:
    """assay.__all__ is exactly the curated public names, sorted, and each resolves."""
    assert assay.__all__ == [
        "AssayError",
        "__version__",
        "call",
        "canonical_text",
        "digest",
        "fingerprint",
    ]
    assert assay.__all__ == sorted(assay.__all__)
    for name in assay.__all__:
        assert getattr(assay, name) is not None


def test_public_api_names_are_the_real_objects() -> None:
    """The lazy re-exports are the very objects of their home modules."""
    from assay import canonical, errors, ops

    assert assay.AssayError is errors.AssayError
    assert assay.canonical_text is canonical.canonical_text
    assert assay.digest is canonical.digest
    assert assay.fingerprint is canonical.fingerprint
    assert assay.call is ops.call


def test_public_api_unknown_name() -> None:
    """An unknown attribute of assay is an AttributeError."""
    with pytest.raises(AttributeError):
        assay.no_such_thing  # noqa: B018


def test_public_api_call_runs_an_operation() -> None:
    """assay.call runs a registered operation and returns its envelope and exit status."""
    envelope, code = assay.call("canonical", {"text": '{"b":1,"a":2}'})
    assert code == 0
    assert envelope["ok"] is True
    assert envelope["data"]["canonical"] == '{"a":2,"b":1}'
