"""When what the board shows may have changed: SQLite's own change counter of the state database
(`PRAGMA data_version`, which moves whenever another connection commits), looked at by the event
stream every few milliseconds instead of querying; and the plan's answer, read again only when
that counter or the plan's files moved.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

LOOK_SECONDS = 0.025  # how often a stream looks at the counter: a few microseconds a look
# The plan's answer is read again at least this often, for what neither the counter nor the
# files show (a program the plan's checks name installed or removed, a run killed outright).
KEEP_SECONDS = 5.0


class Version:
    """The state database's change counter, on a connection of its own that never writes."""

    def __init__(self, database: Path) -> None:
        self.database = database
        self._conn: sqlite3.Connection | None = None

    def now(self) -> int | None:
        """The counter (0: no database yet), or None when it cannot be read: look anyway."""
        try:
            if self._conn is None:
                if not self.database.exists():
                    return 0
                # mode=rw: never create the database; autocommit: no transaction is kept open;
                # a short timeout: a stream looks from the server's event loop, which must not
                # wait (a busy look answers None, and the stream reads anyway).
                uri = f"{self.database.resolve().as_uri()}?mode=rw"
                self._conn = sqlite3.connect(
                    uri, uri=True, timeout=0.1, isolation_level=None, check_same_thread=False
                )
            return int(self._conn.execute("PRAGMA data_version").fetchone()[0])
        except sqlite3.Error:
            self.close()  # opened again at the next look
            return None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


class Answer:
    """A read of the plan (GET /api/plan's body), given again while the state database and the
    plan's files stand as they did when it was read (for KEEP_SECONDS at most).

    One read at a time, and each call gets a read that began after it came: the calls that come
    during a read share the next one. However many pages ask after each burst of a run's events,
    the server reads the plan at most twice for them, never once per page.
    """

    def __init__(self, plan: Path, database: Path, read: Callable[[], bytes]) -> None:
        self.folder = plan if plan.is_dir() else plan.parent
        self.read = read
        self._version = Version(database)
        self._turn = threading.Condition()
        self._begun = self._ended = 0  # reads begun and ended (a look that found no change too)
        self._key: tuple[object, ...] | None = None  # what the last read saw
        self._seen_at = 0.0  # when it saw it (time.monotonic)
        self._body = b""
        self._failed: Exception | None = None  # why the last read failed, for all who share it

    def body(self) -> bytes:
        """The plan's answer now (a read that raises raises for every call sharing it, and
        keeps nothing); called from a thread."""
        with self._turn:
            wanted = self._begun + 1  # the first read to begin after this call came
            while self._ended < wanted and self._begun > self._ended:
                self._turn.wait()  # the read under way began before this call: too early
            if self._ended < wanted:
                self._begun += 1  # none under way: this call reads, for all who come meanwhile
                reading = True
            else:
                reading = False
        if reading:
            self._look()
        with self._turn:
            if self._failed is not None:
                raise self._failed
            return self._body

    def _look(self) -> None:
        key: tuple[object, ...] | None = None  # kept only with a body read from it
        body, failed, seen_at = self._body, None, self._seen_at
        try:
            now = time.monotonic()
            seen = self._state()  # taken before the read, so a change during it reads again
            if seen[0] is None or seen != self._key or now - seen_at >= KEEP_SECONDS:
                body, seen_at = self.read(), now
            key = seen
        except Exception as exc:  # the calls sharing this read raise it; nothing is kept
            failed = exc
        finally:  # whatever happened, those waiting on this read are let go
            with self._turn:
                self._key, self._body, self._failed = key, body, failed
                self._seen_at = seen_at
                self._ended += 1
                self._turn.notify_all()

    def _state(self) -> tuple[object, ...]:
        files = []
        for folder, _, names in os.walk(self.folder):
            for name in names:
                try:
                    found = os.stat(os.path.join(folder, name))
                except FileNotFoundError:  # removed as we looked: the next look sees it
                    continue
                files.append((folder, name, found.st_mtime_ns, found.st_size))
        return (self._version.now(), sorted(files))
