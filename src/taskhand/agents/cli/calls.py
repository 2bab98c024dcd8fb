"""The outcome tool calls an agent program records in its own event stream: its stdout, which
reaches taskhand alone (a sealed channel, host/process.py), read line by line as it arrives, so
no cut in the output kept and no file a unit's process can write decides a unit's outcome.

For each program, where its JSON events show the model calling a tool of our server: claude's
assistant `tool_use` blocks, codex's `mcp_tool_call` items, gemini's `tool_use` events and
opencode's tool parts. Each call is checked as the server checks it; the first valid one wins.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from taskhand.agents.outcome_mcp import tools
from taskhand.host.process import OUTPUT_HEAD, Capture
from taskhand.unit import Role

SERVER = tools.SERVER
LINE_LIMIT = 8 * 1024 * 1024  # bytes of one event line; a longer line is no call of ours

Call = tuple[str, object]  # one of our tools, by the name our server gives it, and its arguments


def claude(event: dict[str, Any]) -> list[Call]:
    """`claude -p --output-format stream-json`: `mcp__taskhand__<tool>` in an assistant message."""
    message = event.get("message") if event.get("type") == "assistant" else None
    content = message.get("content") if isinstance(message, dict) else None
    blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    return [
        (name, block.get("input"))
        for block in blocks
        if block.get("type") == "tool_use"
        and (name := _ours(block.get("name"), f"mcp__{SERVER}__"))
    ]


def codex(event: dict[str, Any]) -> list[Call]:
    """`codex exec --json`: a completed `mcp_tool_call` item of server `taskhand`."""
    item = event.get("item") if event.get("type") == "item.completed" else None
    if not isinstance(item, dict) or item.get("type") != "mcp_tool_call":
        return []
    if item.get("server") != SERVER or not isinstance(item.get("tool"), str):
        return []
    return [(item["tool"], item.get("arguments"))]


def gemini(event: dict[str, Any]) -> list[Call]:
    """`gemini --output-format stream-json`: a `tool_use` event of `mcp_taskhand_<tool>`."""
    name = (
        _ours(event.get("tool_name"), f"mcp_{SERVER}_") if event.get("type") == "tool_use" else ""
    )
    return [(name, event.get("parameters"))] if name else []


def opencode(event: dict[str, Any]) -> list[Call]:
    """`opencode run --format json`: a `tool_use` event whose tool part is `taskhand_<tool>`."""
    part = event.get("part") if event.get("type") == "tool_use" else None
    if not isinstance(part, dict) or part.get("type") != "tool":
        return []
    name, state = _ours(part.get("tool"), f"{SERVER}_"), part.get("state")
    return [(name, state.get("input") if isinstance(state, dict) else None)] if name else []


READERS: dict[str, Callable[[dict[str, Any]], list[Call]]] = {
    "claude": claude,
    "codex": codex,
    "gemini": gemini,
    "opencode": opencode,
}


def _ours(name: object, prefix: str) -> str:
    """The tool's own name when `name` is one of our server's, as the program spells it."""
    return name.removeprefix(prefix) if isinstance(name, str) and name.startswith(prefix) else ""


class Calls:
    """One run's outcome calls in the order the program recorded them: the block of the first
    valid one, and why the others were refused."""

    def __init__(self, role: Role, read: Callable[[dict[str, Any]], list[Call]]) -> None:
        self.role, self.read = role, read
        self.block: dict[str, Any] | None = None
        self.made = 0
        self.refused = ""

    def take(self, event: dict[str, Any]) -> None:
        """Check the calls `event` records, until one is valid: later ones change nothing (the
        server told the model that its first valid call is the one recorded)."""
        for name, arguments in self.read(event):
            if self.block is not None:
                return
            self.made += 1
            block = tools.accept(name, arguments, self.role)
            if isinstance(block, str):
                self.refused = block.removeprefix("error: ")
            else:
                self.block = block

    def missing(self) -> str:
        """Why there is no outcome from a call."""
        finisher = tools.finisher(self.role)
        if not self.made:
            return f"the agent never called {finisher}"
        return f"no call of {finisher} was valid ({self.refused})"


class Stream(Capture):
    """A program's stdout kept as any agent's is (its head and its tail), each whole line also
    read as a JSON event for `calls` as it arrives, wherever the cut in what is kept falls."""

    def __init__(self, limit: int, calls: Calls) -> None:
        super().__init__(limit, head=min(limit // 2, OUTPUT_HEAD))
        self.calls = calls
        self.line = bytearray()
        self.overlong = False  # the current line passed LINE_LIMIT: skipped to its end

    def add(self, chunk: bytes) -> None:
        super().add(chunk)
        *ended, rest = chunk.split(b"\n")
        for piece in ended:
            self._extend(piece)
            self._event()
        self._extend(rest)

    def end(self) -> None:
        """Read the last line when the stream ended without a newline."""
        self._event()

    def _extend(self, piece: bytes) -> None:
        if len(self.line) + len(piece) > LINE_LIMIT:
            self.line.clear()
            self.overlong = True
        elif not self.overlong:
            self.line += piece

    def _event(self) -> None:
        line, overlong = bytes(self.line), self.overlong
        self.line.clear()
        self.overlong = False
        if overlong or not line.lstrip().startswith(b"{"):
            return
        try:
            event = json.loads(line)
        except ValueError:
            return
        if isinstance(event, dict):
            self.calls.take(event)
