"""A control group per confined program, where taskhand may make them (root, or a delegated
cgroup v2 subtree): the kernel counts the program's processes and memory whatever they do
(a fork bomb, a process in a session of its own, a file in a memory-backed /tmp), and the
whole group is killed at once. Elsewhere host.limits falls back to rlimits.

Groups are made beside the one taskhand runs in, named `taskhand-<pid>-<n>`, so a later
process can tell which are left from a process that is gone (`sweep`).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from taskhand.text import size
from taskhand.unit import Limits

ROOT = Path("/sys/fs/cgroup")
PREFIX = "taskhand-"
_numbers = itertools.count(1)


@dataclass(frozen=True)
class Hierarchy:
    """Where groups are made: cgroup v2's one folder, or v1's pids and memory folders."""

    version: int
    pids: Path
    memory: Path

    @property
    def parents(self) -> tuple[Path, ...]:
        return (self.pids,) if self.pids == self.memory else (self.pids, self.memory)


@dataclass
class Group:
    """One program's group: its launcher writes its own pid into `procs` before it starts
    the program, so everything the program starts is counted from its first instruction."""

    hierarchy: Hierarchy
    folders: tuple[Path, ...]

    @property
    def procs(self) -> list[Path]:
        return [folder / "cgroup.procs" for folder in self.folders]

    def reason(self, limits: Limits) -> str:
        """Which limit the program reached, or "" (read before `remove`)."""
        pids = self.folders[0]
        memory = self.folders[-1]
        if self.hierarchy.version == 2:
            ooms = _field(memory / "memory.events", "oom_kill")
        else:
            ooms = _field(memory / "memory.oom_control", "oom_kill")
        if ooms:
            return f"it reached its memory limit ({size(limits.memory)}) and was killed"
        if _field(pids / "pids.events", "max"):
            return f"it reached its process limit ({limits.processes}): a fork was refused"
        return ""

    def remove(self) -> None:
        """Kill whatever is left in the group, then remove it."""
        for folder in self.folders:
            _empty(folder)
            with contextlib.suppress(OSError):
                folder.rmdir()


def make(limits: Limits) -> Group | None:
    """A new group holding `limits`, or None where taskhand cannot make one here."""
    found = hierarchy()
    if found is None:
        return None
    name = f"{PREFIX}{os.getpid()}-{next(_numbers)}"
    folders: list[Path] = []
    try:
        for parent in found.parents:
            folder = parent / name
            folder.mkdir()
            folders.append(folder)
        group = Group(found, tuple(folders))
        _limit(group, limits)
    except OSError:
        Group(found, tuple(folders)).remove()
        return None
    return group


def _limit(group: Group, limits: Limits) -> None:
    pids, memory = group.folders[0], group.folders[-1]
    if limits.processes:
        (pids / "pids.max").write_text(str(limits.processes))
    if not limits.memory:
        return
    if group.hierarchy.version == 2:
        (memory / "memory.max").write_text(str(limits.memory))
        with contextlib.suppress(OSError):  # no swap to hide in either
            (memory / "memory.swap.max").write_text("0")
    else:
        (memory / "memory.limit_in_bytes").write_text(str(limits.memory))
        with contextlib.suppress(OSError):
            (memory / "memory.memsw.limit_in_bytes").write_text(str(limits.memory))


@functools.lru_cache(maxsize=1)
def hierarchy() -> Hierarchy | None:
    """Where this process may make groups with the pids and memory controllers, if anywhere."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    paths = {}
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            paths[controller] = path.lstrip("/")
    v1 = {c: ROOT / c / paths[c] for c in ("pids", "memory") if c in paths}
    if len(v1) == 2 and all(_writable(folder) for folder in v1.values()):
        return Hierarchy(1, v1["pids"], v1["memory"])
    if "" in paths and (ROOT / "cgroup.controllers").exists():
        return _v2(ROOT / paths[""])
    return None


def _v2(own: Path) -> Hierarchy | None:
    """cgroup v2: the controllers must be on for the children of the folder taskhand runs in,
    which the kernel allows only for a folder without processes of its own; taskhand moves
    itself into a child first when it is alone there."""
    try:
        offered = (own / "cgroup.controllers").read_text().split()
    except OSError:
        return None
    if not {"pids", "memory"} <= set(offered) or not _writable(own):
        return None
    control = own / "cgroup.subtree_control"
    try:
        control.write_text("+pids +memory")
    except OSError:
        try:
            home = own / f"{PREFIX}{os.getpid()}-self"
            home.mkdir(exist_ok=True)
            (home / "cgroup.procs").write_text(str(os.getpid()))
            control.write_text("+pids +memory")
        except OSError:
            return None
    return Hierarchy(2, own, own)


def _writable(folder: Path) -> bool:
    return os.access(folder, os.W_OK) and os.access(folder / "cgroup.procs", os.W_OK)


def _field(path: Path, name: str) -> int:
    try:
        for line in path.read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == name:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


def _empty(folder: Path, seconds: float = 2.0) -> None:
    """Kill every process in `folder` until none is left (or `seconds` pass)."""
    kill = folder / "cgroup.kill"
    with contextlib.suppress(OSError):
        if kill.exists():
            kill.write_text("1")
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            pids = [int(p) for p in (folder / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)


def sweep(parents: tuple[Path, ...] | None = None) -> None:
    """Remove the groups that taskhand processes now gone left behind (killed with them)."""
    found = hierarchy()
    for parent in parents if parents is not None else (found.parents if found else ()):
        with contextlib.suppress(OSError), os.scandir(parent) as entries:
            for entry in entries:
                owner = entry.name.removeprefix(PREFIX).split("-")[0]
                if entry.name.startswith(PREFIX) and owner.isdigit() and not _alive(int(owner)):
                    _empty(Path(entry.path))
                    with contextlib.suppress(OSError):
                        os.rmdir(entry.path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
