"""Lanes, routing conditions and passes of a recon-layout packet.

Every artifact is written by an approved lane of a wave of its mode, inside
the lane's write root; every approved lane that wrote nothing complete is
named by a material outcome gap; version-2 routing conditions have final,
evidenced dispositions; the complete artifacts make the passes, the passes
the achieved profile; and there is exactly one terminal reconciliation
where the profile needs one. Imports the base modules and the packet
modules.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from assay.packet.layout import (
    LEDGER_FILE,
    MANIFEST_FILE,
)
from assay.packet.model import PROFILES, REVIEW_WAVE
from assay.packet.recon.contract import items
from assay.packet.recon.run import (
    ASSURANCE_KINDS,
    CONTROLLER,
    PASS_ARTIFACTS,
    REQUIRED,
    Entry,
    ReconRun,
    complete,
    gap_names_lane,
    gap_names_mode,
    has_lane_identity,
    lane_of,
    same,
)

__all__ = ["achieved_profile", "approved_lanes", "assurance_ids", "collect_passes", "conditions",
           "lanes_by_id", "pass_outcomes", "terminal", "typed_artifacts", "wave_list"]


def wave_list(r: ReconRun) -> list[dict[str, Any]]:
    """The manifest's waves that are objects."""
    execution = r.m.get("execution")
    waves = execution.get("waves") if type(execution) is dict else None
    return [w for w in items(waves) if type(w) is dict]


def lanes_by_id(r: ReconRun) -> dict[str, tuple[dict[str, Any], dict[str, Any], int, int]]:
    """Each lane id: (wave, lane, wave index, lane index)."""
    out: dict[str, tuple[dict[str, Any], dict[str, Any], int, int]] = {}
    for w, wave in enumerate(wave_list(r)):
        for n, lane in enumerate(items(wave.get("lanes"))):
            if type(lane) is dict and isinstance(lane.get("laneId"), str):
                out[lane["laneId"]] = (wave, lane, w, n)
    return out


def typed_artifacts(r: ReconRun) -> Iterable[tuple[str, dict[str, Any], Entry]]:
    """Every referenced artifact with a string id and an object value."""
    for aid, entry in r.s.by_id.items():
        if type(entry.value) is dict:
            yield aid, entry.value, entry


