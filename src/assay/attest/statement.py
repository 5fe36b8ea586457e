"""In-toto Statement v1 documents: the subject, the test-result predicate, assay's readiness predicate.

Everything here is a pure function of plain data (a readiness report, the
stored data of evidence runs, a git observation), so the same inputs give
the same statements byte for byte.

- Subject: ``{name: PROJECT, digest: {gitCommit: HEAD}}`` and, when the
  workspace is dirty, ``{name: "PROJECT workspace", digest:
  {assayWorkspace: HEX}}``: the workspace digest of the git observation
  (SHA-256 over every tracked and non-ignored untracked file's fingerprint,
  docs/evidence.md), a custom digest algorithm as in-toto allows.
- :data:`TEST_RESULT_TYPE` (in-toto's ``test-result/v0.1``), one per cited
  machine run: ``result`` (``PASSED`` when the command passed, else
  ``FAILED``), ``configuration`` (the command's declaration digest and, when
  one was read, the results file's digest), ``url`` (the run's ledger
  locator ``assay:evidence:NAME@REVISION``) and, when the run has per-test
  outcomes, ``passedTests`` and ``failedTests`` (errors count as failed).
- :data:`READINESS_TYPE`, assay's own: the intent version, the ``work check``
  verdict and the digest of the whole report, the ledger it was read from
  (epoch, revision and the hash chain's value there), and every cited run with its data digest (the verifier's list).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from assay.canonical import digest

__all__ = [
    "READINESS_TYPE",
    "STATEMENT_TYPE",
    "TEST_RESULT_TYPE",
    "WORKSPACE_DIGEST",
    "parse_locator",
    "readiness_predicate",
    "run_locator",
    "statement",
    "subject",
    "test_result_predicate",
]

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
TEST_RESULT_TYPE = "https://in-toto.io/attestation/test-result/v0.1"
READINESS_TYPE = "https://assay.dev/attestation/readiness/v0.1"
WORKSPACE_DIGEST = "assayWorkspace"
_LOCATOR = re.compile(r"assay:([a-z][a-z0-9-]*:[^\x00-\x1f\x7f]{1,500})@([1-9][0-9]{0,15})")


def subject(project: str, head: str, workspace_sha256: str | None) -> list[dict[str, Any]]:
    """The statement subject: the commit, and the workspace digest when it differs from it."""
    out: list[dict[str, Any]] = [{"name": project, "digest": {"gitCommit": head}}]
    if workspace_sha256 is not None:
        out.append({"name": f"{project} workspace",
                    "digest": {WORKSPACE_DIGEST: workspace_sha256}})
    return out


def statement(subjects: Sequence[Mapping[str, Any]], predicate_type: str,
              predicate: Mapping[str, Any]) -> dict[str, Any]:
    """One in-toto Statement v1."""
    return {"_type": STATEMENT_TYPE, "subject": [dict(s) for s in subjects],
            "predicateType": predicate_type, "predicate": dict(predicate)}


def run_locator(record_id: str, revision: int) -> str:
    """The ledger locator of one run version: ``assay:evidence:unit@3``."""
    return f"assay:{record_id}@{revision}"


def parse_locator(value: Any) -> tuple[str, int] | None:
    """``(id, revision)`` of a run locator, or None for anything else."""
    if not isinstance(value, str):
        return None
    match = _LOCATOR.fullmatch(value)
    return (match.group(1), int(match.group(2))) if match else None


def test_result_predicate(record_id: str, revision: int, data: Mapping[str, Any]
                          ) -> dict[str, Any]:
    """The ``test-result/v0.1`` predicate of one stored run (``data`` of an evidence record)."""
    command = data.get("command") or {}
    observation = data.get("observation") or {}
    configuration: list[dict[str, Any]] = [{
        "name": f"assay.toml#/evidence/commands/{command.get('name')}",
        "digest": {"sha256": command.get("declaration_sha256")},
    }]
    predicate: dict[str, Any] = {
        "result": "PASSED" if observation.get("status") == "passed" else "FAILED",
        "configuration": configuration,
        "url": run_locator(record_id, revision),
    }
    results = data.get("results")
    if isinstance(results, dict) and results.get("status") == "read":
        file = results.get("file") or {}
        configuration.append({"name": results.get("path"), "digest": {"sha256": file.get("sha256")},
                              "mediaType": "application/xml"})
        tests = [t for t in results.get("tests") or [] if isinstance(t, dict)]
        predicate["passedTests"] = [t["id"] for t in tests if t.get("outcome") == "passed"]
        predicate["failedTests"] = [t["id"] for t in tests
                                    if t.get("outcome") in ("failed", "error")]
    return predicate


def readiness_predicate(report: Mapping[str, Any], intent: Mapping[str, Any],
                        runs: Sequence[Mapping[str, Any]], generator: str,
                        chain_sha256: str | None = None, *,
                        requirements: Sequence[Mapping[str, Any]] = (),
                        pins: Sequence[Mapping[str, Any]] = (),
                        approvals: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """Assay's readiness predicate: the verdict of ``report`` and what it rests on.

    ``intent`` is ``{id, revision, data_sha256}`` of the intent version read;
    ``runs`` the cited machine runs ``{id, revision, data_sha256, command,
    status, contract, targets}`` in citation order; ``generator`` assay's
    version. So that CI can re-run and compare without the ledger, it also
    carries ``requirements`` (per requirement: its result status, the runs it
    rests on and the outcome of each test mapped to it), the ``pins`` its
    checks and tests rest on and the ``approvals`` of those pins (each ``{id,
    revision, data_sha256, body, signature}``: the record's reviewed body and
    its reviewer signature, null when unsigned).
    ``chain_sha256`` is the ledger's hash chain value at the revision read (its
    chain head then), which lets a verifier later find any rewritten version at
    or before it.
    """
    codes = list(dict.fromkeys(i["code"] for i in report["issues"]))
    basis = report["write_basis"]
    ledger: dict[str, Any] = {"epoch": basis["epoch"], "revision": basis["ledger_revision"]}
    if chain_sha256 is not None:
        ledger["chain_sha256"] = chain_sha256
    return {
        "intent": {**dict(intent), "intent_sha256": report["intent_sha256"]},
        "verdict": "ready" if report["ready_to_review"] else "not_ready",
        "ready_to_review": bool(report["ready_to_review"]),
        "report": {"sha256": digest(report), "issue_codes": codes},
        "ledger": ledger,
        "runs": [dict(r) for r in runs],
        "requirements": [dict(r) for r in requirements],
        "pins": [dict(p) for p in pins],
        "approvals": [dict(a) for a in approvals],
        "generator": {"name": "assay", "version": generator},
    }
