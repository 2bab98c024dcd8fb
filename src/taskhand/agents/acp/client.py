"""Our side of an ACP session: the answers to what the agent asks of us. Permissions follow the
unit's role, fs/read_text_file and fs/write_text_file stay inside the worktree, and the agent's
messages, tool calls and file requests are kept as the unit's transcript.
"""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePosixPath
from typing import Any

from acp import RequestError
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AllowedOutcome,
    ContentToolCallContent,
    DeniedOutcome,
    FileEditToolCallContent,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    TextContentBlock,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    UsageUpdate,
    WriteTextFileResponse,
)

from taskhand.agents.tool_paths import (
    ToolError,
    open_regular,
    refuse,
    resolve,
    show,
    store,
    touches_git,
    writable,
)
from taskhand.text import shorten
from taskhand.unit import Unit

# Kinds of tool an evaluator may run; edit, delete, move, switch_mode and unknown kinds it may not.
EVALUATOR_KINDS = frozenset({"read", "search", "execute", "think", "fetch"})
READ_LIMIT = 16 * 1024 * 1024  # bytes one fs/read_text_file returns
INVALID_PARAMS = -32602  # the JSON-RPC code our file refusals carry; the message says why


class AcpClient:
    """The client the SDK dispatches the agent's requests to, for one unit; keeps its transcript."""

    def __init__(self, unit: Unit) -> None:
        self.unit = unit
        self.root = Path(os.path.realpath(unit.worktree))
        self.given = Path(os.path.abspath(unit.worktree))
        self.transcript: list[dict[str, object]] = []
        unit.record(self.transcript, {"role": "user", "content": unit.prompt})
        self.run_role = ""  # the kind of chunk being merged into one transcript entry
        self.run_text: list[str] = []
        self.said: list[str] = []  # the agent's message in the current turn
        self.tools: dict[str, dict[str, Any]] = {}  # what each tool call id was announced as
        self.cost: float | None = None

    async def session_update(self, session_id: str, update: object, **_: Any) -> None:
        if isinstance(update, AgentMessageChunk | AgentThoughtChunk):
            role = "assistant" if isinstance(update, AgentMessageChunk) else "thought"
            block = update.content
            text = block.text if isinstance(block, TextContentBlock) else f"[{block.type}]"
            if role == "assistant":
                self.said.append(text)
            if self.run_role != role:
                self.flush()
                self.run_role = role
            self.run_text.append(text)
        elif isinstance(update, ToolCallStart | ToolCallProgress):
            self.event(self.tool_entry(update))
        elif isinstance(update, AgentPlanUpdate):
            entries = [{"content": e.content, "status": e.status} for e in update.entries]
            self.event({"role": "plan", "entries": entries})
        elif isinstance(update, UsageUpdate) and update.cost is not None:
            if update.cost.currency.upper() == "USD":
                self.cost = update.cost.amount  # the session's total so far
            else:
                self.note(note=f"cost {update.cost.amount} {update.cost.currency} not in dollars")

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **_: Any
    ) -> RequestPermissionResponse:
        known = self.tools.get(tool_call.tool_call_id, {})
        kind = tool_call.kind or known.get("kind") or ""
        paths = [loc.path for loc in tool_call.locations or []] or known.get("paths", [])
        reason = next(
            (f"{show(p)} is outside the worktree" for p in paths if not self.inside(p)), ""
        )
        if not reason and self.unit.role.judges and kind not in EVALUATOR_KINDS:
            reason = f"the evaluator may not run {kind or 'unclassified'} tools"
        # Never allow_always: the agent would skip asking, and us checking, the next time.
        chosen = None if reason else _option(options, "allow_once")
        if chosen is None:
            reason = reason or "no allow_once option offered"
            chosen = _option(options, "reject_once", "reject_always")
        title = tool_call.title or known.get("title", "")
        answer = chosen.kind if chosen else "cancelled"
        entry = {"role": "permission", "title": title, "kind": kind, "paths": paths}
        self.event({**entry, "answer": answer, **({"reason": reason} if reason else {})})
        if chosen is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=chosen.option_id)
        )

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **_: Any,
    ) -> ReadTextFileResponse:
        try:
            real = self.resolve(path)
            if not real.exists():
                raise RequestError.resource_not_found(path)
            text = _read(real, path, max(1, line or 1), limit)
        except (ToolError, OSError, RequestError) as exc:
            raise self.fs_error("read", path, exc) from None
        self.event({"role": "fs", "op": "read", "path": path, "chars": len(text)})
        return ReadTextFileResponse(content=text)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **_: Any
    ) -> WriteTextFileResponse:
        try:
            if not self.unit.role.writes:
                raise refuse(f"the {self.unit.role} may read files but not write them")
            real = writable(self.root, self.relative(path), ())
            data = content.encode("utf-8")
            real.parent.mkdir(parents=True, exist_ok=True)
            store(real, path, data)
        except UnicodeEncodeError:
            failure = refuse("the content holds a lone surrogate, which UTF-8 cannot store")
            raise self.fs_error("write", path, failure) from None
        except (ToolError, OSError) as exc:
            raise self.fs_error("write", path, exc) from None
        self.event({"role": "fs", "op": "write", "path": path, "bytes": len(data)})
        return WriteTextFileResponse()

    # ---- paths and the transcript

    def relative(self, raw: str) -> str:
        """`raw` relative to the worktree; the protocol sends absolute paths."""
        pure = PurePosixPath(raw)
        if not pure.is_absolute():
            return raw
        for base in (self.root, self.given):
            if pure.is_relative_to(base):
                return pure.relative_to(base).as_posix() or "."
        raise refuse(f"path {show(raw)} is outside the worktree")

    def resolve(self, raw: str) -> Path:
        return resolve(self.root, self.relative(raw))

    def inside(self, raw: str) -> bool:
        real = Path(os.path.realpath(self.root / raw))  # an absolute `raw` replaces the root
        return real.is_relative_to(self.root) and not touches_git(real.relative_to(self.root).parts)

    def fs_error(self, op: str, path: str, exc: Exception) -> RequestError:
        message = f"{op} failed: {exc.strerror or exc}" if isinstance(exc, OSError) else str(exc)
        if isinstance(exc, RequestError):
            message = f"no file at {show(path)}"
        self.event({"role": "fs", "op": op, "path": path, "error": message})
        code = exc.code if isinstance(exc, RequestError) else INVALID_PARAMS
        return RequestError(code, message, {"path": path})

    def tool_entry(self, update: ToolCallStart | ToolCallProgress) -> dict[str, object]:
        known = self.tools.setdefault(update.tool_call_id, {})
        for key, value in (("kind", update.kind), ("title", update.title)):
            if value:
                known[key] = value
        if update.locations:
            known["paths"] = [loc.path for loc in update.locations]
        role = "tool_call" if isinstance(update, ToolCallStart) else "tool_update"
        entry: dict[str, object] = {"role": role, "id": update.tool_call_id}
        shown = {
            "title": update.title,
            "kind": update.kind,
            "status": update.status,
            "paths": _paths(update.locations),
            "input": _json(update.raw_input),
            "output": _summary(update.content) or _json(update.raw_output),
        }
        entry.update({key: _clip(value) for key, value in shown.items() if value})
        return entry

    def event(self, entry: dict[str, object]) -> None:
        self.flush()
        self.unit.record(self.transcript, entry)

    def note(self, **fields: object) -> None:
        self.event({"role": "note", **{k: v for k, v in fields.items() if v}})

    def flush(self) -> None:
        if self.run_text:
            limit = 20_000 if self.run_role == "assistant" else 4000
            content = _clip("".join(self.run_text), limit)
            self.unit.record(self.transcript, {"role": self.run_role, "content": content})
        self.run_role, self.run_text = "", []