def conditions(r: ReconRun) -> None:
    """Routing conditions of a version-2 manifest: outcomes, evidence, activation."""
    execution = r.m.get("execution")
    conditions = [c for c in items(execution.get("conditions") if type(execution) is dict
                                   else None) if type(c) is dict]
    lanes = {lid: wave for lid, (wave, *_rest) in lanes_by_id(r).items()}
    outcomes = {o.get("conditionId"): o for o in r.m["conditionOutcomes"]
                if type(o) is dict}
    known = {c.get("conditionId") for c in conditions}
    for stated in outcomes.values():
        if stated.get("conditionId") not in known:
            r.at_manifest("UNKNOWN_CONDITION_OUTCOME", "$.conditionOutcomes",
                          "an outcome names an unknown condition")
    for condition in conditions:
        cid = condition.get("conditionId")
        outcome = outcomes.get(cid)
        where = f"condition:{cid}"
        if outcome is None:
            r.err("MISSING_CONDITION_OUTCOME", where, f"condition {cid} has no final "
                  "disposition", MANIFEST_FILE, "/conditionOutcomes")
            continue
        evidence: list[dict[str, Any]] = []
        seen: set[Any] = set()
        rejected = False
        for ref in items(outcome.get("evidence")):
            path = ref.get("path") if type(ref) is dict else None
            entry = r.s.by_path.get(path) if isinstance(path, str) else None
            listed = any(same(a, ref) for a in r.m["artifacts"])
            if not listed or entry is None or not same(entry.ref, ref):
                r.err("INVALID_CONDITION_EVIDENCE", str(path), "condition evidence is "
                      "not an exact validated artifact", MANIFEST_FILE, "/conditionOutcomes")
                rejected = True
                continue
            value = entry.value if type(entry.value) is dict else {}
            wave = lanes.get(lane_of(value))
            if value.get("runId") != r.m["run"]["id"]:
                code, why = "CONDITION_EVIDENCE_RUN_MISMATCH", "belongs to another run"
            elif wave is None or wave.get("waveId") not in items(condition.get("afterWaveIds")):
                code, why = "INVALID_CONDITION_EVIDENCE", "is not from an approved predecessor"
            elif not complete(value):
                code, why = "INCOMPLETE_CONDITION_PREDECESSOR", "is not complete"
            else:
                evidence.append(value)
                seen.add(wave.get("waveId"))
                continue
            r.err(code, str(path), f"condition evidence {why}", entry.path)
            rejected = True
        triggered = outcome.get("disposition") == "triggered"
        if triggered and not rejected:
            if any(w not in seen for w in items(condition.get("afterWaveIds"))):
                r.err("INCOMPLETE_CONDITION_PREDECESSOR", where, "the condition binds no "
                      "complete evidence of every predecessor", MANIFEST_FILE,
                      "/conditionOutcomes")
            if not predicate_holds(condition, evidence):
                r.err("CONDITION_PREDICATE_UNSATISFIED", where, "the condition lacks typed "
                      "evidence of its predicate", MANIFEST_FILE, "/conditionOutcomes")
        if triggered:
            r.s.active.add(str(condition.get("destinationWaveId")))
    for aid, value, _entry in typed_artifacts(r):
        wave = lanes.get(lane_of(value))
        if value.get("runId") == r.m["run"]["id"] and wave is not None \
                and wave.get("conditional") is True and wave.get("waveId") not in r.s.active:
            r.at_artifact("INACTIVE_CONDITIONAL_ARTIFACT", aid,
                          "an inactive conditional wave cannot contribute artifacts")


def predicate_holds(condition: dict[str, Any], evidence: list[dict[str, Any]]) -> bool:
    if condition.get("predicate") == "insufficient-evidence":
        return any(items(a.get("gaps")) or items(a.get("unresolvedIssues"))
                   or any(type(f) is dict and f.get("material") is True
                          for f in items(a.get("coverageFindings"))) for a in evidence)
    if condition.get("predicate") == "unresolved-material-challenge":
        return any(a.get("reviewKind") == "adversarial" and items(a.get("unresolvedIssues"))
                   and any(type(d) is dict and d.get("disposition") == "challenged"
                           for d in items(a.get("dispositions"))) for a in evidence)
    return False


def lane_gap(r: ReconRun, wave: dict[str, Any], lane_id: str) -> bool:
    """Whether a material PASS gap accounts for an approved lane that wrote nothing."""
    gaps = r.m["gaps"]
    if r.version == 1:
        return any(gap_names_mode(g, str(wave.get("mode"))) for g in gaps)
    if any(gap_names_lane(g, wave.get("waveId"), lane_id) for g in gaps):
        return True
    if wave.get("conditional") is True or len(items(wave.get("lanes"))) != 1:
        return False
    same_mode = [w for w in wave_list(r) if w.get("mode") == wave.get("mode")]
    return len(same_mode) == 1 and any(not has_lane_identity(g)
                                       and gap_names_mode(g, str(wave.get("mode")))
                                       for g in gaps)


