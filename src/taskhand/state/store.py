"""The harness's durable state: runs, task states, attempts, units, gates and the event log.

SQLite in WAL mode; every write commits its own short transaction before returning, so the
runner only acts on changes that already survive a crash, and readers never block the writer.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import fields
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from taskhand.host.secrets import is_secret_name, scrub_shapes
from taskhand.plan.model import Exchange, Status, id_key
from taskhand.state.records import (
    Attempt,
    Entry,
    Event,
    Gate,
    LedgerEntry,
    Run,
    Stats,
    TaskState,
    TaskStats,
    UnitRow,
)
from taskhand.text import dumps
from taskhand.unit import Usage

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

Row = TypeVar("Row", bound="DataclassInstance")

# How attempts usually end; the runner may name others ("question", "gave_up").
ATTEMPT_ENDS = ("passed", "failed", "interrupted")
# What Tilth's task-status.json calls each status; OPEN and BUSY read as pending there (absent).
TILTH_STATUS = {Status.DONE: "done", Status.FAIL: "failed", Status.WAIT: "waiting"}
# The export writes these beside an event's data, so the data cannot use them.
_RESERVED_EVENT_KEYS = ("id", "ts")


def now() -> str:
    """The current UTC time as ISO 8601 with milliseconds: 2026-12-02T14:00:00.123Z."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _seconds_between(start: str, end: str) -> float:
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()


def estimate_tokens(text: str) -> int:
    """Tokens in `text` as tokenizers of current models average for English and code: about
    four bytes a token. An estimate, kept beside the exact byte count."""
    return (len(text.encode()) + 3) // 4


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def strip_secrets(value: Any) -> Any:
    """`value` without any mapping key that names a secret, and with secret-shaped text
    scrubbed from its strings: the one rule of taskhand.secrets."""
    if isinstance(value, dict):
        return {
            k: strip_secrets(v)
            for k, v in value.items()
            if not (isinstance(k, str) and is_secret_name(k))
        }
    if isinstance(value, list):
        return [strip_secrets(v) for v in value]
    if isinstance(value, str):
        return scrub_shapes(value)
    return value


# Migrations: append only. Each runs in its own transaction and is recorded by name, so an old
# database gets exactly the ones it lacks. Statements go one by one because executescript()
# would commit midway.
Migration = Callable[[sqlite3.Connection], None]


