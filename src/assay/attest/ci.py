"""Re-verification in CI: re-run what an attestation rests on and compare, without the ledger.

:func:`reverify` answers one of three verdicts about an attestation bundle
in a checkout of a pull request's head:

- ``unverifiable``: there is no attestation, no envelope is signed by one of
  the keys given (``attestation_key_unknown``), a signature does not verify,
  the bundle is malformed, or it does not carry what a re-run needs (an
  attestation written before assay carried it: ``attestation_not_reverifiable``);
- ``disagrees``: at least one finding (see below);
- ``agrees``: none.

What is re-run is the *pinned* declaration of each check the attested runs
used, carried signed in the readiness statement (the run's own recorded
declaration when the check was never pinned), never the pull request's
``assay.toml``. Each check runs once, with assay's runner, and its results
file is read as ``evidence run`` reads it. Findings, in this order:

- ``attested_not_ready``: the attestation itself does not say ready;
- ``approval_unsigned``: with reviewer keys, a pin or approval the readiness
  rests on carries no signature by one of them, or a re-run check is not in
  the signed pin (its declaration would come from the agent's run only);
- ``check_changed``: ``assay.toml`` now declares a pinned check otherwise than
  pinned (or than the attested run ran it), or no longer declares it;
- ``check_differs``: a re-run check's status differs from the attested run's;
- ``test_differs``: a test mapped to a requirement has another outcome now
  (or is missing from the re-run);
- ``requirement_differs``: a requirement's outcome differs (the check failed
  or a mapped test did not pass, where the attestation says passed);
- ``test_set_changed``: a requirement's pinned tests are missing, renamed,
  newly skipped or changed in source since they were pinned.

Nothing is written to any ledger. The commits between the attested commit and
HEAD are listed (``commits``; null when the attested commit is not an
ancestor of HEAD or unknown here).

:func:`markdown`, :func:`junit` and :func:`workflow_commands` render a result for
the people reading CI. Imports the base modules, config, the ledger's record
type, evidence, intent and :mod:`assay.attest`.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.attest.bundle import check_reviews
from assay.attest.signing import malformed, verify_any
from assay.attest.statement import READINESS_TYPE, STATEMENT_TYPE, TEST_RESULT_TYPE
from assay.canonical import digest, parse
from assay.errors import AssayError

if TYPE_CHECKING:
    from securesystemslib.signer import SSlibKey

    from assay.config import EvidenceCommand, Project
    from assay.evidence.commands import Reporter

__all__ = ["junit", "markdown", "reverify", "workflow_commands"]

# Commits listed between the attested one and HEAD (the count says how many there are).
MAX_COMMITS = 200


class _Unverifiable(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _readiness(text: bytes, keys: Sequence[SSlibKey]) -> tuple[dict[str, Any], str]:
    """The readiness predicate and signing key id, every envelope verified with ``keys``."""
    documents: list[dict[str, Any]] = []
    keyid = ""
    for number, raw in enumerate(text.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            envelope = parse(raw)
        except AssayError as exc:
            raise malformed(f"not a JSON object: {exc.message}", "/attestation", number) \
                from None
        payload, key = verify_any(envelope, keys, line=number, where="/attestation")
        keyid = keyid or str(key.keyid)
        try:
            document = parse(payload)
        except AssayError as exc:
            raise malformed(f"the payload is not JSON: {exc.message}", "/attestation", number) \
                from None
        if not isinstance(document, dict) or document.get("_type") != STATEMENT_TYPE \
                or document.get("predicateType") not in (READINESS_TYPE, TEST_RESULT_TYPE) \
                or not isinstance(document.get("predicate"), dict):
            raise malformed("not an in-toto statement assay writes", "/attestation", number)
        documents.append(document)
    ready = [d for d in documents if d["predicateType"] == READINESS_TYPE]
    if len(ready) != 1:
        raise malformed("an attestation holds exactly one readiness statement", "/attestation", 1)
    predicate = ready[0]["predicate"]
    predicate = {**predicate, "_subject": ready[0].get("subject")}
    runs = predicate.get("runs")
    if not isinstance(predicate.get("requirements"), list) or not isinstance(runs, list) or any(
            not isinstance(r, dict) or not isinstance(r.get("contract"), dict) for r in runs):
        raise _Unverifiable("attestation_not_reverifiable",
                            "the attestation does not carry the declarations and test sets a "
                            "re-run needs (written by an older assay): attest again")
    return predicate, keyid


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                              timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _commits(root: Path, attested: str | None) -> tuple[str | None, list[str] | None, int]:
    head = _git(root, "rev-parse", "HEAD")
    if head is None or attested is None:
        return head, None, 0
    if _git(root, "merge-base", "--is-ancestor", attested, head) is None:
        return head, None, 0
    listed = (_git(root, "rev-list", "--reverse", f"{attested}..{head}") or "").split()
    return head, listed[:MAX_COMMITS], len(listed)


def _declaration(name: str, contract: Mapping[str, Any]) -> EvidenceCommand:
    from assay.config import EvidenceCommand, ResultsFile

    results = contract.get("results")
    mapping = contract.get("requirements") or {}
    return EvidenceCommand(
        name=name, argv=tuple(str(w) for w in contract.get("argv") or ()),
        cwd=str(contract.get("cwd") or "."), timeout=int(contract.get("timeout") or 120),
        env=tuple(str(e) for e in contract.get("env") or ()),
        results=ResultsFile(format=str(results["format"]), path=str(results["path"]))
        if isinstance(results, dict) else None,
        requirements=tuple((str(g), tuple(str(i) for i in ids)) for g, ids in mapping.items()),
    )


def _record(project: Project, name: str, data: dict[str, Any]) -> Any:
    from assay.ledger.record import Record

    return Record(id=f"evidence:{name}", kind="evidence", scope=project.scope, revision=1,
                  data_sha256=digest(data), status="current", superseded_by=None, links=(),
                  audience="project", sources=(), created_at="", ledger_revision=0,
                  origin="machine", data=data)


def _finding(kind: str, message: str, **where: Any) -> dict[str, Any]:
    return {"kind": kind, "message": message, **{k: v for k, v in where.items() if v is not None}}


def _pinned(predicate: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The pinned check contracts and per-requirement pinned entries the attestation carries."""
    pins = [p for p in predicate.get("pins") or [] if isinstance(p, dict)]
    found = pins[0].get("body") if pins else None
    body: dict[str, Any] = found if isinstance(found, dict) else {}
    commands = {n: e.get("contract") for n, e in (body.get("commands") or {}).items()
                if isinstance(e, dict) and isinstance(e.get("contract"), dict)}
    requirements = {r: e for r, e in (body.get("requirements") or {}).items()
                    if isinstance(e, dict)}
    return commands, requirements


