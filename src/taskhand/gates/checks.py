"""Run a task's acceptance checks in its worktree and report each outcome as data.

Each check runs without a shell through host.process: its own process group, a bounded time
and bounded output.
"""

from __future__ import annotations

import errno
import os
import shlex
import shutil
import signal
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from taskhand.host.process import Capture, run_group
from taskhand.host.sandbox import NONE, confine
from taskhand.plan.model import Check
from taskhand.text import shorten
from taskhand.unit import Sandbox

DEFAULT_OUTPUT_LIMIT = 64 * 1024
HEAD_BYTES = 4 * 1024
TERM_GRACE_SECONDS = 2.0
STOPPED = "was stopped"  # by a limit of its sandbox (host.launcher)
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
        if self.error.startswith(STOPPED):
            return f"{command} {self.error}"
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
    # Started through a launcher (and bubblewrap), a program that cannot start is only an
    # exit code there: say it plainly first.
    missing = _missing(check.argv[0], cwd, env)
    if missing:
        return failed(missing)
    try:
        ran = run_group(
            confine(sandbox, check.argv, [cwd], cwd),
            cwd,
            env,
            start + check.timeout_seconds,
            stdout=Capture(output_limit, head=min(HEAD_BYTES, output_limit // 2)),
            grace=TERM_GRACE_SECONDS,
        )
    except OSError as exc:
        return failed(_start_error(check.argv[0], exc))
    stuck = "" if ran.code is not None else _STUCK.format(pid=ran.pid)
    if ran.limit:
        stuck = f"{STOPPED}: {ran.limit}"
    return CheckResult(
        check.argv,
        check.expected_exit_code,
        None if ran.timed_out else ran.code,
        ran.timed_out,
        time.monotonic() - start,
        ran.stdout,
        stuck,
        check.timeout_seconds,
    )


def _missing(program: str, cwd: Path, env: Mapping[str, str] | None) -> str:
    """Why `program` cannot start, as Popen would say it, or ""."""
    if os.sep in program:
        path = cwd / program
        if not path.exists():
            return _start_error(program, FileNotFoundError(program))
        if not os.access(path, os.X_OK):
            return _start_error(program, PermissionError(program))
        if not _runnable_format(path):
            return _start_error(program, OSError(errno.ENOEXEC, "Exec format error"))
        return ""
    search = (env if env is not None else os.environ).get("PATH", os.defpath)
    if shutil.which(program, path=search) is None:
        return _start_error(program, FileNotFoundError(program))
    return ""


def _runnable_format(path: Path) -> bool:
    """Whether the kernel can run the file itself: a #! line or a binary (a shell would run a
    script without either with sh, which the check's author did not ask for)."""
    try:
        with path.open("rb") as file:
            start = file.read(4)
    except OSError:
        return True  # let the start say what is wrong
    return start.startswith(b"#!") or start == b"\x7fELF" or path.is_dir()


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
        text = shorten(text, width - 3)
    return f"`{text}`"


def _seconds(value: float) -> str:
    return f"{round(value, 1):g}s"


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"
