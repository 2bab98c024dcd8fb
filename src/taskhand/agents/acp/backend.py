"""The acp backend: any agent that speaks the Agent Client Protocol over stdio runs each unit in
its worktree. This module owns the agent's process and the session (initialize, session/new,
the prompt, a nudge, timeout and kill) and the outcome or verdict; acp_client answers the
agent's requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

from acp import PROTOCOL_VERSION, Client, RequestError, connect_to_agent, text_block
from acp.core import ClientSideConnection
from acp.schema import (
    ClientCapabilities,
    FileSystemCapabilities,
    Implementation,
    NewSessionResponse,
    SessionConfigOptionSelect,
    SessionConfigSelectGroup,
)
from acp.schema import Usage as AcpUsage
from pydantic import ValidationError

from taskhand import __version__
from taskhand.agents import prices as price_list
from taskhand.agents.acp.client import AcpClient
from taskhand.agents.base import AgentError
from taskhand.agents.cli.backend import nudge
from taskhand.agents.cli.outcome import Found, outcome, parse_outcome
from taskhand.agents.cli.presets import variables_for
from taskhand.host import interrupts, launcher, view
from taskhand.host.allowlist import agent_env
from taskhand.host.interrupts import signal_group
from taskhand.host.process import sealed_channel
from taskhand.host.sandbox import confine
from taskhand.host.secrets import Redactor
from taskhand.unit import Case, Outcome, Unit, Usage

LINE_LIMIT = 50 * 1024 * 1024  # one JSON-RPC message; longer lines end the unit
STDERR_KEPT = 64 * 1024
STDERR_TAIL = 2000  # characters of stderr quoted in a failure
CANCEL_GRACE = 1.0  # seconds the agent gets to end its turn after session/cancel
EXIT_GRACE = 2.0  # seconds to exit once stdin closes, and again after SIGTERM
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
        passed: Sequence[str] = (),
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
        # Its family's variables when its name says which (claude-code-acp), the ones named
        # in `keys`, the plan's `passed`; nothing else of ours.
        self.env = agent_env((*variables_for(found), *keys), passed, environ)
        self.redact = Redactor(environ)

    def run(self, unit: Unit) -> Outcome:
        return asyncio.run(_Session(self, unit).run())


class _Session:
    """One unit: the agent's process and the session we drive; the client answers the agent."""

    def __init__(self, agent: AcpAgent, unit: Unit) -> None:
        self.agent, self.unit = agent, unit
        self.name = agent.name
        self.client = AcpClient(unit)  # answers the agent and keeps the transcript
        self.model = unit.model or agent.model
        self.session_id = ""
        self.tokens = Usage()
        self.stderr = bytearray()
        self.garbage = ""  # the first stdout line that was not a JSON-RPC message

    async def run(self) -> Outcome:
        sandbox = self.unit.sandbox.with_readable(view.command_folders(self.agent.argv))
        worktree = self.unit.worktree
        with launcher.launch(confine(sandbox, self.agent.argv, [worktree], worktree)) as launch:
            assert launch is not None
            return await self.session(launch)

    async def session(self, launch: launcher.Launch) -> Outcome:
        # The JSON-RPC both ways over sealed channels: no process the agent starts can reopen
        # them through /proc and speak to either side in the agent's name (host/process.py).
        agent_in, our_in = sealed_channel()
        our_out, agent_out = sealed_channel()
        try:
            proc = await asyncio.create_subprocess_exec(
                *launch.argv,
                stdin=agent_in,
                stdout=agent_out,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.client.root,
                env=launch.env({**self.agent.env, **self.unit.env}),
                start_new_session=True,
            )
        except OSError as exc:
            for fd in (our_in, our_out):
                os.close(fd)
            return self.end(Case.ERROR, failure=f"{self.agent.argv[0]} could not start: {exc}")
        finally:
            for fd in (agent_in, agent_out):
                os.close(fd)
        launch.started(proc.pid)
        interrupts.track(proc.pid)  # a signal that stops the run kills the agent's group too
        assert proc.stderr
        # Each end a stream of its own; the half we do not use is closed with the other.
        stdout, unused = await asyncio.open_unix_connection(
            sock=socket.socket(fileno=our_out), limit=LINE_LIMIT
        )
        _, stdin = await asyncio.open_unix_connection(sock=socket.socket(fileno=our_in))
        messages = asyncio.StreamReader(limit=LINE_LIMIT)
        readers = [
            asyncio.create_task(self.pump(stdout, messages)),
            asyncio.create_task(self.drain(proc.stderr)),
        ]
        # Our own Client: the SDK dispatches to its methods and answers the rest itself.
        conn = connect_to_agent(cast(Client, self.client), stdin, messages)
        work = asyncio.create_task(self.converse(conn))
        guard = asyncio.create_task(_guard(launch))
        done: set[asyncio.Task[Any]] = set()
        try:
            done, _ = await asyncio.wait(
                {work, guard}, timeout=self.unit.timeout_seconds, return_when="FIRST_COMPLETED"
            )
            if work not in done:
                await self.cancel(conn, work)
        finally:
            guard.cancel()
            await self.stop(proc, stdin, readers, graceful=work in done)
            unused.close()
            await conn.close()
            interrupts.release(proc.pid)
        limit = launch.finish(proc.returncode)
        if limit:
            return self.end(Case.ERROR, failure=f"{self.name} was stopped: {limit}")
        if work not in done:
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
        self.client.note(agent=f"{info.name} {info.version}" if info else "", protocol=version)
        if version != PROTOCOL_VERSION:
            return f"{self.name} speaks ACP version {version}, not {PROTOCOL_VERSION}"
        session = await conn.new_session(cwd=str(self.client.root), mcp_servers=[])
        self.session_id = session.session_id
        unusable = await self.choose_model(conn, session)
        if unusable:
            return unusable
        stop = await self.prompt(conn, self.unit.prompt)
        if stop != "end_turn":
            return f"{self.name} stopped with {stop}"
        role = self.unit.role
        found = parse_outcome("".join(self.client.said), role)
        if isinstance(found, str):
            stop = await self.prompt(conn, nudge(role, found))
            if stop != "end_turn":
                block = "verdict" if role.judges else "outcome"
                return f"{self.name} stopped with {stop} when asked for the {block} block"
            found = parse_outcome("".join(self.client.said), role)
        return found

    async def prompt(self, conn: ClientSideConnection, text: str) -> str:
        """One turn; its stop reason. Usage comes in the answer, per turn."""
        if text != self.unit.prompt:
            self.client.event({"role": "user", "content": text})
        self.client.said = []
        answer = await conn.prompt(session_id=self.session_id, prompt=[text_block(text)])
        self.client.flush()
        used = answer.usage
        if used:
            self.tokens += reported_usage(used)
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
            default = f"{self.name} has no model option; it runs on its own default model"
            self.client.note(note=default)
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
        self,
        proc: asyncio.subprocess.Process,
        stdin: asyncio.StreamWriter,
        readers: list[asyncio.Task[None]],
        graceful: bool,
    ) -> None:
        """End the agent: stdin closed, then SIGTERM, then SIGKILL, always to the whole group."""
        with contextlib.suppress(Exception):
            stdin.close()
            await stdin.wait_closed()
        for signum in (None, signal.SIGTERM, signal.SIGKILL) if graceful else (signal.SIGTERM,):
            if signum is not None:
                signal_group(proc.pid, signum)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), EXIT_GRACE)
                break
        # Children left behind would hold the pipes open and outlive the unit.
        signal_group(proc.pid, signal.SIGKILL)
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

    # ---- how the unit ended

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
        self.client.flush()
        usage = replace(self.tokens, cost=0.0, estimated=False)
        if self.client.cost is not None:
            usage.cost = self.client.cost
        elif usage.tokens_in + usage.tokens_out > 0:
            dollars = price_list.estimate(self.model or "", usage, self.agent.prices)
            if dollars is None:
                self.client.note(note=f"no price for model {self.model!r}")
            else:
                usage.cost, usage.estimated = dollars, True
        return outcome(case, found, failure, usage, self.client.transcript, self.agent.redact)


def reported_usage(used: AcpUsage) -> Usage:
    """An ACP turn's usage, parts inside the totals. ACP leaves open whether input counts the
    cache reads and writes and output the thought tokens: `total_tokens`, "the sum of all token
    types", tells. When it equals every field added, the parts are apart and we add them in."""
    read, written = used.cached_read_tokens or 0, used.cached_write_tokens or 0
    thinking = used.thought_tokens or 0
    tokens_in, tokens_out = used.input_tokens, used.output_tokens
    parts = read + written + thinking
    if parts and used.total_tokens == tokens_in + tokens_out + parts:
        tokens_in, tokens_out = tokens_in + read + written, tokens_out + thinking
    return Usage(tokens_in, tokens_out, read, tokens_cache_write=written, tokens_thinking=thinking)


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


async def _guard(launch: launcher.Launch) -> None:
    """Returns once the agent must be stopped for a limit (host.launcher's disk guard)."""
    while not launch.check():
        await asyncio.sleep(launch.tick)
