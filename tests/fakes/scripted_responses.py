"""A scripted stand-in for the OpenAI Responses API on 127.0.0.1, for running the real `codex`.

Each POST to /v1/responses takes the next scripted turn and streams it as server-sent events.
Every request is logged, and the usage of each reply is kept so a test can compare it with
what the client reports.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fakes.local_server import JsonHandler, LocalServer, Logged


@dataclass
class Turn:
    """One model response: text, then function calls `(name, arguments)`, with its usage."""

    text: str = ""
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    custom_calls: list[tuple[str, str]] = field(default_factory=list)  # freeform tools
    # Calls of a tool in a namespace, as codex offers an MCP server's: (namespace, name, args).
    namespaced_calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    input_tokens: int = 100
    cached_tokens: int = 0
    cache_write_tokens: int = 0  # sent only when set, as a server with cache writes does
    output_tokens: int = 20
    reasoning_tokens: int = 0  # among output_tokens
    status: int = 200  # anything else: an error reply with this HTTP status


class ScriptedResponses(LocalServer):
    """Serve scripted turns until stopped; use as a context manager."""

    path = "/v1"

    def __init__(self, turns: list[Turn]) -> None:
        self.turns = list(turns)
        self.requests: list[Logged] = []
        self.served: list[Turn] = []
        super().__init__(_handler(self))

    def next_turn(self) -> Turn:
        with self.lock:
            turn = self.turns.pop(0) if self.turns else Turn(text="(script exhausted)")
            self.served.append(turn)
            return turn


def _items(turn: Turn, number: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if turn.text:
        items.append(
            {
                "type": "message",
                "id": f"msg_{number:04d}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": turn.text, "annotations": []}],
            }
        )
    for index, (name, arguments) in enumerate(turn.calls, 1):
        items.append(
            {
                "type": "function_call",
                "id": f"fc_{number:04d}_{index}",
                "call_id": f"call_{number:04d}_{index}",
                "name": name,
                "arguments": json.dumps(arguments),
                "status": "completed",
            }
        )
    for index, (namespace, name, arguments) in enumerate(turn.namespaced_calls, 1):
        items.append(
            {
                "type": "function_call",
                "id": f"fc_{number:04d}_n{index}",
                "call_id": f"call_{number:04d}_n{index}",
                "namespace": namespace,
                "name": name,
                "arguments": json.dumps(arguments),
                "status": "completed",
            }
        )
    for index, (name, text) in enumerate(turn.custom_calls, 1):
        items.append(
            {
                "type": "custom_tool_call",
                "id": f"ctc_{number:04d}_{index}",
                "call_id": f"call_{number:04d}_c{index}",
                "name": name,
                "input": text,
                "status": "completed",
            }
        )
    return items


def _events(turn: Turn, number: int, model: str) -> list[dict[str, Any]]:
    """The SSE events of one streamed response, in the order the API sends them."""
    response: dict[str, Any] = {
        "id": f"resp_{number:04d}",
        "object": "response",
        "model": model,
        "status": "in_progress",
        "output": [],
    }
    events: list[dict[str, Any]] = [{"type": "response.created", "response": response}]
    items = _items(turn, number)
    for index, item in enumerate(items):
        opening = {**item, "status": "in_progress"}
        if item["type"] == "message":
            opening["content"] = []
        events.append(
            {"type": "response.output_item.added", "output_index": index, "item": opening}
        )
        if item["type"] == "message":
            events.append(
                {
                    "type": "response.output_text.delta",
                    "item_id": item["id"],
                    "output_index": index,
                    "content_index": 0,
                    "delta": item["content"][0]["text"],
                }
            )
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    sent: dict[str, int] = {"cached_tokens": turn.cached_tokens}
    if turn.cache_write_tokens:
        sent["cache_write_tokens"] = turn.cache_write_tokens
    usage = {
        "input_tokens": turn.input_tokens,
        "input_tokens_details": sent,
        "output_tokens": turn.output_tokens,
        "output_tokens_details": {"reasoning_tokens": turn.reasoning_tokens},
        "total_tokens": turn.input_tokens + turn.output_tokens,
    }
    done = {**response, "status": "completed", "output": items, "usage": usage}
    events.append({"type": "response.completed", "response": done})
    return events


def _handler(api: ScriptedResponses) -> type[BaseHTTPRequestHandler]:
    class Handler(JsonHandler):
        def do_GET(self) -> None:
            api.requests.append(Logged("GET", self.path, {}))
            if self.path.split("?")[0] == "/v1/models":
                self._send_json(200, {"object": "list", "data": []})
                return
            self._send_json(404, {"error": {"message": "not scripted", "type": "not_found"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                body = {"raw": raw.decode("utf-8", "replace")}
            api.requests.append(Logged("POST", self.path, body))
            if self.path.split("?")[0] != "/v1/responses":
                self._send_json(404, {"error": {"message": "not scripted", "type": "not_found"}})
                return
            turn = api.next_turn()
            if turn.status != 200:
                self._send_json(
                    turn.status,
                    {"error": {"message": turn.text or "scripted error", "type": "server_error"}},
                )
                return
            events = _events(turn, len(api.served), str(body.get("model", "scripted")))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for event in events:
                chunk = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
                self.wfile.write(chunk.encode())
                self.wfile.flush()
            self.close_connection = True

    return Handler
