"""The stdio MCP server that gives an agent program its outcome tools. A call is checked
(`tools.accept`) and answered at once, so a model can fix a bad one. It writes nothing anywhere
and keeps nothing: the harness reads the calls from the agent program's own event stream
(agents/cli/calls.py), which the unit's processes cannot reach, checks them again there and
takes the first valid one; the server only tells the model how its call fared.

It executes nothing it is given: arguments are only checked.
"""

from __future__ import annotations

import argparse
from typing import Any

from taskhand.agents.outcome_mcp import tools
from taskhand.unit import Role

# Every valid call is answered so, the second too: the server keeps no state that a process
# writing into its stdin could change (the harness takes the first valid call it sees).
ACCEPTED = (
    "accepted: your first valid call is the outcome recorded. End your turn now; write nothing "
    "more."
)


def answer(role: Role, name: str, arguments: object) -> tuple[bool, str]:
    """Whether a call is valid, and the answer the model reads."""
    block = tools.accept(name, arguments, role)
    return (False, block) if isinstance(block, str) else (True, ACCEPTED)


def serve(role: Role) -> None:
    """Serve the role's outcome tools on stdin and stdout until the client closes them."""
    # Imported here: the harness reads this package's checks without loading the MCP stack.
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        listed = [
            types.Tool(name=t["name"], description=t["description"], input_schema=t["parameters"])
            for t in tools.offered(role)
        ]
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        accepted, said = answer(role, params.name, params.arguments or {})
        content: list[types.ContentBlock] = [types.TextContent(text=said)]
        return types.CallToolResult(content=content, is_error=not accepted)

    server: Server[Any] = Server(tools.SERVER, on_list_tools=list_tools, on_call_tool=call_tool)

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m taskhand.agents.outcome_mcp")
    parser.add_argument("--role", required=True, choices=[role.value for role in Role])
    options = parser.parse_args(argv)
    serve(Role(options.role))