def _m001_initial(conn: sqlite3.Connection) -> None:
    for statement in (
        """CREATE TABLE runs (id TEXT PRIMARY KEY, plan_path TEXT NOT NULL, dialect TEXT NOT NULL,
            repo TEXT NOT NULL, base_sha TEXT NOT NULL, run_branch TEXT NOT NULL,
            status TEXT NOT NULL, reason TEXT, created TEXT NOT NULL, updated TEXT NOT NULL,
            config TEXT NOT NULL)""",
        "CREATE INDEX runs_plan ON runs (plan_path, created)",
        """CREATE TABLE tasks (run_id TEXT NOT NULL REFERENCES runs (id), task_id TEXT NOT NULL,
            status TEXT NOT NULL, reason TEXT, updated TEXT NOT NULL,
            PRIMARY KEY (run_id, task_id))""",
        """CREATE TABLE attempts (id INTEGER PRIMARY KEY, run_id TEXT NOT NULL REFERENCES runs (id),
            task_id TEXT NOT NULL, number INTEGER NOT NULL, worktree TEXT NOT NULL,
            branch TEXT NOT NULL, base_sha TEXT NOT NULL, candidate_sha TEXT,
            status TEXT NOT NULL, reason TEXT, started TEXT NOT NULL, ended TEXT,
            UNIQUE (run_id, task_id, number))""",
        """CREATE TABLE units (id INTEGER PRIMARY KEY,
            attempt_id INTEGER NOT NULL REFERENCES attempts (id), run_id TEXT NOT NULL,
            task_id TEXT NOT NULL, role TEXT NOT NULL, agent TEXT NOT NULL, model TEXT,
            started TEXT NOT NULL, ended TEXT, tokens_in INTEGER NOT NULL DEFAULT 0,
            tokens_out INTEGER NOT NULL DEFAULT 0, tokens_cached INTEGER NOT NULL DEFAULT 0,
            cost REAL NOT NULL DEFAULT 0, cost_estimated INTEGER NOT NULL DEFAULT 0,
            outcome TEXT, transcript TEXT, prompt_bytes INTEGER NOT NULL DEFAULT 0)""",
        "CREATE INDEX units_run ON units (run_id, task_id)",
        """CREATE TABLE gates (id INTEGER PRIMARY KEY,
            attempt_id INTEGER NOT NULL REFERENCES attempts (id), name TEXT NOT NULL,
            ok INTEGER NOT NULL, detail TEXT NOT NULL, exit_code INTEGER, seconds REAL,
            output TEXT NOT NULL)""",
        "CREATE INDEX gates_attempt ON gates (attempt_id)",
        """CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT,
            run_id TEXT NOT NULL REFERENCES runs (id), ts TEXT NOT NULL, kind TEXT NOT NULL,
            task_id TEXT, data TEXT NOT NULL)""",
        "CREATE INDEX events_run ON events (run_id, id)",
        # The log is the record of what happened: the database itself refuses to rewrite it.
        "CREATE TRIGGER events_no_update BEFORE UPDATE ON events"
        " BEGIN SELECT RAISE(ABORT, 'events are append-only'); END",
        "CREATE TRIGGER events_no_delete BEFORE DELETE ON events"
        " BEGIN SELECT RAISE(ABORT, 'events are append-only'); END",
    ):
        conn.execute(statement)


def _m002_review(conn: sqlite3.Connection) -> None:
    for statement in (
        "ALTER TABLE units ADD COLUMN prompt_tokens INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE units ADD COLUMN lens TEXT NOT NULL DEFAULT ''",
        # One entry per concluded attempt: what the next attempt and the reviewer are shown.
        """CREATE TABLE ledger (id INTEGER PRIMARY KEY, run_id TEXT NOT NULL REFERENCES runs (id),
            task_id TEXT NOT NULL, attempt_id INTEGER NOT NULL UNIQUE REFERENCES attempts (id),
            iteration INTEGER NOT NULL, outcome TEXT NOT NULL, summary TEXT NOT NULL,
            diff_summary TEXT NOT NULL, report TEXT NOT NULL, gates TEXT NOT NULL,
            verdicts TEXT NOT NULL, created TEXT NOT NULL)""",
        "CREATE INDEX ledger_task ON ledger (run_id, task_id, id)",
        "CREATE TRIGGER ledger_no_update BEFORE UPDATE ON ledger"
        " BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END",
    ):
        conn.execute(statement)


def _m003_reopen_and_answers(conn: sqlite3.Connection) -> None:
    for statement in (
        # A reopened task's caps count only the attempts numbered above this one.
        "ALTER TABLE tasks ADD COLUMN counted_from INTEGER NOT NULL DEFAULT 0",
        # Every question a task's agent asked a person, and the answer once given: the only
        # record of them for a Markdown plan, whose files are never written.
        """CREATE TABLE requests (id INTEGER PRIMARY KEY, run_id TEXT NOT NULL REFERENCES runs (id),
            task_id TEXT NOT NULL, request TEXT NOT NULL, response TEXT, asked TEXT NOT NULL,
            answered TEXT)""",
        "CREATE INDEX requests_task ON requests (run_id, task_id, id)",
    ):
        conn.execute(statement)


MIGRATIONS: list[Migration] = [_m001_initial, _m002_review, _m003_reopen_and_answers]


@contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
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


def _migrate(conn: sqlite3.Connection) -> None:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied TEXT NOT NULL)"
    )
    for migration in MIGRATIONS:
        # Checked inside the write transaction: two processes opening a fresh database at
        # once must not both apply the same migration.
        with _transaction(conn):
            name = migration.__name__
            if not conn.execute("SELECT 1 FROM migrations WHERE name = ?", (name,)).fetchone():
                migration(conn)
                conn.execute("INSERT INTO migrations VALUES (?, ?)", (name, now()))


