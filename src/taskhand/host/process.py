"""The one way taskhand runs a program it does not trust to end (an agent, a check, an agent's
shell): in its own process group, killed at the deadline (SIGTERM, then SIGKILL) with all it
started, its output captured up to a cap so that endless output costs bounded memory.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import socket
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from taskhand.host import interrupts, launcher
from taskhand.host.interrupts import signal_group
from taskhand.text import cut_between

OUTPUT_LIMIT = 16 * 1024 * 1024  # an agent's stdout kept; the first MiB and the rest from the end
OUTPUT_HEAD = 1024 * 1024  # of which the head
STDERR_LIMIT = 64 * 1024  # an agent's stderr kept, from the end
GRACE_SECONDS = 3.0  # between SIGTERM and SIGKILL of a timed-out agent
# After the main process is gone the pipes only wait on killed processes, or on ones that left
# the group; either way there is nothing worth waiting longer for.
DRAIN_SECONDS = 1.0
# Used only where the kernel offers no pidfd to wake us when the main process exits.
POLL_SECONDS = 0.05
_CHUNK = 64 * 1024

__all__ = ["Call", "Capture", "Finished", "Ran", "execute", "run_group", "signal_group"]


@dataclass
class Ran:
    """What a program did. `code` is None only for a process that survived SIGKILL (stuck in
    the kernel); negative for one a signal ended, as subprocess reports it."""

    code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    pid: int
    limit: str = ""  # the limit it reached, when a confined program was stopped by one


def run_group(
    argv: Sequence[str],
    cwd: Path,
    env: Mapping[str, str] | None,
    deadline: float,
    *,
    stdout: Capture,
    stderr: Capture | None = None,
    stdin: str | None = None,
    grace: float = GRACE_SECONDS,
    sealed: bool = False,
) -> Ran:
    """Run `argv` in a new process group until it exits or `deadline` (time.monotonic) passes.

    `env`, when given, is the child's whole environment. Without a `stderr` capture, stderr
    joins stdout. `stdin` is written to the program (None: it reads /dev/null). Whatever the
    program started is killed when it ends, so nothing outlives it; a `Confined` argv (see
    host.launcher) runs under its limits, and `limit` says which one stopped it. `sealed`: its
    outputs are sockets (`sealed_channel`), not pipes. OSError when it cannot start.
    """
    with launcher.launch(argv) as launch:
        return _run(argv, launch, cwd, env, deadline, stdout, stderr, stdin, grace, sealed)


def _run(
    argv: Sequence[str],
    launch: launcher.Launch | None,
    cwd: Path,
    env: Mapping[str, str] | None,
    deadline: float,
    stdout: Capture,
    stderr: Capture | None,
    stdin: str | None,
    grace: float,
    sealed: bool,
) -> Ran:
    channels = [sealed_channel() for _ in range(1 if stderr is None else 2)] if sealed else []
    ours, theirs = [fd for fd, _ in channels], [fd for _, fd in channels]
    outputs: list[int] = theirs or [subprocess.PIPE, subprocess.PIPE]
    try:
        proc = subprocess.Popen(
            launch.argv if launch is not None else list(argv),
            cwd=cwd,
            env=launch.env(env) if launch is not None else (dict(env) if env is not None else None),
            stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
            stdout=outputs[0],
            stderr=subprocess.STDOUT if stderr is None else outputs[-1],
            start_new_session=True,
        )
    except OSError:
        for fd in ours:
            os.close(fd)
        raise
    finally:
        for fd in theirs:  # the child holds them now; ours would keep them from ending
            os.close(fd)
    readers: list[IO[bytes] | None] = [os.fdopen(fd, "rb", buffering=0) for fd in ours]
    readers = readers or [proc.stdout, proc.stderr]
    pipes: dict[int, tuple[IO[bytes], Capture]] = {}
    for pipe, capture in zip(readers, (stdout, stderr), strict=False):
        if pipe is not None and capture is not None:
            os.set_blocking(pipe.fileno(), False)
            pipes[pipe.fileno()] = (pipe, capture)
    if proc.stdin is not None:
        threading.Thread(target=_feed, args=(proc.stdin, stdin), daemon=True).start()
    timed_out, limit = False, ""
    try:
        if launch is not None:
            launch.started(proc.pid)
        interrupts.track(proc.pid)  # a signal that stops the run kills the group too
        check = (launch.check, launch.tick) if launch is not None else None
        timed_out = _supervise(proc, pipes, deadline, grace, check)
    finally:
        _finish(proc, pipes, grace)
        interrupts.release(proc.pid)
        if launch is not None:
            limit = launch.finish(proc.returncode)
    err = stderr.text() if stderr else ""
    return Ran(proc.returncode, stdout.text(), err, timed_out and not limit, proc.pid, limit)


def sealed_channel() -> tuple[int, int]:
    """A channel between us and a child, used one way as a pipe is, but a Unix socket pair:
    (the end that reads, the end that writes). A pipe can be opened again through
    /proc/<pid>/fd/N by any process of the same user, which could then write into what we
    read; open() on a socket fails (ENXIO), so only the processes that inherited an end can
    use it."""
    # The other direction is left open, not shut down: asyncio (and others) take a write end
    # that reads an end-of-file for a reader gone, and stop writing.
    reader, writer = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    return reader.detach(), writer.detach()


def _feed(pipe: IO[bytes], text: str | None) -> None:
    with contextlib.suppress(OSError):
        pipe.write((text or "").encode())
    with contextlib.suppress(OSError):
        pipe.close()


def _supervise(
    proc: subprocess.Popen[bytes],
    pipes: dict[int, tuple[IO[bytes], Capture]],
    deadline: float,
    grace: float,
    check: tuple[Callable[[], str], float] | None = None,
) -> bool:
    """Collect output until the main process exits, time runs out or `check` (asked every so
    many seconds) gives a reason to stop it; True when it was stopped (time out, or reason)."""
    exit_fd = _pidfd(proc.pid)
    try:
        with selectors.DefaultSelector() as selector:
            for fd in pipes:
                selector.register(fd, selectors.EVENT_READ)
            if exit_fd is not None:
                selector.register(exit_fd, selectors.EVENT_READ)
            # A grandchild may hold a pipe open long after the main process exits, so the
            # main process's exit, not the pipe's end, is what ends the wait.
            if _wait_for_exit(proc, selector, pipes, deadline, exit_fd, check):
                return False
            signal_group(proc.pid, signal.SIGTERM)
            _wait_for_exit(proc, selector, pipes, time.monotonic() + grace, exit_fd)
            return True
    finally:
        if exit_fd is not None:
            os.close(exit_fd)


def _wait_for_exit(
    proc: subprocess.Popen[bytes],
    selector: selectors.BaseSelector,
    pipes: dict[int, tuple[IO[bytes], Capture]],
    deadline: float,
    exit_fd: int | None,
    check: tuple[Callable[[], str], float] | None = None,
) -> bool:
    """Read output until the main process has exited (True), or the deadline passes or
    `check` says why it must stop (False)."""
    while not _has_exited(proc):
        remaining = deadline - time.monotonic()
        if remaining <= 0 or (check is not None and check[0]()):
            return False
        wait = remaining if exit_fd is not None else min(remaining, POLL_SECONDS)
        if check is not None:
            wait = min(wait, check[1])
        for key, _ in selector.select(wait):
            if key.fd in pipes and not _read_available(key.fd, pipes[key.fd][1]):
                selector.unregister(key.fd)
    return True


def _finish(
    proc: subprocess.Popen[bytes], pipes: dict[int, tuple[IO[bytes], Capture]], grace: float
) -> None:
    """Kill what is left of the group, keep the last output, close the pipes and reap."""
    # Leftovers (a server a test suite forgot to stop) must not outlive the program; the main
    # process is still unreaped here, so the group id cannot have been reused.
    signal_group(proc.pid, signal.SIGKILL)
    try:
        _drain(pipes, time.monotonic() + DRAIN_SECONDS)
    finally:
        for pipe, _ in pipes.values():
            pipe.close()
        # Only a process stuck in the kernel survives SIGKILL; never wait forever on one.
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace)


def _drain(pipes: dict[int, tuple[IO[bytes], Capture]], deadline: float) -> None:
    with selectors.DefaultSelector() as selector:
        for fd in pipes:
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map() and (remaining := deadline - time.monotonic()) > 0:
            for key, _ in selector.select(remaining):
                if not _read_available(key.fd, pipes[key.fd][1]):
                    selector.unregister(key.fd)


def _read_available(fd: int, capture: Capture) -> bool:
    """Read what the pipe holds now; False once it has ended."""
    while True:
        try:
            chunk = os.read(fd, _CHUNK)
        except BlockingIOError:
            return True
        if not chunk:
            return False
        capture.add(chunk)


def _has_exited(proc: subprocess.Popen[bytes]) -> bool:
    """Whether the main process has exited, leaving it unreaped so its group id stays reserved."""
    if proc.returncode is not None:
        return True
    if hasattr(os, "waitid"):
        try:
            flags = os.WEXITED | os.WNOHANG | os.WNOWAIT
            return os.waitid(os.P_PID, proc.pid, flags) is not None
        except ChildProcessError:
            return True
    return proc.poll() is not None


def _pidfd(pid: int) -> int | None:
    """A descriptor that becomes readable when `pid` exits, where the kernel offers one."""
    if not hasattr(os, "pidfd_open"):
        return None
    try:
        return os.pidfd_open(pid)
    except OSError:
        return None


class Capture:
    """The first `head` bytes of output and a tail up to `limit` in all, so that huge output
    costs bounded memory; the text says how much was cut between them."""

    def __init__(self, limit: int, head: int) -> None:
        self.limit = limit
        self.head_limit = min(head, limit)
        self.tail_limit = limit - self.head_limit
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_size = 0
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self.tail.append(chunk)
        self.tail_size += len(chunk)
        while self.tail and self.tail_size - len(self.tail[0]) >= self.tail_limit:
            self.tail_size -= len(self.tail.popleft())

    def text(self) -> str:
        tail = b"".join(self.tail)
        if self.total <= self.limit:
            return (bytes(self.head) + tail).decode("utf-8", errors="replace")
        tail = tail[len(tail) - self.tail_limit :] if self.tail_limit else b""
        cut = self.total - len(self.head) - len(tail)
        head = self.head.decode("utf-8", errors="replace")
        return cut_between(head, cut, tail.decode("utf-8", errors="replace"))


@dataclass
class Call:
    """One invocation of an agent's program: the argv, the text for stdin (None: stdin is
    /dev/null), and variables set for this invocation over the agent's environment."""

    argv: list[str]
    stdin: str | None = None
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class Finished:
    code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    error: str = ""  # it could not start
    limit: str = ""  # the limit that stopped it (host.launcher)


def execute(
    call: Call,
    cwd: Path,
    env: Mapping[str, str],
    deadline: float,
    limit: int = OUTPUT_LIMIT,
    *,
    stdout: Capture | None = None,
    sealed: bool = True,
) -> Finished:
    """Run an agent's program for `call`: stdout kept up to `limit` (its first MiB and the
    rest from the end) or by the `stdout` capture given, stderr's last 64 KiB. Both reach us
    through sealed channels (`sealed_channel`) unless `sealed` is False: what the program's
    own processes cannot reopen is what its outcome may be read from."""
    try:
        ran = run_group(
            call.argv,
            cwd,
            env,
            deadline,
            stdout=Capture(limit, min(limit // 2, OUTPUT_HEAD)) if stdout is None else stdout,
            stderr=Capture(STDERR_LIMIT, head=0),
            stdin=call.stdin,
            sealed=sealed,
        )
    except OSError as exc:
        return Finished(None, "", "", error=f"{call.argv[0]} could not start: {exc}")
    return Finished(ran.code, ran.stdout, ran.stderr, ran.timed_out, limit=ran.limit)
