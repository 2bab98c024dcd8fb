"""A scripted stand-in for the Anthropic Messages API on 127.0.0.1, for running the real `claude`.

Requests that offer tools (the agent's main loop) take the next scripted turn; any other request
(titles, quota probes) gets a short text. Every request is logged, and every reply's usage is
added up so a test can compare it with what the client reports.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fakes.local_server import JsonHandler, LocalServer, Logged


@dataclass
class Turn:
    """One assistant message: text, then tool calls `(name, input)`, with its usage."""

    text: str = ""
    tools: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    thinking: str = ""  # a thinking block first, when set (its tokens among output_tokens)
    input_tokens: int = 100
    output_tokens: int = 20
    cache_read: int = 0
    cache_creation: int = 0
    thinking_tokens: int = 0  # among output_tokens; claude reads output_tokens_details
    status: int = 200  # anything else: an error reply with this HTTP status


class ScriptedAnthropic(LocalServer):
    """Serve scripted turns until stopped; use as a context manager."""

    def __init__(self, turns: list[Turn], side_reply: str = "Scripted title") -> None:
        self.turns = list(turns)
        self.side_reply = side_reply
        self.requests: list[Logged] = []
        self.served: list[Turn] = []  # every reply sent, main-loop and side requests alike
        super().__init__(_handler(self))

    def main_requests(self) -> list[Logged]:
        return [r for r in self.requests if r.path.startswith("/v1/messages") and _is_main(r.body)]

    def reply_to(self, body: dict[str, Any]) -> Turn:
        with self.lock:
            if _is_main(body):
                turn = self.turns.pop(0) if self.turns else Turn(text="(script exhausted)")
            else:
                turn = Turn(text=self.side_reply, input_tokens=10, output_tokens=3)
            self.served.append(turn)
            return turn


def _is_main(body: dict[str, Any]) -> bool:
    return bool(body.get("tools"))


def _blocks(turn: Turn, message: int = 0) -> list[dict[str, Any]]:
    """The message's content; each tool call's id unique in the session (claude takes a call
    whose id it has seen already for an interrupted one)."""
    blocks: list[dict[str, Any]] = []
    if turn.thinking:
        blocks.append({"type": "thinking", "thinking": turn.thinking, "signature": "scripted"})
    if turn.text:
        blocks.append({"type": "text", "text": turn.text})
    for number, (name, arguments) in enumerate(turn.tools, 1):
        blocks.append(
            {
                "type": "tool_use",
                "id": f"toolu_{message:04d}{number:04d}",
                "name": name,
                "input": arguments,
            }
        )
    return blocks


def _usage(turn: Turn) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "input_tokens": turn.input_tokens,
        "output_tokens": turn.output_tokens,
        "cache_read_input_tokens": turn.cache_read,
        "cache_creation_input_tokens": turn.cache_creation,
    }
    if turn.thinking_tokens:
        usage["output_tokens_details"] = {"thinking_tokens": turn.thinking_tokens}
    return usage


def _message(turn: Turn, model: str, number: int) -> dict[str, Any]:
    return {
        "id": f"msg_{number:04d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": _blocks(turn, number),
        "stop_reason": "tool_use" if turn.tools else "end_turn",
        "stop_sequence": None,
        "usage": _usage(turn),
    }


def _events(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The SSE events of one streamed message, in the order the API sends them."""
    start = {**message, "content": [], "stop_reason": None}
    start["usage"] = {**message["usage"], "output_tokens": 1}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(message["content"]):
        if block["type"] == "thinking":
            opening = {"type": "thinking", "thinking": "", "signature": ""}
            delta = {"type": "thinking_delta", "thinking": block["thinking"]}
            events += [
                {"type": "content_block_start", "index": index, "content_block": opening},
                {"type": "content_block_delta", "index": index, "delta": delta},
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "signature_delta", "signature": block["signature"]},
                },
                {"type": "content_block_stop", "index": index},
            ]
            continue
        if block["type"] == "text":
            opening = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            opening = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [
            {"type": "content_block_start", "index": index, "content_block": opening},
            {"type": "content_block_delta", "index": index, "delta": delta},
            {"type": "content_block_stop", "index": index},
        ]
    events += [
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {k: v for k, v in message["usage"].items() if k.startswith("output_tokens")},
        },
        {"type": "message_stop"},
    ]
    return events


def _handler(api: ScriptedAnthropic) -> type[BaseHTTPRequestHandler]:
    class Handler(JsonHandler):
        def do_GET(self) -> None:
            api.requests.append(Logged("GET", self.path, {}))
            self._send_json(
                404,
                {"type": "error", "error": {"type": "not_found_error", "message": "not scripted"}},
            )

        def do_HEAD(self) -> None:
            api.requests.append(Logged("HEAD", self.path, {}))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self) -> None:
            body = self._body()
            api.requests.append(Logged("POST", self.path, body))
            path = self.path.split("?")[0]
            if path == "/v1/messages/count_tokens":
                self._send_json(200, {"input_tokens": 100})
                return
            if path != "/v1/messages":
                self._send_json(
                    404,
                    {
                        "type": "error",
                        "error": {"type": "not_found_error", "message": "not scripted"},
                    },
                )
                return
            turn = api.reply_to(body)
            if turn.status != 200:
                error = {"type": "api_error", "message": turn.text or "scripted error"}
                self._send_json(turn.status, {"type": "error", "error": error})
                return
            message = _message(turn, str(body.get("model", "scripted")), len(api.served))
            if not body.get("stream"):
                self._send_json(200, message)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for event in _events(message):
                chunk = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
                self.wfile.write(chunk.encode())
                self.wfile.flush()
            self.close_connection = True

    return Handler
