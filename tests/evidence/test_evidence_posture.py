"""The evidence posture: a decision table for every status, caps, orders, determinism."""

from __future__ import annotations

import pytest

from assay.canonical import canonical_text
from assay.errors import AssayError
from assay.evidence.posture import (
    MAX_COMMANDS,
    MAX_CONTRACT_ITEMS,
    MAX_FINDINGS,
    MAX_PROVIDERS,
    MAX_REASONS,
    CommandFact,
    ContractFact,
    ContractItemFact,
    FindingFact,
    PostureFacts,
    ProviderFact,
    derive_posture,
)

GIT_OK = ProviderFact("git", "git", "observed")
PASS = CommandFact("unit", "passed", required=True)


def facts(**kw: object) -> PostureFacts:
    """An evaluation round with the git boundary observed, overridden by ``kw``."""
    base: dict[str, object] = {"round": 1, "workspace_status": "observed", "providers": (GIT_OK,),
                               "verification_configured": True}
    base.update(kw)
    return PostureFacts(**base)  # type: ignore[arg-type]


def item(i: str, status: str) -> ContractItemFact:
    return ContractItemFact(i, status, ("cr-00000001",), ("reason",))


CASES = {
    "rollback": (facts(kind="rollback", commands=(PASS,), machine_backed_success=True),
                 "not_applicable"),
    "nothing participated": (PostureFacts(round=1), "not_applicable"),
    "required command failed": (facts(commands=(CommandFact("unit", "failed", True),)),
                                "contradicted"),
    "contract item contradicted": (
        facts(commands=(PASS,), machine_backed_success=True,
              contract=ContractFact("rc-1", "open", (item("rci-1", "verified"),
                                                     item("rci-2", "contradicted"))),),
        "contradicted"),
    "contradiction beats unknown": (
        facts(commands=(CommandFact("a", "failed", True), CommandFact("b", "timeout", True))),
        "contradicted"),
    "required command timeout": (facts(commands=(CommandFact("unit", "timeout", True),),
                                       machine_backed_success=True), "unknown"),
    "required command unavailable": (facts(commands=(CommandFact("unit", "unavailable", True),)),
                                     "unknown"),
    "required command aborted": (facts(commands=(CommandFact("unit", "aborted", True),)),
                                 "unknown"),
    "required command error": (facts(commands=(CommandFact("unit", "error", True),)), "unknown"),
    "provider error": (facts(providers=(ProviderFact("git", "git", "error"),), commands=(PASS,),
                             machine_backed_success=True), "unknown"),
    "workspace unknown": (facts(workspace_status="unknown", commands=(PASS,),
                                machine_backed_success=True), "unknown"),
    "verified by command": (facts(commands=(PASS,), machine_backed_success=True), "verified"),
    "verified by contract": (
        facts(machine_backed_success=True,
              contract=ContractFact("rc-1", "verified", (item("rci-1", "verified"),))),
        "verified"),
    "optional failure does not decide": (
        facts(commands=(PASS, CommandFact("lint", "failed", False)), machine_backed_success=True),
        "verified"),
    "success not machine backed": (facts(commands=(PASS,), machine_backed_success=False),
                                   "insufficient"),
    "no passing observation": (facts(machine_backed_success=True), "insufficient"),
    "item still pending": (
        facts(commands=(PASS,), machine_backed_success=True,
              contract=ContractFact("rc-1", "open", (item("rci-1", "verified"),
                                                     item("rci-2", "pending")))),
        "insufficient"),
    "optional command only failed": (facts(commands=(CommandFact("lint", "failed", False),)),
                                     "insufficient"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_posture_status_table(name: str) -> None:
    """Each row of the decision table derives its documented status."""
    given, expected = CASES[name]
    assert derive_posture(given)["status"] == expected


def test_posture_covers_every_status() -> None:
    """The decision table exercises all five statuses."""
    assert {expected for _, expected in CASES.values()} == {
        "verified", "insufficient", "contradicted", "unknown", "not_applicable"}


def test_posture_status_computed_before_caps() -> None:
    """A contradiction hidden by the command cap still makes the posture contradicted."""
    commands = tuple(CommandFact(f"c{i:03d}", "passed", True) for i in range(MAX_COMMANDS + 5))
    commands += (CommandFact("zzz-last", "failed", True),)
    posture = derive_posture(facts(commands=commands, machine_backed_success=True))
    assert posture["status"] == "contradicted"
    assert len(posture["commands"]) == MAX_COMMANDS
    assert all(c["commandId"] != "zzz-last" for c in posture["commands"])
    assert posture["omitted"]["commands"] == 6


def test_posture_caps_every_array_with_omitted_counts() -> None:
    """Providers, contract items and findings are capped and their omissions counted."""
    given = facts(
        providers=tuple(ProviderFact(f"p{i:02d}", "custom", "observed")
                        for i in range(MAX_PROVIDERS + 2)),
        contract=ContractFact("rc-1", "open", tuple(item(f"rci-{i:03d}", "verified")
                                                    for i in range(MAX_CONTRACT_ITEMS + 3))),
        findings=tuple(FindingFact(f"f-{i:08d}", "check", "info")
                       for i in range(MAX_FINDINGS + 4)),
    )
    posture = derive_posture(given)
    assert posture["omitted"] == {"providers": 2, "commands": 0, "contractItems": 3, "findings": 4}
    assert posture["contract"]["verifiedCount"] == MAX_CONTRACT_ITEMS + 3
    assert len(posture["contract"]["items"]) == MAX_CONTRACT_ITEMS


def test_posture_stable_orders() -> None:
    """Providers sort git before custom then by id; findings by severity, check, ref, id."""
    given = facts(
        providers=(ProviderFact("b", "custom", "observed"), ProviderFact("a", "custom", "observed"),
                   ProviderFact("z", "git", "observed")),
        findings=(FindingFact("f-2", "x", "info"), FindingFact("f-1", "y", "error", "r"),
                  FindingFact("f-3", "a", "warn")),
        commands=(CommandFact("b", "passed"), CommandFact("a", "passed")),
    )
    posture = derive_posture(given)
    assert [p["providerId"] for p in posture["providers"]] == ["z", "a", "b"]
    assert [f["id"] for f in posture["findings"]] == ["f-1", "f-3", "f-2"]
    assert [c["commandId"] for c in posture["commands"]] == ["a", "b"]
    assert posture["findings"][0]["ref"] == "r" and "ref" not in posture["findings"][1]


def test_posture_reasons_deduped_and_capped() -> None:
    """Item reasons are de-duplicated in order and capped."""
    reasons = ("same", "same") + tuple(f"r{i}" for i in range(MAX_REASONS + 3))
    given = facts(contract=ContractFact("rc-1", "open", (ContractItemFact("rci-1", "pending", (),
                                                                           reasons),)))
    shown = derive_posture(given)["contract"]["items"][0]["reasons"]
    assert shown[0] == "same" and shown.count("same") == 1 and len(shown) == MAX_REASONS


@pytest.mark.parametrize(("workspace", "reported", "changed", "expected"), [
    ("observed", ("a.py", "./b.py"), ("b.py", "a.py"), "match"),
    ("observed", ("a.py",), ("a.py", "b.py"), "mismatch"),
    ("unknown", ("a.py",), (), "unknown"),
    ("not_applicable", ("a.py",), (), "not_applicable"),
])
def test_posture_files_reconciliation(workspace: str, reported: tuple[str, ...],
                                      changed: tuple[str, ...], expected: str) -> None:
    """Reported files are reconciled with the observed change set, never trusted."""
    posture = derive_posture(facts(workspace_status=workspace, reported_files=reported,
                                   changed_paths=changed))
    assert posture["files"]["reconciliation"] == expected


def test_posture_files_null_without_report() -> None:
    """Without an agent file report, files is null."""
    assert derive_posture(facts())["files"] is None


def test_posture_workspace_count_only_when_observed() -> None:
    """changedPathCount counts the observed set and is 0 when the boundary is unknown."""
    assert derive_posture(facts(changed_paths=("a", "b", "a")))["workspace"] == {
        "status": "observed", "changedPathCount": 2}
    assert derive_posture(facts(workspace_status="unknown", changed_paths=("a",)))["workspace"][
        "changedPathCount"] == 0


def test_posture_is_deterministic() -> None:
    """The same facts in any input order give byte-identical canonical output."""
    a = facts(commands=(PASS, CommandFact("lint", "passed")), machine_backed_success=True)
    b = facts(commands=(CommandFact("lint", "passed"), PASS), machine_backed_success=True)
    assert canonical_text(derive_posture(a)) == canonical_text(derive_posture(b))


def test_posture_machine_backed_success_passed_through() -> None:
    """machineBackedSuccess is the caller's fact, copied and never re-derived."""
    assert derive_posture(facts(commands=(PASS,), machine_backed_success=False))[
        "machineBackedSuccess"] is False


@pytest.mark.parametrize(("given", "ptr"), [
    (PostureFacts(round=-1), "/round"),
    (PostureFacts(round=1, kind="other"), "/kind"),
    (PostureFacts(round=1, workspace_status="dirty"), "/workspace_status"),
    (PostureFacts(round=1, commands=(CommandFact("a", "green"),)), "/commands/0/status"),
    (PostureFacts(round=1, providers=(ProviderFact("a", "command", "observed"),)),
     "/providers/0/kind"),
    (PostureFacts(round=1, contract=ContractFact("rc", "done")), "/contract/closure"),
    (PostureFacts(round=1, contract=ContractFact("rc", "open", (item("i", "met"),))),
     "/contract/items/0/status"),
    (PostureFacts(round=1, findings=(FindingFact("f", "c", "fatal"),)), "/findings/0/severity"),
])
def test_posture_rejects_unknown_vocabulary(given: PostureFacts, ptr: str) -> None:
    """A status outside the vocabularies is invalid_posture_input naming the field."""
    with pytest.raises(AssayError) as caught:
        derive_posture(given)
    assert caught.value.code == "invalid_posture_input"
    assert caught.value.pointer == ptr