def reverify(project: Project, text: bytes | None, keys: Sequence[SSlibKey], *,
             reviewer_keys: Sequence[SSlibKey] = (), reporter: Reporter | None = None
             ) -> dict[str, Any]:
    """The verdict on ``text`` (None: no attestation) in ``project``'s checkout (module doc)."""
    out: dict[str, Any] = {"verdict": "unverifiable", "reason": None, "attestation": None,
                           "head": None, "commits": None, "commit_count": 0, "checks": [],
                           "requirements": [], "disagreements": []}
    try:
        if text is None:
            raise _Unverifiable("attestation_missing", "there is no attestation to verify")
        predicate, keyid = _readiness(text, keys)
    except _Unverifiable as exc:
        out["reason"] = {"code": exc.code, "message": exc.message}
        out["head"] = _git(project.root, "rev-parse", "HEAD")
        return out
    except AssayError as exc:
        out["reason"] = {"code": exc.code, "message": exc.message}
        out["head"] = _git(project.root, "rev-parse", "HEAD")
        return out
    subject: list[Any] = predicate.get("_subject") or []
    commit = next((s["digest"]["gitCommit"] for s in subject
                   if isinstance(s, dict) and isinstance(s.get("digest"), dict)
                   and "gitCommit" in s["digest"]), None)
    given = predicate.get("intent")
    intent: dict[str, Any] = given if isinstance(given, dict) else {}
    intent_id = str(intent.get("id"))
    out["attestation"] = {"keyid": keyid, "commit": commit, "intent": intent,
                          "verdict": predicate.get("verdict")}
    out["head"], out["commits"], out["commit_count"] = _commits(project.root, commit)
    findings: list[dict[str, Any]] = []
    if predicate.get("verdict") != "ready":
        findings.append(_finding("attested_not_ready",
                                 f"the attestation says {intent_id} is not ready for review"))
    if reviewer_keys:
        try:
            check_reviews(predicate, reviewer_keys)
        except AssayError as exc:
            findings.append(_finding("approval_unsigned", exc.message,
                                     record=(exc.details or {}).get("id")))
    pinned_checks, pinned_requirements = _pinned(predicate)
    from assay.intent.pin import CONTRACT_FIELDS, compare_tests, current_checks, run_tests

    declared = current_checks(project)
    runs = [r for r in predicate["runs"] if isinstance(r, dict)]
    order = list(dict.fromkeys(str(r.get("command")) for r in runs))
    reruns: dict[str, Any] = {}
    for name in order:
        of_check = [r for r in runs if r.get("command") == name]
        contract: dict[str, Any] = pinned_checks.get(name) or of_check[0]["contract"]
        if reviewer_keys and name not in pinned_checks:
            findings.append(_finding(
                "approval_unsigned", f"the check {name} is not in the pin a reviewer signed: "
                "its declaration comes from the attested run only", check=name))
        now = declared.get(name)
        fields = ["declared"] if now is None else [
            f for f in CONTRACT_FIELDS if contract.get(f) != now.get(f)]
        if fields:
            how = ("is no longer declared in assay.toml" if now is None
                   else f"is declared otherwise in assay.toml: {', '.join(fields)} differ")
            findings.append(_finding(
                "check_changed", f"the check {name} {how} than "
                + ("pinned" if name in pinned_checks else "the attested run ran it")
                + " (the pinned declaration was re-run)", check=name, fields=fields))
        targets = list(dict.fromkeys(
            (t["intent"], t["requirement"]) for r in of_check for t in r.get("targets") or []
            if isinstance(t, dict) and isinstance(t.get("intent"), str)
            and isinstance(t.get("requirement"), str)))
        from assay.evidence.record import run_evidence

        run = run_evidence(project, _declaration(name, contract), targets=tuple(targets),
                           reporter=reporter)
        reruns[name] = run
        attested_status = str(of_check[-1].get("status"))
        out["checks"].append({"name": name, "pinned": name in pinned_checks,
                              "attested": attested_status, "now": run.status,
                              "exit_code": run.observation.exit_code, "changed": fields})
        if run.status != attested_status:
            findings.append(_finding("check_differs", f"the check {name} {run.status} on the "
                                     f"re-run; the attested run {attested_status}", check=name))
    by_run = {f"{r.get('id')}@{r.get('revision')}": str(r.get("command")) for r in runs}
    for entry in predicate["requirements"]:
        if not isinstance(entry, dict):
            continue
        rid = str(entry.get("id"))
        names = list(dict.fromkeys(by_run[c] for c in entry.get("runs") or [] if c in by_run))
        tests_now: dict[str, dict[str, Any]] = {}
        for name in names:
            found = run_tests(_record(project, name, reruns[name].data), intent_id, rid)
            for tid, test in (found[0] if found is not None else {}).items():
                tests_now.setdefault(tid, test)
        given = entry.get("tests")
        attested_tests: dict[str, Any] = given if isinstance(given, dict) else {}
        rows = []
        for tid in sorted(set(attested_tests) | set(tests_now)):
            was = attested_tests.get(tid)
            now_outcome = tests_now[tid]["outcome"] if tid in tests_now else "missing"
            rows.append({"id": tid, "attested": was, "now": now_outcome,
                         "path": tests_now.get(tid, {}).get("path")})
            if was is not None and was != now_outcome:
                findings.append(_finding(
                    "test_differs", f"{rid}: the test {tid} {now_outcome} on the re-run; the "
                    f"attestation says {was}", requirement=rid, test=tid,
                    path=tests_now.get(tid, {}).get("path")))
        # With per-test results a requirement passes on its own tests, as evidence run maps it;
        # without, on its checks' status.
        passed = bool(names) and (all(t["outcome"] == "passed" for t in tests_now.values())
                                  if tests_now else
                                  all(reruns[n].status == "passed" for n in names))
        now_status = "passed" if passed else "failed"
        attested_status = str(entry.get("status"))
        out["requirements"].append({"id": rid, "attested": attested_status, "now": now_status,
                                    "checks": names, "tests": rows})
        if attested_status == "passed" and now_status != "passed":
            findings.append(_finding("requirement_differs",
                                     f"{rid} does not pass on the re-run; the attestation says "
                                     "passed", requirement=rid))
        pinned_tests = pinned_requirements.get(rid, {}).get("tests")
        if isinstance(pinned_tests, dict) and pinned_tests:
            changes = compare_tests(pinned_tests, {}, tests_now, {})
            if changes:
                words = ", ".join(f"{c['test']} {c['change']}" for c in changes[:5])
                findings.append(_finding(
                    "test_set_changed", f"{rid}: its pinned test set changed since it was "
                    f"pinned: {words}", requirement=rid, tests=[c["test"] for c in changes],
                    path=changes[0].get("path")))
    out["disagreements"] = findings
    out["verdict"] = "disagrees" if findings else "agrees"
    return out


