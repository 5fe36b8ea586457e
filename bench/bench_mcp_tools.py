"""How much of an agent's context the MCP tool list takes: tools and bytes per profile.

A client sends the whole tool list to the model at the start of every
session, so its size is paid on every one. The rows count the tools and the
bytes of their JSON definitions exactly as the server lists them (the SDK's
wire form, compact JSON) for the default agent profile, against the admin
profile, which offers every operation with every argument. These are
counts, not timings: the same code gives the same figures on any machine.
"""

from __future__ import annotations

import json
from typing import Any

from bench.harness import row


def _listing(profile: str) -> tuple[int, int]:
    """The number of tools of ``profile`` and the bytes of their definitions as JSON."""
    from assay.mcp.server import tool_definitions

    tools = tool_definitions(profile)
    wire = [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools]
    return len(tools), len(json.dumps(wire, separators=(",", ":"), ensure_ascii=False))


def run(quick: bool) -> list[dict[str, Any]]:
    agent_tools, agent_bytes = _listing("agent")
    all_tools, all_bytes = _listing("admin")
    return [
        row("MCP tool list of the agent profile (default): bytes of JSON definitions",
            assay=agent_bytes, baseline=all_bytes, baseline_name="admin profile (every operation)",
            unit="bytes", goal="<= 0.75x",
            note=f"{agent_tools} tools against {all_tools}"),
        row("MCP tool list of the agent profile (default): tools",
            assay=agent_tools, baseline=all_tools, baseline_name="admin profile (every operation)",
            unit="tools"),
    ]
