"""Run a task's acceptance checks in its worktree and report each outcome as data.

Each check runs without a shell in its own process group, with a bounded time and bounded output.
"""

from __future__ import annotations

import contextlib
import errno
import os
import selectors
import shlex
import shutil
import signal
import subprocess
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from taskhand.host import interrupts
from taskhand.host.sandbox import NONE, confine
from taskhand.plan.model import Check
from taskhand.unit import Sandbox

DEFAULT_OUTPUT_LIMIT = 64 * 1024
HEAD_BYTES = 4 * 1024
TERM_GRACE_SECONDS = 2.0
# After the main process is gone the pipe only waits on killed processes, or on ones that left
# the group; either way there is nothing worth waiting longer for.
DRAIN_SECONDS = 1.0
# Used only where the kernel offers no pidfd to wake us when the main process exits.
POLL_SECONDS = 0.05
_CHUNK = 64 * 1024
_STUCK = "process {pid} survived SIGKILL (fix: look for it stuck in the kernel, e.g. a hung mount)"


@dataclass(frozen=True)
class CheckResult:
    """What one check did; `exit_code` is None when it never ran or was killed for time."""

    argv: tuple[str, ...]
    expected_exit_code: int
    exit_code: int | None
    timed_out: bool
    seconds: float
    output: str
    error: str = ""
    timeout_seconds: float | None = None

    @property
    def ok(self) -> bool:
        return (
            not self.error
            and not self.timed_out
            and self.exit_code is not None
            and self.exit_code == self.expected_exit_code
        )

    def reason(self) -> str:
        """One line saying what happened, for a person and for the agent's next attempt."""
        command = _show(self.argv)
        if self.error:
            return f"{command} could not run: {self.error}"
        if self.timed_out:
            limit = self.timeout_seconds if self.timeout_seconds is not None else self.seconds
            return f"{command} timed out after {_seconds(limit)}"
        if self.exit_code is not None and self.exit_code < 0:
            return (
                f"{command} was killed by {_signal_name(-self.exit_code)}, "
                f"expected exit {self.expected_exit_code}"
            )
        if self.ok:
            return f"{command} exited {self.exit_code} as expected"
        return f"{command} exited {self.exit_code}, expected {self.expected_exit_code}"


