"""The state store: round trips, numbering, accounting, exports, migrations and durability."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from taskhand.plan.model import Exchange, Status
from taskhand.state import store as store_module
from taskhand.state.records import Entry, Run, TaskState
from taskhand.state.store import Store
from taskhand.unit import Usage
from tests import ROOT

SRC = ROOT / "src"


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "home" / "state" / "taskhand.db"


@pytest.fixture
def store(db_path: Path) -> Iterator[Store]:
    with Store.open(db_path) as opened:
        yield opened


def new_run(store: Store, plan_path: str = "plans/a") -> Run:
    return store.create_run(plan_path, "markdown", "/repo", "abc123", "taskhand/run", {"jobs": 2})


def raw(db_path: Path) -> closing[sqlite3.Connection]:
    """A plain second connection, as another process would have."""
    return closing(sqlite3.connect(db_path, isolation_level=None))


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(SRC)},
        check=False,
    )


TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


# Opening


def test_open_creates_parent_folders_and_sets_durable_pragmas(store: Store, db_path: Path) -> None:
    assert db_path.is_file()
    conn = store._conn
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 5000
    with raw(db_path) as other:  # WAL is a property of the file, seen by every connection
        assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_close_is_a_context_manager_exit(db_path: Path) -> None:
    with Store.open(db_path) as opened:
        new_run(opened)
    with pytest.raises(sqlite3.ProgrammingError):
        opened.runs()


# Runs


def test_create_run_round_trips(store: Store) -> None:
    run = new_run(store)
    assert re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{4}", run.id)
    assert TIMESTAMP.match(run.created) and run.updated == run.created
    # The id's time is the creation time, so ids sort like creation times.
    assert run.id[:15] == run.created[:19].replace("-", "").replace(":", "").replace("T", "-")
    assert (run.plan_path, run.dialect, run.repo) == ("plans/a", "markdown", "/repo")
    assert (run.base_sha, run.run_branch, run.status, run.reason) == (
        "abc123",
        "taskhand/run",
        "running",
        None,
    )
    assert run.config == {"jobs": 2}
    assert store.get_run(run.id) == run
    assert store.get_run("20990101-000000-ffff") is None


def test_create_run_strips_secret_keys_from_config(store: Store, db_path: Path) -> None:
    config = {
        "jobs": 2,
        "OPENAI_API_KEY": "sk-1",
        "github_token": "ghp-2",
        "Client_Secret": "s3",
        "password": "p4",
        "agent": {"name": "claude", "apiKey": "k5", "args": [{"Token": "t6", "x": 1}]},
        "GH_PAT": "p7",
        "npm_auth": "a8",
        "script": "deploy --db postgres://app:S3cretPassw0rd@db/app",
    }
    run = store.create_run("p", "markdown", "/r", "sha", "b", config)
    expected = {
        "jobs": 2,
        "agent": {"name": "claude", "args": [{"x": 1}]},
        "script": "deploy --db postgres://app:[redacted]@db/app",  # the one rule: shapes too
    }
    assert run.config == expected
    with raw(db_path) as conn:
        stored = conn.execute("SELECT config FROM runs").fetchone()[0]
    assert json.loads(stored) == expected
    for secret in ("sk-1", "ghp-2", "s3", "p4", "k5", "t6", "p7", "a8", "S3cretPassw0rd"):
        assert secret not in stored
    assert "OPENAI_API_KEY" in config  # the caller's dict is left alone


def test_runs_newest_first_and_latest_by_plan(store: Store) -> None:
    first = new_run(store, "plans/a")
    time.sleep(0.002)
    second = new_run(store, "plans/b")
    time.sleep(0.002)
    third = new_run(store, "plans/a")
    assert [r.id for r in store.runs()] == [third.id, second.id, first.id]
    assert store.latest_run() == third
    assert store.latest_run("plans/b") == second
    assert store.latest_run("plans/a") == third
    assert store.latest_run("plans/none") is None


def test_run_status_and_branch_updates(store: Store) -> None:
    run = new_run(store)
    store.set_run_status(run.id, "failed", "gate broke")
    store.set_run_branch(run.id, "taskhand/other")
    changed = store.get_run(run.id)
    assert changed is not None
    assert (changed.status, changed.reason, changed.run_branch) == (
        "failed",
        "gate broke",
        "taskhand/other",
    )
    assert changed.updated >= run.updated
    store.set_run_status(run.id, "done")
    done = store.get_run(run.id)
    assert done is not None and (done.status, done.reason) == ("done", None)
    with pytest.raises(KeyError):
        store.set_run_status("nope", "done")
    with pytest.raises(KeyError):
        store.set_run_branch("nope", "b")


def test_empty_store_has_no_runs(store: Store) -> None:
    assert store.runs() == []
    assert store.latest_run() is None


# Tasks


def test_set_task_upserts_and_orders_by_id(store: Store) -> None:
    run = new_run(store)
    store.set_task(run.id, "T-10", Status.OPEN)
    store.set_task(run.id, "T-2", "BUSY")
    store.set_task(run.id, "T-2", Status.WAIT, "which database?")
    states = store.task_states(run.id)
    assert list(states) == ["T-2", "T-10"]
    wait = states["T-2"]
    assert isinstance(wait, TaskState)
    assert (wait.run_id, wait.status, wait.reason) == (run.id, Status.WAIT, "which database?")
    assert TIMESTAMP.match(wait.updated)
    assert states["T-10"].status is Status.OPEN and states["T-10"].reason is None
    assert store.task_states(new_run(store).id) == {}


def test_set_task_refuses_unknown_status_and_run(store: Store) -> None:
    run = new_run(store)
    with pytest.raises(ValueError):
        store.set_task(run.id, "T-1", "MAYBE")
    with pytest.raises(sqlite3.IntegrityError):
        store.set_task("no-such-run", "T-1", "OPEN")
    assert store.task_states(run.id) == {}


def test_a_status_repeated_without_a_reason_keeps_its_reason(store: Store) -> None:
    run = new_run(store)
    store.set_task(run.id, "T-1", Status.FAIL, "the checks failed")
    store.set_task(run.id, "T-1", Status.FAIL)  # Complete repeats what Conclude said
    assert store.task_states(run.id)["T-1"].reason == "the checks failed"
    store.set_task(run.id, "T-1", Status.BUSY)
    assert store.task_states(run.id)["T-1"].reason is None


def test_a_reopened_task_counts_attempts_and_spend_from_the_reopen(store: Store) -> None:
    run = new_run(store)
    for n in (1, 2):
        attempt = store.start_attempt(run.id, "T-1", f"/wt/{n}", "b", "base")
        unit = store.start_unit(attempt.id, "implementer", "replay", None, "prompt")
        store.finish_unit(unit, "done", Usage(100, 10, cost=0.5), None)
        store.finish_attempt(attempt.id, "failed", "no")
    store.set_task(run.id, "T-1", Status.FAIL, "2 attempts failed")
    assert [a.number for a in store.counted_attempts(run.id, "T-1")] == [1, 2]
    store.reopen_task(run.id, "T-1", "taskhand reopen")
    state = store.task_states(run.id)["T-1"]
    assert (state.status, state.reason, state.counted_from) == (Status.OPEN, None, 2)
    assert store.counted_attempts(run.id, "T-1") == []
    assert store.counted_usage(run.id, "T-1") == Usage()
    third = store.start_attempt(run.id, "T-1", "/wt/3", "b", "base")
    assert [a.number for a in store.counted_attempts(run.id, "T-1")] == [third.number] == [3]
    assert len(store.attempts(run.id, "T-1")) == 3  # nothing is forgotten
    assert store.usage(run.id, "T-1").cost == 1.0
    [event] = [e for e in store.events(run.id) if e.kind == "task_reopened"]
    assert (event.task_id, event.data) == ("T-1", {"by": "taskhand reopen"})


def test_an_answer_closes_the_latest_question(store: Store) -> None:
    run = new_run(store)
    store.set_task(run.id, "T-1", Status.WAIT, "Which? (A) a", request="Which? (A) a")
    store.answer_task(run.id, "T-1", "a")
    store.set_task(run.id, "T-1", Status.WAIT, "And then?", request="And then?")
    assert store.requests(run.id) == {"T-1": [Exchange("Which? (A) a", "a"), Exchange("And then?")]}
    store.answer_task(run.id, "T-1", "stop")
    assert store.requests(run.id)["T-1"][-1] == Exchange("And then?", "stop")
    assert store.task_states(run.id)["T-1"].status is Status.OPEN
    assert store.requests(new_run(store).id) == {}


# Attempts


def test_attempts_are_numbered_per_run_and_task(store: Store) -> None:
    run, other = new_run(store), new_run(store)
    a1 = store.start_attempt(run.id, "T-1", "/wt/1", "th/T-1-1", "base1")
    b1 = store.start_attempt(run.id, "T-2", "/wt/2", "th/T-2-1", "base1")
    a2 = store.start_attempt(run.id, "T-1", "/wt/3", "th/T-1-2", "base2")
    c1 = store.start_attempt(other.id, "T-1", "/wt/4", "th/T-1-1", "base1")
    assert [a1.number, b1.number, a2.number, c1.number] == [1, 1, 2, 1]
    assert (a2.run_id, a2.task_id, a2.worktree, a2.branch, a2.base_sha) == (
        run.id,
        "T-1",
        "/wt/3",
        "th/T-1-2",
        "base2",
    )
    assert (a2.status, a2.candidate_sha, a2.reason, a2.ended) == ("running", None, None, None)
    assert TIMESTAMP.match(a2.started)
    assert [a.id for a in store.attempts(run.id)] == [a1.id, b1.id, a2.id]
    assert store.attempts(run.id, "T-1") == [a1, a2]
    assert store.attempts(other.id) == [c1]


def test_candidate_and_finish_attempt(store: Store) -> None:
    run = new_run(store)
    first = store.start_attempt(run.id, "T-1", "/wt", "b1", "base")
    second = store.start_attempt(run.id, "T-1", "/wt", "b2", "base")
    third = store.start_attempt(run.id, "T-2", "/wt", "b3", "base")
    store.set_candidate(first.id, "cafe01")
    store.finish_attempt(first.id, "failed", "tests failed")
    store.finish_attempt(second.id, "passed")
    done_first, done_second, running = store.attempts(run.id)
    assert (done_first.candidate_sha, done_first.status, done_first.reason) == (
        "cafe01",
        "failed",
        "tests failed",
    )
    assert done_first.ended is not None and TIMESTAMP.match(done_first.ended)
    assert (done_second.status, done_second.reason) == ("passed", None)
    assert store.open_attempts(run.id) == [running] == [third]
    store.finish_attempt(third.id, "interrupted", "crash")
    assert store.open_attempts(run.id) == []
    store.finish_attempt(second.id, "question", "which database?")  # the runner's own words
    assert store.attempts(run.id)[1].status == "question"
    with pytest.raises(ValueError):
        store.finish_attempt(first.id, "running")
    with pytest.raises(ValueError):
        store.finish_attempt(first.id, "")
    with pytest.raises(KeyError):
        store.finish_attempt(9999, "passed")
    with pytest.raises(KeyError):
        store.set_candidate(9999, "sha")


# Units and gates


def test_units_round_trip(store: Store) -> None:
    run = new_run(store)
    attempt = store.start_attempt(run.id, "T-1", "/wt", "b", "base")
    other = store.start_attempt(run.id, "T-2", "/wt", "b", "base")
    unit_id = store.start_unit(attempt.id, "implementer", "claude", "opus", "héllo " * 200)
    open_id = store.start_unit(other.id, "evaluator", "codex", None, "x", lens="security")
    (started,) = store.units(run.id, "T-1")
    assert (started.id, started.attempt_id, started.run_id, started.task_id) == (
        unit_id,
        attempt.id,
        run.id,
        "T-1",
    )
    assert (started.role, started.agent, started.model, started.prompt_bytes) == (
        "implementer",
        "claude",
        "opus",
        1400,  # bytes, not characters: é takes two
    )
    assert started.prompt_tokens == 350 and started.lens == ""
    assert (started.ended, started.outcome, started.transcript) == (None, None, None)
    assert started.usage == Usage()

    store.finish_unit(unit_id, "done", Usage(100, 20, 50, 0.25, True), "/t/u1.jsonl")
    finished = store.units(run.id, "T-1")[0]
    assert finished.ended is not None and finished.ended >= finished.started
    assert (finished.outcome, finished.transcript) == ("done", "/t/u1.jsonl")
    assert (finished.tokens_in, finished.tokens_out, finished.tokens_cached) == (100, 20, 50)
    assert (finished.cost, finished.cost_estimated) == (0.25, True)
    assert finished.usage == Usage(100, 20, 50, 0.25, True)
    assert [u.id for u in store.units(run.id)] == [unit_id, open_id]
    assert store.units(run.id)[1].model is None
    assert (store.units(run.id)[1].lens, store.units(run.id)[1].prompt_tokens) == ("security", 1)
    with pytest.raises(KeyError):
        store.start_unit(9999, "implementer", "claude", None, "")
    with pytest.raises(KeyError):
        store.finish_unit(9999, "done", Usage(), None)


def test_ledger_entry_is_written_with_the_attempt_end_and_read_per_task(store: Store) -> None:
    run = new_run(store)
    first = store.start_attempt(run.id, "T-1", "/wt", "b", "base")
    other = store.start_attempt(run.id, "T-2", "/wt", "b", "base")
    second = store.start_attempt(run.id, "T-1", "/wt", "b", "base")
    verdict = {"verdict": "reject", "category": "weak_test", "concern": "c", "next_step": "n"}
    store.finish_attempt(
        first.id,
        "rejected",
        "weak_test",
        Entry(
            "rejected",
            "the reviewer rejected it",
            "1 file (+3 -0): a.py",
            {"resolution": "r"},
            [{"name": "scope", "ok": True}],
            [verdict],
        ),
    )
    store.finish_attempt(other.id, "failed", "x", Entry("checks_failed", "exit 1"))
    store.finish_attempt(second.id, "passed", "ok", Entry("accepted", "accepted"))
    entries = store.ledger(run.id, "T-1")
    assert [(e.iteration, e.outcome, e.attempt_id) for e in entries] == [
        (1, "rejected", first.id),
        (2, "accepted", second.id),
    ]
    assert entries[0].verdicts == [verdict] and entries[0].report == {"resolution": "r"}
    assert entries[0].gates == [{"name": "scope", "ok": True}]
    assert entries[0].diff_summary == "1 file (+3 -0): a.py"
    assert [e.iteration for e in store.ledger(run.id, "T-1", last=1)] == [2]
    assert [e.outcome for e in store.ledger(run.id, "T-2")] == ["checks_failed"]
    assert store.attempts(run.id, "T-1")[0].status == "rejected"


def test_ledger_entry_and_attempt_end_commit_together(store: Store, db_path: Path) -> None:
    run = new_run(store)
    attempt = store.start_attempt(run.id, "T-1", "/wt", "b", "base")
    store.finish_attempt(attempt.id, "failed", "x", Entry("checks_failed", "exit 1"))
    with pytest.raises(sqlite3.IntegrityError):  # one entry per attempt, never two
        store.finish_attempt(attempt.id, "failed", "y", Entry("checks_failed", "again"))
    assert store.attempts(run.id, "T-1")[0].reason == "x"  # the failed write changed nothing
    assert len(store.ledger(run.id, "T-1")) == 1
    with raw(db_path) as conn, pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("UPDATE ledger SET outcome = 'accepted'")


def test_gates_round_trip(store: Store) -> None:
    run = new_run(store)
    attempt = store.start_attempt(run.id, "T-1", "/wt", "b", "base")
    other = store.start_attempt(run.id, "T-1", "/wt", "b", "base")
    store.record_gate(attempt.id, "command", False, "exit 1", 1, 2.5, "FAILED test_x")
    store.record_gate(attempt.id, "whitespace", True, "clean")
    store.record_gate(other.id, "scope", True, "in scope")
    failed, clean = store.gates(attempt.id)
    assert (failed.attempt_id, failed.name, failed.ok, failed.detail) == (
        attempt.id,
        "command",
        False,
        "exit 1",
    )
    assert (failed.exit_code, failed.seconds, failed.output) == (1, 2.5, "FAILED test_x")
    assert (clean.name, clean.ok, clean.exit_code, clean.seconds, clean.output) == (
        "whitespace",
        True,
        None,
        None,
        "",
    )
    assert [g.name for g in store.gates(other.id)] == ["scope"]
    assert store.gates(9999) == []


# Events


def test_events_append_in_order_and_tail_after_an_id(store: Store) -> None:
    run, other = new_run(store), new_run(store)
    first = store.event(run.id, "run.started", jobs=2)
    store.event(other.id, "run.started")
    second = store.event(run.id, "task.claimed", "T-1", attempt=1, path=Path("/wt"), note="é")
    third = store.event(run.id, "gate", "T-1", ok=False, detail={"exit": 1, "lines": ["a"]})
    assert first.id < second.id < third.id
    assert (second.run_id, second.kind, second.task_id) == (run.id, "task.claimed", "T-1")
    assert second.data == {"attempt": 1, "path": "/wt", "note": "é"}  # Path written as text
    assert TIMESTAMP.match(second.ts)
    assert first.task_id is None and first.data == {"jobs": 2}
    assert store.events(run.id) == [first, second, third]
    assert store.events(run.id, after=first.id) == [second, third]
    assert store.events(run.id, after=third.id) == []


def test_events_refuse_reserved_keys(store: Store) -> None:
    run = new_run(store)
    with pytest.raises(ValueError):
        store.event(run.id, "x", id=5)
    with pytest.raises(ValueError):
        store.event(run.id, "x", ts="now")
    assert store.events(run.id) == []


def test_events_cannot_be_rewritten(store: Store, db_path: Path) -> None:
    run = new_run(store)
    store.event(run.id, "run.started")
    with raw(db_path) as conn:
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute("UPDATE events SET kind = 'forged'")
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute("DELETE FROM events")
    assert [e.kind for e in store.events(run.id)] == ["run.started"]


# Accounting


def make_units(store: Store, db_path: Path) -> str:
    """A run with known usage and known unit times; T-3 has a unit still running."""
    run = new_run(store)
    store.set_task(run.id, "T-10", Status.OPEN)  # no units: counted as zero
    spans = [
        ("T-1", Usage(100, 10, 40, 0.5, False), "14:00:00.000", "14:00:30.500"),
        ("T-1", Usage(200, 20, 0, 0.25, False), "14:01:00.000", "14:02:00.000"),
        ("T-2", Usage(1000, 100, 500, 1.0, True), "14:03:00.000", "14:03:05.250"),
    ]
    for n, (task_id, usage, start, end) in enumerate(spans):
        attempt = store.start_attempt(run.id, task_id, "/wt", "b", "base")
        role = "evaluator" if n == 1 else "implementer"  # T-1's second unit reviews
        unit_id = store.start_unit(attempt.id, role, "claude", None, "prompt")
        store.finish_unit(unit_id, "done", usage, None)
        with raw(db_path) as conn:  # fix the clock so agent seconds are known
            conn.execute(
                "UPDATE units SET started = ?, ended = ? WHERE id = ?",
                (f"2026-12-02T{start}Z", f"2026-12-02T{end}Z", unit_id),
            )
    attempt = store.start_attempt(run.id, "T-3", "/wt", "b", "base")
    store.start_unit(attempt.id, "implementer", "claude", None, "prompt")
    return run.id


def test_usage_sums_finished_units(store: Store, db_path: Path) -> None:
    run_id = make_units(store, db_path)
    assert store.usage(run_id) == Usage(1300, 130, 540, 1.75, True)
    assert store.usage(run_id, "T-1") == Usage(300, 30, 40, 0.75, False)
    assert store.usage(run_id, "T-2") == Usage(1000, 100, 500, 1.0, True)
    assert store.usage(run_id, "T-3") == Usage()  # running units have used nothing yet
    assert store.usage(new_run(store).id) == Usage()


def test_stats_per_task_and_total(store: Store, db_path: Path) -> None:
    stats = store.stats(make_units(store, db_path))
    assert stats.as_json() == {
        "tasks": [
            {
                "task_id": "T-1",
                "units": 2,
                "reviews": 1,
                "prompt_bytes": 12,
                "seconds": 90.5,
                "tokens_in": 300,
                "tokens_out": 30,
                "tokens_cached": 40,
                "cost": 0.75,
                "estimated": False,
            },
            {
                "task_id": "T-2",
                "units": 1,
                "reviews": 0,
                "prompt_bytes": 6,
                "seconds": 5.25,
                "tokens_in": 1000,
                "tokens_out": 100,
                "tokens_cached": 500,
                "cost": 1.0,
                "estimated": True,
            },
            {
                "task_id": "T-3",
                "units": 1,
                "reviews": 0,
                "prompt_bytes": 6,
                "seconds": 0.0,
                "tokens_in": 0,
                "tokens_out": 0,
                "tokens_cached": 0,
                "cost": 0.0,
                "estimated": False,
            },
            {
                "task_id": "T-10",
                "units": 0,
                "reviews": 0,
                "prompt_bytes": 0,
                "seconds": 0.0,
                "tokens_in": 0,
                "tokens_out": 0,
                "tokens_cached": 0,
                "cost": 0.0,
                "estimated": False,
            },
        ],
        "total": {
            "task_id": "TOTAL",
            "units": 4,
            "reviews": 1,
            "prompt_bytes": 24,
            "seconds": 95.75,
            "tokens_in": 1300,
            "tokens_out": 130,
            "tokens_cached": 540,
            "cost": 1.75,
            "estimated": True,
        },
    }
    assert [t.task_id for t in stats.tasks] == ["T-1", "T-2", "T-3", "T-10"]
    assert stats.total.seconds == 95.75
    assert json.loads(json.dumps(stats.as_json())) == stats.as_json()


# Exports


def test_export_events_writes_exact_jsonl(store: Store, tmp_path: Path) -> None:
    run, other = new_run(store), new_run(store)
    first = store.event(run.id, "run.started", jobs=2)
    store.event(other.id, "noise")
    second = store.event(run.id, "task.done", "T-1", note="ünïcode", nested={"a": [1, None]})
    out = tmp_path / "exports" / "events.jsonl"
    out.parent.mkdir()
    out.write_text("stale\n", encoding="utf-8")
    store.export_events(run.id, out)
    assert out.read_text(encoding="utf-8") == (
        f'{{"id": {first.id}, "ts": "{first.ts}", "kind": "run.started", "task_id": null,'
        ' "jobs": 2}\n'
        f'{{"id": {second.id}, "ts": "{second.ts}", "kind": "task.done", "task_id": "T-1",'
        ' "note": "ünïcode", "nested": {"a": [1, null]}}\n'
    )
    assert sorted(p.name for p in out.parent.iterdir()) == ["events.jsonl"]  # no temp left


def test_export_events_of_an_empty_run_is_an_empty_file(store: Store, tmp_path: Path) -> None:
    out = tmp_path / "new" / "events.jsonl"
    store.export_events(new_run(store).id, out)
    assert out.read_bytes() == b""


def test_export_task_status_is_a_tilth_flat_map(store: Store, tmp_path: Path) -> None:
    run = new_run(store)
    for task_id, status in [
        ("T-10", "DONE"),
        ("T-2", "FAIL"),
        ("T-1", "DONE"),
        ("T-3", "OPEN"),
        ("T-4", "BUSY"),
        ("T-5", "WAIT"),
    ]:
        store.set_task(run.id, task_id, status)
    out = tmp_path / "exports" / "task-status.json"
    store.export_task_status(run.id, out)
    assert out.read_text(encoding="utf-8") == (
        '{\n  "T-1": "done",\n  "T-2": "failed",\n  "T-5": "waiting",\n  "T-10": "done"\n}\n'
    )
    assert [p.name for p in out.parent.iterdir()] == ["task-status.json"]  # no temp left


# Migrations


def applied(db_path: Path) -> list[str]:
    with raw(db_path) as conn:
        return [r[0] for r in conn.execute("SELECT name FROM migrations ORDER BY rowid")]


def test_reopening_applies_nothing_twice(db_path: Path) -> None:
    with Store.open(db_path) as first:
        run = new_run(first)
    with Store.open(db_path) as second:
        assert second.get_run(run.id) == run
    assert applied(db_path) == [m.__name__ for m in store_module.MIGRATIONS]


def test_old_database_gets_only_missing_migrations(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "MIGRATIONS", [store_module._m001_initial])
    with Store.open(db_path) as old:
        run = new_run(old)

    calls: list[str] = []

    def _m002_add_note(conn: sqlite3.Connection) -> None:
        calls.append("m002")
        conn.execute("ALTER TABLE runs ADD COLUMN note TEXT")

    def _m001_spy(conn: sqlite3.Connection) -> None:  # must never run: m001 is recorded
        calls.append("m001")

    _m001_spy.__name__ = "_m001_initial"
    monkeypatch.setattr(store_module, "MIGRATIONS", [_m001_spy, _m002_add_note])
    with raw(db_path) as conn:  # the new column exists only after the upgrade
        assert "note" not in {r[1] for r in conn.execute("PRAGMA table_info(runs)")}
    with Store.open(db_path) as upgraded:
        assert calls == ["m002"]
        assert [r.id for r in upgraded.runs()] == [run.id]  # old data kept
    with Store.open(db_path):
        assert calls == ["m002"]
    assert applied(db_path) == ["_m001_initial", "_m002_add_note"]
    with raw(db_path) as conn:
        assert "note" in {r[1] for r in conn.execute("PRAGMA table_info(runs)")}


def test_failed_migration_leaves_nothing_half_applied(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def _m002_broken(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE half (x)")
        raise RuntimeError("bad migration")

    monkeypatch.setattr(store_module, "MIGRATIONS", [store_module._m001_initial, _m002_broken])
    with pytest.raises(RuntimeError):
        Store.open(db_path)
    assert applied(db_path) == ["_m001_initial"]
    with raw(db_path) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "half" not in tables


# Durability and concurrency


def test_committed_event_survives_sigkill(db_path: Path) -> None:
    code = f"""
