"""The OS sandbox every agent-controlled process runs in: agent units, their shell commands,
acceptance checks and reviewers.

With bubblewrap (Linux) the process runs with no capabilities and no way to get any back (a
user namespace of its own, every capability dropped, no_new_privs, no further namespaces),
under a seccomp filter (host.seccomp), in its own process and IPC namespaces, with no terminal.
It sees an allow-list of the machine (host.view): the system's folders and the programs it
needs read-only, its workspace (and the agent program's scratch folder) writable, a private
home, /tmp and /dev/shm; never your home, your checkout or another workspace. Where no sandbox
is available the run goes on with `none` after a warning: the backstop then notices what it
cannot prevent. Either way the program runs under its limits (host.launcher).
"""

from __future__ import annotations

import functools
import shutil
import time
from collections.abc import Sequence
from pathlib import Path

from taskhand.config import SANDBOXES
from taskhand.errors import UserError
from taskhand.host import view
from taskhand.host.launcher import SECCOMP_FD, Confined
from taskhand.host.process import STDERR_LIMIT as STDERR
from taskhand.host.process import Capture, run_group
from taskhand.unit import Sandbox, Unit

CHOICES = SANDBOXES
PROBE_SECONDS = 30.0  # a bwrap that has not run `true` by then does not work here


class SandboxError(UserError):
    """The sandbox asked for cannot be had; the message is one line with the fix."""


def confine(sandbox: Sandbox, argv: Sequence[str], writable: Sequence[Path], cwd: Path) -> Confined:
    """`argv` run inside the sandbox, able to write only `writable` (the workspace, and for
    an agent program its scratch folder), under the sandbox's limits either way."""
    if not sandbox.active:
        return Confined(argv, sandbox.limits, writable)
    wrapped = [
        _bwrap(),
        # No capability, in a user namespace of its own that cannot make another: as root
        # too, no mount can be undone, no file's owner matters, nothing reaches the host.
        "--unshare-user",
        "--disable-userns",
        "--cap-drop", "ALL",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--seccomp", str(SECCOMP_FD),
        *view.mounts(sandbox, writable),
        # Caches that tools write under $HOME land in the private /tmp instead.
        "--setenv", "XDG_CACHE_HOME", "/tmp/.cache",
        "--setenv", "TMPDIR", "/tmp",  # the outside TMPDIR may not exist in here
        # No --new-session: the callers start bwrap in a session of its own already (so
        # nothing inside has a controlling terminal to type into), and keeping the
        # namespace's first process in bwrap's process group lets one killpg take down the
        # whole sandbox, whatever happens to bwrap itself.
        "--chdir", str(cwd.resolve()),
        "--",
        *argv,
    ]  # fmt: skip
    return Confined(wrapped, sandbox.limits, writable, sandboxed=True)


def confine_unit(unit: Unit, argv: Sequence[str], *extra: Path) -> Confined:
    """`argv` run in the unit's sandbox, writing only its workspace (and `extra`)."""
    return confine(unit.sandbox, argv, [unit.worktree, *extra], unit.worktree)


NONE = Sandbox("none")


def choose(choice: str) -> tuple[Sandbox, str]:
    """The sandbox for `choice` (auto, bwrap or none), and a warning when auto finds none."""
    if choice not in CHOICES:
        raise SandboxError(f"unknown sandbox {choice!r} (fix: one of {', '.join(CHOICES)})")
    if choice == "none":
        return NONE, ""
    problem = bwrap_problem()
    if not problem:
        return Sandbox("bwrap"), ""
    if choice == "bwrap":
        raise SandboxError(f"the bwrap sandbox cannot run: {problem} (fix: {_INSTALL})")
    return NONE, (
        f"agents run WITHOUT a sandbox: {problem}; an agent can change anything your user "
        f"can, and taskhand can only notice changes to your repository afterwards "
        f"(fix: {_INSTALL}, or pass --sandbox none to accept this)"
    )


_INSTALL = "install bubblewrap, e.g. apt-get install bubblewrap"


def _bwrap() -> str:
    return shutil.which("bwrap") or "bwrap"


@functools.lru_cache(maxsize=1)
def bwrap_problem() -> str:
    """Why bubblewrap cannot confine a process here, or "" when it can (asked once)."""
    if shutil.which("bwrap") is None:
        return "bwrap is not installed"
    probe = Sandbox("bwrap")
    argv = confine(probe, ["true"], [], Path("/"))
    deadline = time.monotonic() + PROBE_SECONDS
    try:
        done = run_group(
            argv, Path("/"), None, deadline, stdout=Capture(0, 0), stderr=Capture(STDERR, 0)
        )
    except OSError as exc:
        return f"bwrap did not start ({exc})"
    if done.timed_out:
        return f"bwrap did not start (it did not end within {PROBE_SECONDS:g} s)"
    if done.code != 0:
        reason = done.stderr.strip().splitlines()
        return f"bwrap failed ({reason[-1] if reason else f'exit {done.code}'})"
    return ""