def _read(real: Path, raw: str, first: int, limit: int | None) -> str:
    """Lines `first` on (1-based) of a plain file, at most `limit` of them."""
    taken: list[bytes] = []
    size = 0
    with os.fdopen(open_regular(real, raw), "rb") as file:
        for number, line in enumerate(file, 1):
            if number < first:
                continue
            if limit is not None and len(taken) >= limit:
                break
            size += len(line)
            if size > READ_LIMIT:
                raise refuse(f"{show(raw)} is over {READ_LIMIT} bytes; read it with line and limit")
            taken.append(line)
    return b"".join(taken).decode("utf-8", "replace")


def _option(options: list[PermissionOption], *kinds: str) -> PermissionOption | None:
    return next((option for kind in kinds for option in options if option.kind == kind), None)


def _paths(locations: list[ToolCallLocation] | None) -> list[str]:
    return [loc.path for loc in locations or []]


def _summary(content: list[Any] | None) -> str:
    parts = []
    for item in content or []:
        if isinstance(item, ContentToolCallContent):
            block = item.content
            parts.append(block.text if isinstance(block, TextContentBlock) else f"[{block.type}]")
        elif isinstance(item, FileEditToolCallContent):
            parts.append(f"[diff of {item.path}]")
        else:
            parts.append(f"[{item.type}]")
    return "\n".join(parts)


def _json(value: object) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, default=str)


def _clip(value: object, limit: int = 4000) -> object:
    return shorten(value, limit) if isinstance(value, str) else value
