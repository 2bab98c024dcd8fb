"""The project's app, run for the units that look at it (designer, qa): started by the runner,
never by an agent, in a worktree on a free port ($PORT), in a process group of its own and
the agents' sandbox; up once it answers HTTP, and stopped, group and all, when the block ends.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO

from taskhand.config import AppConfig
from taskhand.errors import UserError
from taskhand.host import interrupts
from taskhand.host.interrupts import group_alive, signal_group
from taskhand.host.launcher import Launch
from taskhand.host.ports import free_port
from taskhand.host.process import Capture
from taskhand.host.sandbox import NONE, confine
from taskhand.text import shorten
from taskhand.unit import Sandbox

PORT_TRIES = 3  # ports tried when the app finds its port taken
GRACE_SECONDS = 3.0  # between SIGTERM and SIGKILL of the app's group
POLL_SECONDS = 0.1  # between two readiness requests
REQUEST_SECONDS = 2.0  # one readiness request, at most
OUTPUT_LIMIT = 64 * 1024  # the app's output kept, from the end, for the error that quotes it
TAIL_CHARS = 600  # of that output, quoted in an error
NOT_FOUND = 127  # the shell's exit code for a command it cannot find
# What servers print when their port is taken (Python, Node, Go, Rust, Ruby, Java, ...).
PORT_TAKEN = ("address already in use", "eaddrinuse", "address in use", "port is already")
WHERE = "[app] in taskhand.toml"


class AppError(UserError):
    """The project's app cannot be started or never answers; one line with the fix."""


class _PortTaken(Exception):
    """The app could not bind its port: another free port is tried."""


@contextlib.contextmanager
def running(
    app: AppConfig,
    worktree: Path,
    env: Mapping[str, str],
    *,
    sandbox: Sandbox = NONE,
) -> Iterator[str]:
    """Start `app` in `worktree`, wait until it answers, and yield its URL; stop it on the way
    out, whatever ends the block. `env` is the app's whole environment ($PORT is added);
    `sandbox` confines it as it confines an agent's commands (it writes only the worktree)."""
    if not app.declared:
        raise AppError("no app is declared", where=WHERE, fix='set start = "..." under [app]')
    if not worktree.is_dir():
        raise AppError(f"the app's folder {worktree} does not exist", fix="create the worktree")
    for key, value in (("url", app.url), ("ready", app.ready)):
        if value and not value.startswith(("http://", "https://")):
            raise AppError(
                f"{key} = {shorten(value, 80)!r} is not an http(s) address",
                where=WHERE,
                fix=f'write {key} = "http://127.0.0.1:$PORT/"',
            )
    for attempt in range(1, PORT_TRIES + 1):
        port = free_port()
        server = _Server(app, worktree, env, sandbox, port)
        try:
            server.wait_until_ready()
        except _PortTaken:
            server.stop()
            if attempt < PORT_TRIES:
                continue
            raise AppError(
                f"the app found its port taken {PORT_TRIES} times: {server.tail()}",
                where=WHERE,
                fix="make start listen on $PORT, the free port taskhand gives it",
            ) from None
        except BaseException:
            server.stop()
            raise
        try:
            yield server.url
        finally:
            server.stop()
        return


def with_port(text: str, port: int) -> str:
    return text.replace("${PORT}", str(port)).replace("$PORT", str(port))


class _Server:
    """One start of the app on one port: its process group and its output."""

    def __init__(
        self, app: AppConfig, worktree: Path, env: Mapping[str, str], sandbox: Sandbox, port: int
    ) -> None:
        self.app = app
        self.url = with_port(app.url, port)
        self.ready = with_port(app.ready or app.url, port)
        self.output = Capture(OUTPUT_LIMIT, head=0)
        self.lock = threading.Lock()
        self.launch = Launch(confine(sandbox, ["bash", "-c", app.start], [worktree], worktree))
        argv = self.launch.argv
        try:
            self.proc = subprocess.Popen(
                argv,
                cwd=worktree,
                env=self.launch.env({**env, "PORT": str(port)}),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own group: stopped whole, apart from ours
            )
        except OSError as exc:
            self.launch.finish(None)
            raise AppError(
                f"the app could not start: {argv[0]}: {exc.strerror or exc}",
                where=WHERE,
                fix="install bash, or check start",
            ) from None
        self.launch.started(self.proc.pid)
        self.reader = threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True)
        self.reader.start()
        try:
            interrupts.track(self.proc.pid)  # a signal that stops the run stops the app too
        except BaseException:
            self.stop()
            raise

    def _read(self, pipe: IO[bytes]) -> None:
        with contextlib.suppress(OSError, ValueError):
            while chunk := os.read(pipe.fileno(), 64 * 1024):
                with self.lock:
                    self.output.add(chunk)

    def tail(self) -> str:
        with self.lock:
            text = self.output.text()
        lines = " | ".join(line.strip() for line in text.strip().splitlines() if line.strip())
        said = lines[-TAIL_CHARS:] if len(lines) > TAIL_CHARS else lines
        return f"its output ends: {said}" if said else "it printed nothing"

    def wait_until_ready(self) -> None:
        """Poll `ready` until it answers below 500; AppError when the app ends or time is up."""
        deadline = time.monotonic() + self.app.ready_seconds
        last = "no answer"
        while True:
            code = self.proc.poll()
            if code is not None:
                self.reader.join(1.0)  # its last words
                self._ended(code)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AppError(
                    f"the app did not answer {self.ready} within {self.app.ready_seconds:g} s "
                    f"({last}); {self.tail()}",
                    where=WHERE,
                    fix="check start and ready, or raise ready_seconds",
                )
            status = _status(self.ready, min(REQUEST_SECONDS, remaining))
            if isinstance(status, int) and status < 500:
                return
            last = f"HTTP {status}" if isinstance(status, int) else status
            time.sleep(min(POLL_SECONDS, max(0.0, deadline - time.monotonic())))

    def _ended(self, code: int) -> None:
        tail = self.tail()
        if any(sign in tail.lower() for sign in PORT_TAKEN):
            raise _PortTaken
        if code == NOT_FOUND:
            raise AppError(
                f"the app's start command was not found ({shorten(self.app.start, 80)!r}); {tail}",
                where=WHERE,
                fix="install the program start names, or correct start",
            )
        ended = f"exit code {code}" if code >= 0 else f"signal {-code}"
        raise AppError(
            f"the app exited before it answered ({ended}); {tail}",
            where=WHERE,
            fix="make start run the app in the foreground until it is stopped",
        )

    def stop(self) -> None:
        """SIGTERM the app's whole group, SIGKILL what is left after a grace, reap the leader."""
        pid = self.proc.pid
        try:
            signal_group(pid, signal.SIGTERM)
            deadline = time.monotonic() + GRACE_SECONDS
            while group_alive(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            # The leader is still unreaped here, so the group id cannot have been reused.
            signal_group(pid, signal.SIGKILL)
            deadline = time.monotonic() + GRACE_SECONDS
            while group_alive(pid) and time.monotonic() < deadline:
                time.sleep(0.02)
        finally:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=GRACE_SECONDS)
            self.reader.join(1.0)
            if self.proc.stdout is not None:
                self.proc.stdout.close()
            interrupts.release(pid)
            self.launch.finish(self.proc.returncode)


def _status(url: str, seconds: float) -> int | str:
    """The HTTP status `url` answers a GET with, or why there was none."""
    # Straight to the app: a proxy from the environment must not answer for it.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(urllib.request.Request(url, method="GET"), timeout=seconds) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return str(reason) or type(exc).__name__
