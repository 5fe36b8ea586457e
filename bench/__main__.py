"""``python -m bench [--quick] [--only NAME] [--out-dir DIR]``: run every benchmark module.

Writes ``bench/results.json`` and rewrites the generated part of
``BENCHMARKS.md`` (between the ``<!-- bench:begin -->`` and
``<!-- bench:end -->`` markers); with ``--out-dir`` both go to DIR instead,
which is how the smoke test runs it without touching the repository.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"


def modules() -> list[str]:
    return sorted(p.stem for p in HERE.glob("bench_*.py"))


def machine() -> dict[str, str]:
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": str(os.cpu_count()),
    }


def command(module: str, quick: bool) -> str:
    """The command that measures ``module``'s rows again."""
    return f".venv/bin/python -m bench --only {module}{' --quick' if quick else ''}"


def _goal(r: dict) -> str:
    verdict = {True: " (met)", False: " (**not met**)", None: ""}[r.get("met")]
    return f"{r['goal']}{verdict}" if r["goal"] else ""


def _ratio(r: dict) -> str:
    """The ratio to two decimals, or three where two would round a missed goal onto it."""
    text = f"{r['ratio']:.2f}x"
    if r.get("met") is False and text in r["goal"]:
        text = f"{r['ratio']:.3f}x"
    return text


def _figure(r: dict) -> str:
    """The row's figure its goal is about: the ratio, or the measurement for a goal in units."""
    if r["goal"].rstrip().endswith("x"):
        return _ratio(r)
    return f"{r['assay']:.4g} {r['unit']}"


def render(results: dict) -> str:
    lines = [(f"Measured {results['measured_at']} on {results['machine']['platform']}, "
             f"Python {results['machine']['python']}, {results['machine']['cpus']} CPUs"
             f"{' (quick mode)' if results['quick'] else ''}."), ""]
    unmet = [(module, r) for module, rows in results["benchmarks"].items() for r in rows
             if r.get("met") is False]
    if unmet:
        lines += ["Goals not met in this run:", ""]
        lines += [f"- {module}: {r['name']}: {_figure(r)} against {r['goal']}"
                  for module, r in unmet]
        lines.append("")
    for module, rows in results["benchmarks"].items():
        commands = sorted({r.get("command", "") for r in rows} - {""})
        lines += [f"### {module}", ""]
        lines += [f"`{c}`" for c in commands] + ([""] if commands else [])
        lines += ["| measurement | assay | baseline | ratio | spread | goal |",
                  "|---|---|---|---|---|---|"]
        for r in rows:
            lines.append(
                f"| {r['name']} | {r['assay']:.4g} {r['unit']} | {r['baseline']:.4g} {r['unit']} "
                f"({r['baseline_name']}) | {_ratio(r)} | {r['spread']:.2g} | {_goal(r)} |")
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("--quick", action="store_true", help="small sizes; finishes in under 2 minutes")
    parser.add_argument("--only", action="append", default=[], help="run only these modules")
    parser.add_argument("--no-write", action="store_true", help="print, do not update files")
    parser.add_argument("--out-dir", default=None, metavar="DIR",
                        help="write results.json and BENCHMARKS.md into DIR instead of the "
                             "repository (BENCHMARKS.md starts from the repository's copy)")
    opts = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    results = {"measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "machine": machine(), "quick": opts.quick, "benchmarks": {}}
    for name in modules():
        if opts.only and name not in opts.only and name.removeprefix("bench_") not in opts.only:
            continue
        started = time.monotonic()
        rows = importlib.import_module(f"bench.{name}").run(quick=opts.quick)
        for r in rows:
            r["command"] = command(name, opts.quick)
        results["benchmarks"][name] = rows
        print(f"{name}: {len(rows)} rows in {time.monotonic() - started:.1f} s", file=sys.stderr)
    print(json.dumps(results, indent=2))
    if opts.no_write:
        return 0
    out_dir = Path(opts.out_dir) if opts.out_dir else None
    if out_dir:
        out_dir.mkdir(parents=True, exist_ok=True)
    out = (out_dir / "results.json") if out_dir else HERE / "results.json"
    previous = json.loads(out.read_text()) if out.exists() else {}
    if opts.only and previous.get("benchmarks"):
        previous["benchmarks"].update(results["benchmarks"])
        results["benchmarks"] = dict(sorted(previous["benchmarks"].items()))
    out.write_text(json.dumps(results, indent=2) + "\n")
    doc = (out_dir / "BENCHMARKS.md") if out_dir else ROOT / "BENCHMARKS.md"
    source = doc if doc.exists() else ROOT / "BENCHMARKS.md"
    text = source.read_text() if source.exists() else f"# Benchmarks\n\n{BEGIN}\n{END}\n"
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    doc.write_text(f"{head}{BEGIN}\n{render(results)}\n{END}{tail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