def approved_lanes(r: ReconRun) -> None:
    """Every artifact from an approved lane of its mode, inside its write root; every
    approved lane that wrote nothing complete named by a material outcome gap."""
    lanes = lanes_by_id(r)
    run_id = r.m["run"]["id"]
    written: set[str] = set()
    for aid, value, entry in typed_artifacts(r):
        if value.get("runId") != run_id:
            continue
        if value.get("kind") == "recon.review-result" \
                and value.get("reviewKind") == "reconciliation" \
                and value.get("reviewerLane") == CONTROLLER:
            continue
        lane_id = lane_of(value)
        if lane_id is None:
            continue
        approved = lanes.get(lane_id) if isinstance(lane_id, str) else None
        wave = approved[0] if approved else {}
        if value.get("kind") == "recon.raw-dossier":
            fits = (approved is not None and wave.get("waveId") == value.get("waveId")
                    and (value.get("mode") == "gather" if wave.get("mode") == "redundant-gather"
                         else wave.get("mode") == value.get("mode")))
        else:
            fits = approved is not None and \
                REVIEW_WAVE.get(str(value.get("reviewKind"))) == wave.get("mode")
        if not fits:
            r.at_artifact("UNAPPROVED_LANE", aid, f"artifact {aid} was not written by an "
                          "approved lane of a matching wave")
            continue
        assert approved is not None
        root = approved[1].get("writeRoot")
        path = entry.ref["path"]
        if not isinstance(root, str) or (path != root and not path.startswith(root + "/")):
            r.at_artifact("LANE_WRITE_PATH_VIOLATION", aid,
                          f"artifact {aid} is outside its lane's write root")
        if complete(value):
            written.add(str(lane_id))
    for lane_id, (wave, lane, w, n) in lanes.items():
        if lane.get("writeRoot") in (LEDGER_FILE, MANIFEST_FILE):
            r.advise("INVALID_PATH", f"lane:{lane_id}", f"lane {lane_id} writes a "
                     "canonical file: assay's own envelopes refuse such a write root",
                     MANIFEST_FILE, f"/execution/waves/{w}/lanes/{n}/writeRoot")
        if (wave.get("conditional") is True and (r.version == 1 or wave.get("waveId")
                                                 not in r.s.active)) \
                or wave.get("mode") == "compile" or lane_id in written:
            continue
        if not lane_gap(r, wave, lane_id):
            r.err("MISSING_LANE_OUTCOME", f"lane:{lane_id}",
                  f"approved lane {lane_id} has neither a complete result nor a material "
                  "outcome gap naming it", MANIFEST_FILE,
                  f"/execution/waves/{w}/lanes/{n}")


def collect_passes(r: ReconRun) -> None:
    """The complete same-run artifacts of each pass (version 2: contradicted ones dropped)."""
    run_id = r.m["run"]["id"]
    owners = {lid: wave for lid, (wave, *_r) in lanes_by_id(r).items()}
    passes: dict[str, list[str]] = {}
    for aid, value, _entry in typed_artifacts(r):
        if value.get("runId") != run_id or not complete(value):
            continue
        wave = owners.get(lane_of(value))
        if wave is not None and wave.get("conditional") is True and r.version == 2 \
                and wave.get("waveId") not in r.s.active:
            continue
        if r.version == 2 and value.get("kind") == "recon.raw-dossier" \
                and value.get("mode") == "gather":
            if wave is not None and wave.get("waveId") == value.get("waveId") \
                    and wave.get("mode") in ("gather", "redundant-gather"):
                passes.setdefault(str(wave["mode"]), []).append(aid)
            continue
        for mode, (kind, key, wanted) in PASS_ARTIFACTS.items():
            if value.get("kind") == kind and value.get(key) == wanted:
                passes.setdefault(mode, []).append(aid)
    if r.version == 1:
        lanes = {r.s.by_id[a].value.get("laneId") for a in passes.get("gather", [])}
        if len(lanes) >= 2:
            passes["redundant-gather"] = list(passes["gather"])
    for ids in passes.values():
        ids.sort()
    r.s.passes = passes
    if r.version == 2:
        contradictory_passes(r, owners)


