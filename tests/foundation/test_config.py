"""assay.toml: project discovery, the closed schema, and `assay init`."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from foundation_cli import Runner, cli_in
from hypothesis import given
from hypothesis import strategies as st

from assay.config import (
    CONFIG_NAME,
    STATE_DIR,
    STATE_IGNORE,
    find_project,
    init_project,
    load_project,
    validate_scope,
)
from assay.errors import AssayError, UsageError


@pytest.fixture
def assay_cli(tmp_path: Path) -> Runner:
    """The console script, run in this test's tmp_path."""
    return cli_in(tmp_path)


def _write(root: Path, text: str) -> Path:
    (root / CONFIG_NAME).write_text(text, encoding="utf-8")
    return root


def _git_init(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True)


def _config_error(root: Path, text: str) -> AssayError:
    _write(root, text)
    with pytest.raises(AssayError) as info:
        load_project(root)
    return info.value


def test_find_project_walks_up(tmp_path: Path) -> None:
    """The project root is the nearest directory at or above cwd holding assay.toml."""
    _write(tmp_path, '[project]\nname = "outer"\n')
    deep = tmp_path / "a" / "b" / "c"
    deep.mkdir(parents=True)
    assert find_project(deep) == tmp_path.resolve()
    assert load_project(deep).name == "outer"


def test_find_project_prefers_nearest(tmp_path: Path) -> None:
    """A nested project shadows the one above it."""
    _write(tmp_path, '[project]\nname = "outer"\n')
    inner = tmp_path / "inner"
    inner.mkdir()
    _write(inner, '[project]\nname = "inner"\n')
    assert load_project(inner / ".").scope == "project:inner"


def test_find_project_none(tmp_path: Path) -> None:
    """Without assay.toml anywhere above, there is no project."""
    assert find_project(tmp_path) is None


def test_load_project_not_found(tmp_path: Path) -> None:
    """Loading where no project exists is project_not_found with the init action."""
    with pytest.raises(AssayError) as info:
        load_project(tmp_path)
    assert info.value.code == "project_not_found"
    assert "assay init" in (info.value.action or "")


def test_load_project_cwd_not_a_directory(tmp_path: Path) -> None:
    """A --cwd that is not a directory is a usage error, invalid_cwd."""
    with pytest.raises(UsageError) as info:
        load_project(tmp_path / "missing")
    assert (info.value.code, info.value.pointer) == ("invalid_cwd", "/cwd")
    assert info.value.exit_code == 2


@pytest.mark.parametrize("name", ["x" * 300, "nul\x00byte"])
def test_load_project_unusable_cwd(tmp_path: Path, name: str) -> None:
    """A --cwd the OS refuses (name beyond NAME_MAX, embedded NUL) is invalid_cwd at /cwd."""
    with pytest.raises(UsageError) as info:
        load_project(tmp_path / name)
    assert (info.value.code, info.value.pointer) == ("invalid_cwd", "/cwd")


@pytest.mark.parametrize("name", ["x" * 300, "nul\x00byte", "missing"])
def test_init_unusable_cwd(tmp_path: Path, name: str) -> None:
    """init in a directory that does not exist or cannot be named is invalid_cwd, writing nothing."""
    with pytest.raises(UsageError) as info:
        init_project(tmp_path / name)
    assert (info.value.code, info.value.pointer) == ("invalid_cwd", "/cwd")
    assert list(tmp_path.iterdir()) == []


def test_init_cli_over_long_cwd_exits_2(assay_cli: Runner) -> None:
    """`assay init --cwd` with a name beyond NAME_MAX exits 2 with invalid_cwd, not an internal error."""
    ran = assay_cli("init", "--cwd", "x" * 300)
    assert ran.code == 2
    assert ran.error()["code"] == "invalid_cwd"


def test_load_project_defaults(tmp_path: Path) -> None:
    """An empty assay.toml names the project after its directory, principal agent, default ledger."""
    root = tmp_path / "My Project!"
    root.mkdir()
    project = load_project(_write(root, ""))
    assert project.name == "My-Project"
    assert project.principal == "agent"
    assert project.ledger_url is None
    assert project.default_ledger_path == root.resolve() / STATE_DIR / "ledger.db"
    assert project.readable_scopes == ("project:My-Project", "global")


