"""Whose evidence a run is: requirement marks attributed to intents, results with no test refused."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from evidence_helpers import op

from assay.evidence.results import Attribution, split_label
from assay_testing import make_project
from junit_testing import junit_xml, results_command

SUITE = junit_xml(("tests.test_a", "test_one", "passed", ("R1",)),
                  ("tests.test_a", "test_two", "passed", ("knowledge:other#R1",)))
INTENT = {"version": 1, "brief": "b", "user_reference": "u", "boundaries": [], "non_goals": [],
          "requirements": [{"id": "R1", "text": "t", "acceptance": "a"}]}


def project(tmp_path: Path, toml: str) -> Path:
    root = make_project(tmp_path / "proj", extra_toml=toml).root
    for name in ("knowledge:login", "knowledge:other"):
        op(root, "put", {"id": name, "data": {"intent": INTENT}})
    return root


def recorded(root: Path, **args: Any) -> dict[str, Any]:
    op(root, "evidence.run", {"name": "unit", **args})
    record: dict[str, Any] = op(root, "evidence.show", {"id": "unit"})[0]["data"]["record"]
    return record["data"]["results"]


def owners(results: dict[str, Any]) -> dict[str, Any]:
    return {r["label"]: (r["intent"], r["requirement_id"]) for r in results["requirements"]}


def test_attribution_split_label_reads_scoped_and_bare_ids() -> None:
    """knowledge:x#R1 names its intent; R1, and a # without KIND:NAME before it, do not."""
    assert split_label("knowledge:x#R1") == ("knowledge:x", "R1")
    assert split_label("R1") == (None, "R1")
    assert split_label("ticket#7") == (None, "ticket#7")


def test_attribution_default_intent_wins_over_the_runs_target() -> None:
    """[gate] default_intent owns unscoped marks even in a run recorded --for another intent."""
    attribution = Attribution("knowledge:a", [("knowledge:b", "R1")])
    assert attribution.label("R1") == "knowledge:a#R1"
    assert attribution.label("knowledge:c#R2") == "knowledge:c#R2"


def test_attribution_two_target_intents_leave_unscoped_marks_unattributed() -> None:
    """A run --for two intents cannot say whose an unscoped mark is."""
    attribution = Attribution(None, [("knowledge:a", "R1"), ("knowledge:b", "R1")])
    assert attribution.label("R1") == "R1"


def test_attribution_run_for_one_intent_owns_its_unscoped_marks(tmp_path: Path) -> None:
    """--for knowledge:login#R1: R1 marks are login's, a scoped mark keeps its own intent."""
    root = project(tmp_path, results_command("unit", SUITE))
    results = recorded(root, target=["knowledge:login#R1"])
    assert owners(results) == {"knowledge:login#R1": ("knowledge:login", "R1"),
                               "knowledge:other#R1": ("knowledge:other", "R1")}
    assert results["attribution"] == {"default_intent": None, "unscoped_to": "knowledge:login"}


def test_attribution_untargeted_run_leaves_unscoped_marks_to_nobody(tmp_path: Path) -> None:
    """Without --for or a default, an unscoped mark is recorded with intent null."""
    root = project(tmp_path, results_command("unit", SUITE))
    assert owners(recorded(root))["R1"] == (None, "R1")


def test_attribution_default_intent_from_assay_toml(tmp_path: Path) -> None:
    """[gate] default_intent attributes the unscoped marks of an untargeted run."""
    root = project(tmp_path, results_command("unit", SUITE)
                   + '\n[gate]\ndefault_intent = "knowledge:login"\n')
    assert owners(recorded(root))["knowledge:login#R1"] == ("knowledge:login", "R1")


def test_attribution_results_without_tests_are_refused(tmp_path: Path) -> None:
    """A well-formed file holding no test case proves nothing: results_no_tests, exit 1."""
    root = project(tmp_path, results_command("unit", junit_xml()))
    envelope, code = op(root, "evidence.run", {"name": "unit"})
    assert code == 1
    assert (envelope["data"]["results"]["status"], envelope["data"]["results"]["code"]) == (
        "refused", "results_no_tests")


def test_attribution_missing_results_of_pytest_name_junitxml(tmp_path: Path) -> None:
    """pytest without --junitxml writes no file: the refusal says which option to add."""
    argv = [sys.executable, "-B", "-m", "pytest", "--version"]
    toml = (f"\n[evidence.commands.unit]\nargv = {json.dumps(argv)}\n"
            'results = { format = "junit", path = "reports/unit.xml" }\n')
    results = recorded(project(tmp_path, toml))
    assert results["code"] == "results_missing"
    assert results["message"].endswith("add --junitxml=reports/unit.xml to argv")


def test_attribution_mapped_tests_carry_their_source(tmp_path: Path) -> None:
    """Each mapped test row has its source (none found here), unmapped tests have none."""
    suite = junit_xml(("tests.test_a", "test_one", "passed", ("R1",)),
                      ("tests.test_a", "test_free", "passed"))
    results = recorded(project(tmp_path, results_command("unit", suite)))
    rows = {t["id"]: t for t in results["tests"]}
    assert rows["tests.test_a::test_one"]["source"]["kind"] == "none"
    assert "source" not in rows["tests.test_a::test_free"]
    assert results["source_texts"] == {}


def test_attribution_readme_results_example_runs_as_written(tmp_path: Path) -> None:
    """The README's [evidence.commands.unit] example, pytest at the head of argv, reads its file."""
    import re

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```toml\n(.*?)```", readme, re.DOTALL)
                 if "[evidence.commands.unit]" in b and "results =" in b)
    toml = block.replace('argv = ["python",', f"argv = [{json.dumps(sys.executable)},")
    root = make_project(tmp_path / "proj", extra_toml="\n" + toml).root
    (root / "tests").mkdir()
    (root / "tests" / "test_export.py").write_text("def test_rows():\n    assert True\n",
                                                   encoding="utf-8")
    results = recorded(root)
    assert (results["status"], results["summary"]["passed"]) == ("read", 1)
    assert owners(results)["R2"] == (None, "R2")  # the example's glob; no intent owns it here