def contradictory_passes(r: ReconRun, owners: dict[str, dict[str, Any]]) -> None:
    """A complete pass that a material outcome gap says failed is not counted."""
    for mode in list(r.s.passes):
        lanes = [(owners[lid], lid) for aid in r.s.passes[mode]
                 if (lid := lane_of(r.s.by_id[aid].value)) in owners]
        gap = next((g for g in r.m["gaps"] for wave, lid in lanes
                    if (gap_names_lane(g, wave.get("waveId"), lid)
                        if has_lane_identity(g) else
                        wave.get("mode") == mode and lane_gap_legacy(r, g, wave))), None)
        if gap is not None:
            del r.s.passes[mode]
            r.err("CONTRADICTORY_PASS_OUTCOME", f"pass:{mode}",
                  f"complete {mode} artifacts contradict a material outcome gap",
                  MANIFEST_FILE, "/gaps")


def lane_gap_legacy(r: ReconRun, gap: Any, wave: dict[str, Any]) -> bool:
    """Whether a mode-only gap names the one lane of the one wave of its mode."""
    same_mode = [w for w in wave_list(r) if w.get("mode") == wave.get("mode")]
    return (len(items(wave.get("lanes"))) == 1 and len(same_mode) == 1
            and gap_names_mode(gap, str(wave.get("mode"))))


def achieved_profile(r: ReconRun) -> str | None:
    """The highest profile whose passes are all complete, or None."""
    found = None
    for profile in PROFILES:
        if all(mode in r.s.passes for mode in REQUIRED[r.version][profile]):
            found = profile
    return found


def pass_outcomes(r: ReconRun) -> None:
    """Every required pass of the requested profile is complete or named by a gap."""
    requested = r.m["run"].get("requestedProfile")
    waves = wave_list(r)
    for mode in REQUIRED[r.version].get(str(requested), ()):
        if mode in r.s.passes:
            continue
        named = any(
            (gap_names_mode(g, mode) if not (r.version == 2 and has_lane_identity(g))
             else any(w.get("mode") == mode and w.get("waveId") == g.get("waveId")
                      and any(type(x) is dict and x.get("laneId") == g.get("laneId")
                              for x in items(w.get("lanes")))
                      and gap_names_lane(g, g.get("waveId"), g.get("laneId"))
                      for w in waves))
            for g in r.m["gaps"])
        if not named:
            r.err("MISSING_PASS_OUTCOME_EVIDENCE", f"pass:{mode}",
                  f"the requested {requested} profile lacks a complete {mode} result and "
                  "a material PASS_FAILED or PASS_OMITTED gap naming it", MANIFEST_FILE,
                  "/gaps")


def assurance_ids(r: ReconRun) -> set[str]:
    """The ids of the complete same-run assurance results."""
    return {aid for aid, value, _e in typed_artifacts(r)
            if value.get("kind") == "recon.review-result"
            and value.get("runId") == r.m["run"]["id"]
            and value.get("reviewKind") in ASSURANCE_KINDS and complete(value)}


def terminal(r: ReconRun, required: bool) -> None:
    """Exactly one complete terminal reconciliation where the profile needs one; it and
    the prior ledger it binds are kept for the reconciliation rules."""
    complete = r.s.passes.get("reconciliation", [])
    terminal = complete[0] if complete else None
    results = [v for _a, v, _e in typed_artifacts(r) if v.get("kind") == "recon.review-result"
               and v.get("reviewKind") == "reconciliation"]
    if len(results) != (1 if required else 0) or (required and results[0].get("id")
                                                  != terminal):
        where = terminal or "$.artifacts"
        r.err("SHADOW_RECONCILIATION", where, "the packet holds exactly its one complete "
              "terminal reconciliation", MANIFEST_FILE, "/artifacts")
    entry = r.s.by_id.get(terminal) if terminal else None
    r.s.reconciliation = entry.value if entry else None
    if r.s.reconciliation is not None:
        bound = r.s.reconciliation.get("inputLedger")
        prior = next((e.value for e in r.s.by_path.values() if same(e.ref, bound)
                      and type(e.value) is dict and e.value.get("kind") == "recon.claim-ledger"),
                     None)
        r.s.prior = prior

