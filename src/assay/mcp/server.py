"""The MCP server: one tool per registered operation, over stdio.

Built on the official MCP Python SDK's low-level ``Server`` so that each
tool's input schema is exactly the registry's schema. A tool result carries
the same envelope the CLI prints, as structured content and as JSON text:
``{ok: true, operation, data, ...}`` or ``{ok: false, error: {...}}`` with
``is_error`` set. Errors are translated here, in one place.

The SDK is imported only inside this module, which only ``assay mcp`` loads.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server

from assay import __version__
from assay.errors import AssayError, UsageError
from assay.ops import Invocation, call, error_envelope, lookup, operations

__all__ = ["build_server", "serve", "startup_hint", "tool_definitions"]


def tool_definitions() -> list[types.Tool]:
    """The MCP tools, one per operation, generated from the registry."""
    tools = []
    for op in operations():
        # A read's bound comes before the effect line, which ends every description.
        bound = f"\n\n{op.text(op.bounds.sentence, 'mcp')}" if op.bounds is not None else ""
        tools.append(
            types.Tool(
                name=op.tool_name,
                title=op.text(op.summary, "mcp"),
                description=f"{op.help('mcp')}{bound}\n\n{op.text(op.effect_line, 'mcp')}",
                input_schema=op.input_schema(),
                annotations=types.ToolAnnotations(read_only_hint=not op.writes),
                _meta={"assay/bounds": op.bounds.describe()} if op.bounds is not None else None,
            )
        )
    return tools


def startup_hint(cwd: str | None, program: str = "assay") -> str:
    """One line for a person who started the server on a terminal: what to give a client."""
    root = os.path.abspath(cwd or os.getcwd())
    entry = json.dumps({"command": program, "args": ["mcp", "--cwd", root]})
    return f"MCP server on stdio; configure your client with {entry} (Ctrl-D ends it)."


def _result(envelope: dict[str, Any], is_error: bool) -> types.CallToolResult:
    text = json.dumps(envelope, ensure_ascii=False, sort_keys=True)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=envelope,
        is_error=is_error,
    )


def invoke(name: str, arguments: dict[str, Any] | None, *, cwd: str | None = None,
           db: str | None = None, principal: str | None = None) -> tuple[dict[str, Any], bool]:
    """Run one tool call synchronously; return ``(envelope, is_error)``."""
    try:
        op = lookup(name)
        if op.tool_name != name:
            raise UsageError(f"unknown tool {name!r}", code="unknown_operation")
        if not isinstance(arguments, (dict, type(None))):
            raise UsageError("tool arguments must be an object", code="invalid_argument")
        _refuse_lone_surrogates(arguments or {})
        _refuse_nul_in_plain_arguments(arguments or {})
        inv = Invocation(cwd=cwd, db=db, principal=principal, surface="mcp")
        try:
            envelope, _code = call(op.name, arguments or {}, inv)
        finally:
            inv.close()
        return envelope, False
    except AssayError as err:
        return error_envelope(err), True
    except Exception as exc:  # noqa: BLE001 - the one place a bug becomes internal_error
        traceback.print_exc()
        bug = AssayError(f"internal error: {type(exc).__name__}: {exc}", code="internal_error")
        return error_envelope(bug), True


def _refuse_lone_surrogates(value: Any, path: tuple[str | int, ...] = ()) -> None:
    """Refuse a lone surrogate anywhere in the arguments, with its pointer.

    JSON text can spell one (``"\\ud800"``) but no path, id or UTF-8 text can
    hold it; refusing it here keeps it away from every file-system call.
    """
    from assay.errors import pointer

    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise AssayError("a string holds a lone surrogate, which UTF-8 cannot encode",
                             code="lone_surrogate", pointer=pointer(*path)) from None
    elif isinstance(value, dict):
        for key, item in value.items():
            _refuse_lone_surrogates(key, path)
            _refuse_lone_surrogates(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _refuse_lone_surrogates(item, (*path, index))


def _refuse_nul_in_plain_arguments(arguments: dict[str, Any]) -> None:
    """Refuse NUL in string arguments (and lists of them), as a command line cannot hold one.

    They name ids, paths and texts, which the CLI receives as argv words; JSON
    data arguments (objects) may hold any string and are not checked here.
    """
    from assay.errors import pointer

    for name, value in arguments.items():
        items = value if isinstance(value, list) else [value]
        for index, item in enumerate(items):
            if isinstance(item, str) and "\x00" in item:
                where = pointer(name, index) if isinstance(value, list) else pointer(name)
                raise UsageError(f"argument {name} holds a NUL character", code="invalid_argument",
                                 pointer=where)


def build_server(*, cwd: str | None = None, db: str | None = None,
                 principal: str | None = None) -> Server[Any]:
    """An MCP ``Server`` whose tools are the registry's operations."""
    tools = tool_definitions()

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        # Operations are synchronous and may block on the ledger or a command:
        # run them on a worker thread so the server keeps answering.
        envelope, is_error = await anyio.to_thread.run_sync(
            lambda: invoke(params.name, params.arguments, cwd=cwd, db=db, principal=principal)
        )
        return _result(envelope, is_error)

    return Server(
        "assay",
        version=__version__,
        instructions=(
            "Assay records what was asked, what you claim and what the machine observed. "
            "Check readiness before saying work is done."
        ),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def serve(*, cwd: str | None = None, db: str | None = None, principal: str | None = None) -> None:
    """Run the server on stdin/stdout until the client disconnects.

    Started by a person on a terminal rather than by a client, it first says
    on stderr what it is and how a client runs it.
    """
    server = build_server(cwd=cwd, db=db, principal=principal)
    if sys.stdin.isatty():
        # The console script's own path, so that the line can be pasted as it is.
        script = sys.argv[0]
        program = os.path.abspath(script) if os.path.basename(script) == "assay" else "assay"
        sys.stderr.write(startup_hint(cwd, program) + "\n")
        sys.stderr.flush()

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)
