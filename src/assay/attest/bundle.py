"""Attestation bundles: assembled from one ledger snapshot and the workspace; verified back.

A bundle is in-toto's bundle format: JSON lines, one signed DSSE envelope per
line, each holding one Statement (:mod:`assay.attest.statement`) about the
same subject. :func:`build_bundle` writes the readiness statement first, then
one test-result statement per cited machine run, in citation order; each
line is the canonical JSON of its envelope, so the same ledger revision,
workspace and key give the same bytes.

Building refuses (nothing is written):

- ``attest_unavailable``: no git work tree, or a repository without a commit;
- ``attestation_run_stale``: a cited run observed other file contents than
  the workspace has now (its ``workspace.after`` digest differs): a
  test-result statement about this subject must describe tests run on it.

:func:`verify_bundle` checks, in order, and raises the first failure:

1. every line is a DSSE envelope of an in-toto statement
   (``attestation_malformed``) whose signature verifies with the public key
   (``attestation_signature_invalid``);
2. exactly one readiness statement, test-result statements only otherwise,
   all about one subject (``attestation_malformed``);
3. the subject is the repository now: HEAD is the attested commit, and the
   workspace digest is the attested one when one is attested, else the
   workspace is clean (``attestation_subject_mismatch``);
4. the intent version exists in the ledger with the attested digest
   (``attestation_intent_mismatch``);
5. every run the readiness statement lists has exactly one test-result
   statement and no other run has one (``attestation_incomplete``), exists
   in the ledger (``attestation_run_missing``), is intact, written by assay's
   runner, with the attested data digest and result
   (``attestation_run_mismatch``);
6. every pin and approval it carries is in the ledger with the carried
   digest and body (``attestation_pin_mismatch``);
7. with reviewer keys, each of those is signed by one of them
   (``attestation_approval_unsigned``, :func:`check_reviews`);
8. the ledger's history up to the attested revision is the attested one: its
   hash chain, recomputed from the stored versions, is intact there and has
   the attested value (``attestation_ledger_rewritten``). This finds a
   rewritten version the checks above never read.

The report digest is not recomputed: a readiness report depends on who
reads the ledger and when; the statement keeps its digest and verdict. What
the verdict rested on is compared with the ledger now instead: ``stale`` is
true when the intent or any record its attested acceptance cites has moved
on (a newer revision, retired, superseded, or no longer readable), and
``moved_on`` lists each, intent first, then the cited records in citation
order. A stale bundle still verifies (it is authentic); its verdict
describes a ledger that is no longer current.

Imports the base modules, the ledger contract, evidence, intent and its
siblings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assay.attest.review import check_review, review_body
from assay.attest.signing import malformed, sign, verify
from assay.attest.statement import (
    READINESS_TYPE,
    STATEMENT_TYPE,
    TEST_RESULT_TYPE,
    WORKSPACE_DIGEST,
    parse_locator,
    readiness_predicate,
    statement,
    subject,
    test_result_predicate,
)
from assay.canonical import canonical_bytes, canonical_text, parse
from assay.errors import AssayError
from assay.evidence.git import GitObservation
from assay.intent.check import run_facts, work_check
from assay.intent.contract import intent_sha256
from assay.intent.pin import read_pin, run_contract, run_tests, usable_pin
from assay.intent.snapshot import ProjectBinding, is_readable
from assay.intent.test_outcomes import run_targets
from assay.ledger.store import Reader

if TYPE_CHECKING:
    from securesystemslib.signer import CryptoSigner, SSlibKey

    from assay.ledger.chain import ChainWalk

__all__ = ["Bundle", "build_bundle", "check_reviews", "verify_bundle"]


@dataclass(frozen=True, slots=True)
class Bundle:
    """A built bundle: its text and what it says."""

    text: str
    subject: list[dict[str, Any]]
    readiness: dict[str, Any]
    statements: int


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("assay")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "unknown"


def _subject_of(project: str, observation: GitObservation) -> list[dict[str, Any]]:
    if not observation.observed:
        raise AssayError(f"attestations need a git work tree: {observation.reason}",
                         code="attest_unavailable",
                         action="Run it inside the project's git repository.")
    if observation.head is None:
        raise AssayError("the repository has no commit yet; an attestation names one",
                         code="attest_unavailable", action="Commit the work first.")
    dirty = observation.workspace_sha256 if observation.dirty else None
    return subject(project, observation.head, dirty)


def build_bundle(reader: Reader, binding: ProjectBinding, intent_id: str, *, project: str,
                 observation: GitObservation, signer: CryptoSigner,
                 chain_sha256: str | None = None) -> Bundle:
    """Sign the readiness of ``intent_id`` and its cited machine runs about the workspace now.

    ``chain_sha256`` is the ledger's hash chain value at the reader's
    revision, recorded in the readiness statement (see :func:`verify_bundle`).
    """
    subjects = _subject_of(project, observation)
    report = work_check(reader, binding, intent_id, continuity=True)
    intent = reader.get(intent_id)
    assert intent is not None  # work_check has read it in the same snapshot
    runs: list[dict[str, Any]] = []
    predicates: list[dict[str, Any]] = []
    seen: set[tuple[str, int]] = set()
    stale: list[str] = []
    for result in report["actual"]["results"]:
        for ref in result["evidence"]:
            key = (ref["id"], ref["revision"])
            if ref["run"] is None or key in seen:
                continue
            seen.add(key)
            version = reader.get(*key)
            facts = run_facts(version)
            if version is None or facts is None:
                continue
            data = version.data
            after = (data.get("workspace") or {}).get("after") or {}
            if after.get("workspace_sha256") != observation.workspace_sha256:
                stale.append(f"{key[0]}@{key[1]}")
            found = run_contract(version)
            runs.append({"id": key[0], "revision": key[1], "data_sha256": version.data_sha256,
                         "command": facts["command"], "status": facts["status"],
                         "contract": found[1] if found is not None else None,
                         "targets": [{"intent": i, "requirement": r}
                                     for i, r in run_targets(version)]})
            predicates.append(test_result_predicate(key[0], key[1], data))
    if stale:
        raise AssayError(
            f"{', '.join(stale)} observed other file contents than the workspace has now; an "
            "attestation about this workspace cannot carry them",
            code="attestation_run_stale", details={"runs": stale},
            action="Rerun the checks on the work as it is (assay evidence run), record the new "
                   "runs with assay work accept, then attest.")
    pins, approvals = _reviews(reader, intent_id)
    readiness = readiness_predicate(
        report, {"id": intent.id, "revision": intent.revision, "data_sha256": intent.data_sha256},
        runs, _version(), chain_sha256, requirements=_requirements(reader, intent_id, report),
        pins=pins, approvals=approvals)
    documents = [statement(subjects, READINESS_TYPE, readiness)]
    documents += [statement(subjects, TEST_RESULT_TYPE, p) for p in predicates]
    lines = [canonical_text(sign(canonical_bytes(d), signer)) for d in documents]
    return Bundle("".join(line + "\n" for line in lines), subjects, readiness, len(lines))


def _requirements(reader: Reader, intent_id: str, report: Mapping[str, Any]
                  ) -> list[dict[str, Any]]:
    """Per requirement of ``report``: its result status, cited runs and mapped tests' outcomes."""
    out = []
    for result in report["actual"]["results"]:
        rid = result["requirement_id"]
        cited: list[str] = []
        tests: dict[str, str] = {}
        for ref in result["evidence"]:
            if ref["run"] is None:
                continue
            cited.append(f"{ref['id']}@{ref['revision']}")
            found = run_tests(reader.get(ref["id"], ref["revision"]), intent_id, rid)
            for tid, test in (found[0] if found is not None else {}).items():
                tests.setdefault(tid, test["outcome"])
        out.append({"id": rid, "status": result["status"], "runs": cited,
                    "tests": dict(sorted(tests.items()))})
    return out


