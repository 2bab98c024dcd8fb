"""How a confined program starts and what holds it while it runs: a control group (or rlimits
where none can be made) for its processes and memory, its seccomp filter handed to bubblewrap,
and a guard on the disk it writes.

host.sandbox makes a `Confined` argv; host.process starts it through `launch`, which puts a
small shell in front: it joins the group and opens the filter, then becomes the program, so
nothing the program starts escapes the count, from its first instruction.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from taskhand.host import cgroups, reaper, seccomp
from taskhand.text import size
from taskhand.unit import Limits

SECCOMP_FD = 3  # where bubblewrap finds the filter (`--seccomp 3`)
CHECK_SECONDS = 1.0  # how often the disk guard looks
COUNT_SECONDS = 0.2  # how often processes are counted where no control group counts them
FLOOR = 1 << 30  # free space a unit may not take a file system below

# $1: the filter's source ("" for none); then cgroup.procs files, then --, then the program.
_SCRIPT = (
    's=$1; shift; while [ "$1" != -- ]; do echo $$ > "$1" || exit 126; shift; done; shift; '
    'if [ -n "$s" ]; then exec "$@" 3<"$s"; fi; exec "$@"'
)


class Confined(list[str]):
    """An argv that carries how it must be started: the limits it runs under, the folders it
    may write (watched for disk), and whether it is bubblewrap's (which expects the seccomp
    filter on SECCOMP_FD)."""

    def __init__(
        self,
        argv: Sequence[str],
        limits: Limits,
        watched: Sequence[Path] = (),
        sandboxed: bool = False,
    ) -> None:
        super().__init__(argv)
        self.limits = limits
        self.watched = tuple(watched)
        self.sandboxed = sandboxed


class Launch:
    """One confined program from its start to its end: the argv and environment that start
    it, the disk guard while it runs, and, once it ended, which limit (if any) it reached.
    Its environment carries a mark of its own, so the watcher (host.reaper) finds whatever
    it left, however taskhand ends."""

    def __init__(self, confined: Confined) -> None:
        self.limits = confined.limits
        self.sandboxed = confined.sandboxed
        self.mark = reaper.watcher().next_mark()
        self.group = cgroups.make(self.limits)
        self.disk = DiskGuard(confined.watched, self.limits.disk)
        source = (seccomp.source() or "") if confined.sandboxed else ""
        if confined.sandboxed and not source:
            # No filter for this machine: bubblewrap must not wait for one.
            confined = _without_filter(confined)
        joins = [str(p) for p in self.group.procs] if self.group else []
        self.argv = ["/bin/sh", "-c", _SCRIPT, "taskhand-launch", source, *joins, "--"]
        self.argv += _with_rlimits(confined, self.limits, grouped=self.group is not None)
        self.tasks = TaskCount(self.limits.processes if self.group is None else 0, self.mark)
        self.pid: int | None = None
        self.stopped = ""  # why the guard stopped it
        self.ended = False

    def env(self, env: Mapping[str, str] | None) -> dict[str, str]:
        """`env` (default: ours) with the program's mark."""
        return {**(os.environ if env is None else env), reaper.VARIABLE: self.mark}

    def started(self, pid: int) -> None:
        """It runs as `pid`, leading its own process group: the watcher is told."""
        self.pid = pid
        reaper.watcher().watch(pid)

    @property
    def tick(self) -> float:
        """How often `check` wants to be asked."""
        return COUNT_SECONDS if self.tasks.limit else CHECK_SECONDS

    def check(self) -> str:
        """Why the program must be stopped now, or "" while it keeps within its limits."""
        if not self.stopped and self.pid is not None:
            self.stopped = self.disk.check() or self.tasks.check(self.pid)
        return self.stopped

    def finish(self, code: int | None) -> str:
        """After its main process ended: what is left of it killed (its group; without the
        sandbox, whatever carries its mark), and which limit it reached ("" for none)."""
        if self.ended:
            return ""
        self.ended = True
        reason = self.stopped
        if self.group is not None:
            reason = reason or self.group.reason(self.limits)
            self.group.remove()
        if not self.sandboxed:  # a daemon in a session of its own ends too
            reaper.kill_marked(self.mark, exact=True)
        if self.pid is not None:
            reaper.watcher().forget(self.pid)
        # Killed by SIGXFSZ, or a shell saying its last command was (128 + the signal).
        if not reason and code in (-signal.SIGXFSZ, 128 + signal.SIGXFSZ):
            reason = f"a file reached the size limit ({size(self.limits.disk)})"
        return reason


@contextlib.contextmanager
def launch(argv: Sequence[str]) -> Iterator[Launch | None]:
    """The launch of `argv` when it is `Confined` (None for a program taskhand trusts); what
    is left of it is cleaned up on the way out, however the block ends."""
    if not isinstance(argv, Confined):
        yield None
        return
    started = Launch(argv)
    try:
        yield started
    finally:
        started.finish(None)