import os, signal
from pathlib import Path
from taskhand.state.store import Store
store = Store.open(Path({str(db_path)!r}))
run = store.create_run("p", "markdown", "/r", "sha", "b", {{}})
store.event(run.id, "about.to.die", n=1)
print(run.id, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""
    result = run_python(code)
    assert result.returncode == -9, result.stderr
    run_id = result.stdout.strip()
    with Store.open(db_path) as reopened:
        assert [(e.kind, e.data) for e in reopened.events(run_id)] == [("about.to.die", {"n": 1})]
        run = reopened.get_run(run_id)
        assert run is not None and run.status == "running"


def test_reader_is_not_blocked_by_an_open_write_transaction(store: Store, db_path: Path) -> None:
    run = new_run(store)
    store.event(run.id, "committed")
    with raw(db_path) as writer:
        # A tiny page cache makes a big write spill into the database file: without WAL that
        # takes an exclusive lock and the reader below would wait out busy_timeout.
        writer.execute("PRAGMA cache_size = 1")
        writer.execute("BEGIN IMMEDIATE")
        writer.executemany(
            "INSERT INTO events (run_id, ts, kind, data) VALUES (?, 'ts', 'uncommitted', ?)",
            [(run.id, json.dumps({"pad": "x" * 2000})) for _ in range(200)],
        )
        started = time.monotonic()
        kinds = [e.kind for e in store.events(run.id)]
        assert time.monotonic() - started < 1.0  # well under busy_timeout: it never waited
        assert kinds == ["committed"]
        writer.execute("COMMIT")
    assert [e.kind for e in store.events(run.id)] == ["committed"] + ["uncommitted"] * 200


def test_writer_waits_for_another_writer_instead_of_failing(store: Store, db_path: Path) -> None:
    run = new_run(store)
    holding = threading.Event()

    def hold_write_lock() -> None:
        with raw(db_path) as writer:
            writer.execute("BEGIN IMMEDIATE")
            holding.set()
            time.sleep(0.5)
            writer.execute("COMMIT")

    thread = threading.Thread(target=hold_write_lock)
    thread.start()
    try:
        assert holding.wait(10)
        store.event(run.id, "after.wait")  # waits out the other writer under busy_timeout
    finally:
        thread.join()
    assert [e.kind for e in store.events(run.id)] == ["after.wait"]


def test_two_processes_share_the_database(store: Store, db_path: Path) -> None:
    run = new_run(store)
    store.set_task(run.id, "T-1", "BUSY")
    code = f"""
from pathlib import Path
from taskhand.state.store import Store
with Store.open(Path({str(db_path)!r})) as store:
    assert store.task_states({run.id!r})["T-1"].status == "BUSY"
    store.set_task({run.id!r}, "T-1", "DONE")
    for n in range(20):
        store.event({run.id!r}, "tick", "T-1", n=n)
"""
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert store.task_states(run.id)["T-1"].status is Status.DONE
    assert [e.data["n"] for e in store.events(run.id)] == list(range(20))
    attempt = store.start_attempt(run.id, "T-1", "/wt", "b", "base")
    assert attempt.number == 1
