"""The OS sandbox every agent-controlled process runs in: agent units, their shell commands,
acceptance checks and reviewers.

With bubblewrap (Linux) the process sees the whole machine read-only, writes only its own
workspace (and the agent program's own settings folders), has a private /tmp and its own
process namespace, so everything it started dies with it. Where no sandbox is available the
run goes on with `none` after a warning: the backstop then notices what it cannot prevent.
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from taskhand.config import SANDBOXES
from taskhand.errors import UserError
from taskhand.host.process import STDERR_LIMIT as STDERR
from taskhand.host.process import Capture, run_group
from taskhand.unit import Sandbox, Unit

CHOICES = SANDBOXES
PROBE_SECONDS = 30.0  # a bwrap that has not run `true` by then does not work here

# Sockets reachable through a read-only bind are still doors out: a D-Bus session bus, a
# container daemon or an ssh agent can run commands as the user. Their folders are hidden.
_MASKED = ("/run/user", "/var/run/docker.sock", "/run/docker.sock", "/run/podman")


# Credentials in the home folder that no agent needs and a read-only view would still let it
# read (and send anywhere, since the network stays open for the model's API): hidden.
_HOME_SECRETS = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".config/gh",
    ".config/gcloud",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".config/git/credentials",
)


class SandboxError(UserError):
    """The sandbox asked for cannot be had; the message is one line with the fix."""


def confine(
    sandbox: Sandbox, argv: Sequence[str], writable: Sequence[Path], cwd: Path
) -> list[str]:
    """`argv` run inside the sandbox, able to write only `writable` (the workspace, and for
    an agent program the folders it keeps its own settings in)."""
    if not sandbox.active:
        return list(argv)
    wrapped = [
        _bwrap(),
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--tmpfs", "/dev/shm",
        "--proc", "/proc",
        "--tmpfs", "/tmp",
        "--tmpfs", "/var/tmp",
    ]  # fmt: skip
    for shown in _under_tmp([*sandbox.readable, *_programs()]):
        wrapped += ["--ro-bind", shown, shown]
    home = Path(os.environ.get("HOME") or Path.home())
    for masked in [*_MASKED, *(str(home / name) for name in _HOME_SECRETS)]:
        if os.path.isdir(masked):
            wrapped += ["--tmpfs", masked]
        elif os.path.exists(masked):
            wrapped += ["--ro-bind", "/dev/null", masked]
    for path in writable:
        if path.exists():
            real = str(path.resolve())
            wrapped += ["--bind", real, real]
    wrapped += [
        # Caches that tools write under $HOME land in the private /tmp instead.
        "--setenv", "XDG_CACHE_HOME", "/tmp/.cache",
        "--setenv", "TMPDIR", "/tmp",  # the outside TMPDIR may not exist in here
        "--unshare-pid",
        "--unshare-ipc",
        "--die-with-parent",
        # No --new-session: the callers start bwrap in a session of its own already (so
        # nothing inside has a controlling terminal to type into), and keeping the
        # namespace's first process in bwrap's process group lets one killpg take down the
        # whole sandbox, whatever happens to bwrap itself.
        "--chdir", str(cwd.resolve()),
        "--",
        *argv,
    ]  # fmt: skip
    return wrapped


def confine_unit(unit: Unit, argv: Sequence[str], *extra: Path) -> list[str]:
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


def _programs() -> list[Path]:
    """Where programs and this Python live: visible inside even when under /tmp."""
    found = [Path(p) for p in os.environ.get("PATH", "").split(os.pathsep) if p]
    return [*found, Path(sys.prefix), Path(sys.base_prefix)]


def _under_tmp(paths: Sequence[Path]) -> list[str]:
    """The top folders under /tmp and /var/tmp that hold any of `paths`, to show read-only
    over the private /tmp (a whole top folder: a program finds its files beside it)."""
    shown: set[str] = set()
    for path in paths:
        try:
            real = path.resolve()
        except OSError:
            continue
        for tmp in ("/tmp", "/var/tmp"):
            parts = real.parts
            root = Path(tmp).parts
            if parts[: len(root)] == root and len(parts) > len(root):
                top = Path(*parts[: len(root) + 1])
                if top.exists():
                    shown.add(str(top))
    return sorted(shown)


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
