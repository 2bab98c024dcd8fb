"""A scripted Chat Completions server on 127.0.0.1, for running our OpenAI loop over real HTTP.

Each POST to /v1/chat/completions takes the next step of the script: a JSON body to answer,
an HTTP error, raw text, or an empty answer, optionally after a delay; past the script, a
`respond` function may answer from what was asked (a real program's follow-ups). Every request
is recorded. A request with `"stream": true` (opencode's) gets a body step as server-sent chunks.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fakes.local_server import LocalServer

EMPTY = "empty"  # a step: one choice with neither content nor tool calls

_call_ids = itertools.count(1)


@dataclass(frozen=True)
class Status:
    """A step answered with an HTTP error in the OpenAI error shape."""

    code: int
    message: str = "scripted failure"


@dataclass(frozen=True)
class Raw:
    """A step answered with `text` as it is (JSON or not) under `code`."""

    code: int
    text: str


@dataclass(frozen=True)
class Delay:
    """A step answered after `seconds` (cut short when the server stops)."""

    seconds: float
    then: Step


Step = dict[str, Any] | Status | Raw | Delay | str


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    raw: bytes
    body: dict[str, Any]


def tool_call(name: str, arguments: dict[str, Any] | str) -> dict[str, Any]:
    """A function tool call; a string is sent as the raw arguments, valid JSON or not."""
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {
        "id": f"call_{next(_call_ids):04d}",
        "type": "function",
        "function": {"name": name, "arguments": raw},
    }


def reply(
    content: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A chat.completion body; `usage` defaults to 10 tokens in and 5 out, {} leaves it out."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    body: dict[str, Any] = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 0,
        "model": "scripted",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if tool_calls else "stop",
            }
        ],
    }
    numbers = {"prompt_tokens": 10, "completion_tokens": 5} if usage is None else dict(usage)
    if numbers:
        spent = (numbers.get("prompt_tokens") or 0) + (numbers.get("completion_tokens") or 0)
        numbers.setdefault("total_tokens", spent)
        body["usage"] = numbers
    return body


class ScriptedOpenAI(LocalServer):
    """Serve the script's steps in order until stopped; use as a context manager."""

    path = "/v1"

    def __init__(self, *steps: Step, respond: Callable[[Recorded], Step] | None = None) -> None:
        self.steps = list(steps)
        self.respond = respond
        self.requests: list[Recorded] = []
        self.stopping = threading.Event()
        super().__init__(_handler(self))

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [r.body for r in self.requests]

    def add(self, *steps: Step) -> None:
        with self.lock:
            self.steps.extend(steps)

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        super().__exit__(*exc)

    def take(self, recorded: Recorded) -> Step:
        with self.lock:
            self.requests.append(recorded)
            if self.steps:
                return self.steps.pop(0)
            if self.respond is not None:
                return self.respond(recorded)
        # A client error, so that a loop that asks too often fails at once instead of retrying.
        return Status(400, "the script has no more steps")


def _handler(api: ScriptedOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                body = {}
            headers = {k.lower(): v for k, v in self.headers.items()}
            if self.path.split("?")[0] != "/v1/chat/completions":
                self.send(404, {"error": {"message": f"no route {self.path}", "type": "scripted"}})
                return
            step = api.take(Recorded(self.path, headers, raw, body))
            while isinstance(step, Delay):
                if api.stopping.wait(step.seconds):
                    return
                step = step.then
            if isinstance(step, Status):
                error = {"message": step.message, "type": "scripted", "code": None}
                self.send(step.code, {"error": error})
            elif isinstance(step, Raw):
                self.send(step.code, step.text)
            elif step == EMPTY:
                self.send(200, reply())
            elif isinstance(step, dict) and body.get("stream"):
                self.stream(step)
            elif isinstance(step, dict):
                self.send(200, step)
            else:
                raise ValueError(f"not a step: {step!r}")

        def send(self, status: int, payload: object) -> None:
            data = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                pass  # the client gave up waiting (a timeout test); nobody is left to answer

        def stream(self, completion: dict[str, Any]) -> None:
            data = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks(completion))
            try:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Content-Length", str(len(data.encode()) + 14))
                self.end_headers()
                self.wfile.write(data.encode() + b"data: [DONE]\n\n")
            except OSError:
                pass

    return Handler


def chunks(completion: dict[str, Any]) -> list[dict[str, Any]]:
    """A chat.completion body as the chat.completion.chunk objects a streamed answer sends:
    the message's role and content, each tool call, the finish reason, then the usage."""
    choice = completion["choices"][0]
    message, head = choice["message"], {k: completion[k] for k in ("id", "created", "model")}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choices = [{"index": 0, "delta": delta, "finish_reason": finish}]
        return {**head, "object": "chat.completion.chunk", "choices": choices}

    found = [chunk({"role": "assistant", "content": message.get("content") or ""})]
    for index, call in enumerate(message.get("tool_calls") or ()):
        found.append(chunk({"tool_calls": [{"index": index, **call}]}))
    found.append(chunk({}, choice["finish_reason"]))
    if "usage" in completion:
        found.append(
            {**head, "object": "chat.completion.chunk", "choices": [], "usage": completion["usage"]}
        )
    return found
