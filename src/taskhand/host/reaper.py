"""Nothing taskhand started outlives it, however it ends (SIGKILL included).

Every confined program carries `TASKHAND_PROCESS=<mark>.<n>` in its environment, the mark
being this process's own. A watcher started beside taskhand (`python -I -S reaper.py MARK`)
holds the read end of a pipe that only taskhand writes; when taskhand is gone the pipe ends,
and the watcher kills every process group taskhand told it of and every process whose
environment carries the mark, removes taskhand's control groups, and exits. Marks are kept
in a run's state folder, so a resumed run ends whatever an earlier process left (`kill_marked`).

Under bubblewrap this is belt and braces (a sandbox's processes die with its first one); with
`--sandbox none` it is what finds a program's leftovers: a process that also clears its
environment and leaves its session is out of reach there.

Run as a script, this file imports nothing of taskhand.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

VARIABLE = "TASKHAND_PROCESS"
SWEEP_SECONDS = 3.0  # how long the watcher keeps looking for marked processes
# Run "$@" in the background with our stdin (a shell gives a background job /dev/null).
_BEHIND = 'exec 3<&0; "$@" <&3 3<&- >/dev/null 2>&1 &'


def marked(mark: str, exact: bool = False) -> list[int]:
    """The processes whose environment carries `mark` (or a mark under it, `mark.n`)."""
    key = f"{VARIABLE}={mark}".encode()
    me = os.getpid()
    found = []
    with contextlib.suppress(OSError), os.scandir("/proc") as entries:
        for entry in entries:
            if not entry.name.isdigit() or int(entry.name) in (1, me):
                continue
            try:
                with open(f"/proc/{entry.name}/environ", "rb") as file:
                    environ = file.read()
            except OSError:
                continue  # gone, or not ours to read
            for item in environ.split(b"\0"):
                if item == key or (not exact and item.startswith(key + b".")):
                    found.append(int(entry.name))
                    break
    return found


def kill_marked(mark: str, exact: bool = False, seconds: float = SWEEP_SECONDS) -> int:
    """SIGKILL every process carrying `mark` until none is left; how many were killed."""
    killed: set[int] = set()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = marked(mark, exact)
        if not found:
            break
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            killed.add(pid)
        time.sleep(0.01)
    return len(killed)


def settle(record: Path) -> int:
    """End whatever the earlier processes of a run left (their marks are in `record`, a file
    of the run's state), then record this process's mark there; how many were ended."""
    mine = watcher().mark
    try:
        marks = record.read_text(encoding="ascii", errors="replace").split()
    except OSError:
        marks = []
    ended = sum(kill_marked(mark) for mark in marks if mark != mine and _well_formed(mark))
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(f"{mine}\n", encoding="ascii")
    return ended


def _well_formed(mark: str) -> bool:
    pid, _, nonce = mark.partition(".")
    return pid.isdigit() and len(nonce) == 8 and all(c in "0123456789abcdef" for c in nonce)


class Watcher:
    """This process's watcher, started on first need; `mark` names what it will kill."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.mark = f"{self.pid}.{secrets.token_hex(4)}"
        self.lock = threading.Lock()
        self.pipe: int | None = None
        self.numbers = 0

    def next_mark(self) -> str:
        """A mark of its own for one program: killed with the rest, or alone (`exact`)."""
        with self.lock:
            self.numbers += 1
            return f"{self.mark}.{self.numbers}"

    def watch(self, pgid: int) -> None:
        self._say(f"+{pgid}")

    def forget(self, pgid: int) -> None:
        self._say(f"-{pgid}")

    def _say(self, line: str) -> None:
        with self.lock:
            if self.pipe is None:
                self._start()
            if self.pipe is None:
                return
            try:
                os.write(self.pipe, f"{line}\n".encode())
            except OSError:  # the watcher died: the next line starts another
                os.close(self.pipe)
                self.pipe = None

    def _start(self) -> None:
        read, write = os.pipe()  # not inherited by any program taskhand starts
        from taskhand.host import cgroups  # the script side never needs it

        found = cgroups.hierarchy()
        parents = [str(p) for p in found.parents] if found else []
        script = [sys.executable, "-I", "-S", __file__, self.mark, str(self.pid), *parents]
        try:
            # Started through a shell that leaves it behind at once: it is no child of ours
            # to reap, and it lives on when we are killed (which is its purpose).
            subprocess.run(
                ["/bin/sh", "-c", _BEHIND, "taskhand-reaper", *script],
                stdin=read,
                start_new_session=True,  # a Ctrl-C to taskhand's group must not reach it
                env={"PATH": os.environ.get("PATH", "")},
                check=True,
            )
        except (OSError, subprocess.CalledProcessError):
            os.close(write)
            write = -1
        finally:
            os.close(read)
        self.pipe = write if write >= 0 else None


_watcher: Watcher | None = None
_started = threading.Lock()


def watcher() -> Watcher:
    """This process's watcher (a forked child gets its own)."""
    global _watcher
    with _started:
        if _watcher is None or _watcher.pid != os.getpid():
            _watcher = Watcher()
        return _watcher


def _watch(mark: str, owner: int, parents: list[str]) -> None:
    """The watcher's life: read taskhand's groups until the pipe ends, then clean up."""
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    groups: set[int] = set()
    buffered = b""
    while chunk := os.read(0, 4096):
        buffered += chunk
        *lines, buffered = buffered.split(b"\n")
        for line in lines:
            if line[:1] in (b"+", b"-") and line[1:].isdigit():
                (groups.add if line[:1] == b"+" else groups.discard)(int(line[1:]))
    # Never the machine's first group, nor the watcher's own.
    for pgid in groups - {0, 1, os.getpgrp()}:
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)
    kill_marked(mark)
    for parent in parents:  # the control groups taskhand made, now empty
        with contextlib.suppress(OSError), os.scandir(parent) as entries:
            for entry in entries:
                if entry.name.startswith(f"taskhand-{owner}-"):
                    _remove_group(Path(entry.path))


def _remove_group(folder: Path) -> None:
    with contextlib.suppress(OSError):
        for pid in (folder / "cgroup.procs").read_text().split():
            with contextlib.suppress(OSError):
                os.kill(int(pid), signal.SIGKILL)
    for _ in range(100):
        try:
            folder.rmdir()
            return
        except OSError:
            time.sleep(0.01)


if __name__ == "__main__":
    _watch(sys.argv[1], int(sys.argv[2]), sys.argv[3:])
