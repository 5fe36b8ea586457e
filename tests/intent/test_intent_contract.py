"""The intent contract: the fixture library, the check vector and the published schema."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from assay.errors import AssayError
from assay.intent.contract import (
    check_report_bound,
    intent_data_schema,
    intent_sha256,
    parse_intent_data,
)
from assay_testing import Project

FIXTURES = sorted((Path(__file__).parent.parent / "fixtures" / "intent").glob("*.json"))


def test_contract_fixture_library_is_large_enough() -> None:
    """The library holds at least 40 documents, both valid and invalid."""
    docs = [json.loads(p.read_text(encoding="utf-8")) for p in FIXTURES]
    assert len(docs) >= 40
    assert any(d["expect"]["valid"] for d in docs)
    assert sum(not d["expect"]["valid"] for d in docs) >= 30


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_contract_fixture(path: Path) -> None:
    """Each fixture is accepted, or rejected with its exact code and pointer."""
    case = json.loads(path.read_text(encoding="utf-8"))
    expect = case["expect"]
    if expect["valid"]:
        doc = parse_intent_data(case["data"])
        if "intent_sha256" in expect:
            assert doc.intent_sha256 == expect["intent_sha256"]
        return
    with pytest.raises(AssayError) as info:
        parse_intent_data(case["data"])
    assert (info.value.code, info.value.pointer) == (expect["code"], expect["pointer"])


def test_contract_reference_check_vector() -> None:
    """The interchange example's intent hashes to the published check vector."""
    case = json.loads((FIXTURES[0]).read_text(encoding="utf-8"))
    assert intent_sha256(case["data"]["intent"]) == (
        "9027e6b8698cd8a03bed9464ce6b08392c5abbbfb31d57907efa5c12764c7055")


def test_contract_hash_ignores_acceptance() -> None:
    """Editing acceptance, tasks or continuation leaves the intent hash unchanged."""
    case = json.loads((FIXTURES[0]).read_text(encoding="utf-8"))
    data = case["data"]
    before = parse_intent_data(data).intent_sha256
    data["acceptance"]["results"][0]["notes"] = "changed"
    data.pop("tasks")
    assert parse_intent_data(data).intent_sha256 == before


def test_contract_error_has_action() -> None:
    """A contract error tells the caller what to do next."""
    with pytest.raises(AssayError) as info:
        parse_intent_data({})
    assert info.value.action and info.value.to_dict()["pointer"] == "/data/intent"


def test_contract_error_names_the_record_it_is_about() -> None:
    """Given the record id, a contract error names it in details.id, its message and its action."""
    with pytest.raises(AssayError) as info:
        parse_intent_data({"intent": {}}, record_id="knowledge:login")
    error = info.value.to_dict()
    assert (error["code"], error["pointer"], error["details"]) == (
        "invalid_intent_contract", "/data/intent/version", {"id": "knowledge:login"})
    assert error["message"].startswith("knowledge:login: invalid intent contract at ")
    assert error["action"] == ("Correct /data/intent/version of knowledge:login and put it "
                               "again with its write basis.")


def test_contract_report_bound_names_the_record_it_is_about() -> None:
    """The report-size refusal names the record too when it is given."""
    with pytest.raises(AssayError) as info:
        check_report_bound(_chain(6000), record_id="knowledge:huge")
    assert info.value.details == {"id": "knowledge:huge"}


def test_contract_put_refusal_names_the_record(project: Project) -> None:
    """A put that would break the intent a record holds is refused naming that record."""
    intent = {"version": 1, "brief": "b", "user_reference": "u", "boundaries": [],
              "non_goals": [], "requirements": [{"id": "R1", "text": "t", "acceptance": "a"}]}
    project.ok("put", "--data-file", "-", "--", "knowledge:login",
               input=json.dumps({"intent": intent}))
    out = project.run("put", "--data-file", "-", "--", "knowledge:login",
                      input=json.dumps({"intent": dict(intent, requirements=[])}))
    assert (out.code, out.error["code"], out.error["pointer"], out.error["details"]) == (
        1, "invalid_intent_contract", "/data/intent/requirements", {"id": "knowledge:login"})


def test_contract_schema_is_closed() -> None:
    """The published schema closes every object the contract closes."""
    schema = intent_data_schema()
    assert schema["additionalProperties"] is False
    intent = schema["properties"]["intent"]
    assert intent["additionalProperties"] is False
    assert intent["properties"]["requirements"]["minItems"] == 1
    assert set(schema["properties"]) == {"intent", "acceptance", "tasks", "continuation"}


