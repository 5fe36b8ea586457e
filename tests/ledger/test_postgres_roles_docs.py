"""docs/ledger.md's team set-up on PostgreSQL, run as written against a fresh schema.

The commands are read from the page's first shell block under "Team set-up
on PostgreSQL" and run by bash in a new git project; only the server
address, the schema and the role names are replaced (the roles are made
with names unique to the test and dropped afterwards).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from assay_testing import make_project
from pg_roles_testing import owner_sql, role_url

pytestmark = pytest.mark.postgres

DOC = Path(__file__).parents[2] / "docs" / "ledger.md"
EXAMPLE = "postgresql://postgres@db.example/team"


def _blocks() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## Team set-up on PostgreSQL"):]
    section = section[:section.index("\n## ", 3)]
    return re.findall(r"```sh\n(.*?)```", section, re.DOTALL)


def test_docs_team_setup_runs_from_a_fresh_database(tmp_path: Path, pg_url: str) -> None:
    """The four set-up commands make a ledger where the agent writes as itself and only the reviewer approves."""
    import uuid

    setup, connections = _blocks()[:2]
    assert len([line for line in setup.splitlines() if line.strip()]) == 4
    schema = pg_url.rpartition("assay_schema=")[2]
    tag = uuid.uuid4().hex[:10]
    names = {"alice": f"ad_{tag}_alice", "coder": f"ad_{tag}_coder"}
    owner = pg_url
    script = setup.replace(EXAMPLE, owner)
    for name, role in names.items():
        script = re.sub(rf"\b{name}\b", role, script)
    project = make_project(tmp_path / "team", git=True, ledger=False,
                           extra_toml=f'\n[gate]\nprincipal = "{names["coder"]}"\n')
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env.pop("ASSAY_DB", None)
    env.pop("ASSAY_PRINCIPAL", None)
    # psql takes the libpq URL without assay's own query parameter.
    script = script.replace('psql "$ASSAY_DB"', f'psql "{owner.partition("?")[0]}"')
    try:
        done = subprocess.run(["bash", "-ec", script], cwd=project.root, env=env,
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        urls = {name: role_url(owner, names[name])
                for name in re.findall(r"postgresql://(\w+)@db\.example/team", connections)}
        assert set(urls) == {"alice", "coder"}

        def assay(who: str, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
            return subprocess.run([str(Path(sys.executable).parent / "assay"), *args],
                                  cwd=project.root, env={**env, "ASSAY_DB": urls[who]},
                                  input=stdin, capture_output=True, text=True, timeout=60,
                                  check=False)

        wrote = assay("coder", "put", "--data-file", "-", "--", "note:plan", stdin="{}")
        assert wrote.returncode == 0, wrote.stderr
        claimed = assay("coder", "put", "--as", names["alice"], "--data-file", "-", "--",
                        "note:plan", stdin="{}")
        assert json.loads(claimed.stderr)["error"]["code"] == "principal_not_role"
        roles = json.loads(assay("alice", "ledger", "roles").stdout)["data"]
        assert roles["session"] == {"role": names["alice"], "owner": False, "reviewer": True}
        assert names["coder"] in roles["groups"]["assay_agent"]["members"]
        assert (project.root / ".claude" / "settings.json").exists()
        assert owner_sql("SELECT written_by FROM record_versions", schema=schema) == [
            (names["coder"],)]
    finally:
        for role in names.values():
            owner_sql(f"DROP ROLE IF EXISTS {role}")
