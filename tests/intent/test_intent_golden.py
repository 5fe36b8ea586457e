"""Golden reports: each scenario's `work check` report, compared as canonical JSON.

Scenarios are written to a real ledger: a SQLite file in ``tmp_path`` and, when
``ASSAY_TEST_POSTGRES_URL`` is set, a fresh PostgreSQL schema; both backends
must produce the same golden report. One value must
vary between runs and is normalised before comparison: the ledger epoch
(random per ledger) becomes ``<epoch>``. The project root is a fixed string
(``/srv/project``; the check never touches the file system), so ``read_args``
and the continuity byte count in ``limits.bytes`` are compared exactly.
Nothing else is touched. Set
``ASSAY_UPDATE_GOLDEN=1`` to rewrite the files after an intended change.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from intent_scenarios import SCENARIOS, Scene

from assay.canonical import canonical_text
from assay.intent.check import work_check
from assay.ledger import open_store

GOLDEN = Path(__file__).parent.parent / "golden" / "intent"


ROOT = "/srv/project"


def normalise(value: Any, epoch: str) -> Any:
    if isinstance(value, dict):
        return {k: normalise(v, epoch) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise(v, epoch) for v in value]
    return "<epoch>" if value == epoch else value


def run_scenario(name: str, url: str, tmp_path: Path) -> dict[str, Any]:
    store = open_store(url)
    try:
        scene = Scene(store, ROOT)
        record_id = SCENARIOS[name](scene)
        with store.reader() as reader:
            report = work_check(reader, scene.binding, record_id)
            epoch = reader.epoch
    finally:
        store.close()
    return normalise(report, epoch)


def test_golden_has_twelve_scenarios() -> None:
    """At least twelve report scenarios have golden files."""
    assert len(SCENARIOS) >= 12
    assert {p.stem for p in GOLDEN.glob("*.json")} == set(SCENARIOS)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_golden_report(name: str, ledger_url: str, tmp_path: Path) -> None:
    """The scenario's report equals its golden file as canonical JSON, on every backend."""
    report = run_scenario(name, ledger_url, tmp_path)
    path = GOLDEN / f"{name}.json"
    if os.environ.get("ASSAY_UPDATE_GOLDEN") == "1" and "postgres" not in ledger_url:
        path.write_text(json.dumps(report, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                        encoding="utf-8")
    expected = json.loads(path.read_text(encoding="utf-8"))
    assert canonical_text(report) == canonical_text(expected)
