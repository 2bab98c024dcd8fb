"""The integration ledger's rows: one disposition per result, recorded once however often the
harness comes back to it, never rewritten; and a verdict on each attempt's worker, written with
the attempt's end."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from taskhand.state import migrations
from taskhand.state.events import EventKind
from taskhand.state.integration import AlreadyDisposed
from taskhand.state.ledger import Entry, LedgerOutcome
from taskhand.state.records import (
    HARNESS,
    AttemptStatus,
    Disposition,
    Run,
    WorkerOutcome,
)
from taskhand.state.store import Store
from taskhand.unit import Case, Role, Usage
from tests.state import TIMESTAMP, new_run, raw


def ended(
    store: Store, run: Run, task: str, status: AttemptStatus, candidate: str | None = "c"
) -> int:
    """An attempt at `task` that ran an implementer unit and ended as `status`."""
    attempt = store.start_attempt(run.id, task, f"/w/{task}", f"taskhand/{task}", "base")
    unit = store.start_unit(attempt.id, Role.IMPLEMENTER, "claude", "opus", "prompt")
    store.finish_unit(unit, Case.DONE, Usage(100, 20, 0, 0.5), None)
    if candidate:
        store.set_candidate(attempt.id, f"{candidate}{attempt.number}")
    store.finish_attempt(attempt.id, status, "why", Entry(LedgerOutcome.ACCEPTED, "s"))
    return attempt.id


def test_a_landing_is_recorded_once_and_supersedes_the_earlier_results(store: Store) -> None:
    run = new_run(store)
    first = ended(store, run, "T-1", AttemptStatus.REJECTED)
    interrupted = store.start_attempt(run.id, "T-1", "/w", "b", "base")
    store.set_candidate(interrupted.id, "cut-short")
    store.finish_attempt(interrupted.id, AttemptStatus.INTERRUPTED, "killed")
    landed = ended(store, run, "T-1", AttemptStatus.PASSED)
    other = ended(store, run, "T-2", AttemptStatus.FAILED)

    added = store.record_landing(landed, "taskhand/run", "c3")
    assert [(d.attempt, d.status, d.recorded_by) for d in added] == [
        (3, Disposition.INTEGRATED, HARNESS),
        (1, Disposition.SUPERSEDED, HARNESS),
    ]
    assert added[1].note == f"replaced by T-1 attempt 3 of run {run.id}"
    assert (added[0].target_ref, added[0].target_sha, added[0].candidate_sha) == (
        "taskhand/run",
        "c3",
        "c3",
    )
    assert TIMESTAMP.match(added[0].recorded)
    # A resumed run that comes here again adds nothing.
    assert store.record_landing(landed, "taskhand/run", "c3") == []
    assert [d.attempt_id for d in store.dispositions(run.id)] == [landed, first]
    assert store.dispositions(run.id, "T-2") == []
    results = store.results(run.id)
    # An interrupted attempt's candidate is no result: its next try redid it.
    assert [(r.attempt.id, r.disposition is not None) for r in results] == [
        (first, True),
        (landed, True),
        (other, False),
    ]


def test_a_later_run_of_the_plan_supersedes_an_earlier_runs_results(store: Store) -> None:
    old = new_run(store, "plans/a")
    failed = ended(store, old, "T-1", AttemptStatus.FAILED)
    elsewhere = ended(store, new_run(store, "plans/b"), "T-1", AttemptStatus.FAILED)
    new = new_run(store, "plans/a")
    landed = ended(store, new, "T-1", AttemptStatus.PASSED)
    added = store.record_landing(landed, new.run_branch, "c1")
    assert [d.attempt_id for d in added] == [landed, failed]
    assert store.results(old.id)[0].disposition is not None
    assert elsewhere not in {d.attempt_id for d in added}


def test_a_second_disposition_of_a_result_is_refused(store: Store, db_path: Path) -> None:
    run = new_run(store)
    attempt = ended(store, run, "T-1", AttemptStatus.FAILED)
    row = store.record_disposition(attempt, Disposition.REJECTED, "", "", "ci", "too wide")
    assert (row.status, row.recorded_by, row.note) == (Disposition.REJECTED, "ci", "too wide")
    with pytest.raises(AlreadyDisposed) as refused:
        store.record_disposition(attempt, Disposition.INTEGRATED, "main", "x", "person")
    assert refused.value.existing == row
    assert store.record_landing(attempt, "taskhand/run", "c1") == []  # the harness's too
    with raw(db_path) as conn:
        for sql in (
            "UPDATE dispositions SET status = 'integrated'",
            "DELETE FROM dispositions",
            f"INSERT INTO dispositions (attempt_id, status, target_ref, target_sha, recorded_by,"
            f" recorded, note) VALUES ({attempt}, 'x', '', '', '', '', '')",
        ):
            with pytest.raises(sqlite3.DatabaseError):
                conn.execute(sql)
    assert store.dispositions(run.id) == [row]


def test_the_worker_gets_a_verdict_as_its_attempt_ends(store: Store) -> None:
    run = new_run(store)
    rejected = ended(store, run, "T-1", AttemptStatus.REJECTED)
    killed = store.start_attempt(run.id, "T-1", "/w", "b", "base")
    store.start_unit(killed.id, Role.IMPLEMENTER, "claude", "opus", "p")
    store.finish_attempt(killed.id, AttemptStatus.INTERRUPTED, "killed")  # judges nobody
    accepted = store.start_attempt(run.id, "T-1", "/w", "b", "base")
    for agent, tokens in (("claude", 10), ("codex", 30)):
        unit = store.start_unit(accepted.id, Role.IMPLEMENTER, agent, "m", "p")
        store.finish_unit(unit, Case.DONE, Usage(tokens, 5, 0, 0.25), None)
    reviewer = store.start_unit(accepted.id, Role.EVALUATOR, "claude", "opus", "p")
    store.finish_unit(reviewer, Case.DONE, Usage(1000, 1000, 0, 9.0), None)  # not the worker's
    store.finish_attempt(accepted.id, AttemptStatus.PASSED)
    conflicted = ended(store, run, "T-3", AttemptStatus.FAILED)
    replaced = store.start_attempt(run.id, "T-3", "/w", "b", "base")
    store.start_unit(replaced.id, Role.IMPLEMENTER, "claude", "opus", "p")
    store.finish_attempt(replaced.id, AttemptStatus.FAILED, "x", Entry(LedgerOutcome.CONFLICT, "x"))
    outcomes = [v.outcome for v in store.worker_verdicts(run.id, "T-3")]
    assert (store.worker_verdicts(run.id, "T-3")[0].attempt_id, outcomes) == (
        conflicted,
        [WorkerOutcome.FAILED, WorkerOutcome.CONFLICTED],  # not the worker's doing
    )
    planning = store.start_attempt(run.id, "T-2", "/w", "b", "base")
    store.start_unit(planning.id, Role.PLANNER, "claude", "opus", "p")
    store.finish_attempt(planning.id, AttemptStatus.AWAITING)  # no implementer worked

    verdicts = [v for v in store.worker_verdicts(run.id) if v.task_id == "T-1"]
    assert [
        (v.attempt_id, v.attempt, v.agent, v.model, v.attempts, v.outcome) for v in verdicts
    ] == [
        (rejected, 1, "claude", "opus", 1, WorkerOutcome.REJECTED),
        (accepted.id, 3, "codex", "m", 2, WorkerOutcome.ACCEPTED),  # the kill is no try
    ]
    assert (verdicts[1].tokens_in, verdicts[1].tokens_out, verdicts[1].dollars) == (40, 10, 0.5)
    assert store.worker_verdicts(run.id, "T-2") == []


def test_an_older_database_gets_the_dispositions_its_log_proves(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:6])
    with Store.open(db_path) as old:
        run = new_run(old)
        landed = old.start_attempt(run.id, "T-1", "/w", "b", "base")
        old.set_candidate(landed.id, "abc")
        old.event(run.id, EventKind.INTEGRATED, "T-1", sha="abc")
        passed = old.start_attempt(run.id, "T-2", "/w", "b", "base")  # never logged as landed
        old.set_candidate(passed.id, "def")
    with raw(db_path) as conn:  # ended as that version ended them: it had no verdicts
        conn.execute("UPDATE attempts SET status = ?", (AttemptStatus.PASSED,))
    monkeypatch.undo()
    with Store.open(db_path) as upgraded:
        rows = upgraded.dispositions(run.id)
    assert [(d.attempt_id, d.status, d.target_ref, d.target_sha) for d in rows] == [
        (landed.id, Disposition.INTEGRATED, "taskhand/run", "abc")
    ]
