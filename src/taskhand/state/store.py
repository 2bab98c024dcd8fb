"""The harness's durable state: runs, task states, attempts, units, gates, the ledger and the
event log (`log`), in one SQLite database per repository (`database` holds the plumbing).

Each method is one short transaction; rows come back as the typed records of `records`,
`ledger` and `events`, and words outside the vocabulary are refused on the way in.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from taskhand.host.secrets import strip_secrets
from taskhand.plan.model import Exchange, Status, id_key
from taskhand.state import accounting, exports
from taskhand.state.accounting import Stats
from taskhand.state.database import connect, now, to_json
from taskhand.state.deliveries import DeliveryRows
from taskhand.state.events import Event, EventKind, check
from taskhand.state.integration import IntegrationRows, record_verdict
from taskhand.state.ledger import Entry, LedgerEntry, LedgerOutcome
from taskhand.state.lifecycle import LifecycleRows
from taskhand.state.migrations import migrate
from taskhand.state.records import Attempt, AttemptStatus, Run, RunStatus, TaskState
from taskhand.state.units import UnitRows
from taskhand.unit import Usage


class Store(UnitRows, LifecycleRows, IntegrationRows, DeliveryRows):
    """The state of every run of one repository, on one connection."""

    @classmethod
    def open(cls, path: Path) -> Store:
        conn = connect(path)
        try:
            migrate(conn)
        except BaseException:
            conn.close()
            raise
        return cls(path, conn)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

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
        """Start a run (status running); config keys that name secrets are left out."""
        moment = datetime.now(UTC)
        stamp = moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        kept = to_json(strip_secrets(config))
        with self._write() as conn:
            while True:  # inside the write lock, so a free id stays free until inserted
                run_id = f"{moment:%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"
                if not conn.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone():
                    break
            conn.execute(
                "INSERT INTO runs (id, plan_path, dialect, repo, base_sha, run_branch, status,"
                " created, updated, config) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    *(run_id, plan_path, dialect, repo, base_sha, run_branch),
                    *(RunStatus.RUNNING, stamp, stamp, kept),
                ),
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

    def set_run_status(self, run_id: str, status: RunStatus, reason: str | None = None) -> None:
        """Record where the run stands: `status` is a RunStatus (any other word is refused)."""
        sql = "UPDATE runs SET status = ?, reason = ?, updated = ? WHERE id = ?"
        self._update(sql, (RunStatus(status), reason, now(), run_id), f"no run {run_id!r}")

    def interrupt_run(self, run_id: str, reason: str) -> list[Attempt]:
        """Record a running run as stopped by a signal, resumably: its open attempts (returned)
        and the run itself become interrupted. A transaction the signal cut short is rolled
        back first."""
        with self._lock:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
        opened = self.open_attempts(run_id)
        stamp = now()
        with self._write() as conn:
            conn.execute(
                "UPDATE attempts SET status = ?1, reason = ?2, ended = ?3"
                " WHERE run_id = ?4 AND status = ?5",
                (AttemptStatus.INTERRUPTED, reason, stamp, run_id, AttemptStatus.RUNNING),
            )
            conn.execute(
                "UPDATE runs SET status = ?1, reason = ?2, updated = ?3"
                " WHERE id = ?4 AND status = ?5",
                (RunStatus.INTERRUPTED, reason, stamp, run_id, RunStatus.RUNNING),
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
        status: Status,
        reason: str | None = None,
        request: str | None = None,
    ) -> None:
        """Record the task's status. Without a reason, one given with the same status stays
        (Complete repeats what Conclude explained); `request` records the question a WAIT
        status asks, in the same transaction."""
        code = Status(status)
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
                " SELECT ?1, ?2, ?4, NULL, ?3, COALESCE(MAX(number), 0) FROM attempts"
                " WHERE run_id = ?1 AND task_id = ?2 ON CONFLICT (run_id, task_id) DO UPDATE"
                " SET status = excluded.status, reason = NULL, updated = excluded.updated,"
                " counted_from = excluded.counted_from",
                (run_id, task_id, now(), Status.OPEN),
            )
            self._log(conn, run_id, EventKind.TASK_REOPENED, task_id, {"by": how})

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
                    " AND status = ? ORDER BY id DESC LIMIT 1",
                    (run_id, task_id, AttemptStatus.QUESTION),
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
                "UPDATE tasks SET status = ?, reason = NULL, updated = ?"
                " WHERE run_id = ? AND task_id = ?",
                (Status.OPEN, now(), run_id, task_id),
            )
            data = {"response": response}
            self._log(conn, run_id, EventKind.TASK_ANSWERED, task_id, data)

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
                " ?6, ?7 FROM attempts WHERE run_id = ?1 AND task_id = ?2",
                (run_id, task_id, worktree, branch, base_sha, AttemptStatus.RUNNING, now()),
            )
        return self._select(Attempt, "id = ?", (cursor.lastrowid,))[0]

    def set_candidate(self, attempt_id: int, sha: str) -> None:
        sql = "UPDATE attempts SET candidate_sha = ? WHERE id = ?"
        self._update(sql, (sha, attempt_id), f"no attempt {attempt_id}")

    def rebase_attempt(self, attempt_id: int, base: str, candidate: str) -> None:
        """The attempt's candidate replayed onto a newer base (the run branch moved on)."""
        sql = "UPDATE attempts SET base_sha = ?, candidate_sha = ? WHERE id = ?"
        self._update(sql, (base, candidate, attempt_id), f"no attempt {attempt_id}")

    def reopen_attempt(self, attempt_id: int) -> None:
        """A paused attempt goes on (running again, no end)."""
        self._update(
            "UPDATE attempts SET status = ?, ended = NULL WHERE id = ? AND status = ?",
            (AttemptStatus.RUNNING, attempt_id, AttemptStatus.PAUSED),
            f"no paused attempt {attempt_id}",
        )

    def finish_attempt(
        self,
        attempt_id: int,
        status: AttemptStatus,
        reason: str | None = None,
        entry: Entry | None = None,
        said: tuple[EventKind, dict[str, Any]] | None = None,
    ) -> Event | None:
        """End an attempt as `status`: an AttemptStatus other than running.

        `entry` goes into the task's ledger in the same transaction, so an attempt is never
        concluded without its entry, nor an entry written for an attempt left open; so does
        the verdict on its worker (state/integration.py), and the event `said` (its kind and
        payload), which then comes back: a kill never leaves one without the other.
        """
        ended = AttemptStatus(status) if status else None
        if ended in (None, AttemptStatus.RUNNING):
            raise ValueError(f"an attempt cannot end as {status!r}; say how it ended")
        outcome = LedgerOutcome(entry.outcome) if entry is not None else None
        with self._write() as conn:
            sql = "UPDATE attempts SET status = ?, reason = ?, ended = ? WHERE id = ?"
            if conn.execute(sql, (ended, reason, now(), attempt_id)).rowcount == 0:
                raise KeyError(f"no attempt {attempt_id}")
            if entry is not None:
                conn.execute(
                    "INSERT INTO ledger (attempt_id, outcome, summary, diff_summary, report,"
                    " gates, verdicts, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        *(attempt_id, outcome, entry.summary, entry.diff_summary),
                        *(to_json(entry.report), to_json(entry.gates), to_json(entry.verdicts)),
                        now(),
                    ),
                )
            record_verdict(conn, attempt_id, AttemptStatus(status), outcome)
            if said is None:
                return None
            kind, data = said
            run_id, task_id = conn.execute(
                "SELECT run_id, task_id FROM attempts WHERE id = ?", (attempt_id,)
            ).fetchone()
            return self._log(conn, run_id, check(kind, data), task_id, data)

    def ledger(
        self, run_id: str, task_id: str | None, last: int | None = None
    ) -> list[LedgerEntry]:
        """The task's ledger (every task's when None), oldest first; its `last` entries only
        when given."""
        where = "run_id = ?1 AND (?2 IS NULL OR task_id = ?2) ORDER BY id"
        rows = self._rows("SELECT * FROM ledger_entries WHERE " + where, (run_id, task_id))
        entries = [LedgerEntry.decode(row) for row in rows]
        return entries[-last:] if last else entries

    def attempts(self, run_id: str, task_id: str | None = None) -> list[Attempt]:
        where = "run_id = ?1 AND (?2 IS NULL OR task_id = ?2) ORDER BY id"
        return self._select(Attempt, where, (run_id, task_id))

    def attempt_branches(self, run_id: str) -> set[str]:
        """The task branches the run's attempts made (asked around every unit: one column)."""
        rows = self._rows("SELECT DISTINCT branch FROM attempts WHERE run_id = ?", (run_id,))
        return {r["branch"] for r in rows if r["branch"]}

    def counted_attempts(self, run_id: str, task_id: str) -> list[Attempt]:
        """The task's attempts its caps count: those since it was last reopened."""
        state = self.task_states(run_id).get(task_id)
        since = state.counted_from if state else 0
        return [a for a in self.attempts(run_id, task_id) if a.number > since]

    def open_attempts(self, run_id: str) -> list[Attempt]:
        """Attempts still running: after a crash, the ones nobody finished."""
        where = "run_id = ? AND status = ? ORDER BY id"
        return self._select(Attempt, where, (run_id, AttemptStatus.RUNNING))

    # Accounting and exports

    def usage(self, run_id: str, task_id: str | None = None) -> Usage:
        """What the finished units of the run (or of one task) consumed."""
        return accounting.usage(self.units(run_id, task_id))

    def counted_usage(self, run_id: str, task_id: str) -> Usage:
        """What the task's counted attempts (since it was last reopened) consumed."""
        counted = {a.id for a in self.counted_attempts(run_id, task_id)}
        return accounting.usage([u for u in self.units(run_id, task_id) if u.attempt_id in counted])

    def stats(self, run_id: str) -> Stats:
        """Units, agent time, tokens and cost per task (every task with a state or a unit)."""
        return accounting.stats(list(self.task_states(run_id)), self.units(run_id))

    def export_events(self, run_id: str, path: Path) -> None:
        """Write the run's log as events.jsonl, one object per line, replacing the file whole."""
        exports.write_events(self.events(run_id), path)

    def export_task_status(self, run_id: str, path: Path) -> None:
        """Write a Tilth-style task-status.json: a flat map of finished or waiting tasks."""
        exports.write_task_status(self.task_states(run_id), path)
