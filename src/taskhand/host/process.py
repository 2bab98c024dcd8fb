"""Running one agent program: its own process group, killed at the deadline (SIGTERM, then
SIGKILL), with stdout and stderr captured up to a cap so endless output costs bounded memory.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from taskhand.host import interrupts

OUTPUT_LIMIT = 16 * 1024 * 1024  # stdout kept; the first MiB and the rest from the end
GRACE_SECONDS = 3.0  # between SIGTERM and SIGKILL of a timed-out program


@dataclass
class Call:
    """One invocation: the argv, the text for stdin (None: stdin is /dev/null), and variables
    set for this invocation over the agent's environment."""

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


def execute(
    call: Call, cwd: Path, env: Mapping[str, str], deadline: float, limit: int = OUTPUT_LIMIT
) -> Finished:
    """Run `call` in its own process group; killed at the deadline, output capped."""
    try:
        proc = subprocess.Popen(
            call.argv,
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL if call.stdin is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        return Finished(None, "", "", error=f"{call.argv[0]} could not start: {exc}")
    interrupts.track(proc.pid)  # a signal that stops the run kills the agent's group too
    out, err = _Capture(limit, head=min(limit // 2, 1 << 20)), _Capture(64 * 1024, head=0)
    threads = [
        threading.Thread(target=out.drain, args=(proc.stdout,), daemon=True),
        threading.Thread(target=err.drain, args=(proc.stderr,), daemon=True),
    ]
    if proc.stdin is not None:
        threads.append(threading.Thread(target=_feed, args=(proc.stdin, call.stdin), daemon=True))
    for thread in threads:
        thread.start()
    timed_out = False
    try:
        proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        timed_out = True
        _signal_group(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            _signal_group(proc.pid, signal.SIGKILL)
            proc.wait()
    # Children left behind would hold the pipes open and outlive the unit.
    _signal_group(proc.pid, signal.SIGKILL)
    for thread in threads:
        thread.join(5)
    for pipe, thread in zip((proc.stdout, proc.stderr), threads, strict=False):
        if pipe is not None and not thread.is_alive():  # a reader still blocked holds its lock
            pipe.close()
    interrupts.release(proc.pid)
    return Finished(proc.returncode, out.text(), err.text(), timed_out)


def _feed(pipe: IO[bytes], text: str | None) -> None:
    with contextlib.suppress(OSError):
        pipe.write((text or "").encode())
    with contextlib.suppress(OSError):
        pipe.close()


def _signal_group(pgid: int, signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


class _Capture:
    """The first `head` bytes and a bounded tail, so endless output costs bounded memory."""

    def __init__(self, limit: int, head: int) -> None:
        self.limit, self.head_limit = limit, head
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def drain(self, pipe: IO[bytes]) -> None:
        with contextlib.suppress(OSError, ValueError):
            for chunk in iter(lambda: pipe.read1(65536), b""):  # type: ignore[attr-defined]
                room = self.head_limit - len(self.head)
                if room > 0:
                    self.head += chunk[:room]
                    chunk = chunk[room:]
                self.tail += chunk
                excess = len(self.tail) - (self.limit - self.head_limit)
                if excess > 0:
                    del self.tail[:excess]
                    self.dropped += excess

    def text(self) -> str:
        gap = f"\n[{self.dropped} bytes left out]\n".encode() if self.dropped else b""
        return bytes(self.head + gap + self.tail).decode("utf-8", "replace")