# -- rendering ---------------------------------------------------------------------------------

_HEADLINE = {
    "agrees": "assay ci verify: agrees. The re-run matches the attestation.",
    "disagrees": "assay ci verify: disagrees. The re-run does not match the attestation.",
    "unverifiable": "assay ci verify: unverifiable. The attestation could not be checked.",
}


def _cell(value: Any) -> str:
    return str("-" if value is None else value).replace("|", "\\|").replace("\n", " ")


def markdown(result: Mapping[str, Any]) -> str:
    """The step summary: the verdict first, then one row per requirement, then the findings."""
    lines = [f"## {_HEADLINE[result['verdict']]}", ""]
    reason = result.get("reason")
    if reason:
        lines += [f"`{reason['code']}`: {_cell(reason['message'])}", ""]
    attestation = result.get("attestation") or {}
    if attestation:
        intent = attestation.get("intent") or {}
        lines += [(f"Intent `{intent.get('id')}` revision {intent.get('revision')}, attested "
                   f"{attestation.get('verdict')} at commit `{attestation.get('commit')}` "
                   f"(key `{attestation.get('keyid')}`)."), ""]
        if result.get("commits") is None:
            lines += ["The attested commit is not an ancestor of HEAD here.", ""]
        elif result["commit_count"]:
            lines += [f"{result['commit_count']} commit(s) since the attestation: "
                      + ", ".join(f"`{c[:12]}`" for c in result["commits"][:20]), ""]
    if result.get("requirements"):
        lines += ["| requirement | attested | re-run | tests differing |", "|---|---|---|---|"]
        for row in result["requirements"]:
            differing = [t["id"] for t in row["tests"]
                         if t["attested"] is not None and t["attested"] != t["now"]]
            lines.append(f"| {_cell(row['id'])} | {_cell(row['attested'])} | {_cell(row['now'])}"
                         f" | {_cell(', '.join(differing) or '-')} |")
        lines.append("")
    if result.get("disagreements"):
        lines += ["### Disagreements", ""]
        lines += [f"- `{f['kind']}`: {_cell(f['message'])}" for f in result["disagreements"]]
        lines.append("")
    return "\n".join(lines)