def _carried(record: Any) -> dict[str, Any]:
    data = record.data
    signature = data.get("signature")
    return {"id": record.id, "revision": record.revision, "data_sha256": record.data_sha256,
            "body": review_body(data), "signature": signature if isinstance(signature, dict)
            else None}


def _reviews(reader: Reader, intent_id: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The intent's pin and the approval that made it, as the attestation carries them."""
    record = read_pin(reader, intent_id)
    if usable_pin(record) is None:
        return [], []
    pins = [_carried(record)]
    approval = record.data.get("approval") if record is not None else None
    approvals = []
    if isinstance(approval, str):
        found = reader.get(approval)
        if found is not None and found.damage is None and found.audience == "project" \
                and isinstance(found.data, dict):
            approvals.append(_carried(found))
    return pins, approvals


def check_reviews(predicate: Mapping[str, Any], keys: Sequence[SSlibKey]) -> list[dict[str, Any]]:
    """Each carried pin and approval checked against the reviewer ``keys`` (see :mod:`.review`).

    Raises ``attestation_approval_unsigned`` for the first that is not signed
    by one of them, including a pin the readiness rests on that no reviewer
    signed (trust on first use is not a review).
    """
    out = []
    for role in ("pins", "approvals"):
        for index, item in enumerate(predicate.get(role) or []):
            if not isinstance(item, dict) or not isinstance(item.get("body"), dict):
                raise malformed(f"the readiness statement's {role} are malformed", "/file", 1)
            data = {**item["body"], "signature": item.get("signature")}
            keyid = check_review(str(item.get("id")), data, keys)
            out.append({"id": item.get("id"), "revision": item.get("revision"), "keyid": keyid})
    if not predicate.get("pins"):
        raise AssayError("the attestation carries no pin: no reviewer approved the checks and "
                         "tests its readiness rests on", code="attestation_approval_unsigned",
                         pointer="/reviewer_key",
                         action="A reviewer pins them with 'assay gate pin --sign KEY', then "
                                "attest again.")
    return out


def _statements(text: bytes, key: SSlibKey) -> list[tuple[int, dict[str, Any]]]:
    """Each non-empty line's verified statement, with its line number."""
    out = []
    for number, raw in enumerate(text.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            envelope = parse(raw)
        except AssayError as exc:
            raise malformed(f"not a JSON object: {exc.message}", "/file", number) from None
        payload = verify(envelope, key, line=number)
        try:
            document = parse(payload)
        except AssayError as exc:
            raise malformed(f"the payload is not JSON: {exc.message}", "/file", number) \
                from None
        if not isinstance(document, dict) or document.get("_type") != STATEMENT_TYPE \
                or not isinstance(document.get("subject"), list) or not document["subject"] \
                or not isinstance(document.get("predicate"), dict):
            raise malformed("the payload is not an in-toto Statement v1", "/file", number)
        out.append((number, document))
    if not out:
        raise malformed("the attestation holds no envelope", "/file", 1)
    return out


def _check_subject(attested: list[Any], observation: GitObservation) -> None:
    digests: dict[str, str] = {}
    for item in attested:
        for name, value in ((item.get("digest") or {}) if isinstance(item, dict) else {}).items():
            digests[name] = value
    now = {"head": observation.head, "dirty": bool(observation.dirty),
           "workspace_sha256": observation.workspace_sha256}
    problem = None
    if "gitCommit" not in digests:
        problem = "the attestation names no git commit"
    elif digests["gitCommit"] != observation.head:
        problem = (f"it attests commit {digests['gitCommit']}, the repository is at "
                   f"{observation.head}")
    elif WORKSPACE_DIGEST in digests and digests[WORKSPACE_DIGEST] != observation.workspace_sha256:
        problem = "the workspace's files differ from the attested workspace"
    elif WORKSPACE_DIGEST not in digests and bool(observation.dirty):
        problem = "it attests the clean commit, and the workspace has uncommitted changes"
    if problem is not None:
        raise AssayError(f"the attestation's subject is not this repository now: {problem}",
                         code="attestation_subject_mismatch",
                         details={"attested": digests, "now": now},
                         action="Verify it in a checkout of the attested commit, with no "
                                "uncommitted changes (or the attested ones).")


def _check_chain(ledger: Any, walk: Callable[[int], ChainWalk] | None) -> bool:
    """Whether the ledger's history up to the attested revision is the attested one.

    Raises ``attestation_ledger_rewritten`` when it is not: the chain breaks at
    or before the attested revision, the ledger ends before it, or the chain
    recomputed from the stored versions differs from the attested value there
    (a version was rewritten and the chain recomputed after it). False when
    the bundle records no chain value or no walk is given.
    """
    attested = ledger.get("chain_sha256") if isinstance(ledger, dict) else None
    revision = ledger.get("revision") if isinstance(ledger, dict) else None
    if walk is None or not isinstance(attested, str) or not isinstance(revision, int) \
            or isinstance(revision, bool) or revision < 0:
        return False
    found = walk(revision)
    problem: tuple[int, str, str] | None = None
    if found.broken is not None:
        problem = (found.broken.ledger_revision, found.broken.reason, found.broken.message)
    elif found.ledger_revision < revision:
        problem = (found.ledger_revision + 1, "version_missing",
                   (f"the ledger ends at revision {found.ledger_revision}, before the attested "
                   f"revision {revision}"))
    elif found.chain_sha256 != attested:
        problem = (revision, "chain_differs",
                   (f"the history up to revision {revision} hashes to another chain value than "
                   "the attested one: a version at or before it was rewritten and the chain "
                   "recomputed"))
    if problem is None:
        return True
    raise AssayError(
        f"the ledger's history up to the attested revision {revision} is not the attested one: "
        f"{problem[2]}", code="attestation_ledger_rewritten",
        details={"attested_revision": revision, "ledger_revision": problem[0],
                 "reason": problem[1]},
        action="Do not rely on this ledger: compare it with a backup; 'assay ledger verify' "
               "names the first broken version.")


def _run_error(code: str, message: str, run: Mapping[str, Any]) -> AssayError:
    return AssayError(message, code=code, details={"id": run.get("id"),
                                                   "revision": run.get("revision")},
                      action="The ledger no longer holds what was attested: do not rely on "
                             "this attestation; attest again from the current ledger.")


def verify_bundle(text: bytes, key: SSlibKey, reader: Reader, *, principal: str,
                  observation: GitObservation, reviewer_keys: Sequence[SSlibKey] = (),
                  walk: Callable[[int], ChainWalk] | None = None) -> dict[str, Any]:
    """What a bundle attests, once every check of the module docstring passed.

    With ``reviewer_keys``, every pin and approval the readiness rests on must
    also carry a signature by one of them (:func:`check_reviews`).
    ``walk(revision)`` walks the ledger's hash chain up to a ledger revision
    (:meth:`~assay.ledger.store.Store.walk_chain`); without it, or for a
    bundle that records no chain value, the history is not checked
    (``chain_verified`` false).
    """
    documents = _statements(text, key)
    readiness = [(n, d) for n, d in documents if d.get("predicateType") == READINESS_TYPE]
    others = [(n, d) for n, d in documents if d.get("predicateType") == TEST_RESULT_TYPE]
    if len(readiness) != 1 or len(readiness) + len(others) != len(documents):
        unknown = next((n for n, d in documents
                        if d.get("predicateType") not in (READINESS_TYPE, TEST_RESULT_TYPE)), 1)
        raise malformed(f"an attestation holds one {READINESS_TYPE} statement and "
                        f"{TEST_RESULT_TYPE} statements only", "/file", unknown)
    subjects = readiness[0][1]["subject"]
    for number, document in others:
        if document["subject"] != subjects:
            raise malformed("its statements are about different subjects", "/file", number)
    _check_subject(subjects, observation)
    predicate = readiness[0][1]["predicate"]
    intent = predicate.get("intent") if isinstance(predicate.get("intent"), dict) else {}
    runs = [r for r in predicate.get("runs") or [] if isinstance(r, dict)]
    _check_intent(reader, intent, principal)
    listed: dict[Any, dict[str, Any]] = {(r.get("id"), r.get("revision")): r for r in runs}
    results: dict[Any, dict[str, Any]] = {}
    for number, document in others:
        locator = parse_locator(document["predicate"].get("url"))
        if locator is None or locator not in listed or locator in results:
            raise AssayError(
                f"line {number}: a test-result statement for a run the readiness statement "
                "does not list (or lists twice)", code="attestation_incomplete",
                details={"line": number, "url": document["predicate"].get("url")},
                action="Do not rely on this attestation: statements were added or removed.")
        results[locator] = document["predicate"]
    for run in runs:
        if (run.get("id"), run.get("revision")) not in results:
            raise AssayError(f"the run {run.get('id')}@{run.get('revision')} has no "
                             "test-result statement", code="attestation_incomplete",
                             details={"id": run.get("id"), "revision": run.get("revision")},
                             action="Do not rely on this attestation: statements were "
                                    "removed.")
        _check_run(reader, run, results[(run.get("id"), run.get("revision"))], principal)
    _check_carried(reader, predicate, principal)
    chain_verified = _check_chain(predicate.get("ledger"), walk)
    moved_on = _moved_on(reader, intent, runs, principal)
    reviews = check_reviews(predicate, reviewer_keys) if reviewer_keys else []
    return {
        "verified": True,
        "keyid": key.keyid,
        "subject": subjects,
        "intent": intent,
        "verdict": predicate.get("verdict"),
        "ready_to_review": predicate.get("ready_to_review"),
        "report_sha256": (predicate.get("report") or {}).get("sha256"),
        "runs": [{"id": r.get("id"), "revision": r.get("revision"),
                  "result": results[(r.get("id"), r.get("revision"))].get("result")}
                 for r in runs],
        "statements": len(documents),
        "reviews": reviews,
        "chain_verified": chain_verified,
        "stale": bool(moved_on),
        "moved_on": moved_on,
    }


def _cited(data: Any) -> list[tuple[str, int]]:
    """The ``(id, revision)`` an intent version's acceptance cites, in citation order."""
    acceptance = data.get("acceptance") if isinstance(data, dict) else None
    results = acceptance.get("results") if isinstance(acceptance, dict) else None
    cited: dict[tuple[str, int], None] = {}
    for result in results if isinstance(results, list) else []:
        evidence = result.get("evidence") if isinstance(result, dict) else None
        for ref in evidence if isinstance(evidence, list) else []:
            if isinstance(ref, dict) and isinstance(ref.get("id"), str) \
                    and isinstance(ref.get("revision"), int):
                cited.setdefault((ref["id"], ref["revision"]), None)
    return list(cited)


def _intent_sha256(data: Any) -> str | None:
    if not isinstance(data, dict) or not isinstance(data.get("intent"), dict):
        return None
    try:
        return intent_sha256(data["intent"])
    except AssayError:
        return None


def _change(reader: Reader, record_id: str, revision: int, principal: str,
            role: str) -> dict[str, Any] | None:
    """How ``record_id`` moved on since ``revision``, or None when that is still its current version."""
    current = reader.get(record_id)
    if current is not None and not is_readable(current, principal):
        current = None
    if current is not None and current.status == "current" and current.revision == revision:
        return None
    if current is None:
        change = "missing"
    elif current.status in ("retired", "superseded"):
        change = current.status
    else:
        change = "newer"
    return {"id": record_id, "role": role, "attested_revision": revision,
            "current_revision": current.revision if current is not None else None,
            "status": current.status if current is not None else None, "change": change}


def _moved_on(reader: Reader, intent: Mapping[str, Any], runs: list[dict[str, Any]],
              principal: str) -> list[dict[str, Any]]:
    """What the attested verdict rested on that the ledger now holds otherwise (see the docstring).

    The intent (with ``intent_changed``: whether its ``intent`` object, not only
    its acceptance, differs from the attested one, None when the current
    version cannot be read), then each record the attested intent version's
    acceptance cites and each listed run, in that order, once each.
    """
    record_id, revision = intent["id"], intent["revision"]
    out: list[dict[str, Any]] = []
    moved = _change(reader, record_id, revision, principal, "intent")
    if moved is not None:
        current = reader.get(record_id)
        readable = current is not None and current.damage is None \
            and is_readable(current, principal)
        now = _intent_sha256(current.data) if readable and current is not None else None
        moved["intent_changed"] = None if now is None else now != intent.get("intent_sha256")
        out.append(moved)
    attested = reader.get(record_id, revision)
    cited = _cited(attested.data) if attested is not None and attested.damage is None else []
    for key in dict.fromkeys([*cited, *((r["id"], r["revision"]) for r in runs)]):
        moved = _change(reader, key[0], key[1], principal, "evidence")
        if moved is not None:
            out.append(moved)
    return out


def _check_intent(reader: Reader, intent: Mapping[str, Any], principal: str) -> None:
    record_id, revision = intent.get("id"), intent.get("revision")
    version = (reader.get(record_id, revision)
               if isinstance(record_id, str) and isinstance(revision, int) else None)
    if version is None or not is_readable(version, principal) \
            or version.data_sha256 != intent.get("data_sha256"):
        raise AssayError(
            f"the intent version {record_id}@{revision} is not in the ledger with the attested "
            "digest", code="attestation_intent_mismatch",
            details={"id": record_id, "revision": revision},
            action="Verify against the ledger the attestation was made from; do not rely on it "
                   "otherwise.")


def _check_carried(reader: Reader, predicate: Mapping[str, Any], principal: str) -> None:
    """Each carried pin and approval is in the ledger with its digest and the carried body."""
    for role in ("pins", "approvals"):
        for item in predicate.get(role) or []:
            record_id = item.get("id") if isinstance(item, dict) else None
            revision = item.get("revision") if isinstance(item, dict) else None
            version = (reader.get(record_id, revision)
                       if isinstance(record_id, str) and isinstance(revision, int) else None)
            if version is None or version.damage is not None \
                    or not is_readable(version, principal) \
                    or version.data_sha256 != item.get("data_sha256") \
                    or not isinstance(version.data, dict) \
                    or review_body(version.data) != item.get("body"):
                raise AssayError(
                    f"the carried {role[:-1]} {record_id}@{revision} is not in the ledger with "
                    "the attested digest and body", code="attestation_pin_mismatch",
                    details={"id": record_id, "revision": revision},
                    action="Do not rely on this attestation; attest again from the current "
                           "ledger.")


def _check_run(reader: Reader, run: Mapping[str, Any], predicate: Mapping[str, Any],
               principal: str) -> None:
    record_id, revision = run.get("id"), run.get("revision")
    if not isinstance(record_id, str) or not isinstance(revision, int):
        raise malformed("a listed run has no id and revision", "/file", 1)
    version = reader.get(record_id, revision)
    if version is None or not is_readable(version, principal):
        raise _run_error("attestation_run_missing",
                         f"the attested run {record_id}@{revision} is not in the ledger", run)
    if version.damage is not None or version.data_sha256 != run.get("data_sha256"):
        raise _run_error("attestation_run_mismatch",
                         f"the run {record_id}@{revision} in the ledger does not have the "
                         "attested data digest", run)
    facts = run_facts(version)
    expected = "PASSED" if facts is not None and facts["status"] == "passed" else "FAILED"
    if facts is None or predicate.get("result") != expected:
        raise _run_error("attestation_run_mismatch",
                         f"the run {record_id}@{revision} in the ledger is not a run of assay's "
                         "evidence runner with the attested result", run)