def _write_atomically(path: Path, text: str) -> None:
    """Replace `path` whole, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


# How a column becomes the field it fills, by the field's declared type.
_DECODE: dict[str, Callable[[Any], Any]] = {
    "bool": bool,
    "Status": Status,
    "dict[str, Any]": json.loads,
    "list[dict[str, Any]]": json.loads,
}
_TABLES = {
    "Run": "runs",
    "TaskState": "tasks",
    "Attempt": "attempts",
    "UnitRow": "units",
    "Gate": "gates",
    "Event": "events",
    "LedgerEntry": "ledger",
}


class Store:
    """One connection to the state database. Safe to share between threads of one process."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self._conn = conn
        # One transaction at a time on this connection; other processes wait on busy_timeout.
        self._lock = threading.RLock()

    @classmethod
    def open(cls, path: Path) -> Store:
        path.parent.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: we issue BEGIN/COMMIT ourselves, so no statement is ever
        # left in an implicit transaction that nobody commits.
        conn = sqlite3.connect(path, timeout=5.0, isolation_level=None, check_same_thread=False)
        try:
            conn.execute("PRAGMA busy_timeout = 5000")
            conn.execute("PRAGMA journal_mode = WAL")
            # FULL, not NORMAL: in WAL mode NORMAL may lose the last commits on power loss,
            # and the runner acts on a change as soon as it is committed.
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
            _migrate(conn)
        except BaseException:
            conn.close()
            raise
        return cls(path, conn)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock, _transaction(self._conn):
            yield self._conn

    def _select(self, shape: type[Row], where: str, params: tuple[Any, ...]) -> list[Row]:
        # Columns by name, never *: a database a newer version migrated may hold more of them.
        names = [f.name for f in fields(shape)]
        decode = {f.name: _DECODE[str(f.type)] for f in fields(shape) if str(f.type) in _DECODE}
        sql = f"SELECT {', '.join(names)} FROM {_TABLES[shape.__name__]} WHERE {where}"
        with self._lock:
            rows = self._conn.execute(sql, params).fetchall()
        return [
            shape(
                **{n: decode[n](v) if n in decode else v for n, v in zip(names, row, strict=True)}
            )
            for row in rows
        ]

    def _update(self, sql: str, params: tuple[Any, ...], missing: str) -> None:
        with self._write() as conn:
            if conn.execute(sql, params).rowcount == 0:
                raise KeyError(missing)

    # Runs

    def create_run(
        self,
        plan_path: str,
        dialect: str,
        repo: str,
        base_sha: str,
        run_branch: str,
        config: dict[str, Any],
    ) -> Run:
        """Start a run (status 'running'); config keys that name secrets are left out."""
        moment = datetime.now(UTC)
        stamp = moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        kept = json.dumps(strip_secrets(config), ensure_ascii=False, default=str)
        with self._write() as conn:
            while True:  # inside the write lock, so a free id stays free until inserted
                run_id = f"{moment:%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"
                if not conn.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone():
                    break
            conn.execute(
                "INSERT INTO runs (id, plan_path, dialect, repo, base_sha, run_branch, status,"
                " created, updated, config) VALUES (?, ?, ?, ?, ?, ?, 'running', ?, ?, ?)",
                (run_id, plan_path, dialect, repo, base_sha, run_branch, stamp, stamp, kept),
            )
        return self._select(Run, "id = ?", (run_id,))[0]

    def get_run(self, run_id: str) -> Run | None:
        return next(iter(self._select(Run, "id = ?", (run_id,))), None)

    def runs(self) -> list[Run]:
        """Every run, newest first."""
        return self._select(Run, "1 ORDER BY created DESC, id DESC", ())

    def latest_run(self, plan_path: str | None = None) -> Run | None:
        where = "?1 IS NULL OR plan_path = ?1 ORDER BY created DESC, id DESC LIMIT 1"
        return next(iter(self._select(Run, where, (plan_path,))), None)

    def set_run_status(self, run_id: str, status: str, reason: str | None = None) -> None:
        sql = "UPDATE runs SET status = ?, reason = ?, updated = ? WHERE id = ?"
        self._update(sql, (status, reason, now(), run_id), f"no run {run_id!r}")

    def interrupt_run(self, run_id: str, reason: str) -> list[Attempt]:
        """Record a running run as stopped by a signal, resumably: its open attempts (returned)
        and the run itself become 'interrupted'. A transaction the signal cut short is
        rolled back first."""
        with self._lock:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
        opened = self.open_attempts(run_id)
        stamp = now()
        with self._write() as conn:
            conn.execute(
                "UPDATE attempts SET status = 'interrupted', reason = ?, ended = ?"
                " WHERE run_id = ? AND status = 'running'",
                (reason, stamp, run_id),
            )
            conn.execute(
                "UPDATE runs SET status = 'interrupted', reason = ?, updated = ?"
                " WHERE id = ? AND status = 'running'",
                (reason, stamp, run_id),
            )
        return opened

    def set_run_branch(self, run_id: str, run_branch: str) -> None:
        sql = "UPDATE runs SET run_branch = ?, updated = ? WHERE id = ?"
        self._update(sql, (run_branch, now(), run_id), f"no run {run_id!r}")

    # Tasks

    def task_states(self, run_id: str) -> dict[str, TaskState]:
        """The run's task states by task id, in id order (T-2 before T-10)."""
        states = self._select(TaskState, "run_id = ?", (run_id,))
        return {s.task_id: s for s in sorted(states, key=lambda s: id_key(s.task_id))}

    def set_task(
        self,
        run_id: str,
        task_id: str,
        status: str,
        reason: str | None = None,
        request: str | None = None,
    ) -> None:
        """Record the task's status. Without a reason, one given with the same status stays
        (Complete repeats what Conclude explained); `request` records the question a WAIT
        status asks, in the same transaction."""
        code = Status(status).value
        with self._write() as conn:
            conn.execute(
                "INSERT INTO tasks (run_id, task_id, status, reason, updated)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT (run_id, task_id) DO UPDATE"
                " SET reason = CASE WHEN excluded.reason IS NULL AND status = excluded.status"
                " THEN reason ELSE excluded.reason END, status = excluded.status,"
                " updated = excluded.updated",
                (run_id, task_id, code, reason, now()),
            )
            if request is not None:
                conn.execute(
                    "INSERT INTO requests (run_id, task_id, request, asked) VALUES (?, ?, ?, ?)",
                    (run_id, task_id, request, now()),
                )

    def reopen_task(self, run_id: str, task_id: str, how: str) -> None:
        """Set the task OPEN again with fresh caps: they count attempts from here on, the
        earlier ones stay in the ledger. `how` says who reopened it, for the event log."""
        with self._write() as conn:
            conn.execute(
                "INSERT INTO tasks (run_id, task_id, status, reason, updated, counted_from)"
                " SELECT ?1, ?2, 'OPEN', NULL, ?3, COALESCE(MAX(number), 0) FROM attempts"
                " WHERE run_id = ?1 AND task_id = ?2 ON CONFLICT (run_id, task_id) DO UPDATE"
                " SET status = 'OPEN', reason = NULL, updated = excluded.updated,"
                " counted_from = excluded.counted_from",
                (run_id, task_id, now()),
            )
            _append_event(conn, run_id, "task_reopened", task_id, {"by": how})

    def answer_task(self, run_id: str, task_id: str, response: str) -> None:
        """Record a person's answer to the task's open question and set the task OPEN."""
        with self._write() as conn:
            row = conn.execute(
                "SELECT id FROM requests WHERE run_id = ? AND task_id = ? AND response IS NULL"
                " ORDER BY id DESC LIMIT 1",
                (run_id, task_id),
            ).fetchone()
            if row is None:  # asked before requests were recorded: the attempt holds it
                asked = conn.execute(
                    "SELECT reason FROM attempts WHERE run_id = ? AND task_id = ?"
                    " AND status = 'question' ORDER BY id DESC LIMIT 1",
                    (run_id, task_id),
                ).fetchone()
                cursor = conn.execute(
                    "INSERT INTO requests (run_id, task_id, request, asked) VALUES (?, ?, ?, ?)",
                    (run_id, task_id, asked[0] if asked else "(a question)", now()),
                )
                row = (cursor.lastrowid,)
            conn.execute(
                "UPDATE requests SET response = ?, answered = ? WHERE id = ?",
                (response, now(), row[0]),
            )
            conn.execute(
                "UPDATE tasks SET status = 'OPEN', reason = NULL, updated = ?"
                " WHERE run_id = ? AND task_id = ?",
                (now(), run_id, task_id),
            )
            _append_event(conn, run_id, "task_answered", task_id, {"response": response})

    def requests(self, run_id: str) -> dict[str, list[Exchange]]:
        """The questions each task asked in this run and their answers, oldest first."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT task_id, request, response FROM requests WHERE run_id = ? ORDER BY id",
                (run_id,),
            ).fetchall()
        asked: dict[str, list[Exchange]] = {}
        for task_id, request, response in rows:
            asked.setdefault(task_id, []).append(Exchange(request, response))
        return asked

    # Attempts

    def start_attempt(
        self, run_id: str, task_id: str, worktree: str, branch: str, base_sha: str
    ) -> Attempt:
        """Open the task's next attempt, numbered from 1 within the run."""
        with self._write() as conn:
            # Numbered inside the write transaction, so two writers cannot take one number.
            cursor = conn.execute(
                "INSERT INTO attempts (run_id, task_id, number, worktree, branch, base_sha,"
                " status, started) SELECT ?1, ?2, COALESCE(MAX(number), 0) + 1, ?3, ?4, ?5,"
                " 'running', ?6 FROM attempts WHERE run_id = ?1 AND task_id = ?2",
                (run_id, task_id, worktree, branch, base_sha, now()),
            )
        return self._select(Attempt, "id = ?", (cursor.lastrowid,))[0]

    def set_candidate(self, attempt_id: int, sha: str) -> None:
        sql = "UPDATE attempts SET candidate_sha = ? WHERE id = ?"
        self._update(sql, (sha, attempt_id), f"no attempt {attempt_id}")

    def reopen_attempt(self, attempt_id: int) -> None:
        """A paused attempt goes on (status 'running' again, no end)."""
        self._update(
            "UPDATE attempts SET status = 'running', ended = NULL"
            " WHERE id = ? AND status = 'paused'",
            (attempt_id,),
            f"no paused attempt {attempt_id}",
        )

    def finish_attempt(
        self,
        attempt_id: int,
        status: str,
        reason: str | None = None,
        entry: Entry | None = None,
    ) -> None:
        """End an attempt as `status`: anything but 'running', usually one of ATTEMPT_ENDS.

        `entry` goes into the task's ledger in the same transaction, so an attempt is never
        concluded without its entry, nor an entry written for an attempt left open.
        """
        if status in ("", "running"):
            raise ValueError(f"an attempt cannot end as {status!r}; say how it ended")
        with self._write() as conn:
            sql = "UPDATE attempts SET status = ?, reason = ?, ended = ? WHERE id = ?"
            if conn.execute(sql, (status, reason, now(), attempt_id)).rowcount == 0:
                raise KeyError(f"no attempt {attempt_id}")
            if entry is not None:
                conn.execute(
                    "INSERT INTO ledger (run_id, task_id, attempt_id, iteration, outcome, summary,"
                    " diff_summary, report, gates, verdicts, created) SELECT run_id, task_id, id,"
                    " number, ?, ?, ?, ?, ?, ?, ? FROM attempts WHERE id = ?",
                    (
                        entry.outcome,
                        entry.summary,
                        entry.diff_summary,
                        _json(entry.report),
                        _json(entry.gates),
                        _json(entry.verdicts),
                        now(),
                        attempt_id,
                    ),
                )

    def ledger(
        self, run_id: str, task_id: str | None, last: int | None = None
    ) -> list[LedgerEntry]:
        """The task's ledger (every task's when None), oldest first; its `last` entries only
        when given."""
        where = "run_id = ?1 AND (?2 IS NULL OR task_id = ?2) ORDER BY id"
        entries = self._select(LedgerEntry, where, (run_id, task_id))
        return entries[-last:] if last else entries

    def attempts(self, run_id: str, task_id: str | None = None) -> list[Attempt]:
        where = "run_id = ?1 AND (?2 IS NULL OR task_id = ?2) ORDER BY id"
        return self._select(Attempt, where, (run_id, task_id))

    def counted_attempts(self, run_id: str, task_id: str) -> list[Attempt]:
        """The task's attempts its caps count: those since it was last reopened."""
        state = self.task_states(run_id).get(task_id)
        since = state.counted_from if state else 0
        return [a for a in self.attempts(run_id, task_id) if a.number > since]

    def open_attempts(self, run_id: str) -> list[Attempt]:
        """Attempts still 'running': after a crash, the ones nobody finished."""
        return self._select(Attempt, "run_id = ? AND status = 'running' ORDER BY id", (run_id,))

    # Units

    def start_unit(
        self,
        attempt_id: int,
        role: str,
        agent: str,
        model: str | None,
        prompt: str,
        lens: str = "",
    ) -> int:
        """Open a unit; its prompt's size is kept in bytes and in estimated tokens."""
        size = len(prompt.encode())
        with self._write() as conn:
            cursor = conn.execute(
                "INSERT INTO units (attempt_id, run_id, task_id, role, agent, model, started,"
                " prompt_bytes, prompt_tokens, lens) SELECT id, run_id, task_id, ?, ?, ?, ?, ?,"
                " ?, ? FROM attempts WHERE id = ?",
                (role, agent, model, now(), size, estimate_tokens(prompt), lens, attempt_id),
            )
            if cursor.rowcount == 0 or cursor.lastrowid is None:
                raise KeyError(f"no attempt {attempt_id}")
            return cursor.lastrowid

    def finish_unit(self, unit_id: int, outcome: str, usage: Usage, transcript: str | None) -> None:
        sql = (
            "UPDATE units SET ended = ?, outcome = ?, tokens_in = ?, tokens_out = ?,"
            " tokens_cached = ?, cost = ?, cost_estimated = ?, transcript = ? WHERE id = ?"
        )
        u = usage
        counts = (u.tokens_in, u.tokens_out, u.tokens_cached, u.cost, u.estimated)
        self._update(sql, (now(), outcome, *counts, transcript, unit_id), f"no unit {unit_id}")

    def units(self, run_id: str, task_id: str | None = None) -> list[UnitRow]:
        where = "run_id = ?1 AND (?2 IS NULL OR task_id = ?2) ORDER BY id"
        return self._select(UnitRow, where, (run_id, task_id))

    # Gates

    def record_gate(
        self,
        attempt_id: int,
        name: str,
        ok: bool,
        detail: str,
        exit_code: int | None = None,
        seconds: float | None = None,
        output: str = "",
    ) -> None:
        with self._write() as conn:
            conn.execute(
                "INSERT INTO gates (attempt_id, name, ok, detail, exit_code, seconds, output)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (attempt_id, name, ok, detail, exit_code, seconds, output),
            )

    def gates(self, attempt_id: int) -> list[Gate]:
        return self._select(Gate, "attempt_id = ? ORDER BY id", (attempt_id,))

    # Events

    def event(self, run_id: str, kind: str, task_id: str | None = None, **data: Any) -> Event:
        """Append to the run's log. Values that JSON cannot hold are written as their str()."""
        clash = [k for k in _RESERVED_EVENT_KEYS if k in data]
        if clash:
            raise ValueError(f"event data cannot use the reserved keys {clash}")
        with self._write() as conn:
            return _append_event(conn, run_id, kind, task_id, data)

    def events(self, run_id: str, after: int = 0) -> list[Event]:
        """The run's events with an id above `after`, oldest first (for tailing the log)."""
        return self._select(Event, "run_id = ? AND id > ? ORDER BY id", (run_id, after))

    def events_of(self, run_id: str, kind: str) -> list[Event]:
        """The run's events of one kind, oldest first."""
        return self._select(Event, "run_id = ? AND kind = ? ORDER BY id", (run_id, kind))

    # Accounting

    def usage(self, run_id: str, task_id: str | None = None) -> Usage:
        """What the finished units of the run (or of one task) consumed."""
        units = self.units(run_id, task_id)
        return sum((u.usage for u in units if u.ended is not None), Usage())

    def counted_usage(self, run_id: str, task_id: str) -> Usage:
        """What the task's counted attempts (since it was last reopened) consumed."""
        counted = {a.id for a in self.counted_attempts(run_id, task_id)}
        units = self.units(run_id, task_id)
        return sum(
            (u.usage for u in units if u.ended is not None and u.attempt_id in counted), Usage()
        )

    def stats(self, run_id: str) -> Stats:
        """Units, agent time, tokens and cost per task (every task with a state or a unit)."""
        units: dict[str, list[UnitRow]] = {t: [] for t in self.task_states(run_id)}
        for unit in self.units(run_id):
            units.setdefault(unit.task_id, []).append(unit)
        tasks = [_task_stats(t, units[t]) for t in sorted(units, key=id_key)]
        return Stats(tasks, _task_stats("TOTAL", [u for us in units.values() for u in us]))

    # Exports

    def export_events(self, run_id: str, path: Path) -> None:
        """Write the run's log as events.jsonl, one object per line, replacing the file whole."""
        # Written as the CLI prints JSON: a person may well `cat` it to a terminal.
        lines = [
            dumps({"id": e.id, "ts": e.ts, "kind": e.kind, "task_id": e.task_id, **e.data}) + "\n"
            for e in self.events(run_id)
        ]
        _write_atomically(path, "".join(lines))

    def export_task_status(self, run_id: str, path: Path) -> None:
        """Write a Tilth-style task-status.json: a flat map of finished or waiting tasks."""
        states = self.task_states(run_id)
        flat = {t: TILTH_STATUS[s.status] for t, s in states.items() if s.status in TILTH_STATUS}
        _write_atomically(path, json.dumps(flat, indent=2, ensure_ascii=False) + "\n")


def _append_event(
    conn: sqlite3.Connection, run_id: str, kind: str, task_id: str | None, data: dict[str, Any]
) -> Event:
    """Append to the run's log inside the caller's transaction."""
    text = json.dumps(data, ensure_ascii=False, default=str)
    ts = now()
    cursor = conn.execute(
        "INSERT INTO events (run_id, ts, kind, task_id, data) VALUES (?, ?, ?, ?, ?)",
        (run_id, ts, kind, task_id, text),
    )
    assert cursor.lastrowid is not None
    return Event(cursor.lastrowid, run_id, ts, kind, task_id, json.loads(text))


def _task_stats(task_id: str, units: list[UnitRow]) -> TaskStats:
    finished = [(u, u.ended) for u in units if u.ended is not None]
    seconds = round(sum(_seconds_between(u.started, ended) for u, ended in finished), 3)
    s = sum((u.usage for u, _ in finished), Usage())
    counts = (s.tokens_in, s.tokens_out, s.tokens_cached, s.cost, s.estimated)
    reviews = sum(u.role == "evaluator" for u in units)
    prompt_bytes = sum(u.prompt_bytes for u in units)
    return TaskStats(task_id, len(units), reviews, prompt_bytes, seconds, *counts)