def _escape(text: str, *, prop: bool = False) -> str:
    out = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return out.replace(":", "%3A").replace(",", "%2C") if prop else out


def workflow_commands(result: Mapping[str, Any]) -> list[str]:
    """One GitHub ``::error`` workflow command per disagreement (or for an unverifiable verdict)."""
    out = []
    if result["verdict"] == "unverifiable" and result.get("reason"):
        reason = result["reason"]
        out.append(f"::error title={_escape('assay: unverifiable', prop=True)}::"
                   + _escape(f"{reason['code']}: {reason['message']}"))
    for finding in result.get("disagreements") or ():
        props = [f"title={_escape('assay: ' + finding['kind'], prop=True)}"]
        if finding.get("path"):
            props.insert(0, f"file={_escape(str(finding['path']), prop=True)}")
        out.append(f"::error {','.join(props)}::{_escape(finding['message'])}")
    return out


def junit(result: Mapping[str, Any]) -> bytes:
    """A JUnit XML file of the re-run: a case per check and per requirement's test, and per
    other finding; a case fails when it disagrees with the attestation or did not pass."""
    import xml.etree.ElementTree as ET

    suite = ET.Element("testsuite", name="assay ci verify")
    cases = 0
    failures = 0

    def case(classname: str, name: str, failure: str | None) -> None:
        nonlocal cases, failures
        element = ET.SubElement(suite, "testcase", classname=classname, name=name)
        cases += 1
        if failure is not None:
            failures += 1
            ET.SubElement(element, "failure", message=failure[:1000]).text = failure

    findings = list(result.get("disagreements") or ())
    for check in result.get("checks") or ():
        mine = [f["message"] for f in findings if f.get("check") == check["name"]]
        case("assay.checks", check["name"], "; ".join(mine) if mine else None)
    for row in result.get("requirements") or ():
        for test in row["tests"]:
            mine = [f["message"] for f in findings
                    if f.get("requirement") == row["id"] and f.get("test") == test["id"]]
            case(f"assay.{row['id']}", test["id"], "; ".join(mine) if mine else None)
        mine = [f["message"] for f in findings
                if f.get("requirement") == row["id"] and f.get("test") is None]
        case(f"assay.{row['id']}", "requirement", "; ".join(mine) if mine else None)
    for finding in findings:
        if finding.get("check") is None and finding.get("requirement") is None:
            case("assay", finding["kind"], finding["message"])
    if result["verdict"] == "unverifiable":
        reason = result.get("reason") or {}
        case("assay", "attestation", f"{reason.get('code')}: {reason.get('message')}")
    suite.set("tests", str(cases))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return (b"<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
            + ET.tostring(root, encoding="unicode").encode("utf-8")
            + b"\n")
