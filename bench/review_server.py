"""A scripted Chat Completions server for bench/review.py: the same logical actions for any harness.

Each request is answered from what it carries (its tools, its messages) plus a little state
per (harness, task): how many rejections this task has had. The actions, per task:

* a worker starts by writing the task's file (``write_file`` or ``write``, whichever tool is
  offered), then submits its case (Tilth's ``summary``/``ac_coverage`` or taskhand's
  ``case``/``criteria``, whichever the offered ``submit_case`` schema names);
* an evaluator calls ``submit_verdict``: reject once for the tasks in ``reject``, accept
  otherwise;
* after a rejection the worker edits the file (``edit_file`` or ``edit``) and submits again,
  whether the rejection arrives in the same conversation (Tilth: as the ``submit_case`` tool
  result) or in a fresh one (taskhand: a new unit whose prompt carries the verdict). If the
  fresh unit's workspace lacks the file (a new attempt started from the base commit), it
  writes the fixed file instead: one call either way.

Every request is recorded: harness, role, task, the action answered, the bytes of
``messages`` (the prompt bytes) and of the whole body (with the tool schemas), and the time
the server spent on it, the scripted ``delay`` included, so the caller can take it out of the
harness's wall time.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

WRITERS = ("write_file", "write")  # Tilth's name, taskhand's name
EDITORS = ("edit_file", "edit")
SUBMIT_CASE = "submit_case"
SUBMIT_VERDICT = "submit_verdict"

_TASK_ID = re.compile(r"\bT-\d{3,}\b")
_TASK_WORD = re.compile(r"\btask\b", re.IGNORECASE)
_THIS_TASK = re.compile(r"\b(?:your|the) task\b|\btask to evaluate\b", re.IGNORECASE)


@dataclass(frozen=True)
class TaskScript:
    """What the scripted model does for one task."""

    task_id: str
    path: str  # the file the worker writes, relative to the workspace
    content: str  # what it writes first
    old: str  # the edit after a rejection: `old` becomes `new` (once)
    new: str
    summary: str
    pointers: tuple[tuple[str, str], ...]  # (criterion, file:symbol) for the case
    concern: str  # the evaluator's words on its rejection
    next_step: str

    @property
    def fixed(self) -> str:
        return self.content.replace(self.old, self.new, 1)


@dataclass
class Request:
    """One request the server answered."""

    harness: str
    role: str  # worker | evaluator
    task_id: str
    action: str  # the tool the answer called, or "error: ..."
    prompt_bytes: int  # len(json.dumps(body["messages"]).encode())
    # Of those bytes, the leading ones the previous request of the same role began with too:
    # what a provider's prompt cache could serve (0 for a role's first request).
    prefix_bytes: int
    body_bytes: int  # the whole request body: messages, tools, model, ...
    messages: int
    tools: list[str]
    seconds: float  # server time, the scripted delay included


@dataclass
class _TaskState:
    rejections: int = 0
    evaluations: int = 0


@dataclass
class ScriptedServer:
    """Serves on 127.0.0.1 on a free port until closed; set `harness` before each run."""

    scripts: dict[str, TaskScript]
    reject: frozenset[str]
    delay: float = 0.05
    keep: Path | None = None  # write every request body here, one JSON file each
    harness: str = ""
    # The workspace a worker of `task_id` is in now, if the caller can tell (for the edit).
    locate: Callable[[str], Path | None] = lambda _task_id: None
    requests: list[Request] = field(default_factory=list)
    _state: dict[tuple[str, str], _TaskState] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _last: dict[tuple[str, str], bytes] = field(default_factory=dict)  # (harness, role)

    def __post_init__(self) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)

    def start(self, harness: str, locate: Callable[[str], Path | None]) -> int:
        """Begin a harness run; returns the index of its first request."""
        with self._lock:
            self.harness, self.locate = harness, locate
            self._state = {}
            return len(self.requests)

    def answer(self, body: dict[str, Any], raw: bytes) -> tuple[int, dict[str, Any], Request]:
        """The reply to one request, after the scripted delay, and its record (time not set)."""
        messages = body.get("messages") or []
        tools = _tool_names(body)
        role = "evaluator" if SUBMIT_VERDICT in tools or not set(tools) & {*WRITERS} else "worker"
        task_id = find_task_id(_first_user_text(messages)) or ""
        with self._lock:
            harness = self.harness
            n = next(self._ids)
        script = self.scripts.get(task_id)
        try:
            if script is None:
                raise _Refused(f"no known task id in the first user message (got {task_id!r})")
            if role == "evaluator":
                action, call = self.evaluate(body, script)
            else:
                action, call = self.work(body, script)
            status, reply = 200, _completion(call, len(raw))
        except _Refused as exc:
            status, reply, action = 400, _error(str(exc)), f"error: {exc}"
        if self.delay:
            time.sleep(self.delay)
        if self.keep is not None:
            self.keep.mkdir(parents=True, exist_ok=True)
            name = f"{n:03d}-{harness}-{role}-{task_id or 'unknown'}.json"
            (self.keep / name).write_text(json.dumps(body, indent=1))
        prompt = json.dumps(messages).encode()
        with self._lock:
            last = self._last.get((harness, role), b"")
            prefix = len(os.path.commonprefix([last, prompt]))  # noqa: RUF071  bytes, not paths
            self._last[(harness, role)] = prompt
        request = Request(
            harness, role, task_id, action, len(prompt), prefix, len(raw), len(messages), tools, 0.0
        )
        return status, reply, request

    def record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    def state(self, task_id: str) -> _TaskState:
        with self._lock:
            return self._state.setdefault((self.harness, task_id), _TaskState())

    def work(self, body: dict[str, Any], script: TaskScript) -> tuple[str, dict[str, Any]]:
        tools = _tool_names(body)
        writer = next((t for t in WRITERS if t in tools), None)
        editor = next((t for t in EDITORS if t in tools), None)
        if writer is None or editor is None or SUBMIT_CASE not in tools:
            raise _Refused(f"the worker was not offered a write, an edit and submit_case: {tools}")
        last, result = _last_call(body.get("messages") or [])
        rejected = self.state(script.task_id).rejections > 0
        if last in (writer, editor):
            return SUBMIT_CASE, _call(SUBMIT_CASE, _case(body, script))
        if last == SUBMIT_CASE and "reject" not in result.lower():
            raise _Refused(f"submit_case was answered with {result[:200]!r}")
        if last is not None and last != SUBMIT_CASE:
            raise _Refused(f"the script never calls {last}")
        if not rejected:  # a fresh unit: write the file
            return writer, _call(writer, {"path": script.path, "content": script.content})
        workspace = self.locate(script.task_id)
        if last is None and (workspace is None or not (workspace / script.path).is_file()):
            # A fresh unit after a rejection, started from the base commit: write the fix.
            return writer, _call(writer, {"path": script.path, "content": script.fixed})
        if editor == "edit_file":
            args = {"path": script.path, "old_string": script.old, "new_string": script.new}
        else:
            args = {"path": script.path, "old": script.old, "new": script.new}
        return editor, _call(editor, args)

    def evaluate(self, body: dict[str, Any], script: TaskScript) -> tuple[str, dict[str, Any]]:
        state = self.state(script.task_id)
        with self._lock:
            state.evaluations += 1
            reject = script.task_id in self.reject and state.rejections == 0
            if reject:
                state.rejections += 1
        properties = _parameters(body, SUBMIT_VERDICT)
        tilth_shape = "rejection_category" in properties
        key = "rejection_category" if tilth_shape else "category"
        evidence = [pointer for _, pointer in script.pointers]
        verdict: dict[str, Any]
        if reject:
            verdict = {
                "verdict": "reject",
                key: "acceptance_gap",
                "concern": script.concern,
                "evidence": evidence[-1:],
                "next_step": script.next_step,
            }
        else:
            verdict = {"verdict": "accept", "concern": "Every criterion is met.", "evidence": []}
            if tilth_shape:
                verdict |= {"rejection_category": None, "next_step": None}
        if SUBMIT_VERDICT in _tool_names(body):
            return SUBMIT_VERDICT, _call(SUBMIT_VERDICT, verdict)
        if SUBMIT_CASE in _tool_names(body):  # an evaluator that reports through submit_case
            return SUBMIT_CASE, _call(
                SUBMIT_CASE, {"case": "done", "resolution": verdict["concern"], **verdict}
            )
        raise _Refused("the evaluator was offered neither submit_verdict nor submit_case")


class _Refused(Exception):
    """A request the script cannot answer; the harness gets an HTTP 400 saying why."""


def find_task_id(prompt: str) -> str | None:
    """The id of the task a prompt is about: the T-NNN on, or just under, a header naming it.

    Tilth's worker prompt has "## Your task" then "**ID:** T-001"; its evaluator prompt
    "# Task to evaluate: T-001 — ..."; taskhand's "## Your task: T-001, ..." and "## The task:
    T-001, ...". Headers that say "your task", "the task" or "task to evaluate" win over other
    headers with the word "task" (a plan entry whose title has it); plan listings (ids in list
    items) never count.
    """
    lines = prompt.splitlines()
    found: list[tuple[int, str]] = []
    for i, line in enumerate(lines):
        if not line.startswith("#") or not _TASK_WORD.search(line):
            continue
        rank = 0 if _THIS_TASK.search(line) else 1
        if match := _TASK_ID.search(line):
            found.append((rank, match.group()))
            continue
        following = next((ln.strip() for ln in lines[i + 1 : i + 4] if ln.strip()), "")
        if following.startswith(("#", "- ", "* ")):
            continue
        if match := _TASK_ID.search(following):
            found.append((rank, match.group()))
    return min(found, key=lambda f: f[0])[1] if found else None


def _first_user_text(messages: list[dict[str, Any]]) -> str:
    for message in messages:
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):  # content parts
                return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            return str(content or "")
    return ""


def _tool_names(body: dict[str, Any]) -> list[str]:
    return [str((t.get("function") or {}).get("name")) for t in body.get("tools") or []]


def _parameters(body: dict[str, Any], name: str) -> dict[str, Any]:
    for tool in body.get("tools") or []:
        function = tool.get("function") or {}
        if function.get("name") == name:
            properties = (function.get("parameters") or {}).get("properties") or {}
            return dict(properties)
    return {}


def _last_call(messages: list[dict[str, Any]]) -> tuple[str | None, str]:
    """The last tool the model called in this conversation, and what the harness answered."""
    for i in range(len(messages) - 1, -1, -1):
        calls = messages[i].get("tool_calls") if messages[i].get("role") == "assistant" else None
        if calls:
            call = calls[-1]
            answer = next(
                (
                    str(m.get("content") or "")
                    for m in messages[i + 1 :]
                    if m.get("role") == "tool" and m.get("tool_call_id") == call.get("id")
                ),
                "",
            )
            return str((call.get("function") or {}).get("name")), answer
    return None, ""


def _case(body: dict[str, Any], script: TaskScript) -> dict[str, Any]:
    properties = _parameters(body, SUBMIT_CASE)
    if "ac_coverage" in properties:  # Tilth
        coverage = [{"criterion": c, "addressed_by": p} for c, p in script.pointers]
        return {"summary": script.summary, "ac_coverage": coverage}
    criteria = [{"criterion": c, "evidence": p} for c, p in script.pointers]
    return {"case": "done", "resolution": script.summary, "criteria": criteria}


_call_ids = itertools.count(1)


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"call_{next(_call_ids):05d}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def _completion(call: dict[str, Any], request_bytes: int) -> dict[str, Any]:
    prompt_tokens = request_bytes // 4  # a rough token count, so the usage figures move
    completion_tokens = len(call["function"]["arguments"]) // 4 + 10
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": "scripted",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": None, "tool_calls": [call]},
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "scripted", "code": None}}


def _handler(api: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            began = time.perf_counter()
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path.split("?")[0].rstrip("/") not in (
                "/v1/chat/completions",
                "/chat/completions",
            ):
                self.send(404, _error(f"no route {self.path}"))
                return
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self.send(400, _error("the body is not JSON"))
                return
            status, reply, request = api.answer(body if isinstance(body, dict) else {}, raw)
            self.send(status, reply)
            request.seconds = time.perf_counter() - began
            api.record(request)

        def send(self, status: int, payload: object) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                pass

    return Handler


def as_json(request: Request) -> dict[str, Any]:
    return asdict(request)
