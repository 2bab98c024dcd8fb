"""The integration ledger's part of the store: exactly one disposition per result, never
rewritten, and a verdict on the worker of each attempt that ended.

A result is an attempt that ended (not running, paused or interrupted) with a candidate
commit. The harness records `integrated` when a candidate lands on the run branch, and then
`superseded` for the task's earlier results that have none; a person or CI records theirs
with `taskhand integration set`. The UNIQUE attempt column makes a second one impossible.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from taskhand.state.database import now
from taskhand.state.ledger import LedgerOutcome
from taskhand.state.log import EventLog
from taskhand.state.records import (
    HARNESS,
    Attempt,
    AttemptStatus,
    Disposition,
    DispositionRow,
    WorkerOutcome,
    WorkerVerdict,
)
from taskhand.unit import Role

# Attempts that have not ended: what they left is not a result (yet, or ever).
NOT_ENDED = (AttemptStatus.RUNNING, AttemptStatus.PAUSED, AttemptStatus.INTERRUPTED)

# How an attempt's end judges its worker; the others (a person's gate, a pause, a kill)
# judge nobody.
WORKER_OUTCOMES = {
    AttemptStatus.PASSED: WorkerOutcome.ACCEPTED,
    AttemptStatus.REJECTED: WorkerOutcome.REJECTED,
    AttemptStatus.FAILED: WorkerOutcome.FAILED,
    AttemptStatus.GAVE_UP: WorkerOutcome.GAVE_UP,
    AttemptStatus.QUESTION: WorkerOutcome.ASKED,
    AttemptStatus.CAPPED: WorkerOutcome.CAPPED,
    AttemptStatus.VIOLATION: WorkerOutcome.VIOLATION,
    AttemptStatus.REVIEW_FAILED: WorkerOutcome.UNJUDGED,
    AttemptStatus.REQUEUED: WorkerOutcome.CONFLICTED,
}


def is_result(attempt: Attempt) -> bool:
    """Whether the attempt left a result: it ended, with a candidate commit."""
    return bool(attempt.candidate_sha) and attempt.status not in NOT_ENDED


@dataclass(frozen=True)
class Result:
    """One result of a task, and its disposition once recorded."""

    attempt: Attempt
    disposition: DispositionRow | None


@dataclass
class AlreadyDisposed(Exception):
    """A second disposition for one result, refused; `existing` is the first."""

    existing: DispositionRow


_INSERT = (
    "INSERT INTO dispositions (attempt_id, status, target_ref, target_sha, recorded_by,"
    " recorded, note) VALUES (?, ?, ?, ?, ?, ?, ?)"
)


class IntegrationRows(EventLog):
    """Dispositions and worker verdicts of the runs of one repository."""

    def record_landing(
        self, attempt_id: int, target_ref: str, target_sha: str
    ) -> list[DispositionRow]:
        """The harness's record that the attempt's candidate landed on `target_ref`: the
        attempt `integrated`, and every earlier result of its task (in any run of its plan)
        still without a disposition `superseded`. Idempotent: what is recorded already stays,
        and only the dispositions this call added come back."""
        added: list[int] = []
        with self._write() as conn:
            row = conn.execute(
                "SELECT attempts.task_id, attempts.number, runs.id, runs.plan_path FROM attempts"
                " JOIN runs ON runs.id = attempts.run_id WHERE attempts.id = ?",
                (attempt_id,),
            ).fetchone()
            if row is None:
                raise KeyError(f"no attempt {attempt_id}")
            task_id, number, run_id, plan_path = row
            if not _disposed(conn, attempt_id):
                landed = (Disposition.INTEGRATED, target_ref, target_sha, HARNESS, now(), "")
                added.append(_insert(conn, attempt_id, *landed))
            earlier = conn.execute(
                "SELECT attempts.id FROM attempts JOIN runs ON runs.id = attempts.run_id"
                " WHERE runs.plan_path = ? AND attempts.task_id = ? AND attempts.id < ?"
                " AND candidate_sha IS NOT NULL AND attempts.status NOT IN (?, ?, ?)"
                " AND NOT EXISTS (SELECT 1 FROM dispositions WHERE attempt_id = attempts.id)"
                " ORDER BY attempts.id",
                (plan_path, task_id, attempt_id, *NOT_ENDED),
            ).fetchall()
            note = f"replaced by {task_id} attempt {number} of run {run_id}"
            for (older,) in earlier:
                replaced = (Disposition.SUPERSEDED, target_ref, target_sha, HARNESS, now(), note)
                added.append(_insert(conn, older, *replaced))
        return self._dispositions_by_id(added)

    def record_disposition(
        self,
        attempt_id: int,
        status: Disposition,
        target_ref: str,
        target_sha: str,
        by: str,
        note: str = "",
    ) -> DispositionRow:
        """A person's or CI's disposition of one result; AlreadyDisposed, naming the first,
        when it has one (checked and written in one transaction)."""
        with self._write() as conn:
            if _disposed(conn, attempt_id):
                first = self._select(DispositionRow, "attempt_id = ?", (attempt_id,))[0]
                raise AlreadyDisposed(first)
            values = (Disposition(status), target_ref, target_sha, by, now(), note)
            added = _insert(conn, attempt_id, *values)
        return self._dispositions_by_id([added])[0]

    def results(self, run_id: str, task_id: str | None = None) -> list[Result]:
        """The run's results (one task's when given), oldest first, each with its
        disposition."""
        where = "run_id = ?1 AND (?2 IS NULL OR task_id = ?2) ORDER BY id"
        attempts = self._select(Attempt, where, (run_id, task_id))
        disposed = {d.attempt_id: d for d in self.dispositions(run_id, task_id)}
        return [Result(a, disposed.get(a.id)) for a in attempts if is_result(a)]

    def dispositions(self, run_id: str, task_id: str | None = None) -> list[DispositionRow]:
        """The run's dispositions (of one task's results when given), oldest first."""
        where = "run_id = ?1 AND (?2 IS NULL OR task_id = ?2) ORDER BY id"
        return self._select(DispositionRow, where, (run_id, task_id))

    def worker_verdicts(self, run_id: str, task_id: str | None = None) -> list[WorkerVerdict]:
        """The verdicts on the run's workers (one task's when given), by attempt."""
        where = "run_id = ?1 AND (?2 IS NULL OR task_id = ?2) ORDER BY attempt_id"
        return self._select(WorkerVerdict, where, (run_id, task_id))

    def _dispositions_by_id(self, ids: list[int]) -> list[DispositionRow]:
        marks = ", ".join("?" * len(ids))
        return self._select(DispositionRow, f"id IN ({marks}) ORDER BY id", tuple(ids))


def record_verdict(
    conn: sqlite3.Connection,
    attempt_id: int,
    status: AttemptStatus,
    ledger: LedgerOutcome | None = None,
) -> None:
    """The verdict on the worker of an attempt ending as `status` (its ledger entry saying
    `ledger`), inside the caller's transaction, the one that ends the attempt: its
    implementer's agent and model (its last unit's), its tries at the task so far (attempts a
    kill cut short are redone, not tried again), the outcome (a candidate that conflicted with
    work landed meanwhile failed through no fault of the worker's), and what its implementer
    units consumed. An attempt no implementer worked in, or an end that judges nobody, gets
    none; a second call changes nothing."""
    outcome = WORKER_OUTCOMES.get(status)
    if outcome is None:
        return
    if ledger is LedgerOutcome.CONFLICT:  # failed through no fault of the worker's
        outcome = WorkerOutcome.CONFLICTED
    conn.execute(
        "INSERT OR IGNORE INTO worker_verdicts (attempt_id, agent, model, attempts, outcome,"
        " tokens_in, tokens_out, dollars, recorded)"
        " SELECT ?1, last.agent, last.model, (SELECT COUNT(*) FROM attempts AS tries"
        " WHERE tries.run_id = attempts.run_id AND tries.task_id = attempts.task_id"
        " AND tries.id <= ?1 AND tries.status != ?5), ?2, SUM(units.tokens_in),"
        " SUM(units.tokens_out), SUM(units.cost), ?3"
        " FROM units JOIN attempts ON attempts.id = units.attempt_id"
        " JOIN (SELECT agent, model FROM units WHERE attempt_id = ?1 AND role = ?4"
        " ORDER BY id DESC LIMIT 1) AS last"
        " WHERE units.attempt_id = ?1 AND units.role = ?4 GROUP BY attempts.id",
        (attempt_id, outcome, now(), Role.IMPLEMENTER, AttemptStatus.INTERRUPTED),
    )


def _disposed(conn: sqlite3.Connection, attempt_id: int) -> bool:
    found = conn.execute("SELECT 1 FROM dispositions WHERE attempt_id = ?", (attempt_id,))
    return found.fetchone() is not None


def _insert(
    conn: sqlite3.Connection,
    attempt_id: int,
    status: Disposition,
    target_ref: str,
    target_sha: str,
    by: str,
    recorded: str,
    note: str,
) -> int:
    cursor = conn.execute(_INSERT, (attempt_id, status, target_ref, target_sha, by, recorded, note))
    assert cursor.lastrowid is not None
    return cursor.lastrowid
