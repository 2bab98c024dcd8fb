"""A scripted stand-in for the Gemini API on 127.0.0.1, for running the real `gemini` CLI.

Each `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` (the agent's main loop) takes
the next scripted turn and streams it as `data:` chunks of GenerateContentResponse JSON, the last
carrying `usageMetadata`; a turn may call any tool, an MCP server's under the name gemini gives
it (`mcp_<server>_<tool>`: `mcp_tool`). A plain `:generateContent` (the routing call gemini makes
when no model is given, and its other side questions) gets a short JSON answer, and
`:countTokens` a count.
Every request is logged, and every turn served kept, so a test can compare usage.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fakes.local_server import JsonHandler, LocalServer, Logged

STREAM = ":streamGenerateContent"
# What gemini's model router parses from its classifier (either of its two strategies).
ROUTING_ANSWER = {
    "reasoning": "scripted",
    "model_choice": "pro",
    "complexity_reasoning": "scripted",
    "complexity_score": 80,
}


@dataclass
class Turn:
    """One model response: a thought, text, then function calls `(name, args)`, with usage."""

    text: str = ""
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    thought: str = ""
    prompt_tokens: int = 100  # the cached ones included, as the API counts them
    candidates_tokens: int = 20
    cached_tokens: int = 0
    thoughts_tokens: int = 0
    status: int = 200  # anything else: an error reply with this HTTP status


def mcp_tool(server: str, tool: str, arguments: dict[str, Any], **usage: int) -> Turn:
    """A turn that calls tool `tool` of MCP server `server`, named as gemini offers it."""
    return Turn(calls=[(f"mcp_{server}_{tool}", arguments)], **usage)


def function_responses(request: Logged) -> list[dict[str, Any]]:
    """What the tools answered, as a request carries it back to the model: each
    functionResponse's name and response, in order."""
    parts = [part for content in request.body.get("contents", []) for part in content["parts"]]
    return [part["functionResponse"] for part in parts if "functionResponse" in part]


def offered(request: Logged) -> set[str]:
    """The names of the tools a request offers the model."""
    declared = [t.get("functionDeclarations", []) for t in request.body.get("tools", [])]
    return {function["name"] for functions in declared for function in functions}


class ScriptedGemini(LocalServer):
    """Serve scripted turns until stopped; use as a context manager."""

    def __init__(self, turns: list[Turn]) -> None:
        self.turns = list(turns)
        self.requests: list[Logged] = []
        self.keys: list[str] = []  # the x-goog-api-key of each request
        self.served: list[Turn] = []
        super().__init__(_handler(self))

    def main_requests(self) -> list[Logged]:
        return [r for r in self.requests if STREAM in r.path]

    def next_turn(self) -> Turn:
        with self.lock:
            turn = self.turns.pop(0) if self.turns else Turn(text="(script exhausted)")
            self.served.append(turn)
            return turn

    def served_usage(self) -> tuple[int, int, int, int]:
        """Prompt tokens (cached included), candidates, cached and thoughts over every turn."""
        return (
            sum(t.prompt_tokens for t in self.served),
            sum(t.candidates_tokens for t in self.served),
            sum(t.cached_tokens for t in self.served),
            sum(t.thoughts_tokens for t in self.served),
        )


def usage_metadata(turn: Turn) -> dict[str, int]:
    return {
        "promptTokenCount": turn.prompt_tokens,
        "candidatesTokenCount": turn.candidates_tokens,
        "cachedContentTokenCount": turn.cached_tokens,
        "thoughtsTokenCount": turn.thoughts_tokens,
        "totalTokenCount": turn.prompt_tokens + turn.candidates_tokens + turn.thoughts_tokens,
    }


def chunks(turn: Turn, model: str, number: int) -> list[dict[str, Any]]:
    """The streamed responses of one turn, in order: thought, text, calls, then the finish with
    the turn's usage (the API reports the whole turn's counts on its last chunk)."""
    parts: list[dict[str, Any]] = []
    if turn.thought:
        parts.append({"text": turn.thought, "thought": True})
    if turn.text:
        parts.append({"text": turn.text})
    parts += [{"functionCall": {"name": name, "args": args}} for name, args in turn.calls]
    parts = parts or [{"text": ""}]

    def response(part: dict[str, Any] | None, last: bool) -> dict[str, Any]:
        candidate: dict[str, Any] = {"index": 0}
        if part is not None:
            candidate["content"] = {"role": "model", "parts": [part]}
        reply: dict[str, Any] = {
            "candidates": [candidate],
            "modelVersion": model,
            "responseId": f"scripted-{number:04d}",
        }
        if last:
            candidate["finishReason"] = "STOP"
            reply["usageMetadata"] = usage_metadata(turn)
        return reply

    return [response(part, index == len(parts) - 1) for index, part in enumerate(parts)]


def _handler(api: ScriptedGemini) -> type[BaseHTTPRequestHandler]:
    class Handler(JsonHandler):
        def _error(self, status: int, message: str) -> None:
            self._send_json(status, {"error": {"code": status, "message": message}})

        def do_GET(self) -> None:
            api.requests.append(Logged("GET", self.path, {}))
            self._error(404, "not scripted")

        def do_POST(self) -> None:
            body = self._body()
            api.requests.append(Logged("POST", self.path, body))
            api.keys.append(self.headers.get("x-goog-api-key", ""))
            path = self.path.split("?")[0]
            model = path.rsplit("/", 1)[-1].split(":")[0]
            if path.endswith(":countTokens"):
                self._send_json(200, {"totalTokens": 100})
            elif path.endswith(":generateContent"):
                side = Turn(text=json.dumps(ROUTING_ANSWER), prompt_tokens=10, candidates_tokens=3)
                self._send_json(200, chunks(side, model, 0)[-1])
            elif path.endswith(STREAM):
                self._stream(api.next_turn(), model)
            else:
                self._error(404, "not scripted")

        def _stream(self, turn: Turn, model: str) -> None:
            if turn.status != 200:
                self._error(turn.status, turn.text or "scripted error")
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for reply in chunks(turn, model, len(api.served)):
                self.wfile.write(f"data: {json.dumps(reply)}\r\n\r\n".encode())
                self.wfile.flush()
            self.close_connection = True

    return Handler