def test_load_project_settings(tmp_path: Path) -> None:
    """Every known key is read; the project's own scope is not repeated among admitted ones."""
    project = load_project(_write(tmp_path, (
        '[project]\nname = "demo"\nprincipal = "ci-bot"\n'
        'admitted_scopes = ["project:old", "project:demo", "project:old"]\n'
        '[ledger]\nurl = "postgresql://db/assay"\n')))
    assert project.scope == "project:demo"
    assert project.admitted_scopes == ("project:old",)
    assert project.readable_scopes == ("project:demo", "project:old", "global")
    assert project.principal == "ci-bot"
    assert project.ledger_url == "postgresql://db/assay"


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('bogus_section_xyz = 1\n', "/bogus_section_xyz"),
        ('[bogus_section_xyz]\na = 1\n', "/bogus_section_xyz"),
        ('[project]\nname = "x"\ncolour = "red"\n', "/project/colour"),
        ('[ledger]\npath = "x.db"\n', "/ledger/path"),
        ('project = 3\n', "/project"),
        ('[project]\nname = "bad name"\n', "/project/name"),
        ('[project]\nname = 7\n', "/project/name"),
        ('[project]\nadmitted_scopes = "project:a"\n', "/project/admitted_scopes"),
        ('[project]\nadmitted_scopes = ["project:a", "global"]\n', "/project/admitted_scopes/1"),
        ('[project]\nadmitted_scopes = ["project:"]\n', "/project/admitted_scopes/0"),
        ('[project]\nprincipal = "two words"\n', "/project/principal"),
        ('[ledger]\nurl = "  "\n', "/ledger/url"),
    ],
)
def test_load_project_rejects_bad_config(tmp_path: Path, text: str, where: str) -> None:
    """Unknown keys and sections and malformed values are invalid_config with the exact pointer."""
    err = _config_error(tmp_path, text)
    assert (err.code, err.pointer) == ("invalid_config", where)
    assert err.details["path"] == str((tmp_path / CONFIG_NAME).resolve())


def test_load_project_unknown_key_is_named(tmp_path: Path) -> None:
    """The message names the unknown key."""
    err = _config_error(tmp_path, '[project]\ncolour = "red"\n')
    assert "colour" in err.message


def test_load_project_rejects_invalid_toml(tmp_path: Path) -> None:
    """A file that is not TOML is invalid_config without a pointer."""
    err = _config_error(tmp_path, "[project\n")
    assert (err.code, err.pointer) == ("invalid_config", None)


def test_load_project_rejects_invalid_utf8(tmp_path: Path) -> None:
    """A file that is not UTF-8 is invalid_config."""
    (tmp_path / CONFIG_NAME).write_bytes(b'[project]\nname = "\xff"\n')
    with pytest.raises(AssayError) as info:
        load_project(tmp_path)
    assert info.value.code == "invalid_config"


def test_init_creates_config_and_state_dir(tmp_path: Path) -> None:
    """init writes assay.toml and .assay/ and reports created."""
    project, created = init_project(tmp_path, scope="project:demo")
    assert created is True
    assert project.scope == "project:demo"
    assert (tmp_path / STATE_DIR).is_dir()
    assert load_project(tmp_path).name == "demo"


def test_init_records_db(tmp_path: Path) -> None:
    """init --db writes the ledger URL into assay.toml."""
    project, _ = init_project(tmp_path, db="postgresql://h/db")
    assert project.ledger_url == "postgresql://h/db"
    assert 'url = "postgresql://h/db"' in (tmp_path / CONFIG_NAME).read_text()


def test_init_outside_git_writes_no_gitignore(tmp_path: Path) -> None:
    """Outside a git work tree init leaves .gitignore alone."""
    init_project(tmp_path)
    assert not (tmp_path / ".gitignore").exists()


def test_init_in_git_ignores_state_dir_once(tmp_path: Path) -> None:
    """In a git work tree init adds .assay/ to .gitignore, once, and git then ignores it."""
    _git_init(tmp_path)
    (tmp_path / ".gitignore").write_text("node_modules/", encoding="utf-8")
    init_project(tmp_path)
    init_project(tmp_path)
    assert (tmp_path / ".gitignore").read_text() == "node_modules/\n" + "".join(
        line + "\n" for line in STATE_IGNORE)
    (tmp_path / STATE_DIR / "ledger.db").write_bytes(b"x")
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"],
                            cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert ".assay" not in status


