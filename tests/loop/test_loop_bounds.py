"""Loop audit and replay page by round, on both backends.

A loop of 14 rounds with a rejected attempt is longer than the default page of
10 rounds: each page stays within its rounds, ``omitted`` counts exactly the
items of later rounds, and following ``read_more`` returns every item once.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from loop_helpers import CRITERION, contract, evaluation, loop_project

from assay.errors import AssayError
from assay_testing import Project, make_project
from paging_testing import exactly_once, follow, runner


@pytest.fixture
def long_loop(tmp_path: Path, ledger_url: str) -> Project:
    """Loop 'long': a rejected first attempt, then 13 committed rounds and a held 14th."""
    project = loop_project(tmp_path / "p")
    project.db = ledger_url
    run = _run(project)

    def submit(view: dict[str, Any], ev: dict[str, Any]) -> dict[str, Any]:
        return run("loop.next", {"handle": json.dumps(view["submissionHandle"]),
                                 "evaluation": ev})

    view = run("loop.start", {"task": "Fix calc.add", "criterion": [CRITERION],
                              "max_rounds": 30, "loop": "long"})
    rejected = submit(view, evaluation())
    assert rejected["accepted"] is False
    done = submit(rejected, evaluation(round_contract=contract()))
    for step in range(12):
        (project.root / "notes.txt").write_text(f"step {step}\n", encoding="utf-8")
        done = submit(done, evaluation(output_summary=f"step {step}"))
        assert done["accepted"] is True and done["status"] == "active"
    return project


def _run(project: Project) -> Any:
    return runner(project.root, project.db)


def test_loop_audit_pages_by_round_and_recovers_every_item(long_loop) -> None:
    """The default audit page covers rounds 1-10; its reads reach rounds 11-14, and every round
    version and rejection comes once."""
    run = _run(long_loop)
    first = run("loop.audit", {"loop": "long"})
    assert first["window"] == {"fromRound": 1, "toRound": 10, "lastRound": 14, "nextRound": 11}
    assert {r["round"] for r in first["rounds"]} == set(range(1, 11))
    assert first["omitted"] == {"rounds": 4, "round_versions": 3, "rejections": 0,
                                "directives": 0, "gate_decisions": 0}
    pages = follow(run, first)
    whole = run("loop.audit", {"loop": "long", "limit": 1000})
    assert whole["complete"] is True
    exactly_once([(r["round"], r["revision"]) for p in pages for r in p["rounds"]],
                 [(r["round"], r["revision"]) for r in whole["rounds"]])
    exactly_once([(r["round"], r["attempt"]) for p in pages for r in p["rejections"]],
                 [(1, 1)])
    assert len(whole["rounds"]) == 13


def test_loop_replay_all_pages_by_round_and_recovers_every_prompt(long_loop) -> None:
    """replay --all compiles one page of rounds; its reads reach every prompt once."""
    run = _run(long_loop)
    first = run("loop.replay", {"loop": "long", "all": True})
    assert [r["round"] for r in first["replays"]] == [1, *range(1, 11)]
    assert first["omitted"] == {"rounds": 4, "replays": 4} and first["match"] is True
    pages = follow(run, first)
    found = [(r["round"], r["attempt"], r["source"]) for p in pages for r in p["replays"]]
    whole = run("loop.replay", {"loop": "long", "all": True, "limit": 1000})
    exactly_once(found, [(r["round"], r["attempt"], r["source"]) for r in whole["replays"]])
    assert (found[-1][0], found[-1][2]) == (14, "held")


def test_loop_replay_page_options_need_all(tmp_path: Path) -> None:
    """--from-round and --limit page a replay of every prompt; alone they are refused."""
    with pytest.raises(AssayError) as info:
        _run(make_project(tmp_path / "p"))("loop.replay", {"loop": "long", "round": 2, "limit": 3})
    assert info.value.code == "invalid_argument" and info.value.pointer == "/limit"
