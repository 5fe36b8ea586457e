"""What a reviewer reads, in words: shared by the report page and the terminal views.

Three phrasings must not drift between the HTML page and the terminal, so
they live here once:

- :func:`cited_revision`: the revision a requirement cites beside the
  current revision of that record;
- :func:`run_outcome`: how a cited run bears on the requirement citing it.
  A run with per-test results speaks for each requirement through that
  requirement's own tests, so a requirement whose tests passed in a run that
  failed elsewhere reads as passed, and the run's failure is named as
  elsewhere;
- :func:`merge_repeated`: the same text said of several subjects (a note
  on several requirements, one issue message for each requirement citing a
  stale run) becomes one entry with the list of what it applies to.

Pure; imports the standard library only (the terminal views import it on
the CLI's readable path).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from typing import Any, TypeVar

__all__ = ["cited_revision", "merge_repeated", "run_outcome", "subjects"]

K = TypeVar("K", bound=Hashable)


def cited_revision(revision: Any, current: Any) -> tuple[bool, str]:
    """Whether the cited revision is the current one, and the words that say so.

    ``(True, "revision 2, the current one")``, ``(False, "revision 1, not the
    current revision 2")`` or ``(False, "revision 1; the record has no
    current revision")``.
    """
    if current is None:
        return False, f"revision {revision}; the record has no current revision"
    if current == revision:
        return True, f"revision {revision}, the current one"
    return False, f"revision {revision}, not the current revision {current}"


def _exit(run: Mapping[str, Any]) -> str:
    """``"exit 1"``, or "" for no exit code or exit 0."""
    code = run.get("exit_code")
    return f"exit {code}" if code not in (None, 0) else ""


def run_outcome(run: Mapping[str, Any]) -> tuple[str, str]:
    """The outcome that counts for the citing requirement, and the words for it.

    ``run`` is a reference's ``run`` from the readiness report: ``{status,
    exit_code, command}`` and, when the run has per-test results for the
    requirement, ``requirement: {id, outcome, tests}``. Without that, the
    outcome is the run's status (``"unit failed, exit 1"``). With it, the
    outcome is the requirement's own (``passed``, ``failed``, ``unverified``)
    and the words say both: ``"R1 passed on its own 2 tests; the run of unit
    failed elsewhere (exit 1)"`` when the run failed on other tests.
    """
    command = str(run.get("command") or "the run")
    status = str(run.get("status") or "unknown")
    code = _exit(run)
    own = run.get("requirement")
    if not isinstance(own, Mapping) or own.get("outcome") is None:
        return status, f"{command} {status}" + (f", {code}" if code else "")
    rid, outcome, count = own.get("id"), str(own["outcome"]), own.get("tests", 0)
    tests = f"{count} test" + ("" if count == 1 else "s")
    if outcome == "passed" and status != "passed":
        return outcome, (f"{rid} passed on its own {tests}; the run of {command} {status} "
                         "elsewhere" + (f" ({code})" if code else ""))
    return outcome, (f"{rid} {outcome} on its own {tests}; the run of {command} {status}"
                     + (f" ({code})" if code else ""))


def merge_repeated(items: Iterable[tuple[K, str]]) -> list[tuple[K, list[str]]]:
    """Group ``(text, subject)`` pairs by text, in order of first appearance.

    Each text keeps the distinct subjects it was said of, in order; a text
    said once has one subject.
    """
    groups: dict[K, dict[str, None]] = {}
    for key, subject in items:
        groups.setdefault(key, {})[subject] = None
    return [(key, list(names)) for key, names in groups.items()]


def subjects(names: list[str], limit: int = 20) -> str:
    """``"R1, R2 and R3"``; past ``limit`` names, the rest are counted."""
    shown = names[:limit]
    rest = len(names) - len(shown)
    if rest:
        return ", ".join(shown) + f" and {rest} more"
    if len(shown) <= 1:
        return "".join(shown)
    return ", ".join(shown[:-1]) + " and " + shown[-1]