def test_contract_schema_published_by_describe() -> None:
    """`assay describe work.check` shows the intent record data schema."""
    from assay.ops import lookup

    described = lookup("work.check").describe()
    assert described["output_schema"]["$defs"]["intent_record_data"] == intent_data_schema()


def test_contract_schema_accepts_valid_fixtures() -> None:
    """Every valid fixture also validates against the published JSON Schema."""
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(intent_data_schema())
    for path in FIXTURES:
        case = json.loads(path.read_text(encoding="utf-8"))
        if case["expect"]["valid"]:
            assert not list(validator.iter_errors(case["data"])), path.name


def test_contract_cycle_pointer_names_first_member_on_cycle() -> None:
    """A requirement leading into a cycle is not blamed; the first member of the cycle is."""
    reqs = [
        {"id": "A", "text": "t", "acceptance": "a", "parent_id": "B"},
        {"id": "B", "text": "t", "acceptance": "a", "parent_id": "C"},
        {"id": "C", "text": "t", "acceptance": "a", "parent_id": "B"},
    ]
    data = {"intent": {"version": 1, "brief": "b", "user_reference": "u", "requirements": reqs,
                       "boundaries": [], "non_goals": []}}
    with pytest.raises(AssayError) as info:
        parse_intent_data(data)
    assert info.value.pointer == "/data/intent/requirements/1/parent_id"


def _chain(count: int) -> dict:
    reqs = [{"id": f"R{i}", "text": "t", "acceptance": "a",
             **({"parent_id": f"R{i - 1}"} if i else {})} for i in range(count)]
    return {"intent": {"version": 1, "brief": "b", "user_reference": "u", "requirements": reqs,
                       "boundaries": [], "non_goals": []}}


def test_contract_long_chain_is_linear() -> None:
    """A 5,000-deep parent chain validates (the cycle check does not walk it repeatedly)."""
    assert len(parse_intent_data(_chain(5000)).requirements) == 5000


def test_contract_report_bound_refuses_a_report_too_large_to_print() -> None:
    """6,000 requirements could make a report past 100,000 values: refused at the requirements."""
    check_report_bound(_chain(1000))
    with pytest.raises(AssayError) as info:
        check_report_bound(_chain(6000))
    assert (info.value.code, info.value.pointer) == ("invalid_intent_contract",
                                                     "/data/intent/requirements")


def test_contract_report_bound_counts_evidence_references() -> None:
    """Many cited references are refused at the results, where the size comes from."""
    data = _chain(10)
    refs = [{"id": f"evidence:e{i}", "revision": 1} for i in range(3000)]
    data["acceptance"] = {"intent_sha256": "0" * 64, "blockers": [], "results": [
        {"requirement_id": "R0", "status": "passed", "evidence": refs, "notes": "n"}]}
    with pytest.raises(AssayError) as info:
        check_report_bound(data)
    assert info.value.pointer == "/data/acceptance/results"


def test_contract_verify_with_names_evidence_commands() -> None:
    """verify_with holds distinct command names; anything else is refused with its pointer."""
    data = _chain(1)
    data["intent"]["requirements"][0]["verify_with"] = ["unit", "lint"]
    assert parse_intent_data(data).requirements[0].verify_with == ("unit", "lint")
    data["intent"]["requirements"][0]["verify_with"] = ["unit", "a b"]
    with pytest.raises(AssayError) as info:
        parse_intent_data(data)
    assert info.value.pointer == "/data/intent/requirements/0/verify_with/1"


@pytest.mark.parametrize("value", [
    "a" * 64, "0123456789abcdef" * 4, "A" * 64, "a" * 63, "a" * 65, "a" * 63 + "g", " " + "a" * 63,
    "a" * 63 + "\n", "\n" + "a" * 63, "a" * 32 + "-" + "a" * 31, "٣" * 64, "", 64, None, b"a" * 64,
    ["a" * 64],
])
def test_contract_hex_digest_check_equals_the_pattern(value: object) -> None:
    """A digest passes the string-method check exactly when it fully matches [0-9a-f]{64}."""
    from assay.intent.contract import _is_hex64  # the check the quick and full paths share

    expected = isinstance(value, str) and re.fullmatch(r"[0-9a-f]{64}", value) is not None
    assert _is_hex64(value) is expected
