"""One live run per plan: an exclusive lock file that names its holder.

The lock is an OS file lock, so a killed runner releases it with its process.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path


class LockedError(Exception):
    """Another process holds the plan; the message names it."""


@contextmanager
def hold(path: Path, plan: Path, label: str) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
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
