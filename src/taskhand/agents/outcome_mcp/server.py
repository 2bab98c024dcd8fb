"""The stdio MCP server that gives an agent program its outcome tools. A call is checked
(`tools.accept`) and answered at once, so a model can fix a bad one; the first accepted call is
appended as one JSON line to the file the harness named, and later calls are refused.

It executes nothing it is given: arguments are only checked and written out as JSON.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from taskhand.agents.outcome_mcp import tools
from taskhand.unit import Role

ACCEPTED = "accepted: the outcome is recorded. End your turn now; write nothing more."
AGAIN = "error: an outcome was submitted already, and the first one stands; end your turn now"


class Recorder:
    """One unit's outcome calls: each answered, the first accepted one kept in `out`."""

    def __init__(self, role: Role, out: Path) -> None:
        self.role, self.out, self.done = role, out, False

    def call(self, name: str, arguments: object) -> tuple[bool, str]:
        """Whether the call is accepted, and the answer the model reads."""
        if self.done:
            return False, AGAIN
        block = tools.accept(name, arguments, self.role)
        if isinstance(block, str):
            return False, block
        line = json.dumps({"tool": name, "arguments": arguments}, ensure_ascii=True)
        with self.out.open("a", encoding="utf-8") as file:
            file.write(line + "\n")
        self.done = True
        return True, ACCEPTED


def serve(role: Role, out: Path) -> None:
    """Serve the role's outcome tools on stdin and stdout until the client closes them."""
    # Imported here: the harness reads this package's checks without loading the MCP stack.
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    recorder = Recorder(role, out)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        listed = [
            types.Tool(name=t["name"], description=t["description"], input_schema=t["parameters"])
            for t in tools.offered(role)
        ]
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        accepted, answer = recorder.call(params.name, params.arguments or {})
        content: list[types.ContentBlock] = [types.TextContent(text=answer)]
        return types.CallToolResult(content=content, is_error=not accepted)

    server: Server[Any] = Server(tools.SERVER, on_list_tools=list_tools, on_call_tool=call_tool)

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m taskhand.agents.outcome_mcp")
    parser.add_argument("--role", required=True, choices=[role.value for role in Role])
    parser.add_argument("--out", required=True, type=Path, help="the JSON lines file to append")
    options = parser.parse_args(argv)
    serve(Role(options.role), options.out)