def test_init_keeps_attestations_and_public_keys_committable(tmp_path: Path) -> None:
    """After init, git sees attestations and public keys under .assay/ but never a private key."""
    _git_init(tmp_path)
    init_project(tmp_path)
    state = tmp_path / STATE_DIR
    (state / "attestations").mkdir()
    (state / "attestations" / "x.intoto.jsonl").write_text("{}\n")
    (state / "keys").mkdir()
    for name in ("attestation.key", "attestation.pub.json", "alice.key", "alice.pub.json"):
        (state / "keys" / name).write_text("k")
    (state / "ledger.db").write_bytes(b"x")
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"],
                            cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    seen = sorted(line[3:] for line in status.splitlines() if ".assay" in line)
    assert seen == [".assay/attestations/x.intoto.jsonl", ".assay/keys/alice.pub.json",
                    ".assay/keys/attestation.pub.json"]


def test_init_keeps_existing_ignore_entry(tmp_path: Path) -> None:
    """An existing /.assay entry is respected, not duplicated."""
    _git_init(tmp_path)
    (tmp_path / ".gitignore").write_text("/.assay\n", encoding="utf-8")
    init_project(tmp_path)
    assert (tmp_path / ".gitignore").read_text() == "/.assay\n"


def test_init_never_overwrites(tmp_path: Path) -> None:
    """A second init leaves an existing assay.toml byte for byte and reports created false."""
    init_project(tmp_path, scope="project:demo")
    path = tmp_path / CONFIG_NAME
    path.write_text(path.read_text() + "# edited by hand\n", encoding="utf-8")
    before = path.read_bytes()
    project, created = init_project(tmp_path, scope="project:demo")
    assert created is False
    assert project.name == "demo"
    assert path.read_bytes() == before


@pytest.mark.parametrize(("kwargs"), [{"scope": "project:other"}, {"db": "other.db"}])
def test_init_conflicting_settings_is_project_exists(tmp_path: Path, kwargs: dict[str, str]) -> None:
    """init with a scope or db that differ from the existing file is project_exists, writing nothing."""
    init_project(tmp_path, scope="project:demo", db="ledger.db")
    before = (tmp_path / CONFIG_NAME).read_bytes()
    with pytest.raises(AssayError) as info:
        init_project(tmp_path, **kwargs)
    assert info.value.code == "project_exists"
    assert (tmp_path / CONFIG_NAME).read_bytes() == before


@pytest.mark.parametrize("scope", ["global", "project:", "project:bad name", "team:x"])
def test_init_rejects_bad_scope(tmp_path: Path, scope: str) -> None:
    """init accepts only project:NAME scopes (invalid_scope at /scope) and writes nothing."""
    with pytest.raises(AssayError) as info:
        init_project(tmp_path, scope=scope)
    assert (info.value.code, info.value.pointer) == ("invalid_scope", "/scope")
    assert not (tmp_path / CONFIG_NAME).exists()


def test_init_cli_creates_project(assay_cli: Runner, tmp_path: Path) -> None:
    """`assay init --scope project:demo` through the console script creates the project."""
    _git_init(tmp_path)
    ran = assay_cli("init", "--scope", "project:demo")
    assert ran.code == 0, ran.stderr
    envelope = ran.json()
    assert envelope["ok"] is True
    assert envelope["data"]["scope"] == "project:demo"
    assert envelope["data"]["created"] is True
    assert (tmp_path / ".gitignore").read_text() == "".join(line + "\n" for line in STATE_IGNORE)


def test_init_cli_cwd_option(assay_cli: Runner, tmp_path: Path) -> None:
    """`assay init --cwd DIR` initialises DIR, not the current directory."""
    target = tmp_path / "proj"
    target.mkdir()
    ran = assay_cli("init", "--cwd", str(target))
    assert ran.code == 0, ran.stderr
    assert (target / CONFIG_NAME).is_file()
    assert not (tmp_path / CONFIG_NAME).exists()


def test_init_cli_conflict_exit_status(assay_cli: Runner, tmp_path: Path) -> None:
    """A conflicting second `assay init` exits 3 (a conflict) with project_exists on stderr."""
    assert assay_cli("init", "--scope", "project:one").code == 0
    ran = assay_cli("init", "--scope", "project:two")
    assert ran.code == 3
    assert ran.error()["code"] == "project_exists"


@given(st.text(st.sampled_from("aZ09._-+ :/é\x00\u212a"), max_size=5) | st.just("a" * 128)
       | st.just("a" * 129))
def test_validate_scope_name_grammar(name: str) -> None:
    """project:NAME is a scope exactly when NAME is [A-Za-z0-9][A-Za-z0-9._-]{0,127}."""
    valid = re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}", name) is not None
    try:
        assert validate_scope("project:" + name) == "project:" + name and valid
    except AssayError as exc:
        assert exc.code == "invalid_scope" and not valid
