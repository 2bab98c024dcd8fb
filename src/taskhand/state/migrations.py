"""The state database's schema, as an append-only list of migrations.

Each migration is a small function that runs in its own transaction and is recorded by name in
the `migrations` table, so an old database gets exactly the ones it lacks. Statements go one by
one because executescript() would commit midway.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from taskhand.state.database import now, transaction
from taskhand.state.events import EventKind
from taskhand.state.records import HARNESS, AttemptStatus, Disposition

Migration = Callable[[sqlite3.Connection], None]


def _run(conn: sqlite3.Connection, *statements: str) -> None:
    for statement in statements:
        conn.execute(statement)


def _m001_initial(conn: sqlite3.Connection) -> None:
    _run(
        conn,
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
    )


def _m002_review(conn: sqlite3.Connection) -> None:
    _run(
        conn,
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
    )


def _m003_reopen_and_answers(conn: sqlite3.Connection) -> None:
    _run(
        conn,
        # A reopened task's caps count only the attempts numbered above this one.
        "ALTER TABLE tasks ADD COLUMN counted_from INTEGER NOT NULL DEFAULT 0",
        # Every question a task's agent asked a person, and the answer once given: the only
        # record of them for a Markdown plan, whose files are never written.
        """CREATE TABLE requests (id INTEGER PRIMARY KEY, run_id TEXT NOT NULL REFERENCES runs (id),
            task_id TEXT NOT NULL, request TEXT NOT NULL, response TEXT, asked TEXT NOT NULL,
            answered TEXT)""",
        "CREATE INDEX requests_task ON requests (run_id, task_id, id)",
    )


def _m004_derived_columns(conn: sqlite3.Connection) -> None:
    """A unit's and a ledger entry's run, task and attempt number are its attempt's, and a
    prompt's estimated tokens follow from its bytes: those columns go, and two views read
    them back. Tables are rebuilt (copy, drop, rename) rather than altered: SQLite drops no
    column that a foreign key or an index names, nor any before 3.35."""
    _run(
        conn,
        """CREATE TABLE units_new (id INTEGER PRIMARY KEY,
            attempt_id INTEGER NOT NULL REFERENCES attempts (id), role TEXT NOT NULL,
            agent TEXT NOT NULL, model TEXT, started TEXT NOT NULL, ended TEXT,
            tokens_in INTEGER NOT NULL DEFAULT 0, tokens_out INTEGER NOT NULL DEFAULT 0,
            tokens_cached INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0,
            cost_estimated INTEGER NOT NULL DEFAULT 0, outcome TEXT, transcript TEXT,
            prompt_bytes INTEGER NOT NULL DEFAULT 0, lens TEXT NOT NULL DEFAULT '')""",
        """INSERT INTO units_new SELECT id, attempt_id, role, agent, model, started, ended,
            tokens_in, tokens_out, tokens_cached, cost, cost_estimated, outcome, transcript,
            prompt_bytes, lens FROM units""",
        "DROP TABLE units",
        "ALTER TABLE units_new RENAME TO units",
        "CREATE INDEX units_attempt ON units (attempt_id)",
        """CREATE TABLE ledger_new (id INTEGER PRIMARY KEY,
            attempt_id INTEGER NOT NULL UNIQUE REFERENCES attempts (id), outcome TEXT NOT NULL,
            summary TEXT NOT NULL, diff_summary TEXT NOT NULL, report TEXT NOT NULL,
            gates TEXT NOT NULL, verdicts TEXT NOT NULL, created TEXT NOT NULL)""",
        """INSERT INTO ledger_new SELECT id, attempt_id, outcome, summary, diff_summary, report,
            gates, verdicts, created FROM ledger""",
        "DROP TABLE ledger",
        "ALTER TABLE ledger_new RENAME TO ledger",
        "CREATE TRIGGER ledger_no_update BEFORE UPDATE ON ledger"
        " BEGIN SELECT RAISE(ABORT, 'the ledger is append-only'); END",
        # The tokens as tokenizers of current models average for English and code: about four
        # bytes a token. An estimate, kept beside the exact byte count.
        """CREATE VIEW unit_rows AS SELECT units.id AS id, attempt_id, run_id, task_id, role,
            agent, model, units.started AS started, units.ended AS ended, tokens_in, tokens_out,
            tokens_cached, cost, cost_estimated, outcome, transcript, prompt_bytes,
            (prompt_bytes + 3) / 4 AS prompt_tokens, lens
            FROM units JOIN attempts ON attempts.id = units.attempt_id""",
        """CREATE VIEW ledger_entries AS SELECT ledger.id AS id, run_id, task_id, attempt_id,
            number AS iteration, outcome, summary, diff_summary, report, gates, verdicts, created
            FROM ledger JOIN attempts ON attempts.id = ledger.attempt_id""",
    )


def _m005_lifecycle(conn: sqlite3.Connection) -> None:
    """The lifecycle's records, per plan (a task's life spans runs): each task's status,
    the interview's questions, and a person's remarks."""
    _run(
        conn,
        """CREATE TABLE lifecycle (plan TEXT NOT NULL, task_id TEXT NOT NULL,
            status TEXT NOT NULL, waiting INTEGER NOT NULL DEFAULT 0,
            resume TEXT NOT NULL DEFAULT '', reason TEXT, bounces INTEGER NOT NULL DEFAULT 0,
            rounds INTEGER NOT NULL DEFAULT 0, pr TEXT, updated TEXT NOT NULL,
            PRIMARY KEY (plan, task_id))""",
        """CREATE TABLE questions (plan TEXT NOT NULL, task_id TEXT NOT NULL,
            number INTEGER NOT NULL, text TEXT NOT NULL, options TEXT NOT NULL,
            stage TEXT NOT NULL, choice TEXT, note TEXT, asked TEXT NOT NULL, answered TEXT,
            PRIMARY KEY (plan, task_id, number))""",
        """CREATE TABLE remarks (id INTEGER PRIMARY KEY, plan TEXT NOT NULL,
            task_id TEXT NOT NULL, kind TEXT NOT NULL, text TEXT NOT NULL, at TEXT NOT NULL)""",
        "CREATE INDEX remarks_task ON remarks (plan, task_id)",
    )


def _m006_deliveries(conn: sqlite3.Connection) -> None:
    """Each delivery of a run (a task's pull request, or the run's own with task_id ''):
    written before and after each step outside, so a killed run never opens a second PR."""
    _run(
        conn,
        """CREATE TABLE deliveries (run_id TEXT NOT NULL REFERENCES runs (id),
            task_id TEXT NOT NULL, branch TEXT NOT NULL, base TEXT NOT NULL,
            pr_url TEXT NOT NULL DEFAULT '', state TEXT NOT NULL,
            reason TEXT NOT NULL DEFAULT '', updated TEXT NOT NULL,
            PRIMARY KEY (run_id, task_id))""",
    )


def _m007_integration_ledger(conn: sqlite3.Connection) -> None:
    """The integration ledger: one disposition per result (an ended attempt with a candidate),
    never rewritten, and a verdict on each attempt's worker. A run of an earlier version
    gets the dispositions its log proves: each candidate it logged as integrated."""
    _run(
        conn,
        """CREATE TABLE dispositions (id INTEGER PRIMARY KEY,
            attempt_id INTEGER NOT NULL UNIQUE REFERENCES attempts (id), status TEXT NOT NULL,
            target_ref TEXT NOT NULL, target_sha TEXT NOT NULL, recorded_by TEXT NOT NULL,
            recorded TEXT NOT NULL, note TEXT NOT NULL)""",
        "CREATE TRIGGER dispositions_no_update BEFORE UPDATE ON dispositions"
        " BEGIN SELECT RAISE(ABORT, 'a disposition is recorded once'); END",
        "CREATE TRIGGER dispositions_no_delete BEFORE DELETE ON dispositions"
        " BEGIN SELECT RAISE(ABORT, 'a disposition is recorded once'); END",
        """CREATE TABLE worker_verdicts (attempt_id INTEGER PRIMARY KEY REFERENCES attempts (id),
            agent TEXT NOT NULL, model TEXT, attempts INTEGER NOT NULL, outcome TEXT NOT NULL,
            tokens_in INTEGER NOT NULL, tokens_out INTEGER NOT NULL, dollars REAL NOT NULL,
            recorded TEXT NOT NULL)""",
        """CREATE VIEW disposition_rows AS SELECT dispositions.id AS id, attempt_id, run_id,
            task_id, number AS attempt, COALESCE(candidate_sha, '') AS candidate_sha,
            dispositions.status AS status, target_ref, target_sha, recorded_by, recorded, note
            FROM dispositions JOIN attempts ON attempts.id = dispositions.attempt_id""",
        """CREATE VIEW verdict_rows AS SELECT attempt_id, run_id, task_id, number AS attempt,
            agent, model, attempts, outcome, tokens_in, tokens_out, dollars, recorded
            FROM worker_verdicts JOIN attempts ON attempts.id = worker_verdicts.attempt_id""",
    )
    # Words as parameters: the migration names no status itself (tests/test_vocabulary.py).
    conn.execute(
        """INSERT INTO dispositions (attempt_id, status, target_ref, target_sha, recorded_by,
            recorded, note) SELECT attempts.id, ?1, runs.run_branch, candidate_sha, ?2, ?3, ?4
            FROM attempts JOIN runs ON runs.id = attempts.run_id
            WHERE attempts.status = ?5 AND candidate_sha IS NOT NULL AND EXISTS (SELECT 1
            FROM events WHERE events.run_id = attempts.run_id AND events.kind = ?6
            AND events.task_id = attempts.task_id AND instr(events.data, candidate_sha) > 0)""",
        (
            *(Disposition.INTEGRATED, HARNESS, now(), "read from the run's log"),
            *(AttemptStatus.PASSED, EventKind.INTEGRATED),
        ),
    )


def _m008_usage_parts(conn: sqlite3.Connection) -> None:
    """A unit's cache writes and thinking tokens as its agent reported them: parts of its
    tokens in and out, kept apart like cache reads. Earlier units read as zero."""
    _run(
        conn,
        "ALTER TABLE units ADD COLUMN tokens_cache_write INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE units ADD COLUMN tokens_thinking INTEGER NOT NULL DEFAULT 0",
        "DROP VIEW unit_rows",
        """CREATE VIEW unit_rows AS SELECT units.id AS id, attempt_id, run_id, task_id, role,
            agent, model, units.started AS started, units.ended AS ended, tokens_in, tokens_out,
            tokens_cached, tokens_cache_write, tokens_thinking, cost, cost_estimated, outcome,
            transcript, prompt_bytes, (prompt_bytes + 3) / 4 AS prompt_tokens, lens
            FROM units JOIN attempts ON attempts.id = units.attempt_id""",
    )


MIGRATIONS: list[Migration] = [
    _m001_initial,
    _m002_review,
    _m003_reopen_and_answers,
    _m004_derived_columns,
    _m005_lifecycle,
    _m006_deliveries,
    _m007_integration_ledger,
    _m008_usage_parts,
]


def migrate(conn: sqlite3.Connection) -> None:
    """Apply the migrations `conn`'s database lacks, each recorded as it commits."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied TEXT NOT NULL)"
    )
    applied = {row[0] for row in conn.execute("SELECT name FROM migrations")}
    for migration in [m for m in MIGRATIONS if m.__name__ not in applied]:
        # Checked inside the write transaction: two processes opening a fresh database at
        # once must not both apply the same migration.
        with transaction(conn):
            name = migration.__name__
            if not conn.execute("SELECT 1 FROM migrations WHERE name = ?", (name,)).fetchone():
                migration(conn)
                conn.execute("INSERT INTO migrations VALUES (?, ?)", (name, now()))