def _without_filter(confined: Confined) -> Confined:
    argv = list(confined)
    at = argv.index("--seccomp")
    del argv[at : at + 2]
    return Confined(argv, confined.limits, confined.watched, sandboxed=True)


def _with_rlimits(confined: Confined, limits: Limits, grouped: bool) -> list[str]:
    """The argv with prlimit before it: no core files and a cap on each file's size always;
    where no group counts them, processes and each process's memory too. The process cap is
    per user to the kernel, so it is set inside the sandbox's own user namespace (counting
    its processes alone); without the sandbox, above what the user runs already."""
    program = shutil.which("prlimit")
    argv = list(confined)
    if program is None:
        return argv
    outer = [program, "--core=0", *([f"--fsize={limits.disk}"] if limits.disk else []), "--"]
    inner = []
    if not grouped and limits.memory:
        inner.append(f"--data={limits.memory}")
    if not grouped and limits.processes and os.geteuid() != 0:  # root is exempt anyway
        count = limits.processes + (0 if confined.sandboxed else _user_tasks())
        inner.append(f"--nproc={count}")
    if inner and confined.sandboxed:
        at = argv.index("--") + 1  # where bubblewrap's options end and the program starts
        argv[at:at] = [program, *inner, "--"]
    elif inner:
        outer[-1:-1] = inner
    return [*outer, *argv]


def _user_tasks() -> int:
    """How many tasks (threads included) this user runs now."""
    uid, count = os.getuid(), 0
    with contextlib.suppress(OSError), os.scandir("/proc") as entries:
        for entry in entries:
            with contextlib.suppress(OSError):
                if entry.name.isdigit() and entry.stat().st_uid == uid:
                    count += len(os.listdir(f"/proc/{entry.name}/task"))
    return count


class TaskCount:
    """Where no control group counts a program's processes, their rlimit holds them; this
    tells it happened (the kernel keeps no count to read): a program whose processes near its
    limit is stopped, with the limit named. They are counted down its tree (in the sandbox, an
    orphan stays in it, under the namespace's first process) and by its mark (outside, a fork
    bomb's processes are orphans at once), often: a bomb held at its limit comes in bursts."""

    def __init__(self, limit: int, mark: str) -> None:
        self.limit, self.mark = limit, mark
        self.next = time.monotonic() + COUNT_SECONDS

    def check(self, pid: int) -> str:
        if not self.limit or time.monotonic() < self.next:
            return ""
        self.next = time.monotonic() + COUNT_SECONDS
        marked = sum(_tasks(p) for p in reaper.marked(self.mark, exact=True))
        tasks = max(marked, _tree_tasks(pid, self.limit))
        return "" if tasks * 5 < self.limit * 4 else f"it reached its process limit ({self.limit})"


def _tasks(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return 0


def _tree_tasks(pid: int, enough: int) -> int:
    """The tasks of `pid` and its descendants (counting stops at `enough`)."""
    count, pending = 0, [pid]
    while pending and count < enough:
        current = pending.pop()
        try:
            tasks = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        count += len(tasks)
        for task in tasks:
            with contextlib.suppress(OSError, ValueError):
                children = Path(f"/proc/{current}/task/{task}/children").read_text()
                pending += [int(child) for child in children.split()]
    return count


class DiskGuard:
    """Stops a program that writes more than `limit` bytes into its folders, or takes their
    file system below FLOOR free. Free space is asked once a second (cheap); only when it fell
    by the limit are the folders walked, counting the files written since the start."""

    def __init__(self, folders: Sequence[Path], limit: int) -> None:
        self.folders = [f for f in folders if f.is_dir()]
        self.limit = limit
        self.started = time.time()
        self.next = time.monotonic() + CHECK_SECONDS
        self.free = {f: _free(f) for f in self.folders}

    def check(self) -> str:
        if not self.folders or time.monotonic() < self.next:
            return ""
        self.next = time.monotonic() + CHECK_SECONDS
        fell = any(
            (start - _free(f) > self.limit > 0) or _free(f) < min(FLOOR, start)
            for f, start in self.free.items()
        )
        if not fell:
            return ""
        written = sum(_written_since(f, self.started) for f in self.folders)
        if self.limit and written > self.limit:
            return f"it wrote more than its disk limit ({size(self.limit)})"
        if written and any(_free(f) < FLOOR for f in self.folders):
            return f"the disk is nearly full (under {size(FLOOR)} free) while it wrote"
        return ""


def _free(folder: Path) -> int:
    try:
        info = os.statvfs(folder)
    except OSError:
        return 1 << 62
    return info.f_bavail * info.f_frsize


def _written_since(folder: Path, since: float) -> int:
    """Bytes of the files under `folder` changed since `since` (links never followed)."""
    total = 0
    for root, _, names in os.walk(folder):
        for name in names:
            with contextlib.suppress(OSError):
                info = os.lstat(os.path.join(root, name))
                if info.st_mtime >= since - 1:
                    total += info.st_blocks * 512
    return total
