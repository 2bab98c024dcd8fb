"""The state database's plumbing: one SQLite connection with durable settings, short write
transactions, and rows read back as the typed records they hold.

Every write commits its own short transaction before returning, so the runner only acts on
changes that already survive a crash; in WAL mode readers never block the writer.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import fields
from datetime import UTC, datetime
from enum import Enum
from functools import cache
from pathlib import Path
from types import UnionType
from typing import TYPE_CHECKING, Any, TypeVar, get_args, get_origin, get_type_hints

from taskhand.state.events import Event
from taskhand.state.life import Question, Remark, TaskLife
from taskhand.state.records import (
    Attempt,
    DeliveryRow,
    DispositionRow,
    Gate,
    Run,
    TaskState,
    UnitRow,
    WorkerVerdict,
)

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

Row = TypeVar("Row", bound="DataclassInstance")

# Where each record is read from: a table, or a view that joins in what its table derives.
SOURCES = {
    Run: "runs",
    TaskState: "tasks",
    Attempt: "attempts",
    UnitRow: "unit_rows",
    Gate: "gates",
    Event: "events",
    TaskLife: "lifecycle",
    Question: "questions",
    Remark: "remarks",
    DeliveryRow: "deliveries",
    DispositionRow: "disposition_rows",
    WorkerVerdict: "verdict_rows",
}


def now() -> str:
    """The current UTC time as ISO 8601 with milliseconds: 2026-12-02T14:00:00.123Z."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def to_json(value: Any) -> str:
    """`value` as stored: values that JSON cannot hold are written as their str()."""
    return json.dumps(value, ensure_ascii=False, default=str)


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[None]:
    # IMMEDIATE takes the write lock up front: a deferred transaction that later needs to
    # write can fail with SQLITE_BUSY at once instead of waiting out busy_timeout.
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:  # a failed COMMIT leaves it open
            conn.execute("ROLLBACK")
        raise


def connect(path: Path) -> sqlite3.Connection:
    """A connection to the database at `path` (made if new), set up to survive crashes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # isolation_level=None: we issue BEGIN/COMMIT ourselves, so no statement is ever
    # left in an implicit transaction that nobody commits.
    conn = sqlite3.connect(path, timeout=5.0, isolation_level=None, check_same_thread=False)
    try:
        conn.execute("PRAGMA busy_timeout = 5000")
        conn.execute("PRAGMA journal_mode = WAL")
        # FULL, not NORMAL: in WAL mode NORMAL may lose the last commits on power loss,
        # and the runner acts on a change as soon as it is committed (what nothing acts on is
        # the exception: see Database._write).
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA foreign_keys = ON")
    except BaseException:
        conn.close()
        raise
    return conn


_WRITERS: dict[str, threading.RLock] = {}
_WRITERS_GUARD = threading.Lock()


def _writer_lock(path: Path) -> threading.RLock:
    """The lock this process's writers of the database at `path` take in turn. Connections of
    one process (several jobs, one each) queue on it instead of on SQLite's busy handler,
    whose backoff sleeps up to 100 ms at a time while the lock is long free."""
    key = os.path.realpath(path)
    with _WRITERS_GUARD:
        return _WRITERS.setdefault(key, threading.RLock())


class Database:
    """One connection. Safe to share between threads of one process."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self._conn = conn
        # One transaction at a time on this connection; other processes wait on busy_timeout.
        self._lock = threading.RLock()
        self._writer = _writer_lock(path)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @contextmanager
    def _write(self, synced: bool = True) -> Iterator[sqlite3.Connection]:
        """A write transaction. Unless `synced`, its commit does not wait for the disk: it
        survives the process being killed at any instant, and a power loss takes it only if it
        comes before the next synced commit (the WAL is flushed in order, earlier commits
        with it). For what nothing acts on: the events that only tell what happened."""
        with self._lock, self._writer:
            if not synced:
                self._conn.execute("PRAGMA synchronous = NORMAL")
            try:
                with transaction(self._conn):
                    yield self._conn
            finally:
                if not synced:
                    self._conn.execute("PRAGMA synchronous = FULL")

    def _select(self, shape: type[Row], where: str, params: tuple[Any, ...]) -> list[Row]:
        # Columns by name, never *: a database a newer version migrated may hold more of them.
        names, decoders = _columns(shape)
        sql = f"SELECT {', '.join(names)} FROM {SOURCES[shape]} WHERE {where}"
        with self._lock:
            rows = self._conn.execute(sql, params).fetchall()
        return [
            shape(**{n: decoders[n](v) for n, v in zip(names, row, strict=True)}) for row in rows
        ]

    def _rows(self, sql: str, params: tuple[Any, ...]) -> list[dict[str, Any]]:
        """The rows `sql` selects, each as a mapping of column to stored value."""
        with self._lock:
            cursor = self._conn.execute(sql, params)
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def _update(self, sql: str, params: tuple[Any, ...], missing: str) -> None:
        with self._write() as conn:
            if conn.execute(sql, params).rowcount == 0:
                raise KeyError(missing)


@cache
def _columns(shape: type[DataclassInstance]) -> tuple[list[str], dict[str, Callable[[Any], Any]]]:
    """A record's columns, and how each stored value becomes its field: a word its enum, JSON
    its object, 0 or 1 a bool; NULL stays None."""
    hints = get_type_hints(shape)
    names = [f.name for f in fields(shape)]
    return names, {name: _decoder(hints[name]) for name in names}


def _decoder(hint: Any) -> Callable[[Any], Any]:
    optional = isinstance(hint, UnionType) and type(None) in get_args(hint)
    if optional:
        (hint,) = [arg for arg in get_args(hint) if arg is not type(None)]
    if isinstance(hint, type) and issubclass(hint, Enum):
        convert: Callable[[Any], Any] = hint
    elif hint is bool:
        convert = bool
    elif get_origin(hint) in (dict, list):
        convert = json.loads
    else:
        return _same
    return (lambda value: None if value is None else convert(value)) if optional else convert


def _same(value: Any) -> Any:
    return value
