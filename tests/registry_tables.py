"""The copies of the registry kept in files, generated from it, and the script that rewrites them.

Three places hold what the operations registry knows, for readers that
cannot ask it: the ``DECLARED`` table in ``src/assay/ops/__init__.py`` (so
the CLI imports only the module of the operation it runs), the table of
every read's bound and the table of the two MCP profiles in
``docs/agents.md``. Each sits between ``BEGIN generated: NAME`` and ``END
generated: NAME`` markers and is written only from the registry's
declarations. A test (``tests/foundation/test_registry_tables.py``) fails
when one is stale; rewrite them with::

    .venv/bin/python tests/registry_tables.py

``DECLARED`` lists every module of ``assay.ops`` that registers an
operation, in its current order with new modules after it, and each
module's operations in the order the module registers them (its source
order): the order of ``assay describe``, ``--help`` and the MCP tool list.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OPS_INIT = ROOT / "src" / "assay" / "ops" / "__init__.py"
AGENTS = ROOT / "docs" / "agents.md"


def registered_by_module() -> dict[str, list[str]]:
    """Every operation by the module that registers it: DECLARED's modules first, then new ones."""
    from assay import ops
    from assay.ops import _REGISTRY, DECLARED

    for info in sorted(pkgutil.iter_modules(ops.__path__), key=lambda i: i.name):
        if not info.ispkg:
            importlib.import_module(f"assay.ops.{info.name}")
    found: dict[str, list[str]] = {module: [] for module in DECLARED}
    for name, op in _REGISTRY.items():  # registration order: each module's source order
        module = op.handler.__module__
        if module.startswith("assay.ops."):
            found.setdefault(module, []).append(name)
    return {module: names for module, names in found.items() if names}


def declared_source() -> str:
    """The Python source of the DECLARED table, lines wrapped at 100 columns."""
    lines = ["DECLARED: dict[str, tuple[str, ...]] = {"]
    for module, names in registered_by_module().items():
        head = f'    "{module}": ('
        words = [f'"{name}", ' for name in names]
        words[-1] = f'"{names[-1]}"' + (",)," if len(names) == 1 else "),")
        line = head
        for word in words:
            if len(line + word.rstrip()) > 100 and line != head:
                lines.append(line.rstrip())
                line = " " * len(head)
            line += word
        lines.append(line)
    lines.append("}")
    return "\n".join(lines)


def _amounts(unit: str, items: int | None, size: int | None) -> str:
    plural = unit[:-1] + "ies" if unit.endswith("y") else unit + "s"
    parts = [f"{items:,} {plural}"] if items is not None else []
    if size is not None:
        parts.append(f"{size // 1024} KiB" if size < 1024 * 1024 else f"{size // (1024 * 1024)} MiB")
    return ", ".join(parts)


def bound_cells(bound: object) -> tuple[str, str]:
    """The default and maximum cells of one read's row."""
    from assay.ops import Bound

    assert isinstance(bound, Bound)
    if bound.whole:
        first = (f"one {bound.unit}" if bound.items == 1
                 else f"at most {_amounts(bound.unit, bound.items, None)}")
        return first, "same (whole)"
    return (_amounts(bound.unit, bound.items, bound.bytes),
            _amounts(bound.unit, bound.max_items, bound.max_bytes))


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def bounds_table() -> str:
    """The table of every read's bound (docs/agents.md, section 5.5)."""
    from assay.ops import operations

    rows = ["| operation | default bound | maximum | how the rest is read |", "|---|---|---|---|"]
    for op in operations():
        if op.bounds is None:
            continue
        default, maximum = bound_cells(op.bounds)
        everything = (f" The `{op.bounds.unbounded}` argument asks for everything."
                      if op.bounds.unbounded else "")
        rows.append(f"| `{' '.join(op.cli_path)}` | {default} | {maximum} | "
                    f"{_cell(op.bounds.recover)}{everything} |")
    return "\n".join(rows)


def hints_cell(hints: dict[str, bool]) -> str:
    """An operation's hints in words: read-only, additive or destructive, idempotent, open world."""
    words = ["read-only" if hints["read_only"] else
             "destructive" if hints["destructive"] else "additive"]
    if hints.get("idempotent"):
        words.append("idempotent")
    if hints["open_world"]:
        words.append("open world")
    return ", ".join(words)


def profiles_table() -> str:
    """The table of every operation's MCP tool, profile and hints (docs/agents.md, section 2.1)."""
    from assay.ops import operations

    rows = ["| operation | MCP tool | profile | hints |", "|---|---|---|---|"]
    for op in operations():
        rows.append(f"| `assay {' '.join(op.cli_path)}` | `{op.tool_name}` | "
                    f"{'admin' if op.admin else 'agent, admin'} | {hints_cell(op.hints)} |")
    return "\n".join(rows)


# File, region name, comment style (Python or Markdown), generator.
REGIONS: list[tuple[Path, str, str, Callable[[], str]]] = [
    (OPS_INIT, "DECLARED", "python", declared_source),
    (AGENTS, "profiles", "markdown", profiles_table),
    (AGENTS, "bounds", "markdown", bounds_table),
]


def _markers(name: str, style: str) -> tuple[str, str]:
    if style == "python":
        return (f"# BEGIN generated: {name} (tests/registry_tables.py)",
                f"# END generated: {name}")
    return f"<!-- BEGIN generated: {name} -->", f"<!-- END generated: {name} -->"


def with_region(text: str, name: str, style: str, body: str) -> str:
    """``text`` with the region ``name`` holding ``body`` (ValueError when a marker is missing)."""
    begin, end = _markers(name, style)
    pattern = re.compile(re.escape(begin) + r"\n.*?" + re.escape(end) + "|"
                         + re.escape(begin) + r"\n" + re.escape(end), re.DOTALL)
    if len(pattern.findall(text)) != 1:
        raise ValueError(f"one region {name!r} needs its two markers")
    return pattern.sub(lambda _m: f"{begin}\n{body}\n{end}", text)


def region(text: str, name: str, style: str) -> str:
    """What the region ``name`` of ``text`` holds now."""
    begin, end = _markers(name, style)
    return text[text.index(begin) + len(begin) + 1:text.index(end)].rstrip("\n")


def generated() -> dict[Path, str]:
    """Every file holding a region, with each of its regions generated afresh."""
    out: dict[Path, str] = {}
    for path, name, style, make in REGIONS:
        text = out.get(path, path.read_text(encoding="utf-8"))
        out[path] = with_region(text, name, style, make())
    return out


def stale() -> list[str]:
    """The regions whose text differs from what the registry generates, as FILE:NAME."""
    return [f"{path.relative_to(ROOT)}:{name}" for path, name, style, make in REGIONS
            if region(path.read_text(encoding="utf-8"), name, style) != make()]


def main() -> int:
    """Rewrite every generated region; print what changed."""
    for path, text in generated().items():
        if path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            sys.stdout.write(f"rewrote {path.relative_to(ROOT)}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
