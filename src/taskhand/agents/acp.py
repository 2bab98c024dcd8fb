"""The acp backend: any agent that speaks the Agent Client Protocol over stdio runs each unit in
its worktree. We answer its permission and file requests inside the worktree only, keep its
stream as the transcript, and read the outcome block from its final message.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path, PurePosixPath
from typing import Any, cast

from acp import PROTOCOL_VERSION, Client, RequestError, connect_to_agent, text_block
from acp.core import ClientSideConnection
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AllowedOutcome,
    ClientCapabilities,
    ContentToolCallContent,
    DeniedOutcome,
    FileEditToolCallContent,
    FileSystemCapabilities,
    Implementation,
    NewSessionResponse,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    SessionConfigOptionSelect,
    SessionConfigSelectGroup,
    TextContentBlock,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    UsageUpdate,
    WriteTextFileResponse,
)
from pydantic import ValidationError

from taskhand import __version__
from taskhand.agents import prices as price_list
from taskhand.agents.base import AgentError, Case, CaseReport, Outcome, Question, Role, Unit, Usage
from taskhand.agents.cli import NUDGE
from taskhand.agents.cli_outcome import Found, parse_outcome
from taskhand.agents.tool_paths import (
    ToolError,
    open_regular,
    refuse,
    resolve,
    show,
    touches_git,
    writable,
)
from taskhand.secrets import Redactor, clean_env

# Kinds of tool an evaluator may run; edit, delete, move, switch_mode and unknown kinds it may not.
EVALUATOR_KINDS = frozenset({"read", "search", "execute", "think", "fetch"})
LINE_LIMIT = 50 * 1024 * 1024  # one JSON-RPC message; longer lines end the unit
READ_LIMIT = 16 * 1024 * 1024  # bytes one fs/read_text_file returns
STDERR_KEPT = 64 * 1024
STDERR_TAIL = 2000  # characters of stderr quoted in a failure
CANCEL_GRACE = 1.0  # seconds the agent gets to end its turn after session/cancel
EXIT_GRACE = 2.0  # seconds to exit once stdin closes, and again after SIGTERM
INVALID_PARAMS = -32602  # the JSON-RPC code our file refusals carry; the message says why
AUTH = -32000  # ACP's "authentication required"


class AcpAgent:
    """Runs units through a program that speaks ACP on stdio; failures come back as outcomes."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        name: str = "acp",
        model: str | None = None,
        keys: Sequence[str] = (),
        prices: Mapping[str, price_list.Price] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        environ = dict(os.environ if env is None else env)
        if not command or not command[0]:
            raise AgentError(f"the {name} agent needs a command (fix: e.g. ['gemini', '--acp'])")
        found = shutil.which(command[0], path=environ.get("PATH"))
        if found is None:
            raise AgentError(f"{command[0]!r} is not on PATH (fix: install it or give its path)")
        self.name = name
        self.argv = [os.path.abspath(found), *command[1:]]
        self.model = model
        self.prices = dict(prices) if prices is not None else price_list.table(environ)
        self.env = {**clean_env(environ), **{k: environ[k] for k in keys if k in environ}}
        self.redact = Redactor(environ)

    def run(self, unit: Unit) -> Outcome:
        return asyncio.run(_Session(self, unit).run())


