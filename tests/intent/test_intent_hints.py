"""Every command a hint prints runs as written.

The flow a new user follows (init, work new, evidence runs, work accept,
work check, a damaged record, prepare-capture, the report) runs through the
real ``assay`` command. Every ``next`` hint and error ``action`` it prints
that quotes a command (``'assay ...'``) is then run exactly as printed: it
must not be a usage error, and must not crash.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

from readiness_helpers import FAIL, PASS, commands_toml, damage

from assay_testing import CliResult, Project

QUOTED = re.compile(r"'(assay [^']+)'")
USAGE_CODES = {"invalid_argument", "missing_argument", "unknown_argument", "unknown_option",
               "usage_error", "unknown_operation", "file_unreadable"}


def _hints(result: CliResult) -> list[str]:
    """The quoted commands of a result's next hints and of its error's action."""
    texts: list[str] = []
    for stream in (result.stdout, result.stderr):
        for line in stream.splitlines():
            try:
                envelope: Any = json.loads(line)
            except ValueError:
                continue
            if isinstance(envelope, dict):
                texts.extend(envelope.get("next") or [])
                error = envelope.get("error") or {}
                texts.append(str(error.get("action") or ""))
                data = envelope.get("data") or {}
                if isinstance(data, dict):
                    texts.extend(i.get("action", "") for i in data.get("issues", []))
    return [m for text in texts for m in QUOTED.findall(text)]


def test_hints_printed_in_the_first_hour_flow_run_as_written(tmp_path: Path) -> None:
    """Each quoted command in a hint or action of the flow runs without a usage error or crash."""
    root = tmp_path / "proj"
    root.mkdir()
    project = Project(root=root)
    seen: list[str] = []

    def run(*args: str, **kw: Any) -> CliResult:
        result = project.run(*args, **kw)
        assert result.code != 70 and "Traceback" not in result.stderr, (args, result.stderr)
        seen.extend(h for h in _hints(result) if h not in seen)
        return result

    run("init")
    with open(root / "assay.toml", "a", encoding="utf-8") as handle:
        handle.write(commands_toml(ok=PASS, bad=FAIL))
    run("work", "new", "--brief", "Ship the export", "--requirement", "R1|CSV export|run ok",
        "--requirement", "R2|Header row|run ok", "--verify-with", "R1=ok", "--",
        "knowledge:calc")
    run("work", "check", "--", "knowledge:calc")
    run("evidence", "run", "--for", "knowledge:calc#R1", "--", "ok")
    run("evidence", "run", "--for", "knowledge:calc#R2", "--", "bad")
    run("work", "accept", "--from-run", "evidence:ok@1", "--", "knowledge:calc")
    run("work", "accept", "--requirement", "R2", "--evidence", "evidence:bad@1", "--status",
        "passed", "--", "knowledge:calc")
    record = json.loads(run("get", "--", "knowledge:calc").stdout)["data"]["record"]
    bad = json.loads(run("get", "--", "evidence:bad").stdout)["data"]["record"]
    results = record["data"]["acceptance"]["results"] + [
        {"requirement_id": "R2", "status": "passed", "notes": "it passed, trust me",
         "evidence": [{"id": "evidence:bad", "revision": 1, "data_sha256": bad["data_sha256"]}]}]
    acceptance = dict(record["data"]["acceptance"], results=results)
    run("put", "--expect-revision", str(record["revision"]), "--data-file", "-", "--",
        "knowledge:calc", input=json.dumps({**record["data"], "acceptance": acceptance}))
    run("work", "check", "--", "knowledge:calc")
    damage(project, "evidence:ok", 1, '{"changed":true}')
    run("work", "check", "--", "knowledge:calc")
    run("get", "--", "evidence:ok")
    run("work", "prepare-capture", "--brief", "b", "--user-reference", "u", "--requirement",
        "R1|t|a", "--", "knowledge:draft")
    run("report", "--intent", "knowledge:calc")

    assert len(seen) >= 6, seen
    for hint in seen:
        words = shlex.split(hint)
        assert words[0] == "assay"
        result = project.run(*words[1:])
        assert result.code in (0, 1), (hint, result.code, result.stderr)
        assert "Traceback" not in result.stderr, hint
        if result.code == 1 and result.stderr.strip():
            assert result.error["code"] not in USAGE_CODES, (hint, result.error)
