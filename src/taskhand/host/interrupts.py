"""Stopping a run on SIGINT, SIGTERM or SIGHUP: one exception in the main thread, and the
process groups of the agents and checks the run started, killed before taskhand exits.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
GRACE_SECONDS = 2.0  # between SIGTERM and SIGKILL of what the run started
# The harness's own bookkeeping is never cut short: a git command killed halfway can leave a
# worktree git can no longer read, a plan file and the store can disagree. A signal that
# arrives inside these modules is raised at the next checkpoint (an event, a child started
# or ended), or by a later signal once this long has passed (a git command that hangs).
BOOKKEEPING = (
    "taskhand.workspace.git",
    "taskhand.workspace.refs",
    "taskhand.workspace.worktrees",
    "taskhand.state.store",
    "taskhand.state.status",
    "taskhand.plan.formats.files",
)
DEFER_SECONDS = 10.0
_POLL_SECONDS = 0.05
_PROC = Path("/proc")


class Interrupted(BaseException):
    """A signal stopped the run. A BaseException, like KeyboardInterrupt, so that no
    `except Exception` meant for a backend's bugs turns it into a failed unit."""

    def __init__(self, signum: int, run_id: str | None = None, repo: Path | None = None) -> None:
        super().__init__(signum)
        self.signum = signum
        self.run_id = run_id
        self.repo = repo

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        return 128 + self.signum  # what a shell reports for a process the signal killed


_lock = threading.RLock()  # reentrant: the handler may run while the main thread holds it
_groups: set[int] = set()  # groups led by a child that an agent or a check runs in
_doomed: set[int] = set()  # groups sent SIGTERM when the signal arrived
_received: int | None = None
_raised = False  # Interrupted was raised for it: further signals wait for the cleanup
_deferred_since: float | None = None


def track(pgid: int) -> None:
    """A child leading its own process group started: its group is killed if the run stops.
    Raises Interrupted when the run is stopping already: nothing new may run then."""
    with _lock:
        _groups.add(pgid)
    _raise_received()


def release(pgid: int) -> None:
    """Its owner has ended the group. A signal that arrived meanwhile and was swallowed on the
    way (an asyncio task keeps the exception it was interrupted with) is raised here."""
    with _lock:
        _groups.discard(pgid)
    _raise_received()


def checkpoint() -> None:
    """A safe point to stop at: raise the signal that arrived during bookkeeping, if one did."""
    if not _raised:
        _raise_received()


def heed() -> None:
    """In a job's thread that waits on others (the merge queue): raise Interrupted once the run
    is stopping, whoever raised it first; the main thread waits for its jobs to end."""
    if _received is not None:
        raise Interrupted(_received)


def received() -> int | None:
    """The signal that is stopping the run, if one arrived."""
    return _received


@contextmanager
def handled() -> Iterator[None]:
    """While the block runs, SIGINT, SIGTERM and SIGHUP raise Interrupted in the main thread.
    A signal the parent ignores stays ignored (nohup ignores SIGHUP; a shell script's
    background job, SIGINT). On the way out after a signal, every child group is killed."""
    global _received, _raised, _deferred_since
    _received, _raised, _deferred_since = None, False, None
    previous = {}
    for signum in SIGNALS:
        if signal.getsignal(signum) != signal.SIG_IGN:
            previous[signum] = signal.signal(signum, _on_signal)
    try:
        yield
        if _received is not None and not _raised:
            # It came during the block's last bookkeeping, and no checkpoint followed: it is
            # still the person's stop, not lost (a board beside the run waits on it).
            raise Interrupted(_received)
    except Interrupted:
        raise
    except BaseException:
        if _received is None:
            raise
        # What ended the block after the signal: a git command the same Ctrl-C killed.
        raise Interrupted(_received) from None
    finally:
        try:
            if _received is not None:
                stop_children()
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
            _received, _raised, _deferred_since = None, False, None
            _doomed.clear()


def _on_signal(signum: int, frame: FrameType | None) -> None:
    global _received, _deferred_since
    if _received is None:
        _received = signum
        # At once, not once the exception has unwound: no agent may go on writing meanwhile.
        groups = _candidates()
        _doomed.update(groups)
        _send(groups, signal.SIGTERM)
    if _raised:
        return  # stopping already: a second Ctrl-C must not cut the cleanup short
    now = time.monotonic()
    _deferred_since = _deferred_since or now
    if _in_bookkeeping(frame) and now - _deferred_since < DEFER_SECONDS:
        return
    _raise_received()


def _raise_received() -> None:
    global _raised
    if _received is not None:
        _raised = True
        raise Interrupted(_received)


def _in_bookkeeping(frame: FrameType | None) -> bool:
    while frame is not None:
        if frame.f_globals.get("__name__") in BOOKKEEPING:
            return True
        frame = frame.f_back
    return False


def stop_children() -> None:
    """SIGTERM every group an agent or a check runs in, SIGKILL what is left after a grace."""
    groups = _candidates() | _doomed
    _send(groups, signal.SIGTERM)
    deadline = time.monotonic() + GRACE_SECONDS
    while (alive := _alive(groups)) and time.monotonic() < deadline:
        time.sleep(_POLL_SECONDS)
    _send(alive, signal.SIGKILL)
    with _lock:
        _groups.clear()


def _candidates() -> set[int]:
    """The tracked groups, and the group of every child of ours that leads one: a child caught
    between its start and its tracking, or started where no handle is kept."""
    with _lock:
        groups = set(_groups)
    me = os.getpid()
    groups.update(pid for pid, parent, group, _ in _processes() if parent == me and group == pid)
    return groups


def group_alive(pgid: int) -> bool:
    """Whether the group `pgid` still holds a process that is not a zombie."""
    return bool(_alive({pgid}))


def _alive(groups: set[int]) -> set[int]:
    """The groups that still hold a process that is not a zombie."""
    if not groups:
        return set()
    if _PROC.is_dir():
        return {g for _, _, g, state in _processes() if g in groups and state not in "ZX"}
    alive = set()
    for group in groups:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, 0)
            alive.add(group)
    return alive


def _send(groups: set[int], signum: signal.Signals) -> None:
    for group in groups:
        signal_group(group, signum)


def signal_group(pgid: int, signum: signal.Signals) -> None:
    """Send `signum` to every process of the group `pgid`, if any is left."""
    # A group already gone is the goal reached; EPERM (macOS) means only zombies are left.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def _processes() -> list[tuple[int, int, int, str]]:
    """(pid, parent, group, state) of every process, from /proc; none where there is no /proc."""
    found = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(_PROC):
            if not entry.name.isdigit():
                continue
            try:
                stat = Path(entry.path, "stat").read_bytes()
            except OSError:
                continue  # it ended while we looked
            # The name in parentheses may hold spaces and parentheses: fields follow the last.
            fields = stat[stat.rfind(b")") + 2 :].split()
            found.append((int(entry.name), int(fields[1]), int(fields[2]), fields[0].decode()))
    return found
