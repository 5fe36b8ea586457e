"""assay.toml's plain-TOML reader: what tomllib returns, or nothing (tomllib then parses)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.config import DEFAULT_EVIDENCE_IGNORE, init_project, load_project
from assay.errors import AssayError
from assay.tomltext import plain_toml
from assay_testing import examples


def _ordered(value: Any) -> Any:
    """``value`` with every table as its list of pairs, so key order is compared too."""
    if isinstance(value, dict):
        return [(key, _ordered(item)) for key, item in value.items()]
    if isinstance(value, list):
        return [_ordered(item) for item in value]
    return (type(value).__name__, value)


def _agrees(text: str) -> Any:
    """plain_toml(text), after checking it is None or exactly tomllib's parse."""
    got = plain_toml(text)
    if got is not None:
        assert _ordered(got) == _ordered(tomllib.loads(text)), text
    return got


PLAIN = [
    "",
    "\n\n# only a comment\n",
    '[project]\nname = "demo"\nadmitted_scopes = []\n',
    ('[project]\nname = "demo"\nadmitted_scopes = ["project:old", "project:older",]\n'
     'principal = "agent"\n\n[ledger]\nurl = "postgresql://u@h/db" # the shared one\n'),
    ('[evidence]\nignore = [".pytest_cache", "__pycache__"]\n\n'
     '[evidence.commands.unit]\nargv = ["pytest", "-q", "tests"]\ntimeout = 600\n'
     'required = true\nenabled = false\nphases = [ "before" , "after" ]\nenv = []\n'
     '\n[evidence.commands.unit.requirements]\n"tests/test_a.py::*" = "R1"\n'
     '"tests/test_b.py::test x" = ["R2", "R3"]\n'),
    ('[goals.ship]\npath = "docs/goal.md"\n[goals]\n[loop]\nmax_rounds = +20\nstall_rounds = 0\n'
     'lease_seconds = -0\n  gate = false\n\t[memory]\n enabled\t=\ttrue\n'),
    '"" = 1\n"a.b" = "c # not a comment"\nmixed = [1, "two", true]\nunicode = "é ü 字"\n',
    '[a.b]\nx = 1\n[a]\ny = 2\n[a.c]\nz = 3\n',
]

NOT_PLAIN = [
    'name = "a\\u0041"\n',            # an escape
    "name = 'literal'\n",             # a literal string
    'name = """multi"""\n',           # a multi-line string
    "ratio = 1.5\n",
    "day = 1979-05-27\n",
    "big = 1_000\n",
    "hex = 0x1F\n",
    "lead = 01\n",
    "huge = 12345678901234567890\n",
    "t = {a = 1}\n",                  # an inline table
    "a.b = 1\n",                      # a dotted key
    "[[runs]]\nx = 1\n",              # an array of tables
    "[ spaced ]\n",
    '[a."quoted"]\n',
    "x = [\n  1,\n]\n",               # a multi-line array
    "x = [[1], [2]]\n",
    "x = 1\r\n",
    "[a]\n[a]\n",                     # a table declared twice
    "x = 1\nx = 2\n",                 # a key declared twice
    "[a.b]\n[a]\nb = 1\n",            # a key over a table
    "a = 1\n[a.b]\n",                 # a table under a value
    "x = 1 2\n",
    "x = [1 2]\n",
    "x = [1,,2]\n",
    "x = [,]\n",
    "x =\n",
    "= 1\n",
    "x = truex\n",
    "x = nan\n",
    '"unterminated = 1\n',
    'x = "a" "b"\n',
    "x = 1 # bell \x07\n",
    "\ufeffx = 1\n",
]


@pytest.mark.parametrize("text", PLAIN)
def test_plain_toml_reads_plain_documents(text: str) -> None:
    """A plain document is read without tomllib, exactly as tomllib reads it."""
    assert _agrees(text) is not None


@pytest.mark.parametrize("text", NOT_PLAIN)
def test_plain_toml_leaves_the_rest_to_tomllib(text: str) -> None:
    """Anything outside plain TOML, valid or not, is left to tomllib."""
    assert plain_toml(text) is None


_FRAGMENTS = ["[", "]", "[[", "]]", ".", "=", " ", "\t", "\n", "\r", "#", ",", '"', "'", "\\",
              "{", "}", "a", "b", "_", "-", "0", "1", "7", "+", "true", "false", "x =", "é",
              "\x00", "\x7f", "\ufeff", '"""', "1.5", "[a]\n", "[a.b]\n", "a = 1\n", 'b = "s"\n',
              "c = [1, 2]\n", "# c\n", "\n\n"]


@settings(max_examples=examples(600), deadline=None)
@given(st.lists(st.sampled_from(_FRAGMENTS), max_size=24).map("".join))
def test_plain_toml_never_differs_from_tomllib(text: str) -> None:
    """On any text, plain_toml gives None or what tomllib gives (and tomllib accepts it)."""
    _agrees(text)


def test_load_project_reads_what_init_writes_without_tomllib(tmp_path: Path) -> None:
    """The assay.toml that `assay init` writes is plain, and loads as before."""
    project, _ = init_project(tmp_path, scope="project:demo", db="x.db")
    text = (tmp_path / "assay.toml").read_text(encoding="utf-8")
    assert _agrees(text) is not None
    assert (project.name, project.ledger_url, project.evidence_ignore) == (
        "demo", "x.db", DEFAULT_EVIDENCE_IGNORE)


def test_load_project_parses_other_toml_with_tomllib(tmp_path: Path) -> None:
    """A document outside plain TOML loads through tomllib, escapes and all."""
    (tmp_path / "assay.toml").write_text("[project]\nname = 'lit'\n[loop]\nmax_rounds = 0x10\n",
                                         encoding="utf-8")
    project = load_project(tmp_path)
    assert (project.name, project.loop.max_rounds) == ("lit", 16)


def test_load_project_reports_tomllib_errors(tmp_path: Path) -> None:
    """A malformed document is still invalid_config with tomllib's own message."""
    (tmp_path / "assay.toml").write_text("[project]\nname = 1\nname = 2\n", encoding="utf-8")
    with pytest.raises(AssayError) as info:
        load_project(tmp_path)
    assert info.value.code == "invalid_config"
    assert "not valid TOML: Cannot overwrite a value (at line 3, column 9)" in info.value.message