class _Session:
    """One unit: the agent's process, our side of its session, and what it said and did."""

    def __init__(self, agent: AcpAgent, unit: Unit) -> None:
        self.agent, self.unit = agent, unit
        self.name = agent.name
        self.root = Path(os.path.realpath(unit.worktree))
        self.given = Path(os.path.abspath(unit.worktree))
        self.model = unit.model or agent.model
        self.session_id = ""
        self.transcript: list[dict[str, object]] = [{"role": "user", "content": unit.prompt}]
        self.run_role = ""  # the kind of chunk being merged into one transcript entry
        self.run_text: list[str] = []
        self.said: list[str] = []  # the agent's message in the current turn
        self.tools: dict[str, dict[str, Any]] = {}  # what each tool call id was announced as
        self.tokens = Usage()
        self.cost: float | None = None
        self.stderr = bytearray()
        self.garbage = ""  # the first stdout line that was not a JSON-RPC message

    async def run(self) -> Outcome:
        try:
            proc = await asyncio.create_subprocess_exec(
                *self.agent.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.root,
                env=self.agent.env,
                start_new_session=True,
                limit=LINE_LIMIT,
            )
        except OSError as exc:
            return self.end(Case.ERROR, failure=f"{self.agent.argv[0]} could not start: {exc}")
        assert proc.stdin and proc.stdout and proc.stderr
        messages = asyncio.StreamReader(limit=LINE_LIMIT)
        readers = [
            asyncio.create_task(self.pump(proc.stdout, messages)),
            asyncio.create_task(self.drain(proc.stderr)),
        ]
        # Our own Client: the SDK dispatches to the methods below and answers the rest itself.
        conn = connect_to_agent(cast(Client, self), proc.stdin, messages)
        work = asyncio.create_task(self.converse(conn))
        done: set[asyncio.Task[Found | str]] = set()
        try:
            done, _ = await asyncio.wait({work}, timeout=self.unit.timeout_seconds)
            if not done:
                await self.cancel(conn, work)
        finally:
            await self.stop(proc, readers, graceful=bool(done))
            await conn.close()
        if not done:
            return self.end(Case.ERROR, failure=f"timed out after {self.unit.timeout_seconds:g} s")
        try:
            found = work.result()
        except ConnectionError:  # the agent exited, closed stdout or wrote garbage
            return self.end(Case.ERROR, failure=self.broken(proc.returncode))
        except RequestError as exc:
            return self.end(Case.ERROR, failure=self.refused(exc))
        except ValidationError as exc:
            failure = f"{self.name} answered with something we cannot read: {exc}"
            return self.end(Case.ERROR, failure=failure)
        except Exception as exc:  # whatever else breaks, the unit ends as an outcome
            return self.end(Case.ERROR, failure=f"the session with {self.name} broke: {exc!r}")
        if isinstance(found, str):
            return self.end(Case.ERROR, failure=found)
        return self.end(found.case, found=found)

    async def converse(self, conn: ClientSideConnection) -> Found | str:
        """The protocol from initialize to the outcome block: what the agent found, or why not."""
        files = FileSystemCapabilities(read_text_file=True, write_text_file=True)
        hello = await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(fs=files, terminal=False),
            client_info=Implementation(name="taskhand", version=__version__),
        )
        info, version = hello.agent_info, hello.protocol_version
        self.note(agent=f"{info.name} {info.version}" if info else "", protocol=version)
        if version != PROTOCOL_VERSION:
            return f"{self.name} speaks ACP version {version}, not {PROTOCOL_VERSION}"
        session = await conn.new_session(cwd=str(self.root), mcp_servers=[])
        self.session_id = session.session_id
        unusable = await self.choose_model(conn, session)
        if unusable:
            return unusable
        stop = await self.prompt(conn, self.unit.prompt)
        if stop != "end_turn":
            return f"{self.name} stopped with {stop}"
        found = parse_outcome("".join(self.said))
        if isinstance(found, str):
            stop = await self.prompt(conn, NUDGE)
            if stop != "end_turn":
                return f"{self.name} stopped with {stop} when asked for the outcome block"
            found = parse_outcome("".join(self.said))
        return found

    async def prompt(self, conn: ClientSideConnection, text: str) -> str:
        """One turn; its stop reason. Usage comes in the answer, per turn."""
        if text != self.unit.prompt:
            self.event({"role": "user", "content": text})
        self.said = []
        answer = await conn.prompt(session_id=self.session_id, prompt=[text_block(text)])
        self.flush()
        used = answer.usage
        if used:
            cached = used.cached_read_tokens or 0
            self.tokens += Usage(used.input_tokens, used.output_tokens, cached)
        return str(answer.stop_reason)

    async def choose_model(self, conn: ClientSideConnection, session: NewSessionResponse) -> str:
        """Select the unit's model through the agent's model option; why it cannot be, or ""."""
        for option in session.config_options or []:
            if isinstance(option, SessionConfigOptionSelect) and option.category == "model":
                if not self.model:
                    self.model = option.current_value
                    return ""
                values = [
                    choice.value
                    for entry in option.options
                    for choice in (
                        entry.options if isinstance(entry, SessionConfigSelectGroup) else [entry]
                    )
                ]
                if self.model not in values:
                    offered = ", ".join(values)
                    return f"{self.name} offers no model {self.model!r} (fix: use one of {offered})"
                if option.current_value != self.model:
                    await conn.set_config_option(
                        config_id=option.id, session_id=self.session_id, value=self.model
                    )
                return ""
        if self.model:
            self.note(note=f"{self.name} has no model option; it runs on its own default model")
        return ""

    async def cancel(self, conn: ClientSideConnection, work: asyncio.Task[Found | str]) -> None:
        """Ask the agent to end its turn, give it a moment, then stop waiting for it."""
        if self.session_id:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(conn.cancel(session_id=self.session_id), CANCEL_GRACE)
            await asyncio.wait({work}, timeout=CANCEL_GRACE)
        work.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await work

    async def stop(
        self, proc: asyncio.subprocess.Process, readers: list[asyncio.Task[None]], graceful: bool
    ) -> None:
        """End the agent: stdin closed, then SIGTERM, then SIGKILL, always to the whole group."""
        assert proc.stdin
        with contextlib.suppress(Exception):
            proc.stdin.close()
            await proc.stdin.wait_closed()
        for signum in (None, signal.SIGTERM, signal.SIGKILL) if graceful else (signal.SIGTERM,):
            if signum is not None:
                _signal_group(proc.pid, signum)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), EXIT_GRACE)
                break
        # Children left behind would hold the pipes open and outlive the unit.
        _signal_group(proc.pid, signal.SIGKILL)
        await proc.wait()
        _, late = await asyncio.wait(readers, timeout=EXIT_GRACE)
        for task in late:
            task.cancel()

    async def pump(self, source: asyncio.StreamReader, sink: asyncio.StreamReader) -> None:
        """Forward the agent's stdout line by line; anything not JSON-RPC cuts the connection."""
        try:
            while line := await _read_line(source):
                if self.garbage:
                    continue  # drained to the end so the pipe closes
                if line.strip() and not _is_message(line):
                    self.garbage = line[:200].decode("utf-8", "replace").strip() or "?"
                    sink.feed_eof()
                else:
                    sink.feed_data(line)
        finally:
            sink.feed_eof()

    async def drain(self, source: asyncio.StreamReader) -> None:
        while chunk := await source.read(65536):
            self.stderr += chunk
            del self.stderr[:-STDERR_KEPT]

    # ---- the Client side of ACP: what the agent asks of us

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
        if not reason and self.unit.role is Role.EVALUATOR and kind not in EVALUATOR_KINDS:
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
            if self.unit.role is not Role.IMPLEMENTER:
                raise refuse(f"the {self.unit.role} may read files but not write them")
            real = writable(self.root, self.relative(path), ())
            data = content.encode("utf-8")
            real.parent.mkdir(parents=True, exist_ok=True)
            _store(real, path, data)
        except UnicodeEncodeError:
            failure = refuse("the content holds a lone surrogate, which UTF-8 cannot store")
            raise self.fs_error("write", path, failure) from None
        except (ToolError, OSError) as exc:
            raise self.fs_error("write", path, exc) from None
        self.event({"role": "fs", "op": "write", "path": path, "bytes": len(data)})
        return WriteTextFileResponse()

    # ---- helpers

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
        self.transcript.append(entry)

    def note(self, **fields: object) -> None:
        self.event({"role": "note", **{k: v for k, v in fields.items() if v}})

    def flush(self) -> None:
        if self.run_text:
            limit = 20_000 if self.run_role == "assistant" else 4000
            content = _clip("".join(self.run_text), limit)
            self.transcript.append({"role": self.run_role, "content": content})
        self.run_role, self.run_text = "", []

    def broken(self, code: int | None) -> str:
        if self.garbage:
            why = f"{self.name} wrote a line that is not ACP (JSON-RPC) to stdout: {self.garbage!r}"
        elif code is not None:
            why = f"{self.name} exited {code}"
        else:
            why = f"{self.name} closed its output"
        return why + (self.tail() or " (nothing on stderr)")

    def refused(self, exc: RequestError) -> str:
        detail = f" ({json.dumps(exc.data)})" if exc.data else ""
        fix = " (fix: log the agent in, or pass its API key in keys)" if exc.code == AUTH else ""
        return f"{self.name} answered with error {exc.code}: {exc}{detail}{fix}{self.tail()}"

    def tail(self) -> str:
        text = self.stderr.decode("utf-8", "replace").strip()[-STDERR_TAIL:]
        return f"; stderr: {text}" if text else ""

    def end(self, case: Case, *, failure: str = "", found: Found | None = None) -> Outcome:
        self.flush()
        usage = Usage(self.tokens.tokens_in, self.tokens.tokens_out, self.tokens.tokens_cached)
        if self.cost is not None:
            usage.cost = self.cost
        elif usage.tokens_in + usage.tokens_out > 0:
            dollars = price_list.estimate(self.model or "", usage, self.agent.prices)
            if dollars is None:
                self.note(note=f"no price for model {self.model!r}")
            else:
                usage.cost, usage.estimated = dollars, True
        redact = self.agent.redact
        asked = found.question if found else None
        report = redact.value(asdict(found.report)) if found else {}
        return Outcome(
            case,
            resolution=redact(found.resolution if found else ""),
            failure=redact(failure or (found.failure if found else "")),
            question=Question(redact(asked.text), redact.value(asked.options)) if asked else None,
            report=CaseReport.from_json(report),
            usage=usage,
            transcript=redact.value(self.transcript),
        )


async def _read_line(source: asyncio.StreamReader) -> bytes:
    try:
        return await source.readuntil(b"\n")
    except asyncio.IncompleteReadError as exc:
        return exc.partial
    except asyncio.LimitOverrunError:
        return b"[a line over the size limit]\n"  # not JSON, so it ends the connection


def _is_message(line: bytes) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False


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


def _store(real: Path, raw: str, data: bytes) -> None:
    fd = open_regular(real, raw, os.O_WRONLY | os.O_CREAT)
    try:
        # A second name for the file may live outside the worktree; writing it writes there.
        if os.fstat(fd).st_nlink > 1:
            raise refuse(f"{show(raw)} has other hard links, which may lead outside")
        os.ftruncate(fd, 0)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def _option(options: list[PermissionOption], *kinds: str) -> PermissionOption | None:
    return next((option for kind in kinds for option in options if option.kind == kind), None)


def _signal_group(pgid: int, signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


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
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + "..."
    return value
