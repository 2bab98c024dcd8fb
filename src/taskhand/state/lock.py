"""One live run per plan: an exclusive lock file that names its holder; and a short lock of
the plan's files around each edit of them (`files`).

Both are OS file locks, so a killed process releases them with itself.
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from taskhand.errors import UserError

PROBE_SECONDS = 0.2  # a run waits out a status probe holding the lock this long at most


class LockedError(UserError):
    """Another process holds the plan; the message names it."""


@contextmanager
def hold(path: Path, plan: Path, label: str) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if not _take(fd):
            holder = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip() or "another process"
            raise LockedError(
                f"plan {plan} is already being run by {holder} "
                "(fix: wait for that run to end, or stop it)"
            ) from None
        since = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} ({label}, since {since})".encode(), 0)
        yield
    finally:
        os.close(fd)


def _take(fd: int) -> bool:
    """Lock `fd` exclusively; False when a live process holds it. A probe (`holder`) holds it
    for an instant only, so that is waited out."""
    deadline = time.monotonic() + PROBE_SECONDS
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)


def holder(path: Path) -> str | None:
    """Who holds the lock at `path` (as its holder wrote it), or None when no live process
    does: a run whose process was killed, even with SIGKILL, holds nothing."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        try:
            # Shared, and released at once: a run starting meanwhile waits that instant out.
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return os.pread(fd, 4096, 0).decode("utf-8", "replace").strip() or "another process"
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


# The plan's files: a short lock around each read-modify-write of them, so that a person's
# move and a run's step never interleave their edits of one file. Held for an instant, so a
# writer waits for it; it is reentrant within a thread (a move's edits call the book's).
FILES_SECONDS = 5.0
_held = threading.local()


class FilesBusyError(UserError):
    """The plan's files stayed locked by another writer longer than a move waits."""


@contextmanager
def files(plan_root: Path, seconds: float = FILES_SECONDS) -> Iterator[None]:
    """Hold the lock of the plan's files (an flock on the plan folder itself, which no write
    replaces, so no file is added to the folder) for the block."""
    key = str(plan_root.resolve())
    depth: dict[str, int] = _held.__dict__.setdefault("depth", {})
    if depth.get(key):
        depth[key] += 1
        try:
            yield
        finally:
            depth[key] -= 1
        return
    fd = os.open(key, os.O_RDONLY | os.O_DIRECTORY)
    try:
        deadline = time.monotonic() + seconds
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise FilesBusyError(
                        f"the files of plan {plan_root} stayed locked by another writer for "
                        f"{seconds:g}s",
                        fix="try again in a moment; a run writes them only for an instant",
                    ) from None
                time.sleep(0.02)
        depth[key] = 1
        try:
            yield
        finally:
            depth.pop(key, None)
    finally:
        os.close(fd)  # closing releases the flock
