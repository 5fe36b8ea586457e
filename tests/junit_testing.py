"""Builders for per-test evidence tests: JUnit XML documents and commands that write them.

A uniquely named module at the tests root (like ``assay_testing``), imported by
the evidence, intent and attestation tests.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from xml.sax.saxutils import quoteattr

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "junit"


def junit_xml(*cases: tuple[str, str, str] | tuple[str, str, str, tuple[str, ...]]) -> str:
    """A pytest-shaped JUnit document: one testcase per ``(classname, name, outcome[, reqs])``.

    ``outcome`` is passed, failed, error or skipped; ``reqs`` become
    ``requirement`` properties as assay's pytest plugin writes them.
    """
    rows = []
    for case in cases:
        classname, name, outcome = case[0], case[1], case[2]
        reqs: tuple[str, ...] = case[3] if len(case) > 3 else ()  # type: ignore[misc]
        props = "".join(f'<property name="requirement" value={quoteattr(r)} />' for r in reqs)
        body = f"<properties>{props}</properties>" if props else ""
        if outcome == "failed":
            body += f'<failure message="assert False">{name} failed</failure>'
        elif outcome == "error":
            body += '<error message="setup failed">fixture missing</error>'
        elif outcome == "skipped":
            body += '<skipped type="pytest.skip" message="not now" />'
        rows.append(f"<testcase classname={quoteattr(classname)} name={quoteattr(name)} "
                    f'time="0.001">{body}</testcase>')
    return ('<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests">'
            f'<testsuite name="pytest" tests="{len(rows)}">{"".join(rows)}</testsuite>'
            "</testsuites>")


def writer_code(path: str, document: str, exit_code: int = 0) -> str:
    """Python source that writes ``document`` to ``path`` (making its directory) and exits."""
    return (f"import os, sys; p = {path!r}; os.makedirs(os.path.dirname(p) or '.', "
            f"exist_ok=True); open(p, 'w', encoding='utf-8').write({document!r}); "
            f"sys.exit({exit_code})")


def results_command(name: str, document: str, exit_code: int = 0, *,
                    path: str = "reports/unit.xml", extra: str = "") -> str:
    """An ``[evidence.commands.NAME]`` table whose command writes ``document`` as its results."""
    argv = json.dumps([sys.executable, "-c", writer_code(path, document, exit_code)])
    return (f"\n[evidence.commands.{name}]\nargv = {argv}\ntimeout = 60\n"
            f'results = {{ format = "junit", path = "{path}" }}\n{extra}')