def run_check(
    check: Check,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    output_limit: int = DEFAULT_OUTPUT_LIMIT,
    sandbox: Sandbox = NONE,
) -> CheckResult:
    """Run one check in `cwd`; `env`, when given, is the child's whole environment. Under a
    sandbox it can write only `cwd`."""
    if output_limit < 0:
        raise ValueError(f"output_limit must be >= 0, got {output_limit}")
    start = time.monotonic()

    def failed(error: str) -> CheckResult:
        return CheckResult(
            check.argv,
            check.expected_exit_code,
            None,
            False,
            time.monotonic() - start,
            "",
            error,
            check.timeout_seconds,
        )

    if not check.argv:
        return failed("empty command (fix: give the check a program to run)")
    if not cwd.is_dir():
        return failed(f"working directory not found: {cwd} (fix: create it or correct the path)")
    if sandbox.active:  # inside, a missing program is only bwrap's exit 1: say it plainly
        missing = _missing(check.argv[0], cwd, env)
        if missing:
            return failed(missing)
    try:
        proc = subprocess.Popen(
            confine(sandbox, check.argv, [cwd], cwd),
            cwd=cwd,
            env=dict(env) if env is not None else None,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        return failed(_start_error(check.argv[0], exc))

    capture = _Capture(output_limit)
    timed_out = False
    try:
        interrupts.track(proc.pid)  # a signal that stops the run kills the check's group too
        timed_out = _supervise(proc, capture, start + check.timeout_seconds)
    finally:
        _finish(proc, capture)
        interrupts.release(proc.pid)
    stuck = "" if proc.returncode is not None else _STUCK.format(pid=proc.pid)
    return CheckResult(
        check.argv,
        check.expected_exit_code,
        None if timed_out else proc.returncode,
        timed_out,
        time.monotonic() - start,
        capture.text(),
        stuck,
        check.timeout_seconds,
    )


def run_checks(
    checks: Sequence[Check],
    cwd: Path,
    env: Mapping[str, str] | None = None,
    output_limit: int = DEFAULT_OUTPUT_LIMIT,
) -> list[CheckResult]:
    """Run every check in order, even after a failure: the next attempt wants every reason."""
    return [run_check(check, cwd, env, output_limit) for check in checks]


def _supervise(proc: subprocess.Popen[bytes], capture: _Capture, deadline: float) -> bool:
    """Collect output until the main process exits or time runs out; True when it timed out."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    os.set_blocking(fd, False)
    exit_fd = _pidfd(proc.pid)
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            if exit_fd is not None:
                selector.register(exit_fd, selectors.EVENT_READ)
            # A grandchild may hold the pipe open long after the main process exits, so the
            # main process's exit, not the pipe's end, is what ends the wait.
            if _wait_for_exit(proc, selector, fd, capture, deadline, exit_fd):
                return False
            _signal_group(proc.pid, signal.SIGTERM)
            _wait_for_exit(
                proc, selector, fd, capture, time.monotonic() + TERM_GRACE_SECONDS, exit_fd
            )
            return True
    finally:
        if exit_fd is not None:
            os.close(exit_fd)


def _wait_for_exit(
    proc: subprocess.Popen[bytes],
    selector: selectors.BaseSelector,
    fd: int,
    capture: _Capture,
    deadline: float,
    exit_fd: int | None,
) -> bool:
    """Read output until the main process has exited (True) or the deadline passes (False)."""
    pipe_open = True
    while not _has_exited(proc):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        wait = remaining if exit_fd is not None else min(remaining, POLL_SECONDS)
        for key, _ in selector.select(wait):
            if key.fd == fd and pipe_open and not _read_available(fd, capture):
                selector.unregister(fd)
                pipe_open = False
    return True


def _finish(proc: subprocess.Popen[bytes], capture: _Capture) -> None:
    """Kill what is left of the group, keep the last output, close the pipe and reap."""
    assert proc.stdout is not None
    # Leftovers (a server a test suite forgot to stop) must not outlive the check; the main
    # process is still unreaped here, so the group id cannot have been reused.
    _signal_group(proc.pid, signal.SIGKILL)
    try:
        _drain(proc.stdout.fileno(), capture, time.monotonic() + DRAIN_SECONDS)
    finally:
        proc.stdout.close()
        # Only a process stuck in the kernel survives SIGKILL; never wait forever on one.
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=TERM_GRACE_SECONDS)


def _drain(fd: int, capture: _Capture, deadline: float) -> None:
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while (remaining := deadline - time.monotonic()) > 0:
            if selector.select(remaining) and not _read_available(fd, capture):
                return


def _read_available(fd: int, capture: _Capture) -> bool:
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


def _signal_group(pgid: int, signum: signal.Signals) -> None:
    # A group already gone is the goal reached; macOS answers EPERM when only zombies remain.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


class _Capture:
    """The first bytes of output and a bounded tail, so huge output costs bounded memory."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.head_limit = min(HEAD_BYTES, limit // 2)
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
        head = self.head.decode("utf-8", errors="replace")
        cut = self.total - len(self.head) - len(tail)
        newline = "" if not head or head.endswith("\n") else "\n"
        marker = f"{newline}[... {cut} bytes cut ...]\n"
        return head + marker + tail.decode("utf-8", errors="replace")


def _missing(program: str, cwd: Path, env: Mapping[str, str] | None) -> str:
    """Why `program` cannot start, as Popen would say it, or ""."""
    if os.sep in program:
        path = cwd / program
        if not path.exists():
            return _start_error(program, FileNotFoundError(program))
        if not os.access(path, os.X_OK):
            return _start_error(program, PermissionError(program))
        return ""
    search = (env if env is not None else os.environ).get("PATH", os.defpath)
    if shutil.which(program, path=search) is None:
        return _start_error(program, FileNotFoundError(program))
    return ""


def _start_error(program: str, exc: OSError) -> str:
    if isinstance(exc, FileNotFoundError):
        return f"program not found: {program} (fix: install it or correct the command)"
    if isinstance(exc, PermissionError):
        return f"permission denied: {program} (fix: chmod +x {program})"
    if exc.errno == errno.ENOEXEC:
        return (
            f"not an executable format: {program} "
            "(fix: start the script with a #! line, or run it through its interpreter)"
        )
    return f"could not start {program}: {exc.strerror or exc} (fix: check the command)"


def _show(argv: tuple[str, ...], width: int = 120) -> str:
    """The command as one quoted line, shortened so a long -c snippet stays readable."""
    text = shlex.join(argv).replace("\n", "\\n") if argv else "(empty command)"
    if len(text) > width:
        text = text[: width - 3] + "..."
    return f"`{text}`"


def _seconds(value: float) -> str:
    return f"{round(value, 1):g}s"


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"
